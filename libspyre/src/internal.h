/* SPDX-License-Identifier: MIT */
/*
 * libspyre internals shared by the library's files: the backend ops table,
 * the object structures and the submission engine.
 */
#ifndef SPYRE_INTERNAL_H_LIB
#define SPYRE_INTERNAL_H_LIB

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "drm/spyre_accel.h"
#include "spyre/spyre.h"

#define SPY_PAGE 4096ull
#define SPY_MAX_DEPS 16		/* in-syncs one library submission carries */
#define SPY_MAX_WAITS 8		/* distinct streams a stream may wait for at once */
#define SPY_OP_NAMES 256	/* calls remembered per stream, by point */
#define SPY_TS_SLOTS 64		/* timestamp slots of a timing event */

/* ---- errors (error.c) ---- */
__attribute__((format(printf, 2, 3))) int spy_err(int err, const char *fmt, ...);
const char *spy_strerr(int err);
struct spyre_device;
__attribute__((format(printf, 4, 5))) int spy_dev_err(struct spyre_device *dev, int err,
							   const char *call, const char *fmt, ...);

/*
 * Set while the sim backend stands in for the kernel (its submit path
 * allocates job records, as the driver does): the tests' allocation
 * counter leaves those out when it checks that the library's own hot
 * path allocates nothing.
 */
extern _Thread_local int spy_in_backend;

/* Argument slots a launch may bind on the newest card (interface 1.7). */
#define SPY_MAX_ARGS 64

/* ---- backends ---- */
#define SPY_FAULT_SPACE_SP	1	/* addr: offset in the core's scratchpad */
#define SPY_FAULT_SPACE_DEV	2	/* addr: device memory address */
#define SPY_FAULT_SPACE_VA	3	/* addr: card virtual address that faulted */

/* Where a failed launch stopped on the card (completion record fault_*). */
struct spy_fault {
	int32_t core;
	int64_t insn;		/* -1: not known */
	uint16_t space;		/* SPY_FAULT_SPACE_* (the card's SPYRE_FAULT_SPACE_*) */
	uint64_t addr;
};

/* A queue's first failed job since the record was cleared. */
struct spy_queue_error {
	int error;		/* 0: no job failed */
	uint64_t job;		/* its number on the queue (1: the first) */
	uint64_t point;		/* the point of its out-sync */
	uint64_t failed;	/* failed jobs since the record was cleared */
	struct spy_fault fault;	/* insn -1: no location */
};

struct spy_backend_ops {
	const char *name;
	void (*close)(spyre_device *dev);
	int (*get_param)(spyre_device *dev, uint32_t param, uint64_t *value);
	int (*bo_create)(spyre_device *dev, uint64_t size, uint32_t placement, uint32_t *handle);
	/* A host BO over the caller's memory; -EOPNOTSUPP on an older driver. */
	int (*bo_userptr)(spyre_device *dev, void *ptr, uint64_t size, uint32_t *handle);
	int (*bo_info)(spyre_device *dev, struct drm_spyre_bo_info *info);
	int (*bo_map)(spyre_device *dev, uint32_t handle, uint64_t size, void **ptr);
	int (*bo_unmap)(spyre_device *dev, uint32_t handle, void *ptr, uint64_t size);
	/*
	 * Map a new BO at its library address in the card's address space
	 * (drm: DRM_IOCTL_SPYRE_VM_BIND; NULL: nothing to do); bo_close
	 * unmaps it.
	 */
	int (*bo_bind)(spyre_bo *bo);
	int (*bo_close)(spyre_device *dev, uint32_t handle);
	int (*queue_create)(spyre_device *dev, struct drm_spyre_queue_create *qc);
	int (*queue_destroy)(spyre_device *dev, uint32_t id);
	int (*submit)(spyre_device *dev, const struct drm_spyre_submit *sub);
	int (*syncobj_create)(spyre_device *dev, uint32_t *handle);
	int (*syncobj_destroy)(spyre_device *dev, uint32_t handle);
	/* Wait for every (handle, point); absolute CLOCK_MONOTONIC timeout. */
	int (*syncobj_wait)(spyre_device *dev, const uint32_t *handles, const uint64_t *points,
			    unsigned int count, int64_t abs_timeout_ns);
	/* Highest signalled point of a timeline. */
	int (*syncobj_query)(spyre_device *dev, uint32_t handle, uint64_t *point);
	int (*syncobj_signal)(spyre_device *dev, uint32_t handle, uint64_t point);
	/* Error of the job that signalled @point (0 if none), point signalled. */
	int (*fence_error)(spyre_device *dev, uint32_t handle, uint64_t point);
	/*
	 * The queue's first failure since the last @clear (the driver's
	 * DRM_IOCTL_SPYRE_QUEUE_ERROR); -EOPNOTSUPP on a driver without it.
	 * Unlike fence_error it survives later jobs that succeed.
	 */
	int (*queue_error)(spyre_device *dev, uint32_t queue_id, bool clear,
			   struct spy_queue_error *out);
	/* Sim only: faults. */
	int (*inject_fault)(spyre_device *dev, enum spyre_engine engine, unsigned int kind);
	/*
	 * A handle on @dev for device BO @owner_handle of @owner (another card
	 * of the same backend): a peer BO, one side of a COPY with a device BO
	 * of @dev (peer DMA). -EOPNOTSUPP, -EXDEV or -ERANGE when the cards
	 * cannot reach each other that way (peer.c falls back to the host).
	 */
	int (*bo_peer_import)(spyre_device *dev, spyre_device *owner, uint32_t owner_handle,
			      uint32_t *handle);
	/*
	 * Between processes (bo_share.c): an fd naming device BO @handle
	 * (and its offset within it), and a peer BO of @dev from such an fd.
	 * NULL: the backend cannot share.
	 */
	int (*bo_export)(spyre_device *dev, uint32_t handle, int *fd, uint64_t *offset);
	int (*bo_import)(spyre_device *dev, int fd, uint64_t offset, uint64_t size,
			 uint32_t *handle);
};

