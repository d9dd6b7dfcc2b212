// SPDX-License-Identifier: MIT
/*
 * Lowering of a graph: fusion of elementwise nodes into their producers,
 * the workspace plan, kernel specs (also the cache key), then programs and
 * one recipe.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "graph.h"
#include "graph_build.h"
#include "lower.h"

/* ---- fusion ---- */

static void count_uses(spyre_graph *g, int *uses)
{
	unsigned int i, k;

	memset(uses, 0, g->nst * sizeof(int));
	for (i = 0; i < g->nn; i++) {
		struct gnode *n = &g->n[i];

		if (n->dead)
			continue;
		for (k = 0; k < n->nin; k++)
			if (n->in[k] >= 0)
				uses[g->v[n->in[k]].store]++;
		if (n->kind != NK_EW) {
			uses[g->v[n->a].store]++;
			uses[g->v[n->b].store]++;
		}
		if (n->dual)
			uses[g->v[n->b2].store]++;
	}
	for (i = 0; i < g->noutputs; i++)
		uses[g->v[g->outputs[i]].store]++;
}

static bool same_shape(unsigned int na, const int64_t *a, unsigned int nb, const int64_t *b)
{
	return na == nb && !memcmp(a, b, na * sizeof(int64_t));
}

/* @v is exactly node @p's result, unpermuted. */
static bool identity_of(spyre_graph *g, int v, const struct gnode *p)
{
	const struct gval *x = &g->v[v], *o = &g->v[p->out];

	return x->store == o->store && !x->off && g_contiguous(x) &&
	       same_shape(x->ndim, x->shape, o->ndim, o->shape);
}

static bool perm_identity(const struct gnode *n)
{
	unsigned int d;

	if (!n->permuted)
		return true;
	for (d = 0; d < n->ndim; d++)
		if (n->perm[d] != (int)d)
			return false;
	return true;
}

/*
 * The expression of P followed by Q, where Q's inputs in @qmask (a bit per
 * input) are P's result: inputs are P's then Q's others, uops P's then Q's.
 * Written into @dst.
 */
static bool merge_expr(const struct gnode *p, const struct gnode *q, uint32_t qmask,
		       struct gnode *dst)
{
	int qmap[K_MAX_IN + K_MAX_UOPS], in[K_MAX_IN];
	unsigned int nin = p->nin, k, i, pn = p->nin, nq = 0;
	struct uop u[K_MAX_UOPS];

	for (k = 0; k < q->nin; k++)
		nq += (qmask >> k) & 1;
	if (p->nin + q->nin - nq > K_MAX_IN || p->nuops + q->nuops > K_MAX_UOPS)
		return false;
	memcpy(in, p->in, sizeof(in));
	for (k = 0; k < q->nin; k++) {
		unsigned int j;

		if ((qmask >> k) & 1)
			continue;
		/* a value P reads too is loaded once (x * cos + rotate_half(x) * sin) */
		for (j = 0; j < nin && (q->in[k] < 0 || in[j] != q->in[k]); j++)
			;
		qmap[k] = (int)j;
		if (j == nin)
			in[nin++] = q->in[k];
	}
	/* P's uop ids shift by the inputs Q adds */
	for (i = 0; i < p->nuops; i++) {
		u[i] = p->u[i];
		if (u[i].a >= (int)pn)
			u[i].a = (int8_t)(u[i].a + nin - pn);
		if (u[i].b >= (int)pn)
			u[i].b = (int8_t)(u[i].b + nin - pn);
	}
	for (k = 0; k < q->nin; k++)
		if ((qmask >> k) & 1)
			qmap[k] = (int)(nin + p->nuops - 1);
	for (i = 0; i < q->nuops; i++)
		qmap[q->nin + i] = (int)(nin + p->nuops + i);
	for (i = 0; i < q->nuops; i++) {
		u[p->nuops + i] = q->u[i];
		if (q->u[i].a >= 0)
			u[p->nuops + i].a = (int8_t)qmap[q->u[i].a];
		if (q->u[i].b >= 0)
			u[p->nuops + i].b = (int8_t)qmap[q->u[i].b];
	}
	dst->nin = nin;
	memcpy(dst->in, in, sizeof(in));
	dst->nuops = p->nuops + q->nuops;
	memcpy(dst->u, u, sizeof(u));
	return true;
}

