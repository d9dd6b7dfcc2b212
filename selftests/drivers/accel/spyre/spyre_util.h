/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the Spyre accel selftests: finding and opening a card,
 * thin wrappers around the ioctls that return 0 or -errno (so tests can
 * assert the exact error the uAPI promises), command builders, syncobj and
 * sync_file helpers, host/device data movement and the driver's debugfs.
 */
#ifndef SPYRE_UTIL_H
#define SPYRE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <drm/spyre_accel.h>

#define SP_MAX_CARDS		8
#define SP_NUM_PARAMS		(DRM_SPYRE_PARAM_USER_QUEUES + 1)
#define SP_PAGE			4096ull
#define SP_MiB			(1024ull * 1024)
/* How long a test waits for a job that must finish: far above any job. */
#define SP_WAIT_NS		(20ull * 1000 * 1000 * 1000)

/* One open card: its fd, accel minor and the parameters read at open. */
struct sp_dev {
	int fd;
	int minor;
	uint64_t p[SP_NUM_PARAMS];
};

/* Accel minors of the cards bound to the spyre driver, in order. */
int sp_find_cards(int *minors, int max);
/* Open the nth Spyre card: 0, -ENODEV when there is none, else -errno. */
int sp_dev_open(struct sp_dev *d, int nth);
/* Another open file of the same card as @d (a second DRM client). */
int sp_dev_reopen(const struct sp_dev *d, struct sp_dev *other);
void sp_dev_close(struct sp_dev *d);

/* Open card @nth into @d, or SKIP the test when no card is present. */
#define SP_OPEN_OR_SKIP(d, nth) do {					\
	int __r = sp_dev_open((d), (nth));				\
	if (__r == -ENODEV)						\
		SKIP(return, "no Spyre card #%d (driver not bound?)", (nth)); \
	ASSERT_EQ(0, __r);						\
} while (0)

int sp_ioctl(int fd, unsigned long req, void *arg);

/* --- ioctl wrappers: 0 or -errno ------------------------------------- */
int sp_get_param(int fd, uint32_t param, uint64_t *value);
int sp_bo_create(int fd, uint64_t size, uint32_t placement, uint32_t *handle);
int sp_bo_info(int fd, uint32_t handle, struct drm_spyre_bo_info *info);
int sp_bo_close(int fd, uint32_t handle);
/* Absolute CLOCK_MONOTONIC deadline @rel_ns from now. */
int64_t sp_deadline(int64_t rel_ns);
int sp_bo_wait(int fd, uint32_t handle, int64_t rel_ns);
int sp_queue_create(int fd, uint32_t engine, uint32_t priority, uint32_t *id);
int sp_queue_destroy(int fd, uint32_t id);
int sp_submit(int fd, uint32_t queue, const struct drm_spyre_cmd *cmds, uint32_t ncmds,
	      const struct drm_spyre_sync *in, uint32_t nin,
	      const struct drm_spyre_sync *out, uint32_t nout);
/* Submit and wait for the job; returns its fence status (0 or -errno). */
int sp_run(int fd, uint32_t queue, const struct drm_spyre_cmd *cmds, uint32_t ncmds);

/* Host BO mapping: NULL on failure (errno set). */
void *sp_bo_mmap(int fd, uint32_t handle, size_t size);

/* --- commands ----------------------------------------------------------- */
struct drm_spyre_cmd sp_cmd_nop(void);
struct drm_spyre_cmd sp_cmd_copy(uint32_t src, uint64_t src_off, uint32_t dst,
				 uint64_t dst_off, uint64_t size);
struct drm_spyre_cmd sp_cmd_fill(uint32_t handle, uint64_t off, uint64_t size,
				 uint32_t pattern);
struct drm_spyre_cmd sp_cmd_ts(uint32_t handle, uint64_t off);
struct drm_spyre_cmd sp_cmd_launch(uint32_t prog, uint64_t prog_off, uint64_t prog_size,
				   uint32_t ws, uint64_t ws_off, uint64_t ws_size,
				   const struct drm_spyre_bo_range *args, uint32_t nargs);

/* --- syncobjs and sync_files -------------------------------------------- */
int sp_syncobj_create(int fd, uint32_t *handle, bool signaled);
int sp_syncobj_destroy(int fd, uint32_t handle);
/* Wait for a binary (point 0) or timeline point; 0 or -ETIME/-errno. */
int sp_syncobj_wait(int fd, uint32_t handle, uint64_t point, int64_t rel_ns);
/* Wait on several binary syncobjs; *first gets the index that signalled. */
int sp_syncobj_wait_many(int fd, const uint32_t *handles, uint32_t count, bool all,
			 bool for_submit, int64_t rel_ns, uint32_t *first);
int sp_syncobj_query(int fd, uint32_t handle, uint64_t *point);
/* Export the fence of a binary syncobj or a timeline point as a sync_file. */
int sp_syncobj_export(int fd, uint32_t handle, uint64_t point);
int sp_syncobj_import(int fd, uint32_t handle, int sync_file);
/* sync_file status: 1 signalled, 0 active, <0 the fence's error. */
int sp_sync_file_status(int sync_file);
/* Status of the fence a syncobj (point) holds, as above; -ENOENT if none. */
int sp_fence_status(int fd, uint32_t handle, uint64_t point);
/* Wait for a sync_file to signal; 0 or -ETIME. */
int sp_sync_file_wait(int sync_file, int timeout_ms);

