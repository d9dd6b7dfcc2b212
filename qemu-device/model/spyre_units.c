// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Spyre card model: what the functional units of one core compute. Every
 * access is checked first (scratchpad bounds, argument slot or workspace
 * bounds, element alignment), so a bad instruction fails its job with
 * SPYRE_CMD_ERR_BOUNDS / _PROGRAM and never touches memory it was not given.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "spyre_exec.h"
#include "spyre_float.h"
#include "spyre_hw.h"
#include "spyre_mmu.h"

/*
 * The PE's float summation order is part of the card's definition (see
 * card_unit_pe): no build may contract a multiply and an add into one
 * rounding.
 */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#define SP_BYTES	SPYRE_MODEL_SCRATCHPAD_BYTES

static uint8_t *scratchpad(struct card_exec *e, unsigned int core)
{
	return card_exec_scratchpad(e, core);
}

/* Bytes spanned by @rows rows of @row_bytes, @stride apart; false on overflow. */
static bool span(uint64_t rows, uint64_t stride, uint64_t row_bytes, uint64_t *out)
{
	uint64_t a;

	if (__builtin_mul_overflow(rows - 1, stride, &a) ||
	    __builtin_add_overflow(a, row_bytes, out))
		return false;
	return true;
}

static bool in_range(uint64_t off, uint64_t len, uint64_t size)
{
	return len <= size && off <= size - len;
}

/* [off, off + rows strided rows of cols elements of @esize) in the scratchpad. */
static bool sp_ok(uint64_t off, uint64_t rows, uint64_t stride, uint64_t cols, size_t esize)
{
	uint64_t len;

	if (off % esize)
		return false;
	return span(rows, stride * esize, cols * esize, &len) && in_range(off, len, SP_BYTES);
}

/* LOAD with GATHER: rows at indices read from the scratchpad (checked first). */
static uint32_t lsu_gather(struct card_exec *e, unsigned int core, const struct card_bind *b,
			   const struct spyre_insn_mem *mm, uint8_t *sp)
{
	uint64_t slot_addr, slot_len, len, off;
	uint32_t r;
	int32_t idx;

	slot_addr = mm->slot == SPYRE_ISA_SLOT_WS ? b->ws_addr : b->slot_addr[mm->slot];
	slot_len = mm->slot == SPYRE_ISA_SLOT_WS ? b->ws_len : b->slot_len[mm->slot];
	if (!span(mm->rows, mm->sp_row_stride, mm->row_bytes, &len) ||
	    !in_range(mm->sp_off, len, SP_BYTES))
		return SPYRE_CMD_ERR_BOUNDS;
	for (r = 0; r < mm->rows; r++) {
		memcpy(&idx, sp + mm->core_stride2 + 4ull * r, 4);
		if (idx < 0 || __builtin_mul_overflow((uint64_t)idx, mm->mem_row_stride, &off) ||
		    __builtin_add_overflow(off, mm->mem_off, &off) ||
		    !in_range(off, mm->row_bytes, slot_len))
			return SPYRE_CMD_ERR_BOUNDS;
	}
	card_sp_dirty(e, core, mm->sp_off, len);
	for (r = 0; r < mm->rows; r++) {
		memcpy(&idx, sp + mm->core_stride2 + 4ull * r, 4);
		off = mm->mem_off + (uint64_t)idx * mm->mem_row_stride;
		if (b->va) {	/* through the MMU (1.10) */
			uint32_t st = card_va_rows(b->va, true, slot_addr + off, 0,
						   sp + mm->sp_off + (uint64_t)r * mm->sp_row_stride,
						   0, 1, mm->row_bytes, &e->fault_space,
						   &e->fault_addr);

			if (st != SPYRE_CMD_OK)
				return st;
			continue;
		}
		memmove(sp + mm->sp_off + (uint64_t)r * mm->sp_row_stride,
			b->devmem + slot_addr + off, mm->row_bytes);
	}
	return SPYRE_CMD_OK;
}

