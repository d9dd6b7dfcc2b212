// SPDX-License-Identifier: MIT
/*
 * Program builder: encodes instructions and derives their data tokens (see
 * pbuild.h for the rule).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pbuild.h"

struct range {
	uint32_t lo, hi;	/* [lo, hi) scratchpad bytes; hi == lo: none */
};

struct pinsn {
	struct spyre_insn in;
	uint8_t core, unit;
	struct range rd[3], wr;
	uint32_t grp;		/* LOAD MCAST: 1 + index of the group's first member */
	uint32_t gmask;		/* its cores */
};

struct pb {
	unsigned int ncores;
	struct pinsn *v;
	uint32_t n, cap;
	int err;
};

unsigned int pb_dtype_size(unsigned int dt)
{
	switch (dt) {
	case SPYRE_DT_FP32:
	case SPYRE_DT_INT32:
		return 4;
	case SPYRE_DT_INT64:
		return 8;
	case SPYRE_DT_FP16:
	case SPYRE_DT_BF16:
	case SPYRE_DT_DLF16:
		return 2;
	case SPYRE_DT_INT8:
		return 1;
	}
	return 0;
}

struct pb *pb_new(unsigned int ncores)
{
	struct pb *p = calloc(1, sizeof(*p));

	if (p)
		p->ncores = ncores;
	return p;
}

void pb_free(struct pb *p)
{
	if (p)
		free(p->v);
	free(p);
}

uint32_t pb_count(const struct pb *p)
{
	return p->n;
}

int pb_error(const struct pb *p)
{
	return p->err;
}

static struct pinsn *add(struct pb *p, unsigned int core, uint8_t op, uint8_t unit)
{
	struct pinsn *i;

	if (p->err)
		return NULL;
	if (core >= p->ncores || core >= 32) {
		p->err = -EINVAL;
		return NULL;
	}
	if (p->n == p->cap) {
		uint32_t cap = p->cap ? p->cap * 2 : 256;
		struct pinsn *v = realloc(p->v, cap * sizeof(*v));

		if (!v) {
			p->err = -ENOMEM;
			return NULL;
		}
		p->v = v;
		p->cap = cap;
	}
	i = &p->v[p->n++];
	memset(i, 0, sizeof(*i));
	i->in.op = op;
	i->in.core_mask = 1u << core;
	i->core = (uint8_t)core;
	i->unit = unit;
	return i;
}

/* Bytes spanned by @rows rows of @row_bytes, @stride apart. */
static struct range span(uint32_t off, uint32_t rows, uint32_t stride, uint32_t row_bytes)
{
	struct range r = { off, off };

	if (rows && row_bytes)
		r.hi = off + (rows - 1) * stride + row_bytes;
	return r;
}

static void mem(struct pb *p, unsigned int core, uint8_t op, uint8_t slot, uint64_t mem_off,
		uint32_t rows, uint32_t row_bytes, uint32_t mem_stride, uint32_t sp_off,
		uint32_t sp_stride)
{
	struct pinsn *i = add(p, core, op, SPYRE_UNIT_LSU);
	struct spyre_insn_mem *m;
	struct range r;

	if (!i)
		return;
	m = &i->in.u.mem;
	m->slot = slot;
	m->rows = rows;
	m->mem_off = mem_off;
	m->mem_row_stride = mem_stride;
	m->row_bytes = row_bytes;
	m->sp_off = sp_off;
	m->sp_row_stride = sp_stride;
	r = span(sp_off, rows, sp_stride, row_bytes);
	if (!rows || !row_bytes || r.hi > PB_SP_BYTES)
		p->err = -EINVAL;
	if (op == SPYRE_I_LOAD)
		i->wr = r;
	else
		i->rd[0] = r;
}

void pb_load(struct pb *p, unsigned int core, uint8_t slot, uint64_t mem_off, uint32_t rows,
	     uint32_t row_bytes, uint32_t mem_stride, uint32_t sp_off, uint32_t sp_stride)
{
	mem(p, core, SPYRE_I_LOAD, slot, mem_off, rows, row_bytes, mem_stride, sp_off, sp_stride);
}