/* MM producer P absorbs ew consumer Q (reading P's result as the inputs in @qmask). */
static bool fuse_mm(spyre_graph *g, struct gnode *p, unsigned int pidx, struct gnode *q,
		    uint32_t qmask)
{
	const struct gval *qo = &g->v[q->out];
	unsigned int k;

	if (qo->off || !g_contiguous(qo) || g->st[qo->store].node != (int)(q - g->n))
		return false;	/* Q writes part of a storage (cat) */
	for (k = 0; k < q->nuops; k++)
		if (uop_is_row(&q->u[k]))
			return false;
	for (k = 0; k < q->nin; k++) {
		const struct gstore *s = &g->st[g->v[q->in[k]].store];

		if (!((qmask >> k) & 1) && s->kind == ST_NODE && s->node >= (int)pidx)
			return false;	/* not computed before P runs */
	}
	if (!merge_expr(p, q, qmask, p))
		return false;
	if (q->ndim > p->ndim) {
		/* Q reads the product with leading 1 dims (a reshape): batch dims of 1 */
		p->ndim = q->ndim;
		memcpy(p->shape, q->shape, sizeof(p->shape));
	}
	p->out = q->out;
	g->st[g->v[q->out].store].node = (int)pidx;
	q->dead = true;
	return true;
}

/*
 * @v reads node @p's whole result in @q's iteration space: the identity
 * view, or for a matmul producer also its contiguous result seen with
 * leading 1 dims (a linear's [M, N] product as [1, M, N]), which the
 * matmul takes as batch dims of 1.
 */
static bool reads_result(spyre_graph *g, int v, const struct gnode *p, const struct gnode *q)
{
	const struct gval *x = &g->v[v], *o = &g->v[p->out];
	unsigned int d, lead;

	if (!same_shape(x->ndim, x->shape, q->ndim, q->shape))
		return false;
	if (identity_of(g, v, p))
		return true;
	if (p->kind != NK_MM || x->store != o->store || x->off || !g_contiguous(x) ||
	    !g_contiguous(o) || o->off || x->ndim <= o->ndim)
		return false;
	lead = x->ndim - o->ndim;
	for (d = 0; d < lead; d++)
		if (x->shape[d] != 1)
			return false;
	return same_shape(o->ndim, o->shape, o->ndim, x->shape + lead);
}

/*
 * Attention node @p's result read only by a copy @q into a permutation of
 * it (a transpose of [.., heads, tokens, dv] to [.., tokens, heads, dv]
 * made contiguous for the output projection): the attention stores its
 * rows straight into the copy's result. Its rows stay contiguous (dv
 * last), so the store costs what it did; the copy's pass through LPDDR5
 * is gone.
 */
static bool fold_attn_copy(spyre_graph *g, struct gnode *p, unsigned int pidx, struct gnode *q)
{
	const struct gval *o = &g->v[p->out], *x = &g->v[q->in[0]], *qo = &g->v[q->out];
	int map[SPYRE_MAX_DIMS];	/* q's dim d reads p's dim map[d] */
	bool used[SPYRE_MAX_DIMS] = { false };
	unsigned int d, e, nd = p->ndim, pass;

	if (q->nin != 1 || q->nuops != 1 || q->u[0].kind != U_VF ||
	    q->u[0].func != SPYRE_VF_COPY || q->u[0].a != 0 || q->out_col || q->permuted ||
	    x->dt != qo->dt || o->dt != x->dt || x->store != o->store || x->off || o->off ||
	    !g_contiguous(o) || o->ndim != nd || x->ndim != nd || q->ndim != nd ||
	    qo->ndim != nd || qo->off || !g_contiguous(qo) ||
	    g->st[qo->store].node != (int)(q - g->n) || p->permuted)
		return false;
	for (d = 0; d < nd; d++)
		map[d] = -1;
	/* dims of more than one element by their strides, then the others */
	for (pass = 0; pass < 2; pass++)
		for (d = 0; d < nd; d++) {
			if (map[d] >= 0 || (pass == 0) != (x->shape[d] > 1))
				continue;
			for (e = 0; e < nd; e++)
				if (!used[e] && o->shape[e] == x->shape[d] &&
				    (x->shape[d] == 1 || o->strides[e] == x->strides[d]))
					break;
			if (e == nd)
				return false;
			map[d] = (int)e;
			used[e] = true;
		}
	for (d = 0; d < nd; d++)
		if (map[d] == (int)nd - 1 && qo->strides[d] != 1 && x->shape[d] > 1)
			return false;	/* the attention stores whole rows of dv */
	for (d = 0; d < nd; d++)
		p->perm[map[d]] = (int)d;
	p->permuted = true;
	p->out = q->out;
	g->st[qo->store].node = (int)pidx;
	q->dead = true;
	return true;
}