uint32_t card_unit_lsu(struct card_exec *e, const struct card_bind *b,
			const struct spyre_insn *in, unsigned int core, unsigned int rank)
{
	const struct spyre_insn_mem *mm = &in->u.mem;
	/* core_div 0: rank * core_stride; else split the rank in two dimensions */
	unsigned int div = mm->core_div ? mm->core_div : UINT32_MAX;
	uint64_t base, len, slot_addr, slot_len, a, c2, r;
	uint8_t *sp = scratchpad(e, core);

	if (!sp)
		return SPYRE_CMD_ERR_PROGRAM;
	if (in->flags & SPYRE_LOAD_GATHER)
		return lsu_gather(e, core, b, mm, sp);
	if (mm->slot == SPYRE_ISA_SLOT_WS) {
		slot_addr = b->ws_addr;
		slot_len = b->ws_len;
	} else {
		slot_addr = b->slot_addr[mm->slot];
		slot_len = b->slot_len[mm->slot];
	}
	if (__builtin_mul_overflow((uint64_t)(rank % div), mm->core_stride, &a) ||
	    __builtin_mul_overflow((uint64_t)(rank / div), mm->core_stride2, &c2) ||
	    __builtin_add_overflow(a, c2, &a) || __builtin_add_overflow(a, mm->mem_off, &base) ||
	    !span(mm->rows, mm->mem_row_stride, mm->row_bytes, &len) ||
	    !in_range(base, len, slot_len)) {
		e->fault_space = SPYRE_FAULT_SPACE_DEVMEM;
		e->fault_addr = slot_addr + mm->mem_off;
		return SPYRE_CMD_ERR_BOUNDS;
	}
	if (!span(mm->rows, mm->sp_row_stride, mm->row_bytes, &len) ||
	    !in_range(mm->sp_off, len, SP_BYTES)) {
		e->fault_space = SPYRE_FAULT_SPACE_SCRATCHPAD;
		e->fault_addr = mm->sp_off;
		return SPYRE_CMD_ERR_BOUNDS;
	}
	e->lsu_addr = slot_addr + base;	/* for the timing: sticks touched */
	if (card_hazard_access(e, core, mm->sp_off, mm->rows, mm->sp_row_stride, mm->row_bytes,
				in->op == SPYRE_I_LOAD))
		return SPYRE_CMD_ERR_PROGRAM;
	if (b->va)	/* through the MMU (1.10) */
		return card_va_rows(b->va, in->op == SPYRE_I_LOAD, slot_addr + base,
				    mm->mem_row_stride, sp + mm->sp_off, mm->sp_row_stride, mm->rows,
				    mm->row_bytes, &e->fault_space, &e->fault_addr);
	for (r = 0; r < mm->rows; r++) {
		uint8_t *mem = b->devmem + slot_addr + base + r * mm->mem_row_stride;
		uint8_t *s = sp + mm->sp_off + r * mm->sp_row_stride;

		if (in->op == SPYRE_I_LOAD)
			memmove(s, mem, mm->row_bytes);
		else
			memmove(mem, s, mm->row_bytes);
	}
	return SPYRE_CMD_OK;
}

static float *staging(struct card_exec *e, unsigned int i, size_t n)
{
	if (e->tmp_len[i] < n) {
		float *p = realloc(e->tmp[i], n * sizeof(float));

		if (!p)
			return NULL;
		e->tmp[i] = p;
		e->tmp_len[i] = n;
	}
	return e->tmp[i];
}

/* Gather a rows x cols matrix (row stride ld elements) as dense fp32. */
static void gather(float *dst, const uint8_t *src, unsigned int dt, uint32_t rows,
		   uint32_t cols, uint32_t ld)
{
	size_t es = spyre_dtype_size(dt);
	uint32_t r;

	if (ld == cols) {	/* dense rows: one conversion */
		spyre_load_f32(dst, src, dt, (size_t)rows * cols);
		return;
	}
	for (r = 0; r < rows; r++)
		spyre_load_f32(dst + (size_t)r * cols, src + (size_t)r * ld * es, dt, cols);
}

/*
 * C[m x n] += A[m x k] * B[k x n], dense rows. Every C[i][j] receives its
 * products in ascending p, each product and each sum rounded to fp32: the
 * card's order. Blocks of 4 rows x 128 columns of C stay in L1 while p
 * runs over all of K, each B row segment loaded once for the 4 rows; the
 * j loop vectorises. No loop reorders the p sum of any element.
 */
