// SPDX-License-Identifier: GPL-2.0-only
/*
 * Spyre SUBMIT: validation of a submission and its translation to card
 * descriptors.
 *
 * Everything the card will touch is decided here: each command names BOs
 * by handle, the handles are looked up in the caller's file only, each
 * range is checked against its BO, and only then are card addresses
 * written into the job's descriptors. The job keeps a reference on every
 * BO it uses until it is freed, so memory can never be reused while the
 * card may still access it. Nothing is queued until everything checked out.
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#include <linux/dma-fence-chain.h>
#include <linux/dma-resv.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>
#include <drm/drm_syncobj.h>
#include <uapi/drm/spyre_accel.h>

#include "spyre_desc.h"
#include "spyre_gem.h"
#include "spyre_job.h"
#include "spyre_queue.h"
#include "spyre_ring.h"
#include "spyre_submit.h"
#include "spyre_vm.h"

/* Size of the first version of the growable uAPI elements. */
#define SPYRE_CMD_SIZE_V1	sizeof(struct drm_spyre_cmd)
#define SPYRE_SYNC_SIZE_V1	sizeof(struct drm_spyre_sync)
#define SPYRE_RANGE_SIZE_V1	sizeof(struct drm_spyre_bo_range)
/* Largest element stride: unknown trailing bytes are checked to be zero. */
#define SPYRE_MAX_STRIDE	4096

/**
 * struct spyre_submit - state of one SUBMIT while it is being checked
 * @file: calling file; every handle is looked up here
 * @job: the job being built
 * @handles: GEM handle -> index + 1 in job->bos, so each BO is taken once
 * @max_bos: room in job->bos
 * @max_descs: room in job->descs for the commands (the FENCE has its own)
 * @va: DRM_SPYRE_SUBMIT_VA: the commands name card VAs, job->bos[0] is the
 *	file's VM reservation object
 */
struct spyre_submit {
	struct drm_file *file;
	struct spyre_job *job;
	struct xarray handles;
	u32 max_bos;
	u32 max_descs;
	bool va;
};

static struct spyre_bo *spyre_submit_bo(struct spyre_submit *s, u32 handle, int *err)
{
	struct spyre_job *job = s->job;
	struct drm_gem_object *obj;
	unsigned long idx;
	int ret;

	idx = xa_to_value(xa_load(&s->handles, handle) ?: xa_mk_value(0));
	if (idx)
		return to_spyre_bo(job->bos[idx - 1]);

	if (job->nbos >= s->max_bos) {
		*err = -E2BIG;
		return NULL;
	}
	obj = drm_gem_object_lookup(s->file, handle);
	if (!obj) {
		*err = -ENOENT;
		return NULL;
	}
	ret = xa_err(xa_store(&s->handles, handle, xa_mk_value(job->nbos + 1), GFP_KERNEL));
	if (ret) {
		drm_gem_object_put(obj);
		*err = ret;
		return NULL;
	}
	job->bos[job->nbos++] = obj;
	return to_spyre_bo(obj);
}

/* Looks a BO up and checks [offset, offset + size) lies inside it. */
static struct spyre_bo *spyre_submit_range(struct spyre_submit *s, u32 handle,
					   u64 offset, u64 size, int *err)
{
	struct spyre_bo *bo = spyre_submit_bo(s, handle, err);
	u64 bo_size;

	if (!bo)
		return NULL;
	bo_size = bo->shmem.base.size;
	if (offset > bo_size || size > bo_size - offset) {
		*err = -EINVAL;
		return NULL;
	}
	return bo;
}

static bool spyre_tail_is_zero(const struct drm_spyre_cmd *cmd, size_t used)
{
	return !memchr_inv((const u8 *)cmd->rsvd + used, 0, sizeof(cmd->rsvd) - used);
}

/*
 * A copy with a peer BO (another card's device memory) on one side is peer
 * DMA: the other side must be a device BO of this card.
 */
