// SPDX-License-Identifier: MIT
/*
 * A gated MLP's two projections as one dual matmul: silu(x @ wg^T) *
 * (x @ wu^T) (Llama's MLP before its down projection) compiles to one
 * kernel that reads x once and never writes silu(x @ wg^T) to device
 * memory. Values against a double reference for float weights in three
 * dtypes, int8 weights with per-channel scales, odd sizes on both matmul
 * schedules (one core per tile, and the shared-operand grid), a single row
 * (decode), an empty M, B as [K, N], and inf/NaN through silu. When the
 * gate's result is also an output it is not fused (two kernels, same
 * values).
 */
#include <math.h>
#include <stdlib.h>

#include "ops_ref.h"

struct dual_case {
	enum spyre_dtype dt;
	int64_t m, k, n;
	bool w8;		/* int8 weights, scales per output channel */
	bool kn;		/* weights as [K, N] (matmul), else [N, K] (linear) */
	bool special;		/* inf and NaN in x */
	bool keep_gate;		/* the gate's result is an output too: not fused */
};

static double silu(double v)
{
	return v / (1 + exp(-v));
}

/* The gate (w = 0) or up (w = 1) projection of row i, column j, with its magnitude. */
static double proj(const struct dual_case *t, const double *x, const double *w,
		   const double *sc, int64_t i, int64_t j, double *mag)
{
	double s = 0, m = 0;
	int64_t p;

	for (p = 0; p < t->k; p++) {
		double wv = t->kn ? w[p * t->n + j] : w[j * t->k + p];

		s += x[i * t->k + p] * wv;
		m += fabs(x[i * t->k + p] * wv);
	}
	if (t->w8) {
		s *= sc[j];
		m *= fabs(sc[j]);
	}
	*mag = m;
	return s;
}

static int add_proj(spyre_graph *g, const struct dual_case *t, spyre_value x, spyre_value w,
		    spyre_value sc, spyre_value *out)
{
	int ret;

	if (t->w8) {
		/* [N, K] int8 weights seen as [K, N] (a view: the card's TRANS_B) */
		if (!t->kn) {
			ret = spyre_graph_transpose(g, w, 0, 1, &w);
			if (ret)
				return ret;
		}
		ret = spyre_graph_matmul_w8(g, x, w, out);
		return ret ? ret : spyre_graph_binary(g, SPYRE_BIN_MUL, *out, sc, out);
	}
	return t->kn ? spyre_graph_matmul(g, x, w, out) : spyre_graph_linear(g, x, w, -1, out);
}