void pb_load_mcast(struct pb *p, uint32_t mask, uint8_t slot, uint64_t mem_off, uint32_t rows,
		   uint32_t row_bytes, uint32_t mem_stride, uint32_t sp_off, uint32_t sp_stride)
{
	uint32_t first = p->n, m;

	if (!mask) {
		p->err = -EINVAL;
		return;
	}
	/* one member per core, so each core's tokens are derived as for a LOAD */
	for (m = mask; m && !p->err; m &= m - 1) {
		mem(p, (unsigned int)__builtin_ctz(m), SPYRE_I_LOAD, slot, mem_off, rows, row_bytes,
		    mem_stride, sp_off, sp_stride);
		if (!p->err) {
			p->v[p->n - 1].grp = first + 1;
			p->v[p->n - 1].gmask = mask;
		}
	}
}

void pb_gather(struct pb *p, unsigned int core, uint8_t slot, uint64_t mem_off, uint32_t rows,
	       uint32_t row_bytes, uint32_t mem_stride, uint32_t idx_sp, uint32_t sp_off,
	       uint32_t sp_stride)
{
	uint32_t n = p->n;

	mem(p, core, SPYRE_I_LOAD, slot, mem_off, rows, row_bytes, mem_stride, sp_off, sp_stride);
	if (p->err || p->n != n + 1)
		return;
	p->v[n].in.flags = SPYRE_LOAD_GATHER;
	p->v[n].in.u.mem.core_stride2 = idx_sp;
	p->v[n].rd[0] = span(idx_sp, 1, 0, rows * 4);
	if (idx_sp % 4 || p->v[n].rd[0].hi > PB_SP_BYTES)
		p->err = -EINVAL;
}

void pb_store(struct pb *p, unsigned int core, uint8_t slot, uint64_t mem_off, uint32_t rows,
	      uint32_t row_bytes, uint32_t mem_stride, uint32_t sp_off, uint32_t sp_stride)
{
	mem(p, core, SPYRE_I_STORE, slot, mem_off, rows, row_bytes, mem_stride, sp_off,
	    sp_stride);
}

void pb_matmul(struct pb *p, unsigned int core, uint8_t dtype, int acc, int trans_b,
	       uint32_t m, uint32_t n, uint32_t k, uint32_t a_off, uint32_t lda, uint32_t b_off,
	       uint32_t ldb, uint32_t c_off, uint32_t ldc)
{
	struct pinsn *i = add(p, core, SPYRE_I_MATMUL, SPYRE_UNIT_PE);
	unsigned int es = pb_dtype_size(dtype), eo = dtype == SPYRE_DT_INT8 ? 4 : 4;
	struct spyre_insn_mm *mm;

	if (!i)
		return;
	if (!m || !n || !k || m > 0xffff || n > 0xffff || k > 0xffff) {
		p->err = -EINVAL;
		return;
	}
	i->in.flags = (acc ? SPYRE_MM_ACC : 0) | (trans_b ? SPYRE_MM_TRANS_B : 0);
	i->in.dtype = dtype;
	i->in.dtype_out = dtype == SPYRE_DT_INT8 ? SPYRE_DT_INT32 : SPYRE_DT_FP32;
	mm = &i->in.u.mm;
	mm->m = (uint16_t)m;
	mm->n = (uint16_t)n;
	mm->k = (uint16_t)k;
	mm->a_off = a_off;
	mm->b_off = b_off;
	mm->c_off = c_off;
	mm->lda = lda;
	mm->ldb = ldb;
	mm->ldc = ldc;
	i->rd[0] = span(a_off, m, lda * es, k * es);
	i->rd[1] = trans_b ? span(b_off, n, ldb * es, k * es) : span(b_off, k, ldb * es, n * es);
	i->wr = span(c_off, m, ldc * eo, n * eo);
	if (acc)
		i->rd[2] = i->wr;
	if (i->rd[0].hi > PB_SP_BYTES || i->rd[1].hi > PB_SP_BYTES || i->wr.hi > PB_SP_BYTES)
		p->err = -EINVAL;
}

