// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Spyre card model: the command processor. Picks the ring whose next
 * command can start earliest, fetches and decodes it, dispatches it to an
 * engine, keeps the device-time bookkeeping and retires jobs at FENCEs.
 */
#include "spyre_exec.h"
#include "spyre_internal.h"
#include "spyre_mmu.h"

enum step_result {
	STEP_PROGRESS,		/* state changed: look again */
	STEP_BLOCKED,		/* waits for a register write (doorbell, signal) */
	STEP_ABORT,		/* reset pending: stop */
};

/* The doorbell that made descriptor @idx visible. */
static const struct card_doorbell *doorbell_of(const struct card_ring *r, uint32_t idx)
{
	static const struct card_doorbell none;
	unsigned int i;

	for (i = 0; i < r->db_count; i++)
		if ((int32_t)(r->db[i].tail - idx) > 0)
			return &r->db[i];
	return r->db_count ? &r->db[r->db_count - 1] : &none;
}

static uint64_t doorbell_time(const struct card_ring *r, uint32_t idx)
{
	return doorbell_of(r, idx)->ns;
}

static void consume(struct card_ring *r, uint32_t ndesc)
{
	unsigned int drop = 0;

	r->head += ndesc;
	while (drop < r->db_count && (int32_t)(r->db[drop].tail - r->head) <= 0)
		drop++;
	if (drop) {
		memmove(r->db, r->db + drop, (r->db_count - drop) * sizeof(r->db[0]));
		r->db_count -= drop;
	}
}

/*
 * A ring whose MMU context faulted stops, except that the faulting ring
 * still skips to the FENCE of the failed job to report it.
 */
static bool runnable(struct spyre_model *m, const struct card_ring *r)
{
	return r->enabled && !r->error && !r->hung && !r->need_tail && !r->sem_blocked &&
	       !r->mem_blocked && r->head != r->tail &&
	       ((r->skipping && !r->ring_va) || !card_mmu_ctx_faulted(m->mmu, r->ctx));
}

/*
 * Read the descriptor of ring index @idx: 0, -1 when the host read failed
 * (a ring error), 1 when a ring in a context's address space faulted (the
 * context is stopped; the descriptor is fetched again once it resumes).
 */
static int fetch(struct spyre_model *m, struct card_ring *r, uint32_t idx,
		 union spyre_hw_desc *desc)
{
	uint64_t addr = r->base + (uint64_t)(idx & (r->entries - 1)) * SPYRE_DESC_SIZE;
	uint32_t st;

	if (r->ring_va) {
		st = card_va_ring_read(m, r->ctx, addr, desc, SPYRE_DESC_SIZE);
		if (st == SPYRE_CMD_ERR_PAGE_FAULT) {
			card_mmu_fault_commit(m, (unsigned int)(r - m->rings), false);
			return 1;
		}
		return st == SPYRE_CMD_OK ? 0 : -1;
	}
	return m->ops.host_read(m->opaque, addr, desc, SPYRE_DESC_SIZE) ? -1 : 0;
}

static void clear_fault(struct spyre_model *m, unsigned int n)
{
	m->rings[n].fault = SPYRE_FAULT_NONE;
	if (((m->fault_reg & SPYRE_FAULT_RING_MASK) >> SPYRE_FAULT_RING_SHIFT) == n)
		m->fault_reg = 0;
}

static void job_begin(struct card_ring *r, uint64_t start)
{
	if (!r->job.started) {
		r->job.started = true;
		r->job.start_ns = start;
	}
}

/*
 * A LAUNCH that asks for a scrub clears the scratchpads even when it does
 * not run (its job failed before it, or it failed itself): drivers count on
 * that scrub to keep one client's data from the next (interface 1.5).
 */
static void scrub_unrun_launch(struct spyre_model *m, const union spyre_hw_desc *d)
{
	if (d->hdr.opcode == SPYRE_OP_LAUNCH && (d->launch.flags & SPYRE_DESC_F_SCRUB))
		card_scrub_scratchpads(m->exec, &m->cfg.timing);
}

