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

#ifdef HAVE_F16C_PATH
static int avx2_state;	/* as f16c_state */

static bool have_avx2_f16c(void)
{
	int s = __atomic_load_n(&avx2_state, __ATOMIC_RELAXED);

	if (!s) {
		s = have_f16c() && __builtin_cpu_supports("avx2") ? 1 : -1;
		__atomic_store_n(&avx2_state, s, __ATOMIC_RELAXED);
	}
	return s > 0;
}

/* Eight 16-bit values at @p as fp32: F16C for fp16, a shift for bf16. */
__attribute__((target("avx2,f16c"))) static inline __m256 load8(const uint8_t *p, bool bf16)
{
	__m128i h = _mm_loadu_si128((const __m128i *)p);

	if (bf16)
		return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
	return _mm256_cvtph_ps(h);
}

__attribute__((target("avx2,f16c"))) static void
load_t_avx2(float *restrict dst, const uint8_t *restrict src, bool bf16, size_t rows,
	    size_t cols, size_t ld)
{
	size_t i0, j0, r8 = rows & ~(size_t)7, c8 = cols & ~(size_t)7, i, j, r;
	__m256 v[8], t[8];

	for (i0 = 0; i0 < r8; i0 += 8) {
		for (j0 = 0; j0 < c8; j0 += 8) {
			for (r = 0; r < 8; r++)
				v[r] = load8(src + 2 * ((i0 + r) * ld + j0), bf16);
			for (r = 0; r < 8; r += 2) {
				t[r] = _mm256_unpacklo_ps(v[r], v[r + 1]);
				t[r + 1] = _mm256_unpackhi_ps(v[r], v[r + 1]);
			}
			v[0] = _mm256_shuffle_ps(t[0], t[2], 0x44);
			v[1] = _mm256_shuffle_ps(t[0], t[2], 0xee);
			v[2] = _mm256_shuffle_ps(t[1], t[3], 0x44);
			v[3] = _mm256_shuffle_ps(t[1], t[3], 0xee);
			v[4] = _mm256_shuffle_ps(t[4], t[6], 0x44);
			v[5] = _mm256_shuffle_ps(t[4], t[6], 0xee);
			v[6] = _mm256_shuffle_ps(t[5], t[7], 0x44);
			v[7] = _mm256_shuffle_ps(t[5], t[7], 0xee);
			for (r = 0; r < 4; r++) {
				t[r] = _mm256_permute2f128_ps(v[r], v[r + 4], 0x20);
				t[r + 4] = _mm256_permute2f128_ps(v[r], v[r + 4], 0x31);
			}
			for (r = 0; r < 8; r++)
				_mm256_storeu_ps(dst + (j0 + r) * rows + i0, t[r]);
		}
	}
	/* the ragged edges, one element at a time: the same conversions */
	for (i = 0; i < rows; i++) {
		for (j = i < r8 ? c8 : 0; j < cols; j++) {
			uint16_t h = (uint16_t)(src[2 * (i * ld + j)] | src[2 * (i * ld + j) + 1] << 8);

			dst[j * rows + i] = bf16 ? spyre_bf16_to_f32(h) : fp16_table[h];
		}
	}
}
#endif

bool spyre_load_f32_transposed(float *dst, const uint8_t *src, unsigned int dtype, size_t rows,
			       size_t cols, size_t ld)
{
#ifdef HAVE_F16C_PATH
	if ((dtype == SPYRE_DT_FP16 || dtype == SPYRE_DT_BF16) && have_avx2_f16c()) {
		init_tables();
		load_t_avx2(dst, src, dtype == SPYRE_DT_BF16, rows, cols, ld);
		return true;
	}
#endif
	return false;
}

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