/*
 * EW producer P read by Q (input @k, its only reader) through a view of
 * P's result other than the identity: torchao's per-channel scale, a cast
 * of the [N, 1] scale that the product's multiply reads as [1, N]. When
 * P's inputs are contiguous values of P's shape and P's result is a
 * contiguous storage only P writes, an element of that view is P's
 * expression over the same view of each input: Q reads P's inputs through
 * it, and P's expression joins Q's (which may then fuse into its matmul).
 */
static bool fold_view_producer(spyre_graph *g, struct gnode *p, unsigned int pidx,
			       struct gnode *q, unsigned int k)
{
	const struct gval *o = &g->v[p->out];
	struct gnode t;
	struct gval x;
	unsigned int j;

	/* P alone writes its whole storage (not one piece of a cat) */
	if (p->out_col || !perm_identity(p) || !perm_identity(q) || o->off || !g_contiguous(o) ||
	    g->st[o->store].node != (int)pidx ||
	    !same_shape(o->ndim, o->shape, p->ndim, p->shape) ||
	    g_numel_of(o->ndim, o->shape) != g->st[o->store].numel)
		return false;
	for (j = 0; j < p->nuops; j++)
		if (uop_is_row(&p->u[j]))
			return false;
	for (j = 0; j < p->nin; j++) {
		const struct gval *in = p->in[j] >= 0 ? &g->v[p->in[j]] : NULL;

		if (!in || !g_contiguous(in) || !same_shape(in->ndim, in->shape, o->ndim, o->shape))
			return false;
	}
	x = g->v[q->in[k]];	/* a copy: g_value may move the values */
	t = *p;
	for (j = 0; j < p->nin; j++) {
		struct gval in = g->v[p->in[j]];

		t.in[j] = g_value(g, in.dt, x.ndim, x.shape, x.strides, x.off + in.off, in.store);
		if (t.in[j] < 0)
			return false;
	}
	if (!merge_expr(&t, q, 1u << k, q))
		return false;
	p->dead = true;
	return true;
}

static int fuse(spyre_graph *g)
{
	int *uses = calloc(g->nst ? g->nst : 1, sizeof(int));
	unsigned int qi, k, j;
	bool again;

	if (!uses)
		return spy_err(-ENOMEM, "spyre_graph_compile: out of memory");
	for (qi = 0; qi < g->nn; qi++) {
		struct gnode *q = &g->n[qi];

		do {
			again = false;
			if (q->dead || q->kind != NK_EW)
				break;
			count_uses(g, uses);
			for (k = 0; k < q->nin && !again; k++) {
				const struct gval *v = &g->v[q->in[k]];
				const struct gstore *s = &g->st[v->store];
				uint32_t qmask = 0;
				int nsame = 0;
				bool ok = true;
				struct gnode *p;

				if (s->kind != ST_NODE || s->io >= 0)
					continue;
				p = &g->n[s->node];
				if (p->kind == NK_ATTN) {
					if (!p->dead && uses[v->store] == 1 &&
					    fold_attn_copy(g, p, (unsigned int)s->node, q))
						break;
					continue;
				}
				/* every use of P's result is an input of Q that reads it whole */
				for (j = 0; j < q->nin; j++)
					if (g->v[q->in[j]].store == v->store) {
						qmask |= 1u << j;
						nsame++;
						ok = ok && reads_result(g, q->in[j], p, q);
					}
				if (p->dead || uses[v->store] != nsame)
					continue;
				if (!ok) {
					if (p->kind == NK_EW && nsame == 1 &&
					    fold_view_producer(g, p, (unsigned int)s->node, q, k))
						again = true;
					continue;
				}
				if (p->kind == NK_MM) {
					if (!q->out_col && !q->permuted &&
					    fuse_mm(g, p, (unsigned int)s->node, q, qmask))
						again = true;
				} else if (p->kind == NK_EW && !p->out_col && perm_identity(p) &&
					   perm_identity(q) && identity_of(g, q->in[k], p) &&
					   merge_expr(p, q, qmask, q)) {
					p->dead = true;
					again = true;
				}
			}
		} while (again);
	}
	free(uses);
	return 0;
}

