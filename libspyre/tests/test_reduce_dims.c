// SPDX-License-Identifier: MIT
/* Reductions over several dims in one call, against the host reference. */
#include <math.h>

#include "ops_ref.h"

/* Reference: reduce x [4, 6, 10] over the dims flagged in @red. */
static void ref_reduce(const double *x, const bool *red, unsigned int op, double *out,
		       double *mag)
{
	static const int64_t sh[3] = { 4, 6, 10 };
	int64_t i, j, k, o, cnt = 1;
	double acc[240];
	int d;

	for (d = 0; d < 3; d++)
		cnt *= red[d] ? sh[d] : 1;
	for (i = 0; i < 240; i++) {
		acc[i] = op == SPYRE_RED_MAX ? -INFINITY : op == SPYRE_RED_MIN ? INFINITY : 0;
		mag[i] = 0;
	}
	for (i = 0; i < 4; i++)
		for (j = 0; j < 6; j++)
			for (k = 0; k < 10; k++) {
				double v = x[(i * 6 + j) * 10 + k];

				o = ((red[0] ? 0 : i) * (red[1] ? 1 : 6) + (red[1] ? 0 : j)) *
					    (red[2] ? 1 : 10) + (red[2] ? 0 : k);
				if (op == SPYRE_RED_MAX)
					acc[o] = fmax(acc[o], v);
				else if (op == SPYRE_RED_MIN)
					acc[o] = fmin(acc[o], v);
				else
					acc[o] += v;
				mag[o] += fabs(v);
			}
	for (i = 0; i < 240; i++)
		out[i] = op == SPYRE_RED_MEAN ? acc[i] / cnt : acc[i];
}

TEST(ops_reduce_dims)
{
	static const int64_t sx[3] = { 4, 6, 10 };
	static const int sets[][3] = { { 0, 1, -1 }, { 1, 2, -1 }, { 0, 2, -1 }, { 2, 0, 1 },
				       { -1, -3, 9 } };
	static const unsigned int nsets[] = { 2, 2, 2, 3, 2 };
	double x[240], y[240], ref[240], mag[240];
	struct dtensor dx, dy, dt;
	struct tctx c;
	unsigned int k, op, i;
	int keep;

	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &dx, SPYRE_FLOAT32, 3, sx));
	rnd_fill(x, 240, -3, 3, 21, SPYRE_FLOAT32);
	OK(dt_write(&c, &dx, x));
	for (k = 0; k < 5; k++) {
		bool red[3] = { false };
		int64_t os[3], ks[3];
		unsigned int ond = 0, d;

		for (i = 0; i < nsets[k]; i++)
			red[(sets[k][i] + 3) % 3] = true;
		for (d = 0; d < 3; d++) {
			ks[d] = red[d] ? 1 : sx[d];
			if (!red[d])
				os[ond++] = sx[d];
		}
		for (keep = 0; keep < 2; keep++) {
			OK(dt_new(&c, &dy, SPYRE_FLOAT32, keep ? 3 : ond, keep ? ks : os));
			for (op = 0; op < SPYRE_RED_COUNT; op++) {
				OK(spyre_op_reduce_dims(c.ops, c.s, op, &dx.t, sets[k], nsets[k],
							keep, &dy.t));
				OK(dt_read(&c, &dy, y));
				ref_reduce(x, red, op, ref, mag);
				CHECK(compare("reduce_dims", y, ref,
					      op == SPYRE_RED_SUM ? mag : NULL,
					      spyre_tensor_numel(&dy.t), SPYRE_FLOAT32, 2) < 0,
				      "set %u keep %d op %u", k, keep, op);
			}
			dt_free(&dy);
		}
	}
	/* all dims (ndims 0): a 0-dim result; on a transposed (non-mergeable) view */
	OK(dt_new(&c, &dy, SPYRE_FLOAT32, 0, NULL));
	OK(spyre_op_reduce_dims(c.ops, c.s, SPYRE_RED_MEAN, &dx.t, NULL, 0, 0, &dy.t));
	OK(dt_read(&c, &dy, y));
	{
		bool all[3] = { true, true, true };

		ref_reduce(x, all, SPYRE_RED_MEAN, ref, mag);
		CHECK(fabs(y[0] - ref[0]) < 1e-5, "mean of all: %g vs %g", y[0], ref[0]);
	}
	dt = dx;
	dt.t.shape[0] = 10;
	dt.t.shape[2] = 4;
	dt.t.strides[0] = 1;
	dt.t.strides[2] = 60;	/* x viewed [10, 6, 4] (dims 0 and 2 swapped) */
	{
		int64_t s1[1] = { 4 };
		int dd[2] = { 0, 1 };
		bool red[3] = { false, true, true };

		dt_free(&dy);
		OK(dt_new(&c, &dy, SPYRE_FLOAT32, 1, s1));
		OK(spyre_op_reduce_dims(c.ops, c.s, SPYRE_RED_MAX, &dt.t, dd, 2, 0, &dy.t));
		OK(dt_read(&c, &dy, y));
		ref_reduce(x, red, SPYRE_RED_MAX, ref, mag);
		CHECK(compare("transposed", y, ref, NULL, 4, SPYRE_FLOAT32, 1) < 0, "values");
	}
	/* bad input */
	{
		int twice[2] = { 1, -2 };

		FAILS_WITH(spyre_op_reduce_dims(c.ops, c.s, SPYRE_RED_SUM, &dx.t, twice, 2, 0,
						&dy.t), -EINVAL, "twice");
	}
	dt_free(&dy);
	dt_free(&dx);
	tctx_close(&c);
}

