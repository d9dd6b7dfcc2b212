// SPDX-License-Identifier: GPL-2.0-only
/*
 * Spyre hardware command rings.
 *
 * A ring is an array of 64-byte descriptors in coherent host memory. The
 * driver writes a job's descriptors at the tail and rings the doorbell
 * (SPYRE_RING_TAIL); the card fetches them in order. Each job ends with a
 * FENCE that makes the card write the job's completion record, update the
 * ring's write-back record and raise the ring's MSI-X vector; the interrupt
 * handler then signals the hardware fences of every finished job.
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/iopoll.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <drm/drm_print.h>
#include <uapi/drm/spyre_accel.h>

#include "spyre_desc.h"
#include "spyre_device.h"
#include "spyre_job.h"
#include "spyre_queue.h"
#include "spyre_recovery.h"
#include "spyre_ring.h"

static const char *spyre_fence_driver_name(struct dma_fence *fence)
{
	return SPYRE_DRIVER_NAME;
}

static const char *spyre_fence_timeline_name(struct dma_fence *fence)
{
	return "spyre-ring";
}

/* The fence holds a reference on the module (fences of user jobs). */
#define SPYRE_HW_FENCE_MODULE_REF	DMA_FENCE_FLAG_USER_BITS

/*
 * A hardware fence can outlive its file, its card and the driver's unbind:
 * a process may keep it in a sync_file, through the scheduler's fences
 * whose timeline name lives in the ring. So it keeps the ring set (the
 * memory of the rings and their schedulers) and, for user jobs, the
 * module alive until it is released. The kernel queue's fences stay
 * inside the driver and are gone when the card is removed.
 */
static void spyre_hw_fence_release(struct dma_fence *fence)
{
	struct spyre_ring *ring = container_of(fence->lock, struct spyre_ring, lock);
	bool module_ref = test_bit(SPYRE_HW_FENCE_MODULE_REF, &fence->flags);

	spyre_ring_set_put(ring->set);
	dma_fence_free(fence);
	if (module_ref)
		module_put(THIS_MODULE);
}

static const struct dma_fence_ops spyre_hw_fence_ops = {
	.get_driver_name = spyre_fence_driver_name,
	.get_timeline_name = spyre_fence_timeline_name,
	.release = spyre_hw_fence_release,
};

/* The fence is initialised when the job is first emitted. */
struct dma_fence *spyre_hw_fence_alloc(void)
{
	return kzalloc(sizeof(struct dma_fence), GFP_KERNEL);
}

static void spyre_hw_fence_init_locked(struct spyre_ring *ring, struct spyre_job *job)
{
	lockdep_assert_held(&ring->lock);
	dma_fence_init(job->hw_fence, &spyre_hw_fence_ops, &ring->lock, ring->fence_context,
		       job->seqno);
	kref_get(&ring->set->ref);
	if (!job->queue->kernel) {
		__module_get(THIS_MODULE);
		set_bit(SPYRE_HW_FENCE_MODULE_REF, &job->hw_fence->flags);
	}
	job->emitted = true;
}

static void spyre_ring_set_free(struct kref *ref)
{
	struct spyre_ring_set *set = container_of(ref, struct spyre_ring_set, ref);

	/* Fence readers may still look at a ring's name under RCU. */
	kfree_rcu(set, rcu);
}

struct spyre_ring_set *spyre_ring_set_alloc(unsigned int count)
{
	struct spyre_ring_set *set;
	unsigned int i;

	set = kzalloc(struct_size(set, rings, count), GFP_KERNEL);
	if (!set)
		return NULL;
	kref_init(&set->ref);
	for (i = 0; i < count; i++)
		set->rings[i].set = set;
	return set;
}

void spyre_ring_set_put(struct spyre_ring_set *set)
{
	kref_put(&set->ref, spyre_ring_set_free);
}

static irqreturn_t spyre_ring_irq(int irq, void *arg)
{
	struct spyre_ring *ring = arg;

	spyre_ring_process_completions(ring);
	return IRQ_HANDLED;
}