/* Values @x and @y are the same view of one storage. */
static bool same_view(const struct gval *x, const struct gval *y)
{
	return x->store == y->store && x->off == y->off && x->dt == y->dt &&
	       same_shape(x->ndim, x->shape, y->ndim, y->shape) &&
	       !memcmp(x->strides, y->strides, x->ndim * sizeof(int64_t));
}

/* Index of value @v among @in[0..*nin), appended when new (-1: no room). */
static int in_index(int *in, unsigned int *nin, int v)
{
	unsigned int j;

	for (j = 2; j < *nin; j++)
		if (in[j] == v)
			return (int)j;
	if (*nin == K_MAX_IN)
		return -1;
	in[*nin] = v;
	return (int)(*nin)++;
}

/*
 * Matmul Q reads the whole result of matmul P, which nothing else reads,
 * and both multiply the same A by B's of one shape, layout and dtype
 * (silu(x @ wg.T) * (x @ wu.T) after the epilogue fusion: P has silu, Q
 * the product with P's result). Q becomes one dual matmul over A: value 0
 * its own product, value 1 P's, P's epilogue applied to value 1 where Q
 * read P's result. A is read once, and P's result never goes through
 * LPDDR5. Returns true when merged (P dead).
 */
static bool fuse_dual(spyre_graph *g, struct gnode *p, struct gnode *q, uint32_t qmask)
{
	const struct gval *pa = &g->v[p->a], *qa = &g->v[q->a];
	const struct gval *pb = &g->v[p->b], *qb = &g->v[q->b];
	int in[K_MAX_IN], map[K_MAX_IN + K_MAX_UOPS];
	unsigned int nin = 2, k, i, nu = 0;
	struct uop u[K_MAX_UOPS];

	if (p->dual || q->dual || p->nuops + q->nuops > K_MAX_UOPS || !p->nuops ||
	    !same_view(pa, qa) || !g_is_float(pa->dt) || g->v[p->out].dt != pa->dt ||
	    pb->dt != qb->dt ||
	    !same_shape(pb->ndim, pb->shape, qb->ndim, qb->shape) ||
	    memcmp(pb->strides, qb->strides, pb->ndim * sizeof(int64_t)) ||
	    !same_shape(p->ndim, p->shape, q->ndim, q->shape))
		return false;
	in[0] = in[1] = -1;
	/* Q's inputs other than its product and P's result, then P's */
	for (k = 1; k < q->nin; k++) {
		if ((qmask >> k) & 1)
			continue;
		map[k] = in_index(in, &nin, q->in[k]);
		if (map[k] < 0)
			return false;
	}
	for (k = 1; k < p->nin; k++)
		if (in_index(in, &nin, p->in[k]) < 0)
			return false;
	/* P's expression first, over value 1 */
	for (i = 0; i < p->nuops; i++, nu++) {
		int8_t *ops[2] = { &u[nu].a, &u[nu].b };
		unsigned int o;

		u[nu] = p->u[i];
		for (o = 0; o < 2; o++) {
			int x = *ops[o];

			if (x < 0)
				continue;
			if (x == 0)
				*ops[o] = 1;
			else if (x < (int)p->nin)
				*ops[o] = (int8_t)in_index(in, &nin, p->in[x]);
			else
				*ops[o] = (int8_t)(nin + (unsigned int)x - p->nin);
		}
	}
	map[0] = 0;
	for (k = 1; k < q->nin; k++)
		if ((qmask >> k) & 1)
			map[k] = (int)(nin + p->nuops - 1);	/* P's result */
	for (i = 0; i < q->nuops; i++)
		map[q->nin + i] = (int)(nin + p->nuops + i);
	for (i = 0; i < q->nuops; i++, nu++) {
		u[nu] = q->u[i];
		if (u[nu].a >= 0)
			u[nu].a = (int8_t)map[q->u[i].a];
		if (u[nu].b >= 0)
			u[nu].b = (int8_t)map[q->u[i].b];
	}
	memcpy(q->in, in, sizeof(in));
	q->nin = nin;
	memcpy(q->u, u, sizeof(u));
	q->nuops = nu;
	q->dual = true;
	q->b2 = p->b;
	p->dead = true;
	return true;
}

