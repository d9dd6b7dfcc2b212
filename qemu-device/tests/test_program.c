// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/* LAUNCH and programs: real arithmetic, multi-core tiling, tokens, checks. */
#include <math.h>
#include <stdlib.h>

#include "harness.h"
#include "spyre_float.h"

#define PROG	0x100000ull	/* program in device memory */
#define ARG0	0x200000ull
#define ARG1	0x400000ull
#define ARG2	0x600000ull
#define WS	0x800000ull
#define TOK(n)	(1u << (n))

static float frand(unsigned int *s)
{
	*s = *s * 1103515245u + 12345u;
	return ((float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f) * 2.0f;
}

/* fp16 matrices (values rounded to fp16) in device memory + fp32 copy. */
static void fp16_matrix(struct tcard *t, uint64_t at, float *ref, size_t n, unsigned int seed)
{
	uint16_t *p = (uint16_t *)(t->dev + at);
	size_t i;

	for (i = 0; i < n; i++) {
		p[i] = spyre_f32_to_fp16(frand(&seed));
		ref[i] = spyre_fp16_to_f32(p[i]);
	}
}

static void ref_mm(const float *a, const float *b, double *c, int m, int n, int k)
{
	int i, j, p;

	for (i = 0; i < m; i++)
		for (j = 0; j < n; j++) {
			double s = 0;

			for (p = 0; p < k; p++)
				s += (double)a[i * k + p] * b[p * n + j];
			c[i * n + j] = s;
		}
}

static int close_count(const float *got, const double *want, size_t n, double tol)
{
	size_t i;
	int bad = 0;

	for (i = 0; i < n; i++)
		if (fabs(got[i] - want[i]) > tol * (1 + fabs(want[i])))
			bad++;
	return bad;
}

TEST(prog_fp16_matmul_single_core)
{
	struct tcard *t = tc_new(NULL);
	enum { M = 48, N = 80, K = 96 };
	static float a[M * K], b[K * N];
	static double c[M * N];
	uint64_t slots[6] = { ARG0, M * K * 2, ARG1, K * N * 2, ARG2, M * N * 4 }, len;
	struct spyre_hw_completion r;
	struct prog p;

	fp16_matrix(t, ARG0, a, M * K, 1);
	fp16_matrix(t, ARG1, b, K * N, 2);
	prog_init(&p, 3, 0);
	p_load(&p, false, 1, 0, 0, M, K * 2, K * 2, 0, K * 2)->signal = TOK(0);
	p_load(&p, false, 1, 1, 0, K, N * 2, N * 2, 0x40000, N * 2)->signal = TOK(1);
	p_mm(&p, 1, SPYRE_DT_FP16, SPYRE_DT_FP32, M, N, K, 0, 0x40000, 0x80000, 0)->wait =
		TOK(0) | TOK(1);
	p.in[2].signal = TOK(2);
	p_load(&p, true, 1, 2, 0, M, N * 4, N * 4, 0x80000, N * 4)->wait = TOK(2);
	len = prog_store(t, &p, PROG);
	r = run_launch(t, PROG, len, 0, 0, 3, slots);
	CHECK_EQ(r.status, SPYRE_CMD_OK);
	ref_mm(a, b, c, M, N, K);
	CHECK_EQ(close_count((float *)(t->dev + ARG2), c, M * N, 1e-5), 0);
	CHECK(r.compute_ns > 2000);
	CHECK_EQ(r.dma_ns, 0);
	tc_free(t);
}

TEST(prog_matmul_all_cores_with_core_strides)
{
	struct tcard *t = tc_new(NULL);
	/* 32 cores in an 8 x 4 grid; each computes a 16 x 32 block of C */
	enum { M = 128, N = 128, K = 64, BM = 16, BN = 32 };
	static float a[M * K], b[K * N];
	static double c[M * N];
	uint64_t slots[6] = { ARG0, M * K * 2, ARG1, K * N * 2, ARG2, M * N * 4 }, len;
	struct spyre_hw_completion r;
	struct spyre_insn *in;
	struct prog p;

	fp16_matrix(t, ARG0, a, M * K, 3);
	fp16_matrix(t, ARG1, b, K * N, 4);
	prog_init(&p, 3, 0);
	/* A rows of block row (rank / 4) */
	in = p_load(&p, false, ~0u, 0, 0, BM, K * 2, K * 2, 0, K * 2);
	in->u.mem.core_div = 4;
	in->u.mem.core_stride2 = BM * K * 2;
	in->signal = TOK(0);
	/* B columns of block column (rank % 4) */
	in = p_load(&p, false, ~0u, 1, 0, K, BN * 2, N * 2, 0x10000, BN * 2);
	in->u.mem.core_div = 4;
	in->u.mem.core_stride = BN * 2;
	in->signal = TOK(1);
	in = p_mm(&p, ~0u, SPYRE_DT_FP16, SPYRE_DT_FP32, BM, BN, K, 0, 0x10000, 0x20000, 0);
	in->wait = TOK(0) | TOK(1);
	in->signal = TOK(2);
	in = p_load(&p, true, ~0u, 2, 0, BM, BN * 4, N * 4, 0x20000, BN * 4);
	in->u.mem.core_div = 4;
	in->u.mem.core_stride = BN * 4;
	in->u.mem.core_stride2 = BM * N * 4;
	in->wait = TOK(2);
	len = prog_store(t, &p, PROG);
	r = run_launch(t, PROG, len, 0, 0, 3, slots);
	CHECK_EQ(r.status, SPYRE_CMD_OK);
	ref_mm(a, b, c, M, N, K);
	CHECK_EQ(close_count((float *)(t->dev + ARG2), c, M * N, 1e-5), 0);
	tc_free(t);
}

TEST(prog_int8_matmul_exact_acc_and_trans)
{
	struct tcard *t = tc_new(NULL);
	enum { M = 8, N = 12, K = 40 };
	int8_t *a = (int8_t *)(t->dev + ARG0), *b = (int8_t *)(t->dev + ARG1);
	int32_t *c = (int32_t *)(t->dev + ARG2), want;
	uint64_t slots[6] = { ARG0, M * K, ARG1, K * N, ARG2, M * N * 4 }, len;
	struct spyre_hw_completion r;
	struct spyre_insn *in;
	struct prog p;
	int i, j, q, bad = 0;

	for (i = 0; i < M * K; i++)
		a[i] = (int8_t)(i * 37 - 128);
	for (i = 0; i < K * N; i++)
		b[i] = (int8_t)(i * 91 + 3);	/* B stored N x K (transposed) */
	for (i = 0; i < M * N; i++)
		c[i] = 1000 * i;
	prog_init(&p, 3, 0);
	p_load(&p, false, 1, 0, 0, 1, M * K, 0, 0, 0)->signal = TOK(0);
	p_load(&p, false, 1, 1, 0, 1, K * N, 0, 0x1000, 0)->signal = TOK(1);
	p_load(&p, false, 1, 2, 0, 1, M * N * 4, 0, 0x2000, 0)->signal = TOK(2);
	in = p_mm(&p, 1, SPYRE_DT_INT8, SPYRE_DT_INT32, M, N, K, 0, 0x1000, 0x2000,
		  SPYRE_MM_ACC | SPYRE_MM_TRANS_B);
	in->wait = TOK(0) | TOK(1) | TOK(2);
	in->signal = TOK(3);
	p_load(&p, true, 1, 2, 0, 1, M * N * 4, 0, 0x2000, 0)->wait = TOK(3);
	len = prog_store(t, &p, PROG);
	r = run_launch(t, PROG, len, 0, 0, 3, slots);
	CHECK_EQ(r.status, SPYRE_CMD_OK);
	for (i = 0; i < M; i++)
		for (j = 0; j < N; j++) {
			want = 1000 * (i * N + j);
			for (q = 0; q < K; q++)
				want += a[i * K + q] * b[j * K + q];
			bad += c[i * N + j] != want;
		}
	CHECK_EQ(bad, 0);
	tc_free(t);
}

/* Run one VEC instruction on core 0 over scratchpad loaded from ARG0/ARG1. */
static uint32_t vec_run(struct tcard *t, struct spyre_insn *tmpl, uint32_t in_bytes,
			uint32_t out_bytes)
{
	uint64_t slots[6] = { ARG0, in_bytes, ARG1, in_bytes, ARG2, out_bytes }, len;
	struct spyre_insn *in;
	struct prog p;

	prog_init(&p, 3, 0);
	p_load(&p, false, 1, 0, 0, 1, in_bytes, 0, tmpl->u.vec.src0_off, 0)->signal = TOK(0);
	p_load(&p, false, 1, 1, 0, 1, in_bytes, 0, tmpl->u.vec.src1_off, 0)->signal = TOK(1);
	in = prog_add(&p, SPYRE_I_VEC, 1, TOK(0) | TOK(1), TOK(2));
	in->flags = tmpl->flags;
	in->dtype = tmpl->dtype;
	in->dtype_out = tmpl->dtype_out;
	in->u.vec = tmpl->u.vec;
	p_load(&p, true, 1, 2, 0, 1, out_bytes, 0, tmpl->u.vec.dst_off, 0)->wait = TOK(2);
	len = prog_store(t, &p, PROG);
	return run_launch(t, PROG, len, 0, 0, 3, slots).status;
}

static struct spyre_insn vtmpl(uint8_t func, uint8_t dt, uint8_t dto, uint32_t rows,
			       uint32_t cols)
{
	struct prog p;

	prog_init(&p, 0, 0);
	return *p_vec(&p, 1, func, dt, dto, rows, cols, 0, 0x10000, 0x20000);
}

TEST(prog_vec_elementwise_fp32)
{
	struct tcard *t = tc_new(NULL);
	float *x = (float *)(t->dev + ARG0), *y = (float *)(t->dev + ARG1);
	float *o = (float *)(t->dev + ARG2), i0 = 0.5f, i1 = -2.0f;
	struct spyre_insn v;
	int i, bad;

	for (i = 0; i < 64; i++) {
		x[i] = (i - 32) * 0.25f;
		y[i] = 1.0f + i;
	}
	x[5] = NAN;
	v = vtmpl(SPYRE_VF_RELU, SPYRE_DT_FP32, SPYRE_DT_FP32, 4, 16);
	CHECK_EQ(vec_run(t, &v, 256, 256), 0);
	for (i = bad = 0; i < 64; i++)
		bad += i == 5 ? !isnan(o[i]) : o[i] != (x[i] > 0 ? x[i] : 0);
	CHECK_EQ(bad, 0);
	v = vtmpl(SPYRE_VF_GELU, SPYRE_DT_FP32, SPYRE_DT_FP32, 4, 16);
	CHECK_EQ(vec_run(t, &v, 256, 256), 0);
	for (i = bad = 0; i < 64; i++)
		if (i != 5)
			bad += fabs(o[i] - 0.5 * x[i] * (1 + erf(x[i] / sqrt(2.0)))) > 1e-5;
	CHECK_EQ(bad, 0);
	v = vtmpl(SPYRE_VF_DIV, SPYRE_DT_FP32, SPYRE_DT_FP32, 4, 16);
	CHECK_EQ(vec_run(t, &v, 256, 256), 0);
	for (i = bad = 0; i < 64; i++)
		if (i != 5)
			bad += o[i] != x[i] / y[i];
	CHECK_EQ(bad, 0);
	v = vtmpl(SPYRE_VF_SCALE, SPYRE_DT_FP32, SPYRE_DT_FP32, 4, 16);
	memcpy(&v.u.vec.imm0, &i0, 4);
	memcpy(&v.u.vec.imm1, &i1, 4);
	CHECK_EQ(vec_run(t, &v, 256, 256), 0);
	CHECK_EQ(o[10] == x[10] * 0.5f - 2.0f, 1);
	/* broadcast: src1 stride 0 adds row 0 of y to every row */
	v = vtmpl(SPYRE_VF_ADD, SPYRE_DT_FP32, SPYRE_DT_FP32, 4, 16);
	v.u.vec.src1_stride = 0;
	CHECK_EQ(vec_run(t, &v, 256, 256), 0);
	for (i = bad = 0; i < 64; i++)
		if (i != 5)
			bad += o[i] != x[i] + y[i % 16];
	CHECK_EQ(bad, 0);
	/* per-row scalar: SRC1_COL multiplies row r by y[r * 16] */
	v = vtmpl(SPYRE_VF_MUL, SPYRE_DT_FP32, SPYRE_DT_FP32, 4, 16);
	v.flags = SPYRE_VEC_SRC1_COL;
	CHECK_EQ(vec_run(t, &v, 256, 256), 0);
	for (i = bad = 0; i < 64; i++)
		if (i != 5)
			bad += o[i] != x[i] * y[(i / 16) * 16];
	CHECK_EQ(bad, 0);
	tc_free(t);
}

/* Interface 1.3: compares give 1.0/0.0 (NaN false but for NE), SELECT keeps src0. */
TEST(prog_vec_compare_select)
{
	static const uint8_t f[6] = { SPYRE_VF_CMP_EQ, SPYRE_VF_CMP_NE, SPYRE_VF_CMP_LT,
				      SPYRE_VF_CMP_LE, SPYRE_VF_CMP_GT, SPYRE_VF_CMP_GE };
	struct tcard *t = tc_new(NULL);
	float *x = (float *)(t->dev + ARG0), *y = (float *)(t->dev + ARG1);
	float *o = (float *)(t->dev + ARG2), fill = -7.5f;
	struct spyre_insn v;
	int i, k, bad;

	CHECK(tc_rd(t, SPYRE_REG_VERSION) >= SPYRE_HW_VERSION(1, 3));
	for (i = 0; i < 64; i++) {
		x[i] = (float)(i % 5);
		y[i] = (float)(i % 3);
	}
	x[7] = NAN;
	y[9] = -0.0f;
	x[9] = 0.0f;
	for (k = 0; k < 6; k++) {
		v = vtmpl(f[k], SPYRE_DT_FP32, SPYRE_DT_INT8, 4, 16);
		CHECK_EQ(vec_run(t, &v, 256, 64), 0);
		for (i = bad = 0; i < 64; i++) {
			bool want = k == 0 ? x[i] == y[i] : k == 1 ? x[i] != y[i] :
				    k == 2 ? x[i] < y[i] : k == 3 ? x[i] <= y[i] :
				    k == 4 ? x[i] > y[i] : x[i] >= y[i];

			bad += ((int8_t *)o)[i] != (want ? 1 : 0);
		}
		CHECK_EQ(bad, 0);
	}
	CHECK_EQ(((int8_t *)o)[7], 0);	/* NaN >= anything is false */
	v = vtmpl(SPYRE_VF_SELECT, SPYRE_DT_FP32, SPYRE_DT_FP32, 4, 16);
	memcpy(&v.u.vec.imm0, &fill, 4);
	CHECK_EQ(vec_run(t, &v, 256, 256), 0);
	for (i = bad = 0; i < 64; i++) {
		if (i == 7)
			bad += y[i] != 0 ? !isnan(o[i]) : o[i] != fill;
		else
			bad += o[i] != (y[i] != 0 ? x[i] : fill);
	}
	CHECK_EQ(bad, 0);
	tc_free(t);
}

/* Interface 1.3 row functions: first argmax (NaN wins), running sums. */
TEST(prog_vec_rows_argmax_cumsum)
{
	struct tcard *t = tc_new(NULL);
	float *x = (float *)(t->dev + ARG0), *o = (float *)(t->dev + ARG2);
	struct spyre_insn v;
	int i, bad;
	float s;

	for (i = 0; i < 64; i++)
		x[i] = (float)((i * 7) % 11);
	x[16 + 9] = NAN;	/* row 1: NaN at 9 */
	x[32 + 3] = 100.0f;	/* row 2: 100 at 3 and at 12 */
	x[32 + 12] = 100.0f;
	v = vtmpl(SPYRE_VF_ARGMAX_ROW, SPYRE_DT_FP32, SPYRE_DT_INT32, 4, 16);
	v.u.vec.dst_stride = 1;
	CHECK_EQ(vec_run(t, &v, 256, 16), 0);
	CHECK_EQ(((int32_t *)o)[0], 3);	/* 21 % 11 = 10 is the first maximum */
	CHECK_EQ(((int32_t *)o)[1], 9);
	CHECK_EQ(((int32_t *)o)[2], 3);
	v = vtmpl(SPYRE_VF_CUMSUM_ROW, SPYRE_DT_FP32, SPYRE_DT_FP32, 4, 16);
	CHECK_EQ(vec_run(t, &v, 256, 256), 0);
	for (i = bad = 0, s = 0; i < 64; i++) {
		s = i % 16 ? s + x[i] : x[i];
		if (i / 16 != 1)
			bad += o[i] != s;
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(isnan(o[16 + 9]) && isnan(o[31]), 1);
	tc_free(t);
}

/* Interface 1.3: LOAD GATHER picks rows by int32 indices in the scratchpad. */
TEST(prog_load_gather_rows)
{
	struct tcard *t = tc_new(NULL);
	uint8_t *w = t->dev + ARG0, *o = t->dev + ARG2;
	int32_t *ix = (int32_t *)(t->dev + ARG1), want[5] = { 7, 0, 7, 3, 9 };
	uint64_t slots[6] = { ARG0, 10 * 96, ARG1, 20, ARG2, 5 * 96 }, len;
	struct spyre_insn *in;
	struct prog p;
	int r, bad = 0;

	for (r = 0; r < 10 * 96; r++)
		w[r] = (uint8_t)(r * 13 + 1);
	memcpy(ix, want, sizeof(want));
	prog_init(&p, 3, 0);
	p_load(&p, false, 1, 1, 0, 1, 20, 0, 0x1000, 0);
	in = p_load(&p, false, 1, 0, 0, 5, 96, 96, 0x2000, 128);
	in->flags = SPYRE_LOAD_GATHER;
	in->u.mem.core_stride2 = 0x1000;
	p_load(&p, true, 1, 2, 0, 5, 96, 96, 0x2000, 128);
	len = prog_store(t, &p, PROG);
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 3, slots).status, SPYRE_CMD_OK);
	for (r = 0; r < 5; r++)
		bad += memcmp(o + r * 96, w + want[r] * 96, 96) != 0;
	CHECK_EQ(bad, 0);
	/* an index past the slot fails the job before anything moves */
	ix[2] = 10;
	memset(o, 0xee, 5 * 96);
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 3, slots).status, SPYRE_CMD_ERR_BOUNDS);
	CHECK_EQ(o[0], 0xee);
	ix[2] = -1;
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 3, slots).status, SPYRE_CMD_ERR_BOUNDS);
	/* GATHER with a core stride, or on a STORE, is malformed */
	ix[2] = 1;
	in->u.mem.core_stride = 96;
	len = prog_store(t, &p, PROG);
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 3, slots).status, SPYRE_CMD_ERR_PROGRAM);
	in->u.mem.core_stride = 0;
	in->op = SPYRE_I_STORE;
	len = prog_store(t, &p, PROG);
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 3, slots).status, SPYRE_CMD_ERR_PROGRAM);
	tc_free(t);
}

