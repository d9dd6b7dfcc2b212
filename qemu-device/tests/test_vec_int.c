// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Integer mode of the vector unit (SPYRE_VEC_INT, interface 1.9) at its
 * edges: wrapping at INT64/INT32 bounds, floor division and remainder with
 * negative operands and by zero (SPYRE_CMD_ERR_ARITH, with where it
 * happened), casts of NaN, infinities, -0.0 and out-of-range floats (x86's
 * "integer indefinite" pattern, what PyTorch gives on CPU), int -> float
 * rounding, row functions, and the instruction checks.
 */
#include <math.h>

#include "harness.h"
#include <errno.h>

#include "spyre_desc.h"
#include "spyre_float.h"

#define PROG	0x100000ull
#define ARG0	0x200000ull
#define ARG1	0x400000ull
#define ARG2	0x600000ull
#define TOK(n)	(1u << (n))
#define SP0	0x0
#define SP1	0x10000
#define SPD	0x20000

/*
 * One VEC of @func (integer mode unless @flags says otherwise) over one row
 * of @n elements: src0 from ARG0, src1 from ARG1 (dtype @dt), result to
 * ARG2 (@dto, @ocols elements).
 */
static struct spyre_hw_completion run_vec(struct tcard *t, uint8_t flags, uint8_t func,
					  uint8_t dt, uint8_t dto, uint32_t n, uint32_t ocols,
					  uint64_t imm)
{
	uint32_t es = spyre_dtype_size(dt), eo = spyre_dtype_size(dto);
	uint64_t slots[6] = { ARG0, n * es, ARG1, n * es, ARG2, ocols * eo };
	struct spyre_insn *v;
	struct prog p;

	prog_init(&p, 3, 0);
	p_load(&p, false, 1, 0, 0, 1, n * es, n * es, SP0, n * es)->signal = TOK(0);
	p_load(&p, false, 1, 1, 0, 1, n * es, n * es, SP1, n * es)->signal = TOK(1);
	v = p_vec(&p, 1, func, dt, dto, 1, n, SP0, SP1, SPD);
	v->flags = flags;
	v->wait = TOK(0) | TOK(1);
	v->signal = TOK(2);
	v->u.vec.imm0 = (uint32_t)imm;
	v->u.vec.imm1 = (uint32_t)(imm >> 32);
	p_load(&p, true, 1, 2, 0, 1, ocols * eo, ocols * eo, SPD, ocols * eo)->wait = TOK(2);
	return run_launch(t, PROG, prog_store(t, &p, PROG), 0, 0, 3, slots);
}

#define I64(t, a) ((int64_t *)((t)->dev + (a)))
#define I32(t, a) ((int32_t *)((t)->dev + (a)))

static void set64(struct tcard *t, uint64_t a, const int64_t *v, int n)
{
	memcpy(t->dev + a, v, n * 8);
}

TEST(vec_int_wraps_at_int64_bounds)
{
	static const int64_t a[] = { INT64_MAX, INT64_MIN, INT64_MIN, (1ll << 40) + 3, -1, 3037000500 };
	static const int64_t b[] = { 1, -1, 1, 1, INT64_MIN, 3037000500 };
	struct tcard *t = tc_new(NULL);
	int i;

	CHECK(tc_rd(t, SPYRE_REG_VERSION) >= SPYRE_HW_VERSION(1, 9));	/* integer mode */
	set64(t, ARG0, a, 6);
	set64(t, ARG1, b, 6);
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_ADD, SPYRE_DT_INT64, SPYRE_DT_INT64, 6, 6, 0)
			 .status, 0);
	for (i = 0; i < 6; i++)
		CHECK_EQ(I64(t, ARG2)[i], (int64_t)((uint64_t)a[i] + (uint64_t)b[i]));
	CHECK_EQ(I64(t, ARG2)[0], INT64_MIN);
	CHECK_EQ(I64(t, ARG2)[3], (1ll << 40) + 4);
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_SUB, SPYRE_DT_INT64, SPYRE_DT_INT64, 6, 6, 0)
			 .status, 0);
	CHECK_EQ(I64(t, ARG2)[1], INT64_MIN + 1);
	CHECK_EQ(I64(t, ARG2)[2], INT64_MAX);
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_MUL, SPYRE_DT_INT64, SPYRE_DT_INT64, 6, 6, 0)
			 .status, 0);
	CHECK_EQ(I64(t, ARG2)[1], INT64_MIN);	/* MIN * -1 wraps */
	CHECK_EQ(I64(t, ARG2)[5], (int64_t)(3037000500ull * 3037000500ull));
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_NEG, SPYRE_DT_INT64, SPYRE_DT_INT64, 6, 6, 0)
			 .status, 0);
	CHECK_EQ(I64(t, ARG2)[1], INT64_MIN);
	CHECK_EQ(I64(t, ARG2)[0], -INT64_MAX);
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_ABS, SPYRE_DT_INT64, SPYRE_DT_INT64, 6, 6, 0)
			 .status, 0);
	CHECK_EQ(I64(t, ARG2)[1], INT64_MIN);
	CHECK_EQ(I64(t, ARG2)[4], 1);
	tc_free(t);
}