static int spyre_cmd_copy_peer(struct spyre_submit *s, const struct drm_spyre_cmd_copy *c,
			       struct spyre_bo *src, struct spyre_bo *dst)
{
	bool to_peer = dst->placement == DRM_SPYRE_PLACEMENT_PEER;
	struct spyre_bo *local = to_peer ? src : dst, *peer = to_peer ? dst : src;

	if (local->placement != DRM_SPYRE_PLACEMENT_DEVICE)
		return -EINVAL;
	/* An unplugged card's BAR may belong to another device by now. */
	if (drm_dev_is_unplugged(&peer->peer_sdev->drm))
		return -ENODEV;
	if (!c->size)
		return 0;
	spyre_desc_dma_peer(spyre_next_desc(s->job), to_peer ? SPYRE_DMA_D2P : SPYRE_DMA_P2D,
			    c->size, local->dev_addr + (to_peer ? c->src_offset : c->dst_offset),
			    peer->peer_dma + (to_peer ? c->dst_offset : c->src_offset));
	return 0;
}

static int spyre_cmd_copy(struct spyre_submit *s, const struct drm_spyre_cmd_copy *c)
{
	struct spyre_bo *src, *dst;
	union spyre_hw_desc *d;
	int err = 0;

	src = spyre_submit_range(s, c->src_handle, c->src_offset, c->size, &err);
	if (!src)
		return err;
	dst = spyre_submit_range(s, c->dst_handle, c->dst_offset, c->size, &err);
	if (!dst)
		return err;
	if (src->placement == DRM_SPYRE_PLACEMENT_PEER ||
	    dst->placement == DRM_SPYRE_PLACEMENT_PEER)
		return spyre_cmd_copy_peer(s, c, src, dst);
	if (src->placement == DRM_SPYRE_PLACEMENT_HOST &&
	    dst->placement == DRM_SPYRE_PLACEMENT_HOST)
		return -EINVAL;
	if (!c->size)
		return 0;

	d = spyre_next_desc(s->job);
	if (src->placement == DRM_SPYRE_PLACEMENT_HOST)
		spyre_desc_dma_host(d, SPYRE_DMA_H2D, c->size, dst->dev_addr + c->dst_offset,
				    src->sg_dma, src->sg_count, c->src_offset);
	else if (dst->placement == DRM_SPYRE_PLACEMENT_HOST)
		spyre_desc_dma_host(d, SPYRE_DMA_D2H, c->size, src->dev_addr + c->src_offset,
				    dst->sg_dma, dst->sg_count, c->dst_offset);
	else
		spyre_desc_dma_d2d(d, c->size, dst->dev_addr + c->dst_offset,
				   src->dev_addr + c->src_offset);
	return 0;
}

static int spyre_cmd_fill(struct spyre_submit *s, const struct drm_spyre_cmd_fill *c)
{
	struct spyre_bo *bo;
	int err = 0;

	if (!IS_ALIGNED(c->offset, 4) || !IS_ALIGNED(c->size, 4))
		return -EINVAL;
	bo = spyre_submit_range(s, c->handle, c->offset, c->size, &err);
	if (!bo)
		return err;
	if (bo->placement != DRM_SPYRE_PLACEMENT_DEVICE)
		return -EINVAL;
	if (!c->size)
		return 0;

	spyre_desc_dma_fill(spyre_next_desc(s->job), c->size, bo->dev_addr + c->offset,
			    c->pattern);
	return 0;
}

static struct spyre_bo *spyre_submit_dev_range(struct spyre_submit *s, u32 handle,
					       u64 offset, u64 size, int *err)
{
	struct spyre_bo *bo = spyre_submit_range(s, handle, offset, size, err);

	if (bo && bo->placement != DRM_SPYRE_PLACEMENT_DEVICE) {
		*err = -EINVAL;
		return NULL;
	}
	return bo;
}

