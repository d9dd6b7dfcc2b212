// SPDX-License-Identifier: MIT
/*
 * Composite graph ops spelt out once: embedding (one-hot rows times the
 * weight), scaled dot-product attention, cat.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "graph_build.h"

/* The fp32 iota constant (0, 1, ... n-1) as a graph value of shape [n]. */
int g_iota_value(spyre_graph *g, int64_t n, spyre_value *out)
{
	struct spyre_tensor t;
	struct spyre_buf buf;
	int ret;

	ret = ops_iota(g->ops, n, &buf);
	if (ret)
		return ret;
	t = spyre_tensor_make(SPYRE_FLOAT32, 1, &n, buf);
	return spyre_graph_constant(g, &t, out);
}

/*
 * Append "j - i" over an [r, c] plane (column index minus row index, exact
 * fp32 integers from the iota constant) to @e; returns its operand id.
 */
static int diag_offset(spyre_graph *g, struct ewb *e, int64_t r, int64_t c)
{
	int64_t sh[2] = { r, c }, st[2] = { 0, 1 };
	spyre_value io, row, col;
	int ret = g_iota_value(g, r > c ? r : c, &io);

	if (ret)
		return ret;
	row = g_value(g, SPYRE_FLOAT32, 2, sh, st, 0, g->v[io].store);
	st[0] = 1;
	st[1] = 0;
	col = g_value(g, SPYRE_FLOAT32, 2, sh, st, 0, g->v[io].store);
	if (row < 0 || col < 0)
		return -ENOMEM;
	return g_ew_op(e, SPYRE_VF_SUB, g_ew_in(e, row), g_ew_in(e, col), 0, 0);
}

/* Indices of uniform stride (1: int32, 2: int64 low words), else 0. */
static int64_t index_step(const struct gval *I)
{
	int64_t st = 0, want = 1;
	int d;

	for (d = (int)I->ndim - 1; d >= 0; d--) {
		if (I->shape[d] > 1) {
			if (!st)
				st = I->strides[d] / want;
			if (st < 1 || I->strides[d] != st * want)
				return 0;
		}
		want *= I->shape[d];
	}
	return st ? st : 1;
}

/* Card interface 1.3: out[..., :] = weight[idx[...], :] with LOAD GATHER. */
static int gather_rows(spyre_graph *g, const char *call, spyre_value weight, spyre_value ix,
		       spyre_value *out)
{
	int64_t sh[SPYRE_MAX_DIMS];
	unsigned int nd;
	struct gnode *n;
	int ret, step = (int)index_step(&g->v[ix]);

	if (step != 1 && step != 2) {
		ret = spyre_graph_contiguous(g, ix, &ix);	/* an int32 copy */
		if (ret)
			return ret;
	}
	if (g->v[weight].shape[1] > 1 && g->v[weight].strides[1] != 1) {
		ret = spyre_graph_contiguous(g, weight, &weight);
		if (ret)
			return ret;
	}
	nd = g->v[ix].ndim;
	memcpy(sh, g->v[ix].shape, nd * sizeof(int64_t));
	sh[nd] = g->v[weight].shape[1];
	ret = g_new_node(g, "embedding", NK_GATHER, g->v[weight].dt, nd + 1, sh, out);
	if (ret)
		return ret;
	(void)call;
	n = &g->n[g->nn - 1];
	n->ndim = nd + 1;
	memcpy(n->shape, sh, sizeof(sh));
	n->a = weight;
	n->b = ix;
	return 0;
}