TEST(prog_vec_rows_softmax_sum_max)
{
	struct tcard *t = tc_new(NULL);
	float *x = (float *)(t->dev + ARG0), *o = (float *)(t->dev + ARG2);
	struct spyre_insn v;
	double s, e;
	int i, r, bad = 0;

	for (i = 0; i < 4 * 32; i++)
		x[i] = sinf(i * 0.7f) * 10;
	x[2 * 32 + 3] = INFINITY;		/* row 2 -> NaN like PyTorch */
	for (i = 0; i < 32; i++)
		x[3 * 32 + i] = -INFINITY;	/* row 3 all -inf -> NaN */
	v = vtmpl(SPYRE_VF_SOFTMAX_ROW, SPYRE_DT_FP32, SPYRE_DT_FP32, 4, 32);
	CHECK_EQ(vec_run(t, &v, 512, 512), 0);
	for (r = 0; r < 2; r++) {
		double mx = -1e30;

		for (i = 0; i < 32; i++)
			mx = fmax(mx, x[r * 32 + i]);
		for (s = 0, i = 0; i < 32; i++)
			s += exp(x[r * 32 + i] - mx);
		for (i = 0; i < 32; i++) {
			e = exp(x[r * 32 + i] - mx) / s;
			bad += fabs(o[r * 32 + i] - e) > 1e-6;
		}
	}
	CHECK_EQ(bad, 0);
	CHECK(isnan(o[2 * 32]) && isnan(o[3 * 32 + 5]));
	v = vtmpl(SPYRE_VF_SUM_ROW, SPYRE_DT_FP32, SPYRE_DT_FP32, 2, 32);
	CHECK_EQ(vec_run(t, &v, 256, 8), 0);
	for (s = 0, i = 0; i < 32; i++)
		s += x[32 + i];
	CHECK(fabs(o[1] - s) < 1e-4);
	v = vtmpl(SPYRE_VF_MAX_ROW, SPYRE_DT_FP32, SPYRE_DT_FP32, 3, 32);
	CHECK_EQ(vec_run(t, &v, 384, 12), 0);
	CHECK(isinf(o[2]) && o[2] > 0);
	tc_free(t);
}

