// SPDX-License-Identifier: MIT
/*
 * Graph compiler: fusion (counted in kernels and programs), the workspace
 * plan, compiled against op-by-op results, and the acceptance decoder.
 */
#include <math.h>

#include "decoder.h"
#include "ops_ref.h"

static int run(struct tctx *c, spyre_compiled *k, struct dtensor *in, unsigned int nin,
	       struct dtensor *out, unsigned int nout)
{
	struct spyre_tensor ti[8], to[8];
	unsigned int i;
	int ret;

	for (i = 0; i < nin; i++)
		ti[i] = in[i].t;
	for (i = 0; i < nout; i++)
		to[i] = out[i].t;
	ret = spyre_compiled_run(k, c->s, ti, nin, to, nout);
	return ret ? ret : spyre_stream_synchronize(c->s);
}

/* y = silu(x @ w^T + b) * r; z = relu(x2 * 2 + 1) - x2; n = rms_norm(u + v) */
TEST(graph_fusion)
{
	int64_t sx[2] = { 40, 96 }, sw[2] = { 72, 96 }, sb[1] = { 72 }, sy[2] = { 40, 72 };
	int64_t n = 40 * 72, i, j, p;
	double x[40 * 96], w[72 * 96], b[72], r[40 * 72], y[40 * 72], ref[40 * 72], mag[40 * 72];
	struct dtensor dx, dw, db, dr, dy, dz;
	struct spyre_compiled_stats st;
	spyre_value vx, vw, vb, vr, t, vy, vz, vu, vv;
	spyre_compiled *k;
	spyre_graph *g;
	struct tctx c;

	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &dx, SPYRE_FLOAT32, 2, sx));
	OK(dt_new(&c, &dw, SPYRE_FLOAT32, 2, sw));
	OK(dt_new(&c, &db, SPYRE_FLOAT32, 1, sb));
	OK(dt_new(&c, &dr, SPYRE_FLOAT32, 2, sy));
	OK(dt_new(&c, &dy, SPYRE_FLOAT32, 2, sy));
	rnd_fill(x, 40 * 96, -1, 1, 1, SPYRE_FLOAT32);
	rnd_fill(w, 72 * 96, -1, 1, 2, SPYRE_FLOAT32);
	rnd_fill(b, 72, -1, 1, 3, SPYRE_FLOAT32);
	rnd_fill(r, n, -1, 1, 4, SPYRE_FLOAT32);
	OK(dt_write(&c, &dx, x));
	OK(dt_write(&c, &dw, w));
	OK(dt_write(&c, &db, b));
	OK(dt_write(&c, &dr, r));
	OK(spyre_graph_create(c.ops, &g));
	OK(spyre_graph_input(g, SPYRE_FLOAT32, 2, sx, &vx));
	OK(spyre_graph_input(g, SPYRE_FLOAT32, 2, sy, &vr));
	OK(spyre_graph_constant(g, &dw.t, &vw));
	OK(spyre_graph_constant(g, &db.t, &vb));
	OK(spyre_graph_linear(g, vx, vw, vb, &t));
	OK(spyre_graph_unary(g, SPYRE_UN_SILU, t, &t));
	OK(spyre_graph_binary(g, SPYRE_BIN_MUL, t, vr, &vy));
	OK(spyre_graph_output(g, vy));
	OK(spyre_graph_compile(g, &k));
	OK(spyre_compiled_get_stats(k, &st));
	CHECK(st.nodes == 4 && st.kernels == 1 && st.programs == 1 && st.submits == 1,
	      "linear+bias+silu+mul: %u nodes, %u kernels, %u programs, %u submits", st.nodes,
	      st.kernels, st.programs, st.submits);
	CHECK(st.workspace_bytes == 0, "no intermediates left: %llu",
	      (unsigned long long)st.workspace_bytes);
	{
		struct dtensor in[2] = { dx, dr };

		OK(run(&c, k, in, 2, &dy, 1));
	}
	OK(dt_read(&c, &dy, y));
	for (i = 0; i < 40; i++)
		for (j = 0; j < 72; j++) {
			double s = b[j], m = fabs(b[j]);

			for (p = 0; p < 96; p++) {
				s += x[i * 96 + p] * w[j * 96 + p];
				m += fabs(x[i * 96 + p] * w[j * 96 + p]);
			}
			ref[i * 72 + j] = s / (1 + exp(-s)) * r[i * 72 + j];
			mag[i * 72 + j] = m + fabs(ref[i * 72 + j]);
		}
	CHECK(compare("fused linear", y, ref, mag, n, SPYRE_FLOAT32, 1) < 0, "values");
	OK(spyre_compiled_destroy(k));
	OK(spyre_graph_destroy(g));

	/* an elementwise chain and a residual add before rms_norm: one kernel each */
	OK(spyre_graph_create(c.ops, &g));
	OK(spyre_graph_input(g, SPYRE_FLOAT32, 2, sy, &vu));
	OK(spyre_graph_input(g, SPYRE_FLOAT32, 2, sy, &vv));
	OK(spyre_graph_binary_scalar(g, SPYRE_BIN_MUL, vu, 2, 0, &t));
	OK(spyre_graph_binary_scalar(g, SPYRE_BIN_ADD, t, 1, 0, &t));
	OK(spyre_graph_unary(g, SPYRE_UN_RELU, t, &t));
	OK(spyre_graph_binary(g, SPYRE_BIN_SUB, t, vu, &vz));
	OK(spyre_graph_output(g, vz));
	OK(spyre_graph_binary(g, SPYRE_BIN_ADD, vu, vv, &t));
	OK(spyre_graph_rms_norm(g, t, -1, 1e-6, &t));
	OK(spyre_graph_output(g, t));
	OK(spyre_graph_compile(g, &k));
	OK(spyre_compiled_get_stats(k, &st));
	CHECK(st.nodes == 6 && st.kernels == 2 && st.submits == 1, "%u nodes, %u kernels",
	      st.nodes, st.kernels);
	OK(dt_new(&c, &dz, SPYRE_FLOAT32, 2, sy));
	{
		struct dtensor in[2] = { dr, dy }, out[2] = { dz, dx };
		int64_t sq[2] = { 40, 72 };

		dt_free(&dx);
		OK(dt_new(&c, &dx, SPYRE_FLOAT32, 2, sq));
		out[1] = dx;
		OK(run(&c, k, in, 2, out, 2));
	}
	OK(dt_read(&c, &dz, ref));
	for (i = 0; i < n; i++)
		mag[i] = fmax(r[i] * 2 + 1, 0) - r[i];
	CHECK(compare("chain", ref, mag, NULL, n, SPYRE_FLOAT32, 1) < 0, "chain values");
	OK(dt_read(&c, &dx, ref));
	for (i = 0; i < 40; i++) {
		double ms = 0;

		for (j = 0; j < 72; j++) {
			double s = r[i * 72 + j] + y[i * 72 + j];

			ms += s * s / 72;
		}
		for (j = 0; j < 72; j++)
			mag[i * 72 + j] = (r[i * 72 + j] + y[i * 72 + j]) / sqrt(ms + 1e-6);
	}
	CHECK(compare("add+rms_norm", ref, mag, NULL, n, SPYRE_FLOAT32, 4) < 0, "norm values");
	OK(spyre_compiled_destroy(k));
	OK(spyre_graph_destroy(g));
	dt_free(&dx);
	dt_free(&dw);
	dt_free(&db);
	dt_free(&dr);
	dt_free(&dy);
	dt_free(&dz);
	tctx_close(&c);
}

