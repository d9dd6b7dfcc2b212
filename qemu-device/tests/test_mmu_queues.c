// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * The card MMU (interface 1.10) and queues: SET_CTX jobs on a shared
 * driver ring, user-mode queues whose ring and write-back are card
 * virtual addresses, privileged semaphores, and a queue of random
 * descriptors that must stay inside its context.
 */
#include "mmu_util.h"

/*
 * A driver-written ring (context 0) runs jobs of several contexts: SET_CTX
 * switches the rest of the job, the FENCE record stays a bus address, the
 * next job is physical again. A fault stops the faulting context (a later
 * SET_CTX to it fails its job at once) but not the shared ring, and a ring
 * with a context of its own may not switch.
 */
TEST(mmu_set_ctx_on_a_shared_ring)
{
	struct tcard *t = tc_new(NULL);
	const uint64_t va = 0x40000000ull;
	struct pt p1, p2;

	pt_init(&p1, t, 1, PT1);
	pt_init(&p2, t, 2, PT2);
	map4k(&p1, va, 0x100000, SPYRE_PTE_WRITE);
	map4k(&p2, va, 0x200000, SPYRE_PTE_WRITE);
	ring_setup(t, 0, 6);
	push_set_ctx(t, 0, 1);
	push_va_dma(t, 0, SPYRE_DMA_FILL, 4, va, 0, 0, 0x11111111);
	push_fence(t, 0, 1, 0, false);			/* physical record */
	push_dma(t, 0, SPYRE_DMA_FILL, 4, 0x300000, 0, 0, 0, 0, 0x22222222);
	push_fence(t, 0, 2, 1, false);			/* back in context 0 */
	push_set_ctx(t, 0, 2);
	push_va_dma(t, 0, SPYRE_DMA_FILL, 4, va, 0, 0, 0x33333333);
	push_va_dma(t, 0, SPYRE_DMA_FILL, 4, va + 4096, 0, 0, 0x44444444);	/* unmapped */
	push_fence(t, 0, 3, 2, false);
	push_set_ctx(t, 0, 1);
	push_va_dma(t, 0, SPYRE_DMA_FILL, 4, va + 4, 0, 0, 0x55555555);
	push_fence(t, 0, 4, 3, false);
	push_set_ctx(t, 0, 2);				/* stopped: fails at once */
	push_va_dma(t, 0, SPYRE_DMA_FILL, 4, va + 8, 0, 0, 0x66666666);
	push_fence(t, 0, 5, 4, false);
	ring_run(t, 0);
	CHECK_EQ(wb_seqno(t, 0), 5);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_OK);
	CHECK_EQ(t->dev[0x100000], 0x11);
	CHECK_EQ(rec(t, 1)->status, SPYRE_CMD_OK);
	CHECK_EQ(t->dev[0x300000], 0x22);
	CHECK_EQ(rec(t, 2)->status, SPYRE_CMD_ERR_PAGE_FAULT);
	CHECK_EQ(rec(t, 2)->error_index, 7);
	CHECK_EQ(rec(t, 2)->fault_addr, va + 4096);
	CHECK_EQ(t->dev[0x200000], 0x33);
	CHECK_EQ(SPYRE_MMU_FAULT_CTX(tc_rd(t, SPYRE_REG_MMU_FAULT_INFO)), 2);
	CHECK_EQ(SPYRE_MMU_FAULT_RING(tc_rd(t, SPYRE_REG_MMU_FAULT_INFO)), 0);
	CHECK_EQ(rec(t, 3)->status, SPYRE_CMD_OK);	/* context 1 runs on */
	CHECK_EQ(t->dev[0x100004], 0x55);
	CHECK_EQ(rec(t, 4)->status, SPYRE_CMD_ERR_PAGE_FAULT);
	CHECK_EQ(rec(t, 4)->error_index, 12);	/* the SET_CTX itself */
	CHECK_EQ(rec(t, 4)->fault_space, SPYRE_FAULT_SPACE_NONE);
	CHECK_EQ(t->dev[0x200008], 0);
	CHECK_EQ(ring_status(t, 0), SPYRE_RING_STATUS_ENABLED | SPYRE_RING_STATUS_IDLE);
	CHECK_EQ(t->irqs[t->cfg.num_rings], 1);	/* one fault, one interrupt */

	/* only context-0 rings switch; a bad context number is refused */
	tc_wr(t, SPYRE_RING_REG(1, SPYRE_RING_CTX), 1);
	ring_setup(t, 1, 4);
	map_records(&p1);
	push_set_ctx(t, 1, 2);
	push_fence_va(t, 1, 6, 5);
	ring_run(t, 1);
	CHECK_EQ(rec(t, 5)->status, SPYRE_CMD_ERR_INVALID);
	push_set_ctx(t, 0, 256);
	fence_and_run(t, 0, 7, 6, false);
	CHECK_EQ(rec(t, 6)->status, SPYRE_CMD_ERR_INVALID);
	tc_free(t);
}

