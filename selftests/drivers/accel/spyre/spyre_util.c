// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the Spyre accel selftests (see spyre_util.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/sync_file.h>

#include "spyre_util.h"

int sp_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret == -1 && errno == EINTR);
	return ret == -1 ? -errno : 0;
}

/* Is /sys/class/accel/accel<minor> bound to the spyre driver? */
static bool is_spyre(int minor)
{
	char path[128], target[PATH_MAX];
	const char *base;
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/class/accel/accel%d/device/driver", minor);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = '\0';
	base = strrchr(target, '/');
	return !strcmp(base ? base + 1 : target, "spyre");
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int sp_find_cards(int *minors, int max)
{
	struct dirent *de;
	int n = 0, minor;
	DIR *dir;

	dir = opendir("/sys/class/accel");
	if (!dir)
		return 0;
	while ((de = readdir(dir)) && n < max) {
		if (sscanf(de->d_name, "accel%d", &minor) == 1 && is_spyre(minor))
			minors[n++] = minor;
	}
	closedir(dir);
	qsort(minors, n, sizeof(*minors), cmp_int);
	return n;
}

static int open_minor(struct sp_dev *d, int minor)
{
	char path[64];
	uint32_t i;
	int ret;

	snprintf(path, sizeof(path), "/dev/accel/accel%d", minor);
	d->fd = open(path, O_RDWR | O_CLOEXEC);
	if (d->fd < 0)
		return -errno;
	d->minor = minor;
	for (i = 0; i < SP_NUM_PARAMS; i++) {
		ret = sp_get_param(d->fd, i, &d->p[i]);
		if (ret) {
			close(d->fd);
			d->fd = -1;
			return ret;
		}
	}
	return 0;
}

int sp_dev_open(struct sp_dev *d, int nth)
{
	int minors[SP_MAX_CARDS];
	int n = sp_find_cards(minors, SP_MAX_CARDS);

	memset(d, 0, sizeof(*d));
	d->fd = -1;
	if (nth >= n)
		return -ENODEV;
	return open_minor(d, minors[nth]);
}

int sp_dev_reopen(const struct sp_dev *d, struct sp_dev *other)
{
	memset(other, 0, sizeof(*other));
	return open_minor(other, d->minor);
}

void sp_dev_close(struct sp_dev *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
}

int sp_get_param(int fd, uint32_t param, uint64_t *value)
{
	struct drm_spyre_get_param gp = { .param = param };
	int ret = sp_ioctl(fd, DRM_IOCTL_SPYRE_GET_PARAM, &gp);

	if (!ret && value)
		*value = gp.value;
	return ret;
}

int sp_bo_create(int fd, uint64_t size, uint32_t placement, uint32_t *handle)
{
	struct drm_spyre_bo_create c = { .size = size, .placement = placement };
	int ret = sp_ioctl(fd, DRM_IOCTL_SPYRE_BO_CREATE, &c);

	if (!ret && handle)
		*handle = c.handle;
	return ret;
}

int sp_bo_info(int fd, uint32_t handle, struct drm_spyre_bo_info *info)
{
	memset(info, 0, sizeof(*info));
	info->handle = handle;
	return sp_ioctl(fd, DRM_IOCTL_SPYRE_BO_INFO, info);
}

int sp_bo_close(int fd, uint32_t handle)
{
	struct drm_gem_close c = { .handle = handle };

	return sp_ioctl(fd, DRM_IOCTL_GEM_CLOSE, &c);
}

uint64_t sp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int64_t sp_deadline(int64_t rel_ns)
{
	return (int64_t)sp_now_ns() + rel_ns;
}

int sp_bo_wait(int fd, uint32_t handle, int64_t rel_ns)
{
	struct drm_spyre_bo_wait w = { .handle = handle, .timeout_ns = sp_deadline(rel_ns) };

	return sp_ioctl(fd, DRM_IOCTL_SPYRE_BO_WAIT, &w);
}

int sp_queue_create(int fd, uint32_t engine, uint32_t priority, uint32_t *id)
{
	struct drm_spyre_queue_create c = { .engine = engine, .priority = priority };
	int ret = sp_ioctl(fd, DRM_IOCTL_SPYRE_QUEUE_CREATE, &c);

	if (!ret && id)
		*id = c.queue_id;
	return ret;
}

int sp_queue_destroy(int fd, uint32_t id)
{
	struct drm_spyre_queue_destroy d = { .queue_id = id };

	return sp_ioctl(fd, DRM_IOCTL_SPYRE_QUEUE_DESTROY, &d);
}

int sp_submit(int fd, uint32_t queue, const struct drm_spyre_cmd *cmds, uint32_t ncmds,
	      const struct drm_spyre_sync *in, uint32_t nin,
	      const struct drm_spyre_sync *out, uint32_t nout)
{
	struct drm_spyre_submit s = {
		.queue_id = queue,
		.cmds = (uintptr_t)cmds,
		.cmd_count = ncmds,
		.cmd_stride = ncmds ? sizeof(*cmds) : 0,
		.in_syncs = (uintptr_t)in,
		.in_sync_count = nin,
		.sync_stride = (nin || nout) ? sizeof(struct drm_spyre_sync) : 0,
		.out_syncs = (uintptr_t)out,
		.out_sync_count = nout,
	};

	return sp_ioctl(fd, DRM_IOCTL_SPYRE_SUBMIT, &s);
}

int sp_run(int fd, uint32_t queue, const struct drm_spyre_cmd *cmds, uint32_t ncmds)
{
	struct drm_spyre_sync out = { 0 };
	int ret;

	ret = sp_syncobj_create(fd, &out.handle, false);
	if (ret)
		return ret;
	ret = sp_submit(fd, queue, cmds, ncmds, NULL, 0, &out, 1);
	if (!ret)
		ret = sp_syncobj_wait(fd, out.handle, 0, SP_WAIT_NS);
	if (!ret) {
		ret = sp_fence_status(fd, out.handle, 0);
		if (ret == 1)
			ret = 0;
		else if (ret == 0)
			ret = -EINPROGRESS;	/* waited, yet not signalled */
	}
	sp_syncobj_destroy(fd, out.handle);
	return ret;
}

void *sp_bo_mmap(int fd, uint32_t handle, size_t size)
{
	struct drm_spyre_bo_info info;
	void *p;
	int ret;

	ret = sp_bo_info(fd, handle, &info);
	if (ret) {
		errno = -ret;
		return NULL;
	}
	if (!(info.bo_flags & DRM_SPYRE_BO_MAPPABLE)) {
		errno = EINVAL;
		return NULL;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, info.mmap_offset);
	return p == MAP_FAILED ? NULL : p;
}

struct drm_spyre_cmd sp_cmd_nop(void)
{
	struct drm_spyre_cmd c = { .type = DRM_SPYRE_CMD_NOP };

	return c;
}

struct drm_spyre_cmd sp_cmd_copy(uint32_t src, uint64_t src_off, uint32_t dst,
				 uint64_t dst_off, uint64_t size)
{
	struct drm_spyre_cmd c = { .type = DRM_SPYRE_CMD_COPY };

	c.copy.src_handle = src;
	c.copy.src_offset = src_off;
	c.copy.dst_handle = dst;
	c.copy.dst_offset = dst_off;
	c.copy.size = size;
	return c;
}

struct drm_spyre_cmd sp_cmd_fill(uint32_t handle, uint64_t off, uint64_t size,
				 uint32_t pattern)
{
	struct drm_spyre_cmd c = { .type = DRM_SPYRE_CMD_FILL };

	c.fill.handle = handle;
	c.fill.offset = off;
	c.fill.size = size;
	c.fill.pattern = pattern;
	return c;
}

struct drm_spyre_cmd sp_cmd_ts(uint32_t handle, uint64_t off)
{
	struct drm_spyre_cmd c = { .type = DRM_SPYRE_CMD_TIMESTAMP };

	c.timestamp.handle = handle;
	c.timestamp.offset = off;
	return c;
}

struct drm_spyre_cmd sp_cmd_launch(uint32_t prog, uint64_t prog_off, uint64_t prog_size,
				   uint32_t ws, uint64_t ws_off, uint64_t ws_size,
				   const struct drm_spyre_bo_range *args, uint32_t nargs)
{
	struct drm_spyre_cmd c = { .type = DRM_SPYRE_CMD_LAUNCH };

	c.launch.prog_handle = prog;
	c.launch.prog_offset = prog_off;
	c.launch.prog_size = prog_size;
	c.launch.ws_handle = ws;
	c.launch.ws_offset = ws_off;
	c.launch.ws_size = ws_size;
	c.launch.args = (uintptr_t)args;
	c.launch.nargs = nargs;
	c.launch.args_stride = sizeof(*args);
	return c;
}

int sp_syncobj_create(int fd, uint32_t *handle, bool signaled)
{
	struct drm_syncobj_create c = {
		.flags = signaled ? DRM_SYNCOBJ_CREATE_SIGNALED : 0,
	};
	int ret = sp_ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c);

	if (!ret)
		*handle = c.handle;
	return ret;
}

