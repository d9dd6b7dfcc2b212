// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * The card MMU's page-walk cache and line fill (interface 1.16): how many
 * levels a walk reads, which neighbours one 64-byte read puts in the TLB,
 * and that neither ever serves a translation the tables no longer hold
 * after an invalidation, or one of another context.
 */
#include "mmu_util.h"

#define FILL_NS	(1000 + 1)	/* DMA latency + 4 bytes at 200 GB/s */

/* A 4-byte FILL of @va on ring @n; its status, record @rec_i. */
static uint32_t fill_on(struct tcard *t, unsigned int n, uint64_t va, unsigned int rec_i)
{
	push_va_dma(t, n, SPYRE_DMA_FILL, 4, va, 0, 0, 0x5a5a5a5a);
	push_fence_va(t, n, 100 + rec_i, rec_i);
	ring_run(t, n);
	return rec(t, rec_i)->status;
}

/* The reason of the fault just reported; clears it and resumes context 1. */
static unsigned int take_fault(struct tcard *t)
{
	uint32_t info = tc_rd(t, SPYRE_REG_MMU_FAULT_INFO);

	tc_wr(t, SPYRE_REG_MMU_FAULT_INFO, SPYRE_MMU_FAULT_VALID);
	tc_wr(t, SPYRE_REG_MMU_CTX_SELECT, 1);
	tc_wr(t, SPYRE_REG_MMU_CTX_CTRL, SPYRE_MMU_CTRL_RESUME);
	return SPYRE_MMU_FAULT_REASON(info);
}

/*
 * Sixteen 4 KiB pages in a row: the first walk reads four levels and
 * brings its line's other seven translations; the next line's walk starts
 * at the cached level-0 table (one read), another 2 MiB region's at the
 * level-1 table (two). INVALIDATE empties both caches.
 */
TEST(mmu_walk_cache_and_line_fill)
{
	struct tcard *t = tc_new(NULL);
	const uint64_t va = 0x10000000ull, pa = 0x100000;	/* a line starts at va */
	struct pt p;
	uint64_t m0;
	unsigned int i, r = 0;

	CHECK(tc_rd(t, SPYRE_REG_VERSION) >= SPYRE_HW_VERSION(1, 16));
	pt_init(&p, t, 1, PT1);
	map_records(&p);
	for (i = 0; i < 16; i++)
		map4k(&p, va + 4096ull * i, pa + 4096ull * i, SPYRE_PTE_WRITE);
	map4k(&p, va + 0x200000, 0x200000, SPYRE_PTE_WRITE);
	ring_ctx_setup(t, 0, 1);

	m0 = misses(t);
	CHECK_EQ(fill_on(t, 0, va, r), SPYRE_CMD_OK);
	CHECK_EQ(rec(t, r++)->dma_ns, 400 + FILL_NS);
	CHECK_EQ(misses(t) - m0, 2);	/* the page and the record's page */
	for (i = 1; i < 8; i++) {	/* the rest of the line: TLB hits */
		CHECK_EQ(fill_on(t, 0, va + 4096ull * i, r), SPYRE_CMD_OK);
		CHECK_EQ(rec(t, r++)->dma_ns, FILL_NS);
	}
	CHECK_EQ(misses(t) - m0, 2);
	CHECK_EQ(fill_on(t, 0, va + 4096ull * 8, r), SPYRE_CMD_OK);
	CHECK_EQ(rec(t, r++)->dma_ns, 100 + FILL_NS);
	CHECK_EQ(fill_on(t, 0, va + 4096ull * 15, r), SPYRE_CMD_OK);
	CHECK_EQ(rec(t, r++)->dma_ns, FILL_NS);
	CHECK_EQ(fill_on(t, 0, va + 0x200000, r), SPYRE_CMD_OK);
	CHECK_EQ(rec(t, r++)->dma_ns, 200 + FILL_NS);
	CHECK_EQ(misses(t) - m0, 4);
	for (i = 0; i < 16; i++)	/* pages 9..14 were not written */
		CHECK_EQ(t->dev[pa + 4096ull * i], i < 9 || i == 15 ? 0x5a : 0);
	CHECK_EQ(t->dev[0x200000], 0x5a);

	tc_wr(t, SPYRE_REG_MMU_CTX_SELECT, 1);
	tc_wr(t, SPYRE_REG_MMU_CTX_CTRL, SPYRE_MMU_CTRL_INVALIDATE);
	CHECK_EQ(fill_on(t, 0, va + 4096ull * 5, r), SPYRE_CMD_OK);
	CHECK_EQ(rec(t, r++)->dma_ns, 400 + FILL_NS);
	tc_free(t);
}

/*
 * A line fill caches only valid, well-formed leaves: a page mapped after
 * its neighbour's walk is found without an invalidation, and a malformed
 * neighbour still faults BAD_ENTRY when used.
 */
