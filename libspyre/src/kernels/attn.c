// SPDX-License-Identifier: MIT
/*
 * Fused attention kernel (flash-attention style). Unit of work: one batch
 * index and one block of T queries, on one core. The core loads the query
 * block once, then walks the key blocks of T keys: S = Q K^T on the PE
 * array (fp32), scaled and masked by the vector unit, the row max folded
 * into a running max m, P = exp(S - m) rounded to the input type, its row
 * sums into a running sum l, the output accumulator O rescaled by
 * exp(m_old - m_new) and O += P V on the PE array. At the end O / l is
 * stored. Scores never leave the scratchpad: the kernel reads q, k, v (and
 * a mask) and writes out, where the unfused sequence writes and reads the
 * [Lq, Lk] scores three times through LPDDR5.
 *
 * Causal attention skips key blocks entirely above the diagonal and adds a
 * triangular 0/-inf tile (built once per core) to the diagonal one. The
 * running max starts at -FLT_MAX, not -inf, so a query whose keys are all
 * masked so far has exp(-inf - m) = 0 terms and a zero sum, and the final
 * O / max(l, tiny) gives PyTorch's 0 for it (its safe softmax), while NaN
 * scores still propagate. Units are spread over the cores longest first
 * (a causal query block's work grows with its index); each unit's first
 * loads are issued before the previous unit's store, and K/V, S and P are
 * double-buffered so the load/store unit, the PE array and the vector unit
 * of a core overlap.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ew_plan.h"
#include "tile.h"

struct fa_gen {
	const struct fa_spec *s;
	uint32_t T, es, mes;		/* block size; element sizes of q/k/v and the mask */
	int64_t nqb, nkb;
	/* scratchpad layout */
	uint32_t q[2], o[2], ob[2], m[2][2], l[2];	/* per unit parity */
	uint32_t k[2], v[2], sc[2], pr[2], mt[2];	/* per key-block parity */
	uint32_t mf, tri, mb, alpha, rs, cneg, ctiny, end;
	/* per core: key-block and unit counters (buffer parities) */
	unsigned int kb[32], un[32];
	/* per core: the store deferred past the next unit's first loads */
	bool pend[32];
	bool tri_built[32];
	uint64_t pend_off[32];
	uint32_t pend_rows[32], pend_sp[32];
};

static int64_t fa_boff(const struct fa_spec *s, const struct kview *kv, int64_t bi)
{
	int64_t off = 0;
	int d;

	for (d = (int)s->nbatch - 1; d >= 0; d--) {
		off += (bi % s->batch[d]) * kv->strides[d];
		bi /= s->batch[d];
	}
	return off;
}

static uint32_t fa_layout(struct fa_gen *g, uint32_t T)
{
	const struct fa_spec *s = g->s;
	uint32_t o = 0, i;
	uint32_t qb = align_up(T * (uint32_t)s->d * g->es, SP_ALIGN);
	uint32_t vb = align_up(T * (uint32_t)s->dv * g->es, SP_ALIGN);
	uint32_t tt = align_up(T * T * 4, SP_ALIGN), vec = align_up(T * 4, SP_ALIGN);

#define PUT(dst, sz)                   \
	do {                           \
		(dst) = o;             \
		o += (sz);             \
	} while (0)
	for (i = 0; i < 2; i++) {
		PUT(g->q[i], qb);
		PUT(g->k[i], qb);
		PUT(g->v[i], vb);
		PUT(g->sc[i], tt);
		PUT(g->pr[i], align_up(T * T * g->es, SP_ALIGN));
		PUT(g->o[i], align_up(T * (uint32_t)s->dv * 4, SP_ALIGN));
		PUT(g->ob[i], vb);
		PUT(g->m[i][0], vec);
		PUT(g->m[i][1], vec);
		PUT(g->l[i], vec);
		if (s->mask_kind)
			PUT(g->mt[i], align_up(T * T * g->mes, SP_ALIGN));
	}
	if (s->mask_kind && (s->mdtype != SPYRE_DT_FP32 || s->mask_kind == 2))
		PUT(g->mf, tt);
	if (s->causal)
		PUT(g->tri, tt);
	PUT(g->mb, vec);
	PUT(g->alpha, vec);
	PUT(g->rs, vec);
	PUT(g->cneg, SP_ALIGN);
	PUT(g->ctiny, SP_ALIGN);
#undef PUT
	g->end = o;
	return o;
}