extern const struct spy_backend_ops spy_drm_ops;
extern const struct spy_backend_ops spy_sim_ops;

int spy_drm_open(spyre_device *dev, const char *path);
int spy_drm_count(int *count);
int spy_drm_path_of_index(int index, char *path, size_t len);
/* Each backend counts its own cards; the front end only picks the backend. */
int spy_sim_count(int *count);
int spy_sim_open(spyre_device *dev, int index);

/* ---- objects ---- */
struct spy_op;
struct spy_worker;

struct spyre_device {
	const struct spy_backend_ops *ops;
	void *priv;			/* backend state */
	int fd;				/* drm: the accel node */
	char name[32];
	char path[64];
	char pci_slot[32];
	uint64_t max_cmds, max_syncs, max_args;

	pthread_mutex_t lock;		/* submission state of all streams */
	pthread_cond_t cond;		/* a point materialised / op finished */
	unsigned int cond_waiters;	/* threads in spy_dev_wait_locked */
	unsigned long objects;		/* live child objects */
	struct spyre_stream *deferred;	/* streams with deferred ops */
	struct spyre_stream *streams;	/* every live stream */
	struct spy_worker *worker;
	struct spy_trace *trace;	/* trace.c, NULL when not tracing */

	uint64_t stat_submits, stat_ioctls, stat_host_runs; /* atomics */

	/* Device addresses (addr.c): BOs sorted by address, under va_lock. */
	pthread_rwlock_t va_lock;
	uint64_t va_next;		/* next free address (tagged) */
	struct spy_va { uint64_t base; spyre_bo *bo; } *va;
	size_t nva, va_cap;

	/* Staging for pageable host memory (staging.c), under staging_lock. */
	pthread_mutex_t staging_lock;
	struct spyre_pool *staging;
	struct spy_staged *staged;	/* staging blocks in use by queued copies */
};

struct spyre_bo {
	spyre_device *dev;
	uint32_t handle;
	enum spyre_mem mem;
	uint64_t size;
	void *map;
	bool user;			/* the caller's memory (spyre_host_register) */
	uint64_t addr;			/* device address of byte 0 */
};

struct spyre_program {
	spyre_device *dev;
	spyre_bo *bo;
	uint64_t size;
	unsigned int num_args;
	uint64_t ws_size;
};

/* A dependency: point @point of stream @s's timeline. */
struct spy_dep {
	struct spyre_stream *s;
	uint64_t point;
};

enum spy_op_kind {
	SPY_OP_SUBMIT,		/* one SUBMIT of commands */
	SPY_OP_HOST,		/* host work on the worker */
};

/*
 * One library submission: a kernel SUBMIT or a host work item. Issued at
 * once when its dependencies exist in the kernel; otherwise deferred in its
 * stream's FIFO until they do (only host work creates points that do not
 * exist yet, see stream_submit.c).
 */
