// SPDX-License-Identifier: MIT
/*
 * Exact integer ops (card interface 1.9, the vector unit's integer mode):
 * int32 and int64 arithmetic wrapping at their bounds, comparisons of
 * values that differ only above 2^24 or 2^32, bitwise ops and shifts,
 * floor division and remainder (by zero: -EDOM, never a value), casts,
 * reductions, selections, against a host reference in 64-bit integers.
 * Values travel as raw bytes: a double cannot carry them.
 */
#include <math.h>

#include "ops_ref.h"
#include "spyre_hw.h"

#define N 12

static bool has_int(spyre_device *dev)
{
	struct spyre_device_props p;

	return !spyre_device_get_props(dev, &p) && p.hw_version >= SPYRE_HW_VERSION(1, 9);
}

/* Interesting int64 values: bounds, around 2^24 and 2^32, signs. */
static const int64_t va[N] = { INT64_MAX, INT64_MIN, (1ll << 40) + 3, (1 << 24) + 1, -7,
			       7, 0, (1ll << 32) + 1, -(1ll << 32), 46341, INT32_MIN, -1 };
static const int64_t vb[N] = { 1, -1, 1, 1 << 24, 2, -2, 5, 1ll << 32, -(1ll << 32) + 1,
			       46341, -1, 63 };

static int64_t wrap(int64_t v, bool i32)
{
	return i32 ? (int64_t)(int32_t)(uint32_t)v : v;
}

