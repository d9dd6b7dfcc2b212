/* SPDX-License-Identifier: MIT */
/*
 * libspyre: the C runtime of the Spyre AI accelerator.
 *
 * Conventions shared by every call:
 *
 * - Every function returning int returns 0 on success or a negative errno
 *   (-EINVAL, -ENOMEM, -ENODEV...). On failure it also sets a message for
 *   the calling thread, naming the device and the call, which
 *   spyre_last_error() returns until the thread's next failing call.
 * - Objects belong to one device; mixing objects of two devices fails
 *   with -EXDEV.
 * - Streams, events and recipes may be used from several threads at once;
 *   one object is never destroyed while another thread still uses it.
 * - Work submitted to a stream runs asynchronously. A failure of the work
 *   itself (a bounds violation of a program, a DMA error, a lost device) is
 *   reported by spyre_stream_synchronize() (sticky, naming the failed
 *   operation, see spyre_stream_get_error()) and by the
 *   spyre_event_synchronize() covering it.
 *
 * Backends: "drm" drives a real (or QEMU-emulated) card through
 * /dev/accel/accelN; "sim" runs the card model in-process. The environment
 * variable SPYRE_BACKEND=drm|sim picks one for spyre_device_open(); without
 * it the default is drm when a Spyre card is present, else sim (the device
 * properties name the backend in use). SPYRE_BACKEND=drm with no card
 * fails with -ENODEV and says why.
 */
#ifndef SPYRE_SPYRE_H
#define SPYRE_SPYRE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SPYRE_VERSION_MAJOR 0
#define SPYRE_VERSION_MINOR 2

/* ---- Errors ----------------------------------------------------------- */

/* Message of the calling thread's last failing call ("" if none). */
const char *spyre_last_error(void);

/* ---- Devices ---------------------------------------------------------- */

typedef struct spyre_device spyre_device;

enum spyre_backend {
	SPYRE_BACKEND_DEFAULT = 0, /* SPYRE_BACKEND, else drm if a card is present, else sim */
	SPYRE_BACKEND_DRM = 1,
	SPYRE_BACKEND_SIM = 2,
};

/*
 * Number of cards the backend sees: drm counts spyre devices under
 * /sys/class/accel; sim always has one (SPYRE_SIM_CARDS overrides, 1..8).
 */
int spyre_device_count(enum spyre_backend backend, int *count);

/* Open card @index (0-based, in accel minor order) of @backend. */
int spyre_device_open_backend(enum spyre_backend backend, int index, spyre_device **out);
/* Shorthand for spyre_device_open_backend(SPYRE_BACKEND_DEFAULT, ...). */
int spyre_device_open(int index, spyre_device **out);
/* Open a device node by path, e.g. "/dev/accel/accel0" (drm backend). */
int spyre_device_open_path(const char *path, spyre_device **out);
/*
 * Close the device. Fails with -EBUSY (and closes nothing) while streams,
 * events, BOs, pools, programs or recipes of the device are still alive.
 */
int spyre_device_close(spyre_device *dev);

struct spyre_device_props {
	char name[32];			/* "accel0", "sim0" */
	char path[64];			/* "/dev/accel/accel0", "(in-process)" */
	char backend[8];		/* "drm" or "sim" */
	char pci_slot[32];		/* "0000:00:03.0", "" for sim */
	uint32_t hw_version;		/* major << 16 | minor */
	uint32_t num_cores;
	uint64_t scratchpad_size;	/* bytes per core */
	uint64_t mem_total;		/* device memory the driver manages */
	uint64_t mem_free;		/* of which not allocated to any BO */
	uint32_t clock_mhz;
	uint32_t compute_rings;
	uint32_t dma_rings;
	uint32_t max_cmds;		/* commands per submission */
	uint32_t max_syncs;
	uint32_t max_args;		/* argument slots per launch */
	uint32_t max_queues;		/* streams per open device */
	uint64_t max_host_bo;		/* bytes */
	uint32_t pci_vendor, pci_device, pci_revision;
	uint64_t reset_count;		/* ring and card resets so far */
};