static int spyre_cmd_launch(struct spyre_submit *s, const struct drm_spyre_cmd_launch *c)
{
	struct spyre_job *job = s->job;
	struct drm_spyre_bo_range arg;
	union spyre_hw_desc *a = NULL;
	struct spyre_bo *prog, *ws, *bo;
	u64 ws_addr = 0;
	int err = 0;
	u32 i;

	if (job->queue->engine != DRM_SPYRE_ENGINE_COMPUTE)
		return -EINVAL;
	if (c->nargs > spyre_max_args(job->ring->sdev))
		return -E2BIG;
	/* Large launches may not take more of the ring than MAX_CMDS allows. */
	if (job->ndescs + 1 + DIV_ROUND_UP(c->nargs, SPYRE_ARGS_PER_DESC) > s->max_descs)
		return -E2BIG;
	if (c->nargs &&
	    (c->args_stride < SPYRE_RANGE_SIZE_V1 || c->args_stride > SPYRE_MAX_STRIDE))
		return -EINVAL;
	if (!c->prog_size)
		return -EINVAL;
	prog = spyre_submit_dev_range(s, c->prog_handle, c->prog_offset, c->prog_size, &err);
	if (!prog)
		return err;
	if (c->ws_handle) {
		ws = spyre_submit_dev_range(s, c->ws_handle, c->ws_offset, c->ws_size, &err);
		if (!ws)
			return err;
		ws_addr = ws->dev_addr + c->ws_offset;
	} else if (c->ws_offset || c->ws_size) {
		return -EINVAL;
	}

	spyre_desc_launch(spyre_next_desc(job), c->nargs, prog->dev_addr + c->prog_offset,
			  c->prog_size, ws_addr, c->ws_size);

	for (i = 0; i < c->nargs; i++) {
		void __user *uarg = u64_to_user_ptr(c->args + (u64)i * c->args_stride);

		err = copy_struct_from_user(&arg, sizeof(arg), uarg, c->args_stride);
		if (err)
			return err;
		if (arg.pad)
			return -EINVAL;
		bo = spyre_submit_dev_range(s, arg.handle, arg.offset, arg.size, &err);
		if (!bo)
			return err;
		if (i % SPYRE_ARGS_PER_DESC == 0)
			a = spyre_next_desc(job);
		spyre_desc_arg(a, c->nargs, i, bo->dev_addr + arg.offset, arg.size);
	}
	return 0;
}

static int spyre_cmd_timestamp(struct spyre_submit *s, const struct drm_spyre_cmd_timestamp *c)
{
	union spyre_hw_desc *t;
	struct spyre_bo *bo;
	int err = 0;

	if (c->pad || !IS_ALIGNED(c->offset, 8))
		return -EINVAL;
	bo = spyre_submit_range(s, c->handle, c->offset, sizeof(u64), &err);
	if (!bo)
		return err;
	if (bo->placement == DRM_SPYRE_PLACEMENT_PEER)
		return -EINVAL;

	t = spyre_next_desc(s->job);
	if (bo->placement == DRM_SPYRE_PLACEMENT_DEVICE)
		spyre_desc_timestamp_dev(t, bo->dev_addr + c->offset);
	else
		spyre_desc_timestamp_host(t, bo->sg_dma, bo->sg_count, c->offset);
	return 0;
}

static int spyre_parse_cmd(struct spyre_submit *s, const struct drm_spyre_cmd *cmd)
{
	if (s->va)
		return spyre_vm_parse_cmd(s->job, cmd, s->max_descs);
	if (cmd->flags)
		return -EINVAL;

	switch (cmd->type) {
	case DRM_SPYRE_CMD_NOP:
		if (!spyre_tail_is_zero(cmd, 0))
			return -EINVAL;
		spyre_desc_nop(spyre_next_desc(s->job));
		return 0;
	case DRM_SPYRE_CMD_COPY:
		if (!spyre_tail_is_zero(cmd, sizeof(cmd->copy)))
			return -EINVAL;
		return spyre_cmd_copy(s, &cmd->copy);
	case DRM_SPYRE_CMD_FILL:
		if (!spyre_tail_is_zero(cmd, sizeof(cmd->fill)))
			return -EINVAL;
		return spyre_cmd_fill(s, &cmd->fill);
	case DRM_SPYRE_CMD_LAUNCH:
		return spyre_cmd_launch(s, &cmd->launch);
	case DRM_SPYRE_CMD_TIMESTAMP:
		if (!spyre_tail_is_zero(cmd, sizeof(cmd->timestamp)))
			return -EINVAL;
		return spyre_cmd_timestamp(s, &cmd->timestamp);
	default:
		return -EINVAL;
	}
}

