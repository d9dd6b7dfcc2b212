// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Number formats of the Spyre card. Everything rounds to nearest, ties to
 * even; NaN stays NaN (quiet), infinities stay infinite.
 *
 * DLFloat16 (IBM's deep-learning 16-bit format, 1 sign / 6 exponent / 9
 * fraction bits, exponent bias 31) has no subnormals: values below the
 * smallest normal 2^-30 round to the nearer of zero and 2^-30 (a tie goes
 * to zero), keeping their sign. Exponent 63 with
 * fraction 0 is infinity, with any other fraction NaN (IEEE-like; IBM's
 * hardware merges the two, see Documentation/spyre-card.rst).
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "spyre_float.h"
#include "spyre_isa.h"

static uint32_t f2u(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static float u2f(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

/* Round @v right by @shift bits (1..31), ties to even. */
static uint32_t rne_shift(uint32_t v, unsigned int shift)
{
	uint32_t q = v >> shift, rem = v & ((1u << shift) - 1), half = 1u << (shift - 1);

	if (rem > half || (rem == half && (q & 1)))
		q++;
	return q;
}

uint16_t spyre_f32_to_fp16(float f)
{
	uint32_t x = f2u(f), sign = (x >> 16) & 0x8000, exp = (x >> 23) & 0xff;
	uint32_t man = x & 0x7fffff;
	int e = (int)exp - 127 + 15;

	if (exp == 0xff)
		return sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0);
	if (e >= 31)
		return sign | 0x7c00;
	if (e <= 0) {
		if (e < -10)
			return sign;
		/* subnormal: may round up into the smallest normal, correctly */
		return sign | rne_shift(man | 0x800000, 14 - e);
	}
	/* a carry out of the fraction bumps the exponent, up to infinity */
	return sign | rne_shift((uint32_t)e << 23 | man, 13);
}

float spyre_fp16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;

	if (exp == 0x1f)
		return u2f(sign | 0x7f800000 | man << 13 | (man ? 0x400000 : 0));
	if (exp == 0) {
		float v = ldexpf((float)man, -24);

		return sign ? -v : v;
	}
	return u2f(sign | (exp + 112) << 23 | man << 13);
}

uint16_t spyre_f32_to_bf16(float f)
{
	uint32_t x = f2u(f);

	if ((x & 0x7fffffff) > 0x7f800000)
		return (x >> 16) | 0x40;
	return rne_shift(x & 0x7fffffff, 16) | ((x >> 16) & 0x8000);
}

float spyre_bf16_to_f32(uint16_t h)
{
	return u2f((uint32_t)h << 16);
}

uint16_t spyre_f32_to_dlf16(float f)
{
	uint32_t x = f2u(f), sign = (x >> 16) & 0x8000, exp = (x >> 23) & 0xff;
	uint32_t man = x & 0x7fffff;
	int32_t r;

	if (exp == 0xff)
		return sign | 0x7e00 | (man ? 0x100 : 0);	/* NaN or infinity */
	if (exp == 0)
		return sign;		/* fp32 zero or subnormal: far below 2^-31 */
	/* rounded exponent/fraction, exponent possibly <= 0 before the flush */
	r = ((int32_t)exp - 127 + 31) * 512 + (int32_t)rne_shift(man, 14);
	if (r < 512)	/* below the smallest normal: round to 0 or 2^-30, tie to 0 */
		return sign | (fabsf(f) > 0x1p-31f ? 1u << 9 : 0);
	if (r >= 63 * 512)
		return sign | 0x7e00;
	return sign | (uint32_t)r;
}

float spyre_dlf16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 9) & 0x3f, man = h & 0x1ff;

	if (exp == 0)
		return u2f(sign);
	if (exp == 63)
		return u2f(sign | 0x7f800000 | (man ? 0x400000 | man << 14 : 0));
	return u2f(sign | (exp - 31 + 127) << 23 | man << 14);
}

int8_t spyre_f32_to_int8(float f)
{
	if (isnan(f))
		return 0;
	f = nearbyintf(f);
	if (f > 127.0f)
		return 127;
	if (f < -128.0f)
		return -128;
	return (int8_t)f;
}

int32_t spyre_f32_to_int32(float f)
{
	if (isnan(f))
		return 0;
	f = nearbyintf(f);
	if (f >= 2147483648.0f)
		return INT32_MAX;
	if (f < -2147483648.0f)
		return INT32_MIN;
	return (int32_t)f;
}

size_t spyre_dtype_size(unsigned int dtype)
{
	static const uint8_t size[SPYRE_DT_COUNT] = { 4, 2, 2, 2, 1, 4, 8 };

	return dtype < SPYRE_DT_COUNT ? size[dtype] : 0;
}

/*
 * Decoding 16-bit floats is on the hot path of every matmul tile: use a
 * table per format, filled on first use (idempotent, so a race between two
 * first users only writes the same values twice).
 */
static float fp16_table[65536], dlf16_table[65536];
static int tables_ready;