static int64_t fdiv(int64_t a, int64_t b)
{
	int64_t q;

	if (b == -1)
		return (int64_t)(0 - (uint64_t)a);
	q = a / b;
	return (a % b && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static int64_t fmod_(int64_t a, int64_t b)
{
	int64_t r;

	if (b == -1)
		return 0;
	r = a % b;
	return (r && ((r < 0) != (b < 0))) ? r + b : r;
}

static int64_t ref(enum spyre_binary_op op, int64_t a, int64_t b, bool i32)
{
	uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
	unsigned int w = i32 ? 32 : 64;

	switch (op) {
	case SPYRE_BIN_ADD: return wrap((int64_t)(ua + ub), i32);
	case SPYRE_BIN_SUB: return wrap((int64_t)(ua - ub), i32);
	case SPYRE_BIN_MUL: return wrap((int64_t)(ua * ub), i32);
	case SPYRE_BIN_MAX: return a > b ? a : b;
	case SPYRE_BIN_MIN: return a < b ? a : b;
	case SPYRE_BIN_EQ: return a == b;
	case SPYRE_BIN_NE: return a != b;
	case SPYRE_BIN_LT: return a < b;
	case SPYRE_BIN_LE: return a <= b;
	case SPYRE_BIN_GT: return a > b;
	case SPYRE_BIN_GE: return a >= b;
	case SPYRE_BIN_BITWISE_AND: return a & b;
	case SPYRE_BIN_BITWISE_OR: return a | b;
	case SPYRE_BIN_BITWISE_XOR: return a ^ b;
	case SPYRE_BIN_FLOOR_DIVIDE: return wrap(fdiv(a, b), i32);
	case SPYRE_BIN_REMAINDER: return fmod_(a, b);
	case SPYRE_BIN_LSHIFT: return b < 0 || b >= w ? 0 : wrap((int64_t)(ua << b), i32);
	case SPYRE_BIN_RSHIFT: return b < 0 || b >= w ? (a < 0 ? -1 : 0) : a >> b;
	default: return 0x5a5a;
	}
}

/* Write @v (int64 values) as a tensor of @dt (int32: wrapped to it). */
static void put_ints(struct tctx *c, struct dtensor *d, const int64_t *v, int64_t n)
{
	int32_t w[64];
	int64_t i;

	if (d->t.dtype == SPYRE_INT64) {
		OK(dt_write_raw(c, d, v));
		return;
	}
	for (i = 0; i < n; i++)
		w[i] = (int32_t)v[i];
	OK(dt_write_raw(c, d, w));
}

static void get_ints(struct tctx *c, const struct dtensor *d, int64_t *v, int64_t n)
{
	int32_t w[64];
	int8_t b[64];
	int64_t i;

	if (d->t.dtype == SPYRE_INT64) {
		OK(dt_read_raw(c, d, v));
		return;
	}
	if (d->t.dtype == SPYRE_BOOL || d->t.dtype == SPYRE_INT8) {
		OK(dt_read_raw(c, d, b));
		for (i = 0; i < n; i++)
			v[i] = b[i];
		return;
	}
	OK(dt_read_raw(c, d, w));
	for (i = 0; i < n; i++)
		v[i] = w[i];
}

/* Every integer binary row, tensor-tensor, on int32 and int64. */
TEST(intops_binary_exact)
{
	static const int64_t sh[1] = { N };
	static const enum spyre_dtype dts[2] = { SPYRE_INT64, SPYRE_INT32 };
	unsigned int d, op, nrows, k;
	const struct spyre_op_info *rows = spyre_op_table(&nrows);
	int64_t a[N], b[N], y[N], i;
	struct dtensor da, db, dy, dby;
	struct tctx c;

	if (!has_int(dev))
		return;
	OK(tctx_open(dev, &c));
	for (d = 0; d < 2; d++) {
		bool i32 = dts[d] == SPYRE_INT32;

		OK(dt_new(&c, &da, dts[d], 1, sh));
		OK(dt_new(&c, &db, dts[d], 1, sh));
		OK(dt_new(&c, &dy, dts[d], 1, sh));
		OK(dt_new(&c, &dby, SPYRE_BOOL, 1, sh));
		for (i = 0; i < N; i++) {
			a[i] = wrap(va[i], i32);
			b[i] = wrap(vb[i], i32);
		}
		put_ints(&c, &da, a, N);
		put_ints(&c, &db, b, N);
		for (k = 0; k < nrows; k++) {
			const struct spyre_op_info *r = &rows[k];
			bool cmp = r->result == SPYRE_RESULT_BOOL;

			op = (unsigned int)r->op;
			if (r->kind != SPYRE_OPK_BINARY || !(r->dtypes & SPYRE_DTYPE_BIT(dts[d])) ||
			    (r->flags & SPYRE_OPF_TRUTH))
				continue;
			if (op == SPYRE_BIN_FLOOR_DIVIDE || op == SPYRE_BIN_REMAINDER ||
			    op == SPYRE_BIN_LSHIFT || op == SPYRE_BIN_RSHIFT)
				continue;	/* below, with their own operands */
			OK(spyre_op_binary(c.ops, c.s, op, &da.t, &db.t, cmp ? &dby.t : &dy.t));
			get_ints(&c, cmp ? &dby : &dy, y, N);
			for (i = 0; i < N; i++)
				CHECK(y[i] == ref(op, a[i], b[i], i32), "%s %s [%lld]: %lld op %lld "
				      "gave %lld, want %lld", spyre_dtype_name(dts[d]), r->name,
				      (long long)i, (long long)a[i], (long long)b[i], (long long)y[i],
				      (long long)ref(op, a[i], b[i], i32));
		}
		/* floor division and remainder (no zero divisor), shifts */
		{
			static const int64_t dva[N] = { 7, -7, 7, -7, INT64_MIN, INT64_MIN, 0,
							INT64_MAX, (1ll << 40) + 3, -((1ll << 40) + 3),
							INT32_MIN, 5 };
			static const int64_t dvb[N] = { 2, 2, -2, -2, -1, 3, -5, INT64_MIN,
							1ll << 33, 1ll << 33, -1, 100 };
			static const int64_t sb[N] = { 0, 1, 31, 32, 33, 63, 64, -1, 100, 7, 2, 40 };
			static const unsigned int ops2[4] = { SPYRE_BIN_FLOOR_DIVIDE,
							      SPYRE_BIN_REMAINDER, SPYRE_BIN_LSHIFT,
							      SPYRE_BIN_RSHIFT };
			unsigned int j;

			for (j = 0; j < 4; j++) {
				for (i = 0; i < N; i++) {
					a[i] = wrap(j < 2 ? dva[i] : va[i], i32);
					b[i] = wrap(j < 2 ? dvb[i] : sb[i], i32);
					if (j < 2 && !b[i])
						b[i] = 3;
				}
				put_ints(&c, &da, a, N);
				put_ints(&c, &db, b, N);
				OK(spyre_op_binary(c.ops, c.s, ops2[j], &da.t, &db.t, &dy.t));
				get_ints(&c, &dy, y, N);
				for (i = 0; i < N; i++)
					CHECK(y[i] == ref(ops2[j], a[i], b[i], i32),
					      "%s op %u [%lld]: %lld, %lld gave %lld, want %lld",
					      spyre_dtype_name(dts[d]), ops2[j], (long long)i,
					      (long long)a[i], (long long)b[i], (long long)y[i],
					      (long long)ref(ops2[j], a[i], b[i], i32));
			}
		}
		dt_free(&da);
		dt_free(&db);
		dt_free(&dy);
		dt_free(&dby);
	}
	tctx_close(&c);
}

/* Broadcast [4, 1] op [1, 3]: a non-commutative op expands src0 exactly. */
TEST(intops_broadcast_and_scalars)
{
	static const int64_t sa[2] = { 4, 1 }, sb[2] = { 1, 3 }, so[2] = { 4, 3 }, s1[1] = { 4 };
	static const int64_t a[4] = { (1ll << 40) + 3, -5, INT64_MIN, 17 };
	static const int64_t b[3] = { 1, (1ll << 33) + 1, -3 };
	struct dtensor da, db, dy, d1, d1y;
	int64_t y[12], i, j;
	struct tctx c;

	if (!has_int(dev))
		return;
	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &da, SPYRE_INT64, 2, sa));
	OK(dt_new(&c, &db, SPYRE_INT64, 2, sb));
	OK(dt_new(&c, &dy, SPYRE_INT64, 2, so));
	OK(dt_write_raw(&c, &da, a));
	OK(dt_write_raw(&c, &db, b));
	OK(spyre_op_binary(c.ops, c.s, SPYRE_BIN_SUB, &da.t, &db.t, &dy.t));
	OK(dt_read_raw(&c, &dy, y));
	for (i = 0; i < 4; i++)
		for (j = 0; j < 3; j++)
			CHECK(y[i * 3 + j] == ref(SPYRE_BIN_SUB, a[i], b[j], false), "sub [%lld, %lld]",
			      (long long)i, (long long)j);
	OK(spyre_op_binary(c.ops, c.s, SPYRE_BIN_FLOOR_DIVIDE, &da.t, &db.t, &dy.t));
	OK(dt_read_raw(&c, &dy, y));
	for (i = 0; i < 4; i++)
		for (j = 0; j < 3; j++)
			CHECK(y[i * 3 + j] == fdiv(a[i], b[j]), "floor_divide [%lld, %lld]",
			      (long long)i, (long long)j);
	/* scalars, both sides: x + 1 beyond 2^40, 5 - x, 2^33 // x */
	OK(dt_new(&c, &d1, SPYRE_INT64, 1, s1));
	OK(dt_new(&c, &d1y, SPYRE_INT64, 1, s1));
	OK(dt_write_raw(&c, &d1, a));
	OK(spyre_op_binary_scalar(c.ops, c.s, SPYRE_BIN_ADD, &d1.t, 1, 0, &d1y.t));
	OK(dt_read_raw(&c, &d1y, y));
	CHECK(y[0] == (1ll << 40) + 4, "2^40 + 3 + 1 = %lld", (long long)y[0]);
	CHECK(y[2] == INT64_MIN + 1, "min + 1");
	OK(spyre_op_binary_scalar(c.ops, c.s, SPYRE_BIN_SUB, &d1.t, 5, 1, &d1y.t));
	OK(dt_read_raw(&c, &d1y, y));
	for (i = 0; i < 4; i++)
		CHECK(y[i] == ref(SPYRE_BIN_SUB, 5, a[i], false), "5 - x [%lld]", (long long)i);
	OK(spyre_op_binary_scalar(c.ops, c.s, SPYRE_BIN_FLOOR_DIVIDE, &d1.t, 8589934592.0, 1,
				  &d1y.t));
	OK(dt_read_raw(&c, &d1y, y));
	for (i = 0; i < 4; i++)
		CHECK(y[i] == fdiv(1ll << 33, a[i]), "2^33 // x [%lld]", (long long)i);
	FAILS_WITH(spyre_op_binary_scalar(c.ops, c.s, SPYRE_BIN_ADD, &d1.t, 0.5, 0, &d1y.t),
		   -EOPNOTSUPP, "0.5");
	/* int32: 5 - x expands the scalar in int32 */
	{
		static const int32_t a32[4] = { INT32_MAX, -5, INT32_MIN, 17 };
		struct dtensor e, ey;
		int32_t y32[4];

		OK(dt_new(&c, &e, SPYRE_INT32, 1, s1));
		OK(dt_new(&c, &ey, SPYRE_INT32, 1, s1));
		OK(dt_write_raw(&c, &e, a32));
		OK(spyre_op_binary_scalar(c.ops, c.s, SPYRE_BIN_SUB, &e.t, 5, 1, &ey.t));
		OK(dt_read_raw(&c, &ey, y32));
		for (i = 0; i < 4; i++)
			CHECK(y32[i] == (int32_t)(5u - (uint32_t)a32[i]), "int32 5 - x [%lld]: %d",
			      (long long)i, y32[i]);
		dt_free(&e);
		dt_free(&ey);
	}
	dt_free(&da);
	dt_free(&db);
	dt_free(&dy);
	dt_free(&d1);
	dt_free(&d1y);
	tctx_close(&c);
}