/* Rotary-style y = x * cos(p) + r * sin(p) and erf(x): one fused kernel (interface 1.4). */
TEST(graph_fusion_sin_cos_erf)
{
	int64_t sh[2] = { 33, 130 }, n = 33 * 130, i;
	double x[33 * 130], r[33 * 130], p[33 * 130], y[33 * 130], z[33 * 130], ref[33 * 130];
	struct dtensor dx, dr, dp, dy, dz;
	struct spyre_compiled_stats st;
	spyre_value vx, vr, vp, s, co, vy, vz;
	spyre_compiled *k;
	spyre_graph *g;
	struct tctx c;

	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &dx, SPYRE_FLOAT32, 2, sh));
	OK(dt_new(&c, &dr, SPYRE_FLOAT32, 2, sh));
	OK(dt_new(&c, &dp, SPYRE_FLOAT32, 2, sh));
	OK(dt_new(&c, &dy, SPYRE_FLOAT32, 2, sh));
	OK(dt_new(&c, &dz, SPYRE_FLOAT32, 2, sh));
	rnd_fill(x, n, -2, 2, 11, SPYRE_FLOAT32);
	rnd_fill(r, n, -2, 2, 12, SPYRE_FLOAT32);
	rnd_fill(p, n, -300, 300, 13, SPYRE_FLOAT32);
	OK(dt_write(&c, &dx, x));
	OK(dt_write(&c, &dr, r));
	OK(dt_write(&c, &dp, p));
	OK(spyre_graph_create(c.ops, &g));
	OK(spyre_graph_input(g, SPYRE_FLOAT32, 2, sh, &vx));
	OK(spyre_graph_input(g, SPYRE_FLOAT32, 2, sh, &vr));
	OK(spyre_graph_input(g, SPYRE_FLOAT32, 2, sh, &vp));
	OK(spyre_graph_unary(g, SPYRE_UN_COS, vp, &co));
	OK(spyre_graph_unary(g, SPYRE_UN_SIN, vp, &s));
	OK(spyre_graph_binary(g, SPYRE_BIN_MUL, vx, co, &co));
	OK(spyre_graph_binary(g, SPYRE_BIN_MUL, vr, s, &s));
	OK(spyre_graph_binary(g, SPYRE_BIN_ADD, co, s, &vy));
	OK(spyre_graph_output(g, vy));
	OK(spyre_graph_unary(g, SPYRE_UN_ERF, vx, &vz));
	OK(spyre_graph_output(g, vz));
	OK(spyre_graph_compile(g, &k));
	OK(spyre_compiled_get_stats(k, &st));
	CHECK(st.nodes == 6 && st.kernels <= 2 && st.submits == 1 && st.workspace_bytes == 0,
	      "rotary: %u nodes, %u kernels, %u submits, %llu ws", st.nodes, st.kernels,
	      st.submits, (unsigned long long)st.workspace_bytes);
	{
		struct dtensor in[3] = { dx, dr, dp }, out[2] = { dy, dz };

		OK(run(&c, k, in, 3, out, 2));
	}
	OK(dt_read(&c, &dy, y));
	OK(dt_read(&c, &dz, z));
	for (i = 0; i < n; i++)
		ref[i] = x[i] * cos(p[i]) + r[i] * sin(p[i]);
	CHECK(compare("rotary", y, ref, NULL, n, SPYRE_FLOAT32, 2) < 0, "rotary values");
	for (i = 0; i < n; i++)
		ref[i] = erf(x[i]);
	CHECK(compare("erf", z, ref, NULL, n, SPYRE_FLOAT32, 1) < 0, "erf values");
	OK(spyre_compiled_destroy(k));
	OK(spyre_graph_destroy(g));
	dt_free(&dx);
	dt_free(&dr);
	dt_free(&dp);
	dt_free(&dy);
	dt_free(&dz);
	tctx_close(&c);
}

