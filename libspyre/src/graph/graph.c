// SPDX-License-Identifier: MIT
/*
 * Graph building: values, storages and nodes, shape checks and broadcasting.
 * Each public op becomes one node whose expression uses the card's vector
 * functions (see kern.h); composite ops (layer_norm, sdpa...) are spelt out
 * here once, for eager and compiled use alike.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "graph.h"

unsigned int spyre_dtype_bytes(enum spyre_dtype dt)
{
	switch (dt) {
	case SPYRE_FLOAT32:
	case SPYRE_INT32:
		return 4;
	case SPYRE_FLOAT16:
	case SPYRE_BFLOAT16:
		return 2;
	case SPYRE_INT8:
		return 1;
	case SPYRE_INT64:
		return 8;
	}
	return 0;
}

const char *spyre_dtype_name(enum spyre_dtype dt)
{
	switch (dt) {
	case SPYRE_FLOAT32:
		return "float32";
	case SPYRE_FLOAT16:
		return "float16";
	case SPYRE_BFLOAT16:
		return "bfloat16";
	case SPYRE_INT8:
		return "int8";
	case SPYRE_INT32:
		return "int32";
	case SPYRE_INT64:
		return "int64";
	}
	return "unknown";
}

unsigned int g_isa_dtype(enum spyre_dtype dt)
{
	return (unsigned int)dt;	/* equal by construction, INT64 excepted */
}

struct spyre_tensor spyre_tensor_make(enum spyre_dtype dt, unsigned int ndim,
				      const int64_t *shape, struct spyre_buf buf)
{
	struct spyre_tensor t;
	int64_t st = 1;
	int d;

	memset(&t, 0, sizeof(t));
	t.dtype = dt;
	t.ndim = ndim > SPYRE_MAX_DIMS ? SPYRE_MAX_DIMS : ndim;
	for (d = (int)t.ndim - 1; d >= 0; d--) {
		t.shape[d] = shape[d];
		t.strides[d] = st;
		st *= shape[d] > 0 ? shape[d] : 1;
	}
	t.buf = buf;
	return t;
}

int64_t spyre_tensor_numel(const struct spyre_tensor *t)
{
	int64_t n = 1;
	unsigned int d;

	for (d = 0; d < t->ndim; d++)
		n *= t->shape[d];
	return n;
}

uint64_t spyre_tensor_nbytes(const struct spyre_tensor *t)
{
	return (uint64_t)spyre_tensor_numel(t) * spyre_dtype_bytes(t->dtype);
}

void g_shape_str(char *buf, size_t len, unsigned int ndim, const int64_t *shape)
{
	size_t n = 0;
	unsigned int d;

	n += (size_t)snprintf(buf + n, len - n, "[");
	for (d = 0; d < ndim && n < len; d++)
		n += (size_t)snprintf(buf + n, len - n, "%s%lld", d ? ", " : "",
				      (long long)shape[d]);
	if (n < len)
		snprintf(buf + n, len - n, "]");
}

uint64_t g_extent_bytes(enum spyre_dtype dt, unsigned int ndim, const int64_t *shape,
			const int64_t *strides)
{
	uint64_t last = 0;
	unsigned int d;

	for (d = 0; d < ndim; d++) {
		if (!shape[d])
			return 0;
		last += (uint64_t)(shape[d] - 1) * (uint64_t)strides[d];
	}
	return (last + 1) * spyre_dtype_bytes(dt);
}

int g_check_tensor(const char *call, const char *what, const struct spyre_tensor *t)
{
	unsigned int d, es;
	uint64_t ext;

	if (!t)
		return spy_err(-EINVAL, "%s: %s is NULL", call, what);
	es = spyre_dtype_bytes(t->dtype);
	if (!es)
		return spy_err(-EINVAL, "%s: %s has unknown dtype %d", call, what, (int)t->dtype);
	if (t->layout != SPYRE_LAYOUT_STRIDED)
		return spy_err(-EINVAL, "%s: %s has unknown layout %d", call, what, (int)t->layout);
	if (t->ndim > SPYRE_MAX_DIMS)
		return spy_err(-EINVAL, "%s: %s has %u dims (at most %d)", call, what, t->ndim,
			       SPYRE_MAX_DIMS);
	for (d = 0; d < t->ndim; d++)
		if (t->shape[d] < 0 || t->strides[d] < 0 || t->shape[d] > (1ll << 40) ||
		    t->strides[d] > (1ll << 40))
			return spy_err(-EINVAL, "%s: %s: dim %u has size %lld, stride %lld", call,
				       what, d, (long long)t->shape[d], (long long)t->strides[d]);
	ext = g_extent_bytes(t->dtype, t->ndim, t->shape, t->strides);
	if (!ext)
		return 0;	/* no elements: nothing is accessed */
	if (!t->buf.bo)
		return spy_err(-EINVAL, "%s: %s has no buffer", call, what);
	if (spyre_bo_mem(t->buf.bo) != SPYRE_MEM_DEVICE)
		return spy_err(-EINVAL, "%s: %s is in host memory; ops take device memory", call,
			       what);
	if (t->buf.offset % es)
		return spy_err(-EINVAL, "%s: %s: offset %llu is not a multiple of the %s element "
			       "size %u", call, what, (unsigned long long)t->buf.offset,
			       spyre_dtype_name(t->dtype), es);
	if (t->buf.offset > spyre_bo_size(t->buf.bo) ||
	    t->buf.size > spyre_bo_size(t->buf.bo) - t->buf.offset || ext > t->buf.size)
		return spy_err(-EINVAL, "%s: %s: its elements reach %llu bytes past offset %llu, "
			       "the buffer has %llu (BO of %llu)", call, what,
			       (unsigned long long)ext, (unsigned long long)t->buf.offset,
			       (unsigned long long)t->buf.size,
			       (unsigned long long)spyre_bo_size(t->buf.bo));
	return 0;
}

