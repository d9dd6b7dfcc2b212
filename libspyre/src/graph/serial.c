// SPDX-License-Identifier: MIT
/*
 * A compiled graph as bytes and back: the program images, the recipe's
 * steps (argument slots, workspace offsets, the library's own constants by
 * length), the host inputs' uploads, the workspace size, the inputs' and
 * outputs' signatures and the stats. Loading skips lowering and kernel generation: it loads the images
 * and rebuilds the recipe. Tensors are bound at launch, so the bytes hold
 * no weights. The blob names the op library version, card interface
 * version and core count it was built for and ends with a checksum; a
 * blob that does not match, is truncated or is corrupt is refused with an
 * error, never trusted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "graph.h"
#include "graph_build.h"

#define SER_MAGIC 0x43595053u	/* "SPYC" read as a little-endian u32 */
/* 2: host inputs' uploads; 3: any number of inputs/outputs, a host flag byte per input */
#define SER_FORMAT 3u
#define SER_MAX_IMAGE (64u << 20)

/* Operand kinds in the blob. */
enum { SO_ARG = 1, SO_WS = 2, SO_IOTA = 3 };

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* ---- writing ---- */

struct wbuf {
	uint8_t *p;
	size_t n, cap;
	int err;
};

static void put(struct wbuf *w, const void *src, size_t n)
{
	if (w->err)
		return;
	if (w->n + n > w->cap) {
		size_t cap = w->cap ? w->cap : 4096;
		uint8_t *p;

		while (cap < w->n + n)
			cap *= 2;
		p = realloc(w->p, cap);
		if (!p) {
			w->err = -ENOMEM;
			return;
		}
		w->p = p;
		w->cap = cap;
	}
	memcpy(w->p + w->n, src, n);
	w->n += n;
}

static void put32(struct wbuf *w, uint32_t v)
{
	put(w, &v, 4);
}

static void put64(struct wbuf *w, uint64_t v)
{
	put(w, &v, 8);
}

/* Length of the library constant @bo belongs to (0: not one of them). */
static int64_t iota_len_of(spyre_ops *ops, const spyre_bo *bo)
{
	int64_t len = 0;
	unsigned int k;

	pthread_mutex_lock(&ops->iota_lock);
	for (k = 0; k < ops->niota; k++)
		if (ops->iota[k] == bo)
			len = ops->iota_len[k];
	pthread_mutex_unlock(&ops->iota_lock);
	return len;
}

int spyre_compiled_serialize(const spyre_compiled *c, void **out, size_t *len)
{
	static const char *call = "spyre_compiled_serialize";
	struct wbuf w = { 0 };
	unsigned int i, k;

	if (!c || !out || !len)
		return spy_err(-EINVAL, "%s: NULL argument", call);
	if (c->per_op)
		return spy_err(-EOPNOTSUPP, "%s: a graph compiled op by op is not serialisable",
			       call);
	if (c->nimg != c->nprogs || (c->nprogs && !c->steps))
		return spy_err(-EOPNOTSUPP, "%s: the compiled graph kept no program images", call);
	put32(&w, SER_MAGIC);
	put32(&w, SER_FORMAT);
	put32(&w, SPYRE_OPS_VERSION);
	put32(&w, c->ops->hw_version);
	put32(&w, c->ops->ncores);
	put32(&w, c->ninputs);
	put32(&w, c->noutputs);
	put32(&w, c->nprogs);
	put64(&w, c->ws_size);
	put32(&w, c->stats.nodes);
	put32(&w, c->stats.kernels);
	put32(&w, c->stats.submits);
	put64(&w, c->stats.workspace_bytes);
	put64(&w, c->stats.intermediate_bytes);
	for (i = 0; i < c->ninputs + c->noutputs; i++) {
		put32(&w, (uint32_t)c->io[i].dt);
		put32(&w, c->io[i].ndim);
		put(&w, c->io[i].shape, c->io[i].ndim * sizeof(int64_t));
	}
	for (i = 0; i < c->ninputs; i++) {
		uint8_t h = c->host_in[i];

		put(&w, &h, 1);
	}
	put32(&w, c->nup);
	for (i = 0; i < c->nup; i++) {
		put32(&w, c->up[i].input);
		put64(&w, c->up[i].ws_off);
		put64(&w, c->up[i].bytes);
	}
	for (i = 0; i < c->nprogs; i++) {
		const struct cstep *st = &c->steps[i];

		put64(&w, c->img[i].size);
		put(&w, c->img[i].p, c->img[i].size);
		put32(&w, st->nops);
		for (k = 0; k < st->nops; k++) {
			const struct spyre_operand *o = &st->ops[k];
			int64_t il = 0;

			if (o->kind == SPYRE_OPERAND_BUF) {
				il = iota_len_of(c->ops, o->buf.bo);
				if (!il) {
					free(w.p);
					return spy_err(-EOPNOTSUPP,
						       "%s: program %u reads a constant tensor "
						       "(bound at compile time)", call, i);
				}
				put32(&w, SO_IOTA);
				put32(&w, 0);
				put64(&w, o->buf.offset);
				put64(&w, o->buf.size);
				put64(&w, (uint64_t)il);
			} else if (o->kind == SPYRE_OPERAND_ARG || o->kind == SPYRE_OPERAND_WS) {
				put32(&w, o->kind == SPYRE_OPERAND_ARG ? SO_ARG : SO_WS);
				put32(&w, o->arg);
				put64(&w, o->offset);
				put64(&w, o->size);
				put64(&w, 0);
			} else {
				free(w.p);
				return spy_err(-EOPNOTSUPP, "%s: program %u: operand kind %d",
					       call, i, (int)o->kind);
			}
		}
	}
	if (!w.err)
		put64(&w, fnv1a(w.p, w.n));
	if (w.err) {
		free(w.p);
		return spy_err(w.err, "%s: out of memory", call);
	}
	*out = w.p;
	*len = w.n;
	return 0;
}

