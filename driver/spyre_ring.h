/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Spyre hardware command rings: descriptor memory, doorbell, completion
 * interrupt and the hardware fences of jobs on the ring.
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#ifndef SPYRE_RING_H
#define SPYRE_RING_H

#include <linux/dma-fence.h>
#include <linux/kref.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <drm/gpu_scheduler.h>

#include "spyre_device.h"

struct spyre_job;
struct spyre_queue;

/**
 * struct spyre_ring - one hardware command ring and its scheduler
 * @sdev: owning device
 * @set: the ring set holding this ring
 * @index: ring number on the card
 * @engine: enum drm_spyre_engine the ring serves
 * @name: "spyre-ringN", for the scheduler and fences
 * @entries: descriptors in the ring (power of two)
 * @descs: descriptor memory (coherent DMA)
 * @descs_dma: its bus address
 * @wb: the ring's write-back record
 * @wb_dma: its bus address
 * @records: one completion record per slot, indexed by seqno & (entries - 1)
 * @records_dma: their bus address
 * @lock: protects @tail, @seqno and @pending; taken in the IRQ handler
 * @tail: free-running index of the next descriptor to write
 * @seqno: last sequence number given to a job
 * @pending: jobs written to the ring whose hardware fence has not
 *	signalled, oldest first
 * @sp_client: DRM client whose programs last used the scratchpads (written
 *	to this ring), or SPYRE_SP_CLIENT_UNKNOWN; under @lock
 * @fence_context: dma_fence context of the hardware fences
 * @irq: Linux IRQ of the ring's MSI-X vector
 * @sched: the ring's scheduler; credits are descriptors
 * @queues: user queues attached to the ring
 * @progress_head: head seen by the last timeout check
 * @progress_count: SPYRE_RING_PROGRESS seen by the last timeout check
 * @progress_seqno: completed seqno seen by the last timeout check
 * @progress_card: card-wide progress token seen by the last timeout check
 * @progress_time: jiffies when the ring was last seen moving
 * @jobs_done: jobs completed on the ring
 * @jobs_failed: jobs completed with an error
 * @resets: resets of this ring
 * @sem_waiters: jobs on the ring that wait for other rings (spyre_sem.c)
 */
struct spyre_ring {
	struct spyre_device *sdev;
	struct spyre_ring_set *set;
	unsigned int index;
	u32 engine;
	char name[16];

	u32 entries;
	void *descs;
	dma_addr_t descs_dma;
	struct spyre_hw_ring_wb *wb;
	dma_addr_t wb_dma;
	struct spyre_hw_completion *records;
	dma_addr_t records_dma;

	spinlock_t lock; /* tail, seqno, pending; also the fences' lock */
	u32 tail;
	u64 seqno;
	struct list_head pending;
	u64 sp_client;
	u64 fence_context;
	int irq;

	struct drm_gpu_scheduler sched;
	atomic_t queues;
	u32 progress_head;
	u32 progress_count;
	u64 progress_seqno;
	u64 progress_card;
	unsigned long progress_time;

	atomic64_t jobs_done;
	atomic64_t jobs_failed;
	atomic_t resets;
	atomic_t sem_waiters;
};

/* No client known to own the scratchpads: the next launch scrubs them. */
#define SPYRE_SP_CLIENT_UNKNOWN	U64_MAX

/**
 * struct spyre_ring_set - the rings of one card
 * @ref: held by the device and by every hardware fence, since a fence (and
 *	the scheduler fences pointing at the ring's scheduler and name) can
 *	outlive the card
 * @rcu: frees the set after a grace period
 * @rings: the rings
 */
struct spyre_ring_set {
	struct kref ref;
	struct rcu_head rcu;
	struct spyre_ring rings[];
};

static inline u32 spyre_ring_read(struct spyre_ring *ring, u32 reg)
{
	return spyre_read(ring->sdev, SPYRE_RING_REG(ring->index, reg));
}

static inline void spyre_ring_write(struct spyre_ring *ring, u32 reg, u32 val)
{
	spyre_write(ring->sdev, SPYRE_RING_REG(ring->index, reg), val);
}

int spyre_ring_init(struct spyre_device *sdev, struct spyre_ring *ring,
		    unsigned int index, int irq);
void spyre_ring_fini(struct spyre_ring *ring);
int spyre_ring_hw_start(struct spyre_ring *ring);
void spyre_ring_hw_reset(struct spyre_ring *ring);
void spyre_ring_emit(struct spyre_ring *ring, struct spyre_job *job);
void spyre_ring_process_completions(struct spyre_ring *ring);
void spyre_ring_reap(struct spyre_ring *ring);
void spyre_ring_retire_pending(struct spyre_ring *ring, struct spyre_job *guilty,
			       int guilty_error, int other_error);
u32 spyre_ring_progress(struct spyre_ring *ring);
void spyre_ring_cancel_queue(struct spyre_ring *ring, struct spyre_queue *queue);
struct dma_fence *spyre_hw_fence_alloc(void);
struct dma_fence *spyre_ring_fail_job(struct spyre_ring *ring, struct spyre_job *job, int error);
struct spyre_ring_set *spyre_ring_set_alloc(unsigned int count);
void spyre_ring_set_put(struct spyre_ring_set *set);

#endif /* SPYRE_RING_H */
