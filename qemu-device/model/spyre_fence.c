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
#include "spyre_mmu.h"

/* Write the ring's write-back record: 0, -1 (failed), 1 (a context's fault). */
static int write_back(struct spyre_model *m, unsigned int n, const struct card_pending *p)
{
	struct card_ring *r = &m->rings[n];
	const struct spyre_hw_ring_wb *wb = &p->wb;
	uint64_t pa = r->wb;
	bool dev = false;

	/* a user-mode queue's write-back lives in its context (1.10) */
	if (r->ring_va && !card_va_record(m, r->ctx, &pa, &dev)) {
		card_mmu_fault_commit(m, n, false);
		return 1;
	}
	if (dev)
		memcpy(m->devmem + pa, wb, sizeof(*wb));
	else if (m->ops.host_write(m->opaque, pa, wb, sizeof(*wb)))
		return -1;
	/* a counter other queues may WAIT_MEM on */
	card_wait_mem_note(m, !dev, pa, spyre_le64_to_cpu(wb->completed_seqno), p->ns);
	return 0;
}

/* Make one completion visible; false (and a ring error) if a write failed. */
static bool emit(struct spyre_model *m, unsigned int n, const struct card_pending *p)
{
	int wb;

	if (p->has_rec && p->rec_dev)	/* translated into device memory */
		memcpy(m->devmem + p->rec_addr, &p->rec, sizeof(p->rec));
	if (p->has_rec && !p->rec_dev &&
	    m->ops.host_write(m->opaque, p->rec_addr, &p->rec, sizeof(p->rec))) {
		card_ring_error(m, n, SPYRE_RING_ERR_WRITEBACK);
		return false;
	}
	if (p->has_rec)
		card_wait_mem_note(m, !p->rec_dev, p->rec_addr, spyre_le64_to_cpu(p->rec.seqno),
				   p->ns);
	wb = write_back(m, n, p);
	if (wb > 0)
		return true;	/* no write-back: no interrupt either; the fault says why */
	if (wb < 0) {
		card_ring_error(m, n, SPYRE_RING_ERR_WRITEBACK);
		return false;
	}
	if (p->irq)
		m->ops.raise_irq(m->opaque, n);
	return true;
}

