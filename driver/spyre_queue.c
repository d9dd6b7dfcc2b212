// SPDX-License-Identifier: GPL-2.0-only
/*
 * Spyre user queues. A queue is one scheduler entity on one hardware ring:
 * compute queues share ring 0, DMA queues are spread over the other rings.
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#include <linux/capability.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_print.h>
#include <uapi/drm/spyre_accel.h>

#include "spyre_drv.h"
#include "spyre_job.h"
#include "spyre_queue.h"
#include "spyre_ring.h"

static void spyre_queue_release(struct kref *ref)
{
	struct spyre_queue *queue = container_of(ref, struct spyre_queue, ref);

	atomic_dec(&queue->ring->queues);
	if (queue->sfile)
		spyre_file_put(queue->sfile);
	mutex_destroy(&queue->submit_lock);
	kfree(queue);
}

void spyre_queue_put(struct spyre_queue *queue)
{
	kref_put(&queue->ref, spyre_queue_release);
}

struct spyre_queue *spyre_queue_lookup(struct spyre_file *sfile, u32 id)
{
	struct spyre_queue *queue;

	xa_lock(&sfile->queues);
	queue = xa_load(&sfile->queues, id);
	if (queue)
		kref_get(&queue->ref);
	xa_unlock(&sfile->queues);
	return queue;
}

static struct spyre_ring *spyre_pick_ring(struct spyre_device *sdev, u32 engine)
{
	unsigned int n;

	if (engine == DRM_SPYRE_ENGINE_COMPUTE || sdev->num_rings == 1)
		return &sdev->rings[0];
	n = (unsigned int)atomic_fetch_inc(&sdev->next_dma_ring);
	return &sdev->rings[1 + n % (sdev->num_rings - 1)];
}

static const enum drm_sched_priority spyre_sched_prio[] = {
	[DRM_SPYRE_PRIORITY_LOW] = DRM_SCHED_PRIORITY_LOW,
	[DRM_SPYRE_PRIORITY_NORMAL] = DRM_SCHED_PRIORITY_NORMAL,
	[DRM_SPYRE_PRIORITY_HIGH] = DRM_SCHED_PRIORITY_HIGH,
};

int spyre_queue_create_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct spyre_device *sdev = to_spyre_device(drm);
	struct spyre_file *sfile = file->driver_priv;
	struct drm_spyre_queue_create *args = data;
	struct drm_gpu_scheduler *sched;
	struct spyre_queue *queue;
	u32 id;
	int ret;

	if (args->flags)
		return -EINVAL;
	if (args->engine != DRM_SPYRE_ENGINE_COMPUTE && args->engine != DRM_SPYRE_ENGINE_DMA)
		return -EINVAL;
	if (args->priority >= ARRAY_SIZE(spyre_sched_prio))
		return -EINVAL;
	if (args->priority == DRM_SPYRE_PRIORITY_HIGH && !capable(CAP_SYS_NICE))
		return -EACCES;

	queue = kzalloc(sizeof(*queue), GFP_KERNEL);
	if (!queue)
		return -ENOMEM;
	kref_init(&queue->ref);
	mutex_init(&queue->submit_lock);
	spin_lock_init(&queue->failure_lock);
	queue->engine = args->engine;
	queue->priority = args->priority;
	queue->ring = spyre_pick_ring(sdev, args->engine);
	atomic_inc(&queue->ring->queues);
	kref_get(&sfile->ref);
	queue->sfile = sfile;

	sched = &queue->ring->sched;
	ret = drm_sched_entity_init(&queue->entity, spyre_sched_prio[args->priority],
				    &sched, 1, NULL);
	if (ret)
		goto err_put;

	/*
	 * The queue is visible to QUEUE_DESTROY as soon as the lock drops,
	 * and its ID is easy to guess: take the ID while still holding it.
	 */
	xa_lock(&sfile->queues);
	ret = __xa_alloc(&sfile->queues, &queue->id, queue, XA_LIMIT(1, SPYRE_MAX_QUEUES),
			 GFP_KERNEL);
	id = queue->id;
	xa_unlock(&sfile->queues);
	if (ret) {
		/* xa_alloc says -EBUSY when every ID is taken. */
		if (ret == -EBUSY)
			ret = -ENOSPC;
		goto err_entity;
	}
	args->queue_id = id;
	return 0;

err_entity:
	drm_sched_entity_destroy(&queue->entity);
err_put:
	spyre_queue_put(queue);
	return ret;
}

/*
 * Tears a queue down once it left the file's table: jobs already handed to
 * the card finish; jobs still waiting for their dependencies after a job
 * timeout are cancelled (their fences signal with -ESRCH).
 */
