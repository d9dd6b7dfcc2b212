// SPDX-License-Identifier: GPL-2.0
/*
 * Spyre accel selftests: the module's parameters and lifetime. Each test
 * reloads the module (with the parameter it checks, then with the
 * defaults again), so no file may be open on any card while it runs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/sync_file.h>
#include <linux/udmabuf.h>

#include "kselftest_harness.h"
#include "spyre_util.h"

/* Needs root and the module loadable; reloads it with @params. */
#define RELOAD_OR_SKIP(params) do {					\
	if (geteuid() || !sp_is_module())				\
		SKIP(return, "needs root and spyre as a module");	\
	ASSERT_EQ(0, sp_unload_module_wait());				\
	ASSERT_EQ(0, sp_load_module(params));				\
} while (0)

/* Back to the defaults for the tests that follow. */
static int reload_defaults(void)
{
	int ret = sp_unload_module_wait();

	return ret ?: sp_load_module(NULL);
}

/*
 * A small ring (ring_order=6, 64 descriptors) lowers MAX_CMDS, and SUBMIT
 * enforces that limit rather than the default 512: a submission larger
 * than the ring fails with -E2BIG (it used to be accepted and overrun the
 * scheduler's credits), while the largest allowed one, all full launches,
 * runs.
 */
TEST(small_ring_bounds_submit)
{
	struct drm_spyre_bo_range args[64];
	struct drm_spyre_cmd *cmds;
	uint64_t max, entries, nargs;
	uint32_t q, prog, data;
	struct sp_dev d;
	unsigned int i;

	RELOAD_OR_SKIP("ring_order=6");
	ASSERT_EQ(0, sp_dev_open(&d, 0));
	ASSERT_EQ(0, sp_get_param(d.fd, DRM_SPYRE_PARAM_RING_ENTRIES, &entries));
	EXPECT_EQ(64, entries);
	ASSERT_EQ(0, sp_get_param(d.fd, DRM_SPYRE_PARAM_MAX_CMDS, &max));
	ASSERT_LT(0, max);
	ASSERT_GT(entries, max);
	cmds = calloc(entries * 2, sizeof(*cmds));
	ASSERT_NE(NULL, cmds);
	ASSERT_EQ(0, sp_queue_create(d.fd, DRM_SPYRE_ENGINE_COMPUTE, DRM_SPYRE_PRIORITY_NORMAL,
				     &q));
	for (i = 0; i < entries * 2; i++)
		cmds[i] = sp_cmd_nop();
	EXPECT_EQ(-E2BIG, sp_submit(d.fd, q, cmds, max + 1, NULL, 0, NULL, 0));
	EXPECT_EQ(-E2BIG, sp_submit(d.fd, q, cmds, entries * 2, NULL, 0, NULL, 0));
	EXPECT_EQ(0, sp_run(d.fd, q, cmds, max));

	/*
	 * max launches of 16 slots: the most descriptors the budget allows. An
	 * empty program faults on the card: what counts is that it fits.
	 */
	ASSERT_EQ(0, sp_bo_create(d.fd, SP_PAGE, DRM_SPYRE_PLACEMENT_DEVICE, &prog));
	ASSERT_EQ(0, sp_bo_create(d.fd, SP_PAGE, DRM_SPYRE_PLACEMENT_DEVICE, &data));
	ASSERT_EQ(0, sp_get_param(d.fd, DRM_SPYRE_PARAM_MAX_ARGS, &nargs));
	ASSERT_GE(64, nargs);
	for (i = 0; i < nargs; i++)
		args[i] = (struct drm_spyre_bo_range){ .handle = data, .size = SP_PAGE };
	for (i = 0; i < max; i++)
		cmds[i] = sp_cmd_launch(prog, 0, SP_PAGE, 0, 0, 0, args, nargs < 16 ? nargs : 16);
	EXPECT_NE(-E2BIG, sp_run(d.fd, q, cmds, max));
	/* wider launches (interface 1.7) take more: refused whole, never overrun */
	if (nargs > 16) {
		for (i = 0; i < max; i++)
			cmds[i] = sp_cmd_launch(prog, 0, SP_PAGE, 0, 0, 0, args, nargs);
		EXPECT_EQ(-E2BIG, sp_submit(d.fd, q, cmds, max, NULL, 0, NULL, 0));
		EXPECT_NE(-E2BIG, sp_run(d.fd, q, cmds, 1));
	}
	free(cmds);
	sp_dev_close(&d);
	ASSERT_EQ(0, reload_defaults());
}

/* A udmabuf of @len bytes over a fresh memfd; -errno or the dma-buf fd. */
static int make_udmabuf(size_t len)
{
	struct udmabuf_create uc = { 0 };
	int ufd, memfd, buf;

	ufd = open("/dev/udmabuf", O_RDWR);
	if (ufd < 0)
		return -ENODEV;
	memfd = memfd_create("spyre-selftest", MFD_ALLOW_SEALING);
	if (memfd < 0 || ftruncate(memfd, len) ||
	    fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
		buf = -errno;
	} else {
		uc.memfd = memfd;
		uc.size = len;
		buf = ioctl(ufd, UDMABUF_CREATE, &uc);
		if (buf < 0)
			buf = -errno;
	}
	if (memfd >= 0)
		close(memfd);
	close(ufd);
	return buf;
}

