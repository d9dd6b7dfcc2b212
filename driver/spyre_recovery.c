// SPDX-License-Identifier: GPL-2.0-only
/*
 * Spyre recovery: every reset of a ring or of the card, and how the work
 * that was on it comes back.
 *
 * One path serves a job timeout, a card-level error (interrupt, debugfs),
 * a PCI function-level reset and a PCI error recovery:
 *
 *   spyre_reset_begin_locked()   stop the schedulers of the rings involved
 *   reset the hardware           a ring (RING_CTRL_RESET) or the card
 *   spyre_reset_done_locked()    retire the jobs that were on the rings
 *                                (fail the guilty, keep the innocent),
 *                                restart the rings and their semaphores,
 *                                write the kept jobs again, restart the
 *                                schedulers
 *
 * spyre_recover_locked() runs the three steps in one go. The PCI reset
 * callbacks run them as two halves around the reset the PCI core does.
 * The driver writes kept jobs to the fresh ring itself and hands the
 * scheduler their hardware fences; it does not use
 * drm_sched_resubmit_jobs(), so run_job only ever writes a job for the
 * first time.
 *
 * Everything here runs under sdev->recovery_lock, so two recoveries never
 * overlap; timeouts and card resets also run on one ordered workqueue.
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#include <linux/pci.h>
#include <drm/drm_drv.h>
#include <drm/drm_print.h>

#include "spyre_device.h"
#include "spyre_job.h"
#include "spyre_queue.h"
#include "spyre_recovery.h"
#include "spyre_ring.h"
#include "spyre_sem.h"
#include "spyre_uq.h"
#include "spyre_vm.h"

static u32 spyre_all_rings(struct spyre_device *sdev)
{
	return GENMASK(sdev->num_rings - 1, 0);
}

/*
 * Finishes every job still on @ring after a reset. The guilty job gets
 * @guilty_error; jobs of its queue, if banned, get -ECANCELED; others get
 * @other_error or, when @other_error is 0, are kept to be written again to
 * the fresh ring by spyre_ring_replay_locked().
 */
static void spyre_ring_retire_pending_locked(struct spyre_ring *ring,
					     struct spyre_job *guilty,
					     int guilty_error, int other_error)
{
	lockdep_assert_held(&ring->sdev->recovery_lock);
	spyre_ring_retire_pending(ring, guilty, guilty_error, other_error);
}

/*
 * Hands the stopped scheduler back its jobs: writes the kept ones to the
 * fresh ring, in the order they first ran, and gives every job its
 * hardware fence again (drm_sched_stop() detached them; the failed ones
 * have signalled, so drm_sched_start() finishes them at once).
 */
static void spyre_ring_replay_locked(struct spyre_ring *ring)
{
	struct drm_gpu_scheduler *sched = &ring->sched;
	struct drm_sched_job *s_job;
	struct spyre_job *job;

	lockdep_assert_held(&ring->sdev->recovery_lock);
	/* The scheduler is stopped: nobody else walks or changes the list. */
	list_for_each_entry(s_job, &sched->pending_list, list) {
		job = to_spyre_job(s_job);
		if (job->replay)
			spyre_ring_emit(ring, job);
		if (!s_job->s_fence->parent)
			s_job->s_fence->parent = dma_fence_get(job->hw_fence);
	}
}

/**
 * spyre_reset_begin_locked - stops the schedulers of @rings
 * @sdev: the card
 * @rings: BIT(index) of each ring involved
 * @bad: the job whose timeout started the recovery, or NULL
 *
 * No job is written to those rings and no job of theirs is freed until
 * spyre_reset_done_locked().
 */
void spyre_reset_begin_locked(struct spyre_device *sdev, u32 rings, struct spyre_job *bad)
{
	unsigned long mask = rings;
	unsigned int i;

	lockdep_assert_held(&sdev->recovery_lock);
	for_each_set_bit(i, &mask, sdev->num_rings)
		drm_sched_stop(&sdev->rings[i].sched, bad ? &bad->base : NULL);
}

/**
 * spyre_reset_done_locked - brings the rings of a recovery back
 * @sdev: the card
 * @rec: what was reset and whom to blame
 *
 * If the rings were reset, their jobs are retired (see struct
 * spyre_recovery), the rings restarted and their semaphores restored, and
 * the kept jobs written again. The schedulers then start again.
 */
