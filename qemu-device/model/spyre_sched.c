// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Spyre card model: the command processor. Picks the ring whose next
 * command can start earliest, fetches and decodes it, dispatches it to an
 * engine, keeps the device-time bookkeeping and retires jobs at FENCEs.
 */
#include "spyre_internal.h"

enum step_result {
	STEP_PROGRESS,		/* state changed: look again */
	STEP_BLOCKED,		/* waits for a register write (doorbell, signal) */
	STEP_ABORT,		/* reset pending: stop */
};

#define DESC_OFF(type, field)	SPYRE_FIELD(type, field)

/* The doorbell that made descriptor @idx visible. */
static const struct spyre_doorbell *doorbell_of(const struct spyre_ring *r, uint32_t idx)
{
	static const struct spyre_doorbell none;
	unsigned int i;

	for (i = 0; i < r->db_count; i++)
		if ((int32_t)(r->db[i].tail - idx) > 0)
			return &r->db[i];
	return r->db_count ? &r->db[r->db_count - 1] : &none;
}

static uint64_t doorbell_time(const struct spyre_ring *r, uint32_t idx)
{
	return doorbell_of(r, idx)->ns;
}

static void consume(struct spyre_ring *r, uint32_t ndesc)
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

static bool runnable(const struct spyre_ring *r)
{
	return r->enabled && !r->error && !r->hung && !r->need_tail && !r->sem_blocked &&
	       r->head != r->tail;
}

static int fetch(struct spyre_model *m, struct spyre_ring *r, uint32_t idx, uint8_t *desc)
{
	uint64_t addr = r->base + (uint64_t)(idx & (r->entries - 1)) * SPYRE_DESC_SIZE;

	return m->ops.host_read(m->opaque, addr, desc, SPYRE_DESC_SIZE);
}

static bool all_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

static void clear_fault(struct spyre_model *m, unsigned int n)
{
	m->rings[n].fault = SPYRE_FAULT_NONE;
	if (((m->fault_reg & SPYRE_FAULT_RING_MASK) >> SPYRE_FAULT_RING_SHIFT) == n)
		m->fault_reg = 0;
}

static void job_begin(struct spyre_ring *r, uint64_t start)
{
	if (!r->job.started) {
		r->job.started = true;
		r->job.start_ns = start;
	}
}

/* A command failed: remember the first failure and skip to the FENCE. */
static void job_fail(struct spyre_ring *r, const struct spyre_cmd *c, uint32_t status,
		     uint64_t t)
{
	job_begin(r, t);
	if (r->job.status == SPYRE_CMD_OK) {
		r->job.status = status;
		r->job.error_index = c->index;
	}
	r->skipping = true;
	consume(r, c->ndesc);
}

/* Decode the ARGS descriptors that follow a LAUNCH. */
static enum step_result fetch_args(struct spyre_model *m, unsigned int n,
				   struct spyre_cmd *c, uint32_t *status)
{
	struct spyre_ring *r = &m->rings[n];
	uint32_t nargs = spyre_ld16(c->desc + DESC_OFF(spyre_hw_launch, nargs));
	uint32_t ndesc = (nargs + SPYRE_ARGS_PER_DESC - 1) / SPYRE_ARGS_PER_DESC;
	uint8_t d[SPYRE_DESC_SIZE];
	uint32_t i, j, count;

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
		if (fetch(m, r, c->index + 1 + i, d)) {
			spyre_ring_error(m, n, SPYRE_RING_ERR_FETCH);
			return STEP_BLOCKED;
		}
		count = spyre_ld16(d + DESC_OFF(spyre_hw_args, count));
		if (d[0] != SPYRE_OP_ARGS || d[1] ||
		    count != (nargs - i * 3 < 3 ? nargs - i * 3 : 3) ||
		    !all_zero(d + DESC_OFF(spyre_hw_args, rsvd), 4) ||
		    !all_zero(d + DESC_OFF(spyre_hw_args, rsvd2), 8)) {
			*status = SPYRE_CMD_ERR_INVALID;
			return STEP_PROGRESS;
		}
		for (j = 0; j < count; j++) {
			const uint8_t *s = d + DESC_OFF(spyre_hw_args, slot) + j * 16;

			c->arg_addr[i * 3 + j] = spyre_ld64(s);
			c->arg_len[i * 3 + j] = spyre_ld64(s + 8);
		}
	}
	return STEP_PROGRESS;
}

