// SPDX-License-Identifier: MIT
/* Op-library test helpers (see ops_ref.h). */
#include <math.h>

#include "ops_ref.h"

int tctx_open(spyre_device *dev, struct tctx *c)
{
	int ret;

	memset(c, 0, sizeof(*c));
	c->dev = dev;
	ret = spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &c->s);
	if (!ret)
		ret = spyre_ops_create(dev, 0, &c->ops);
	return ret;
}

void tctx_close(struct tctx *c)
{
	if (c->s)
		spyre_stream_destroy(c->s);
	if (c->ops)
		spyre_ops_destroy(c->ops);
}

int64_t numel(unsigned int ndim, const int64_t *shape)
{
	int64_t n = 1;
	unsigned int d;

	for (d = 0; d < ndim; d++)
		n *= shape[d];
	return n;
}

int dt_new(struct tctx *c, struct dtensor *d, enum spyre_dtype dt, unsigned int ndim,
	   const int64_t *shape)
{
	int64_t n = numel(ndim, shape);
	uint64_t bytes = (uint64_t)(n ? n : 1) * spyre_dtype_bytes(dt);
	int ret;

	memset(d, 0, sizeof(*d));
	ret = spyre_bo_create(c->dev, bytes, SPYRE_MEM_DEVICE, &d->bo);
	if (ret)
		return ret;
	d->t = spyre_tensor_make(dt, ndim, shape, spyre_bo_buf(d->bo));
	return 0;
}

void dt_free(struct dtensor *d)
{
	if (d->bo)
		spyre_bo_destroy(d->bo);
	d->bo = NULL;
}

double round_to(enum spyre_dtype dt, double x)
{
	uint32_t u;
	float f;

	switch (dt) {
	case SPYRE_FLOAT32:
		return (float)x;
	case SPYRE_FLOAT16:
		return (double)(float)(_Float16)(float)x;
	case SPYRE_BFLOAT16:
		f = (float)x;
		if (isnan(f))
			return f;
		memcpy(&u, &f, 4);
		u += 0x7fff + ((u >> 16) & 1);	/* round to nearest even */
		u &= 0xffff0000u;
		memcpy(&f, &u, 4);
		return f;
	case SPYRE_INT8:
		return x > 127 ? 127 : x < -128 ? -128 : nearbyint(x);
	case SPYRE_BOOL:
		return x != 0;
	case SPYRE_INT32:
	case SPYRE_INT64:
		return nearbyint(x);
	}
	return x;
}

static void put(uint8_t *p, enum spyre_dtype dt, double x)
{
	float f = (float)round_to(dt, x);
	_Float16 h;
	uint32_t u;
	int32_t i32;
	int64_t i64;
	int8_t i8;

	switch (dt) {
	case SPYRE_FLOAT32:
		memcpy(p, &f, 4);
		break;
	case SPYRE_FLOAT16:
		h = (_Float16)f;
		memcpy(p, &h, 2);
		break;
	case SPYRE_BFLOAT16:
		memcpy(&u, &f, 4);
		p[0] = (uint8_t)(u >> 16);
		p[1] = (uint8_t)(u >> 24);
		break;
	case SPYRE_INT8:
	case SPYRE_BOOL:
		i8 = (int8_t)(dt == SPYRE_BOOL ? x != 0 : x);
		memcpy(p, &i8, 1);
		break;
	case SPYRE_INT32:
		i32 = (int32_t)x;
		memcpy(p, &i32, 4);
		break;
	case SPYRE_INT64:
		i64 = (int64_t)x;
		memcpy(p, &i64, 8);
		break;
	}
}

static double get(const uint8_t *p, enum spyre_dtype dt)
{
	_Float16 h;
	uint32_t u;
	int32_t i32;
	int64_t i64;
	float f;

	switch (dt) {
	case SPYRE_FLOAT32:
		memcpy(&f, p, 4);
		return f;
	case SPYRE_FLOAT16:
		memcpy(&h, p, 2);
		return (float)h;
	case SPYRE_BFLOAT16:
		u = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 24;
		memcpy(&f, &u, 4);
		return f;
	case SPYRE_INT8:
	case SPYRE_BOOL:
		return (int8_t)p[0];
	case SPYRE_INT32:
		memcpy(&i32, p, 4);
		return i32;
	case SPYRE_INT64:
		memcpy(&i64, p, 8);
		return (double)i64;
	}
	return 0;
}

/* Byte offset of logical element @i. */
static uint64_t elem_off(const struct spyre_tensor *t, int64_t i)
{
	uint64_t off = 0;
	int d;

	for (d = (int)t->ndim - 1; d >= 0; d--) {
		off += (uint64_t)(i % t->shape[d]) * (uint64_t)t->strides[d];
		i /= t->shape[d];
	}
	return off * spyre_dtype_bytes(t->dtype);
}