/*
 * Rotary embedding as Llama writes it: y = x * cos + rotate_half(x) * sin
 * over a transposed x ([T, H, D] read as [H, T, D]), cos/sin [T, D]
 * broadcast over heads: one kernel reading x once, against the CPU, for
 * fp32/fp16/bf16 and an odd number of rows; an odd last dim and an
 * integer x are refused. With enough rows (256, 301) every core keeps its
 * rows of cos/sin over the heads (kernels/ew.c): held tiles are reused
 * only where they are the same rows, also when the rows do not split
 * evenly over the cores.
 */
TEST(graph_rotate_half)
{
	static const enum spyre_dtype dts[3] = { SPYRE_FLOAT32, SPYRE_FLOAT16, SPYRE_BFLOAT16 };
	static const int64_t rows[3] = { 37, 256, 301 };
	enum { TMAX = 301, H = 3, D = 66 };
	int64_t sodd[2] = { 4, 5 }, scs[2] = { 8, D };
	static double x[TMAX * H * D], co[TMAX * D], si[TMAX * D], y[H * TMAX * D],
		ref[H * TMAX * D];
	int64_t t, h, d;
	unsigned int di, ti;
	spyre_value vx, vc, vs, xt, r, a, b, vy, bad;
	struct spyre_compiled_stats st;
	spyre_compiled *k;
	spyre_graph *g;
	struct tctx c;

	OK(tctx_open(dev, &c));
	for (ti = 0; ti < 3; ti++)
		for (di = 0; di < 3; di++) {
			enum spyre_dtype dt = dts[di];
			int64_t T = rows[ti], n = T * H * D;
			int64_t sx[3] = { T, H, D }, sc[2] = { T, D }, sy[3] = { H, T, D };
			struct dtensor dx, dc, ds, dy;

			OK(dt_new(&c, &dx, dt, 3, sx));
			OK(dt_new(&c, &dc, dt, 2, sc));
			OK(dt_new(&c, &ds, dt, 2, sc));
			OK(dt_new(&c, &dy, dt, 3, sy));
			rnd_fill(x, n, -2, 2, 21 + di + 3 * ti, dt);
			rnd_fill(co, T * D, -1, 1, 31 + di + 3 * ti, dt);
			rnd_fill(si, T * D, -1, 1, 41 + di + 3 * ti, dt);
			OK(dt_write(&c, &dx, x));
			OK(dt_write(&c, &dc, co));
			OK(dt_write(&c, &ds, si));
			OK(spyre_graph_create(c.ops, &g));
			OK(spyre_graph_input(g, dt, 3, sx, &vx));
			OK(spyre_graph_input(g, dt, 2, sc, &vc));
			OK(spyre_graph_input(g, dt, 2, sc, &vs));
			OK(spyre_graph_transpose(g, vx, 0, 1, &xt));
			OK(spyre_graph_rotate_half(g, xt, &r));
			OK(spyre_graph_binary(g, SPYRE_BIN_MUL, xt, vc, &a));
			OK(spyre_graph_binary(g, SPYRE_BIN_MUL, r, vs, &b));
			OK(spyre_graph_binary(g, SPYRE_BIN_ADD, a, b, &vy));
			OK(spyre_graph_output(g, vy));
			OK(spyre_graph_compile(g, &k));
			OK(spyre_compiled_get_stats(k, &st));
			CHECK(st.kernels == 1 && st.submits == 1 && st.workspace_bytes == 0,
			      "rope %s: %u kernels, %u submits, %llu ws", spyre_dtype_name(dt), st.kernels,
			      st.submits, (unsigned long long)st.workspace_bytes);
			{
				struct dtensor in[3] = { dx, dc, ds };

				OK(run(&c, k, in, 3, &dy, 1));
			}
			OK(dt_read(&c, &dy, y));
			for (h = 0; h < H; h++)
				for (t = 0; t < T; t++)
					for (d = 0; d < D; d++) {
						double xv = x[(t * H + h) * D + d];
						double rv = d < D / 2 ? -x[(t * H + h) * D + d + D / 2] :
									x[(t * H + h) * D + d - D / 2];

						ref[(h * T + t) * D + d] = xv * co[t * D + d] +
									   rv * si[t * D + d];
					}
			CHECK(compare("rope", y, ref, NULL, n, dt, 4) < 0, "rope values (%s, %lld rows)",
			      spyre_dtype_name(dt), (long long)T);
			OK(spyre_compiled_destroy(k));
			OK(spyre_graph_destroy(g));
			dt_free(&dx);
			dt_free(&dc);
			dt_free(&ds);
			dt_free(&dy);
		}
	OK(spyre_graph_create(c.ops, &g));
	OK(spyre_graph_input(g, SPYRE_FLOAT32, 2, sodd, &bad));
	CHECK(spyre_graph_rotate_half(g, bad, &r) == -EINVAL, "an odd last dim is refused");
	OK(spyre_graph_input(g, SPYRE_INT32, 2, scs, &bad));
	CHECK(spyre_graph_rotate_half(g, bad, &r) == -EOPNOTSUPP, "int32 is refused");
	OK(spyre_graph_destroy(g));
	tctx_close(&c);
}

