// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Per-ring fault records (interface 1.15): when two contexts fault at
 * about the same time the card-wide latch keeps only the first, but each
 * ring's SPYRE_RING_FAULT_* names the fault that stopped its own context,
 * so a driver reads a queue's fault without racing other processes.
 */
#include "mmu_util.h"

static uint32_t rf_info(struct tcard *t, unsigned int n)
{
	return tc_rd(t, SPYRE_RING_REG(n, SPYRE_RING_FAULT_INFO));
}

static uint64_t rf_addr(struct tcard *t, unsigned int n)
{
	return (uint64_t)tc_rd(t, SPYRE_RING_REG(n, SPYRE_RING_FAULT_ADDR_HI)) << 32 |
	       tc_rd(t, SPYRE_RING_REG(n, SPYRE_RING_FAULT_ADDR_LO));
}

/*
 * Rings 0 and 2 run context 1, ring 1 context 2. In one pass ring 0 writes
 * past its mapping and ring 1 fetches a program from an unmapped page:
 * the latch holds one of them with OVERFLOW, each ring's record its own
 * (context, access, address), the idle ring 2 its sibling's. RESUME of
 * context 1 clears the records naming it and nothing else; a ring reset
 * clears its own; the records are read-only.
 */
TEST(ring_fault_records_per_context)
{
	struct tcard *t = tc_new(NULL);
	const uint64_t va1 = 0x40000000ull, va2 = 0x80000000ull;
	uint64_t slots[2] = { va2, 4096 };
	uint32_t info, latch;
	struct pt p1, p2;

	CHECK(tc_rd(t, SPYRE_REG_VERSION) >= SPYRE_HW_VERSION(1, SPYRE_HW_RING_FAULT_MINOR));
	pt_init(&p1, t, 1, PT1);
	pt_init(&p2, t, 2, PT2);
	map_records(&p1);
	map_records(&p2);
	map4k(&p1, va1, 0x100000, SPYRE_PTE_WRITE);
	map4k(&p2, va2, 0x200000, SPYRE_PTE_WRITE);
	ring_ctx_setup(t, 0, 1);
	ring_ctx_setup(t, 1, 2);
	ring_ctx_setup(t, 2, 1);
	CHECK_EQ(rf_info(t, 0), 0);
	CHECK_EQ(rf_addr(t, 1), 0);

	push_va_dma(t, 0, SPYRE_DMA_FILL, 8, va1 + 4096 - 4, 0, 0, 0x11111111);
	push_fence_va(t, 0, 1, 0);
	push_launch(t, 1, va2 + 0x10000, 4096, 0, 0, 1, slots);	/* no program there */
	push_fence_va(t, 1, 1, 1);
	ring_doorbell(t, 0);
	ring_doorbell(t, 1);
	tc_run(t);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_ERR_PAGE_FAULT);
	CHECK_EQ(rec(t, 1)->status, SPYRE_CMD_ERR_PAGE_FAULT);
	CHECK(ring_status(t, 0) & SPYRE_RING_STATUS_CTX_FAULT);
	CHECK(ring_status(t, 1) & SPYRE_RING_STATUS_CTX_FAULT);
	CHECK(ring_status(t, 2) & SPYRE_RING_STATUS_CTX_FAULT);

	latch = tc_rd(t, SPYRE_REG_MMU_FAULT_INFO);
	CHECK(latch & SPYRE_MMU_FAULT_VALID);
	CHECK(latch & SPYRE_MMU_FAULT_OVERFLOW);	/* the latch kept only one */

	info = rf_info(t, 0);
	CHECK(info & SPYRE_MMU_FAULT_VALID);
	CHECK(!(info & SPYRE_MMU_FAULT_OVERFLOW));
	CHECK_EQ(SPYRE_MMU_FAULT_CTX(info), 1);
	CHECK_EQ(SPYRE_MMU_FAULT_RING(info), 0);
	CHECK_EQ(SPYRE_MMU_FAULT_ACCESS(info), SPYRE_MMU_ACCESS_WRITE);
	CHECK_EQ(SPYRE_MMU_FAULT_REASON(info), SPYRE_MMU_FAULT_NOT_PRESENT);
	CHECK_EQ(rf_addr(t, 0), va1 + 4096);
	CHECK_EQ(rf_addr(t, 0), rec(t, 0)->fault_addr);

	info = rf_info(t, 1);
	CHECK(info & SPYRE_MMU_FAULT_VALID);
	CHECK_EQ(SPYRE_MMU_FAULT_CTX(info), 2);
	CHECK_EQ(SPYRE_MMU_FAULT_RING(info), 1);
	CHECK_EQ(SPYRE_MMU_FAULT_ACCESS(info), SPYRE_MMU_ACCESS_EXEC);
	CHECK_EQ(rf_addr(t, 1), va2 + 0x10000);
	CHECK_EQ(rf_addr(t, 1), rec(t, 1)->fault_addr);

	/* the sibling ring of context 1 names ring 0's fault */
	CHECK_EQ(rf_info(t, 2), rf_info(t, 0));
	CHECK_EQ(rf_addr(t, 2), va1 + 4096);
	CHECK_EQ(rf_info(t, 3), 0);		/* a ring of no faulting context */

	/* read-only: a write is a bad access and changes nothing */
	tc_wr(t, SPYRE_REG_ERR_STATUS, tc_rd(t, SPYRE_REG_ERR_STATUS));
	tc_wr(t, SPYRE_RING_REG(0, SPYRE_RING_FAULT_INFO), 0);
	CHECK(tc_rd(t, SPYRE_REG_ERR_STATUS) & SPYRE_ERR_STATUS_BAD_ACCESS);
	CHECK(rf_info(t, 0) & SPYRE_MMU_FAULT_VALID);

	/* RESUME of context 1: its records go, context 2's stays */
	map4k(&p1, va1 + 4096, 0x101000, SPYRE_PTE_WRITE);
	tc_wr(t, SPYRE_REG_MMU_CTX_SELECT, 1);
	tc_wr(t, SPYRE_REG_MMU_CTX_CTRL, SPYRE_MMU_CTRL_RESUME);
	tc_run(t);
	CHECK_EQ(rf_info(t, 0), 0);
	CHECK_EQ(rf_addr(t, 0), 0);
	CHECK_EQ(rf_info(t, 2), 0);
	CHECK_EQ(SPYRE_MMU_FAULT_CTX(rf_info(t, 1)), 2);
	CHECK_EQ(rf_addr(t, 1), va2 + 0x10000);
	push_va_dma(t, 0, SPYRE_DMA_FILL, 8, va1 + 4096 - 4, 0, 0, 0x22222222);
	push_fence_va(t, 0, 2, 2);
	ring_run(t, 0);
	CHECK_EQ(rec(t, 2)->status, SPYRE_CMD_OK);	/* context 1 runs again */
	CHECK_EQ(t->dev[0x101000], 0x22);
	CHECK_EQ(rf_info(t, 0), 0);

	/* a ring reset clears the ring's record */
	tc_wr(t, SPYRE_RING_REG(1, SPYRE_RING_CTRL), SPYRE_RING_CTRL_RESET);
	CHECK_EQ(rf_info(t, 1), 0);
	CHECK_EQ(rf_addr(t, 1), 0);
	tc_free(t);
}

