// SPDX-License-Identifier: MIT
/*
 * Graph op builders: each public op becomes one node whose expression uses
 * the card's vector functions (see kern.h), for eager and compiled use alike.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "graph_build.h"

int g_ew_in(struct ewb *b, int value)
{
	b->in[b->nin] = value;
	return (int)b->nin++;
}

/* Append a uop; returns its value id in the expression (inputs come first). */
int g_ew_op(struct ewb *b, unsigned int func, int a, int bb, float i0, float i1)
{
	struct uop *u = &b->u[b->nuops++];

	u->kind = U_VF;
	u->func = (uint8_t)func;
	u->a = (int8_t)a;
	u->b = (int8_t)bb;
	u->imm0 = i0;
	u->imm1 = i1;
	return (int)(K_MAX_IN + b->nuops - 1);	/* fixed up in make_ew */
}

int g_ew_const(struct ewb *b, float c)
{
	struct uop *u = &b->u[b->nuops++];

	u->kind = U_CONST;
	u->a = u->b = -1;
	u->imm0 = c;
	return (int)(K_MAX_IN + b->nuops - 1);
}

/* Operand ids: inputs 0..nin-1 stay, K_MAX_IN + i becomes nin + i. */
void g_ew_fix(struct ewb *b)
{
	unsigned int i;

	for (i = 0; i < b->nuops; i++) {
		if (b->u[i].a >= K_MAX_IN)
			b->u[i].a = (int8_t)(b->u[i].a - K_MAX_IN + b->nin);
		if (b->u[i].b >= K_MAX_IN)
			b->u[i].b = (int8_t)(b->u[i].b - K_MAX_IN + b->nin);
	}
}

int g_new_node(spyre_graph *g, const char *name, int kind, enum spyre_dtype dt,
		    unsigned int ondim, const int64_t *oshape, spyre_value *out)
{
	struct gnode *n;
	int s, v;

	if (g_grow((void **)&g->n, &g->capn, g->nn, sizeof(*g->n)))
		return -ENOMEM;
	s = g_new_store(g, ST_NODE, dt, g_numel_of(ondim, oshape));
	if (s < 0)
		return s;
	v = g_value(g, dt, ondim, oshape, NULL, 0, s);
	if (v < 0)
		return v;
	g->st[s].node = (int)g->nn;
	n = &g->n[g->nn++];
	memset(n, 0, sizeof(*n));
	n->kind = kind;
	n->name = name;
	n->out = v;
	n->a = n->b = -1;
	*out = v;
	return 0;
}

/* Broadcast shapes (NumPy); -EINVAL with a message naming both. */
int g_broadcast(const char *call, unsigned int na, const int64_t *a, unsigned int nb,
		     const int64_t *b, unsigned int *nout, int64_t *out)
{
	unsigned int n = na > nb ? na : nb, i;
	char sa[96], sb[96];

	int64_t tmp[SPYRE_MAX_DIMS];

	for (i = 0; i < n; i++) {
		int64_t x = i < n - na ? 1 : a[i - (n - na)];
		int64_t y = i < n - nb ? 1 : b[i - (n - nb)];

		if (x != y && x != 1 && y != 1) {
			g_shape_str(sa, sizeof(sa), na, a);
			g_shape_str(sb, sizeof(sb), nb, b);
			return spy_err(-EINVAL, "%s: shapes %s and %s do not broadcast", call, sa,
				       sb);
		}
		tmp[i] = x == 1 ? y : x;
	}
	memcpy(out, tmp, n * sizeof(int64_t));
	*nout = n;
	return 0;
}

bool g_is_float(enum spyre_dtype dt)
{
	return dt == SPYRE_FLOAT32 || dt == SPYRE_FLOAT16 || dt == SPYRE_BFLOAT16;
}

/* Elementwise node over the broadcast of its inputs. */
int g_make_ew(spyre_graph *g, const char *call, const char *name, struct ewb *b,
		   enum spyre_dtype dt, spyre_value *out)
{
	unsigned int nd = 0, i;
	int64_t shape[SPYRE_MAX_DIMS];
	struct gnode *n;
	int ret;

	for (i = 0; i < b->nin; i++) {
		const struct gval *x = &g->v[b->in[i]];

		ret = g_broadcast(call, nd, shape, x->ndim, x->shape, &nd, shape);
		if (ret)
			return ret;
	}
	g_ew_fix(b);
	ret = g_new_node(g, name, NK_EW, dt, nd, shape, out);
	if (ret)
		return ret;
	n = &g->n[g->nn - 1];
	n->ndim = nd;
	memcpy(n->shape, shape, sizeof(shape));
	n->nin = b->nin;
	memcpy(n->in, b->in, sizeof(b->in));
	n->nuops = b->nuops;
	memcpy(n->u, b->u, sizeof(b->u));
	return 0;
}

/* The card's vector function of each binary op (its kernel). */
static const uint8_t bin_func[SPYRE_BIN_COUNT] = {
	[SPYRE_BIN_ADD] = SPYRE_VF_ADD,		[SPYRE_BIN_SUB] = SPYRE_VF_SUB,
	[SPYRE_BIN_MUL] = SPYRE_VF_MUL,		[SPYRE_BIN_DIV] = SPYRE_VF_DIV,
	[SPYRE_BIN_MAX] = SPYRE_VF_MAX,		[SPYRE_BIN_MIN] = SPYRE_VF_MIN,
	[SPYRE_BIN_EQ] = SPYRE_VF_CMP_EQ,	[SPYRE_BIN_NE] = SPYRE_VF_CMP_NE,
	[SPYRE_BIN_LT] = SPYRE_VF_CMP_LT,	[SPYRE_BIN_LE] = SPYRE_VF_CMP_LE,
	[SPYRE_BIN_GT] = SPYRE_VF_CMP_GT,	[SPYRE_BIN_GE] = SPYRE_VF_CMP_GE,
	/* on truth values (0/1): and is the minimum, or the maximum */
	[SPYRE_BIN_LOGICAL_AND] = SPYRE_VF_MIN,	[SPYRE_BIN_LOGICAL_OR] = SPYRE_VF_MAX,
};

static enum spyre_dtype result_dtype(const struct spyre_op_info *op, enum spyre_dtype in)
{
	return op->result == SPYRE_RESULT_BOOL ? SPYRE_BOOL : in;
}

/* -EOPNOTSUPP unless the card has interface @minor (1.x) or newer. */
int g_need_iface(spyre_graph *g, unsigned int minor, const char *call, const char *op,
		 const struct gval *x)
{
	char why[96];

	if (g->ops->hw_version >= SPYRE_HW_VERSION(1, minor))
		return 0;
	snprintf(why, sizeof(why), "needs card interface 1.%u (its vector functions), this card is "
		 "%u.%u", minor, SPYRE_HW_VERSION_MAJOR_OF(g->ops->hw_version),
		 SPYRE_HW_VERSION_MINOR_OF(g->ops->hw_version));
	return g_unsupported(call, op, x, why);
}

