// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Spyre card model: the card MMU's page-table walk, TLB, registers and
 * fault reporting (interface 1.10, Documentation/spyre-card.rst "Card
 * MMU"). A walk has a fixed depth of four levels, so no table contents can
 * make it loop; every malformed entry is a fault, never an abort.
 */
#include <stdlib.h>
#include <string.h>

#include "spyre_internal.h"
#include "spyre_mmu.h"

/* Bits a valid entry may set: leaves and tables. */
#define LEAF_BITS	(SPYRE_PTE_VALID | SPYRE_PTE_WRITE | SPYRE_PTE_EXEC | SPYRE_PTE_SYS | \
			 SPYRE_PTE_ADDR_MASK)
#define TABLE_BITS	(SPYRE_PTE_VALID | SPYRE_PTE_ADDR_MASK)
#define ROOT_ADDR_MASK	(~0xfffull)

struct card_mmu *card_mmu_new(void)
{
	return calloc(1, sizeof(struct card_mmu));
}

void card_mmu_free(struct card_mmu *u)
{
	free(u);
}

/* Card reset: no roots, no faults, an empty TLB. */
void card_mmu_reset(struct card_mmu *u)
{
	memset(u, 0, sizeof(*u));
}

bool card_mmu_ctx_faulted(const struct card_mmu *u, uint32_t ctx)
{
	return ctx && ctx < SPYRE_MMU_NUM_CTX && u->faulted[ctx];
}

static void post_inval(struct card_mmu *u, uint32_t ctx, bool all)
{
	if (all)
		__atomic_store_n(&u->inval_all, 1, __ATOMIC_RELAXED);
	else
		__atomic_fetch_or(&u->inval_ctx[ctx / 64], 1ull << (ctx % 64), __ATOMIC_RELAXED);
	__atomic_store_n(&u->inval_any, 1, __ATOMIC_RELEASE);
}

