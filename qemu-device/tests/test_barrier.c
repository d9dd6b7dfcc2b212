// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * BARRIER (interface 1.8): what the cores of its mask stored before it is
 * what they load after it, it orders the units of a core for the hazard
 * check, it costs barrier_cycles, and malformed ones fail the launch.
 */
#include <string.h>

#include "harness.h"

#define A_DEV	0x400000ull	/* slot 0: written by core 0, read by core 1 */
#define B_DEV	0x500000ull	/* slot 1: core 1's copy of it */

static void hazard_on(struct spyre_model_config *c)
{
	c->hazard_check = true;
}

static uint32_t f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

/*
 * Core 0 fills 128 floats with 7 and stores them to slot 0; core 1 loads
 * slot 0 and stores it to slot 1, after a BARRIER of both cores or not.
 */
static float copy_across_cores(bool barrier)
{
	struct tcard *t = tc_new(NULL);
	uint64_t slots[4] = { A_DEV, 4096, B_DEV, 4096 }, len;
	struct spyre_hw_completion c;
	struct spyre_insn *in;
	struct prog p;
	float got, one = 1.0f;
	int i;

	for (i = 0; i < 128; i++)
		memcpy(t->dev + A_DEV + 4 * i, &one, 4);
	prog_init(&p, 2, 0);
	in = p_vec(&p, 1, SPYRE_VF_FILL, SPYRE_DT_FP32, SPYRE_DT_FP32, 1, 128, 0, 0, 0);
	in->u.vec.imm0 = f32_bits(7.0f);
	in->signal = 1;
	in = p_load(&p, true, 1, 0, 0, 1, 512, 512, 0, 512);
	in->wait = 1;
	if (barrier)
		prog_add(&p, SPYRE_I_BARRIER, 3, 0, 0);
	in = p_load(&p, false, 2, 0, 0, 1, 512, 512, 0, 512);
	in->signal = 1;
	in = p_load(&p, true, 2, 1, 0, 1, 512, 512, 0, 512);
	in->wait = 1;
	len = prog_store(t, &p, 0x100000);
	c = run_launch(t, 0x100000, len, 0, 0, 2, slots);
	CHECK_EQ(c.status, SPYRE_CMD_OK);
	memcpy(&got, t->dev + B_DEV + 4 * 127, 4);
	tc_free(t);
	return got;
}

TEST(barrier_makes_one_cores_stores_visible_to_anothers_loads)
{
	CHECK(copy_across_cores(true) == 7.0f);
	/* without it core 1 loads at once, before core 0 stored */
	CHECK(copy_across_cores(false) == 1.0f);
}

TEST(barrier_takes_a_round_of_the_ring)
{
	struct tcard *t = tc_new(NULL);
	struct spyre_hw_completion c;
	uint64_t len;
	struct prog p;

	prog_init(&p, 0, 0);
	prog_add(&p, SPYRE_I_BARRIER, 0xffffffffu, 0, 0);
	prog_add(&p, SPYRE_I_BARRIER, 0xffffffffu, 0, 0);
	len = prog_store(t, &p, 0x100000);
	c = run_launch(t, 0x100000, len, 0, 0, 0, NULL);
	CHECK_EQ(c.status, SPYRE_CMD_OK);
	CHECK_EQ(c.end_ns - c.start_ns,
		 t->cfg.timing.launch_latency_ns + 2 * t->cfg.timing.barrier_cycles);
	tc_free(t);
}

TEST(barrier_with_tokens_flags_or_no_cores_is_refused)
{
	int k;

	for (k = 0; k < 4; k++) {
		struct tcard *t = tc_new(NULL);
		struct spyre_hw_completion c;
		struct spyre_insn *in;
		uint64_t len;
		struct prog p;

		prog_init(&p, 0, 0);
		in = prog_add(&p, SPYRE_I_BARRIER, k == 3 ? 0 : 1, k == 0, k == 1);
		in->flags = k == 2;
		len = prog_store(t, &p, 0x100000);
		c = run_launch(t, 0x100000, len, 0, 0, 0, NULL);
		CHECK_EQ(c.status, SPYRE_CMD_ERR_PROGRAM);
		tc_free(t);
	}
}

/* SFU writes sp[0, 512), the LSU stores it with no token between them. */
static uint32_t unordered_units(bool barrier)
{
	struct tcard *t = tc_new(hazard_on);
	uint64_t slots[2] = { A_DEV, 4096 }, len;
	struct spyre_hw_completion c;
	struct prog p;

	prog_init(&p, 1, 0);
	p_vec(&p, 1, SPYRE_VF_FILL, SPYRE_DT_FP32, SPYRE_DT_FP32, 1, 128, 0, 0, 0);
	if (barrier)
		prog_add(&p, SPYRE_I_BARRIER, 1, 0, 0);
	p_load(&p, true, 1, 0, 0, 1, 512, 512, 0, 512);
	len = prog_store(t, &p, 0x100000);
	c = run_launch(t, 0x100000, len, 0, 0, 1, slots);
	tc_free(t);
	return c.status;
}

TEST(barrier_orders_the_units_of_a_core_for_the_hazard_check)
{
	CHECK_EQ(unordered_units(false), SPYRE_CMD_ERR_PROGRAM);
	CHECK_EQ(unordered_units(true), SPYRE_CMD_OK);
}