/* Compare and select need card interface 1.3. */
int g_need_select(spyre_graph *g, const char *call, const char *op, const struct gval *x)
{
	return g_need_iface(g, 3, call, op, x);
}

/* Operand @x as a 0/1 truth value (x != 0), for logical ops. */
static int truth(struct ewb *e, int x)
{
	return g_ew_op(e, SPYRE_VF_CMP_NE, x, g_ew_const(e, 0.0f), 0, 0);
}

int g_unsupported(const char *call, const char *op, const struct gval *x, const char *why)
{
	char s[96];

	g_shape_str(s, sizeof(s), x->ndim, x->shape);
	return spy_err(-EOPNOTSUPP, "%s: %s of %s %s: %s", call, op, spyre_dtype_name(x->dt), s,
		       why);
}

/* Expression of a unary op on operand @x of @b; < 0: not expressible. */
static int un_expr(struct ewb *b, enum spyre_unary_op op, int x)
{
	int t, u;

	switch (op) {
	case SPYRE_UN_NEG:
		return g_ew_op(b, SPYRE_VF_SCALE, x, -1, -1.0f, -0.0f);
	case SPYRE_UN_ABS:
		t = g_ew_op(b, SPYRE_VF_SCALE, x, -1, -1.0f, -0.0f);
		return g_ew_op(b, SPYRE_VF_MAX, x, t, 0, 0);
	case SPYRE_UN_EXP:
		return g_ew_op(b, SPYRE_VF_EXP, x, -1, 0, 0);
	case SPYRE_UN_LOG:
		return g_ew_op(b, SPYRE_VF_LOG, x, -1, 0, 0);
	case SPYRE_UN_SQRT:
		return g_ew_op(b, SPYRE_VF_SQRT, x, -1, 0, 0);
	case SPYRE_UN_RSQRT:
		return g_ew_op(b, SPYRE_VF_RSQRT, x, -1, 0, 0);
	case SPYRE_UN_RECIPROCAL:
		return g_ew_op(b, SPYRE_VF_RECIP, x, -1, 0, 0);
	case SPYRE_UN_TANH:
		return g_ew_op(b, SPYRE_VF_TANH, x, -1, 0, 0);
	case SPYRE_UN_SIGMOID:
		return g_ew_op(b, SPYRE_VF_SIGMOID, x, -1, 0, 0);
	case SPYRE_UN_RELU:
		return g_ew_op(b, SPYRE_VF_RELU, x, -1, 0, 0);
	case SPYRE_UN_GELU:
		return g_ew_op(b, SPYRE_VF_GELU, x, -1, 0, 0);
	case SPYRE_UN_GELU_TANH:
		/* x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
		t = g_ew_op(b, SPYRE_VF_MUL, x, x, 0, 0);
		t = g_ew_op(b, SPYRE_VF_MUL, t, x, 0, 0);
		t = g_ew_op(b, SPYRE_VF_SCALE, t, -1, 0.044715f, -0.0f);
		t = g_ew_op(b, SPYRE_VF_ADD, t, x, 0, 0);
		t = g_ew_op(b, SPYRE_VF_SCALE, t, -1, 0.7978845608f, -0.0f);
		t = g_ew_op(b, SPYRE_VF_TANH, t, -1, 0, 0);
		t = g_ew_op(b, SPYRE_VF_SCALE, t, -1, 0.5f, 0.5f);
		return g_ew_op(b, SPYRE_VF_MUL, t, x, 0, 0);
	case SPYRE_UN_SILU:
		return g_ew_op(b, SPYRE_VF_SILU, x, -1, 0, 0);
	case SPYRE_UN_SQUARE:
		return g_ew_op(b, SPYRE_VF_MUL, x, x, 0, 0);
	case SPYRE_UN_SIN:
		return g_ew_op(b, SPYRE_VF_SIN, x, -1, 0, 0);
	case SPYRE_UN_COS:
		return g_ew_op(b, SPYRE_VF_COS, x, -1, 0, 0);
	case SPYRE_UN_ERF:
		return g_ew_op(b, SPYRE_VF_ERF, x, -1, 0, 0);
	case SPYRE_UN_LOGICAL_NOT:
		return g_ew_op(b, SPYRE_VF_CMP_EQ, x, g_ew_const(b, 0.0f), 0, 0);
	case SPYRE_UN_LOG2:
		/* log(x) / ln 2: a few fp32 ulps; 0, inf, NaN and x < 0 as log's */
		t = g_ew_op(b, SPYRE_VF_LOG, x, -1, 0, 0);
		return g_ew_op(b, SPYRE_VF_SCALE, t, -1, (float)M_LOG2E, -0.0f);
	case SPYRE_UN_ROUND: {
		/*
		 * r = sign(x) * ((|x| + 2^23) - 2^23): each sum rounded to fp32
		 * nearest-even leaves |x| < 2^23 rounded to an integer, ties to
		 * even, and -0 for -0.5 <= x < 0 as PyTorch. |x| >= 2^23 (already
		 * an integer), inf and NaN: x itself, through r0 + (x - r0) * big
		 * with r0 = 0 there (exact). Only x = -0.0 gives +0.0.
		 */
		int ax, sm, big, zero = g_ew_const(b, 0.0f);

		t = g_ew_op(b, SPYRE_VF_SCALE, x, -1, -1.0f, -0.0f);
		ax = g_ew_op(b, SPYRE_VF_MAX, x, t, 0, 0);
		sm = g_ew_op(b, SPYRE_VF_CMP_LT, ax, g_ew_const(b, 8388608.0f), 0, 0);
		t = g_ew_op(b, SPYRE_VF_SCALE, ax, -1, 1.0f, 8388608.0f);
		t = g_ew_op(b, SPYRE_VF_SCALE, t, -1, 1.0f, -8388608.0f);
		u = g_ew_op(b, SPYRE_VF_CMP_LT, x, zero, 0, 0);
		u = g_ew_op(b, SPYRE_VF_SCALE, u, -1, -2.0f, 1.0f);
		t = g_ew_op(b, SPYRE_VF_MUL, t, u, 0, 0);
		t = g_ew_op(b, SPYRE_VF_SELECT, t, sm, 0.0f, 0);
		big = g_ew_op(b, SPYRE_VF_CMP_EQ, sm, zero, 0, 0);
		u = g_ew_op(b, SPYRE_VF_SUB, x, t, 0, 0);
		u = g_ew_op(b, SPYRE_VF_MUL, u, big, 0, 0);
		return g_ew_op(b, SPYRE_VF_ADD, t, u, 0, 0);
	}
	default:
		return -1;
	}
}