/* A command failed: remember the first failure and skip to the FENCE. */
static void job_fail(struct spyre_model *m, struct card_ring *r, const struct card_cmd *c,
		     uint32_t status, uint64_t t)
{
	card_event(m, SPYRE_MODEL_EV_CMD_ERROR, (unsigned int)(r - m->rings), c->index, status);
	scrub_unrun_launch(m, &c->desc);
	job_begin(r, t);
	if (r->job.status == SPYRE_CMD_OK) {
		r->job.status = status;
		r->job.error_index = c->index;
	}
	r->skipping = true;
	consume(r, c->ndesc);
	if (status == SPYRE_CMD_ERR_PAGE_FAULT)
		card_mmu_fault_commit(m, (unsigned int)(r - m->rings), true);
}

/* Decode the ARGS descriptors that follow a LAUNCH. */
static enum step_result fetch_args(struct spyre_model *m, unsigned int n,
				   struct card_cmd *c, uint32_t *status)
{
	struct card_ring *r = &m->rings[n];
	uint32_t nargs = spyre_le16_to_cpu(c->desc.launch.nargs);
	uint32_t ndesc = SPYRE_DESC_ARGS(nargs);
	union spyre_hw_desc d;
	uint32_t i, j, count;
	int f;

	*status = SPYRE_CMD_OK;
	if (nargs > SPYRE_MAX_ARGS) {
		*status = SPYRE_CMD_ERR_INVALID;
		return STEP_PROGRESS;
	}
	if (r->tail - r->head < 1 + ndesc) {
		r->need_tail = true;	/* the rest of the LAUNCH is not doorbelled yet */
		return STEP_BLOCKED;
	}
	c->ndesc = 1 + ndesc;
	c->nargs = nargs;
	c->avail_ns = doorbell_time(r, c->index + ndesc);
	for (i = 0; i < ndesc; i++) {
		f = fetch(m, r, c->index + 1 + i, &d);
		if (f) {
			if (f < 0)
				card_ring_error(m, n, SPYRE_RING_ERR_FETCH);
			return STEP_BLOCKED;
		}
		count = spyre_le16_to_cpu(d.args.count);
		if (d.args.opcode != SPYRE_OP_ARGS || d.args.flags ||
		    count != (nargs - i * 3 < 3 ? nargs - i * 3 : 3) || d.args.rsvd ||
		    d.args.rsvd2) {
			*status = SPYRE_CMD_ERR_INVALID;
			return STEP_PROGRESS;
		}
		for (j = 0; j < count; j++) {
			c->arg_addr[i * 3 + j] = spyre_le64_to_cpu(d.args.slot[j].addr);
			c->arg_len[i * 3 + j] = spyre_le64_to_cpu(d.args.slot[j].len);
		}
	}
	return STEP_PROGRESS;
}

static uint32_t do_timestamp(struct spyre_model *m, const struct card_cmd *c, uint64_t t)
{
	const struct spyre_hw_timestamp *d = &c->desc.ts;
	uint64_t addr = spyre_le64_to_cpu(d->addr);
	uint64_t v = spyre_cpu_to_le64(t);

	if ((d->flags & ~SPYRE_DESC_F_DEVMEM) || d->rsvd || d->rsvd1 || d->rsvd2 ||
	    !card_all_zero(d->rsvd3, sizeof(d->rsvd3)))
		return SPYRE_CMD_ERR_INVALID;
	if (c->ctx)
		return card_va_timestamp(m, c, &v);
	if (d->flags & SPYRE_DESC_F_DEVMEM) {
		if (!card_range_ok(addr, 8, m->cfg.mem_size))
			return SPYRE_CMD_ERR_BOUNDS;
		memcpy(m->devmem + addr, &v, 8);
		return SPYRE_CMD_OK;
	}
	return card_sg_xfer(m, addr, spyre_le32_to_cpu(d->sg_count),
			     spyre_le64_to_cpu(d->host_off), (uint8_t *)&v, 8, true);
}

/*
 * Semaphores are card-wide, so only driver-written rings (context 0) may
 * use them (1.10): a queue a process writes could otherwise release or
 * hold another process's jobs.
 */
static uint32_t check_sem(struct spyre_model *m, const struct card_ring *r,
			  const struct spyre_hw_sem *d)
{
	uint8_t flags = d->opcode == SPYRE_OP_SEM_WAIT ? SPYRE_DESC_F_ERR : 0;

	if ((d->flags & ~flags) || d->rsvd || !card_all_zero(d->rsvd2, sizeof(d->rsvd2)) ||
	    r->ctx)
		return SPYRE_CMD_ERR_INVALID;
	if (spyre_le16_to_cpu(d->sem) >= m->cfg.num_sems)
		return SPYRE_CMD_ERR_INVALID;
	return SPYRE_CMD_OK;
}

