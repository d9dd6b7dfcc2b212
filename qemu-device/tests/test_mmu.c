// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * The card MMU (interface 1.10): translation of 4 KiB and 2 MiB pages for
 * DMA, programs, timestamps and completion records; faults and their
 * reports; TLB invalidation and timing; isolation between contexts; and
 * context 0 staying the physical mode.
 */
#include <stdlib.h>

#include "mmu_util.h"

TEST(mmu_registers)
{
	struct tcard *t = tc_new(NULL);

	CHECK(tc_rd(t, SPYRE_REG_VERSION) >= SPYRE_HW_VERSION(1, 10));
	CHECK_EQ(tc_rd(t, SPYRE_REG_MMU_NUM_CTX), 256);
	tc_wr(t, SPYRE_REG_MMU_CTX_SELECT, 5);
	CHECK_EQ(tc_rd(t, SPYRE_REG_MMU_CTX_STATUS), 0);
	tc_wr(t, SPYRE_REG_MMU_CTX_ROOT_LO, 0x3000000 | SPYRE_MMU_ROOT_VALID);
	CHECK_EQ(tc_rd(t, SPYRE_REG_MMU_CTX_ROOT_LO), 0);	/* latched, not committed */
	tc_wr(t, SPYRE_REG_MMU_CTX_ROOT_HI, 0);
	CHECK_EQ(tc_rd(t, SPYRE_REG_MMU_CTX_ROOT_LO), 0x3000001);
	CHECK_EQ(tc_rd(t, SPYRE_REG_MMU_CTX_STATUS), SPYRE_MMU_CTX_ROOT_SET);
	CHECK_EQ(tc_rd(t, SPYRE_REG_ERR_STATUS), 0);
	/* bad accesses, ignored: a misaligned root, one past memory, context 0 */
	tc_wr(t, SPYRE_REG_MMU_CTX_ROOT_LO, 0x3000800 | SPYRE_MMU_ROOT_VALID);
	tc_wr(t, SPYRE_REG_MMU_CTX_ROOT_HI, 0);
	CHECK_EQ(tc_rd(t, SPYRE_REG_ERR_STATUS), SPYRE_ERR_STATUS_BAD_ACCESS);
	CHECK_EQ(tc_rd(t, SPYRE_REG_ERR_INFO) & 0xffff, SPYRE_REG_MMU_CTX_ROOT_HI);
	tc_wr(t, SPYRE_REG_ERR_STATUS, SPYRE_ERR_STATUS_BAD_ACCESS);
	tc_wr(t, SPYRE_REG_MMU_CTX_ROOT_LO, SPYRE_MMU_ROOT_VALID);
	tc_wr(t, SPYRE_REG_MMU_CTX_ROOT_HI, 1);	/* 4 GiB: outside 64 MiB */
	CHECK_EQ(tc_rd(t, SPYRE_REG_ERR_STATUS), SPYRE_ERR_STATUS_BAD_ACCESS);
	tc_wr(t, SPYRE_REG_ERR_STATUS, SPYRE_ERR_STATUS_BAD_ACCESS);
	CHECK_EQ(tc_rd(t, SPYRE_REG_MMU_CTX_ROOT_LO), 0x3000001);	/* unchanged */
	tc_wr(t, SPYRE_REG_MMU_CTX_SELECT, 0);
	tc_wr(t, SPYRE_REG_MMU_CTX_ROOT_LO, 0x3000000 | SPYRE_MMU_ROOT_VALID);
	tc_wr(t, SPYRE_REG_MMU_CTX_ROOT_HI, 0);
	CHECK_EQ(tc_rd(t, SPYRE_REG_ERR_STATUS), SPYRE_ERR_STATUS_BAD_ACCESS);
	tc_wr(t, SPYRE_REG_ERR_STATUS, SPYRE_ERR_STATUS_BAD_ACCESS);
	tc_wr(t, SPYRE_REG_MMU_CTX_SELECT, 256);
	CHECK_EQ(tc_rd(t, SPYRE_REG_ERR_STATUS), SPYRE_ERR_STATUS_BAD_ACCESS);
	tc_wr(t, SPYRE_REG_ERR_STATUS, SPYRE_ERR_STATUS_BAD_ACCESS);
	CHECK_EQ(tc_rd(t, SPYRE_REG_MMU_CTX_SELECT), 0);
	/* RING_CTX: a configuration register (disabled ring only), below 256 */
	tc_wr(t, SPYRE_RING_REG(1, SPYRE_RING_CTX), 256);
	CHECK_EQ(tc_rd(t, SPYRE_REG_ERR_STATUS), SPYRE_ERR_STATUS_BAD_ACCESS);
	tc_wr(t, SPYRE_REG_ERR_STATUS, SPYRE_ERR_STATUS_BAD_ACCESS);
	ring_ctx_setup(t, 1, 7);
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(1, SPYRE_RING_CTX)), 7);
	tc_wr(t, SPYRE_RING_REG(1, SPYRE_RING_CTX), 3);	/* enabled: refused */
	CHECK_EQ(tc_rd(t, SPYRE_REG_ERR_STATUS), SPYRE_ERR_STATUS_BAD_ACCESS);
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(1, SPYRE_RING_CTX)), 7);
	tc_wr(t, SPYRE_RING_REG(1, SPYRE_RING_CTRL), SPYRE_RING_CTRL_RESET);
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(1, SPYRE_RING_CTX)), 7);	/* survives */
	/* a card reset forgets roots and ring contexts */
	tc_wr(t, SPYRE_REG_CTRL, SPYRE_CTRL_RESET);
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(1, SPYRE_RING_CTX)), 0);
	tc_wr(t, SPYRE_REG_MMU_CTX_SELECT, 5);
	CHECK_EQ(tc_rd(t, SPYRE_REG_MMU_CTX_ROOT_LO), 0);
	CHECK_EQ(tc_rd(t, SPYRE_REG_MMU_CTX_STATUS), 0);
	tc_free(t);
}

/*
 * H2D from a host buffer mapped in 4 KiB pages into device pages mapped in
 * reverse physical order, then D2H back into another host buffer, a FILL
 * across pages from an unaligned start and an overlapping D2D: every byte
 * where the tables say, the record written through a SYS page.
 */