TEST(prog_vec_convert_dtypes)
{
	struct tcard *t = tc_new(NULL);
	float *x = (float *)(t->dev + ARG0);
	int8_t *q = (int8_t *)(t->dev + ARG2);
	uint16_t *h = (uint16_t *)(t->dev + ARG2);
	struct spyre_insn v;
	int i, bad = 0;

	for (i = 0; i < 64; i++)
		x[i] = (i - 32) * 5.3f;
	x[0] = NAN;
	x[1] = 1e9f;
	x[2] = 2.5f;		/* ties to even -> 2 */
	x[3] = 3.5f;		/* -> 4 */
	v = vtmpl(SPYRE_VF_COPY, SPYRE_DT_FP32, SPYRE_DT_INT8, 1, 64);
	CHECK_EQ(vec_run(t, &v, 256, 64), 0);
	CHECK_EQ(q[0], 0);
	CHECK_EQ(q[1], 127);
	CHECK_EQ(q[2], 2);
	CHECK_EQ(q[3], 4);
	CHECK_EQ(q[4], -128);	/* (4-32)*5.3 = -148.4 saturates */
	CHECK_EQ(q[40], 42);	/* 8 * 5.3 = 42.4 */
	for (i = 0; i < 4; i++) {
		static const uint8_t types[] = { SPYRE_DT_FP16, SPYRE_DT_BF16, SPYRE_DT_DLF16,
						 SPYRE_DT_FP16 };
		uint8_t dt = types[i];

		v = vtmpl(SPYRE_VF_COPY, SPYRE_DT_FP32, dt, 1, 64);
		CHECK_EQ(vec_run(t, &v, 256, 128), 0);
		bad += dt == SPYRE_DT_FP16 ? h[10] != spyre_f32_to_fp16(x[10]) :
		       dt == SPYRE_DT_BF16 ? h[10] != spyre_f32_to_bf16(x[10]) :
					     h[10] != spyre_f32_to_dlf16(x[10]);
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(h[1], 0x7c00);		/* 1e9 overflows fp16 to +inf */
	tc_free(t);
}

TEST(prog_bounds_violations_stop_job_and_touch_nothing)
{
	struct tcard *t = tc_new(NULL);
	uint64_t slots[4] = { ARG0, 256, ARG1, 256 }, len;
	struct prog p;

	memset(t->dev + ARG1, 0x77, 512);
	/* store one byte past the end of slot 1 */
	prog_init(&p, 2, 0);
	p_load(&p, true, 1, 1, 1, 1, 256, 0, 0, 0);
	len = prog_store(t, &p, PROG);
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 2, slots).status, SPYRE_CMD_ERR_BOUNDS);
	CHECK_EQ(t->dev[ARG1 + 256], 0x77);
	CHECK_EQ(t->dev[ARG1], 0x77);
	CHECK_EQ(rec(t, 0)->error_index, t->tail[0] - 3);
	/* the second core's rank stride walks out of the slot */
	prog_init(&p, 2, 0);
	p_load(&p, true, 3, 1, 0, 1, 128, 0, 0, 0)->u.mem.core_stride = 129;
	len = prog_store(t, &p, PROG);
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 2, slots).status, SPYRE_CMD_ERR_BOUNDS);
	/* workspace: store beyond ws_len */
	prog_init(&p, 0, 64);
	p_load(&p, true, 1, SPYRE_ISA_SLOT_WS, 32, 1, 64, 0, 0, 0);
	len = prog_store(t, &p, PROG);
	CHECK_EQ(run_launch(t, PROG, len, WS, 64, 0, NULL).status, SPYRE_CMD_ERR_BOUNDS);
	prog_init(&p, 0, 64);
	p_load(&p, true, 1, SPYRE_ISA_SLOT_WS, 0, 1, 64, 0, 0, 0);
	len = prog_store(t, &p, PROG);
	CHECK_EQ(run_launch(t, PROG, len, WS, 64, 0, NULL).status, SPYRE_CMD_OK);
	/* scratchpad overflow (2 MiB) */
	prog_init(&p, 2, 0);
	p_load(&p, false, 1, 0, 0, 2, 128, 0, (2u << 20) - 200, 128);
	len = prog_store(t, &p, PROG);
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 2, slots).status, SPYRE_CMD_ERR_BOUNDS);
	prog_init(&p, 0, 0);
	p_mm(&p, 1, SPYRE_DT_FP32, SPYRE_DT_FP32, 1024, 1024, 1024, 0, 0, 0, 0);
	len = prog_store(t, &p, PROG);
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 0, NULL).status, SPYRE_CMD_ERR_BOUNDS);
	prog_init(&p, 0, 0);
	p_vec(&p, 1, SPYRE_VF_EXP, SPYRE_DT_FP32, SPYRE_DT_FP32, 1, 16, 2, 0, 64);
	len = prog_store(t, &p, PROG);		/* misaligned fp32 source */
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 0, NULL).status, SPYRE_CMD_ERR_BOUNDS);
	/* launch slot outside device memory */
	slots[2] = t->cfg.mem_size - 100;
	prog_init(&p, 2, 0);
	p_load(&p, false, 1, 0, 0, 1, 4, 0, 0, 0);
	len = prog_store(t, &p, PROG);
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 2, slots).status, SPYRE_CMD_ERR_BOUNDS);
	CHECK_EQ(run_launch(t, t->cfg.mem_size - 16, 32, 0, 0, 0, NULL).status,
		 SPYRE_CMD_ERR_BOUNDS);
	CHECK_EQ(ring_status(t, 0), SPYRE_RING_STATUS_ENABLED | SPYRE_RING_STATUS_IDLE);
	tc_free(t);
}

