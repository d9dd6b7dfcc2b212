// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/* DMA commands, scatter lists, completion records and write-back. */
#include <stdlib.h>

#include "harness.h"

static void fill_pattern(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 131 + seed * 7 + (i >> 8));
}

TEST(dma_h2d_d2h_round_trip_scatter_list)
{
	struct tcard *t = tc_new(NULL);
	uint8_t *src = hptr(t, H_DATA), *dst = hptr(t, H_DATA + 0x100000);
	/* three segments, deliberately out of order in host memory */
	uint64_t seg[6] = { HOST_BASE + H_DATA + 0x8000, 1000, HOST_BASE + H_DATA, 5000,
			    HOST_BASE + H_DATA + 0x20000, 40000 };
	uint64_t seg2[4] = { HOST_BASE + H_DATA + 0x100000, 30000,
			     HOST_BASE + H_DATA + 0x180000, 16000 };
	uint64_t sg = sg_write(t, 0, 3, seg), sg2 = sg_write(t, 4096, 2, seg2);
	uint8_t expect[46000];

	fill_pattern(src, 0x40000, 1);
	memcpy(expect, src + 0x8000, 1000);
	memcpy(expect + 1000, src, 5000);
	memcpy(expect + 6000, src + 0x20000, 40000);
	ring_setup(t, 0, 4);
	/* H2D of bytes 100.. of the scattered buffer */
	push_dma(t, 0, SPYRE_DMA_H2D, 45900, 0x1000, 0, sg, 3, 100, 0);
	push_dma(t, 0, SPYRE_DMA_D2H, 45900, 0x1000, 0, sg2, 2, 0, 0);
	push_fence(t, 0, 7, 0, true);
	ring_doorbell(t, 0);
	CHECK_EQ(wb_seqno(t, 0), 0);
	tc_run(t);
	CHECK(!memcmp(t->dev + 0x1000, expect + 100, 45900));
	CHECK(!memcmp(dst, expect + 100, 30000));
	CHECK(!memcmp(hptr(t, H_DATA + 0x180000), expect + 100 + 30000, 15900));
	CHECK_EQ(rec(t, 0)->seqno, 7);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_OK);
	CHECK_EQ(wb_seqno(t, 0), 7);
	CHECK_EQ(wb_head(t, 0), 3);
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(0, SPYRE_RING_HEAD)), 3);
	CHECK_EQ(t->irqs[0], 1);
	CHECK_EQ(ring_status(t, 0), SPYRE_RING_STATUS_ENABLED | SPYRE_RING_STATUS_IDLE);
	/* two DMAs serialise on one ring: 45900 B at 50 GB/s = 918 ns + 1000 latency each */
	CHECK_EQ(rec(t, 0)->start_ns, 0);
	CHECK_EQ(rec(t, 0)->end_ns, 2 * (1000 + 918));
	CHECK_EQ(rec(t, 0)->dma_ns, 2 * (1000 + 918));
	CHECK_EQ(rec(t, 0)->compute_ns, 0);
	CHECK_EQ(rec(t, 0)->fault_insn, SPYRE_FAULT_INSN_NONE);	/* no launch: no fault */
	CHECK_EQ(rec(t, 0)->fault_core | rec(t, 0)->fault_space | rec(t, 0)->fault_addr, 0);
	tc_free(t);
}

