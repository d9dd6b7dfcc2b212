// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * LAUNCH F_SCRUB (interface 1.5): every scratchpad is zero when the program
 * starts, at a modelled cost; without it a launch can read what the
 * previous launch (of another client) left there.
 */
#include <string.h>

#include "harness.h"
#include "mmu_util.h"

#define PROG	0x100000ull
#define ARG0	0x200000ull	/* the first client's secret */
#define ARG1	0x300000ull	/* what the second client reads back */
#define BYTES	4096u

/* The cores in @mask LOAD ARG0 into their scratchpads at 0x1000. */
static uint64_t load_secret(struct tcard *t, uint32_t mask)
{
	struct prog p;

	prog_init(&p, 1, 0);
	p_load(&p, false, mask, 0, 0, 1, BYTES, 0, 0x1000, 0);
	return prog_store(t, &p, PROG);
}

/* STORE the scratchpad at 0x1000 of core @core to ARG1: reads, never writes it. */
static uint64_t store_only(struct tcard *t, unsigned int core)
{
	struct prog p;

	prog_init(&p, 1, 0);
	p_load(&p, true, 1u << core, 0, 0, 1, BYTES, 0, 0x1000, 0);
	return prog_store(t, &p, PROG);
}

static void no_poison(struct spyre_model_config *c)
{
	c->poison = false;
}

TEST(scrub_clears_every_scratchpad_before_the_program)
{
	struct tcard *t = tc_new(no_poison);
	uint64_t secret[] = { ARG0, BYTES }, readback[] = { ARG1, BYTES }, len;
	struct spyre_hw_completion plain, scrubbed;
	uint8_t zero[BYTES] = { 0 };

	memset(t->dev + ARG0, 0x5e, BYTES);
	len = load_secret(t, 0xffffffffu >> (32 - 8));	/* cores 0..7 */
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 1, secret).status, SPYRE_CMD_OK);
	/* without the flag the next launch sees the data (what F_SCRUB is for) */
	len = store_only(t, 3);
	plain = run_launch(t, PROG, len, 0, 0, 1, readback);
	CHECK_EQ(plain.status, SPYRE_CMD_OK);
	CHECK_EQ(t->dev[ARG1], 0x5e);
	scrubbed = run_launch_flags(t, SPYRE_DESC_F_SCRUB, PROG, len, 0, 0, 1, readback);
	CHECK_EQ(scrubbed.status, SPYRE_CMD_OK);
	CHECK_EQ(memcmp(t->dev + ARG1, zero, BYTES), 0);
	/* 2 MiB per core at 128 bytes per cycle, all cores at once: 16384 cycles */
	CHECK_EQ(scrubbed.compute_ns - plain.compute_ns, 16384u);
	tc_free(t);
}

TEST(launch_flags_other_than_scrub_are_invalid)
{
	struct tcard *t = tc_new(no_poison);
	uint64_t readback[] = { ARG1, BYTES }, len = store_only(t, 0);

	CHECK_EQ(run_launch_flags(t, 0x20, PROG, len, 0, 0, 1, readback).status,
		 SPYRE_CMD_ERR_INVALID);
	CHECK_EQ(run_launch_flags(t, SPYRE_DESC_F_IRQ, PROG, len, 0, 0, 1, readback).status,
		 SPYRE_CMD_ERR_INVALID);
	tc_free(t);
}

/* A job that fails before its scrubbing LAUNCH still scrubs: no client's job
 * can skip the clearing that separates it from the previous client. */