int spyre_device_get_props(spyre_device *dev, struct spyre_device_props *props);
/* Current device time in ns (the clock of events' timestamps). */
int spyre_device_time_ns(spyre_device *dev, uint64_t *ns);
/* Counters of this open device (for benchmarks and tests). */
struct spyre_device_stats {
	uint64_t submits;		/* SUBMIT ioctls (or sim submissions) */
	uint64_t ioctls;		/* every ioctl the library issued */
	uint64_t host_work_runs;	/* host callbacks run by the worker */
};
int spyre_device_get_stats(spyre_device *dev, struct spyre_device_stats *stats);

/* ---- Memory ----------------------------------------------------------- */

enum spyre_mem {
	SPYRE_MEM_DEVICE = 0,	/* card memory: compute operands; not mappable */
	SPYRE_MEM_HOST = 1,	/* pinned system memory: mappable, DMA source/target */
	SPYRE_MEM_PEER = 2,	/* another card's device memory (spyre_bo_import_peer): copies only */
};

typedef struct spyre_bo spyre_bo;

/* A byte range of a BO: the operand of every copy, fill and launch. */
struct spyre_buf {
	spyre_bo *bo;
	uint64_t offset;
	uint64_t size;
};

/* Create a BO of @size bytes (rounded up to 4 KiB); size 0 is -EINVAL. */
int spyre_bo_create(spyre_device *dev, uint64_t size, enum spyre_mem mem, spyre_bo **out);
/*
 * Destroy; work still using the BO keeps its memory alive until it ends.
 * If work that uses it is still deferred behind host work (not yet handed
 * to the kernel), this waits until it was (except on the host-work thread).
 */
int spyre_bo_destroy(spyre_bo *bo);
/*
 * A host BO over @size bytes of the caller's memory at @ptr (whole 4 KiB
 * pages, writable), like cudaHostRegister: copies use it as any host BO
 * with no staging, spyre_bo_map gives @ptr back. The pages stay pinned
 * (in RLIMIT_MEMLOCK on the drm backend) until spyre_bo_destroy, which
 * leaves the memory to the caller. -EFAULT for memory that cannot be
 * pinned, -EOPNOTSUPP on a driver older than 1.2.
 */
int spyre_host_register(spyre_device *dev, void *ptr, uint64_t size, spyre_bo **out);
/* Map a host BO into the process (idempotent); device BOs: -EINVAL. */
int spyre_bo_map(spyre_bo *bo, void **ptr);
int spyre_bo_unmap(spyre_bo *bo);
uint64_t spyre_bo_size(const spyre_bo *bo);
enum spyre_mem spyre_bo_mem(const spyre_bo *bo);
/* The whole BO as a spyre_buf. */
struct spyre_buf spyre_bo_buf(spyre_bo *bo);

/*
 * Device addresses. Every BO (device or host memory) owns the range
 * [spyre_bo_addr(bo), + size) of its open device's 64-bit address space,
 * so a framework can keep a plain integer (its allocator's DataPtr) and
 * find the buffer back. Addresses are never 0, never reused while the
 * device is open, and an unmapped gap follows every BO. They name
 * library objects, not card memory: pass them to spyre_addr_lookup, not
 * to programs.
 */
uint64_t spyre_bo_addr(const spyre_bo *bo);
/* Address of a range's first byte (spyre_bo_addr + offset; 0 for NULL). */
uint64_t spyre_buf_addr(const struct spyre_buf *buf);
/*
 * The live BO holding [@addr, @addr + @size) as a spyre_buf (offset from
 * the BO's start, @size bytes). -EFAULT when no live BO holds all of it,
 * -EXDEV for an address of another open device.
 */
int spyre_addr_lookup(spyre_device *dev, uint64_t addr, uint64_t size, struct spyre_buf *out);

