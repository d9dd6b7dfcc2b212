// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Spyre card model: FENCE, the end of a job. Builds the completion record
 * and the ring write-back and makes them visible in this order: record,
 * write-back, then the ring's MSI-X vector (F_IRQ).
 *
 * Pacing only changes *when* that becomes visible: with pacing on, the
 * outputs of a FENCE wait in a per-ring queue until the embedder's clock
 * reaches the FENCE's device time. The timeline itself is computed the same
 * way with and without pacing.
 */
#include <stdlib.h>

#include "spyre_internal.h"

#define F_OFF(field)	SPYRE_FIELD(spyre_hw_fence, field)
#define C_OFF(field)	SPYRE_FIELD(spyre_hw_completion, field)

static bool all_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

/* Make one completion visible; false (and a ring error) if a write failed. */
static bool emit(struct spyre_model *m, unsigned int n, const struct spyre_pending *p)
{
	struct spyre_ring *r = &m->rings[n];

	if ((p->has_rec &&
	     m->ops.host_write(m->opaque, p->rec_addr, p->rec, sizeof(p->rec))) ||
	    m->ops.host_write(m->opaque, r->wb, p->wb, sizeof(p->wb))) {
		spyre_ring_error(m, n, SPYRE_RING_ERR_WRITEBACK);
		return false;
	}
	if (p->irq)
		m->ops.raise_irq(m->opaque, n);
	return true;
}

static bool enqueue(struct spyre_ring *r, const struct spyre_pending *p)
{
	if (r->npend == r->pend_cap) {
		uint32_t cap = r->pend_cap ? 2 * r->pend_cap : 16;
		struct spyre_pending *np = realloc(r->pend, cap * sizeof(*np));

		if (!np)
			return false;
		r->pend = np;
		r->pend_cap = cap;
	}
	r->pend[r->npend++] = *p;
	return true;
}

/*
 * Retire the FENCE @c of ring @n at device time @t. Returns SPYRE_CMD_OK,
 * or SPYRE_CMD_ERR_DMA when a write-back failed (the ring is then in error).
 */
uint32_t spyre_fence(struct spyre_model *m, unsigned int n, const struct spyre_cmd *c,
		     uint64_t t)
{
	struct spyre_ring *r = &m->rings[n];
	const uint8_t *d = c->desc;
	struct spyre_pending p;
	uint64_t seqno = spyre_ld64(d + F_OFF(seqno));
	uint64_t rec_addr = spyre_ld64(d + F_OFF(record_addr));

	bool sem = d[1] & SPYRE_DESC_F_SEM;
	uint32_t sem_idx = spyre_ld16(d + F_OFF(sem));
	bool bad;

	memset(&p, 0, sizeof(p));
	bad = (d[1] & ~(SPYRE_DESC_F_IRQ | SPYRE_DESC_F_SEM)) || !all_zero(d + F_OFF(rsvd1), 4) ||
	      !all_zero(d + F_OFF(rsvd2), 32) || (rec_addr & 7);
	if (sem)
		bad |= sem_idx >= m->cfg.num_sems;
	else
		bad |= sem_idx || !all_zero(d + F_OFF(sem_value), 8);
	if (bad && r->job.status == SPYRE_CMD_OK) {
		r->job.status = SPYRE_CMD_ERR_INVALID;
		r->job.error_index = c->index;
	}
	/* Failed or not, the job is over: release the rings waiting for it. */
	if (sem && sem_idx < m->cfg.num_sems)
		spyre_sem_signal_wake(m, sem_idx, spyre_ld64(d + F_OFF(sem_value)), t,
				      r->job.status != SPYRE_CMD_OK);
	r->ready_ns = t;
	p.ns = t;
	p.irq = d[1] & SPYRE_DESC_F_IRQ;
	p.has_rec = !(rec_addr & 7);	/* a misaligned record is not written */
	p.rec_addr = rec_addr;
	spyre_st64(p.rec + C_OFF(seqno), seqno);
	spyre_st32(p.rec + C_OFF(status), r->job.status);
	spyre_st32(p.rec + C_OFF(error_index), r->job.status ? r->job.error_index : 0);
	spyre_st64(p.rec + C_OFF(start_ns), r->job.started ? r->job.start_ns : t);
	spyre_st64(p.rec + C_OFF(end_ns), t);
	spyre_st64(p.rec + C_OFF(compute_ns), r->job.compute_ns);
	spyre_st64(p.rec + C_OFF(dma_ns), r->job.dma_ns);
	if (r->fault == SPYRE_FAULT_CORRUPT_COMPLETION) {
		memset(p.rec, 0xa5, sizeof(p.rec));
		r->fault = SPYRE_FAULT_NONE;
		if (((m->fault_reg & SPYRE_FAULT_RING_MASK) >> SPYRE_FAULT_RING_SHIFT) == n)
			m->fault_reg = 0;
	}
	r->head += 1;	/* the write-back reports the head past this FENCE */
	spyre_st64(p.wb + SPYRE_FIELD(spyre_hw_ring_wb, completed_seqno), seqno);
	spyre_st32(p.wb + SPYRE_FIELD(spyre_hw_ring_wb, head), r->head);
	r->head -= 1;
	memset(&r->job, 0, sizeof(r->job));
	r->skipping = false;

	if (m->cfg.pacing && (r->npend || t > spyre_now(m))) {
		if (enqueue(r, &p))
			return SPYRE_CMD_OK;
		/* out of memory: deliver now rather than lose the completion */
	}
	return emit(m, n, &p) ? SPYRE_CMD_OK : SPYRE_CMD_ERR_DMA;
}

/*
 * Deliver queued completions whose device time has come. Returns the
 * earliest device time still queued, or SPYRE_MODEL_NEVER.
 */
uint64_t spyre_fence_release(struct spyre_model *m, uint64_t now)
{
	uint64_t next = SPYRE_MODEL_NEVER;
	unsigned int n, i;

	for (n = 0; n < m->cfg.num_rings; n++) {
		struct spyre_ring *r = &m->rings[n];

		for (i = 0; i < r->npend && r->pend[i].ns <= now; i++)
			if (!emit(m, n, &r->pend[i]))
				break;
		if (r->error) {
			r->npend = 0;
			continue;
		}
		if (i) {
			memmove(r->pend, r->pend + i, (r->npend - i) * sizeof(*r->pend));
			r->npend -= i;
		}
		if (r->npend && r->pend[0].ns < next)
			next = r->pend[0].ns;
	}
	return next;
}