#define GEMM_JB 128

/* GCC vectorises only from -O3 by default; element results do not change. */
#if defined(__GNUC__) && !defined(__clang__)
#define VECTORIZE __attribute__((optimize("tree-vectorize", "fp-contract=off")))
#else
#define VECTORIZE
#endif

/*
 * The kernels are written once (always inlined) and compiled twice: for
 * the baseline ISA and, on x86 hosts that have it, for AVX2, picked at run
 * time. Vector width changes only how many j are computed at once; each
 * element's products and sums are the same fp32 operations in the same
 * order (no FMA: the target does not enable it, and contraction is off).
 */
static inline __attribute__((always_inline)) void
gemm_rows4(uint32_t n, uint32_t k, uint32_t jn, const float *restrict a, const float *restrict b,
	   float *restrict c)
{
	float *restrict c0 = c, *restrict c1 = c + n, *restrict c2 = c + 2 * (size_t)n;
	float *restrict c3 = c + 3 * (size_t)n;
	uint32_t p, j;

	for (p = 0; p < k; p++) {
		const float *restrict br = b + (size_t)p * n;
		const float a0 = a[p], a1 = a[k + p], a2 = a[2 * (size_t)k + p];
		const float a3 = a[3 * (size_t)k + p];

		for (j = 0; j < jn; j++) {
			const float bv = br[j];

			c0[j] += a0 * bv;
			c1[j] += a1 * bv;
			c2[j] += a2 * bv;
			c3[j] += a3 * bv;
		}
	}
}

static inline __attribute__((always_inline)) void
gemm_row1(uint32_t n, uint32_t k, uint32_t jn, const float *restrict a, const float *restrict b,
	  float *restrict c)
{
	uint32_t p, j;

	for (p = 0; p < k; p++) {
		const float *restrict br = b + (size_t)p * n;
		const float av = a[p];

		for (j = 0; j < jn; j++)
			c[j] += av * br[j];
	}
}

static inline __attribute__((always_inline)) void
gemm_nn_body(uint32_t m, uint32_t n, uint32_t k, const float *restrict a,
	     const float *restrict b, float *restrict c)
{
	uint32_t i, j0, jn;

	for (j0 = 0; j0 < n; j0 += GEMM_JB) {
		jn = n - j0 < GEMM_JB ? n - j0 : GEMM_JB;
		for (i = 0; i + 4 <= m; i += 4)
			gemm_rows4(n, k, jn, a + (size_t)i * k, b + j0, c + (size_t)i * n + j0);
		for (; i < m; i++)
			gemm_row1(n, k, jn, a + (size_t)i * k, b + j0, c + (size_t)i * n + j0);
	}
}

VECTORIZE static void gemm_nn_base(uint32_t m, uint32_t n, uint32_t k, const float *restrict a,
				   const float *restrict b, float *restrict c)
{
	gemm_nn_body(m, n, k, a, b, c);
}

#if defined(__x86_64__) && defined(__GNUC__)
/*
 * AVX2 micro-kernels: a block of C lives in registers while p runs over
 * all of K, so each step is loads of B, broadcasts of A, multiplies and
 * adds, and no C traffic. Each register lane is one C element that gets
 * c + a * b, rounded twice, in ascending p: the same operations as the
 * plain loops (no FMA instruction is used).
 */
