// SPDX-License-Identifier: MIT
/*
 * Eager ops: each call builds a one-node graph over the caller's tensors
 * (their strides and dtypes), lowers it, and looks the lowering up in the
 * context's cache; a miss generates the programs and the recipe once. The
 * launch binds the tensors' buffers: one SUBMIT per op.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "graph_build.h"
#include "lower.h"
#include "ops_ctx.h"

struct eager_args {
	int op;
	double d0, d1;
	int i0, i1;
	enum spyre_dtype dt;
	const struct spyre_tensor *outt;
	const void *p;			/* op-specific extra arguments */
};

typedef int (*eager_fn)(spyre_graph *g, const spyre_value *in, const struct eager_args *a,
			spyre_value *out);

/* Make @v output @k (named @what) of @g, written with @out's strides. */
static int bind_output(spyre_graph *g, spyre_value v, const struct spyre_tensor *out,
		       unsigned int k, const char *what, const char *call)
{
	struct gval *x = &g->v[v];
	struct gstore *s = &g->st[x->store];
	char a[96], b[96];
	unsigned int d;

	if (x->dt != out->dtype || x->ndim != out->ndim ||
	    memcmp(x->shape, out->shape, x->ndim * sizeof(int64_t))) {
		g_shape_str(a, sizeof(a), out->ndim, out->shape);
		g_shape_str(b, sizeof(b), x->ndim, x->shape);
		return spy_err(-EINVAL, "%s: %s is %s %s, the op gives %s %s", call, what,
			       spyre_dtype_name(out->dtype), a, spyre_dtype_name(x->dt), b);
	}
	for (d = 0; d < out->ndim; d++)
		if (out->shape[d] > 1 && !out->strides[d])
			return spy_err(-EINVAL, "%s: %s has stride 0 in dim %u: it would write "
				       "elements over each other", call, what, d);
	if (s->kind != ST_NODE || x->off || !g_contiguous(x) || s->io >= 0)
		return spy_err(-EINVAL, "%s: internal: result is not a fresh value", call);
	s->io = (int)k;
	memcpy(x->strides, out->strides, sizeof(x->strides));
	if (g_grow((void **)&g->outputs, &g->capout, k, sizeof(*g->outputs)))
		return -ENOMEM;
	g->outputs[k] = v;
	g->noutputs = k + 1;
	return 0;
}

static int f_sdpa(spyre_graph *g, const spyre_value *in, const struct eager_args *a,
		  spyre_value *out);

/* One tensor's part of a fast-path key: what a graph input or output is built from. */
static size_t fkey_tensor(uint64_t *k, const struct spyre_tensor *t)
{
	size_t n = 0;
	unsigned int d;

	if (!t) {
		k[n++] = ~0ull;
		return n;
	}
	k[n++] = (uint64_t)t->dtype | (uint64_t)t->layout << 16 | (uint64_t)t->ndim << 32;
	for (d = 0; d < t->ndim; d++) {
		k[n++] = (uint64_t)t->shape[d];
		k[n++] = (uint64_t)t->strides[d];
	}
	return n;
}

/* Words of the longest key: the header and 12 tensors of SPYRE_MAX_DIMS dims. */
#define FKEY_WORDS (10 + 12 * (1 + 2 * SPYRE_MAX_DIMS))

/*
 * The fast-path key of an eager call (ops_ctx.h): everything @fn and
 * bind_output build the one-node graph from, but not the buffers (the
 * launch binds those). Returns its length in words, 0 when the call does
 * not take the fast path: op-specific arguments behind a pointer (a->p),
 * and attention, whose lowering also reads SPYRE_ATTN_UNFUSED.
 */
static size_t fkey_of(uint64_t *k, const char *call, eager_fn fn, const struct eager_args *a,
		      const struct spyre_tensor *const *ins, unsigned int nin,
		      const struct spyre_tensor *const *outs, unsigned int nout)
{
	size_t n = 0;
	unsigned int i;

	if (a->p || fn == f_sdpa || nin > 8 || nout > 4)
		return 0;
	k[n++] = (uint64_t)(uintptr_t)fn;
	k[n++] = (uint64_t)(uintptr_t)call;
	k[n++] = (uint64_t)(uint32_t)a->op;
	memcpy(&k[n++], &a->d0, sizeof(a->d0));
	memcpy(&k[n++], &a->d1, sizeof(a->d1));
	k[n++] = (uint64_t)(uint32_t)a->i0;
	k[n++] = (uint64_t)(uint32_t)a->i1;
	k[n++] = (uint64_t)a->dt;
	k[n++] = nin;
	k[n++] = nout;
	for (i = 0; i < nin; i++)
		n += fkey_tensor(k + n, ins[i]);
	for (i = 0; i < nout; i++)
		n += fkey_tensor(k + n, outs[i]);
	return n;
}