/* ---- reading ---- */

struct rbuf {
	const uint8_t *p;
	size_t n, at;
	bool bad;
};

static const void *take(struct rbuf *r, size_t n)
{
	const void *p;

	if (r->bad || n > r->n - r->at) {
		r->bad = true;
		return NULL;
	}
	p = r->p + r->at;
	r->at += n;
	return p;
}

static uint32_t get32(struct rbuf *r)
{
	const void *p = take(r, 4);
	uint32_t v = 0;

	if (p)
		memcpy(&v, p, 4);
	return v;
}

static uint64_t get64(struct rbuf *r)
{
	const void *p = take(r, 8);
	uint64_t v = 0;

	if (p)
		memcpy(&v, p, 8);
	return v;
}

static bool dtype_ok(uint32_t dt)
{
	switch (dt) {
	case SPYRE_FLOAT32:
	case SPYRE_FLOAT16:
	case SPYRE_BFLOAT16:
	case SPYRE_INT8:
	case SPYRE_INT32:
	case SPYRE_INT64:
	case SPYRE_BOOL:
		return true;
	}
	return false;
}

/* The signature, checked: @c->io filled. */
static int read_io(struct rbuf *r, spyre_compiled *c)
{
	unsigned int i, d;

	for (i = 0; i < c->ninputs + c->noutputs; i++) {
		struct gval *v = &c->io[i];
		uint32_t dt = get32(r), nd = get32(r);
		int64_t st = 1;

		if (r->bad || !dtype_ok(dt) || nd > SPYRE_MAX_DIMS)
			return -1;
		v->dt = (enum spyre_dtype)dt;
		v->ndim = nd;
		for (d = 0; d < nd; d++) {
			v->shape[d] = (int64_t)get64(r);
			if (v->shape[d] < 0)
				return -1;
		}
		for (d = nd; d-- > 0;) {
			v->strides[d] = st;
			st *= v->shape[d] ? v->shape[d] : 1;
		}
		v->store = -1;
	}
	return r->bad ? -1 : 0;
}

/* The host inputs' uploads into @c: -1 when malformed (-ENOMEM as -2). */
static int read_uploads(struct rbuf *r, spyre_compiled *c)
{
	const uint8_t *host = take(r, c->ninputs);
	uint32_t n, i;

	for (i = 0; host && i < c->ninputs; i++) {
		if (host[i] > 1)
			return -1;
		c->host_in[i] = host[i];
	}
	n = get32(r);
	if (r->bad || n > c->ninputs)
		return -1;
	c->up = calloc(n + 1, sizeof(*c->up));
	if (!c->up)
		return -2;
	c->up_cap = n + 1;
	for (i = 0; i < n; i++) {
		struct gupload *u = &c->up[i];
		const struct gval *v;

		u->input = get32(r);
		u->ws_off = get64(r);
		u->bytes = get64(r);
		if (r->bad || u->input >= c->ninputs || !c->host_in[u->input])
			return -1;
		v = &c->io[u->input];
		/* the whole input, inside the workspace */
		if (u->bytes != (uint64_t)g_numel_of(v->ndim, v->shape) * spyre_dtype_bytes(v->dt) ||
		    u->ws_off > c->ws_size || u->bytes > c->ws_size - u->ws_off)
			return -1;
		c->nup++;
	}
	return 0;
}

/* One program's step operands into @st; -1 when malformed. */
static int read_step(struct rbuf *r, spyre_compiled *c, struct cstep *st)
{
	unsigned int k, nargs = c->ninputs + c->noutputs;

	st->nops = get32(r);
	if (r->bad || st->nops > SPY_MAX_ARGS)
		return -1;
	for (k = 0; k < st->nops; k++) {
		struct spyre_operand *o = &st->ops[k];
		uint32_t kind = get32(r), arg = get32(r);
		uint64_t off = get64(r), size = get64(r), il = get64(r);
		struct spyre_buf b;

		if (r->bad)
			return -1;
		memset(o, 0, sizeof(*o));
		if (kind == SO_ARG) {
			if (arg >= nargs)
				return -1;
			*o = spyre_op_arg(arg);
			o->offset = off;
			o->size = size;
		} else if (kind == SO_WS) {
			if (off > c->ws_size || size > c->ws_size - off)
				return -1;
			*o = spyre_op_ws(off, size);
		} else if (kind == SO_IOTA) {
			if (!il || il > (1 << 24) || off > (uint64_t)il * 4 ||
			    size > (uint64_t)il * 4 - off)
				return -1;
			if (ops_iota(c->ops, (int64_t)il, &b))
				return -2;	/* the device refused: reported by ops_iota */
			b.offset += off;
			b.size = size;
			*o = spyre_op_buf(b);
		} else {
			return -1;
		}
	}
	return 0;
}