TEST(vec_int_int32_wraps_like_pytorch)
{
	static const int32_t a[] = { 46341, INT32_MAX, INT32_MIN, INT32_MIN };
	static const int32_t b[] = { 46341, 1, -1, 1 };
	struct tcard *t = tc_new(NULL);

	memcpy(t->dev + ARG0, a, sizeof(a));
	memcpy(t->dev + ARG1, b, sizeof(b));
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_MUL, SPYRE_DT_INT32, SPYRE_DT_INT32, 4, 4, 0)
			 .status, 0);
	CHECK_EQ(I32(t, ARG2)[0], -2147479015);
	CHECK_EQ(I32(t, ARG2)[2], INT32_MIN);
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_ADD, SPYRE_DT_INT32, SPYRE_DT_INT32, 4, 4, 0)
			 .status, 0);
	CHECK_EQ(I32(t, ARG2)[1], INT32_MIN);
	CHECK_EQ(I32(t, ARG2)[2], INT32_MAX);
	/* INT32_MIN // -1 wraps to INT32_MIN, as PyTorch on CPU */
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_FLOORDIV, SPYRE_DT_INT32, SPYRE_DT_INT32, 4, 4,
			 0).status, 0);
	CHECK_EQ(I32(t, ARG2)[2], INT32_MIN);
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_ABS, SPYRE_DT_INT32, SPYRE_DT_INT32, 4, 4, 0)
			 .status, 0);
	CHECK_EQ(I32(t, ARG2)[2], INT32_MIN);
	/* int32 sources widen exactly into an int64 result */
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_MUL, SPYRE_DT_INT32, SPYRE_DT_INT64, 4, 4, 0)
			 .status, 0);
	CHECK_EQ(I64(t, ARG2)[0], 46341ll * 46341);
	tc_free(t);
}

TEST(vec_int_floor_division_and_remainder)
{
	static const int64_t a[] = { 7, -7, 7, -7, INT64_MIN, INT64_MIN, 0, INT64_MAX };
	static const int64_t b[] = { 2, 2, -2, -2, -1, 1, -5, INT64_MIN };
	static const int64_t q[] = { 3, -4, -4, 3, INT64_MIN, INT64_MIN, 0, -1 };
	static const int64_t r[] = { 1, 1, -1, -1, 0, 0, 0, -1 };
	struct tcard *t = tc_new(NULL);
	int i;

	set64(t, ARG0, a, 8);
	set64(t, ARG1, b, 8);
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_FLOORDIV, SPYRE_DT_INT64, SPYRE_DT_INT64, 8, 8,
			 0).status, 0);
	for (i = 0; i < 8; i++)
		CHECK_EQ(I64(t, ARG2)[i], q[i]);
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_REM, SPYRE_DT_INT64, SPYRE_DT_INT64, 8, 8, 0)
			 .status, 0);
	for (i = 0; i < 8; i++)
		CHECK_EQ(I64(t, ARG2)[i], r[i]);
	tc_free(t);
}

TEST(vec_int_division_by_zero_fails_the_job)
{
	static const int64_t a[] = { 1, 2, 3, 4 };
	static const int64_t b[] = { 1, 2, 0, 4 };
	struct spyre_hw_completion c;
	struct tcard *t = tc_new(NULL);
	uint8_t f;

	set64(t, ARG0, a, 4);
	set64(t, ARG1, b, 4);
	for (f = SPYRE_VF_FLOORDIV; f <= SPYRE_VF_REM; f++) {
		I64(t, ARG2)[0] = 99;
		c = run_vec(t, SPYRE_VEC_INT, f, SPYRE_DT_INT64, SPYRE_DT_INT64, 4, 4, 0);
		CHECK_EQ(c.status, SPYRE_CMD_ERR_ARITH);
		CHECK_EQ(c.fault_insn, 2);		/* the VEC */
		CHECK_EQ(c.fault_space, SPYRE_FAULT_SPACE_SCRATCHPAD);
		CHECK_EQ(c.fault_addr, SP1 + 2 * 8);	/* the zero divisor */
		CHECK_EQ(I64(t, ARG2)[0], 99);		/* nothing stored */
	}
	CHECK_EQ(spyre_status_to_errno(SPYRE_CMD_ERR_ARITH), -EDOM);
	tc_free(t);
}

