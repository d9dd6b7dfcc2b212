// SPDX-License-Identifier: MIT
/*
 * Integer ops: int32 and int64 computed exactly in the vector unit's
 * integer mode (card interface 1.9; Documentation/spyre-ops.rst,
 * "Integers"). An expression over integers keeps its values in one ISA
 * integer type T (INT32 for int32, INT64 for int64): every uop's result is
 * T, so each op wraps exactly as PyTorch's does in that dtype, and an
 * operand of another type (bool, int8) is first converted to T by a COPY.
 * int64 is a real 8-byte element of the card. Older cards refuse these
 * ops with -EOPNOTSUPP naming the interface they need.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../internal.h"
#include "graph_build.h"

/* Integers that a double holds exactly: the scalar arguments of the API. */
#define EXACT_DOUBLE 9007199254740992.0 /* 2^53 */

bool g_is_int(enum spyre_dtype dt)
{
	return dt == SPYRE_INT32 || dt == SPYRE_INT64;
}

uint8_t g_int_t(enum spyre_dtype dt)
{
	return dt == SPYRE_INT64 ? SPYRE_DT_INT64 : SPYRE_DT_INT32;
}

int g_need_int(spyre_graph *g, const char *call, const char *op, const struct gval *x)
{
	char why[112];

	if (g->ops->hw_version >= SPYRE_IFACE_INT)
		return 0;
	snprintf(why, sizeof(why), "exact integers need card interface 1.9 (the vector unit's "
		 "integer mode), this card is %u.%u", SPYRE_HW_VERSION_MAJOR_OF(g->ops->hw_version),
		 SPYRE_HW_VERSION_MINOR_OF(g->ops->hw_version));
	return g_unsupported(call, op, x, why);
}

int g_ew_iop(struct ewb *b, unsigned int func, int a, int bb, uint8_t t, int64_t k)
{
	int v = g_ew_op(b, func, a, bb, 0, 0);

	b->u[b->nuops - 1].dt = t;
	b->u[b->nuops - 1].k = k;
	return v;
}

int g_ew_iconst(struct ewb *b, int64_t k, uint8_t t)
{
	int v = g_ew_const(b, (float)k);

	b->u[b->nuops - 1].dt = t;
	b->u[b->nuops - 1].k = k;
	return v;
}

/* Operand @x (an input of dtype @dt, or a uop of type @t) as type @t. */
int g_int_as(struct ewb *b, int x, enum spyre_dtype dt, uint8_t t)
{
	if ((dt == SPYRE_INT32 && t == SPYRE_DT_INT32) ||
	    (dt == SPYRE_INT64 && t == SPYRE_DT_INT64))
		return x;
	return g_ew_iop(b, SPYRE_VF_COPY, x, -1, t, 0);
}

/* @v as an exact integer constant argument, or -EOPNOTSUPP. */
static int int_scalar(const char *call, const char *op, const struct gval *x, double v,
		      int64_t *out)
{
	char why[96];

	if (!(fabs(v) <= EXACT_DOUBLE) || v != nearbyint(v)) {
		snprintf(why, sizeof(why), "the scalar %g is not an integer a double holds "
			 "exactly (|v| <= 2^53)", v);
		return g_unsupported(call, op, x, why);
	}
	*out = (int64_t)v;
	return 0;
}