TEST(mmu_dma_4k_pages)
{
	struct tcard *t = tc_new(NULL);
	const uint64_t va_dev = 0x100000000ull, va_host = 0x200000000ull;
	const uint64_t va_out = 0x300000000ull, len = 5 * 4096 - 100;
	uint8_t *src = hptr(t, H_DATA), *out = hptr(t, H_DATA + 0x100000);
	uint8_t got[5 * 4096], ref[5 * 4096];
	struct pt p;
	unsigned int i;

	pt_init(&p, t, 1, PT1);
	map_records(&p);
	for (i = 0; i < 5; i++) {
		/* device page i of the VA range is physical page 9 - i */
		map4k(&p, va_dev + 4096ull * i, 0x100000 + 4096ull * (9 - i), SPYRE_PTE_WRITE);
		map4k(&p, va_host + 4096ull * i, HOST_BASE + H_DATA + 4096ull * i, SPYRE_PTE_SYS);
		map4k(&p, va_out + 4096ull * i, HOST_BASE + H_DATA + 0x100000 + 4096ull * i,
		      SPYRE_PTE_SYS | SPYRE_PTE_WRITE);
	}
	fill_pattern(src, 5 * 4096, 1);
	ring_ctx_setup(t, 0, 1);
	push_va_dma(t, 0, SPYRE_DMA_H2D, len, va_dev + 50, 0, va_host + 50, 0);
	push_va_dma(t, 0, SPYRE_DMA_D2H, len, va_dev + 50, 0, va_out + 50, 0);
	push_fence_va(t, 0, 11, 0);
	ring_run(t, 0);
	CHECK_EQ(rec(t, 0)->seqno, 11);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_OK);
	CHECK(!memcmp(out + 50, src + 50, len));
	/* the physical pages hold the data in reverse: page i of the range at 9 - i */
	for (i = 0; i < 5; i++)
		memcpy(got + 4096 * i, t->dev + 0x100000 + 4096ull * (9 - i), 4096);
	CHECK(!memcmp(got + 50, src + 50, len));
	CHECK_EQ(ring_status(t, 0), SPYRE_RING_STATUS_ENABLED | SPYRE_RING_STATUS_IDLE);

	/* FILL from an odd address over three pages; overlapping D2D (memmove) */
	for (i = 0; i < 5; i++)
		memcpy(ref + 4096 * i, t->dev + 0x100000 + 4096ull * (9 - i), 4096);
	for (i = 0; i < 3 * 4096; i++)
		ref[4099 + i] = (uint8_t)(0x11223344u >> (8 * (i % 4)));
	memmove(ref + 1000, ref + 0, 12000);
	push_va_dma(t, 0, SPYRE_DMA_FILL, 3 * 4096, va_dev + 4099, 0, 0, 0x11223344);
	push_va_dma(t, 0, SPYRE_DMA_D2D, 12000, va_dev + 1000, va_dev, 0, 0);
	push_fence_va(t, 0, 12, 1);
	ring_run(t, 0);
	CHECK_EQ(rec(t, 1)->status, SPYRE_CMD_OK);
	for (i = 0; i < 5; i++)
		memcpy(got + 4096 * i, t->dev + 0x100000 + 4096ull * (9 - i), 4096);
	CHECK(!memcmp(got, ref, sizeof(got)));
	CHECK_EQ(tc_rd(t, SPYRE_REG_MMU_FAULT_INFO), 0);
	tc_free(t);
}

/*
 * A program, its argument and its workspace in one 2 MiB page at a high
 * virtual address: LOAD, VEC and STORE through the MMU compute the same as
 * in physical mode, and one walk (three levels) serves the whole launch.
 */
TEST(mmu_launch_2m_page)
{
	struct tcard *t = tc_new(NULL);
	const uint64_t va = 0x5555400000ull, pa = 0x1400000;	/* both 2 MiB aligned */
	struct pt p;
	struct prog pr;
	float *in = (float *)(t->dev + pa + 0x10000), *res = (float *)(t->dev + pa + 0x20000);
	uint64_t slots[2] = { va + 0x10000, 0x20000 }, plen, m0;
	struct spyre_insn *v;
	unsigned int i;

	pt_init(&p, t, 3, PT1);
	map_records(&p);
	map2m(&p, va, pa, SPYRE_PTE_WRITE | SPYRE_PTE_EXEC);
	for (i = 0; i < 256; i++)
		in[i] = (float)i - 100.5f;
	prog_init(&pr, 1, 0);
	p_load(&pr, false, 1, 0, 0, 8, 128, 128, 0, 128)->signal = TOK(0);
	v = p_vec(&pr, 1, SPYRE_VF_SCALE, SPYRE_DT_FP32, SPYRE_DT_FP32, 8, 32, 0, 0, 4096);
	v->wait = TOK(0);
	v->signal = TOK(1);
	v->u.vec.src0_stride = 32;
	v->u.vec.dst_stride = 32;
	memcpy(&v->u.vec.imm0, &(float){ 2.0f }, 4);
	memcpy(&v->u.vec.imm1, &(float){ 1.0f }, 4);
	p_load(&pr, true, 1, 0, 0x10000, 8, 128, 128, 4096, 128)->wait = TOK(1);
	plen = prog_store(t, &pr, pa);
	ring_ctx_setup(t, 0, 3);
	m0 = misses(t);
	push_launch(t, 0, va, plen, 0, 0, 1, slots);
	push_fence_va(t, 0, 1, 0);
	ring_run(t, 0);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_OK);
	for (i = 0; i < 256; i++)
		CHECK(res[i] == in[i] * 2.0f + 1.0f);
	/* program, both LSU instructions and the record: one 2 MiB walk, one SYS 4 KiB walk */
	CHECK_EQ(misses(t) - m0, 2);

	/* a program page without EXEC: the fetch faults, nothing runs */
	map2m(&p, va, pa, SPYRE_PTE_WRITE);
	tc_wr(t, SPYRE_REG_MMU_CTX_CTRL, SPYRE_MMU_CTRL_INVALIDATE);
	memset(res, 0, 1024);
	push_launch(t, 0, va, plen, 0, 0, 1, slots);
	push_fence_va(t, 0, 2, 1);
	ring_run(t, 0);
	CHECK_EQ(rec(t, 1)->status, SPYRE_CMD_ERR_PAGE_FAULT);
	CHECK_EQ(rec(t, 1)->fault_insn, SPYRE_FAULT_INSN_NONE);
	CHECK_EQ(rec(t, 1)->fault_space, SPYRE_FAULT_SPACE_VA_EXEC);
	CHECK_EQ(rec(t, 1)->fault_addr, va);
	CHECK_EQ(res[0], 0);
	CHECK_EQ(tc_rd(t, SPYRE_REG_MMU_FAULT_INFO),
		 SPYRE_MMU_FAULT_VALID | 3 << 8 | SPYRE_MMU_FAULT_PROTECTION << 4 |
		 SPYRE_MMU_ACCESS_EXEC);
	tc_free(t);
}