int spyre_graph_unary(spyre_graph *g, enum spyre_unary_op op, spyre_value x, spyre_value *out)
{
	static const char *call = "spyre_graph_unary";
	const struct spyre_op_info *row = spyre_op_find(SPYRE_OPK_UNARY, op);
	struct ewb b = { 0 };
	int ret = g_check_val(g, call, x, "x");

	if (ret)
		return ret;
	if (!out || !row)
		return spy_err(-EINVAL, "%s: bad op %d or out is NULL", call, (int)op);
	ret = g_check_row(g, call, row, &g->v[x]);
	if (ret)
		return ret;
	if ((g_is_int(g->v[x].dt) && !(row->flags & SPYRE_OPF_TRUTH)) || op == SPYRE_UN_BITWISE_NOT)
		return g_int_unary(g, call, row, x, out);
	if (un_expr(&b, op, g_ew_in(&b, x)) < 0)
		return g_unsupported(call, row->name, &g->v[x],
				     "the card has no vector function for it");
	return g_make_ew(g, call, row->name, &b, result_dtype(row, g->v[x].dt), out);
}

/* The kernel of binary op @row on operands @x and @y of @e. */
static void bin_expr(struct ewb *e, const struct spyre_op_info *row, int x, int y)
{
	if (row->flags & SPYRE_OPF_TRUTH) {
		x = truth(e, x);
		y = truth(e, y);
	}
	g_ew_op(e, bin_func[row->op], x, y, 0, 0);
}

int spyre_graph_binary(spyre_graph *g, enum spyre_binary_op op, spyre_value a, spyre_value b,
		       spyre_value *out)
{
	static const char *call = "spyre_graph_binary";
	const struct spyre_op_info *row = spyre_op_find(SPYRE_OPK_BINARY, op);
	struct ewb e = { 0 };
	int ret = g_check_val(g, call, a, "a");

	if (!ret)
		ret = g_check_val(g, call, b, "b");
	if (ret)
		return ret;
	if (!out || !row)
		return spy_err(-EINVAL, "%s: bad op %d or out is NULL", call, (int)op);
	if (g->v[a].dt != g->v[b].dt)
		return spy_err(-EINVAL, "%s: %s of %s and %s: cast one operand first", call,
			       row->name, spyre_dtype_name(g->v[a].dt),
			       spyre_dtype_name(g->v[b].dt));
	ret = g_check_row(g, call, row, &g->v[a]);
	if (ret)
		return ret;
	if (!(row->flags & SPYRE_OPF_TRUTH) && !g_is_float(g->v[a].dt))
		return g_int_binary(g, call, row, a, b, false, 0, 0, out);
	bin_expr(&e, row, g_ew_in(&e, a), g_ew_in(&e, b));
	return g_make_ew(g, call, row->name, &e, result_dtype(row, g->v[a].dt), out);
}

int spyre_graph_binary_scalar(spyre_graph *g, enum spyre_binary_op op, spyre_value a,
			      double scalar, int reverse, spyre_value *out)
{
	static const char *call = "spyre_graph_binary_scalar";
	const struct spyre_op_info *row = spyre_op_find(SPYRE_OPK_BINARY, op);
	struct ewb e = { 0 };
	int x, c, ret = g_check_val(g, call, a, "a");

	if (ret)
		return ret;
	if (!out || !row)
		return spy_err(-EINVAL, "%s: bad op %d or out is NULL", call, (int)op);
	if (g_is_int(g->v[a].dt) && !(row->flags & SPYRE_OPF_TRUTH)) {
		ret = g_check_row(g, call, row, &g->v[a]);
		return ret ? ret : g_int_binary(g, call, row, a, -1, true, scalar, reverse, out);
	}
	/* the scalar is an fp32 vector operand: float tensors only */
	if (!g_is_float(g->v[a].dt))
		return g_unsupported(call, row->name, &g->v[a], "float dtypes only");
	ret = g_check_row(g, call, row, &g->v[a]);
	if (ret)
		return ret;
	x = g_ew_in(&e, a);
	if (op == SPYRE_BIN_MUL && !reverse) {
		g_ew_op(&e, SPYRE_VF_SCALE, x, -1, (float)scalar, -0.0f);	/* exact */
	} else if (op == SPYRE_BIN_ADD) {
		g_ew_op(&e, SPYRE_VF_SCALE, x, -1, 1.0f, (float)scalar);
	} else {
		c = g_ew_const(&e, (float)scalar);
		if (reverse)
			bin_expr(&e, row, c, x);
		else
			bin_expr(&e, row, x, c);
	}
	return g_make_ew(g, call, row->name, &e, result_dtype(row, g->v[a].dt), out);
}

int spyre_graph_clamp(spyre_graph *g, spyre_value x, double lo, double hi, spyre_value *out)
{
	static const char *call = "spyre_graph_clamp";
	struct ewb e = { 0 };
	int i, t, ret = g_check_val(g, call, x, "x");

	if (ret)
		return ret;
	if (!out)
		return spy_err(-EINVAL, "%s: out is NULL", call);
	if (g_is_int(g->v[x].dt))
		return g_int_clamp(g, call, x, lo, hi, out);
	if (!g_is_float(g->v[x].dt))
		return g_unsupported(call, "clamp", &g->v[x], "float dtypes only");
	i = g_ew_in(&e, x);
	t = g_ew_op(&e, SPYRE_VF_MAX, i, g_ew_const(&e, (float)lo), 0, 0);
	g_ew_op(&e, SPYRE_VF_MIN, t, g_ew_const(&e, (float)hi), 0, 0);
	return g_make_ew(g, call, "clamp", &e, g->v[x].dt, out);
}