/* The card function of an integer binary op, 0xff if none. */
static uint8_t int_func(enum spyre_binary_op op)
{
	switch (op) {
	case SPYRE_BIN_ADD: return SPYRE_VF_ADD;
	case SPYRE_BIN_SUB: return SPYRE_VF_SUB;
	case SPYRE_BIN_MUL: return SPYRE_VF_MUL;
	case SPYRE_BIN_MAX: return SPYRE_VF_MAX;
	case SPYRE_BIN_MIN: return SPYRE_VF_MIN;
	case SPYRE_BIN_EQ: return SPYRE_VF_CMP_EQ;
	case SPYRE_BIN_NE: return SPYRE_VF_CMP_NE;
	case SPYRE_BIN_LT: return SPYRE_VF_CMP_LT;
	case SPYRE_BIN_LE: return SPYRE_VF_CMP_LE;
	case SPYRE_BIN_GT: return SPYRE_VF_CMP_GT;
	case SPYRE_BIN_GE: return SPYRE_VF_CMP_GE;
	case SPYRE_BIN_BITWISE_AND: return SPYRE_VF_AND;
	case SPYRE_BIN_BITWISE_OR: return SPYRE_VF_OR;
	case SPYRE_BIN_BITWISE_XOR: return SPYRE_VF_XOR;
	case SPYRE_BIN_FLOOR_DIVIDE: return SPYRE_VF_FLOORDIV;
	case SPYRE_BIN_REMAINDER: return SPYRE_VF_REM;
	case SPYRE_BIN_LSHIFT: return SPYRE_VF_SHL;
	case SPYRE_BIN_RSHIFT: return SPYRE_VF_SHR;
	default: return 0xff;
	}
}

/*
 * Bool operands: and/or/xor of 0/1 are min/max/ne in fp32, exact; PyTorch's
 * add and mul of bools are or and and, maximum and minimum likewise.
 */
static uint8_t bool_func(enum spyre_binary_op op)
{
	switch (op) {
	case SPYRE_BIN_ADD: return SPYRE_VF_MAX;
	case SPYRE_BIN_MUL: return SPYRE_VF_MIN;
	case SPYRE_BIN_MAX: return SPYRE_VF_MAX;
	case SPYRE_BIN_MIN: return SPYRE_VF_MIN;
	case SPYRE_BIN_BITWISE_AND: return SPYRE_VF_MIN;
	case SPYRE_BIN_BITWISE_OR: return SPYRE_VF_MAX;
	case SPYRE_BIN_BITWISE_XOR: return SPYRE_VF_CMP_NE;
	default: return 0xff;
	}
}

int g_int_binary(spyre_graph *g, const char *call, const struct spyre_op_info *row,
		 spyre_value a, spyre_value b, bool scalar, double s, int reverse,
		 spyre_value *out)
{
	const struct gval *A = &g->v[a];
	enum spyre_dtype dt = A->dt;
	enum spyre_dtype rdt = row->result == SPYRE_RESULT_BOOL ? SPYRE_BOOL : dt;
	struct ewb e = { 0 };
	uint8_t t, f;
	int64_t k = 0;
	int x, y, ret;

	if (dt == SPYRE_BOOL) {
		f = bool_func(row->op);
		if (f == 0xff || scalar)
			return g_unsupported(call, row->name, A, "no card function for bool");
		g_ew_op(&e, f, g_ew_in(&e, a), g_ew_in(&e, b), 0, 0);
		return g_make_ew(g, call, row->name, &e, SPYRE_BOOL, out);
	}
	ret = g_need_int(g, call, row->name, A);
	if (ret)
		return ret;
	f = int_func(row->op);
	if (f == 0xff)
		return g_unsupported(call, row->name, A, "no integer card function for it");
	t = g_int_t(dt);
	x = g_ew_in(&e, a);
	if (scalar) {
		ret = int_scalar(call, row->name, A, s, &k);
		if (ret)
			return ret;
		y = g_ew_iconst(&e, k, t);
		if (reverse) {
			int tmp = x;

			x = y;
			y = tmp;
		}
	} else {
		y = g_ew_in(&e, b);
	}
	g_ew_iop(&e, f, x, y, t, 0);
	return g_make_ew(g, call, row->name, &e, rdt, out);
}