/* ---- storage, values, nodes ---- */

static int grow(void **p, unsigned int *cap, unsigned int n, size_t sz)
{
	void *q;
	unsigned int c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 32;
	q = realloc(*p, c * sz);
	if (!q)
		return spy_err(-ENOMEM, "graph: out of memory");
	*p = q;
	*cap = c;
	return 0;
}

static int new_store(spyre_graph *g, int kind, enum spyre_dtype dt, int64_t numel)
{
	struct gstore *s;

	if (grow((void **)&g->st, &g->capst, g->nst, sizeof(*g->st)))
		return -ENOMEM;
	s = &g->st[g->nst];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->dt = dt;
	s->numel = numel;
	s->node = -1;
	s->io = -1;
	s->bytes = (uint64_t)numel * spyre_dtype_bytes(dt);
	return (int)g->nst++;
}

static void contig(unsigned int ndim, const int64_t *shape, int64_t *strides)
{
	int64_t st = 1;
	int d;

	for (d = (int)ndim - 1; d >= 0; d--) {
		strides[d] = st;
		st *= shape[d] > 0 ? shape[d] : 1;
	}
}

int g_value(spyre_graph *g, enum spyre_dtype dt, unsigned int ndim, const int64_t *shape,
	    const int64_t *strides, int64_t off, int store)
{
	struct gval *v;

	if (grow((void **)&g->v, &g->capv, g->nv, sizeof(*g->v)))
		return -ENOMEM;
	v = &g->v[g->nv];
	memset(v, 0, sizeof(*v));
	v->dt = dt;
	v->ndim = ndim;
	memcpy(v->shape, shape, ndim * sizeof(int64_t));
	if (strides)
		memcpy(v->strides, strides, ndim * sizeof(int64_t));
	else
		contig(ndim, shape, v->strides);
	v->off = off;
	v->store = store;
	return (int)g->nv++;
}

const struct gval *g_val(const spyre_graph *g, spyre_value v)
{
	return v >= 0 && (unsigned int)v < g->nv ? &g->v[v] : NULL;
}

bool g_contiguous(const struct gval *v)
{
	int64_t st[SPYRE_MAX_DIMS];
	unsigned int d;

	contig(v->ndim, v->shape, st);
	for (d = 0; d < v->ndim; d++)
		if (v->shape[d] > 1 && v->strides[d] != st[d])
			return false;
	return true;
}

static int64_t numel_of(unsigned int ndim, const int64_t *shape)
{
	int64_t n = 1;
	unsigned int d;

	for (d = 0; d < ndim; d++)
		n *= shape[d];
	return n;
}

int spyre_graph_create(spyre_ops *ops, spyre_graph **out)
{
	spyre_graph *g;

	if (!ops || !out)
		return spy_err(-EINVAL, "spyre_graph_create: ops or out is NULL");
	g = calloc(1, sizeof(*g));
	if (!g)
		return spy_err(-ENOMEM, "spyre_graph_create: out of memory");
	g->ops = ops;
	g->iota = -1;
	*out = g;
	return 0;
}

int spyre_graph_destroy(spyre_graph *g)
{
	if (!g)
		return spy_err(-EINVAL, "spyre_graph_destroy: graph is NULL");
	free(g->v);
	free(g->st);
	free(g->n);
	free(g);
	return 0;
}

static int check_shape(const char *call, unsigned int ndim, const int64_t *shape)
{
	unsigned int d;

	if (ndim > SPYRE_MAX_DIMS || (ndim && !shape))
		return spy_err(-EINVAL, "%s: %u dims (at most %d)", call, ndim, SPYRE_MAX_DIMS);
	for (d = 0; d < ndim; d++)
		if (shape[d] < 0 || shape[d] > (1ll << 40))
			return spy_err(-EINVAL, "%s: dim %u has size %lld", call, d,
				       (long long)shape[d]);
	return 0;
}

int spyre_graph_input(spyre_graph *g, enum spyre_dtype dt, unsigned int ndim,
		      const int64_t *shape, spyre_value *out)
{
	static const char *call = "spyre_graph_input";
	int s, v, ret;

	if (!g || !out)
		return spy_err(-EINVAL, "%s: graph or out is NULL", call);
	if (!spyre_dtype_bytes(dt))
		return spy_err(-EINVAL, "%s: unknown dtype %d", call, (int)dt);
	ret = check_shape(call, ndim, shape);
	if (ret)
		return ret;
	if (g->ninputs + g->noutputs >= 64)
		return spy_err(-E2BIG, "%s: at most 64 inputs and outputs", call);
	s = new_store(g, ST_INPUT, dt, numel_of(ndim, shape));
	if (s < 0)
		return s;
	g->st[s].io = (int)g->ninputs;
	v = g_value(g, dt, ndim, shape, NULL, 0, s);
	if (v < 0)
		return v;
	g->ninputs++;
	*out = v;
	return 0;
}