int sp_syncobj_destroy(int fd, uint32_t handle)
{
	struct drm_syncobj_destroy d = { .handle = handle };

	return sp_ioctl(fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
}

int sp_syncobj_wait(int fd, uint32_t handle, uint64_t point, int64_t rel_ns)
{
	struct drm_syncobj_timeline_wait w = {
		.handles = (uintptr_t)&handle,
		.points = (uintptr_t)&point,
		.timeout_nsec = sp_deadline(rel_ns),
		.count_handles = 1,
		.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
	};

	return sp_ioctl(fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &w);
}

int sp_syncobj_wait_many(int fd, const uint32_t *handles, uint32_t count, bool all,
			 bool for_submit, int64_t rel_ns, uint32_t *first)
{
	struct drm_syncobj_wait w = {
		.handles = (uintptr_t)handles,
		.timeout_nsec = sp_deadline(rel_ns),
		.count_handles = count,
		.flags = (all ? DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL : 0) |
			 (for_submit ? DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT : 0),
	};
	int ret = sp_ioctl(fd, DRM_IOCTL_SYNCOBJ_WAIT, &w);

	if (!ret && first)
		*first = w.first_signaled;
	return ret;
}

int sp_syncobj_query(int fd, uint32_t handle, uint64_t *point)
{
	struct drm_syncobj_timeline_array a = {
		.handles = (uintptr_t)&handle,
		.points = (uintptr_t)point,
		.count_handles = 1,
	};

	return sp_ioctl(fd, DRM_IOCTL_SYNCOBJ_QUERY, &a);
}

int sp_syncobj_export(int fd, uint32_t handle, uint64_t point)
{
	struct drm_syncobj_handle h = {
		.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE,
		.fd = -1,
	};
	uint32_t tmp = 0;
	int ret;

	if (point) {
		/* 6.12 exports binary fences only: move the point there first. */
		struct drm_syncobj_transfer t = { .src_point = point };

		ret = sp_syncobj_create(fd, &tmp, false);
		if (ret)
			return ret;
		t.src_handle = handle;
		t.dst_handle = tmp;
		ret = sp_ioctl(fd, DRM_IOCTL_SYNCOBJ_TRANSFER, &t);
		if (ret) {
			sp_syncobj_destroy(fd, tmp);
			return ret;
		}
		handle = tmp;
	}
	h.handle = handle;
	ret = sp_ioctl(fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h);
	if (tmp)
		sp_syncobj_destroy(fd, tmp);
	return ret ? ret : h.fd;
}

int sp_syncobj_import(int fd, uint32_t handle, int sync_file)
{
	struct drm_syncobj_handle h = {
		.handle = handle,
		.flags = DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE,
		.fd = sync_file,
	};

	return sp_ioctl(fd, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &h);
}

int sp_sync_file_status(int sync_file)
{
	struct sync_file_info info;
	int ret;

	memset(&info, 0, sizeof(info));
	ret = sp_ioctl(sync_file, SYNC_IOC_FILE_INFO, &info);
	return ret ? ret : info.status;
}

int sp_fence_status(int fd, uint32_t handle, uint64_t point)
{
	int sf = sp_syncobj_export(fd, handle, point);
	int ret;

	if (sf < 0)
		return sf == -EINVAL ? -ENOENT : sf;
	ret = sp_sync_file_status(sf);
	close(sf);
	return ret;
}

int sp_sync_file_wait(int sync_file, int timeout_ms)
{
	struct pollfd p = { .fd = sync_file, .events = POLLIN };
	int ret;

	do {
		ret = poll(&p, 1, timeout_ms);
	} while (ret < 0 && errno == EINTR);
	if (ret < 0)
		return -errno;
	return ret == 0 ? -ETIME : 0;
}

int sp_prime_export(int fd, uint32_t handle, int *dmabuf)
{
	struct drm_prime_handle p = { .handle = handle, .flags = DRM_CLOEXEC | DRM_RDWR };
	int ret = sp_ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p);

	if (!ret)
		*dmabuf = p.fd;
	return ret;
}

