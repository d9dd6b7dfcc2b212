// SPDX-License-Identifier: MIT
/*
 * Builders of the small card programs in kernels.h. Each core handles a
 * contiguous share of the vector in tiles of at most TILE values, moving
 * data with the load/store unit and computing on the vector unit, ordered
 * by data tokens.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "spyre_isa.h"

#define TILE 16384u	/* fp32 values per core per step: 64 KiB of scratchpad */

struct prog {
	struct spyre_prog_header h;
	struct spyre_insn *in;
	uint32_t n, cap;
};

static struct spyre_insn *emit(struct prog *p, uint8_t op, uint32_t mask, uint16_t wait,
			       uint16_t signal)
{
	struct spyre_insn *i;

	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 64;
		p->in = realloc(p->in, p->cap * sizeof(*p->in));
	}
	i = &p->in[p->n++];
	memset(i, 0, sizeof(*i));
	i->op = op;
	i->core_mask = mask;
	i->wait = wait;
	i->signal = signal;
	return i;
}

static void mem(struct spyre_insn *i, uint8_t slot, uint64_t off, uint64_t core_stride,
		uint32_t bytes, uint32_t sp_off)
{
	i->u.mem.slot = slot;
	i->u.mem.rows = 1;
	i->u.mem.mem_off = off;
	/* core_div 0: a core's share starts at rank * core_stride */
	i->u.mem.core_stride = core_stride;
	i->u.mem.mem_row_stride = bytes;
	i->u.mem.row_bytes = bytes;
	i->u.mem.sp_off = sp_off;
	i->u.mem.sp_row_stride = bytes;
}

static void vec(struct spyre_insn *i, uint8_t func, uint32_t cols, uint32_t s0, uint32_t s1,
		uint32_t d)
{
	i->dtype = SPYRE_DT_FP32;
	i->dtype_out = SPYRE_DT_FP32;
	i->u.vec.func = func;
	i->u.vec.rows = 1;
	i->u.vec.cols = cols;
	i->u.vec.src0_off = s0;
	i->u.vec.src0_stride = cols;
	i->u.vec.src1_off = s1;
	i->u.vec.src1_stride = cols;
	i->u.vec.dst_off = d;
	i->u.vec.dst_stride = cols;
}

static uint32_t fbits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static void *finish(struct prog *p, uint16_t slots, uint64_t ws, size_t *size)
{
	size_t sz = SPYRE_PROG_HEADER_SIZE + (size_t)p->n * SPYRE_PROG_INSN_SIZE;
	uint8_t *img = malloc(sz);

	p->h.magic = SPYRE_PROG_MAGIC;
	p->h.version = SPYRE_PROG_VERSION;
	p->h.header_size = SPYRE_PROG_HEADER_SIZE;
	p->h.num_insns = p->n;
	p->h.num_slots = slots;
	p->h.workspace_size = ws;
	memcpy(img, &p->h, sizeof(p->h));
	memcpy(img + SPYRE_PROG_HEADER_SIZE, p->in, (size_t)p->n * SPYRE_PROG_INSN_SIZE);
	free(p->in);
	*size = sz;
	return img;
}

/* Cores used for @n values: 32 when they split evenly, else one. */
static uint32_t cores_for(uint64_t n, uint64_t *per_core)
{
	uint32_t c = n % 32 == 0 ? 32 : 1;

	*per_core = n / c;
	return c == 32 ? 0xffffffffu : 1u;
}

