// SPDX-License-Identifier: MIT
/*
 * Reductions over several dims in one call. Dims that sit next to each
 * other in memory (each the size of the inner ones apart, the common case
 * of contiguous tensors) merge into one dim of a view, reduced by a single
 * row kernel; otherwise the dims are reduced one at a time, innermost
 * first (mean: sums, then one scale by 1 / count).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../internal.h"
#include "graph_build.h"

/* Merge dims lo..hi of @x into one if memory allows; the view or < 0. */
static int merged_view(spyre_graph *g, spyre_value x, int lo, int hi)
{
	const struct gval *X = &g->v[x];
	int64_t sh[SPYRE_MAX_DIMS], st[SPYRE_MAX_DIMS], prod = 1, inner = 1;
	unsigned int n = 0;
	int d;

	for (d = hi; d >= lo; d--) {
		if (X->shape[d] == 1)
			continue;
		if (prod == 1) {
			inner = X->strides[d];
			prod = X->shape[d];
		} else if (X->strides[d] == inner * prod) {
			prod *= X->shape[d];
		} else {
			return -1;
		}
	}
	for (d = 0; d < (int)X->ndim; d++) {
		if (d > lo && d <= hi)
			continue;
		sh[n] = d == lo ? prod : X->shape[d];
		st[n++] = d == lo ? inner : X->strides[d];
	}
	for (d = lo; d <= hi; d++)	/* a 0-sized dim empties the merged one */
		if (!X->shape[d])
			sh[lo] = 0;
	return g_value(g, X->dt, n, sh, st, X->off, X->store);
}

int spyre_graph_reduce_dims(spyre_graph *g, enum spyre_reduce_op op, spyre_value x,
			    const int *dims, unsigned int ndims, int keepdim, spyre_value *out)
{
	static const char *call = "spyre_graph_reduce_dims";
	int64_t kshape[SPYRE_MAX_DIMS], oshape[SPYRE_MAX_DIMS], count = 1;
	bool red[SPYRE_MAX_DIMS] = { false };
	unsigned int nd, ond = 0, i;
	int d, lo = -1, hi = -1, v, ret = g_check_val(g, call, x, "x");
	spyre_value t;

	if (ret)
		return ret;
	if (!out || (ndims && !dims) || (unsigned int)op >= SPYRE_RED_COUNT)
		return spy_err(-EINVAL, "%s: bad op %d, dims or out is NULL", call, (int)op);
	nd = g->v[x].ndim;
	if (!nd)
		return spy_err(-EINVAL, "%s: a scalar has no dim to reduce", call);
	for (i = 0; i < (ndims ? ndims : nd); i++) {
		ret = g_norm_dim(call, &g->v[x], ndims ? dims[i] : (int)i, &d);
		if (ret)
			return ret;
		if (red[d])
			return spy_err(-EINVAL, "%s: dim %d given twice", call, d);
		red[d] = true;
		lo = lo < 0 || d < lo ? d : lo;
		hi = d > hi ? d : hi;
	}
	for (d = 0; d < (int)nd; d++) {
		kshape[d] = red[d] ? 1 : g->v[x].shape[d];
		if (red[d])
			count *= g->v[x].shape[d];
		else
			oshape[ond++] = g->v[x].shape[d];
	}
	if (hi == lo)
		return spyre_graph_reduce(g, op, x, lo, keepdim, out);
	for (d = lo; d <= hi && red[d]; d++)
		;
	v = d > hi ? merged_view(g, x, lo, hi) : -1;
	if (v >= 0) {
		ret = spyre_graph_reduce(g, op, v, lo, 0, &t);
	} else {
		/* one dim at a time, innermost first, dims kept so indices hold */
		enum spyre_reduce_op step = op == SPYRE_RED_MEAN ? SPYRE_RED_SUM : op;

		t = x;
		for (d = hi, ret = 0; d >= lo && !ret; d--)
			if (red[d])
				ret = spyre_graph_reduce(g, step, t, d, 1, &t);
		if (!ret && op == SPYRE_RED_MEAN)
			ret = spyre_graph_binary_scalar(g, SPYRE_BIN_MUL, t,
							count ? 1.0 / (double)count : NAN, 0, &t);
	}
	if (ret)
		return ret;
	return keepdim ? spyre_graph_reshape(g, t, nd, kshape, out) :
			 spyre_graph_reshape(g, t, ond, oshape, out);
}
