// SPDX-License-Identifier: MIT
/*
 * Sim backend: the kernel driver's job path in miniature. A submission is
 * checked and translated into card descriptors (handles become device
 * addresses or scatter lists), held until its in-fences signalled, written
 * to the ring of its queue, and retired from the completion records; a
 * hung ring is reset and its innocent jobs replayed, as the driver does.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
static void job_hold(struct sim_job *job, struct sim_bo *bo)
{
	bo->refs++;
	job->bos[job->nbos++] = bo;
}

static int lookup(struct sim *sim, uint32_t handle, struct sim_bo **bo)
{
	*bo = sim_bo_lookup(sim, handle);
	return *bo ? 0 : -ENOENT;
}

static int emit_copy(struct sim *sim, const struct drm_spyre_cmd_copy *c,
		     union spyre_hw_desc *d, struct sim_job *job)
{
	struct sim_bo *src, *dst;
	int ret;

	if ((ret = lookup(sim, c->src_handle, &src)) || (ret = lookup(sim, c->dst_handle, &dst)))
		return ret;
	if (!range_ok(c->src_offset, c->size, src->size) ||
	    !range_ok(c->dst_offset, c->size, dst->size))
		return -EINVAL;
	if (src->placement == DRM_SPYRE_PLACEMENT_HOST &&
	    dst->placement == DRM_SPYRE_PLACEMENT_HOST)
		return -EINVAL;
	if (src->placement == DRM_SPYRE_PLACEMENT_HOST)
		spyre_desc_dma_host(d, SPYRE_DMA_H2D, c->size, dst->dev_addr + c->dst_offset,
				    (uintptr_t)src->sg, src->sg_count, c->src_offset);
	else if (dst->placement == DRM_SPYRE_PLACEMENT_HOST)
		spyre_desc_dma_host(d, SPYRE_DMA_D2H, c->size, src->dev_addr + c->src_offset,
				    (uintptr_t)dst->sg, dst->sg_count, c->dst_offset);
	else
		spyre_desc_dma_d2d(d, c->size, dst->dev_addr + c->dst_offset,
				   src->dev_addr + c->src_offset);
	job_hold(job, src);
	job_hold(job, dst);
	return 0;
}

static int emit_fill(struct sim *sim, const struct drm_spyre_cmd_fill *c,
		     union spyre_hw_desc *d, struct sim_job *job)
{
	struct sim_bo *bo;
	int ret = lookup(sim, c->handle, &bo);

	if (ret)
		return ret;
	if (bo->placement != DRM_SPYRE_PLACEMENT_DEVICE || ((c->offset | c->size) & 3) ||
	    !range_ok(c->offset, c->size, bo->size))
		return -EINVAL;
	spyre_desc_dma_fill(d, c->size, bo->dev_addr + c->offset, c->pattern);
	job_hold(job, bo);
	return 0;
}

static int emit_launch(struct sim *sim, struct sim_queue *q, const struct drm_spyre_cmd_launch *c,
		       union spyre_hw_desc *d, struct sim_job *job)
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
	if ((ret = lookup(sim, c->prog_handle, &prog)))
		return ret;
	if (prog->placement != DRM_SPYRE_PLACEMENT_DEVICE || !c->prog_size ||
	    !range_ok(c->prog_offset, c->prog_size, prog->size))
		return -EINVAL;
	if (c->ws_handle) {
		if ((ret = lookup(sim, c->ws_handle, &ws)))
			return ret;
		if (ws->placement != DRM_SPYRE_PLACEMENT_DEVICE ||
		    !range_ok(c->ws_offset, c->ws_size, ws->size))
			return -EINVAL;
	} else if (c->ws_offset || c->ws_size) {
		return -EINVAL;
	}
	spyre_desc_launch(d, c->nargs, prog->dev_addr + c->prog_offset, c->prog_size,
			  ws ? ws->dev_addr + c->ws_offset : 0, ws ? c->ws_size : 0);
	job_hold(job, prog);
	if (ws)
		job_hold(job, ws);
	for (i = 0; i < c->nargs; i++) {
		struct drm_spyre_bo_range r;

		memcpy(&r, arr + (size_t)i * c->args_stride, sizeof(r));
		if (!zero_from(arr + (size_t)i * c->args_stride, sizeof(r), c->args_stride))
			return -E2BIG;
		if ((ret = lookup(sim, r.handle, &bo)))
			return ret;
		if (r.pad || bo->placement != DRM_SPYRE_PLACEMENT_DEVICE ||
		    !range_ok(r.offset, r.size, bo->size))
			return -EINVAL;
		spyre_desc_arg(&d[1 + i / SPYRE_ARGS_PER_DESC], c->nargs, i, bo->dev_addr + r.offset,
			       r.size);
		job_hold(job, bo);
	}
	return 0;
}

static int emit_timestamp(struct sim *sim, const struct drm_spyre_cmd_timestamp *c,
			  union spyre_hw_desc *d, struct sim_job *job)
{
	struct sim_bo *bo;
	int ret = lookup(sim, c->handle, &bo);

	if (ret)
		return ret;
	if (c->pad || (c->offset & 7) || !range_ok(c->offset, 8, bo->size))
		return -EINVAL;
	if (bo->placement == DRM_SPYRE_PLACEMENT_DEVICE)
		spyre_desc_timestamp_dev(d, bo->dev_addr + c->offset);
	else
		spyre_desc_timestamp_host(d, (uintptr_t)bo->sg, bo->sg_count, c->offset);
	job_hold(job, bo);
	return 0;
}

/* Check and translate one command into descriptors at @d. */
static int emit(struct sim *sim, struct sim_queue *q, const struct drm_spyre_cmd *c,
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
		return emit_copy(sim, &c->copy, d, job);
	case DRM_SPYRE_CMD_FILL:
		if (!zero_from(c, 8 + USED_FILL, sizeof(*c)))
			return -EINVAL;
		return emit_fill(sim, &c->fill, d, job);
	case DRM_SPYRE_CMD_LAUNCH:
		return emit_launch(sim, q, &c->launch, d, job);
	case DRM_SPYRE_CMD_TIMESTAMP:
		if (!zero_from(c, 8 + USED_TS, sizeof(*c)))
			return -EINVAL;
		return emit_timestamp(sim, &c->timestamp, d, job);
	}
	return -EINVAL;
}

