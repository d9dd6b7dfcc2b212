// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Device-time model of memory and the PE array: one LPDDR5 budget shared
 * by programs and DMA, sticks touched by misaligned rows, the 8x8 array's
 * occupancy, and the program fetch.
 */
#include "harness.h"

#define MIB (1ull << 20)

/* 32 cores each load 64 KiB, @reps times: 2 MiB of LPDDR5 reads per rep. */
static uint64_t read_prog(struct tcard *t, unsigned int reps, uint64_t at, uint64_t *len)
{
	struct prog p;
	unsigned int r;

	prog_init(&p, 1, 0);
	for (r = 0; r < reps; r++) {
		struct spyre_insn *i = p_load(&p, false, 0xffffffffu, 0, 0, 1, 65536, 65536, 0,
					      65536);

		i->u.mem.core_stride = 65536;
	}
	*len = prog_store(t, &p, at);
	return at;
}

/* End of a launch of @prog (ring 0) and of a D2D of @d2d bytes (ring 1), both at 0. */
static void launch_and_copy(struct tcard *t, uint64_t prog, uint64_t plen, uint64_t d2d,
			    uint64_t *launch_end, uint64_t *copy_end)
{
	uint64_t slots[2] = { 0x400000, 2 * MIB };

	ring_setup(t, 0, 5);
	ring_setup(t, 1, 5);
	if (prog) {
		push_launch(t, 0, prog, plen, 0, 0, 1, slots);
		push_fence(t, 0, 1, 0, true);
		ring_doorbell(t, 0);
	}
	if (d2d) {
		push_dma(t, 1, SPYRE_DMA_D2D, d2d, 0x1000000, 0x2000000, 0, 0, 0, 0);
		push_fence(t, 1, 2, 1, true);
		ring_doorbell(t, 1);
	}
	tc_run(t);
	*launch_end = prog ? rec(t, 0)->end_ns : 0;
	*copy_end = d2d ? rec(t, 1)->end_ns : 0;
}

/*
 * A DRAM-bound launch (16 MiB of reads) and a concurrent D2D copy of 8 MiB
 * (16 MiB of LPDDR5 traffic): together 32 MiB cannot move faster than
 * 32 MiB at 200 GB/s. They used to finish in the time of 16 MiB.
 */
TEST(timing_dram_budget_shared_by_program_and_dma)
{
	uint64_t len, prog, l_alone, c_alone, l_both, c_both, dummy;
	const uint64_t both_bytes_ns = (32 * MIB * 1000 + 199999) / 200000;
	struct tcard *t;

	t = tc_new(NULL);
	prog = read_prog(t, 8, 0x100000, &len);
	launch_and_copy(t, prog, len, 0, &l_alone, &dummy);
	tc_free(t);
	t = tc_new(NULL);
	launch_and_copy(t, 0, 0, 8 * MIB, &dummy, &c_alone);
	tc_free(t);
	t = tc_new(NULL);
	prog = read_prog(t, 8, 0x100000, &len);
	launch_and_copy(t, prog, len, 8 * MIB, &l_both, &c_both);
	CHECK_EQ(rec(t, 0)->status, 0);
	CHECK_EQ(rec(t, 1)->status, 0);
	tc_free(t);
	/* each alone: its own 16 MiB at 200 GB/s (plus fixed latencies) */
	CHECK(l_alone >= both_bytes_ns / 2 && l_alone < both_bytes_ns / 2 + 5000);
	CHECK(c_alone >= both_bytes_ns / 2 && c_alone < both_bytes_ns / 2 + 5000);
	/* together: the later one ends no earlier than all 32 MiB at 200 GB/s */
	CHECK((l_both > c_both ? l_both : c_both) >= both_bytes_ns);
	CHECK((l_both > c_both ? l_both : c_both) < both_bytes_ns + 5000);
	/* the launch started first and keeps its reads; the copy fills the gaps */
	CHECK(c_both > c_alone + both_bytes_ns / 2 - 5000);
}