__attribute__((target("avx2"))) static inline void
gemm_4x16_avx2(uint32_t n, uint32_t k, const float *restrict a, const float *restrict b,
	       float *restrict c)
{
	__m256 c00 = _mm256_loadu_ps(c), c01 = _mm256_loadu_ps(c + 8);
	__m256 c10 = _mm256_loadu_ps(c + n), c11 = _mm256_loadu_ps(c + n + 8);
	__m256 c20 = _mm256_loadu_ps(c + 2 * (size_t)n), c21 = _mm256_loadu_ps(c + 2 * (size_t)n + 8);
	__m256 c30 = _mm256_loadu_ps(c + 3 * (size_t)n), c31 = _mm256_loadu_ps(c + 3 * (size_t)n + 8);
	__m256 b0, b1, av;
	uint32_t p;

	for (p = 0; p < k; p++) {
		b0 = _mm256_loadu_ps(b + (size_t)p * n);
		b1 = _mm256_loadu_ps(b + (size_t)p * n + 8);
		av = _mm256_broadcast_ss(a + p);
		c00 = _mm256_add_ps(c00, _mm256_mul_ps(av, b0));
		c01 = _mm256_add_ps(c01, _mm256_mul_ps(av, b1));
		av = _mm256_broadcast_ss(a + k + p);
		c10 = _mm256_add_ps(c10, _mm256_mul_ps(av, b0));
		c11 = _mm256_add_ps(c11, _mm256_mul_ps(av, b1));
		av = _mm256_broadcast_ss(a + 2 * (size_t)k + p);
		c20 = _mm256_add_ps(c20, _mm256_mul_ps(av, b0));
		c21 = _mm256_add_ps(c21, _mm256_mul_ps(av, b1));
		av = _mm256_broadcast_ss(a + 3 * (size_t)k + p);
		c30 = _mm256_add_ps(c30, _mm256_mul_ps(av, b0));
		c31 = _mm256_add_ps(c31, _mm256_mul_ps(av, b1));
	}
	_mm256_storeu_ps(c, c00);
	_mm256_storeu_ps(c + 8, c01);
	_mm256_storeu_ps(c + n, c10);
	_mm256_storeu_ps(c + n + 8, c11);
	_mm256_storeu_ps(c + 2 * (size_t)n, c20);
	_mm256_storeu_ps(c + 2 * (size_t)n + 8, c21);
	_mm256_storeu_ps(c + 3 * (size_t)n, c30);
	_mm256_storeu_ps(c + 3 * (size_t)n + 8, c31);
}

__attribute__((target("avx2"))) static inline void
gemm_1x32_avx2(uint32_t n, uint32_t k, const float *restrict a, const float *restrict b,
	       float *restrict c)
{
	__m256 c0 = _mm256_loadu_ps(c), c1 = _mm256_loadu_ps(c + 8);
	__m256 c2 = _mm256_loadu_ps(c + 16), c3 = _mm256_loadu_ps(c + 24), av;
	uint32_t p;

	for (p = 0; p < k; p++) {
		const float *br = b + (size_t)p * n;

		av = _mm256_broadcast_ss(a + p);
		c0 = _mm256_add_ps(c0, _mm256_mul_ps(av, _mm256_loadu_ps(br)));
		c1 = _mm256_add_ps(c1, _mm256_mul_ps(av, _mm256_loadu_ps(br + 8)));
		c2 = _mm256_add_ps(c2, _mm256_mul_ps(av, _mm256_loadu_ps(br + 16)));
		c3 = _mm256_add_ps(c3, _mm256_mul_ps(av, _mm256_loadu_ps(br + 24)));
	}
	_mm256_storeu_ps(c, c0);
	_mm256_storeu_ps(c + 8, c1);
	_mm256_storeu_ps(c + 16, c2);
	_mm256_storeu_ps(c + 24, c3);
}

VECTORIZE __attribute__((target("avx2"))) static void
gemm_nn_avx2(uint32_t m, uint32_t n, uint32_t k, const float *restrict a, const float *restrict b,
	     float *restrict c)
{
	uint32_t i, j;

	for (i = 0; i + 4 <= m; i += 4) {
		for (j = 0; j + 16 <= n; j += 16)
			gemm_4x16_avx2(n, k, a + (size_t)i * k, b + j, c + (size_t)i * n + j);
		if (j < n)
			gemm_rows4(n, k, n - j, a + (size_t)i * k, b + j, c + (size_t)i * n + j);
	}
	for (; i < m; i++) {
		for (j = 0; j + 32 <= n; j += 32)
			gemm_1x32_avx2(n, k, a + (size_t)i * k, b + j, c + (size_t)i * n + j);
		if (j < n)
			gemm_row1(n, k, n - j, a + (size_t)i * k, b + j, c + (size_t)i * n + j);
	}
}