/* Pairs of matmuls over one A whose results meet in an epilogue (fuse_dual). */
static int fuse_duals(spyre_graph *g, bool *merged)
{
	int *uses = calloc(g->nst ? g->nst : 1, sizeof(int));
	unsigned int qi, k, j;

	if (!uses)
		return spy_err(-ENOMEM, "spyre_graph_compile: out of memory");
	*merged = false;
	for (qi = 0; qi < g->nn; qi++) {
		struct gnode *q = &g->n[qi];

		if (q->dead || q->kind != NK_MM)
			continue;
		count_uses(g, uses);
		for (k = 1; k < q->nin; k++) {
			const struct gval *v = q->in[k] >= 0 ? &g->v[q->in[k]] : NULL;
			const struct gstore *s = v ? &g->st[v->store] : NULL;
			uint32_t qmask = 0;
			int nsame = 0;
			bool ok = true;
			struct gnode *p;

			if (!s || s->kind != ST_NODE || s->io >= 0 || s->node >= (int)qi)
				continue;
			p = &g->n[s->node];
			if (p->dead || p->kind != NK_MM)
				continue;
			for (j = 1; j < q->nin; j++)
				if (q->in[j] >= 0 && g->v[q->in[j]].store == v->store) {
					qmask |= 1u << j;
					nsame++;
					ok = ok && reads_result(g, q->in[j], p, q);
				}
			if (ok && uses[v->store] == nsame && fuse_dual(g, p, q, qmask)) {
				*merged = true;
				break;
			}
		}
	}
	free(uses);
	return 0;
}

/*
 * Drop nodes whose result nothing reads and no output holds, as long as
 * there are some: a lowering may leave one behind when a later op reads
 * its input another way (a matmul over an int8 weight takes the int8
 * value itself, not the cast a framework's graph wrote before it).
 */
static int drop_unused(spyre_graph *g)
{
	int *uses = calloc(g->nst ? g->nst : 1, sizeof(int));
	bool again;
	int i;

	if (!uses)
		return spy_err(-ENOMEM, "spyre_graph_compile: out of memory");
	do {
		again = false;
		count_uses(g, uses);
		for (i = (int)g->nn - 1; i >= 0; i--) {
			struct gnode *n = &g->n[i];
			int st = g->v[n->out].store;

			if (n->dead || g->st[st].kind != ST_NODE || g->st[st].io >= 0 || uses[st])
				continue;
			n->dead = true;
			again = true;
		}
	} while (again);
	free(uses);
	return 0;
}

/* ---- memory plan ---- */

struct blk {
	uint64_t off, size;
};

static int plan(spyre_graph *g, struct lowered *L, bool reuse)
{
	struct blk *live = calloc(g->nst + 1, sizeof(*live));
	int *owner = calloc(g->nst + 1, sizeof(int));
	unsigned int nlive = 0, i, k, j;

	if (!live || !owner) {
		free(live);
		free(owner);
		return spy_err(-ENOMEM, "spyre_graph_compile: out of memory");
	}
	for (i = 0; i < g->nst; i++)
		g->st[i].last_use = -1;
	for (i = 0; i < g->nn; i++) {
		struct gnode *n = &g->n[i];

		if (n->dead)
			continue;
		for (k = 0; k < n->nin; k++)
			if (n->in[k] >= 0)
				g->st[g->v[n->in[k]].store].last_use = (int)i;
		if (n->kind != NK_EW) {
			g->st[g->v[n->a].store].last_use = (int)i;
			g->st[g->v[n->b].store].last_use = (int)i;
		}
		if (n->dual)
			g->st[g->v[n->b2].store].last_use = (int)i;
		/* every writer too (cat writes one storage from several nodes) */
		g->st[g->v[n->out].store].last_use = (int)i;
	}
	L->ws = 0;
	L->inter = 0;
	/* host inputs are uploaded before the first kernel: live from the start */
	for (i = 0; i < g->nst; i++) {
		struct gstore *s = &g->st[i];
		uint64_t size = (s->bytes + 127) & ~127ull;

		if (s->kind != ST_HOST_INPUT || s->last_use < 0 || !size)
			continue;
		s->planned = true;
		live[nlive] = (struct blk){ L->ws, size };
		owner[nlive++] = (int)i;
		s->ws_off = L->ws;
		L->ws += size;
		L->inter += size;
	}
	for (i = 0; i < g->nn; i++) {
		struct gnode *n = &g->n[i];
		int so = g->v[n->out].store;
		struct gstore *s = &g->st[so];
		uint64_t size = (s->bytes + 127) & ~127ull, off = 0;

		if (n->dead)
			continue;
		if (s->last_use < (int)i)
			s->last_use = (int)i;
		if (s->io < 0 && size && !s->planned) {
			s->planned = true;
			/* first fit among the live blocks (sorted by offset) */
			for (k = 0; k < nlive; k++) {
				if (live[k].off - off >= size)
					break;
				off = live[k].off + live[k].size;
			}
			memmove(&live[k + 1], &live[k], (nlive - k) * sizeof(*live));
			memmove(&owner[k + 1], &owner[k], (nlive - k) * sizeof(int));
			live[k].off = off;
			live[k].size = size;
			owner[k] = so;
			nlive++;
			s->ws_off = off;
			L->inter += size;
			if (off + size > L->ws)
				L->ws = off + size;
			if (s->last_use < (int)i)
				s->last_use = (int)i;
		}
		/* free what dies here */
		for (k = 0, j = 0; k < nlive; k++) {
			if (reuse && g->st[owner[k]].last_use <= (int)i)
				continue;
			live[j] = live[k];
			owner[j++] = owner[k];
		}
		nlive = j;
	}
	free(live);
	free(owner);
	return 0;
}