/*
 * A user-mode queue (ring at a card VA) whose ring fetch faults gets the
 * record too, and a driver ring (context 0) that runs a SET_CTX job of a
 * faulting context records it without stopping; its second fault of
 * another context only sets OVERFLOW (the first wins). Card reset clears
 * every record.
 */
TEST(ring_fault_records_fetch_and_shared_ring)
{
	struct tcard *t = tc_new(NULL);
	const uint64_t ring_va = 0x500000000ull, wb_va = 0x600000000ull, va = 0x40000000ull;
	struct pt p1, p2;
	unsigned int i;
	uint32_t info;

	pt_init(&p1, t, 1, PT1);
	pt_init(&p2, t, 2, PT2);
	map_records(&p1);
	map4k(&p1, ring_va, HOST_BASE + H_RING(0), SPYRE_PTE_SYS);	/* one page: 64 slots */
	map4k(&p1, wb_va, 0x180000, SPYRE_PTE_WRITE);
	map4k(&p1, va, 0x100000, SPYRE_PTE_WRITE);
	ring_va_setup(t, 0, 1, ring_va, 7, wb_va);
	for (i = 0; i < 64; i++) {
		union spyre_hw_desc d;

		spyre_desc_nop(&d);
		ring_push(t, 0, &d);
	}
	push_fence_va(t, 0, 1, 0);	/* slot 64: on the unmapped second page */
	ring_run(t, 0);
	info = rf_info(t, 0);
	CHECK(info & SPYRE_MMU_FAULT_VALID);
	CHECK_EQ(SPYRE_MMU_FAULT_CTX(info), 1);
	CHECK_EQ(SPYRE_MMU_FAULT_ACCESS(info), SPYRE_MMU_ACCESS_READ);
	CHECK_EQ(rf_addr(t, 0), ring_va + 4096);

	/* the driver's ring: context 2 faults twice, the first is kept */
	ring_setup(t, 1, 6);
	push_set_ctx(t, 1, 2);
	push_va_dma(t, 1, SPYRE_DMA_FILL, 4, va + 0x3000, 0, 0, 0x33333333);
	push_fence(t, 1, 1, 1, false);
	ring_run(t, 1);
	CHECK_EQ(rec(t, 1)->status, SPYRE_CMD_ERR_PAGE_FAULT);
	CHECK_EQ(ring_status(t, 1), SPYRE_RING_STATUS_ENABLED | SPYRE_RING_STATUS_IDLE);
	info = rf_info(t, 1);
	CHECK_EQ(SPYRE_MMU_FAULT_CTX(info), 2);
	CHECK_EQ(SPYRE_MMU_FAULT_RING(info), 1);
	CHECK_EQ(rf_addr(t, 1), va + 0x3000);
	CHECK_EQ(rf_addr(t, 0), ring_va + 4096);	/* ring 0's is its own still */
	tc_wr(t, SPYRE_REG_MMU_CTX_SELECT, 2);
	tc_wr(t, SPYRE_REG_MMU_CTX_CTRL, SPYRE_MMU_CTRL_RESUME);
	CHECK_EQ(rf_info(t, 1), 0);
	push_set_ctx(t, 1, 2);
	push_va_dma(t, 1, SPYRE_DMA_FILL, 4, va + 0x5000, 0, 0, 0x44444444);
	push_fence(t, 1, 2, 2, false);
	push_set_ctx(t, 1, 3);		/* no root: faults too */
	push_va_dma(t, 1, SPYRE_DMA_FILL, 4, va, 0, 0, 0x55555555);
	push_fence(t, 1, 3, 3, false);
	ring_run(t, 1);
	CHECK_EQ(rec(t, 3)->status, SPYRE_CMD_ERR_PAGE_FAULT);
	info = rf_info(t, 1);
	CHECK_EQ(SPYRE_MMU_FAULT_CTX(info), 2);
	CHECK(info & SPYRE_MMU_FAULT_OVERFLOW);
	CHECK_EQ(rf_addr(t, 1), va + 0x5000);

	tc_wr(t, SPYRE_REG_CTRL, SPYRE_CTRL_RESET);
	CHECK_EQ(rf_info(t, 0), 0);
	CHECK_EQ(rf_info(t, 1), 0);
	CHECK_EQ(rf_addr(t, 0), 0);
	tc_free(t);
}