int spyre_graph_pow_scalar(spyre_graph *g, spyre_value x, double p, spyre_value *out)
{
	static const char *call = "spyre_graph_pow_scalar";
	struct ewb e = { 0 };
	int i, r = -1, base, ret = g_check_val(g, call, x, "x");
	long n;

	if (ret)
		return ret;
	if (!out)
		return spy_err(-EINVAL, "%s: out is NULL", call);
	if (!g_is_float(g->v[x].dt))
		return g_unsupported(call, "pow", &g->v[x], "float dtypes only");
	i = g_ew_in(&e, x);
	if (p == floor(p) && fabs(p) <= 64) {
		n = labs((long)p);
		if (!n) {
			g_ew_const(&e, 1.0f);	/* x ** 0 is 1, NaN included */
		} else {
			/* square-and-multiply */
			base = i;
			while (n) {
				if (n & 1)
					r = r < 0 ? g_ew_op(&e, SPYRE_VF_COPY, base, -1, 0, 0) :
						    g_ew_op(&e, SPYRE_VF_MUL, r, base, 0, 0);
				n >>= 1;
				if (n)
					base = g_ew_op(&e, SPYRE_VF_MUL, base, base, 0, 0);
			}
			if (p < 0)
				g_ew_op(&e, SPYRE_VF_RECIP, r, -1, 0, 0);
		}
	} else if (p == 0.5) {
		g_ew_op(&e, SPYRE_VF_SQRT, i, -1, 0, 0);
	} else {
		r = g_ew_op(&e, SPYRE_VF_LOG, i, -1, 0, 0);
		r = g_ew_op(&e, SPYRE_VF_SCALE, r, -1, (float)p, -0.0f);
		g_ew_op(&e, SPYRE_VF_EXP, r, -1, 0, 0);
	}
	return g_make_ew(g, call, "pow", &e, g->v[x].dt, out);
}

static bool castable(enum spyre_dtype dt)
{
	return dt == SPYRE_FLOAT32 || dt == SPYRE_FLOAT16 || dt == SPYRE_BFLOAT16 ||
	       dt == SPYRE_INT8 || dt == SPYRE_INT32 || dt == SPYRE_BOOL;
}

int spyre_graph_cast(spyre_graph *g, spyre_value x, enum spyre_dtype dt, spyre_value *out)
{
	static const char *call = "spyre_graph_cast";
	struct ewb e = { 0 };
	enum spyre_dtype sdt;
	int ret = g_check_val(g, call, x, "x");

	if (ret)
		return ret;
	if (!out || !spyre_dtype_bytes(dt))
		return spy_err(-EINVAL, "%s: bad dtype %d or out is NULL", call, (int)dt);
	sdt = g->v[x].dt;
	if ((!castable(sdt) && sdt != SPYRE_INT64) || (!castable(dt) && dt != SPYRE_INT64))
		return g_unsupported(call, "cast", &g->v[x], "no card conversion for this dtype");
	if (dt == SPYRE_BOOL && sdt != SPYRE_BOOL && sdt != SPYRE_INT64) {
		/* x != 0 (NaN is true), exact in fp32 for every other dtype */
		ret = g_need_select(g, call, "cast", &g->v[x]);
		if (ret)
			return ret;
		g_ew_op(&e, SPYRE_VF_CMP_NE, g_ew_in(&e, x), g_ew_const(&e, 0.0f), 0, 0);
		return g_make_ew(g, call, "cast", &e, dt, out);
	}
	/*
	 * Integer results and int64 sources: the integer mode (1.9), exact;
	 * float -> integer truncates toward zero. Older cards keep only the
	 * conversions fp32 gets right: int8/int32 -> float, same-type copies.
	 */
	if (sdt == SPYRE_INT64 || (g_is_int(dt) || dt == SPYRE_INT8 ? sdt != dt ||
				   g->ops->hw_version >= SPYRE_IFACE_INT : false))
		return g_int_cast(g, call, x, dt, out);
	g_ew_op(&e, SPYRE_VF_COPY, g_ew_in(&e, x), -1, 0, 0);
	return g_make_ew(g, call, "cast", &e, dt, out);
}

int spyre_graph_contiguous(spyre_graph *g, spyre_value x, spyre_value *out)
{
	int ret = g_check_val(g, "spyre_graph_contiguous", x, "x");

	if (ret)
		return ret;
	return spyre_graph_cast(g, x, g->v[x].dt, out);
}

/*
 * @w8: B may be int8 while A is a float type (weight-only int8, widened on
 * the card); the product has A's type.
 */
static int make_mm(spyre_graph *g, const char *call, const char *name, spyre_value a,
		   spyre_value b, bool w8, spyre_value *out)
{
	const struct gval *A = &g->v[a], *B = &g->v[b];
	int64_t shape[SPYRE_MAX_DIMS], bs[SPYRE_MAX_DIMS];
	unsigned int nb = 0;
	char sa[96], sb[96];
	struct gnode *n;
	int ret;

	g_shape_str(sa, sizeof(sa), A->ndim, A->shape);
	g_shape_str(sb, sizeof(sb), B->ndim, B->shape);
	if (A->ndim < 2 || B->ndim < 2)
		return spy_err(-EINVAL, "%s: %s of %s and %s: operands need 2+ dims", call, name,
			       sa, sb);
	if (A->shape[A->ndim - 1] != B->shape[B->ndim - 2])
		return spy_err(-EINVAL, "%s: %s of %s and %s: inner dims differ", call, name, sa,
			       sb);
	if (A->dt != B->dt && !(w8 && B->dt == SPYRE_INT8 && g_is_float(A->dt)))
		return spy_err(-EINVAL, "%s: %s of %s and %s: dtypes %s and %s differ", call, name,
			       sa, sb, spyre_dtype_name(A->dt), spyre_dtype_name(B->dt));
	if (!g_is_float(A->dt) && A->dt != SPYRE_INT8)
		return g_unsupported(call, name, A, "float and int8 matmul only");
	ret = g_broadcast(call, A->ndim - 2, A->shape, B->ndim - 2, B->shape, &nb, bs);
	if (ret)
		return ret;
	/* the PE array takes rows: A contiguous along K, B along N or along K */
	if (A->shape[A->ndim - 1] > 1 && A->strides[A->ndim - 1] != 1) {
		ret = spyre_graph_contiguous(g, a, &a);
		if (ret)
			return ret;
	}
	B = &g->v[b];
	if (B->shape[B->ndim - 1] > 1 && B->shape[B->ndim - 2] > 1 &&
	    B->strides[B->ndim - 1] != 1 && B->strides[B->ndim - 2] != 1) {
		ret = spyre_graph_contiguous(g, b, &b);
		if (ret)
			return ret;
	}
	A = &g->v[a];
	memcpy(shape, bs, nb * sizeof(int64_t));
	shape[nb] = A->shape[A->ndim - 2];
	shape[nb + 1] = B->shape[B->ndim - 1];
	/* int8 accumulates exactly into int32 (wrapping modulo 2^32, as the card) */
	ret = g_new_node(g, name, NK_MM, A->dt == SPYRE_INT8 ? SPYRE_INT32 : A->dt, nb + 2, shape,
		       out);
	if (ret)
		return ret;
	n = &g->n[g->nn - 1];
	n->ndim = nb + 2;
	memcpy(n->shape, shape, sizeof(shape));
	n->a = a;
	n->b = b;
	n->nin = 1;
	n->in[0] = -1;
	n->nuops = 1;
	n->u[0] = (struct uop){ .kind = U_VF, .func = SPYRE_VF_COPY, .a = 0, .b = -1 };
	return 0;
}