static void init_tables(void)
{
	uint32_t i;

	if (__atomic_load_n(&tables_ready, __ATOMIC_ACQUIRE))
		return;
	for (i = 0; i < 65536; i++) {
		fp16_table[i] = spyre_fp16_to_f32((uint16_t)i);
		dlf16_table[i] = spyre_dlf16_to_f32((uint16_t)i);
	}
	__atomic_store_n(&tables_ready, 1, __ATOMIC_RELEASE);
}

static void load_table(float *dst, const uint8_t *src, const float *table, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		dst[i] = table[src[2 * i] | src[2 * i + 1] << 8];
}

/*
 * x86 hosts with F16C convert eight fp16 values per instruction. Both
 * directions are exact IEEE conversions that round to nearest even, quiet
 * a signalling NaN by setting the top fraction bit and keep (load) or
 * truncate (store) the payload, ignoring MXCSR's DAZ/FTZ: bit for bit what
 * spyre_fp16_to_f32 and spyre_f32_to_fp16 compute (test_float.c compares
 * them over every fp16 pattern and a sweep of fp32 ones).
 */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_F16C_PATH 1

__attribute__((target("avx,f16c"))) static size_t load_fp16_f16c(float *dst, const uint8_t *src,
								 size_t n)
{
	size_t i;

	for (i = 0; i + 8 <= n; i += 8)
		_mm256_storeu_ps(dst + i,
				 _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + 2 * i))));
	return i;
}

__attribute__((target("avx,f16c"))) static size_t store_fp16_f16c(uint8_t *dst, const float *src,
								  size_t n)
{
	size_t i;

	for (i = 0; i + 8 <= n; i += 8)
		_mm_storeu_si128((__m128i *)(dst + 2 * i),
				 _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
	return i;
}

static int f16c_state;	/* 0: not asked yet, 1: present, -1: absent */

static bool have_f16c(void)
{
	int s = __atomic_load_n(&f16c_state, __ATOMIC_RELAXED);

	if (!s) {
		__builtin_cpu_init();
		s = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx") ? 1 : -1;
		__atomic_store_n(&f16c_state, s, __ATOMIC_RELAXED);
	}
	return s > 0;
}
#endif

/* bfloat16 is the top half of fp32: the loops vectorise as plain shifts. */
static void load_bf16(float *restrict dst, const uint8_t *restrict src, size_t n)
{
	size_t i;
	uint16_t h;

	for (i = 0; i < n; i++) {
		memcpy(&h, src + 2 * i, 2);
		dst[i] = spyre_bf16_to_f32(h);
	}
}

void spyre_load_f32(float *dst, const uint8_t *src, unsigned int dtype, size_t n)
{
	size_t i = 0;
	int32_t w;

	init_tables();
	switch (dtype) {
	case SPYRE_DT_FP32:
		memcpy(dst, src, n * 4);
		break;
	case SPYRE_DT_FP16:
#ifdef HAVE_F16C_PATH
		if (have_f16c())
			i = load_fp16_f16c(dst, src, n);
#endif
		load_table(dst + i, src + 2 * i, fp16_table, n - i);
		break;
	case SPYRE_DT_BF16:
		load_bf16(dst, src, n);
		break;
	case SPYRE_DT_DLF16:
		load_table(dst, src, dlf16_table, n);
		break;
	case SPYRE_DT_INT8:
		for (i = 0; i < n; i++)
			dst[i] = (float)(int8_t)src[i];
		break;
	case SPYRE_DT_INT32:
		for (i = 0; i < n; i++) {
			memcpy(&w, src + 4 * i, 4);
			dst[i] = (float)w;
		}
		break;
	}
}

void spyre_store_f32(uint8_t *dst, const float *src, unsigned int dtype, size_t n)
{
	size_t i = 0;
	uint16_t h;
	int32_t w;

	/* one loop per type: the type is the same for the whole row */
	switch (dtype) {
	case SPYRE_DT_FP32:
		memcpy(dst, src, n * 4);
		break;
	case SPYRE_DT_FP16:
#ifdef HAVE_F16C_PATH
		if (have_f16c())
			i = store_fp16_f16c(dst, src, n);
#endif
		for (; i < n; i++) {
			h = spyre_f32_to_fp16(src[i]);
			memcpy(dst + 2 * i, &h, 2);
		}
		break;
	case SPYRE_DT_BF16:
		for (i = 0; i < n; i++) {
			h = spyre_f32_to_bf16(src[i]);
			memcpy(dst + 2 * i, &h, 2);
		}
		break;
	case SPYRE_DT_DLF16:
		for (i = 0; i < n; i++) {
			h = spyre_f32_to_dlf16(src[i]);
			memcpy(dst + 2 * i, &h, 2);
		}
		break;
	case SPYRE_DT_INT8:
		for (i = 0; i < n; i++)
			dst[i] = (uint8_t)spyre_f32_to_int8(src[i]);
		break;
	case SPYRE_DT_INT32:
		for (i = 0; i < n; i++) {
			w = spyre_f32_to_int32(src[i]);
			memcpy(dst + 4 * i, &w, 4);
		}
		break;
	}
}