static void dual_run(struct tctx *c, const struct dual_case *t)
{
	int64_t sx[2] = { t->m, t->k }, sw[2] = { t->n, t->k }, so[2] = { t->m, t->n };
	int64_t ss[2] = { t->n, 1 };
	int64_t no = t->m * t->n, nw = t->n * t->k, i, j;
	enum spyre_dtype wdt = t->w8 ? SPYRE_INT8 : t->dt;
	double *x = calloc(t->m * t->k + 1, 8), *wg = calloc(nw + 1, 8), *wu = calloc(nw + 1, 8);
	double *sg = calloc(t->n + 1, 8), *su = calloc(t->n + 1, 8), *y = calloc(no + 1, 8);
	double *yg = calloc(no + 1, 8), *r = calloc(no + 1, 8), *rg = calloc(no + 1, 8);
	double *mag = calloc(no + 1, 8), *magg = calloc(no + 1, 8);
	struct dtensor dx, dwg, dwu, dsg, dsu, dy, dg;
	struct spyre_compiled_stats st;
	spyre_value vx, vwg, vwu, vsg = -1, vsu = -1, a, b, vy;
	struct spyre_tensor to[2];
	spyre_compiled *k;
	spyre_graph *g;

	ASSERT(x && wg && wu && sg && su && y && yg && r && rg && mag && magg, "alloc");
	if (t->kn) {
		sw[0] = t->k;
		sw[1] = t->n;
	}
	OK(dt_new(c, &dx, t->dt, 2, sx));
	OK(dt_new(c, &dwg, wdt, 2, sw));
	OK(dt_new(c, &dwu, wdt, 2, sw));
	OK(dt_new(c, &dsg, SPYRE_FLOAT32, 2, ss));
	OK(dt_new(c, &dsu, SPYRE_FLOAT32, 2, ss));
	OK(dt_new(c, &dy, t->dt, 2, so));
	OK(dt_new(c, &dg, t->dt, 2, so));
	rnd_fill(x, t->m * t->k, -1, 1, 21, t->dt);
	if (t->w8) {
		rnd_fill(wg, nw, -128, 128, 22, SPYRE_FLOAT32);
		rnd_fill(wu, nw, -128, 128, 23, SPYRE_FLOAT32);
		for (i = 0; i < nw; i++) {
			wg[i] = floor(wg[i]);
			wu[i] = floor(wu[i]);
		}
		rnd_fill(sg, t->n, 0.001, 0.02, 24, t->dt);
		rnd_fill(su, t->n, 0.001, 0.02, 25, t->dt);
	} else {
		rnd_fill(wg, nw, -0.3, 0.3, 22, t->dt);
		rnd_fill(wu, nw, -0.3, 0.3, 23, t->dt);
	}
	if (t->special && t->m > 2) {
		x[0] = INFINITY;		/* row 0: +-inf gates (NaN where w is 0) */
		x[t->k + 3] = NAN;		/* row 1: NaN everywhere */
		x[2 * t->k + 1] = -INFINITY;	/* row 2: silu(-inf) is NaN */
	}
	OK(dt_write(c, &dx, x));
	OK(dt_write(c, &dwg, wg));
	OK(dt_write(c, &dwu, wu));
	OK(dt_write(c, &dsg, sg));
	OK(dt_write(c, &dsu, su));
	OK(spyre_graph_create(c->ops, &g));
	OK(spyre_graph_input(g, t->dt, 2, sx, &vx));
	OK(spyre_graph_constant(g, &dwg.t, &vwg));
	OK(spyre_graph_constant(g, &dwu.t, &vwu));
	if (t->w8) {
		/*
		 * torchao's per-channel scales: fp32 [N, 1], cast to the
		 * activations' type and read as [1, N] by the multiply
		 */
		OK(spyre_graph_constant(g, &dsg.t, &vsg));
		OK(spyre_graph_constant(g, &dsu.t, &vsu));
		OK(spyre_graph_cast(g, vsg, t->dt, &vsg));
		OK(spyre_graph_cast(g, vsu, t->dt, &vsu));
		OK(spyre_graph_transpose(g, vsg, 0, 1, &vsg));
		OK(spyre_graph_transpose(g, vsu, 0, 1, &vsu));
	}
	OK(add_proj(g, t, vx, vwg, vsg, &a));
	OK(spyre_graph_unary(g, SPYRE_UN_SILU, a, &a));
	OK(add_proj(g, t, vx, vwu, vsu, &b));
	OK(spyre_graph_binary(g, SPYRE_BIN_MUL, a, b, &vy));
	OK(spyre_graph_output(g, vy));
	if (t->keep_gate)
		OK(spyre_graph_output(g, a));
	OK(spyre_graph_compile(g, &k));
	OK(spyre_compiled_get_stats(k, &st));
	CHECK(st.kernels == (t->keep_gate ? 2u : 1u),
	      "%s %lldx%lldx%lld%s%s: %u kernels", spyre_dtype_name(t->dt), (long long)t->m,
	      (long long)t->k, (long long)t->n, t->w8 ? " w8" : "",
	      t->keep_gate ? " gate kept" : "", st.kernels);
	to[0] = dy.t;
	to[1] = dg.t;
	OK(spyre_compiled_run(k, c->s, &dx.t, 1, to, t->keep_gate ? 2 : 1));
	OK(spyre_stream_synchronize(c->s));
	OK(dt_read(c, &dy, y));
	OK(dt_read(c, &dg, yg));
	for (i = 0; i < t->m; i++)
		for (j = 0; j < t->n; j++) {
			double mg, mu, gv = proj(t, x, wg, sg, i, j, &mg);
			double uv = proj(t, x, wu, su, i, j, &mu);
			double sv = silu(gv);

			rg[i * t->n + j] = round_to(t->dt, sv);
			magg[i * t->n + j] = 2 * mg + fabs(sv);
			r[i * t->n + j] = round_to(t->dt, sv * uv);
			mag[i * t->n + j] = (2 * mg + fabs(sv)) * (2 * mu + fabs(uv)) +
					    fabs(sv * uv);
		}
	CHECK(compare("dual", y, r, mag, no, t->dt, 4) < 0, "%s %lldx%lldx%lld%s values",
	      spyre_dtype_name(t->dt), (long long)t->m, (long long)t->k, (long long)t->n,
	      t->w8 ? " w8" : "");
	if (t->keep_gate)
		CHECK(compare("gate", yg, rg, magg, no, t->dt, 4) < 0, "gate values");
	OK(spyre_compiled_destroy(k));
	OK(spyre_graph_destroy(g));
	dt_free(&dx);
	dt_free(&dwg);
	dt_free(&dwu);
	dt_free(&dsg);
	dt_free(&dsu);
	dt_free(&dy);
	dt_free(&dg);
	free(x);
	free(wg);
	free(wu);
	free(sg);
	free(su);
	free(y);
	free(yg);
	free(r);
	free(rg);
	free(mag);
	free(magg);
}

