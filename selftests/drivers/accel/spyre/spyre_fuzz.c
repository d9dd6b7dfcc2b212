// SPDX-License-Identifier: GPL-2.0
/*
 * Spyre accel ioctl fuzzer.
 *
 * Several processes, each with several threads, issue random and mutated
 * BO, QUEUE, SUBMIT (also on card VAs), VM_BIND, syncobj, PRIME, udmabuf
 * and mmap calls on files of every card: some files shared by the threads
 * of a process (and closed and reopened under them), some private. Threads fork children that keep
 * using the inherited files and mappings; the parent process SIGKILLs and
 * respawns workers at random. A canary in every worker checks now and then
 * that the card still moves data correctly.
 *
 * The run is bounded by an ioctl count and a time limit. Every worker's
 * operation stream derives from the seed alone (worker index, thread index
 * and respawn generation), so a seed replays the same calls; only their
 * interleaving differs between runs.
 *
 * After the run: every worker exited as expected, the BO count, free device
 * memory and pinned host memory of every card are back where they started,
 * each card passes a smoke test, and the module unloads and reloads.
 * The kernel's own reports (oops, WARN, lockdep, KASAN) are the VM
 * runner's to catch.
 *
 * With -F PERCENT (a kernel with failslab), the fuzzing threads' slab
 * allocations fail with that probability (sleeping ones too), so the
 * error paths run; the canaries are off then, since their calls fail too.
 *
 * usage: spyre_fuzz [-s SEED] [-n IOCTLS] [-t SECONDS] [-p PROCS] [-j THREADS] [-U]
 *                   [-F PERCENT]
 *   defaults: a seed from the clock, 20000 ioctls, 60 s, 3 processes,
 *   3 threads; -U skips the module reload. Environment SPYRE_FUZZ_SEED,
 *   SPYRE_FUZZ_IOCTLS, SPYRE_FUZZ_SECONDS and SPYRE_FUZZ_FAILSLAB set the
 *   same as -s, -n, -t and -F.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/udmabuf.h>

#include "kselftest.h"
#include "spyre_state.h"
#include "spyre_util.h"

#define FZ_MAX_PROCS	16
#define FZ_MAX_THREADS	8
#define FZ_SLOTS	4	/* shared files per process: 2 per card, up to 2 cards */
#define FZ_BOS		16
#define FZ_QUEUES	6
#define FZ_SYNCOBJS	12
#define FZ_FDS		6
#define FZ_MAPS		8
#define FZ_MAX_BO	(8 * SP_MiB)

/* State shared by every process of the run (MAP_SHARED). */
struct fz_shared {
	atomic_ulong ioctls;
	atomic_ulong succeeded;
	atomic_ulong jobs;
	atomic_ulong submit_errno[160];	/* why SUBMITs failed, by errno */
	atomic_ulong canaries;
	atomic_ulong canary_failures;
	atomic_ulong forks;
	atomic_int stop;
};

static struct fz_shared *shared;
static unsigned long max_ioctls;
static int ncards;
static int nthreads = 3;
static int failslab;		/* percent of slab allocations that fail */

/* One process's files that its threads share; slot i is owned by thread i. */
static atomic_int slots[FZ_SLOTS];

struct fz_map {
	void *addr;
	size_t len;
};

struct fz_thread {
	uint64_t rng;
	int idx;
	uint32_t bos[FZ_BOS];
	uint32_t queues[FZ_QUEUES];
	uint32_t syncobjs[FZ_SYNCOBJS];
	int fds[FZ_FDS];		/* dma-bufs and sync_files this thread owns */
	struct fz_map maps[FZ_MAPS];
	/* the newest objects made on the home file, for well-formed calls */
	uint32_t home_bo, home_queue, home_syncobj;
	struct sp_dev canary;		/* a private file of card 0 */
	uint32_t canary_q, canary_bo;
};

