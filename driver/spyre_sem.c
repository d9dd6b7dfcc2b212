// SPDX-License-Identifier: GPL-2.0-only
/*
 * Spyre dependencies between the rings of one card.
 *
 * A job that depends on a job of another ring of the same card is not held
 * back by the host until that job's completion interrupt. The scheduler
 * only waits until the other job was written to its ring (its scheduled
 * fence); the dependent job then starts with a SEM_WAIT on the semaphore of
 * that ring, and every job's FENCE raises its ring's semaphore (semaphore
 * index = ring index) to the job's number with SPYRE_DESC_F_SEM. The card
 * resolves the wait in device time, so the dependent job starts exactly
 * when its input is complete on the modelled timeline, independent of how
 * fast the host emulates the card or the guest handles interrupts.
 *
 * The value a job signals is the seqno of its hardware fence, given when
 * it first reached the ring and kept when the job is written again after a
 * ring reset, so the values on one ring grow in ring order.
 *
 * Errors: the FENCE signals even when its job failed (the card skips to it),
 * marking the raise as a failure, so waiters are released and, as their
 * SEM_WAITs carry SPYRE_DESC_F_ERR, fail and skip their own commands: a job
 * whose input failed does not run, as when the host resolves the
 * dependency. It then ends with its input's error, taken from the input's
 * hardware fence when it completes (the rings it waited on are reaped
 * first). After a ring reset, the driver raises the semaphore (a software
 * raise counts as a failure) past every job that will not run again; after
 * a card reset (semaphores zeroed) past every job.
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#include <linux/dma-fence-chain.h>
#include <linux/slab.h>
#include <drm/drm_print.h>
#include <drm/gpu_scheduler.h>

#include "spyre_desc.h"
#include "spyre_job.h"
#include "spyre_queue.h"
#include "spyre_ring.h"
#include "spyre_sem.h"

/* Interface 1.1 has FENCE semaphores and the SEM_* registers. */
bool spyre_sem_supported(struct spyre_device *sdev)
{
	return sdev->hw_version >= SPYRE_HW_VERSION(1, 1) && sdev->num_sems >= sdev->num_rings;
}

/* Descriptor slots to keep free in front of a job for its SEM_WAITs. */
u32 spyre_sem_lead_slots(struct spyre_device *sdev)
{
	return spyre_sem_supported(sdev) ? sdev->num_rings - 1 : 0;
}

/* The ring of this card whose scheduler made @fence, or NULL. */
static struct spyre_ring *spyre_sem_fence_ring(struct spyre_device *sdev,
					       struct dma_fence *fence,
					       struct drm_sched_fence **s_fence)
{
	struct drm_sched_fence *s = to_drm_sched_fence(fence);
	unsigned int i;

	if (!s)
		return NULL;
	for (i = 0; i < sdev->num_rings; i++) {
		if (s->sched == &sdev->rings[i].sched) {
			*s_fence = s;
			return &sdev->rings[i];
		}
	}
	return NULL;
}

/*
 * Collects the unsignalled job fences of this card behind @fence (itself,
 * or every link of a timeline chain). Of several jobs of one queue only the
 * last counts: a queue runs in order on one ring, and a chain's error is
 * that of its newest link, as for a host wait. False if a fence is
 * something else or there are too many: then the host waits for @fence as
 * a whole.
 */
static bool spyre_sem_collect(struct spyre_job *job, struct dma_fence *fence,
			      struct drm_sched_fence **found, struct spyre_ring **rings,
			      u32 *n)
{
	struct spyre_device *sdev = job->ring->sdev;
	struct drm_sched_fence *s = NULL;
	struct dma_fence *iter, *f;
	struct spyre_ring *ring;
	u32 i;

	*n = 0;
	dma_fence_chain_for_each(iter, fence) {
		f = dma_fence_chain_contained(iter);
		if (dma_fence_is_signaled(f))
			continue;
		ring = spyre_sem_fence_ring(sdev, f, &s);
		if (!ring)
			goto fail;
		for (i = 0; i < *n; i++) {
			if (found[i]->finished.context != s->finished.context)
				continue;
			if (dma_fence_is_later(&s->finished, &found[i]->finished))
				found[i] = s;
			break;
		}
		if (i < *n)
			continue;
		if (job->ndeps + *n == SPYRE_SEM_MAX_DEPS)
			goto fail;
		found[*n] = s;
		rings[(*n)++] = ring;
	}
	return true;

fail:
	dma_fence_put(iter);
	return false;
}

/*
 * Adds in-fence @fence (reference consumed) as a dependency of @job. Jobs
 * of other rings of this card become SEM_WAITs: the scheduler then only
 * waits until they reached their ring. Jobs of the job's own ring need no
 * wait at all (the ring is in order; the scheduler already only waits for
 * them to be scheduled). Either way they are remembered, so their errors
 * reach @job when it completes.
 */