static uint32_t fbits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

void pb_vec(struct pb *p, unsigned int core, const struct pb_vec *v)
{
	struct pinsn *i = add(p, core, SPYRE_I_VEC, SPYRE_UNIT_SFU);
	unsigned int es = pb_dtype_size(v->dtype), eo = pb_dtype_size(v->dtype_out);
	int red = v->func == SPYRE_VF_SUM_ROW || v->func == SPYRE_VF_MAX_ROW ||
		  v->func == SPYRE_VF_ARGMAX_ROW;
	int bin = (v->func >= SPYRE_VF_ADD && v->func <= SPYRE_VF_MIN) ||
		  (v->func >= SPYRE_VF_CMP_EQ && v->func <= SPYRE_VF_SELECT) ||
		  (v->func >= SPYRE_VF_AND && v->func <= SPYRE_VF_REM);
	int col = v->flags & SPYRE_VEC_SRC1_COL;
	struct spyre_insn_vec *x;

	if (!i)
		return;
	if (!v->rows || !v->cols) {
		p->err = -EINVAL;
		return;
	}
	i->in.flags = v->flags;
	i->in.dtype = v->dtype;
	i->in.dtype_out = v->dtype_out;
	x = &i->in.u.vec;
	x->func = v->func;
	x->rows = v->rows;
	x->cols = v->cols;
	x->src0_off = v->s0;
	x->src0_stride = v->s0_stride;
	x->src1_off = v->s1;
	x->src1_stride = v->s1_stride;
	x->dst_off = v->d;
	x->dst_stride = v->d_stride;
	x->imm0 = fbits(v->imm0);
	x->imm1 = fbits(v->imm1);
	if (v->flags & SPYRE_VEC_INT) {
		/* integer mode (1.9): one 64-bit integer immediate */
		x->imm0 = (uint32_t)(uint64_t)v->k;
		x->imm1 = (uint32_t)((uint64_t)v->k >> 32);
	}
	if (v->func != SPYRE_VF_FILL)
		i->rd[0] = span(v->s0, v->rows, v->s0_stride * es, v->cols * es);
	if (bin)
		i->rd[1] = span(v->s1, v->rows, v->s1_stride * es, (col ? 1 : v->cols) * es);
	i->wr = span(v->d, v->rows, v->d_stride * eo, (red ? 1 : v->cols) * eo);
	if (i->rd[0].hi > PB_SP_BYTES || i->rd[1].hi > PB_SP_BYTES || i->wr.hi > PB_SP_BYTES)
		p->err = -EINVAL;
}

static int overlap(struct range a, struct range b)
{
	return a.lo < a.hi && b.lo < b.hi && a.lo < b.hi && b.lo < a.hi;
}

static int conflict(const struct pinsn *a, const struct pinsn *b)
{
	int k;

	if (overlap(a->wr, b->wr))
		return 1;
	for (k = 0; k < 3; k++)
		if (overlap(a->wr, b->rd[k]) || overlap(b->wr, a->rd[k]))
			return 1;
	return 0;
}

static unsigned int token(unsigned int from, unsigned int to)
{
	return from * SPYRE_UNIT_COUNT + to;	/* 0..8, from != to */
}

/* Derive the waits and signals of one core's instructions (@idx, in order). */
static void tokens_core(struct pb *p, const uint32_t *idx, uint32_t n)
{
	/* covered[P][Q]: position (in idx) of the latest P insn Q already waited for */
	int64_t covered[SPYRE_UNIT_COUNT][SPYRE_UNIT_COUNT];
	uint32_t j;
	int64_t k;
	unsigned int a, b;

	for (a = 0; a < SPYRE_UNIT_COUNT; a++)
		for (b = 0; b < SPYRE_UNIT_COUNT; b++)
			covered[a][b] = -1;
	for (j = 0; j < n; j++) {
		struct pinsn *q = &p->v[idx[j]];
		int found[SPYRE_UNIT_COUNT] = { 0 };
		int todo = SPYRE_UNIT_COUNT - 1;
		int64_t floor = INT64_MAX;

		/* below every unit's covered position nothing is left to find */
		for (a = 0; a < SPYRE_UNIT_COUNT; a++)
			if (a != q->unit && covered[a][q->unit] < floor)
				floor = covered[a][q->unit];
		for (k = (int64_t)j - 1; k > floor && todo; k--) {
			struct pinsn *pi = &p->v[idx[k]];

			if (pi->unit == q->unit || found[pi->unit] ||
			    k <= covered[pi->unit][q->unit])
				continue;
			if (!conflict(pi, q))
				continue;
			found[pi->unit] = 1;
			todo--;
			pi->in.signal |= (uint16_t)(1u << token(pi->unit, q->unit));
			q->in.wait |= (uint16_t)(1u << token(pi->unit, q->unit));
			covered[pi->unit][q->unit] = k;
		}
	}
}

