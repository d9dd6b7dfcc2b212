// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Spyre card model: per-ring registers, configuration, doorbells and ring
 * errors. Command execution lives in spyre_sched.c.
 */
#include "spyre_internal.h"
#include "spyre_mmu.h"

void card_ring_reset(struct spyre_model *m, struct card_ring *r)
{
	uint32_t base_lo = r->base_lo, base_hi = r->base_hi, size_log2 = r->size_log2;
	uint32_t wb_lo = r->wb_lo, wb_hi = r->wb_hi, pend_cap = r->pend_cap, ctx = r->ctx;
	bool ring_va = r->ring_va;
	struct card_pending *pend = r->pend;

	(void)m;
	memset(r, 0, sizeof(*r));
	r->pend = pend;		/* keep the buffer; pending completions are dropped */
	r->pend_cap = pend_cap;
	/* Configuration registers survive a ring reset so it can be re-enabled. */
	r->base_lo = base_lo;
	r->base_hi = base_hi;
	r->size_log2 = size_log2;
	r->wb_lo = wb_lo;
	r->wb_hi = wb_hi;
	r->ctx = ctx;
	r->ring_va = ring_va;
}

/* Card reset: configuration registers read back as zero afterwards. */
void card_ring_clear_config(struct card_ring *r)
{
	r->base_lo = r->base_hi = r->size_log2 = r->wb_lo = r->wb_hi = r->ctx = 0;
	r->ring_va = false;
}

void card_ring_error(struct spyre_model *m, unsigned int n, uint32_t code)
{
	struct card_ring *r = &m->rings[n];

	r->error = true;
	r->error_code = code;
	r->enabled = false;	/* stopped until RING_CTRL_RESET */
	card_error(m, SPYRE_ERR_STATUS_RING,
			 SPYRE_ERR_INFO(SPYRE_ERR_INFO_SRC_RING, n, code), false);
}

static bool ring_idle(const struct card_ring *r)
{
	return r->head == r->tail && !r->hung && !r->npend;
}

uint32_t card_ring_read(struct spyre_model *m, unsigned int n, uint32_t reg)
{
	struct card_ring *r = &m->rings[n];
	uint32_t st = 0;

	switch (reg) {
	case SPYRE_RING_BASE_LO:
		return r->base_lo;
	case SPYRE_RING_BASE_HI:
		return r->base_hi;
	case SPYRE_RING_SIZE_LOG2:
		return r->size_log2;
	case SPYRE_RING_WB_LO:
		return r->wb_lo;
	case SPYRE_RING_WB_HI:
		return r->wb_hi;
	case SPYRE_RING_CTRL:
		return r->enabled ? SPYRE_RING_CTRL_ENABLE : 0;
	case SPYRE_RING_STATUS:
		if (r->enabled)
			st |= SPYRE_RING_STATUS_ENABLED;
		if (ring_idle(r))
			st |= SPYRE_RING_STATUS_IDLE;
		if (r->error)
			st |= SPYRE_RING_STATUS_ERROR;
		if (card_mmu_ctx_faulted(m->mmu, r->ctx))
			st |= SPYRE_RING_STATUS_CTX_FAULT;
		return st;
	case SPYRE_RING_HEAD:
		return r->head;
	case SPYRE_RING_TAIL:
		return r->tail;
	case SPYRE_RING_ERROR:
		return r->error_code;
	case SPYRE_RING_IRQ_VECTOR:
		return n;
	case SPYRE_RING_PROGRESS:
		return __atomic_load_n(&r->progress, __ATOMIC_RELAXED);
	case SPYRE_RING_CTX:
		return r->ctx | (r->ring_va ? SPYRE_RING_CTX_VA : 0);
	case SPYRE_RING_COMPUTE_NS_LO:
	case SPYRE_RING_DMA_NS_LO: {
		uint64_t v = __atomic_load_n(&r->busy_ns[reg == SPYRE_RING_DMA_NS_LO],
					     __ATOMIC_RELAXED);

		r->busy_hi_latch = (uint32_t)(v >> 32);
		return (uint32_t)v;
	}
	case SPYRE_RING_COMPUTE_NS_HI:
	case SPYRE_RING_DMA_NS_HI:
		return r->busy_hi_latch;
	case SPYRE_RING_FAULT_INFO:
		return r->mmu_fault_info;
	case SPYRE_RING_FAULT_ADDR_LO:
		return (uint32_t)r->mmu_fault_addr;
	case SPYRE_RING_FAULT_ADDR_HI:
		return (uint32_t)(r->mmu_fault_addr >> 32);
	}
	card_error(m, SPYRE_ERR_STATUS_BAD_ACCESS,
			 SPYRE_ERR_INFO(SPYRE_ERR_INFO_SRC_ACCESS, n, SPYRE_RING_REG(n, reg)), false);
	return 0;
}

