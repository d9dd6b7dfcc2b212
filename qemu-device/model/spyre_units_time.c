// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Spyre card model: modelled duration of one instruction on one core.
 * LSU: whole 128-byte sticks over the core's ring port (ring_bytes_per_cycle)
 * and LPDDR5 (shared by all cores, returned in *dram_ns for the scheduler
 * to serialise). PE: M*N*K multiply-accumulates at the dtype's rate plus
 * the systolic fill. SFU: elements at the simple or transcendental rate.
 */
#include "spyre_exec.h"
#include "spyre_internal.h"

static bool transcendental(unsigned int f)
{
	return f >= SPYRE_VF_GELU && f <= SPYRE_VF_SOFTMAX_ROW;
}

static uint64_t div_up(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

uint64_t card_insn_ns(const struct spyre_timing *t, const struct spyre_insn *in,
		       uint64_t *dram_ns)
{
	uint64_t cycles = t->unit_issue_cycles, bytes, macs, elems;
	uint32_t rate;

	*dram_ns = 0;
	switch (in->op) {
	case SPYRE_I_LOAD:
	case SPYRE_I_STORE:
		bytes = (uint64_t)in->u.mem.rows *
			div_up(in->u.mem.row_bytes, SPYRE_ISA_STICK) * SPYRE_ISA_STICK;
		cycles += div_up(bytes, t->ring_bytes_per_cycle);
		*dram_ns = card_time_bytes(bytes, t->dram_bytes_per_us);
		break;
	case SPYRE_I_MATMUL:
		macs = (uint64_t)in->u.mm.m * in->u.mm.n * in->u.mm.k;
		rate = in->dtype == SPYRE_DT_FP32 ? t->pe_macs_fp32 :
		       in->dtype == SPYRE_DT_INT8 ? t->pe_macs_int8 : t->pe_macs_fp16;
		cycles += t->pe_fill_cycles + div_up(macs, rate);
		break;
	case SPYRE_I_VEC:
		elems = (uint64_t)in->u.vec.rows * in->u.vec.cols;
		if (in->u.vec.func == SPYRE_VF_SOFTMAX_ROW)
			elems *= 3;	/* max, exp+sum, scale passes */
		rate = transcendental(in->u.vec.func) ? t->sfu_transc_elems : t->sfu_elems;
		cycles += div_up(elems, rate);
		break;
	}
	return card_time_cycles(t, cycles);
}