static int avx2_state;	/* 0: not asked yet, 1: present, -1: absent */

static bool have_avx2(void)
{
	int s = __atomic_load_n(&avx2_state, __ATOMIC_RELAXED);

	if (!s) {
		__builtin_cpu_init();
		s = __builtin_cpu_supports("avx2") ? 1 : -1;
		__atomic_store_n(&avx2_state, s, __ATOMIC_RELAXED);
	}
	return s > 0;
}
#endif

static void gemm_nn(uint32_t m, uint32_t n, uint32_t k, const float *restrict a,
		    const float *restrict b, float *restrict c)
{
#if defined(__x86_64__) && defined(__GNUC__)
	if (have_avx2()) {
		gemm_nn_avx2(m, n, k, a, b, c);
		return;
	}
#endif
	gemm_nn_base(m, n, k, a, b, c);
}

/* dst (cols x rows) = src (rows x cols) transposed, in tiles that stay in L1. */
#define TRANS_TILE 32

static inline __attribute__((always_inline)) void
transpose_scalar(float *restrict dst, const float *restrict src, uint32_t rows, uint32_t cols,
		 uint32_t i0, uint32_t ie, uint32_t j0, uint32_t je)
{
	uint32_t i, j;

	for (j = j0; j < je; j++)
		for (i = i0; i < ie; i++)
			dst[(size_t)j * rows + i] = src[(size_t)i * cols + j];
}

static void transpose_base(float *restrict dst, const float *restrict src, uint32_t rows,
			   uint32_t cols)
{
	uint32_t i0, j0;

	for (i0 = 0; i0 < rows; i0 += TRANS_TILE)
		for (j0 = 0; j0 < cols; j0 += TRANS_TILE)
			transpose_scalar(dst, src, rows, cols, i0,
					 rows - i0 < TRANS_TILE ? rows : i0 + TRANS_TILE, j0,
					 cols - j0 < TRANS_TILE ? cols : j0 + TRANS_TILE);
}

#if defined(__x86_64__) && defined(__GNUC__)
/* The same with AVX: 8x8 blocks through registers (moves bits only). */
__attribute__((target("avx2"))) static void transpose_avx2(float *restrict dst,
							  const float *restrict src,
							  uint32_t rows, uint32_t cols)
{
	uint32_t i0, j0, r8 = rows & ~7u, c8 = cols & ~7u, r;
	__m256 v[8], t[8];

	for (i0 = 0; i0 < r8; i0 += 8) {
		for (j0 = 0; j0 < c8; j0 += 8) {
			for (r = 0; r < 8; r++)
				v[r] = _mm256_loadu_ps(src + (size_t)(i0 + r) * cols + j0);
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
				_mm256_storeu_ps(dst + (size_t)(j0 + r) * rows + i0, t[r]);
		}
	}
	/* the ragged edges */
	transpose_scalar(dst, src, rows, cols, 0, r8, c8, cols);
	transpose_scalar(dst, src, rows, cols, r8, rows, 0, cols);
}
#endif

static void transpose(float *restrict dst, const float *restrict src, uint32_t rows,
		      uint32_t cols)
{
#if defined(__x86_64__) && defined(__GNUC__)
	if (have_avx2()) {
		transpose_avx2(dst, src, rows, cols);
		return;
	}
#endif
	transpose_base(dst, src, rows, cols);
}


/* B as fp32, K x N: converted and transposed in one pass where the host can. */
static const float *operand_b(struct card_exec *e, const struct spyre_insn *in, const uint8_t *sp)
{
	const struct spyre_insn_mm *mm = &in->u.mm;
	bool tb = in->flags & SPYRE_MM_TRANS_B;
	uint32_t brows = tb ? mm->n : mm->k, bcols = tb ? mm->k : mm->n;

	if (tb && spyre_load_f32_transposed(e->tmp[3], sp + mm->b_off, in->dtype, brows, bcols,
					    mm->ldb))
		return e->tmp[3];
	gather(e->tmp[1], sp + mm->b_off, in->dtype, brows, bcols, mm->ldb);
	if (tb) {
		transpose(e->tmp[3], e->tmp[1], brows, bcols);
		return e->tmp[3];
	}
	return e->tmp[1];
}