/*
 * A user-mode queue (SPYRE_RING_CTX_VA): the card fetches descriptors from
 * the ring at a card VA (here the test's host ring page, mapped SYS) and
 * writes the write-back record at a card VA (here device memory). The
 * second ring page is not mapped: fetching from it faults the context, not
 * the ring (no ring error), and the queue goes on once it is mapped and
 * resumed.
 */
TEST(mmu_ring_in_a_context)
{
	struct tcard *t = tc_new(NULL);
	const uint64_t ring_va = 0x500000000ull, wb_va = 0x600000000ull, va = 0x40000000ull;
	struct spyre_hw_ring_wb wb;
	struct pt p;
	unsigned int i;
	uint32_t info;

	pt_init(&p, t, 4, PT1);
	map_records(&p);
	map4k(&p, ring_va, HOST_BASE + H_RING(0), SPYRE_PTE_SYS);	/* read-only for the card */
	map4k(&p, wb_va, 0x180000, SPYRE_PTE_WRITE);
	map4k(&p, va, 0x100000, SPYRE_PTE_WRITE);
	/* RING_VA needs a context and a range inside the 48-bit space */
	tc_wr(t, SPYRE_RING_REG(1, SPYRE_RING_CTX), SPYRE_RING_CTX_VA);
	ring_setup(t, 1, 4);
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(1, SPYRE_RING_ERROR)), SPYRE_RING_ERR_BAD_CONFIG);
	ring_va_setup(t, 2, 4, 1ull << 48, 4, wb_va);
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(2, SPYRE_RING_ERROR)), SPYRE_RING_ERR_BAD_CONFIG);
	tc_wr(t, SPYRE_REG_ERR_STATUS, SPYRE_ERR_STATUS_RING);

	ring_va_setup(t, 0, 4, ring_va, 7, wb_va);	/* 128 entries: two pages */
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(0, SPYRE_RING_CTX)), 4 | SPYRE_RING_CTX_VA);
	push_va_dma(t, 0, SPYRE_DMA_FILL, 4, va, 0, 0, 0x01010101);
	push_fence_va(t, 0, 1, 0);
	ring_run(t, 0);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_OK);
	CHECK_EQ(t->dev[0x100000], 0x01);
	memcpy(&wb, t->dev + 0x180000, sizeof(wb));
	CHECK_EQ(wb.completed_seqno, 1);
	CHECK_EQ(wb.head, 2);
	CHECK_EQ(wb_seqno(t, 0), 0);	/* nothing at the bus address of the same value */

	/* fill the first page (64 slots), then a job that starts on the second */
	for (i = 2; i < 64; i++) {
		union spyre_hw_desc d;

		spyre_desc_nop(&d);
		ring_push(t, 0, &d);
	}
	push_va_dma(t, 0, SPYRE_DMA_FILL, 4, va, 0, 0, 0x02020202);	/* slot 64 */
	push_fence_va_flags(t, 0, 2, 1, SPYRE_DESC_F_IRQ);
	ring_run(t, 0);
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(0, SPYRE_RING_HEAD)), 64);
	CHECK_EQ(ring_status(t, 0), SPYRE_RING_STATUS_ENABLED | SPYRE_RING_STATUS_CTX_FAULT);
	info = tc_rd(t, SPYRE_REG_MMU_FAULT_INFO);
	CHECK_EQ(SPYRE_MMU_FAULT_CTX(info), 4);
	CHECK_EQ(SPYRE_MMU_FAULT_ACCESS(info), SPYRE_MMU_ACCESS_READ);
	CHECK_EQ(SPYRE_MMU_FAULT_REASON(info), SPYRE_MMU_FAULT_NOT_PRESENT);
	CHECK_EQ(tc_rd(t, SPYRE_REG_MMU_FAULT_ADDR_LO), (uint32_t)(ring_va + 4096));
	CHECK_EQ(t->dev[0x100000], 0x01);
	map4k(&p, ring_va + 4096, HOST_BASE + H_RING(0) + 4096, SPYRE_PTE_SYS);
	tc_wr(t, SPYRE_REG_MMU_FAULT_INFO, SPYRE_MMU_FAULT_VALID);
	tc_wr(t, SPYRE_REG_MMU_CTX_CTRL, SPYRE_MMU_CTRL_RESUME);
	tc_run(t);
	CHECK_EQ(rec(t, 1)->status, SPYRE_CMD_OK);
	CHECK_EQ(t->dev[0x100000], 0x02);
	memcpy(&wb, t->dev + 0x180000, sizeof(wb));
	CHECK_EQ(wb.completed_seqno, 2);
	CHECK_EQ(t->irqs[0], 1);
	CHECK_EQ(ring_status(t, 0), SPYRE_RING_STATUS_ENABLED | SPYRE_RING_STATUS_IDLE);

	/* a write-back page the card may not write: the context stops, no interrupt */
	map4k(&p, wb_va, 0x180000, 0);
	tc_wr(t, SPYRE_REG_MMU_CTX_CTRL, SPYRE_MMU_CTRL_INVALIDATE);
	i = t->irqs[0];
	push_va_dma(t, 0, SPYRE_DMA_FILL, 4, va, 0, 0, 0x03030303);
	push_fence_va_flags(t, 0, 3, 2, SPYRE_DESC_F_IRQ);
	ring_run(t, 0);
	CHECK_EQ(rec(t, 2)->status, SPYRE_CMD_OK);	/* the record was written */
	memcpy(&wb, t->dev + 0x180000, sizeof(wb));
	CHECK_EQ(wb.completed_seqno, 2);
	CHECK_EQ(t->irqs[0], i);
	info = tc_rd(t, SPYRE_REG_MMU_FAULT_INFO);
	CHECK_EQ(SPYRE_MMU_FAULT_ACCESS(info), SPYRE_MMU_ACCESS_WRITE);
	CHECK_EQ(SPYRE_MMU_FAULT_REASON(info), SPYRE_MMU_FAULT_PROTECTION);
	CHECK(ring_status(t, 0) & SPYRE_RING_STATUS_CTX_FAULT);
	CHECK(!(ring_status(t, 0) & SPYRE_RING_STATUS_ERROR));
	tc_free(t);
}

