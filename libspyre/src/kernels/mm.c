// SPDX-License-Identifier: MIT
/*
 * Matmul kernel: batched C = A x B (B row- or column-major) with an
 * elementwise epilogue. Output tiles [tm x tn] go round-robin to the cores;
 * each runs its K loop in chunks of tk with two A/B chunk buffers (the LOAD
 * of chunk i+1 overlaps the MATMUL of chunk i) and two accumulators (the
 * epilogue and STORE of tile i overlap the products of tile i+1). A dual
 * spec loads a second B chunk per A chunk into a second accumulator.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ew_plan.h"
#include "mm_gen.h"

int64_t batch_off(const struct mm_spec *s, const int64_t *strides, int64_t bi)
{
	int64_t off = 0;
	int d;

	for (d = (int)s->nbatch - 1; d >= 0; d--) {
		off += (bi % s->batch[d]) * strides[d];
		bi /= s->batch[d];
	}
	return off;
}

uint32_t mm_layout(struct mm_gen *g, uint32_t tm, uint32_t tn, uint32_t tk)
{
	uint32_t o = 0, p, ab = tm * tk * g->es, bb = tk * tn * g->es;

	if (g->ares) {
		g->alda = (uint32_t)((g->s->k + tk - 1) / tk) * tk;
		ab = tm * g->alda * g->es;
	}
	for (p = 0; p < 2; p++) {
		g->abuf[p] = o;
		o = align_up(o + ab, SP_ALIGN);
		g->bbuf[p] = o;
		o = align_up(o + bb, SP_ALIGN);
		if (g->s->b_int8) {
			g->b8buf[p] = o;
			o = align_up(o + tk * tn, SP_ALIGN);
		}
		g->acc[p] = o;
		o = align_up(o + tm * tn * 4, SP_ALIGN);
		if (!g->s->dual)
			continue;
		g->b2buf[p] = o;
		o = align_up(o + bb, SP_ALIGN);
		if (g->s->b_int8) {
			g->b28buf[p] = o;
			o = align_up(o + tk * tn, SP_ALIGN);
		}
		g->acc2[p] = o;
		o = align_up(o + tm * tn * 4, SP_ALIGN);
	}
	g->t.off[0][0] = g->acc[0];
	g->t.off[1][0] = g->acc[1];
	if (g->s->dual) {
		/* epilogue value 1: the second product, in its accumulator */
		g->t.off[0][1] = g->acc2[0];
		g->t.off[1][1] = g->acc2[1];
	}
	return texpr_layout(&g->t, &g->s->epi, o, tm, tn, g->s->dual ? 2 : 1);
}

void mm_widen(struct mm_gen *g, struct pb *p, unsigned int c, uint32_t src, uint32_t dst,
	      uint32_t rows, uint32_t cols, uint32_t ld)
{
	struct pb_vec v = { .func = SPYRE_VF_COPY, .dtype = SPYRE_DT_INT8,
			    .dtype_out = g->s->dtype, .rows = rows, .cols = cols,
			    .s0 = src, .s0_stride = ld, .d = dst, .d_stride = ld };

	pb_vec(p, c, &v);
}

/*
 * B chunk @b of @rows x @cols elements (row stride @ld in the scratchpad)
 * onto core @c: straight into the B buffer, or for int8 weights into the
 * int8 buffer and widened from there (exact: every int8 is an fp16/bf16).
 * @two: the second B of a dual spec (same element offset, its own slot).
 */
static void mm_load_b(struct mm_gen *g, struct pb *p, unsigned int c, unsigned int b, bool two,
		      uint64_t mem_off, uint32_t rows, uint32_t cols, uint32_t mem_stride,
		      uint32_t ld)
{
	const struct mm_spec *s = g->s;
	uint32_t dst = two ? g->b2buf[b] : g->bbuf[b], d8 = two ? g->b28buf[b] : g->b8buf[b];

	pb_load(p, c, two ? s->b2.slot : s->b.slot, mem_off, rows, cols * g->bes, mem_stride,
		s->b_int8 ? d8 : dst, ld * g->bes);
	if (s->b_int8)
		mm_widen(g, p, c, d8, dst, rows, cols, ld);
}

