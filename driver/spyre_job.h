/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Spyre jobs: the scheduler backend and the driver's own jobs.
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#ifndef SPYRE_JOB_H
#define SPYRE_JOB_H

#include <drm/gpu_scheduler.h>

#include "spyre_drv.h"
#include "spyre_queue.h"
#include "spyre_sem.h"

struct spyre_queue;
struct spyre_ring;

/**
 * struct spyre_job - one submission
 * @base: scheduler job
 * @queue: queue the job came from (reference)
 * @ring: ring it runs on
 * @descs: the job's descriptors, FENCE last, built and checked at submit
 * @ndescs: descriptors in @descs
 * @bos: BOs the commands use (references), kept until the job is freed
 * @nbos: entries in @bos
 * @in_fences: in-sync fences (references), checked for errors at run time
 * @n_in_fences: entries in @in_fences
 * @hw_fence: signalled by the completion interrupt; allocated at submit so
 *	run_job never allocates
 * @seqno: sequence number on the ring, 0 until first emitted
 * @emitted: the descriptors were written to the ring at least once
 * @replay: the ring was reset under the job: recovery writes it again
 * @cancelled: its process was killed: the job's commands became NOPs
 * @ring_start: free-running ring index of the job's first descriptor
 * @emit_time: jiffies when the job was last written to the ring
 * @link: entry in the ring's pending list
 * @descs_alloc: allocation holding @descs, which starts later in it while
 *	slots in front are kept for SEM_WAITs
 * @deps: in-fences that are jobs of this card (spyre_sem.c)
 * @ndeps: entries in @deps
 * @wait_rings: other rings @deps run on: SEM_WAITs the job may need
 * @sem_waiting: the job starts with SEM_WAITs (counted in the ring's
 *	sem_waiters until freed)
 * @sem_signal: value its FENCE signals if not its hardware fence's seqno
 *	(set for jobs written again after a ring reset)
 * @status: SPYRE_CMD_* from the completion record
 * @engine_ns: compute and DMA engine time the job used, from its completion
 *	record (indexed by enum drm_spyre_engine)
 * @queue_seq: the job's number on its queue (1 for the first)
 * @out_point: the point of its first out-sync (0: none or binary)
 * @fault: where a failed launch stopped (card interface 1.6)
 */
struct spyre_job {
	struct drm_sched_job base;
	struct spyre_queue *queue;
	struct spyre_ring *ring;
	void *descs;
	u32 ndescs;
	struct drm_gem_object **bos;
	u32 nbos;
	struct dma_fence **in_fences;
	u32 n_in_fences;
	struct dma_fence *hw_fence;
	u64 seqno;
	bool emitted;
	bool replay;
	bool cancelled;
	u32 ring_start;
	unsigned long emit_time;
	struct list_head link;
	void *descs_alloc;
	struct spyre_sem_dep *deps;
	u32 ndeps;
	u32 wait_rings;
	bool sem_waiting;
	u64 sem_signal;
	u32 status;
	u64 engine_ns[SPYRE_NUM_ENGINES];
	u64 queue_seq;
	u64 out_point;
	struct spyre_fault fault;
};

static inline struct spyre_job *to_spyre_job(struct drm_sched_job *job)
{
	return container_of(job, struct spyre_job, base);
}

extern const struct drm_sched_backend_ops spyre_sched_ops;

union spyre_hw_desc *spyre_next_desc(struct spyre_job *job);
void spyre_job_free(struct spyre_job *job);
int spyre_kernel_fill(struct spyre_device *sdev, u64 dev_addr, u64 size);

#endif /* SPYRE_JOB_H */
