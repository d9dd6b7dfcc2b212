// SPDX-License-Identifier: MIT
/*
 * Elementwise / row kernel. The iteration space is coalesced (dimensions
 * merged where every operand is contiguous across them, size-1 dimensions
 * dropped) into outer dims x a plane [R x C]; the plane is cut into tiles
 * [tr x tc] (whole rows when a row function is involved) sized so that two
 * sets of tile buffers fit the scratchpad: tile i+1 loads while tile i
 * computes (double buffering). Tiles go round-robin to the cores.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tile.h"
#include "ew_plan.h"

void kprogs_free(struct kprogs *k)
{
	unsigned int i;

	for (i = 0; i < k->n; i++)
		free(k->img[i]);
	free(k->img);
	free(k->size);
	memset(k, 0, sizeof(*k));
}

int kprogs_add(struct kprogs *k, struct pb *p)
{
	void **img;
	size_t *size;
	int ret;

	img = realloc(k->img, (k->n + 1) * sizeof(*img));
	if (!img)
		return -ENOMEM;
	k->img = img;
	size = realloc(k->size, (k->n + 1) * sizeof(*size));
	if (!size)
		return -ENOMEM;
	k->size = size;
	ret = pb_finish(p, k->nslots, &k->img[k->n], &k->size[k->n]);
	if (ret)
		return ret;
	k->n++;
	return 0;
}

/*
 * Move a [rows x cols] grid between memory (element strides msr, msc from
 * byte @mem_off) and the scratchpad (row stride ssr elements, packed
 * columns).
 */
void xfer(struct pb *p, unsigned int core, int store, uint8_t slot, uint64_t mem_off,
	  uint32_t rows, uint32_t cols, int64_t msr, int64_t msc, uint32_t es, uint32_t sp_off,
	  uint32_t ssr)
{
	void (*f)(struct pb *, unsigned int, uint8_t, uint64_t, uint32_t, uint32_t, uint32_t,
		  uint32_t, uint32_t) = store ? pb_store : pb_load;
	uint32_t r;

	if (rows == 1)
		msr = 0;
	if (cols == 1) {
		if (rows == 1 || (msr == 1 && ssr == 1))
			f(p, core, slot, mem_off, 1, rows * es, 0, sp_off, 0);
		else
			f(p, core, slot, mem_off, rows, es, (uint32_t)(msr * es), sp_off, ssr * es);
	} else if (msc == 1) {
		f(p, core, slot, mem_off, rows, cols * es, (uint32_t)(msr * es), sp_off, ssr * es);
	} else {
		for (r = 0; r < rows; r++)
			f(p, core, slot, mem_off + (uint64_t)(r * msr * es), cols, es,
			  (uint32_t)(msc * es), sp_off + r * ssr * es, es);
	}
}

int ew_plan(struct ew_plan *pl, const struct ew_spec *s, bool keep_last)
{
	unsigned int nops = s->nin + 1, d, k, n = 0;
	int64_t sz[K_MAX_DIMS], st[K_MAX_DIMS][K_MAX_IN + 1];

	memset(pl, 0, sizeof(*pl));
	pl->numel = 1;
	for (d = 0; d < s->ndim; d++)
		pl->numel *= s->shape[d];
	if (!pl->numel)
		return 0;
	for (d = 0; d < s->ndim; d++) {
		if (s->shape[d] == 1 && !(keep_last && d == s->ndim - 1u))
			continue;
		sz[n] = s->shape[d];
		for (k = 0; k < nops; k++)
			st[n][k] = k < s->nin ? s->in[k].strides[d] : s->out.strides[d];
		if (n) {
			bool merge = !(keep_last && d == s->ndim - 1u);

			for (k = 0; k < nops && merge; k++)
				if (st[n - 1][k] != st[n][k] * sz[n])
					merge = false;
			if (merge) {
				sz[n - 1] *= sz[n];
				for (k = 0; k < nops; k++)
					st[n - 1][k] = st[n][k];
				continue;
			}
		}
		n++;
	}
	if (!n) {
		sz[0] = 1;
		for (k = 0; k < nops; k++)
			st[0][k] = 0;
		n = 1;
	}
	pl->C = sz[n - 1];
	pl->R = n >= 2 ? sz[n - 2] : 1;
	pl->nouter = n >= 2 ? n - 2 : 0;
	for (d = 0; d < pl->nouter; d++)
		pl->outer[d] = sz[d];
	for (k = 0; k < nops; k++) {
		pl->sc[k] = st[n - 1][k];
		pl->sr[k] = n >= 2 ? st[n - 2][k] : 0;
		for (d = 0; d < pl->nouter; d++)
			pl->so[k][d] = st[d][k];
	}
	pl->O = 1;
	for (d = 0; d < pl->nouter; d++)
		pl->O *= pl->outer[d];
	return 0;
}