int spyre_ring_init(struct spyre_device *sdev, struct spyre_ring *ring,
		    unsigned int index, int irq)
{
	struct device *dev = sdev->drm.dev;
	const struct drm_sched_init_args args = {
		.ops = &spyre_sched_ops,
		.submit_wq = sdev->submit_wq,
		.num_rqs = DRM_SCHED_PRIORITY_COUNT,
		.credit_limit = 1U << spyre_ring_order,
		.timeout = msecs_to_jiffies(spyre_job_timeout_ms),
		.timeout_wq = sdev->reset_wq,
		.name = ring->name,
		.dev = dev,
	};
	int ret;

	ring->sdev = sdev;
	ring->index = index;
	ring->engine = index == 0 ? DRM_SPYRE_ENGINE_COMPUTE : DRM_SPYRE_ENGINE_DMA;
	snprintf(ring->name, sizeof(ring->name), "spyre-ring%u", index);
	ring->entries = 1U << spyre_ring_order;
	spin_lock_init(&ring->lock);
	INIT_LIST_HEAD(&ring->pending);
	/* a previous driver (or module load) may have left data on the card */
	ring->sp_client = SPYRE_SP_CLIENT_UNKNOWN;
	ring->fence_context = dma_fence_context_alloc(1);
	ring->irq = irq;

	ring->descs = dmam_alloc_coherent(dev, (size_t)ring->entries * SPYRE_DESC_SIZE,
					  &ring->descs_dma, GFP_KERNEL);
	ring->wb = dmam_alloc_coherent(dev, sizeof(*ring->wb), &ring->wb_dma, GFP_KERNEL);
	ring->records = dmam_alloc_coherent(dev, (size_t)ring->entries * sizeof(*ring->records),
					    &ring->records_dma, GFP_KERNEL);
	if (!ring->descs || !ring->wb || !ring->records) {
		ret = -ENOMEM;
		goto err;
	}

	ret = drm_sched_init(&ring->sched, &args);
	if (ret)
		goto err;

	ret = request_irq(irq, spyre_ring_irq, 0, ring->name, ring);
	if (ret) {
		drm_sched_fini(&ring->sched);
		goto err;
	}
	return 0;

err:
	/* Tells the release path there is no scheduler to tear down. */
	ring->sdev = NULL;
	return ret;
}

void spyre_ring_fini(struct spyre_ring *ring)
{
	if (!ring->sdev)
		return;
	drm_sched_fini(&ring->sched);
	spyre_ring_hw_reset(ring);
	free_irq(ring->irq, ring);
	/* Nothing can complete any more: release what is still pending. */
	spyre_ring_retire_pending(ring, NULL, 0, -ENODEV);
}

/*
 * The card's progress counter inside the running command (interface 1.2);
 * older cards have none: it reads as a constant.
 */
u32 spyre_ring_progress(struct spyre_ring *ring)
{
	if (ring->sdev->hw_version < SPYRE_HW_VERSION(1, 2))
		return 0;
	return spyre_ring_read(ring, SPYRE_RING_PROGRESS);
}

/* Stops the ring and drops its work; software state starts over. */
void spyre_ring_hw_reset(struct spyre_ring *ring)
{
	unsigned long flags;

	spyre_ring_write(ring, SPYRE_RING_CTRL, SPYRE_RING_CTRL_RESET);
	spin_lock_irqsave(&ring->lock, flags);
	ring->tail = 0;
	ring->sp_client = SPYRE_SP_CLIENT_UNKNOWN;
	ring->progress_head = 0;
	ring->progress_count = spyre_ring_progress(ring);
	ring->progress_time = jiffies;
	spin_unlock_irqrestore(&ring->lock, flags);
}

/* Programs base, size and write-back and enables fetching. */
int spyre_ring_hw_start(struct spyre_ring *ring)
{
	u32 status;

	memset(ring->wb, 0, sizeof(*ring->wb));
	ring->wb->completed_seqno = cpu_to_le64(ring->seqno);
	spyre_ring_write(ring, SPYRE_RING_BASE_LO, lower_32_bits(ring->descs_dma));
	spyre_ring_write(ring, SPYRE_RING_BASE_HI, upper_32_bits(ring->descs_dma));
	spyre_ring_write(ring, SPYRE_RING_SIZE_LOG2, spyre_ring_order);
	spyre_ring_write(ring, SPYRE_RING_WB_LO, lower_32_bits(ring->wb_dma));
	spyre_ring_write(ring, SPYRE_RING_WB_HI, upper_32_bits(ring->wb_dma));
	spyre_ring_write(ring, SPYRE_RING_CTRL, SPYRE_RING_CTRL_ENABLE);

	status = spyre_ring_read(ring, SPYRE_RING_STATUS);
	if (!(status & SPYRE_RING_STATUS_ENABLED) || (status & SPYRE_RING_STATUS_ERROR)) {
		drm_err(&ring->sdev->drm, "%s: does not start (status %#x, error %u)\n",
			ring->name, status, spyre_ring_read(ring, SPYRE_RING_ERROR));
		return -EIO;
	}
	return 0;
}