static void job_free(struct sim *sim, struct sim_job *job)
{
	unsigned int i;

	for (i = 0; i < job->nbos; i++)
		sim_bo_put(sim, job->bos[i]);
	for (i = 0; i < job->ndeps; i++)
		sim_fence_put(job->deps[i]);
	sim_fence_put(job->done);
	free(job->bos);
	free(job->deps);
	free(job->descs);
	free(job);
}

static bool schedule(struct sim *sim);

static int check_syncs(const struct drm_spyre_submit *sub)
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

int sim_card_submit(spyre_device *dev, struct sim *sim, const struct drm_spyre_submit *sub)
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
	ret = check_syncs(sub);
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

		ret = emit(sim, q, c, d, job);
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
		schedule(sim);
	sim_card_kick(sim);
	return 0;
fail:
	job_free(sim, job);
	return ret;
}

void sim_card_kick(struct sim *sim)
{
	sim->kicks++;
	pthread_cond_broadcast(&sim->kick);
}

static uint32_t ring_reg(const struct sim_ring *r, uint32_t reg)
{
	return SPYRE_RING_REG(r->index, reg);
}

/* (Re)configure and enable ring @r of the card. */
void sim_ring_start(struct sim *sim, struct sim_ring *r)
{
	uintptr_t base = (uintptr_t)r->descs, wb = (uintptr_t)r->wb;

	memset(r->wb, 0, sizeof(*r->wb));
	r->tail = 0;
	spyre_model_write(sim->model, ring_reg(r, SPYRE_RING_BASE_LO), (uint32_t)base);
	spyre_model_write(sim->model, ring_reg(r, SPYRE_RING_BASE_HI),
			  (uint32_t)((uint64_t)base >> 32));
	spyre_model_write(sim->model, ring_reg(r, SPYRE_RING_SIZE_LOG2), SIM_RING_LOG2);
	spyre_model_write(sim->model, ring_reg(r, SPYRE_RING_WB_LO), (uint32_t)wb);
	spyre_model_write(sim->model, ring_reg(r, SPYRE_RING_WB_HI),
			  (uint32_t)((uint64_t)wb >> 32));
	spyre_model_write(sim->model, ring_reg(r, SPYRE_RING_CTRL), SPYRE_RING_CTRL_ENABLE);
}

