// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Interface 1.4 vector functions sin, cos and erf: accuracy against libm in
 * double over the ranges models use (rotary angles of hundreds of radians,
 * GELU arguments), special values, and the fp16 result path.
 *
 * The card's contract (Documentation/spyre-card.rst): |card - exact| is at
 * most 2 ulp of the fp32 result, or 2^-30 absolute where the result is
 * that close to zero (sin/cos near their roots, where an ulp is tiny).
 */
#include <math.h>

#include "harness.h"
#include "spyre_float.h"

#define PROG	0x100000ull
#define ARG0	0x200000ull
#define ARG2	0x600000ull
#define TOK(n)	(1u << (n))
#define ROWS	16
#define COLS	512
#define N	(ROWS * COLS)

/* Run @func over N fp32 values at ARG0 into ARG2 (dtype_out @dto) on core 0. */
static uint32_t vfunc_run(struct tcard *t, uint8_t func, uint8_t dto)
{
	uint32_t in_bytes = N * 4, out_bytes = N * spyre_dtype_size(dto);
	uint64_t slots[4] = { ARG0, in_bytes, ARG2, out_bytes };
	struct prog p;

	prog_init(&p, 2, 0);
	p_load(&p, false, 1, 0, 0, ROWS, COLS * 4, COLS * 4, 0, COLS * 4)->signal = TOK(0);
	p_vec(&p, 1, func, SPYRE_DT_FP32, dto, ROWS, COLS, 0, 0, 0x100000);
	p.in[p.n - 1].wait = TOK(0);
	p.in[p.n - 1].signal = TOK(1);
	p_load(&p, true, 1, 1, 0, ROWS, COLS * spyre_dtype_size(dto),
	       COLS * spyre_dtype_size(dto), 0x100000, COLS * spyre_dtype_size(dto))->wait = TOK(1);
	return run_launch(t, PROG, prog_store(t, &p, PROG), 0, 0, 2, slots).status;
}

static double exact(uint8_t func, double x)
{
	return func == SPYRE_VF_SIN ? sin(x) : func == SPYRE_VF_COS ? cos(x) : erf(x);
}

/* Error of @got against @want in ulp of the fp32 result (0 within 2^-30). */
static double ulp_err(float got, double want)
{
	double err = fabs((double)got - want);
	int e;

	if (err <= 0x1p-30)
		return 0;
	frexp(want, &e);
	return err / ldexp(1.0, (e < -125 ? -125 : e) - 24);
}

static void fill_args(float *x, double span, unsigned int seed)
{
	int i;

	for (i = 0; i < N; i++) {
		seed = seed * 1103515245u + 12345u;
		x[i] = (float)(((double)(seed >> 8) / (1 << 24) * 2 - 1) * span);
	}
}

TEST(vfunc_sin_cos_erf_accuracy)
{
	static const struct { uint8_t f; double span; } c[] = {
		{ SPYRE_VF_SIN, 4 }, { SPYRE_VF_SIN, 2048 }, { SPYRE_VF_COS, 4 },
		{ SPYRE_VF_COS, 2048 }, { SPYRE_VF_ERF, 6 }, { SPYRE_VF_ERF, 0.01 },
	};
	struct tcard *t = tc_new(NULL);
	float *x = (float *)(t->dev + ARG0), *o = (float *)(t->dev + ARG2);
	unsigned int k;
	double worst;
	int i;

	CHECK(tc_rd(t, SPYRE_REG_VERSION) >= SPYRE_HW_VERSION(1, 4));
	for (k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		fill_args(x, c[k].span, 7 + k);
		CHECK_EQ(vfunc_run(t, c[k].f, SPYRE_DT_FP32), 0);
		for (i = 0, worst = 0; i < N; i++)
			worst = fmax(worst, ulp_err(o[i], exact(c[k].f, x[i])));
		if (worst > 2.0)
			fprintf(stderr, "  func %u span %g: %.2f ulp\n", c[k].f, c[k].span, worst);
		CHECK(worst <= 2.0);
	}
	tc_free(t);
}

