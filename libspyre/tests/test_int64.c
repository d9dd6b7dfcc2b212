// SPDX-License-Identifier: MIT
/* int64 (an 8-byte element of the card from interface 1.9) casts, copies and fills; arange. */
#include <math.h>

#include "ops_ref.h"
#include "spyre_hw.h"

static bool iface(spyre_device *dev, unsigned int minor)
{
	struct spyre_device_props p;

	return !spyre_device_get_props(dev, &p) && p.hw_version >= SPYRE_HW_VERSION(1, minor);
}

/* int32 <-> int64 over the whole int32 range, both directions and through a strided view. */
TEST(ops_int64_casts)
{
	static const int64_t sh[2] = { 5, 37 };
	int64_t n = 5 * 37, i, wide[2] = { 5, 74 };
	double x[5 * 37], y[5 * 37], w[5 * 74];
	struct dtensor d32, d64, b32, dwide, df;
	struct spyre_tensor view;
	struct tctx c;

	if (!iface(dev, 9))
		return;
	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &d32, SPYRE_INT32, 2, sh));
	OK(dt_new(&c, &d64, SPYRE_INT64, 2, sh));
	OK(dt_new(&c, &b32, SPYRE_INT32, 2, sh));
	OK(dt_new(&c, &df, SPYRE_FLOAT32, 2, sh));
	OK(dt_new(&c, &dwide, SPYRE_INT64, 2, wide));
	for (i = 0; i < n; i++)	/* spread over +-2^31, plus the edges */
		x[i] = (double)(int32_t)((uint32_t)i * 2654435761u);
	x[0] = 0;
	x[1] = -1;
	x[2] = 2147483647.0;
	x[3] = -2147483648.0;
	x[4] = (1 << 24) + 1;	/* not an fp32 value: the copy must be a bit copy */
	OK(dt_write(&c, &d32, x));
	OK(spyre_op_copy(c.ops, c.s, &d32.t, &d64.t));
	OK(dt_read(&c, &d64, y));
	for (i = 0; i < n; i++)
		CHECK(y[i] == x[i], "int32->int64 element %lld: %.0f != %.0f", (long long)i, y[i],
		      x[i]);
	/* int64 -> int32 and int64 -> int64 into a strided (every other column) view */
	OK(spyre_op_copy(c.ops, c.s, &d64.t, &b32.t));
	OK(dt_read(&c, &b32, y));
	for (i = 0; i < n; i++)
		CHECK(y[i] == x[i], "int64->int32 element %lld", (long long)i);
	for (i = 0; i < 5 * 74; i++)
		w[i] = 7;
	OK(dt_write(&c, &dwide, w));
	view = dwide.t;
	view.shape[1] = 37;
	view.strides[1] = 2;
	OK(spyre_op_copy(c.ops, c.s, &d64.t, &view));
	OK(dt_read(&c, &dwide, w));
	for (i = 0; i < n; i++) {
		CHECK(w[(i / 37) * 74 + (i % 37) * 2] == x[i], "strided int64 element %lld",
		      (long long)i);
		CHECK(w[(i / 37) * 74 + (i % 37) * 2 + 1] == 7, "gap %lld overwritten",
		      (long long)i);
	}
	/* float -> int64 truncates toward zero (PyTorch); int64 -> float rounds */
	for (i = 0; i < n; i++)
		x[i] = (i - 90) * 1234.5 + (i % 3 ? 0.25 : -0.75);
	x[5] = -0.5;
	x[6] = -0.25;
	x[7] = -0.75;
	OK(dt_write(&c, &df, x));
	OK(spyre_op_copy(c.ops, c.s, &df.t, &d64.t));
	OK(dt_read(&c, &d64, y));
	for (i = 0; i < n; i++)
		CHECK(y[i] == trunc((float)x[i]), "float->int64 %lld: %.1f -> %.0f",
		      (long long)i, x[i], y[i]);
	OK(spyre_op_copy(c.ops, c.s, &d64.t, &df.t));
	OK(dt_read(&c, &df, x));
	for (i = 0; i < n; i++)
		CHECK(x[i] == y[i], "int64->float %lld", (long long)i);
	/* bad input: an unsupported op on int64 still says so */
	FAILS_WITH(spyre_op_unary(c.ops, c.s, SPYRE_UN_EXP, &d64.t, &d64.t), -EOPNOTSUPP,
		   "int64");
	dt_free(&d32);
	dt_free(&d64);
	dt_free(&b32);
	dt_free(&df);
	dt_free(&dwide);
	tctx_close(&c);
}