/* ---- specs ---- */

/* Slot of storage @st in @ln (added when new). */
static int slot_of(struct lnode *ln, int st)
{
	unsigned int i;

	for (i = 0; i < ln->nslots; i++)
		if (ln->slot_store[i] == st)
			return (int)i;
	if (ln->nslots == 16)
		return -1;
	ln->slot_store[ln->nslots] = st;
	return (int)ln->nslots++;
}

/* View @v broadcast into an iteration space (trailing alignment). */
static int view(spyre_graph *g, struct lnode *ln, int v, unsigned int nd, const int64_t *shape,
		struct kview *kv)
{
	const struct gval *x = &g->v[v];
	unsigned int d, lead = nd - x->ndim;
	int slot = slot_of(ln, x->store);

	if (slot < 0 || x->ndim > nd)
		return -1;
	memset(kv, 0, sizeof(*kv));
	kv->dtype = (uint8_t)g_isa_dtype(x->dt);
	kv->slot = (uint8_t)slot;
	kv->off = x->off;
	for (d = 0; d < nd; d++) {
		if (d < lead)
			kv->strides[d] = 0;
		else
			kv->strides[d] = x->shape[d - lead] == shape[d] ? x->strides[d - lead] : 0;
	}
	return 0;
}

/* Output strides of a (row) node in its iteration space. */
static int out_view(spyre_graph *g, struct lnode *ln, const struct gnode *n, struct kview *kv)
{
	const struct gval *o = &g->v[n->out];
	unsigned int d, nd = n->ndim;
	int slot = slot_of(ln, o->store);

	if (slot < 0)
		return -1;
	memset(kv, 0, sizeof(*kv));
	kv->dtype = (uint8_t)g_isa_dtype(o->dt);
	kv->slot = (uint8_t)slot;
	kv->off = o->off;
	if (!n->permuted)
		return view(g, ln, n->out, nd, n->shape, kv);
	for (d = 0; d < nd; d++) {
		int od = n->perm[d];

		if (!n->out_col)
			kv->strides[d] = o->strides[od];
		else if (d == nd - 1)
			kv->strides[d] = 0;
		else
			kv->strides[d] = o->strides[n->keepdim ? od : (od < n->rdim ? od : od - 1)];
	}
	return 0;
}