TEST(dma_d2d_fill_and_overlap)
{
	struct tcard *t = tc_new(NULL);
	uint8_t d[64], ref[8192];
	unsigned int i;

	fill_pattern(t->dev + 0x10000, 8192, 3);
	memcpy(ref, t->dev + 0x10000, 8192);
	ring_setup(t, 0, 4);
	push_dma(t, 0, SPYRE_DMA_D2D, 8192, 0x20000, 0x10000, 0, 0, 0, 0);
	d_dma(d, SPYRE_DMA_D2D, 4096, 0x10000 + 1000, 0x10000, 0, 0, 0, 0); /* overlapping */
	ring_push(t, 0, d);
	push_dma(t, 0, SPYRE_DMA_FILL, 64, 0x30000, 0, 0, 0, 0, 0x11223344);
	fence_and_run(t, 0, 1, 0, false);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_OK);
	CHECK(!memcmp(t->dev + 0x20000, ref, 8192));
	CHECK(!memcmp(t->dev + 0x10000 + 1000, ref, 4096));	/* memmove semantics */
	for (i = 0; i < 64; i += 4)
		CHECK_EQ(*(uint32_t *)(t->dev + 0x30000 + i), 0x11223344);
	CHECK_EQ(t->irqs[0], 0);	/* no F_IRQ */
	CHECK_EQ(wb_seqno(t, 0), 1);
	tc_free(t);
}

/* Run one DMA job on ring 0 and return its completion status. */
static uint32_t one_dma(struct tcard *t, const uint8_t *desc, uint64_t seq)
{

	ring_push(t, 0, desc);
	fence_and_run(t, 0, seq, 0, true);
	CHECK_EQ(rec(t, 0)->seqno, seq);
	return rec(t, 0)->status;
}

TEST(dma_bad_commands_error_records)
{
	struct tcard *t = tc_new(NULL);
	uint64_t mem = t->cfg.mem_size, sg = sg_simple(t, 0, 0, 4096);
	uint8_t d[64];
	uint64_t seg[2] = { HOST_BASE + HOST_SIZE - 100, 4096 };	/* runs off host RAM */
	uint64_t sgbad = sg_write(t, 2048, 1, seg);
	uint64_t zero[2] = { HOST_BASE + H_DATA, 0 };
	uint64_t sgzero = sg_write(t, 3072, 1, zero);

	ring_setup(t, 0, 6);
	d_dma(d, SPYRE_DMA_H2D, 4096, mem - 4095, 0, sg, 1, 0, 0);
	CHECK_EQ(one_dma(t, d, 1), SPYRE_CMD_ERR_BOUNDS);
	CHECK_EQ(rec(t, 0)->error_index, 0);
	d_dma(d, SPYRE_DMA_H2D, 16, ~0ull - 8, 0, sg, 1, 0, 0);		/* wrap-around */
	CHECK_EQ(one_dma(t, d, 2), SPYRE_CMD_ERR_BOUNDS);
	CHECK_EQ(rec(t, 0)->error_index, 2);
	d_dma(d, SPYRE_DMA_D2D, 4096, 0, mem - 10, 0, 0, 0, 0);
	CHECK_EQ(one_dma(t, d, 3), SPYRE_CMD_ERR_BOUNDS);
	d_dma(d, SPYRE_DMA_H2D, 8192, 0, 0, sg, 1, 0, 0);		/* list too short */
	CHECK_EQ(one_dma(t, d, 4), SPYRE_CMD_ERR_BOUNDS);
	d_dma(d, SPYRE_DMA_H2D, 4096, 0, 0, sg, 0, 0, 0);		/* empty list */
	CHECK_EQ(one_dma(t, d, 5), SPYRE_CMD_ERR_BOUNDS);
	d_dma(d, SPYRE_DMA_H2D, 4096, 0, 0, sgbad, 1, 0, 0);		/* outside host RAM */
	CHECK_EQ(one_dma(t, d, 6), SPYRE_CMD_ERR_DMA);
	d_dma(d, SPYRE_DMA_D2H, 4096, 0, 0, sgbad, 1, 0, 0);
	CHECK_EQ(one_dma(t, d, 7), SPYRE_CMD_ERR_DMA);
	d_dma(d, SPYRE_DMA_H2D, 64, 0, 0, 0x1000, 1, 0, 0);		/* list not in RAM */
	CHECK_EQ(one_dma(t, d, 8), SPYRE_CMD_ERR_DMA);
	d_dma(d, SPYRE_DMA_H2D, 64, 0, 0, sgzero, 1, 0, 0);		/* zero-length segment */
	CHECK_EQ(one_dma(t, d, 9), SPYRE_CMD_ERR_INVALID);
	d_dma(d, 4, 64, 0, 0, sg, 1, 0, 0);				/* bad direction */
	CHECK_EQ(one_dma(t, d, 10), SPYRE_CMD_ERR_INVALID);
	d_dma(d, SPYRE_DMA_FILL, 6, 0, 0, 0, 0, 0, 0);			/* fill not multiple of 4 */
	CHECK_EQ(one_dma(t, d, 11), SPYRE_CMD_ERR_INVALID);
	d_dma(d, SPYRE_DMA_H2D, 64, 0, 0, sg, 1, 0, 0);
	((struct spyre_hw_dma *)d)->rsvd2 = 1;				/* reserved field */
	CHECK_EQ(one_dma(t, d, 12), SPYRE_CMD_ERR_INVALID);
	d_dma(d, SPYRE_DMA_H2D, 64, 0, 0, sg, 1, 0, 0);
	d[1] = 0x80;							/* unknown flag */
	CHECK_EQ(one_dma(t, d, 13), SPYRE_CMD_ERR_INVALID);
	memset(d, 0, 64);
	d[0] = 0x42;							/* unknown opcode */
	CHECK_EQ(one_dma(t, d, 14), SPYRE_CMD_ERR_INVALID);
	memset(d, 0, 64);
	d[0] = SPYRE_OP_ARGS;						/* stray ARGS */
	CHECK_EQ(one_dma(t, d, 15), SPYRE_CMD_ERR_INVALID);
	/* after all that, the ring is healthy and a good job still runs */
	d_dma(d, SPYRE_DMA_H2D, 64, 0, 0, sg, 1, 0, 0);
	CHECK_EQ(one_dma(t, d, 16), SPYRE_CMD_OK);
	CHECK_EQ(ring_status(t, 0), SPYRE_RING_STATUS_ENABLED | SPYRE_RING_STATUS_IDLE);
	CHECK_EQ(t->irqs[0], 16);
	CHECK_EQ(tc_rd(t, SPYRE_REG_ERR_STATUS), 0);	/* command errors are not card errors */
	tc_free(t);
}