TEST(prog_malformed_programs)
{
	struct tcard *t = tc_new(NULL);
	uint64_t slots[2] = { ARG0, 256 }, len;
	struct prog p;

	prog_init(&p, 1, 0);
	p_load(&p, false, 1, 0, 0, 1, 4, 0, 0, 0);
	len = prog_store(t, &p, PROG);
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 1, slots).status, SPYRE_CMD_OK);
	CHECK_EQ(run_launch(t, PROG, len - 1, 0, 0, 1, slots).status, SPYRE_CMD_ERR_PROGRAM);
	CHECK_EQ(run_launch(t, PROG, 16, 0, 0, 1, slots).status, SPYRE_CMD_ERR_PROGRAM);
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 0, NULL).status, SPYRE_CMD_ERR_PROGRAM);
	t->dev[PROG] ^= 1;				/* magic */
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 1, slots).status, SPYRE_CMD_ERR_PROGRAM);
	t->dev[PROG] ^= 1;
	p.in[0].u.mem.slot = 1;				/* slot not bound */
	len = prog_store(t, &p, PROG);
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 1, slots).status, SPYRE_CMD_ERR_PROGRAM);
	p.in[0].u.mem.slot = 0;
	p.in[0].op = 9;					/* unknown op */
	len = prog_store(t, &p, PROG);
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 1, slots).status, SPYRE_CMD_ERR_PROGRAM);
	prog_init(&p, 0, 4096);				/* needs more workspace */
	prog_add(&p, SPYRE_I_NOP, 1, 0, 0);
	len = prog_store(t, &p, PROG);
	CHECK_EQ(run_launch(t, PROG, len, WS, 100, 0, NULL).status, SPYRE_CMD_ERR_PROGRAM);
	prog_init(&p, 0, 0);
	prog_add(&p, SPYRE_I_NOP, 1, 0, 0)->flags = 3;	/* no such unit */
	len = prog_store(t, &p, PROG);
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 0, NULL).status, SPYRE_CMD_ERR_PROGRAM);
	prog_init(&p, 1, 0);				/* more than a scratchpad */
	p_load(&p, false, 1, 0, 0, 4097, 512, 0, 0, 0);
	len = prog_store(t, &p, PROG);
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 1, slots).status, SPYRE_CMD_ERR_PROGRAM);
	prog_init(&p, 0, 0);
	p_vec(&p, 1, SPYRE_VF_EXP, SPYRE_DT_INT8, SPYRE_DT_INT8, 0xffffffffu, 2, 0, 0, 0);
	len = prog_store(t, &p, PROG);
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 0, NULL).status, SPYRE_CMD_ERR_PROGRAM);
	prog_init(&p, 0, 0);				/* strides that overflow 64 bits */
	p_vec(&p, 1, SPYRE_VF_EXP, SPYRE_DT_FP32, SPYRE_DT_FP32, 1u << 20, 1, 0, 0, 0);
	p.in[0].u.vec.src0_stride = 0xffffffffu;
	len = prog_store(t, &p, PROG);
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 0, NULL).status, SPYRE_CMD_ERR_BOUNDS);
	prog_init(&p, 0, 0);
	p_mm(&p, 1, SPYRE_DT_INT8, SPYRE_DT_FP32, 4, 4, 4, 0, 64, 128, 0);
	len = prog_store(t, &p, PROG);			/* int8 must accumulate int32 */
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 0, NULL).status, SPYRE_CMD_ERR_PROGRAM);
	tc_free(t);
}