/* SET_CTX is privileged: only a driver-written ring (context 0) switches. */
static uint32_t check_set_ctx(const struct card_ring *r, const struct spyre_hw_set_ctx *d)
{
	if (d->flags || d->rsvd || !card_all_zero(d->rsvd2, sizeof(d->rsvd2)) || r->ctx ||
	    spyre_le16_to_cpu(d->ctx) >= SPYRE_MMU_NUM_CTX)
		return SPYRE_CMD_ERR_INVALID;
	return SPYRE_CMD_OK;
}

/* Start time of a command: its ring is done, it was doorbelled, engine free. */
static uint64_t start_time(struct spyre_model *m, struct card_ring *r,
			   const struct card_cmd *c, enum card_engine eng)
{
	uint64_t t = card_max64(r->ready_ns, c->avail_ns);

	if (eng != CARD_ENG_NONE)
		t = card_max64(t, m->engine_busy[eng]);
	return t;
}

/*
 * Every DMA command moves its bytes through LPDDR5 too (D2D twice): it
 * takes that much of the shared channel after its setup latency and ends
 * no earlier than its last byte there.
 */
static uint64_t dma_dram_end(struct spyre_model *m, unsigned int dir, uint64_t len,
			     uint64_t start)
{
	const struct spyre_timing *t = &m->cfg.timing;
	uint64_t bytes = dir == SPYRE_DMA_D2D ? 2 * len : len;

	return card_dram_reserve(&m->dram, start + t->dma_latency_ns,
				  card_time_bytes(bytes, t->dram_bytes_per_us));
}

/* Run an engine command that was checked, account its device time. */
static enum step_result run_engine_cmd(struct spyre_model *m, unsigned int n,
				       struct card_cmd *c, enum card_engine eng,
				       uint64_t start)
{
	struct card_ring *r = &m->rings[n];
	uint64_t dur = 0;
	uint32_t st;

	m->cmd_start = start;
	if (eng == CARD_ENG_COMPUTE) {
		st = card_launch_run(m, n, c, &dur);
	} else {
		unsigned int dir = spyre_le16_to_cpu(c->desc.dma.dir);
		uint64_t len = spyre_le64_to_cpu(c->desc.dma.len);
		struct card_va v;
		uint64_t at = start;	/* after the MMU's table walks, if any */

		if (c->ctx)
			card_va_init(&v, m, c->ctx);
		st = card_dma_run(m, n, c, c->ctx ? &v : NULL);
		if (c->ctx && st == SPYRE_CMD_OK)
			at = card_va_walk_end(&v, &m->dram, start);
		dur = at - start + card_time_dma(&m->cfg.timing, dir, len);
		if (st == SPYRE_CMD_OK)
			dur = card_max64(dur, dma_dram_end(m, dir, len, at) - start);
	}
	if (st == CARD_CMD_ABORTED)
		return STEP_ABORT;
	if (st != SPYRE_CMD_OK) {
		job_fail(m, r, c, st, start);
		return STEP_PROGRESS;
	}
	job_begin(r, start);
	m->engine_busy[eng] = start + dur;
	r->ready_ns = start + dur;
	if (eng == CARD_ENG_COMPUTE)
		r->job.compute_ns += dur;
	else
		r->job.dma_ns += dur;
	consume(r, c->ndesc);
	return STEP_PROGRESS;
}

static enum step_result ring_step(struct spyre_model *m, unsigned int n)
{
	struct card_ring *r = &m->rings[n];
	struct card_cmd c;
	enum card_engine eng = CARD_ENG_NONE;
	enum step_result res;
	uint32_t st = SPYRE_CMD_OK;
	uint64_t start;
	const union spyre_hw_desc *d = &c.desc;
	int f;