/*
 * Semaphores are card-wide: a ring with a context of its own (which a
 * process may write) can neither signal nor wait on one, nor raise one
 * with its FENCE; the job fails with ERR_INVALID and the semaphore keeps
 * its value. A context-0 ring running a SET_CTX job still can.
 */
TEST(mmu_semaphores_are_privileged)
{
	struct tcard *t = tc_new(NULL);
	union spyre_hw_desc d;
	struct pt p;

	pt_init(&p, t, 1, PT1);
	map_records(&p);
	ring_ctx_setup(t, 0, 1);
	push_sem(t, 0, true, 3, 10);
	push_fence_va(t, 0, 1, 0);
	push_sem(t, 0, false, 3, 0);
	push_fence_va(t, 0, 2, 1);
	spyre_desc_fence(&d, 0);
	spyre_desc_fence_sem(&d, 3, 20);
	spyre_desc_fence_seal(&d, 3, REC_VA + 128);
	ring_push(t, 0, &d);
	ring_run(t, 0);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_ERR_INVALID);
	CHECK_EQ(rec(t, 1)->status, SPYRE_CMD_ERR_INVALID);
	CHECK_EQ(rec(t, 2)->status, SPYRE_CMD_ERR_INVALID);
	CHECK_EQ(wb_seqno(t, 0), 3);
	tc_wr(t, SPYRE_REG_SEM_SELECT, 3);
	CHECK_EQ(tc_rd(t, SPYRE_REG_SEM_VALUE_LO), 0);
	/* the driver's ring: a SET_CTX job signals as before */
	ring_setup(t, 1, 4);
	push_set_ctx(t, 1, 1);
	push_sem(t, 1, true, 3, 10);
	fence_and_run(t, 1, 4, 3, false);
	CHECK_EQ(rec(t, 3)->status, SPYRE_CMD_OK);
	CHECK_EQ(tc_rd(t, SPYRE_REG_SEM_VALUE_LO), 10);
	tc_free(t);
}