int pb_finish(struct pb *p, unsigned int nslots, void **image, size_t *size)
{
	struct spyre_prog_header h;
	uint32_t *idx = NULL, *cnt = NULL, c, i, n = p->n, kept;
	uint8_t *img;
	size_t sz;
	int ret = p->err;

	*image = NULL;
	*size = 0;
	if (!ret && (!n || n > SPYRE_PROG_MAX_INSNS))
		ret = n ? -E2BIG : -EINVAL;
	if (!ret) {
		idx = malloc(n * sizeof(*idx));
		cnt = calloc(p->ncores + 1, sizeof(*cnt));
		if (!idx || !cnt)
			ret = -ENOMEM;
	}
	if (!ret) {
		/* bucket the instructions by core, keeping program order */
		for (i = 0; i < n; i++)
			cnt[p->v[i].core + 1]++;
		for (c = 0; c < p->ncores; c++)
			cnt[c + 1] += cnt[c];
		for (i = 0; i < n; i++)
			idx[cnt[p->v[i].core]++] = i;
		for (c = 0; c < p->ncores; c++) {
			uint32_t start = c ? cnt[c - 1] : 0;

			tokens_core(p, idx + start, cnt[c] - start);
		}
		/* an MCAST group becomes its first member, for all its cores */
		for (i = 0, kept = 0; i < n; i++) {
			struct pinsn *q = &p->v[i];

			if (q->grp && q->grp - 1 != i) {
				const struct pinsn *l = &p->v[q->grp - 1];

				/* one instruction: the same tokens on every core */
				if (l->in.wait != q->in.wait || l->in.signal != q->in.signal)
					ret = -EINVAL;
				continue;
			}
			if (q->grp) {
				q->in.core_mask = q->gmask;
				q->in.flags = SPYRE_LOAD_MCAST;
			}
			kept++;
		}
		sz = SPYRE_PROG_HEADER_SIZE + (size_t)kept * SPYRE_PROG_INSN_SIZE;
		img = ret ? NULL : malloc(sz);
		if (ret) {
		} else if (!img) {
			ret = -ENOMEM;
		} else {
			memset(&h, 0, sizeof(h));
			h.magic = SPYRE_PROG_MAGIC;
			h.version = SPYRE_PROG_VERSION;
			h.header_size = SPYRE_PROG_HEADER_SIZE;
			h.num_insns = kept;
			h.num_slots = (uint16_t)nslots;
			memcpy(img, &h, sizeof(h));
			for (i = 0, kept = 0; i < n; i++) {
				if (p->v[i].grp && p->v[i].grp - 1 != i)
					continue;
				memcpy(img + SPYRE_PROG_HEADER_SIZE +
					       (size_t)kept++ * SPYRE_PROG_INSN_SIZE,
				       &p->v[i].in, SPYRE_PROG_INSN_SIZE);
			}
			*image = img;
			*size = sz;
		}
	}
	free(idx);
	free(cnt);
	p->n = 0;
	p->err = 0;
	return ret;
}

/* ---- concatenation (interface 1.8) ---- */

static uint32_t insns_of(const void *img, size_t size)
{
	struct spyre_prog_header h;

	if (size < sizeof(h))
		return 0;
	memcpy(&h, img, sizeof(h));
	if (size < SPYRE_PROG_HEADER_SIZE + (uint64_t)h.num_insns * SPYRE_PROG_INSN_SIZE)
		return 0;
	return h.num_insns;
}