	memset(&c, 0, sizeof(c));
	c.index = r->head;
	c.ndesc = 1;
	c.avail_ns = doorbell_time(r, c.index);
	f = fetch(m, r, c.index, &c.desc);
	if (f) {
		if (f < 0)
			card_ring_error(m, n, SPYRE_RING_ERR_FETCH);
		return STEP_PROGRESS;	/* a ring error or a stopped context */
	}
	card_event(m, SPYRE_MODEL_EV_DESC, n, c.index, d->hdr.opcode);
	/* a FENCE always writes in the ring's context: the driver's records stay its own */
	c.ctx = r->job.ctx_set && d->hdr.opcode != SPYRE_OP_FENCE ? r->job.ctx : r->ctx;
	if (r->skipping && d->hdr.opcode != SPYRE_OP_FENCE) {
		scrub_unrun_launch(m, d);
		consume(r, 1);		/* commands after a failure do not run */
		return STEP_PROGRESS;
	}
	if (r->fault == SPYRE_FAULT_HANG ||
	    (m->cfg.fault_hang_after && m->cmd_count + 1 == m->cfg.fault_hang_after)) {
		if (r->fault == SPYRE_FAULT_HANG)
			clear_fault(m, n);
		m->cmd_count++;
		r->hung = true;		/* until a ring or card reset */
		return STEP_PROGRESS;
	}

	switch (d->hdr.opcode) {
	case SPYRE_OP_NOP:
		if (!card_all_zero(d->raw + 1, SPYRE_DESC_SIZE - 1))
			st = SPYRE_CMD_ERR_INVALID;
		break;
	case SPYRE_OP_DMA:
		st = card_dma_check(m, &c);
		eng = card_dma_engine(spyre_le16_to_cpu(d->dma.dir));
		break;
	case SPYRE_OP_LAUNCH:
		res = fetch_args(m, n, &c, &st);
		if (res != STEP_PROGRESS)
			return res;
		if (st == SPYRE_CMD_OK)
			st = card_launch_check(m, &c);
		eng = CARD_ENG_COMPUTE;
		break;
	case SPYRE_OP_SEM_SIGNAL:
	case SPYRE_OP_SEM_WAIT:
		st = check_sem(m, r, &d->sem);
		break;
	case SPYRE_OP_TIMESTAMP:
	case SPYRE_OP_FENCE:
		break;
	case SPYRE_OP_SET_CTX:
		st = check_set_ctx(r, &d->set_ctx);
		break;
	case SPYRE_OP_WAIT_MEM:
		st = card_wait_mem_check(&c);
		break;
	default:	/* ARGS outside a LAUNCH, unknown opcodes */
		st = SPYRE_CMD_ERR_INVALID;
		break;
	}
	if (st != SPYRE_CMD_OK) {
		job_fail(m, r, &c, st, card_max64(r->ready_ns, c.avail_ns));
		return STEP_PROGRESS;
	}

	if (d->hdr.opcode == SPYRE_OP_SEM_WAIT) {
		uint64_t reached, begin = card_max64(r->ready_ns, c.avail_ns);
		bool failed;

		if (!card_sem_reached(m, spyre_le16_to_cpu(d->sem.sem),
				       spyre_le64_to_cpu(d->sem.value), &reached, &failed)) {
			r->sem_blocked = true;
			return STEP_BLOCKED;
		}
		if (c.avail_ns < reached)
			c.avail_ns = reached;
		job_begin(r, begin);	/* the wait is part of the job */
		if (failed && (d->sem.flags & SPYRE_DESC_F_ERR)) {
			/* the input failed: this job must not run on garbage */
			r->ready_ns = card_max64(r->ready_ns, c.avail_ns);
			job_fail(m, r, &c, SPYRE_CMD_ERR_DEP, r->ready_ns);
			return STEP_PROGRESS;
		}
	}
	if (d->hdr.opcode == SPYRE_OP_WAIT_MEM) {
		uint64_t reached, begin = card_max64(r->ready_ns, c.avail_ns);
		int got = card_wait_mem_poll(m, &c, &reached, &st);

		if (got < 0) {
			job_fail(m, r, &c, st, begin);
			return STEP_PROGRESS;
		}
		if (!got) {
			r->mem_blocked = true;	/* looked at again on any progress */
			return STEP_BLOCKED;
		}
		if (c.avail_ns < reached)
			c.avail_ns = reached;
		job_begin(r, begin);	/* the wait is part of the job */
	}
	start = start_time(m, r, &c, eng);

	m->cmd_count++;
	if (r->fault == SPYRE_FAULT_MEM_UE && d->hdr.opcode != SPYRE_OP_FENCE) {
		clear_fault(m, n);
		job_fail(m, r, &c, SPYRE_CMD_ERR_MEM_UE, start);
		card_error(m, SPYRE_ERR_STATUS_MEM_UE,
				 SPYRE_ERR_INFO(SPYRE_ERR_INFO_SRC_MEM_UE, n, 0), true);
		return STEP_PROGRESS;
	}