static int xfer(struct tctx *c, const struct dtensor *d, double *v, int write)
{
	uint64_t bytes = spyre_bo_size(d->bo);
	struct spyre_buf hb, db;
	int64_t i, n = spyre_tensor_numel(&d->t);
	spyre_bo *h;
	uint8_t *m;
	void *map;
	int ret;

	if (!n)
		return 0;
	ret = spyre_bo_create(c->dev, bytes, SPYRE_MEM_HOST, &h);
	if (ret)
		return ret;
	ret = spyre_bo_map(h, &map);
	m = map;
	hb = spyre_bo_buf(h);
	db = spyre_bo_buf(d->bo);
	if (!ret && write) {
		/* keep bytes outside the view as they are on the device */
		ret = spyre_memcpy_async(c->s, &hb, &db, bytes);
		if (!ret)
			ret = spyre_stream_synchronize(c->s);
		for (i = 0; i < n && !ret; i++)
			put(m + d->t.buf.offset + elem_off(&d->t, i), d->t.dtype, v[i]);
		if (!ret)
			ret = spyre_memcpy_async(c->s, &db, &hb, bytes);
	} else if (!ret) {
		ret = spyre_memcpy_async(c->s, &hb, &db, bytes);
	}
	if (!ret)
		ret = spyre_stream_synchronize(c->s);
	if (!ret && !write)
		for (i = 0; i < n; i++)
			v[i] = get(m + d->t.buf.offset + elem_off(&d->t, i), d->t.dtype);
	spyre_bo_destroy(h);
	return ret;
}

/* The raw bytes of a contiguous tensor from/into @p (exact int64 values). */
static int raw(struct tctx *c, const struct dtensor *d, void *p, int write)
{
	uint64_t bytes = spyre_tensor_nbytes(&d->t);
	struct spyre_buf hb, db;
	spyre_bo *h;
	void *map;
	int ret;

	if (!bytes)
		return 0;
	ret = spyre_bo_create(c->dev, bytes, SPYRE_MEM_HOST, &h);
	if (ret)
		return ret;
	ret = spyre_bo_map(h, &map);
	hb = spyre_bo_buf(h);
	db = d->t.buf;
	if (!ret && write) {
		memcpy(map, p, bytes);
		ret = spyre_memcpy_async(c->s, &db, &hb, bytes);
	} else if (!ret) {
		ret = spyre_memcpy_async(c->s, &hb, &db, bytes);
	}
	if (!ret)
		ret = spyre_stream_synchronize(c->s);
	if (!ret && !write)
		memcpy(p, map, bytes);
	spyre_bo_destroy(h);
	return ret;
}

int dt_write_raw(struct tctx *c, struct dtensor *d, const void *p)
{
	return raw(c, d, (void *)p, 1);
}

int dt_read_raw(struct tctx *c, const struct dtensor *d, void *p)
{
	return raw(c, d, p, 0);
}

int dt_write(struct tctx *c, struct dtensor *d, const double *v)
{
	return xfer(c, d, (double *)v, 1);
}

int dt_read(struct tctx *c, const struct dtensor *d, double *v)
{
	return xfer(c, d, v, 0);
}

void rnd_fill(double *v, int64_t n, double lo, double hi, unsigned int seed,
	      enum spyre_dtype dt)
{
	uint64_t x = 0x9e3779b97f4a7c15ull * (seed + 1);
	int64_t i;

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		v[i] = round_to(dt, lo + (hi - lo) * (double)(x >> 11) / 9007199254740992.0);
	}
}

/*
 * fp32: the card computes in fp32 (libm-accurate functions, a few ulp);
 * fp16/bf16: one final rounding (2^-11 / 2^-8 relative) on top.
 */
double tol_abs(enum spyre_dtype dt)
{
	switch (dt) {
	case SPYRE_FLOAT16:
		return 1e-3;
	case SPYRE_BFLOAT16:
		return 8e-3;
	case SPYRE_FLOAT32:
		return 1e-6;
	default:
		return 0;
	}
}

double tol_rel(enum spyre_dtype dt)
{
	switch (dt) {
	case SPYRE_FLOAT16:
		return 2e-3;
	case SPYRE_BFLOAT16:
		return 1.6e-2;
	case SPYRE_FLOAT32:
		return 1e-5;
	default:
		return 0;
	}
}

int64_t compare(const char *what, const double *got, const double *ref, const double *mag,
		int64_t n, enum spyre_dtype dt, double scale)
{
	int64_t i;

	for (i = 0; i < n; i++) {
		double g = got[i], r = ref[i], m = mag ? mag[i] : fabs(r);
		bool ok;

		if (isnan(r))
			ok = isnan(g);
		else if (isinf(r))
			ok = g == r;
		else
			ok = fabs(g - r) <= scale * (tol_abs(dt) + tol_rel(dt) * m);
		if (!ok) {
			fprintf(stderr, "  %s: element %lld: got %.9g, want %.9g (%s)\n", what,
				(long long)i, g, r, spyre_dtype_name(dt));
			return i;
		}
	}
	return -1;
}

/* Reports an older card (the sim honours SPYRE_SIM_HW_VERSION) to a new op context? */
bool old_card_ops(spyre_device *dev, const char *ver, spyre_ops **ops)
{
	struct spyre_device_props p;
	int ret;

	if (spyre_device_get_props(dev, &p) || strcmp(p.backend, "sim"))
		return false;
	setenv("SPYRE_SIM_HW_VERSION", ver, 1);
	ret = spyre_ops_create(dev, 0, ops);
	unsetenv("SPYRE_SIM_HW_VERSION");
	return !ret;
}