static uint32_t do_timestamp(struct spyre_model *m, const struct spyre_cmd *c, uint64_t t)
{
	const uint8_t *d = c->desc;
	uint64_t addr = spyre_ld64(d + DESC_OFF(spyre_hw_timestamp, addr));
	uint8_t v[8];

	if ((d[1] & ~SPYRE_DESC_F_DEVMEM) || !all_zero(d + 2, 6) ||
	    !all_zero(d + DESC_OFF(spyre_hw_timestamp, rsvd2), 4) ||
	    !all_zero(d + DESC_OFF(spyre_hw_timestamp, rsvd3), 32))
		return SPYRE_CMD_ERR_INVALID;
	spyre_st64(v, t);
	if (d[1] & SPYRE_DESC_F_DEVMEM) {
		if (!spyre_range_ok(addr, 8, m->cfg.mem_size))
			return SPYRE_CMD_ERR_BOUNDS;
		memcpy(m->devmem + addr, v, 8);
		return SPYRE_CMD_OK;
	}
	return spyre_sg_xfer(m, addr, spyre_ld32(d + DESC_OFF(spyre_hw_timestamp, sg_count)),
			     spyre_ld64(d + DESC_OFF(spyre_hw_timestamp, host_off)), v, 8, true);
}

static uint32_t check_sem(struct spyre_model *m, const uint8_t *d)
{
	uint8_t flags = d[0] == SPYRE_OP_SEM_WAIT ? SPYRE_DESC_F_ERR : 0;

	if ((d[1] & ~flags) || !all_zero(d + DESC_OFF(spyre_hw_sem, rsvd), 4) ||
	    !all_zero(d + DESC_OFF(spyre_hw_sem, rsvd2), 48))
		return SPYRE_CMD_ERR_INVALID;
	if (spyre_ld16(d + DESC_OFF(spyre_hw_sem, sem)) >= m->cfg.num_sems)
		return SPYRE_CMD_ERR_INVALID;
	return SPYRE_CMD_OK;
}

/* Start time of a command: its ring is done, it was doorbelled, engine free. */
static uint64_t start_time(struct spyre_model *m, struct spyre_ring *r,
			   const struct spyre_cmd *c, enum spyre_engine eng)
{
	uint64_t t = spyre_max64(r->ready_ns, c->avail_ns);

	if (eng != SPYRE_ENG_NONE)
		t = spyre_max64(t, m->engine_busy[eng]);
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

	return spyre_dram_reserve(&m->dram, start + t->dma_latency_ns,
				  spyre_time_bytes(bytes, t->dram_bytes_per_us));
}

/* Run an engine command that was checked, account its device time. */
static enum step_result run_engine_cmd(struct spyre_model *m, unsigned int n,
				       struct spyre_cmd *c, enum spyre_engine eng,
				       uint64_t start)
{
	struct spyre_ring *r = &m->rings[n];
	uint64_t dur = 0;
	uint32_t st;

	m->cmd_start = start;
	if (eng == SPYRE_ENG_COMPUTE) {
		st = spyre_cmd_launch(m, n, c, &dur);
	} else {
		unsigned int dir = spyre_ld16(c->desc + DESC_OFF(spyre_hw_dma, dir));
		uint64_t len = spyre_ld64(c->desc + DESC_OFF(spyre_hw_dma, len));

		st = spyre_cmd_dma(m, n, c);
		dur = spyre_time_dma(&m->cfg.timing, dir, len);
		if (st == SPYRE_CMD_OK)
			dur = spyre_max64(dur, dma_dram_end(m, dir, len, start) - start);
	}
	if (st == SPYRE_CMD_ABORTED)
		return STEP_ABORT;
	if (st != SPYRE_CMD_OK) {
		job_fail(r, c, st, start);
		return STEP_PROGRESS;
	}
	job_begin(r, start);
	m->engine_busy[eng] = start + dur;
	r->ready_ns = start + dur;
	if (eng == SPYRE_ENG_COMPUTE)
		r->job.compute_ns += dur;
	else
		r->job.dma_ns += dur;
	consume(r, c->ndesc);
	return STEP_PROGRESS;
}

static enum step_result ring_step(struct spyre_model *m, unsigned int n)
{
	struct spyre_ring *r = &m->rings[n];
	struct spyre_cmd c;
	enum spyre_engine eng = SPYRE_ENG_NONE;
	enum step_result res;
	uint32_t st = SPYRE_CMD_OK;
	uint64_t start;
	const uint8_t *d = c.desc;

