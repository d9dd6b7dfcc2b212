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