int sp_prime_import(int fd, int dmabuf, uint32_t *handle)
{
	struct drm_prime_handle p = { .fd = dmabuf };
	int ret = sp_ioctl(fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p);

	if (!ret)
		*handle = p.handle;
	return ret;
}

/* Stage through a host BO: the only CPU-visible memory of the card. */
static int stage(struct sp_dev *d, uint32_t queue, uint32_t dev, uint64_t off,
		 void *buf, size_t len, bool up)
{
	struct drm_spyre_cmd cmd;
	uint32_t host;
	void *map;
	int ret;

	ret = sp_bo_create(d->fd, len, DRM_SPYRE_PLACEMENT_HOST, &host);
	if (ret)
		return ret;
	map = sp_bo_mmap(d->fd, host, len);
	if (!map) {
		ret = -errno;
		goto out;
	}
	if (up) {
		memcpy(map, buf, len);
		cmd = sp_cmd_copy(host, 0, dev, off, len);
	} else {
		cmd = sp_cmd_copy(dev, off, host, 0, len);
	}
	ret = sp_run(d->fd, queue, &cmd, 1);
	if (!ret && !up)
		memcpy(buf, map, len);
	munmap(map, len);
out:
	sp_bo_close(d->fd, host);
	return ret;
}

int sp_upload(struct sp_dev *d, uint32_t queue, uint32_t dev, uint64_t off,
	      const void *src, size_t len)
{
	return stage(d, queue, dev, off, (void *)src, len, true);
}