int spyre_graph_embedding(spyre_graph *g, spyre_value weight, spyre_value idx,
			  spyre_value *out)
{
	static const char *call = "spyre_graph_embedding";
	int64_t sh[SPYRE_MAX_DIMS + 1];
	spyre_value io, oh, ix = idx, row, col;
	struct ewb e = { 0 };
	const struct gval *W, *I;
	int ret = g_check_val(g, call, weight, "weight");
	int a, d, r1, r2, f;
	unsigned int k;

	if (!ret)
		ret = g_check_val(g, call, idx, "indices");
	if (ret)
		return ret;
	if (!out)
		return spy_err(-EINVAL, "%s: out is NULL", call);
	W = &g->v[weight];
	I = &g->v[idx];
	/* integer rows move as bytes (LOAD GATHER), exactly; exact ints need 1.9 */
	if (W->ndim != 2 ||
	    !(g_is_float(W->dt) || (g_is_int(W->dt) && g->ops->hw_version >= SPYRE_IFACE_INT)))
		return spy_err(-EINVAL, "%s: weight must be a float (or, on interface 1.9, "
			       "int32/int64) [V, D] matrix", call);
	if (I->dt != SPYRE_INT32 && I->dt != SPYRE_INT64)
		return spy_err(-EINVAL, "%s: indices must be int32 or int64, not %s", call,
			       spyre_dtype_name(I->dt));
	if (I->ndim + 1 > SPYRE_MAX_DIMS)
		return spy_err(-EINVAL, "%s: too many index dims", call);
	if (I->dt == SPYRE_INT64) {
		/* the low words of little-endian int64 (indices < 2^31) */
		struct gval v = *I;

		for (k = 0; k < v.ndim; k++)
			v.strides[k] *= 2;
		ix = g_value(g, SPYRE_INT32, v.ndim, v.shape, v.strides, v.off * 2, v.store);
		if (ix < 0)
			return ix;
		I = &g->v[ix];
		W = &g->v[weight];
	}
	if (g->ops->hw_version >= SPYRE_HW_VERSION(1, 3))
		return gather_rows(g, call, weight, ix, out);
	/* before 1.3: one-hot [.., V] = relu(1 - (j - i)) * relu(1 + (j - i)), exact */
	ret = g_iota_value(g, W->shape[0], &io);
	if (ret)
		return ret;
	I = &g->v[ix];
	W = &g->v[weight];
	memcpy(sh, I->shape, I->ndim * sizeof(int64_t));
	sh[I->ndim] = 1;
	{
		int64_t st[SPYRE_MAX_DIMS + 1];

		memcpy(st, I->strides, I->ndim * sizeof(int64_t));
		st[I->ndim] = 0;
		col = g_value(g, SPYRE_INT32, I->ndim + 1, sh, st, I->off, I->store);
		if (col < 0)
			return col;
	}
	row = io;
	a = g_ew_in(&e, row);
	f = g_ew_op(&e, SPYRE_VF_COPY, g_ew_in(&e, col), -1, 0, 0);
	d = g_ew_op(&e, SPYRE_VF_SUB, a, f, 0, 0);
	r1 = g_ew_op(&e, SPYRE_VF_SCALE, d, -1, -1.0f, 1.0f);
	r1 = g_ew_op(&e, SPYRE_VF_RELU, r1, -1, 0, 0);
	r2 = g_ew_op(&e, SPYRE_VF_SCALE, d, -1, 1.0f, 1.0f);
	r2 = g_ew_op(&e, SPYRE_VF_RELU, r2, -1, 0, 0);
	g_ew_op(&e, SPYRE_VF_MUL, r1, r2, 0, 0);
	ret = g_make_ew(g, call, "embedding_onehot", &e, g->v[weight].dt, &oh);
	if (ret)
		return ret;
	return g_make_mm(g, call, "embedding", oh, weight, out);
}

/*
 * The fused attention kernel (kernels/attn.c) takes q, k, v of one float
 * type, rows contiguous, k/v batch dims equal to q's or broadcast (GQA's
 * expanded heads), a mask broadcasting to [.., Lq, Lk], head dims that fit
 * the scratchpad and key counts one program holds; the rest (and
 * SPYRE_ATTN_UNFUSED=1, for comparisons) keeps the unfused sequence.
 */