static uint64_t fkey_hash(const uint64_t *k, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < n; i++) {
		h = (h ^ k[i]) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	return h;
}

/*
 * One eager launch of @fn over @nin inputs (NULL ones are -1 to @fn)
 * writing @nout outputs (@fn fills one value per output). A call seen
 * before (same op, arguments, dtypes, shapes and strides) launches the
 * entry its lowering found then, without building the graph again.
 */
static int eager_n(spyre_ops *ops, spyre_stream *s, const char *call,
		   const struct spyre_tensor *const *ins, const char *const *names,
		   unsigned int nin, const struct spyre_tensor *const *outs, unsigned int nout,
		   eager_fn fn, const struct eager_args *a)
{
	static const char *const out_names[] = { "out 0", "out 1", "out 2", "out 3" };
	struct spyre_tensor all[12];
	spyre_value in[8], v[4];
	bool empty = false;
	struct cache_entry *e = NULL;
	spyre_compiled *c;
	spyre_graph *g = NULL;
	struct lowered L;
	unsigned int i, n = 0;
	uint64_t fkey[FKEY_WORDS], fhash = 0;
	size_t flen = 0;
	void *key = NULL;
	size_t len;
	int ret;

	if (!ops || !s)
		return spy_err(-EINVAL, "%s: ops or stream is NULL", call);
	for (i = 0; i < nin; i++) {
		if (!ins[i]) {
			in[i] = -1;
			continue;
		}
		ret = g_check_tensor(call, names[i], ins[i]);
		if (ret)
			return ret;
	}
	for (i = 0; i < nout; i++) {
		ret = g_check_tensor(call, nout > 1 ? out_names[i] : "out", outs[i]);
		if (ret)
			return ret;
		empty |= !spyre_tensor_numel(outs[i]);
	}
	flen = empty ? 0 : fkey_of(fkey, call, fn, a, ins, nin, outs, nout);
	if (flen) {
		fhash = fkey_hash(fkey, flen);
		pthread_mutex_lock(&ops->lock);
		e = ops_memo_get(ops, fkey, flen * sizeof(*fkey), fhash);
		pthread_mutex_unlock(&ops->lock);
		if (e) {
			for (i = 0; i < nin; i++)
				if (ins[i])
					all[n++] = *ins[i];
			for (i = 0; i < nout; i++)
				all[n++] = *outs[i];
			ret = g_launch(ops_cache_compiled(e), s, s, all, n - nout, all + n - nout,
				       nout, call);
			ops_cache_put(ops, e);
			return ret;
		}
	}
	ret = spyre_graph_create(ops, &g);
	if (ret)
		return ret;
	for (i = 0; i < nin && !ret; i++) {
		if (!ins[i])
			continue;
		ret = g_input_tensor(g, ins[i], &in[i]);
		all[n++] = *ins[i];
	}
	if (!ret)
		ret = fn(g, in, a, v);
	for (i = 0; i < nout && !ret; i++)
		ret = bind_output(g, v[i], outs[i], i, nout > 1 ? out_names[i] : "out", call);
	if (ret || empty) {
		spyre_graph_destroy(g);
		return ret;	/* an empty output: nothing to run */
	}
	for (i = 0; i < nout; i++)
		all[n++] = *outs[i];
	ret = g_lower(g, &L, 0, call);
	if (!ret)
		ret = lowered_key(g, &L, &key, &len);
	if (ret) {
		lowered_free(&L);
		spyre_graph_destroy(g);
		return ret == -ENOMEM ? spy_err(ret, "%s: out of memory", call) : ret;
	}
	/*
	 * A miss compiles under ops->lock (two threads do not build the same
	 * op twice); the launch runs after it, holding only a use of the entry.
	 */
	pthread_mutex_lock(&ops->lock);
	e = ops_cache_get(ops, key, len);
	if (!e) {
		ret = lowered_build(g, &L, 0, &c, call);
		if (!ret) {
			ret = ops_cache_insert(ops, key, len, c, &e);
			if (ret)
				spyre_compiled_destroy(c);
			else
				key = NULL;
		}
	}
	if (e && flen)
		ops_memo_set(ops, fkey, flen * sizeof(*fkey), fhash, e);
	pthread_mutex_unlock(&ops->lock);
	if (!ret) {
		ret = g_launch(ops_cache_compiled(e), s, s, all, n - nout, all + n - nout, nout,
			       call);
		ops_cache_put(ops, e);
	}
	free(key);
	lowered_free(&L);
	spyre_graph_destroy(g);
	return ret;
}