static int spyre_parse_cmds(struct spyre_submit *s, const struct drm_spyre_submit *args)
{
	struct spyre_job *job = s->job;
	struct drm_spyre_cmd cmd;
	u32 i, lead = 0;
	int ret;

	/* Room in front for the SEM_WAITs of dependencies on other rings. */
	if (args->in_sync_count)
		lead = spyre_sem_lead_slots(job->ring->sdev);
	/* A VA job's SET_CTX counts in the budget: what fits in the ring. */
	s->max_descs = min_t(u64, (u64)args->cmd_count * SPYRE_MAX_DESCS_PER_CMD,
			     spyre_max_job_descs() - s->va);
	/* The commands, the FENCE, and a VA job's SET_CTX (even with no commands). */
	job->descs_alloc = kvmalloc_array((size_t)s->max_descs + 1 + s->va + lead,
					  SPYRE_DESC_SIZE, GFP_KERNEL);
	if (job->descs_alloc)
		job->descs = job->descs_alloc + (size_t)lead * SPYRE_DESC_SIZE;
	/* A copy names two BOs, a launch up to two plus its arguments. */
	s->max_bos = args->cmd_count * (2 + SPYRE_MAX_ARGS);
	job->bos = kvcalloc(max(s->max_bos, 1U), sizeof(*job->bos), GFP_KERNEL);
	if (!job->descs || !job->bos)
		return -ENOMEM;
	if (s->va) {
		u32 ctx;

		/* Held like a BO: its reservation gets the job's fence. */
		job->bos[0] = spyre_vm_job_obj(s->file->driver_priv, &ctx);
		if (!job->bos[0])
			return -EINVAL;
		job->nbos = 1;
		spyre_desc_set_ctx(spyre_next_desc(job), ctx);
	}

	for (i = 0; i < args->cmd_count; i++) {
		void __user *ucmd = u64_to_user_ptr(args->cmds + (u64)i * args->cmd_stride);

		ret = copy_struct_from_user(&cmd, sizeof(cmd), ucmd, args->cmd_stride);
		if (ret)
			return ret;
		/* Every command takes a descriptor; launches check their own. */
		if (job->ndescs >= s->max_descs)
			return -E2BIG;
		ret = spyre_parse_cmd(s, &cmd);
		if (ret)
			return ret;
	}

	/* Seqno and completion record address are filled in when emitted. */
	spyre_desc_fence(spyre_next_desc(job), SPYRE_DESC_F_IRQ);
	return 0;
}

static int spyre_read_sync(const struct drm_spyre_submit *args, u64 array, u32 i,
			   struct drm_spyre_sync *sync)
{
	void __user *usync = u64_to_user_ptr(array + (u64)i * args->sync_stride);
	int ret;

	ret = copy_struct_from_user(sync, sizeof(*sync), usync, args->sync_stride);
	if (ret)
		return ret;
	return sync->flags ? -EINVAL : 0;
}

static int spyre_add_in_syncs(struct spyre_submit *s, const struct drm_spyre_submit *args)
{
	struct spyre_job *job = s->job;
	struct drm_spyre_sync sync;
	struct dma_fence *fence;
	u32 i;
	int ret;

	if (!args->in_sync_count)
		return 0;
	job->in_fences = kcalloc(args->in_sync_count, sizeof(*job->in_fences), GFP_KERNEL);
	if (!job->in_fences)
		return -ENOMEM;

	for (i = 0; i < args->in_sync_count; i++) {
		ret = spyre_read_sync(args, args->in_syncs, i, &sync);
		if (ret)
			return ret;
		ret = drm_syncobj_find_fence(s->file, sync.handle, sync.point, 0, &fence);
		if (ret)
			return ret;
		job->in_fences[job->n_in_fences++] = dma_fence_get(fence);
		ret = spyre_sem_add_dependency(job, fence);
		if (ret)
			return ret;
	}
	/* Ring space for the SEM_WAITs the job may start with. */
	job->base.credits += hweight32(job->wait_rings);
	return 0;
}