static void eight_cores(struct spyre_model_config *c)
{
	c->num_cores = 8;
}

TEST(prog_core_mask_beyond_cores)
{
	struct tcard *t = tc_new(eight_cores);
	uint64_t len;
	struct prog p;

	prog_init(&p, 0, 0);
	prog_add(&p, SPYRE_I_NOP, 0x1ff, 0, 0);
	len = prog_store(t, &p, PROG);
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 0, NULL).status, SPYRE_CMD_ERR_PROGRAM);
	prog_init(&p, 0, 0);
	prog_add(&p, SPYRE_I_NOP, 0xff, 0, 0);
	len = prog_store(t, &p, PROG);
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 0, NULL).status, SPYRE_CMD_OK);
	tc_free(t);
}

TEST(prog_deadlock_and_token_overflow)
{
	struct tcard *t = tc_new(NULL);
	uint64_t len;
	struct prog p;
	int i;

	prog_init(&p, 0, 0);
	prog_add(&p, SPYRE_I_NOP, 1, TOK(0), 0)->flags = SPYRE_UNIT_PE;
	prog_add(&p, SPYRE_I_NOP, 1, 0, TOK(0))->flags = SPYRE_UNIT_PE;	/* after it: never */
	len = prog_store(t, &p, PROG);
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 0, NULL).status, SPYRE_CMD_ERR_DEADLOCK);
	/* the same pair on different units is fine */
	p.in[1].flags = SPYRE_UNIT_LSU;
	len = prog_store(t, &p, PROG);
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 0, NULL).status, SPYRE_CMD_OK);
	/* tokens are per core: core 1 cannot consume core 0's token */
	prog_init(&p, 0, 0);
	prog_add(&p, SPYRE_I_NOP, 1, 0, TOK(3));
	prog_add(&p, SPYRE_I_NOP, 2, TOK(3), 0)->flags = SPYRE_UNIT_SFU;
	len = prog_store(t, &p, PROG);
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 0, NULL).status, SPYRE_CMD_ERR_DEADLOCK);
	prog_init(&p, 0, 0);
	for (i = 0; i < 65; i++)
		prog_add(&p, SPYRE_I_NOP, 1, 0, TOK(1));
	len = prog_store(t, &p, PROG);
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 0, NULL).status, SPYRE_CMD_ERR_PROGRAM);
	/* counting: 3 signals feed 3 waits */
	prog_init(&p, 0, 0);
	for (i = 0; i < 3; i++)
		prog_add(&p, SPYRE_I_NOP, 1, 0, TOK(1));
	for (i = 0; i < 3; i++)
		prog_add(&p, SPYRE_I_NOP, 1, TOK(1), 0)->flags = SPYRE_UNIT_SFU;
	len = prog_store(t, &p, PROG);
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 0, NULL).status, SPYRE_CMD_OK);
	prog_add(&p, SPYRE_I_NOP, 1, TOK(1), 0)->flags = SPYRE_UNIT_SFU;
	len = prog_store(t, &p, PROG);
	CHECK_EQ(run_launch(t, PROG, len, 0, 0, 0, NULL).status, SPYRE_CMD_ERR_DEADLOCK);
	tc_free(t);
}