static void vec(struct pb *p, unsigned int c, uint8_t func, uint8_t flags, uint8_t dt,
		uint8_t dto, uint32_t rows, uint32_t cols, uint32_t s0, uint32_t s0s, uint32_t s1,
		uint32_t s1s, uint32_t d, uint32_t ds, float imm0, float imm1)
{
	struct pb_vec v = { .func = func, .flags = flags, .dtype = dt, .dtype_out = dto,
			    .rows = rows, .cols = cols, .s0 = s0, .s0_stride = s0s, .s1 = s1,
			    .s1_stride = s1s, .d = d, .d_stride = ds, .imm0 = imm0, .imm1 = imm1 };

	pb_vec(p, c, &v);
}

/* Per core and program: the constants; the causal triangle comes with its first use. */
static void fa_prologue(struct fa_gen *g, struct pb *p, unsigned int c)
{
	const uint8_t F = SPYRE_DT_FP32;

	vec(p, c, SPYRE_VF_FILL, 0, F, F, 1, 1, 0, 0, 0, 0, g->cneg, 1, -FLT_MAX, 0);
	vec(p, c, SPYRE_VF_FILL, 0, F, F, 1, 1, 0, 0, 0, 0, g->ctiny, 1, FLT_MIN, 0);
	g->tri_built[c] = false;
}

/*
 * The causal triangle (0 on and below the diagonal, -inf above) over the
 * rows and columns a diagonal block can have: a FILL per row, so it is
 * built once per core and program, just before the first diagonal block
 * (the vector unit has that block's predecessors to work on meanwhile).
 */
static void fa_triangle(struct fa_gen *g, struct pb *p, unsigned int c)
{
	const struct fa_spec *s = g->s;
	uint32_t T = g->T, r;
	uint32_t rows = (uint32_t)(s->lq < T ? s->lq : T), cols = (uint32_t)(s->lk < T ? s->lk : T);
	const uint8_t F = SPYRE_DT_FP32;

	if (g->tri_built[c])
		return;
	g->tri_built[c] = true;
	vec(p, c, SPYRE_VF_FILL, 0, F, F, rows, cols, 0, 0, 0, 0, g->tri, T, 0, 0);
	for (r = 0; r < rows && r + 1 < cols; r++)
		vec(p, c, SPYRE_VF_FILL, 0, F, F, 1, cols - r - 1, 0, 0, 0, 0,
		    g->tri + (r * T + r + 1) * 4, T, -INFINITY, 0);
}

static void fa_flush_store(struct fa_gen *g, struct pb *p, unsigned int c)
{
	const struct fa_spec *s = g->s;
	uint32_t ob = (uint32_t)s->dv * g->es;

	if (!g->pend[c])
		return;
	pb_store(p, c, s->out.slot, g->pend_off[c], g->pend_rows[c], ob,
		 (uint32_t)(s->out.strides[s->nbatch] * g->es), g->pend_sp[c], ob);
	g->pend[c] = false;
}

/* K, V (and mask) block @kbi of unit (bi, q0) into key-block buffer @b. */
static void fa_load_kv(struct fa_gen *g, struct pb *p, unsigned int c, int64_t bi, int64_t q0,
		       uint32_t qr, int64_t kbi, unsigned int b)
{
	const struct fa_spec *s = g->s;
	unsigned int nb = s->nbatch;
	int64_t k0 = kbi * g->T;
	uint32_t kr = (uint32_t)(s->lk - k0 < g->T ? s->lk - k0 : g->T);
	int64_t ke = s->k.off + fa_boff(s, &s->k, bi) + k0 * s->k.strides[nb];
	int64_t ve = s->v.off + fa_boff(s, &s->v, bi) + k0 * s->v.strides[nb];

	pb_load(p, c, s->k.slot, (uint64_t)ke * g->es, kr, (uint32_t)s->d * g->es,
		(uint32_t)(s->k.strides[nb] * g->es), g->k[b], (uint32_t)s->d * g->es);
	pb_load(p, c, s->v.slot, (uint64_t)ve * g->es, kr, (uint32_t)s->dv * g->es,
		(uint32_t)(s->v.strides[nb] * g->es), g->v[b], (uint32_t)s->dv * g->es);
	if (s->mask_kind) {
		int64_t me = s->mask.off + fa_boff(s, &s->mask, bi) + q0 * s->mask.strides[nb] +
			     k0 * s->mask.strides[nb + 1];

		xfer(p, c, 0, s->mask.slot, (uint64_t)me * g->mes, qr, kr, s->mask.strides[nb],
		     s->mask.strides[nb + 1], g->mes, g->mt[b], g->T);
	}
}