static int eager(spyre_ops *ops, spyre_stream *s, const char *call,
		 const struct spyre_tensor *const *ins, const char *const *names, unsigned int nin,
		 const struct spyre_tensor *out, eager_fn fn, const struct eager_args *a)
{
	return eager_n(ops, s, call, ins, names, nin, &out, 1, fn, a);
}

/* ---- the ops ---- */

static int f_unary(spyre_graph *g, const spyre_value *in, const struct eager_args *a,
		   spyre_value *out)
{
	return spyre_graph_unary(g, (enum spyre_unary_op)a->op, in[0], out);
}

int spyre_op_unary(spyre_ops *ops, spyre_stream *s, enum spyre_unary_op op,
		   const struct spyre_tensor *x, const struct spyre_tensor *out)
{
	const struct spyre_tensor *ins[] = { x };
	const char *names[] = { "x" };
	struct eager_args a = { .op = op };

	return eager(ops, s, "spyre_op_unary", ins, names, 1, out, f_unary, &a);
}

static int f_binary(spyre_graph *g, const spyre_value *in, const struct eager_args *a,
		    spyre_value *out)
{
	return spyre_graph_binary(g, (enum spyre_binary_op)a->op, in[0], in[1], out);
}

int spyre_op_binary(spyre_ops *ops, spyre_stream *s, enum spyre_binary_op op,
		    const struct spyre_tensor *x, const struct spyre_tensor *y,
		    const struct spyre_tensor *out)
{
	const struct spyre_tensor *ins[] = { x, y };
	const char *names[] = { "a", "b" };
	struct eager_args a = { .op = op };

	if (!x || !y)
		return spy_err(-EINVAL, "spyre_op_binary: an operand is NULL");
	return eager(ops, s, "spyre_op_binary", ins, names, 2, out, f_binary, &a);
}

static int f_scalar(spyre_graph *g, const spyre_value *in, const struct eager_args *a,
		    spyre_value *out)
{
	return spyre_graph_binary_scalar(g, (enum spyre_binary_op)a->op, in[0], a->d0, a->i0,
					 out);
}

int spyre_op_binary_scalar(spyre_ops *ops, spyre_stream *s, enum spyre_binary_op op,
			   const struct spyre_tensor *x, double scalar, int reverse,
			   const struct spyre_tensor *out)
{
	const struct spyre_tensor *ins[] = { x };
	const char *names[] = { "a" };
	struct eager_args a = { .op = op, .d0 = scalar, .i0 = reverse };

	if (!x)
		return spy_err(-EINVAL, "spyre_op_binary_scalar: a is NULL");
	return eager(ops, s, "spyre_op_binary_scalar", ins, names, 1, out, f_scalar, &a);
}

static int f_pow(spyre_graph *g, const spyre_value *in, const struct eager_args *a,
		 spyre_value *out)
{
	return spyre_graph_pow_scalar(g, in[0], a->d0, out);
}

int spyre_op_pow_scalar(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *x, double p,
			const struct spyre_tensor *out)
{
	const struct spyre_tensor *ins[] = { x };
	const char *names[] = { "x" };
	struct eager_args a = { .d0 = p };

	if (!x)
		return spy_err(-EINVAL, "spyre_op_pow_scalar: x is NULL");
	return eager(ops, s, "spyre_op_pow_scalar", ins, names, 1, out, f_pow, &a);
}

static int f_clamp(spyre_graph *g, const spyre_value *in, const struct eager_args *a,
		   spyre_value *out)
{
	return spyre_graph_clamp(g, in[0], a->d0, a->d1, out);
}