/* Worker: apply the invalidations posted since the last lookup. */
static void apply_inval(struct card_mmu *u)
{
	uint64_t bits[SPYRE_MMU_NUM_CTX / 64];
	bool all;
	unsigned int s, w, i;

	if (!__atomic_load_n(&u->inval_any, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&u->inval_any, 0, __ATOMIC_RELAXED);
	all = __atomic_exchange_n(&u->inval_all, 0, __ATOMIC_ACQ_REL);
	for (i = 0; i < SPYRE_MMU_NUM_CTX / 64; i++)
		bits[i] = __atomic_exchange_n(&u->inval_ctx[i], 0, __ATOMIC_ACQ_REL);
	for (s = 0; s < CARD_TLB_SETS; s++) {
		for (w = 0; w < CARD_TLB_WAYS; w++) {
			struct card_tlb_entry *e = &u->tlb[s][w];

			if (e->lru && (all || (bits[e->ctx / 64] >> (e->ctx % 64) & 1)))
				e->lru = 0;
		}
	}
	/* the walk cache goes with the TLB: a freed table is never walked again */
	for (i = 0; i < CARD_PWC_ENTRIES; i++) {
		struct card_pwc_entry *p = &u->pwc[i];

		if (p->lru && (all || (bits[p->ctx / 64] >> (p->ctx % 64) & 1)))
			p->lru = 0;
	}
}

static struct card_tlb_entry *tlb_find(struct card_mmu *u, uint32_t ctx, uint64_t va)
{
	static const uint8_t shifts[2] = { 12, 21 };
	unsigned int k, w;

	for (k = 0; k < 2; k++) {
		uint64_t vpn = va >> shifts[k];
		struct card_tlb_entry *set = u->tlb[vpn % CARD_TLB_SETS];

		for (w = 0; w < CARD_TLB_WAYS; w++)
			if (set[w].lru && set[w].ctx == ctx && set[w].shift == shifts[k] &&
			    set[w].vpn == vpn)
				return &set[w];
	}
	return NULL;
}

static void tlb_insert(struct card_mmu *u, uint32_t ctx, uint64_t va, unsigned int shift,
		       uint64_t pa, uint8_t flags)
{
	uint64_t vpn = va >> shift;
	struct card_tlb_entry *set = u->tlb[vpn % CARD_TLB_SETS], *victim = &set[0];
	unsigned int w;

	for (w = 1; w < CARD_TLB_WAYS && victim->lru; w++)
		if (set[w].lru < victim->lru)
			victim = &set[w];
	victim->vpn = vpn;
	victim->pa = pa;
	victim->ctx = (uint16_t)ctx;
	victim->shift = (uint8_t)shift;
	victim->flags = flags;
	victim->lru = ++u->lru_clock;
}

/* The page-walk cache's level-@level table for @va, if it holds it. */
static struct card_pwc_entry *pwc_find(struct card_mmu *u, uint32_t ctx, uint64_t va,
				       unsigned int level)
{
	uint64_t tag = va >> (21 + 9 * level);
	unsigned int i;

	for (i = 0; i < CARD_PWC_ENTRIES; i++) {
		struct card_pwc_entry *p = &u->pwc[i];

		if (p->lru && p->ctx == ctx && p->level == level && p->tag == tag)
			return p;
	}
	return NULL;
}

static void pwc_insert(struct card_mmu *u, uint32_t ctx, uint64_t va, unsigned int level,
		       uint64_t table)
{
	struct card_pwc_entry *victim = &u->pwc[0];
	unsigned int i;

	for (i = 1; i < CARD_PWC_ENTRIES && victim->lru; i++)
		if (u->pwc[i].lru < victim->lru)
			victim = &u->pwc[i];
	victim->tag = va >> (21 + 9 * level);
	victim->table = table;
	victim->ctx = (uint16_t)ctx;
	victim->level = (uint8_t)level;
	victim->lru = ++u->lru_clock;
}

static bool fault(struct card_va *v, uint64_t va, unsigned int access, unsigned int reason)
{
	struct card_mmu_fault *f = &v->mmu->pending;

	v->last_ok = false;
	if (!f->valid) {
		f->valid = true;
		f->access = (uint8_t)access;
		f->reason = (uint8_t)reason;
		f->ctx = v->ctx;
		f->va = va;
	}
	return false;
}

static uint64_t read_entry(const struct card_va *v, uint64_t ea)
{
	uint64_t e = __atomic_load_n((uint64_t *)(v->devmem + ea), __ATOMIC_RELAXED);

	return spyre_le64_to_cpu(e);
}

/*
 * A valid leaf entry @e at @level (0, or 1 with LARGE): false when it is
 * malformed (reserved or table bits, a misaligned page, a device page not
 * wholly inside device memory), else its page and permission flags.
 */
static bool leaf_ok(const struct card_va *v, uint64_t e, int level, uint64_t *page,
		    uint8_t *flags)
{
	unsigned int shift = level == 0 ? 12 : 21;

	*page = e & SPYRE_PTE_ADDR_MASK;
	if ((e & ~(LEAF_BITS | (level == 1 ? SPYRE_PTE_LARGE : 0))) ||
	    (*page & ((1ull << shift) - 1)))
		return false;
	/* a device page must lie in device memory: no wild physical address */
	if (!(e & SPYRE_PTE_SYS) &&
	    (*page >= v->mem_size || v->mem_size - *page < (1ull << shift)))
		return false;
	*flags = (uint8_t)(e & (SPYRE_PTE_WRITE | SPYRE_PTE_EXEC | SPYRE_PTE_SYS));
	return true;
}

/*
 * Line fill (1.16): the burst that read the leaf of @va at @level from
 * @table holds seven more entries; the valid, well-formed leaves among them
 * go into the TLB too (older than the walked one). Entries that are not
 * valid are skipped, so mapping them later still needs no invalidation.
 */
static void fill_line(struct card_va *v, uint64_t va, int level, uint64_t table)
{
	unsigned int shift = 12 + 9 * level;
	unsigned int idx = (va >> shift) & (SPYRE_PTE_PER_TABLE - 1);
	unsigned int first = idx & ~(CARD_MMU_LINE_ENTRIES - 1), j;
	uint64_t base = va & ~(((uint64_t)SPYRE_PTE_PER_TABLE << shift) - 1);

	for (j = first; j < first + CARD_MMU_LINE_ENTRIES; j++) {
		uint64_t nva = base | (uint64_t)j << shift, e, page;
		uint8_t flags;

		if (j == idx)
			continue;
		e = read_entry(v, table + 8ull * j);
		if (!(e & SPYRE_PTE_VALID) || (level == 1 && !(e & SPYRE_PTE_LARGE)))
			continue;
		if (!leaf_ok(v, e, level, &page, &flags) || tlb_find(v->mmu, v->ctx, nva))
			continue;
		tlb_insert(v->mmu, v->ctx, nva, shift, page, flags);
	}
}

/*
 * Walk the tables of the context for @va. Every entry is read from device
 * memory as the card would (a 64-bit little-endian load, atomic so that a
 * concurrent update through BAR2 is seen whole or not at all). The walk
 * starts at the deepest table the page-walk cache holds for @va (1.16) and
 * caches the level-1 and level-0 tables it reaches.
 */
static bool walk(struct card_va *v, uint64_t va, unsigned int access, uint64_t *page,
		 unsigned int *shift, uint8_t *flags)
{
	struct card_mmu *u = v->mmu;
	uint64_t root = __atomic_load_n(&u->root[v->ctx], __ATOMIC_ACQUIRE);
	uint64_t table = root & ROOT_ADDR_MASK, e = 0;
	struct card_pwc_entry *c;
	int level = SPYRE_PTE_LEVELS - 1;

	if (!(root & SPYRE_MMU_ROOT_VALID))
		return fault(v, va, access, SPYRE_MMU_FAULT_NO_ROOT);
	if (!v->replay)
		__atomic_fetch_add(&u->misses, 1, __ATOMIC_RELAXED);
	c = pwc_find(u, v->ctx, va, 0);
	if (!c)
		c = pwc_find(u, v->ctx, va, 1);
	if (c) {
		table = c->table;
		level = c->level;
		if (!v->replay)
			c->lru = ++u->lru_clock;
	}
	for (; level >= 0; level--) {
		unsigned int idx = (va >> (12 + 9 * level)) & (SPYRE_PTE_PER_TABLE - 1);
		uint64_t ea = table + 8ull * idx;

		v->walk_reads += !v->replay;
		/* the root is checked when written; tables come from checked entries */
		if (ea + 8 > v->mem_size)
			return fault(v, va, access, SPYRE_MMU_FAULT_BAD_ENTRY);
		e = read_entry(v, ea);
		if (!(e & SPYRE_PTE_VALID))
			return fault(v, va, access, SPYRE_MMU_FAULT_NOT_PRESENT);
		if (level == 0 || (level == 1 && (e & SPYRE_PTE_LARGE)))
			break;
		if (e & ~TABLE_BITS)
			return fault(v, va, access, SPYRE_MMU_FAULT_BAD_ENTRY);
		table = e & SPYRE_PTE_ADDR_MASK;
		if (table + 4096 > v->mem_size)
			return fault(v, va, access, SPYRE_MMU_FAULT_BAD_ENTRY);
		if (level <= 2 && !v->replay)
			pwc_insert(u, v->ctx, va, level - 1, table);
	}
	*shift = level == 0 ? 12 : 21;
	if (!leaf_ok(v, e, level, page, flags))
		return fault(v, va, access, SPYRE_MMU_FAULT_BAD_ENTRY);
	if (!v->replay)
		fill_line(v, va, level, table);
	return true;
}

void card_va_init(struct card_va *v, struct spyre_model *m, uint32_t ctx)
{
	memset(v, 0, sizeof(*v));
	memset(&m->mmu->pending, 0, sizeof(m->mmu->pending));	/* a new command */
	v->m = m;
	v->mmu = m->mmu;
	v->ctx = ctx;
	v->devmem = m->devmem;
	v->mem_size = m->cfg.mem_size;
	v->timing = &m->cfg.timing;
}

bool card_va_translate(struct card_va *v, uint64_t va, unsigned int access, unsigned int kinds,
		       uint64_t *pa, bool *sys, uint64_t *avail)
{
	struct card_mmu *u = v->mmu;
	uint64_t page, size;
	unsigned int shift;
	uint8_t flags;

	if (va >> SPYRE_MMU_VA_BITS)
		return fault(v, va, access, SPYRE_MMU_FAULT_RANGE);
	if (__atomic_load_n(&u->inval_any, __ATOMIC_ACQUIRE)) {
		apply_inval(u);
		v->last_ok = false;
	}
	if (v->last_ok && va >> v->last_shift == v->last_vpn) {
		page = v->last_pa;
		shift = v->last_shift;
		flags = v->last_flags;
	} else {
		struct card_tlb_entry *e = tlb_find(u, v->ctx, va);

		if (e) {
			if (!v->replay)
				e->lru = ++u->lru_clock;
			page = e->pa;
			shift = e->shift;
			flags = e->flags;
		} else {
			if (!walk(v, va, access, &page, &shift, &flags))
				return false;
			if (!v->replay)
				tlb_insert(u, v->ctx, va, shift, page, flags);
		}
		v->last_ok = true;
		v->last_vpn = va >> shift;
		v->last_pa = page;
		v->last_shift = (uint8_t)shift;
		v->last_flags = flags;
	}
	if ((access == SPYRE_MMU_ACCESS_WRITE && !(flags & SPYRE_PTE_WRITE)) ||
	    (access == SPYRE_MMU_ACCESS_EXEC && !(flags & SPYRE_PTE_EXEC)))
		return fault(v, va, access, SPYRE_MMU_FAULT_PROTECTION);
	if (!(kinds & ((flags & SPYRE_PTE_SYS) ? CARD_VA_SYS : CARD_VA_DEV)))
		return fault(v, va, access, SPYRE_MMU_FAULT_KIND);
	size = 1ull << shift;
	*pa = page + (va & (size - 1));
	*sys = flags & SPYRE_PTE_SYS;
	*avail = size - (va & (size - 1));
	return true;
}

uint64_t card_va_walk_end(struct card_va *v, struct card_dram *dram, uint64_t start)
{
	uint64_t reads = v->walk_reads, end, chan;

	v->walk_reads = 0;
	if (!reads)
		return start;
	end = start + reads * v->timing->mmu_walk_read_ns;
	chan = card_dram_reserve(dram, start,
				 card_time_bytes(reads * CARD_MMU_WALK_BURST,
						 v->timing->dram_bytes_per_us));
	return card_max64(end, chan);
}

uint16_t card_va_fault_space(unsigned int access)
{
	return access == SPYRE_MMU_ACCESS_WRITE ? SPYRE_FAULT_SPACE_VA_WRITE :
	       access == SPYRE_MMU_ACCESS_EXEC ? SPYRE_FAULT_SPACE_VA_EXEC :
	       SPYRE_FAULT_SPACE_VA_READ;
}

static void ring_record(struct card_ring *r, uint32_t info, uint64_t va)
{
	if (r->mmu_fault_info & SPYRE_MMU_FAULT_VALID) {
		r->mmu_fault_info |= SPYRE_MMU_FAULT_OVERFLOW;
		return;
	}
	r->mmu_fault_info = info;
	r->mmu_fault_addr = va;
}

/*
 * The per-ring fault records (1.15), in the step that stops the context:
 * the faulting ring's, and those of the rings the stop holds (their
 * SPYRE_RING_CTX is the context), so each finds the fault that stopped
 * it whatever other contexts fault meanwhile.
 */
static void ring_records(struct spyre_model *m, unsigned int ring, uint32_t info,
			 struct card_mmu_fault f)
{
	unsigned int n;

	ring_record(&m->rings[ring], info, f.va);
	if (!f.ctx)
		return;
	for (n = 0; n < m->cfg.num_rings; n++)
		if (n != ring && m->rings[n].ctx == f.ctx)
			ring_record(&m->rings[n], info, f.va);
}

/* RESUME of @ctx: the records naming it are over. */
static void ring_records_clear(struct spyre_model *m, uint32_t ctx)
{
	unsigned int n;

	for (n = 0; n < m->cfg.num_rings; n++) {
		struct card_ring *r = &m->rings[n];

		if ((r->mmu_fault_info & SPYRE_MMU_FAULT_VALID) &&
		    SPYRE_MMU_FAULT_CTX(r->mmu_fault_info) == ctx) {
			r->mmu_fault_info = 0;
			r->mmu_fault_addr = 0;
		}
	}
}

/*
 * Under the lock, after the command failed its job: the first fault is
 * latched in the fault registers (later ones only set OVERFLOW until the
 * driver clears it), the context stops, the error vector fires. The job's
 * completion record names the address unless the failure already did.
 */
void card_mmu_fault_commit(struct spyre_model *m, unsigned int ring, bool to_job)
{
	struct card_mmu *u = m->mmu;
	struct card_mmu_fault f = u->pending;
	struct card_job *j = &m->rings[ring].job;
	uint32_t info;

	memset(&u->pending, 0, sizeof(u->pending));
	if (!f.valid)
		return;
	if (to_job && !j->has_fault) {
		j->has_fault = true;
		j->fault_insn = SPYRE_FAULT_INSN_NONE;
		j->fault_core = 0;
		j->fault_space = card_va_fault_space(f.access);
		j->fault_addr = f.va;
	}
	if (f.ctx < SPYRE_MMU_NUM_CTX && f.ctx)
		u->faulted[f.ctx] = true;
	info = SPYRE_MMU_FAULT_VALID | (ring & 0xff) << 16 | (f.ctx & 0xff) << 8 |
	       (f.reason & 0xfu) << 4 | (f.access & 0xfu);
	ring_records(m, ring, info, f);
	if (u->fault_info & SPYRE_MMU_FAULT_VALID) {
		u->fault_info |= SPYRE_MMU_FAULT_OVERFLOW;
	} else {
		u->fault_info = info;
		u->fault_addr = f.va;
	}
	card_error(m, SPYRE_ERR_STATUS_MMU, SPYRE_ERR_INFO(SPYRE_ERR_INFO_SRC_MMU, ring, f.ctx),
		   false);
}

bool card_mmu_reg_read(struct spyre_model *m, uint32_t off, uint32_t *val)
{
	struct card_mmu *u = m->mmu;
	uint64_t root = __atomic_load_n(&u->root[u->select], __ATOMIC_RELAXED);

	switch (off) {
	case SPYRE_REG_MMU_NUM_CTX:
		*val = SPYRE_MMU_NUM_CTX;
		return true;
	case SPYRE_REG_MMU_CTX_SELECT:
		*val = u->select;
		return true;
	case SPYRE_REG_MMU_CTX_ROOT_LO:
		*val = (uint32_t)root;
		return true;
	case SPYRE_REG_MMU_CTX_ROOT_HI:
		*val = (uint32_t)(root >> 32);
		return true;
	case SPYRE_REG_MMU_CTX_CTRL:
		*val = 0;
		return true;
	case SPYRE_REG_MMU_CTX_STATUS:
		*val = (u->faulted[u->select] ? SPYRE_MMU_CTX_FAULTED : 0) |
		       ((root & SPYRE_MMU_ROOT_VALID) ? SPYRE_MMU_CTX_ROOT_SET : 0);
		return true;
	case SPYRE_REG_MMU_FAULT_INFO:
		*val = u->fault_info;
		return true;
	case SPYRE_REG_MMU_FAULT_ADDR_LO:
		*val = (uint32_t)u->fault_addr;
		return true;
	case SPYRE_REG_MMU_FAULT_ADDR_HI:
		*val = (uint32_t)(u->fault_addr >> 32);
		return true;
	case SPYRE_REG_MMU_TLB_MISSES:
		*val = __atomic_load_n(&u->misses, __ATOMIC_RELAXED);
		return true;
	}
	return false;
}

/*
 * A root is a 4 KiB-aligned table inside device memory, or 0 (no root).
 * Context 0 has none: it does not translate.
 */
static bool set_root(struct spyre_model *m, uint32_t hi)
{
	struct card_mmu *u = m->mmu;
	uint64_t root = (uint64_t)hi << 32 | u->root_lo_latch;
	uint64_t table = root & ROOT_ADDR_MASK;

	if (!u->select || (root & 0xffe) ||
	    ((root & SPYRE_MMU_ROOT_VALID) && table + 4096 > m->cfg.mem_size))
		return false;
	__atomic_store_n(&u->root[u->select], root, __ATOMIC_RELEASE);
	post_inval(u, u->select, false);
	return true;
}

bool card_mmu_reg_write(struct spyre_model *m, uint32_t off, uint32_t val, bool *kick)
{
	struct card_mmu *u = m->mmu;
	const uint32_t ctrl = SPYRE_MMU_CTRL_INVALIDATE | SPYRE_MMU_CTRL_RESUME |
			      SPYRE_MMU_CTRL_INVALIDATE_ALL;

	*kick = false;
	switch (off) {
	case SPYRE_REG_MMU_CTX_SELECT:
		if (val >= SPYRE_MMU_NUM_CTX)
			return false;
		u->select = val;
		return true;
	case SPYRE_REG_MMU_CTX_ROOT_LO:
		u->root_lo_latch = val;
		return true;
	case SPYRE_REG_MMU_CTX_ROOT_HI:
		return set_root(m, val);
	case SPYRE_REG_MMU_CTX_CTRL:
		if ((val & ~ctrl) || (!u->select && (val & ~SPYRE_MMU_CTRL_INVALIDATE_ALL)))
			return false;
		if (val & SPYRE_MMU_CTRL_INVALIDATE_ALL)
			post_inval(u, 0, true);
		else if (val & SPYRE_MMU_CTRL_INVALIDATE)
			post_inval(u, u->select, false);
		if (val & SPYRE_MMU_CTRL_RESUME)
			ring_records_clear(m, u->select);
		if ((val & SPYRE_MMU_CTRL_RESUME) && u->faulted[u->select]) {
			u->faulted[u->select] = false;
			*kick = true;
		}
		return true;
	case SPYRE_REG_MMU_FAULT_INFO:
		if (val & ~SPYRE_MMU_FAULT_VALID)
			return false;
		if (val)
			u->fault_info = 0;	/* the next fault is recorded */
		return true;
	}
	return false;
}
