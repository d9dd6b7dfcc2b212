// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Spyre card model: WAIT_MEM (interface 1.10), a ring waiting until a
 * 64-bit counter in memory reaches a value. The semaphores are card-wide
 * and so only for driver-written rings; a process's queues wait on
 * counters in its own address space instead, typically another queue's
 * write-back record.
 *
 * Device time stays a function of the commands: when the card itself
 * wrote the counter (a write-back or a completion record), the wait ends
 * at the device time of that write, which the card remembers. A counter
 * software wrote counts from when the card looks at it again, which it
 * does whenever any ring makes progress and on every register write, like
 * a doorbell.
 */
#include "spyre_internal.h"
#include "spyre_mmu.h"

uint32_t card_wait_mem_check(const struct card_cmd *c)
{
	const struct spyre_hw_wait_mem *d = &c->desc.wait_mem;

	if (d->flags || d->rsvd || d->rsvd1 || !card_all_zero(d->rsvd2, sizeof(d->rsvd2)) ||
	    (spyre_le64_to_cpu(d->addr) & 7))
		return SPYRE_CMD_ERR_INVALID;
	return SPYRE_CMD_OK;
}

void card_wait_mem_note(struct spyre_model *m, bool sys, uint64_t pa, uint64_t value,
			uint64_t ns)
{
	struct card_mmu *u = m->mmu;
	struct card_wmem_write *w = &u->wmem[u->wmem_next++ % CARD_WMEM_HIST];

	w->sys = sys;
	w->pa = pa;
	w->value = value;
	w->ns = ns + 1;	/* 0 marks an empty entry */
}

void card_wait_mem_wake(struct spyre_model *m)
{
	unsigned int i;

	for (i = 0; i < m->cfg.num_rings; i++)
		m->rings[i].mem_blocked = false;
}

/* Read the counter: through the ring's context, or device memory in context 0. */
static uint32_t read_counter(struct spyre_model *m, const struct card_cmd *c, uint64_t *v,
			     bool *sys, uint64_t *pa)
{
	uint64_t addr = spyre_le64_to_cpu(c->desc.wait_mem.addr), avail, x;
	struct card_va va;

	*sys = false;
	*pa = addr;
	if (c->ctx) {
		card_va_init(&va, m, c->ctx);
		if (!card_va_translate(&va, addr, SPYRE_MMU_ACCESS_READ, CARD_VA_DEV | CARD_VA_SYS,
				       pa, sys, &avail))
			return SPYRE_CMD_ERR_PAGE_FAULT;
	} else if (!card_range_ok(addr, 8, m->cfg.mem_size)) {
		return SPYRE_CMD_ERR_BOUNDS;
	}
	if (*sys) {
		if (m->ops.host_read(m->opaque, *pa, &x, 8))
			return SPYRE_CMD_ERR_DMA;
	} else {
		x = __atomic_load_n((uint64_t *)(m->devmem + *pa), __ATOMIC_RELAXED);
	}
	*v = spyre_le64_to_cpu(x);
	return SPYRE_CMD_OK;
}

int card_wait_mem_poll(struct spyre_model *m, const struct card_cmd *c, uint64_t *ns,
		       uint32_t *st)
{
	uint64_t want = spyre_le64_to_cpu(c->desc.wait_mem.value), v, pa, best = 0;
	struct card_mmu *u = m->mmu;
	unsigned int i;
	bool sys;

	*st = read_counter(m, c, &v, &sys, &pa);
	if (*st != SPYRE_CMD_OK)
		return -1;
	if (v < want)
		return 0;
	/* the earliest write the card remembers that reached the value */
	for (i = 0; i < CARD_WMEM_HIST; i++) {
		const struct card_wmem_write *w = &u->wmem[i];

		if (w->ns && w->sys == sys && w->pa == pa && w->value >= want &&
		    (!best || w->ns < best))
			best = w->ns;
	}
	*ns = best ? best - 1 : card_now(m);
	return 1;
}

bool card_wait_mem_pending(const struct spyre_model *m)
{
	unsigned int i;

	for (i = 0; i < m->cfg.num_rings; i++)
		if (m->rings[i].mem_blocked)
			return true;
	return false;
}