int g_int_unary(spyre_graph *g, const char *call, const struct spyre_op_info *row,
		spyre_value x, spyre_value *out)
{
	const struct gval *X = &g->v[x];
	struct ewb e = { 0 };
	uint8_t t = g_int_t(X->dt);
	int i, ret;

	if (X->dt == SPYRE_BOOL && row->op == SPYRE_UN_BITWISE_NOT) {
		/* ~ of a bool is logical not (x == 0), exact in fp32 */
		ret = g_need_iface(g, 3, call, row->name, X);
		if (ret)
			return ret;
		g_ew_op(&e, SPYRE_VF_CMP_EQ, g_ew_in(&e, x), g_ew_const(&e, 0.0f), 0, 0);
		return g_make_ew(g, call, row->name, &e, SPYRE_BOOL, out);
	}
	ret = g_need_int(g, call, row->name, X);
	if (ret)
		return ret;
	i = g_ew_in(&e, x);
	switch (row->op) {
	case SPYRE_UN_NEG:
		g_ew_iop(&e, SPYRE_VF_NEG, i, -1, t, 0);
		break;
	case SPYRE_UN_ABS:
		g_ew_iop(&e, SPYRE_VF_ABS, i, -1, t, 0);
		break;
	case SPYRE_UN_BITWISE_NOT:
		g_ew_iop(&e, SPYRE_VF_NOT, i, -1, t, 0);
		break;
	default:
		return g_unsupported(call, row->name, X, "no integer card function for it");
	}
	return g_make_ew(g, call, row->name, &e, X->dt, out);
}

/*
 * Casts from or to int32/int64: float -> integer truncates toward zero
 * (NaN and out of range: the type's minimum, as PyTorch on x86); integer
 * -> integer keeps the low bits; integer -> float rounds to nearest even;
 * -> bool is x != 0.
 */
int g_int_cast(spyre_graph *g, const char *call, spyre_value x, enum spyre_dtype dt,
	       spyre_value *out)
{
	const struct gval *X = &g->v[x];
	struct ewb e = { 0 };
	int i, ret = g_need_int(g, call, "cast", X);

	if (ret)
		return ret;
	i = g_ew_in(&e, x);
	if (dt == SPYRE_BOOL) {
		uint8_t t = g_int_t(X->dt);

		g_ew_iop(&e, SPYRE_VF_CMP_NE, i, g_ew_iconst(&e, 0, t), t, 0);
	} else if (g_is_int(dt) || dt == SPYRE_INT8) {
		/* int8 results: the low bits of the int32 (or of the int64's) value */
		g_ew_iop(&e, SPYRE_VF_COPY, i, -1, g_int_t(dt), 0);
	} else if (X->dt == SPYRE_INT64) {
		/* int64 -> fp32 in integer mode (rounds to nearest even), then the float */
		g_ew_op(&e, SPYRE_VF_COPY, i, -1, 0, 0);
	} else {
		g_ew_op(&e, SPYRE_VF_COPY, i, -1, 0, 0);	/* int32 -> float: exact rounding */
	}
	return g_make_ew(g, call, "cast", &e, dt, out);
}

int g_int_fill(spyre_graph *g, enum spyre_dtype dt, unsigned int ndim, const int64_t *shape,
	       double value, spyre_value *out)
{
	static const char *call = "fill";
	struct gval shp = { .dt = dt, .ndim = ndim };
	struct ewb e = { 0 };
	struct gnode *n;
	int64_t sh[SPYRE_MAX_DIMS], k = 0;
	int ret;

	memcpy(shp.shape, shape, ndim * sizeof(int64_t));
	ret = g_need_int(g, call, "fill", &shp);
	if (!ret)
		ret = int_scalar(call, "fill", &shp, value, &k);
	if (ret)
		return ret;
	memcpy(sh, shape, ndim * sizeof(int64_t));
	g_ew_iconst(&e, k, g_int_t(dt));
	g_ew_fix(&e);
	ret = g_new_node(g, "fill", NK_EW, dt, ndim, sh, out);
	if (ret)
		return ret;
	n = &g->n[g->nn - 1];
	n->ndim = ndim;
	memcpy(n->shape, sh, sizeof(sh));
	n->nuops = 1;
	n->u[0] = e.u[0];
	return 0;
}

/* start + i * step, exactly: the fp32 iota (exact below 2^24) converted, then integers. */
int g_int_arange(spyre_graph *g, const char *call, double start, double step, int64_t n,
		 enum spyre_dtype dt, spyre_value io, spyre_value *out)
{
	struct gval shp = { .dt = dt, .ndim = 1, .shape = { n } };
	struct ewb e = { 0 };
	uint8_t t = g_int_t(dt);
	int64_t k0 = 0, k1 = 0;
	int i, ret;