uint8_t ew_class(const struct ew_plan *pl, unsigned int k)
{
	return (pl->C > 1 && pl->sc[k] ? 1 : 0) | (pl->R > 1 && pl->sr[k] ? 2 : 0);
}

/* Element offset of outer index @o for operand k. */
int64_t ew_outer_off(const struct ew_plan *pl, unsigned int k, int64_t o)
{
	int64_t off = 0;
	int d;

	for (d = (int)pl->nouter - 1; d >= 0; d--) {
		off += (o % pl->outer[d]) * pl->so[k][d];
		o /= pl->outer[d];
	}
	return off;
}

static bool strides_fit(const struct ew_plan *pl, unsigned int nops, const struct ew_spec *s)
{
	unsigned int k;

	for (k = 0; k < nops; k++) {
		uint32_t es = pb_dtype_size(k < s->nin ? s->in[k].dtype : s->out.dtype);

		if (pl->sc[k] < 0 || pl->sr[k] < 0 || pl->sc[k] * es > UINT32_MAX / 2 ||
		    pl->sr[k] * es > UINT32_MAX / 2)
			return false;
	}
	return true;
}

/* Instructions one tile costs (loads, compute, store). */
static uint32_t tile_insns(const struct ew_plan *pl, const struct ew_spec *s,
			   const struct texpr *t, uint32_t tr)
{
	uint32_t n = 0, k;

	for (k = 0; k <= s->nin; k++) {
		uint8_t cl = k < s->nin ? t->cls[k] : t->out_cls;

		n += (cl == CL_FULL && pl->sc[k] != 1) ? tr : 1;
	}
	for (k = 0; k < t->nv; k++)
		n += 1 + t->conv[k];
	return n + 2;
}

struct ew_tiles {
	const struct ew_plan *pl;
	const struct ew_spec *s;
	struct texpr *t;
	const uint8_t *cls;
	uint32_t tr, tc, nct, nrt;
	/*
	 * Per core and buffer parity, what each input's buffer holds in the
	 * program being built (element offset, rows, cols; rows 0: nothing). A
	 * tile whose input is the same part of memory as the one already in
	 * its buffer does not load it again: an input broadcast over an outer
	 * dim (rotary cos and sin over the heads) is read once per core.
	 */
	struct ew_held {
		int64_t el;
		uint32_t rows, cols;
	} (*held)[2][K_MAX_IN];
};

/* Whether input @k's tile (@el, @rows x @cols) is already in core @c's buffer @par. */
static bool ew_holds(const struct ew_tiles *g, unsigned int c, unsigned int par, unsigned int k,
		     int64_t el, uint32_t rows, uint32_t cols)
{
	struct ew_held *h;

	if (!g->held || c >= 32 || g->s->in[k].slot == g->s->out.slot)
		return false;	/* (an input in the output's buffer may change) */
	h = &g->held[c][par][k];
	if (h->rows && h->el == el && h->rows == rows && h->cols == cols)
		return true;
	h->el = el;
	h->rows = rows;
	h->cols = cols;
	return false;
}