/*
 * Fused expressions reading one input: lerp as a framework writes it,
 * d = b - a, y = a + 0.4 * d, fuses into one kernel that loads a once.
 * In fp16/bf16 the subtraction reads a in its dtype and the later add next
 * to an fp32 product needs a's fp32 copy: both must read the same one (the
 * subtraction read the fp32 copy as fp16 once: -204.5 for 0.30). Odd
 * sizes, against the CPU in double.
 */
TEST(graph_fusion_shared_input)
{
	static const enum spyre_dtype dts[3] = { SPYRE_FLOAT32, SPYRE_FLOAT16, SPYRE_BFLOAT16 };
	enum { R = 37, C = 45 };
	int64_t sh[2] = { R, C }, n = R * C, i;
	static double a[R * C], b[R * C], y[R * C], ref[R * C];
	struct spyre_compiled_stats st;
	spyre_value va, vb, d, t, vy;
	unsigned int di;
	spyre_compiled *k;
	spyre_graph *g;
	struct tctx c;

	OK(tctx_open(dev, &c));
	for (di = 0; di < 3; di++) {
		enum spyre_dtype dt = dts[di];
		struct dtensor da, db, dy;

		OK(dt_new(&c, &da, dt, 2, sh));
		OK(dt_new(&c, &db, dt, 2, sh));
		OK(dt_new(&c, &dy, dt, 2, sh));
		rnd_fill(a, n, -8, 8, 51 + di, dt);
		rnd_fill(b, n, -8, 8, 61 + di, dt);
		OK(dt_write(&c, &da, a));
		OK(dt_write(&c, &db, b));
		OK(spyre_graph_create(c.ops, &g));
		OK(spyre_graph_input(g, dt, 2, sh, &va));
		OK(spyre_graph_input(g, dt, 2, sh, &vb));
		OK(spyre_graph_binary(g, SPYRE_BIN_SUB, vb, va, &d));
		OK(spyre_graph_binary_scalar(g, SPYRE_BIN_MUL, d, 0.4, 0, &t));
		OK(spyre_graph_binary(g, SPYRE_BIN_ADD, va, t, &vy));
		OK(spyre_graph_output(g, vy));
		OK(spyre_graph_compile(g, &k));
		OK(spyre_compiled_get_stats(k, &st));
		CHECK(st.kernels == 1 && st.workspace_bytes == 0, "lerp %s: %u kernels, %llu ws",
		      spyre_dtype_name(dt), st.kernels, (unsigned long long)st.workspace_bytes);
		{
			struct dtensor in[2] = { da, db };

			OK(run(&c, k, in, 2, &dy, 1));
		}
		OK(dt_read(&c, &dy, y));
		for (i = 0; i < n; i++)
			ref[i] = a[i] + 0.4 * (b[i] - a[i]);
		CHECK(compare("lerp", y, ref, NULL, n, dt, 4) < 0, "lerp values (%s)",
		      spyre_dtype_name(dt));
		OK(spyre_compiled_destroy(k));
		OK(spyre_graph_destroy(g));
		dt_free(&da);
		dt_free(&db);
		dt_free(&dy);
	}
	tctx_close(&c);
}