/* Latch and check the configuration; a bad one is a ring error. */
static void ring_enable(struct spyre_model *m, unsigned int n)
{
	struct card_ring *r = &m->rings[n];
	uint64_t base = (uint64_t)r->base_hi << 32 | r->base_lo;
	uint64_t wb = (uint64_t)r->wb_hi << 32 | r->wb_lo;
	uint64_t bytes;

	if (r->error)
		return;		/* only RING_CTRL_RESET leaves the error state */
	if (r->size_log2 < SPYRE_RING_MIN_LOG2 || r->size_log2 > SPYRE_RING_MAX_LOG2 ||
	    !base || (base & 63) || !wb || (wb & 63)) {
		card_ring_error(m, n, SPYRE_RING_ERR_BAD_CONFIG);
		return;
	}
	bytes = (uint64_t)SPYRE_DESC_SIZE << r->size_log2;
	/* a ring in a context's address space (a user-mode queue) needs a context */
	if (r->ring_va && (!r->ctx || !card_range_ok(base, bytes, 1ull << SPYRE_MMU_VA_BITS) ||
			   !card_range_ok(wb, sizeof(struct spyre_hw_ring_wb),
					  1ull << SPYRE_MMU_VA_BITS))) {
		card_ring_error(m, n, SPYRE_RING_ERR_BAD_CONFIG);
		return;
	}
	if (base + bytes < base || wb + sizeof(struct spyre_hw_ring_wb) < wb) {
		card_ring_error(m, n, SPYRE_RING_ERR_BAD_CONFIG);
		return;
	}
	r->base = base;
	r->wb = wb;
	r->entries = 1u << r->size_log2;
	r->enabled = true;
}

static bool ring_doorbell(struct spyre_model *m, unsigned int n, uint32_t tail)
{
	struct card_ring *r = &m->rings[n];
	uint32_t pending = tail - r->head;
	uint64_t now = card_now(m);

	if (r->error)
		return false;
	if (!r->enabled) {
		if (tail != r->tail)
			card_error(m, SPYRE_ERR_STATUS_BAD_ACCESS,
					 SPYRE_ERR_INFO(SPYRE_ERR_INFO_SRC_ACCESS, n,
							SPYRE_RING_REG(n, SPYRE_RING_TAIL)),
					 false);
		return false;
	}
	if (pending > r->entries || pending < r->tail - r->head) {
		card_ring_error(m, n, SPYRE_RING_ERR_BAD_TAIL);
		return false;
	}
	if (tail == r->tail)
		return false;
	r->tail = tail;
	r->need_tail = false;
	if (r->db_count == CARD_DB_QUEUE) {
		/* Coalesce into the newest entry: never earlier than a doorbell. */
		r->db[CARD_DB_QUEUE - 1].tail = tail;
		r->db[CARD_DB_QUEUE - 1].ns = now;
		r->db[CARD_DB_QUEUE - 1].seq = ++m->db_seq;
	} else {
		r->db[r->db_count].tail = tail;
		r->db[r->db_count].ns = now;
		r->db[r->db_count].seq = ++m->db_seq;
		r->db_count++;
	}
	return true;
}

bool card_ring_write(struct spyre_model *m, unsigned int n, uint32_t reg, uint32_t val)
{
	struct card_ring *r = &m->rings[n];
	uint32_t *cfg = NULL;

	switch (reg) {
	case SPYRE_RING_BASE_LO:
		cfg = &r->base_lo;
		break;
	case SPYRE_RING_BASE_HI:
		cfg = &r->base_hi;
		break;
	case SPYRE_RING_SIZE_LOG2:
		cfg = &r->size_log2;
		break;
	case SPYRE_RING_WB_LO:
		cfg = &r->wb_lo;
		break;
	case SPYRE_RING_WB_HI:
		cfg = &r->wb_hi;
		break;
	case SPYRE_RING_CTX:
		if (r->enabled || (val & ~(SPYRE_RING_CTX_ID_MASK | SPYRE_RING_CTX_VA)))
			break;
		r->ctx = val & SPYRE_RING_CTX_ID_MASK;
		r->ring_va = val & SPYRE_RING_CTX_VA;
		return false;
	case SPYRE_RING_CTRL:
		if (val & ~(SPYRE_RING_CTRL_ENABLE | SPYRE_RING_CTRL_RESET))
			break;
		if (val & SPYRE_RING_CTRL_RESET)
			card_ring_reset(m, r);
		if ((val & SPYRE_RING_CTRL_ENABLE) && !r->enabled)
			ring_enable(m, n);
		else if (!(val & SPYRE_RING_CTRL_ENABLE))
			r->enabled = false;	/* pause: stop fetching */
		return r->enabled;
	case SPYRE_RING_TAIL:
		return ring_doorbell(m, n, val);
	}
	if (cfg && !r->enabled) {
		*cfg = val;
		return false;
	}
	card_error(m, SPYRE_ERR_STATUS_BAD_ACCESS,
			 SPYRE_ERR_INFO(SPYRE_ERR_INFO_SRC_ACCESS, n, SPYRE_RING_REG(n, reg)), false);
	return false;
}