int spyre_op_clamp(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *x, double lo,
		   double hi, const struct spyre_tensor *out)
{
	const struct spyre_tensor *ins[] = { x };
	const char *names[] = { "x" };
	struct eager_args a = { .d0 = lo, .d1 = hi };

	if (!x)
		return spy_err(-EINVAL, "spyre_op_clamp: x is NULL");
	return eager(ops, s, "spyre_op_clamp", ins, names, 1, out, f_clamp, &a);
}

static int f_copy(spyre_graph *g, const spyre_value *in, const struct eager_args *a,
		  spyre_value *out)
{
	return spyre_graph_cast(g, in[0], a->dt, out);
}

int spyre_op_copy(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *src,
		  const struct spyre_tensor *out)
{
	const struct spyre_tensor *ins[] = { src };
	const char *names[] = { "src" };
	struct eager_args a = { 0 };

	if (!src || !out)
		return spy_err(-EINVAL, "spyre_op_copy: src or out is NULL");
	a.dt = out->dtype;
	return eager(ops, s, "spyre_op_copy", ins, names, 1, out, f_copy, &a);
}

static int f_fill(spyre_graph *g, const spyre_value *in, const struct eager_args *a,
		  spyre_value *out)
{
	(void)in;
	return g_fill(g, a->dt, a->outt->ndim, a->outt->shape, a->d0, out);
}

int spyre_op_fill(spyre_ops *ops, spyre_stream *s, double value, const struct spyre_tensor *out)
{
	struct eager_args a = { .d0 = value, .outt = out };

	if (!out)
		return spy_err(-EINVAL, "spyre_op_fill: out is NULL");
	a.dt = out->dtype;
	return eager(ops, s, "spyre_op_fill", NULL, NULL, 0, out, f_fill, &a);
}

static int f_arange(spyre_graph *g, const spyre_value *in, const struct eager_args *a,
		    spyre_value *out)
{
	(void)in;
	return spyre_graph_arange(g, a->d0, a->d1, a->outt->shape[0], a->dt, out);
}

int spyre_op_arange(spyre_ops *ops, spyre_stream *s, double start, double step,
		    const struct spyre_tensor *out)
{
	struct eager_args a = { .d0 = start, .d1 = step, .outt = out };

	if (!out || out->ndim != 1)
		return spy_err(-EINVAL, "spyre_op_arange: out is NULL or not 1-D");
	a.dt = out->dtype;
	return eager(ops, s, "spyre_op_arange", NULL, NULL, 0, out, f_arange, &a);
}

static int f_philox(spyre_graph *g, const spyre_value *in, const struct eager_args *a,
		    spyre_value *out)
{
	return spyre_graph_philox(g, in[0], a->outt->shape[0], out);
}

int spyre_op_philox(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *key,
		    const struct spyre_tensor *out)
{
	const struct spyre_tensor *ins[] = { key };
	const char *names[] = { "key" };
	struct eager_args a = { .outt = out };

	if (!key || !out || out->ndim != 2 || out->shape[1] != 4 || out->dtype != SPYRE_INT64)
		return spy_err(-EINVAL, "spyre_op_philox: key or out is NULL, or out is not int64 "
			       "[m, 4]");
	if (!out->shape[0])
		return 0;	/* no counters: nothing to run */
	return eager(ops, s, "spyre_op_philox", ins, names, 1, out, f_philox, &a);
}

static int f_matmul(spyre_graph *g, const spyre_value *in, const struct eager_args *a,
		    spyre_value *out)
{
	(void)a;
	return spyre_graph_matmul(g, in[0], in[1], out);
}

int spyre_op_matmul(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *x,
		    const struct spyre_tensor *y, const struct spyre_tensor *out)
{
	const struct spyre_tensor *ins[] = { x, y };
	const char *names[] = { "a", "b" };
	struct eager_args a = { 0 };

	if (!x || !y)
		return spy_err(-EINVAL, "spyre_op_matmul: an operand is NULL");
	return eager(ops, s, "spyre_op_matmul", ins, names, 2, out, f_matmul, &a);
}

static int f_linear(spyre_graph *g, const spyre_value *in, const struct eager_args *a,
		    spyre_value *out)
{
	(void)a;
	return spyre_graph_linear(g, in[0], in[1], in[2], out);
}