int g_make_mm(spyre_graph *g, const char *call, const char *name, spyre_value a,
	      spyre_value b, spyre_value *out)
{
	return make_mm(g, call, name, a, b, false, out);
}

/* The checks of a two-operand product's arguments. */
static int mm_args(spyre_graph *g, const char *call, spyre_value a, spyre_value b,
		   spyre_value *out)
{
	int ret = g_check_val(g, call, a, "a");

	if (!ret)
		ret = g_check_val(g, call, b, "b");
	if (!ret && !out)
		ret = spy_err(-EINVAL, "%s: out is NULL", call);
	return ret;
}

int spyre_graph_matmul(spyre_graph *g, spyre_value a, spyre_value b, spyre_value *out)
{
	static const char *call = "spyre_graph_matmul";
	int ret = mm_args(g, call, a, b, out);

	return ret ? ret : g_make_mm(g, call, "matmul", a, b, out);
}

int spyre_graph_matmul_w8(spyre_graph *g, spyre_value a, spyre_value b, spyre_value *out)
{
	static const char *call = "spyre_graph_matmul_w8";
	int ret = mm_args(g, call, a, b, out);

	if (ret)
		return ret;
	if (g->v[b].dt != SPYRE_INT8 || !g_is_float(g->v[a].dt))
		return spy_err(-EINVAL, "%s: a must be a float type and b int8, got %s and %s",
			       call, spyre_dtype_name(g->v[a].dt), spyre_dtype_name(g->v[b].dt));
	return make_mm(g, call, "matmul_w8", a, b, true, out);
}

/* The values of a linear (@bias < 0: none) are this graph's; @out is given. */
static int check_linear_vals(spyre_graph *g, const char *call, spyre_value x, spyre_value w,
			     spyre_value bias, spyre_value *out)
{
	int ret = g_check_val(g, call, x, "x");

	if (!ret)
		ret = g_check_val(g, call, w, "weight");
	if (!ret && bias >= 0)
		ret = g_check_val(g, call, bias, "bias");
	if (!ret && !out)
		ret = spy_err(-EINVAL, "%s: out is NULL", call);
	return ret;
}

int spyre_graph_linear(spyre_graph *g, spyre_value x, spyre_value w, spyre_value bias,
		       spyre_value *out)
{
	static const char *call = "spyre_graph_linear";
	spyre_value wt, y;
	int ret = check_linear_vals(g, call, x, w, bias, out);

	if (ret)
		return ret;
	if (g->v[w].ndim != 2)
		return spy_err(-EINVAL, "%s: weight must be [N, K]", call);
	ret = spyre_graph_transpose(g, w, 0, 1, &wt);
	if (ret)
		return ret;
	ret = g_make_mm(g, call, "linear", x, wt, &y);
	if (ret)
		return ret;
	if (bias < 0) {
		*out = y;
		return 0;
	}
	if (g->v[bias].ndim != 1 || g->v[bias].shape[0] != g->v[w].shape[0])
		return spy_err(-EINVAL, "%s: bias must be [%lld]", call,
			       (long long)g->v[w].shape[0]);
	return spyre_graph_binary(g, SPYRE_BIN_ADD, y, bias, out);
}

int spyre_graph_linear_w8(spyre_graph *g, spyre_value x, spyre_value w, spyre_value scale,
			  spyre_value bias, spyre_value *out)
{
	static const char *call = "spyre_graph_linear_w8";
	const struct gval *X, *W, *S;
	spyre_value wt, y;
	char sx[96], sw[96];
	int ret = check_linear_vals(g, call, x, w, bias, out);

	if (!ret)
		ret = g_check_val(g, call, scale, "scale");
	if (ret)
		return ret;
	X = &g->v[x];
	W = &g->v[w];
	S = &g->v[scale];
	g_shape_str(sx, sizeof(sx), X->ndim, X->shape);
	g_shape_str(sw, sizeof(sw), W->ndim, W->shape);
	if (W->ndim != 2 || W->dt != SPYRE_INT8)
		return spy_err(-EINVAL, "%s: x %s, weight %s %s: weight must be int8 [N, K]", call,
			       sx, spyre_dtype_name(W->dt), sw);
	if (!g_is_float(X->dt))
		return spy_err(-EINVAL, "%s: x %s %s: x must be a float type", call,
			       spyre_dtype_name(X->dt), sx);
	if (S->ndim != 1 || S->shape[0] != W->shape[0] || S->dt != X->dt)
		return spy_err(-EINVAL, "%s: scale must be %s [%lld] (x's dtype), got %s of %u dims",
			       call, spyre_dtype_name(X->dt), (long long)W->shape[0],
			       spyre_dtype_name(S->dt), S->ndim);
	if (bias >= 0 && (g->v[bias].ndim != 1 || g->v[bias].shape[0] != W->shape[0] ||
			  g->v[bias].dt != X->dt))
		return spy_err(-EINVAL, "%s: bias must be %s [%lld]", call,
			       spyre_dtype_name(X->dt), (long long)W->shape[0]);
	ret = spyre_graph_transpose(g, w, 0, 1, &wt);
	if (!ret)
		ret = make_mm(g, call, "linear_w8", x, wt, true, &y);
	/* the scale (and bias) fuse into the product's epilogue: one rounding */
	if (!ret)
		ret = spyre_graph_binary(g, SPYRE_BIN_MUL, y, scale, bias < 0 ? out : &y);
	if (!ret && bias >= 0)
		ret = spyre_graph_binary(g, SPYRE_BIN_ADD, y, bias, out);
	return ret;
}

/* ---- row ops (reduce the last iteration dim) ---- */

/*
 * A node over @x with the reduced dim @dim moved last in the iteration
 * space. @col: the result has one value per row (reductions), stored
 * into a value of shape @oshape.
 */
static int row_node(spyre_graph *g, const char *call, const char *name, struct ewb *b,
		    spyre_value x, int dim, bool col, unsigned int ondim, const int64_t *oshape,
		    enum spyre_dtype dt, spyre_value *out)
{
	const struct gval *X = &g->v[x];
	int64_t shape[SPYRE_MAX_DIMS], osh[SPYRE_MAX_DIMS];
	unsigned int nd = X->ndim, d, k = 0, i;
	struct gnode *n;
	int ret, perm[SPYRE_MAX_DIMS];