/*
 * Pool: a sub-allocator carving small buffers out of a few large BOs, so
 * that many small tensors do not cost a BO (and an ioctl) each.
 * Allocations are aligned to at least 128 bytes (one stick).
 */
typedef struct spyre_pool spyre_pool;

int spyre_pool_create(spyre_device *dev, enum spyre_mem mem, uint64_t chunk_size,
		      spyre_pool **out);
int spyre_pool_alloc(spyre_pool *pool, uint64_t size, uint64_t align, struct spyre_buf *out);
int spyre_pool_free(spyre_pool *pool, const struct spyre_buf *buf);
/* Bytes handed out, bytes of BOs held. */
int spyre_pool_usage(spyre_pool *pool, uint64_t *used, uint64_t *reserved);
/*
 * Give memory back: release chunks that hold no allocation, newest first,
 * until at most @keep bytes stay reserved (0: every empty chunk). Work
 * still using a freed block keeps its memory alive until it ends.
 * @released (may be NULL) receives the bytes released.
 */
int spyre_pool_trim(spyre_pool *pool, uint64_t keep, uint64_t *released);
struct spyre_pool_stats {
	uint64_t used, reserved;		/* as spyre_pool_usage */
	uint64_t peak_used, peak_reserved;	/* highest so far */
	uint64_t allocs, frees;			/* successful calls */
	uint64_t chunks;			/* BOs held */
	uint64_t largest_free;			/* largest free block of any chunk */
	uint64_t trimmed;			/* bytes released by trims so far */
};
int spyre_pool_get_stats(spyre_pool *pool, struct spyre_pool_stats *stats);
/* Fails with -EBUSY while allocations are outstanding. */
int spyre_pool_destroy(spyre_pool *pool);

/* ---- Programs --------------------------------------------------------- */

typedef struct spyre_program spyre_program;

/*
 * Load a card program (the format of hw/spyre_isa.h) into a
 * device BO. The image is checked for a valid header; the card checks the
 * rest when it runs.
 */
int spyre_program_load(spyre_device *dev, const void *image, size_t size,
		       spyre_program **out);
int spyre_program_destroy(spyre_program *prog);
/* Argument slots and workspace bytes the program declares. */
unsigned int spyre_program_num_args(const spyre_program *prog);
uint64_t spyre_program_workspace_size(const spyre_program *prog);

/* ---- Streams ---------------------------------------------------------- */

typedef struct spyre_stream spyre_stream;

/*
 * A stream accepts every operation, in order. Internally it has one kernel
 * queue per engine: launches run on the compute engine, copies and fills
 * on a DMA ring (so a copy never waits behind another stream's launch),
 * and a change of engine waits for the stream's previous operation on the
 * device. The engine given at creation only picks the queue made at once
 * (the other is made on first use).
 */
enum spyre_engine {
	SPYRE_ENGINE_COMPUTE = 0,
	SPYRE_ENGINE_DMA = 1,
};

enum spyre_priority {
	SPYRE_PRIORITY_LOW = -1,
	SPYRE_PRIORITY_NORMAL = 0,
	SPYRE_PRIORITY_HIGH = 1,	/* drm: needs CAP_SYS_NICE (-EACCES) */
};

int spyre_stream_create(spyre_device *dev, enum spyre_engine engine, spyre_stream **out);
/* The same with a scheduling priority for the stream's queues. */
int spyre_stream_create_with_priority(spyre_device *dev, enum spyre_engine engine,
				      enum spyre_priority priority, spyre_stream **out);
/* Waits for the stream's work, then destroys it. Returns its last error. */
int spyre_stream_destroy(spyre_stream *s);
enum spyre_engine spyre_stream_engine(const spyre_stream *s);

/*
 * Copy @size bytes from @src to @dst (each a BO range: offset + size must
 * fit). The direction follows the placements: host->device, device->host,
 * device->device. Host->host is -EINVAL (use memcpy). Size 0 is allowed.
 */
int spyre_memcpy_async(spyre_stream *s, const struct spyre_buf *dst,
		       const struct spyre_buf *src, uint64_t size);