static int load(spyre_ops *ops, struct rbuf *r, spyre_compiled *c, const char *call)
{
	uint32_t ver, hw, nc;
	unsigned int nprogs;
	int ret;

	if (get32(r) != SER_MAGIC || get32(r) != SER_FORMAT)
		return spy_err(-EBADMSG, "%s: not a serialised compiled graph (format %u)", call,
			       SER_FORMAT);
	ver = get32(r);
	hw = get32(r);
	nc = get32(r);
	if (ver != SPYRE_OPS_VERSION || hw != ops->hw_version || nc != ops->ncores)
		return spy_err(-ESTALE, "%s: built for op library %u, card interface %u.%u and %u "
			       "cores; this is %u, %u.%u and %u", call, ver, hw >> 16, hw & 0xffff,
			       nc, SPYRE_OPS_VERSION, ops->hw_version >> 16,
			       ops->hw_version & 0xffff, ops->ncores);
	c->ninputs = get32(r);
	c->noutputs = get32(r);
	c->nprogs = 0;
	nprogs = get32(r);
	c->ws_size = get64(r);
	c->stats.nodes = get32(r);
	c->stats.kernels = get32(r);
	c->stats.submits = get32(r);
	c->stats.workspace_bytes = get64(r);
	c->stats.intermediate_bytes = get64(r);
	if (r->bad || c->ninputs > SPYRE_RECIPE_MAX_ARGS ||
	    c->noutputs > SPYRE_RECIPE_MAX_ARGS - c->ninputs || !c->noutputs ||
	    nprogs > (r->n - r->at) / 12)	/* each program takes 12 bytes at least */
		goto bad;
	c->stats.programs = nprogs;
	c->io = calloc(c->ninputs + c->noutputs + 1, sizeof(*c->io));
	c->host_in = calloc(c->ninputs + 1, sizeof(*c->host_in));
	c->progs = calloc(nprogs + 1, sizeof(*c->progs));
	c->steps = calloc(nprogs + 1, sizeof(*c->steps));
	if (!c->io || !c->host_in || !c->progs || !c->steps)
		return spy_err(-ENOMEM, "%s: out of memory", call);
	if (read_io(r, c))
		goto bad;
	ret = read_uploads(r, c);
	if (ret == -2)
		return spy_err(-ENOMEM, "%s: out of memory", call);
	if (ret)
		goto bad;
	while (c->nprogs < nprogs) {
		uint64_t size = get64(r);
		const void *img = size <= SER_MAX_IMAGE ? take(r, (size_t)size) : NULL;
		struct gprog p = { .size = (size_t)size };

		if (!img)
			goto bad;
		ret = read_step(r, c, &p.st);
		if (ret == -2)
			return -ENOMEM;
		if (ret)
			goto bad;
		p.img = malloc(p.size ? p.size : 1);
		if (!p.img)
			return spy_err(-ENOMEM, "%s: out of memory", call);
		memcpy(p.img, img, p.size);
		ret = g_load_program(c, c->nprogs, &p);
		free(p.img);	/* NULL once the compiled graph keeps it */
		if (ret)
			return ret;
	}
	if (r->at != r->n)
		goto bad;
	if (!c->nprogs)
		return 0;
	return g_make_recipe(c);
bad:
	return spy_err(-EBADMSG, "%s: the serialised graph is malformed at byte %zu", call, r->at);
}

int spyre_compiled_deserialize(spyre_ops *ops, const void *buf, size_t len, spyre_compiled **out)
{
	static const char *call = "spyre_compiled_deserialize";
	struct rbuf r = { buf, len, 0, false };
	spyre_compiled *c;
	uint64_t sum;
	int ret;

	if (!ops || !buf || !out)
		return spy_err(-EINVAL, "%s: NULL argument", call);
	if (len < 8)
		return spy_err(-EBADMSG, "%s: %zu bytes is too short", call, len);
	memcpy(&sum, (const uint8_t *)buf + len - 8, 8);
	if (sum != fnv1a(buf, len - 8))
		return spy_err(-EBADMSG, "%s: checksum mismatch (corrupt or truncated)", call);
	r.n = len - 8;
	c = calloc(1, sizeof(*c));
	if (!c)
		return spy_err(-ENOMEM, "%s: out of memory", call);
	c->ops = ops;
	ret = load(ops, &r, c, call);
	if (ret) {
		spyre_compiled_destroy(c);
		return ret;
	}
	__atomic_fetch_add(&ops->stats.graphs_loaded, 1, __ATOMIC_RELAXED);
	*out = c;
	return 0;
}