/*
 * A reduction over an empty dim writes the identity into every element of
 * its (non-empty) output: 0 for sum, NaN for mean (0 / 0), as PyTorch; amax
 * and amin have none and are refused. The output starts as other data, so
 * a kernel that writes nothing is seen.
 */
TEST(ops_reduce_empty_dim)
{
	static const int64_t sx[2] = { 5, 0 }, so[1] = { 5 }, sk[2] = { 5, 1 };
	static const enum spyre_dtype dts[] = { SPYRE_FLOAT32, SPYRE_FLOAT16, SPYRE_INT32,
						SPYRE_INT64 };
	static const int d1[1] = { 1 }, d01[2] = { 0, 1 };
	double junk[5] = { 7, 7, 7, 7, 7 }, y[5];
	struct dtensor dx, dy, dk, ds;
	struct tctx c;
	unsigned int t, op, i;

	OK(tctx_open(dev, &c));
	for (t = 0; t < sizeof(dts) / sizeof(dts[0]); t++) {
		bool fl = dts[t] == SPYRE_FLOAT32 || dts[t] == SPYRE_FLOAT16;

		OK(dt_new(&c, &dx, dts[t], 2, sx));
		OK(dt_new(&c, &dy, dts[t], 1, so));
		OK(dt_new(&c, &dk, dts[t], 2, sk));
		OK(dt_new(&c, &ds, dts[t], 0, NULL));
		for (op = 0; op < SPYRE_RED_COUNT; op++) {
			double want = op == SPYRE_RED_MEAN ? NAN : 0;

			if (op == SPYRE_RED_MEAN && !fl)
				continue;
			if (op == SPYRE_RED_MAX || op == SPYRE_RED_MIN) {
				FAILS_WITH(spyre_op_reduce(c.ops, c.s, op, &dx.t, 1, 0, &dy.t),
					   -EINVAL, "empty dim");
				continue;
			}
			OK(dt_write(&c, &dy, junk));
			OK(spyre_op_reduce(c.ops, c.s, op, &dx.t, 1, 0, &dy.t));
			OK(dt_read(&c, &dy, y));
			for (i = 0; i < 5; i++)
				CHECK(op == SPYRE_RED_MEAN ? isnan(y[i]) : y[i] == want,
				      "dtype %u op %u [%u]: %g", t, op, i, y[i]);
			OK(dt_write(&c, &dk, junk));
			OK(spyre_op_reduce_dims(c.ops, c.s, op, &dx.t, d1, 1, 1, &dk.t));
			OK(dt_read(&c, &dk, y));
			for (i = 0; i < 5; i++)
				CHECK(op == SPYRE_RED_MEAN ? isnan(y[i]) : y[i] == want,
				      "keepdim: dtype %u op %u [%u]: %g", t, op, i, y[i]);
			OK(dt_write(&c, &ds, junk));
			OK(spyre_op_reduce_dims(c.ops, c.s, op, &dx.t, d01, 2, 0, &ds.t));
			OK(dt_read(&c, &ds, y));
			CHECK(op == SPYRE_RED_MEAN ? isnan(y[0]) : y[0] == want,
			      "all dims: dtype %u op %u: %g", t, op, y[0]);
		}
		dt_free(&ds);
		dt_free(&dk);
		dt_free(&dy);
		dt_free(&dx);
	}
	tctx_close(&c);
}