TEST(intops_unary_at_the_minimum)
{
	static const int64_t s[1] = { 4 };
	static const int64_t a[4] = { INT64_MIN, -5, 0, INT64_MAX };
	static const int32_t a32[4] = { INT32_MIN, -5, 0, INT32_MAX };
	struct dtensor d, dy, d32, dy32;
	int64_t y[4];
	int32_t y32[4];
	struct tctx c;

	if (!has_int(dev))
		return;
	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &d, SPYRE_INT64, 1, s));
	OK(dt_new(&c, &dy, SPYRE_INT64, 1, s));
	OK(dt_new(&c, &d32, SPYRE_INT32, 1, s));
	OK(dt_new(&c, &dy32, SPYRE_INT32, 1, s));
	OK(dt_write_raw(&c, &d, a));
	OK(dt_write_raw(&c, &d32, a32));
	OK(spyre_op_unary(c.ops, c.s, SPYRE_UN_NEG, &d.t, &dy.t));
	OK(dt_read_raw(&c, &dy, y));
	CHECK(y[0] == INT64_MIN && y[1] == 5 && y[3] == -INT64_MAX, "neg");
	OK(spyre_op_unary(c.ops, c.s, SPYRE_UN_ABS, &d.t, &dy.t));
	OK(dt_read_raw(&c, &dy, y));
	CHECK(y[0] == INT64_MIN && y[1] == 5 && y[3] == INT64_MAX, "abs");
	OK(spyre_op_unary(c.ops, c.s, SPYRE_UN_BITWISE_NOT, &d.t, &dy.t));
	OK(dt_read_raw(&c, &dy, y));
	CHECK(y[0] == INT64_MAX && y[1] == 4 && y[2] == -1, "bitwise_not");
	OK(spyre_op_unary(c.ops, c.s, SPYRE_UN_NEG, &d32.t, &dy32.t));
	OK(dt_read_raw(&c, &dy32, y32));
	CHECK(y32[0] == INT32_MIN && y32[3] == -INT32_MAX, "neg int32");
	OK(spyre_op_unary(c.ops, c.s, SPYRE_UN_ABS, &d32.t, &dy32.t));
	OK(dt_read_raw(&c, &dy32, y32));
	CHECK(y32[0] == INT32_MIN && y32[1] == 5, "abs int32");
	dt_free(&d);
	dt_free(&dy);
	dt_free(&d32);
	dt_free(&dy32);
	tctx_close(&c);
}