/* Tile @ti: phase 0 loads its inputs, phase 1 computes and stores it. */
static void ew_tile(const struct ew_tiles *g, struct pb *p, unsigned int c, int64_t ti,
		    unsigned int par, int phase)
{
	const struct ew_plan *pl = g->pl;
	const struct ew_spec *s = g->s;
	int64_t ct = ti % g->nct, rt = (ti / g->nct) % g->nrt, o = ti / ((int64_t)g->nct * g->nrt);
	int64_t r0 = rt * g->tr, c0 = ct * g->tc;
	uint32_t trr = (uint32_t)(pl->R - r0 < g->tr ? pl->R - r0 : g->tr);
	uint32_t tcc = (uint32_t)(pl->C - c0 < g->tc ? pl->C - c0 : g->tc);
	unsigned int k, first = phase ? s->nin : 0, last = phase ? s->nin : s->nin - 1u;

	if (phase)
		texpr_eval(g->t, s, p, c, par, trr, tcc);
	if (!phase && !s->nin)
		return;
	for (k = first; k <= last; k++) {
		const struct kview *kv = k < s->nin ? &s->in[k] : &s->out;
		uint32_t es = pb_dtype_size(kv->dtype);
		uint8_t cl = k < s->nin ? g->cls[k] : g->t->out_cls;
		int64_t el = kv->off + ew_outer_off(pl, k, o) + r0 * pl->sr[k] + c0 * pl->sc[k];
		uint32_t rows = cl & 2 ? trr : 1, cols = cl & 1 ? tcc : 1;
		uint32_t ssr = cl == CL_COL ? 1 : g->tc;

		if (k < s->nin && ew_holds(g, c, par, k, el, rows, cols))
			continue;
		xfer(p, c, k == s->nin, kv->slot, (uint64_t)el * es, rows, cols, pl->sr[k],
		     pl->sc[k], es, k < s->nin ? g->t->off[par][k] : texpr_result(g->t, par), ssr);
	}
}

/* Round-robin tiles over the cores, loads of round j before the stores of j - 1. */
static int ew_emit(const struct ew_tiles *g, unsigned int ncores, uint32_t per_tile,
		   struct kprogs *out)
{
	int64_t T = g->pl->O * g->nct * g->nrt, rounds = (T + ncores - 1) / ncores, j, start = 0;
	struct pb *p = pb_new(ncores);
	unsigned int c;
	int ret = 0;

	if (!p)
		return -ENOMEM;
	for (j = 0; j < rounds && !ret; j++) {
		if (j == start) {
			for (c = 0; c < ncores && c < T; c++)
				texpr_prologue(g->t, g->s, p, c);
			if (g->held)	/* a new program: its scratchpad holds nothing yet */
				memset(g->held, 0, 32 * sizeof(*g->held));
		}
		for (c = 0; c < ncores && j * ncores + c < T; c++)
			ew_tile(g, p, c, j * ncores + c, (unsigned int)(j & 1), 0);
		if (j > start)
			for (c = 0; c < ncores && (j - 1) * ncores + c < T; c++)
				ew_tile(g, p, c, (j - 1) * ncores + c,
					(unsigned int)((j - 1) & 1), 1);
		if (j + 1 == rounds ||
		    pb_count(p) + 2ull * per_tile * ncores + 2 * ncores > PB_MAX_INSNS) {
			for (c = 0; c < ncores && j * ncores + c < T; c++)
				ew_tile(g, p, c, j * ncores + c, (unsigned int)(j & 1), 1);
			ret = kprogs_add(out, p);
			start = j + 1;
		}
	}
	pb_free(p);
	return ret;
}

/*
 * Whether an input that varies over the plane's rows is the same for
 * several outer indices (stride 0 on an outer dim): rotary cos and sin
 * broadcast over the heads.
 */
static bool outer_bcast(const struct ew_plan *pl, const struct ew_spec *s, const uint8_t *cls)
{
	unsigned int k, d;

	if (pl->O < 2)
		return false;
	for (k = 0; k < s->nin; k++)
		for (d = 0; d < pl->nouter; d++)
			if ((cls[k] & 2) && pl->outer[d] > 1 && !pl->so[k][d])
				return true;
	return false;
}

