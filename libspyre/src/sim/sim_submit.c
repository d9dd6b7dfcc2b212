// SPDX-License-Identifier: MIT
/*
 * Sim backend: SUBMIT, as the driver's spyre_submit.c. A submission is
 * checked completely (handles looked up in this device only, every range
 * inside its BO, reserved bytes zero) and translated into card
 * descriptors (handles become device addresses or scatter lists) before
 * anything is queued; sim_driver.c then runs the job.
 */
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#define USED_COPY sizeof(struct drm_spyre_cmd_copy)
#define USED_FILL sizeof(struct drm_spyre_cmd_fill)
#define USED_LAUNCH sizeof(struct drm_spyre_cmd_launch)
#define USED_TS sizeof(struct drm_spyre_cmd_timestamp)

static bool zero_from(const void *p, size_t from, size_t to)
{
	const uint8_t *b = p;

	for (; from < to; from++)
		if (b[from])
			return false;
	return true;
}

static bool range_ok(uint64_t off, uint64_t len, uint64_t size)
{
	return len <= size && off <= size - len;
}

static uint32_t cmd_descs(const struct drm_spyre_cmd *c)
{
	if (c->type == DRM_SPYRE_CMD_LAUNCH)
		return 1 + (c->launch.nargs + SPYRE_ARGS_PER_DESC - 1) / SPYRE_ARGS_PER_DESC;
	return 1;
}

/* Keep a reference to @bo for the job's lifetime. */
static void sim_job_hold(struct sim_job *job, struct sim_bo *bo)
{
	bo->refs++;
	job->bos[job->nbos++] = bo;
}

static int sim_submit_bo(struct sim *sim, uint32_t handle, struct sim_bo **bo)
{
	*bo = sim_bo_lookup(sim, handle);
	return *bo ? 0 : -ENOENT;
}

/* As the driver: a peer BO is one side of a copy with a device BO. */
static int sim_cmd_copy_peer(const struct drm_spyre_cmd_copy *c, union spyre_hw_desc *d,
			     struct sim_bo *src, struct sim_bo *dst)
{
	bool to_peer = dst->placement == DRM_SPYRE_PLACEMENT_PEER;
	struct sim_bo *local = to_peer ? src : dst, *peer = to_peer ? dst : src;

	if (local->placement != DRM_SPYRE_PLACEMENT_DEVICE)
		return -EINVAL;
	spyre_desc_dma_peer(d, to_peer ? SPYRE_DMA_D2P : SPYRE_DMA_P2D, c->size,
			    local->dev_addr + (to_peer ? c->src_offset : c->dst_offset),
			    peer->dev_addr + (to_peer ? c->dst_offset : c->src_offset));
	return 0;
}

static int sim_cmd_copy(struct sim *sim, const struct drm_spyre_cmd_copy *c,
			union spyre_hw_desc *d, struct sim_job *job)
{
	struct sim_bo *src, *dst;
	int ret;

	if ((ret = sim_submit_bo(sim, c->src_handle, &src)) ||
	    (ret = sim_submit_bo(sim, c->dst_handle, &dst)))
		return ret;
	if (!range_ok(c->src_offset, c->size, src->size) ||
	    !range_ok(c->dst_offset, c->size, dst->size))
		return -EINVAL;
	if (src->placement == DRM_SPYRE_PLACEMENT_PEER ||
	    dst->placement == DRM_SPYRE_PLACEMENT_PEER) {
		if ((ret = sim_cmd_copy_peer(c, d, src, dst)))
			return ret;
	} else if (src->placement == DRM_SPYRE_PLACEMENT_HOST &&
		   dst->placement == DRM_SPYRE_PLACEMENT_HOST) {
		return -EINVAL;
	} else if (src->placement == DRM_SPYRE_PLACEMENT_HOST)
		spyre_desc_dma_host(d, SPYRE_DMA_H2D, c->size, dst->dev_addr + c->dst_offset,
				    (uintptr_t)src->sg, src->sg_count, c->src_offset);
	else if (dst->placement == DRM_SPYRE_PLACEMENT_HOST)
		spyre_desc_dma_host(d, SPYRE_DMA_D2H, c->size, src->dev_addr + c->src_offset,
				    (uintptr_t)dst->sg, dst->sg_count, c->dst_offset);
	else
		spyre_desc_dma_d2d(d, c->size, dst->dev_addr + c->dst_offset,
				   src->dev_addr + c->src_offset);
	sim_job_hold(job, src);
	sim_job_hold(job, dst);
	return 0;
}

