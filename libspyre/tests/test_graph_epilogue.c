// SPDX-License-Identifier: MIT
/*
 * Matmul epilogue fusion of what a framework's graph writes after a
 * linear: the product seen through a reshape with a leading 1 dim
 * ([M, N] as [1, M, N]) and read several times by one elementwise chain
 * (GPT-2's tanh GELU: x * 0.5 * (1 + tanh(0.79788456 * (x + 0.044715 *
 * x^3)))), and a cast of reshaped logits: each one kernel, values against
 * a double reference.
 */
#include <math.h>

#include "ops_ref.h"

enum { M = 40, K = 96, N = 72 };

TEST(graph_epilogue_reshaped_multi_use)
{
	int64_t sx[2] = { M, K }, sw[2] = { N, K }, sb[1] = { N }, s3[3] = { 1, M, N };
	double x[M * K], w[N * K], b[N], y[M * N], ref[M * N], mag[M * N];
	struct dtensor dx, dw, db, dy, dh;
	struct spyre_compiled_stats st;
	spyre_value vx, vw, vb, t, a, c, d, vy;
	struct spyre_tensor ti[1], to[1];
	spyre_compiled *k;
	spyre_graph *g;
	struct tctx cx;
	int64_t i, j, p;
	int pass;

	OK(tctx_open(dev, &cx));
	OK(dt_new(&cx, &dx, SPYRE_FLOAT32, 2, sx));
	OK(dt_new(&cx, &dw, SPYRE_FLOAT32, 2, sw));
	OK(dt_new(&cx, &db, SPYRE_FLOAT32, 1, sb));
	OK(dt_new(&cx, &dy, SPYRE_FLOAT32, 3, s3));
	OK(dt_new(&cx, &dh, SPYRE_FLOAT16, 3, s3));
	rnd_fill(x, M * K, -1, 1, 11, SPYRE_FLOAT32);
	rnd_fill(w, N * K, -0.3, 0.3, 12, SPYRE_FLOAT32);
	rnd_fill(b, N, -1, 1, 13, SPYRE_FLOAT32);
	OK(dt_write(&cx, &dx, x));
	OK(dt_write(&cx, &dw, w));
	OK(dt_write(&cx, &db, b));
	for (pass = 0; pass < 2; pass++) {
		OK(spyre_graph_create(cx.ops, &g));
		OK(spyre_graph_input(g, SPYRE_FLOAT32, 2, sx, &vx));
		OK(spyre_graph_constant(g, &dw.t, &vw));
		OK(spyre_graph_constant(g, &db.t, &vb));
		OK(spyre_graph_linear(g, vx, vw, vb, &t));
		OK(spyre_graph_reshape(g, t, 3, s3, &t));
		if (!pass) {
			/* the tanh GELU, t read by three ops */
			OK(spyre_graph_binary_scalar(g, SPYRE_BIN_MUL, t, 0.5, 0, &a));
			OK(spyre_graph_binary(g, SPYRE_BIN_MUL, t, t, &c));
			OK(spyre_graph_binary(g, SPYRE_BIN_MUL, c, t, &c));
			OK(spyre_graph_binary_scalar(g, SPYRE_BIN_MUL, c, 0.044715, 0, &c));
			OK(spyre_graph_binary(g, SPYRE_BIN_ADD, t, c, &d));
			OK(spyre_graph_binary_scalar(g, SPYRE_BIN_MUL, d, 0.7978845608, 0, &d));
			OK(spyre_graph_unary(g, SPYRE_UN_TANH, d, &d));
			OK(spyre_graph_binary_scalar(g, SPYRE_BIN_ADD, d, 1, 0, &d));
			OK(spyre_graph_binary(g, SPYRE_BIN_MUL, a, d, &vy));
		} else {
			/* logits cast to another type */
			OK(spyre_graph_cast(g, t, SPYRE_FLOAT16, &vy));
		}
		OK(spyre_graph_output(g, vy));
		OK(spyre_graph_compile(g, &k));
		OK(spyre_compiled_get_stats(k, &st));
		CHECK(st.kernels == 1, "%s: %u nodes, %u kernels", pass ? "cast" : "gelu", st.nodes,
		      st.kernels);
		CHECK(st.workspace_bytes == 0, "no intermediates left: %llu",
		      (unsigned long long)st.workspace_bytes);
		ti[0] = dx.t;
		to[0] = pass ? dh.t : dy.t;
		OK(spyre_compiled_run(k, cx.s, ti, 1, to, 1));
		OK(spyre_stream_synchronize(cx.s));
		OK(dt_read(&cx, pass ? &dh : &dy, y));
		for (i = 0; i < M; i++)
			for (j = 0; j < N; j++) {
				double s = b[j], m = fabs(b[j]);

				for (p = 0; p < K; p++) {
					s += x[i * K + p] * w[j * K + p];
					m += fabs(x[i * K + p] * w[j * K + p]);
				}
				if (!pass)
					s = s * 0.5 * (1 + tanh(0.7978845608 * (s + 0.044715 * s * s * s)));
				ref[i * N + j] = pass ? round_to(SPYRE_FLOAT16, s) : s;
				mag[i * N + j] = 2 * m + fabs(s);
			}
		CHECK(compare(pass ? "cast" : "gelu", y, ref, mag, M * N,
			      pass ? SPYRE_FLOAT16 : SPYRE_FLOAT32, 4) < 0, "values");
		OK(spyre_compiled_destroy(k));
		OK(spyre_graph_destroy(g));
	}
	dt_free(&dx);
	dt_free(&dw);
	dt_free(&db);
	dt_free(&dy);
	dt_free(&dh);
	tctx_close(&cx);
}