/*
 * A DMA to an unmapped page: the job's record says where, the fault
 * registers say who and why, the error vector fires, the context's rings
 * stop (the next job does not run, nor does another ring of the context)
 * while another context's ring runs on; RESUME restarts them.
 */
TEST(mmu_fault_stops_only_its_context)
{
	struct tcard *t = tc_new(NULL);
	const uint64_t va = 0x40000000ull;
	struct pt p1, p2;
	uint32_t info;

	pt_init(&p1, t, 1, PT1);
	pt_init(&p2, t, 2, PT2);
	map_records(&p1);
	map_records(&p2);
	map4k(&p1, va, 0x100000, SPYRE_PTE_WRITE);
	map4k(&p2, va, 0x200000, SPYRE_PTE_WRITE);
	ring_ctx_setup(t, 0, 1);
	ring_ctx_setup(t, 1, 1);
	ring_ctx_setup(t, 2, 2);
	/* ring 0: its second DMA runs past the mapped page */
	push_va_dma(t, 0, SPYRE_DMA_FILL, 4096, va, 0, 0, 0x01010101);
	push_va_dma(t, 0, SPYRE_DMA_FILL, 8, va + 4092, 0, 0, 0x02020202);
	push_fence_va(t, 0, 1, 0);
	push_va_dma(t, 0, SPYRE_DMA_FILL, 4, va, 0, 0, 0x03030303);	/* next job */
	push_fence_va(t, 0, 2, 1);
	ring_run(t, 0);
	CHECK_EQ(rec(t, 0)->seqno, 1);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_ERR_PAGE_FAULT);
	CHECK_EQ(rec(t, 0)->error_index, 1);
	CHECK_EQ(rec(t, 0)->fault_insn, SPYRE_FAULT_INSN_NONE);
	CHECK_EQ(rec(t, 0)->fault_space, SPYRE_FAULT_SPACE_VA_WRITE);
	CHECK_EQ(rec(t, 0)->fault_addr, va + 4096);
	CHECK_EQ(t->dev[0x100000 + 4092], 0x01);	/* a faulting DMA moves nothing */
	info = tc_rd(t, SPYRE_REG_MMU_FAULT_INFO);
	CHECK(info & SPYRE_MMU_FAULT_VALID);
	CHECK(!(info & SPYRE_MMU_FAULT_OVERFLOW));
	CHECK_EQ(SPYRE_MMU_FAULT_RING(info), 0);
	CHECK_EQ(SPYRE_MMU_FAULT_CTX(info), 1);
	CHECK_EQ(SPYRE_MMU_FAULT_REASON(info), SPYRE_MMU_FAULT_NOT_PRESENT);
	CHECK_EQ(SPYRE_MMU_FAULT_ACCESS(info), SPYRE_MMU_ACCESS_WRITE);
	CHECK_EQ(tc_rd(t, SPYRE_REG_MMU_FAULT_ADDR_LO), (uint32_t)(va + 4096));
	CHECK_EQ(tc_rd(t, SPYRE_REG_MMU_FAULT_ADDR_HI), 0);
	CHECK_EQ(tc_rd(t, SPYRE_REG_ERR_STATUS), SPYRE_ERR_STATUS_MMU);
	CHECK_EQ(tc_rd(t, SPYRE_REG_ERR_INFO), SPYRE_ERR_INFO(SPYRE_ERR_INFO_SRC_MMU, 0, 1));
	CHECK_EQ(t->irqs[t->cfg.num_rings], 1);
	/* stopped after the failed job's FENCE: the next job waits */
	CHECK_EQ(wb_seqno(t, 0), 1);
	CHECK_EQ(t->dev[0x100000], 0x01);
	CHECK_EQ(ring_status(t, 0), SPYRE_RING_STATUS_ENABLED | SPYRE_RING_STATUS_CTX_FAULT);
	tc_wr(t, SPYRE_REG_MMU_CTX_SELECT, 1);
	CHECK_EQ(tc_rd(t, SPYRE_REG_MMU_CTX_STATUS),
		 SPYRE_MMU_CTX_FAULTED | SPYRE_MMU_CTX_ROOT_SET);

	/* ring 1 (same context) stays stopped; ring 2 (context 2) runs */
	push_va_dma(t, 1, SPYRE_DMA_FILL, 4, va + 8, 0, 0, 0x04040404);
	push_fence_va(t, 1, 3, 2);
	ring_doorbell(t, 1);
	push_va_dma(t, 2, SPYRE_DMA_FILL, 4, va, 0, 0, 0x05050505);
	push_fence_va(t, 2, 4, 3);
	ring_run(t, 2);
	CHECK_EQ(wb_seqno(t, 1), 0);
	CHECK_EQ(t->dev[0x100000 + 8], 0x01);
	CHECK_EQ(wb_seqno(t, 2), 4);
	CHECK_EQ(rec(t, 3)->status, SPYRE_CMD_OK);
	CHECK_EQ(t->dev[0x200000], 0x05);	/* context 2's page, not context 1's */
	CHECK_EQ(t->dev[0x100000], 0x01);

	/* a second fault only sets OVERFLOW; clearing lets the next one in */
	push_va_dma(t, 2, SPYRE_DMA_FILL, 4, va + 0x1000000, 0, 0, 0);
	push_fence_va(t, 2, 5, 4);
	ring_run(t, 2);
	CHECK_EQ(rec(t, 4)->status, SPYRE_CMD_ERR_PAGE_FAULT);
	CHECK_EQ(tc_rd(t, SPYRE_REG_MMU_FAULT_INFO), info | SPYRE_MMU_FAULT_OVERFLOW);
	CHECK_EQ(t->irqs[t->cfg.num_rings], 2);
	tc_wr(t, SPYRE_REG_MMU_FAULT_INFO, SPYRE_MMU_FAULT_VALID);
	CHECK_EQ(tc_rd(t, SPYRE_REG_MMU_FAULT_INFO), 0);

	/* the driver fixes the mapping and resumes context 1: both its rings run */
	map4k(&p1, va + 4096, 0x101000, SPYRE_PTE_WRITE);
	tc_wr(t, SPYRE_REG_MMU_CTX_SELECT, 1);
	tc_wr(t, SPYRE_REG_MMU_CTX_CTRL, SPYRE_MMU_CTRL_INVALIDATE | SPYRE_MMU_CTRL_RESUME);
	tc_run(t);
	CHECK_EQ(wb_seqno(t, 0), 2);
	CHECK_EQ(rec(t, 1)->status, SPYRE_CMD_OK);
	CHECK_EQ(t->dev[0x100000], 0x03);
	CHECK_EQ(wb_seqno(t, 1), 3);
	CHECK_EQ(t->dev[0x100000 + 8], 0x04);
	CHECK_EQ(ring_status(t, 0), SPYRE_RING_STATUS_ENABLED | SPYRE_RING_STATUS_IDLE);
	tc_free(t);
}

