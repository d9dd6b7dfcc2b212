// SPDX-License-Identifier: MIT
/* gather (torch.gather) along every dim, float and integer data, bad input. */
#include <errno.h>
#include <string.h>

#include "ops_ref.h"
#include "spyre_hw.h"

static bool iface(spyre_device *dev, unsigned int minor)
{
	struct spyre_device_props p;

	return !spyre_device_get_props(dev, &p) && p.hw_version >= SPYRE_HW_VERSION(1, minor);
}

/* x [3, 5, 7]; idx smaller than x outside @dim; out[i] = x[i with dim := idx[i]]. */
static void check_gather(struct tctx *c, enum spyre_dtype xdt, enum spyre_dtype idt, int dim,
			 const int64_t *ishape)
{
	static const int64_t xs[3] = { 3, 5, 7 };
	double x[105], idx[256], y[256];
	struct dtensor dx, di, dy;
	int64_t n = ishape[0] * ishape[1] * ishape[2], i;

	rnd_fill(x, 105, -1000, 1000, 11u + (unsigned int)dim, xdt);
	for (i = 0; i < n; i++)
		idx[i] = (double)((i * 7 + 3) % xs[dim]);
	OK(dt_new(c, &dx, xdt, 3, xs));
	OK(dt_new(c, &di, idt, 3, ishape));
	OK(dt_new(c, &dy, xdt, 3, ishape));
	OK(dt_write(c, &dx, x));
	OK(dt_write(c, &di, idx));
	OK(spyre_op_gather(c->ops, c->s, &dx.t, dim, &di.t, &dy.t));
	OK(dt_read(c, &dy, y));
	for (i = 0; i < n; i++) {
		int64_t p[3] = { i / (ishape[1] * ishape[2]), (i / ishape[2]) % ishape[1],
				 i % ishape[2] };

		p[dim] = (int64_t)idx[i];
		CHECK(y[i] == x[(p[0] * 5 + p[1]) * 7 + p[2]],
		      "gather %s dim %d element %lld: %g != %g", spyre_dtype_name(xdt), dim,
		      (long long)i, y[i], x[(p[0] * 5 + p[1]) * 7 + p[2]]);
	}
	dt_free(&dx);
	dt_free(&di);
	dt_free(&dy);
}

TEST(ops_gather)
{
	static const int64_t small[3][3] = { { 4, 5, 7 }, { 2, 9, 3 }, { 3, 4, 11 } };
	static const enum spyre_dtype xdts[] = { SPYRE_FLOAT32, SPYRE_FLOAT16, SPYRE_INT64 };
	struct tctx c;
	unsigned int k;
	int dim;

	if (!iface(dev, 3))
		return;
	OK(tctx_open(dev, &c));
	for (k = 0; k < 3; k++)
		for (dim = 0; dim < 3; dim++)
			check_gather(&c, xdts[k], k == 1 ? SPYRE_INT32 : SPYRE_INT64, dim,
				     small[dim]);
	tctx_close(&c);
}

TEST(ops_gather_bad_input)
{
	static const int64_t xs[2] = { 4, 6 }, big[2] = { 5, 6 }, flat[1] = { 6 };
	struct dtensor dx, di, dbig, dflat, dy, dyb;
	struct tctx c;

	if (!iface(dev, 3))
		return;
	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &dx, SPYRE_FLOAT32, 2, xs));
	OK(dt_new(&c, &di, SPYRE_FLOAT32, 2, xs));	/* float indices */
	OK(dt_new(&c, &dbig, SPYRE_INT64, 2, big));	/* larger than x outside dim 1 */
	OK(dt_new(&c, &dflat, SPYRE_INT64, 1, flat));	/* fewer dims than x */
	OK(dt_new(&c, &dy, SPYRE_FLOAT32, 2, xs));
	OK(dt_new(&c, &dyb, SPYRE_FLOAT32, 2, big));
	CHECK(spyre_op_gather(c.ops, c.s, &dx.t, 1, &di.t, &dy.t) == -EINVAL &&
	      strstr(spyre_last_error(), "int32 or int64"), "float index: %s", spyre_last_error());
	CHECK(spyre_op_gather(c.ops, c.s, &dx.t, 1, &dbig.t, &dyb.t) == -EINVAL &&
	      strstr(spyre_last_error(), "exceeds"), "large index: %s", spyre_last_error());
	CHECK(spyre_op_gather(c.ops, c.s, &dx.t, 0, &dflat.t, &dy.t) == -EINVAL,
	      "fewer dims: %s", spyre_last_error());
	CHECK(spyre_op_gather(c.ops, c.s, &dx.t, 2, &dbig.t, &dyb.t) == -EINVAL,
	      "dim out of range: %s", spyre_last_error());
	dt_free(&dx);
	dt_free(&di);
	dt_free(&dbig);
	dt_free(&dflat);
	dt_free(&dy);
	dt_free(&dyb);
	tctx_close(&c);
}