int sp_download(struct sp_dev *d, uint32_t queue, uint32_t dev, uint64_t off,
		void *dst, size_t len)
{
	return stage(d, queue, dev, off, dst, len, false);
}

/* xorshift32: cheap, and different for every seed and position. */
static uint32_t next32(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

void sp_pattern(void *buf, size_t len, uint32_t seed)
{
	uint8_t *p = buf;
	uint32_t s = seed * 2654435761u + 1, v = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (!(i & 3))
			v = next32(&s);
		p[i] = v >> ((i & 3) * 8);
	}
}

ssize_t sp_pattern_check(const void *buf, size_t len, uint32_t seed)
{
	const uint8_t *p = buf;
	uint32_t s = seed * 2654435761u + 1, v = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (!(i & 3))
			v = next32(&s);
		if (p[i] != (uint8_t)(v >> ((i & 3) * 8)))
			return i;
	}
	return -1;
}

/*
 * The DRM core names a device's debugfs directory after its parent (the
 * PCI address) in 6.12, after the minor in some other versions: try both.
 */
int sp_debugfs_path(const struct sp_dev *d, const char *name, char *path, size_t len)
{
	char link[128], target[PATH_MAX];
	const char *base;
	ssize_t n;

	snprintf(link, sizeof(link), "/sys/class/accel/accel%d/device", d->minor);
	n = readlink(link, target, sizeof(target) - 1);
	if (n > 0) {
		target[n] = '\0';
		base = strrchr(target, '/');
		snprintf(path, len, "/sys/kernel/debug/accel/%s/%s", base ? base + 1 : target,
			 name);
		if (!access(path, F_OK))
			return 0;
	}
	snprintf(path, len, "/sys/kernel/debug/accel/%d/%s", d->minor, name);
	return access(path, F_OK) ? -errno : 0;
}

int sp_read_file(const char *path, char *buf, size_t len)
{
	ssize_t n, total = 0;
	int fd, ret = 0;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	while (total < (ssize_t)len - 1) {
		n = read(fd, buf + total, len - 1 - total);
		if (n < 0) {
			ret = -errno;
			break;
		}
		if (n == 0)
			break;
		total += n;
	}
	close(fd);
	buf[total] = '\0';
	return ret;
}

int sp_write_file(const char *path, const char *val)
{
	int fd, ret;

	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	ret = write(fd, val, strlen(val)) < 0 ? -errno : 0;
	close(fd);
	return ret;
}