	ret = g_need_int(g, call, "arange", &shp);
	if (!ret)
		ret = int_scalar(call, "arange", &shp, start, &k0);
	if (!ret)
		ret = int_scalar(call, "arange", &shp, step, &k1);
	if (ret)
		return ret;
	i = g_ew_iop(&e, SPYRE_VF_COPY, g_ew_in(&e, io), -1, t, 0);
	i = g_ew_iop(&e, SPYRE_VF_MUL, i, g_ew_iconst(&e, k1, t), t, 0);
	g_ew_iop(&e, SPYRE_VF_ADD, i, g_ew_iconst(&e, k0, t), t, 0);
	return g_make_ew(g, call, "arange", &e, dt, out);
}

/*
 * The expression of reduction @op over the last iteration dim of input 0:
 * sums wrap in T (PyTorch sums int32 in int64: the caller casts first),
 * amin is ~amax(~x), exact where -amax(-x) would not be at the minimum.
 */
int g_int_reduce_expr(spyre_graph *g, const char *call, const struct spyre_op_info *row,
		      spyre_value x, struct ewb *e)
{
	const struct gval *X = &g->v[x];
	uint8_t t = g_int_t(X->dt);
	int i, r, ret = g_need_int(g, call, row->name, X);

	if (ret)
		return ret;
	i = g_ew_in(e, x);
	switch (row->op) {
	case SPYRE_RED_SUM:
		g_ew_iop(e, SPYRE_VF_SUM_ROW, i, -1, t, 0);
		return 0;
	case SPYRE_RED_MAX:
		g_ew_iop(e, SPYRE_VF_MAX_ROW, i, -1, t, 0);
		return 0;
	case SPYRE_RED_MIN:
		r = g_ew_iop(e, SPYRE_VF_NOT, i, -1, t, 0);
		r = g_ew_iop(e, SPYRE_VF_MAX_ROW, r, -1, t, 0);
		g_ew_iop(e, SPYRE_VF_NOT, r, -1, t, 0);
		return 0;
	}
	return g_unsupported(call, row->name, X, "no integer card function for it");
}

int g_int_where(spyre_graph *g, const char *call, spyre_value cond, spyre_value a,
		spyre_value b, spyre_value *out)
{
	enum spyre_dtype dt = g->v[a].dt, cdt = g->v[cond].dt;
	uint8_t t = g_int_t(dt), ct = g_int_t(cdt == SPYRE_INT64 ? SPYRE_INT64 : SPYRE_INT32);
	struct ewb e = { 0 };
	int c, nc, t1, t2, ret = g_need_int(g, call, "where", &g->v[a]);

	if (ret)
		return ret;
	/* (c ? a : 0) + (c ? 0 : b): exact, one of the two is 0 */
	c = g_int_as(&e, g_ew_in(&e, cond), cdt, ct);
	nc = g_ew_iop(&e, SPYRE_VF_CMP_EQ, c, g_ew_iconst(&e, 0, ct), ct, 0);
	if (ct != t) {
		c = g_ew_iop(&e, SPYRE_VF_COPY, c, -1, t, 0);
		nc = g_ew_iop(&e, SPYRE_VF_COPY, nc, -1, t, 0);
	}
	t1 = g_ew_iop(&e, SPYRE_VF_SELECT, g_ew_in(&e, a), c, t, 0);
	t2 = g_ew_iop(&e, SPYRE_VF_SELECT, g_ew_in(&e, b), nc, t, 0);
	g_ew_iop(&e, SPYRE_VF_ADD, t1, t2, t, 0);
	return g_make_ew(g, call, "where", &e, dt, out);
}