/* splitmix64: every stream fully determined by its seed */
static uint64_t rnd(struct fz_thread *t)
{
	uint64_t z = (t->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t below(struct fz_thread *t, uint32_t n)
{
	return n ? rnd(t) % n : 0;
}

static bool chance(struct fz_thread *t, uint32_t percent)
{
	return below(t, 100) < percent;
}

/* A value near the edges that uAPI checks get wrong. */
static uint64_t edgy(struct fz_thread *t)
{
	static const uint64_t v[] = {
		0, 1, 7, 8, 63, 64, 4095, 4096, 4097, 65536, 1ull << 20, 1ull << 30,
		(1ull << 31) - 1, 1ull << 31, (1ull << 32) - 1, 1ull << 32, 1ull << 40,
		(1ull << 63) - 1, 1ull << 63, ~0ull - 4095, ~0ull - 1, ~0ull,
	};

	return chance(t, 70) ? v[below(t, ARRAY_SIZE(v))] : rnd(t);
}

/* Mostly plausible sizes and offsets, sometimes edgy ones. */
static uint64_t plausible(struct fz_thread *t, uint64_t max)
{
	if (chance(t, 10))
		return edgy(t);
	switch (below(t, 3)) {
	case 0:
		return below(t, 256) * 8;
	case 1:
		return below(t, 64) * SP_PAGE;
	default:
		return max ? rnd(t) % max : 0;
	}
}

static bool budget_left(void)
{
	return !atomic_load(&shared->stop) && atomic_load(&shared->ioctls) < max_ioctls;
}

static int fz_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	atomic_fetch_add(&shared->ioctls, 1);
	ret = ioctl(fd, req, arg) ? -errno : 0;
	if (!ret)
		atomic_fetch_add(&shared->succeeded, 1);
	if (req == DRM_IOCTL_SPYRE_SUBMIT && !ret)
		atomic_fetch_add(&shared->jobs, 1);
	else if (req == DRM_IOCTL_SPYRE_SUBMIT && -ret < (int)ARRAY_SIZE(shared->submit_errno))
		atomic_fetch_add(&shared->submit_errno[-ret], 1);
	return ret;
}

/*
 * Mostly the thread's home file, where its handles are valid; else any
 * shared file (handles of another file, another card). The canary's file
 * stays private: random handles would close its BO and queue.
 */
static int home_fd(struct fz_thread *t)
{
	return atomic_load(&slots[t->idx % (ncards * 2)]);
}

static int any_fd(struct fz_thread *t)
{
	if (chance(t, 70))
		return home_fd(t);
	return atomic_load(&slots[below(t, ncards * 2)]);
}

static uint32_t pick(struct fz_thread *t, const uint32_t *pool, int n)
{
	if (chance(t, 8))
		return (uint32_t)edgy(t);
	return pool[below(t, n)];
}

static int64_t fz_deadline(struct fz_thread *t)
{
	switch (below(t, 4)) {
	case 0:
		return 0;
	case 1:
		return -1;
	case 2:
		return sp_deadline(below(t, 2000000));
	default:
		return sp_deadline(below(t, 50000000));
	}
}

/* --- the operations ------------------------------------------------------- */

static void op_param(struct fz_thread *t)
{
	struct drm_spyre_get_param gp = {
		.param = chance(t, 80) ? below(t, SP_NUM_PARAMS + 2) : (uint32_t)edgy(t),
		.pad = chance(t, 90) ? 0 : (uint32_t)rnd(t),
	};

	fz_ioctl(any_fd(t), DRM_IOCTL_SPYRE_GET_PARAM, &gp);
}

static void op_bo_create(struct fz_thread *t)
{
	struct drm_spyre_bo_create c = {
		.size = chance(t, 85) ? 1 + below(t, FZ_MAX_BO) : edgy(t),
		.placement = chance(t, 90) ? below(t, 2) : (uint32_t)edgy(t),
		.flags = chance(t, 90) ? 0 : (uint32_t)edgy(t),
		.pad = chance(t, 95) ? 0 : 1,
	};
	int i = below(t, FZ_BOS), fd = any_fd(t);

	if (!fz_ioctl(fd, DRM_IOCTL_SPYRE_BO_CREATE, &c)) {
		t->bos[i] = c.handle;
		if (fd == home_fd(t))
			t->home_bo = c.handle;
	}
}

static void op_bo_info(struct fz_thread *t)
{
	struct drm_spyre_bo_info info = {
		.handle = pick(t, t->bos, FZ_BOS),
		.flags = chance(t, 90) ? 0 : (uint32_t)edgy(t),
	};

	fz_ioctl(any_fd(t), DRM_IOCTL_SPYRE_BO_INFO, &info);
}

static void op_bo_wait(struct fz_thread *t)
{
	struct drm_spyre_bo_wait w = {
		.handle = pick(t, t->bos, FZ_BOS),
		.flags = chance(t, 90) ? 0 : (uint32_t)edgy(t),
		.timeout_ns = fz_deadline(t),
	};

	fz_ioctl(any_fd(t), DRM_IOCTL_SPYRE_BO_WAIT, &w);
}

static void op_gem_close(struct fz_thread *t)
{
	struct drm_gem_close c = { .handle = pick(t, t->bos, FZ_BOS) };

	fz_ioctl(any_fd(t), DRM_IOCTL_GEM_CLOSE, &c);
}

static void op_queue_create(struct fz_thread *t)
{
	struct drm_spyre_queue_create c = {
		.engine = chance(t, 90) ? below(t, 2) : (uint32_t)edgy(t),
		.priority = chance(t, 90) ? below(t, 3) : (uint32_t)edgy(t),
		.flags = chance(t, 95) ? 0 : (uint32_t)edgy(t),
	};

	int fd = any_fd(t);

	if (!fz_ioctl(fd, DRM_IOCTL_SPYRE_QUEUE_CREATE, &c)) {
		t->queues[below(t, FZ_QUEUES)] = c.queue_id;
		if (fd == home_fd(t))
			t->home_queue = c.queue_id;
	}
}

static void op_queue_destroy(struct fz_thread *t)
{
	struct drm_spyre_queue_destroy d = {
		.queue_id = pick(t, t->queues, FZ_QUEUES),
		.pad = chance(t, 95) ? 0 : 1,
	};

	fz_ioctl(any_fd(t), DRM_IOCTL_SPYRE_QUEUE_DESTROY, &d);
}

/* Reads (and sometimes clears) a queue's failure record while jobs fail. */
static void op_queue_error(struct fz_thread *t)
{
	struct drm_spyre_queue_error e = {
		.queue_id = pick(t, t->queues, FZ_QUEUES),
		.flags = chance(t, 90) ? below(t, 2) : (uint32_t)edgy(t),
	};

	fz_ioctl(any_fd(t), DRM_IOCTL_SPYRE_QUEUE_ERROR, &e);
}

/* An offset or size: small and likely in bounds when @careful. */
static uint64_t span(struct fz_thread *t, bool careful, uint64_t max)
{
	return careful ? below(t, 64) * 8 : plausible(t, max);
}

/* A BO handle: the newest one of the home file when @careful. */
static uint32_t bo(struct fz_thread *t, bool careful)
{
	return careful && chance(t, 90) ? t->home_bo : pick(t, t->bos, FZ_BOS);
}

static void random_cmd(struct fz_thread *t, struct drm_spyre_cmd *c,
		       struct drm_spyre_bo_range *args, bool careful)
{
	int i, nargs = below(t, 4);

	memset(c, 0, sizeof(*c));
	c->type = chance(t, 95) ? below(t, DRM_SPYRE_CMD_TIMESTAMP + 1) : (uint32_t)edgy(t);
	if (careful && c->type > DRM_SPYRE_CMD_TIMESTAMP)
		c->type = DRM_SPYRE_CMD_FILL;
	c->flags = careful || chance(t, 95) ? 0 : (uint32_t)edgy(t);
	switch (c->type) {
	case DRM_SPYRE_CMD_COPY:
		c->copy.src_handle = bo(t, careful);
		c->copy.dst_handle = bo(t, careful);
		c->copy.src_offset = span(t, careful, FZ_MAX_BO);
		c->copy.dst_offset = span(t, careful, FZ_MAX_BO);
		c->copy.size = span(t, careful, FZ_MAX_BO);
		break;
	case DRM_SPYRE_CMD_FILL:
		c->fill.handle = bo(t, careful);
		c->fill.pattern = rnd(t);
		c->fill.offset = span(t, careful, FZ_MAX_BO);
		c->fill.size = span(t, careful, FZ_MAX_BO);
		break;
	case DRM_SPYRE_CMD_LAUNCH:
		for (i = 0; i < nargs; i++) {
			args[i].handle = bo(t, careful);
			args[i].pad = chance(t, 95) ? 0 : 1;
			args[i].offset = plausible(t, FZ_MAX_BO);
			args[i].size = plausible(t, FZ_MAX_BO);
		}
		c->launch.prog_handle = bo(t, careful);
		c->launch.ws_handle = chance(t, 50) ? 0 : pick(t, t->bos, FZ_BOS);
		c->launch.prog_offset = plausible(t, SP_MiB);
		c->launch.prog_size = plausible(t, 65536);
		c->launch.ws_offset = plausible(t, SP_MiB);
		c->launch.ws_size = plausible(t, SP_MiB);
		c->launch.args = chance(t, 95) ? (uintptr_t)args : edgy(t);
		c->launch.nargs = chance(t, 90) ? nargs : (uint32_t)edgy(t);
		c->launch.args_stride = chance(t, 90) ? sizeof(*args) : (uint32_t)edgy(t);
		break;
	case DRM_SPYRE_CMD_TIMESTAMP:
		c->timestamp.handle = bo(t, careful);
		c->timestamp.offset = span(t, careful, FZ_MAX_BO);
		break;
	default:
		if (chance(t, 10))
			c->rsvd[below(t, 7)] = rnd(t);
		break;
	}
}

/*
 * Card VAs of a small window (DRM_SPYRE_SUBMIT_VA): op_vm_bind maps and
 * unmaps pages in it, so VA jobs both translate and fault.
 */
#define FZ_VA		0x1000000ull
#define FZ_VA_PAGES	64

static void va_cmd(struct fz_thread *t, struct drm_spyre_cmd *c, struct drm_spyre_bo_range *args)
{
	int i;
	uint64_t off = FZ_VA + below(t, FZ_VA_PAGES * 512) * 8ull;

	switch (c->type) {
	case DRM_SPYRE_CMD_FILL:
		c->fill.handle = 0;
		c->fill.offset = off;
		break;
	case DRM_SPYRE_CMD_TIMESTAMP:
		c->timestamp.handle = 0;
		c->timestamp.offset = off;
		break;
	case DRM_SPYRE_CMD_COPY:
		/* either direction flag, sometimes both or a wrong kind */
		c->flags = chance(t, 90) ? below(t, 3) : (uint32_t)edgy(t);
		c->copy.src_handle = 0;
		c->copy.dst_handle = 0;
		c->copy.src_offset = off;
		c->copy.dst_offset = FZ_VA + below(t, FZ_VA_PAGES * 512) * 8ull;
		break;
	case DRM_SPYRE_CMD_LAUNCH:
		/* random program bytes at a random page: mostly faults, never more */
		c->launch.prog_handle = 0;
		c->launch.ws_handle = 0;
		c->launch.prog_offset = off & ~4095ull;
		c->launch.ws_offset = 0;
		c->launch.ws_size = 0;
		for (i = 0; i < 4; i++) {
			args[i].handle = 0;
			args[i].offset = FZ_VA + below(t, FZ_VA_PAGES * 512) * 8ull;
		}
		break;
	}
}

static void op_vm_bind(struct fz_thread *t)
{
	struct drm_spyre_vm_bind b = {
		.op = chance(t, 95) ? below(t, 2) : (uint32_t)edgy(t),
		.flags = chance(t, 90) ? below(t, 4) : (uint32_t)edgy(t),
		.handle = pick(t, t->bos, FZ_BOS),
		.bo_offset = chance(t, 70) ? 0 : chance(t, 80) ? below(t, 16) * 4096ull : edgy(t),
		.addr = chance(t, 90) ? FZ_VA + below(t, FZ_VA_PAGES) * 4096ull : edgy(t),
		.range = chance(t, 90) ? (1 + below(t, 8)) * 4096ull : edgy(t),
		.pad = chance(t, 97) ? 0 : 1,
		.in_syncobj = chance(t, 97) ? 0 : 1,
		.out_point = chance(t, 97) ? 0 : 1,
	};

	if (b.op == DRM_SPYRE_VM_BIND_OP_UNMAP && chance(t, 80)) {
		b.flags = 0;
		b.handle = 0;
		b.bo_offset = 0;
	}
	fz_ioctl(chance(t, 80) ? home_fd(t) : any_fd(t), DRM_IOCTL_SPYRE_VM_BIND, &b);
}

static void op_submit(struct fz_thread *t)
{
	struct drm_spyre_bo_range args[8][4];
	struct drm_spyre_sync in[4], out[4];
	struct drm_spyre_cmd cmds[8];
	struct drm_spyre_submit s = { 0 };
	uint32_t n = below(t, 9), nin = below(t, 3), nout = below(t, 3), i;
	bool careful = chance(t, 60);

	for (i = 0; i < n; i++)
		random_cmd(t, &cmds[i], args[i], careful);
	for (i = 0; i < 4; i++) {
		in[i].handle = pick(t, t->syncobjs, FZ_SYNCOBJS);
		in[i].flags = chance(t, 95) ? 0 : (uint32_t)edgy(t);
		in[i].point = chance(t, 70) ? 0 : below(t, 8);
		out[i].handle = pick(t, t->syncobjs, FZ_SYNCOBJS);
		out[i].flags = chance(t, 95) ? 0 : (uint32_t)edgy(t);
		out[i].point = chance(t, 70) ? 0 : below(t, 8);
	}
	s.queue_id = pick(t, t->queues, FZ_QUEUES);
	s.flags = chance(t, 95) ? 0 : (uint32_t)edgy(t);
	s.cmds = chance(t, 95) ? (uintptr_t)cmds : edgy(t);
	s.cmd_count = chance(t, 95) ? n : (uint32_t)edgy(t);
	s.cmd_stride = chance(t, 90) ? sizeof(cmds[0]) : (uint32_t)plausible(t, 256);
	if (s.cmd_stride > sizeof(cmds[0]) && s.cmd_count > 2 && s.cmds == (uintptr_t)cmds)
		s.cmd_count = 2;	/* a wide stride must stay inside cmds[] */
	s.in_syncs = chance(t, 95) ? (uintptr_t)in : edgy(t);
	s.in_sync_count = chance(t, 95) ? nin : (uint32_t)edgy(t);
	s.sync_stride = chance(t, 90) ? sizeof(in[0]) : (uint32_t)plausible(t, 32);
	s.out_syncs = chance(t, 95) ? (uintptr_t)out : edgy(t);
	s.out_sync_count = chance(t, 95) ? nout : (uint32_t)edgy(t);
	if (s.sync_stride > sizeof(in[0]) &&
	    (s.in_sync_count > 2 || s.out_sync_count > 2))
		s.sync_stride = sizeof(in[0]);
	s.pad = chance(t, 97) ? 0 : 1;
	if (careful) {
		/* well formed: only the handles and the sizes may be wrong */
		memset(in, 0, sizeof(in));
		for (i = 0; i < 4; i++)
			out[i] = (struct drm_spyre_sync) { .handle = out[i].handle };
		out[0].handle = t->home_syncobj;
		s = (struct drm_spyre_submit) {
			.queue_id = t->home_queue, .cmds = (uintptr_t)cmds, .cmd_count = n,
			.cmd_stride = sizeof(cmds[0]), .in_syncs = (uintptr_t)in,
			.in_sync_count = 0, .sync_stride = sizeof(in[0]),
			.out_syncs = (uintptr_t)out, .out_sync_count = nout ? 1 : 0,
		};
		if (chance(t, 25)) {
			/* the same commands on card VAs of the file's space */
			s.flags = DRM_SPYRE_SUBMIT_VA;
			for (i = 0; i < n; i++)
				va_cmd(t, &cmds[i], args[i]);
		}
	}
	fz_ioctl(careful ? home_fd(t) : any_fd(t), DRM_IOCTL_SPYRE_SUBMIT, &s);
}

static void op_syncobj(struct fz_thread *t)
{
	uint32_t h = pick(t, t->syncobjs, FZ_SYNCOBJS), handles[3];
	uint64_t points[3];
	int fd = any_fd(t), i;

	for (i = 0; i < 3; i++) {
		handles[i] = pick(t, t->syncobjs, FZ_SYNCOBJS);
		points[i] = below(t, 8);
	}
	switch (below(t, 9)) {
	case 0: {
		struct drm_syncobj_create c = {
			.flags = chance(t, 90) ? below(t, 2) : (uint32_t)edgy(t),
		};

		if (!fz_ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c)) {
			t->syncobjs[below(t, FZ_SYNCOBJS)] = c.handle;
			if (fd == home_fd(t))
				t->home_syncobj = c.handle;
		}
		break;
	}
	case 1: {
		struct drm_syncobj_destroy d = { .handle = h };

		fz_ioctl(fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
		break;
	}
	case 2: {
		struct drm_syncobj_wait w = {
			.handles = (uintptr_t)handles,
			.count_handles = below(t, 4),
			.timeout_nsec = fz_deadline(t),
			.flags = below(t, 4),
		};

		fz_ioctl(fd, DRM_IOCTL_SYNCOBJ_WAIT, &w);
		break;
	}
	case 3: {
		struct drm_syncobj_timeline_wait w = {
			.handles = (uintptr_t)handles,
			.points = (uintptr_t)points,
			.count_handles = below(t, 4),
			.timeout_nsec = fz_deadline(t),
			.flags = below(t, 8),
		};

		fz_ioctl(fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &w);
		break;
	}
	case 4: {
		struct drm_syncobj_array a = {
			.handles = (uintptr_t)handles,
			.count_handles = below(t, 4),
		};

		fz_ioctl(fd, chance(t, 50) ? DRM_IOCTL_SYNCOBJ_RESET : DRM_IOCTL_SYNCOBJ_SIGNAL,
			 &a);
		break;
	}
	case 5: {
		struct drm_syncobj_timeline_array a = {
			.handles = (uintptr_t)handles,
			.points = (uintptr_t)points,
			.count_handles = below(t, 4),
			.flags = chance(t, 80) ? 0 : below(t, 2),
		};

		fz_ioctl(fd, chance(t, 50) ? DRM_IOCTL_SYNCOBJ_QUERY :
			 DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, &a);
		break;
	}
	case 6: {
		struct drm_syncobj_transfer x = {
			.src_handle = h,
			.dst_handle = handles[0],
			.src_point = points[1],
			.dst_point = points[2],
			.flags = chance(t, 80) ? 0 : below(t, 2),
		};

		fz_ioctl(fd, DRM_IOCTL_SYNCOBJ_TRANSFER, &x);
		break;
	}
	case 7: {
		/* export as a syncobj fd or a sync_file, kept for import and close */
		struct drm_syncobj_handle e = {
			.handle = h,
			.flags = below(t, 2) ? DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE : 0,
		};
		int slot = below(t, FZ_FDS);

		if (!fz_ioctl(fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &e)) {
			if (t->fds[slot] >= 0)
				close(t->fds[slot]);
			t->fds[slot] = e.fd;
		}
		break;
	}
	default: {
		struct drm_syncobj_handle im = {
			.handle = chance(t, 50) ? h : 0,
			.fd = t->fds[below(t, FZ_FDS)],
			.flags = chance(t, 50) ?
				 DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE : 0,
		};

		if (!fz_ioctl(fd, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &im) && !im.flags)
			t->syncobjs[below(t, FZ_SYNCOBJS)] = im.handle;
		break;
	}
	}
}

static void op_prime(struct fz_thread *t)
{
	int slot = below(t, FZ_FDS);

	if (chance(t, 50)) {
		struct drm_prime_handle e = {
			.handle = pick(t, t->bos, FZ_BOS),
			.flags = chance(t, 90) ? DRM_CLOEXEC | (below(t, 2) ? DRM_RDWR : 0) :
						  (uint32_t)edgy(t),
			.fd = -1,
		};

		if (!fz_ioctl(any_fd(t), DRM_IOCTL_PRIME_HANDLE_TO_FD, &e)) {
			if (t->fds[slot] >= 0)
				close(t->fds[slot]);
			t->fds[slot] = e.fd;
		}
	} else {
		/* import into any file: the same one, another of this card, another card */
		struct drm_prime_handle im = { .fd = t->fds[slot] };

		if (!fz_ioctl(any_fd(t), DRM_IOCTL_PRIME_FD_TO_HANDLE, &im))
			t->bos[below(t, FZ_BOS)] = im.handle;
	}
}

/* A udmabuf over a sealed memfd, kept as a dma-buf to import. */
static void op_udmabuf(struct fz_thread *t)
{
	size_t size = (1 + below(t, 16)) * SP_PAGE;
	struct udmabuf_create c = { .size = size };
	int dev, mfd, buf, slot = below(t, FZ_FDS);

	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return;
	mfd = memfd_create("spyre-fuzz", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (mfd >= 0 && !ftruncate(mfd, size) && !fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
		c.memfd = mfd;
		c.flags = UDMABUF_FLAGS_CLOEXEC;
		buf = ioctl(dev, UDMABUF_CREATE, &c);
		if (buf >= 0) {
			if (t->fds[slot] >= 0)
				close(t->fds[slot]);
			t->fds[slot] = buf;
		}
	}
	if (mfd >= 0)
		close(mfd);
	close(dev);
}

/* Map a BO (or a dma-buf), touch it, keep the mapping for a while. */
static void op_mmap(struct fz_thread *t)
{
	struct drm_spyre_bo_info info = { .handle = pick(t, t->bos, FZ_BOS) };
	int slot = below(t, FZ_MAPS), fd = any_fd(t);
	struct fz_map *m = &t->maps[slot];
	off_t off = 0;
	size_t len;
	void *p;

	if (m->addr) {
		munmap(m->addr, m->len);
		m->addr = NULL;
	}
	if (chance(t, 25)) {
		fd = t->fds[below(t, FZ_FDS)];
		len = (1 + below(t, 4)) * SP_PAGE;
	} else {
		if (fz_ioctl(fd, DRM_IOCTL_SPYRE_BO_INFO, &info))
			return;
		off = chance(t, 90) ? info.mmap_offset : info.mmap_offset + below(t, 8) * SP_PAGE;
		len = chance(t, 90) ? info.size : (1 + below(t, 2048)) * SP_PAGE;
	}
	if (fd < 0 || !len || len > 64 * SP_MiB)
		return;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
	if (p == MAP_FAILED)
		return;
	/* a mapping that succeeded must be usable over its whole length */
	__atomic_fetch_xor((uint8_t *)p, 1, __ATOMIC_RELAXED);
	__atomic_fetch_xor((uint8_t *)p + len - 1, 1, __ATOMIC_RELAXED);
	m->addr = p;
	m->len = len;
}

/* Close a file this thread owns; slot owners close and reopen shared files. */
static void op_close(struct fz_thread *t)
{
	int slot, old, fd;

	if (chance(t, 50) || t->idx >= ncards * 2) {
		slot = below(t, FZ_FDS);
		if (t->fds[slot] >= 0)
			close(t->fds[slot]);
		t->fds[slot] = -1;
		return;
	}
	slot = t->idx;
	old = atomic_exchange(&slots[slot], -1);
	if (old >= 0)
		close(old);
	/* the other threads race with the close and see EBADF (or a new file) */
	fd = open(slot < 2 ? "/dev/accel/accel0" : "/dev/accel/accel1", O_RDWR | O_CLOEXEC);
	atomic_store(&slots[slot], fd);
}

/* A random number in the driver's ioctl range, random size and direction. */
static void op_raw(struct fz_thread *t)
{
	uint8_t buf[256] = { 0 };
	unsigned long req;
	uint32_t i;

	for (i = 0; i < sizeof(buf) / 8; i++)
		((uint64_t *)buf)[i] = chance(t, 50) ? 0 : edgy(t);
	req = _IOC(below(t, 4), DRM_IOCTL_BASE, DRM_COMMAND_BASE + below(t, 0x10),
		   below(t, sizeof(buf) + 1));
	fz_ioctl(any_fd(t), req, buf);
}

static void run_ops(struct fz_thread *t, int n);

/* Fork: the child keeps using the inherited files and mappings, then dies. */
static void op_fork(struct fz_thread *t)
{
	pid_t pid;
	int st;

	atomic_fetch_add(&shared->forks, 1);
	pid = fork();
	if (pid < 0)
		return;
	if (!pid) {
		t->rng ^= 0xf0f0;
		run_ops(t, below(t, 32));
		_exit(0);
	}
	if (chance(t, 50)) {
		usleep(below(t, 2000));
		kill(pid, SIGKILL);
	}
	waitpid(pid, &st, 0);
}

/* The canary: data put through the card must come back intact. */
static void op_canary(struct fz_thread *t)
{
	uint8_t up[512], down[512];
	uint32_t seed = rnd(t);
	int ret;

	sp_pattern(up, sizeof(up), seed);
	ret = sp_upload(&t->canary, t->canary_q, t->canary_bo, 4096, up, sizeof(up));
	if (!ret)
		ret = sp_download(&t->canary, t->canary_q, t->canary_bo, 4096, down,
				  sizeof(down));
	atomic_fetch_add(&shared->ioctls, 8);
	atomic_fetch_add(&shared->canaries, 1);
	if (ret || sp_pattern_check(down, sizeof(down), seed) >= 0) {
		atomic_fetch_add(&shared->canary_failures, 1);
		printf("# canary failed: %s\n", ret ? strerror(-ret) : "data differs");
	}
}

static void run_ops(struct fz_thread *t, int n)
{
	static void (*const ops[])(struct fz_thread *t) = {
		op_param, op_bo_create, op_bo_create, op_bo_info, op_bo_wait, op_gem_close,
		op_queue_create, op_queue_destroy, op_queue_error, op_submit, op_submit,
		op_submit, op_submit, op_syncobj, op_syncobj, op_syncobj, op_prime, op_prime,
		op_mmap, op_mmap, op_raw, op_vm_bind, op_vm_bind,
	};
	int i;

	for (i = 0; i < n && budget_left(); i++) {
		uint32_t r = below(t, 1000);

		if (r < 3)
			op_close(t);
		else if (r < 5)
			op_fork(t);
		else if (r < 10)
			op_udmabuf(t);
		else if (r < 14 && t->canary.fd >= 0 && !failslab)
			op_canary(t);
		else
			ops[below(t, ARRAY_SIZE(ops))](t);
	}
}

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

#define FAILSLAB "/sys/kernel/debug/failslab/"

/* failslab for the tasks that ask for it (make-it-fail), sleeping allocations too. */
static int failslab_setup(int percent)
{
	char val[16];
	int ret;

	snprintf(val, sizeof(val), "%d", percent);
	ret = write_file(FAILSLAB "probability", val);
	if (!ret)
		ret = write_file(FAILSLAB "interval", "1");
	if (!ret)
		ret = write_file(FAILSLAB "times", "-1");
	if (!ret)
		ret = write_file(FAILSLAB "task-filter", "Y");
	if (!ret)
		ret = write_file(FAILSLAB "ignore-gfp-wait", "N");
	if (!ret)
		ret = write_file(FAILSLAB "verbose", "0");
	return ret;
}

static void *thread_main(void *arg)
{
	struct fz_thread *t = arg;

	if (failslab)
		write_file("/proc/thread-self/make-it-fail", "1");

	while (budget_left())
		run_ops(t, 64);
	return NULL;
}

/* One worker process: open the shared files, run the threads. */
static void worker(uint64_t seed, int proc, int gen)
{
	struct fz_thread th[FZ_MAX_THREADS];
	pthread_t tid[FZ_MAX_THREADS];
	int i, j;

	for (i = 0; i < FZ_SLOTS; i++)
		atomic_store(&slots[i], -1);
	for (i = 0; i < ncards * 2; i++)
		atomic_store(&slots[i], open(i < 2 ? "/dev/accel/accel0" : "/dev/accel/accel1",
					     O_RDWR | O_CLOEXEC));
	for (i = 0; i < nthreads; i++) {
		struct fz_thread *t = &th[i];

		memset(t, 0, sizeof(*t));
		t->idx = i;
		t->rng = seed ^ ((uint64_t)proc << 48) ^ ((uint64_t)gen << 32) ^
			 ((uint64_t)i << 24);
		for (j = 0; j < FZ_FDS; j++)
			t->fds[j] = -1;
		t->canary.fd = -1;
		if (!sp_dev_open(&t->canary, 0) &&
		    (sp_queue_create(t->canary.fd, below(t, 2), DRM_SPYRE_PRIORITY_NORMAL,
				     &t->canary_q) ||
		     sp_bo_create(t->canary.fd, SP_MiB, DRM_SPYRE_PLACEMENT_DEVICE,
				  &t->canary_bo)))
			sp_dev_close(&t->canary);
	}
	for (i = 0; i < nthreads; i++)
		pthread_create(&tid[i], NULL, thread_main, &th[i]);
	for (i = 0; i < nthreads; i++)
		pthread_join(tid[i], NULL);
	/* half the workers clean up, the others leave it all to exit */
	if (seed & 1)
		for (i = 0; i < nthreads; i++)
			for (j = 0; j < FZ_MAPS; j++)
				if (th[i].maps[j].addr)
					munmap(th[i].maps[j].addr, th[i].maps[j].len);
	_exit(0);
}

static pid_t spawn(uint64_t seed, int proc, int gen)
{
	pid_t pid = fork();

	if (!pid)
		worker(seed, proc, gen);
	return pid;
}

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

int main(int argc, char **argv)
{
	uint64_t seed = env_u64("SPYRE_FUZZ_SEED", 0), seconds, t0, lap;
	int minors[SP_MAX_CARDS], nprocs = 3, opt, i, st, ret;
	unsigned long kills = 0, bad_exits = 0;
	pid_t pids[FZ_MAX_PROCS];
	int gens[FZ_MAX_PROCS] = { 0 };
	struct sp_state base;
	bool reload = true;
	struct sp_dev d;

	max_ioctls = env_u64("SPYRE_FUZZ_IOCTLS", 20000);
	seconds = env_u64("SPYRE_FUZZ_SECONDS", 60);
	if (!seed)
		seed = (uint64_t)time(NULL) * 2654435761u ^ getpid();
	failslab = env_u64("SPYRE_FUZZ_FAILSLAB", 0);
	while ((opt = getopt(argc, argv, "s:n:t:p:j:UF:")) != -1) {
		switch (opt) {
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			max_ioctls = strtoul(optarg, NULL, 0);
			break;
		case 't':
			seconds = strtoull(optarg, NULL, 0);
			break;
		case 'p':
			nprocs = atoi(optarg);
			break;
		case 'j':
			nthreads = atoi(optarg);
			break;
		case 'U':
			reload = false;
			break;
		case 'F':
			failslab = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-s SEED] [-n IOCTLS] [-t SECONDS] %s\n",
				argv[0], "[-p PROCS] [-j THREADS] [-U] [-F PERCENT]");
			return KSFT_FAIL;
		}
	}
	if (nprocs < 1 || nprocs > FZ_MAX_PROCS || nthreads < 1 || nthreads > FZ_MAX_THREADS ||
	    failslab < 0 || failslab > 100) {
		fprintf(stderr, "spyre_fuzz: 1..%d processes, 1..%d threads, 0..100%% failslab\n",
			FZ_MAX_PROCS, FZ_MAX_THREADS);
		return KSFT_FAIL;
	}

	ksft_print_header();
	ncards = sp_find_cards(minors, SP_MAX_CARDS);
	if (!ncards)
		ksft_exit_skip("no Spyre card\n");
	if (geteuid())
		ksft_exit_skip("needs root (debugfs counters, module reload)\n");
	if (ncards > 2)
		ncards = 2;
	/* the slots open accel0 and accel1: the cards must be those minors */
	if (minors[0] != 0 || (ncards > 1 && minors[1] != 1))
		ncards = 1;
	ksft_set_plan(reload ? 5 : 4);
	ksft_print_msg("seed %#llx: %lu ioctls, %llu s, %d processes x %d threads, %d cards\n",
		       (unsigned long long)seed, max_ioctls, (unsigned long long)seconds, nprocs,
		       nthreads, ncards);
	ksft_print_msg("replay: %s -s %#llx -n %lu -t %llu -p %d -j %d -F %d\n", argv[0],
		       (unsigned long long)seed, max_ioctls, (unsigned long long)seconds, nprocs,
		       nthreads, failslab);
	if (failslab && failslab_setup(failslab))
		ksft_exit_skip("no failslab in this kernel (CONFIG_FAILSLAB, debugfs)\n");
	fflush(stdout);
	if (sp_state_take(&base))
		ksft_exit_fail_msg("cannot read the driver's debugfs counters\n");

	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		      -1, 0);
	if (shared == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	memset(shared, 0, sizeof(*shared));

	t0 = sp_now_ns();
	lap = t0;
	for (i = 0; i < nprocs; i++)
		pids[i] = spawn(seed, i, 0);
	/* reap, and now and then kill a worker in the middle of its calls */
	for (;;) {
		bool alive = false;

		if (sp_now_ns() - t0 > seconds * 1000000000ull)
			atomic_store(&shared->stop, 1);
		for (i = 0; i < nprocs; i++) {
			if (pids[i] <= 0)
				continue;
			if (waitpid(pids[i], &st, WNOHANG) == pids[i]) {
				if (!WIFEXITED(st) || WEXITSTATUS(st)) {
					bad_exits++;
					ksft_print_msg("worker %d gen %d died: status %#x\n", i,
						       gens[i], st);
				}
				pids[i] = 0;
				continue;
			}
			alive = true;
		}
		if (!alive)
			break;
		usleep(20000);
		if (budget_left() && sp_now_ns() - lap > 500000000ull) {
			lap = sp_now_ns();
			i = (lap / 1000) % nprocs;
			if (pids[i] > 0 && !kill(pids[i], SIGKILL)) {
				waitpid(pids[i], &st, 0);
				kills++;
				pids[i] = spawn(seed, i, ++gens[i]);
			}
		}
	}
	ksft_print_msg("%lu ioctls (%lu succeeded, %lu jobs) in %.1f s\n",
		       atomic_load(&shared->ioctls), atomic_load(&shared->succeeded),
		       atomic_load(&shared->jobs), (sp_now_ns() - t0) / 1e9);
	if (failslab)
		write_file(FAILSLAB "probability", "0");
	ksft_print_msg("%lu forks, %lu workers killed, %lu canaries\n",
		       atomic_load(&shared->forks), kills, atomic_load(&shared->canaries));

	for (i = 0; i < (int)ARRAY_SIZE(shared->submit_errno); i++)
		if (atomic_load(&shared->submit_errno[i]))
			ksft_print_msg("SUBMIT failed %lu times with %s\n",
				       atomic_load(&shared->submit_errno[i]), strerror(i));
	if (bad_exits)
		ksft_test_result_fail("workers exited cleanly (%lu did not)\n", bad_exits);
	else
		ksft_test_result_pass("workers exited cleanly\n");
	if (atomic_load(&shared->canary_failures))
		ksft_test_result_fail("canary data intact (%lu failures)\n",
				      atomic_load(&shared->canary_failures));
	else
		ksft_test_result_pass("canary data intact\n");
	ret = sp_state_settle(&base);
	if (ret)
		ksft_test_result_fail("BOs and memory back to the start\n");
	else
		ksft_test_result_pass("BOs and memory back to the start\n");
	ret = 0;
	for (i = 0; i < ncards && !ret; i++) {
		ret = sp_dev_open(&d, i);
		if (!ret)
			ret = sp_smoke(&d);
		sp_dev_close(&d);
		if (ret)
			ksft_print_msg("card %d smoke test: %s\n", i, strerror(-ret));
	}
	if (ret)
		ksft_test_result_fail("cards pass the smoke test\n");
	else
		ksft_test_result_pass("cards pass the smoke test\n");
	if (reload) {
		if (sp_module_reload())
			ksft_test_result_fail("module unloads and reloads\n");
		else
			ksft_test_result_pass("module unloads and reloads\n");
	}
	if (ksft_get_fail_cnt())
		ksft_print_msg("FAILED: replay with -s %#llx\n", (unsigned long long)seed);
	ksft_finished();
}