void spyre_reset_done_locked(struct spyre_device *sdev, const struct spyre_recovery *rec)
{
	unsigned long mask = rec->rings;
	u64 sem[SPYRE_MAX_RINGS];
	struct spyre_ring *ring;
	unsigned int i;

	lockdep_assert_held(&sdev->recovery_lock);
	if (rec->scope == SPYRE_RESET_NONE)
		goto restart;
	for_each_set_bit(i, &mask, sdev->num_rings) {
		ring = &sdev->rings[i];
		spyre_ring_hw_reset(ring);
		spyre_ring_retire_pending_locked(ring, rec->guilty, rec->guilty_error,
						 rec->other_error);
		spyre_ring_hw_start(ring);
		sem[i] = spyre_sem_plan_release_locked(ring);
		if (rec->scope == SPYRE_RESET_RING)
			atomic_inc(&ring->resets);
	}
	atomic_inc(&sdev->reset_count);
restart:
	/* Every ring is up before any job waits on another ring's semaphore. */
	for_each_set_bit(i, &mask, sdev->num_rings) {
		ring = &sdev->rings[i];
		spyre_ring_replay_locked(ring);
		drm_sched_start(&ring->sched);
	}
	/*
	 * drm_sched_start() finished the failed jobs' fences: only now may
	 * the card release the jobs that waited on it for them.
	 */
	if (rec->scope != SPYRE_RESET_NONE)
		for_each_set_bit(i, &mask, sdev->num_rings)
			spyre_sem_release_locked(&sdev->rings[i], sem[i]);
}

/**
 * spyre_recover_locked - resets rings or the card and brings their work back
 * @sdev: the card
 * @rec: what to reset and whom to blame
 *
 * With scope SPYRE_RESET_NONE nothing is reset: the schedulers are only
 * stopped and restarted, which re-arms the timeout of a job that makes
 * progress.
 */
void spyre_recover_locked(struct spyre_device *sdev, const struct spyre_recovery *rec)
{
	unsigned long mask = rec->rings;
	unsigned int i;

	lockdep_assert_held(&sdev->recovery_lock);
	spyre_reset_begin_locked(sdev, rec->rings, rec->bad);
	if (rec->scope == SPYRE_RESET_CARD) {
		drm_warn(&sdev->drm, "resetting the card\n");
		atomic_set(&sdev->card_reset_pending, 0);
		spyre_card_reset_hw(sdev);
		spyre_vm_restore_roots(sdev);
		spyre_uq_card_reset(sdev);
	} else if (rec->scope == SPYRE_RESET_RING) {
		/* Stop fetching before the jobs are looked at. */
		for_each_set_bit(i, &mask, sdev->num_rings)
			spyre_ring_hw_reset(&sdev->rings[i]);
	}
	if (rec->guilty && rec->scope != SPYRE_RESET_NONE && rec->ban &&
	    !rec->guilty->queue->kernel)
		WRITE_ONCE(rec->guilty->queue->banned, true);
	spyre_reset_done_locked(sdev, rec);
}

/*
 * Decides at a timeout of @job, the oldest job on the ring, whether the
 * ring is stuck. A command's run time depends on the host running the
 * card, so a ring counts as stuck only once its head, its completions and
 * (cards of interface 1.2 on) its progress counter have not moved for
 * the job timeout and at least SPYRE_MIN_HANG_MS, measured from the later
 * of its last movement and the job reaching the ring. The card's engines
 * are shared by all rings, so while the rest of the card moves a ring may
 * just be waiting its turn: then it gets SPYRE_MAX_STALLS times as long.
 */
static bool spyre_ring_is_stuck_locked(struct spyre_ring *ring, struct spyre_job *job)
{
	struct spyre_device *sdev = ring->sdev;
	u32 head = spyre_ring_read(ring, SPYRE_RING_HEAD);
	u32 count = spyre_ring_progress(ring);
	u64 done = le64_to_cpu(READ_ONCE(ring->wb->completed_seqno));
	u64 card = atomic64_read(&sdev->completions);
	unsigned long since, stalled, limit;
	bool ring_moved, card_moved;
	unsigned int i;

	lockdep_assert_held(&sdev->recovery_lock);
	for (i = 0; i < sdev->num_rings; i++)
		card += spyre_ring_read(&sdev->rings[i], SPYRE_RING_HEAD) +
			spyre_ring_progress(&sdev->rings[i]);

	ring_moved = head != ring->progress_head || done != ring->progress_seqno ||
		     count != ring->progress_count;
	card_moved = card != ring->progress_card;
	ring->progress_head = head;
	ring->progress_count = count;
	ring->progress_seqno = done;
	ring->progress_card = card;
	if (ring_moved) {
		ring->progress_time = jiffies;
		return false;
	}

	since = time_after(job->emit_time, ring->progress_time) ? job->emit_time :
								  ring->progress_time;
	stalled = jiffies - since;
	limit = msecs_to_jiffies(max(READ_ONCE(spyre_job_timeout_ms), SPYRE_MIN_HANG_MS));
	/* The timer and the job's start are a few jiffies apart: allow for it. */
	limit -= limit / 8;
	if (card_moved)
		limit *= SPYRE_MAX_STALLS;
	return stalled >= limit;
}

