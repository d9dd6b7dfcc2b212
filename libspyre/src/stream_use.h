/* SPDX-License-Identifier: MIT */
/*
 * What code that issues work on streams it does not own (recipes, events,
 * staging) may do with them: hold references and dependencies, ask whether
 * a point completed, get kernel queues ready, enqueue ops. The stream's
 * fields are the stream files' own (stream.h); nothing here needs them.
 */
#ifndef SPYRE_STREAM_USE_H_LIB
#define SPYRE_STREAM_USE_H_LIB

#include "internal.h"

/* Engine bits of spy_stream_prepare. */
#define SPY_ENGINE_BIT(e) (1u << (e))

/* The engine a SUBMIT of @cmds runs on: launches compute, copies and fills DMA, else -1. */
int spy_cmds_engine(const struct drm_spyre_cmd *cmds, unsigned int n);
spyre_device *spy_stream_device(const struct spyre_stream *s);
/*
 * Make the kernel queues of @engines (SPY_ENGINE_BIT mask) that @s has
 * not made yet. Call it before taking any lock that launches hold: a
 * stream's second queue (compute on a DMA stream, DMA on a compute one)
 * is made on its first use, here, never while submitting. Cheap when the
 * queues exist. A refused second queue is not an error (see
 * spy_stream_queue_locked); the submission that needs it reports it.
 */
void spy_stream_prepare(struct spyre_stream *s, unsigned int engines);

/* References: the stream (and its timeline) stays valid while one is held. */
void spy_stream_get(struct spyre_stream *s);
void spy_stream_put(struct spyre_stream *s);

/*
 * Set the @n dependency slots @slots[i] to @vals[i] (a NULL stream: empty),
 * taking a reference on each new stream and dropping the one each slot held
 * before: one dev->lock for all of them, none when every slot keeps its
 * stream (no reference changes; the caller serialises writers and readers
 * of the slots, as a recipe's lock does).
 */
void spy_deps_hold(spyre_device *dev, struct spy_dep *const *slots, const struct spy_dep *vals,
		   unsigned int n);

/* Has @point of @s completed? (false while it has not reached the kernel) */
bool spy_stream_point_done(struct spyre_stream *s, uint64_t point);

#endif /* SPYRE_STREAM_USE_H_LIB */
