// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * The hazard check (hazard-check property): units that touch the same
 * scratchpad bytes, one of them writing, must be ordered by program order
 * (same unit) or a token path; otherwise the launch fails with
 * SPYRE_CMD_ERR_PROGRAM. Off, the same programs run.
 */
#include "harness.h"

static void hazard_on(struct spyre_model_config *c)
{
	c->hazard_check = true;
}

/*
 * LOAD sp[0, 512) (signal @load_sig); VEC reads it into sp[4096, ...)
 * (wait @vec_wait, signal @vec_sig); a second LOAD rewrites sp[0, 512)
 * (wait @reload_wait).
 */
static struct spyre_hw_completion run_rec(bool check, uint16_t load_sig, uint16_t vec_wait,
					  uint16_t vec_sig, uint16_t reload_wait)
{
	struct tcard *t = tc_new(check ? hazard_on : NULL);
	uint64_t slots[2] = { 0x400000, 4096 }, len;
	struct spyre_hw_completion c;
	struct spyre_insn *in;
	struct prog p;

	prog_init(&p, 1, 0);
	in = p_load(&p, false, 1, 0, 0, 1, 512, 512, 0, 512);
	in->signal = load_sig;
	in = p_vec(&p, 1, SPYRE_VF_COPY, SPYRE_DT_FP32, SPYRE_DT_FP32, 1, 128, 0, 0, 4096);
	in->wait = vec_wait;
	in->signal = vec_sig;
	in = p_load(&p, false, 1, 0, 0, 1, 512, 512, 0, 512);
	in->wait = reload_wait;
	len = prog_store(t, &p, 0x100000);
	c = run_launch(t, 0x100000, len, 0, 0, 1, slots);
	tc_free(t);
	return c;
}

static uint32_t run_prog(bool check, uint16_t load_sig, uint16_t vec_wait, uint16_t vec_sig,
			 uint16_t reload_wait)
{
	return run_rec(check, load_sig, vec_wait, vec_sig, reload_wait).status;
}

TEST(hazard_ordered_program_passes)
{
	/* load -> token 1 -> vec -> token 2 -> reload */
	CHECK_EQ(run_prog(true, 1, 1, 2, 2), 0);
}

TEST(hazard_read_after_write_without_token_fails)
{
	struct spyre_hw_completion c = run_rec(true, 0, 0, 2, 2);

	CHECK_EQ(c.status, SPYRE_CMD_ERR_PROGRAM);
	/* the record names the VEC (instruction 1) and the stick it read */
	CHECK_EQ(c.fault_insn, 1u);
	CHECK_EQ(c.fault_core, 0u);
	CHECK_EQ(c.fault_space, SPYRE_FAULT_SPACE_SCRATCHPAD);
	CHECK_EQ(c.fault_addr, 0u);
	CHECK_EQ(run_prog(false, 0, 0, 2, 2), 0);	/* off: it runs */
}

TEST(hazard_write_after_read_without_token_fails)
{
	/* the reload does not wait for the VEC that reads the old bytes */
	struct spyre_hw_completion c = run_rec(true, 1, 1, 0, 0);

	CHECK_EQ(c.status, SPYRE_CMD_ERR_PROGRAM);
	CHECK_EQ(c.fault_insn, 2u);	/* the reload */
	CHECK_EQ(c.fault_space, SPYRE_FAULT_SPACE_SCRATCHPAD);
	CHECK_EQ(c.fault_addr, 0u);
	CHECK_EQ(run_prog(false, 1, 1, 0, 0), 0);
}

/*
 * Marks live for one launch: a launch that only writes a region through
 * one unit leaves nothing that makes the next launch's unordered read of
 * it (through another unit) a hazard; the same read racing a write in its
 * own launch is one. The model clears only the sticks a launch marked,
 * so the regions here are far apart and at both ends of the scratchpad.
 */
TEST(hazard_marks_do_not_outlive_their_launch)
{
	struct tcard *t = tc_new(hazard_on);
	uint64_t slots[2] = { 0x400000, 4096 }, len;
	uint32_t offs[2] = { 0, SPYRE_MODEL_SCRATCHPAD_BYTES - 512 }, k;
	struct prog p;

	for (k = 0; k < 2; k++) {
		prog_init(&p, 1, 0);
		p_load(&p, false, 1, 0, 0, 1, 512, 512, offs[k], 512);
		p_load(&p, false, 1, 0, 0, 1, 512, 512, 0x100000, 512);
		len = prog_store(t, &p, 0x100000);
		CHECK_EQ(run_launch(t, 0x100000, len, 0, 0, 1, slots).status, SPYRE_CMD_OK);
		/* the VEC reads what the previous launch's LOAD wrote, no token */
		prog_init(&p, 1, 0);
		p_vec(&p, 1, SPYRE_VF_COPY, SPYRE_DT_FP32, SPYRE_DT_FP32, 1, 128, offs[k], 0, 0x80000);
		len = prog_store(t, &p, 0x100000);
		CHECK_EQ(run_launch(t, 0x100000, len, 0, 0, 1, slots).status, SPYRE_CMD_OK);
		/* with a racing LOAD in the same launch it is a hazard */
		p_load(&p, false, 1, 0, 0, 1, 512, 512, offs[k], 512);
		len = prog_store(t, &p, 0x100000);
		CHECK_EQ(run_launch(t, 0x100000, len, 0, 0, 1, slots).status,
			 SPYRE_CMD_ERR_PROGRAM);
	}
	tc_free(t);
}