TEST(dma_failure_skips_to_fence_then_next_job_runs)
{
	struct tcard *t = tc_new(NULL);
	uint64_t sg = sg_simple(t, 0, 0, 4096);

	memset(hptr(t, H_DATA), 0x5a, 4096);
	ring_setup(t, 0, 5);
	push_dma(t, 0, SPYRE_DMA_FILL, 64, 0, 0, 0, 0, 0, 0x01010101);	/* 0: runs */
	push_dma(t, 0, SPYRE_DMA_H2D, 64, t->cfg.mem_size, 0, sg, 1, 0, 0);	/* 1: fails */
	push_dma(t, 0, SPYRE_DMA_FILL, 64, 64, 0, 0, 0, 0, 0x02020202);	/* 2: skipped */
	push_fence(t, 0, 1, 0, true);	/* 3 */
	push_dma(t, 0, SPYRE_DMA_H2D, 64, 128, 0, sg, 1, 0, 0);	/* 4: next job runs */
	fence_and_run(t, 0, 2, 1, true);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_ERR_BOUNDS);
	CHECK_EQ(rec(t, 0)->error_index, 1);
	CHECK_EQ(t->dev[0], 1);
	CHECK_EQ(t->dev[64], 0);		/* skipped command did not run */
	CHECK_EQ(rec(t, 1)->status, SPYRE_CMD_OK);
	CHECK_EQ(t->dev[128], 0x5a);
	CHECK_EQ(wb_seqno(t, 0), 2);
	CHECK_EQ(t->irqs[0], 2);
	tc_free(t);
}