/* One DMA on context 1 of @len bytes at @va; the record's status. */
static uint32_t fill_status(struct tcard *t, uint64_t va, uint64_t len, unsigned int rec_i)
{
	push_va_dma(t, 0, SPYRE_DMA_FILL, len, va, 0, 0, 0x5a5a5a5a);
	push_fence_va(t, 0, 100 + rec_i, rec_i);
	ring_run(t, 0);
	return rec(t, rec_i)->status;
}

static unsigned int last_reason(struct tcard *t)
{
	uint32_t info = tc_rd(t, SPYRE_REG_MMU_FAULT_INFO);

	/* acknowledge and let the context run again for the next case */
	tc_wr(t, SPYRE_REG_MMU_FAULT_INFO, SPYRE_MMU_FAULT_VALID);
	tc_wr(t, SPYRE_REG_MMU_CTX_SELECT, 1);
	tc_wr(t, SPYRE_REG_MMU_CTX_CTRL, SPYRE_MMU_CTRL_RESUME | SPYRE_MMU_CTRL_INVALIDATE);
	return SPYRE_MMU_FAULT_REASON(info);
}

/*
 * Every malformed table is a fault with its reason, never a crash: a
 * read-only page written, a host page where device memory is needed,
 * reserved bits, a misaligned 2 MiB page, a page or a table outside device
 * memory, a 2 MiB bit at the last level; a table that points at itself
 * ends after four levels like any walk.
 */
TEST(mmu_fault_reasons)
{
	struct tcard *t = tc_new(NULL);
	const uint64_t va = 0x80000000ull;
	struct pt p;
	unsigned int r = 0;

	pt_init(&p, t, 1, PT1);
	map_records(&p);
	ring_ctx_setup(t, 0, 1);
	map4k(&p, va, 0x100000, 0);	/* read-only */
	CHECK_EQ(fill_status(t, va, 4, r++), SPYRE_CMD_ERR_PAGE_FAULT);
	CHECK_EQ(last_reason(t), SPYRE_MMU_FAULT_PROTECTION);
	map4k(&p, va, HOST_BASE + H_DATA, SPYRE_PTE_WRITE | SPYRE_PTE_SYS);	/* host page */
	CHECK_EQ(fill_status(t, va, 4, r++), SPYRE_CMD_ERR_PAGE_FAULT);
	CHECK_EQ(last_reason(t), SPYRE_MMU_FAULT_KIND);
	*pt_slot(&p, va, 0) = 0x100000 | 1ull << 60 | SPYRE_PTE_WRITE | SPYRE_PTE_VALID;
	CHECK_EQ(fill_status(t, va, 4, r++), SPYRE_CMD_ERR_PAGE_FAULT);
	CHECK_EQ(last_reason(t), SPYRE_MMU_FAULT_BAD_ENTRY);
	map4k(&p, va, 64ull << 20, SPYRE_PTE_WRITE);	/* one past device memory */
	CHECK_EQ(fill_status(t, va, 4, r++), SPYRE_CMD_ERR_PAGE_FAULT);
	CHECK_EQ(last_reason(t), SPYRE_MMU_FAULT_BAD_ENTRY);
	*pt_slot(&p, va, 0) |= SPYRE_PTE_LARGE;	/* a 2 MiB bit at level 0 */
	CHECK_EQ(fill_status(t, va, 4, r++), SPYRE_CMD_ERR_PAGE_FAULT);
	CHECK_EQ(last_reason(t), SPYRE_MMU_FAULT_BAD_ENTRY);
	map2m(&p, 0xc0000000ull, 0x101000, SPYRE_PTE_WRITE);	/* misaligned 2 MiB page */
	CHECK_EQ(fill_status(t, 0xc0000000ull, 4, r++), SPYRE_CMD_ERR_PAGE_FAULT);
	CHECK_EQ(last_reason(t), SPYRE_MMU_FAULT_BAD_ENTRY);
	map2m(&p, 0xc0000000ull, 63ull << 20, SPYRE_PTE_WRITE);	/* ends past memory */
	CHECK_EQ(fill_status(t, 0xc0000000ull, 4, r++), SPYRE_CMD_ERR_PAGE_FAULT);
	CHECK_EQ(last_reason(t), SPYRE_MMU_FAULT_BAD_ENTRY);
	/* a table outside device memory, and a table entry with leaf bits */
	*pt_slot(&p, 0x100000000ull, 2) = (1ull << 40) | SPYRE_PTE_VALID;
	CHECK_EQ(fill_status(t, 0x100000000ull, 4, r++), SPYRE_CMD_ERR_PAGE_FAULT);
	CHECK_EQ(last_reason(t), SPYRE_MMU_FAULT_BAD_ENTRY);
	*pt_slot(&p, 0x100000000ull, 2) = pt_alloc(&p) | SPYRE_PTE_VALID | SPYRE_PTE_WRITE;
	CHECK_EQ(fill_status(t, 0x100000000ull, 4, r++), SPYRE_CMD_ERR_PAGE_FAULT);
	CHECK_EQ(last_reason(t), SPYRE_MMU_FAULT_BAD_ENTRY);
	CHECK_EQ(fill_status(t, 0x140000000ull, 4, r++), SPYRE_CMD_ERR_PAGE_FAULT);
	CHECK_EQ(last_reason(t), SPYRE_MMU_FAULT_NOT_PRESENT);
	/* root entry 0 points at the root itself: VA 0 maps the root page */
	*pte_at(t, p.root, 0) = p.root | SPYRE_PTE_VALID;
	CHECK_EQ(fill_status(t, 0, 4, r), SPYRE_CMD_ERR_PAGE_FAULT);	/* no WRITE */
	CHECK_EQ(last_reason(t), SPYRE_MMU_FAULT_PROTECTION);
	r++;
	/* a range past 2^48 is refused before any translation */
	push_va_dma(t, 0, SPYRE_DMA_FILL, 8, (1ull << 48) - 4, 0, 0, 0);
	push_fence_va(t, 0, 200, r);
	ring_run(t, 0);
	CHECK_EQ(rec(t, r)->status, SPYRE_CMD_ERR_BOUNDS);
	/* a context without a root */
	tc_wr(t, SPYRE_RING_REG(1, SPYRE_RING_CTX), 9);
	ring_setup(t, 1, 4);
	push_va_dma(t, 1, SPYRE_DMA_FILL, 4, 0, 0, 0, 0);
	fence_and_run(t, 1, 7, 30, false);	/* its record cannot be written either */
	CHECK_EQ(wb_seqno(t, 1), 7);
	CHECK_EQ(rec(t, 30)->seqno, 0);
	CHECK_EQ(SPYRE_MMU_FAULT_REASON(tc_rd(t, SPYRE_REG_MMU_FAULT_INFO)),
		 SPYRE_MMU_FAULT_NO_ROOT);
	CHECK_EQ(SPYRE_MMU_FAULT_CTX(tc_rd(t, SPYRE_REG_MMU_FAULT_INFO)), 9);
	CHECK_EQ(t->dev[0x100000], 0);	/* nothing was written anywhere */
	tc_free(t);
}