/* An input bound to a strided tensor (eager ops). */
int g_input_tensor(spyre_graph *g, const struct spyre_tensor *t, spyre_value *out)
{
	int s, v;

	s = new_store(g, ST_INPUT, t->dtype, 0);
	if (s < 0)
		return s;
	g->st[s].io = (int)g->ninputs;
	g->st[s].bytes = g_extent_bytes(t->dtype, t->ndim, t->shape, t->strides);
	v = g_value(g, t->dtype, t->ndim, t->shape, t->strides, 0, s);
	if (v < 0)
		return v;
	g->ninputs++;
	*out = v;
	return 0;
}

int spyre_graph_constant(spyre_graph *g, const struct spyre_tensor *t, spyre_value *out)
{
	static const char *call = "spyre_graph_constant";
	int s, v, ret;

	if (!g || !out)
		return spy_err(-EINVAL, "%s: graph or out is NULL", call);
	ret = g_check_tensor(call, "constant", t);
	if (ret)
		return ret;
	s = new_store(g, ST_CONST, t->dtype, 0);
	if (s < 0)
		return s;
	g->st[s].buf = t->buf;
	g->st[s].bytes = g_extent_bytes(t->dtype, t->ndim, t->shape, t->strides);
	g->st[s].buf.size = g->st[s].bytes;
	v = g_value(g, t->dtype, t->ndim, t->shape, t->strides, 0, s);
	if (v < 0)
		return v;
	*out = v;
	return 0;
}

static int check_val(spyre_graph *g, const char *call, spyre_value v, const char *what)
{
	if (!g)
		return spy_err(-EINVAL, "%s: graph is NULL", call);
	if (v < 0 || (unsigned int)v >= g->nv)
		return spy_err(-EINVAL, "%s: %s is not a value of this graph (%d)", call, what, v);
	return 0;
}

int spyre_graph_value_info(spyre_graph *g, spyre_value v, enum spyre_dtype *dt,
			   unsigned int *ndim, int64_t *shape)
{
	int ret = check_val(g, "spyre_graph_value_info", v, "value");

	if (ret)
		return ret;
	if (dt)
		*dt = g->v[v].dt;
	if (ndim)
		*ndim = g->v[v].ndim;
	if (shape)
		memcpy(shape, g->v[v].shape, g->v[v].ndim * sizeof(int64_t));
	return 0;
}

/* ---- node construction ---- */

struct ewb {
	unsigned int nin, nuops;
	int in[K_MAX_IN];
	struct uop u[K_MAX_UOPS];
};

static int ew_in(struct ewb *b, int value)
{
	b->in[b->nin] = value;
	return (int)b->nin++;
}

/* Append a uop; returns its value id in the expression (inputs come first). */
static int ew_op(struct ewb *b, unsigned int func, int a, int bb, float i0, float i1)
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

static int ew_const(struct ewb *b, float c)
{
	struct uop *u = &b->u[b->nuops++];

	u->kind = U_CONST;
	u->a = u->b = -1;
	u->imm0 = c;
	return (int)(K_MAX_IN + b->nuops - 1);
}

/* Operand ids: inputs 0..nin-1 stay, K_MAX_IN + i becomes nin + i. */
static void ew_fix(struct ewb *b)
{
	unsigned int i;

	for (i = 0; i < b->nuops; i++) {
		if (b->u[i].a >= K_MAX_IN)
			b->u[i].a = (int8_t)(b->u[i].a - K_MAX_IN + b->nin);
		if (b->u[i].b >= K_MAX_IN)
			b->u[i].b = (int8_t)(b->u[i].b - K_MAX_IN + b->nin);
	}
}