	for (d = 0; d < nd; d++)
		if ((int)d != dim)
			perm[k++] = (int)d;
	perm[k] = dim;
	for (d = 0; d < nd; d++)
		shape[d] = X->shape[perm[d]];
	memcpy(osh, oshape, ondim * sizeof(int64_t));
	g_ew_fix(b);
	ret = g_new_node(g, name, NK_EW, dt, ondim, osh, out);
	if (ret)
		return ret;
	n = &g->n[g->nn - 1];
	n->ndim = nd;
	memcpy(n->shape, shape, sizeof(shape));
	n->nin = b->nin;
	memcpy(n->u, b->u, sizeof(b->u));
	n->nuops = b->nuops;
	n->out_col = col;
	/* inputs: views permuted like the iteration space */
	for (i = 0; i < b->nin; i++) {
		const struct gval *v = &g->v[b->in[i]];
		int64_t vs[SPYRE_MAX_DIMS], vsh[SPYRE_MAX_DIMS];
		int nv;

		if (b->in[i] == x) {
			for (d = 0; d < nd; d++) {
				vsh[d] = v->shape[perm[d]];
				vs[d] = v->strides[perm[d]];
			}
			nv = g_value(g, v->dt, nd, vsh, vs, v->off, v->store);
			if (nv < 0)
				return nv;
			n = &g->n[g->nn - 1];
			n->in[i] = nv;
		} else {
			n->in[i] = b->in[i];	/* weights etc.: broadcast over the last dim */
		}
	}
	n->permuted = true;
	n->rdim = dim;
	n->keepdim = col && ondim == nd;
	memcpy(n->perm, perm, sizeof(perm));
	return 0;
}

int spyre_graph_reduce(spyre_graph *g, enum spyre_reduce_op op, spyre_value x, int dim,
		       int keepdim, spyre_value *out)
{
	static const char *call = "spyre_graph_reduce";
	const struct spyre_op_info *row = spyre_op_find(SPYRE_OPK_REDUCE, op);
	int64_t oshape[SPYRE_MAX_DIMS];
	unsigned int ond = 0, d;
	struct ewb e = { 0 };
	int i, t, ret = g_check_val(g, call, x, "x");
	const struct gval *X;

	if (ret)
		return ret;
	X = &g->v[x];
	if (!out || !row)
		return spy_err(-EINVAL, "%s: bad op %d or out is NULL", call, (int)op);
	if (!X->ndim)
		return spy_err(-EINVAL, "%s: a scalar has no dim to reduce", call);
	ret = g_norm_dim(call, X, dim, &dim);
	if (ret)
		return ret;
	ret = g_check_row(g, call, row, X);
	if (ret)
		return ret;
	if (!X->shape[dim] && (op == SPYRE_RED_MAX || op == SPYRE_RED_MIN))
		return spy_err(-EINVAL, "%s: %s over an empty dim", call, row->name);
	for (d = 0; d < X->ndim; d++)
		if ((int)d != dim)
			oshape[ond++] = X->shape[d];
		else if (keepdim)
			oshape[ond++] = 1;
	/*
	 * Over an empty dim the row kernel's iteration space is empty, so it
	 * would write nothing and leave the (non-empty) output as it found it:
	 * the result is the reduction's identity, as PyTorch's (mean: 0 / 0).
	 */
	if (!X->shape[dim])
		return g_fill(g, X->dt, ond, oshape, op == SPYRE_RED_MEAN ? NAN : 0.0, out);
	if (g_is_int(X->dt)) {
		ret = g_int_reduce_expr(g, call, row, x, &e);
		if (ret)
			return ret;
		return row_node(g, call, row->name, &e, x, dim, true, ond, oshape, X->dt, out);
	}
	i = g_ew_in(&e, x);
	switch (op) {
	case SPYRE_RED_SUM:
		g_ew_op(&e, SPYRE_VF_SUM_ROW, i, -1, 0, 0);
		break;
	case SPYRE_RED_MEAN:
		t = g_ew_op(&e, SPYRE_VF_SUM_ROW, i, -1, 0, 0);
		g_ew_op(&e, SPYRE_VF_SCALE, t, -1,
			X->shape[dim] ? 1.0f / (float)X->shape[dim] : NAN, -0.0f);
		break;
	case SPYRE_RED_MAX:
		g_ew_op(&e, SPYRE_VF_MAX_ROW, i, -1, 0, 0);
		break;
	default:
		t = g_ew_op(&e, SPYRE_VF_SCALE, i, -1, -1.0f, -0.0f);
		t = g_ew_op(&e, SPYRE_VF_MAX_ROW, t, -1, 0, 0);
		g_ew_op(&e, SPYRE_VF_SCALE, t, -1, -1.0f, -0.0f);
		break;
	}
	return row_node(g, call, row->name, &e, x, dim, true, ond, oshape, X->dt, out);
}

static int softmax_like(spyre_graph *g, const char *call, bool lg, spyre_value x, int dim,
			spyre_value *out)
{
	struct ewb e = { 0 };
	int i, m, d, s, ret = g_check_val(g, call, x, "x");
	const struct gval *X;

	if (ret)
		return ret;
	X = &g->v[x];
	if (!out)
		return spy_err(-EINVAL, "%s: out is NULL", call);
	ret = g_norm_dim(call, X, dim, &dim);
	if (ret)
		return ret;
	if (!g_is_float(X->dt))
		return g_unsupported(call, lg ? "log_softmax" : "softmax", X, "float dtypes only");
	if (!X->ndim) {
		int64_t one = 1;
		struct gval tmp = *X;

		(void)tmp;
		ret = spyre_graph_reshape(g, x, 1, &one, &x);
		if (ret)
			return ret;
		X = &g->v[x];
		dim = 0;
	}
	i = g_ew_in(&e, x);
	if (!lg) {
		g_ew_op(&e, SPYRE_VF_SOFTMAX_ROW, i, -1, 0, 0);
	} else {
		/* x - max - log(sum(exp(x - max))) */
		m = g_ew_op(&e, SPYRE_VF_MAX_ROW, i, -1, 0, 0);
		d = g_ew_op(&e, SPYRE_VF_SUB, i, m, 0, 0);
		s = g_ew_op(&e, SPYRE_VF_EXP, d, -1, 0, 0);
		s = g_ew_op(&e, SPYRE_VF_SUM_ROW, s, -1, 0, 0);
		s = g_ew_op(&e, SPYRE_VF_LOG, s, -1, 0, 0);
		g_ew_op(&e, SPYRE_VF_SUB, d, s, 0, 0);
	}
	return row_node(g, call, lg ? "log_softmax" : "softmax", &e, x, dim, false, X->ndim,
			X->shape, X->dt, out);
}

int spyre_graph_softmax(spyre_graph *g, spyre_value x, int dim, spyre_value *out)
{
	return softmax_like(g, "spyre_graph_softmax", false, x, dim, out);
}

int spyre_graph_log_softmax(spyre_graph *g, spyre_value x, int dim, spyre_value *out)
{
	return softmax_like(g, "spyre_graph_log_softmax", true, x, dim, out);
}