static bool attn_fusable(spyre_graph *g, spyre_value q, spyre_value k, spyre_value v,
			 spyre_value mask)
{
	const struct gval *Q = &g->v[q], *K = &g->v[k], *V = &g->v[v];
	const char *env = getenv("SPYRE_ATTN_UNFUSED");
	unsigned int nd = Q->ndim, d;

	if (env && *env && strcmp(env, "0"))
		return false;
	if (Q->dt != K->dt || Q->dt != V->dt ||
	    (Q->dt != SPYRE_FLOAT32 && Q->dt != SPYRE_FLOAT16 && Q->dt != SPYRE_BFLOAT16))
		return false;
	if (nd < 2 || nd > K_MAX_DIMS || K->ndim != nd || V->ndim != nd)
		return false;
	if (Q->shape[nd - 1] != K->shape[nd - 1] || K->shape[nd - 2] != V->shape[nd - 2])
		return false;
	if (!Q->shape[nd - 2] || !K->shape[nd - 2] || !Q->shape[nd - 1] ||
	    Q->shape[nd - 1] > 256 || V->shape[nd - 1] > 256 || K->shape[nd - 2] > 4096)
		return false;
	for (d = 0; d + 2 < nd; d++)
		if ((K->shape[d] != Q->shape[d] && K->shape[d] != 1) ||
		    (V->shape[d] != Q->shape[d] && V->shape[d] != 1))
			return false;
	if ((Q->shape[nd - 1] > 1 && Q->strides[nd - 1] != 1) ||
	    (K->shape[nd - 1] > 1 && K->strides[nd - 1] != 1) ||
	    (V->shape[nd - 1] > 1 && V->strides[nd - 1] != 1))
		return false;
	if (mask >= 0) {
		const struct gval *M = &g->v[mask];

		if (M->ndim > nd)
			return false;
		for (d = 0; d < M->ndim; d++) {
			int64_t want = d + 2 == M->ndim ? Q->shape[nd - 2] :
				       d + 1 == M->ndim ? K->shape[nd - 2] :
				       Q->shape[nd - M->ndim + d];

			if (M->shape[d] != want && M->shape[d] != 1)
				return false;
		}
		/* as unfused: a mask needs interface 1.3 (fully masked rows give 0) */
		return g->ops->hw_version >= SPYRE_HW_VERSION(1, 3) &&
		       (M->dt == SPYRE_BOOL || g_is_float(M->dt));
	}
	return true;
}

static int attn_node(spyre_graph *g, spyre_value q, spyre_value k, spyre_value v,
		     spyre_value mask, int causal, double scale, spyre_value *out)
{
	const struct gval *Q = &g->v[q];
	int64_t sh[SPYRE_MAX_DIMS];
	unsigned int nd = Q->ndim;
	struct gnode *n;
	int ret;

	memcpy(sh, Q->shape, sizeof(sh));
	sh[nd - 1] = g->v[v].shape[nd - 1];
	ret = g_new_node(g, "attention", NK_ATTN, g->v[v].dt, nd, sh, out);
	if (ret)
		return ret;
	n = &g->n[g->nn - 1];
	n->ndim = nd;
	memcpy(n->shape, sh, sizeof(sh));
	n->a = q;
	n->b = k;
	n->in[0] = v;
	n->nin = 1;
	if (mask >= 0) {
		n->in[1] = mask;
		n->nin = 2;
		n->attn_mask = g->v[mask].dt == SPYRE_BOOL ? 2 : 1;
	}
	n->attn_causal = !!causal;
	n->attn_scale = (float)scale;
	return 0;
}