/**
 * struct spyre_out_sync - an out-sync resolved before the job is queued
 * @syncobj: the syncobj (reference)
 * @chain: preallocated timeline link, NULL for a binary syncobj
 * @point: timeline point
 */
struct spyre_out_sync {
	struct drm_syncobj *syncobj;
	struct dma_fence_chain *chain;
	u64 point;
};

static void spyre_put_out_syncs(struct spyre_out_sync *out, u32 count)
{
	u32 i;

	for (i = 0; i < count; i++) {
		if (out[i].syncobj)
			drm_syncobj_put(out[i].syncobj);
		dma_fence_chain_free(out[i].chain);
	}
	kfree(out);
}

static int spyre_get_out_syncs(struct spyre_submit *s, const struct drm_spyre_submit *args,
			       struct spyre_out_sync **out_syncs)
{
	struct spyre_out_sync *out;
	struct drm_spyre_sync sync;
	u32 i;
	int ret;

	*out_syncs = NULL;
	if (!args->out_sync_count)
		return 0;
	out = kcalloc(args->out_sync_count, sizeof(*out), GFP_KERNEL);
	if (!out)
		return -ENOMEM;
	*out_syncs = out;

	for (i = 0; i < args->out_sync_count; i++) {
		ret = spyre_read_sync(args, args->out_syncs, i, &sync);
		if (ret)
			return ret;
		out[i].syncobj = drm_syncobj_find(s->file, sync.handle);
		if (!out[i].syncobj)
			return -ENOENT;
		out[i].point = sync.point;
		if (sync.point) {
			struct dma_fence *prev = drm_syncobj_fence_get(out[i].syncobj);
			bool stale = prev && to_dma_fence_chain(prev) && prev->seqno >= sync.point;

			dma_fence_put(prev);
			if (stale)
				return -EINVAL;
			out[i].chain = dma_fence_chain_alloc();
			if (!out[i].chain)
				return -ENOMEM;
		}
	}
	return 0;
}

static int spyre_check_submit_args(const struct drm_spyre_submit *args)
{
	if ((args->flags & ~DRM_SPYRE_SUBMIT_VA) || args->pad)
		return -EINVAL;
	/* The job must fit in the ring: DRM_SPYRE_PARAM_MAX_CMDS, not the fixed cap. */
	if (args->cmd_count > spyre_max_cmds() ||
	    args->in_sync_count > SPYRE_MAX_SYNCS || args->out_sync_count > SPYRE_MAX_SYNCS)
		return -E2BIG;
	if (args->cmd_count &&
	    (args->cmd_stride < SPYRE_CMD_SIZE_V1 || args->cmd_stride > SPYRE_MAX_STRIDE))
		return -EINVAL;
	if ((args->in_sync_count || args->out_sync_count) &&
	    (args->sync_stride < SPYRE_SYNC_SIZE_V1 || args->sync_stride > SPYRE_MAX_STRIDE))
		return -EINVAL;
	return 0;
}

/*
 * Queues the checked job. The only failure left is a queue destroyed by
 * another thread since the lookup; after the arm nothing can fail.
 */
/*
 * Arm the job, publish its fence and push it. Once pushed, the job may run,
 * complete and be freed at any moment, so everything that reads the job
 * (its BOs' reservations, which are unlocked here on success) happens
 * before the push.
 */
static int spyre_push_job(struct spyre_job *job, struct spyre_out_sync *out, u32 n_out,
			  struct ww_acquire_ctx *acquire)
{
	struct spyre_queue *queue = job->queue;
	struct dma_fence *finished;
	u32 i;

