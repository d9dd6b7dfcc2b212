// SPDX-License-Identifier: MIT
/*
 * Sim backend: the kernel driver's job path in miniature, shaped like the
 * driver (spyre_ring.c, spyre_job.c, spyre_recovery.c). Checked jobs
 * (sim_submit.c) wait until their in-fences signalled, are written to the
 * ring of their queue and retired from the completion records; a hung
 * ring is reset and its innocent jobs written again, a card error resets
 * the card, all through one recovery function (sim_recover()).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim.h"

void sim_job_free(struct sim *sim, struct sim_job *job)
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

void sim_kick(struct sim *sim)
{
	sim->kicks++;
	pthread_cond_broadcast(&sim->kick);
}

static uint32_t ring_reg(const struct sim_ring *r, uint32_t reg)
{
	return SPYRE_RING_REG(r->index, reg);
}

/* (Re)configure and enable ring @r of the card. */
void sim_ring_hw_start(struct sim *sim, struct sim_ring *r)
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
static void sim_ring_emit(struct sim *sim, struct sim_ring *r, struct sim_job *job)
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

/* The error of a failed in-fence (the first), or 0. */
/*
 * As the driver's spyre_queue_note_failure(): the queue keeps its first
 * failed job until userspace clears the record, written before the job's
 * fence signals.
 */
static void note_failure(struct sim_job *job, int err)
{
	struct spy_queue_error *f;

	if (!err || !job->queue)
		return;
	f = &job->queue->failure;
	f->failed++;
	if (f->error)
		return;
	f->error = err;
	f->job = job->queue_seq;
	f->point = job->out_point;
	f->fault = job->fault;
}

static int deps_error(const struct sim_job *job)
{
	unsigned int i;

	for (i = 0; i < job->ndeps; i++)
		if (job->deps[i]->error)
			return job->deps[i]->error;
	return 0;
}

/*
 * As the driver's run_job: a job whose input failed would compute on
 * garbage, so it does not run and ends with its input's error, at the
 * device time its inputs ended.
 */