/* Fill a device range with a 32-bit pattern; offset and size multiples of 4. */
int spyre_memset32_async(spyre_stream *s, const struct spyre_buf *dst, uint32_t pattern,
			 uint64_t size);
/*
 * Copy from pageable host memory (any pointer) to @dst: the bytes are
 * staged before the call returns, so @src may be reused at once; the copy
 * runs in stream order. Staging memory is the library's (a host pool given
 * back as copies complete).
 */
int spyre_memcpy_from_host_async(spyre_stream *s, const struct spyre_buf *dst, const void *src,
				 uint64_t size);
/*
 * Copy @src to pageable host memory: runs in stream order and returns when
 * @dst holds the data (as cudaMemcpyAsync to pageable memory does), with
 * the copy's error.
 */
int spyre_memcpy_to_host(spyre_stream *s, void *dst, const struct spyre_buf *src, uint64_t size);

/*
 * Strided copy of @depth planes of @height rows of @width bytes. Row y of
 * plane z starts at offset z * slice + y * pitch of each buffer; pitches
 * are at least @width and slices at least height * pitch (for depth > 1).
 * Contiguous rows become one command; otherwise one command per row, in as
 * few submissions as the device's command limit allows.
 */
struct spyre_copy3d {
	struct spyre_buf dst, src;
	uint64_t dst_pitch, src_pitch;
	uint64_t dst_slice, src_slice;
	uint64_t width, height, depth;
};
int spyre_memcpy3d_async(spyre_stream *s, const struct spyre_copy3d *copy);
int spyre_memcpy2d_async(spyre_stream *s, const struct spyre_buf *dst, uint64_t dst_pitch,
			 const struct spyre_buf *src, uint64_t src_pitch, uint64_t width,
			 uint64_t height);
/*
 * Fill @size bytes of device memory (a multiple of @pattern_size: 1, 2 or
 * 4) with the little-endian @pattern repeated from @dst's first byte, at
 * any alignment.
 */
int spyre_memset_async(spyre_stream *s, const struct spyre_buf *dst, uint32_t pattern,
		       unsigned int pattern_size, uint64_t size);
/*
 * Copy between two cards (or two open devices): after @src_stream's earlier
 * work; the writes run in @dst_stream's order. Returns once everything was
 * read from the source. Device memory to device memory goes card to card
 * (peer DMA: the destination card reads the source card's memory) when
 * spyre_device_can_peer() says so, else through host memory; the
 * environment variable SPYRE_PEER_DMA=0 forces the host path.
 */
int spyre_memcpy_peer(spyre_stream *dst_stream, const struct spyre_buf *dst,
		      spyre_stream *src_stream, const struct spyre_buf *src, uint64_t size);
/*
 * 1 when @dev's DMA engine reaches @peer's device memory (peer DMA: two
 * cards of one backend, card interface 1.13 and driver 1.5, one PCI host
 * bridge), 0 when copies between them go through the host, -errno on
 * other failures.
 */
int spyre_device_can_peer(spyre_device *dev, spyre_device *peer);

/*
 * Sharing device memory with another process's card (peer DMA between
 * processes, e.g. the ranks of torch.distributed). The exporter hands
 * out a file descriptor plus the range it names; the other process
 * receives the fd (SCM_RIGHTS over a Unix socket, or pidfd_getfd) and the
 * two numbers (any way), and imports them as a peer BO of its own card: a
 * spyre_memcpy_async between a device BO of that card and the peer BO is
 * peer DMA (D2P writes the exporter's memory, P2D reads it).
 *
 * drm: the fd is the device BO's dma-buf (PRIME), offset 0, the BO's size;
 * the peer BO keeps the exporter's memory alive. sim: the fd is the
 * exporting card's device memory (a memfd, mapped by the importer), offset
 * and size locate the BO in it; the exporter must keep the BO until the
 * importers are done with it. The caller owns the exported fd (close it
 * once sent); the import does not keep @exp->fd. Export: -EINVAL for a
 * BO that is not device memory, -EOPNOTSUPP when the backend cannot
 * share (an older driver, a sim without memfd). Import: -EOPNOTSUPP,
 * -EXDEV or -ERANGE when the importing card cannot reach that memory
 * (the caller falls back to the host), -EXDEV also for memory of the
 * importing card itself (same card: copy within it instead).
 */