static void mm_products(struct mm_gen *g, struct pb *p, unsigned int c, int64_t ti,
			unsigned int par, uint32_t kc0, uint32_t kc1)
{
	const struct mm_spec *s = g->s;
	int64_t nt = ti % g->nnt, mt = (ti / g->nnt) % g->nmt, bi = ti / ((int64_t)g->nnt * g->nmt);
	int64_t m0 = mt * g->tm, n0 = nt * g->tn;
	uint32_t tmm = (uint32_t)(s->m - m0 < g->tm ? s->m - m0 : g->tm);
	uint32_t tnn = (uint32_t)(s->n - n0 < g->tn ? s->n - n0 : g->tn);
	const int64_t *as = s->a.strides, *bs = s->b.strides;
	unsigned int nb = s->nbatch, kc;

	if (!s->k) {
		uint8_t adt = s->dtype == SPYRE_DT_INT8 ? SPYRE_DT_INT32 : SPYRE_DT_FP32;
		struct pb_vec v = { .func = SPYRE_VF_FILL, .dtype = SPYRE_DT_FP32,
				    .dtype_out = adt, .rows = tmm, .cols = tnn,
				    .d = g->acc[par], .d_stride = g->tn };

		if (kc0 == 0)
			pb_vec(p, c, &v);
		v.d = g->acc2[par];
		if (kc0 == 0 && s->dual)
			pb_vec(p, c, &v);
		return;
	}
	for (kc = kc0; kc < kc1; kc++) {
		int64_t k0 = (int64_t)kc * g->tk;
		uint32_t tkk = (uint32_t)(s->k - k0 < g->tk ? s->k - k0 : g->tk);
		unsigned int b = g->q[c]++ & 1;
		int64_t ael = s->a.off + batch_off(s, as, bi) + m0 * as[nb] + k0;
		int64_t bel = batch_off(s, bs, bi);
		unsigned int w;

		pb_load(p, c, s->a.slot, (uint64_t)ael * g->es, tmm, tkk * g->es,
			(uint32_t)(as[nb] * g->es), g->abuf[b], g->tk * g->es);
		bel += g->trans ? n0 * bs[nb + 1] + k0 : k0 * bs[nb] + n0;
		for (w = 0; w <= s->dual; w++) {
			int64_t el = bel + (w ? s->b2.off : s->b.off);

			if (g->trans)
				mm_load_b(g, p, c, b, w, (uint64_t)el * g->bes, tnn, tkk,
					  (uint32_t)(bs[nb + 1] * g->bes), g->tk);
			else
				mm_load_b(g, p, c, b, w, (uint64_t)el * g->bes, tkk, tnn,
					  (uint32_t)(bs[nb] * g->bes), g->tn);
			pb_matmul(p, c, s->dtype, kc > 0, g->trans, tmm, tnn, tkk, g->abuf[b],
				  g->tk, w ? g->b2buf[b] : g->bbuf[b], g->trans ? g->tk : g->tn,
				  w ? g->acc2[par] : g->acc[par], g->tn);
		}
	}
}