int spyre_op_linear(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *x,
		    const struct spyre_tensor *w, const struct spyre_tensor *bias,
		    const struct spyre_tensor *out)
{
	const struct spyre_tensor *ins[] = { x, w, bias };
	const char *names[] = { "x", "weight", "bias" };
	struct eager_args a = { 0 };

	if (!x || !w)
		return spy_err(-EINVAL, "spyre_op_linear: x or weight is NULL");
	return eager(ops, s, "spyre_op_linear", ins, names, 3, out, f_linear, &a);
}

static int f_linear_w8(spyre_graph *g, const spyre_value *in, const struct eager_args *a,
		       spyre_value *out)
{
	(void)a;
	return spyre_graph_linear_w8(g, in[0], in[1], in[2], in[3], out);
}

int spyre_op_linear_w8(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *x,
		       const struct spyre_tensor *w, const struct spyre_tensor *scale,
		       const struct spyre_tensor *bias, const struct spyre_tensor *out)
{
	const struct spyre_tensor *ins[] = { x, w, scale, bias };
	const char *names[] = { "x", "weight", "scale", "bias" };
	struct eager_args a = { 0 };

	if (!x || !w || !scale)
		return spy_err(-EINVAL, "spyre_op_linear_w8: x, weight or scale is NULL");
	return eager(ops, s, "spyre_op_linear_w8", ins, names, 4, out, f_linear_w8, &a);
}

static int f_reduce(spyre_graph *g, const spyre_value *in, const struct eager_args *a,
		    spyre_value *out)
{
	return spyre_graph_reduce(g, (enum spyre_reduce_op)a->op, in[0], a->i0, a->i1, out);
}

int spyre_op_reduce(spyre_ops *ops, spyre_stream *s, enum spyre_reduce_op op,
		    const struct spyre_tensor *x, int dim, int keepdim,
		    const struct spyre_tensor *out)
{
	const struct spyre_tensor *ins[] = { x };
	const char *names[] = { "x" };
	struct eager_args a = { .op = op, .i0 = dim, .i1 = keepdim };

	if (!x)
		return spy_err(-EINVAL, "spyre_op_reduce: x is NULL");
	return eager(ops, s, "spyre_op_reduce", ins, names, 1, out, f_reduce, &a);
}

struct reduce_dims_args {
	const int *dims;
	unsigned int ndims;
};

static int f_reduce_dims(spyre_graph *g, const spyre_value *in, const struct eager_args *a,
			 spyre_value *out)
{
	const struct reduce_dims_args *r = a->p;

	return spyre_graph_reduce_dims(g, (enum spyre_reduce_op)a->op, in[0], r->dims,
				       r->ndims, a->i1, out);
}

int spyre_op_reduce_dims(spyre_ops *ops, spyre_stream *s, enum spyre_reduce_op op,
			 const struct spyre_tensor *x, const int *dims, unsigned int ndims,
			 int keepdim, const struct spyre_tensor *out)
{
	const struct spyre_tensor *ins[] = { x };
	const char *names[] = { "x" };
	struct reduce_dims_args r = { dims, ndims };
	struct eager_args a = { .op = op, .i1 = keepdim, .p = &r };
	int64_t want = 1;
	int d;

	if (!x || !out)
		return spy_err(-EINVAL, "spyre_op_reduce_dims: x or out is NULL");
	/* the result may be a reshaped view of the kernel's: it needs out's layout */
	for (d = (int)out->ndim - 1; ndims != 1 && d >= 0 && out->ndim <= SPYRE_MAX_DIMS; d--) {
		if (out->shape[d] != 1 && out->strides[d] != want)
			return spy_err(-EINVAL, "spyre_op_reduce_dims: out must be contiguous");
		want *= out->shape[d];
	}
	return eager(ops, s, "spyre_op_reduce_dims", ins, names, 1, out, f_reduce_dims, &a);
}

static int f_softmax(spyre_graph *g, const spyre_value *in, const struct eager_args *a,
		     spyre_value *out)
{
	return a->op ? spyre_graph_log_softmax(g, in[0], a->i0, out) :
		       spyre_graph_softmax(g, in[0], a->i0, out);
}

int spyre_op_softmax(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *x, int dim,
		     const struct spyre_tensor *out)
{
	const struct spyre_tensor *ins[] = { x };
	const char *names[] = { "x" };
	struct eager_args a = { .op = 0, .i0 = dim };

	if (!x)
		return spy_err(-EINVAL, "spyre_op_softmax: x is NULL");
	return eager(ops, s, "spyre_op_softmax", ins, names, 1, out, f_softmax, &a);
}

