// SPDX-License-Identifier: MIT
/*
 * int64 values and arange. The card has no 64-bit element type: an int64
 * tensor is handled as two int32 words per element (little endian: low
 * word first). Reading one reads its low words (a strided int32 view, so a
 * value outside the int32 range wraps to its low 32 bits); writing one is
 * two elementwise kernels into the two word slices of the result, the low
 * word the value (rounded to nearest even, saturating at the int32 range)
 * and the high word its sign (-1 or 0). Both run on the card's fp32 vector
 * unit: integers are exact up to 2^24 in magnitude, int32 -> int64 and
 * int64 -> int64 copies exact over the whole int32 range (a same-dtype
 * COPY moves bits, interface 1.4).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../internal.h"
#include "graph_build.h"

#define EXACT_INT ((double)(1 << 24))

int g_int64_low(spyre_graph *g, spyre_value x)
{
	/* a copy: g_value may move g->v while it reads the shape */
	const struct gval v = g->v[x];
	int64_t st[SPYRE_MAX_DIMS];
	unsigned int d;

	for (d = 0; d < v.ndim; d++)
		st[d] = v.strides[d] * 2;
	return g_value(g, SPYRE_INT32, v.ndim, v.shape, st, v.off * 2, v.store);
}

/* An ew node computing expression @e (already fixed up) into value @sv. */
static int slice_node(spyre_graph *g, const char *name, spyre_value sv, const struct ewb *e)
{
	const struct gval *v = &g->v[sv];
	struct gnode *nd;

	if (g_grow((void **)&g->n, &g->capn, g->nn, sizeof(*g->n)))
		return -ENOMEM;
	nd = &g->n[g->nn];
	memset(nd, 0, sizeof(*nd));
	nd->kind = NK_EW;
	nd->name = name;
	nd->out = sv;
	nd->a = nd->b = -1;
	nd->ndim = v->ndim;
	memcpy(nd->shape, v->shape, sizeof(v->shape));
	nd->nin = e->nin;
	memcpy(nd->in, e->in, sizeof(e->in));
	nd->nuops = e->nuops;
	memcpy(nd->u, e->u, sizeof(e->u));
	if (g->st[v->store].node < 0)
		g->st[v->store].node = (int)g->nn;
	g->nn++;
	return 0;
}

int g_write_int64(spyre_graph *g, const char *call, const char *name, struct ewb *e,
		  spyre_value *out)
{
	int64_t shape[SPYRE_MAX_DIMS], st[SPYRE_MAX_DIMS];
	unsigned int nd = 0, i;
	struct ewb hi = *e;
	int s, v, lo, h, x, ret;

	if (g->ops->hw_version < SPYRE_HW_VERSION(1, 3))
		return spy_err(-EOPNOTSUPP, "%s: %s to int64: needs card interface 1.3 (compare), "
			       "this card is %u.%u", call, name,
			       SPYRE_HW_VERSION_MAJOR_OF(g->ops->hw_version),
			       SPYRE_HW_VERSION_MINOR_OF(g->ops->hw_version));
	if (e->nuops + 3 > K_MAX_UOPS)
		return spy_err(-EOPNOTSUPP, "%s: %s to int64: expression too long", call, name);
	for (i = 0; i < e->nin; i++) {
		const struct gval *xv = &g->v[e->in[i]];

		ret = g_broadcast(call, nd, shape, xv->ndim, xv->shape, &nd, shape);
		if (ret)
			return ret;
	}
	if (!e->nin) {
		/* callers pass an input that gives the shape (fill: a broadcast scalar) */
		return spy_err(-EINVAL, "%s: internal: int64 expression without inputs", call);
	}
	/* high word: -1 where the rounded value is negative (x < -0.5), else 0 */
	x = e->nuops ? (int)(K_MAX_IN + e->nuops - 1) : 0;
	h = g_ew_op(&hi, SPYRE_VF_CMP_LT, x, g_ew_const(&hi, -0.5f), 0, 0);
	g_ew_op(&hi, SPYRE_VF_SCALE, h, -1, -1.0f, 0.0f);
	g_ew_fix(e);
	g_ew_fix(&hi);
	s = g_new_store(g, ST_NODE, SPYRE_INT64, g_numel_of(nd, shape));
	if (s < 0)
		return s;
	g->st[s].node = -1;
	v = g_value(g, SPYRE_INT64, nd, shape, NULL, 0, s);
	if (v < 0)
		return v;
	for (i = 0; i < nd; i++)
		st[i] = g->v[v].strides[i] * 2;
	lo = g_value(g, SPYRE_INT32, nd, shape, st, 0, s);
	h = g_value(g, SPYRE_INT32, nd, shape, st, 1, s);
	if (lo < 0 || h < 0)
		return -ENOMEM;
	ret = slice_node(g, name, lo, e);
	if (!ret)
		ret = slice_node(g, name, h, &hi);
	if (ret)
		return ret;
	*out = v;
	return 0;
}