TEST(intops_casts)
{
	static const int64_t s[1] = { 10 };
	static const float f[10] = { -1.7f, 1.7f, -0.0f, NAN, INFINITY, -INFINITY, 1e10f, 300.0f,
				     -129.5f, 2147483648.0f };
	static const int64_t want64[10] = { -1, 1, 0, INT64_MIN, INT64_MIN, INT64_MIN,
					    10000000000, 300, -129, 2147483648 };
	static const int32_t want32[10] = { -1, 1, 0, INT32_MIN, INT32_MIN, INT32_MIN,
					    INT32_MIN, 300, -129, INT32_MIN };
	static const int64_t big[10] = { (1ll << 40) + 3, -(1ll << 32) - 7, (1 << 24) + 1, 0,
					 INT64_MIN, INT64_MAX, -1, 2, 1ll << 31, 255 };
	struct dtensor df, d64, d32, db, d8, df2;
	int64_t y[10], i;
	int32_t y32[10];
	int8_t y8[10];
	float yf[10];
	struct tctx c;

	if (!has_int(dev))
		return;
	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &df, SPYRE_FLOAT32, 1, s));
	OK(dt_new(&c, &df2, SPYRE_FLOAT32, 1, s));
	OK(dt_new(&c, &d64, SPYRE_INT64, 1, s));
	OK(dt_new(&c, &d32, SPYRE_INT32, 1, s));
	OK(dt_new(&c, &db, SPYRE_BOOL, 1, s));
	OK(dt_new(&c, &d8, SPYRE_INT8, 1, s));
	OK(dt_write_raw(&c, &df, f));
	/* float -> int: toward zero; NaN, inf, out of range: the minimum (x86, PyTorch) */
	OK(spyre_op_copy(c.ops, c.s, &df.t, &d64.t));
	OK(dt_read_raw(&c, &d64, y));
	for (i = 0; i < 10; i++)
		CHECK(y[i] == want64[i], "float %g -> int64 %lld", f[i], (long long)y[i]);
	OK(spyre_op_copy(c.ops, c.s, &df.t, &d32.t));
	OK(dt_read_raw(&c, &d32, y32));
	for (i = 0; i < 10; i++)
		CHECK(y32[i] == want32[i], "float %g -> int32 %d", f[i], y32[i]);
	/* int64 -> int32 and int8: the low bits; -> float: nearest even; -> bool: != 0 */
	OK(dt_write_raw(&c, &d64, big));
	OK(spyre_op_copy(c.ops, c.s, &d64.t, &d32.t));
	OK(dt_read_raw(&c, &d32, y32));
	for (i = 0; i < 10; i++)
		CHECK(y32[i] == (int32_t)(uint32_t)big[i], "int64 -> int32 [%lld]", (long long)i);
	OK(spyre_op_copy(c.ops, c.s, &d64.t, &d8.t));
	OK(dt_read_raw(&c, &d8, y8));
	for (i = 0; i < 10; i++)
		CHECK(y8[i] == (int8_t)(uint8_t)big[i], "int64 -> int8 [%lld]", (long long)i);
	OK(spyre_op_copy(c.ops, c.s, &d64.t, &df2.t));
	OK(dt_read_raw(&c, &df2, yf));
	for (i = 0; i < 10; i++)
		CHECK(yf[i] == (float)big[i], "int64 -> float [%lld]: %g", (long long)i, yf[i]);
	OK(spyre_op_copy(c.ops, c.s, &d64.t, &db.t));
	OK(dt_read_raw(&c, &db, y8));
	for (i = 0; i < 10; i++)
		CHECK(y8[i] == (big[i] != 0), "int64 -> bool [%lld]", (long long)i);
	/* bool -> int64, int32 -> int64 (sign extension) */
	OK(spyre_op_copy(c.ops, c.s, &db.t, &d64.t));
	OK(dt_read_raw(&c, &d64, y));
	for (i = 0; i < 10; i++)
		CHECK(y[i] == (big[i] != 0), "bool -> int64 [%lld]", (long long)i);
	OK(spyre_op_copy(c.ops, c.s, &d32.t, &d64.t));
	OK(dt_read_raw(&c, &d64, y));
	for (i = 0; i < 10; i++)
		CHECK(y[i] == (int32_t)(uint32_t)big[i], "int32 -> int64 [%lld]", (long long)i);
	/* a float with a fraction -> bool is true (x != 0, not rounded) */
	OK(spyre_op_copy(c.ops, c.s, &df.t, &db.t));
	OK(dt_read_raw(&c, &db, y8));
	CHECK(y8[0] == 1 && y8[2] == 0 && y8[3] == 1, "float -> bool");
	dt_free(&df);
	dt_free(&df2);
	dt_free(&d64);
	dt_free(&d32);
	dt_free(&db);
	dt_free(&d8);
	tctx_close(&c);
}