/* --- PRIME -------------------------------------------------------------- */
int sp_prime_export(int fd, uint32_t handle, int *dmabuf);
int sp_prime_import(int fd, int dmabuf, uint32_t *handle);

/* --- data movement through a card (each waits for its job) ------------- */
/* Copy @len bytes of host memory @src into device BO @dev at @off. */
int sp_upload(struct sp_dev *d, uint32_t queue, uint32_t dev, uint64_t off,
	      const void *src, size_t len);
/* Copy @len bytes of device BO @dev at @off into host memory @dst. */
int sp_download(struct sp_dev *d, uint32_t queue, uint32_t dev, uint64_t off,
		void *dst, size_t len);
/* Deterministic bytes: pattern seeded by @seed. */
void sp_pattern(void *buf, size_t len, uint32_t seed);
/* Index of the first byte that differs from the pattern, or -1. */
ssize_t sp_pattern_check(const void *buf, size_t len, uint32_t seed);

/* --- files (sysfs, debugfs, module parameters) ------------------------- */
/* Reads at most @len - 1 bytes of @path, NUL-terminated; 0 or -errno. */
int sp_read_file(const char *path, char *buf, size_t len);
/* Writes @val to @path; 0 or -errno. */
int sp_write_file(const char *path, const char *val);

/* --- the module and the PCI device (root only) ------------------------- */
/* spyre is a loadable module (not built in). */
bool sp_is_module(void);
/*
 * Loads the module with @params (e.g. "ring_order=6", NULL for none):
 * $SPYRE_KO, else the copy the test VM installs in
 * /lib/modules/$(uname -r)/extra, else modprobe.
 */
int sp_load_module(const char *params);
/* Unloads the module without waiting: -EWOULDBLOCK while it is in use. */
int sp_unload_module(void);
/* The same, waiting up to 5 s for fences of finished jobs to let go. */
int sp_unload_module_wait(void);
/* PCI address of the card behind @d, e.g. "0000:00:03.0". */
int sp_pci_address(const struct sp_dev *d, char *addr, size_t len);

/* --- the driver's debugfs (root only; -ENOENT when absent) -------------- */
int sp_debugfs_path(const struct sp_dev *d, const char *name, char *path, size_t len);
int sp_debugfs_read(const struct sp_dev *d, const char *name, char *buf, size_t len);
int sp_debugfs_write(const struct sp_dev *d, const char *name, const char *val);
/* Value of a "key: number" line (or a lone number) in a debugfs file. */
int sp_debugfs_u64(const struct sp_dev *d, const char *name, const char *key, uint64_t *val);
/* Live BOs of the device according to debugfs. */
int sp_bo_count(const struct sp_dev *d, uint64_t *count);
/*
 * Wait (bounded) until the BO count is @want; *seen gets the last value.
 * The driver releases a finished job's BOs in cleanup work after the job's
 * fence signalled; userspace has no fence for that, hence the polling.
 */
int sp_wait_bo_count(const struct sp_dev *d, uint64_t want, uint64_t *seen);

/* Ring index serving queue @id of @d's file, from debugfs "queues". */
int sp_queue_ring(const struct sp_dev *d, uint32_t id);
/* The debugfs "queues" line of user-mode queue @id of @d's file. */
int sp_user_queue_line(const struct sp_dev *d, uint32_t id, char *out, size_t len);
/* Arm one of the card's one-shot faults (SPYRE_FAULT_* kind) on a ring. */
int sp_arm_fault(const struct sp_dev *d, uint32_t kind, int ring);

/* The DRM client ID of @fd, from fdinfo. */
int sp_client_id(int fd, uint64_t *id);
/* A numeric fdinfo key of @fd ("drm-engine-dma", "drm-total-device"), units applied. */
int sp_fdinfo_u64(int fd, const char *key, uint64_t *val);
/* fdinfo of @fd as text. */
/* DRM_IOCTL_SPYRE_VM_BIND of one range; 0 or -errno. */
int sp_vm_bind(int fd, uint32_t op, uint32_t flags, uint32_t handle, uint64_t bo_offset,
	       uint64_t addr, uint64_t range);
int sp_fdinfo(int fd, char *buf, size_t len);

uint64_t sp_now_ns(void);

/*
 * --- two processes -------------------------------------------------------
 * sp_pair_run() forks two children that run @fn(role 0 or 1, pair, arg),
 * each opening the card itself (nothing of the parent's file is shared),
 * and returns how many of them failed: @fn's non-zero return, a crash or
 * a timeout. sp_pair_barrier() lines the two up (step n of both), so their
 * commands reach the card at about the same time; it gives up (false)
 * after SP_WAIT_NS when the other died.
 */
struct sp_pair {
	int arrived;	/* in shared memory, atomic */
};

/* In a child of sp_pair_run(): count a failed @cond in @bad and say why. */
#define SP_CHILD_CHECK(role, bad, cond, fmt, ...) do {			\
	if (!(cond)) {							\
		fprintf(stderr, "# process %d: %s:%d: " fmt "\n", (role),	\
			__FILE__, __LINE__, ##__VA_ARGS__);		\
		(bad)++;						\
	}								\
} while (0)

typedef int (*sp_pair_fn)(int role, struct sp_pair *pair, void *arg);
int sp_pair_run(sp_pair_fn fn, void *arg);
bool sp_pair_barrier(struct sp_pair *pair, int step);

#endif /* SPYRE_UTIL_H */