/*
 * The TLB caches translations until invalidated: a changed entry is not
 * seen before MMU_CTX_CTRL.INVALIDATE, then it is. Also the cost: a cold
 * miss walks four levels (4 x 100 ns) before a 4 KiB page's DMA starts, a
 * 2 MiB page whose level-1 table the walk cache holds one, a hit nothing;
 * INVALIDATE empties the walk cache too.
 */
TEST(mmu_tlb_invalidation_and_timing)
{
	struct tcard *t = tc_new(NULL);
	const uint64_t va = 0x10000000ull, big = 0x20000000ull;
	struct pt p;
	uint64_t m0, fill_ns;

	pt_init(&p, t, 1, PT1);
	map_records(&p);
	map4k(&p, va, 0x100000, SPYRE_PTE_WRITE);
	map2m(&p, big, 0x1000000, SPYRE_PTE_WRITE);
	ring_ctx_setup(t, 0, 1);
	fill_ns = 1000 + 1;	/* DMA latency + 4 bytes at 200 GB/s */
	m0 = misses(t);
	CHECK_EQ(fill_status(t, va, 4, 0), SPYRE_CMD_OK);
	CHECK_EQ(misses(t) - m0, 2);	/* the page and the record's page */
	CHECK_EQ(rec(t, 0)->dma_ns, 400 + fill_ns);
	CHECK_EQ(fill_status(t, va, 4, 1), SPYRE_CMD_OK);
	CHECK_EQ(misses(t) - m0, 2);	/* hits */
	CHECK_EQ(rec(t, 1)->dma_ns, fill_ns);
	/* the first walk left the level-1 table of both VAs in the walk cache (1.16) */
	CHECK_EQ(fill_status(t, big + 0x1234, 4, 2), SPYRE_CMD_OK);
	CHECK_EQ(rec(t, 2)->dma_ns, 100 + fill_ns);
	CHECK_EQ(fill_status(t, big + 0x1ff000, 4, 3), SPYRE_CMD_OK);	/* same 2 MiB page */
	CHECK_EQ(rec(t, 3)->dma_ns, fill_ns);
	CHECK_EQ(t->dev[0x1000000 + 0x1234], 0x5a);
	CHECK_EQ(t->dev[0x1000000 + 0x1ff000], 0x5a);

	/* remap va to another page without invalidating: the TLB still says 0x100000 */
	map4k(&p, va, 0x180000, SPYRE_PTE_WRITE);
	t->dev[0x100000] = 0;
	CHECK_EQ(fill_status(t, va, 4, 4), SPYRE_CMD_OK);
	CHECK_EQ(t->dev[0x100000], 0x5a);
	CHECK_EQ(t->dev[0x180000], 0);
	/* invalidating another context changes nothing; this one's does */
	tc_wr(t, SPYRE_REG_MMU_CTX_SELECT, 2);
	tc_wr(t, SPYRE_REG_MMU_CTX_CTRL, SPYRE_MMU_CTRL_INVALIDATE);
	t->dev[0x100000] = 0;
	CHECK_EQ(fill_status(t, va, 4, 5), SPYRE_CMD_OK);
	CHECK_EQ(t->dev[0x100000], 0x5a);
	tc_wr(t, SPYRE_REG_MMU_CTX_SELECT, 1);
	tc_wr(t, SPYRE_REG_MMU_CTX_CTRL, SPYRE_MMU_CTRL_INVALIDATE);
	m0 = misses(t);
	CHECK_EQ(fill_status(t, va, 4, 6), SPYRE_CMD_OK);
	CHECK_EQ(t->dev[0x180000], 0x5a);
	CHECK_EQ(misses(t) - m0, 2);
	CHECK_EQ(rec(t, 6)->dma_ns, 400 + fill_ns);
	/* unmapping: after INVALIDATE_ALL the page faults */
	*pt_slot(&p, va, 0) = 0;
	tc_wr(t, SPYRE_REG_MMU_CTX_CTRL, SPYRE_MMU_CTRL_INVALIDATE_ALL);
	CHECK_EQ(fill_status(t, va, 4, 7), SPYRE_CMD_ERR_PAGE_FAULT);
	tc_free(t);
}

/*
 * Two contexts map the same virtual addresses to different memory; a
 * program of one cannot reach the other's data: its STORE to an address
 * only the other context maps faults (instruction, core, address named),
 * and the other context's memory is unchanged.
 */