/* Epilogue inputs (phase 0) or epilogue + store (phase 1) of tile @ti. */
void mm_epi(struct mm_gen *g, struct pb *p, unsigned int c, int64_t ti, unsigned int par,
		   int phase)
{
	const struct mm_spec *s = g->s;
	const struct ew_spec *e = &s->epi;
	int64_t nt = ti % g->nnt, mt = (ti / g->nnt) % g->nmt, bi = ti / ((int64_t)g->nnt * g->nmt);
	int64_t m0 = mt * g->tm, n0 = nt * g->tn;
	uint32_t tmm = (uint32_t)(s->m - m0 < g->tm ? s->m - m0 : g->tm);
	uint32_t tnn = (uint32_t)(s->n - n0 < g->tn ? s->n - n0 : g->tn);
	unsigned int nb = s->nbatch, k;

	if (phase)
		texpr_eval(&g->t, e, p, c, par, tmm, tnn);
	for (k = phase ? e->nin : 1u + s->dual; k <= (phase ? e->nin : e->nin - 1u); k++) {
		const struct kview *kv = k < e->nin ? &e->in[k] : &e->out;
		uint32_t es = pb_dtype_size(kv->dtype);
		uint8_t cl = k < e->nin ? g->cls[k] : g->t.out_cls;
		int64_t sr = s->m > 1 ? kv->strides[nb] : 0;
		int64_t sc = s->n > 1 ? kv->strides[nb + 1] : 0;
		int64_t el = kv->off + batch_off(s, kv->strides, bi) + m0 * sr + n0 * sc;

		xfer(p, c, k == e->nin, kv->slot, (uint64_t)el * es, cl & 2 ? tmm : 1,
		     cl & 1 ? tnn : 1, sr, sc, es,
		     k < e->nin ? g->t.off[par][k] : texpr_result(&g->t, par),
		     cl == CL_COL ? 1 : g->tn);
	}
}