static uint64_t rnd64(unsigned int *s)
{
	*s = *s * 1103515245u + 12345u;
	return (uint64_t)*s << 32 ^ (*s * 2654435761u) ^ (*s >> 7);
}

/* An address near the mapped windows of the isolation fuzz, or anywhere. */
static uint64_t rnd_va(unsigned int *s)
{
	static const uint64_t near[] = { 0x1000000, 0x2000000, 0x3000000, 0x0, 0x7fff00000000ull };
	uint64_t r = rnd64(s);

	if (r % 8 == 0)
		return r & ((1ull << 49) - 1);
	return near[(r >> 3) % 5] + ((r >> 8) % 0x60000) - 0x8000;
}

/*
 * A process owns a user-mode queue and writes random descriptors into it
 * (random opcodes, flags and fields; addresses near its mappings or
 * anywhere, programs that copy between random slots). Whatever it writes,
 * the card only touches what the context maps: device memory outside its
 * pages and host memory outside its host page keep their canaries, the
 * card never goes fatal, and the queue keeps completing jobs.
 */
TEST(mmu_fuzz_user_queue_isolation)
{
	struct tcard *t = tc_new(NULL);
	const uint64_t ring_va = 0x500000000ull, wb_va = 0x600000000ull;
	unsigned int seed = 777, i, k, done = 0, ok = 0;
	struct prog pr;
	uint64_t plen;
	struct pt p;

	pt_init(&p, t, 1, PT1);
	map_records(&p);
	map4k(&p, ring_va, HOST_BASE + H_RING(0), SPYRE_PTE_SYS);
	map4k(&p, wb_va, 0x1ff000, SPYRE_PTE_WRITE);
	for (k = 0; k < 64; k++)	/* 256 KiB of data, 4 KiB pages, scattered */
		map4k(&p, 0x1000000 + 4096ull * k, 0x100000 + 4096ull * ((k * 37) % 64),
		      SPYRE_PTE_WRITE);
	map2m(&p, 0x2000000, 0x400000, SPYRE_PTE_WRITE | SPYRE_PTE_EXEC);	/* programs */
	map4k(&p, 0x3000000, HOST_BASE + H_DATA, SPYRE_PTE_SYS | SPYRE_PTE_WRITE);
	memset(t->dev + 0x140000, 0xc3, 0x400000 - 0x140000);	/* canaries around them */
	memset(t->dev + 0x600000, 0xc3, 0x200000);
	memset(hptr(t, H_DATA + 4096), 0xc3, 0x100000);
	prog_init(&pr, 2, 0);
	p_load(&pr, false, 3, 0, 0, 4, 256, 300, 0, 256)->signal = TOK(0);
	p_load(&pr, true, 3, 1, 0, 4, 256, 300, 0, 256)->wait = TOK(0);
	pr.in[0].u.mem.core_stride = 1024;
	pr.in[1].u.mem.core_stride = 1024;
	plen = prog_store(t, &pr, 0x400000);
	ring_va_setup(t, 0, 1, ring_va, 6, wb_va);
	for (i = 0; i < 600; i++) {
		union spyre_hw_desc d;
		uint64_t r = rnd64(&seed);

		memset(&d, 0, sizeof(d));
		switch (r % 8) {
		case 0:
		case 1:
			d_dma(&d, (r >> 8) % 4, (r >> 12) % 20000 & ~3ull, rnd_va(&seed),
			      (r >> 8) % 4 == SPYRE_DMA_D2D ? rnd_va(&seed) : 0,
			      (r >> 8) % 4 < 2 ? rnd_va(&seed) : 0, 0, 0, (uint32_t)r);
			break;
		case 2: {
			uint64_t slots[4] = { rnd_va(&seed), 4096 + r % 8192, rnd_va(&seed),
					      4096 + (r >> 20) % 8192 };

			push_launch(t, 0, 0x2000000 + (r % 3 ? 0 : (r >> 4) % 0x300000), plen, 0,
				    0, 2, slots);
			break;
		}
		case 3:
			d_ts(&d, r & 256, rnd_va(&seed), 0, 0);
			break;
		case 4:
			spyre_desc_set_ctx(&d, (uint16_t)(r >> 8));
			break;
		case 5:
			d_sem(&d, r & 256, (uint16_t)((r >> 9) % 4), r >> 16);
			break;
		default:	/* random bytes */
			for (k = 0; k < 8; k++)
				memcpy(d.raw + 8 * k, &(uint64_t){ rnd64(&seed) }, 8);
			d.raw[0] %= 10;
			break;
		}
		if ((r % 8) != 2)
			ring_push(t, 0, &d);
		push_fence_va(t, 0, i + 1, (unsigned int)(r >> 40) % 16);
		ring_run(t, 0);
		if (tc_rd(t, SPYRE_REG_MMU_FAULT_INFO)) {	/* the driver resumes it */
			tc_wr(t, SPYRE_REG_MMU_FAULT_INFO, SPYRE_MMU_FAULT_VALID);
			tc_wr(t, SPYRE_REG_MMU_CTX_SELECT, 1);
			tc_wr(t, SPYRE_REG_MMU_CTX_CTRL, SPYRE_MMU_CTRL_RESUME);
			tc_run(t);
		}
		if (ring_status(t, 0) & SPYRE_RING_STATUS_ERROR) {	/* e.g. a bad tail */
			tc_wr(t, SPYRE_RING_REG(0, SPYRE_RING_CTRL),
			      SPYRE_RING_CTRL_RESET | SPYRE_RING_CTRL_ENABLE);
			t->tail[0] = 0;
		}
		done += !!(ring_status(t, 0) & SPYRE_RING_STATUS_IDLE);
		ok += rec(t, (unsigned int)(r >> 40) % 16)->seqno == i + 1 &&
		      rec(t, (unsigned int)(r >> 40) % 16)->status == SPYRE_CMD_OK && r % 8 < 4;
	}
	CHECK(done > 500);
	CHECK(!(tc_rd(t, SPYRE_REG_STATUS) & SPYRE_STATUS_FATAL));
	for (k = 0x140000; k < 0x400000; k++)
		if (t->dev[k] != 0xc3 && (k < 0x1ff000 || k >= 0x200000))	/* not the write-back */
			break;
	CHECK_EQ(k, 0x400000);
	CHECK(ok > 20);	/* the random jobs did reach their own memory */
	for (k = 0; k < 0x200000; k++)
		if (t->dev[0x600000 + k] != 0xc3)
			break;
	CHECK_EQ(k, 0x200000);
	for (k = 0; k < 0x100000; k++)
		if (((uint8_t *)hptr(t, H_DATA + 4096))[k] != 0xc3)
			break;
	CHECK_EQ(k, 0x100000);
	tc_free(t);
}