static int sim_cmd_fill(struct sim *sim, const struct drm_spyre_cmd_fill *c,
			union spyre_hw_desc *d, struct sim_job *job)
{
	struct sim_bo *bo;
	int ret = sim_submit_bo(sim, c->handle, &bo);

	if (ret)
		return ret;
	if (bo->placement != DRM_SPYRE_PLACEMENT_DEVICE || ((c->offset | c->size) & 3) ||
	    !range_ok(c->offset, c->size, bo->size))
		return -EINVAL;
	spyre_desc_dma_fill(d, c->size, bo->dev_addr + c->offset, c->pattern);
	sim_job_hold(job, bo);
	return 0;
}

static int sim_cmd_launch(struct sim *sim, struct sim_queue *q,
			  const struct drm_spyre_cmd_launch *c, union spyre_hw_desc *d,
			  struct sim_job *job)
{
	struct sim_bo *prog, *ws = NULL, *bo;
	const uint8_t *arr = (const uint8_t *)(uintptr_t)c->args;
	uint32_t i;
	int ret;

	if (q->engine != DRM_SPYRE_ENGINE_COMPUTE)
		return -EINVAL;
	if (c->nargs > SPYRE_MAX_ARGS)
		return -E2BIG;
	if (c->nargs && (c->args_stride < sizeof(struct drm_spyre_bo_range) || !arr))
		return -EINVAL;
	if ((ret = sim_submit_bo(sim, c->prog_handle, &prog)))
		return ret;
	if (prog->placement != DRM_SPYRE_PLACEMENT_DEVICE || !c->prog_size ||
	    !range_ok(c->prog_offset, c->prog_size, prog->size))
		return -EINVAL;
	if (c->ws_handle) {
		if ((ret = sim_submit_bo(sim, c->ws_handle, &ws)))
			return ret;
		if (ws->placement != DRM_SPYRE_PLACEMENT_DEVICE ||
		    !range_ok(c->ws_offset, c->ws_size, ws->size))
			return -EINVAL;
	} else if (c->ws_offset || c->ws_size) {
		return -EINVAL;
	}
	spyre_desc_launch(d, c->nargs, prog->dev_addr + c->prog_offset, c->prog_size,
			  ws ? ws->dev_addr + c->ws_offset : 0, ws ? c->ws_size : 0);
	sim_job_hold(job, prog);
	if (ws)
		sim_job_hold(job, ws);
	for (i = 0; i < c->nargs; i++) {
		struct drm_spyre_bo_range r;

		memcpy(&r, arr + (size_t)i * c->args_stride, sizeof(r));
		if (!zero_from(arr + (size_t)i * c->args_stride, sizeof(r), c->args_stride))
			return -E2BIG;
		if ((ret = sim_submit_bo(sim, r.handle, &bo)))
			return ret;
		if (r.pad || bo->placement != DRM_SPYRE_PLACEMENT_DEVICE ||
		    !range_ok(r.offset, r.size, bo->size))
			return -EINVAL;
		spyre_desc_arg(&d[1 + i / SPYRE_ARGS_PER_DESC], c->nargs, i, bo->dev_addr + r.offset,
			       r.size);
		sim_job_hold(job, bo);
	}
	return 0;
}

static int sim_cmd_timestamp(struct sim *sim, const struct drm_spyre_cmd_timestamp *c,
			     union spyre_hw_desc *d, struct sim_job *job)
{
	struct sim_bo *bo;
	int ret = sim_submit_bo(sim, c->handle, &bo);

	if (ret)
		return ret;
	if (c->pad || (c->offset & 7) || !range_ok(c->offset, 8, bo->size) ||
	    bo->placement == DRM_SPYRE_PLACEMENT_PEER)
		return -EINVAL;
	if (bo->placement == DRM_SPYRE_PLACEMENT_DEVICE)
		spyre_desc_timestamp_dev(d, bo->dev_addr + c->offset);
	else
		spyre_desc_timestamp_host(d, (uintptr_t)bo->sg, bo->sg_count, c->offset);
	sim_job_hold(job, bo);
	return 0;
}

