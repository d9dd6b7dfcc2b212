// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Spyre card model: the vector / special-function unit of a core. Works row
 * by row in fp32: sources are converted from their dtype, results rounded
 * to dtype_out (round to nearest even, saturating for integers). Integer
 * mode (SPYRE_VEC_INT, interface 1.9) is spyre_sfu_int.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spyre_exec.h"
#include "spyre_float.h"
#include "spyre_hw.h"

/* One rounding per operation in every build: x * imm0 + imm1 is not an FMA. */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#define SP_BYTES	SPYRE_MODEL_SCRATCHPAD_BYTES

static bool sp_span_ok(uint64_t off, uint64_t rows, uint64_t stride, uint64_t cols,
		       size_t es)
{
	uint64_t len;

	if (__builtin_mul_overflow(rows - 1, stride * es, &len) ||
	    __builtin_add_overflow(len, cols * es, &len))
		return false;
	return !(off % es) && len <= SP_BYTES && off <= SP_BYTES - len;
}

static float *row_buffer(struct card_exec *e, unsigned int i, uint32_t cols)
{
	float *p;

	if (e->tmp_len[i] >= cols)
		return e->tmp[i];
	p = realloc(e->tmp[i], (size_t)cols * sizeof(float));
	if (p) {
		e->tmp[i] = p;
		e->tmp_len[i] = cols;
	}
	return p;
}

static float unary(unsigned int f, float x, float i0, float i1)
{
	switch (f) {
	case SPYRE_VF_COPY:
		return x;
	case SPYRE_VF_FILL:
		return i0;
	case SPYRE_VF_SCALE:
		return x * i0 + i1;
	case SPYRE_VF_RELU:
		return isnan(x) ? x : (x > 0.0f ? x : 0.0f);
	case SPYRE_VF_GELU:
		return 0.5f * x * (1.0f + erff(x * (float)M_SQRT1_2));
	case SPYRE_VF_SILU:
		return x / (1.0f + expf(-x));
	case SPYRE_VF_SIGMOID:
		return 1.0f / (1.0f + expf(-x));
	case SPYRE_VF_TANH:
		return tanhf(x);
	case SPYRE_VF_EXP:
		return expf(x);
	case SPYRE_VF_LOG:
		return logf(x);
	case SPYRE_VF_SQRT:
		return sqrtf(x);
	case SPYRE_VF_RSQRT:
		return 1.0f / sqrtf(x);
	case SPYRE_VF_RECIP:
		return 1.0f / x;
	case SPYRE_VF_SIN:
		return sinf(x);
	case SPYRE_VF_COS:
		return cosf(x);
	case SPYRE_VF_ERF:
		return erff(x);
	}
	return x;
}

static float binary(unsigned int f, float a, float b, float i0)
{
	switch (f) {
	case SPYRE_VF_CMP_EQ:
		return a == b ? 1.0f : 0.0f;
	case SPYRE_VF_CMP_NE:
		return a != b ? 1.0f : 0.0f;
	case SPYRE_VF_CMP_LT:
		return a < b ? 1.0f : 0.0f;
	case SPYRE_VF_CMP_LE:
		return a <= b ? 1.0f : 0.0f;
	case SPYRE_VF_CMP_GT:
		return a > b ? 1.0f : 0.0f;
	case SPYRE_VF_CMP_GE:
		return a >= b ? 1.0f : 0.0f;
	case SPYRE_VF_SELECT:
		return b != 0.0f ? a : i0;	/* a NaN mask selects a */
	case SPYRE_VF_ADD:
		return a + b;
	case SPYRE_VF_SUB:
		return a - b;
	case SPYRE_VF_MUL:
		return a * b;
	case SPYRE_VF_DIV:
		return a / b;
	case SPYRE_VF_MAX:
		return (isnan(a) || isnan(b)) ? NAN : (a > b ? a : b);
	case SPYRE_VF_MIN:
		return (isnan(a) || isnan(b)) ? NAN : (a < b ? a : b);
	}
	return a;
}

static bool is_binary(unsigned int f)
{
	return (f >= SPYRE_VF_ADD && f <= SPYRE_VF_MIN) ||
	       (f >= SPYRE_VF_CMP_EQ && f <= SPYRE_VF_SELECT);
}

/* Functions that work on a whole row at once (softmax, reductions, scans). */
static bool is_row_func(unsigned int f)
{
	return f >= SPYRE_VF_SOFTMAX_ROW && f <= SPYRE_VF_CUMSUM_ROW && !is_binary(f);
}

static bool is_reduce(unsigned int f)
{
	return f == SPYRE_VF_SUM_ROW || f == SPYRE_VF_MAX_ROW || f == SPYRE_VF_ARGMAX_ROW;
}

/* Largest element of a row; NaN if any element is NaN. */
static float row_max(const float *x, uint32_t n)
{
	float mx = -INFINITY;
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (isnan(x[i]))
			return x[i];
		if (x[i] > mx)
			mx = x[i];
	}
	return mx;
}

/*
 * Row sums are pairwise, as the card defines them: a row of n > 1 values
 * sums its first n / 2 and the rest, recursively (error O(log n), and one
 * order for every build of the model).
 */
static float sum_pairwise(const float *x, uint32_t n)
{
	if (n == 1)
		return x[0];
	return sum_pairwise(x, n / 2) + sum_pairwise(x + n / 2, n - n / 2);
}