int sp_debugfs_read(const struct sp_dev *d, const char *name, char *buf, size_t len)
{
	char path[256];
	int ret;

	ret = sp_debugfs_path(d, name, path, sizeof(path));
	return ret ?: sp_read_file(path, buf, len);
}

int sp_debugfs_write(const struct sp_dev *d, const char *name, const char *val)
{
	char path[256];
	int ret;

	ret = sp_debugfs_path(d, name, path, sizeof(path));
	return ret ?: sp_write_file(path, val);
}

int sp_debugfs_u64(const struct sp_dev *d, const char *name, const char *key, uint64_t *val)
{
	char buf[8192], *line, *save = NULL, *p;
	size_t klen = key ? strlen(key) : 0;
	int ret;

	ret = sp_debugfs_read(d, name, buf, sizeof(buf));
	if (ret)
		return ret;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		while (*line == ' ' || *line == '\t')
			line++;
		if (klen) {
			if (strncmp(line, key, klen))
				continue;
			p = line + klen;
			while (*p == ':' || *p == '=' || *p == ' ' || *p == '\t')
				p++;
		} else {
			p = line;
		}
		errno = 0;
		*val = strtoull(p, NULL, 0);
		return errno ? -errno : 0;
	}
	return -ENOENT;
}

int sp_bo_count(const struct sp_dev *d, uint64_t *count)
{
	return sp_debugfs_u64(d, "bo_count", NULL, count);
}

int sp_wait_bo_count(const struct sp_dev *d, uint64_t want, uint64_t *seen)
{
	uint64_t deadline = sp_now_ns() + SP_WAIT_NS;
	int ret;

	do {
		ret = sp_bo_count(d, seen);
		if (ret || *seen == want)
			return ret;
		usleep(1000);
	} while (sp_now_ns() < deadline);
	return -ETIME;
}

int sp_vm_bind(int fd, uint32_t op, uint32_t flags, uint32_t handle, uint64_t bo_offset,
	       uint64_t addr, uint64_t range)
{
	struct drm_spyre_vm_bind b = {
		.op = op, .flags = flags, .handle = handle,
		.bo_offset = bo_offset, .addr = addr, .range = range,
	};

	return sp_ioctl(fd, DRM_IOCTL_SPYRE_VM_BIND, &b);
}

int sp_fdinfo(int fd, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY);
	if (f < 0)
		return -errno;
	n = read(f, buf, len - 1);
	close(f);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

int sp_client_id(int fd, uint64_t *id)
{
	char buf[8192], *p;
	int ret;

	ret = sp_fdinfo(fd, buf, sizeof(buf));
	if (ret)
		return ret;
	p = strstr(buf, "drm-client-id:");
	if (!p)
		return -ENOENT;
	*id = strtoull(p + strlen("drm-client-id:"), NULL, 10);
	return 0;
}

/*
 * debugfs "queues" lists each client ("client <id>: ...") followed by its
 * queues ("  queue <id>: <engine> prio <p> spyre-ring<n> ...").
 */
/*
 * The line of @d's file's queue @id in debugfs "queues" ("  queue N: ..."
 * or, @user, "  user queue N: ..."), copied into @out.
 */
static int queue_line(const struct sp_dev *d, bool user, uint32_t id, char *out, size_t len)
{
	char buf[65536], *line, *save = NULL;
	const char *fmt = user ? " user queue %u:" : " queue %u:";
	bool mine = false;
	uint64_t client, c;
	unsigned int qid;
	int ret;

	ret = sp_client_id(d->fd, &client);
	if (ret)
		return ret;
	ret = sp_debugfs_read(d, "queues", buf, sizeof(buf));
	if (ret)
		return ret;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "client %" SCNu64 ":", &c) == 1) {
			mine = c == client;
			continue;
		}
		if (!mine || sscanf(line, fmt, &qid) != 1 || qid != id)
			continue;
		snprintf(out, len, "%s", line);
		return 0;
	}
	return -ENOENT;
}

int sp_queue_ring(const struct sp_dev *d, uint32_t id)
{
	char line[256], *r;
	int ret = queue_line(d, false, id, line, sizeof(line));

	if (ret)
		return ret;
	r = strstr(line, "spyre-ring");
	return r ? atoi(r + strlen("spyre-ring")) : -EINVAL;
}