int spyre_op_log_softmax(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *x,
			 int dim, const struct spyre_tensor *out)
{
	const struct spyre_tensor *ins[] = { x };
	const char *names[] = { "x" };
	struct eager_args a = { .op = 1, .i0 = dim };

	if (!x)
		return spy_err(-EINVAL, "spyre_op_log_softmax: x is NULL");
	return eager(ops, s, "spyre_op_log_softmax", ins, names, 1, out, f_softmax, &a);
}

static int f_norm(spyre_graph *g, const spyre_value *in, const struct eager_args *a,
		  spyre_value *out)
{
	if (a->op)
		return spyre_graph_rms_norm(g, in[0], in[1], a->d0, out);
	return spyre_graph_layer_norm(g, in[0], in[1], in[2], a->d0, out);
}

int spyre_op_layer_norm(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *x,
			const struct spyre_tensor *w, const struct spyre_tensor *b, double eps,
			const struct spyre_tensor *out)
{
	const struct spyre_tensor *ins[] = { x, w, b };
	const char *names[] = { "x", "weight", "bias" };
	struct eager_args a = { .op = 0, .d0 = eps };

	if (!x)
		return spy_err(-EINVAL, "spyre_op_layer_norm: x is NULL");
	return eager(ops, s, "spyre_op_layer_norm", ins, names, 3, out, f_norm, &a);
}

/* out[0] = layer_norm(x), out[1] = mean of each row, out[2] = 1/sqrt(var + eps). */
static int f_norm_stats(spyre_graph *g, const spyre_value *in, const struct eager_args *a,
			spyre_value *out)
{
	spyre_value c, v;
	int ret;

	ret = spyre_graph_layer_norm(g, in[0], in[1], in[2], a->d0, &out[0]);
	if (!ret)
		ret = spyre_graph_reduce(g, SPYRE_RED_MEAN, in[0], -1, 1, &out[1]);
	if (!ret)
		ret = spyre_graph_binary(g, SPYRE_BIN_SUB, in[0], out[1], &c);
	if (!ret)
		ret = spyre_graph_unary(g, SPYRE_UN_SQUARE, c, &c);
	if (!ret)
		ret = spyre_graph_reduce(g, SPYRE_RED_MEAN, c, -1, 1, &v);
	if (!ret)
		ret = spyre_graph_binary_scalar(g, SPYRE_BIN_ADD, v, a->d0, 0, &v);
	if (!ret)
		ret = spyre_graph_unary(g, SPYRE_UN_RSQRT, v, &out[2]);
	return ret;
}

int spyre_op_layer_norm_stats(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *x,
			      const struct spyre_tensor *w, const struct spyre_tensor *b,
			      double eps, const struct spyre_tensor *out,
			      const struct spyre_tensor *mean, const struct spyre_tensor *rstd)
{
	const struct spyre_tensor *ins[] = { x, w, b };
	const struct spyre_tensor *outs[] = { out, mean, rstd };
	const char *names[] = { "x", "weight", "bias" };
	struct eager_args a = { .d0 = eps };

	if (!x || !out || !mean || !rstd)
		return spy_err(-EINVAL, "spyre_op_layer_norm_stats: x or an output is NULL");
	return eager_n(ops, s, "spyre_op_layer_norm_stats", ins, names, 3, outs, 3,
		       f_norm_stats, &a);
}

static int f_sdpa(spyre_graph *g, const spyre_value *in, const struct eager_args *a,
		  spyre_value *out)
{
	return g_sdpa(g, in[0], in[1], in[2], in[3], a->i0, a->d0, a->dt, out);
}

int spyre_op_sdpa(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *q,
		  const struct spyre_tensor *k, const struct spyre_tensor *v,
		  const struct spyre_tensor *mask, int causal, double scale,
		  const struct spyre_tensor *out)
{
	const struct spyre_tensor *ins[] = { q, k, v, mask };
	const char *names[] = { "q", "k", "v", "mask" };
	struct eager_args a = { .i0 = !!causal, .d0 = scale, .dt = SPYRE_FLOAT32 };

	if (!q || !k || !v)
		return spy_err(-EINVAL, "spyre_op_sdpa: q, k or v is NULL");
	if (q->dtype != SPYRE_FLOAT32 && q->dtype != SPYRE_FLOAT16 && q->dtype != SPYRE_BFLOAT16)
		return spy_err(-EOPNOTSUPP, "spyre_op_sdpa: %s attention",
			       spyre_dtype_name(q->dtype));
	return eager(ops, s, "spyre_op_sdpa", ins, names, 4, out, f_sdpa, &a);
}

