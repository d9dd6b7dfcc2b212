// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Spyre card model: modelled duration of one instruction on one core.
 * LSU: the 128-byte sticks each row touches (a misaligned row touches one
 * more) over the core's ring port (ring_bytes_per_cycle) and LPDDR5
 * (shared by all cores and the DMA engines, returned in *dram_ns for the
 * scheduler to reserve). PE: the 8x8 array works on whole 8x8 blocks of C,
 * so M and N count rounded up to multiples of 8 (M = 1 runs at 1/8 rate),
 * times K multiply-accumulates at the dtype's rate, plus the systolic
 * fill. SFU: elements at the simple or transcendental rate; in integer
 * mode (1.9) an int64 element counts as two (a 64-bit lane is two 32-bit
 * ones: the same time per 128-byte stick as fp32), and FLOORDIV/REM run at
 * the transcendental rate (an iterative divider).
 */
#include "spyre_exec.h"
#include "spyre_internal.h"

static bool transcendental(unsigned int f)
{
	return (f >= SPYRE_VF_GELU && f <= SPYRE_VF_SOFTMAX_ROW) ||
	       (f >= SPYRE_VF_SIN && f <= SPYRE_VF_ERF);
}

static uint64_t div_up(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

/* 128-byte sticks touched by @rows rows of @bytes, @stride apart, from @addr. */
static uint64_t sticks(uint64_t addr, uint32_t rows, uint64_t stride, uint32_t bytes)
{
	uint64_t n = 0, r;

	if (stride % SPYRE_ISA_STICK == 0)	/* every row has the same alignment */
		return (uint64_t)rows * div_up(addr % SPYRE_ISA_STICK + bytes, SPYRE_ISA_STICK);
	for (r = 0; r < rows; r++)
		n += div_up((addr + r * stride) % SPYRE_ISA_STICK + bytes, SPYRE_ISA_STICK);
	return n;
}

uint64_t card_insn_ns(const struct spyre_timing *t, const struct spyre_insn *in,
		       uint64_t mem_addr, uint64_t *dram_ns)
{
	uint64_t cycles = t->unit_issue_cycles, bytes, macs, elems;
	uint32_t rate;

	*dram_ns = 0;
	switch (in->op) {
	case SPYRE_I_LOAD:
	case SPYRE_I_STORE:
		bytes = sticks(mem_addr, in->u.mem.rows, in->u.mem.mem_row_stride,
			       in->u.mem.row_bytes) * SPYRE_ISA_STICK;
		cycles += div_up(bytes, t->ring_bytes_per_cycle);
		*dram_ns = card_time_bytes(bytes, t->dram_bytes_per_us);
		break;
	case SPYRE_I_MATMUL:
		macs = div_up(in->u.mm.m, 8) * 8 * div_up(in->u.mm.n, 8) * 8 * in->u.mm.k;
		rate = in->dtype == SPYRE_DT_FP32 ? t->pe_macs_fp32 :
		       in->dtype == SPYRE_DT_INT8 ? t->pe_macs_int8 : t->pe_macs_fp16;
		cycles += t->pe_fill_cycles + div_up(macs, rate);
		break;
	case SPYRE_I_VEC:
		elems = (uint64_t)in->u.vec.rows * in->u.vec.cols;
		if (in->u.vec.func == SPYRE_VF_SOFTMAX_ROW)
			elems *= 3;	/* max, exp+sum, scale passes */
		rate = transcendental(in->u.vec.func) ? t->sfu_transc_elems : t->sfu_elems;
		if (in->flags & SPYRE_VEC_INT) {
			if (in->dtype == SPYRE_DT_INT64 || in->dtype_out == SPYRE_DT_INT64)
				elems *= 2;
			if (in->u.vec.func == SPYRE_VF_FLOORDIV || in->u.vec.func == SPYRE_VF_REM)
				rate = t->sfu_transc_elems;
		}
		cycles += div_up(elems, rate);
		break;
	}
	return card_time_cycles(t, cycles);
}