TEST(intops_reductions_and_selection)
{
	static const int64_t s[2] = { 2, 5 }, so[1] = { 2 };
	static const int64_t x[10] = { INT64_MAX, 1, (1ll << 40), 7, (1ll << 40),
				       INT64_MIN, -(1ll << 33), INT64_MIN + 1, 3, -2 };
	struct dtensor dx, dy, dc, dm, dz, dcum;
	int64_t y[10], i, j;
	int8_t m[10];
	struct tctx c;

	if (!has_int(dev))
		return;
	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &dx, SPYRE_INT64, 2, s));
	OK(dt_new(&c, &dy, SPYRE_INT64, 1, so));
	OK(dt_new(&c, &dc, SPYRE_INT32, 1, so));
	OK(dt_new(&c, &dm, SPYRE_BOOL, 2, s));
	OK(dt_new(&c, &dz, SPYRE_INT64, 2, s));
	OK(dt_new(&c, &dcum, SPYRE_INT64, 2, s));
	OK(dt_write_raw(&c, &dx, x));
	OK(spyre_op_reduce(c.ops, c.s, SPYRE_RED_SUM, &dx.t, 1, 0, &dy.t));
	OK(dt_read_raw(&c, &dy, y));
	CHECK(y[0] == (int64_t)((uint64_t)INT64_MAX + 1 + (2ull << 40) + 7), "sum wraps");
	CHECK(y[1] == (int64_t)((uint64_t)INT64_MIN - (1ull << 33) + (uint64_t)INT64_MIN + 1 +
				1), "sum row 1");
	OK(spyre_op_reduce(c.ops, c.s, SPYRE_RED_MAX, &dx.t, 1, 0, &dy.t));
	OK(dt_read_raw(&c, &dy, y));
	CHECK(y[0] == INT64_MAX && y[1] == 3, "amax");
	OK(spyre_op_reduce(c.ops, c.s, SPYRE_RED_MIN, &dx.t, 1, 0, &dy.t));
	OK(dt_read_raw(&c, &dy, y));
	CHECK(y[0] == 1 && y[1] == INT64_MIN, "amin at the minimum: %lld", (long long)y[1]);
	OK(spyre_op_argmax(c.ops, c.s, &dx.t, 1, 0, &dc.t));
	{
		int32_t ix[2];

		OK(dt_read_raw(&c, &dc, ix));
		CHECK(ix[0] == 0 && ix[1] == 3, "argmax %d %d", ix[0], ix[1]);
	}
	OK(spyre_op_cumsum(c.ops, c.s, &dx.t, 1, &dcum.t));
	OK(dt_read_raw(&c, &dcum, y));
	CHECK(y[2] == (int64_t)((uint64_t)INT64_MAX + 1 + (1ull << 40)), "cumsum wraps");
	/* where(mask, x, -x) and masked_fill(x, mask, -2^50) */
	for (i = 0; i < 10; i++)
		m[i] = (int8_t)(i % 3 == 0);
	OK(dt_write_raw(&c, &dm, m));
	OK(spyre_op_unary(c.ops, c.s, SPYRE_UN_NEG, &dx.t, &dz.t));
	OK(spyre_op_where(c.ops, c.s, &dm.t, &dx.t, &dz.t, &dcum.t));
	OK(dt_read_raw(&c, &dcum, y));
	for (i = 0; i < 10; i++)
		CHECK(y[i] == (m[i] ? x[i] : (int64_t)(0 - (uint64_t)x[i])), "where [%lld]",
		      (long long)i);
	OK(spyre_op_masked_fill(c.ops, c.s, &dx.t, &dm.t, -1125899906842624.0, &dcum.t));
	OK(dt_read_raw(&c, &dcum, y));
	for (i = 0; i < 10; i++)
		CHECK(y[i] == (m[i] ? -(1ll << 50) : x[i]), "masked_fill [%lld]", (long long)i);
	OK(spyre_op_clamp(c.ops, c.s, &dx.t, -(double)(1ll << 40), 1e15, &dcum.t));
	OK(dt_read_raw(&c, &dcum, y));
	for (j = 0; j < 10; j++) {
		int64_t w = x[j] < -(1ll << 40) ? -(1ll << 40) : x[j] > 1000000000000000ll ?
			    1000000000000000ll : x[j];

		CHECK(y[j] == w, "clamp [%lld]", (long long)j);
	}
	dt_free(&dx);
	dt_free(&dy);
	dt_free(&dc);
	dt_free(&dm);
	dt_free(&dz);
	dt_free(&dcum);
	tctx_close(&c);
}

