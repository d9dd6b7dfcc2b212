// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Spyre card model: integer mode of the vector unit (SPYRE_VEC_INT,
 * interface 1.9). Every source element becomes a 64-bit two's-complement
 * integer (int8/int32 sign-extended; a float source of COPY converted
 * toward zero), the function computes modulo 2^64, and the result is
 * stored as dtype_out: the low bits for an integer type, rounded to nearest
 * even (through fp32, as PyTorch converts) for a float type. Values that
 * only differ above 2^24 stay distinct, which the fp32 mode cannot promise.
 *
 * The arithmetic is done on uint64_t so that wrapping is defined C.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spyre_exec.h"
#include "spyre_float.h"
#include "spyre_hw.h"

static bool is_int_dt(unsigned int dt)
{
	return dt == SPYRE_DT_INT8 || dt == SPYRE_DT_INT32 || dt == SPYRE_DT_INT64;
}

static bool int_binary(unsigned int f)
{
	switch (f) {
	case SPYRE_VF_ADD:
	case SPYRE_VF_SUB:
	case SPYRE_VF_MUL:
	case SPYRE_VF_MAX:
	case SPYRE_VF_MIN:
	case SPYRE_VF_CMP_EQ:
	case SPYRE_VF_CMP_NE:
	case SPYRE_VF_CMP_LT:
	case SPYRE_VF_CMP_LE:
	case SPYRE_VF_CMP_GT:
	case SPYRE_VF_CMP_GE:
	case SPYRE_VF_SELECT:
	case SPYRE_VF_AND:
	case SPYRE_VF_OR:
	case SPYRE_VF_XOR:
	case SPYRE_VF_SHL:
	case SPYRE_VF_SHR:
	case SPYRE_VF_FLOORDIV:
	case SPYRE_VF_REM:
		return true;
	}
	return false;
}

static bool int_unary(unsigned int f)
{
	return f == SPYRE_VF_COPY || f == SPYRE_VF_FILL || f == SPYRE_VF_NEG ||
	       f == SPYRE_VF_ABS || f == SPYRE_VF_NOT;
}

static bool int_row(unsigned int f)
{
	return f == SPYRE_VF_SUM_ROW || f == SPYRE_VF_MAX_ROW || f == SPYRE_VF_ARGMAX_ROW ||
	       f == SPYRE_VF_CUMSUM_ROW;
}

bool card_vec_int_valid(const struct spyre_insn *in)
{
	unsigned int f = in->u.vec.func;

	if (!int_binary(f) && !int_unary(f) && !int_row(f))
		return false;
	if (in->dtype >= SPYRE_DT_COUNT || in->dtype_out >= SPYRE_DT_COUNT)
		return false;
	/* a float source only for COPY into an integer (the float -> integer cast) */
	return is_int_dt(in->dtype) || f == SPYRE_VF_FILL ||
	       (f == SPYRE_VF_COPY && is_int_dt(in->dtype_out));
}

/*
 * A float converted toward zero, as x86's truncating conversions do (what
 * PyTorch gives on CPU): into int64 for an INT64 destination, else into
 * int32 (whose low bits a narrower destination keeps); NaN, infinities and
 * values outside that range give the range's minimum (the "integer
 * indefinite" pattern).
 */
static int64_t float_to_int(float f, unsigned int dt_out)
{
	if (dt_out == SPYRE_DT_INT64) {
		if (!(f >= -0x1p63f && f < 0x1p63f))
			return INT64_MIN;
		return (int64_t)f;
	}
	if (!(f >= -0x1p31f && f < 0x1p31f))
		return INT32_MIN;
	return (int32_t)f;
}

static void load_int(int64_t *dst, const uint8_t *src, unsigned int dt, unsigned int dt_out,
		     float *tmp, size_t n)
{
	size_t i;
	int32_t w;

	switch (dt) {
	case SPYRE_DT_INT8:
		for (i = 0; i < n; i++)
			dst[i] = (int8_t)src[i];
		break;
	case SPYRE_DT_INT32:
		for (i = 0; i < n; i++) {
			memcpy(&w, src + 4 * i, 4);
			dst[i] = w;
		}
		break;
	case SPYRE_DT_INT64:
		memcpy(dst, src, n * 8);
		break;
	default:
		spyre_load_f32(tmp, src, dt, n);
		for (i = 0; i < n; i++)
			dst[i] = float_to_int(tmp[i], dt_out);
	}
}