/* Gather: table [V, D] rows, indices flattened (uniform stride), out [T, D]. */
static int spec_gather(spyre_graph *g, struct gnode *n, struct lnode *ln)
{
	struct ga_spec *s = &ln->u.ga;
	const struct gval *W = &g->v[n->a], *I = &g->v[n->b], *O = &g->v[n->out];
	int sw = slot_of(ln, W->store), si = slot_of(ln, I->store), so = slot_of(ln, O->store);

	if (sw < 0 || si < 0 || so < 0)
		return -1;
	memset(&ln->u, 0, sizeof(ln->u));
	s->magic = 0x31304147;
	s->dtype = (uint8_t)g_isa_dtype(W->dt);
	s->d = W->shape[1];
	s->nidx = O->shape[O->ndim - 1] ? g_numel_of(O->ndim, O->shape) / O->shape[O->ndim - 1] :
					  g_numel_of(I->ndim, I->shape);
	s->w.dtype = s->dtype;
	s->w.slot = (uint8_t)sw;
	s->w.off = W->off;
	s->w.strides[0] = W->strides[0];
	s->w.strides[1] = 1;
	s->idx.dtype = SPYRE_DT_INT32;
	s->idx.slot = (uint8_t)si;
	s->idx.off = I->off;
	s->idx.strides[0] = I->ndim ? I->strides[I->ndim - 1] : 1;	/* uniform (checked) */
	s->out.dtype = s->dtype;
	s->out.slot = (uint8_t)so;
	s->out.off = O->off;
	s->out.strides[0] = O->ndim >= 2 ? O->strides[O->ndim - 2] : 0;
	return 0;
}

/* Fused attention: q, k, v, mask and out viewed over their [batch.., rows, cols] spaces. */
static int spec_attn(spyre_graph *g, struct gnode *n, struct lnode *ln)
{
	struct fa_spec *s = &ln->u.fa;
	unsigned int nd = n->ndim;
	int64_t sh[SPYRE_MAX_DIMS];
	const struct gval *Q = &g->v[n->a], *K = &g->v[n->b], *V = &g->v[n->in[0]];

	memset(&ln->u, 0, sizeof(ln->u));
	s->magic = 0x31304146;
	s->nbatch = (uint8_t)(nd - 2);
	memcpy(s->batch, n->shape, (nd - 2) * sizeof(int64_t));
	s->dtype = (uint8_t)g_isa_dtype(Q->dt);
	s->causal = n->attn_causal;
	s->mask_kind = n->attn_mask;
	s->scale = n->attn_scale;
	s->lq = n->shape[nd - 2];
	s->lk = K->shape[K->ndim - 2];
	s->d = Q->shape[Q->ndim - 1];
	s->dv = V->shape[V->ndim - 1];
	memcpy(sh, n->shape, nd * sizeof(int64_t));
	sh[nd - 1] = s->d;
	if (view(g, ln, n->a, nd, sh, &s->q))
		return -1;
	sh[nd - 2] = s->lk;
	if (view(g, ln, n->b, nd, sh, &s->k))
		return -1;
	sh[nd - 1] = s->dv;
	if (view(g, ln, n->in[0], nd, sh, &s->v))
		return -1;
	if (s->mask_kind) {
		sh[nd - 2] = s->lq;
		sh[nd - 1] = s->lk;
		if (view(g, ln, n->in[1], nd, sh, &s->mask))
			return -1;
		s->mdtype = s->mask.dtype;
	}
	return out_view(g, ln, n, &s->out);
}

static int spec_node(spyre_graph *g, struct gnode *n, struct lnode *ln)
{
	struct ew_spec *e = n->kind == NK_EW ? &ln->u.ew : &ln->u.mm.epi;
	unsigned int k, nd = n->ndim;

	memset(&ln->u, 0, sizeof(ln->u));
	e->magic = 0x31305745;
	e->ndim = (uint8_t)nd;
	memcpy(e->shape, n->shape, nd * sizeof(int64_t));
	e->nin = (uint8_t)n->nin;
	e->nuops = (uint8_t)n->nuops;
	e->out_col = n->out_col;
	memcpy(e->u, n->u, n->nuops * sizeof(struct uop));
	for (k = 0; k < n->nin; k++)
		if (n->in[k] >= 0 && view(g, ln, n->in[k], nd, n->shape, &e->in[k]))
			return -1;
	if (n->kind == NK_MM) {
		struct mm_spec *m = &ln->u.mm;
		const struct gval *A = &g->v[n->a];
		int64_t ash[SPYRE_MAX_DIMS], bsh[SPYRE_MAX_DIMS];

		m->magic = 0x31304d4d;
		m->nbatch = (uint8_t)(nd - 2);
		memcpy(m->batch, n->shape, (nd - 2) * sizeof(int64_t));
		m->m = n->shape[nd - 2];
		m->n = n->shape[nd - 1];
		m->k = A->shape[A->ndim - 1];
		m->dtype = (uint8_t)g_isa_dtype(A->dt);
		m->mcast = g->ops->hw_version >= SPYRE_HW_VERSION(1, 12);
		m->b_int8 = g->v[n->b].dt == SPYRE_INT8 && A->dt != SPYRE_INT8;
		/* the product: fp32, or int32 for int8 operands */
		e->in[0].dtype = A->dt == SPYRE_INT8 ? SPYRE_DT_INT32 : SPYRE_DT_FP32;
		/* A as [batch.., M, K], B as [batch.., K, N] */
		memcpy(ash, n->shape, nd * sizeof(int64_t));
		ash[nd - 1] = m->k;
		memcpy(bsh, n->shape, nd * sizeof(int64_t));
		bsh[nd - 2] = m->k;
		if (view(g, ln, n->a, nd, ash, &m->a) || view(g, ln, n->b, nd, bsh, &m->b))
			return -1;
		if (n->dual) {
			m->dual = 1;
			e->in[1].dtype = SPYRE_DT_FP32;	/* the second product */
			if (view(g, ln, n->b2, nd, bsh, &m->b2))
				return -1;
		}
	}
	return out_view(g, ln, n, &e->out);
}