TEST(mmu_two_contexts_isolated)
{
	struct tcard *t = tc_new(NULL);
	const uint64_t va = 0x600000000ull, other = 0x700000000ull;
	struct pt p1, p2;
	struct prog pr;
	uint64_t slots[4] = { va + 0x1000, 4096, other, 4096 }, plen;
	unsigned int i;

	pt_init(&p1, t, 1, PT1);
	pt_init(&p2, t, 2, PT2);
	map_records(&p1);
	map_records(&p2);
	/* each context: program page (EXEC), data page at va + 0x1000 */
	map4k(&p1, va, 0x100000, SPYRE_PTE_EXEC);
	map4k(&p1, va + 0x1000, 0x101000, SPYRE_PTE_WRITE);
	map4k(&p1, other, 0x300000, SPYRE_PTE_WRITE);	/* only context 1 maps this */
	map4k(&p2, va, 0x200000, SPYRE_PTE_EXEC);
	map4k(&p2, va + 0x1000, 0x201000, SPYRE_PTE_WRITE);
	memset(t->dev + 0x101000, 0x11, 4096);
	memset(t->dev + 0x201000, 0x22, 4096);
	memset(t->dev + 0x300000, 0x33, 4096);
	/* copy slot 0 to slot 1 on 2 cores (128 bytes each) */
	prog_init(&pr, 2, 0);
	p_load(&pr, false, 3, 0, 0, 1, 128, 128, 0, 128)->signal = TOK(0);
	p_load(&pr, true, 3, 1, 0, 1, 128, 128, 0, 128)->wait = TOK(0);
	pr.in[0].u.mem.core_stride = 128;
	pr.in[1].u.mem.core_stride = 128;
	plen = prog_store(t, &pr, 0x100000);
	prog_store(t, &pr, 0x200000);
	ring_ctx_setup(t, 0, 1);
	ring_ctx_setup(t, 1, 2);
	push_launch(t, 0, va, plen, 0, 0, 2, slots);
	push_fence_va(t, 0, 1, 0);
	push_launch(t, 1, va, plen, 0, 0, 2, slots);
	push_fence_va(t, 1, 2, 1);
	ring_doorbell(t, 0);
	ring_run(t, 1);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_OK);
	for (i = 0; i < 256; i++)
		CHECK_EQ(t->dev[0x300000 + i], 0x11);
	CHECK_EQ(t->dev[0x300000 + 256], 0x33);
	CHECK_EQ(rec(t, 1)->status, SPYRE_CMD_ERR_PAGE_FAULT);
	CHECK_EQ(rec(t, 1)->fault_insn, 1);
	CHECK(rec(t, 1)->fault_core < 2);	/* whichever core stored first */
	CHECK_EQ(rec(t, 1)->fault_space, SPYRE_FAULT_SPACE_VA_WRITE);
	CHECK_EQ(rec(t, 1)->fault_addr, other + 128ull * rec(t, 1)->fault_core);
	CHECK_EQ(SPYRE_MMU_FAULT_CTX(tc_rd(t, SPYRE_REG_MMU_FAULT_INFO)), 2);
	CHECK_EQ(SPYRE_MMU_FAULT_RING(tc_rd(t, SPYRE_REG_MMU_FAULT_INFO)), 1);
	/* context 1 runs on after context 2's fault */
	memset(t->dev + 0x101000, 0x44, 4096);
	push_launch(t, 0, va, plen, 0, 0, 2, slots);
	push_fence_va(t, 0, 3, 2);
	ring_run(t, 0);
	CHECK_EQ(rec(t, 2)->status, SPYRE_CMD_OK);
	CHECK_EQ(t->dev[0x300000], 0x44);
	CHECK_EQ(ring_status(t, 1), SPYRE_RING_STATUS_ENABLED | SPYRE_RING_STATUS_IDLE |
				    SPYRE_RING_STATUS_CTX_FAULT);
	tc_free(t);
}

/* TIMESTAMP in a context writes through the MMU, to device or host pages. */
TEST(mmu_timestamp_through_va)
{
	struct tcard *t = tc_new(NULL);
	struct pt p;
	uint64_t v;

	pt_init(&p, t, 1, PT1);
	map_records(&p);
	map4k(&p, 0x9000, 0x100000, SPYRE_PTE_WRITE);
	map4k(&p, 0xa000, HOST_BASE + H_DATA, SPYRE_PTE_WRITE | SPYRE_PTE_SYS);
	ring_ctx_setup(t, 0, 1);
	t->now = 0;
	push_va_dma(t, 0, SPYRE_DMA_FILL, 4, 0x9100, 0, 0, 0);
	push_ts(t, 0, false, 0x9ff8, 0, 0);
	push_ts(t, 0, false, 0xa010, 0, 0);
	push_fence_va(t, 0, 1, 0);
	ring_run(t, 0);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_OK);
	memcpy(&v, t->dev + 0x100ff8, 8);
	CHECK_EQ(v, rec(t, 0)->end_ns);
	memcpy(&v, hptr(t, H_DATA + 0x10), 8);
	CHECK_EQ(v, rec(t, 0)->end_ns);
	CHECK(v >= 1400);	/* after the FILL and its walk */
	/* a scatter-list count is refused in a context */
	push_ts(t, 0, false, 0xa010, 1, 0);
	push_fence_va(t, 0, 2, 1);
	ring_run(t, 0);
	CHECK_EQ(rec(t, 1)->status, SPYRE_CMD_ERR_INVALID);
	tc_free(t);
}

/*
 * Context 0 is the physical mode whatever the other contexts hold: same
 * results, same device time, no walk, the scatter list as before.
 */
TEST(mmu_context0_is_physical)
{
	struct tcard *t = tc_new(NULL);
	struct pt p;
	uint64_t sg = sg_simple(t, 0, 0, 8192);

	pt_init(&p, t, 1, PT1);
	map4k(&p, 0x100000, 0x200000, SPYRE_PTE_WRITE);	/* would redirect if used */
	fill_pattern(hptr(t, H_DATA), 8192, 5);
	ring_setup(t, 0, 4);
	push_dma(t, 0, SPYRE_DMA_H2D, 8192, 0x100000, 0, sg, 1, 0, 0);
	push_dma(t, 0, SPYRE_DMA_FILL, 64, 0x100000 + 8192, 0, 0, 0, 0, 0x77777777);
	fence_and_run(t, 0, 1, 0, false);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_OK);
	CHECK(!memcmp(t->dev + 0x100000, hptr(t, H_DATA), 8192));
	CHECK_EQ(t->dev[0x200000], 0);
	CHECK_EQ(t->dev[0x100000 + 8192], 0x77);
	/* 8192 B at 50 GB/s: 164 ns + 1000; 64 B fill: 1 ns + 1000 */
	CHECK_EQ(rec(t, 0)->dma_ns, 1164 + 1001);
	CHECK_EQ(misses(t), 0);
	CHECK_EQ(tc_rd(t, SPYRE_REG_MMU_FAULT_INFO), 0);
	tc_free(t);
}

