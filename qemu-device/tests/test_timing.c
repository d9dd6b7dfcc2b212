// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Device-time model: per-ring order, shared compute engine, concurrent DMA
 * engines, doorbell times, arbitration by device time, pacing.
 */
#include "harness.h"

/* A program of one 64x64x64 fp16 matmul on core 0: 2000 + 276 ns. */
#define MM_NS	(2000 + 4 + 16 + 256)
#define MB_NS	(1000 + 20972)		/* 1 MiB over PCIe at 50 GB/s */

static uint64_t mm_prog(struct tcard *t, uint64_t at, uint64_t *len)
{
	struct prog p;

	prog_init(&p, 0, 0);
	p_mm(&p, 1, SPYRE_DT_FP16, SPYRE_DT_FP32, 64, 64, 64, 0, 8192, 16384, 0);
	*len = prog_store(t, &p, at);
	return at;
}

static void push_mm_job(struct tcard *t, unsigned int ring, uint64_t seq, unsigned int r)
{
	uint64_t len, prog = mm_prog(t, 0x100000, &len);

	push_launch(t, ring, prog, len, 0, 0, 0, NULL);
	push_fence(t, ring, seq, r, true);
}

static void push_dma_job(struct tcard *t, unsigned int ring, unsigned int dir, uint64_t seq,
			 unsigned int r)
{

	push_dma(t, ring, dir, 1 << 20, 0x200000, 0, sg_simple(t, ring, 0, 1 << 20), 1, 0, 0);
	push_fence(t, ring, seq, r, true);
}

TEST(timing_dma_overlaps_compute_on_other_ring)
{
	struct tcard *t = tc_new(NULL);

	ring_setup(t, 0, 5);
	ring_setup(t, 1, 5);
	push_mm_job(t, 0, 1, 0);
	push_dma_job(t, 1, SPYRE_DMA_H2D, 2, 1);
	ring_doorbell(t, 0);
	ring_run(t, 1);
	CHECK_EQ(rec(t, 0)->status, 0);
	CHECK_EQ(rec(t, 0)->start_ns, 0);
	CHECK_EQ(rec(t, 0)->end_ns, MM_NS);
	CHECK_EQ(rec(t, 0)->compute_ns, MM_NS);
	CHECK_EQ(rec(t, 1)->start_ns, 0);		/* overlaps the compute job */
	CHECK_EQ(rec(t, 1)->end_ns, MB_NS);
	CHECK_EQ(rec(t, 1)->dma_ns, MB_NS);
	tc_free(t);
}

TEST(timing_two_compute_jobs_serialise)
{
	struct tcard *t = tc_new(NULL);

	ring_setup(t, 0, 5);
	ring_setup(t, 1, 5);
	push_mm_job(t, 0, 1, 0);
	push_mm_job(t, 1, 2, 1);
	ring_doorbell(t, 0);
	ring_run(t, 1);
	CHECK_EQ(rec(t, 0)->start_ns, 0);
	CHECK_EQ(rec(t, 0)->end_ns, MM_NS);
	CHECK_EQ(rec(t, 1)->start_ns, MM_NS);		/* waits for the compute engine */
	CHECK_EQ(rec(t, 1)->end_ns, 2 * MM_NS);
	CHECK_EQ(rec(t, 1)->compute_ns, MM_NS);
	tc_free(t);
}

TEST(timing_dma_engines_h2d_d2h_concurrent_same_dir_serial)
{
	struct tcard *t = tc_new(NULL);

	ring_setup(t, 0, 5);
	ring_setup(t, 1, 5);
	ring_setup(t, 2, 5);
	push_dma_job(t, 0, SPYRE_DMA_H2D, 1, 0);
	push_dma_job(t, 1, SPYRE_DMA_D2H, 2, 1);
	push_dma_job(t, 2, SPYRE_DMA_H2D, 3, 2);
	ring_doorbell(t, 0);
	ring_doorbell(t, 1);
	ring_run(t, 2);
	CHECK_EQ(rec(t, 0)->start_ns, 0);
	CHECK_EQ(rec(t, 1)->start_ns, 0);		/* D2H engine is separate */
	CHECK_EQ(rec(t, 2)->start_ns, MB_NS);		/* second H2D queues */
	CHECK_EQ(rec(t, 2)->end_ns, 2 * MB_NS);
	tc_free(t);
}