/* One row of a row-wise function; the result is in x (or x[0]). */
static void row_func(unsigned int f, float *x, uint32_t n)
{
	float mx, sum;
	uint32_t i;

	switch (f) {
	case SPYRE_VF_SOFTMAX_ROW:
		/* NaN anywhere, or an all -inf row, gives a NaN row (as PyTorch) */
		mx = row_max(x, n);
		for (i = 0; i < n; i++)
			x[i] = expf(x[i] - mx);
		sum = sum_pairwise(x, n);
		for (i = 0; i < n; i++)
			x[i] /= sum;
		break;
	case SPYRE_VF_SUM_ROW:
		x[0] = sum_pairwise(x, n);
		break;
	case SPYRE_VF_MAX_ROW:
		x[0] = row_max(x, n);
		break;
	case SPYRE_VF_ARGMAX_ROW:
		/* first maximum; a NaN counts as the maximum (as PyTorch) */
		mx = x[0];
		sum = 0.0f;
		for (i = 1; i < n && !isnan(mx); i++)
			if (isnan(x[i]) || x[i] > mx) {
				mx = x[i];
				sum = (float)i;
			}
		x[0] = sum;
		break;
	case SPYRE_VF_CUMSUM_ROW:
		/* in order: element i is the running sum of elements 0..i */
		sum = 0.0f;
		for (i = 0; i < n; i++) {
			sum += x[i];
			x[i] = sum;
		}
		break;
	}
}

uint32_t card_sfu_access(struct card_exec *e, const struct spyre_insn *in, unsigned int core,
			 bool bin, uint32_t out_cols)
{
	const struct spyre_insn_vec *v = &in->u.vec;
	size_t es = spyre_dtype_size(in->dtype), eo = spyre_dtype_size(in->dtype_out);
	bool col = in->flags & SPYRE_VEC_SRC1_COL;

	if ((v->func != SPYRE_VF_FILL &&
	     !sp_span_ok(v->src0_off, v->rows, v->src0_stride, v->cols, es)) ||
	    (bin && !sp_span_ok(v->src1_off, v->rows, v->src1_stride, col ? 1 : v->cols, es)) ||
	    !sp_span_ok(v->dst_off, v->rows, v->dst_stride, out_cols, eo))
		return SPYRE_CMD_ERR_BOUNDS;
	if ((v->func != SPYRE_VF_FILL &&
	     card_hazard_access(e, core, v->src0_off, v->rows, (uint64_t)v->src0_stride * es,
				 v->cols * es, false)) ||
	    (bin && card_hazard_access(e, core, v->src1_off, v->rows,
					(uint64_t)v->src1_stride * es, (col ? 1 : v->cols) * es,
					false)) ||
	    card_hazard_access(e, core, v->dst_off, v->rows, (uint64_t)v->dst_stride * eo,
				out_cols * eo, true))
		return SPYRE_CMD_ERR_PROGRAM;
	return SPYRE_CMD_OK;
}

uint32_t card_unit_sfu(struct card_exec *e, const struct spyre_insn *in, unsigned int core)
{
	const struct spyre_insn_vec *v = &in->u.vec;
	size_t es = spyre_dtype_size(in->dtype), eo = spyre_dtype_size(in->dtype_out);
	bool col = in->flags & SPYRE_VEC_SRC1_COL, bin = is_binary(v->func);
	bool red = is_reduce(v->func);
	uint32_t out_cols = red ? 1 : v->cols, r, i, st;
	float i0, i1, *x, *y;
	uint8_t *sp;

	if (in->flags & SPYRE_VEC_INT)
		return card_unit_sfu_int(e, in, core);
	st = card_sfu_access(e, in, core, bin, out_cols);
	if (st)
		return st;
	sp = card_exec_scratchpad(e, core);
	x = row_buffer(e, 0, v->cols);
	y = row_buffer(e, 1, v->cols);
	if (!sp || !x || !y)
		return SPYRE_CMD_ERR_PROGRAM;
	if (v->func == SPYRE_VF_COPY && in->dtype == in->dtype_out) {
		/* interface 1.4: a same-type COPY moves bits (exact int32, NaN payloads) */
		for (r = 0; r < v->rows; r++)
			memmove(sp + v->dst_off + (size_t)r * v->dst_stride * eo,
				sp + v->src0_off + (size_t)r * v->src0_stride * es, v->cols * es);
		return SPYRE_CMD_OK;
	}
	memcpy(&i0, &v->imm0, 4);
	memcpy(&i1, &v->imm1, 4);
	for (r = 0; r < v->rows; r++) {
		if (v->func != SPYRE_VF_FILL)
			spyre_load_f32(x, sp + v->src0_off + (size_t)r * v->src0_stride * es,
				       in->dtype, v->cols);
		if (bin) {
			spyre_load_f32(y, sp + v->src1_off + (size_t)r * v->src1_stride * es,
				       in->dtype, col ? 1 : v->cols);
			for (i = 0; i < v->cols; i++)
				x[i] = binary(v->func, x[i], col ? y[0] : y[i], i0);
		} else if (is_row_func(v->func)) {
			row_func(v->func, x, v->cols);
		} else {
			for (i = 0; i < v->cols; i++)
				x[i] = unary(v->func, x[i], i0, i1);
		}
		spyre_store_f32(sp + v->dst_off + (size_t)r * v->dst_stride * eo, x,
				in->dtype_out, out_cols);
	}
	return SPYRE_CMD_OK;
}