/*
 * Attention's softmax (PyTorch's _safe_softmax): a row of nothing but -inf
 * (a query every key is masked from) gives 0 instead of NaN. A row with a
 * NaN has a NaN max and stays NaN. One row node: the softmax, the row's max,
 * and a select of 0 where that max is -inf.
 */
int g_safe_softmax(spyre_graph *g, spyre_value x, spyre_value *out)
{
	static const char *call = "spyre_graph_sdpa";
	struct ewb e = { 0 };
	const struct gval *X = &g->v[x];
	int i, p, m, keep, ret;

	if (!X->ndim || !g_is_float(X->dt))
		return g_unsupported(call, "safe softmax", X, "float values of 1+ dims only");
	ret = g_need_select(g, call, "safe softmax", X);
	if (ret)
		return ret;
	i = g_ew_in(&e, x);
	p = g_ew_op(&e, SPYRE_VF_SOFTMAX_ROW, i, -1, 0, 0);
	m = g_ew_op(&e, SPYRE_VF_MAX_ROW, i, -1, 0, 0);
	keep = g_ew_op(&e, SPYRE_VF_CMP_NE, m, g_ew_const(&e, -INFINITY), 0, 0);
	g_ew_op(&e, SPYRE_VF_SELECT, p, keep, 0.0f, 0);
	return row_node(g, call, "safe_softmax", &e, x, (int)X->ndim - 1, false, X->ndim,
			X->shape, X->dt, out);
}

int spyre_graph_argmax(spyre_graph *g, spyre_value x, int dim, int keepdim, spyre_value *out)
{
	static const char *call = "spyre_graph_argmax";
	int64_t oshape[SPYRE_MAX_DIMS], sh[SPYRE_MAX_DIMS];
	unsigned int ond = 0, d, nd;
	struct ewb e = { 0 };
	int ret = g_check_val(g, call, x, "x");

	if (ret)
		return ret;
	if (!out || !g->v[x].ndim)
		return spy_err(-EINVAL, "%s: out is NULL or x is a scalar", call);
	ret = g_norm_dim(call, &g->v[x], dim, &dim);
	if (ret)
		return ret;
	if (!g_is_float(g->v[x].dt) && !g_is_int(g->v[x].dt))
		return g_unsupported(call, "argmax", &g->v[x], "float and integer dtypes only");
	if (g_is_int(g->v[x].dt)) {
		ret = g_need_int(g, call, "argmax", &g->v[x]);
		if (ret)
			return ret;
	}
	if (!g->v[x].shape[dim])
		return spy_err(-EINVAL, "%s: argmax over an empty dim", call);
	ret = g_need_select(g, call, "argmax", &g->v[x]);
	if (ret)
		return ret;
	nd = g->v[x].ndim;
	memcpy(sh, g->v[x].shape, sizeof(sh));
	for (d = 0; d < nd; d++)
		if ((int)d != dim)
			oshape[ond++] = sh[d];
		else if (keepdim)
			oshape[ond++] = 1;
	if (g_is_int(g->v[x].dt))
		g_ew_iop(&e, SPYRE_VF_ARGMAX_ROW, g_ew_in(&e, x), -1, g_int_t(g->v[x].dt), 0);
	else
		g_ew_op(&e, SPYRE_VF_ARGMAX_ROW, g_ew_in(&e, x), -1, 0, 0);
	return row_node(g, call, "argmax", &e, x, dim, true, ond, oshape, SPYRE_INT32, out);
}

int spyre_graph_cumsum(spyre_graph *g, spyre_value x, int dim, spyre_value *out)
{
	static const char *call = "spyre_graph_cumsum";
	int64_t sh[SPYRE_MAX_DIMS];
	struct ewb e = { 0 };
	int ret = g_check_val(g, call, x, "x");
	unsigned int nd;

	if (ret)
		return ret;
	if (!out || !g->v[x].ndim)
		return spy_err(-EINVAL, "%s: out is NULL or x is a scalar", call);
	ret = g_norm_dim(call, &g->v[x], dim, &dim);
	if (ret)
		return ret;
	if (!g_is_float(g->v[x].dt) && !g_is_int(g->v[x].dt))
		return g_unsupported(call, "cumsum", &g->v[x], "float and integer dtypes only");
	ret = g_is_int(g->v[x].dt) ? g_need_int(g, call, "cumsum", &g->v[x]) :
				     g_need_select(g, call, "cumsum", &g->v[x]);
	if (ret)
		return ret;
	nd = g->v[x].ndim;
	memcpy(sh, g->v[x].shape, sizeof(sh));
	if (g_is_int(g->v[x].dt))
		g_ew_iop(&e, SPYRE_VF_CUMSUM_ROW, g_ew_in(&e, x), -1, g_int_t(g->v[x].dt), 0);
	else
		g_ew_op(&e, SPYRE_VF_CUMSUM_ROW, g_ew_in(&e, x), -1, 0, 0);
	return row_node(g, call, "cumsum", &e, x, dim, false, nd, sh, g->v[x].dt, out);
}

static int check_param(spyre_graph *g, const char *call, spyre_value p, const char *what,
		       const struct gval *X)
{
	int ret;

	if (p < 0)
		return 0;
	ret = g_check_val(g, call, p, what);
	if (ret)
		return ret;
	if (g->v[p].ndim != 1 || g->v[p].shape[0] != X->shape[X->ndim - 1] ||
	    g->v[p].dt != X->dt)
		return spy_err(-EINVAL, "%s: %s must be [%lld] of %s", call, what,
			       (long long)X->shape[X->ndim - 1], spyre_dtype_name(X->dt));
	return 0;
}

