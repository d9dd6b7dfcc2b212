// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * The PE's fp32 summation order is part of the card's definition: every
 * C[i][j] adds its products in ascending k, each product and sum rounded
 * to fp32. Checked bit for bit on shapes that cross the model's internal
 * blocking (rows not a multiple of 4, columns beyond one 128-column block),
 * with B transposed and with accumulation into C.
 */
#include <math.h>

#include "harness.h"
#include "spyre_float.h"

#define PROG	0x100000ull
#define ARG0	0x200000ull
#define ARG1	0x400000ull
#define ARG2	0x600000ull
#define TOK(n)	(1u << (n))

enum { M = 7, N = 203, K = 67 };

static void fill_fp16(struct tcard *t, uint64_t at, float *ref, size_t n, unsigned int seed)
{
	uint16_t *p = (uint16_t *)(t->dev + at);
	size_t i;

	for (i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = spyre_f32_to_fp16(((float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f) * 3.0f);
		ref[i] = spyre_fp16_to_f32(p[i]);
	}
}

/* C (+)= A x B on core 0; B stored N x K when @tb. Returns the status. */
static uint32_t mm_run(struct tcard *t, bool tb, bool acc)
{
	uint64_t slots[6] = { ARG0, M * K * 2, ARG1, K * N * 2, ARG2, M * N * 4 };
	uint32_t brow = tb ? K : N, nb = tb ? N : K;
	struct prog p;

	prog_init(&p, 3, 0);
	p_load(&p, false, 1, 0, 0, M, K * 2, K * 2, 0, K * 2)->signal = TOK(0);
	p_load(&p, false, 1, 1, 0, nb, brow * 2, brow * 2, 0x40000, brow * 2)->signal = TOK(1);
	p_load(&p, false, 1, 2, 0, M, N * 4, N * 4, 0x80000, N * 4)->signal = TOK(3);
	p_mm(&p, 1, SPYRE_DT_FP16, SPYRE_DT_FP32, M, N, K, 0, 0x40000, 0x80000,
	     (tb ? SPYRE_MM_TRANS_B : 0) | (acc ? SPYRE_MM_ACC : 0))->wait =
		TOK(0) | TOK(1) | TOK(3);
	p.in[p.n - 1].signal = TOK(2);
	p_load(&p, true, 1, 2, 0, M, N * 4, N * 4, 0x80000, N * 4)->wait = TOK(2);
	return run_launch(t, PROG, prog_store(t, &p, PROG), 0, 0, 3, slots).status;
}

TEST(pe_summation_order_bit_exact)
{
	static float a[M * K], b[K * N], c0[M * N];
	struct tcard *t = tc_new(NULL);
	float *c = (float *)(t->dev + ARG2);
	unsigned int tb, acc, i, j, q, differ;

	for (tb = 0; tb < 2; tb++)
		for (acc = 0; acc < 2; acc++) {
			fill_fp16(t, ARG0, a, M * K, 1 + tb);
			fill_fp16(t, ARG1, b, K * N, 5 + tb);
			for (i = 0; i < M * N; i++)
				c[i] = c0[i] = (float)i / 64.0f - 5.0f;
			CHECK_EQ(mm_run(t, tb, acc), SPYRE_CMD_OK);
			for (i = 0, differ = 0; i < M; i++)
				for (j = 0; j < N; j++) {
					volatile float s = acc ? c0[i * N + j] : 0.0f, pr;

					for (q = 0; q < K; q++) {
						pr = a[i * K + q] * (tb ? b[j * K + q] : b[q * N + j]);
						s = s + pr;
					}
					differ += memcmp((const void *)&s, &c[i * N + j], 4) != 0;
				}
			CHECK_EQ(differ, 0);
		}
	tc_free(t);
}