static void push_wait_mem(struct tcard *t, unsigned int n, uint64_t addr, uint64_t value)
{
	union spyre_hw_desc d;

	memset(&d, 0, sizeof(d));
	d.wait_mem.opcode = SPYRE_OP_WAIT_MEM;
	d.wait_mem.addr = spyre_cpu_to_le64(addr);
	d.wait_mem.value = spyre_cpu_to_le64(value);
	ring_push(t, n, &d);
}

/*
 * Two queues of one process: B waits (WAIT_MEM) for A's write-back to
 * reach 1. B blocks until A's FENCE, then runs from A's FENCE's device
 * time exactly; its data lands after A's.
 */
TEST(mmu_wait_mem_on_another_queue)
{
	struct tcard *t = tc_new(NULL);
	const uint64_t ring_a = 0x500000000ull, ring_b = 0x500001000ull;
	const uint64_t wb_a = 0x600000000ull, wb_b = 0x600000040ull, va = 0x40000000ull;
	struct pt p;

	pt_init(&p, t, 1, PT1);
	map_records(&p);
	map4k(&p, ring_a, HOST_BASE + H_RING(0), SPYRE_PTE_SYS);
	map4k(&p, ring_b, HOST_BASE + H_RING(1), SPYRE_PTE_SYS);
	map4k(&p, wb_a, 0x180000, SPYRE_PTE_WRITE);
	map4k(&p, va, 0x100000, SPYRE_PTE_WRITE);
	ring_va_setup(t, 0, 1, ring_a, 6, wb_a);
	ring_va_setup(t, 1, 1, ring_b, 6, wb_b);
	push_wait_mem(t, 1, wb_a, 1);
	push_va_dma(t, 1, SPYRE_DMA_FILL, 4, va, 0, 0, 0x22222222);
	push_fence_va(t, 1, 7, 1);
	ring_run(t, 1);
	CHECK(!(ring_status(t, 1) & SPYRE_RING_STATUS_IDLE));	/* waiting */
	CHECK_EQ(t->dev[0x100000], 0);
	t->now = 3000;	/* A is doorbelled later */
	push_va_dma(t, 0, SPYRE_DMA_FILL, 4, va, 0, 0, 0x11111111);
	push_fence_va(t, 0, 1, 0);
	ring_run(t, 0);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_OK);
	CHECK_EQ(rec(t, 1)->status, SPYRE_CMD_OK);
	CHECK_EQ(rec(t, 1)->seqno, 7);
	CHECK_EQ(t->dev[0x100000], 0x22);	/* B after A */
	/* A: 3000 + walk (400) + 1001; B's FILL starts at A's FENCE, page in the TLB */
	CHECK_EQ(rec(t, 0)->end_ns, 3000 + 400 + 1001);
	CHECK_EQ(rec(t, 1)->end_ns, rec(t, 0)->end_ns + 1001);
	CHECK_EQ(ring_status(t, 1), SPYRE_RING_STATUS_ENABLED | SPYRE_RING_STATUS_IDLE);
	tc_free(t);
}