struct spyre_bo_export {
	int fd;
	uint64_t offset;	/* of the BO within what @fd names */
	uint64_t size;		/* bytes */
};
int spyre_bo_export(spyre_bo *bo, struct spyre_bo_export *out);
/* A SPYRE_MEM_PEER BO of @dev over the memory @exp names. */
int spyre_bo_import_peer(spyre_device *dev, const struct spyre_bo_export *exp, spyre_bo **out);

/*
 * Launch @prog with @nargs argument buffers (device memory) and an optional
 * workspace (NULL: none).
 */
int spyre_launch_async(spyre_stream *s, const spyre_program *prog,
		       const struct spyre_buf *args, unsigned int nargs,
		       const struct spyre_buf *workspace);

/*
 * Host work: @fn(@user) runs on a library worker thread once everything
 * submitted to @s before it has completed; work submitted after it starts
 * only when @fn has returned. @fn must not synchronise @s or other streams
 * that wait for it. Host work of all streams of a device runs on one worker
 * thread, in the order it became ready: a callback that blocks delays the
 * others.
 */
typedef void (*spyre_host_fn)(void *user);
int spyre_host_work_async(spyre_stream *s, spyre_host_fn fn, void *user);

/*
 * Wait for all work submitted so far. Returns the stream's sticky error:
 * the first operation of the stream that failed, reported by every later
 * synchronize (its message names the operation's number and call) until
 * spyre_stream_clear_error(). Work submitted after a failure still runs.
 */
int spyre_stream_synchronize(spyre_stream *s);
/* 0 when all submitted work completed, -EBUSY when some is pending. */
int spyre_stream_query(spyre_stream *s);

/* What failed: the first failed operation of a stream (or of a device). */
struct spyre_error_info {
	int error;		/* -errno of the failed operation; 0: no error */
	uint64_t op;		/* its number on its stream (1 = the stream's first) */
	char call[32];		/* the call that submitted it, e.g. "spyre_launch_async" */
	/*
	 * Where on the card a failed launch stopped, when the backend reports
	 * it (card interface 1.6, both backends; -1 / 0 otherwise).
	 */
	int32_t core;
	int64_t insn;		/* instruction index in the program */
	uint64_t addr;		/* failing access: scratchpad offset or device address */
};

/*
 * The stream's sticky error without waiting: errors of work that already
 * completed are read first. info->error is 0 when nothing failed.
 */
int spyre_stream_get_error(spyre_stream *s, struct spyre_error_info *info);
/* Forget the sticky error (and the errors of work completed so far). */
int spyre_stream_clear_error(spyre_stream *s);
/* Wait for the work of every stream of @dev; returns the first sticky error. */
int spyre_device_synchronize(spyre_device *dev);

/*
 * Device timeline trace: from spyre_trace_start every submission is
 * bracketed by device timestamps (its modelled start and end on its
 * engine); spyre_trace_stop waits for the device and writes @path as
 * Chrome trace / Perfetto JSON (ph "X" spans, tid 1 compute, tid 2 DMA,
 * tid 0 host submits as instants; ts/dur in us). SPYRE_TRACE=path.json
 * traces from device open to close. -EBUSY if a trace already runs.
 * @path NULL keeps the trace in memory only, for spyre_trace_stop_spans.
 */
int spyre_trace_start(spyre_device *dev, const char *path);
int spyre_trace_stop(spyre_device *dev);