int spyre_sem_add_dependency(struct spyre_job *job, struct dma_fence *fence)
{
	struct drm_sched_fence *found[SPYRE_SEM_MAX_DEPS];
	struct spyre_ring *rings[SPYRE_SEM_MAX_DEPS];
	struct spyre_device *sdev = job->ring->sdev;
	u32 wait_rings = job->wait_rings;
	u32 i, n;
	int ret;

	if (!spyre_sem_supported(sdev) || !spyre_sem_collect(job, fence, found, rings, &n))
		return drm_sched_job_add_dependency(&job->base, fence);

	for (i = 0; i < n; i++)
		if (rings[i] != job->ring)
			wait_rings |= BIT(rings[i]->index);
	/* The SEM_WAITs must fit in the ring together with the job. */
	if (job->ndescs + hweight32(wait_rings) > job->ring->entries)
		return drm_sched_job_add_dependency(&job->base, fence);

	if (n && !job->deps) {
		job->deps = kcalloc(SPYRE_SEM_MAX_DEPS, sizeof(*job->deps), GFP_KERNEL);
		if (!job->deps) {
			dma_fence_put(fence);
			return -ENOMEM;
		}
	}
	for (i = 0; i < n; i++) {
		job->deps[job->ndeps++].sched = found[i];
		dma_fence_get(&found[i]->finished);
		if (rings[i] == job->ring)
			ret = drm_sched_job_add_dependency(&job->base,
							   dma_fence_get(&found[i]->finished));
		else
			ret = drm_sched_job_add_dependency(&job->base,
							   dma_fence_get(&found[i]->scheduled));
		if (ret) {
			dma_fence_put(fence);
			return ret;
		}
	}
	job->wait_rings = wait_rings;
	dma_fence_put(fence);
	return 0;
}

void spyre_sem_job_free(struct spyre_job *job)
{
	u32 i;

	for (i = 0; i < job->ndeps; i++) {
		dma_fence_put(job->deps[i].hw);
		dma_fence_put(&job->deps[i].sched->finished);
	}
	kfree(job->deps);
	if (job->sem_waiting)
		atomic_dec(&job->ring->sem_waiters);
}

static struct spyre_ring *spyre_sem_ring_of_hw(struct spyre_device *sdev, struct dma_fence *hw)
{
	unsigned int i;

	for (i = 0; i < sdev->num_rings; i++)
		if (hw->context == sdev->rings[i].fence_context)
			return &sdev->rings[i];
	return NULL;
}

/*
 * Called by run_job before the job first reaches its ring (never
 * allocates). Every dependency has been scheduled: it either reached its
 * ring (its hardware fence is known), or failed before (its finished fence
 * signals at once). Returns a negative error to fail the job with, or 0
 * after putting one SEM_WAIT per ring still to wait for in front of the
 * job's descriptors.
 */
int spyre_sem_prepare(struct spyre_job *job)
{
	struct spyre_device *sdev = job->ring->sdev;
	u64 value[SPYRE_MAX_RINGS] = {};
	struct dma_fence *finished, *hw;
	struct spyre_sem_dep *dep;
	struct spyre_ring *ring;
	u32 i, nwaits = 0;

	for (i = 0; i < job->ndeps; i++) {
		dep = &job->deps[i];
		finished = &dep->sched->finished;
		hw = READ_ONCE(dep->sched->parent);
		if (!hw && !dma_fence_is_signaled(finished))
			/* Failed in run_job: the scheduler signals it right away. */
			dma_fence_wait(finished, false);
		if (dma_fence_is_signaled(finished)) {
			if (finished->error)
				return finished->error;
			continue;
		}
		dep->hw = dma_fence_get(hw);
		if (dma_fence_is_signaled(hw)) {
			if (hw->error)
				return hw->error;
			continue;
		}
		ring = spyre_sem_ring_of_hw(sdev, hw);
		if (!ring || ring == job->ring)
			continue;
		value[ring->index] = max(value[ring->index], hw->seqno);
	}

	for (i = 0; i < sdev->num_rings; i++) {
		if (!value[i])
			continue;
		job->descs -= SPYRE_DESC_SIZE;
		job->ndescs++;
		nwaits++;
		/* If the input fails, the card skips this job: nothing runs on garbage. */
		spyre_desc_sem(job->descs, SPYRE_OP_SEM_WAIT, SPYRE_DESC_F_ERR, i, value[i]);
	}
	if (nwaits) {
		job->sem_waiting = true;
		atomic_inc(&job->ring->sem_waiters);
	}
	return 0;
}