TEST(graph_dual_gated_mlp)
{
	static const struct dual_case cases[] = {
		/* one core per tile (M < 64) */
		{ SPYRE_FLOAT32, 40, 96, 72, false, false, true, false },
		{ SPYRE_FLOAT16, 40, 96, 72, false, false, true, false },
		{ SPYRE_BFLOAT16, 40, 96, 72, false, true, false, false },
		/* a decode row, and no rows */
		{ SPYRE_FLOAT16, 1, 200, 300, false, false, false, false },
		{ SPYRE_FLOAT16, 0, 64, 96, false, false, false, false },
		/* odd M, K and an N not a tile multiple */
		{ SPYRE_FLOAT16, 130, 200, 300, false, false, true, false },
		{ SPYRE_BFLOAT16, 192, 256, 520, false, false, false, false },
		{ SPYRE_FLOAT16, 250, 264, 1000, false, false, true, false },
		{ SPYRE_FLOAT32, 96, 128, 200, false, true, false, false },
		/* these take the shared-operand grid (int8 and [K, N] weights too) */
		{ SPYRE_FLOAT16, 256, 256, 1024, false, false, true, false },
		{ SPYRE_FLOAT16, 256, 256, 1000, true, false, false, false },
		{ SPYRE_BFLOAT16, 192, 320, 1100, false, true, false, false },
		/* int8 weights on both schedules */
		{ SPYRE_FLOAT16, 1, 256, 384, true, false, false, false },
		{ SPYRE_FLOAT32, 70, 128, 96, true, true, false, false },
		{ SPYRE_FLOAT16, 33, 100, 72, true, false, true, false },
		{ SPYRE_BFLOAT16, 130, 192, 260, true, false, false, false },
		/* the gate is an output too: two kernels */
		{ SPYRE_FLOAT16, 40, 96, 72, false, false, false, true },
	};
	struct tctx c;
	unsigned int i;

	OK(tctx_open(dev, &c));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		dual_run(&c, &cases[i]);
	tctx_close(&c);
}

/*
 * The fold of an elementwise producer its reader reads through a view
 * (a transpose here): y = x * cast(s)^T with s [N, 1] is one kernel; with
 * s the cat along dim 0 of two casts, neither cast writes the whole
 * storage the multiply reads, so nothing folds that way and the values
 * are still right.
 */
TEST(graph_fold_view_producer)
{
	enum { R = 5, N = 12 };
	int64_t sx[2] = { R, N }, ss[2] = { N, 1 }, sa[2] = { 4, 1 }, sb[2] = { N - 4, 1 };
	double x[R * N], sv[N], y[R * N], ref[R * N];
	struct dtensor dx, ds, da, db, dy;
	struct spyre_compiled_stats st;
	spyre_value vx, vs, va, vb, parts[2], vy;
	spyre_compiled *k;
	spyre_graph *g;
	struct tctx c;
	int pass, i, j;

	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &dx, SPYRE_FLOAT16, 2, sx));
	OK(dt_new(&c, &ds, SPYRE_FLOAT32, 2, ss));
	OK(dt_new(&c, &da, SPYRE_FLOAT32, 2, sa));
	OK(dt_new(&c, &db, SPYRE_FLOAT32, 2, sb));
	OK(dt_new(&c, &dy, SPYRE_FLOAT16, 2, sx));
	rnd_fill(x, R * N, -2, 2, 31, SPYRE_FLOAT16);
	rnd_fill(sv, N, -1, 1, 32, SPYRE_FLOAT16);
	OK(dt_write(&c, &dx, x));
	OK(dt_write(&c, &ds, sv));
	OK(dt_write(&c, &da, sv));
	OK(dt_write(&c, &db, sv + 4));
	for (pass = 0; pass < 2; pass++) {
		OK(spyre_graph_create(c.ops, &g));
		OK(spyre_graph_input(g, SPYRE_FLOAT16, 2, sx, &vx));
		if (!pass) {
			OK(spyre_graph_constant(g, &ds.t, &vs));
			OK(spyre_graph_cast(g, vs, SPYRE_FLOAT16, &vs));
		} else {
			OK(spyre_graph_constant(g, &da.t, &va));
			OK(spyre_graph_constant(g, &db.t, &vb));
			OK(spyre_graph_cast(g, va, SPYRE_FLOAT16, &parts[0]));
			OK(spyre_graph_cast(g, vb, SPYRE_FLOAT16, &parts[1]));
			OK(spyre_graph_cat(g, parts, 2, 0, &vs));
		}
		OK(spyre_graph_transpose(g, vs, 0, 1, &vs));
		OK(spyre_graph_binary(g, SPYRE_BIN_MUL, vx, vs, &vy));
		OK(spyre_graph_output(g, vy));
		OK(spyre_graph_compile(g, &k));
		OK(spyre_compiled_get_stats(k, &st));
		if (!pass)
			CHECK(st.kernels == 1, "cast read transposed: %u kernels", st.kernels);
		OK(spyre_compiled_run(k, c.s, &dx.t, 1, &dy.t, 1));
		OK(spyre_stream_synchronize(c.s));
		OK(dt_read(&c, &dy, y));
		for (i = 0; i < R; i++)
			for (j = 0; j < N; j++)
				ref[i * N + j] = round_to(SPYRE_FLOAT16, x[i * N + j] * sv[j]);
		CHECK(compare(pass ? "cat" : "cast", y, ref, NULL, R * N, SPYRE_FLOAT16, 1) < 0,
		      "values");
		OK(spyre_compiled_destroy(k));
		OK(spyre_graph_destroy(g));
	}
	dt_free(&dx);
	dt_free(&ds);
	dt_free(&da);
	dt_free(&db);
	dt_free(&dy);
	tctx_close(&c);
}