struct spy_op {
	struct spy_op *next;
	enum spy_op_kind kind;
	struct spyre_stream *s;
	uint64_t point;			/* assigned at enqueue */
	struct drm_spyre_cmd *cmds;
	uint32_t ncmds;
	struct spy_dep deps[SPY_MAX_DEPS];
	unsigned int ndeps;
	void (*fn)(struct spy_op *op);	/* host work body */
	void *user, *user2;
	spyre_host_fn host_fn;
	bool owned;			/* heap op: freed once issued / run */
	const char *what;		/* the public call that made it */
	const char *label;		/* the caller's trace label at enqueue */
	void (*done)(struct spy_op *op); /* called (under dev lock) after issue/run */
};

struct spyre_stream {
	spyre_device *dev;
	enum spyre_engine engine;	/* of the queue made at creation */
	uint32_t priority;		/* DRM_SPYRE_PRIORITY_* of its queues */
	/*
	 * One kernel queue per engine, the second made on first use
	 * (spy_stream_prepare, before any submission lock is taken):
	 * launches go to compute, copies and fills to DMA, and a submission
	 * on a queue other than the previous one's waits for the previous
	 * point of the stream's timeline.
	 */
	uint32_t queue[2];
	bool has_queue[2], queue_failed[2];
	int last_engine;		/* of the latest SUBMIT, -1 before the first */
	/*
	 * Serialises this stream's submissions from point assignment to the
	 * ioctl's return, so dev->lock need not be held across the ioctl.
	 * Taken before dev->lock.
	 */
	pthread_mutex_t submit_lock;
	/* Serialises making the second queue (spy_stream_prepare); no other lock held. */
	pthread_mutex_t queue_lock;
	unsigned int queues_tried;	/* atomic: SPY_ENGINE_BIT of queues made or refused */
	uint32_t timeline;		/* syncobj: point n = op n finished */
	int refs;			/* stream itself + events recorded on it */
	bool destroyed;
	uint64_t next_point;		/* last point handed out */
	uint64_t issued_point;		/* points <= this exist in the kernel */
	uint64_t checked_point;		/* points <= this had their errors read */
	uint64_t last_host_point;
	/* Sticky: the first failed operation, until spyre_stream_clear_error. */
	int error;
	uint64_t error_point;
	const char *error_what;
	struct spy_fault fault;	/* where error_point's launch stopped */
	const char *what[SPY_OP_NAMES];	/* call of point p at [p % SPY_OP_NAMES] */
	struct spyre_stream *next_live;	/* dev->streams */
	struct spy_op *dq_head, *dq_tail; /* deferred ops, FIFO */
	struct spyre_stream *next_deferred;
	bool on_deferred_list;
	uint64_t running_host;		/* host ops handed to the worker, not done */
	struct spy_dep wait[SPY_MAX_WAITS]; /* event waits for the next op (refs held) */
	unsigned int nwait;
};

struct spyre_event {
	spyre_device *dev;
	unsigned int flags;
	struct spyre_stream *s;		/* stream of the last record (ref held) */
	uint64_t point;
	spyre_bo *ts_bo;		/* timing: host BO of SPY_TS_SLOTS slots */
	uint64_t *ts;
	unsigned int records, slot;	/* records so far, slot of the latest */
	struct spy_dep slot_dep[SPY_TS_SLOTS]; /* record that last wrote each slot (ref) */
};

/* ---- device (device.c) ---- */
void spy_dev_get(spyre_device *dev);
void spy_dev_put(spyre_device *dev);
int spy_get_param(spyre_device *dev, uint32_t param, uint64_t *value);
uint64_t spy_now_ns(void);

/*
 * Wait on / wake dev->cond under dev->lock. Waking costs nothing when
 * nobody waits, which is the common case on the submit path.
 */
static inline void spy_dev_wait_locked(spyre_device *dev)
{
	dev->cond_waiters++;
	pthread_cond_wait(&dev->cond, &dev->lock);
	dev->cond_waiters--;
}

static inline void spy_dev_wake_locked(spyre_device *dev)
{
	if (dev->cond_waiters)
		pthread_cond_broadcast(&dev->cond);
}

static inline void spy_stat_add(uint64_t *ctr, uint64_t n)
{
	__atomic_fetch_add(ctr, n, __ATOMIC_RELAXED);
}