/* Matmul chain: intermediates die early, the plan reuses their space. */
TEST(graph_planner)
{
	int64_t sx[2] = { 64, 64 };
	struct spyre_compiled_stats st, st2;
	struct spyre_trace_span *spans = NULL;
	unsigned int nspans = 0;
	struct dtensor dx, dw, dy, dy2;
	spyre_value vx, vw, t;
	spyre_compiled *k, *k2;
	double *x = calloc(4096, 8), *y = calloc(4096, 8), *y2 = calloc(4096, 8);
	spyre_graph *g;
	struct tctx c;
	int i;

	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &dx, SPYRE_FLOAT32, 2, sx));
	OK(dt_new(&c, &dw, SPYRE_FLOAT32, 2, sx));
	OK(dt_new(&c, &dy, SPYRE_FLOAT32, 2, sx));
	OK(dt_new(&c, &dy2, SPYRE_FLOAT32, 2, sx));
	rnd_fill(x, 4096, -0.2, 0.2, 5, SPYRE_FLOAT32);
	OK(dt_write(&c, &dw, x));
	rnd_fill(x, 4096, -1, 1, 6, SPYRE_FLOAT32);
	OK(dt_write(&c, &dx, x));
	OK(spyre_graph_create(c.ops, &g));
	OK(spyre_graph_input(g, SPYRE_FLOAT32, 2, sx, &vx));
	OK(spyre_graph_constant(g, &dw.t, &vw));
	t = vx;
	for (i = 0; i < 6; i++) {
		OK(spyre_graph_matmul(g, t, vw, &t));
		OK(spyre_graph_softmax(g, t, -1, &t));
	}
	OK(spyre_graph_output(g, t));
	OK(spyre_graph_compile(g, &k));
	OK(spyre_graph_compile_flags(g, SPYRE_COMPILE_OP_BY_OP | SPYRE_COMPILE_NO_FUSION, &k2));
	OK(spyre_compiled_get_stats(k, &st));
	OK(spyre_compiled_get_stats(k2, &st2));
	CHECK(st.kernels == 12 && st.intermediate_bytes == 11 * 64 * 64 * 4,
	      "%u kernels, %llu intermediate bytes", st.kernels,
	      (unsigned long long)st.intermediate_bytes);
	CHECK(st.workspace_bytes == 2 * 64 * 64 * 4, "peak workspace %llu (two live buffers)",
	      (unsigned long long)st.workspace_bytes);
	CHECK(st2.submits == 12 && st.submits == 1, "op by op: %u submits", st2.submits);
	OK(run(&c, k, &dx, 1, &dy, 1));
	/* op by op, a trace names each kernel: shape, dtype, bytes bound */
	OK(spyre_trace_start(dev, NULL));
	OK(run(&c, k2, &dx, 1, &dy2, 1));
	OK(spyre_trace_stop_spans(dev, &spans, &nspans));
	ASSERT(spans && nspans == 12, "%u spans for 12 kernels", nspans);
	for (i = 0; i < 12; i += 2)
		CHECK(!strcmp(spans[i].name, "matmul 64x64x64 float32 49152B") &&
		      !strncmp(spans[i + 1].name, "softmax 64x64 float32 ", 22),
		      "kernels %d, %d are %s, %s", i, i + 1, spans[i].name, spans[i + 1].name);
	free(spans);
	OK(dt_read(&c, &dy, y));
	OK(dt_read(&c, &dy2, y2));
	CHECK(!memcmp(y, y2, 4096 * 8), "compiled and op-by-op results are identical");
	OK(spyre_compiled_destroy(k));
	OK(spyre_compiled_destroy(k2));
	OK(spyre_graph_destroy(g));
	dt_free(&dx);
	dt_free(&dw);
	dt_free(&dy);
	dt_free(&dy2);
	tctx_close(&c);
	free(x);
	free(y);
	free(y2);
}