/**
 * spyre_job_timedout - the scheduler's timeout handler
 * @sched_job: the oldest job on its ring
 *
 * The scheduler's timer only says the oldest job on the ring has not
 * finished for a while; a long job that makes progress is left running.
 * Otherwise the ring is reset: the hung job fails with -ETIMEDOUT (or -EIO
 * if the ring stopped on an error), its queue is banned and its other jobs
 * are cancelled, and the other queues' jobs are written again to the fresh
 * ring. A card-level error resets the whole card instead.
 *
 * Return: DRM_GPU_SCHED_STAT_NOMINAL, or DRM_GPU_SCHED_STAT_ENODEV once
 * the card is gone.
 */
enum drm_gpu_sched_stat spyre_job_timedout(struct drm_sched_job *sched_job)
{
	struct spyre_job *job = to_spyre_job(sched_job);
	struct spyre_ring *ring = job->ring;
	struct spyre_device *sdev = ring->sdev;
	struct spyre_recovery rec = {
		.rings = BIT(ring->index),
		.bad = job,
		.scope = SPYRE_RESET_NONE,
	};
	bool ring_error, hung;
	int idx;

	if (!drm_dev_enter(&sdev->drm, &idx))
		return DRM_GPU_SCHED_STAT_ENODEV;

	mutex_lock(&sdev->recovery_lock);
	spyre_ring_process_completions(ring);
	if (atomic_read(&sdev->card_reset_pending) ||
	    (spyre_read(sdev, SPYRE_REG_STATUS) & SPYRE_STATUS_FATAL)) {
		/*
		 * @job stays the bad job even if it finished: drm_sched_stop()
		 * puts it back on its list (the timeout took it off) or has the
		 * scheduler free it.
		 */
		rec.rings = spyre_all_rings(sdev);
		rec.scope = SPYRE_RESET_CARD;
		if (!dma_fence_is_signaled(job->hw_fence)) {
			rec.guilty = job;
			rec.guilty_error = -ETIMEDOUT;
			rec.ban = true;
		}
		rec.other_error = -EIO;
		spyre_recover_locked(sdev, &rec);
		goto out;
	}

	ring_error = spyre_ring_read(ring, SPYRE_RING_STATUS) & SPYRE_RING_STATUS_ERROR;
	hung = !dma_fence_is_signaled(job->hw_fence) &&
	       (ring_error || spyre_ring_is_stuck_locked(ring, job));
	/*
	 * A job waiting on the card for a job of another ring is not to blame:
	 * if that one hangs, its own ring's timeout recovers it and releases
	 * the wait. Give this one time from then on.
	 */
	if (hung && !ring_error && spyre_sem_job_blocked(job)) {
		hung = false;
		ring->progress_time = jiffies;
	}
	if (hung) {
		drm_warn(&sdev->drm, "%s: job %llu of queue %u %s, resetting the ring\n",
			 ring->name, job->seqno, job->queue->id,
			 ring_error ? "hit a ring error" : "hung");
		rec.scope = SPYRE_RESET_RING;
		rec.guilty = job;
		rec.guilty_error = ring_error ? -EIO : -ETIMEDOUT;
		rec.ban = !ring_error;
	}
	spyre_recover_locked(sdev, &rec);
out:
	mutex_unlock(&sdev->recovery_lock);
	drm_dev_exit(idx);
	return DRM_GPU_SCHED_STAT_NOMINAL;
}

/*
 * Full card reset outside a job timeout (card error interrupt, debugfs):
 * device memory and engine state are not trustworthy any more, so every
 * job that was on the card fails with -EIO.
 */
static void spyre_card_reset_work(struct work_struct *work)
{
	struct spyre_device *sdev = container_of(work, struct spyre_device, reset_work);
	struct spyre_recovery rec = {
		.rings = spyre_all_rings(sdev),
		.scope = SPYRE_RESET_CARD,
		.other_error = -EIO,
	};
	int idx;

	if (!drm_dev_enter(&sdev->drm, &idx))
		return;
	mutex_lock(&sdev->recovery_lock);
	spyre_recover_locked(sdev, &rec);
	mutex_unlock(&sdev->recovery_lock);
	drm_dev_exit(idx);
}