/* Check and translate one command into descriptors at @d. */
static int sim_parse_cmd(struct sim *sim, struct sim_queue *q, const struct drm_spyre_cmd *c,
			 union spyre_hw_desc *d, struct sim_job *job)
{
	if (c->flags)
		return -EINVAL;
	switch (c->type) {
	case DRM_SPYRE_CMD_NOP:
		if (!zero_from(c, 8, sizeof(*c)))
			return -EINVAL;
		spyre_desc_nop(d);
		return 0;
	case DRM_SPYRE_CMD_COPY:
		if (!zero_from(c, 8 + USED_COPY, sizeof(*c)))
			return -EINVAL;
		return sim_cmd_copy(sim, &c->copy, d, job);
	case DRM_SPYRE_CMD_FILL:
		if (!zero_from(c, 8 + USED_FILL, sizeof(*c)))
			return -EINVAL;
		return sim_cmd_fill(sim, &c->fill, d, job);
	case DRM_SPYRE_CMD_LAUNCH:
		return sim_cmd_launch(sim, q, &c->launch, d, job);
	case DRM_SPYRE_CMD_TIMESTAMP:
		if (!zero_from(c, 8 + USED_TS, sizeof(*c)))
			return -EINVAL;
		return sim_cmd_timestamp(sim, &c->timestamp, d, job);
	}
	return -EINVAL;
}

static int sim_check_syncs(const struct drm_spyre_submit *sub)
{
	if (sub->in_sync_count > SIM_MAX_SYNCS || sub->out_sync_count > SIM_MAX_SYNCS)
		return -E2BIG;
	if ((sub->in_sync_count || sub->out_sync_count) &&
	    sub->sync_stride < sizeof(struct drm_spyre_sync))
		return -EINVAL;
	return 0;
}

static const struct drm_spyre_sync *sync_at(uint64_t base, uint32_t stride, uint32_t i)
{
	return (const struct drm_spyre_sync *)(uintptr_t)(base + (uint64_t)i * stride);
}


/*
 * A signalled fence carrying the error of @point of @so, which signalled
 * before the job was submitted; NULL when it succeeded (nothing to wait
 * for) or when there is no memory (the job then runs, as it used to).
 * The caller takes the reference it adds.
 */
static struct sim_fence *signalled_error_fence(struct sim_syncobj *so, uint64_t point)
{
	struct sim_fence *f;
	unsigned int i;
	int err = 0;

