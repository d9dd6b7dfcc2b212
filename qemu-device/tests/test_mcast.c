// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * LOAD MCAST (interface 1.12): one LPDDR5 read lands in the scratchpad of
 * every core of the mask; it starts when all of them are ready, costs the
 * channel its bytes once, takes 4 + sticks + mcast_cycles on each core, and
 * malformed ones fail the launch.
 */
#include <string.h>

#include "harness.h"

#define SRC_DEV	0x400000ull	/* slot 0: the source */
#define DST_DEV	0x800000ull	/* slot 1: one copy per core */

TEST(mcast_delivers_one_read_to_every_core_of_its_mask)
{
	struct tcard *t = tc_new(NULL);
	uint64_t slots[4] = { SRC_DEV, 4096, DST_DEV, 32 * 4096 }, len;
	struct spyre_hw_completion c;
	struct spyre_insn *in;
	struct prog p;
	unsigned int i, core;

	for (i = 0; i < 4096; i++)
		t->dev[SRC_DEV + i] = (uint8_t)(i * 7 + 3);
	memset(t->dev + DST_DEV, 0, 32 * 4096);
	prog_init(&p, 2, 0);
	in = p_load(&p, false, 0x0000f0f0u, 0, 0, 8, 512, 512, 256, 512);
	in->flags = SPYRE_LOAD_MCAST;
	/* each core of the mask stores what it got to its own 4 KiB */
	in = p_load(&p, true, 0x0000f0f0u, 1, 0, 8, 512, 512, 256, 512);
	in->u.mem.core_stride = 4096;
	len = prog_store(t, &p, 0x100000);
	c = run_launch(t, 0x100000, len, 0, 0, 2, slots);
	CHECK_EQ(c.status, SPYRE_CMD_OK);
	for (i = 0; i < 8; i++) {
		core = i < 4 ? 4 + i : 8 + i;	/* mask 0xf0f0: cores 4..7, 12..15 */
		CHECK(core < 16);
		CHECK(!memcmp(t->dev + DST_DEV + 4096ull * i, t->dev + SRC_DEV, 4096));
	}
	tc_free(t);
}

/* Launch time of one 64 KiB LOAD to all 32 cores, multicast or one per core. */
static uint64_t load_all_cores(bool mcast)
{
	struct tcard *t = tc_new(NULL);
	uint64_t slots[2] = { SRC_DEV, 65536 }, len;
	struct spyre_hw_completion c;
	struct spyre_insn *in;
	struct prog p;

	prog_init(&p, 1, 0);
	in = p_load(&p, false, 0xffffffffu, 0, 0, 64, 1024, 1024, 0, 1024);
	if (mcast)
		in->flags = SPYRE_LOAD_MCAST;
	len = prog_store(t, &p, 0x100000);
	c = run_launch(t, 0x100000, len, 0, 0, 1, slots);
	CHECK_EQ(c.status, SPYRE_CMD_OK);
	tc_free(t);
	return c.end_ns - c.start_ns;
}

TEST(mcast_reads_lpddr5_once)
{
	const struct spyre_timing d = { .launch_latency_ns = 2000 };
	/* 512 sticks at 128 B/cycle, + issue + ring delivery (16 cycles) */
	uint64_t ring = 4 + 512 + 16, dram_once = (65536ull * 1000 + 199999) / 200000;

	CHECK_EQ(load_all_cores(true), d.launch_latency_ns + (ring > dram_once ? ring : dram_once));
	/* 32 separate reads of the same bytes share the channel: 32 x 328 ns */
	CHECK(load_all_cores(false) >= d.launch_latency_ns + 32 * dram_once);
}

/*
 * Core 1's SFU fills its buffer late (a long VEC); the MCAST to cores 0
 * and 1 waits for core 1's token, so it starts after that VEC on both.
 */
TEST(mcast_starts_when_every_core_holds_its_tokens)
{
	struct tcard *t = tc_new(NULL);
	uint64_t slots[2] = { SRC_DEV, 4096 }, len, vec_ns;
	struct spyre_hw_completion c;
	struct spyre_insn *in;
	struct prog p;

	prog_init(&p, 1, 0);
	/* 65536 elements at 32/cycle (EXP): 2048 + 4 cycles on core 1 only */
	p_vec(&p, 2, SPYRE_VF_EXP, SPYRE_DT_FP32, SPYRE_DT_FP32, 64, 1024, 0x10000, 0,
	      0x80000)->signal = 1 << 6;
	/* a core 0 VEC signals the same token at once */
	p_vec(&p, 1, SPYRE_VF_FILL, SPYRE_DT_FP32, SPYRE_DT_FP32, 1, 1, 0, 0, 0x80000)->signal =
		1 << 6;
	in = p_load(&p, false, 3, 0, 0, 1, 128, 128, 0, 128);
	in->flags = SPYRE_LOAD_MCAST;
	in->wait = 1 << 6;
	len = prog_store(t, &p, 0x100000);
	c = run_launch(t, 0x100000, len, 0, 0, 1, slots);
	CHECK_EQ(c.status, SPYRE_CMD_OK);
	vec_ns = 4 + 65536 / 32;
	/* the load (4 + 1 + 16 cycles) follows the slow VEC */
	CHECK_EQ(c.end_ns - c.start_ns, 2000 + vec_ns + 4 + 1 + 16);
	tc_free(t);
}

TEST(mcast_with_a_core_offset_or_on_a_store_is_refused)
{
	int k;

	for (k = 0; k < 4; k++) {
		struct tcard *t = tc_new(NULL);
		uint64_t slots[2] = { SRC_DEV, 65536 }, len;
		struct spyre_hw_completion c;
		struct spyre_insn *in;
		struct prog p;

		prog_init(&p, 1, 0);
		in = p_load(&p, k == 3, 3, 0, 0, 1, 128, 128, 0, 128);
		in->flags = SPYRE_LOAD_MCAST;
		if (k == 0)
			in->u.mem.core_stride = 128;
		if (k == 1)
			in->u.mem.core_div = 1;
		if (k == 2)
			in->u.mem.core_stride2 = 128;
		len = prog_store(t, &p, 0x100000);
		c = run_launch(t, 0x100000, len, 0, 0, 1, slots);
		CHECK_EQ(c.status, SPYRE_CMD_ERR_PROGRAM);
		tc_free(t);
	}
}

TEST(mcast_card_reports_interface_1_11)
{
	struct tcard *t = tc_new(NULL);

	CHECK(tc_rd(t, SPYRE_REG_VERSION) >= SPYRE_HW_VERSION(1, 12));
	tc_free(t);
}