int g_sdpa(spyre_graph *g, spyre_value q, spyre_value k, spyre_value v, spyre_value mask,
	   int causal, double scale, enum spyre_dtype sdt, spyre_value *out)
{
	static const char *call = "spyre_graph_sdpa";
	spyre_value kt, s, p, m;
	const struct gval *Q;
	int64_t lq, lk;
	int ret = g_check_val(g, call, q, "q");

	if (!ret)
		ret = g_check_val(g, call, k, "k");
	if (!ret)
		ret = g_check_val(g, call, v, "v");
	if (!ret && mask >= 0)
		ret = g_check_val(g, call, mask, "mask");
	if (ret)
		return ret;
	if (!out)
		return spy_err(-EINVAL, "%s: out is NULL", call);
	Q = &g->v[q];
	if (Q->ndim < 2 || g->v[k].ndim < 2)
		return spy_err(-EINVAL, "%s: q and k need 2+ dims", call);
	if (scale == 0)
		scale = 1.0 / sqrt((double)Q->shape[Q->ndim - 1]);
	lq = Q->shape[Q->ndim - 2];
	lk = g->v[k].shape[g->v[k].ndim - 2];
	if (attn_fusable(g, q, k, v, mask))
		return attn_node(g, q, k, v, mask, causal, scale, out);
	if (g->v[q].dt != sdt)
		ret = spyre_graph_cast(g, q, sdt, &q);
	if (!ret && g->v[k].dt != sdt)
		ret = spyre_graph_cast(g, k, sdt, &k);
	if (!ret)
		ret = spyre_graph_transpose(g, k, -1, -2, &kt);
	if (!ret)
		ret = spyre_graph_matmul(g, q, kt, &s);
	if (!ret)
		ret = spyre_graph_binary_scalar(g, SPYRE_BIN_MUL, s, scale, 0, &s);
	if (!ret && mask >= 0 && g->v[mask].dt == SPYRE_BOOL) {
		/* a bool mask keeps the scores where it is true */
		ret = spyre_graph_unary(g, SPYRE_UN_LOGICAL_NOT, mask, &m);
		if (!ret)
			ret = spyre_graph_masked_fill(g, s, m, -INFINITY, &s);
	} else if (!ret && mask >= 0) {
		m = mask;
		if (g->v[mask].dt != g->v[s].dt)
			ret = spyre_graph_cast(g, mask, g->v[s].dt, &m);
		if (!ret)
			ret = spyre_graph_binary(g, SPYRE_BIN_ADD, s, m, &s);
	}
	if (ret)
		return ret;
	if (causal) {
		/* s - 3e38 * min(relu(j - i), 1): exp() of a masked score is exactly 0 */
		struct ewb e = { 0 };
		int x, d;

		x = g_ew_in(&e, s);
		d = diag_offset(g, &e, lq, lk);
		if (d < 0)
			return d;
		d = g_ew_op(&e, SPYRE_VF_RELU, d, -1, 0, 0);
		m = g_ew_op(&e, SPYRE_VF_MIN, d, g_ew_const(&e, 1.0f), 0, 0);
		m = g_ew_op(&e, SPYRE_VF_SCALE, m, -1, -3e38f, -0.0f);
		g_ew_op(&e, SPYRE_VF_ADD, x, m, 0, 0);
		ret = g_make_ew(g, call, "causal_mask", &e, g->v[s].dt, &s);
		if (ret)
			return ret;
	}
	/*
	 * A query every key is masked from has scores of nothing but -inf: as
	 * PyTorch's SDPA, its probabilities are 0 (its output 0), not NaN.
	 * Without a mask no row is fully masked (the causal mask keeps key 0),
	 * and cards before interface 1.3 (no select) keep the plain softmax.
	 */
	if (mask >= 0 || g->ops->hw_version >= SPYRE_HW_VERSION(1, 3))
		ret = g_safe_softmax(g, s, &p);
	else
		ret = spyre_graph_softmax(g, s, -1, &p);
	if (!ret && g->v[p].dt != g->v[v].dt)
		ret = spyre_graph_cast(g, p, g->v[v].dt, &p);
	if (ret)
		return ret;
	return spyre_graph_matmul(g, p, v, out);
}

int spyre_graph_sdpa(spyre_graph *g, spyre_value q, spyre_value k, spyre_value v,
		     spyre_value mask, int causal, double scale, spyre_value *out)
{
	int ret = g_check_val(g, "spyre_graph_sdpa", q, "q");

	return ret ? ret : g_sdpa(g, q, k, v, mask, causal, scale, g->v[q].dt, out);
}