int g_lower(spyre_graph *g, struct lowered *L, unsigned int flags, const char *call)
{
	unsigned int i;
	int ret;

	memset(L, 0, sizeof(*L));
	ret = drop_unused(g);
	if (!ret && !(flags & SPYRE_COMPILE_NO_FUSION))
		ret = fuse(g);
	if (!ret && !(flags & SPYRE_COMPILE_NO_FUSION)) {
		bool merged = false;

		ret = fuse_duals(g, &merged);
		/* what reads a dual matmul's result may fuse into it now */
		if (!ret && merged)
			ret = fuse(g);
	}
	if (!ret)
		ret = plan(g, L, !(flags & SPYRE_COMPILE_OP_BY_OP));
	if (ret)
		return ret;
	L->k = calloc(g->nn ? g->nn : 1, sizeof(*L->k));
	if (!L->k)
		return spy_err(-ENOMEM, "%s: out of memory", call);
	for (i = 0; i < g->nn; i++) {
		struct gnode *n = &g->n[i];
		struct lnode *ln;

		L->nodes++;
		if (n->dead)
			continue;
		ln = &L->k[L->n++];
		ln->kind = n->kind;
		ln->name = n->name;
		if (n->kind == NK_GATHER ? spec_gather(g, n, ln) :
		    n->kind == NK_ATTN ? spec_attn(g, n, ln) : spec_node(g, n, ln))
			return spy_err(-EOPNOTSUPP, "%s: %s: more than 16 tensors in one kernel",
				       call, n->name);
		/* a 0 in the spec's slot list is fine: bindings say what each slot is */
	}
	L->ninputs = g->ninputs;
	L->noutputs = g->noutputs;
	return 0;
}

void lowered_free(struct lowered *L)
{
	free(L->k);
	memset(L, 0, sizeof(*L));
}

/* Append the bytes of the lowered graph (specs + bindings) to a key buffer. */
int lowered_key(spyre_graph *g, const struct lowered *L, void **key, size_t *len)
{
	size_t cap = 64 + L->n * (sizeof(struct lnode) + 16 * 24), n = 0;
	uint8_t *k = malloc(cap);
	unsigned int i, s;

	if (!k)
		return -ENOMEM;
#define PUT(p, sz)                                   \
	do {                                         \
		memcpy(k + n, (p), (sz));            \
		n += (sz);                           \
	} while (0)
	{
		uint32_t ver = SPYRE_OPS_VERSION, cnt = L->n;

		PUT(&ver, 4);
		PUT(&cnt, 4);
	}
	for (i = 0; i < L->n; i++) {
		const struct lnode *ln = &L->k[i];
		uint32_t kind = (uint32_t)ln->kind, ns = ln->nslots;

		PUT(&kind, 4);
		PUT(&ln->u, sizeof(ln->u));
		PUT(&ns, 4);
		for (s = 0; s < ln->nslots; s++) {
			const struct gstore *st = &g->st[ln->slot_store[s]];
			int64_t b[3] = { st->kind, st->io, (int64_t)st->ws_off };

			if (st->kind == ST_CONST) {
				b[1] = (int64_t)(uintptr_t)st->buf.bo;
				b[2] = (int64_t)st->buf.offset;
			}
			PUT(b, sizeof(b));
		}
	}
#undef PUT
	*key = k;
	*len = n;
	return 0;
}