TEST(vec_int_float_to_int_casts)
{
	static const float x[] = { -1.7f, 1.7f, -0.0f, NAN, INFINITY, -INFINITY, 1e10f, -1e10f,
				   2147483648.0f, -2147483648.0f, 300.0f, -129.5f, 1e19f,
				   -9223372036854775808.0f, 2147483520.0f, -2.5f };
	static const int64_t want64[] = { -1, 1, 0, INT64_MIN, INT64_MIN, INT64_MIN, 10000000000,
					  -10000000000, 2147483648, -2147483648, 300, -129,
					  INT64_MIN, INT64_MIN, 2147483520, -2 };
	static const int32_t want32[] = { -1, 1, 0, INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN,
					  INT32_MIN, INT32_MIN, INT32_MIN, 300, -129, INT32_MIN,
					  INT32_MIN, 2147483520, -2 };
	/* narrower: the low bits of the int32 conversion (300 -> 44, -129 -> 127) */
	static const int8_t want8[] = { -1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 44, 127, 0, 0, -128, -2 };
	struct tcard *t = tc_new(NULL);
	int i;

	memcpy(t->dev + ARG0, x, sizeof(x));
	memcpy(t->dev + ARG1, x, sizeof(x));
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_COPY, SPYRE_DT_FP32, SPYRE_DT_INT64, 16, 16, 0)
			 .status, 0);
	for (i = 0; i < 16; i++)
		CHECK_EQ(I64(t, ARG2)[i], want64[i]);
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_COPY, SPYRE_DT_FP32, SPYRE_DT_INT32, 16, 16, 0)
			 .status, 0);
	for (i = 0; i < 16; i++)
		CHECK_EQ(I32(t, ARG2)[i], want32[i]);
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_COPY, SPYRE_DT_FP32, SPYRE_DT_INT8, 16, 16, 0)
			 .status, 0);
	for (i = 0; i < 16; i++)
		CHECK_EQ(((int8_t *)(t->dev + ARG2))[i], want8[i]);
	/* a float -> float COPY is not integer mode's */
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_COPY, SPYRE_DT_FP32, SPYRE_DT_FP16, 16, 16, 0)
			 .status, SPYRE_CMD_ERR_PROGRAM);
	/* other functions take integer sources only */
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_ADD, SPYRE_DT_FP32, SPYRE_DT_INT32, 16, 16, 0)
			 .status, SPYRE_CMD_ERR_PROGRAM);
	tc_free(t);
}

TEST(vec_int_to_float_and_narrowing_casts)
{
	static const int64_t a[] = { (1 << 24) + 1, INT64_MAX, INT64_MIN, (1ll << 40) + 3,
				     -(1ll << 32) - 7, 16777473 };
	struct tcard *t = tc_new(NULL);
	float *f = (float *)(t->dev + ARG2);
	uint16_t *h = (uint16_t *)(t->dev + ARG2);

	set64(t, ARG0, a, 6);
	set64(t, ARG1, a, 6);
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_COPY, SPYRE_DT_INT64, SPYRE_DT_FP32, 6, 6, 0)
			 .status, 0);
	CHECK(f[0] == 16777216.0f);		/* ties to even */
	CHECK(f[1] == 0x1p63f);
	CHECK(f[2] == -0x1p63f);
	CHECK(f[3] == 0x1p40f);
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_COPY, SPYRE_DT_INT64, SPYRE_DT_BF16, 6, 6, 0)
			 .status, 0);
	CHECK(spyre_bf16_to_f32(h[5]) == 16777216.0f);
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_COPY, SPYRE_DT_INT64, SPYRE_DT_INT32, 6, 6, 0)
			 .status, 0);
	CHECK_EQ(I32(t, ARG2)[1], -1);		/* the low 32 bits */
	CHECK_EQ(I32(t, ARG2)[2], 0);
	CHECK_EQ(I32(t, ARG2)[3], 3);
	CHECK_EQ(I32(t, ARG2)[4], -7);
	/* to bool: CMP_NE with the immediate's value is a truth test */
	tc_free(t);
}