/* Bytes [off, off + n) of a VA range mapped on 4 KiB pages at @phys[] (device). */
static void va_read(struct tcard *t, const uint64_t *phys, uint64_t off, uint8_t *out, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		out[i] = t->dev[phys[(off + i) / 4096] + (off + i) % 4096];
}

/*
 * LOAD, GATHER and STORE rows that cross 4 KiB pages scattered in device
 * memory: each byte comes from, and goes to, the page the tables name.
 */
TEST(mmu_launch_rows_cross_4k_pages)
{
	struct tcard *t = tc_new(NULL);
	const uint64_t in_va = 0x1000000, out_va = 0x3000000, ix_va = 0x4000000;
	uint64_t in_pa[3], out_pa[4], plen;
	uint64_t slots[6] = { in_va, 3 * 4096, out_va, 4 * 4096, ix_va, 16 };
	int32_t want[4] = { 5, 0, 2, 4 };
	uint8_t a[12000], b[12000];
	struct spyre_insn *in;
	struct prog pr;
	struct pt p;
	unsigned int i, r;

	pt_init(&p, t, 1, PT1);
	map_records(&p);
	for (i = 0; i < 3; i++) {
		in_pa[i] = 0x500000 + 4096ull * (2 - i);	/* reversed */
		map4k(&p, in_va + 4096ull * i, in_pa[i], 0);
	}
	for (i = 0; i < 4; i++) {
		out_pa[i] = 0x700000 + 8192ull * i;	/* with gaps */
		map4k(&p, out_va + 4096ull * i, out_pa[i], SPYRE_PTE_WRITE);
	}
	map4k(&p, ix_va, 0x800000, 0);
	map4k(&p, 0x2000000, 0x600000, SPYRE_PTE_EXEC);
	fill_pattern(t->dev + 0x500000, 3 * 4096, 9);
	memcpy(t->dev + 0x800000, want, sizeof(want));
	prog_init(&pr, 3, 0);
	/* 20 rows of 500 bytes, 500 apart, from slot byte 7: rows cross pages */
	p_load(&pr, false, 1, 0, 7, 20, 500, 500, 0, 512);
	p_load(&pr, true, 1, 1, 3, 20, 500, 500, 0, 512);
	/* gather 4 rows of 300 bytes, 2000 apart, by index */
	p_load(&pr, false, 1, 2, 0, 1, 16, 0, 0x10000, 0);
	in = p_load(&pr, false, 1, 0, 100, 4, 300, 2000, 0x20000, 512);
	in->flags = SPYRE_LOAD_GATHER;
	in->u.mem.core_stride2 = 0x10000;
	p_load(&pr, true, 1, 1, 12000, 4, 300, 300, 0x20000, 512);
	plen = prog_store(t, &pr, 0x600000);
	ring_ctx_setup(t, 0, 1);
	push_launch(t, 0, 0x2000000, plen, 0, 0, 3, slots);
	push_fence_va(t, 0, 1, 0);
	ring_run(t, 0);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_OK);
	va_read(t, in_pa, 7, a, 10000);
	va_read(t, out_pa, 3, b, 10000);
	CHECK(!memcmp(a, b, 10000));
	for (r = 0; r < 4; r++) {
		va_read(t, in_pa, 100 + 2000ull * want[r], a, 300);
		va_read(t, out_pa, 12000 + 300ull * r, b, 300);
		CHECK(!memcmp(a, b, 300));
	}
	tc_free(t);
}

/*
 * A LOAD whose page misses waits for the walk: the same launch on a cold
 * TLB takes exactly one walk longer than on a warm one; the program
 * fetch's walk (four levels) hides in the launch latency and leaves the
 * level-1 table both VAs share in the walk cache, so the LOAD's walk reads
 * two levels (2 x 100 ns).
 */
TEST(mmu_launch_walk_timing)
{
	struct tcard *t = tc_new(NULL);
	uint64_t slots[2] = { 0x1000000, 4096 }, plen, cold, warm;
	struct prog pr;
	struct pt p;

	pt_init(&p, t, 1, PT1);
	map_records(&p);
	map4k(&p, 0x1000000, 0x500000, 0);
	map4k(&p, 0x2000000, 0x600000, SPYRE_PTE_EXEC);
	prog_init(&pr, 1, 0);
	p_load(&pr, false, 1, 0, 0, 1, 128, 128, 0, 128);
	plen = prog_store(t, &pr, 0x600000);
	ring_ctx_setup(t, 0, 1);
	push_launch(t, 0, 0x2000000, plen, 0, 0, 1, slots);
	push_fence_va(t, 0, 1, 0);
	ring_run(t, 0);
	cold = rec(t, 0)->compute_ns;
	push_launch(t, 0, 0x2000000, plen, 0, 0, 1, slots);
	push_fence_va(t, 0, 2, 1);
	ring_run(t, 0);
	warm = rec(t, 1)->compute_ns;
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_OK);
	CHECK_EQ(cold - warm, 200);
	/* the same program in context 0 takes the warm time */
	tc_wr(t, SPYRE_RING_REG(1, SPYRE_RING_CTX), 0);
	ring_setup(t, 1, 4);
	slots[0] = 0x500000;
	push_launch(t, 1, 0x600000, plen, 0, 0, 1, slots);
	fence_and_run(t, 1, 3, 5, false);
	CHECK_EQ(rec(t, 5)->status, SPYRE_CMD_OK);
	CHECK_EQ(rec(t, 5)->compute_ns, warm);
	tc_free(t);
}

/*
 * Random page tables and random descriptors in a context: every command
 * ends in a record or a fault, never a crash, and nothing outside device
 * memory or the test's host memory is touched (the sanitizer build of the
 * model would see it).
 */
