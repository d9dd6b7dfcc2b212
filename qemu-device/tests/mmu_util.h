/* SPDX-License-Identifier: GPL-2.0-or-later OR MIT */
/*
 * Helpers of the card MMU tests (test_mmu*.c): page tables built in the
 * test card's device memory, rings on a context, descriptors with card
 * virtual addresses.
 */
#ifndef SPYRE_TEST_MMU_UTIL_H
#define SPYRE_TEST_MMU_UTIL_H

#include "harness.h"

#define PT1		0x3000000ull	/* page tables of context 1 (device memory) */
#define PT2		0x3200000ull	/* of context 2 */
#define REC_VA		0x7fff00000000ull /* records: host page H_REC, mapped SYS */
#define TOK(n)		(1u << (n))

struct pt {
	struct tcard *t;
	uint64_t root, next;
};

static inline uint64_t pt_alloc(struct pt *p)
{
	uint64_t a = p->next;

	p->next += 4096;
	memset(p->t->dev + a, 0, 4096);
	return a;
}

static inline uint64_t *pte_at(struct tcard *t, uint64_t table, unsigned int idx)
{
	return (uint64_t *)(t->dev + table) + idx;
}

/* Context @ctx gets an empty table tree at @base and its root set. */
static inline void pt_init(struct pt *p, struct tcard *t, unsigned int ctx, uint64_t base)
{
	p->t = t;
	p->next = base;
	p->root = pt_alloc(p);
	tc_wr(t, SPYRE_REG_MMU_CTX_SELECT, ctx);
	tc_wr(t, SPYRE_REG_MMU_CTX_ROOT_LO, (uint32_t)p->root | SPYRE_MMU_ROOT_VALID);
	tc_wr(t, SPYRE_REG_MMU_CTX_ROOT_HI, (uint32_t)(p->root >> 32));
}

/* The entry of @va at @level (3 = root), creating the tables above it. */
static inline uint64_t *pt_slot(struct pt *p, uint64_t va, int level)
{
	uint64_t table = p->root;
	int l;

	for (l = 3; l > level; l--) {
		uint64_t *e = pte_at(p->t, table, (va >> (12 + 9 * l)) & 511);

		if (!(*e & SPYRE_PTE_VALID))
			*e = pt_alloc(p) | SPYRE_PTE_VALID;
		table = *e & SPYRE_PTE_ADDR_MASK;
	}
	return pte_at(p->t, table, (va >> (12 + 9 * level)) & 511);
}

static inline void map4k(struct pt *p, uint64_t va, uint64_t pa, uint64_t flags)
{
	*pt_slot(p, va, 0) = spyre_pte_leaf(pa, flags);
}

static inline void map2m(struct pt *p, uint64_t va, uint64_t pa, uint64_t flags)
{
	*pt_slot(p, va, 1) = pa | flags | SPYRE_PTE_VALID | SPYRE_PTE_LARGE;
}

/* Completion records of the test's host page, reachable in the context. */
static inline void map_records(struct pt *p)
{
	map4k(p, REC_VA, HOST_BASE + H_REC(0), SPYRE_PTE_WRITE | SPYRE_PTE_SYS);
}

/* Ring @n on context @ctx (set while the ring is disabled). */
static inline void ring_ctx_setup(struct tcard *t, unsigned int n, unsigned int ctx)
{
	tc_wr(t, SPYRE_RING_REG(n, SPYRE_RING_CTX), ctx);
	ring_setup(t, n, 6);
}

static inline void push_fence_va_flags(struct tcard *t, unsigned int n, uint64_t seqno,
				       unsigned int rec_i, uint8_t flags)
{
	union spyre_hw_desc d;

	spyre_desc_fence(&d, flags);
	spyre_desc_fence_seal(&d, seqno, REC_VA + 64ull * rec_i);
	ring_push(t, n, &d);
}

static inline void push_fence_va(struct tcard *t, unsigned int n, uint64_t seqno,
				 unsigned int rec_i)
{
	union spyre_hw_desc d;

	spyre_desc_fence(&d, 0);
	spyre_desc_fence_seal(&d, seqno, REC_VA + 64ull * rec_i);
	ring_push(t, n, &d);
}

static inline void push_va_dma(struct tcard *t, unsigned int n, unsigned int dir,
			       uint64_t len, uint64_t dev, uint64_t src, uint64_t host_va,
			       uint32_t fill)
{
	union spyre_hw_desc d;

	d_dma(&d, dir, len, dev, src, host_va, 0, 0, fill);
	ring_push(t, n, &d);
}

static inline void fill_pattern(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 37 + seed * 11 + (i >> 9));
}

static inline uint64_t misses(struct tcard *t)
{
	return tc_rd(t, SPYRE_REG_MMU_TLB_MISSES);
}

static inline void push_set_ctx(struct tcard *t, unsigned int n, uint16_t ctx)
{
	union spyre_hw_desc d;

	spyre_desc_set_ctx(&d, ctx);
	ring_push(t, n, &d);
}

/* Ring @n as a user-mode queue: ring and write-back at card VAs of context @ctx. */
static inline void ring_va_setup(struct tcard *t, unsigned int n, unsigned int ctx,
				 uint64_t ring_va, unsigned int log2, uint64_t wb_va)
{
	tc_wr(t, SPYRE_RING_REG(n, SPYRE_RING_CTX), ctx | SPYRE_RING_CTX_VA);
	tc_wr(t, SPYRE_RING_REG(n, SPYRE_RING_BASE_LO), (uint32_t)ring_va);
	tc_wr(t, SPYRE_RING_REG(n, SPYRE_RING_BASE_HI), (uint32_t)(ring_va >> 32));
	tc_wr(t, SPYRE_RING_REG(n, SPYRE_RING_SIZE_LOG2), log2);
	tc_wr(t, SPYRE_RING_REG(n, SPYRE_RING_WB_LO), (uint32_t)wb_va);
	tc_wr(t, SPYRE_RING_REG(n, SPYRE_RING_WB_HI), (uint32_t)(wb_va >> 32));
	tc_wr(t, SPYRE_RING_REG(n, SPYRE_RING_CTRL), SPYRE_RING_CTRL_ENABLE);
	t->tail[n] = 0;
	t->log2[n] = log2;
}

#endif /* SPYRE_TEST_MMU_UTIL_H */