TEST(vec_int_compares_min_max_beyond_2_24_and_2_32)
{
	static const int64_t a[] = { (1 << 24) + 1, (1ll << 32) + 1, -(1ll << 40), 5, INT64_MIN };
	static const int64_t b[] = { 1 << 24, 1ll << 32, -(1ll << 40) + 1, 5, INT64_MAX };
	static const struct { uint8_t f; uint8_t want[5]; } c[] = {
		{ SPYRE_VF_CMP_EQ, { 0, 0, 0, 1, 0 } }, { SPYRE_VF_CMP_NE, { 1, 1, 1, 0, 1 } },
		{ SPYRE_VF_CMP_LT, { 0, 0, 1, 0, 1 } }, { SPYRE_VF_CMP_LE, { 0, 0, 1, 1, 1 } },
		{ SPYRE_VF_CMP_GT, { 1, 1, 0, 0, 0 } }, { SPYRE_VF_CMP_GE, { 1, 1, 0, 1, 0 } },
	};
	struct tcard *t = tc_new(NULL);
	unsigned int k, i;

	set64(t, ARG0, a, 5);
	set64(t, ARG1, b, 5);
	for (k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		CHECK_EQ(run_vec(t, SPYRE_VEC_INT, c[k].f, SPYRE_DT_INT64, SPYRE_DT_INT8, 5, 5, 0)
				 .status, 0);
		for (i = 0; i < 5; i++)
			CHECK_EQ(t->dev[ARG2 + i], c[k].want[i]);
	}
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_MAX, SPYRE_DT_INT64, SPYRE_DT_INT64, 5, 5, 0)
			 .status, 0);
	for (i = 0; i < 5; i++)
		CHECK_EQ(I64(t, ARG2)[i], a[i] > b[i] ? a[i] : b[i]);
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_MIN, SPYRE_DT_INT64, SPYRE_DT_INT64, 5, 5, 0)
			 .status, 0);
	for (i = 0; i < 5; i++)
		CHECK_EQ(I64(t, ARG2)[i], a[i] < b[i] ? a[i] : b[i]);
	/* SELECT: src1 != 0 ? src0 : the 64-bit immediate */
	I64(t, ARG1)[3] = 0;
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_SELECT, SPYRE_DT_INT64, SPYRE_DT_INT64, 5, 5,
			 (uint64_t)-(1ll << 33)).status, 0);
	CHECK_EQ(I64(t, ARG2)[3], -(1ll << 33));
	CHECK_EQ(I64(t, ARG2)[0], a[0]);
	/* FILL: the immediate */
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_FILL, SPYRE_DT_INT64, SPYRE_DT_INT64, 5, 5,
			 (1ull << 40) + 3).status, 0);
	CHECK_EQ(I64(t, ARG2)[4], (1ll << 40) + 3);
	tc_free(t);
}

TEST(vec_int_bitwise_and_shifts)
{
	static const int64_t a[] = { 1, -8, 1, 1, -1, 0x0f0f, INT64_MIN };
	static const int64_t b[] = { 63, 1, 64, -1, 100, 0x00ff, 63 };
	static const int64_t shl[] = { INT64_MIN, -16, 0, 0, 0, 0, 0 };
	static const int64_t shr[] = { 0, -4, 0, 0, -1, 0, -1 };
	struct tcard *t = tc_new(NULL);
	int i;

	set64(t, ARG0, a, 7);
	set64(t, ARG1, b, 7);
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_SHL, SPYRE_DT_INT64, SPYRE_DT_INT64, 7, 7, 0)
			 .status, 0);
	for (i = 0; i < 5; i++)
		CHECK_EQ(I64(t, ARG2)[i], shl[i]);
	CHECK_EQ(I64(t, ARG2)[6], 0);
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_SHR, SPYRE_DT_INT64, SPYRE_DT_INT64, 7, 7, 0)
			 .status, 0);
	for (i = 0; i < 7; i++)
		if (i != 5)
			CHECK_EQ(I64(t, ARG2)[i], shr[i]);
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_AND, SPYRE_DT_INT64, SPYRE_DT_INT64, 7, 7, 0)
			 .status, 0);
	CHECK_EQ(I64(t, ARG2)[5], 0x000f);
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_OR, SPYRE_DT_INT64, SPYRE_DT_INT64, 7, 7, 0)
			 .status, 0);
	CHECK_EQ(I64(t, ARG2)[5], 0x0fff);
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_XOR, SPYRE_DT_INT64, SPYRE_DT_INT64, 7, 7, 0)
			 .status, 0);
	CHECK_EQ(I64(t, ARG2)[5], 0x0ff0);
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_NOT, SPYRE_DT_INT64, SPYRE_DT_INT64, 7, 7, 0)
			 .status, 0);
	CHECK_EQ(I64(t, ARG2)[6], INT64_MAX);
	CHECK_EQ(I64(t, ARG2)[4], 0);
	tc_free(t);
}