static void *scale(uint64_t n, float alpha, float beta, bool via_ws, unsigned int reps,
		   size_t *size)
{
	struct prog p = { 0 };
	uint64_t per, done;
	uint32_t mask = cores_for(n, &per);
	struct spyre_insn *i;
	unsigned int r;

	for (done = 0; done < per; done += TILE) {
		uint32_t t = per - done < TILE ? per - done : TILE;
		uint32_t bytes = t * 4;

		i = emit(&p, SPYRE_I_LOAD, mask, 0, via_ws ? 0 : 1);
		mem(i, 0, done * 4, per * 4, bytes, 0);
		if (via_ws) {
			/* through the workspace: same core share, then back */
			i = emit(&p, SPYRE_I_STORE, mask, 0, 0);
			mem(i, SPYRE_ISA_SLOT_WS, done * 4, per * 4, bytes, 0);
			i = emit(&p, SPYRE_I_LOAD, mask, 0, 1);
			mem(i, SPYRE_ISA_SLOT_WS, done * 4, per * 4, bytes, TILE * 4);
		}
		for (r = 0; r < reps; r++) {
			/* the first pass reads the input, later ones work in place */
			i = emit(&p, SPYRE_I_VEC, mask, r == 0 ? 1 : 0, r == reps - 1 ? 2 : 0);
			vec(i, SPYRE_VF_SCALE, t, r ? 2 * TILE * 4 : via_ws ? TILE * 4 : 0, 0,
			    2 * TILE * 4);
			i->u.vec.imm0 = fbits(alpha);
			i->u.vec.imm1 = fbits(beta);
		}
		i = emit(&p, SPYRE_I_STORE, mask, 2, 0);
		mem(i, 1, done * 4, per * 4, bytes, 2 * TILE * 4);
	}
	return finish(&p, 2, via_ws ? n * 4 : 0, size);
}

void *kern_scale_f32(uint64_t n, float alpha, float beta, size_t *size)
{
	return scale(n, alpha, beta, false, 1, size);
}

void *kern_scale_rep_f32(uint64_t n, float alpha, float beta, unsigned int reps, size_t *size)
{
	return scale(n, alpha, beta, false, reps ? reps : 1, size);
}

void *kern_scale_via_ws_f32(uint64_t n, float alpha, float beta, size_t *size)
{
	return scale(n, alpha, beta, true, 1, size);
}

void *kern_add_f32(uint64_t n, size_t *size)
{
	struct prog p = { 0 };
	uint64_t per, done;
	uint32_t mask = cores_for(n, &per);
	struct spyre_insn *i;

	for (done = 0; done < per; done += TILE) {
		uint32_t t = per - done < TILE ? per - done : TILE;
		uint32_t bytes = t * 4;

		i = emit(&p, SPYRE_I_LOAD, mask, 0, 1);
		mem(i, 0, done * 4, per * 4, bytes, 0);
		i = emit(&p, SPYRE_I_LOAD, mask, 0, 2);
		mem(i, 1, done * 4, per * 4, bytes, TILE * 4);
		i = emit(&p, SPYRE_I_VEC, mask, 1 | 2, 4);
		vec(i, SPYRE_VF_ADD, t, 0, TILE * 4, 2 * TILE * 4);
		i = emit(&p, SPYRE_I_STORE, mask, 4, 0);
		mem(i, 2, done * 4, per * 4, bytes, 2 * TILE * 4);
	}
	return finish(&p, 3, 0, size);
}

void *kern_touch(uint64_t offset, size_t *size)
{
	struct prog p = { 0 };
	struct spyre_insn *i;

	i = emit(&p, SPYRE_I_LOAD, 1, 0, 1);
	mem(i, 0, offset, 0, 128, 0);
	i = emit(&p, SPYRE_I_STORE, 1, 1, 0);
	mem(i, 0, 0, 0, 128, 0);
	return finish(&p, 1, 0, size);
}

void *kern_collect(unsigned int nslots, uint32_t bytes, size_t *size)
{
	struct prog p = { 0 };
	struct spyre_insn *i;
	unsigned int k;

	/* core 0: slot k's bytes -> scratchpad k * bytes -> slot 0 at k * bytes */
	for (k = 1; k < nslots; k++) {
		i = emit(&p, SPYRE_I_LOAD, 1, 0, 1);
		mem(i, (uint8_t)k, 0, 0, bytes, k * bytes);
		i = emit(&p, SPYRE_I_STORE, 1, 1, 0);
		mem(i, 0, (uint64_t)k * bytes, 0, bytes, k * bytes);
	}
	return finish(&p, (uint16_t)nslots, 0, size);
}

void *kern_read_rep(uint64_t bytes_per_core, unsigned int reps, size_t *size)
{
	struct prog p = { 0 };
	struct spyre_insn *i;
	unsigned int r;

	/* Every core streams its share of argument 0 into its scratchpad, @reps times. */
	for (r = 0; r < reps; r++) {
		i = emit(&p, SPYRE_I_LOAD, 0xffffffffu, 0, 0);
		mem(i, 0, 0, bytes_per_core, (uint32_t)bytes_per_core, 0);
	}
	return finish(&p, 1, 0, size);
}