TEST(ops_int64_fill)
{
	static const int64_t sh[3] = { 3, 4, 129 };
	int64_t n = 3 * 4 * 129, i;
	double *y = calloc(n, sizeof(double));
	struct dtensor d;
	struct tctx c;

	ASSERT(y, "alloc");
	if (!iface(dev, 9)) {
		free(y);
		return;
	}
	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &d, SPYRE_INT64, 3, sh));
	OK(spyre_op_fill(c.ops, c.s, -100, &d.t));
	OK(dt_read(&c, &d, y));
	for (i = 0; i < n; i++)
		CHECK(y[i] == -100, "fill element %lld: %.0f", (long long)i, y[i]);
	OK(spyre_op_fill(c.ops, c.s, 16777217, &d.t));
	OK(dt_read(&c, &d, y));
	CHECK(y[0] == 16777217 && y[n - 1] == 16777217, "2^24 + 1");
	OK(spyre_op_fill(c.ops, c.s, -1099511627779.0, &d.t));	/* -(2^40 + 3) */
	OK(dt_read(&c, &d, y));
	CHECK(y[0] == -1099511627779.0 && y[n - 1] == -1099511627779.0, "-(2^40 + 3)");
	/* what a double does not hold exactly is refused, never rounded */
	FAILS_WITH(spyre_op_fill(c.ops, c.s, 1e300, &d.t), -EOPNOTSUPP, "2^53");
	FAILS_WITH(spyre_op_fill(c.ops, c.s, 0.5, &d.t), -EOPNOTSUPP, "fill of int64");
	dt_free(&d);
	tctx_close(&c);
	free(y);
}

TEST(ops_arange)
{
	static const enum spyre_dtype dts[] = { SPYRE_FLOAT32, SPYRE_FLOAT16, SPYRE_BFLOAT16,
						SPYRE_INT32, SPYRE_INT64 };
	static const struct { double start, step; int64_t n; } cs[] = {
		{ 0, 1, 1 }, { 0, 1, 1000 }, { -7, 3, 4099 }, { 5, -2, 77 }, { 2048, 1, 3 },
		{ 4, 1, 0 },
	};
	double y[4099], r[4099];
	struct dtensor d;
	unsigned int k, j;
	struct tctx c;
	int64_t i;

	OK(tctx_open(dev, &c));
	for (j = 0; j < sizeof(dts) / sizeof(dts[0]); j++) {
		if (dts[j] == SPYRE_INT64 && !iface(dev, 9))
			continue;
		for (k = 0; k < sizeof(cs) / sizeof(cs[0]); k++) {
			OK(dt_new(&c, &d, dts[j], 1, &cs[k].n));
			OK(spyre_op_arange(c.ops, c.s, cs[k].start, cs[k].step, &d.t));
			OK(dt_read(&c, &d, y));
			for (i = 0; i < cs[k].n; i++)
				r[i] = round_to(dts[j], cs[k].start + (double)i * cs[k].step);
			CHECK(compare("arange", y, r, NULL, cs[k].n, dts[j], 1) < 0,
			      "arange %s case %u", spyre_dtype_name(dts[j]), k);
			dt_free(&d);
		}
	}
	/* float steps: fp32 i * step + start, one ulp-level rounding from double */
	{
		int64_t n = 300;

		OK(dt_new(&c, &d, SPYRE_FLOAT32, 1, &n));
		OK(spyre_op_arange(c.ops, c.s, -1.5, 0.1, &d.t));
		OK(dt_read(&c, &d, y));
		for (i = 0; i < n; i++)
			r[i] = -1.5 + i * 0.1;
		CHECK(compare("arange 0.1", y, r, NULL, n, SPYRE_FLOAT32, 1) < 0, "float step");
		FAILS_WITH(spyre_op_arange(c.ops, c.s, 0, NAN, &d.t), -EINVAL, "step");
		dt_free(&d);
		OK(dt_new(&c, &d, SPYRE_INT32, 1, &n));
		FAILS_WITH(spyre_op_arange(c.ops, c.s, 0, 0.5, &d.t), -EOPNOTSUPP, "0.5");
		/* beyond fp32's integers: exact in the integer mode */
		OK(spyre_op_arange(c.ops, c.s, 1 << 24, 3, &d.t));
		OK(dt_read(&c, &d, y));
		for (i = 0; i < n; i++)
			CHECK(y[i] == (double)(1 << 24) + 3.0 * (double)i, "arange %lld: %.0f",
			      (long long)i, y[i]);
		dt_free(&d);
		OK(dt_new(&c, &d, SPYRE_INT8, 1, &n));
		FAILS_WITH(spyre_op_arange(c.ops, c.s, 0, 1, &d.t), -EOPNOTSUPP, "int8");
		dt_free(&d);
	}
	tctx_close(&c);
}