TEST(vec_int_row_functions)
{
	static const int64_t a[] = { INT64_MAX, 1, (1ll << 40), 7, (1ll << 40), -3 };
	struct tcard *t = tc_new(NULL);

	set64(t, ARG0, a, 6);
	set64(t, ARG1, a, 6);
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_SUM_ROW, SPYRE_DT_INT64, SPYRE_DT_INT64, 6, 1,
			 0).status, 0);
	CHECK_EQ(I64(t, ARG2)[0], (int64_t)((uint64_t)INT64_MAX + 1 + (2ull << 40) + 4));
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_MAX_ROW, SPYRE_DT_INT64, SPYRE_DT_INT64, 6, 1,
			 0).status, 0);
	CHECK_EQ(I64(t, ARG2)[0], INT64_MAX);
	I64(t, ARG0)[0] = 0;
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_ARGMAX_ROW, SPYRE_DT_INT64, SPYRE_DT_INT64, 6,
			 1, 0).status, 0);
	CHECK_EQ(I64(t, ARG2)[0], 2);		/* the first of two maxima */
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_CUMSUM_ROW, SPYRE_DT_INT64, SPYRE_DT_INT64, 6,
			 6, 0).status, 0);
	CHECK_EQ(I64(t, ARG2)[3], (1ll << 40) + 8);
	CHECK_EQ(I64(t, ARG2)[5], (2ll << 40) + 5);
	tc_free(t);
}

TEST(vec_int_instruction_checks)
{
	static const int64_t a[] = { 1, 2 };
	struct tcard *t = tc_new(NULL);

	set64(t, ARG0, a, 2);
	set64(t, ARG1, a, 2);
	/* INT64 elements and the integer functions need integer mode */
	CHECK_EQ(run_vec(t, 0, SPYRE_VF_ADD, SPYRE_DT_INT64, SPYRE_DT_INT64, 2, 2, 0).status,
		 SPYRE_CMD_ERR_PROGRAM);
	CHECK_EQ(run_vec(t, 0, SPYRE_VF_FLOORDIV, SPYRE_DT_FP32, SPYRE_DT_FP32, 2, 2, 0).status,
		 SPYRE_CMD_ERR_PROGRAM);
	/* float functions have no integer mode */
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_EXP, SPYRE_DT_INT64, SPYRE_DT_INT64, 2, 2, 0)
			 .status, SPYRE_CMD_ERR_PROGRAM);
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_DIV, SPYRE_DT_INT64, SPYRE_DT_INT64, 2, 2, 0)
			 .status, SPYRE_CMD_ERR_PROGRAM);
	CHECK_EQ(run_vec(t, SPYRE_VEC_INT, SPYRE_VF_SCALE, SPYRE_DT_INT64, SPYRE_DT_INT64, 2, 2, 0)
			 .status, SPYRE_CMD_ERR_PROGRAM);
	CHECK_EQ(run_vec(t, 0x04, SPYRE_VF_ADD, SPYRE_DT_FP32, SPYRE_DT_FP32, 2, 2, 0).status,
		 SPYRE_CMD_ERR_PROGRAM);
	tc_free(t);
}

TEST(vec_int_timing_per_stick)
{
	struct spyre_hw_completion c32, c64;
	struct tcard *t = tc_new(NULL);

	/* 4096 int32 (128 sticks) against 4096 int64 (256 sticks): twice the time */
	c32 = run_vec(t, SPYRE_VEC_INT, SPYRE_VF_ADD, SPYRE_DT_INT32, SPYRE_DT_INT32, 4096, 4096,
		      0);
	c64 = run_vec(t, SPYRE_VEC_INT, SPYRE_VF_ADD, SPYRE_DT_INT64, SPYRE_DT_INT64, 4096, 4096,
		      0);
	CHECK_EQ(c32.status, 0);
	CHECK_EQ(c64.status, 0);
	CHECK(c64.compute_ns > c32.compute_ns);
	tc_free(t);
}