TEST(timing_one_ring_is_in_order)
{
	struct tcard *t = tc_new(NULL);

	ring_setup(t, 0, 5);
	push_dma_job(t, 0, SPYRE_DMA_H2D, 1, 0);
	push_mm_job(t, 0, 2, 1);
	push_dma(t, 0, SPYRE_DMA_D2D, 1 << 20, 0x400000, 0x200000, 0, 0, 0, 0);
	push_dma(t, 0, SPYRE_DMA_FILL, 1 << 20, 0x400000, 0, 0, 0, 0, 0);
	fence_and_run(t, 0, 3, 2, false);
	CHECK_EQ(rec(t, 0)->end_ns, MB_NS);
	CHECK_EQ(rec(t, 1)->start_ns, MB_NS);		/* stream order, no overlap */
	CHECK_EQ(rec(t, 1)->end_ns, MB_NS + MM_NS);
	/* D2D: read + write of LPDDR5 at 200 GB/s; FILL: write only */
	CHECK_EQ(rec(t, 2)->start_ns, MB_NS + MM_NS);
	CHECK_EQ(rec(t, 2)->dma_ns, (1000 + 10486) + (1000 + 5243));
	CHECK_EQ(rec(t, 2)->end_ns, MB_NS + MM_NS + (1000 + 10486) + (1000 + 5243));
	tc_free(t);
}

TEST(timing_doorbell_time_and_arbitration_by_device_time)
{
	struct tcard *t = tc_new(NULL);

	ring_setup(t, 0, 5);
	ring_setup(t, 1, 5);
	push_mm_job(t, 1, 2, 1);
	t->now = 500;
	ring_doorbell(t, 1);		/* ring 1 rings first, at 500 */
	push_mm_job(t, 0, 1, 0);
	t->now = 800;
	ring_doorbell(t, 0);		/* ring 0 at 800 */
	tc_run(t);			/* one pass sees both */
	CHECK_EQ(rec(t, 1)->start_ns, 500);
	CHECK_EQ(rec(t, 1)->end_ns, 500 + MM_NS);
	CHECK_EQ(rec(t, 0)->start_ns, 500 + MM_NS);	/* lower ring index, but later */
	/* a job doorbelled after an idle gap starts at its doorbell */
	t->now = 100000;
	push_mm_job(t, 0, 3, 0);
	ring_run(t, 0);
	CHECK_EQ(rec(t, 0)->start_ns, 100000);
	tc_free(t);
}

TEST(timing_independent_of_processing_granularity)
{
	struct tcard *a = tc_new(NULL), *b = tc_new(NULL);
	unsigned int i;

	/* same submissions; card a is run after every doorbell, b once */
	for (i = 0; i < 2; i++) {
		struct tcard *t = i ? b : a;

		ring_setup(t, 0, 5);
		ring_setup(t, 1, 5);
		push_dma_job(t, 1, SPYRE_DMA_H2D, 1, 1);
		push_mm_job(t, 0, 2, 0);
		ring_doorbell(t, 1);
		if (!i)
			tc_run(t);
		ring_doorbell(t, 0);
		if (!i)
			tc_run(t);
		push_mm_job(t, 1, 3, 2);
		ring_run(t, 1);
	}
	for (i = 0; i < 3; i++) {
		CHECK_EQ(rec(a, i)->start_ns, rec(b, i)->start_ns);
		CHECK_EQ(rec(a, i)->end_ns, rec(b, i)->end_ns);
	}
	CHECK_EQ(rec(a, 2)->start_ns, MB_NS);	/* ring 1: after its DMA, compute free */
	tc_free(a);
	tc_free(b);
}

static void paced(struct spyre_model_config *c)
{
	c->pacing = true;
}

TEST(timing_pacing_holds_completion_until_device_time)
{
	struct tcard *t = tc_new(paced);
	uint64_t wake;

	ring_setup(t, 0, 5);
	push_dma_job(t, 0, SPYRE_DMA_H2D, 1, 0);
	t->now = 1000;
	ring_doorbell(t, 0);
	wake = tc_run(t);
	CHECK_EQ(wake, 1000 + MB_NS);
	CHECK_EQ(wb_seqno(t, 0), 0);
	CHECK_EQ(t->irqs[0], 0);
	t->now = 1000 + MB_NS - 1;
	CHECK_EQ(tc_run(t), 1000 + MB_NS);
	CHECK_EQ(wb_seqno(t, 0), 0);
	t->now = 1000 + MB_NS;
	CHECK_EQ(tc_run(t), SPYRE_MODEL_NEVER);
	CHECK_EQ(wb_seqno(t, 0), 1);
	CHECK_EQ(rec(t, 0)->end_ns, 1000 + MB_NS);
	CHECK_EQ(t->irqs[0], 1);
	tc_free(t);
}

TEST(timing_pacing_off_completes_immediately)
{
	struct tcard *t = tc_new(NULL);

	ring_setup(t, 0, 5);
	push_dma_job(t, 0, SPYRE_DMA_H2D, 1, 0);
	ring_doorbell(t, 0);
	CHECK_EQ(tc_run(t), SPYRE_MODEL_NEVER);
	CHECK_EQ(wb_seqno(t, 0), 1);
	CHECK_EQ(rec(t, 0)->end_ns, MB_NS);		/* device time ahead of "now" */
	tc_free(t);
}