static void store_int(uint8_t *dst, const int64_t *src, unsigned int dt, float *tmp, size_t n)
{
	size_t i;
	int32_t w;

	switch (dt) {
	case SPYRE_DT_INT8:
		for (i = 0; i < n; i++)
			dst[i] = (uint8_t)src[i];
		break;
	case SPYRE_DT_INT32:
		for (i = 0; i < n; i++) {
			w = (int32_t)(uint32_t)src[i];
			memcpy(dst + 4 * i, &w, 4);
		}
		break;
	case SPYRE_DT_INT64:
		memcpy(dst, src, n * 8);
		break;
	default:
		/* int -> fp32 rounds to nearest even; the float store rounds once more */
		for (i = 0; i < n; i++)
			tmp[i] = (float)src[i];
		spyre_store_f32(dst, tmp, dt, n);
	}
}

/* floor(a / b) and the remainder with b's sign; b != 0. MIN / -1 wraps. */
static int64_t floordiv(int64_t a, int64_t b)
{
	int64_t q;

	if (b == -1)
		return (int64_t)(0 - (uint64_t)a);
	q = a / b;
	if ((a % b != 0) && ((a < 0) != (b < 0)))
		q--;
	return q;
}

static int64_t floormod(int64_t a, int64_t b)
{
	int64_t r;

	if (b == -1)
		return 0;
	r = a % b;
	if (r != 0 && ((r < 0) != (b < 0)))
		r += b;
	return r;
}

static int64_t ibinary(unsigned int f, int64_t a, int64_t b, int64_t k)
{
	uint64_t ua = (uint64_t)a, ub = (uint64_t)b;

	switch (f) {
	case SPYRE_VF_ADD:
		return (int64_t)(ua + ub);
	case SPYRE_VF_SUB:
		return (int64_t)(ua - ub);
	case SPYRE_VF_MUL:
		return (int64_t)(ua * ub);
	case SPYRE_VF_MAX:
		return a > b ? a : b;
	case SPYRE_VF_MIN:
		return a < b ? a : b;
	case SPYRE_VF_CMP_EQ:
		return a == b;
	case SPYRE_VF_CMP_NE:
		return a != b;
	case SPYRE_VF_CMP_LT:
		return a < b;
	case SPYRE_VF_CMP_LE:
		return a <= b;
	case SPYRE_VF_CMP_GT:
		return a > b;
	case SPYRE_VF_CMP_GE:
		return a >= b;
	case SPYRE_VF_SELECT:
		return b != 0 ? a : k;
	case SPYRE_VF_AND:
		return (int64_t)(ua & ub);
	case SPYRE_VF_OR:
		return (int64_t)(ua | ub);
	case SPYRE_VF_XOR:
		return (int64_t)(ua ^ ub);
	case SPYRE_VF_SHL:
		return b < 0 || b >= 64 ? 0 : (int64_t)(ua << b);
	case SPYRE_VF_SHR:
		/* arithmetic: >> of a negative value fills with its sign */
		if (b < 0 || b >= 64)
			b = 63;
		return a < 0 ? (int64_t)~(~ua >> b) : (int64_t)(ua >> b);
	case SPYRE_VF_FLOORDIV:
		return floordiv(a, b);
	case SPYRE_VF_REM:
		return floormod(a, b);
	}
	return a;
}

static int64_t iunary(unsigned int f, int64_t a, int64_t k)
{
	switch (f) {
	case SPYRE_VF_FILL:
		return k;
	case SPYRE_VF_NEG:
		return (int64_t)(0 - (uint64_t)a);
	case SPYRE_VF_ABS:
		return a < 0 ? (int64_t)(0 - (uint64_t)a) : a;
	case SPYRE_VF_NOT:
		return (int64_t)~(uint64_t)a;
	}
	return a;	/* COPY */
}