static int norm(spyre_graph *g, const char *call, bool rms, spyre_value x, spyre_value w,
		spyre_value b, double eps, spyre_value *out)
{
	struct ewb e = { 0 };
	int i, s, t, xc, ret = g_check_val(g, call, x, "x");
	const struct gval *X;
	float inv;

	if (ret)
		return ret;
	X = &g->v[x];
	if (!out || !X->ndim)
		return spy_err(-EINVAL, "%s: out is NULL or x is a scalar", call);
	ret = check_param(g, call, w, "weight", X);
	if (!ret)
		ret = check_param(g, call, b, "bias", X);
	if (ret)
		return ret;
	if (!g_is_float(X->dt))
		return g_unsupported(call, rms ? "rms_norm" : "layer_norm", X, "float dtypes only");
	inv = X->shape[X->ndim - 1] ? 1.0f / (float)X->shape[X->ndim - 1] : NAN;
	i = g_ew_in(&e, x);
	if (rms) {
		xc = i;
		t = g_ew_op(&e, SPYRE_VF_MUL, i, i, 0, 0);
	} else {
		s = g_ew_op(&e, SPYRE_VF_SUM_ROW, i, -1, 0, 0);
		s = g_ew_op(&e, SPYRE_VF_SCALE, s, -1, inv, -0.0f);
		xc = g_ew_op(&e, SPYRE_VF_SUB, i, s, 0, 0);
		t = g_ew_op(&e, SPYRE_VF_MUL, xc, xc, 0, 0);
	}
	t = g_ew_op(&e, SPYRE_VF_SUM_ROW, t, -1, 0, 0);
	t = g_ew_op(&e, SPYRE_VF_SCALE, t, -1, inv, (float)eps);
	t = g_ew_op(&e, SPYRE_VF_RSQRT, t, -1, 0, 0);
	t = g_ew_op(&e, SPYRE_VF_MUL, xc, t, 0, 0);
	if (w >= 0)
		t = g_ew_op(&e, SPYRE_VF_MUL, t, g_ew_in(&e, w), 0, 0);
	if (b >= 0)
		g_ew_op(&e, SPYRE_VF_ADD, t, g_ew_in(&e, b), 0, 0);
	return row_node(g, call, rms ? "rms_norm" : "layer_norm", &e, x, (int)X->ndim - 1, false,
			X->ndim, X->shape, X->dt, out);
}

int spyre_graph_layer_norm(spyre_graph *g, spyre_value x, spyre_value w, spyre_value b,
			   double eps, spyre_value *out)
{
	return norm(g, "spyre_graph_layer_norm", false, x, w, b, eps, out);
}

int spyre_graph_rms_norm(spyre_graph *g, spyre_value x, spyre_value w, double eps,
			 spyre_value *out)
{
	return norm(g, "spyre_graph_rms_norm", true, x, w, -1, eps, out);
}

int spyre_graph_rotate_half(spyre_graph *g, spyre_value x, spyre_value *out)
{
	static const char *call = "spyre_graph_rotate_half";
	struct ewb e = { 0 };
	const struct gval *X;
	struct uop *u;
	int ret = g_check_val(g, call, x, "x");

	if (ret)
		return ret;
	X = &g->v[x];
	if (!out)
		return spy_err(-EINVAL, "%s: out is NULL", call);
	if (!g_is_float(X->dt))
		return g_unsupported(call, "rotate_half", X, "float dtypes only");
	if (!X->ndim || X->shape[X->ndim - 1] % 2)
		return spy_err(-EINVAL, "%s: the last dim must have an even size", call);
	g_ew_in(&e, x);
	u = &e.u[e.nuops++];
	u->kind = U_ROTH;
	u->a = 0;
	u->b = -1;
	return g_make_ew(g, call, "rotate_half", &e, X->dt, out);
}

/* A node filling a new value of @shape with @value (eager fill). */
int g_fill(spyre_graph *g, enum spyre_dtype dt, unsigned int ndim, const int64_t *shape,
	   double value, spyre_value *out)
{
	struct ewb e = { 0 };
	struct gnode *n;
	int64_t sh[SPYRE_MAX_DIMS];
	int ret;

	/* integers exactly on 1.9; before, int32 only where fp32 holds the value */
	if (dt == SPYRE_INT64 || (dt == SPYRE_INT32 && (g->ops->hw_version >= SPYRE_IFACE_INT ||
							 fabs(value) > (double)(1 << 24))))
		return g_int_fill(g, dt, ndim, shape, value, out);
	memcpy(sh, shape, ndim * sizeof(int64_t));
	g_ew_const(&e, (float)value);
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

/* ---- selection (card interface 1.3) ---- */

int spyre_graph_where(spyre_graph *g, spyre_value cond, spyre_value a, spyre_value b,
		      spyre_value *out)
{
	static const char *call = "spyre_graph_where";
	struct ewb e = { 0 };
	int c, t1, t2, ret = g_check_val(g, call, cond, "cond");

	if (!ret)
		ret = g_check_val(g, call, a, "a");
	if (!ret)
		ret = g_check_val(g, call, b, "b");
	if (ret)
		return ret;
	if (!out)
		return spy_err(-EINVAL, "%s: out is NULL", call);
	if (g->v[a].dt == g->v[b].dt && g_is_int(g->v[a].dt))
		return g_int_where(g, call, cond, a, b, out);
	if (g->v[a].dt != g->v[b].dt || !g_is_float(g->v[a].dt) || g->v[cond].dt == SPYRE_INT64)
		return spy_err(-EINVAL, "%s: a and b must share a float dtype (%s, %s), cond not "
			       "int64", call, spyre_dtype_name(g->v[a].dt),
			       spyre_dtype_name(g->v[b].dt));
	ret = g_need_select(g, call, "where", &g->v[a]);
	if (ret)
		return ret;
	/* (c ? a : -0) + (c ? -0 : b): adding -0 is exact for every value */
	c = g_ew_in(&e, cond);
	t1 = g_ew_op(&e, SPYRE_VF_SELECT, g_ew_in(&e, a), c, -0.0f, 0);
	t2 = g_ew_op(&e, SPYRE_VF_CMP_EQ, c, g_ew_const(&e, 0.0f), 0, 0);
	t2 = g_ew_op(&e, SPYRE_VF_SELECT, g_ew_in(&e, b), t2, -0.0f, 0);
	g_ew_op(&e, SPYRE_VF_ADD, t1, t2, 0, 0);
	return g_make_ew(g, call, "where", &e, g->v[a].dt, out);
}

int spyre_graph_masked_fill(spyre_graph *g, spyre_value x, spyre_value mask, double value,
			    spyre_value *out)
{
	static const char *call = "spyre_graph_masked_fill";
	struct ewb e = { 0 };
	int m, ret = g_check_val(g, call, x, "x");

	if (!ret)
		ret = g_check_val(g, call, mask, "mask");
	if (ret)
		return ret;
	if (!out)
		return spy_err(-EINVAL, "%s: out is NULL", call);
	if (g_is_int(g->v[x].dt))
		return g_int_masked_fill(g, call, x, mask, value, out);
	if (!g_is_float(g->v[x].dt) || g->v[mask].dt == SPYRE_INT64)
		return g_unsupported(call, "masked_fill", &g->v[x], "float x, mask not int64");
	ret = g_need_select(g, call, "masked_fill", &g->v[x]);
	if (ret)
		return ret;
	m = g_ew_op(&e, SPYRE_VF_CMP_EQ, g_ew_in(&e, mask), g_ew_const(&e, 0.0f), 0, 0);
	g_ew_op(&e, SPYRE_VF_SELECT, g_ew_in(&e, x), m, (float)value, 0);
	return g_make_ew(g, call, "masked_fill", &e, g->v[x].dt, out);
}