/* LOAD 8 KiB then a 64^3 fp16 matmul, on @mask cores. */
static uint64_t chain_ns(uint32_t mask)
{
	struct tcard *t = tc_new(NULL);
	uint64_t slots[2] = { ARG0, 1 << 20 }, len, ns;
	struct spyre_insn *in;
	struct prog p;

	prog_init(&p, 1, 0);
	in = p_load(&p, false, mask, 0, 0, 64, 128, 128, 0, 128);
	in->u.mem.core_stride = 8192;
	in->signal = TOK(0);
	p_mm(&p, mask, SPYRE_DT_FP16, SPYRE_DT_FP32, 64, 64, 64, 0, 0, 0x10000, 0)->wait = TOK(0);
	len = prog_store(t, &p, PROG);
	ns = run_launch(t, PROG, len, 0, 0, 1, slots).compute_ns;
	tc_free(t);
	return ns;
}

TEST(prog_timing_units_tokens_and_shared_lpddr)
{
	/* LSU: 64 sticks over the 128 B/cycle ring = 64 + 4 cycles; LPDDR5 41 ns */
	CHECK_EQ(chain_ns(1), 2000 + 68 + 276);
	/* two cores: the second core's transfer queues on LPDDR5 (41 + 41 ns) */
	CHECK_EQ(chain_ns(3), 2000 + 82 + 276);
	/* 32 cores: 32 x 41 ns of LPDDR5 traffic, then the last core's matmul */
	CHECK_EQ(chain_ns(~0u), 2000 + 32 * 41 + 276);
}