int kern_mm(const struct mm_spec *s, unsigned int ncores, struct kprogs *out, char *why,
	    size_t whylen)
{
	struct mm_gen *g;
	const struct ew_spec *e = &s->epi;
	unsigned int nb = s->nbatch, k, c;
	uint8_t full = (s->n > 1 ? 1 : 0) | (s->m > 1 ? 2 : 0);
	int64_t T, rounds, j, start = 0, d;
	uint32_t per_tile;
	int ret = 0;
	struct pb *p;

	memset(out, 0, sizeof(*out));
	if (s->dtype != SPYRE_DT_FP32 && s->dtype != SPYRE_DT_FP16 && s->dtype != SPYRE_DT_BF16 &&
	    s->dtype != SPYRE_DT_INT8) {
		snprintf(why, whylen, "matmul of this dtype is not lowered yet");
		return -EOPNOTSUPP;
	}
	if (s->b_int8 && s->dtype == SPYRE_DT_INT8) {
		snprintf(why, whylen, "int8 weights need float activations");
		return -EOPNOTSUPP;
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->s = s;
	g->es = pb_dtype_size(s->dtype);
	g->bes = s->b_int8 ? 1 : g->es;
	g->nb = 1;
	for (d = 0; d < nb; d++)
		g->nb *= s->batch[d];
	out->nslots = (unsigned int)(s->a.slot > s->b.slot ? s->a.slot : s->b.slot) + 1;
	if (s->dual && s->b2.slot + 1u > out->nslots)
		out->nslots = s->b2.slot + 1u;
	for (k = 1u + s->dual; k < e->nin; k++)
		if (e->in[k].slot + 1u > out->nslots)
			out->nslots = e->in[k].slot + 1u;
	if (e->out.slot + 1u > out->nslots)
		out->nslots = e->out.slot + 1u;
	if (!g->nb || !s->m || !s->n)
		goto done;
	if (s->k && s->a.strides[nb + 1] != 1 && s->k > 1) {
		snprintf(why, whylen, "A must be contiguous along K");
		ret = -EOPNOTSUPP;
		goto done;
	}
	g->trans = s->n > 1 && s->b.strides[nb + 1] != 1;
	if (s->k > 1 && g->trans && s->b.strides[nb] != 1) {
		snprintf(why, whylen, "B must be contiguous along K or N");
		ret = -EOPNOTSUPP;
		goto done;
	}
	for (k = 0; k < e->nuops; k++)
		if (uop_is_row(&e->u[k])) {
			snprintf(why, whylen, "row functions in a matmul epilogue");
			ret = -EOPNOTSUPP;
			goto done;
		}
	if (s->dual && (s->dtype == SPYRE_DT_INT8 || e->nin < 2 ||
			e->in[1].dtype != SPYRE_DT_FP32 || s->b2.dtype != s->b.dtype ||
			memcmp(s->b2.strides, s->b.strides, sizeof(s->b.strides)))) {
		snprintf(why, whylen, "malformed dual matmul (float A; B2 like B; fp32 value 1)");
		ret = -EOPNOTSUPP;
		goto done;
	}
	g->cls[0] = full;
	g->cls[1] = full;	/* a dual spec's second product (else set below) */
	for (k = 1u + s->dual; k < e->nin; k++)
		g->cls[k] = (s->n > 1 && e->in[k].strides[nb + 1] ? 1 : 0) |
			    (s->m > 1 && e->in[k].strides[nb] ? 2 : 0);
	ret = texpr_analyse(&g->t, e, g->cls, full, true, why, whylen);
	if (ret)
		goto done;
	g->tm = (uint32_t)(s->m < 128 ? s->m : 128);
	g->tn = (uint32_t)(s->n < 256 ? s->n : 256);
	g->tk = (uint32_t)(s->k < 256 ? (s->k ? s->k : 1) : 256);
	while (mm_layout(g, g->tm, g->tn, g->tk) > PB_SP_BYTES) {
		if (g->tk > 64)
			g->tk /= 2;
		else if (g->tn > 64)
			g->tn /= 2;
		else if (g->tm > 16)
			g->tm /= 2;
		else {
			snprintf(why, whylen, "epilogue too large for the scratchpad");
			ret = -EOPNOTSUPP;
			goto done;
		}
	}
	/* spread small products over the cores: narrower tiles */
	for (;;) {
		g->nmt = (uint32_t)((s->m + g->tm - 1) / g->tm);
		g->nnt = (uint32_t)((s->n + g->tn - 1) / g->tn);
		if (g->nb * g->nmt * g->nnt >= ncores)
			break;
		if (g->tn > 64)
			g->tn = align_up(g->tn / 2, 32);
		else if (g->tm > 32)
			g->tm = align_up(g->tm / 2, 16);
		else
			break;
	}
	if (s->mcast && ncores == 32) {
		/* operand tiles shared by a grid of cores (card interface 1.12) */
		ret = mm_mc(g, ncores, out);
		if (ret != -EAGAIN)
			goto done;
		ret = 0;
	}
	mm_layout(g, g->tm, g->tn, g->tk);
	g->nkc = s->k ? (uint32_t)((s->k + g->tk - 1) / g->tk) : 1;
	per_tile = (1 + (1 + s->dual) * (s->b_int8 ? 3 : 2)) * g->nkc + 2 * (e->nin + e->nuops) + 4;
	if ((uint64_t)per_tile * ncores > PB_MAX_INSNS / 2) {
		snprintf(why, whylen, "K too large for one program");
		ret = -EOPNOTSUPP;
		goto done;
	}
	T = g->nb * g->nmt * g->nnt;
	rounds = (T + ncores - 1) / ncores;
	p = pb_new(ncores);
	if (!p) {
		ret = -ENOMEM;
		goto done;
	}
	for (j = 0; j < rounds && !ret; j++) {
		if (j == start)
			for (c = 0; c < ncores && c < T; c++)
				texpr_prologue(&g->t, e, p, c);
		for (c = 0; c < ncores && j * ncores + c < T; c++) {
			int64_t ti = j * ncores + c;
			unsigned int par = (unsigned int)(j & 1);

			mm_products(g, p, c, ti, par, 0, 1);
			mm_epi(g, p, c, ti, par, 0);
			if (j > start)
				mm_epi(g, p, c, ti - ncores, par ^ 1, 1);
			mm_products(g, p, c, ti, par, 1, g->nkc);
		}
		/* cores without a tile this round still finish the previous one */
		for (; c < ncores && j > start && (j - 1) * ncores + c < T; c++)
			mm_epi(g, p, c, (j - 1) * ncores + c, (unsigned int)((j - 1) & 1), 1);
		if (j + 1 == rounds || pb_count(p) + 2ull * per_tile * ncores > PB_MAX_INSNS) {
			for (c = 0; c < ncores && j * ncores + c < T; c++)
				mm_epi(g, p, c, j * ncores + c, (unsigned int)(j & 1), 1);
			ret = kprogs_add(out, p);
			start = j + 1;
		}
	}
	pb_free(p);
done:
	free(g);
	if (ret)
		kprogs_free(out);
	return ret;
}
