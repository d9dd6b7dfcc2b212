// SPDX-License-Identifier: MIT
/*
 * Weight-only int8 linear (spyre_op_linear_w8) against the host reference:
 * out = (x @ w^T) * scale + bias, the int8 weights widened on the card.
 */
#include <math.h>

#include "ops_ref.h"

static const enum spyre_dtype fdt[] = { SPYRE_FLOAT32, SPYRE_FLOAT16, SPYRE_BFLOAT16 };

struct w8_case {
	enum spyre_dtype dt;
	int64_t nb, m, n, k;
	bool bias;
	bool special;	/* -128/127 weights, a zero column, inf/NaN scales */
};

static void w8_run(struct tctx *c, const struct w8_case *t)
{
	int64_t sx[3] = { t->nb, t->m, t->k }, sw[2] = { t->n, t->k }, so[3] = { t->nb, t->m, t->n };
	int64_t rows = t->nb * t->m, no = rows * t->n, i, j, p;
	double *x = calloc(rows * t->k + 1, 8), *w = calloc(t->n * t->k + 1, 8);
	double *sc = calloc(t->n + 1, 8), *bi = calloc(t->n + 1, 8);
	double *y = calloc(no + 1, 8), *r = calloc(no + 1, 8), *mag = calloc(no + 1, 8);
	struct dtensor dx, dw, ds, db, dy;

	ASSERT(x && w && sc && bi && y && r && mag, "alloc");
	OK(dt_new(c, &dx, t->dt, 3, sx));
	OK(dt_new(c, &dw, SPYRE_INT8, 2, sw));
	OK(dt_new(c, &ds, t->dt, 1, &t->n));
	OK(dt_new(c, &db, t->dt, 1, &t->n));
	OK(dt_new(c, &dy, t->dt, 3, so));
	rnd_fill(x, rows * t->k, -1, 1, 11, t->dt);
	rnd_fill(w, t->n * t->k, -128, 128, 12, SPYRE_FLOAT32);
	for (i = 0; i < t->n * t->k; i++)
		w[i] = floor(w[i]);
	rnd_fill(sc, t->n, 0.001, 0.02, 13, t->dt);
	rnd_fill(bi, t->n, -1, 1, 14, t->dt);
	if (t->special) {
		for (p = 0; p < t->k; p++) {
			w[p] = -128;			/* column 0: the int8 minimum */
			w[t->k + p] = 127;		/* column 1: the maximum */
			w[3 * t->k + p] = 0;		/* column 3: a zero product */
		}
		sc[2] = INFINITY;	/* nonzero products: +-inf */
		sc[3] = INFINITY;	/* 0 * inf: NaN */
		sc[4] = NAN;		/* a NaN column */
		sc[5] = -INFINITY;
	}
	OK(dt_write(c, &dx, x));
	OK(dt_write(c, &dw, w));
	OK(dt_write(c, &ds, sc));
	OK(dt_write(c, &db, bi));
	OK(spyre_op_linear_w8(c->ops, c->s, &dx.t, &dw.t, &ds.t, t->bias ? &db.t : NULL, &dy.t));
	OK(dt_read(c, &dy, y));
	for (i = 0; i < rows; i++)
		for (j = 0; j < t->n; j++) {
			double s = 0, sm = 0, b = t->bias ? bi[j] : 0;

			for (p = 0; p < t->k; p++) {
				s += x[i * t->k + p] * w[j * t->k + p];
				sm += fabs(x[i * t->k + p] * w[j * t->k + p]);
			}
			r[i * t->n + j] = s * sc[j] + b;
			mag[i * t->n + j] = sm * fabs(sc[j]) + fabs(b) + fabs(r[i * t->n + j]);
		}
	CHECK(compare("linear_w8", y, r, mag, no, t->dt, 1) < 0, "%s [%lld,%lld,%lld] x int8 %lld%s%s",
	      spyre_dtype_name(t->dt), (long long)t->nb, (long long)t->m, (long long)t->k,
	      (long long)t->n, t->bias ? " +bias" : "", t->special ? " special" : "");
	dt_free(&dx);
	dt_free(&dw);
	dt_free(&ds);
	dt_free(&db);
	dt_free(&dy);
	free(x);
	free(w);
	free(sc);
	free(bi);
	free(y);
	free(r);
	free(mag);
}

TEST(ops_linear_w8)
{
	struct tctx c;
	unsigned int d;

	OK(tctx_open(dev, &c));
	for (d = 0; d < 3; d++) {
		/* one decode row; K not a multiple of the 256 chunk */
		w8_run(&c, &(struct w8_case){ fdt[d], 1, 1, 96, 300, true, true });
		/* batched rows, several chunks, N not a multiple of a tile */
		w8_run(&c, &(struct w8_case){ fdt[d], 2, 33, 70, 520, false, false });
	}
	/* decode row of a GPT-2 MLP (K 768, one chunk per core and then some) */
	w8_run(&c, &(struct w8_case){ SPYRE_FLOAT16, 1, 1, 512, 768, true, false });
	tctx_close(&c);
}

/* Prefill-sized products go through the shared-tile schedule (LOAD MCAST). */
TEST(ops_linear_w8_shared_tiles)
{
	struct tctx c;

	OK(tctx_open(dev, &c));
	w8_run(&c, &(struct w8_case){ SPYRE_FLOAT16, 1, 260, 520, 600, true, true });
	w8_run(&c, &(struct w8_case){ SPYRE_BFLOAT16, 1, 256, 512, 257, false, false });
	/* wide N, several column blocks per block row */
	w8_run(&c, &(struct w8_case){ SPYRE_FLOAT16, 1, 500, 3000, 700, true, true });
	tctx_close(&c);
}

TEST(ops_linear_w8_errors)
{
	int64_t sx[2] = { 2, 8 }, sw[2] = { 4, 8 }, sn[1] = { 4 }, sy[2] = { 2, 4 };
	struct dtensor dx, dw, dwf, ds, dsf, dy, dx8;
	struct tctx c;

	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &dx, SPYRE_FLOAT16, 2, sx));
	OK(dt_new(&c, &dx8, SPYRE_INT8, 2, sx));
	OK(dt_new(&c, &dw, SPYRE_INT8, 2, sw));
	OK(dt_new(&c, &dwf, SPYRE_FLOAT16, 2, sw));
	OK(dt_new(&c, &ds, SPYRE_FLOAT16, 1, sn));
	OK(dt_new(&c, &dsf, SPYRE_FLOAT32, 1, sn));
	OK(dt_new(&c, &dy, SPYRE_FLOAT16, 2, sy));
	FAILS_WITH(spyre_op_linear_w8(c.ops, c.s, &dx.t, &dwf.t, &ds.t, NULL, &dy.t), -EINVAL,
		   "weight must be int8");
	FAILS_WITH(spyre_op_linear_w8(c.ops, c.s, &dx.t, &dw.t, &dsf.t, NULL, &dy.t), -EINVAL,
		   "scale must be float16 [4]");
	FAILS_WITH(spyre_op_linear_w8(c.ops, c.s, &dx8.t, &dw.t, &ds.t, NULL, &dy.t), -EINVAL,
		   "x must be a float type");
	FAILS_WITH(spyre_op_linear_w8(c.ops, c.s, &dx.t, &dw.t, NULL, NULL, &dy.t), -EINVAL,
		   "scale is NULL");
	dt_free(&dx);
	dt_free(&dx8);
	dt_free(&dw);
	dt_free(&dwf);
	dt_free(&ds);
	dt_free(&dsf);
	dt_free(&dy);
	tctx_close(&c);
}