/* ---- submission engine (stream*.c; recipes and others also stream_use.h) ---- */
/* Enqueue @op on @s (under no lock); the op memory must stay valid until done. */
int spy_op_enqueue(struct spyre_stream *s, struct spy_op *op);
/* -EINVAL for a NULL stream or buffer, -EXDEV for a buffer of another card (copy_ext.c). */
int spy_check_stream_buf(struct spyre_stream *s, const struct spyre_buf *b, const char *call);
void spy_flush_deferred_locked(spyre_device *dev);
/* Does an op not yet handed to the kernel name BO @handle? */
bool spy_deferred_uses_locked(spyre_device *dev, uint32_t handle);
void spy_stream_put_locked(struct spyre_stream *s);
int spy_stream_wait_point(struct spyre_stream *s, uint64_t point);
int spy_stream_add_wait_locked(struct spyre_stream *s, struct spyre_stream *on, uint64_t point);
int spy_check_same_dev(spyre_device *dev, const struct spyre_buf *b, const char *call);
/*
 * Submit @n commands on @s as few ops as the device's command limit allows
 * (in order); @point (may be NULL) receives the last op's point.
 */
int spy_submit_cmds(struct spyre_stream *s, struct drm_spyre_cmd *cmds, unsigned int n,
		    const char *call, uint64_t *point);

/* ---- what one SUBMIT may carry (submit_budget.c) ---- */
/* Ring descriptors the kernel budgets per command: a launch of 16 slots. */
#define SPY_DESCS_PER_CMD 7
/* Commands a running trace adds to every submission (two TIMESTAMPs). */
#define SPY_TRACE_CMDS 2
struct spy_budget {
	unsigned int cmds, descs;	/* per submission, the trace's share left out */
};
/* Ring descriptors command @c takes (a LAUNCH: 1 + its ARGS descriptors). */
unsigned int spy_cmd_descs(const struct drm_spyre_cmd *c);
struct spy_budget spy_submit_budget(const spyre_device *dev);
/* How many of @cmds[0..n) one submission takes (at least 1 when n > 0). */
unsigned int spy_cmds_fit(const spyre_device *dev, const struct drm_spyre_cmd *cmds,
			  unsigned int n);
/* Read the errors of @s's points up to @upto (signalled ones) into its sticky error. */
void spy_stream_poll_errors(struct spyre_stream *s, uint64_t upto);

/* ---- device addresses (addr.c) ---- */
void spy_va_init(spyre_device *dev);
void spy_va_fini(spyre_device *dev);
int spy_va_add(spyre_bo *bo);
/*
 * The library's object for backend BO @handle (closed again on failure):
 * @map is the caller's memory for a registered BO, else NULL (bo.c).
 */
int spy_bo_adopt(spyre_device *dev, const char *call, uint32_t handle, enum spyre_mem mem,
		 uint64_t size, void *map, spyre_bo **out);
void spy_va_remove(spyre_bo *bo);

/* ---- staging of pageable host memory (staging.c) ---- */
void spy_staging_init(spyre_device *dev);
/* Wait for the copies still using staging blocks, then free the staging pool. */
void spy_staging_fini(spyre_device *dev);
/* A host staging block of @size bytes mapped at *@ptr. */
int spy_staging_alloc(spyre_device *dev, uint64_t size, struct spyre_buf *buf, void **ptr);
/* Give @buf back at once (nothing used it). */
void spy_staging_free(spyre_device *dev, const struct spyre_buf *buf);
/* Give @buf back once @point of @s completed. */
void spy_staging_release_after(spyre_device *dev, const struct spyre_buf *buf,
			       struct spyre_stream *s, uint64_t point);

/* ---- host worker (worker.c) ---- */
int spy_worker_start(spyre_device *dev);
void spy_worker_push_locked(spyre_device *dev, struct spy_op *op);
void spy_worker_stop(spyre_device *dev);
bool spy_worker_is_self(spyre_device *dev);

/* ---- command builders (cmd.c) ---- */
int spy_cmd_copy(const char *call, struct drm_spyre_cmd *c, const struct spyre_buf *dst,
		 const struct spyre_buf *src, uint64_t size);
int spy_cmd_fill(const char *call, struct drm_spyre_cmd *c, const struct spyre_buf *dst,
		 uint32_t pattern, uint64_t size);
int spy_cmd_launch(const char *call, struct drm_spyre_cmd *c, struct drm_spyre_bo_range *ranges,
		   const spyre_program *prog, const struct spyre_buf *args, unsigned int nargs,
		   const struct spyre_buf *ws);
void spy_cmd_timestamp(struct drm_spyre_cmd *c, spyre_bo *bo, uint64_t offset);
/* Submit through the trace recorder when one runs (trace.c). */
int spy_trace_submit(spyre_device *dev, const struct drm_spyre_submit *sub, int engine,
		     const char *what, const char *label);
/* The calling thread's spyre_trace_label (NULL when unset). */
const char *spy_trace_label(void);

#endif /* SPYRE_INTERNAL_H_LIB */
