// SPDX-License-Identifier: MIT
/* Eager ops against the host reference (double precision). */
#include <math.h>

#include "ops_ref.h"

static const enum spyre_dtype fdt[] = { SPYRE_FLOAT32, SPYRE_FLOAT16, SPYRE_BFLOAT16 };

static double ref_unary(enum spyre_unary_op op, double x)
{
	switch (op) {
	case SPYRE_UN_NEG:
		return -x;
	case SPYRE_UN_ABS:
		return fabs(x);
	case SPYRE_UN_EXP:
		return exp(x);
	case SPYRE_UN_LOG:
		return log(x);
	case SPYRE_UN_SQRT:
		return sqrt(x);
	case SPYRE_UN_RSQRT:
		return 1 / sqrt(x);
	case SPYRE_UN_RECIPROCAL:
		return 1 / x;
	case SPYRE_UN_TANH:
		return tanh(x);
	case SPYRE_UN_SIGMOID:
		return 1 / (1 + exp(-x));
	case SPYRE_UN_RELU:
		return x > 0 ? x : 0;
	case SPYRE_UN_GELU:
		return 0.5 * x * (1 + erf(x / sqrt(2)));
	case SPYRE_UN_GELU_TANH:
		return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
	case SPYRE_UN_SILU:
		return x / (1 + exp(-x));
	case SPYRE_UN_SQUARE:
		return x * x;
	default:
		return NAN;
	}
}

static double ref_binary(enum spyre_binary_op op, double a, double b)
{
	switch (op) {
	case SPYRE_BIN_ADD:
		return a + b;
	case SPYRE_BIN_SUB:
		return a - b;
	case SPYRE_BIN_MUL:
		return a * b;
	case SPYRE_BIN_DIV:
		return a / b;
	case SPYRE_BIN_MAX:
		return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
	default:
		return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
	}
}

TEST(ops_unary)
{
	static const int64_t shape[] = { 3, 67 };
	int64_t n = numel(2, shape), i;
	double *x = calloc(n, sizeof(double)), *y = calloc(n, sizeof(double));
	double *r = calloc(n, sizeof(double));
	struct dtensor dx, dy;
	struct tctx c;
	unsigned int d, op;

	ASSERT(x && y && r, "alloc");
	OK(tctx_open(dev, &c));
	for (d = 0; d < 3; d++) {
		OK(dt_new(&c, &dx, fdt[d], 2, shape));
		OK(dt_new(&c, &dy, fdt[d], 2, shape));
		for (op = 0; op < SPYRE_UN_SIN; op++) {
			bool pos = op == SPYRE_UN_LOG || op == SPYRE_UN_SQRT || op == SPYRE_UN_RSQRT;

			rnd_fill(x, n, pos ? 0.05 : -4, 4, op + 10 * d, fdt[d]);
			x[0] = 0.0;
			if (pos)
				x[0] = 1.0;
			OK(dt_write(&c, &dx, x));
			OK(spyre_op_unary(c.ops, c.s, op, &dx.t, &dy.t));
			OK(dt_read(&c, &dy, y));
			for (i = 0; i < n; i++)
				r[i] = round_to(fdt[d], ref_unary(op, x[i]));
			CHECK(compare("unary", y, r, NULL, n, fdt[d], 2) < 0, "op %u dtype %s", op,
			      spyre_dtype_name(fdt[d]));
		}
		/* no card function: refused, naming op, shape and dtype */
		FAILS_WITH(spyre_op_unary(c.ops, c.s, SPYRE_UN_SIN, &dx.t, &dy.t), -EOPNOTSUPP,
			   "sin of");
		CHECK(strstr(spyre_last_error(), "[3, 67]") &&
		      strstr(spyre_last_error(), spyre_dtype_name(fdt[d])), "message names shape");
		dt_free(&dx);
		dt_free(&dy);
	}
	tctx_close(&c);
	free(x);
	free(y);
	free(r);
}

/* out = a op b over NumPy broadcasting, a and b of the given shapes. */
static void binary_case(struct tctx *c, enum spyre_dtype dt, unsigned int na, const int64_t *sa,
			unsigned int nb, const int64_t *sb)
{
	int64_t so[6], n, i, na_ = numel(na, sa), nb_ = numel(nb, sb);
	unsigned int no = na > nb ? na : nb, d, op;
	double *a = calloc(na_ + 1, 8), *b = calloc(nb_ + 1, 8), *y, *r;
	struct dtensor da, db, dy;

	for (d = 0; d < no; d++) {
		int64_t x = d < no - na ? 1 : sa[d - (no - na)];
		int64_t z = d < no - nb ? 1 : sb[d - (no - nb)];

		so[d] = x == 1 ? z : x;
	}
	n = numel(no, so);
	y = calloc(n + 1, 8);
	r = calloc(n + 1, 8);
	if (dt_new(c, &da, dt, na, sa) || dt_new(c, &db, dt, nb, sb) ||
	    dt_new(c, &dy, dt, no, so)) {
		CHECK(0, "tensors");
		return;
	}
	rnd_fill(a, na_, -3, 3, 1, dt);
	rnd_fill(b, nb_, 0.5, 3, 2, dt);
	dt_write(c, &da, a);
	dt_write(c, &db, b);
	for (op = 0; op < SPYRE_BIN_COUNT; op++) {
		int ret = spyre_op_binary(c->ops, c->s, op, &da.t, &db.t, &dy.t);

		CHECK(ret == 0, "binary op %u", op);
		dt_read(c, &dy, y);
		for (i = 0; i < n; i++) {
			int64_t ia = 0, ib = 0, rem = i, sta = 1, stb = 1;
			int dd;

			for (dd = (int)no - 1; dd >= 0; dd--) {
				int64_t idx = rem % so[dd];
				int ka = dd - (int)(no - na), kb = dd - (int)(no - nb);

				rem /= so[dd];
				if (ka >= 0) {
					ia += (sa[ka] == 1 ? 0 : idx) * sta;
					sta *= sa[ka];
				}
				if (kb >= 0) {
					ib += (sb[kb] == 1 ? 0 : idx) * stb;
					stb *= sb[kb];
				}
			}
			r[i] = round_to(dt, ref_binary(op, a[ia], b[ib]));
		}
		CHECK(compare("binary", y, r, NULL, n, dt, 1) < 0, "op %u %s", op,
		      spyre_dtype_name(dt));
	}
	dt_free(&da);
	dt_free(&db);
	dt_free(&dy);
	free(a);
	free(b);
	free(y);
	free(r);
}

TEST(ops_binary_broadcast)
{
	static const int64_t s1[] = { 4, 1, 33 }, s2[] = { 5, 33 }, s3[] = { 7, 1 },
			     s4[] = { 1, 9 }, s5[] = { 1 }, s6[] = { 2, 3, 130 }, s7[] = { 3, 1 };
	struct tctx c;
	unsigned int d;

	OK(tctx_open(dev, &c));
	for (d = 0; d < 3; d++) {
		binary_case(&c, fdt[d], 3, s1, 2, s2);	/* [4,5,33] */
		binary_case(&c, fdt[d], 2, s3, 2, s4);	/* col op row: [7,9] */
		binary_case(&c, fdt[d], 2, s4, 2, s3);
		binary_case(&c, fdt[d], 1, s5, 3, s6);	/* scalar op tensor */
		binary_case(&c, fdt[d], 3, s6, 2, s7);	/* per-row values */
		binary_case(&c, fdt[d], 2, s7, 3, s6);
	}
	tctx_close(&c);
}