TEST(prog_launch_waits_for_args_doorbell)
{
	struct tcard *t = tc_new(NULL);
	uint64_t slots[8] = { ARG0, 4, ARG0, 4, ARG0, 4, ARG1, 4 }, len;
	struct prog p;

	*(uint32_t *)(t->dev + ARG0) = 0xfeedf00d;
	prog_init(&p, 4, 0);
	p_load(&p, false, 1, 0, 0, 1, 4, 0, 0, 0)->signal = TOK(0);
	p_load(&p, true, 1, 3, 0, 1, 4, 0, 0, 0)->wait = TOK(0);
	len = prog_store(t, &p, PROG);
	ring_setup(t, 0, 4);
	push_launch(t, 0, PROG, len, 0, 0, 4, slots);	/* LAUNCH + 2 ARGS */
	push_fence(t, 0, 1, 0, true);
	tc_wr(t, SPYRE_RING_REG(0, SPYRE_RING_TAIL), 2);	/* only one ARGS visible */
	tc_run(t);
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(0, SPYRE_RING_HEAD)), 0);
	CHECK_EQ(*(uint32_t *)(t->dev + ARG1), 0);
	ring_run(t, 0);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_OK);
	CHECK_EQ(*(uint32_t *)(t->dev + ARG1), 0xfeedf00d);
	/* an ARGS descriptor with the wrong count is INVALID */
	push_launch(t, 0, PROG, len, 0, 0, 4, slots);
	((struct spyre_hw_args *)hptr(t, H_RING(0) + 64 * ((t->tail[0] - 1) & 15)))->count = 3;
	fence_and_run(t, 0, 2, 0, true);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_ERR_INVALID);
	tc_free(t);
}