/* Makes the job's FENCE raise its ring's semaphore to the job's number. */
void spyre_sem_mark_fence(struct spyre_ring *ring, struct spyre_job *job,
			  union spyre_hw_desc *fence)
{
	if (!spyre_sem_supported(ring->sdev))
		return;
	spyre_desc_fence_sem(fence, ring->index, job->sem_signal ?: job->hw_fence->seqno);
}

/*
 * The first error among the job's dependencies, at its completion (ring
 * lock held). The card ran the job after them, and the rings they ran on
 * were reaped first, so their hardware fences have signalled.
 */
int spyre_sem_dep_error(struct spyre_job *job)
{
	struct dma_fence *f;
	u32 i;

	for (i = 0; i < job->ndeps; i++) {
		f = job->deps[i].hw;
		if (f && test_bit(DMA_FENCE_FLAG_SIGNALED_BIT, &f->flags) && f->error)
			return f->error;
		f = &job->deps[i].sched->finished;
		if (test_bit(DMA_FENCE_FLAG_SIGNALED_BIT, &f->flags) && f->error)
			return f->error;
	}
	return 0;
}

/*
 * Before completing a ring's jobs: if some of them waited for other rings,
 * complete those rings' jobs first, whose interrupts may not have been
 * handled yet, so the waiters see their inputs' errors.
 */
void spyre_sem_reap_deps(struct spyre_ring *ring)
{
	struct spyre_device *sdev = ring->sdev;
	unsigned int i;

	if (!atomic_read(&ring->sem_waiters))
		return;
	for (i = 0; i < sdev->num_rings; i++)
		if (&sdev->rings[i] != ring)
			spyre_ring_reap(&sdev->rings[i]);
}

/* Is @job (not finished) possibly waiting for a job of another ring? */
bool spyre_sem_job_blocked(struct spyre_job *job)
{
	struct dma_fence *hw;
	u32 i;

	if (!job->sem_waiting)
		return false;
	for (i = 0; i < job->ndeps; i++) {
		hw = job->deps[i].hw;
		if (hw && hw->context != job->ring->fence_context && !dma_fence_is_signaled(hw))
			return true;
	}
	return false;
}

/*
 * After a reset of @ring (scheduler stopped, pending jobs failed or marked
 * to be written again, ring restarted): raises the ring's semaphore past
 * every job that will not run again, up to just below the first job to be
 * written again (or to the last number given out when none will), and
 * makes each job written again signal up to just below the next one, so
 * the waiters of failed jobs between them are released too. Waiters of
 * jobs written again keep waiting for them. A card reset zeroes every
 * semaphore; this restores them.
 *
 * In two steps: spyre_sem_plan_release_locked() before the jobs are
 * written again (it sets what they signal) returns the value, and
 * spyre_sem_release_locked() raises the semaphore once the scheduler has
 * finished the failed jobs' fences, so no waiter the card releases
 * completes before the job it waited for reports its error. The card
 * raises to the larger of the value and the current one, so jobs written
 * again that ran in between are not undone.
 */
u64 spyre_sem_plan_release_locked(struct spyre_ring *ring)
{
	struct spyre_device *sdev = ring->sdev;
	struct spyre_job *job, *prev = NULL;
	struct drm_sched_job *s_job;
	unsigned long flags;
	u64 last, value;

	/* Under the recovery lock: SEM_SELECT is not shared with anyone. */
	lockdep_assert_held(&sdev->recovery_lock);
	if (!spyre_sem_supported(sdev))
		return 0;
	spin_lock_irqsave(&ring->lock, flags);
	last = ring->seqno;
	spin_unlock_irqrestore(&ring->lock, flags);
	value = last;

	spin_lock(&ring->sched.job_list_lock);
	list_for_each_entry(s_job, &ring->sched.pending_list, list) {
		job = to_spyre_job(s_job);
		if (!job->emitted || !job->replay)
			continue;
		if (prev)
			prev->sem_signal = job->hw_fence->seqno - 1;
		else
			value = job->hw_fence->seqno - 1;
		prev = job;
	}
	if (prev)
		prev->sem_signal = last;
	spin_unlock(&ring->sched.job_list_lock);
	return value;
}

void spyre_sem_release_locked(struct spyre_ring *ring, u64 value)
{
	struct spyre_device *sdev = ring->sdev;

	lockdep_assert_held(&sdev->recovery_lock);
	if (!spyre_sem_supported(sdev))
		return;
	drm_dbg_driver(&sdev->drm, "%s: semaphore released up to %llu\n", ring->name, value);
	spyre_write(sdev, SPYRE_REG_SEM_SELECT, ring->index);
	spyre_write(sdev, SPYRE_REG_SEM_VALUE_LO, lower_32_bits(value));
	spyre_write(sdev, SPYRE_REG_SEM_VALUE_HI, upper_32_bits(value));
}