/* One submission of a trace, as spyre_trace_stop_spans returns it. */
struct spyre_trace_span {
	const char *name;	/* its spyre_trace_label, else the libspyre call */
	const char *call;	/* the libspyre call that submitted it */
	int engine;		/* SPYRE_ENGINE_COMPUTE or SPYRE_ENGINE_DMA */
	uint32_t track;		/* the JSON's tid: 1 compute, 2.. one per DMA queue */
	uint32_t cmds;		/* commands in the submission */
	uint64_t host_ns;	/* host submit time, CLOCK_MONOTONIC */
	uint64_t start_ns;	/* modelled device clock when the engine started it */
	uint64_t end_ns;	/* ... and when its last command was done */
};
/*
 * Stop the trace like spyre_trace_stop (writing its file if it has one) and
 * return its spans in submission order: *spans is malloc'd (free() it),
 * *n its length. Names point at the labels given and at literals.
 */
int spyre_trace_stop_spans(spyre_device *dev, struct spyre_trace_span **spans, unsigned int *n);
/*
 * Name the calling thread's next submissions in traces (e.g. after the
 * framework op that issues them; NULL or "" goes back to the libspyre call's
 * name). The label is taken when the work is enqueued and kept as a pointer:
 * it must stay valid until spyre_trace_stop (a literal or an interned
 * string). Costs one thread-local store; no effect while nothing traces.
 */
void spyre_trace_label(const char *label);
/* The first sticky error of any live stream of @dev, without waiting. */
int spyre_device_get_error(spyre_device *dev, struct spyre_error_info *info);

/* ---- Events ----------------------------------------------------------- */

typedef struct spyre_event spyre_event;

#define SPYRE_EVENT_TIMING 0x1	/* record a device timestamp (elapsed time) */

int spyre_event_create(spyre_device *dev, unsigned int flags, spyre_event **out);
int spyre_event_destroy(spyre_event *ev);
/*
 * The event completes when all work submitted to @s so far completed.
 * Re-recording does not wait for the previous record (a timing event
 * rotates over 64 timestamp slots; only the record 64 back must be done).
 */
int spyre_event_record(spyre_event *ev, spyre_stream *s);
/*
 * Work submitted to @s later starts after @ev completed (no host round
 * trip). A never-recorded event is complete: waiting for it does nothing.
 */
int spyre_stream_wait_event(spyre_stream *s, spyre_event *ev);
/* Wait for @ev; returns the error of the work it covers. Never recorded: 0. */
int spyre_event_synchronize(spyre_event *ev);
/* 0 when complete (or never recorded), -EBUSY when pending. */
int spyre_event_query(spyre_event *ev);
/* Device time between two completed timing events, in ns. */
int spyre_event_elapsed_ns(spyre_event *start, spyre_event *end, uint64_t *ns);
/* Device timestamp of a completed timing event (ns, device clock). */
int spyre_event_timestamp_ns(spyre_event *ev, uint64_t *ns);

/* ---- Recipes (prepared launch plans) ---------------------------------- */

typedef struct spyre_recipe spyre_recipe;

/* Where a recipe step's memory operand comes from. */
enum spyre_operand_kind {
	SPYRE_OPERAND_BUF = 0,	/* a fixed buffer, given at build time */
	SPYRE_OPERAND_ARG = 1,	/* argument slot @arg, bound at each launch */
	SPYRE_OPERAND_WS = 2,	/* @offset/@size inside the recipe's workspace */
	SPYRE_OPERAND_SCALARS = 3, /* @offset/@size inside the launch's scalar block */
};

struct spyre_operand {
	enum spyre_operand_kind kind;
	unsigned int arg;	/* SPYRE_OPERAND_ARG: slot index */
	struct spyre_buf buf;	/* SPYRE_OPERAND_BUF */
	uint64_t offset;	/* ARG, WS: offset inside the slot / workspace */
	uint64_t size;		/* ARG, WS: bytes; 0 = to the end of the slot */
};

static inline struct spyre_operand spyre_op_arg(unsigned int arg)
{
	struct spyre_operand o = { SPYRE_OPERAND_ARG, arg, { 0, 0, 0 }, 0, 0 };

	return o;
}