/*
 * Writes the job's descriptors at the tail and rings the doorbell. The
 * scheduler's credits (one per descriptor, as many as the ring holds) make
 * sure the slots are free: a job's credits return only after its FENCE
 * completed, and the card had fetched everything before it by then.
 */
/*
 * Scratchpads keep what the last program left there. When the compute
 * engine passes from one client to another, the job's first LAUNCH asks the
 * card to zero every scratchpad first (interface 1.5), so a program cannot
 * read another process's data. The card scrubs even if the job fails before
 * that LAUNCH runs. Only ring 0 launches programs; called under @ring->lock.
 */
static void spyre_ring_scrub_on_switch(struct spyre_ring *ring, struct spyre_job *job)
{
	u64 client = job->queue->sfile ? job->queue->sfile->drm_client_id : 0;
	union spyre_hw_desc *d;
	u32 i;

	if (ring->engine != DRM_SPYRE_ENGINE_COMPUTE ||
	    ring->sdev->hw_version < SPYRE_HW_VERSION(1, 5))
		return;
	for (i = 0; i < job->ndescs; i++) {
		d = (union spyre_hw_desc *)job->descs + i;
		if (d->hdr.opcode != SPYRE_OP_LAUNCH)
			continue;
		if (ring->sp_client != client)
			d->launch.flags |= SPYRE_DESC_F_SCRUB;
		ring->sp_client = client;
		return;
	}
}

void spyre_ring_emit(struct spyre_ring *ring, struct spyre_job *job)
{
	union spyre_hw_desc *fence_desc;
	u32 mask = ring->entries - 1;
	unsigned long flags;
	u32 i, slot;

	spin_lock_irqsave(&ring->lock, flags);
	/*
	 * A replay after a ring reset gets a fresh seqno: the write-back
	 * restarts from the last seqno given out, so old numbers could look
	 * complete at once.
	 */
	job->seqno = ++ring->seqno;
	if (!job->emitted)
		spyre_hw_fence_init_locked(ring, job);

	fence_desc = (union spyre_hw_desc *)job->descs + job->ndescs - 1;
	spyre_desc_fence_seal(fence_desc, job->seqno, ring->records_dma +
			      (job->seqno & mask) * sizeof(*ring->records));
	memset(&ring->records[job->seqno & mask], 0, sizeof(*ring->records));
	spyre_sem_mark_fence(ring, job, fence_desc);
	spyre_ring_scrub_on_switch(ring, job);

	for (i = 0; i < job->ndescs; i++) {
		slot = (ring->tail + i) & mask;
		memcpy(ring->descs + (size_t)slot * SPYRE_DESC_SIZE,
		       job->descs + (size_t)i * SPYRE_DESC_SIZE, SPYRE_DESC_SIZE);
	}
	job->ring_start = ring->tail;
	job->emit_time = jiffies;
	ring->tail += job->ndescs;
	list_add_tail(&job->link, &ring->pending);
	job->replay = false;

	/* writel orders the descriptor stores before the doorbell. */
	spyre_ring_write(ring, SPYRE_RING_TAIL, ring->tail);
	spin_unlock_irqrestore(&ring->lock, flags);
}

/*
 * Every failed job goes through here, under the ring's lock and before its
 * hardware fence signals: the ring counts it and the queue records it
 * (DRM_IOCTL_SPYRE_QUEUE_ERROR) for whoever sees the fence fail.
 */
static void spyre_job_set_error_locked(struct spyre_ring *ring, struct spyre_job *job, int err)
{
	lockdep_assert_held(&ring->lock);
	atomic64_inc(&ring->jobs_failed);
	spyre_queue_note_failure(job, err);
	dma_fence_set_error(job->hw_fence, err);
}

/*
 * A job that will not run: its hardware fence signals at once with @error.
 * Returned to the scheduler like the fence of a job that ran, so every
 * job's scheduler fences hold a hardware fence, which keeps what they
 * point to alive (spyre_hw_fence_release()).
 */
struct dma_fence *spyre_ring_fail_job(struct spyre_ring *ring, struct spyre_job *job, int error)
{
	unsigned long flags;