static void fa_scores(struct fa_gen *g, struct pb *p, unsigned int c, uint32_t qr, uint32_t kr,
		      unsigned int u, unsigned int b)
{
	uint32_t D = (uint32_t)g->s->d;

	pb_matmul(p, c, g->s->dtype, 0, 1, qr, kr, D, g->q[u], D, g->k[b], D, g->sc[b], g->T);
}

/* The vector unit's part of key block @j (buffer @b) of a unit (parity @u). */
static void fa_softmax(struct fa_gen *g, struct pb *p, unsigned int c, uint32_t qr,
		       uint32_t kr, bool diag, int64_t j, unsigned int u, unsigned int b)
{
	const struct fa_spec *s = g->s;
	const uint8_t F = SPYRE_DT_FP32, COL = SPYRE_VEC_SRC1_COL;
	uint32_t T = g->T, S = g->sc[b], dv = (uint32_t)s->dv;
	uint32_t mo = g->m[u][j & 1], mn = g->m[u][(j + 1) & 1];

	vec(p, c, SPYRE_VF_SCALE, 0, F, F, qr, kr, S, T, 0, 0, S, T, s->scale, 0);
	if (diag)
		vec(p, c, SPYRE_VF_ADD, 0, F, F, qr, kr, S, T, g->tri, T, S, T, 0, 0);
	if (s->mask_kind) {
		uint32_t mf = g->mt[b];

		if (s->mask_kind == 2 || s->mdtype != F) {
			vec(p, c, SPYRE_VF_COPY, 0, s->mdtype, F, qr, kr, g->mt[b], T, 0, 0,
			    g->mf, T, 0, 0);
			mf = g->mf;
		}
		if (s->mask_kind == 2)
			vec(p, c, SPYRE_VF_SELECT, 0, F, F, qr, kr, S, T, mf, T, S, T, -INFINITY,
			    0);
		else
			vec(p, c, SPYRE_VF_ADD, 0, F, F, qr, kr, S, T, mf, T, S, T, 0, 0);
	}
	vec(p, c, SPYRE_VF_MAX_ROW, 0, F, F, qr, kr, S, T, 0, 0, g->mb, 1, 0, 0);
	if (!j) {
		/* m = max(row max, -FLT_MAX): finite unless NaN */
		vec(p, c, SPYRE_VF_MAX, 0, F, F, qr, 1, g->mb, 1, g->cneg, 0, mn, 1, 0, 0);
	} else {
		vec(p, c, SPYRE_VF_MAX, 0, F, F, 1, qr, mo, 0, g->mb, 0, mn, 0, 0, 0);
		vec(p, c, SPYRE_VF_SUB, 0, F, F, 1, qr, mo, 0, mn, 0, g->alpha, 0, 0, 0);
		vec(p, c, SPYRE_VF_EXP, 0, F, F, 1, qr, g->alpha, 0, 0, 0, g->alpha, 0, 0, 0);
	}
	vec(p, c, SPYRE_VF_SUB, COL, F, F, qr, kr, S, T, mn, 1, S, T, 0, 0);
	vec(p, c, SPYRE_VF_EXP, 0, F, s->dtype, qr, kr, S, T, 0, 0, g->pr[b], T, 0, 0);
	vec(p, c, SPYRE_VF_SUM_ROW, 0, s->dtype, F, qr, kr, g->pr[b], T, 0, 0, j ? g->rs : g->l[u],
	    1, 0, 0);
	if (j) {
		vec(p, c, SPYRE_VF_MUL, 0, F, F, 1, qr, g->l[u], 0, g->alpha, 0, g->l[u], 0, 0, 0);
		vec(p, c, SPYRE_VF_ADD, 0, F, F, 1, qr, g->l[u], 0, g->rs, 0, g->l[u], 0, 0, 0);
		vec(p, c, SPYRE_VF_MUL, COL, F, F, qr, dv, g->o[u], dv, g->alpha, 1, g->o[u], dv, 0,
		    0);
	}
}