static inline struct spyre_operand spyre_op_ws(uint64_t offset, uint64_t size)
{
	struct spyre_operand o = { SPYRE_OPERAND_WS, 0, { 0, 0, 0 }, offset, size };

	return o;
}

static inline struct spyre_operand spyre_op_scalars(uint64_t offset, uint64_t size)
{
	struct spyre_operand o = { SPYRE_OPERAND_SCALARS, 0, { 0, 0, 0 }, offset, size };

	return o;
}

static inline struct spyre_operand spyre_op_buf(struct spyre_buf b)
{
	struct spyre_operand o = { SPYRE_OPERAND_BUF, 0, b, 0, 0 };

	return o;
}

/* Arguments a host step sees: the buffers bound to the launch. */
typedef void (*spyre_recipe_host_fn)(void *user, const struct spyre_buf *args,
				     unsigned int nargs);

/*
 * Build a recipe for @nstreams stream slots and @nargs argument slots (at
 * most SPYRE_RECIPE_MAX_ARGS, else -E2BIG), with a device workspace of
 * @workspace_size bytes allocated now (0: none). A compute step binds at
 * most 64 of the slots (the card's LAUNCH limit, DRM_SPYRE_PARAM_MAX_ARGS),
 * any 64 of them: the recipe's slots are the launch's whole argument list,
 * each LAUNCH command carries only the addresses its program uses.
 */
#define SPYRE_RECIPE_MAX_ARGS 65536
int spyre_recipe_create(spyre_device *dev, unsigned int nstreams, unsigned int nargs,
			uint64_t workspace_size, spyre_recipe **out);
/* Typed steps, appended in order to stream slot @stream. */
int spyre_recipe_host(spyre_recipe *r, unsigned int stream, spyre_recipe_host_fn fn,
		      void *user);
int spyre_recipe_h2d(spyre_recipe *r, unsigned int stream, struct spyre_operand dst,
		     struct spyre_operand src, uint64_t size);
int spyre_recipe_d2h(spyre_recipe *r, unsigned int stream, struct spyre_operand dst,
		     struct spyre_operand src, uint64_t size);
int spyre_recipe_d2d(spyre_recipe *r, unsigned int stream, struct spyre_operand dst,
		     struct spyre_operand src, uint64_t size);
int spyre_recipe_compute(spyre_recipe *r, unsigned int stream, const spyre_program *prog,
			 const struct spyre_operand *args, unsigned int nargs,
			 struct spyre_operand workspace);
/*
 * Write the device time (ns, the clock of spyre_event_timestamp_ns) into 8
 * bytes of host memory @dst when the stream reaches this step; it rides in
 * the stream's submission, so it costs no extra submit.
 */
int spyre_recipe_timestamp(spyre_recipe *r, unsigned int stream, struct spyre_operand dst);
/*
 * Recipe-internal events (ids 0..15): a wait on stream B for an event
 * signalled on stream A orders B's following steps after A's submission
 * that holds the signal (each stream's run of device steps is one
 * submission, or a few when it is too long for one, so the wait covers
 * all of that submission, not only the steps up to the signal). Waits
 * must follow their signal in build order; waits that would form a cycle
 * between submissions make finalize fail (-EDEADLK).
 * Host steps split a stream's steps into separate submissions.
 */
int spyre_recipe_signal(spyre_recipe *r, unsigned int stream, unsigned int event_id);
int spyre_recipe_wait(spyre_recipe *r, unsigned int stream, unsigned int event_id);
/* Freeze the recipe: checks it and prepares every submission. */
int spyre_recipe_finalize(spyre_recipe *r);
/*
 * Launch on @streams (one per stream slot) with @args bound to the argument
 * slots. Issues one submission per stream slot and host-work boundary
 * (spyre_recipe_submits_per_launch), allocates nothing. A stream slot's run
 * of device steps longer than one SUBMIT may carry (DRM_SPYRE_PARAM_MAX_CMDS
 * commands, a launch of more than 16 slots counting as several) is cut into
 * as few consecutive submissions as fit, in order, at finalize. A launch may
 * start before the previous one of the same recipe finished; at most
 * "depth" launches (SPYRE_RECIPE_INFLIGHT unless spyre_recipe_set_inflight
 * says otherwise) are in flight on the host side, the next one waits until
 * the oldest was handed to the kernel.
 *
 * Launches that share a copy of the workspace are ordered on the device:
 * launch k + n (n workspace copies, default 1) starts after every stream of
 * launch k finished, as CUDA orders launches of one graph; the host does
 * not wait. Launches on different copies overlap.
 */