/* Write @job's descriptors at the ring's tail, FENCE last, and ring the doorbell. */
static void ring_emit(struct sim *sim, struct sim_ring *r, struct sim_job *job)
{
	uint32_t entries = 1u << SIM_RING_LOG2, i;
	union spyre_hw_desc *f = (union spyre_hw_desc *)job->descs + job->ndescs - 1;

	job->seqno = ++r->seqno;
	spyre_desc_fence(f, SPYRE_DESC_F_IRQ);
	spyre_desc_fence_seal(f, job->seqno, (uintptr_t)&job->record);
	memset(&job->record, 0, sizeof(job->record));
	for (i = 0; i < job->ndescs; i++)
		memcpy(r->descs + (size_t)((r->tail + i) & (entries - 1)) * SPYRE_DESC_SIZE,
		       job->descs + (size_t)i * SPYRE_DESC_SIZE, SPYRE_DESC_SIZE);
	r->tail += job->ndescs;
	job->next = NULL;
	if (r->inflight_tail)
		r->inflight_tail->next = job;
	else
		r->inflight_head = job;
	r->inflight_tail = job;
	spyre_model_write(sim->model, ring_reg(r, SPYRE_RING_TAIL), r->tail);
}

static uint32_t ring_space(const struct sim_ring *r)
{
	uint32_t head = spyre_le32_to_cpu(__atomic_load_n(&r->wb->head, __ATOMIC_ACQUIRE));

	return (1u << SIM_RING_LOG2) - (r->tail - head);
}

static bool deps_signaled(const struct sim_job *job)
{
	unsigned int i;

	for (i = 0; i < job->ndeps; i++)
		if (!job->deps[i]->signaled)
			return false;
	return true;
}

/*
 * Virtual clock: the job is doorbelled at the device time its inputs were
 * ready (its in-fences, and what the host had waited for when it
 * submitted), not at the host time the scheduler happens to run.
 */
static void set_vclock(struct sim *sim, struct sim_job *job)
{
	uint64_t t = job->ready_dev;
	unsigned int i;

	for (i = 0; i < job->ndeps; i++)
		if (job->deps[i]->dev_end > t)
			t = job->deps[i]->dev_end;
	__atomic_store_n(&sim->vclock, t, __ATOMIC_RELAXED);
}

/* The scheduler: move runnable jobs of every queue onto their rings. */
static bool schedule(struct sim *sim)
{
	bool progress = false;
	unsigned int i;

	for (i = 0; i < SIM_MAX_QUEUES; i++) {
		struct sim_queue *q = sim->queues[i];
		struct sim_job *job;

		while (q && (job = q->head) && deps_signaled(job) &&
		       ring_space(job->ring) > job->ndescs) {
			q->head = job->next;
			if (!q->head)
				q->tail = NULL;
			if (sim->virtual_clock)
				set_vclock(sim, job);
			ring_emit(sim, job->ring, job);
			progress = true;
		}
	}
	sim_queue_reap_dead(sim);
	return progress;
}

/* Free destroyed queues whose last job reached the ring. */
void sim_queue_reap_dead(struct sim *sim)
{
	unsigned int i, n;

	for (i = 0; i < SIM_MAX_QUEUES; i++) {
		struct sim_queue *q = sim->queues[i];

		if (!q || !q->dead || q->head)
			continue;
		for (n = 0; n < sim->nrings; n++) {
			struct sim_job *job;

			for (job = sim->rings[n].inflight_head; job; job = job->next)
				if (job->queue == q)
					job->queue = NULL;
		}
		sim->queues[i] = NULL;
		free(q);
	}
}

static void retire(struct sim *sim, struct sim_ring *r, struct sim_job *job, int error)
{
	r->inflight_head = job->next;
	if (!r->inflight_head)
		r->inflight_tail = NULL;
	sim_fence_signal(sim, job->done, error);
	job_free(sim, job);
}

static bool reap(struct sim *sim)
{
	bool progress = false;
	unsigned int n;

	for (n = 0; n < sim->nrings; n++) {
		struct sim_ring *r = &sim->rings[n];
		uint64_t done = spyre_le64_to_cpu(__atomic_load_n(&r->wb->completed_seqno,
								  __ATOMIC_ACQUIRE));
		struct sim_job *job;

		while ((job = r->inflight_head) && job->seqno <= done) {
			int err = spyre_le64_to_cpu(job->record.seqno) == job->seqno ?
					  spyre_status_to_errno(spyre_le32_to_cpu(job->record.status)) :
					  -EIO;

			/* absolute device time of the completion (vclock units) */
			job->done->dev_end = sim->vclock - spyre_model_now(sim->model) +
					     spyre_le64_to_cpu(job->record.end_ns);
			if (job->done->dev_end > sim->vmax)
				sim->vmax = job->done->dev_end;

			retire(sim, r, job, err);
			progress = true;
		}
	}
	return progress;
}

/*
 * Reset ring @r: the guilty job (the oldest) fails with @guilty_err and
 * bans its queue when @ban; the jobs behind it are written again.
 */