/* Key blocks of query block @qb: all, or (causal) up to the diagonal. */
static int64_t fa_nkeys(const struct fa_gen *g, int64_t qb)
{
	if (g->s->causal && qb + 1 < g->nkb)
		return qb + 1;
	return g->nkb;
}

static void fa_unit(struct fa_gen *g, struct pb *p, unsigned int c, int64_t unit)
{
	const struct fa_spec *s = g->s;
	unsigned int nb = s->nbatch, u = g->un[c]++ & 1, b0 = g->kb[c];
	int64_t bi = unit / g->nqb, qb = unit % g->nqb, q0 = qb * g->T, nk = fa_nkeys(g, qb), j;
	uint32_t qr = (uint32_t)(s->lq - q0 < g->T ? s->lq - q0 : g->T);
	uint32_t dv = (uint32_t)s->dv, D = (uint32_t)s->d;
	int64_t qe = s->q.off + fa_boff(s, &s->q, bi) + q0 * s->q.strides[nb];
	int64_t oe = s->out.off + fa_boff(s, &s->out, bi) + q0 * s->out.strides[nb];
	const uint8_t F = SPYRE_DT_FP32;

	g->kb[c] += (unsigned int)nk;
	pb_load(p, c, s->q.slot, (uint64_t)qe * g->es, qr, D * g->es,
		(uint32_t)(s->q.strides[nb] * g->es), g->q[u], D * g->es);
	fa_load_kv(g, p, c, bi, q0, qr, 0, b0 & 1);
	fa_flush_store(g, p, c);	/* the previous unit's, behind these loads */
	fa_scores(g, p, c, qr, (uint32_t)(s->lk < g->T ? s->lk : g->T), u, b0 & 1);
	for (j = 0; j < nk; j++) {
		unsigned int b = (unsigned int)(b0 + j) & 1;
		int64_t k0 = j * g->T;
		uint32_t kr = (uint32_t)(s->lk - k0 < g->T ? s->lk - k0 : g->T);

		if (j + 1 < nk) {
			int64_t k1 = (j + 1) * g->T;
			uint32_t kr1 = (uint32_t)(s->lk - k1 < g->T ? s->lk - k1 : g->T);

			fa_load_kv(g, p, c, bi, q0, qr, j + 1, b ^ 1);
			fa_scores(g, p, c, qr, kr1, u, b ^ 1);
		}
		if (s->causal && j == qb)
			fa_triangle(g, p, c);
		fa_softmax(g, p, c, qr, kr, s->causal && j == qb, j, u, b);
		pb_matmul(p, c, s->dtype, j > 0, 0, qr, dv, kr, g->pr[b], g->T, g->v[b], dv,
			  g->o[u], dv);
	}
	/* out = O / max(l, FLT_MIN): a fully masked query (l = 0, O = 0) gives 0 */
	vec(p, c, SPYRE_VF_MAX, 0, F, F, qr, 1, g->l[u], 1, g->ctiny, 0, g->l[u], 1, 0, 0);
	vec(p, c, SPYRE_VF_DIV, SPYRE_VEC_SRC1_COL, F, s->out.dtype, qr, dv, g->o[u], dv, g->l[u],
	    1, g->ob[u], dv, 0, 0);
	g->pend[c] = true;
	g->pend_off[c] = (uint64_t)oe * g->es;
	g->pend_rows[c] = qr;
	g->pend_sp[c] = g->ob[u];
}

/* Units (batch index, query block) longest first onto the least loaded core. */
static int fa_assign(struct fa_gen *g, unsigned int ncores, int64_t nunits, int64_t **list,
		     int64_t *count)
{
	int64_t load[32] = { 0 }, w, u, i;
	unsigned int c, best;

	*list = malloc(sizeof(int64_t) * (size_t)nunits);
	if (!*list)
		return -ENOMEM;
	memset(count, 0, 32 * sizeof(int64_t));
	i = 0;
	/* causal work grows with the query block: hand out the longest first */
	for (w = g->nkb; w >= 1; w--)
		for (u = 0; u < nunits; u++) {
			if (fa_nkeys(g, u % g->nqb) != w)
				continue;
			best = 0;
			for (c = 1; c < ncores; c++)
				if (load[c] < load[best])
					best = c;
			load[best] += w;
			(*list)[i++] = u * 32 + best;
			count[best]++;
		}
	return 0;
}

