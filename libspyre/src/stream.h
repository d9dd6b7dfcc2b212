/* SPDX-License-Identifier: MIT */
/*
 * Between the stream files only (stream*.c): how a stream's lifecycle, its
 * kernel queues, the deferred queue, submission and sticky errors call
 * each other. Code outside them uses stream_use.h.
 *
 *   stream.c          lifecycle: create, destroy, references, kernel
 *                     queues, waits for points, synchronize, query
 *   stream_submit.c   spy_op_enqueue: points, dependencies, SUBMIT ioctls
 *   stream_deferred.c ops waiting for host-work points, event waits
 *   stream_error.c    sticky errors: reading the card's, reporting them
 *   stream_async.c    the public one-command calls (memcpy, fill, launch,
 *                     host work)
 */
#ifndef SPYRE_STREAM_H_LIB
#define SPYRE_STREAM_H_LIB

#include "internal.h"

/* ---- stream.c ---- */
/*
 * The kernel queue of @engine of @s for a SUBMIT, under dev->lock; never
 * makes one (spy_stream_prepare did, outside every launch lock). A missing
 * DMA queue falls back to the stream's first queue (copies run on any
 * ring); a missing compute queue is -EINVAL. Returns the engine used.
 */
int spy_stream_queue_locked(const struct spyre_stream *s, int engine, uint32_t *id);
/* References to every live stream of @dev (NULL-terminated, heap); NULL on ENOMEM. */
struct spyre_stream **spy_live_streams(spyre_device *dev);
void spy_put_streams(spyre_device *dev, struct spyre_stream **v);

/* ---- stream_submit.c ---- */
/* Issue a deferred SUBMIT whose dependencies all exist, holding dev->lock. */
int spy_issue_submit_locked(struct spy_op *op);

/* ---- stream_deferred.c ---- */
bool spy_deps_ready(const struct spy_op *op);
/*
 * Queue @op behind @s's deferred ops (a heap copy unless persistent; the
 * streams it names are referenced), the @nwait event waits it took over
 * from the stream released, and issue whatever is ready. Under dev->lock.
 */
int spy_defer_locked(struct spyre_stream *s, struct spy_op *op, unsigned int nwait);
/* The stream's pending event waits went into an op: drop their references. */
void spy_waits_consumed_locked(struct spyre_stream *s, unsigned int n);

/* ---- stream_error.c ---- */
/* The stream's sticky error as a return value with its message, or 0. */
int spy_stream_sticky_error(struct spyre_stream *s, const char *call);

#endif /* SPYRE_STREAM_H_LIB */