int spyre_graph_cat(spyre_graph *g, const spyre_value *xs, unsigned int n, int dim,
		    spyre_value *out)
{
	static const char *call = "spyre_graph_cat";
	int64_t shape[SPYRE_MAX_DIMS], at = 0;
	const struct gval *x0;
	unsigned int i, d;
	int s, v, ret;

	if (!g || !xs || !n || !out)
		return spy_err(-EINVAL, "%s: graph, values or out is NULL (or no values)", call);
	for (i = 0; i < n; i++) {
		ret = g_check_val(g, call, xs[i], "value");
		if (ret)
			return ret;
	}
	x0 = &g->v[xs[0]];
	ret = g_norm_dim(call, x0, dim, &dim);
	if (ret)
		return ret;
	if (!x0->ndim)
		return spy_err(-EINVAL, "%s: cat of scalars", call);
	if (x0->dt == SPYRE_INT64) {
		ret = g_need_int(g, call, "cat", x0);	/* int64 elements: 1.9 */
		if (ret)
			return ret;
	}
	memcpy(shape, x0->shape, sizeof(shape));
	shape[dim] = 0;
	for (i = 0; i < n; i++) {
		const struct gval *x = &g->v[xs[i]];

		for (d = 0; d < x0->ndim; d++)
			if (x->ndim != x0->ndim || x->dt != x0->dt ||
			    ((int)d != dim && x->shape[d] != x0->shape[d]))
				return spy_err(-EINVAL, "%s: value %u does not match value 0 "
					       "(dtype, dims, or a size outside dim %d)", call, i,
					       dim);
		shape[dim] += x->shape[dim];
	}
	s = g_new_store(g, ST_NODE, x0->dt, g_numel_of(x0->ndim, shape));
	if (s < 0)
		return s;
	v = g_value(g, g->v[xs[0]].dt, g->v[xs[0]].ndim, shape, NULL, 0, s);
	if (v < 0)
		return v;
	for (i = 0; i < n; i++) {
		struct ewb e = { 0 };
		struct gnode *nd;
		struct gval sl = g->v[v];
		int sv;

		sl.shape[dim] = g->v[xs[i]].shape[dim];
		sl.off = at * sl.strides[dim];
		at += sl.shape[dim];
		if (!sl.shape[dim])
			continue;
		sv = g_value(g, sl.dt, sl.ndim, sl.shape, sl.strides, sl.off, s);
		if (sv < 0)
			return sv;
		if (g_is_int(sl.dt) && g->ops->hw_version >= SPYRE_IFACE_INT)
			g_ew_iop(&e, SPYRE_VF_COPY, g_ew_in(&e, xs[i]), -1, g_int_t(sl.dt), 0);
		else
			g_ew_op(&e, SPYRE_VF_COPY, g_ew_in(&e, xs[i]), -1, 0, 0);
		g_ew_fix(&e);
		if (g_grow((void **)&g->n, &g->capn, g->nn, sizeof(*g->n)))
			return -ENOMEM;
		nd = &g->n[g->nn];
		memset(nd, 0, sizeof(*nd));
		nd->kind = NK_EW;
		nd->name = "cat";
		nd->out = sv;
		nd->a = nd->b = -1;
		nd->ndim = sl.ndim;
		memcpy(nd->shape, sl.shape, sizeof(sl.shape));
		nd->nin = 1;
		nd->in[0] = xs[i];
		nd->nuops = 1;
		nd->u[0] = e.u[0];
		if (g->st[s].node < 0)
			g->st[s].node = (int)g->nn;
		g->nn++;
	}
	if (g->st[s].node < 0) {
		/* every input is empty along dim: the result has no elements */
		int64_t sh[SPYRE_MAX_DIMS];

		memcpy(sh, g->v[v].shape, sizeof(sh));
		return g_fill(g, g->v[v].dt, g->v[v].ndim, sh, 0, out);
	}
	*out = v;
	return 0;
}

/*
 * tril/triu: select x where j - i <= k (tril) or >= k (triu), else 0. Float
 * and bool values (0 and 1 are exact through the fp32 unit: attention's
 * causal masks are bool).
 */
int spyre_graph_tril(spyre_graph *g, spyre_value x, int64_t k, int upper, spyre_value *out)
{
	static const char *call = "spyre_graph_tril";
	struct ewb e = { 0 };
	int64_t r, cc;
	int d, keep, ret = g_check_val(g, call, x, "x");

	if (ret)
		return ret;
	if (!out)
		return spy_err(-EINVAL, "%s: out is NULL", call);
	if (g->v[x].ndim < 2 || (!g_is_float(g->v[x].dt) && g->v[x].dt != SPYRE_BOOL))
		return g_unsupported(call, upper ? "triu" : "tril", &g->v[x],
				     "float or bool values of 2+ dims only");
	ret = g_need_select(g, call, upper ? "triu" : "tril", &g->v[x]);
	if (ret)
		return ret;
	r = g->v[x].shape[g->v[x].ndim - 2];
	cc = g->v[x].shape[g->v[x].ndim - 1];
	if (fabs((double)k) > (double)(1 << 24))
		return spy_err(-EINVAL, "%s: diagonal %lld beyond fp32 exact integers", call,
			       (long long)k);
	d = diag_offset(g, &e, r, cc);
	if (d < 0)
		return d;
	keep = g_ew_op(&e, upper ? SPYRE_VF_CMP_GE : SPYRE_VF_CMP_LE, d,
		       g_ew_const(&e, (float)k), 0, 0);
	g_ew_op(&e, SPYRE_VF_SELECT, g_ew_in(&e, x), keep, 0.0f, 0);
	return g_make_ew(g, call, upper ? "triu" : "tril", &e, g->v[x].dt, out);
}