/* The value of an expression that is just input @x (a COPY, so ew nodes have a uop). */
static int int64_from(spyre_graph *g, const char *call, const char *name, spyre_value x,
		      spyre_value *out)
{
	struct ewb e = { 0 };

	g_ew_op(&e, SPYRE_VF_COPY, g_ew_in(&e, x), -1, 0, 0);
	return g_write_int64(g, call, name, &e, out);
}

int g_cast_int64(spyre_graph *g, const char *call, spyre_value x, enum spyre_dtype dt,
		 spyre_value *out)
{
	struct ewb e = { 0 };
	int lo;

	if (g->v[x].dt == SPYRE_INT64) {
		lo = g_int64_low(g, x);
		if (lo < 0)
			return lo;
		if (dt == SPYRE_INT64)
			return int64_from(g, call, "cast", lo, out);
		g_ew_op(&e, SPYRE_VF_COPY, g_ew_in(&e, lo), -1, 0, 0);
		return g_make_ew(g, call, "cast", &e, dt, out);
	}
	return int64_from(g, call, "cast", x, out);
}

int g_fill_int64(spyre_graph *g, const char *call, unsigned int ndim, const int64_t *shape,
		 double value, spyre_value *out)
{
	spyre_value z;
	int ret;

	if (fabs(value) > EXACT_INT || value != nearbyint(value))
		return spy_err(-EOPNOTSUPP, "%s: int64 fill with %g: the card's vector unit holds "
			       "integers exactly up to 2^24", call, value);
	/* an int32 fill broadcast over the shape, then widened */
	ret = g_fill(g, SPYRE_INT32, 0, shape, value, &z);
	if (ret)
		return ret;
	{
		int64_t st[SPYRE_MAX_DIMS] = { 0 };
		spyre_value b = g_value(g, SPYRE_INT32, ndim, shape, st, 0, g->v[z].store);

		if (b < 0)
			return b;
		return int64_from(g, call, "fill", b, out);
	}
}

int spyre_graph_arange(spyre_graph *g, double start, double step, int64_t n,
		       enum spyre_dtype dt, spyre_value *out)
{
	static const char *call = "spyre_graph_arange";
	struct ewb e = { 0 };
	struct spyre_tensor t;
	struct spyre_buf buf;
	spyre_value io;
	double last;
	int ret;

	if (!g || !out)
		return spy_err(-EINVAL, "%s: graph or out is NULL", call);
	if (n < 0 || !isfinite(start) || !isfinite(step))
		return spy_err(-EINVAL, "%s: bad length %lld, start %g or step %g", call,
			       (long long)n, start, step);
	if (dt != SPYRE_FLOAT32 && dt != SPYRE_FLOAT16 && dt != SPYRE_BFLOAT16 &&
	    dt != SPYRE_INT32 && dt != SPYRE_INT64)
		return spy_err(-EOPNOTSUPP, "%s: arange of %s: float, int32 and int64 only", call,
			       spyre_dtype_name(dt));
	last = start + (double)(n ? n - 1 : 0) * step;
	if (n > (1 << 24) ||
	    (!g_is_float(dt) && (fabs(start) > EXACT_INT || fabs(last) > EXACT_INT ||
				 start != nearbyint(start) || step != nearbyint(step))))
		return spy_err(-EOPNOTSUPP, "%s: arange(%g, step %g, %lld elements) of %s: the "
			       "card's fp32 vector unit is exact for integers up to 2^24 only",
			       call, start, step, (long long)n, spyre_dtype_name(dt));
	if (!n)
		return g_fill(g, dt, 1, &n, 0, out);
	ret = ops_iota(g->ops, n, &buf);
	if (ret)
		return ret;
	t = spyre_tensor_make(SPYRE_FLOAT32, 1, &n, buf);
	ret = spyre_graph_constant(g, &t, &io);
	if (ret)
		return ret;
	g_ew_op(&e, SPYRE_VF_SCALE, g_ew_in(&e, io), -1, (float)step, (float)start);
	if (dt == SPYRE_INT64)
		return g_write_int64(g, call, "arange", &e, out);
	return g_make_ew(g, call, "arange", &e, dt, out);
}