TEST(dma_zero_length_and_nop)
{
	struct tcard *t = tc_new(NULL);
	uint8_t d[64];

	ring_setup(t, 0, 4);
	push_dma(t, 0, SPYRE_DMA_H2D, 0, 0, 0, 0, 0, 0, 0);
	memset(d, 0, 64);
	ring_push(t, 0, d);		/* NOP */
	fence_and_run(t, 0, 9, 0, false);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_OK);
	CHECK_EQ(rec(t, 0)->end_ns, 1000);	/* zero bytes still pay the DMA latency */
	memset(d, 0, 64);
	d[5] = 1;			/* NOP with garbage */
	ring_push(t, 0, d);
	fence_and_run(t, 0, 10, 0, false);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_ERR_INVALID);
	tc_free(t);
}

TEST(dma_ring_wraps_many_times)
{
	struct tcard *t = tc_new(NULL);
	unsigned int i;

	ring_setup(t, 0, 4);
	for (i = 0; i < 200; i++) {
		push_dma(t, 0, SPYRE_DMA_FILL, 4, 4 * i, 0, 0, 0, 0, i);
		push_fence(t, 0, i + 1, 0, false);
		ring_doorbell(t, 0);
		if (i % 3 == 2)
			tc_run(t);
	}
	tc_run(t);
	CHECK_EQ(wb_seqno(t, 0), 200);
	CHECK_EQ(wb_head(t, 0), 400);
	for (i = 0; i < 200; i++)
		CHECK_EQ(*(uint32_t *)(t->dev + 4 * i), i);
	tc_free(t);
}

TEST(dma_ring_fetch_and_writeback_failures)
{
	struct tcard *t = tc_new(NULL);
	uint8_t d[64];

	/* ring in memory that is not host RAM: fetch fails */
	tc_wr(t, SPYRE_RING_REG(0, SPYRE_RING_BASE_LO), 0x1000);
	tc_wr(t, SPYRE_RING_REG(0, SPYRE_RING_SIZE_LOG2), 4);
	tc_wr(t, SPYRE_RING_REG(0, SPYRE_RING_WB_LO), (uint32_t)(HOST_BASE + H_WB(0)));
	tc_wr(t, SPYRE_RING_REG(0, SPYRE_RING_CTRL), SPYRE_RING_CTRL_ENABLE);
	tc_wr(t, SPYRE_RING_REG(0, SPYRE_RING_TAIL), 1);
	tc_run(t);
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(0, SPYRE_RING_ERROR)), SPYRE_RING_ERR_FETCH);
	CHECK(ring_status(t, 0) & SPYRE_RING_STATUS_ERROR);
	CHECK_EQ(t->irqs[4], 1);
	/* completion record pointing outside RAM: write-back error */
	ring_setup(t, 1, 4);
	d_fence(d, 5, 0, true);
	((struct spyre_hw_fence *)d)->record_addr = 0x2000;
	ring_push(t, 1, d);
	ring_run(t, 1);
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(1, SPYRE_RING_ERROR)), SPYRE_RING_ERR_WRITEBACK);
	CHECK_EQ(t->irqs[1], 0);
	/* other rings keep working */
	ring_setup(t, 2, 4);
	fence_and_run(t, 2, 6, 2, true);
	CHECK_EQ(wb_seqno(t, 2), 6);
	CHECK_EQ(t->irqs[2], 1);
	tc_free(t);
}

TEST(dma_large_fill_pattern_exact_extent)
{
	struct tcard *t = tc_new(NULL);
	uint64_t len = (3u << 20) + 12, i, bad = 0;

	memset(t->dev, 0xee, len + 64);
	ring_setup(t, 0, 4);
	push_dma(t, 0, SPYRE_DMA_FILL, len, 4, 0, 0, 0, 0, 0xa1b2c3d4);
	fence_and_run(t, 0, 1, 0, false);
	CHECK_EQ(rec(t, 0)->status, 0);
	for (i = 0; i < len; i += 4)
		bad += *(uint32_t *)(t->dev + 4 + i) != 0xa1b2c3d4;
	CHECK_EQ(bad, 0);
	CHECK_EQ(t->dev[3], 0xee);
	CHECK_EQ(t->dev[4 + len], 0xee);
	tc_free(t);
}