void spyre_recovery_init(struct spyre_device *sdev)
{
	INIT_WORK(&sdev->reset_work, spyre_card_reset_work);
}

void spyre_schedule_card_reset(struct spyre_device *sdev)
{
	atomic_set(&sdev->card_reset_pending, 1);
	queue_work(sdev->reset_wq, &sdev->reset_work);
}

/* --- PCI resets and errors ----------------------------------------------- */

/*
 * A function-level reset (sysfs "reset", or another driver resetting the
 * slot) wipes the rings' set-up. The PCI core calls reset_prepare and
 * reset_done around it, always as a pair: the first stops the schedulers
 * and the rings and keeps the recovery lock, so no timeout or card reset
 * runs in between; the second brings the card back. Nobody is to blame, so
 * every job that was on a ring is written again to the reprogrammed ring.
 */
static void spyre_pci_reset_prepare(struct pci_dev *pdev)
{
	struct spyre_device *sdev = pci_get_drvdata(pdev);
	unsigned int i;

	drm_info(&sdev->drm, "PCI reset: quiescing the card\n");
	mutex_lock(&sdev->recovery_lock);
	spyre_reset_begin_locked(sdev, spyre_all_rings(sdev), NULL);
	for (i = 0; i < sdev->num_rings; i++)
		spyre_ring_hw_reset(&sdev->rings[i]);
}

/*
 * After a reset the PCI core did: waits for the card, then restarts every
 * ring with its work. If the card does not come back, that work fails with
 * -EIO and a card reset is tried.
 */
static void spyre_pci_restart_locked(struct spyre_device *sdev)
{
	struct spyre_recovery rec = {
		.rings = spyre_all_rings(sdev),
		.scope = SPYRE_RESET_CARD,
	};

	lockdep_assert_held(&sdev->recovery_lock);
	rec.other_error = spyre_card_reset_hw(sdev) ? -EIO : 0;
	if (!rec.other_error)
		spyre_vm_restore_roots(sdev);
	spyre_uq_card_reset(sdev);
	atomic_set(&sdev->card_reset_pending, 0);
	spyre_reset_done_locked(sdev, &rec);
	if (rec.other_error)
		spyre_schedule_card_reset(sdev);
}

static void spyre_pci_reset_done(struct pci_dev *pdev)
{
	struct spyre_device *sdev = pci_get_drvdata(pdev);

	spyre_pci_restart_locked(sdev);
	mutex_unlock(&sdev->recovery_lock);
	drm_info(&sdev->drm, "PCI reset: card restarted\n");
}

/*
 * PCI error recovery (AER): the core resets the link or slot between
 * error_detected and slot_reset, but may give up in between, so the
 * recovery lock is not kept across them; slot_reset runs a whole recovery.
 */
static pci_ers_result_t spyre_pci_error_detected(struct pci_dev *pdev,
						 pci_channel_state_t state)
{
	struct spyre_device *sdev = pci_get_drvdata(pdev);

	drm_err(&sdev->drm, "PCI error (channel state %d)\n", state);
	if (state == pci_channel_io_perm_failure)
		return PCI_ERS_RESULT_DISCONNECT;
	return PCI_ERS_RESULT_NEED_RESET;
}

static pci_ers_result_t spyre_pci_slot_reset(struct pci_dev *pdev)
{
	struct spyre_device *sdev = pci_get_drvdata(pdev);
	int idx;

	if (pci_enable_device(pdev))
		return PCI_ERS_RESULT_DISCONNECT;
	pci_set_master(pdev);
	pci_restore_state(pdev);
	pci_save_state(pdev);
	if (!drm_dev_enter(&sdev->drm, &idx))
		return PCI_ERS_RESULT_DISCONNECT;
	mutex_lock(&sdev->recovery_lock);
	spyre_reset_begin_locked(sdev, spyre_all_rings(sdev), NULL);
	spyre_pci_restart_locked(sdev);
	mutex_unlock(&sdev->recovery_lock);
	drm_dev_exit(idx);
	return PCI_ERS_RESULT_RECOVERED;
}

const struct pci_error_handlers spyre_pci_err_handlers = {
	.error_detected = spyre_pci_error_detected,
	.slot_reset = spyre_pci_slot_reset,
	.reset_prepare = spyre_pci_reset_prepare,
	.reset_done = spyre_pci_reset_done,
};
