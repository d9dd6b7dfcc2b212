// SPDX-License-Identifier: MIT
/*
 * Graph views: reshape, permute, transpose, slice, expand move no data.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "graph_build.h"

/*
 * Strides of @x viewed as @shape without a copy, as torch.view computes
 * them: each run of old dims that are contiguous with one another (a
 * chunk) may be split or merged into new dims; false when a new dim would
 * straddle two chunks (a copy is needed).
 */
static bool view_strides(const struct gval *x, unsigned int ndim, const int64_t *shape,
			 int64_t *st)
{
	int64_t base, tn = 1, vn = 1;
	int td, vd = (int)ndim - 1;

	if (!x->ndim || !g_numel_of(x->ndim, x->shape))
		return false;
	base = x->strides[x->ndim - 1];
	for (td = (int)x->ndim - 1; td >= 0; td--) {
		tn *= x->shape[td];
		if (td == 0 || (x->shape[td - 1] != 1 && x->strides[td - 1] != tn * base)) {
			while (vd >= 0 && (vn < tn || shape[vd] == 1)) {
				st[vd] = vn * base;
				vn *= shape[vd];
				vd--;
			}
			if (vn != tn)
				return false;
			if (td > 0) {
				base = x->strides[td - 1];
				tn = 1;
				vn = 1;
			}
		}
	}
	return vd == -1;
}

int spyre_graph_reshape(spyre_graph *g, spyre_value x, unsigned int ndim, const int64_t *shape,
			spyre_value *out)
{
	int64_t vst[SPYRE_MAX_DIMS];
	static const char *call = "spyre_graph_reshape";
	int ret = g_check_val(g, call, x, "x");
	const struct gval *X;
	char a[96], b[96];
	spyre_value c;

	if (ret)
		return ret;
	if (!out)
		return spy_err(-EINVAL, "%s: out is NULL", call);
	ret = g_check_shape(call, ndim, shape);
	if (ret)
		return ret;
	X = &g->v[x];
	if (g_numel_of(ndim, shape) != g_numel_of(X->ndim, X->shape)) {
		g_shape_str(a, sizeof(a), X->ndim, X->shape);
		g_shape_str(b, sizeof(b), ndim, shape);
		return spy_err(-EINVAL, "%s: cannot reshape %s to %s", call, a, b);
	}
	if (!g_contiguous(X) && view_strides(X, ndim, shape, vst)) {
		/* a view of the same elements (a head split of a sliced projection) */
		ret = g_value(g, X->dt, ndim, shape, vst, X->off, X->store);
		if (ret < 0)
			return ret;
		*out = ret;
		return 0;
	}
	if (!g_contiguous(X)) {
		/* like torch.reshape: copy first */
		ret = spyre_graph_contiguous(g, x, &c);
		if (ret)
			return ret;
		x = c;
		X = &g->v[x];
	}
	ret = g_value(g, X->dt, ndim, shape, NULL, X->off, X->store);
	if (ret < 0)
		return ret;
	*out = ret;
	return 0;
}

int spyre_graph_permute(spyre_graph *g, spyre_value x, const int *perm, spyre_value *out)
{
	static const char *call = "spyre_graph_permute";
	int64_t sh[SPYRE_MAX_DIMS], st[SPYRE_MAX_DIMS];
	unsigned int d, seen = 0;
	int ret = g_check_val(g, call, x, "x");
	const struct gval *X;

	if (ret)
		return ret;
	if (!out || !perm)
		return spy_err(-EINVAL, "%s: perm or out is NULL", call);
	X = &g->v[x];
	for (d = 0; d < X->ndim; d++) {
		if (perm[d] < 0 || perm[d] >= (int)X->ndim || (seen & (1u << perm[d])))
			return spy_err(-EINVAL, "%s: not a permutation of %u dims", call, X->ndim);
		seen |= 1u << perm[d];
		sh[d] = X->shape[perm[d]];
		st[d] = X->strides[perm[d]];
	}
	ret = g_value(g, X->dt, X->ndim, sh, st, X->off, X->store);
	if (ret < 0)
		return ret;
	*out = ret;
	return 0;
}

int spyre_graph_transpose(spyre_graph *g, spyre_value x, int d0, int d1, spyre_value *out)
{
	static const char *call = "spyre_graph_transpose";
	int perm[SPYRE_MAX_DIMS], d, ret = g_check_val(g, call, x, "x");
	int nd;

	if (ret)
		return ret;
	nd = (int)g->v[x].ndim;
	if (d0 < 0)
		d0 += nd;
	if (d1 < 0)
		d1 += nd;
	if (d0 < 0 || d1 < 0 || d0 >= nd || d1 >= nd)
		return spy_err(-EINVAL, "%s: dims %d, %d out of range for %d dims", call, d0, d1,
			       nd);
	for (d = 0; d < nd; d++)
		perm[d] = d;
	perm[d0] = d1;
	perm[d1] = d0;
	return spyre_graph_permute(g, x, perm, out);
}

int spyre_graph_slice(spyre_graph *g, spyre_value x, int dim, int64_t start, int64_t end,
		      spyre_value *out)
{
	static const char *call = "spyre_graph_slice";
	int ret = g_check_val(g, call, x, "x");
	struct gval v;

	if (ret)
		return ret;
	if (!out)
		return spy_err(-EINVAL, "%s: out is NULL", call);
	v = g->v[x];
	ret = g_norm_dim(call, &v, dim, &dim);
	if (ret)
		return ret;
	if (start < 0 || end < start || end > v.shape[dim])
		return spy_err(-EINVAL, "%s: [%lld, %lld) outside dim %d of size %lld", call,
			       (long long)start, (long long)end, dim, (long long)v.shape[dim]);
	v.off += start * v.strides[dim];
	v.shape[dim] = end - start;
	ret = g_value(g, v.dt, v.ndim, v.shape, v.strides, v.off, v.store);
	if (ret < 0)
		return ret;
	*out = ret;
	return 0;
}

int spyre_graph_expand(spyre_graph *g, spyre_value x, unsigned int ndim, const int64_t *shape,
		       spyre_value *out)
{
	static const char *call = "spyre_graph_expand";
	int64_t st[SPYRE_MAX_DIMS];
	int ret = g_check_val(g, call, x, "x");
	const struct gval *X;
	unsigned int d, lead;

	if (ret)
		return ret;
	if (!out)
		return spy_err(-EINVAL, "%s: out is NULL", call);
	ret = g_check_shape(call, ndim, shape);
	if (ret)
		return ret;
	X = &g->v[x];
	if (ndim < X->ndim)
		return spy_err(-EINVAL, "%s: fewer dims than the source", call);
	lead = ndim - X->ndim;
	for (d = 0; d < ndim; d++) {
		if (d < lead) {
			st[d] = 0;
			continue;
		}
		if (X->shape[d - lead] == shape[d])
			st[d] = X->strides[d - lead];
		else if (X->shape[d - lead] == 1)
			st[d] = 0;
		else
			return spy_err(-EINVAL, "%s: dim %u of size %lld cannot expand to %lld",
				       call, d, (long long)X->shape[d - lead], (long long)shape[d]);
	}
	ret = g_value(g, X->dt, ndim, shape, st, X->off, X->store);
	if (ret < 0)
		return ret;
	*out = ret;
	return 0;
}