/* PCIe transfers take LPDDR5 time too: a 1 MiB H2D delays a concurrent D2D. */
TEST(timing_pcie_transfers_use_dram)
{
	struct tcard *t = tc_new(NULL);
	uint64_t alone, both;

	ring_setup(t, 1, 5);
	push_dma(t, 1, SPYRE_DMA_D2D, 4 * MIB, 0x1000000, 0x2000000, 0, 0, 0, 0);
	fence_and_run(t, 1, 1, 1, true);
	alone = rec(t, 1)->end_ns;
	tc_free(t);

	t = tc_new(NULL);
	ring_setup(t, 0, 5);
	ring_setup(t, 1, 5);
	push_dma(t, 0, SPYRE_DMA_H2D, 4 * MIB, 0x3000000, 0, sg_simple(t, 0, 0, 4 * MIB), 1, 0,
		 0);
	push_fence(t, 0, 1, 0, true);
	ring_doorbell(t, 0);
	push_dma(t, 1, SPYRE_DMA_D2D, 4 * MIB, 0x1000000, 0x2000000, 0, 0, 0, 0);
	fence_and_run(t, 1, 2, 1, true);
	both = rec(t, 1)->end_ns;
	CHECK_EQ(rec(t, 0)->status, 0);
	CHECK_EQ(rec(t, 1)->status, 0);
	tc_free(t);
	/* the H2D's 4 MiB of LPDDR5 writes (21 us at 200 GB/s) are not free */
	CHECK(both >= alone + (4 * MIB * 1000) / 200000);
}

/* One load of @bytes from @off; returns the launch's device time. */
static uint64_t load_ns(uint64_t off, uint32_t rows, uint32_t bytes, uint32_t stride)
{
	struct tcard *t = tc_new(NULL);
	uint64_t slots[2] = { 0x400000, 4 * MIB }, len, ns;
	struct spyre_hw_completion c;
	struct prog p;

	prog_init(&p, 1, 0);
	p_load(&p, false, 1, 0, off, rows, bytes, stride, 0, bytes);
	len = prog_store(t, &p, 0x100000);
	c = run_launch(t, 0x100000, len, 0, 0, 1, slots);
	CHECK_EQ(c.status, 0);
	ns = c.end_ns - c.start_ns;
	tc_free(t);
	return ns;
}

TEST(timing_misaligned_rows_cost_the_sticks_they_touch)
{
	/* 128 bytes: one stick aligned, two when they start mid-stick */
	CHECK_EQ(load_ns(64, 1, 128, 128), load_ns(0, 1, 128, 128) + 1);
	/* 64 rows of 128 bytes: one extra stick (cycle) per misaligned row */
	CHECK_EQ(load_ns(32, 64, 128, 256), load_ns(0, 64, 128, 256) + 64);
	/* a stride that is not a stick multiple: every other row straddles */
	CHECK_EQ(load_ns(0, 64, 100, 192), load_ns(0, 64, 100, 256) + 32);
}

static uint64_t mm_ns(uint16_t m, uint16_t n, uint16_t k)
{
	struct tcard *t = tc_new(NULL);
	struct spyre_hw_completion c;
	struct prog p;
	uint64_t len;

	prog_init(&p, 0, 0);
	p_mm(&p, 1, SPYRE_DT_FP16, SPYRE_DT_FP32, m, n, k, 0, 65536, 131072, 0);
	len = prog_store(t, &p, 0x100000);
	c = run_launch(t, 0x100000, len, 0, 0, 0, NULL);
	CHECK_EQ(c.status, 0);
	tc_free(t);
	return c.end_ns - c.start_ns;
}

TEST(timing_pe_rate_by_array_occupancy)
{
	/* the 8x8 array computes whole 8x8 blocks of C: M = 1 costs M = 8 */
	CHECK_EQ(mm_ns(1, 64, 256), mm_ns(8, 64, 256));
	CHECK_EQ(mm_ns(8, 1, 256), mm_ns(8, 8, 256));
	CHECK_EQ(mm_ns(9, 64, 256), mm_ns(16, 64, 256));
	CHECK(mm_ns(16, 64, 256) > mm_ns(8, 64, 256));
}

static void slow_dram(struct spyre_model_config *c)
{
	c->timing.dram_bytes_per_us = 1000;	/* 1 MB/s: a 16 KiB fetch takes 16 ms */
}

TEST(timing_program_fetch_costs_time)
{
	struct tcard *t = tc_new(slow_dram);
	struct spyre_hw_completion c;
	uint64_t len, fetch;
	struct prog p;
	unsigned int i;

	prog_init(&p, 0, 0);
	for (i = 0; i < 255; i++)
		prog_add(&p, SPYRE_I_NOP, 1, 0, 0);
	len = prog_store(t, &p, 0x100000);
	c = run_launch(t, 0x100000, len, 0, 0, 0, NULL);
	CHECK_EQ(c.status, 0);
	fetch = (uint64_t)(SPYRE_PROG_HEADER_SIZE + 255 * SPYRE_PROG_INSN_SIZE) * 1000 / 1000;
	CHECK(c.end_ns - c.start_ns >= fetch);
	tc_free(t);
}
