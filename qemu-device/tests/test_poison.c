// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Scratchpad poisoning (the sim backend's default): at every launch start a scratchpad
 * the previous launch used reads as CARD_SP_POISON wherever it is read,
 * whatever any earlier program wrote there and through which unit. The
 * model rewrites only the pages written since they were last poisoned;
 * these tests hold it to the contents a whole-scratchpad rewrite gives.
 */
#include <string.h>

#include "harness.h"

#define PROG	0x100000ull
#define ARG0	0x200000ull	/* data the first program loads */
#define ARG1	0x400000ull	/* a whole scratchpad stored back */
#define SP	SPYRE_MODEL_SCRATCHPAD_BYTES

/* The card as libspyre's sim creates it (the model's default is off). */
static void poison_on(struct spyre_model_config *c)
{
	c->poison = true;
}

/* Core @core's whole scratchpad into ARG1 (reads it, writes nothing). */
static struct spyre_hw_completion dump(struct tcard *t, unsigned int core, uint8_t flags)
{
	uint64_t slots[] = { ARG1, SP }, len;
	struct prog p;

	prog_init(&p, 1, 0);
	p_load(&p, true, 1u << core, 0, 0, SP / 4096, 4096, 4096, 0, 4096);
	len = prog_store(t, &p, PROG);
	return run_launch_flags(t, flags, PROG, len, 0, 0, 1, slots);
}

/* Every byte of the dump is @v. */
static bool dump_is(struct tcard *t, uint8_t v)
{
	uint64_t i;

	for (i = 0; i < SP; i++)
		if (t->dev[ARG1 + i] != v)
			return false;
	return true;
}

/*
 * Cores in @mask write their scratchpads through all three units: a
 * strided LOAD over several pages, a MATMUL's C, a VEC's destination.
 */
static struct spyre_hw_completion scribble(struct tcard *t, uint32_t mask)
{
	uint64_t slots[] = { ARG0, 4096 }, len;
	struct spyre_insn *in;
	struct prog p;

	prog_init(&p, 1, 0);
	in = p_load(&p, false, mask, 0, 0, 3, 256, 256, 0x3000, 0x2000);
	in->signal = 1;
	in = p_mm(&p, mask, SPYRE_DT_FP32, SPYRE_DT_FP32, 1, 4, 4, 0x3000, 0x3000, 0x40000, 0);
	in->wait = 1;
	in->signal = 2;
	in = p_vec(&p, mask, SPYRE_VF_SCALE, SPYRE_DT_FP32, SPYRE_DT_FP16, 2, 700, 0x3000, 0,
		   0x1ff000);
	in->wait = 2;
	len = prog_store(t, &p, PROG);
	return run_launch(t, PROG, len, 0, 0, 1, slots);
}

TEST(poison_covers_what_every_unit_wrote)
{
	struct tcard *t = tc_new(poison_on);

	memset(t->dev + ARG0, 0x3c, 4096);	/* fp32 0x3c3c3c3c, about 0.0115 */
	CHECK_EQ(scribble(t, 1).status, SPYRE_CMD_OK);
	CHECK_EQ(dump(t, 0, 0).status, SPYRE_CMD_OK);
	CHECK(dump_is(t, 0xff));
	/* and again: the dump itself left nothing behind either */
	CHECK_EQ(scribble(t, 1).status, SPYRE_CMD_OK);
	CHECK_EQ(scribble(t, 1).status, SPYRE_CMD_OK);
	CHECK_EQ(dump(t, 0, 0).status, SPYRE_CMD_OK);
	CHECK(dump_is(t, 0xff));
	tc_free(t);
}

/*
 * F_SCRUB zeroes every allocated scratchpad, then poisoning rewrites those
 * the previous launch used: a scratchpad left out of the previous launch
 * reads zero, and reads the poison again once it was used.
 */
TEST(poison_after_scrub_follows_the_previous_launch)
{
	struct tcard *t = tc_new(poison_on);

	memset(t->dev + ARG0, 0x3c, 4096);
	CHECK_EQ(scribble(t, 3).status, SPYRE_CMD_OK);	/* cores 0 and 1 */
	CHECK_EQ(scribble(t, 1).status, SPYRE_CMD_OK);	/* core 0 only */
	CHECK_EQ(dump(t, 1, SPYRE_DESC_F_SCRUB).status, SPYRE_CMD_OK);
	CHECK(dump_is(t, 0));		/* core 1: scrubbed, not poisoned */
	CHECK_EQ(dump(t, 1, 0).status, SPYRE_CMD_OK);
	CHECK(dump_is(t, 0xff));	/* used by the dump: poisoned */
	CHECK_EQ(dump(t, 0, 0).status, SPYRE_CMD_OK);
	CHECK(dump_is(t, 0xff));
	tc_free(t);
}