TEST(timing_compute_engine_serves_in_submission_order)
{
	struct tcard *t = tc_new(NULL);

	ring_setup(t, 0, 5);
	ring_setup(t, 1, 5);
	push_dma_job(t, 0, SPYRE_DMA_H2D, 1, 0);
	push_mm_job(t, 0, 2, 1);
	ring_doorbell(t, 0);		/* submitted first: its LAUNCH is first in line */
	push_mm_job(t, 1, 3, 2);
	t->now = 10;
	ring_run(t, 1);
	CHECK_EQ(rec(t, 1)->start_ns, MB_NS);
	CHECK_EQ(rec(t, 2)->start_ns, MB_NS + MM_NS);
	tc_free(t);
}

/* A mixed workload on three rings, doorbells at several device times. */
static void scenario(struct tcard *t, bool run_often, bool advance)
{
	unsigned int i;

	for (i = 0; i < 3; i++)
		ring_setup(t, i, 6);
	for (i = 0; i < 6; i++) {
		unsigned int ring = i % 3;

		if (i % 2)
			push_mm_job(t, ring, 10 + i, i);
		else
			push_dma_job(t, ring, i % 4 ? SPYRE_DMA_D2H : SPYRE_DMA_H2D, 10 + i, i);
		if (i == 3) {
			push_sem(t, ring, false, 1, 1);
			push_mm_job(t, ring, 20, 6);
		}
		if (i == 4) {
			push_sem(t, ring, true, 1, 1);
			push_fence(t, ring, 21, 7, false);
		}
		t->now = 3000 * i;
		ring_doorbell(t, ring);
		if (run_often)
			tc_run(t);
	}
	if (advance) {
		for (i = 0; i < 200 && !(ring_status(t, 0) & ring_status(t, 1) &
					 ring_status(t, 2) & SPYRE_RING_STATUS_IDLE); i++) {
			t->now += 1000;
			tc_run(t);
		}
	} else {
		tc_run(t);
	}
}

static void paced2(struct spyre_model_config *c)
{
	c->pacing = true;
}

TEST(timing_same_timeline_paced_unpaced_any_granularity)
{
	struct tcard *a = tc_new(NULL), *b = tc_new(NULL), *c = tc_new(paced2);
	unsigned int i;

	scenario(a, true, false);
	scenario(b, false, false);
	scenario(c, true, true);
	for (i = 0; i < 8; i++) {
		CHECK(rec(a, i)->seqno != 0);
		CHECK_EQ(rec(a, i)->seqno, rec(b, i)->seqno);
		CHECK_EQ(rec(a, i)->seqno, rec(c, i)->seqno);
		CHECK_EQ(rec(a, i)->start_ns, rec(b, i)->start_ns);
		CHECK_EQ(rec(a, i)->end_ns, rec(b, i)->end_ns);
		CHECK_EQ(rec(a, i)->start_ns, rec(c, i)->start_ns);
		CHECK_EQ(rec(a, i)->end_ns, rec(c, i)->end_ns);
	}
	tc_free(a);
	tc_free(b);
	tc_free(c);
}

TEST(timing_pacing_releases_queued_completions_in_order)
{
	struct tcard *t = tc_new(paced2);
	unsigned int i;

	ring_setup(t, 0, 7);
	for (i = 0; i < 40; i++)
		push_dma_job(t, 0, SPYRE_DMA_H2D, i + 1, i);
	ring_doorbell(t, 0);
	CHECK_EQ(tc_run(t), MB_NS);
	CHECK_EQ(wb_seqno(t, 0), 0);
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(0, SPYRE_RING_HEAD)), 80);	/* fetched ahead */
	CHECK(!(ring_status(t, 0) & SPYRE_RING_STATUS_IDLE));
	t->now = 10 * MB_NS;
	CHECK_EQ(tc_run(t), 11 * MB_NS);
	CHECK_EQ(wb_seqno(t, 0), 10);
	CHECK_EQ(t->irqs[0], 10);
	t->now = 40 * MB_NS;
	CHECK_EQ(tc_run(t), SPYRE_MODEL_NEVER);
	CHECK_EQ(wb_seqno(t, 0), 40);
	CHECK_EQ(rec(t, 39)->end_ns, 40 * MB_NS);
	CHECK(ring_status(t, 0) & SPYRE_RING_STATUS_IDLE);
	/* a ring reset drops what was queued */
	push_dma_job(t, 0, SPYRE_DMA_H2D, 99, 0);
	ring_run(t, 0);
	tc_wr(t, SPYRE_RING_REG(0, SPYRE_RING_CTRL), SPYRE_RING_CTRL_RESET);
	t->now = 100 * MB_NS;
	tc_run(t);
	CHECK_EQ(wb_seqno(t, 0), 40);
	tc_free(t);
}