TEST(mmu_line_fill_skips_invalid_and_malformed_entries)
{
	struct tcard *t = tc_new(NULL);
	const uint64_t va = 0x10000000ull;
	struct pt p;
	uint64_t m0;

	pt_init(&p, t, 1, PT1);
	map_records(&p);
	map4k(&p, va, 0x100000, SPYRE_PTE_WRITE);
	*pt_slot(&p, va + 0x2000, 0) = spyre_pte_leaf(0x102000, SPYRE_PTE_WRITE) | 0x10;
	ring_ctx_setup(t, 0, 1);
	CHECK_EQ(fill_on(t, 0, va, 0), SPYRE_CMD_OK);

	map4k(&p, va + 0x1000, 0x101000, SPYRE_PTE_WRITE);	/* no invalidation */
	m0 = misses(t);
	CHECK_EQ(fill_on(t, 0, va + 0x1000, 1), SPYRE_CMD_OK);
	CHECK_EQ(misses(t) - m0, 1);
	CHECK_EQ(rec(t, 1)->dma_ns, 100 + FILL_NS);
	CHECK_EQ(t->dev[0x101000], 0x5a);

	CHECK_EQ(fill_on(t, 0, va + 0x2000, 2), SPYRE_CMD_ERR_PAGE_FAULT);
	CHECK_EQ(take_fault(t), SPYRE_MMU_FAULT_BAD_ENTRY);
	CHECK_EQ(t->dev[0x102000], 0);
	tc_free(t);
}

/*
 * The driver frees a level-0 table only after clearing the entry above it
 * and invalidating the context: from then on no walk may start at the old
 * table, whatever its memory now holds. Before the invalidation the card
 * may still use it (the tables are the driver's to keep consistent).
 */
TEST(mmu_walk_cache_forgets_freed_tables)
{
	struct tcard *t = tc_new(NULL);
	const uint64_t va = 0x10000000ull, far = va + 4096ull * 64;
	uint64_t table;
	struct pt p;

	pt_init(&p, t, 1, PT1);
	map_records(&p);
	map4k(&p, va, 0x100000, SPYRE_PTE_WRITE);
	map4k(&p, far, 0x140000, SPYRE_PTE_WRITE);
	table = *pt_slot(&p, va, 1) & SPYRE_PTE_ADDR_MASK;
	ring_ctx_setup(t, 0, 1);
	CHECK_EQ(fill_on(t, 0, va, 0), SPYRE_CMD_OK);	/* caches the level-0 table */

	/* unmap the 2 MiB region and reuse its table's memory for other data */
	*pt_slot(&p, va, 1) = 0;
	*pte_at(t, table, (far >> 12) & 511) = spyre_pte_leaf(0x180000, SPYRE_PTE_WRITE);
	CHECK_EQ(fill_on(t, 0, far, 1), SPYRE_CMD_OK);	/* not invalidated yet */
	CHECK_EQ(t->dev[0x180000], 0x5a);
	CHECK_EQ(t->dev[0x140000], 0);

	tc_wr(t, SPYRE_REG_MMU_CTX_SELECT, 1);
	tc_wr(t, SPYRE_REG_MMU_CTX_CTRL, SPYRE_MMU_CTRL_INVALIDATE);
	t->dev[0x180000] = 0;
	*pte_at(t, table, ((far >> 12) & 511) + 8) = spyre_pte_leaf(0x1c0000, SPYRE_PTE_WRITE);
	CHECK_EQ(fill_on(t, 0, far, 2), SPYRE_CMD_ERR_PAGE_FAULT);
	CHECK_EQ(take_fault(t), SPYRE_MMU_FAULT_NOT_PRESENT);
	CHECK_EQ(fill_on(t, 0, far + 4096ull * 8, 3), SPYRE_CMD_ERR_PAGE_FAULT);
	CHECK_EQ(take_fault(t), SPYRE_MMU_FAULT_NOT_PRESENT);
	CHECK_EQ(t->dev[0x180000], 0);
	CHECK_EQ(t->dev[0x1c0000], 0);
	tc_free(t);
}

/*
 * The walk cache is tagged by context: two contexts mapping the same VA
 * through their own tables each reach their own page, and the second
 * context's first walk reads all four levels.
 */
TEST(mmu_walk_cache_is_per_context)
{
	struct tcard *t = tc_new(NULL);
	const uint64_t va = 0x10000000ull;
	struct pt p1, p2;

	pt_init(&p1, t, 1, PT1);
	pt_init(&p2, t, 2, PT2);
	map_records(&p1);
	map_records(&p2);
	map4k(&p1, va, 0x100000, SPYRE_PTE_WRITE);
	map4k(&p2, va + 0x1000, 0x200000, SPYRE_PTE_WRITE);	/* same line, same tables' VAs */
	ring_ctx_setup(t, 0, 1);
	ring_ctx_setup(t, 1, 2);
	CHECK_EQ(fill_on(t, 0, va, 0), SPYRE_CMD_OK);
	CHECK_EQ(fill_on(t, 1, va + 0x1000, 1), SPYRE_CMD_OK);
	CHECK_EQ(rec(t, 1)->dma_ns, 400 + FILL_NS);
	CHECK_EQ(t->dev[0x100000], 0x5a);
	CHECK_EQ(t->dev[0x200000], 0x5a);
	/* context 1 never mapped va + 0x1000: its line fill left nothing there */
	CHECK_EQ(fill_on(t, 0, va + 0x1000, 2), SPYRE_CMD_ERR_PAGE_FAULT);
	CHECK_EQ(take_fault(t), SPYRE_MMU_FAULT_NOT_PRESENT);
	tc_free(t);
}