TEST(mmu_fuzz_random_tables)
{
	struct tcard *t = tc_new(NULL);
	unsigned int seed = 12345, i, k;
	struct pt p;

	pt_init(&p, t, 1, PT1);
	ring_ctx_setup(t, 0, 1);
	for (i = 0; i < 400; i++) {
		union spyre_hw_desc d;
		uint64_t *tab = (uint64_t *)(t->dev + PT1);

		/* scribble over the first tables: entries pointing into the table area */
		for (k = 0; k < 64; k++) {
			uint64_t e;

			seed = seed * 1103515245u + 12345u;
			e = (uint64_t)seed << 32 | (seed * 2654435761u);
			if (seed & 1)
				e = (PT1 + ((e >> 12) % 8) * 4096) | (e & 0xff);
			tab[(seed >> 8) % (8 * 512)] = e;
		}
		tc_wr(t, SPYRE_REG_MMU_CTX_CTRL, SPYRE_MMU_CTRL_INVALIDATE_ALL);
		seed = seed * 1103515245u + 12345u;
		memset(&d, 0, sizeof(d));
		switch (seed % 3) {
		case 0:
			d_dma(&d, (seed >> 4) % 4, (seed >> 8) % 9000, (uint64_t)(seed >> 3) << 9,
			      seed % 2 ? (uint64_t)seed << 7 : 0, (seed >> 6) % 2 ? seed : 0, 0, 0,
			      seed);
			if ((seed >> 4) % 4 != SPYRE_DMA_D2D)
				d.dma.dev_src = 0;
			break;
		case 1:
			d_ts(&d, false, (uint64_t)seed << 5, 0, 0);
			break;
		default:
			spyre_desc_launch(&d, 0, (uint64_t)seed << 4, 4096, 0, 0);
			break;
		}
		ring_push(t, 0, &d);
		d_fence(&d, i + 1, 0, false);
		d.fence.record_addr = spyre_cpu_to_le64((uint64_t)(seed & ~63u) << 3);
		ring_push(t, 0, &d);
		ring_doorbell(t, 0);
		tc_run(t);
		/* a fault stops the context: acknowledge and resume */
		tc_wr(t, SPYRE_REG_MMU_FAULT_INFO, SPYRE_MMU_FAULT_VALID);
		tc_wr(t, SPYRE_REG_MMU_CTX_CTRL, SPYRE_MMU_CTRL_RESUME);
		tc_run(t);
		CHECK_EQ(wb_seqno(t, 0), i + 1);
	}
	CHECK(!(ring_status(t, 0) & SPYRE_RING_STATUS_ERROR));
	tc_free(t);
}

/* A TIMESTAMP straddling a mapped and an unmapped page faults and writes nothing. */
TEST(mmu_timestamp_fault_writes_nothing)
{
	struct tcard *t = tc_new(NULL);
	struct pt p;

	pt_init(&p, t, 1, PT1);
	map_records(&p);
	map4k(&p, 0x9000, 0x100000, SPYRE_PTE_WRITE);
	memset(t->dev + 0x100ff8, 0xcc, 8);
	ring_ctx_setup(t, 0, 1);
	push_ts(t, 0, false, 0x9ffc, 0, 0);
	push_fence_va(t, 0, 1, 0);
	ring_run(t, 0);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_ERR_PAGE_FAULT);
	CHECK_EQ(rec(t, 0)->fault_addr, 0xa000);
	CHECK_EQ(rec(t, 0)->fault_space, SPYRE_FAULT_SPACE_VA_WRITE);
	CHECK_EQ(t->dev[0x100ffc], 0xcc);
	CHECK_EQ(t->dev[0x100fff], 0xcc);
	tc_free(t);
}

/* Host software sees a translation fault as -EFAULT, like a bounds error. */
TEST(mmu_page_fault_errno)
{
	CHECK_EQ(spyre_status_to_errno(SPYRE_CMD_ERR_PAGE_FAULT), -EFAULT);
}

static void mem_256m(struct spyre_model_config *cfg)
{
	cfg->mem_size = 256ull << 20;
	cfg->mem_aperture = cfg->mem_size;
}

/*
 * DMAs longer than the model's 64 MiB translation window: an overlapping
 * D2D of 100 MiB keeps memmove semantics across windows, and a FILL of
 * 160 MiB through one 2 MiB page aliased 81 times keeps the pattern's
 * phase from window to window.
 */
TEST(mmu_dma_longer_than_a_window)
{
	struct tcard *t = tc_new(mem_256m);
	const uint64_t va = 0x100000000ull, alias = 0x200000000ull, n = 100ull << 20;
	uint8_t *ref = malloc(n + (2u << 20));
	struct pt p;
	uint64_t i;

	pt_init(&p, t, 1, 250ull << 20);
	map_records(&p);
	for (i = 0; i < 128; i++)	/* VA range -> device [0, 256 MiB), 2 MiB pages */
		map2m(&p, va + (i << 21), i << 21, SPYRE_PTE_WRITE);
	for (i = 0; i < 81; i++)	/* 160 MiB from byte 2 touches 81 pages */
		map2m(&p, alias + (i << 21), 200ull << 20, SPYRE_PTE_WRITE);
	for (i = 0; i < n + (2u << 20); i += 4096)
		fill_pattern(t->dev + i, 4096, (unsigned int)(i >> 12));
	memcpy(ref, t->dev, n + (2u << 20));
	memmove(ref + 1000003, ref, n);
	ring_ctx_setup(t, 0, 1);
	push_va_dma(t, 0, SPYRE_DMA_D2D, n, va + 1000003, va, 0, 0);
	push_va_dma(t, 0, SPYRE_DMA_FILL, 160ull << 20, alias + 2, 0, 0, 0xa1b2c3d4);
	push_fence_va(t, 0, 1, 0);
	ring_run(t, 0);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_OK);
	CHECK(!memcmp(t->dev, ref, n + (2u << 20)));
	/* byte k of the fill is pattern byte k % 4: the page's byte b is fill byte b - 2 */
	for (i = 0; i < (2u << 20); i += 4093)
		CHECK_EQ(t->dev[(200ull << 20) + i],
			 (uint8_t)(0xa1b2c3d4u >> (8 * ((i - 2) % 4))));
	free(ref);
	tc_free(t);
}
