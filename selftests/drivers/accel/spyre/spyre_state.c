// SPDX-License-Identifier: GPL-2.0
/*
 * Leak accounting, smoke test and module reload for the long Spyre tests.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "spyre_state.h"

static int host_used(const struct sp_dev *d, int64_t *val)
{
	uint64_t v;
	int ret = sp_debugfs_u64(d, "memory", "host used", &v);

	*val = (int64_t)v;
	return ret;
}

static int take_one(int nth, struct sp_state *s)
{
	struct sp_dev d;
	int ret = sp_dev_open(&d, nth);

	if (ret)
		return ret;
	ret = sp_bo_count(&d, &s->bos[nth]);
	if (!ret)
		ret = host_used(&d, &s->host_used[nth]);
	if (!ret)
		ret = sp_get_param(d.fd, DRM_SPYRE_PARAM_MEM_FREE, &s->mem_free[nth]);
	sp_dev_close(&d);
	return ret;
}

int sp_state_take(struct sp_state *s)
{
	int minors[SP_MAX_CARDS], i, ret;

	memset(s, 0, sizeof(*s));
	s->ncards = sp_find_cards(minors, SP_MAX_CARDS);
	for (i = 0; i < s->ncards; i++) {
		ret = take_one(i, s);
		if (ret)
			return ret;
	}
	return 0;
}

static bool state_equal(const struct sp_state *a, const struct sp_state *b)
{
	int i;

	if (a->ncards != b->ncards)
		return false;
	for (i = 0; i < a->ncards; i++)
		if (a->bos[i] != b->bos[i] || a->mem_free[i] != b->mem_free[i] ||
		    a->host_used[i] != b->host_used[i])
			return false;
	return true;
}

int sp_state_settle(const struct sp_state *base)
{
	uint64_t deadline = sp_now_ns() + SP_WAIT_NS;
	struct sp_state now;
	int i, ret;

	do {
		ret = sp_state_take(&now);
		if (!ret && state_equal(base, &now))
			return 0;
		usleep(20000);
	} while (sp_now_ns() < deadline);
	if (ret) {
		printf("# state: cannot read the counters: %s\n", strerror(-ret));
		return ret;
	}
	if (now.ncards != base->ncards)
		printf("# state: %d cards, was %d\n", now.ncards, base->ncards);
	for (i = 0; i < base->ncards && i < now.ncards; i++) {
		if (now.bos[i] != base->bos[i])
			printf("# state: card %d: %llu BOs, was %llu\n", i,
			       (unsigned long long)now.bos[i], (unsigned long long)base->bos[i]);
		if (now.mem_free[i] != base->mem_free[i])
			printf("# state: card %d: %llu bytes of device memory free, was %llu\n", i,
			       (unsigned long long)now.mem_free[i],
			       (unsigned long long)base->mem_free[i]);
		if (now.host_used[i] != base->host_used[i])
			printf("# state: card %d: %lld bytes of host memory pinned, was %lld\n", i,
			       (long long)now.host_used[i], (long long)base->host_used[i]);
	}
	return -EBUSY;
}

/* One engine: fill a device BO, copy part of it, read both back. */
static int smoke_engine(struct sp_dev *d, uint32_t engine, uint32_t dev)
{
	uint8_t up[4096], down[4096];
	struct drm_spyre_cmd c;
	uint32_t q;
	int ret, i;

	ret = sp_queue_create(d->fd, engine, DRM_SPYRE_PRIORITY_NORMAL, &q);
	if (ret)
		return ret;
	sp_pattern(up, sizeof(up), 0x5eed + engine);
	ret = sp_upload(d, q, dev, 0, up, sizeof(up));
	c = sp_cmd_copy(dev, 0, dev, 65536, sizeof(up));
	if (!ret)
		ret = sp_run(d->fd, q, &c, 1);
	c = sp_cmd_fill(dev, 8192, 4096, 0xa5a5a5a5);
	if (!ret)
		ret = sp_run(d->fd, q, &c, 1);
	if (!ret)
		ret = sp_download(d, q, dev, 65536, down, sizeof(down));
	if (!ret && sp_pattern_check(down, sizeof(down), 0x5eed + engine) >= 0)
		ret = -EILSEQ;
	if (!ret)
		ret = sp_download(d, q, dev, 8192, down, sizeof(down));
	for (i = 0; !ret && i < (int)sizeof(down); i++)
		if (down[i] != 0xa5)
			ret = -EILSEQ;
	sp_queue_destroy(d->fd, q);
	return ret;
}

int sp_smoke(struct sp_dev *d)
{
	uint32_t dev;
	int ret;

	ret = sp_bo_create(d->fd, SP_MiB, DRM_SPYRE_PLACEMENT_DEVICE, &dev);
	if (ret)
		return ret;
	ret = smoke_engine(d, DRM_SPYRE_ENGINE_COMPUTE, dev);
	if (!ret)
		ret = smoke_engine(d, DRM_SPYRE_ENGINE_DMA, dev);
	sp_bo_close(d->fd, dev);
	return ret;
}

/* $SPYRE_KO, else the copy the test VM installs in .../extra, else modprobe. */
static int load_module(void)
{
	const char *ko = getenv("SPYRE_KO");
	char path[PATH_MAX];
	struct utsname u;
	int fd, ret;

	if (!ko) {
		uname(&u);
		snprintf(path, sizeof(path), "/lib/modules/%s/extra/spyre.ko", u.release);
		ko = path;
	}
	fd = open(ko, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return system("modprobe spyre") ? -ENOENT : 0;
	ret = syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
	close(fd);
	return ret;
}

int sp_module_reload(void)
{
	int minors[SP_MAX_CARDS], before, after, i;
	struct sp_dev d;
	int ret;

	before = sp_find_cards(minors, SP_MAX_CARDS);
	/* the last file's release may still be running: retry a little */
	for (i = 0; i < 100; i++) {
		ret = syscall(SYS_delete_module, "spyre", O_NONBLOCK) ? -errno : 0;
		if (ret != -EWOULDBLOCK && ret != -EBUSY)
			break;
		usleep(50000);
	}
	if (ret) {
		printf("# module: unload failed: %s\n", strerror(-ret));
		return ret;
	}
	ret = load_module();
	if (ret) {
		printf("# module: load failed: %s\n", strerror(-ret));
		return ret;
	}
	after = sp_find_cards(minors, SP_MAX_CARDS);
	if (after != before) {
		printf("# module: %d cards after the reload, %d before\n", after, before);
		return -ENODEV;
	}
	for (i = 0; i < after; i++) {
		ret = sp_dev_open(&d, i);
		if (!ret)
			ret = sp_smoke(&d);
		sp_dev_close(&d);
		if (ret) {
			printf("# module: card %d fails its smoke test after the reload: %s\n", i,
			       strerror(-ret));
			return ret;
		}
	}
	return 0;
}
