// SPDX-License-Identifier: GPL-2.0-only
/*
 * Spyre jobs: the scheduler backend (run and free; timeouts are in
 * spyre_recovery.c) and the driver's own jobs.
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#include <linux/dma-fence-chain.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>
#include <uapi/drm/spyre_accel.h>

#include "spyre_desc.h"
#include "spyre_job.h"
#include "spyre_peer.h"
#include "spyre_queue.h"
#include "spyre_recovery.h"
#include "spyre_ring.h"

/* Appends a descriptor to a job being built; a spyre_desc_*() encoder fills it. */
union spyre_hw_desc *spyre_next_desc(struct spyre_job *job)
{
	union spyre_hw_desc *desc = (union spyre_hw_desc *)job->descs + job->ndescs;

	job->ndescs++;
	return desc;
}

void spyre_job_free(struct spyre_job *job)
{
	u32 i;

	for (i = 0; i < job->nbos; i++)
		drm_gem_object_put(job->bos[i]);
	for (i = 0; i < job->n_in_fences; i++)
		dma_fence_put(job->in_fences[i]);
	kfree(job->in_fences);
	spyre_sem_job_free(job);
	kvfree(job->bos);
	kvfree(job->descs_alloc ?: job->descs);
	if (job->emitted)
		dma_fence_put(job->hw_fence);
	else
		kfree(job->hw_fence);
	spyre_queue_put(job->queue);
	kfree(job);
}

/*
 * Fills device memory with zeroes through the kernel queue and waits. Used
 * for device memory outside the CPU-visible aperture.
 */
int spyre_kernel_fill(struct spyre_device *sdev, u64 dev_addr, u64 size)
{
	struct spyre_queue *queue = sdev->kqueue;
	struct dma_fence *finished;
	struct spyre_job *job;
	int ret;

	job = kzalloc(sizeof(*job), GFP_KERNEL);
	if (!job)
		return -ENOMEM;
	kref_get(&queue->ref);
	job->queue = queue;
	job->ring = queue->ring;
	INIT_LIST_HEAD(&job->link);
	job->hw_fence = spyre_hw_fence_alloc();
	job->descs = kvmalloc_array(2, SPYRE_DESC_SIZE, GFP_KERNEL);
	if (!job->hw_fence || !job->descs) {
		ret = -ENOMEM;
		goto err;
	}
	spyre_desc_dma_fill(spyre_next_desc(job), size, dev_addr, 0);
	spyre_desc_fence(spyre_next_desc(job), SPYRE_DESC_F_IRQ);

	ret = drm_sched_job_init(&job->base, &queue->entity, job->ndescs, queue, 0);
	if (ret)
		goto err;
	mutex_lock(&queue->submit_lock);
	drm_sched_job_arm(&job->base);
	finished = dma_fence_get(&job->base.s_fence->finished);
	dma_fence_put(queue->last_scheduled);
	queue->last_scheduled = dma_fence_get(&job->base.s_fence->scheduled);
	drm_sched_entity_push_job(&job->base);
	mutex_unlock(&queue->submit_lock);

	/* Bounded by hang detection, which fails the job rather than wait forever. */
	dma_fence_wait(finished, false);
	ret = finished->error;
	dma_fence_put(finished);
	return ret;

err:
	spyre_job_free(job);
	return ret;
}

/* --- scheduler backend --------------------------------------------------- */

static int spyre_job_dependency_error(struct spyre_job *job)
{
	struct dma_fence *fence;
	u32 i;

	for (i = 0; i < job->n_in_fences; i++) {
		fence = dma_fence_chain_contained(job->in_fences[i]);
		if (fence->error)
			return fence->error;
	}
	return 0;
}

/*
 * Writes the job to its ring, once. A job whose queue was banned or whose
 * input failed does not run; its fence carries the error. Writing a job
 * again after a ring reset is recovery's business (spyre_recovery.c).
 */
static struct dma_fence *spyre_run_job(struct drm_sched_job *sched_job)
{
	struct spyre_job *job = to_spyre_job(sched_job);
	struct spyre_device *sdev = job->ring->sdev;
	int err, idx;

	if (READ_ONCE(job->queue->banned))
		return spyre_ring_fail_job(job->ring, job, -ECANCELED);
	/* A job whose input failed would compute on garbage: pass the error on. */
	err = spyre_job_dependency_error(job);
	/* Another card's memory this job copies to or from is gone. */
	if (!err && spyre_peer_job_revoked(job))
		err = -ENODEV;
	if (!err)
		err = spyre_sem_prepare(job);
	if (err)
		return spyre_ring_fail_job(job->ring, job, err);
	if (!drm_dev_enter(&sdev->drm, &idx))
		return spyre_ring_fail_job(job->ring, job, -ENODEV);
	spyre_ring_emit(job->ring, job);
	drm_dev_exit(idx);
	return dma_fence_get(job->hw_fence);
}

static void spyre_free_job(struct drm_sched_job *sched_job)
{
	struct spyre_job *job = to_spyre_job(sched_job);

	drm_sched_job_cleanup(sched_job);
	spyre_job_free(job);
}

const struct drm_sched_backend_ops spyre_sched_ops = {
	.run_job = spyre_run_job,
	.free_job = spyre_free_job,
	.timedout_job = spyre_job_timedout,
};