static void paced(struct spyre_model_config *c)
{
	c->pacing = true;
}

/*
 * The same with pacing: A's write-back becomes visible only when the
 * embedder's clock reaches A's FENCE, after B looked at the counter in
 * that run. B must go on in the run that delivers it (no register write
 * comes), and from A's FENCE's device time as without pacing.
 */
TEST(mmu_wait_mem_paced_write_back)
{
	struct tcard *t = tc_new(paced);
	const uint64_t ring_a = 0x500000000ull, ring_b = 0x500001000ull;
	const uint64_t wb_a = 0x600000000ull, wb_b = 0x600000040ull, va = 0x40000000ull;
	struct pt p;

	pt_init(&p, t, 1, PT1);
	map_records(&p);
	map4k(&p, ring_a, HOST_BASE + H_RING(0), SPYRE_PTE_SYS);
	map4k(&p, ring_b, HOST_BASE + H_RING(1), SPYRE_PTE_SYS);
	map4k(&p, wb_a, 0x180000, SPYRE_PTE_WRITE);
	map4k(&p, va, 0x100000, SPYRE_PTE_WRITE);
	ring_va_setup(t, 0, 1, ring_a, 6, wb_a);
	ring_va_setup(t, 1, 1, ring_b, 6, wb_b);
	t->now = 3000;
	push_va_dma(t, 0, SPYRE_DMA_FILL, 4, va, 0, 0, 0x11111111);
	push_fence_va(t, 0, 1, 0);
	ring_run(t, 0);
	push_wait_mem(t, 1, wb_a, 1);
	push_va_dma(t, 1, SPYRE_DMA_FILL, 4, va, 0, 0, 0x22222222);
	push_fence_va(t, 1, 7, 1);
	ring_run(t, 1);
	CHECK(!(ring_status(t, 1) & SPYRE_RING_STATUS_IDLE));	/* A's FENCE is not out */
	CHECK_EQ(rec(t, 0)->seqno, 0);
	t->now = 10000;	/* past both FENCEs: one run delivers A's and runs B */
	tc_run(t);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_OK);
	CHECK_EQ(rec(t, 0)->end_ns, 3000 + 400 + 1001);
	CHECK_EQ(rec(t, 1)->seqno, 7);
	CHECK_EQ(rec(t, 1)->status, SPYRE_CMD_OK);
	CHECK_EQ(rec(t, 1)->end_ns, rec(t, 0)->end_ns + 1001);
	CHECK_EQ(t->dev[0x100000], 0x22);
	CHECK_EQ(ring_status(t, 1), SPYRE_RING_STATUS_ENABLED | SPYRE_RING_STATUS_IDLE);
	tc_free(t);
}