	switch (d->hdr.opcode) {
	case SPYRE_OP_DMA:
		m->dma_count++;
		if (r->fault == SPYRE_FAULT_DMA ||
		    (m->cfg.fault_dma_every && m->dma_count % m->cfg.fault_dma_every == 0)) {
			if (r->fault == SPYRE_FAULT_DMA)
				clear_fault(m, n);
			job_fail(m, r, &c, SPYRE_CMD_ERR_DMA, start);
			return STEP_PROGRESS;
		}
		/* fall through */
	case SPYRE_OP_LAUNCH:
		return run_engine_cmd(m, n, &c, eng, start);
	case SPYRE_OP_FENCE:
		if (card_fence(m, n, &c, start) == SPYRE_CMD_OK)
			consume(r, 1);
		return STEP_PROGRESS;
	case SPYRE_OP_TIMESTAMP:
		st = do_timestamp(m, &c, start);
		if (st == CARD_CMD_ABORTED)
			return STEP_ABORT;	/* redone after the reset, if still queued */
		break;
	case SPYRE_OP_SEM_SIGNAL:
		card_sem_signal_wake(m, spyre_le16_to_cpu(d->sem.sem),
				      spyre_le64_to_cpu(d->sem.value), start, false);
		break;
	case SPYRE_OP_SET_CTX:
		r->job.ctx_set = true;
		r->job.ctx = spyre_le16_to_cpu(d->set_ctx.ctx);
		/* a fault-stopped context runs nothing, whichever ring asks */
		if (card_mmu_ctx_faulted(m->mmu, r->job.ctx))
			st = SPYRE_CMD_ERR_PAGE_FAULT;
		break;
	}
	if (st != SPYRE_CMD_OK) {
		job_fail(m, r, &c, st, start);
		return STEP_PROGRESS;
	}
	job_begin(r, start);
	r->ready_ns = start;
	consume(r, c.ndesc);
	return STEP_PROGRESS;
}

/*
 * Run until no ring can progress. Among the rings that have work, the card
 * always takes the command that was doorbelled first (card-wide doorbell
 * order; a ring's own commands stay in ring order). Engines therefore serve
 * rings in submission order, and the timeline depends only on the doorbell
 * sequence and device times, never on when or how often this runs.
 */
uint64_t card_sched_run(struct spyre_model *m)
{
	unsigned int order[SPYRE_MODEL_MAX_RINGS];
	uint64_t key[SPYRE_MODEL_MAX_RINGS];
	unsigned int i, j, cnt;
	enum step_result res;
	uint64_t next;
	bool delivered;

	card_wait_mem_wake(m);	/* software may have written a counter */
again:
	for (;;) {
		if (card_abort_pending(m))
			return SPYRE_MODEL_NEVER;
		if (m->status & SPYRE_STATUS_FATAL)
			break;
		cnt = 0;
		for (i = 0; i < m->cfg.num_rings; i++) {
			struct card_ring *r = &m->rings[i];
			uint64_t k;

			if (!runnable(m, r))
				continue;
			k = doorbell_of(r, r->head)->seq;
			for (j = cnt; j > 0 && key[j - 1] > k; j--) {
				key[j] = key[j - 1];
				order[j] = order[j - 1];
			}
			key[j] = k;
			order[j] = i;
			cnt++;
		}
		for (i = 0; i < cnt; i++) {
			res = ring_step(m, order[i]);
			if (res == STEP_PROGRESS) {
				card_wait_mem_wake(m);	/* it may have written a counter */
				break;
			}
			if (res == STEP_ABORT)
				return SPYRE_MODEL_NEVER;
		}
		if (i == cnt)
			break;
	}
	/* pacing: deliver the completions whose device time has come */
	next = card_fence_release(m, card_now(m), &delivered);
	/*
	 * With pacing a FENCE's write-back and record become visible only
	 * now, after the rings above looked at their counters: a WAIT_MEM
	 * on one of them must look again, or it would sleep until the next
	 * register write. Its device time comes from the card's history of
	 * those writes, so the timeline is the same as without pacing.
	 */
	if (delivered && card_wait_mem_pending(m)) {
		card_wait_mem_wake(m);
		goto again;
	}
	return next == SPYRE_MODEL_NEVER ? next : m->time_base + next;
}