static int new_node(spyre_graph *g, const char *name, int kind, enum spyre_dtype dt,
		    unsigned int ondim, const int64_t *oshape, spyre_value *out)
{
	struct gnode *n;
	int s, v;

	if (grow((void **)&g->n, &g->capn, g->nn, sizeof(*g->n)))
		return -ENOMEM;
	s = new_store(g, ST_NODE, dt, numel_of(ondim, oshape));
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
static int broadcast(const char *call, unsigned int na, const int64_t *a, unsigned int nb,
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

static bool is_float(enum spyre_dtype dt)
{
	return dt == SPYRE_FLOAT32 || dt == SPYRE_FLOAT16 || dt == SPYRE_BFLOAT16;
}

/* Elementwise node over the broadcast of its inputs. */
static int make_ew(spyre_graph *g, const char *call, const char *name, struct ewb *b,
		   enum spyre_dtype dt, spyre_value *out)
{
	unsigned int nd = 0, i;
	int64_t shape[SPYRE_MAX_DIMS];
	struct gnode *n;
	int ret;

	for (i = 0; i < b->nin; i++) {
		const struct gval *x = &g->v[b->in[i]];

		ret = broadcast(call, nd, shape, x->ndim, x->shape, &nd, shape);
		if (ret)
			return ret;
	}
	ew_fix(b);
	ret = new_node(g, name, NK_EW, dt, nd, shape, out);
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

static const char *const un_names[SPYRE_UN_COUNT] = {
	"neg", "abs", "exp", "log", "sqrt", "rsqrt", "reciprocal", "tanh", "sigmoid", "relu",
	"gelu", "gelu_tanh", "silu", "square", "sin", "cos", "erf",
};

static const char *const bin_names[SPYRE_BIN_COUNT] = {
	"add", "sub", "mul", "div", "maximum", "minimum",
};

static const uint8_t bin_func[SPYRE_BIN_COUNT] = {
	SPYRE_VF_ADD, SPYRE_VF_SUB, SPYRE_VF_MUL, SPYRE_VF_DIV, SPYRE_VF_MAX, SPYRE_VF_MIN,
};

static int unsupported(const char *call, const char *op, const struct gval *x, const char *why)
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
		return ew_op(b, SPYRE_VF_SCALE, x, -1, -1.0f, -0.0f);
	case SPYRE_UN_ABS:
		t = ew_op(b, SPYRE_VF_SCALE, x, -1, -1.0f, -0.0f);
		return ew_op(b, SPYRE_VF_MAX, x, t, 0, 0);
	case SPYRE_UN_EXP:
		return ew_op(b, SPYRE_VF_EXP, x, -1, 0, 0);
	case SPYRE_UN_LOG:
		return ew_op(b, SPYRE_VF_LOG, x, -1, 0, 0);
	case SPYRE_UN_SQRT:
		return ew_op(b, SPYRE_VF_SQRT, x, -1, 0, 0);
	case SPYRE_UN_RSQRT:
		return ew_op(b, SPYRE_VF_RSQRT, x, -1, 0, 0);
	case SPYRE_UN_RECIPROCAL:
		return ew_op(b, SPYRE_VF_RECIP, x, -1, 0, 0);
	case SPYRE_UN_TANH:
		return ew_op(b, SPYRE_VF_TANH, x, -1, 0, 0);
	case SPYRE_UN_SIGMOID:
		return ew_op(b, SPYRE_VF_SIGMOID, x, -1, 0, 0);
	case SPYRE_UN_RELU:
		return ew_op(b, SPYRE_VF_RELU, x, -1, 0, 0);
	case SPYRE_UN_GELU:
		return ew_op(b, SPYRE_VF_GELU, x, -1, 0, 0);
	case SPYRE_UN_GELU_TANH:
		/* x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
		t = ew_op(b, SPYRE_VF_MUL, x, x, 0, 0);
		t = ew_op(b, SPYRE_VF_MUL, t, x, 0, 0);
		t = ew_op(b, SPYRE_VF_SCALE, t, -1, 0.044715f, -0.0f);
		t = ew_op(b, SPYRE_VF_ADD, t, x, 0, 0);
		t = ew_op(b, SPYRE_VF_SCALE, t, -1, 0.7978845608f, -0.0f);
		t = ew_op(b, SPYRE_VF_TANH, t, -1, 0, 0);
		t = ew_op(b, SPYRE_VF_SCALE, t, -1, 0.5f, 0.5f);
		return ew_op(b, SPYRE_VF_MUL, t, x, 0, 0);
	case SPYRE_UN_SILU:
		return ew_op(b, SPYRE_VF_SILU, x, -1, 0, 0);
	case SPYRE_UN_SQUARE:
		return ew_op(b, SPYRE_VF_MUL, x, x, 0, 0);
	default:
		(void)u;
		return -1;
	}
}

int spyre_graph_unary(spyre_graph *g, enum spyre_unary_op op, spyre_value x, spyre_value *out)
{
	static const char *call = "spyre_graph_unary";
	struct ewb b = { 0 };
	int ret = check_val(g, call, x, "x");

	if (ret)
		return ret;
	if (!out || (unsigned int)op >= SPYRE_UN_COUNT)
		return spy_err(-EINVAL, "%s: bad op %d or out is NULL", call, (int)op);
	if (!is_float(g->v[x].dt))
		return unsupported(call, un_names[op], &g->v[x], "float dtypes only");
	if (un_expr(&b, op, ew_in(&b, x)) < 0)
		return unsupported(call, un_names[op], &g->v[x],
				   "the card has no vector function for it");
	return make_ew(g, call, un_names[op], &b, g->v[x].dt, out);
}

int spyre_graph_binary(spyre_graph *g, enum spyre_binary_op op, spyre_value a, spyre_value b,
		       spyre_value *out)
{
	static const char *call = "spyre_graph_binary";
	struct ewb e = { 0 };
	int ret = check_val(g, call, a, "a");

	if (!ret)
		ret = check_val(g, call, b, "b");
	if (ret)
		return ret;
	if (!out || (unsigned int)op >= SPYRE_BIN_COUNT)
		return spy_err(-EINVAL, "%s: bad op %d or out is NULL", call, (int)op);
	if (g->v[a].dt != g->v[b].dt)
		return spy_err(-EINVAL, "%s: %s of %s and %s: cast one operand first", call,
			       bin_names[op], spyre_dtype_name(g->v[a].dt),
			       spyre_dtype_name(g->v[b].dt));
	if (!is_float(g->v[a].dt))
		return unsupported(call, bin_names[op], &g->v[a], "float dtypes only");
	ew_op(&e, bin_func[op], ew_in(&e, a), ew_in(&e, b), 0, 0);
	return make_ew(g, call, bin_names[op], &e, g->v[a].dt, out);
}

int spyre_graph_binary_scalar(spyre_graph *g, enum spyre_binary_op op, spyre_value a,
			      double scalar, int reverse, spyre_value *out)
{
	static const char *call = "spyre_graph_binary_scalar";
	struct ewb e = { 0 };
	int x, c, ret = check_val(g, call, a, "a");

	if (ret)
		return ret;
	if (!out || (unsigned int)op >= SPYRE_BIN_COUNT)
		return spy_err(-EINVAL, "%s: bad op %d or out is NULL", call, (int)op);
	if (!is_float(g->v[a].dt))
		return unsupported(call, bin_names[op], &g->v[a], "float dtypes only");
	x = ew_in(&e, a);
	if (op == SPYRE_BIN_MUL && !reverse)
		ew_op(&e, SPYRE_VF_SCALE, x, -1, (float)scalar, -0.0f);	/* exact */
	else if (op == SPYRE_BIN_ADD)
		ew_op(&e, SPYRE_VF_SCALE, x, -1, 1.0f, (float)scalar);
	else {
		c = ew_const(&e, (float)scalar);
		if (reverse)
			ew_op(&e, bin_func[op], c, x, 0, 0);
		else
			ew_op(&e, bin_func[op], x, c, 0, 0);
	}
	return make_ew(g, call, bin_names[op], &e, g->v[a].dt, out);
}

int spyre_graph_clamp(spyre_graph *g, spyre_value x, double lo, double hi, spyre_value *out)
{
	static const char *call = "spyre_graph_clamp";
	struct ewb e = { 0 };
	int i, t, ret = check_val(g, call, x, "x");

	if (ret)
		return ret;
	if (!out)
		return spy_err(-EINVAL, "%s: out is NULL", call);
	if (!is_float(g->v[x].dt))
		return unsupported(call, "clamp", &g->v[x], "float dtypes only");
	i = ew_in(&e, x);
	t = ew_op(&e, SPYRE_VF_MAX, i, ew_const(&e, (float)lo), 0, 0);
	ew_op(&e, SPYRE_VF_MIN, t, ew_const(&e, (float)hi), 0, 0);
	return make_ew(g, call, "clamp", &e, g->v[x].dt, out);
}

static bool castable(enum spyre_dtype dt)
{
	return dt == SPYRE_FLOAT32 || dt == SPYRE_FLOAT16 || dt == SPYRE_BFLOAT16 ||
	       dt == SPYRE_INT8 || dt == SPYRE_INT32;
}

int spyre_graph_cast(spyre_graph *g, spyre_value x, enum spyre_dtype dt, spyre_value *out)
{
	static const char *call = "spyre_graph_cast";
	struct ewb e = { 0 };
	int ret = check_val(g, call, x, "x");

	if (ret)
		return ret;
	if (!out || !spyre_dtype_bytes(dt))
		return spy_err(-EINVAL, "%s: bad dtype %d or out is NULL", call, (int)dt);
	if (!castable(g->v[x].dt) || !castable(dt))
		return unsupported(call, "cast", &g->v[x], "the card has no int64 conversion");
	ew_op(&e, SPYRE_VF_COPY, ew_in(&e, x), -1, 0, 0);
	return make_ew(g, call, "cast", &e, dt, out);
}

int spyre_graph_contiguous(spyre_graph *g, spyre_value x, spyre_value *out)
{
	int ret = check_val(g, "spyre_graph_contiguous", x, "x");

	if (ret)
		return ret;
	if (g->v[x].dt == SPYRE_INT64)
		return unsupported("spyre_graph_contiguous", "copy", &g->v[x],
				   "the card's vector unit has no int64");
	return spyre_graph_cast(g, x, g->v[x].dt, out);
}

/* ---- matmul ---- */

static int make_mm(spyre_graph *g, const char *call, const char *name, spyre_value a,
		   spyre_value b, spyre_value *out)
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
	if (A->dt != B->dt)
		return spy_err(-EINVAL, "%s: %s of %s and %s: dtypes %s and %s differ", call, name,
			       sa, sb, spyre_dtype_name(A->dt), spyre_dtype_name(B->dt));
	if (!is_float(A->dt) && A->dt != SPYRE_INT8)
		return unsupported(call, name, A, "float and int8 matmul only");
	ret = broadcast(call, A->ndim - 2, A->shape, B->ndim - 2, B->shape, &nb, bs);
	if (ret)
		return ret;
	memcpy(shape, bs, nb * sizeof(int64_t));
	shape[nb] = A->shape[A->ndim - 2];
	shape[nb + 1] = B->shape[B->ndim - 1];
	/* int8 accumulates exactly into int32 (wrapping modulo 2^32, as the card) */
	ret = new_node(g, name, NK_MM, A->dt == SPYRE_INT8 ? SPYRE_INT32 : A->dt, nb + 2, shape,
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
	n->u[0] = (struct uop){ U_VF, SPYRE_VF_COPY, 0, -1, 0, 0 };
	return 0;
}

int spyre_graph_matmul(spyre_graph *g, spyre_value a, spyre_value b, spyre_value *out)
{
	static const char *call = "spyre_graph_matmul";
	int ret = check_val(g, call, a, "a");

	if (!ret)
		ret = check_val(g, call, b, "b");
	if (ret)
		return ret;
	if (!out)
		return spy_err(-EINVAL, "%s: out is NULL", call);
	return make_mm(g, call, "matmul", a, b, out);
}

int spyre_graph_linear(spyre_graph *g, spyre_value x, spyre_value w, spyre_value bias,
		       spyre_value *out)
{
	static const char *call = "spyre_graph_linear";
	spyre_value wt, y;
	int ret = check_val(g, call, x, "x");

	if (!ret)
		ret = check_val(g, call, w, "weight");
	if (!ret && bias >= 0)
		ret = check_val(g, call, bias, "bias");
	if (ret)
		return ret;
	if (!out)
		return spy_err(-EINVAL, "%s: out is NULL", call);
	if (g->v[w].ndim != 2)
		return spy_err(-EINVAL, "%s: weight must be [N, K]", call);
	ret = spyre_graph_transpose(g, w, 0, 1, &wt);
	if (ret)
		return ret;
	ret = make_mm(g, call, "linear", x, wt, &y);
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
	ew_fix(b);
	ret = new_node(g, name, NK_EW, dt, ondim, osh, out);
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

static int norm_dim(const char *call, const struct gval *x, int dim, int *out)
{
	int nd = (int)x->ndim;

	if (dim < 0)
		dim += nd;
	if (dim < 0 || dim >= (nd ? nd : 1))
		return spy_err(-EINVAL, "%s: dim %d out of range for %u dims", call, dim, x->ndim);
	*out = dim;
	return 0;
}

int spyre_graph_reduce(spyre_graph *g, enum spyre_reduce_op op, spyre_value x, int dim,
		       int keepdim, spyre_value *out)
{
	static const char *call = "spyre_graph_reduce";
	static const char *const names[] = { "sum", "mean", "amax", "amin" };
	int64_t oshape[SPYRE_MAX_DIMS];
	unsigned int ond = 0, d;
	struct ewb e = { 0 };
	int i, t, ret = check_val(g, call, x, "x");
	const struct gval *X;

	if (ret)
		return ret;
	X = &g->v[x];
	if (!out || (unsigned int)op >= SPYRE_RED_COUNT)
		return spy_err(-EINVAL, "%s: bad op %d or out is NULL", call, (int)op);
	if (!X->ndim)
		return spy_err(-EINVAL, "%s: a scalar has no dim to reduce", call);
	ret = norm_dim(call, X, dim, &dim);
	if (ret)
		return ret;
	if (!is_float(X->dt))
		return unsupported(call, names[op], X, "float dtypes only");
	if (!X->shape[dim] && (op == SPYRE_RED_MAX || op == SPYRE_RED_MIN))
		return spy_err(-EINVAL, "%s: %s over an empty dim", call, names[op]);
	for (d = 0; d < X->ndim; d++)
		if ((int)d != dim)
			oshape[ond++] = X->shape[d];
		else if (keepdim)
			oshape[ond++] = 1;
	i = ew_in(&e, x);
	switch (op) {
	case SPYRE_RED_SUM:
		ew_op(&e, SPYRE_VF_SUM_ROW, i, -1, 0, 0);
		break;
	case SPYRE_RED_MEAN:
		t = ew_op(&e, SPYRE_VF_SUM_ROW, i, -1, 0, 0);
		ew_op(&e, SPYRE_VF_SCALE, t, -1, X->shape[dim] ? 1.0f / (float)X->shape[dim] : NAN,
		      -0.0f);
		break;
	case SPYRE_RED_MAX:
		ew_op(&e, SPYRE_VF_MAX_ROW, i, -1, 0, 0);
		break;
	default:
		t = ew_op(&e, SPYRE_VF_SCALE, i, -1, -1.0f, -0.0f);
		t = ew_op(&e, SPYRE_VF_MAX_ROW, t, -1, 0, 0);
		ew_op(&e, SPYRE_VF_SCALE, t, -1, -1.0f, -0.0f);
		break;
	}
	return row_node(g, call, names[op], &e, x, dim, true, ond, oshape, X->dt, out);
}

static int softmax_like(spyre_graph *g, const char *call, bool lg, spyre_value x, int dim,
			spyre_value *out)
{
	struct ewb e = { 0 };
	int i, m, d, s, ret = check_val(g, call, x, "x");
	const struct gval *X;

	if (ret)
		return ret;
	X = &g->v[x];
	if (!out)
		return spy_err(-EINVAL, "%s: out is NULL", call);
	ret = norm_dim(call, X, dim, &dim);
	if (ret)
		return ret;
	if (!is_float(X->dt))
		return unsupported(call, lg ? "log_softmax" : "softmax", X, "float dtypes only");
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
	i = ew_in(&e, x);
	if (!lg) {
		ew_op(&e, SPYRE_VF_SOFTMAX_ROW, i, -1, 0, 0);
	} else {
		/* x - max - log(sum(exp(x - max))) */
		m = ew_op(&e, SPYRE_VF_MAX_ROW, i, -1, 0, 0);
		d = ew_op(&e, SPYRE_VF_SUB, i, m, 0, 0);
		s = ew_op(&e, SPYRE_VF_EXP, d, -1, 0, 0);
		s = ew_op(&e, SPYRE_VF_SUM_ROW, s, -1, 0, 0);
		s = ew_op(&e, SPYRE_VF_LOG, s, -1, 0, 0);
		ew_op(&e, SPYRE_VF_SUB, d, s, 0, 0);
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

static int check_param(spyre_graph *g, const char *call, spyre_value p, const char *what,
		       const struct gval *X)
{
	int ret;

	if (p < 0)
		return 0;
	ret = check_val(g, call, p, what);
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
	int i, s, t, xc, ret = check_val(g, call, x, "x");
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
	if (!is_float(X->dt))
		return unsupported(call, rms ? "rms_norm" : "layer_norm", X, "float dtypes only");
	inv = X->shape[X->ndim - 1] ? 1.0f / (float)X->shape[X->ndim - 1] : NAN;
	i = ew_in(&e, x);
	if (rms) {
		xc = i;
		t = ew_op(&e, SPYRE_VF_MUL, i, i, 0, 0);
	} else {
		s = ew_op(&e, SPYRE_VF_SUM_ROW, i, -1, 0, 0);
		s = ew_op(&e, SPYRE_VF_SCALE, s, -1, inv, -0.0f);
		xc = ew_op(&e, SPYRE_VF_SUB, i, s, 0, 0);
		t = ew_op(&e, SPYRE_VF_MUL, xc, xc, 0, 0);
	}
	t = ew_op(&e, SPYRE_VF_SUM_ROW, t, -1, 0, 0);
	t = ew_op(&e, SPYRE_VF_SCALE, t, -1, inv, (float)eps);
	t = ew_op(&e, SPYRE_VF_RSQRT, t, -1, 0, 0);
	t = ew_op(&e, SPYRE_VF_MUL, xc, t, 0, 0);
	if (w >= 0)
		t = ew_op(&e, SPYRE_VF_MUL, t, ew_in(&e, w), 0, 0);
	if (b >= 0)
		ew_op(&e, SPYRE_VF_ADD, t, ew_in(&e, b), 0, 0);
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

/* ---- views ---- */

int spyre_graph_reshape(spyre_graph *g, spyre_value x, unsigned int ndim, const int64_t *shape,
			spyre_value *out)
{
	static const char *call = "spyre_graph_reshape";
	int ret = check_val(g, call, x, "x");
	const struct gval *X;
	char a[96], b[96];
	spyre_value c;

	if (ret)
		return ret;
	if (!out)
		return spy_err(-EINVAL, "%s: out is NULL", call);
	ret = check_shape(call, ndim, shape);
	if (ret)
		return ret;
	X = &g->v[x];
	if (numel_of(ndim, shape) != numel_of(X->ndim, X->shape)) {
		g_shape_str(a, sizeof(a), X->ndim, X->shape);
		g_shape_str(b, sizeof(b), ndim, shape);
		return spy_err(-EINVAL, "%s: cannot reshape %s to %s", call, a, b);
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
	int ret = check_val(g, call, x, "x");
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
	int perm[SPYRE_MAX_DIMS], d, ret = check_val(g, call, x, "x");
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
	int ret = check_val(g, call, x, "x");
	struct gval v;

	if (ret)
		return ret;
	if (!out)
		return spy_err(-EINVAL, "%s: out is NULL", call);
	v = g->v[x];
	ret = norm_dim(call, &v, dim, &dim);
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
	int ret = check_val(g, call, x, "x");
	const struct gval *X;
	unsigned int d, lead;

	if (ret)
		return ret;
	if (!out)
		return spy_err(-EINVAL, "%s: out is NULL", call);
	ret = check_shape(call, ndim, shape);
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

/* ---- composites: embedding, attention ---- */

/* The fp32 iota constant (0, 1, ... n-1) as a graph value of shape [n]. */
static int iota_value(spyre_graph *g, int64_t n, spyre_value *out)
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

int spyre_graph_embedding(spyre_graph *g, spyre_value weight, spyre_value idx,
			  spyre_value *out)
{
	static const char *call = "spyre_graph_embedding";
	int64_t sh[SPYRE_MAX_DIMS + 1];
	spyre_value io, oh, ix = idx, row, col;
	struct ewb e = { 0 };
	const struct gval *W, *I;
	int ret = check_val(g, call, weight, "weight");
	int a, d, r1, r2, f;
	unsigned int k;

	if (!ret)
		ret = check_val(g, call, idx, "indices");
	if (ret)
		return ret;
	if (!out)
		return spy_err(-EINVAL, "%s: out is NULL", call);
	W = &g->v[weight];
	I = &g->v[idx];
	if (W->ndim != 2 || !is_float(W->dt))
		return spy_err(-EINVAL, "%s: weight must be a float [V, D] matrix", call);
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
	/* one-hot [.., V] = relu(1 - (j - i)) * relu(1 + (j - i)) for integer j, i */
	ret = iota_value(g, W->shape[0], &io);
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
	a = ew_in(&e, row);
	f = ew_op(&e, SPYRE_VF_COPY, ew_in(&e, col), -1, 0, 0);
	d = ew_op(&e, SPYRE_VF_SUB, a, f, 0, 0);
	r1 = ew_op(&e, SPYRE_VF_SCALE, d, -1, -1.0f, 1.0f);
	r1 = ew_op(&e, SPYRE_VF_RELU, r1, -1, 0, 0);
	r2 = ew_op(&e, SPYRE_VF_SCALE, d, -1, 1.0f, 1.0f);
	r2 = ew_op(&e, SPYRE_VF_RELU, r2, -1, 0, 0);
	ew_op(&e, SPYRE_VF_MUL, r1, r2, 0, 0);
	ret = make_ew(g, call, "embedding_onehot", &e, g->v[weight].dt, &oh);
	if (ret)
		return ret;
	return make_mm(g, call, "embedding", oh, weight, out);
}

int spyre_graph_sdpa(spyre_graph *g, spyre_value q, spyre_value k, spyre_value v,
		     spyre_value mask, int causal, double scale, spyre_value *out)
{
	static const char *call = "spyre_graph_sdpa";
	spyre_value kt, s, p, io, row, col;
	const struct gval *Q;
	int64_t lq, lk, sh[2];
	int ret = check_val(g, call, q, "q");

	if (!ret)
		ret = check_val(g, call, k, "k");
	if (!ret)
		ret = check_val(g, call, v, "v");
	if (!ret && mask >= 0)
		ret = check_val(g, call, mask, "mask");
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
	ret = spyre_graph_transpose(g, k, -1, -2, &kt);
	if (!ret)
		ret = spyre_graph_matmul(g, q, kt, &s);
	if (!ret)
		ret = spyre_graph_binary_scalar(g, SPYRE_BIN_MUL, s, scale, 0, &s);
	if (!ret && mask >= 0)
		ret = spyre_graph_binary(g, SPYRE_BIN_ADD, s, mask, &s);
	if (ret)
		return ret;
	if (causal) {
		/* s - 3e38 * min(relu(j - i), 1): exp() of a masked score is exactly 0 */
		struct ewb e = { 0 };
		int x, d, m;

		ret = iota_value(g, lq > lk ? lq : lk, &io);
		if (ret)
			return ret;
		sh[0] = lq;
		sh[1] = lk;
		{
			int64_t st[2] = { 0, 1 };

			row = g_value(g, SPYRE_FLOAT32, 2, sh, st, 0, g->v[io].store);
			st[0] = 1;
			st[1] = 0;
			col = g_value(g, SPYRE_FLOAT32, 2, sh, st, 0, g->v[io].store);
		}
		if (row < 0 || col < 0)
			return -ENOMEM;
		x = ew_in(&e, s);
		d = ew_op(&e, SPYRE_VF_SUB, ew_in(&e, row), ew_in(&e, col), 0, 0);
		d = ew_op(&e, SPYRE_VF_RELU, d, -1, 0, 0);
		m = ew_op(&e, SPYRE_VF_MIN, d, ew_const(&e, 1.0f), 0, 0);
		m = ew_op(&e, SPYRE_VF_SCALE, m, -1, -3e38f, -0.0f);
		ew_op(&e, SPYRE_VF_ADD, x, m, 0, 0);
		ret = make_ew(g, call, "causal_mask", &e, g->v[s].dt, &s);
		if (ret)
			return ret;
	}
	ret = spyre_graph_softmax(g, s, -1, &p);
	if (ret)
		return ret;
	return spyre_graph_matmul(g, p, v, out);
}

int spyre_graph_output(spyre_graph *g, spyre_value v)
{
	static const char *call = "spyre_graph_output";
	int ret = check_val(g, call, v, "value");
	const struct gval *x;
	unsigned int i;
	bool copy;

	if (ret)
		return ret;
	if (g->ninputs + g->noutputs >= 64)
		return spy_err(-E2BIG, "%s: at most 64 inputs and outputs", call);
	x = &g->v[v];
	copy = g->st[x->store].kind != ST_NODE || x->off || !g_contiguous(x) ||
	       numel_of(x->ndim, x->shape) != g->st[x->store].numel ||
	       g->st[x->store].io >= 0;
	for (i = 0; i < g->noutputs && !copy; i++)
		if (g->v[g->outputs[i]].store == x->store)
			copy = true;
	if (copy) {
		ret = spyre_graph_contiguous(g, v, &v);
		if (ret)
			return ret;
	}
	g->st[g->v[v].store].io = (int)g->noutputs;
	g->outputs[g->noutputs++] = v;
	return 0;
}

/* A node filling a new value of @shape with @value (eager fill). */
int g_fill(spyre_graph *g, enum spyre_dtype dt, unsigned int ndim, const int64_t *shape,
	   double value, spyre_value *out)
{
	struct ewb e = { 0 };
	struct gnode *n;
	int64_t sh[SPYRE_MAX_DIMS];
	int ret;

	memcpy(sh, shape, ndim * sizeof(int64_t));
	ew_const(&e, (float)value);
	ew_fix(&e);
	ret = new_node(g, "fill", NK_EW, dt, ndim, sh, out);
	if (ret)
		return ret;
	n = &g->n[g->nn - 1];
	n->ndim = ndim;
	memcpy(n->shape, sh, sizeof(sh));
	n->nuops = 1;
	n->u[0] = e.u[0];
	return 0;
}

/* ---- cat: copies into slices of one storage ---- */

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
		ret = check_val(g, call, xs[i], "value");
		if (ret)
			return ret;
	}
	x0 = &g->v[xs[0]];
	ret = norm_dim(call, x0, dim, &dim);
	if (ret)
		return ret;
	if (!x0->ndim || x0->dt == SPYRE_INT64)
		return spy_err(-EINVAL, "%s: cat of scalars or int64 values", call);
	memcpy(shape, x0->shape, sizeof(shape));
	shape[dim] = 0;
	for (i = 0; i < n; i++) {
		const struct gval *x = &g->v[xs[i]];

		for (d = 0; d < x0->ndim; d++)
			if (x->ndim != x0->ndim || x->dt != x0->dt ||
			    ((int)d != dim && x->shape[d] != x0->shape[d]))
				return spy_err(-EINVAL, "%s: value %u does not match value 0 (dtype, "
					       "dims, or a size outside dim %d)", call, i, dim);
		shape[dim] += x->shape[dim];
	}
	s = new_store(g, ST_NODE, x0->dt, numel_of(x0->ndim, shape));
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
		ew_op(&e, SPYRE_VF_COPY, ew_in(&e, xs[i]), -1, 0, 0);
		ew_fix(&e);
		if (grow((void **)&g->n, &g->capn, g->nn, sizeof(*g->n)))
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