	spin_lock_irqsave(&ring->lock, flags);
	job->seqno = ring->seqno;
	spyre_hw_fence_init_locked(ring, job);
	spyre_job_set_error_locked(ring, job, error);
	dma_fence_signal_locked(job->hw_fence);
	spin_unlock_irqrestore(&ring->lock, flags);
	return dma_fence_get(job->hw_fence);
}

/* A card VA that did not translate (1.10): where any command faulted. */
static bool spyre_fault_space_is_va(u16 space)
{
	return space == SPYRE_FAULT_SPACE_VA_READ || space == SPYRE_FAULT_SPACE_VA_WRITE ||
	       space == SPYRE_FAULT_SPACE_VA_EXEC;
}

/*
 * Where a failed LAUNCH stopped: cards from interface 1.6 write it into the
 * completion record's former reserved bytes (zero before). A translation
 * fault (1.10) names its address for any command, with no instruction
 * for a DMA or a program fetch.
 */
static void spyre_job_read_fault(struct spyre_ring *ring, struct spyre_job *job,
				 const struct spyre_hw_completion *rec)
{
	u32 insn = le32_to_cpu(rec->fault_insn);
	u16 space = le16_to_cpu(rec->fault_space);

	if (ring->sdev->hw_version < SPYRE_HW_VERSION(1, 6))
		return;
	if (insn == SPYRE_FAULT_INSN_NONE) {
		if (spyre_fault_space_is_va(space)) {
			job->fault.flags = DRM_SPYRE_FAULT_ADDR_VIRTUAL;
			job->fault.addr = le64_to_cpu(rec->fault_addr);
		}
		return;
	}
	job->fault.flags = DRM_SPYRE_FAULT_LOCATED;
	job->fault.insn = insn;
	job->fault.core = le16_to_cpu(rec->fault_core);
	job->fault.addr = le64_to_cpu(rec->fault_addr);
	if (space == SPYRE_FAULT_SPACE_SCRATCHPAD)
		job->fault.flags |= DRM_SPYRE_FAULT_ADDR_SCRATCHPAD;
	else if (space == SPYRE_FAULT_SPACE_DEVMEM)
		job->fault.flags |= DRM_SPYRE_FAULT_ADDR_DEVICE;
	else if (spyre_fault_space_is_va(space))
		job->fault.flags |= DRM_SPYRE_FAULT_ADDR_VIRTUAL;
	else
		job->fault.addr = 0;
}

static void spyre_job_complete_locked(struct spyre_ring *ring, struct spyre_job *job)
{
	struct spyre_hw_completion *rec = &ring->records[job->seqno & (ring->entries - 1)];
	struct spyre_file *sfile = job->queue->sfile;
	int err;

	lockdep_assert_held(&ring->lock);
	if (le64_to_cpu(rec->seqno) != job->seqno) {
		/* The card reported the FENCE but not this record: trust nothing. */
		job->status = SPYRE_CMD_ERR_INVALID;
		err = -EIO;
	} else {
		job->status = le32_to_cpu(rec->status);
		err = spyre_status_to_errno(job->status);
		job->engine_ns[DRM_SPYRE_ENGINE_COMPUTE] = le64_to_cpu(rec->compute_ns);
		job->engine_ns[DRM_SPYRE_ENGINE_DMA] = le64_to_cpu(rec->dma_ns);
		if (err)
			spyre_job_read_fault(ring, job, rec);
	}
	/* A job that waited for a failed job on the card fails with its error. */
	if (!err || job->status == SPYRE_CMD_ERR_DEP)
		err = spyre_sem_dep_error(job) ?: err;
	if (job->status == SPYRE_CMD_ERR_MEM_UE)
		atomic_set(&ring->sdev->card_reset_pending, 1);
	if (job->cancelled)
		err = -ECANCELED;

	list_del_init(&job->link);
	atomic64_inc(&ring->jobs_done);
	atomic64_inc(&ring->sdev->completions);
	if (err) {
		spyre_job_set_error_locked(ring, job, err);
	} else if (sfile) {
		/*
		 * Account before the fence signals, so a process that waited
		 * for the job sees its engine time in fdinfo (free_job runs
		 * later, from the scheduler's worker). A user queue holds a
		 * reference on its file; the kernel's own queue has none.
		 */
		atomic64_add(job->engine_ns[DRM_SPYRE_ENGINE_COMPUTE],
			     &sfile->engine_ns[DRM_SPYRE_ENGINE_COMPUTE]);
		atomic64_add(job->engine_ns[DRM_SPYRE_ENGINE_DMA],
			     &sfile->engine_ns[DRM_SPYRE_ENGINE_DMA]);
		atomic64_inc(&sfile->jobs_done);
	}
	dma_fence_signal_locked(job->hw_fence);
}