TEST(graph_bad_inputs)
{
	int64_t s[2] = { 4, 4 }, s3[2] = { 3, 4 };
	struct spyre_device_stats d0, d1;
	struct dtensor a, b;
	spyre_value x, y, z;
	spyre_compiled *k;
	spyre_graph *g;
	struct tctx c;

	OK(tctx_open(dev, &c));
	OK(spyre_graph_create(c.ops, &g));
	OK(spyre_graph_input(g, SPYRE_FLOAT16, 2, s, &x));
	FAILS_WITH(spyre_graph_compile(g, &k), -EINVAL, "no outputs");
	FAILS_WITH(spyre_graph_unary(g, SPYRE_UN_EXP, 99, &y), -EINVAL, "not a value");
	FAILS_WITH(spyre_graph_matmul(g, x, x, NULL), -EINVAL, "NULL");
	OK(spyre_graph_input(g, SPYRE_FLOAT16, 2, s3, &y));
	FAILS_WITH(spyre_graph_binary(g, SPYRE_BIN_ADD, x, y, &z), -EINVAL, "broadcast");
	FAILS_WITH(spyre_graph_slice(g, x, 0, 2, 9, &z), -EINVAL, "outside");
	OK(spyre_graph_unary(g, SPYRE_UN_EXP, x, &z));
	OK(spyre_graph_output(g, z));
	OK(spyre_graph_compile(g, &k));
	OK(dt_new(&c, &a, SPYRE_FLOAT32, 2, s));
	OK(dt_new(&c, &b, SPYRE_FLOAT16, 2, s));
	OK(spyre_device_get_stats(dev, &d0));
	{
		struct spyre_tensor in[2] = { a.t, b.t }, out = b.t;

		FAILS_WITH(spyre_compiled_run(k, c.s, in, 2, &out, 1), -EINVAL,
			   "input 0 is float32");
		in[0] = b.t;
		FAILS_WITH(spyre_compiled_run(k, c.s, in, 1, &out, 1), -EINVAL, "the graph has 2");
	}
	OK(spyre_device_get_stats(dev, &d1));
	CHECK(d1.submits == d0.submits, "nothing launched");
	OK(spyre_compiled_destroy(k));
	OK(spyre_graph_destroy(g));
	dt_free(&a);
	dt_free(&b);
	tctx_close(&c);
}