/* Integer division by zero fails the job with -EDOM; the stream says so, no value. */
TEST(intops_division_by_zero)
{
	static const int64_t s[1] = { 3 };
	static const int64_t a[3] = { 1, 2, 3 }, b[3] = { 1, 0, 3 };
	struct dtensor da, db, dy;
	struct tctx c;
	int ret;

	if (!has_int(dev))
		return;
	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &da, SPYRE_INT64, 1, s));
	OK(dt_new(&c, &db, SPYRE_INT64, 1, s));
	OK(dt_new(&c, &dy, SPYRE_INT64, 1, s));
	OK(dt_write_raw(&c, &da, a));
	OK(dt_write_raw(&c, &db, b));
	OK(spyre_op_binary(c.ops, c.s, SPYRE_BIN_REMAINDER, &da.t, &db.t, &dy.t));
	ret = spyre_stream_synchronize(c.s);
	CHECK(ret == -EDOM, "synchronize gave %d", ret);
	CHECK(strstr(spyre_last_error(), "zero") || strstr(spyre_last_error(), "domain"),
	      "message: %s", spyre_last_error());
	OK(spyre_stream_clear_error(c.s));
	dt_free(&da);
	dt_free(&db);
	dt_free(&dy);
	tctx_close(&c);
}

/* A card before 1.9 refuses integer arithmetic, naming the interface. */
TEST(intops_refused_before_1_9)
{
	static const int64_t s[1] = { 3 };
	struct dtensor d32, d64, df;
	spyre_ops *old = NULL;
	struct tctx c;

	if (!old_card_ops(dev, "1.8", &old))
		return;
	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &d32, SPYRE_INT32, 1, s));
	OK(dt_new(&c, &d64, SPYRE_INT64, 1, s));
	OK(dt_new(&c, &df, SPYRE_FLOAT32, 1, s));
	FAILS_WITH(spyre_op_binary(old, c.s, SPYRE_BIN_ADD, &d32.t, &d32.t, &d32.t), -EOPNOTSUPP,
		   "1.9");
	FAILS_WITH(spyre_op_binary(old, c.s, SPYRE_BIN_MUL, &d64.t, &d64.t, &d64.t), -EOPNOTSUPP,
		   "1.9");
	FAILS_WITH(spyre_op_copy(old, c.s, &df.t, &d32.t), -EOPNOTSUPP, "1.9");
	FAILS_WITH(spyre_op_copy(old, c.s, &d32.t, &d64.t), -EOPNOTSUPP, "1.9");
	FAILS_WITH(spyre_op_fill(old, c.s, 5, &d64.t), -EOPNOTSUPP, "1.9");
	OK(spyre_op_copy(old, c.s, &d32.t, &df.t));	/* int32 -> float: fp32 is exact */
	OK(spyre_stream_synchronize(c.s));
	spyre_ops_destroy(old);
	dt_free(&d32);
	dt_free(&d64);
	dt_free(&df);
	tctx_close(&c);
}