/*
 * Interface 1.7: a LAUNCH binds 64 argument slots (22 ARGS descriptors);
 * a program reads its last slot and writes its first. 65 slots are refused.
 */
TEST(prog_launch_binds_64_slots)
{
	enum { NSLOTS = SPYRE_MAX_ARGS, BYTES = 256 };
	struct tcard *t = tc_new(NULL);
	uint64_t slots[2 * (NSLOTS + 1)], len;
	struct spyre_hw_completion r;
	struct prog p;
	unsigned int i;

	for (i = 0; i <= NSLOTS; i++) {
		slots[2 * i] = 0x200000 + (uint64_t)i * 4096;
		slots[2 * i + 1] = BYTES;
		memset(t->dev + slots[2 * i], i, BYTES);
	}
	prog_init(&p, NSLOTS, 0);
	p_load(&p, false, 1, NSLOTS - 1, 0, 1, BYTES, 0, 0, 0)->signal = TOK(1);
	p_load(&p, true, 1, 0, 0, 1, BYTES, 0, 0, 0)->wait = TOK(1);
	len = prog_store(t, &p, 0x100000);
	r = run_launch(t, 0x100000, len, 0, 0, NSLOTS, slots);
	CHECK_EQ(r.status, SPYRE_CMD_OK);
	for (i = 0; i < BYTES; i++)
		CHECK_EQ(t->dev[slots[0] + i], NSLOTS - 1);
	/* the slot after the last one bound is refused at fetch */
	r = run_launch(t, 0x100000, len, 0, 0, NSLOTS + 1, slots);
	CHECK_EQ(r.status, SPYRE_CMD_ERR_INVALID);
	tc_free(t);
}