/*
 * An imported dma-buf is a host BO like any other: one larger than the
 * host BO limit (max_host_bo_mb) fails with -E2BIG before it is attached,
 * and nothing is left behind; one of the limit imports.
 */
TEST(host_bo_limit_bounds_imports)
{
	uint64_t limit, count;
	struct sp_dev d;
	uint32_t h;
	int buf;

	RELOAD_OR_SKIP("max_host_bo_mb=16");
	ASSERT_EQ(0, sp_dev_open(&d, 0));
	ASSERT_EQ(0, sp_get_param(d.fd, DRM_SPYRE_PARAM_MAX_HOST_BO_SIZE, &limit));
	EXPECT_EQ(16 * SP_MiB, limit);
	buf = make_udmabuf(limit + 64 * 1024);
	if (buf == -ENODEV) {
		sp_dev_close(&d);
		ASSERT_EQ(0, reload_defaults());
		SKIP(return, "no /dev/udmabuf");
	}
	ASSERT_LE(0, buf);
	EXPECT_EQ(-E2BIG, sp_prime_import(d.fd, buf, &h));
	close(buf);
	if (!sp_bo_count(&d, &count))
		EXPECT_EQ(0, count);

	buf = make_udmabuf(limit);
	ASSERT_LE(0, buf);
	EXPECT_EQ(0, sp_prime_import(d.fd, buf, &h));
	close(buf);
	EXPECT_EQ(0, sp_bo_close(d.fd, h));
	sp_dev_close(&d);
	ASSERT_EQ(0, reload_defaults());
}

/* A sync_file of a finished job of card 0, with every file closed. */
static int finished_job_sync_file(void)
{
	struct drm_spyre_sync out = { 0 };
	struct sp_dev d;
	int sf = -1;
	uint32_t q;

	if (sp_dev_open(&d, 0))
		return -ENODEV;
	if (!sp_queue_create(d.fd, DRM_SPYRE_ENGINE_DMA, DRM_SPYRE_PRIORITY_NORMAL, &q) &&
	    !sp_syncobj_create(d.fd, &out.handle, false) &&
	    !sp_submit(d.fd, q, NULL, 0, NULL, 0, &out, 1) &&
	    !sp_syncobj_wait(d.fd, out.handle, 0, SP_WAIT_NS))
		sf = sp_syncobj_export(d.fd, out.handle, 0);
	sp_dev_close(&d);
	return sf;
}

/* Timeline name of the first fence of a sync_file. */
static int sync_file_timeline(int sf, char *name, size_t len)
{
	struct sync_fence_info fi;
	struct sync_file_info info;

	memset(&info, 0, sizeof(info));
	memset(&fi, 0, sizeof(fi));
	info.num_fences = 1;
	info.sync_fence_info = (uintptr_t)&fi;
	if (ioctl(sf, SYNC_IOC_FILE_INFO, &info))
		return -errno;
	snprintf(name, len, "%s", fi.obj_name);
	return info.status;
}

/*
 * A sync_file outlives every file of the card: its fence keeps the module
 * loaded (the unload fails with -EWOULDBLOCK instead of leaving the fence
 * with callbacks into unloaded code), still answers SYNC_IOC_FILE_INFO,
 * and once it is closed the module unloads.
 */
TEST(sync_file_pins_module)
{
	char name[64];
	int sf;

	RELOAD_OR_SKIP(NULL);
	sf = finished_job_sync_file();
	ASSERT_LE(0, sf);
	EXPECT_EQ(-EWOULDBLOCK, sp_unload_module());
	EXPECT_EQ(1, sync_file_timeline(sf, name, sizeof(name)));
	EXPECT_EQ(0, strncmp(name, "spyre-ring", 10));
	close(sf);
	ASSERT_EQ(0, reload_defaults());
}

/*
 * After the card is unbound, a sync_file of one of its jobs still reads
 * the ring's timeline name from live memory, and the card binds again.
 */
TEST(sync_file_outlives_unbind)
{
	char addr[64], name[64];
	struct sp_dev d;
	int sf;

	RELOAD_OR_SKIP(NULL);
	ASSERT_EQ(0, sp_dev_open(&d, 0));
	ASSERT_EQ(0, sp_pci_address(&d, addr, sizeof(addr)));
	sp_dev_close(&d);
	sf = finished_job_sync_file();
	ASSERT_LE(0, sf);
	ASSERT_EQ(0, sp_write_file("/sys/bus/pci/drivers/spyre/unbind", addr));
	EXPECT_EQ(1, sync_file_timeline(sf, name, sizeof(name)));
	EXPECT_EQ(0, strncmp(name, "spyre-ring", 10));
	close(sf);
	ASSERT_EQ(0, sp_write_file("/sys/bus/pci/drivers/spyre/bind", addr));
	ASSERT_EQ(0, reload_defaults());
}

TEST_HARNESS_MAIN