	mutex_lock(&queue->submit_lock);
	if (queue->destroyed) {
		mutex_unlock(&queue->submit_lock);
		return -ENOENT;
	}
	drm_sched_job_arm(&job->base);
	finished = dma_fence_get(&job->base.s_fence->finished);
	dma_fence_put(queue->last_scheduled);
	queue->last_scheduled = dma_fence_get(&job->base.s_fence->scheduled);
	job->queue_seq = atomic64_inc_return(&queue->jobs_submitted);
	job->out_point = n_out ? out[0].point : 0;

	/* BO_WAIT and dma-buf users see the job through the BOs' fences. */
	for (i = 0; i < job->nbos; i++)
		dma_resv_add_fence(job->bos[i]->resv, finished, DMA_RESV_USAGE_WRITE);
	drm_gem_unlock_reservations(job->bos, job->nbos, acquire);

	for (i = 0; i < n_out; i++) {
		if (out[i].chain) {
			drm_syncobj_add_point(out[i].syncobj, out[i].chain, finished, out[i].point);
			out[i].chain = NULL;
		} else {
			drm_syncobj_replace_fence(out[i].syncobj, finished);
		}
	}
	drm_sched_entity_push_job(&job->base);
	mutex_unlock(&queue->submit_lock);
	dma_fence_put(finished);
	return 0;
}

int spyre_submit_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct spyre_file *sfile = file->driver_priv;
	struct drm_spyre_submit *args = data;
	struct spyre_out_sync *out = NULL;
	struct spyre_submit s = { .file = file };
	struct ww_acquire_ctx acquire;
	struct spyre_queue *queue;
	struct spyre_job *job;
	bool job_inited = false;
	u32 i;
	int ret, idx;

	ret = spyre_check_submit_args(args);
	if (ret)
		return ret;
	queue = spyre_queue_lookup(sfile, args->queue_id);
	if (!queue)
		return -ENOENT;
	if (READ_ONCE(queue->banned)) {
		spyre_queue_put(queue);
		return -ECANCELED;
	}
	if (!drm_dev_enter(drm, &idx)) {
		spyre_queue_put(queue);
		return -ENODEV;
	}

	job = kzalloc(sizeof(*job), GFP_KERNEL);
	if (!job) {
		spyre_queue_put(queue);
		ret = -ENOMEM;
		goto out_exit;
	}
	job->queue = queue;
	job->ring = queue->ring;
	INIT_LIST_HEAD(&job->link);
	s.job = job;
	s.va = args->flags & DRM_SPYRE_SUBMIT_VA;
	xa_init(&s.handles);

	job->hw_fence = spyre_hw_fence_alloc();
	if (!job->hw_fence) {
		ret = -ENOMEM;
		goto out_free;
	}
	ret = spyre_parse_cmds(&s, args);
	if (ret)
		goto out_free;

	ret = drm_sched_job_init(&job->base, &queue->entity, job->ndescs, queue,
				 sfile->drm_client_id);
	if (ret)
		goto out_free;
	job_inited = true;

	ret = spyre_add_in_syncs(&s, args);
	if (ret)
		goto out_free;
	ret = spyre_get_out_syncs(&s, args, &out);
	if (ret)
		goto out_free;

	ret = drm_gem_lock_reservations(job->bos, job->nbos, &acquire);
	if (ret)
		goto out_free;
	for (i = 0; i < job->nbos; i++) {
		ret = dma_resv_reserve_fences(job->bos[i]->resv, 1);
		if (ret) {
			drm_gem_unlock_reservations(job->bos, job->nbos, &acquire);
			goto out_free;
		}
	}
	ret = spyre_push_job(job, out, args->out_sync_count, &acquire);
	if (ret)
		drm_gem_unlock_reservations(job->bos, job->nbos, &acquire);
	else
		job = NULL;	/* the scheduler's now, maybe freed already */

out_free:
	if (job) {
		if (job_inited)
			drm_sched_job_cleanup(&job->base);
		spyre_job_free(job);
	}
	if (out)
		spyre_put_out_syncs(out, args->out_sync_count);
	xa_destroy(&s.handles);
out_exit:
	drm_dev_exit(idx);
	return ret;
}