static void imatmul(const struct spyre_insn_mm *mm, bool tb, bool acc, const uint8_t *a,
		    const uint8_t *b, uint8_t *cb)
{
	uint32_t i, j, p;

	for (i = 0; i < mm->m; i++) {
		for (j = 0; j < mm->n; j++) {
			uint32_t sum = 0;	/* wraps modulo 2^32, as documented */
			int32_t old;
			uint8_t *cp = cb + ((size_t)i * mm->ldc + j) * 4;

			for (p = 0; p < mm->k; p++) {
				int32_t av = (int8_t)a[(size_t)i * mm->lda + p];
				int32_t bv = (int8_t)(tb ? b[(size_t)j * mm->ldb + p] :
							   b[(size_t)p * mm->ldb + j]);

				sum += (uint32_t)(av * bv);
			}
			if (acc) {
				memcpy(&old, cp, 4);
				sum += (uint32_t)old;
			}
			memcpy(cp, &sum, 4);
		}
	}
}

uint32_t card_unit_pe(struct card_exec *e, const struct spyre_insn *in, unsigned int core)
{
	const struct spyre_insn_mm *mm = &in->u.mm;
	bool tb = in->flags & SPYRE_MM_TRANS_B, acc = in->flags & SPYRE_MM_ACC;
	size_t es = spyre_dtype_size(in->dtype);
	uint32_t brows = tb ? mm->n : mm->k, bcols = tb ? mm->k : mm->n;
	uint8_t *sp = scratchpad(e, core);
	float *a, *b, *c;
	uint32_t r;

	if (!sp)
		return SPYRE_CMD_ERR_PROGRAM;
	if (mm->lda < mm->k || mm->ldb < bcols || mm->ldc < mm->n)
		return SPYRE_CMD_ERR_PROGRAM;
	if (!sp_ok(mm->a_off, mm->m, mm->lda, mm->k, es) ||
	    !sp_ok(mm->b_off, brows, mm->ldb, bcols, es) ||
	    !sp_ok(mm->c_off, mm->m, mm->ldc, mm->n, 4))
		return SPYRE_CMD_ERR_BOUNDS;
	if (card_hazard_access(e, core, mm->a_off, mm->m, (uint64_t)mm->lda * es, mm->k * es,
				false) ||
	    card_hazard_access(e, core, mm->b_off, brows, (uint64_t)mm->ldb * es, bcols * es,
				false) ||
	    (acc && card_hazard_access(e, core, mm->c_off, mm->m, (uint64_t)mm->ldc * 4,
					 mm->n * 4, false)) ||
	    card_hazard_access(e, core, mm->c_off, mm->m, (uint64_t)mm->ldc * 4, mm->n * 4,
				true))
		return SPYRE_CMD_ERR_PROGRAM;
	if (in->dtype == SPYRE_DT_INT8) {
		imatmul(mm, tb, acc, sp + mm->a_off, sp + mm->b_off, sp + mm->c_off);
		return SPYRE_CMD_OK;
	}
	a = staging(e, 0, (size_t)mm->m * mm->k);
	b = staging(e, 1, (size_t)brows * bcols);
	c = staging(e, 2, (size_t)mm->m * mm->n);
	if (!a || !b || !c || (tb && !staging(e, 3, (size_t)brows * bcols)))
		return SPYRE_CMD_ERR_PROGRAM;
	gather(a, sp + mm->a_off, in->dtype, mm->m, mm->k, mm->lda);
	if (acc)
		gather(c, sp + mm->c_off, SPYRE_DT_FP32, mm->m, mm->n, mm->ldc);
	else
		memset(c, 0, (size_t)mm->m * mm->n * sizeof(float));
	gemm_nn(mm->m, mm->n, mm->k, a, operand_b(e, in, sp), c);
	for (r = 0; r < mm->m; r++)
		memcpy(sp + mm->c_off + (size_t)r * mm->ldc * 4, c + (size_t)r * mm->n,
		       (size_t)mm->n * 4);
	return SPYRE_CMD_OK;
}
