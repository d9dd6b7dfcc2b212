// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Completion records say where a failed LAUNCH stopped (interface 1.6):
 * the failing instruction's index, its core and, where the unit knows it,
 * the address its access started at (issue 16).
 */
#include <string.h>

#include "harness.h"

#define PROG	0x100000ull
#define ARG0	0x200000ull
#define BYTES	4096u

TEST(fault_location_names_instruction_core_and_scratchpad_offset)
{
	struct tcard *t = tc_new(NULL);
	uint64_t slots[] = { ARG0, BYTES }, len;
	struct spyre_hw_completion r;
	struct prog p;

	prog_init(&p, 1, 0);
	p_load(&p, false, 0xf, 0, 0, 1, BYTES, 0, 0x1000, 0);	/* fine on cores 0..3 */
	p_load(&p, false, 0xf, 0, 0, 1, BYTES, 0, 0x2000, 0);
	/* instruction 2, core 3 only: 8 KiB at 0x1ff000 runs past the 2 MiB */
	p_load(&p, false, 1u << 3, 0, 0, 2, BYTES, 0, 0x1ff000, BYTES);
	len = prog_store(t, &p, PROG);
	r = run_launch(t, PROG, len, 0, 0, 1, slots);
	CHECK_EQ(r.status, SPYRE_CMD_ERR_BOUNDS);
	CHECK_EQ(r.fault_insn, 2u);
	CHECK_EQ(r.fault_core, 3u);
	CHECK_EQ(r.fault_space, SPYRE_FAULT_SPACE_SCRATCHPAD);
	CHECK_EQ(r.fault_addr, 0x1ff000u);
	tc_free(t);
}

TEST(fault_location_names_the_device_address_of_a_bad_load)
{
	struct tcard *t = tc_new(NULL);
	uint64_t slots[] = { ARG0, BYTES }, len;
	struct spyre_hw_completion r;
	struct prog p;

	prog_init(&p, 1, 0);
	p_load(&p, false, 1, 0, 0, 1, BYTES, 0, 0, 0);
	p_load(&p, false, 1u << 5, 0, 0x800, 1, BYTES, 0, 0, 0);	/* past the 4 KiB slot */
	len = prog_store(t, &p, PROG);
	r = run_launch(t, PROG, len, 0, 0, 1, slots);
	CHECK_EQ(r.status, SPYRE_CMD_ERR_BOUNDS);
	CHECK_EQ(r.fault_insn, 1u);
	CHECK_EQ(r.fault_core, 5u);
	CHECK_EQ(r.fault_space, SPYRE_FAULT_SPACE_DEVMEM);
	CHECK_EQ(r.fault_addr, ARG0 + 0x800);
	tc_free(t);
}

TEST(a_good_launch_and_a_non_program_failure_name_no_instruction)
{
	struct tcard *t = tc_new(NULL);
	uint64_t slots[] = { ARG0, BYTES }, len;
	struct spyre_hw_completion r;
	struct prog p;

	prog_init(&p, 1, 0);
	p_load(&p, false, 1, 0, 0, 1, BYTES, 0, 0, 0);
	len = prog_store(t, &p, PROG);
	r = run_launch(t, PROG, len, 0, 0, 1, slots);
	CHECK_EQ(r.status, SPYRE_CMD_OK);
	CHECK_EQ(r.fault_insn, SPYRE_FAULT_INSN_NONE);
	CHECK_EQ(r.fault_addr, 0u);
	/* a program that does not fit its buffer fails before any instruction */
	r = run_launch(t, PROG, len - 1, 0, 0, 1, slots);
	CHECK(r.status != SPYRE_CMD_OK);
	CHECK_EQ(r.fault_insn, SPYRE_FAULT_INSN_NONE);
	tc_free(t);
}