int g_int_masked_fill(spyre_graph *g, const char *call, spyre_value x, spyre_value mask,
		      double value, spyre_value *out)
{
	enum spyre_dtype dt = g->v[x].dt, mdt = g->v[mask].dt;
	uint8_t t = g_int_t(dt), mt = g_int_t(mdt == SPYRE_INT64 ? SPYRE_INT64 : SPYRE_INT32);
	struct ewb e = { 0 };
	int64_t k = 0;
	int m, ret = g_need_int(g, call, "masked_fill", &g->v[x]);

	if (!ret)
		ret = int_scalar(call, "masked_fill", &g->v[x], value, &k);
	if (ret)
		return ret;
	m = g_int_as(&e, g_ew_in(&e, mask), mdt, mt);
	m = g_ew_iop(&e, SPYRE_VF_CMP_EQ, m, g_ew_iconst(&e, 0, mt), mt, 0);
	if (mt != t)
		m = g_ew_iop(&e, SPYRE_VF_COPY, m, -1, t, 0);
	g_ew_iop(&e, SPYRE_VF_SELECT, g_ew_in(&e, x), m, t, k);
	return g_make_ew(g, call, "masked_fill", &e, dt, out);
}

int g_int_clamp(spyre_graph *g, const char *call, spyre_value x, double lo, double hi,
		spyre_value *out)
{
	const struct gval *X = &g->v[x];
	uint8_t t = g_int_t(X->dt);
	struct ewb e = { 0 };
	int64_t k = 0;
	int i, ret = g_need_int(g, call, "clamp", X);

	if (ret)
		return ret;
	i = g_ew_in(&e, x);
	if (!isinf(lo) || lo > 0) {
		ret = int_scalar(call, "clamp", X, lo, &k);
		if (ret)
			return ret;
		i = g_ew_iop(&e, SPYRE_VF_MAX, i, g_ew_iconst(&e, k, t), t, 0);
	}
	if (!isinf(hi) || hi < 0) {
		ret = int_scalar(call, "clamp", X, hi, &k);
		if (ret)
			return ret;
		i = g_ew_iop(&e, SPYRE_VF_MIN, i, g_ew_iconst(&e, k, t), t, 0);
	}
	if (i < K_MAX_IN)
		g_ew_iop(&e, SPYRE_VF_COPY, i, -1, t, 0);	/* no bounds: a copy */
	return g_make_ew(g, call, "clamp", &e, X->dt, out);
}

int spyre_graph_arange(spyre_graph *g, double start, double step, int64_t n,
		       enum spyre_dtype dt, spyre_value *out)
{
	static const char *call = "spyre_graph_arange";
	struct ewb e = { 0 };
	spyre_value io;
	double last;
	int ret;
	bool exact = g->ops->hw_version >= SPYRE_IFACE_INT && g_is_int(dt);

	if (!g || !out)
		return spy_err(-EINVAL, "%s: graph or out is NULL", call);
	if (n < 0 || !isfinite(start) || !isfinite(step))
		return spy_err(-EINVAL, "%s: bad length %lld, start %g or step %g", call,
			       (long long)n, start, step);
	if (!g_is_float(dt) && !g_is_int(dt))
		return spy_err(-EOPNOTSUPP, "%s: arange of %s: float, int32 and int64 only", call,
			       spyre_dtype_name(dt));
	last = start + (double)(n ? n - 1 : 0) * step;
	/* the index comes from an fp32 iota: exact for n <= 2^24 */
	if (n > (1 << 24) ||
	    (!exact && !g_is_float(dt) &&
	     (fabs(start) > (double)(1 << 24) || fabs(last) > (double)(1 << 24) ||
	      start != nearbyint(start) || step != nearbyint(step) || dt == SPYRE_INT64)))
		return spy_err(-EOPNOTSUPP, "%s: arange(%g, step %g, %lld elements) of %s: needs "
			       "card interface 1.9 (exact integers) or values within 2^24",
			       call, start, step, (long long)n, spyre_dtype_name(dt));
	if (!n)
		return g_fill(g, dt, 1, &n, 0, out);
	ret = g_iota_value(g, n, &io);
	if (ret)
		return ret;
	if (exact)
		return g_int_arange(g, call, start, step, n, dt, io, out);
	g_ew_op(&e, SPYRE_VF_SCALE, g_ew_in(&e, io), -1, (float)step, (float)start);
	return g_make_ew(g, call, "arange", &e, dt, out);
}