void *kern_matmul_f16(uint32_t m, uint32_t n, uint32_t k, size_t *size)
{
	uint32_t abytes = m * k * 2, bbytes = k * n * 2, cbytes = m * n * 4;
	struct prog p = { 0 };
	struct spyre_insn *i;

	/* One core: A and B in, C = A x B on the PE array, C out. */
	i = emit(&p, SPYRE_I_LOAD, 1, 0, 1);
	mem(i, 0, 0, 0, abytes, 0);
	i = emit(&p, SPYRE_I_LOAD, 1, 0, 2);
	mem(i, 1, 0, 0, bbytes, abytes);
	i = emit(&p, SPYRE_I_MATMUL, 1, 1 | 2, 4);
	i->dtype = SPYRE_DT_FP16;
	i->dtype_out = SPYRE_DT_FP32;
	i->u.mm.m = m;
	i->u.mm.n = n;
	i->u.mm.k = k;
	i->u.mm.a_off = 0;
	i->u.mm.b_off = abytes;
	i->u.mm.c_off = abytes + bbytes;
	i->u.mm.lda = k;
	i->u.mm.ldb = n;
	i->u.mm.ldc = n;
	i = emit(&p, SPYRE_I_STORE, 1, 4, 0);
	mem(i, 2, 0, 0, cbytes, abytes + bbytes);
	return finish(&p, 3, 0, size);
}

void *kern_sum_rows_f32(uint32_t rows, uint32_t cols, size_t *size)
{
	struct prog p = { 0 };
	struct spyre_insn *i;

	i = emit(&p, SPYRE_I_LOAD, 1, 0, 1);
	mem(i, 0, 0, 0, rows * cols * 4, 0);
	i = emit(&p, SPYRE_I_VEC, 1, 1, 2);
	vec(i, SPYRE_VF_SUM_ROW, cols, 0, 0, rows * cols * 4);
	i->u.vec.rows = rows;
	i->u.vec.dst_stride = 1;
	i = emit(&p, SPYRE_I_STORE, 1, 2, 0);
	mem(i, 1, 0, 0, rows * 4, rows * cols * 4);
	return finish(&p, 2, 0, size);
}

void *kern_store_scratchpad(uint32_t bytes, size_t *size)
{
	struct prog p = { 0 };
	struct spyre_insn *i;

	/* Reads scratchpad bytes this program never wrote. */
	i = emit(&p, SPYRE_I_STORE, 1, 0, 0);
	mem(i, 0, 0, 0, bytes, 0);
	return finish(&p, 1, 0, size);
}

void *kern_lsu_busy(unsigned int insns, size_t *size)
{
	struct prog p = { 0 };
	struct spyre_insn *i;
	unsigned int k;

	/*
	 * Each LOAD reads one byte 2^21 times: 2^21 sticks on core 0's ring
	 * port (about 2 ms) but little to emulate, and LPDDR5 only two thirds
	 * busy, so other engines' transfers fit beside it.
	 */
	for (k = 0; k < insns; k++) {
		i = emit(&p, SPYRE_I_LOAD, 1, 0, 0);
		mem(i, 0, 0, 0, 1, 0);
		i->u.mem.rows = 1u << 21;
		i->u.mem.mem_row_stride = 0;
		i->u.mem.sp_row_stride = 0;
	}
	return finish(&p, 1, 0, size);
}

void *kern_scale_racy_f32(uint32_t n, bool with_token, size_t *size)
{
	struct prog p = { 0 };
	struct spyre_insn *i;

	/* Core 0: load x, y = 2x + 1 on the SFU, store y. */
	i = emit(&p, SPYRE_I_LOAD, 1, 0, with_token ? 1 : 0);
	mem(i, 0, 0, 0, n * 4, 0);
	i = emit(&p, SPYRE_I_VEC, 1, with_token ? 1 : 0, 2);	/* without: races the load */
	vec(i, SPYRE_VF_SCALE, n, 0, 0, n * 4);
	i->u.vec.imm0 = fbits(2.0f);
	i->u.vec.imm1 = fbits(1.0f);
	i = emit(&p, SPYRE_I_STORE, 1, 2, 0);
	mem(i, 1, 0, 0, n * 4, n * 4);
	return finish(&p, 2, 0, size);
}