	for (i = 0; i < so->nerrs; i++)
		if (so->errs[i].point == point)
			err = so->errs[i].error;
	if (!err || !(f = calloc(1, sizeof(*f))))
		return NULL;
	f->signaled = true;
	f->error = err;
	f->dev_end = so->dev_upto;
	return f;	/* refs 0: the job's reference is taken below */
}
int sim_submit_ioctl(spyre_device *dev, struct sim *sim, const struct drm_spyre_submit *sub)
{
	struct sim_queue *q;
	struct sim_job *job;
	uint32_t i, ndescs = 1, nbos = 0;
	union spyre_hw_desc *d;
	int ret;

	(void)dev;
	if (sim->lost)
		return -ENODEV;
	if (!sub->queue_id || sub->queue_id > SIM_MAX_QUEUES ||
	    !(q = sim->queues[sub->queue_id - 1]) || q->dead)
		return -ENOENT;
	if (q->banned)
		return -ECANCELED;
	if (sub->flags || sub->pad)
		return -EINVAL;
	if (sub->cmd_count > SIM_MAX_CMDS)
		return -E2BIG;
	if (sub->cmd_count && (sub->cmd_stride < sizeof(struct drm_spyre_cmd) || !sub->cmds))
		return -EINVAL;
	ret = sim_check_syncs(sub);
	if (ret)
		return ret;
	for (i = 0; i < sub->cmd_count; i++) {
		const uint8_t *p =
			(const uint8_t *)(uintptr_t)sub->cmds + (size_t)i * sub->cmd_stride;
		const struct drm_spyre_cmd *c = (const struct drm_spyre_cmd *)p;

		if (!zero_from(p, sizeof(*c), sub->cmd_stride))
			return -E2BIG;
		if (c->type == DRM_SPYRE_CMD_LAUNCH && c->launch.nargs > SPYRE_MAX_ARGS)
			return -E2BIG;
		ndescs += cmd_descs(c);
		nbos += c->type == DRM_SPYRE_CMD_LAUNCH ? 2 + c->launch.nargs : 2;
	}
	/* the driver's ring budget: MAX_CMDS launches of 16 slots (uAPI) */
	if (ndescs - 1 > SIM_MAX_CMDS * SPY_DESCS_PER_CMD)
		return -E2BIG;
	job = calloc(1, sizeof(*job));
	if (!job)
		return -ENOMEM;
	job->descs = calloc(ndescs, SPYRE_DESC_SIZE);
	job->bos = calloc(nbos ? nbos : 1, sizeof(*job->bos));
	job->deps = calloc(sub->in_sync_count ? sub->in_sync_count : 1, sizeof(*job->deps));
	job->done = sim_fence_new();
	if (!job->descs || !job->bos || !job->deps || !job->done) {
		ret = -ENOMEM;
		goto fail;
	}
	d = (union spyre_hw_desc *)job->descs;
	for (i = 0; i < sub->cmd_count; i++) {
		const struct drm_spyre_cmd *c = (const struct drm_spyre_cmd *)
			((const uint8_t *)(uintptr_t)sub->cmds + (size_t)i * sub->cmd_stride);

		ret = sim_parse_cmd(sim, q, c, d, job);
		if (ret)
			goto fail;
		d += cmd_descs(c);
	}
	job->ndescs = ndescs;	/* the FENCE is filled in when the job reaches the ring */
	job->ready_dev = sim->observed;	/* the host saw nothing later than this */
	for (i = 0; i < sub->in_sync_count; i++) {
		const struct drm_spyre_sync *s = sync_at(sub->in_syncs, sub->sync_stride, i);
		struct sim_syncobj *so = sim_syncobj_lookup(sim, s->handle);
		struct sim_fence *f;

		if (!so) {
			ret = -ENOENT;
			goto fail;
		}
		if (s->flags) {
			ret = -EINVAL;
			goto fail;
		}
		f = sim_syncobj_find(so, s->point ? s->point : so->last, &ret);
		if (ret)
			goto fail;
		if (!f && sim_syncobj_point_dev(so, s->point) > job->ready_dev)
			job->ready_dev = sim_syncobj_point_dev(so, s->point);
		if (!f)	/* signalled already: its error still reaches the job */
			f = signalled_error_fence(so, s->point ? s->point : so->last);
		if (f) {
			f->refs++;
			job->deps[job->ndeps++] = f;
		}
	}
	for (i = 0; i < sub->out_sync_count; i++) {
		const struct drm_spyre_sync *s = sync_at(sub->out_syncs, sub->sync_stride, i);
		struct sim_syncobj *so = sim_syncobj_lookup(sim, s->handle);

		if (!so) {
			ret = -ENOENT;
			goto fail;
		}
		if (s->flags || (s->point && s->point <= so->last)) {
			ret = -EINVAL;
			goto fail;
		}
	}
	/* Everything checked: from here on the submission takes effect. */
	for (i = 0; i < sub->out_sync_count; i++) {
		const struct drm_spyre_sync *s = sync_at(sub->out_syncs, sub->sync_stride, i);
		struct sim_syncobj *so = sim_syncobj_lookup(sim, s->handle);

		sim_syncobj_add(sim, so, s->point ? s->point : so->last + 1, job->done);
	}
	job->queue = q;
	job->ring = q->ring;
	job->queue_seq = ++q->jobs;
	job->fault = (struct spy_fault){ .core = -1, .insn = -1 };	/* set if it fails */
	job->out_point = sub->out_sync_count ? sync_at(sub->out_syncs, sub->sync_stride, 0)->point : 0;
	if (q->tail)
		q->tail->next = job;
	else
		q->head = job;
	q->tail = job;
	/*
	 * Like the driver's scheduler, put a job whose in-fences signalled on
	 * its ring now, not when the card thread next looks: the doorbell time
	 * is the submission time (register writes are allowed while the card
	 * thread runs a long command with the lock dropped).
	 */
	if (!sim->stop && !sim->lost)
		sim_run_jobs(sim);
	sim_kick(sim);
	return 0;
fail:
	sim_job_free(sim, job);
	return ret;
}
