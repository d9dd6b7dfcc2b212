// SPDX-License-Identifier: MIT
/*
 * gather (torch.gather): out[i] = x[i with dim replaced by idx[i]], composed
 * from graph ops. Every output element's position in x is one linear index,
 * sum over d != dim of i_d * stride_d plus idx * stride_dim, built from
 * broadcast iotas in fp32 (exact while x has at most 2^24 elements), and the
 * elements are one row gather from x viewed as a [numel, 1] table.
 */
#include <string.h>

#include "../internal.h"
#include "graph_build.h"

#define GATHER_MAX_NUMEL ((int64_t)1 << 24)

int spyre_graph_gather(spyre_graph *g, spyre_value x, int dim, spyre_value idx,
		       spyre_value *out)
{
	static const char *call = "spyre_graph_gather";
	int64_t xs[SPYRE_MAX_DIMS], is[SPYRE_MAX_DIMS], stride[SPYRE_MAX_DIMS], numel = 1, one;
	int64_t bshape[SPYRE_MAX_DIMS], row[2];
	enum spyre_dtype xdt, idt, work;
	unsigned int xn, in, d;
	spyre_value lin, t, table, rows;
	int ret;

	ret = g_check_val(g, call, x, "x");
	if (!ret)
		ret = g_check_val(g, call, idx, "index");
	if (ret)
		return ret;
	if (!out)
		return spy_err(-EINVAL, "%s: out is NULL", call);
	spyre_graph_value_info(g, x, &xdt, &xn, xs);
	spyre_graph_value_info(g, idx, &idt, &in, is);
	if (idt != SPYRE_INT32 && idt != SPYRE_INT64)
		return spy_err(-EINVAL, "%s: index must be int32 or int64, not %s", call,
			       spyre_dtype_name(idt));
	if (!xn || in != xn)
		return spy_err(-EINVAL, "%s: index must have x's %u dims (got %u)", call, xn, in);
	if (dim < 0)
		dim += (int)xn;
	if (dim < 0 || dim >= (int)xn)
		return spy_err(-EINVAL, "%s: dim %d out of range for %u dims", call, dim, xn);
	for (d = 0; d < xn; d++)
		if ((int)d != dim && is[d] > xs[d])
			return spy_err(-EINVAL, "%s: index size %lld exceeds x's %lld in dim %u",
				       call, (long long)is[d], (long long)xs[d], d);
	for (d = xn; d-- > 0;) {
		stride[d] = numel;
		numel *= xs[d];
	}
	if (numel > GATHER_MAX_NUMEL)
		return g_unsupported(call, "gather", &g->v[x],
				     "linear indices are exact in fp32 up to 2^24 elements");
	if (!g_is_float(xdt) && xdt != SPYRE_INT32 && xdt != SPYRE_INT64)
		return g_unsupported(call, "gather", &g->v[x], "float, int32 and int64 only");

	/* linear index = idx * stride[dim] + sum of the other dims' iotas */
	ret = spyre_graph_cast(g, idx, SPYRE_FLOAT32, &lin);
	if (!ret && stride[dim] != 1)
		ret = spyre_graph_binary_scalar(g, SPYRE_BIN_MUL, lin, (double)stride[dim], 0, &lin);
	for (d = 0; d < xn && !ret; d++) {
		unsigned int k;

		if ((int)d == dim || is[d] == 1)
			continue;
		ret = spyre_graph_arange(g, 0.0, (double)stride[d], is[d], SPYRE_FLOAT32, &t);
		for (k = 0; k < xn; k++)
			bshape[k] = k == d ? is[d] : 1;
		if (!ret)
			ret = spyre_graph_reshape(g, t, xn, bshape, &t);
		if (!ret)
			ret = spyre_graph_binary(g, SPYRE_BIN_ADD, lin, t, &lin);
	}
	if (ret)
		return ret;
	for (d = 0, one = 1; d < in; d++)
		one *= is[d];
	if (!one) /* nothing to gather: an empty result of idx's shape */
		return spyre_graph_cast(g, idx, xdt, out);

	/* the elements of x as rows of one (ints: moved exactly on 1.9, else fp32 to 2^24) */
	work = g_is_float(xdt) || (g_is_int(xdt) && g->ops->hw_version >= SPYRE_IFACE_INT) ?
		       xdt : SPYRE_FLOAT32;
	ret = spyre_graph_cast(g, x, work, &table);
	row[0] = numel;
	row[1] = 1;
	if (!ret)
		ret = spyre_graph_reshape(g, table, 2, row, &table);
	if (!ret)
		ret = spyre_graph_cast(g, lin, SPYRE_INT32, &lin);
	if (!ret)
		ret = spyre_graph_embedding(g, table, lin, &rows);
	if (!ret)
		ret = spyre_graph_reshape(g, rows, in, is, &rows);
	if (!ret && work != xdt)
		ret = spyre_graph_cast(g, rows, xdt, &rows);
	if (!ret)
		*out = rows;
	return ret;
}