static void ring_recover(struct sim *sim, struct sim_ring *r, int guilty_err, bool ban)
{
	struct sim_job *job = r->inflight_head, *replay;

	spyre_model_request_abort(sim->model, true);
	spyre_model_write(sim->model, ring_reg(r, SPYRE_RING_CTRL), SPYRE_RING_CTRL_RESET);
	spyre_model_request_abort(sim->model, false);
	sim->reset_count++;
	if (job) {
		if (ban && job->queue)
			job->queue->banned = true;
		retire(sim, r, job, guilty_err);
	}
	replay = r->inflight_head;
	r->inflight_head = r->inflight_tail = NULL;
	sim_ring_start(sim, r);
	while (replay) {
		struct sim_job *next = replay->next;

		ring_emit(sim, r, replay);
		replay = next;
	}
	r->progress_ns = spy_now_ns();
}

/* A fatal card error: reset the whole card, fail everything in flight. */
static void card_recover(struct sim *sim, int err)
{
	unsigned int n;

	spyre_model_request_abort(sim->model, true);
	spyre_model_write(sim->model, SPYRE_REG_CTRL, SPYRE_CTRL_RESET);
	spyre_model_request_abort(sim->model, false);
	sim->reset_count++;
	for (n = 0; n < sim->nrings; n++) {
		struct sim_ring *r = &sim->rings[n];

		while (r->inflight_head)
			retire(sim, r, r->inflight_head, err);
		sim_ring_start(sim, r);
	}
}

/* Rings whose oldest job made no progress for sim->timeout_ns hung. */
static void check_hangs(struct sim *sim)
{
	uint64_t now = spy_now_ns();
	unsigned int n;

	for (n = 0; n < sim->nrings; n++) {
		struct sim_ring *r = &sim->rings[n];
		uint32_t head = spyre_model_read(sim->model, ring_reg(r, SPYRE_RING_HEAD));
		uint32_t st = spyre_model_read(sim->model, ring_reg(r, SPYRE_RING_STATUS));

		if (!r->inflight_head || head != r->progress_head ||
		    r->wb->completed_seqno != r->progress_seqno) {
			r->progress_head = head;
			r->progress_seqno = r->wb->completed_seqno;
			r->progress_ns = now;
			continue;
		}
		if (st & SPYRE_RING_STATUS_ERROR)
			ring_recover(sim, r, -EIO, false);
		else if (now - r->progress_ns > sim->timeout_ns)
			ring_recover(sim, r, -ETIMEDOUT, true);
	}
}

static bool any_inflight(struct sim *sim)
{
	unsigned int n;

	for (n = 0; n < sim->nrings; n++)
		if (sim->rings[n].inflight_head)
			return true;
	return false;
}

void *sim_card_thread(void *arg)
{
	struct sim *sim = arg;

	pthread_mutex_lock(&sim->lock);
	while (!sim->stop) {
		uint64_t kicks = sim->kicks, wake, now;
		struct timespec ts;
		bool progress;

		if (sim->lost) {
			pthread_cond_wait(&sim->kick, &sim->lock);
			continue;
		}
		progress = schedule(sim);
		wake = spyre_model_process(sim->model);
		if (spyre_model_read(sim->model, SPYRE_REG_STATUS) & SPYRE_STATUS_FATAL)
			card_recover(sim, -EIO);
		progress |= reap(sim);
		check_hangs(sim);
		if (progress || kicks != sim->kicks)
			continue;
		now = spy_now_ns();
		if (any_inflight(sim) && (wake == SPYRE_MODEL_NEVER || wake > now + 20000000))
			wake = now + 20000000;	/* look for hangs every 20 ms */
		if (wake == SPYRE_MODEL_NEVER) {
			pthread_cond_wait(&sim->kick, &sim->lock);
			continue;
		}
		ts.tv_sec = wake / 1000000000ull;
		ts.tv_nsec = wake % 1000000000ull;
		pthread_cond_timedwait(&sim->kick, &sim->lock, &ts);
	}
	pthread_mutex_unlock(&sim->lock);
	return NULL;
}

/* Device lost: every pending and running job fails with -ENODEV. */
void sim_card_lose(struct sim *sim)
{
	unsigned int i;

	sim->lost = true;
	for (i = 0; i < SIM_MAX_QUEUES; i++) {
		struct sim_queue *q = sim->queues[i];

		while (q && q->head) {
			struct sim_job *job = q->head;

			q->head = job->next;
			sim_fence_signal(sim, job->done, -ENODEV);
			job_free(sim, job);
		}
		if (q)
			q->tail = NULL;
	}
	for (i = 0; i < sim->nrings; i++)
		while (sim->rings[i].inflight_head)
			retire(sim, &sim->rings[i], sim->rings[i].inflight_head, -ENODEV);
	sim_card_kick(sim);
}
