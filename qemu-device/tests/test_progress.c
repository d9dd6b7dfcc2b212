// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * SPYRE_RING_PROGRESS (1.2): moves while a ring's command executes (per
 * program instruction, per DMA chunk), so a driver can tell a long command
 * from a hung one; a hung command (fault HANG) does not move it.
 */
#include "harness.h"

#define PROG	0x100000ull
#define ARG0	0x200000ull
#define NINSNS	40

static uint32_t progress(struct tcard *t, unsigned int ring)
{
	return tc_rd(t, SPYRE_RING_REG(ring, SPYRE_RING_PROGRESS));
}

/* A program of NINSNS small LOADs from slot 0, stored at PROG; returns its length. */
static uint64_t store_loads(struct tcard *t)
{
	struct prog p;
	int i;

	prog_init(&p, 1, 0);
	for (i = 0; i < NINSNS; i++)
		p_load(&p, false, 1, 0, 0, 1, 64, 0, 0, 0);
	return prog_store(t, &p, PROG);
}

TEST(progress_version_is_1_2_or_later)
{
	struct tcard *t = tc_new(NULL);
	uint32_t v = tc_rd(t, SPYRE_REG_VERSION);

	CHECK_EQ(SPYRE_HW_VERSION_MAJOR_OF(v), 1);
	CHECK_EQ(v >= SPYRE_HW_VERSION(1, 2), 1);
	CHECK_EQ(progress(t, 0), 0);
	tc_free(t);
}

TEST(progress_moves_per_launch_instruction)
{
	struct tcard *t = tc_new(NULL);
	uint64_t slots[2] = { ARG0, 4096 }, len = store_loads(t);
	uint32_t before;

	before = progress(t, 0);
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 1, slots).status, SPYRE_CMD_OK);
	CHECK(progress(t, 0) - before >= NINSNS);
	CHECK_EQ(progress(t, 1), 0);			/* only the running ring's */
	tc_free(t);
}

TEST(progress_moves_per_dma_chunk)
{
	struct tcard *t = tc_new(NULL);

	ring_setup(t, 1, 4);
	push_dma(t, 1, SPYRE_DMA_FILL, 16ull << 20, 0, 0, 0, 0, 0, 0x5a5a5a5a);
	fence_and_run(t, 1, 1, 0, true);
	CHECK_EQ(wb_seqno(t, 1), 1);
	CHECK(progress(t, 1) >= 2);
	tc_free(t);
}

TEST(progress_frozen_under_hang_fault)
{
	struct tcard *t = tc_new(NULL);
	uint64_t slots[2] = { ARG0, 4096 }, len = store_loads(t);
	uint32_t before;

	ring_setup(t, 0, 4);
	before = progress(t, 0);
	tc_wr(t, SPYRE_REG_FAULT, SPYRE_FAULT_HANG);
	run_launch(t, PROG, len, 0, 0, 1, slots);
	tc_run(t);
	CHECK_EQ(wb_seqno(t, 0), 0);			/* hung */
	CHECK_EQ(progress(t, 0), before);
	tc_free(t);
}