/*
 * A counter software writes: the card looks again on the next register
 * write and the wait ends at that device time. In context 0 the counter
 * is a device address; a misaligned one is refused, one outside memory is
 * a bounds error, one in an unmapped page of a context a fault.
 */
TEST(mmu_wait_mem_software_counter_and_errors)
{
	struct tcard *t = tc_new(NULL);
	const uint64_t cnt_va = 0x700000000ull;
	uint64_t v = 5;
	struct pt p;

	pt_init(&p, t, 1, PT1);
	map_records(&p);
	map4k(&p, cnt_va, HOST_BASE + H_DATA, SPYRE_PTE_SYS);
	ring_ctx_setup(t, 0, 1);
	push_wait_mem(t, 0, cnt_va + 8, 5);
	push_fence_va(t, 0, 1, 0);
	ring_run(t, 0);
	CHECK_EQ(wb_seqno(t, 0), 0);
	memcpy(hptr(t, H_DATA + 8), &v, 8);
	t->now = 5000;
	CHECK_EQ(wb_seqno(t, 0), 0);
	/* any register write: the embedder is told to run the card */
	CHECK(spyre_model_write(t->m, SPYRE_REG_SCRATCH, 1));
	tc_run(t);
	CHECK(!spyre_model_write(t->m, SPYRE_REG_SCRATCH, 2));	/* nobody waits now */
	CHECK_EQ(wb_seqno(t, 0), 1);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_OK);
	CHECK_EQ(rec(t, 0)->end_ns, 5000);
	push_wait_mem(t, 0, cnt_va + 0x1000, 1);	/* unmapped */
	push_fence_va(t, 0, 2, 1);
	ring_run(t, 0);
	CHECK_EQ(rec(t, 1)->status, SPYRE_CMD_ERR_PAGE_FAULT);
	CHECK_EQ(rec(t, 1)->fault_space, SPYRE_FAULT_SPACE_VA_READ);

	/* context 0: device addresses */
	ring_setup(t, 1, 4);
	memcpy(t->dev + 0x1000, &v, 8);
	push_wait_mem(t, 1, 0x1000, 5);	/* reached already */
	fence_and_run(t, 1, 3, 2, false);
	CHECK_EQ(rec(t, 2)->status, SPYRE_CMD_OK);
	push_wait_mem(t, 1, 0x1004, 1);
	fence_and_run(t, 1, 4, 3, false);
	CHECK_EQ(rec(t, 3)->status, SPYRE_CMD_ERR_INVALID);
	push_wait_mem(t, 1, 64ull << 20, 1);
	fence_and_run(t, 1, 5, 4, false);
	CHECK_EQ(rec(t, 4)->status, SPYRE_CMD_ERR_BOUNDS);
	tc_free(t);
}