/* One row of a row function in place; sums wrap, so their order does not matter. */
static void irow(unsigned int f, int64_t *x, uint32_t n)
{
	uint64_t sum = 0;
	int64_t mx;
	uint32_t i, at = 0;

	switch (f) {
	case SPYRE_VF_SUM_ROW:
		for (i = 0; i < n; i++)
			sum += (uint64_t)x[i];
		x[0] = (int64_t)sum;
		break;
	case SPYRE_VF_MAX_ROW:
	case SPYRE_VF_ARGMAX_ROW:
		mx = x[0];
		for (i = 1; i < n; i++)
			if (x[i] > mx) {
				mx = x[i];
				at = i;	/* the first maximum */
			}
		x[0] = f == SPYRE_VF_MAX_ROW ? mx : (int64_t)at;
		break;
	case SPYRE_VF_CUMSUM_ROW:
		for (i = 0; i < n; i++) {
			sum += (uint64_t)x[i];
			x[i] = (int64_t)sum;
		}
		break;
	}
}

static int64_t *ibuf(struct card_exec *e, unsigned int i, uint32_t n)
{
	int64_t *p;

	if (e->itmp_len[i] >= n)
		return e->itmp[i];
	p = realloc(e->itmp[i], (size_t)n * sizeof(int64_t));
	if (p) {
		e->itmp[i] = p;
		e->itmp_len[i] = n;
	}
	return p;
}

static float *fbuf(struct card_exec *e, uint32_t n)
{
	float *p;

	if (e->tmp_len[0] >= n)
		return e->tmp[0];
	p = realloc(e->tmp[0], (size_t)n * sizeof(float));
	if (p) {
		e->tmp[0] = p;
		e->tmp_len[0] = n;
	}
	return p;
}

uint32_t card_unit_sfu_int(struct card_exec *e, const struct spyre_insn *in, unsigned int core)
{
	const struct spyre_insn_vec *v = &in->u.vec;
	size_t es = spyre_dtype_size(in->dtype), eo = spyre_dtype_size(in->dtype_out);
	bool col = in->flags & SPYRE_VEC_SRC1_COL, bin = int_binary(v->func);
	bool red = v->func == SPYRE_VF_SUM_ROW || v->func == SPYRE_VF_MAX_ROW ||
		   v->func == SPYRE_VF_ARGMAX_ROW;
	bool div = v->func == SPYRE_VF_FLOORDIV || v->func == SPYRE_VF_REM;
	uint32_t out_cols = red ? 1 : v->cols, r, i, st;
	int64_t k = (int64_t)((uint64_t)v->imm1 << 32 | v->imm0), *x, *y;
	float *f;
	uint8_t *sp;

	st = card_sfu_access(e, in, core, bin, out_cols);
	if (st)
		return st;
	sp = card_exec_scratchpad(e, core);
	x = ibuf(e, 0, v->cols);
	y = ibuf(e, 1, v->cols);
	f = fbuf(e, v->cols);
	if (!sp || !x || !y || !f)
		return SPYRE_CMD_ERR_PROGRAM;
	for (r = 0; r < v->rows; r++) {
		const uint8_t *s1 = sp + v->src1_off + (size_t)r * v->src1_stride * es;

		if (v->func != SPYRE_VF_FILL)
			load_int(x, sp + v->src0_off + (size_t)r * v->src0_stride * es, in->dtype,
				 in->dtype_out, f, v->cols);
		if (bin) {
			load_int(y, s1, in->dtype, in->dtype_out, f, col ? 1 : v->cols);
			for (i = 0; i < v->cols; i++) {
				int64_t b = col ? y[0] : y[i];

				if (div && !b) {
					/* where it happened: the divisor's element */
					e->fault_space = SPYRE_FAULT_SPACE_SCRATCHPAD;
					e->fault_addr = v->src1_off +
							(uint64_t)r * v->src1_stride * es +
							(col ? 0 : (uint64_t)i * es);
					return SPYRE_CMD_ERR_ARITH;
				}
				x[i] = ibinary(v->func, x[i], b, k);
			}
		} else if (int_row(v->func)) {
			irow(v->func, x, v->cols);
		} else {
			for (i = 0; i < v->cols; i++)
				x[i] = iunary(v->func, x[i], k);
		}
		store_int(sp + v->dst_off + (size_t)r * v->dst_stride * eo, x, in->dtype_out, f,
			  out_cols);
	}
	return SPYRE_CMD_OK;
}