/* Rows of int64 move exactly through embedding and gather (1.9): no fp32. */
TEST(intops_gather_moves_integers_exactly)
{
	static const int64_t sw[2] = { 4, 2 }, si[1] = { 3 }, so[2] = { 3, 2 };
	static const int64_t w[8] = { INT64_MIN, 1, (1ll << 40) + 3, -(1ll << 53) - 1,
				      (1 << 24) + 1, 7, INT64_MAX, -1 };
	static const int32_t idx[3] = { 2, 0, 3 };
	struct dtensor dw, di, dy;
	int64_t y[6];
	struct tctx c;
	int i;

	if (!has_int(dev))
		return;
	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &dw, SPYRE_INT64, 2, sw));
	OK(dt_new(&c, &di, SPYRE_INT32, 1, si));
	OK(dt_new(&c, &dy, SPYRE_INT64, 2, so));
	OK(dt_write_raw(&c, &dw, w));
	OK(dt_write_raw(&c, &di, idx));
	OK(spyre_op_embedding(c.ops, c.s, &dw.t, &di.t, &dy.t));
	OK(dt_read_raw(&c, &dy, y));
	for (i = 0; i < 6; i++)
		CHECK(y[i] == w[idx[i / 2] * 2 + i % 2], "embedding [%d]: %lld", i, (long long)y[i]);
	dt_free(&dw);
	dt_free(&di);
	dt_free(&dy);
	tctx_close(&c);
}