int pb_can_concat(const void *img, size_t size)
{
	const uint8_t *p = img;
	struct spyre_prog_header h;
	int32_t net[32][SPYRE_ISA_TOKENS];
	uint32_t n = insns_of(img, size), i, c, k;

	if (!n)
		return 0;
	memcpy(&h, img, sizeof(h));
	if (h.workspace_size)
		return 0;
	memset(net, 0, sizeof(net));
	for (i = 0; i < n; i++) {
		struct spyre_insn in;

		memcpy(&in, p + SPYRE_PROG_HEADER_SIZE + (size_t)i * SPYRE_PROG_INSN_SIZE,
		       sizeof(in));
		if ((in.op == SPYRE_I_LOAD || in.op == SPYRE_I_STORE) &&
		    in.u.mem.slot == SPYRE_ISA_SLOT_WS)
			return 0;
		for (c = 0; c < 32; c++) {
			if (!(in.core_mask >> c & 1))
				continue;
			for (k = 0; k < SPYRE_ISA_TOKENS; k++)
				net[c][k] += (int32_t)(in.signal >> k & 1) - (int32_t)(in.wait >> k & 1);
		}
	}
	for (c = 0; c < 32; c++)
		for (k = 0; k < SPYRE_ISA_TOKENS; k++)
			if (net[c][k])
				return 0;
	return 1;
}

int pb_concat(const void *const *img, const size_t *size, const struct pb_remap *maps,
	      unsigned int n, unsigned int nslots, uint64_t ws_size, unsigned int ncores,
	      void **out, size_t *outsize)
{
	struct spyre_prog_header h;
	uint64_t total = 0;
	struct spyre_insn *dst;
	unsigned int j;
	uint8_t *buf;
	uint32_t i;

	for (j = 0; j < n; j++)
		total += insns_of(img[j], size[j]) + (j > 0);
	if (!n || total > PB_MAX_INSNS)
		return -E2BIG;
	buf = malloc(SPYRE_PROG_HEADER_SIZE + total * SPYRE_PROG_INSN_SIZE);
	if (!buf)
		return -ENOMEM;
	memset(&h, 0, sizeof(h));
	h.magic = SPYRE_PROG_MAGIC;
	h.version = SPYRE_PROG_VERSION;
	h.header_size = SPYRE_PROG_HEADER_SIZE;
	h.num_insns = (uint32_t)total;
	h.num_slots = (uint16_t)nslots;
	h.workspace_size = ws_size;
	memcpy(buf, &h, sizeof(h));
	dst = (struct spyre_insn *)(buf + SPYRE_PROG_HEADER_SIZE);
	for (j = 0; j < n; j++) {
		uint32_t cnt = insns_of(img[j], size[j]);

		if (j) {
			memset(dst, 0, sizeof(*dst));
			dst->op = SPYRE_I_BARRIER;
			dst->core_mask = ncores >= 32 ? 0xffffffffu : (1u << ncores) - 1;
			dst++;
		}
		memcpy(dst, (const uint8_t *)img[j] + SPYRE_PROG_HEADER_SIZE,
		       (size_t)cnt * SPYRE_PROG_INSN_SIZE);
		for (i = 0; i < cnt; i++, dst++) {
			uint8_t s;

			if (dst->op != SPYRE_I_LOAD && dst->op != SPYRE_I_STORE)
				continue;
			s = dst->u.mem.slot;
			if (s == SPYRE_ISA_SLOT_WS) {
				free(buf);
				return -EINVAL;	/* pb_can_concat refuses these */
			}
			dst->u.mem.slot = maps[j].slot[s];
			if (maps[j].slot[s] == SPYRE_ISA_SLOT_WS)
				dst->u.mem.mem_off += maps[j].ws_off[s];
		}
	}
	*out = buf;
	*outsize = SPYRE_PROG_HEADER_SIZE + total * SPYRE_PROG_INSN_SIZE;
	return 0;
}