#define SPYRE_RECIPE_INFLIGHT 4
#define SPYRE_RECIPE_MAX_INFLIGHT 64
int spyre_recipe_launch(spyre_recipe *r, spyre_stream *const *streams,
			const struct spyre_buf *args, unsigned int nargs);
/*
 * Before finalize: at most @depth launches in flight (1..64, default
 * SPYRE_RECIPE_INFLIGHT) and @workspaces copies of the workspace (1..depth,
 * default 1; each extra copy is a device BO of the workspace's size,
 * allocated at finalize). Launch k uses copy k % @workspaces.
 */
int spyre_recipe_set_inflight(spyre_recipe *r, unsigned int depth, unsigned int workspaces);
/*
 * Before finalize: when @enable, every device step is followed by a
 * TIMESTAMP command (in the same submission) recording when it completed.
 */
int spyre_recipe_set_profiling(spyre_recipe *r, int enable);
/*
 * Completion times (ns, device clock) of the steps of the latest launch,
 * indexed in build order (every spyre_recipe_* step call counts; host,
 * signal and wait steps read 0). Up to @count entries are written. Fails
 * with -EBUSY until that launch completed, -EINVAL without profiling. Call
 * it while the launch's streams still exist.
 */
int spyre_recipe_step_times(spyre_recipe *r, uint64_t *ns, unsigned int count);
/*
 * Launch-time scalars: spyre_recipe_set_scalars(r, size) (before the steps
 * that use them, at most 4096 bytes) gives every launch a block of @size
 * bytes of device memory, read by steps through spyre_op_scalars(offset,
 * size) operands (like CUDA's kernel parameters). Each launch passes the
 * block's bytes to spyre_recipe_launch_scalars; they are copied at the
 * call (the caller may reuse them) and reach the card in the same
 * submissions, one COPY command ahead of the steps that read them.
 */
#define SPYRE_RECIPE_MAX_SCALARS 4096
int spyre_recipe_set_scalars(spyre_recipe *r, uint32_t size);
int spyre_recipe_launch_scalars(spyre_recipe *r, spyre_stream *const *streams,
				const struct spyre_buf *args, unsigned int nargs,
				const void *scalars, size_t size);
/* Submissions one launch issues (for checks and benchmarks). */
int spyre_recipe_submits_per_launch(const spyre_recipe *r, unsigned int *n);
int spyre_recipe_destroy(spyre_recipe *r);

/* ---- Test and tool hooks ---------------------------------------------- */

/*
 * Test hook: arm a one-shot card fault on the next command of each ring
 * serving @engine (kind: 0 disarm, 1 hang, 2 DMA error, 3 corrupt
 * completion, 4 uncorrectable memory error), or lose the device (kind
 * 100). sim: in-process; drm: through the driver's debugfs "fault" file,
 * and for 100 by removing the PCI function (root only; -EOPNOTSUPP when
 * debugfs is not there). On user-mode queues "each ring serving @engine"
 * is each of the process's rings carrying a DMA queue for the DMA engine,
 * but for the compute engine only the ring of the newest compute stream
 * (a fault there stops every queue sharing that ring).
 */
int spyre_sim_inject_fault(spyre_device *dev, enum spyre_engine engine, unsigned int kind);

#ifdef __cplusplus
}
#endif

#endif /* SPYRE_SPYRE_H */