static void fail_on_input(struct sim *sim, struct sim_job *job, int err)
{
	uint64_t t = 0;
	unsigned int i;

	for (i = 0; i < job->ndeps; i++)
		if (job->deps[i]->dev_end > t)
			t = job->deps[i]->dev_end;
	job->done->dev_end = t;
	note_failure(job, err);
	sim_fence_signal(sim, job->done, err);
	sim_job_free(sim, job);
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
bool sim_run_jobs(struct sim *sim)
{
	bool progress = false;
	unsigned int i;

	for (i = 0; i < SIM_MAX_QUEUES; i++) {
		struct sim_queue *q = sim->queues[i];
		struct sim_job *job;

		while (q && (job = q->head) && deps_signaled(job)) {
			int err = deps_error(job);

			if (!err && ring_space(job->ring) <= job->ndescs)
				break;
			q->head = job->next;
			if (!q->head)
				q->tail = NULL;
			progress = true;
			if (err) {
				fail_on_input(sim, job, err);
				continue;
			}
			if (sim->virtual_clock)
				set_vclock(sim, job);
			sim_ring_emit(sim, job->ring, job);
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

static void sim_job_complete(struct sim *sim, struct sim_ring *r, struct sim_job *job, int error)
{
	r->inflight_head = job->next;
	if (!r->inflight_head)
		r->inflight_tail = NULL;
	note_failure(job, error);
	sim_fence_signal(sim, job->done, error);
	sim_job_free(sim, job);
}

/*
 * The one recovery path, shaped like the driver's spyre_recover_locked():
 * reset the rings in @rings (or, with @card, the whole card), fail the
 * oldest job of each of them with @guilty_err (0: none is to blame),
 * banning its queue when @ban, then fail the other jobs that were on those
 * rings with @other_err or, when it is 0, write them again to the reset
 * ring in their order.
 */
static void sim_recover(struct sim *sim, uint32_t rings, bool card, int guilty_err, bool ban,
			int other_err)
{
	unsigned int n;

	spyre_model_request_abort(sim->model, true);
	if (card)
		spyre_model_write(sim->model, SPYRE_REG_CTRL, SPYRE_CTRL_RESET);
	for (n = 0; n < sim->nrings && !card; n++)
		if (rings & (1u << n))
			spyre_model_write(sim->model, ring_reg(&sim->rings[n], SPYRE_RING_CTRL),
					  SPYRE_RING_CTRL_RESET);
	spyre_model_request_abort(sim->model, false);
	sim->reset_count++;
	for (n = 0; n < sim->nrings; n++) {
		struct sim_ring *r = &sim->rings[n];
		struct sim_job *job = r->inflight_head, *replay;

		if (!(rings & (1u << n)))
			continue;
		if (job && guilty_err) {
			if (ban && job->queue)
				job->queue->banned = true;
			sim_job_complete(sim, r, job, guilty_err);
		}
		while (other_err && r->inflight_head)
			sim_job_complete(sim, r, r->inflight_head, other_err);
		replay = r->inflight_head;
		r->inflight_head = r->inflight_tail = NULL;
		sim_ring_hw_start(sim, r);
		for (; replay; replay = job) {
			job = replay->next;
			sim_ring_emit(sim, r, replay);
		}
		r->progress_ns = spy_now_ns();
	}
}

static bool sim_ring_reap(struct sim *sim)
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

			if (err && spyre_le32_to_cpu(job->record.fault_insn) !=
					   SPYRE_FAULT_INSN_NONE) {
				job->fault = (struct spy_fault){
					spyre_le16_to_cpu(job->record.fault_core),
					spyre_le32_to_cpu(job->record.fault_insn),
					spyre_le16_to_cpu(job->record.fault_space),
					spyre_le64_to_cpu(job->record.fault_addr) };
			}
			sim_job_complete(sim, r, job, err);
			progress = true;
		}
	}
	return progress;
}

/* Rings whose oldest job made no progress for sim->timeout_ns hung. */
static void sim_check_timeouts(struct sim *sim)
{
	uint64_t now = spy_now_ns();
	unsigned int n;

	for (n = 0; n < sim->nrings; n++) {
		struct sim_ring *r = &sim->rings[n];
		uint32_t head = spyre_model_read(sim->model, ring_reg(r, SPYRE_RING_HEAD));
		uint32_t st = spyre_model_read(sim->model, ring_reg(r, SPYRE_RING_STATUS));
		uint64_t done = spyre_le64_to_cpu(r->wb->completed_seqno);

		if (!r->inflight_head || head != r->progress_head || done != r->progress_seqno) {
			r->progress_head = head;
			r->progress_seqno = done;
			r->progress_ns = now;
			continue;
		}
		if (st & SPYRE_RING_STATUS_ERROR)
			sim_recover(sim, 1u << n, false, -EIO, false, 0);
		else if (now - r->progress_ns > sim->timeout_ns)
			sim_recover(sim, 1u << n, false, -ETIMEDOUT, true, 0);
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

void *sim_driver_thread(void *arg)
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
		progress = sim_run_jobs(sim);
		wake = spyre_model_process(sim->model);
		if (spyre_model_read(sim->model, SPYRE_REG_STATUS) & SPYRE_STATUS_FATAL)
			sim_recover(sim, (1u << sim->nrings) - 1, true, 0, false, -EIO);
		progress |= sim_ring_reap(sim);
		sim_check_timeouts(sim);
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
void sim_device_lost(struct sim *sim)
{
	unsigned int i;

	sim->lost = true;
	for (i = 0; i < SIM_MAX_QUEUES; i++) {
		struct sim_queue *q = sim->queues[i];

		while (q && q->head) {
			struct sim_job *job = q->head;

			q->head = job->next;
			note_failure(job, -ENODEV);
			sim_fence_signal(sim, job->done, -ENODEV);
			sim_job_free(sim, job);
		}
		if (q)
			q->tail = NULL;
	}
	for (i = 0; i < sim->nrings; i++)
		while (sim->rings[i].inflight_head)
			sim_job_complete(sim, &sim->rings[i], sim->rings[i].inflight_head, -ENODEV);
	sim_kick(sim);
}