static void spyre_queue_teardown(struct spyre_queue *queue, bool killed,
				 unsigned long deadline)
{
	struct spyre_device *sdev = queue->ring->sdev;
	struct dma_fence *last;
	int idx;

	mutex_lock(&queue->submit_lock);
	queue->destroyed = true;
	last = queue->last_scheduled;
	queue->last_scheduled = NULL;
	mutex_unlock(&queue->submit_lock);

	if (last && !killed && time_before(jiffies, deadline))
		dma_fence_wait_timeout(last, false, deadline - jiffies);
	dma_fence_put(last);
	/* Not drm_sched_entity_destroy(): its flush could wait forever. */
	drm_sched_entity_fini(&queue->entity);

	/* Nobody waits for a killed process's work: drop what did not start. */
	if (killed && drm_dev_enter(&sdev->drm, &idx)) {
		mutex_lock(&sdev->recovery_lock);
		spyre_ring_cancel_queue(queue->ring, queue);
		mutex_unlock(&sdev->recovery_lock);
		drm_dev_exit(idx);
	}
	spyre_queue_put(queue);
}

int spyre_queue_destroy_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct spyre_file *sfile = file->driver_priv;
	struct drm_spyre_queue_destroy *args = data;
	struct spyre_queue *queue;

	if (args->pad)
		return -EINVAL;
	queue = xa_erase(&sfile->queues, args->queue_id);
	if (!queue)
		return -ENOENT;
	spyre_queue_teardown(queue, false, jiffies + msecs_to_jiffies(spyre_job_timeout_ms));
	return 0;
}

/*
 * Called for every failed job before its hardware fence signals, so that
 * whoever sees the failure through the fence finds the record. The first
 * failure is kept until userspace clears it.
 */
void spyre_queue_note_failure(struct spyre_job *job, int error)
{
	struct spyre_queue *queue = job->queue;
	struct spyre_queue_failure *f = &queue->failure;
	unsigned long flags;

	spin_lock_irqsave(&queue->failure_lock, flags);
	f->failed++;
	if (!f->error) {
		f->error = error;
		f->job = job->queue_seq;
		f->point = job->out_point;
		f->fault = job->fault;
	}
	spin_unlock_irqrestore(&queue->failure_lock, flags);
}

int spyre_queue_error_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct spyre_file *sfile = file->driver_priv;
	struct drm_spyre_queue_error *args = data;
	struct spyre_queue_failure f;
	struct spyre_queue *queue;
	unsigned long flags;

	if (args->flags & ~DRM_SPYRE_QUEUE_ERROR_CLEAR)
		return -EINVAL;
	queue = spyre_queue_lookup(sfile, args->queue_id);
	if (!queue)
		return -ENOENT;
	spin_lock_irqsave(&queue->failure_lock, flags);
	f = queue->failure;
	if (args->flags & DRM_SPYRE_QUEUE_ERROR_CLEAR)
		memset(&queue->failure, 0, sizeof(queue->failure));
	spin_unlock_irqrestore(&queue->failure_lock, flags);
	spyre_queue_put(queue);

	args->error = f.error;
	args->job = f.job;
	args->point = f.point;
	args->failed = f.failed;
	args->fault_flags = f.fault.flags;
	args->fault_insn = f.fault.insn;
	args->fault_core = f.fault.core;
	args->fault_addr = f.fault.addr;
	return 0;
}

/*
 * The file is closing. Like the DRM scheduler on a SIGKILL, the work of a
 * killed process is dropped; otherwise submitted jobs still run, since
 * their fences may have been shared.
 */
void spyre_queues_destroy_all(struct spyre_file *sfile)
{
	bool killed = (current->flags & PF_EXITING) && current->exit_code == SIGKILL;
	/* One wait bound for the whole file, however many queues it has. */
	unsigned long deadline = jiffies + msecs_to_jiffies(spyre_job_timeout_ms);
	struct spyre_queue *queue;
	unsigned long id;

	xa_for_each(&sfile->queues, id, queue) {
		xa_erase(&sfile->queues, id);
		spyre_queue_teardown(queue, killed, deadline);
	}
}

/*
 * The driver's own queue, for clearing device memory the CPU cannot reach.
 * It runs at kernel priority on the last ring and is never banned.
 */
int spyre_kernel_queue_init(struct spyre_device *sdev)
{
	struct drm_gpu_scheduler *sched;
	struct spyre_queue *queue;
	int ret;

	queue = kzalloc(sizeof(*queue), GFP_KERNEL);
	if (!queue)
		return -ENOMEM;
	kref_init(&queue->ref);
	mutex_init(&queue->submit_lock);
	spin_lock_init(&queue->failure_lock);
	queue->engine = DRM_SPYRE_ENGINE_DMA;
	queue->priority = DRM_SPYRE_PRIORITY_HIGH;
	queue->kernel = true;
	queue->ring = &sdev->rings[sdev->num_rings - 1];
	atomic_inc(&queue->ring->queues);
	sched = &queue->ring->sched;
	ret = drm_sched_entity_init(&queue->entity, DRM_SCHED_PRIORITY_KERNEL, &sched, 1, NULL);
	if (ret) {
		spyre_queue_put(queue);
		return ret;
	}
	sdev->kqueue = queue;
	return 0;
}

void spyre_kernel_queue_fini(struct spyre_device *sdev)
{
	if (!sdev->kqueue)
		return;
	spyre_queue_teardown(sdev->kqueue, false,
			     jiffies + msecs_to_jiffies(spyre_job_timeout_ms));
	sdev->kqueue = NULL;
}