/* Graph: position ids = arange(int64) + offset, embedding by them, cast back. */
TEST(graph_arange_int64)
{
	int64_t n = 40, sw[2] = { 64, 8 }, so[2] = { 40, 8 }, i, j;
	double w[64 * 8], y[40 * 8], ids[40];
	struct dtensor dw, dy, di;
	spyre_value vw, p, e, p32;
	spyre_compiled *k;
	spyre_graph *g;
	struct tctx c;

	if (!iface(dev, 9))
		return;
	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &dw, SPYRE_FLOAT32, 2, sw));
	OK(dt_new(&c, &dy, SPYRE_FLOAT32, 2, so));
	OK(dt_new(&c, &di, SPYRE_INT64, 1, &n));
	rnd_fill(w, 64 * 8, -1, 1, 5, SPYRE_FLOAT32);
	OK(dt_write(&c, &dw, w));
	OK(spyre_graph_create(c.ops, &g));
	OK(spyre_graph_constant(g, &dw.t, &vw));
	OK(spyre_graph_arange(g, 3, 1, n, SPYRE_INT64, &p));
	OK(spyre_graph_embedding(g, vw, p, &e));
	OK(spyre_graph_output(g, e));
	OK(spyre_graph_cast(g, p, SPYRE_INT32, &p32));
	OK(spyre_graph_cast(g, p32, SPYRE_INT64, &p));
	OK(spyre_graph_output(g, p));
	OK(spyre_graph_compile(g, &k));
	{
		struct spyre_tensor outs[2] = { dy.t, di.t };

		OK(spyre_compiled_run(k, c.s, NULL, 0, outs, 2));
		OK(spyre_stream_synchronize(c.s));
	}
	OK(dt_read(&c, &dy, y));
	OK(dt_read(&c, &di, ids));
	for (i = 0; i < n; i++) {
		CHECK(ids[i] == i + 3, "position id %lld: %.0f", (long long)i, ids[i]);
		for (j = 0; j < 8; j++)
			CHECK(y[i * 8 + j] == w[(i + 3) * 8 + j], "row %lld", (long long)i);
	}
	OK(spyre_compiled_destroy(k));
	OK(spyre_graph_destroy(g));
	dt_free(&dw);
	dt_free(&dy);
	dt_free(&di);
	tctx_close(&c);
}

/*
 * Casts of an int64 value while the graph's value table grows: every one
 * keeps the shape it was given (the low-word view used to read the shape
 * from the table after growing it; ASan reports the stale read).
 */
TEST(graph_int64_casts_while_values_grow)
{
	int64_t sh[3] = { 2, 5, 7 }, got[SPYRE_MAX_DIMS];
	spyre_value x, f, y;
	enum spyre_dtype dt;
	unsigned int nd;
	spyre_graph *g;
	struct tctx c;
	int i;

	if (!iface(dev, 4))
		return;
	OK(tctx_open(dev, &c));
	OK(spyre_graph_create(c.ops, &g));
	OK(spyre_graph_input(g, SPYRE_INT64, 3, sh, &x));
	for (i = 0; i < 300; i++) {
		OK(spyre_graph_cast(g, x, SPYRE_FLOAT32, &f));
		OK(spyre_graph_cast(g, f, SPYRE_INT64, &y));
		OK(spyre_graph_value_info(g, f, &dt, &nd, got));
		CHECK(dt == SPYRE_FLOAT32 && nd == 3 && got[0] == 2 && got[1] == 5 && got[2] == 7,
		      "cast %d: %u dims, %lld x %lld x %lld", i, nd, (long long)got[0],
		      (long long)got[1], (long long)got[2]);
	}
	OK(spyre_graph_destroy(g));
	tctx_close(&c);
}