static int f_paged_attention(spyre_graph *g, const spyre_value *in, const struct eager_args *a,
			     spyre_value *out)
{
	return spyre_graph_paged_attention(g, in[0], in[1], in[2], in[3], a->d0, out);
}

int spyre_op_paged_attention(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *q,
			     const struct spyre_tensor *kv_cache,
			     const struct spyre_tensor *block_table,
			     const struct spyre_tensor *seq_lens, double scale,
			     const struct spyre_tensor *out)
{
	const struct spyre_tensor *ins[] = { q, kv_cache, block_table, seq_lens };
	const char *names[] = { "q", "kv_cache", "block_table", "seq_lens" };
	struct eager_args a = { .d0 = scale };

	if (!q || !kv_cache || !block_table || !seq_lens)
		return spy_err(-EINVAL, "spyre_op_paged_attention: an input is NULL");
	return eager(ops, s, "spyre_op_paged_attention", ins, names, 4, out, f_paged_attention,
		     &a);
}

int spyre_op_rms_norm(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *x,
		      const struct spyre_tensor *w, double eps, const struct spyre_tensor *out)
{
	const struct spyre_tensor *ins[] = { x, w };
	const char *names[] = { "x", "weight" };
	struct eager_args a = { .op = 1, .d0 = eps };

	if (!x)
		return spy_err(-EINVAL, "spyre_op_rms_norm: x is NULL");
	return eager(ops, s, "spyre_op_rms_norm", ins, names, 2, out, f_norm, &a);
}

static int f_embedding(spyre_graph *g, const spyre_value *in, const struct eager_args *a,
		       spyre_value *out)
{
	(void)a;
	return spyre_graph_embedding(g, in[0], in[1], out);
}

int spyre_op_embedding(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *weight,
		       const struct spyre_tensor *idx, const struct spyre_tensor *out)
{
	const struct spyre_tensor *ins[] = { weight, idx };
	const char *names[] = { "weight", "indices" };
	struct eager_args a = { 0 };

	if (!weight || !idx)
		return spy_err(-EINVAL, "spyre_op_embedding: weight or indices is NULL");
	return eager(ops, s, "spyre_op_embedding", ins, names, 2, out, f_embedding, &a);
}

static int f_gather(spyre_graph *g, const spyre_value *in, const struct eager_args *a,
		    spyre_value *out)
{
	return spyre_graph_gather(g, in[0], a->i0, in[1], out);
}

int spyre_op_gather(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *x, int dim,
		    const struct spyre_tensor *idx, const struct spyre_tensor *out)
{
	const struct spyre_tensor *ins[] = { x, idx };
	const char *names[] = { "x", "index" };
	struct eager_args a = { .i0 = dim };

	if (!x || !idx)
		return spy_err(-EINVAL, "spyre_op_gather: x or index is NULL");
	return eager(ops, s, "spyre_op_gather", ins, names, 2, out, f_gather, &a);
}

int spyre_op_cat(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *xs,
		 unsigned int n, int dim, const struct spyre_tensor *out)
{
	static const char *call = "spyre_op_cat";
	int64_t at = 0, total = 0;
	struct spyre_tensor v;
	unsigned int i, d;
	int ret;

	if (!xs || !n || !out)
		return spy_err(-EINVAL, "%s: inputs or out is NULL (or no inputs)", call);
	if (dim < 0)
		dim += (int)out->ndim;
	if (dim < 0 || dim >= (int)out->ndim)
		return spy_err(-EINVAL, "%s: dim out of range for %u dims", call, out->ndim);
	for (i = 0; i < n; i++) {
		for (d = 0; d < out->ndim; d++)
			if (xs[i].ndim != out->ndim ||
			    ((int)d != dim && xs[i].shape[d] != out->shape[d]))
				return spy_err(-EINVAL, "%s: input %u does not match out outside "
					       "dim %d", call, i, dim);
		total += xs[i].shape[dim];
	}
	if (total != out->shape[dim])
		return spy_err(-EINVAL, "%s: inputs sum to %lld along dim %d, out has %lld", call,
			       (long long)total, dim, (long long)out->shape[dim]);
	ret = g_check_tensor(call, "out", out);
	for (i = 0; i < n && !ret; i++)
		ret = g_check_tensor(call, "input", &xs[i]);
	for (i = 0; i < n && !ret; i++) {
		uint64_t off;

		v = *out;
		v.shape[dim] = xs[i].shape[dim];
		off = (uint64_t)(at * out->strides[dim]) * spyre_dtype_bytes(out->dtype);
		at += v.shape[dim];
		if (!spyre_tensor_numel(&v))
			continue;
		v.buf.offset += off;
		v.buf.size -= off;
		ret = spyre_op_copy(ops, s, &xs[i], &v);
	}
	return ret;
}