TEST(vfunc_special_values)
{
	static const float in[8] = { 0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-30f, 1e30f,
				     -3.0f };
	struct tcard *t = tc_new(NULL);
	float *x = (float *)(t->dev + ARG0), *o = (float *)(t->dev + ARG2);

	memset(x, 0, N * 4);
	memcpy(x, in, sizeof(in));
	CHECK_EQ(vfunc_run(t, SPYRE_VF_SIN, SPYRE_DT_FP32), 0);
	CHECK(o[0] == 0.0f && !signbit(o[0]) && o[1] == 0.0f && signbit(o[1]));
	CHECK(isnan(o[2]) && isnan(o[3]) && isnan(o[4]));
	CHECK(o[5] == 1e-30f && fabs(o[6]) <= 1.0f);
	CHECK_EQ(vfunc_run(t, SPYRE_VF_COS, SPYRE_DT_FP32), 0);
	CHECK(o[0] == 1.0f && o[1] == 1.0f && isnan(o[2]) && isnan(o[3]) && isnan(o[4]));
	CHECK(o[5] == 1.0f);
	CHECK_EQ(vfunc_run(t, SPYRE_VF_ERF, SPYRE_DT_FP32), 0);
	CHECK(o[0] == 0.0f && signbit(o[1]) && o[2] == 1.0f && o[3] == -1.0f && isnan(o[4]));
	CHECK(o[6] == 1.0f && fabs(o[7] + 0.99997791) < 1e-7);
	tc_free(t);
}

/* fp16 results: the fp32 value rounded once (to nearest even). */
TEST(vfunc_fp16_output_rounds_once)
{
	struct tcard *t = tc_new(NULL);
	float *x = (float *)(t->dev + ARG0);
	uint16_t *o = (uint16_t *)(t->dev + ARG2);
	int i, bad = 0;

	fill_args(x, 10, 99);
	CHECK_EQ(vfunc_run(t, SPYRE_VF_COS, SPYRE_DT_FP16), 0);
	for (i = 0; i < N; i++)
		bad += o[i] != spyre_f32_to_fp16(cosf(x[i]));
	CHECK_EQ(bad, 0);
	tc_free(t);
}

/* Interface 1.4: a same-type COPY moves bits; int32 beyond 2^24 stays exact. */
TEST(vfunc_same_type_copy_is_exact)
{
	struct tcard *t = tc_new(NULL);
	int32_t *x = (int32_t *)(t->dev + ARG0), *o = (int32_t *)(t->dev + ARG2);
	int i, bad = 0;

	for (i = 0; i < N; i++)
		x[i] = (int32_t)((uint32_t)i * 2654435761u);
	x[1] = INT32_MAX;
	x[2] = INT32_MIN;
	x[3] = (1 << 24) + 1;
	/* the run helper loads fp32-sized elements: the same bytes as int32 */
	{
		struct prog p;
		uint64_t slots[4] = { ARG0, N * 4, ARG2, N * 4 };

		prog_init(&p, 2, 0);
		p_load(&p, false, 1, 0, 0, ROWS, COLS * 4, COLS * 4, 0, COLS * 4)->signal = TOK(0);
		p_vec(&p, 1, SPYRE_VF_COPY, SPYRE_DT_INT32, SPYRE_DT_INT32, ROWS, COLS, 0, 0,
		      0x100000);
		p.in[p.n - 1].wait = TOK(0);
		p.in[p.n - 1].signal = TOK(1);
		p_load(&p, true, 1, 1, 0, ROWS, COLS * 4, COLS * 4, 0x100000, COLS * 4)->wait =
			TOK(1);
		CHECK_EQ(run_launch(t, PROG, prog_store(t, &p, PROG), 0, 0, 2, slots).status, 0);
	}
	for (i = 0; i < N; i++)
		bad += o[i] != x[i];
	CHECK_EQ(bad, 0);
	tc_free(t);
}