int kern_fa(const struct fa_spec *s, unsigned int ncores, struct kprogs *out, char *why,
	    size_t whylen)
{
	const struct kview *kvs[5] = { &s->q, &s->k, &s->v, &s->mask, &s->out };
	int64_t nunits = 1, *list = NULL, count[32], r, i, maxc = 0, per_unit;
	struct fa_gen *g;
	unsigned int c, k, nb = s->nbatch;
	struct pb *p = NULL;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	for (k = 0; k < 5; k++)
		if ((k != 3 || s->mask_kind) && kvs[k]->slot + 1u > out->nslots)
			out->nslots = kvs[k]->slot + 1u;
	if (s->dtype != SPYRE_DT_FP32 && s->dtype != SPYRE_DT_FP16 && s->dtype != SPYRE_DT_BF16) {
		snprintf(why, whylen, "fused attention of this dtype is not lowered");
		return -EOPNOTSUPP;
	}
	if (ncores > 32 || !ncores || nb + 2 > K_MAX_DIMS) {
		snprintf(why, whylen, "fused attention: unsupported core count or batch dims");
		return -EOPNOTSUPP;
	}
	for (k = 0; k < nb; k++)
		nunits *= s->batch[k];
	if (!nunits || !s->lq || !s->dv)
		return 0;
	if (!s->lk || !s->d || s->d > 1024 || s->dv > 1024) {
		snprintf(why, whylen,
			 "fused attention needs at least one key and head dims of 1..1024");
		return -EOPNOTSUPP;
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->s = s;
	g->es = pb_dtype_size(s->dtype);
	g->mes = s->mask_kind ? pb_dtype_size(s->mdtype) : 1;
	/* blocks of 128 queries and keys, fewer when they do not fit or leave cores idle */
	g->T = 128;
	while (g->T > 8 && fa_layout(g, g->T) > PB_SP_BYTES)
		g->T /= 2;
	while (g->T > 32 && nunits * ((s->lq + g->T - 1) / g->T) < ncores &&
	       (s->lq + g->T / 2 - 1) / (g->T / 2) > (s->lq + g->T - 1) / g->T)
		g->T /= 2;
	if (fa_layout(g, g->T) > PB_SP_BYTES) {
		snprintf(why, whylen, "fused attention: head dims too large for the scratchpad");
		ret = -EOPNOTSUPP;
		goto done;
	}
	g->nqb = (s->lq + g->T - 1) / g->T;
	g->nkb = (s->lk + g->T - 1) / g->T;
	nunits *= g->nqb;
	per_unit = 6 + 16 * fa_nkeys(g, g->nqb - 1) + (s->mask_kind ? 2 * g->T : 0) *
		   fa_nkeys(g, g->nqb - 1) + (s->causal ? g->T + 1 : 0);
	if (per_unit * ncores + (int64_t)(g->T + 4) * ncores > PB_MAX_INSNS / 2) {
		snprintf(why, whylen, "fused attention: too many key blocks for one program");
		ret = -EOPNOTSUPP;
		goto done;
	}
	ret = fa_assign(g, ncores, nunits, &list, count);
	if (ret)
		goto done;
	for (c = 0; c < ncores; c++)
		maxc = count[c] > maxc ? count[c] : maxc;
	p = pb_new(ncores);
	if (!p) {
		ret = -ENOMEM;
		goto done;
	}
	for (c = 0; c < ncores; c++)
		fa_prologue(g, p, c);
	/* round r: every core's r-th unit (list holds unit * 32 + core, in hand-out order) */
	for (r = 0; r < maxc && !ret; r++) {
		int64_t seen[32] = { 0 };

		for (i = 0; i < nunits; i++) {
			c = (unsigned int)(list[i] % 32);
			if (seen[c]++ == r)
				fa_unit(g, p, c, list[i] / 32);
		}
		if (r + 1 == maxc || pb_count(p) + (uint64_t)per_unit * ncores > PB_MAX_INSNS) {
			for (c = 0; c < ncores; c++)
				fa_flush_store(g, p, c);
			ret = kprogs_add(out, p);
			if (!ret && r + 1 < maxc)
				for (c = 0; c < ncores; c++)
					fa_prologue(g, p, c);
		}
	}
done:
	pb_free(p);
	free(list);
	free(g);
	if (ret)
		kprogs_free(out);
	return ret;
}
