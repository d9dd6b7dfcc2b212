// SPDX-License-Identifier: MIT
/*
 * Graph values, storages, tensors and dtypes: the IR's bookkeeping, inputs,
 * constants and outputs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "graph_build.h"

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
	case SPYRE_BOOL:
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
	case SPYRE_BOOL:
		return "bool";
	}
	return "unknown";
}

unsigned int g_isa_dtype(enum spyre_dtype dt)
{
	return dt == SPYRE_BOOL ? SPYRE_DT_INT8 : (unsigned int)dt;	/* INT64: never */
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
	return g_check_tensor_in(call, what, t, SPYRE_MEM_DEVICE);
}

int g_check_tensor_in(const char *call, const char *what, const struct spyre_tensor *t,
		      enum spyre_mem mem)
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
	if (spyre_bo_mem(t->buf.bo) != mem)
		return spy_err(-EINVAL, "%s: %s is in %s memory; %s", call, what,
			       mem == SPYRE_MEM_DEVICE ? "host" : "device",
			       mem == SPYRE_MEM_DEVICE ? "ops take device memory" :
							 "a host input takes host memory");
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

int g_grow(void **p, unsigned int *cap, unsigned int n, size_t sz)
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

int g_new_store(spyre_graph *g, int kind, enum spyre_dtype dt, int64_t numel)
{
	struct gstore *s;

	if (g_grow((void **)&g->st, &g->capst, g->nst, sizeof(*g->st)))
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

	if (g_grow((void **)&g->v, &g->capv, g->nv, sizeof(*g->v)))
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

int64_t g_numel_of(unsigned int ndim, const int64_t *shape)
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
	free(g->outputs);
	free(g);
	return 0;
}

/*
 * Room for one more input or output: every one is an argument slot of the
 * graph's recipe, SPYRE_RECIPE_MAX_ARGS of them at most (a LAUNCH binds
 * only the slots its kernel reads, so the count is not the card's limit).
 */
static int io_room(spyre_graph *g, const char *call)
{
	if (g->ninputs + g->noutputs >= SPYRE_RECIPE_MAX_ARGS)
		return spy_err(-E2BIG, "%s: at most %d inputs and outputs", call,
			       SPYRE_RECIPE_MAX_ARGS);
	return 0;
}

int g_check_shape(const char *call, unsigned int ndim, const int64_t *shape)
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

/* A run-time input of kind @kind (ST_INPUT or ST_HOST_INPUT). */
static int add_input(spyre_graph *g, const char *call, int kind, enum spyre_dtype dt,
		     unsigned int ndim, const int64_t *shape, spyre_value *out)
{
	int s, v, ret;

	if (!g || !out)
		return spy_err(-EINVAL, "%s: graph or out is NULL", call);
	if (!spyre_dtype_bytes(dt))
		return spy_err(-EINVAL, "%s: unknown dtype %d", call, (int)dt);
	ret = g_check_shape(call, ndim, shape);
	if (ret)
		return ret;
	ret = io_room(g, call);
	if (ret)
		return ret;
	s = g_new_store(g, kind, dt, g_numel_of(ndim, shape));
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

int spyre_graph_input(spyre_graph *g, enum spyre_dtype dt, unsigned int ndim,
		      const int64_t *shape, spyre_value *out)
{
	return add_input(g, "spyre_graph_input", ST_INPUT, dt, ndim, shape, out);
}

int spyre_graph_host_input(spyre_graph *g, enum spyre_dtype dt, unsigned int ndim,
			   const int64_t *shape, spyre_value *out)
{
	return add_input(g, "spyre_graph_host_input", ST_HOST_INPUT, dt, ndim, shape, out);
}

/* An input bound to a strided tensor (eager ops). */
int g_input_tensor(spyre_graph *g, const struct spyre_tensor *t, spyre_value *out)
{
	int s, v;

	s = g_new_store(g, ST_INPUT, t->dtype, 0);
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
	s = g_new_store(g, ST_CONST, t->dtype, 0);
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

int g_check_val(spyre_graph *g, const char *call, spyre_value v, const char *what)
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
	int ret = g_check_val(g, "spyre_graph_value_info", v, "value");

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

int g_norm_dim(const char *call, const struct gval *x, int dim, int *out)
{
	int nd = (int)x->ndim;

	if (dim < 0)
		dim += nd;
	if (dim < 0 || dim >= (nd ? nd : 1))
		return spy_err(-EINVAL, "%s: dim %d out of range for %u dims", call, dim, x->ndim);
	*out = dim;
	return 0;
}

int spyre_graph_output(spyre_graph *g, spyre_value v)
{
	static const char *call = "spyre_graph_output";
	int ret = g_check_val(g, call, v, "value");
	const struct gval *x;
	unsigned int i;
	bool copy;

	if (ret)
		return ret;
	ret = io_room(g, call);
	if (!ret)
		ret = g_grow((void **)&g->outputs, &g->capout, g->noutputs, sizeof(*g->outputs));
	if (ret)
		return ret;
	x = &g->v[v];
	copy = g->st[x->store].kind != ST_NODE || x->off || !g_contiguous(x) ||
	       g_numel_of(x->ndim, x->shape) != g->st[x->store].numel ||
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