/*
 * A reshape of a slice that torch.view could express is a view, not a
 * copy: the middle third of [8, 96] as [8, 4, 8] heads feeds its consumer
 * directly (one kernel); a reshape that needs a copy still makes one.
 */
TEST(graph_reshape_of_slice_is_a_view)
{
	int64_t sx[2] = { 8, 96 }, sh[3] = { 8, 4, 8 }, sf[1] = { 8 * 32 };
	double x[8 * 96], y[8 * 32];
	struct dtensor dx, dy, df;
	struct spyre_compiled_stats st;
	spyre_value vx, t, vy;
	spyre_compiled *k;
	spyre_graph *g;
	struct tctx c;
	int i, j;

	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &dx, SPYRE_FLOAT32, 2, sx));
	OK(dt_new(&c, &dy, SPYRE_FLOAT32, 3, sh));
	OK(dt_new(&c, &df, SPYRE_FLOAT32, 1, sf));
	rnd_fill(x, 8 * 96, -1, 1, 14, SPYRE_FLOAT32);
	OK(dt_write(&c, &dx, x));
	OK(spyre_graph_create(c.ops, &g));
	OK(spyre_graph_input(g, SPYRE_FLOAT32, 2, sx, &vx));
	OK(spyre_graph_slice(g, vx, 1, 32, 64, &t));
	OK(spyre_graph_reshape(g, t, 3, sh, &t));
	OK(spyre_graph_binary_scalar(g, SPYRE_BIN_MUL, t, 2, 0, &vy));
	OK(spyre_graph_output(g, vy));
	OK(spyre_graph_compile(g, &k));
	OK(spyre_compiled_get_stats(k, &st));
	CHECK(st.kernels == 1, "heads of a slice: %u kernels", st.kernels);
	OK(spyre_compiled_run(k, c.s, &dx.t, 1, &dy.t, 1));
	OK(spyre_stream_synchronize(c.s));
	OK(dt_read(&c, &dy, y));
	for (i = 0; i < 8; i++)
		for (j = 0; j < 32; j++)
			CHECK(y[i * 32 + j] == 2 * x[i * 96 + 32 + j], "element %d,%d", i, j);
	OK(spyre_compiled_destroy(k));
	OK(spyre_graph_destroy(g));
	/* [8, 32] flattened across rows that are 96 apart: a copy */
	OK(spyre_graph_create(c.ops, &g));
	OK(spyre_graph_input(g, SPYRE_FLOAT32, 2, sx, &vx));
	OK(spyre_graph_slice(g, vx, 1, 32, 64, &t));
	OK(spyre_graph_reshape(g, t, 1, sf, &vy));
	OK(spyre_graph_output(g, vy));
	OK(spyre_graph_compile(g, &k));
	OK(spyre_compiled_run(k, c.s, &dx.t, 1, &df.t, 1));
	OK(spyre_stream_synchronize(c.s));
	OK(dt_read(&c, &df, y));
	for (i = 0; i < 8; i++)
		for (j = 0; j < 32; j++)
			CHECK(y[i * 32 + j] == x[i * 96 + 32 + j], "flat element %d,%d", i, j);
	OK(spyre_compiled_destroy(k));
	OK(spyre_graph_destroy(g));
	dt_free(&dx);
	dt_free(&dy);
	dt_free(&df);
	tctx_close(&c);
}
