// SPDX-License-Identifier: MIT
/*
 * The op table (spyre/op_table.h): its values are a dense, unique numbering
 * of each kind, its names are unique, and spyre_ops_supports() answers what
 * the ops really do: a row it calls unsupported (dtype or card interface)
 * fails with -EOPNOTSUPP, every other one runs.
 */
#include "ops_ref.h"
#include "spyre_hw.h"

static const unsigned int counts[] = {
	[SPYRE_OPK_UNARY] = SPYRE_UN_COUNT,
	[SPYRE_OPK_BINARY] = SPYRE_BIN_COUNT,
	[SPYRE_OPK_REDUCE] = SPYRE_RED_COUNT,
};

TEST(op_table_rows)
{
	unsigned int n, i, j, per_kind[3] = { 0 };
	const struct spyre_op_info *rows = spyre_op_table(&n);

	CHECK(n == SPYRE_UN_COUNT + SPYRE_BIN_COUNT + SPYRE_RED_COUNT, "%u rows", n);
	for (i = 0; i < n; i++) {
		const struct spyre_op_info *r = &rows[i];

		ASSERT((unsigned int)r->kind < 3, "row %u kind %d", i, (int)r->kind);
		per_kind[r->kind]++;
		CHECK(r->op >= 0 && (unsigned int)r->op < counts[r->kind],
		      "%s: value %d outside 0..%u", r->name, r->op, counts[r->kind] - 1);
		CHECK(spyre_op_find(r->kind, r->op) == r, "%s: find gives another row", r->name);
		CHECK(r->name && r->name[0], "row %u has no name", i);
		CHECK(r->dtypes && !(r->dtypes & ~(SPYRE_DTYPES_VECTOR | SPYRE_DTYPES_INT)),
		      "%s: dtypes %#x", r->name, r->dtypes);
		/* exact integers are the integer mode's (1.9), truth values excepted */
		if (r->dtypes & SPYRE_DTYPE_BIT(SPYRE_INT32))
			CHECK(spyre_op_iface(r, SPYRE_INT32) ==
			      ((r->flags & SPYRE_OPF_TRUTH) ? r->iface : SPYRE_IFACE_INT),
			      "%s: int32 interface %#x", r->name, spyre_op_iface(r, SPYRE_INT32));
		CHECK(spyre_op_iface(r, SPYRE_INT64) >= SPYRE_IFACE_INT, "%s: int64", r->name);
		CHECK(spyre_op_iface(r, SPYRE_FLOAT32) == r->iface, "%s: float32", r->name);
		CHECK(r->iface >= SPYRE_IFACE(1, 0) && r->iface <= SPYRE_HW_VERSION_CURRENT,
		      "%s: interface %#x", r->name, r->iface);
		for (j = 0; j < i; j++) {
			if (rows[j].kind != r->kind)
				continue;
			CHECK(rows[j].op != r->op, "%s and %s share value %d", rows[j].name,
			      r->name, r->op);
			CHECK(strcmp(rows[j].name, r->name), "two %s rows", r->name);
		}
	}
	for (i = 0; i < 3; i++)
		CHECK(per_kind[i] == counts[i], "kind %u: %u rows for %u values", i, per_kind[i],
		      counts[i]);
	CHECK(!spyre_op_find(SPYRE_OPK_UNARY, SPYRE_UN_COUNT), "a row past the end");
	CHECK(!spyre_op_find(SPYRE_OPK_BINARY, -1), "a row at -1");
	CHECK(!spyre_ops_supports(NULL, rows, SPYRE_FLOAT32), "no context, no support");
}

/* Each unary row on each dtype: supported exactly when it runs. */
static void unary_agrees(struct tctx *c, spyre_ops *ops, const char *card)
{
	static const enum spyre_dtype dts[] = { SPYRE_FLOAT32, SPYRE_FLOAT16, SPYRE_BFLOAT16,
						SPYRE_INT8,    SPYRE_INT32,   SPYRE_BOOL,
						SPYRE_INT64 };
	static const int64_t shape[] = { 2, 5 };
	unsigned int n, i, d;
	const struct spyre_op_info *rows = spyre_op_table(&n);

	for (d = 0; d < sizeof(dts) / sizeof(dts[0]); d++) {
		struct dtensor x, y;

		ASSERT(!dt_new(c, &x, dts[d], 2, shape), "x");
		ASSERT(!dt_new(c, &y, dts[d], 2, shape), "y");
		for (i = 0; i < n; i++) {
			const struct spyre_op_info *r = &rows[i];
			struct dtensor *out = &y, yb;
			int want, got;

			if (r->kind != SPYRE_OPK_UNARY)
				continue;
			if (r->result == SPYRE_RESULT_BOOL) {
				ASSERT(!dt_new(c, &yb, SPYRE_BOOL, 2, shape), "bool out");
				out = &yb;
			}
			want = spyre_ops_supports(ops, r, dts[d]) ? 0 : -EOPNOTSUPP;
			got = spyre_op_unary(ops, c->s, r->op, &x.t, &out->t);
			CHECK(got == want, "%s card: %s of %s gave %d, the table says %d", card,
			      r->name, spyre_dtype_name(dts[d]), got, want);
			if (got == -EOPNOTSUPP)
				CHECK(strstr(spyre_last_error(), r->name) &&
				      strstr(spyre_last_error(), spyre_dtype_name(dts[d])),
				      "the message names op and dtype");
			if (out == &yb)
				dt_free(&yb);
		}
		OK(spyre_stream_synchronize(c->s));
		dt_free(&x);
		dt_free(&y);
	}
}

TEST(op_table_supports)
{
	const struct spyre_op_info *sin = spyre_op_find(SPYRE_OPK_UNARY, SPYRE_UN_SIN);
	spyre_ops *old = NULL;
	struct tctx c;

	OK(tctx_open(dev, &c));
	unary_agrees(&c, c.ops, "this");
	CHECK(spyre_ops_supports(c.ops, sin, SPYRE_FLOAT16), "sin of fp16");
	CHECK(!spyre_ops_supports(c.ops, sin, SPYRE_INT64), "sin of int64");
	if (old_card_ops(dev, "1.8", &old)) {
		const struct spyre_op_info *neg = spyre_op_find(SPYRE_OPK_UNARY, SPYRE_UN_NEG);

		/* before the integer mode: integers refused, naming the interface */
		CHECK(!spyre_ops_supports(old, neg, SPYRE_INT32), "neg of int32 on a 1.8 card");
		CHECK(spyre_ops_supports(old, neg, SPYRE_FLOAT32), "neg of fp32 on a 1.8 card");
		unary_agrees(&c, old, "a 1.8");
		spyre_ops_destroy(old);
	}
	if (old_card_ops(dev, "1.3", &old)) {
		CHECK(!spyre_ops_supports(old, sin, SPYRE_FLOAT32), "sin on a 1.3 card");
		unary_agrees(&c, old, "a 1.3");
		spyre_ops_destroy(old);
	}
	if (old_card_ops(dev, "1.2", &old)) {
		unary_agrees(&c, old, "a 1.2");
		spyre_ops_destroy(old);
	}
	tctx_close(&c);
}