int kern_ew(const struct ew_spec *s, unsigned int ncores, struct kprogs *out, char *why,
	    size_t whylen)
{
	struct ew_plan pl;
	struct texpr t;
	uint8_t cls[K_MAX_IN];
	uint32_t tr, tc, nct, nrt, per_tile;
	bool whole = s->out_col, reuse;
	unsigned int k;
	int ret;

	memset(out, 0, sizeof(*out));
	out->nslots = 0;
	for (k = 0; k < s->nin; k++)
		if (s->in[k].slot + 1u > out->nslots)
			out->nslots = s->in[k].slot + 1u;
	if (s->out.slot + 1u > out->nslots)
		out->nslots = s->out.slot + 1u;
	for (k = 0; k < s->nuops; k++)
		if (uop_is_row(&s->u[k]))
			whole = true;
	ew_plan(&pl, s, whole);
	if (!pl.numel)
		return 0;
	for (k = 0; k < s->nuops; k++)
		if (s->u[k].kind == U_ROTH && pl.C % 2) {
			snprintf(why, whylen, "rotate half of rows of %lld (odd) values",
				 (long long)pl.C);
			return -EOPNOTSUPP;
		}
	if (!strides_fit(&pl, s->nin + 1, s)) {
		snprintf(why, whylen, "strides too large for the card's load/store unit");
		return -EOPNOTSUPP;
	}
	if ((pl.C > 1 && !pl.sc[s->nin] && !s->out_col) || (pl.R > 1 && !pl.sr[s->nin])) {
		snprintf(why, whylen, "the output overlaps itself (stride 0)");
		return -EOPNOTSUPP;
	}
	for (k = 0; k < s->nin; k++)
		cls[k] = ew_class(&pl, k);
	ret = texpr_analyse(&t, s, cls, s->out_col ? (pl.R > 1 ? CL_COL : CL_SCAL) :
					ew_class(&pl, s->nin), false, why, whylen);
	if (ret)
		return ret;
	/* tile: whole plane first, halve rows, then columns, until it fits */
	tc = pl.C > 65536 ? 65536 : (uint32_t)pl.C;
	if (whole)
		tc = (uint32_t)pl.C;
	tr = pl.R > 65536 ? 65536 : (uint32_t)pl.R;
	for (;;) {
		uint32_t end = pl.C > (1 << 21) && whole ? UINT32_MAX :
			       texpr_layout(&t, s, 0, tr, tc, 0);

		per_tile = tile_insns(&pl, s, &t, tr);
		if (end <= PB_SP_BYTES && (uint64_t)tr * tc <= (1u << 21) &&
		    per_tile * ncores <= PB_MAX_INSNS / 2)
			break;
		if (tr > 1) {
			tr = (tr + 1) / 2;
		} else if (!whole && tc > 64) {
			tc = align_up(tc / 2, 64);
		} else {
			snprintf(why, whylen, "a row of %lld elements does not fit the scratchpad",
				 (long long)pl.C);
			return -EOPNOTSUPP;
		}
	}
	/* enough tiles for every core */
	nct = (uint32_t)((pl.C + tc - 1) / tc);
	nrt = (uint32_t)((pl.R + tr - 1) / tr);
	if (pl.O * nct * nrt < ncores && pl.R > 1) {
		int64_t want = (ncores + pl.O * nct - 1) / (pl.O * nct);

		tr = (uint32_t)((pl.R + want - 1) / want);
		if (tr * tc < 512 && tc < 512)
			tr = (uint32_t)(pl.R < 512 / tc ? pl.R : (512 + tc - 1) / tc);
		nrt = (uint32_t)((pl.R + tr - 1) / tr);
	}
	if (pl.O * nct * nrt < ncores && !whole && tc > 1024) {
		int64_t want = (ncores + pl.O * nrt - 1) / (pl.O * nrt);

		tc = align_up((uint32_t)((pl.C + want - 1) / want), 256);
		nct = (uint32_t)((pl.C + tc - 1) / tc);
	}
	reuse = outer_bcast(&pl, s, cls);
	if (reuse && nct == 1 && pl.R >= ncores && tr * ncores >= pl.R &&
	    (pl.R + ncores - 1) / ncores * tc >= 512) {
		/*
		 * The plane in one tile per core (tr rows of whole columns): core c
		 * keeps plane tile c for every outer index, and the broadcast input
		 * is read once per buffer instead of once per tile.
		 */
		tr = (uint32_t)((pl.R + ncores - 1) / ncores);
		nrt = (uint32_t)((pl.R + tr - 1) / tr);
	}
	texpr_layout(&t, s, 0, tr, tc, 0);
	{
		struct ew_tiles g = { &pl, s, &t, cls, tr, tc, nct, nrt, NULL };

		if (reuse && ncores <= 32) {
			g.held = calloc(32, sizeof(*g.held));
			if (!g.held)
				return -ENOMEM;
		}
		ret = ew_emit(&g, ncores, per_tile, out);
		free(g.held);
	}
	if (ret)
		kprogs_free(out);
	return ret;
}