/* The acceptance model: 2-layer GPT-style decoder, fp16, one recipe. */
static void decoder_case(spyre_device *dev, enum spyre_dtype dt, double tol)
{
	struct gpt_cfg cfg = { 96, 64, 4, 128, 2, 16, dt };
	int64_t sid[1] = { 16 }, so[2] = { 16, 96 };
	double ids_d[16], y[16 * 96], y2[16 * 96], ref[16 * 96], mx = 0, err = 0;
	struct spyre_compiled_stats st, st2;
	struct dtensor did, dy, dy2;
	spyre_compiled *k, *k2;
	spyre_value ids, logits;
	int32_t ids_i[16];
	spyre_graph *g;
	struct gpt w;
	struct tctx c;
	int i;

	OK(tctx_open(dev, &c));
	ASSERT(gpt_make(dev, &cfg, 7, &w) == 0, "weights: %s", spyre_last_error());
	for (i = 0; i < 16; i++) {
		ids_i[i] = (i * 37 + 11) % 96;
		ids_d[i] = ids_i[i];
	}
	OK(dt_new(&c, &did, SPYRE_INT32, 1, sid));
	OK(dt_new(&c, &dy, dt, 2, so));
	OK(dt_new(&c, &dy2, dt, 2, so));
	OK(dt_write(&c, &did, ids_d));
	OK(spyre_graph_create(c.ops, &g));
	OK(spyre_graph_input(g, SPYRE_INT32, 1, sid, &ids));
	OK(gpt_build(g, &w, ids, &logits));
	OK(spyre_graph_output(g, logits));
	OK(spyre_graph_compile(g, &k));
	OK(spyre_graph_compile_flags(g, SPYRE_COMPILE_OP_BY_OP | SPYRE_COMPILE_NO_FUSION, &k2));
	OK(spyre_compiled_get_stats(k, &st));
	OK(spyre_compiled_get_stats(k2, &st2));
	fprintf(stderr, "  decoder %s: %u nodes, %u kernels, %u programs, %u submits; op by op "
		"%u kernels %u submits; workspace %llu of %llu bytes\n", spyre_dtype_name(dt),
		st.nodes, st.kernels, st.programs, st.submits, st2.kernels, st2.submits,
		(unsigned long long)st.workspace_bytes, (unsigned long long)st.intermediate_bytes);
	CHECK(st.submits == 1, "one recipe, one submit per forward: %u", st.submits);
	CHECK(st.kernels < st2.kernels, "fusion removed kernels (%u vs %u)", st.kernels,
	      st2.kernels);
	CHECK(st.workspace_bytes < st.intermediate_bytes, "workspace reused");
	OK(run(&c, k, &did, 1, &dy, 1));
	OK(run(&c, k2, &did, 1, &dy2, 1));
	OK(dt_read(&c, &dy, y));
	OK(dt_read(&c, &dy2, y2));
	gpt_reference(&w, ids_i, ref);
	for (i = 0; i < 16 * 96; i++)
		mx = fmax(mx, fabs(ref[i]));
	for (i = 0; i < 16 * 96; i++)
		err = fmax(err, fabs(y[i] - ref[i]));
	fprintf(stderr, "  decoder %s: max |logit| %.4g, max error %.4g (%.3g%%)\n",
		spyre_dtype_name(dt), mx, err, 100 * err / mx);
	CHECK(err <= tol * mx, "decoder error %g above %g x max|logit| %g", err, tol, mx);
	for (i = 0, err = 0; i < 16 * 96; i++)
		err = fmax(err, fabs(y[i] - y2[i]));
	if (dt == SPYRE_FLOAT32)
		CHECK(err == 0, "fp32 compiled == op by op (max diff %g)", err);
	else
		CHECK(err <= tol * mx, "compiled vs op by op differ by %g", err);
	OK(spyre_compiled_destroy(k));
	OK(spyre_compiled_destroy(k2));
	OK(spyre_graph_destroy(g));
	dt_free(&did);
	dt_free(&dy);
	dt_free(&dy2);
	gpt_free(&w);
	tctx_close(&c);
}

TEST(graph_decoder_fp16)
{
	decoder_case(dev, SPYRE_FLOAT16, 4e-3);
}

TEST(graph_decoder_fp32)
{
	decoder_case(dev, SPYRE_FLOAT32, 1e-5);
}