	memset(&c, 0, sizeof(c));
	c.index = r->head;
	c.ndesc = 1;
	c.avail_ns = doorbell_time(r, c.index);
	if (fetch(m, r, c.index, c.desc)) {
		spyre_ring_error(m, n, SPYRE_RING_ERR_FETCH);
		return STEP_PROGRESS;
	}
	if (r->skipping && d[0] != SPYRE_OP_FENCE) {
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

	switch (d[0]) {
	case SPYRE_OP_NOP:
		if (!all_zero(d + 1, SPYRE_DESC_SIZE - 1))
			st = SPYRE_CMD_ERR_INVALID;
		break;
	case SPYRE_OP_DMA:
		st = spyre_dma_check(m, &c);
		eng = spyre_dma_engine(spyre_ld16(d + DESC_OFF(spyre_hw_dma, dir)));
		break;
	case SPYRE_OP_LAUNCH:
		res = fetch_args(m, n, &c, &st);
		if (res != STEP_PROGRESS)
			return res;
		if (st == SPYRE_CMD_OK)
			st = spyre_launch_check(m, &c);
		eng = SPYRE_ENG_COMPUTE;
		break;
	case SPYRE_OP_SEM_SIGNAL:
	case SPYRE_OP_SEM_WAIT:
		st = check_sem(m, d);
		break;
	case SPYRE_OP_TIMESTAMP:
	case SPYRE_OP_FENCE:
		break;
	default:	/* ARGS outside a LAUNCH, unknown opcodes */
		st = SPYRE_CMD_ERR_INVALID;
		break;
	}
	if (st != SPYRE_CMD_OK) {
		job_fail(r, &c, st, spyre_max64(r->ready_ns, c.avail_ns));
		return STEP_PROGRESS;
	}

	if (d[0] == SPYRE_OP_SEM_WAIT) {
		uint64_t reached, begin = spyre_max64(r->ready_ns, c.avail_ns);
		bool failed;

		if (!spyre_sem_reached(m, spyre_ld16(d + DESC_OFF(spyre_hw_sem, sem)),
				       spyre_ld64(d + DESC_OFF(spyre_hw_sem, value)), &reached,
				       &failed)) {
			r->sem_blocked = true;
			return STEP_BLOCKED;
		}
		if (c.avail_ns < reached)
			c.avail_ns = reached;
		job_begin(r, begin);	/* the wait is part of the job */
		if (failed && (d[1] & SPYRE_DESC_F_ERR)) {
			/* the input failed: this job must not run on garbage */
			r->ready_ns = spyre_max64(r->ready_ns, c.avail_ns);
			job_fail(r, &c, SPYRE_CMD_ERR_DEP, r->ready_ns);
			return STEP_PROGRESS;
		}
	}
	start = start_time(m, r, &c, eng);

	m->cmd_count++;
	if (r->fault == SPYRE_FAULT_MEM_UE && d[0] != SPYRE_OP_FENCE) {
		clear_fault(m, n);
		job_fail(r, &c, SPYRE_CMD_ERR_MEM_UE, start);
		spyre_card_error(m, SPYRE_ERR_STATUS_MEM_UE,
				 SPYRE_ERR_INFO(SPYRE_ERR_SRC_MEM_UE, n, 0), true);
		return STEP_PROGRESS;
	}

	switch (d[0]) {
	case SPYRE_OP_DMA:
		m->dma_count++;
		if (r->fault == SPYRE_FAULT_DMA ||
		    (m->cfg.fault_dma_every && m->dma_count % m->cfg.fault_dma_every == 0)) {
			if (r->fault == SPYRE_FAULT_DMA)
				clear_fault(m, n);
			job_fail(r, &c, SPYRE_CMD_ERR_DMA, start);
			return STEP_PROGRESS;
		}
		/* fall through */
	case SPYRE_OP_LAUNCH:
		return run_engine_cmd(m, n, &c, eng, start);
	case SPYRE_OP_FENCE:
		if (spyre_fence(m, n, &c, start) == SPYRE_CMD_OK)
			consume(r, 1);
		return STEP_PROGRESS;
	case SPYRE_OP_TIMESTAMP:
		st = do_timestamp(m, &c, start);
		if (st == SPYRE_CMD_ABORTED)
			return STEP_ABORT;	/* redone after the reset, if still queued */
		break;
	case SPYRE_OP_SEM_SIGNAL:
		spyre_sem_signal_wake(m, spyre_ld16(d + DESC_OFF(spyre_hw_sem, sem)),
				      spyre_ld64(d + DESC_OFF(spyre_hw_sem, value)), start, false);
		break;
	}
	if (st != SPYRE_CMD_OK) {
		job_fail(r, &c, st, start);
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
uint64_t spyre_sched_run(struct spyre_model *m)
{
	unsigned int order[SPYRE_MODEL_MAX_RINGS];
	uint64_t key[SPYRE_MODEL_MAX_RINGS];
	unsigned int i, j, cnt;
	enum step_result res;
	uint64_t next;

	for (;;) {
		if (spyre_abort_pending(m))
			return SPYRE_MODEL_NEVER;
		if (m->status & SPYRE_STATUS_FATAL)
			break;
		cnt = 0;
		for (i = 0; i < m->cfg.num_rings; i++) {
			struct spyre_ring *r = &m->rings[i];
			uint64_t k;

			if (!runnable(r))
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
			if (res == STEP_PROGRESS)
				break;
			if (res == STEP_ABORT)
				return SPYRE_MODEL_NEVER;
		}
		if (i == cnt)
			break;
	}
	/* pacing: deliver the completions whose device time has come */
	next = spyre_fence_release(m, spyre_now(m));
	return next == SPYRE_MODEL_NEVER ? next : m->time_base + next;
}