int sp_user_queue_line(const struct sp_dev *d, uint32_t id, char *out, size_t len)
{
	return queue_line(d, true, id, out, len);
}

int sp_arm_fault(const struct sp_dev *d, uint32_t kind, int ring)
{
	char val[32];

	snprintf(val, sizeof(val), "%u", kind | ((uint32_t)ring << 8));
	return sp_debugfs_write(d, "fault", val);
}

int sp_fdinfo_u64(int fd, const char *key, uint64_t *val)
{
	char buf[8192], pat[128], *p, *end;
	int ret;

	ret = sp_fdinfo(fd, buf, sizeof(buf));
	if (ret)
		return ret;
	snprintf(pat, sizeof(pat), "\n%s:", key);
	p = strstr(buf, pat);
	if (!p)
		return -ENOENT;
	p += strlen(pat);
	*val = strtoull(p, &end, 10);
	while (*end == ' ' || *end == '\t')
		end++;
	if (!strncmp(end, "KiB", 3))
		*val <<= 10;
	else if (!strncmp(end, "MiB", 3))
		*val <<= 20;
	else if (!strncmp(end, "GiB", 3))
		*val <<= 30;
	return 0;
}

bool sp_is_module(void)
{
	return !access("/sys/module/spyre/refcnt", R_OK);
}

int sp_load_module(const char *params)
{
	const char *ko = getenv("SPYRE_KO");
	char path[PATH_MAX], cmd[PATH_MAX];
	struct utsname u;
	int fd, ret;

	if (!params)
		params = "";
	if (!ko) {
		uname(&u);
		snprintf(path, sizeof(path), "/lib/modules/%s/extra/spyre.ko", u.release);
		ko = path;
	}
	fd = open(ko, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(cmd, sizeof(cmd), "modprobe spyre %s", params);
		return system(cmd) ? -ENOENT : 0;
	}
	ret = syscall(SYS_finit_module, fd, params, 0) ? -errno : 0;
	close(fd);
	return ret;
}

int sp_unload_module(void)
{
	return syscall(SYS_delete_module, "spyre", O_NONBLOCK) ? -errno : 0;
}

/*
 * Jobs' fences hold the module until they are freed, which happens after
 * the scheduler's free_job work and an RCU grace period once the last file
 * closed: a reload right after a test's last close may find the module
 * busy for a moment. Retry for up to 5 s while it is.
 */
int sp_unload_module_wait(void)
{
	int i, ret = sp_unload_module();

	for (i = 0; ret == -EWOULDBLOCK && i < 500; i++) {
		usleep(10000);
		ret = sp_unload_module();
	}
	return ret;
}

int sp_pci_address(const struct sp_dev *d, char *addr, size_t len)
{
	char link[128], target[PATH_MAX];
	const char *base;
	ssize_t n;

	snprintf(link, sizeof(link), "/sys/class/accel/accel%d/device", d->minor);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (strlen(base) >= len)
		return -ENAMETOOLONG;
	memcpy(addr, base, strlen(base) + 1);
	return 0;
}

bool sp_pair_barrier(struct sp_pair *pair, int step)
{
	uint64_t until = sp_now_ns() + SP_WAIT_NS;

	__atomic_add_fetch(&pair->arrived, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&pair->arrived, __ATOMIC_ACQUIRE) < 2 * step) {
		if (sp_now_ns() > until)
			return false;
		sched_yield();
	}
	return true;
}

int sp_pair_run(sp_pair_fn fn, void *arg)
{
	struct sp_pair *pair = mmap(NULL, sizeof(*pair), PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t pid[2] = { -1, -1 };
	int role, failed = 0, status;

	if (pair == MAP_FAILED)
		return 2;
	pair->arrived = 0;
	fflush(NULL);
	for (role = 0; role < 2; role++) {
		pid[role] = fork();
		if (pid[role] == 0)
			_exit(fn(role, pair, arg) ? 1 : 0);
		if (pid[role] < 0)
			failed++;
	}
	for (role = 0; role < 2; role++) {
		if (pid[role] < 0)
			continue;
		if (waitpid(pid[role], &status, 0) != pid[role] || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			fprintf(stderr, "# process %d failed (status 0x%x)\n", role, status);
			failed++;
		}
	}
	munmap(pair, sizeof(*pair));
	return failed;
}