static bool enqueue(struct card_ring *r, const struct card_pending *p)
{
	if (r->npend == r->pend_cap) {
		uint32_t cap = r->pend_cap ? 2 * r->pend_cap : 16;
		struct card_pending *np = realloc(r->pend, cap * sizeof(*np));

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
uint32_t card_fence(struct spyre_model *m, unsigned int n, const struct card_cmd *c,
		     uint64_t t)
{
	struct card_ring *r = &m->rings[n];
	const struct spyre_hw_fence *d = &c->desc.fence;
	struct card_pending p;
	uint64_t seqno = spyre_le64_to_cpu(d->seqno);
	uint64_t rec_addr = spyre_le64_to_cpu(d->record_addr);
	bool sem = d->flags & SPYRE_DESC_F_SEM;
	uint32_t sem_idx = spyre_le16_to_cpu(d->sem);
	/* in an MMU context a record must not straddle two pages */
	uint64_t align = c->ctx ? sizeof(p.rec) - 1 : 7;
	bool bad, rec_fault = false;

	memset(&p, 0, sizeof(p));
	bad = (d->flags & ~(SPYRE_DESC_F_IRQ | SPYRE_DESC_F_SEM)) || d->rsvd1 ||
	      !card_all_zero(d->rsvd2, sizeof(d->rsvd2)) || (rec_addr & align);
	if (sem)	/* card-wide: for driver-written rings only (1.10) */
		bad |= sem_idx >= m->cfg.num_sems || r->ctx;
	else
		bad |= sem_idx || d->sem_value;
	if (bad && r->job.status == SPYRE_CMD_OK) {
		card_event(m, SPYRE_MODEL_EV_CMD_ERROR, n, c->index, SPYRE_CMD_ERR_INVALID);
		r->job.status = SPYRE_CMD_ERR_INVALID;
		r->job.error_index = c->index;
	}
	/* Failed or not, the job is over: release the rings waiting for it. */
	if (sem && sem_idx < m->cfg.num_sems && !r->ctx)
		card_sem_signal_wake(m, sem_idx, spyre_le64_to_cpu(d->sem_value), t,
				      r->job.status != SPYRE_CMD_OK);
	card_event(m, SPYRE_MODEL_EV_FENCE, n, seqno, r->job.status);
	r->ready_ns = t;
	p.ns = t;
	p.irq = d->flags & SPYRE_DESC_F_IRQ;
	p.has_rec = !(rec_addr & align);	/* a misaligned record is not written */
	p.rec_addr = rec_addr;
	if (c->ctx && p.has_rec) {
		rec_fault = !card_va_record(m, c->ctx, &p.rec_addr, &p.rec_dev);
		p.has_rec = !rec_fault;
	}
	p.rec.seqno = spyre_cpu_to_le64(seqno);
	p.rec.status = spyre_cpu_to_le32(r->job.status);
	p.rec.error_index = spyre_cpu_to_le32(r->job.status ? r->job.error_index : 0);
	p.rec.start_ns = spyre_cpu_to_le64(r->job.started ? r->job.start_ns : t);
	p.rec.end_ns = spyre_cpu_to_le64(t);
	p.rec.compute_ns = spyre_cpu_to_le64(r->job.compute_ns);
	p.rec.dma_ns = spyre_cpu_to_le64(r->job.dma_ns);
	p.rec.fault_insn = spyre_cpu_to_le32(r->job.has_fault ? r->job.fault_insn :
							      SPYRE_FAULT_INSN_NONE);
	if (r->job.has_fault) {
		p.rec.fault_core = spyre_cpu_to_le16(r->job.fault_core);
		p.rec.fault_space = spyre_cpu_to_le16(r->job.fault_space);
		p.rec.fault_addr = spyre_cpu_to_le64(r->job.fault_addr);
	}
	if (r->fault == SPYRE_FAULT_CORRUPT_COMPLETION) {
		memset(&p.rec, 0xa5, sizeof(p.rec));
		r->fault = SPYRE_FAULT_NONE;
		if (((m->fault_reg & SPYRE_FAULT_RING_MASK) >> SPYRE_FAULT_RING_SHIFT) == n)
			m->fault_reg = 0;
	}
	r->head += 1;	/* the write-back reports the head past this FENCE */
	p.wb.completed_seqno = spyre_cpu_to_le64(seqno);
	p.wb.head = spyre_cpu_to_le32(r->head);
	r->head -= 1;
	/* The ring's engine-time counters (1.14), read without waiting for the ring. */
	__atomic_add_fetch(&r->busy_ns[0], r->job.compute_ns, __ATOMIC_RELAXED);
	__atomic_add_fetch(&r->busy_ns[1], r->job.dma_ns, __ATOMIC_RELAXED);
	memset(&r->job, 0, sizeof(r->job));
	r->skipping = false;
	if (rec_fault)	/* no record: the fault registers and interrupt tell */
		card_mmu_fault_commit(m, n, false);

	if (m->cfg.pacing && (r->npend || t > card_now(m))) {
		if (enqueue(r, &p))
			return SPYRE_CMD_OK;
		/* out of memory: deliver now rather than lose the completion */
	}
	return emit(m, n, &p) ? SPYRE_CMD_OK : SPYRE_CMD_ERR_DMA;
}

/*
 * Deliver queued completions whose device time has come. Returns the
 * earliest device time still queued, or SPYRE_MODEL_NEVER; *@delivered
 * says whether any became visible.
 */
uint64_t card_fence_release(struct spyre_model *m, uint64_t now, bool *delivered)
{
	uint64_t next = SPYRE_MODEL_NEVER;
	unsigned int n, i;

	*delivered = false;
	for (n = 0; n < m->cfg.num_rings; n++) {
		struct card_ring *r = &m->rings[n];

		for (i = 0; i < r->npend && r->pend[i].ns <= now; i++) {
			if (!emit(m, n, &r->pend[i]))
				break;
			*delivered = true;
		}
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