/* Signals the hardware fences of every job the card has finished on @ring. */
void spyre_ring_reap(struct spyre_ring *ring)
{
	struct spyre_job *job, *tmp;
	unsigned long flags;
	u64 done;

	spin_lock_irqsave(&ring->lock, flags);
	done = le64_to_cpu(READ_ONCE(ring->wb->completed_seqno));
	/* The write-back follows the records it covers. */
	dma_rmb();
	if (done > ring->seqno) {
		/* A corrupt write-back: leave the jobs to the timeout handler. */
		spin_unlock_irqrestore(&ring->lock, flags);
		return;
	}
	list_for_each_entry_safe(job, tmp, &ring->pending, link) {
		if (job->seqno > done)
			break;
		spyre_job_complete_locked(ring, job);
	}
	spin_unlock_irqrestore(&ring->lock, flags);
}

/* Completion interrupt work: the ring's finished jobs, after those they waited for. */
void spyre_ring_process_completions(struct spyre_ring *ring)
{
	spyre_sem_reap_deps(ring);
	spyre_ring_reap(ring);
	if (atomic_read(&ring->sdev->card_reset_pending))
		spyre_schedule_card_reset(ring->sdev);
}

/*
 * After a reset or at removal: finishes every job still on the ring. The
 * guilty job gets @guilty_error; jobs of its queue, if banned, get
 * -ECANCELED; others get @other_error or, when @other_error is 0, are
 * marked to be written again to the fresh ring (spyre_recovery.c).
 */
void spyre_ring_retire_pending(struct spyre_ring *ring, struct spyre_job *guilty,
			       int guilty_error, int other_error)
{
	struct spyre_job *job, *tmp;
	unsigned long flags;
	int err;

	spin_lock_irqsave(&ring->lock, flags);
	list_for_each_entry_safe(job, tmp, &ring->pending, link) {
		list_del_init(&job->link);
		if (job->cancelled)
			err = -ECANCELED;
		else if (job == guilty)
			err = guilty_error;
		else if (guilty && job->queue == guilty->queue && READ_ONCE(job->queue->banned))
			err = -ECANCELED;
		else
			err = other_error;
		if (!err) {
			job->replay = true;
			continue;
		}
		spyre_job_set_error_locked(ring, job, err);
		dma_fence_signal_locked(job->hw_fence);
	}
	spin_unlock_irqrestore(&ring->lock, flags);
}

/*
 * Cancels the work of a killed process's queue that the card has not
 * started: with the ring paused (no fetching, no doorbell), every
 * descriptor of the queue's jobs at or past the head becomes a NOP, so
 * only the jobs' FENCEs run and their fences signal -ECANCELED. Other
 * queues' jobs on the ring are untouched.
 */
void spyre_ring_cancel_queue(struct spyre_ring *ring, struct spyre_queue *queue)
{
	u32 mask = ring->entries - 1;
	struct spyre_job *job;
	unsigned long flags;
	u32 head, i, idx;
	bool any = false;

	spin_lock_irqsave(&ring->lock, flags);
	list_for_each_entry(job, &ring->pending, link)
		any |= job->queue == queue;
	if (!any)
		goto out;

	spyre_ring_write(ring, SPYRE_RING_CTRL, 0);
	head = spyre_ring_read(ring, SPYRE_RING_HEAD);
	list_for_each_entry(job, &ring->pending, link) {
		if (job->queue != queue)
			continue;
		job->cancelled = true;
		for (i = 0; i + 1 < job->ndescs; i++) {
			idx = job->ring_start + i;
			if ((s32)(idx - head) >= 0)
				spyre_desc_nop((union spyre_hw_desc *)ring->descs + (idx & mask));
		}
	}
	/* writel orders the NOPs before the card fetches again. */
	spyre_ring_write(ring, SPYRE_RING_CTRL, SPYRE_RING_CTRL_ENABLE);
out:
	spin_unlock_irqrestore(&ring->lock, flags);
}
