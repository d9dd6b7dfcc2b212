// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Number formats against independent references: the compiler's _Float16
 * for IEEE fp16, and a brute-force "nearest representable value" search
 * over every encoding for bf16 and DLFloat16.
 */
#include <math.h>
#include <stdlib.h>

#include "harness.h"
#include "spyre_float.h"

static float u2f(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static uint32_t f2u(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

/* Random floats covering every exponent, plus halfway cases. */
static float sample(unsigned int *s, int i)
{
	*s = *s * 1664525u + 1013904223u;
	if (i % 4 == 0)	/* exact halfway between two 16-bit values (13/16 low bits) */
		return u2f((*s & 0xffffe000u) | 0x1000u);
	if (i % 4 == 1)
		return u2f((*s & 0xffff0000u) | 0x8000u);
	return u2f(*s);
}

TEST(float_fp16_matches_compiler_float16)
{
	unsigned int s = 1, bad = 0;
	int i;

	for (i = 0; i < 2000000; i++) {
		float f = sample(&s, i);
		_Float16 h = (_Float16)f;
		uint16_t want, got = spyre_f32_to_fp16(f);

		memcpy(&want, &h, 2);
		if (isnan(f))
			bad += (got & 0x7c00) != 0x7c00 || !(got & 0x3ff);
		else
			bad += got != want;
	}
	CHECK_EQ(bad, 0);
	/* every fp16 value converts to fp32 exactly and back unchanged */
	for (i = bad = 0; i < 65536; i++) {
		_Float16 h;
		float f = spyre_fp16_to_f32((uint16_t)i);

		memcpy(&h, &(uint16_t){ (uint16_t)i }, 2);
		if (isnan(f))
			bad += !isnan((float)h);
		else
			bad += f2u(f) != f2u((float)h) || spyre_f32_to_fp16(f) != i;
	}
	CHECK_EQ(bad, 0);
}

TEST(float_fp16_edge_cases)
{
	CHECK_EQ(spyre_f32_to_fp16(65504.0f), 0x7bff);
	CHECK_EQ(spyre_f32_to_fp16(65519.99f), 0x7bff);
	CHECK_EQ(spyre_f32_to_fp16(65520.0f), 0x7c00);		/* ties up to inf */
	CHECK_EQ(spyre_f32_to_fp16(-INFINITY), 0xfc00);
	CHECK_EQ(spyre_f32_to_fp16(ldexpf(1, -24)), 0x0001);	/* smallest subnormal */
	CHECK_EQ(spyre_f32_to_fp16(ldexpf(1, -25)), 0x0000);	/* tie to even: 0 */
	CHECK_EQ(spyre_f32_to_fp16(ldexpf(1.5f, -25)), 0x0001);
	CHECK_EQ(spyre_f32_to_fp16(-0.0f), 0x8000);
	CHECK_EQ(spyre_f32_to_fp16(1.0f + ldexpf(1, -11)), 0x3c00);	/* tie to even */
	CHECK_EQ(spyre_f32_to_fp16(1.0f + 3 * ldexpf(1, -11)), 0x3c02);
	CHECK(isnan(spyre_fp16_to_f32(spyre_f32_to_fp16(NAN))));
	CHECK(isinf(spyre_fp16_to_f32(0x7c00)));
}

/* All finite non-negative values of a 16-bit format, ascending, with codes. */
struct table {
	float v[65536];
	uint16_t code[65536];
	int n;
};

static void build(struct table *t, float (*dec)(uint16_t))
{
	int i;

	t->n = 0;
	for (i = 0; i < 0x8000; i++) {
		float f = dec((uint16_t)i);

		if (isnan(f) || isinf(f))
			continue;
		if (t->n && f == t->v[t->n - 1])
			continue;	/* duplicate encodings of zero */
		t->v[t->n] = f;
		t->code[t->n] = (uint16_t)i;
		t->n++;
	}
}

/*
 * Round |f| to the table: nearest value, ties to the even code; beyond the
 * largest value by at least half an ulp (of the next binade) -> infinity.
 */
static int nearest(const struct table *t, double a, int frac_bits, double *ulp_top)
{
	int lo = 0, hi = t->n - 1, mid;
	double top = t->v[t->n - 1], next = top + *ulp_top;

	if (a >= (top + next) / 2)
		return -1;
	if (a >= top)
		return t->n - 1;
	while (hi - lo > 1) {
		mid = (lo + hi) / 2;
		if (t->v[mid] <= a)
			lo = mid;
		else
			hi = mid;
	}
	if (a - t->v[lo] < t->v[hi] - a)
		return lo;
	if (a - t->v[lo] > t->v[hi] - a)
		return hi;
	(void)frac_bits;
	return (t->code[lo] & 1) ? hi : lo;
}

static struct table tab;

static unsigned int check_format(uint16_t (*enc)(float), float (*dec)(uint16_t), uint16_t inf,
				 double ulp_top, bool flush_below_min)
{
	unsigned int s = 7, bad = 0;
	int i, k;

	build(&tab, dec);
	for (i = 0; i < 1000000; i++) {
		float f = sample(&s, i);
		double a = fabs((double)f);
		uint16_t got = enc(f), sign = signbit(f) ? 0x8000 : 0, want;

		if (isnan(f)) {
			bad += !isnan(dec(got));
			continue;
		}
		k = nearest(&tab, a, 0, &ulp_top);
		want = k < 0 ? inf : tab.code[k];
		if (flush_below_min && k >= 0 && tab.v[k] != 0 && tab.v[k] < tab.v[1])
			want = 0;
		want |= sign;
		if (isinf(f))
			want = inf | sign;
		bad += got != want;
	}
	return bad;
}

TEST(float_bf16_matches_nearest_even_reference)
{
	CHECK_EQ(check_format(spyre_f32_to_bf16, spyre_bf16_to_f32, 0x7f80,
			      ldexp(1, 127 - 7), false), 0);
	CHECK_EQ(spyre_f32_to_bf16(1.0f), 0x3f80);
	CHECK_EQ(spyre_f32_to_bf16(u2f(0x3f808000)), 0x3f80);	/* tie to even */
	CHECK_EQ(spyre_f32_to_bf16(u2f(0x3f818000)), 0x3f82);
	CHECK_EQ(spyre_f32_to_bf16(u2f(0x7f7fffff)), 0x7f80);	/* rounds to inf */
	CHECK(isnan(spyre_bf16_to_f32(spyre_f32_to_bf16(u2f(0x7f800001)))));	/* sNaN stays NaN */
}

TEST(float_dlf16_matches_nearest_even_reference)
{
	/* the table holds 0 then the normals from 2^-30: no subnormals */
	CHECK_EQ(check_format(spyre_f32_to_dlf16, spyre_dlf16_to_f32, 0x7e00,
			      ldexp(1, 31 - 9), false), 0);
}

TEST(float_dlf16_edge_cases)
{
	CHECK_EQ(spyre_f32_to_dlf16(1.0f), 31 << 9);
	CHECK_EQ(spyre_dlf16_to_f32(31 << 9), 1.0f);
	CHECK_EQ(spyre_f32_to_dlf16(-2.0f), 0x8000 | 32 << 9);
	CHECK_EQ(spyre_dlf16_to_f32(0x7dff), ldexpf(2 - ldexpf(1, -9), 31));	/* max finite */
	CHECK_EQ(spyre_f32_to_dlf16(ldexpf(1, 32)), 0x7e00);			/* overflow: inf */
	CHECK_EQ(spyre_f32_to_dlf16(INFINITY), 0x7e00);
	CHECK_EQ(spyre_f32_to_dlf16(-INFINITY), 0xfe00);
	CHECK(isinf(spyre_dlf16_to_f32(0x7e00)));
	CHECK(isnan(spyre_dlf16_to_f32(spyre_f32_to_dlf16(NAN))));
	CHECK_EQ(spyre_f32_to_dlf16(ldexpf(1, -30)), 1 << 9);			/* min normal */
	CHECK_EQ(spyre_f32_to_dlf16(ldexpf(1, -31)), 0);			/* tie: to zero */
	CHECK_EQ(spyre_f32_to_dlf16(-ldexpf(1, -31) * 1.01f), 0x8000 | 1 << 9);	/* no subnormals */
	CHECK_EQ(spyre_f32_to_dlf16(ldexpf(1, -31) * 0.99f), 0);
	CHECK_EQ(spyre_f32_to_dlf16(ldexpf(1, -30) * (2 - ldexpf(1, -11))), 2 << 9); /* carry */
	CHECK_EQ(spyre_f32_to_dlf16(1.0f + ldexpf(1, -10)), 31 << 9);		/* tie to even */
	CHECK_EQ(spyre_f32_to_dlf16(1.0f + 3 * ldexpf(1, -10)), 31 << 9 | 2);
	CHECK_EQ(spyre_f32_to_dlf16(-0.0f), 0x8000);
	/* every finite DLFloat16 round-trips */
	{
		unsigned int i, bad = 0;

		for (i = 1 << 9; i < 0x7e00; i++)
			bad += spyre_f32_to_dlf16(spyre_dlf16_to_f32((uint16_t)i)) != i;
		CHECK_EQ(bad, 0);
	}
}

TEST(float_int_conversions)
{
	CHECK_EQ(spyre_f32_to_int8(127.4f), 127);
	CHECK_EQ(spyre_f32_to_int8(127.6f), 127);
	CHECK_EQ(spyre_f32_to_int8(-128.6f), -128);
	CHECK_EQ((uint8_t)spyre_f32_to_int8(-0.5f), 0);
	CHECK_EQ((uint8_t)spyre_f32_to_int8(-1.5f), (uint8_t)-2);
	CHECK_EQ(spyre_f32_to_int8(NAN), 0);
	CHECK_EQ(spyre_f32_to_int8(INFINITY), 127);
	CHECK_EQ((uint32_t)spyre_f32_to_int32(-INFINITY), 0x80000000u);
	CHECK_EQ(spyre_f32_to_int32(3e9f), 0x7fffffff);
	CHECK_EQ(spyre_f32_to_int32(2.5f), 2);
}

/*
 * The row converters (spyre_load_f32 / spyre_store_f32, SIMD where the host
 * has it) agree bit for bit with the scalar conversions: every 16-bit
 * pattern loaded, NaN payloads included, and fp32 patterns stored (all
 * 65536 top halves with low halves at and around each rounding boundary,
 * plus random ones), at every position of a row and every row length's tail.
 */
TEST(float_row_converters_match_scalar)
{
	static const uint16_t low[] = { 0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x1fff,
					0x2000, 0x3000, 0x5000, 0x7fff, 0x8000, 0x8001, 0xffff };
	static const unsigned int dts[] = { SPYRE_DT_FP16, SPYRE_DT_BF16, SPYRE_DT_DLF16 };
	size_t n = 65536 * (sizeof(low) / sizeof(low[0]) + 1), i, bad = 0, len;
	float *f = malloc(n * 4), *back = malloc(65536 * 4);
	uint8_t *h = malloc(n * 2), *p16 = malloc(65536 * 2);
	unsigned int d, s = 7;

	CHECK(f && back && h && p16);
	if (!f || !back || !h || !p16)
		goto out;
	for (i = 0; i < 65536; i++) {
		p16[2 * i] = (uint8_t)i;
		p16[2 * i + 1] = (uint8_t)(i >> 8);
	}
	for (i = 0; i < n; i++) {
		s = s * 1664525u + 1013904223u;
		f[i] = u2f(i < 65536 * (sizeof(low) / sizeof(low[0])) ?
				   (uint32_t)(i % 65536) << 16 | low[i / 65536] : s);
	}
	for (d = 0; d < 3; d++) {
		uint16_t (*enc)(float) = d == 0 ? spyre_f32_to_fp16 :
					 d == 1 ? spyre_f32_to_bf16 : spyre_f32_to_dlf16;
		float (*dec)(uint16_t) = d == 0 ? spyre_fp16_to_f32 :
					 d == 1 ? spyre_bf16_to_f32 : spyre_dlf16_to_f32;

		/* odd offsets and lengths: the vector body and the scalar tail */
		for (len = 65536; len > 65520; len -= 3) {
			spyre_load_f32(back, p16 + 2 * (65536 - len), dts[d], len);
			for (i = 0; i < len; i++)
				bad += f2u(back[i]) != f2u(dec((uint16_t)(65536 - len + i)));
		}
		spyre_store_f32(h, f, dts[d], n);
		for (i = 0; i < n; i++)
			bad += (uint16_t)(h[2 * i] | h[2 * i + 1] << 8) != enc(f[i]);
		spyre_store_f32(h, f + 5, dts[d], 11);
		for (i = 0; i < 11; i++)
			bad += (uint16_t)(h[2 * i] | h[2 * i + 1] << 8) != enc(f[5 + i]);
	}
	CHECK_EQ(bad, 0);
out:
	free(f);
	free(back);
	free(h);
	free(p16);
}

/*
 * The one-pass convert-and-transpose gives what converting row by row and
 * transposing gives, bit for bit, with a row stride wider than the rows
 * and ragged edges (or it declines, on hosts without the path).
 */
TEST(float_load_transposed_matches_rows)
{
	enum { R = 21, C = 35, LD = 40 };
	static const unsigned int dts[] = { SPYRE_DT_FP16, SPYRE_DT_BF16 };
	static uint8_t src[R * LD * 2];
	static float t[C * R], row[C];
	unsigned int d, i, j, bad = 0;

	for (i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 151u + (i >> 7) * 13u);
	for (d = 0; d < 2; d++) {
		memset(t, 0, sizeof(t));
		if (!spyre_load_f32_transposed(t, src, dts[d], R, C, LD))
			continue;
		for (i = 0; i < R; i++) {
			spyre_load_f32(row, src + 2 * i * LD, dts[d], C);
			for (j = 0; j < C; j++)
				bad += f2u(t[j * R + i]) != f2u(row[j]);
		}
	}
	CHECK_EQ(bad, 0);
	CHECK(!spyre_load_f32_transposed(t, src, SPYRE_DT_FP32, 2, 2, 2));
}