static int f_where(spyre_graph *g, const spyre_value *in, const struct eager_args *a,
		   spyre_value *out)
{
	(void)a;
	return spyre_graph_where(g, in[0], in[1], in[2], out);
}

int spyre_op_where(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *cond,
		   const struct spyre_tensor *x, const struct spyre_tensor *y,
		   const struct spyre_tensor *out)
{
	const struct spyre_tensor *ins[] = { cond, x, y };
	const char *names[] = { "cond", "a", "b" };
	struct eager_args a = { 0 };

	if (!cond || !x || !y)
		return spy_err(-EINVAL, "spyre_op_where: an operand is NULL");
	return eager(ops, s, "spyre_op_where", ins, names, 3, out, f_where, &a);
}

static int f_masked_fill(spyre_graph *g, const spyre_value *in, const struct eager_args *a,
			 spyre_value *out)
{
	return spyre_graph_masked_fill(g, in[0], in[1], a->d0, out);
}

int spyre_op_masked_fill(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *x,
			 const struct spyre_tensor *mask, double value,
			 const struct spyre_tensor *out)
{
	const struct spyre_tensor *ins[] = { x, mask };
	const char *names[] = { "x", "mask" };
	struct eager_args a = { .d0 = value };

	if (!x || !mask)
		return spy_err(-EINVAL, "spyre_op_masked_fill: x or mask is NULL");
	return eager(ops, s, "spyre_op_masked_fill", ins, names, 2, out, f_masked_fill, &a);
}

static int f_tril(spyre_graph *g, const spyre_value *in, const struct eager_args *a,
		  spyre_value *out)
{
	return spyre_graph_tril(g, in[0], (int64_t)a->d0, a->i0, out);
}

int spyre_op_tril(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *x, int64_t k,
		  int upper, const struct spyre_tensor *out)
{
	const struct spyre_tensor *ins[] = { x };
	const char *names[] = { "x" };
	struct eager_args a = { .d0 = (double)k, .i0 = upper };

	if (!x)
		return spy_err(-EINVAL, "spyre_op_tril: x is NULL");
	return eager(ops, s, "spyre_op_tril", ins, names, 1, out, f_tril, &a);
}

static int f_argmax(spyre_graph *g, const spyre_value *in, const struct eager_args *a,
		    spyre_value *out)
{
	if (a->op)
		return spyre_graph_cumsum(g, in[0], a->i0, out);
	return spyre_graph_argmax(g, in[0], a->i0, a->i1, out);
}

int spyre_op_argmax(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *x, int dim,
		    int keepdim, const struct spyre_tensor *out)
{
	const struct spyre_tensor *ins[] = { x };
	const char *names[] = { "x" };
	struct eager_args a = { .op = 0, .i0 = dim, .i1 = keepdim };

	if (!x)
		return spy_err(-EINVAL, "spyre_op_argmax: x is NULL");
	return eager(ops, s, "spyre_op_argmax", ins, names, 1, out, f_argmax, &a);
}

int spyre_op_cumsum(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *x, int dim,
		    const struct spyre_tensor *out)
{
	const struct spyre_tensor *ins[] = { x };
	const char *names[] = { "x" };
	struct eager_args a = { .op = 1, .i0 = dim };

	if (!x)
		return spy_err(-EINVAL, "spyre_op_cumsum: x is NULL");
	return eager(ops, s, "spyre_op_cumsum", ins, names, 1, out, f_argmax, &a);
}