TEST(scrub_happens_even_when_the_job_failed_before_the_launch)
{
	struct tcard *t = tc_new(no_poison);
	uint64_t secret[] = { ARG0, BYTES }, readback[] = { ARG1, BYTES }, len;
	struct spyre_hw_completion r;
	uint8_t zero[BYTES] = { 0 };

	memset(t->dev + ARG0, 0x5e, BYTES);
	len = load_secret(t, 1);
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 1, secret).status, SPYRE_CMD_OK);
	len = store_only(t, 0);
	/* a fill beyond device memory fails the job, skipping its LAUNCH */
	push_dma(t, 0, SPYRE_DMA_FILL, 64, t->cfg.mem_size, 0, 0, 0, 0, 0);
	push_launch_flags(t, 0, SPYRE_DESC_F_SCRUB, PROG, len, 0, 0, 1, readback);
	fence_and_run(t, 0, 500, 0, true);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_ERR_BOUNDS);
	r = run_launch(t, PROG, len, 0, 0, 1, readback);
	CHECK_EQ(r.status, SPYRE_CMD_OK);
	CHECK_EQ(memcmp(t->dev + ARG1, zero, BYTES), 0);
	tc_free(t);
}

/*
 * 1.11: when the compute engine passes to or from a user-mode queue of
 * another owner, the card scrubs without being asked (the driver never
 * sees a process's LAUNCHes); launches of the same owner in a row do not
 * pay for it. Ring 1 is context 4's queue; ring 0 the driver's.
 */
TEST(user_queue_launches_scrub_at_an_owner_change)
{
	struct tcard *t = tc_new(no_poison);
	const uint64_t ring_va = 0x500000000ull, wb_va = 0x600000000ull;
	const uint64_t prog_va = 0x20000000ull, in_va = 0x30000000ull, out_va = 0x40000000ull;
	uint64_t secret[] = { ARG0, BYTES }, readback[] = { ARG1, BYTES };
	uint64_t va_in[] = { in_va, BYTES }, va_out[] = { out_va, BYTES }, len;
	uint8_t zero[BYTES] = { 0 };
	struct pt p;

	pt_init(&p, t, 4, PT1);
	map_records(&p);
	map4k(&p, ring_va, HOST_BASE + H_RING(1), SPYRE_PTE_SYS);
	map4k(&p, wb_va, 0x180000, SPYRE_PTE_WRITE);
	map4k(&p, prog_va, PROG, SPYRE_PTE_EXEC);
	map4k(&p, in_va, ARG0, 0);
	map4k(&p, out_va, ARG1, SPYRE_PTE_WRITE);
	ring_va_setup(t, 1, 4, ring_va, 6, wb_va);

	/* the driver's client leaves a secret; the queue's reader finds zeroes */
	memset(t->dev + ARG0, 0x5e, BYTES);
	len = load_secret(t, 0xffu);
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 1, secret).status, SPYRE_CMD_OK);
	len = store_only(t, 3);
	memset(t->dev + ARG1, 0xaa, BYTES);
	push_launch(t, 1, prog_va, len, 0, 0, 1, va_out);
	push_fence_va(t, 1, 1, 0);
	push_launch(t, 1, prog_va, len, 0, 0, 1, va_out);
	push_fence_va(t, 1, 2, 1);
	ring_run(t, 1);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_OK);
	CHECK_EQ(rec(t, 1)->status, SPYRE_CMD_OK);
	CHECK_EQ(memcmp(t->dev + ARG1, zero, BYTES), 0);
	/*
	 * the second launch of the same owner is not scrubbed: 16384 cycles
	 * less, and 400 ns less for the output page's walk (4 levels of
	 * 100 ns) that the first, with a cold TLB, paid while running
	 */
	CHECK_EQ(rec(t, 0)->compute_ns - rec(t, 1)->compute_ns, 16384u + 400u);

	/* the queue's process leaves a secret; the driver's next client reads zeroes */
	len = load_secret(t, 0xffu);
	push_launch(t, 1, prog_va, len, 0, 0, 1, va_in);
	push_fence_va(t, 1, 3, 2);
	ring_run(t, 1);
	CHECK_EQ(rec(t, 2)->status, SPYRE_CMD_OK);
	len = store_only(t, 3);
	memset(t->dev + ARG1, 0xaa, BYTES);
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 1, readback).status, SPYRE_CMD_OK);
	CHECK_EQ(memcmp(t->dev + ARG1, zero, BYTES), 0);
	tc_free(t);
}
