// SPDX-License-Identifier: MIT
/* Eager ops against the host reference (double precision). */
#include <math.h>
#include <pthread.h>

#include "ops_ref.h"
#include "spyre_hw.h"

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
	case SPYRE_UN_SIN:
		return sin(x);
	case SPYRE_UN_COS:
		return cos(x);
	case SPYRE_UN_ERF:
		return erf(x);
	case SPYRE_UN_LOG2:
		return log2(x);
	case SPYRE_UN_ROUND:
		return nearbyint(x);	/* the default mode: to nearest, ties to even */
	default:
		return NAN;	/* a new op without a reference fails ops_unary */
	}
}

/* A bool-valued binary op as 0/1; NaN (failing the comparison) for none. */
static double ref_bool(enum spyre_binary_op op, double x, double z)
{
	switch (op) {
	case SPYRE_BIN_EQ:
		return x == z;
	case SPYRE_BIN_NE:
		return x != z;
	case SPYRE_BIN_LT:
		return x < z;
	case SPYRE_BIN_LE:
		return x <= z;
	case SPYRE_BIN_GT:
		return x > z;
	case SPYRE_BIN_GE:
		return x >= z;
	case SPYRE_BIN_LOGICAL_AND:
		return x != 0 && z != 0;
	case SPYRE_BIN_LOGICAL_OR:
		return x != 0 || z != 0;
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
	case SPYRE_BIN_MIN:
		return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
	default:
		return NAN;	/* a new op without a reference fails its tests */
	}
}

/* Binary rows of the op table whose result keeps the inputs' (float) dtype. */
static bool arith_row(unsigned int op)
{
	const struct spyre_op_info *r = spyre_op_find(SPYRE_OPK_BINARY, (int)op);

	return r->result == SPYRE_RESULT_SAME && (r->dtypes & SPYRE_DTYPES_FLOAT);
}

TEST(ops_unary)
{
	static const int64_t shape[] = { 3, 67 };
	int64_t n = numel(2, shape), i;
	double *x = calloc(n, sizeof(double)), *y = calloc(n, sizeof(double));
	double *r = calloc(n, sizeof(double));
	struct dtensor dx, dy;
	spyre_ops *old = NULL;
	struct tctx c;
	unsigned int d, op, k, nrows;
	const struct spyre_op_info *rows = spyre_op_table(&nrows);

	ASSERT(x && y && r, "alloc");
	OK(tctx_open(dev, &c));
	for (d = 0; d < 3; d++) {
		OK(dt_new(&c, &dx, fdt[d], 2, shape));
		OK(dt_new(&c, &dy, fdt[d], 2, shape));
		/* every unary row of the op table that keeps a float dtype */
		for (k = 0; k < nrows; k++) {
			bool pos;
			double span;

			if (rows[k].kind != SPYRE_OPK_UNARY || rows[k].result != SPYRE_RESULT_SAME ||
			    !(rows[k].dtypes & SPYRE_DTYPES_FLOAT))
				continue;
			op = (unsigned int)rows[k].op;
			CHECK(!isnan(ref_unary(op, 0.5)), "%s has no host reference", rows[k].name);
			pos = op == SPYRE_UN_LOG || op == SPYRE_UN_SQRT || op == SPYRE_UN_RSQRT ||
			      op == SPYRE_UN_LOG2;
			/* sin/cos: rotary angles reach hundreds of radians */
			span = op == SPYRE_UN_SIN || op == SPYRE_UN_COS ? 200 : 4;

			rnd_fill(x, n, pos ? 0.05 : -span, span, op + 10 * d, fdt[d]);
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
		/* a card before interface 1.4: refused, naming op, shape and dtype */
		if (old_card_ops(dev, "1.3", &old)) {
			FAILS_WITH(spyre_op_unary(old, c.s, SPYRE_UN_COS, &dx.t, &dy.t),
				   -EOPNOTSUPP, "cos of");
			CHECK(strstr(spyre_last_error(), "[3, 67]") &&
			      strstr(spyre_last_error(), spyre_dtype_name(fdt[d])) &&
			      strstr(spyre_last_error(), "interface 1.4"), "message names shape");
			OK(spyre_op_unary(old, c.s, SPYRE_UN_GELU, &dx.t, &dy.t));
			spyre_ops_destroy(old);
		}
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
		int ret;

		if (!arith_row(op))
			continue;
		ret = spyre_op_binary(c->ops, c->s, op, &da.t, &db.t, &dy.t);

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

/* C = A x B (+bias), A [b, M, K], B [K, N] or w [N, K] (linear). */
static void matmul_case(struct tctx *c, enum spyre_dtype dt, int64_t nb, int64_t m, int64_t n,
			int64_t k, bool linear, bool bias)
{
	int64_t sa[3] = { nb, m, k }, so[3] = { nb, m, n };
	int64_t sb[2] = { linear ? n : k, linear ? k : n };
	int64_t i, j, p, b, no = nb * m * n;
	double *a = calloc(nb * m * k + 1, 8), *w = calloc(n * k + 1, 8), *bi = calloc(n + 1, 8);
	double *y = calloc(no + 1, 8), *r = calloc(no + 1, 8), *mag = calloc(no + 1, 8);
	struct dtensor da, dw, db, dy;
	int64_t one = n;

	OK(dt_new(c, &da, dt, 3, sa));
	OK(dt_new(c, &dw, dt, 2, sb));
	OK(dt_new(c, &db, dt, 1, &one));
	OK(dt_new(c, &dy, dt, 3, so));
	rnd_fill(a, nb * m * k, -1, 1, 3, dt);
	rnd_fill(w, n * k, -1, 1, 4, dt);
	rnd_fill(bi, n, -1, 1, 5, dt);
	OK(dt_write(c, &da, a));
	OK(dt_write(c, &dw, w));
	OK(dt_write(c, &db, bi));
	if (linear)
		OK(spyre_op_linear(c->ops, c->s, &da.t, &dw.t, bias ? &db.t : NULL, &dy.t));
	else
		OK(spyre_op_matmul(c->ops, c->s, &da.t, &dw.t, &dy.t));
	OK(dt_read(c, &dy, y));
	for (b = 0; b < nb; b++)
		for (i = 0; i < m; i++)
			for (j = 0; j < n; j++) {
				double s = bias ? bi[j] : 0, sm = bias ? fabs(bi[j]) : 0;

				for (p = 0; p < k; p++) {
					double av = a[(b * m + i) * k + p];
					double wv = linear ? w[j * k + p] : w[p * n + j];

					s += av * wv;
					sm += fabs(av * wv);
				}
				r[(b * m + i) * n + j] = s;
				mag[(b * m + i) * n + j] = sm + fabs(s);
			}
	CHECK(compare("matmul", y, r, mag, no, dt, 1) < 0, "%s [%lld,%lld,%lld]x%lld %s%s",
	      spyre_dtype_name(dt), (long long)nb, (long long)m, (long long)k, (long long)n,
	      linear ? "linear" : "matmul", bias ? "+bias" : "");
	dt_free(&da);
	dt_free(&dw);
	dt_free(&db);
	dt_free(&dy);
	free(a);
	free(w);
	free(bi);
	free(y);
	free(r);
	free(mag);
}

TEST(ops_matmul)
{
	struct tctx c;
	unsigned int d;

	OK(tctx_open(dev, &c));
	for (d = 0; d < 3; d++) {
		matmul_case(&c, fdt[d], 1, 1, 1, 1, false, false);
		/* several K chunks */
		matmul_case(&c, fdt[d], 1, 67, 129, 300, false, false);
		matmul_case(&c, fdt[d], 3, 33, 65, 17, false, false);	/* batched, odd */
		matmul_case(&c, fdt[d], 1, 5, 300, 64, true, true);	/* linear + bias */
		matmul_case(&c, fdt[d], 2, 130, 70, 40, true, false);
	}
	matmul_case(&c, SPYRE_FLOAT16, 1, 300, 520, 260, true, true);	/* many tiles */
	tctx_close(&c);
}

/*
 * Shapes the shared-tile schedule (card interface 1.12, operand tiles
 * multicast to a grid of cores) takes: tiles that do not divide the
 * shape, K over many chunks and not a multiple of the chunk, B both ways,
 * every float type.
 */
TEST(ops_matmul_shared_tiles)
{
	struct tctx c;
	unsigned int d;

	OK(tctx_open(dev, &c));
	/* grids 4 x 8 (tiles 65 x 65) and 2 x 16; K big enough that sharing pays */
	for (d = 0; d < 3; d++)
		matmul_case(&c, fdt[d], 1, 257, 520, 600, false, false);
	matmul_case(&c, SPYRE_FLOAT16, 1, 256, 600, 1100, false, false);	/* many chunks */
	matmul_case(&c, SPYRE_BFLOAT16, 1, 130, 1100, 700, true, true);	/* B^T + bias */
	matmul_case(&c, SPYRE_FLOAT16, 1, 512, 512, 512, false, false);	/* whole tiles */
	matmul_case(&c, SPYRE_FLOAT16, 2, 260, 520, 600, false, false);	/* batched */
	matmul_case(&c, SPYRE_FLOAT32, 2, 260, 520, 600, true, true);	/* batched linear */
	tctx_close(&c);
}

/*
 * Wide N (an LM head's shape): A rows resident over a block row's column
 * blocks, with rows and K (the last chunk short) that do not divide.
 */
TEST(ops_matmul_shared_tiles_wide)
{
	struct tctx c;

	OK(tctx_open(dev, &c));
	matmul_case(&c, SPYRE_FLOAT16, 1, 500, 3000, 700, true, false);
	matmul_case(&c, SPYRE_BFLOAT16, 1, 500, 3000, 700, true, true);
	tctx_close(&c);
}

/* int8 x int8 -> int32 through the shared-tile schedule: exact, edges included. */
TEST(ops_matmul_shared_tiles_int8)
{
	enum { M = 260, K = 700, N = 520 };
	int64_t sa[2] = { M, K }, sb[2] = { K, N }, so[2] = { M, N }, i, j, p;
	double *a = calloc(M * K, 8), *b = calloc(K * N, 8), *y = calloc(M * N, 8);
	double *r = calloc(M * N, 8);
	struct dtensor da, db, dy;
	struct tctx c;

	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &da, SPYRE_INT8, 2, sa));
	OK(dt_new(&c, &db, SPYRE_INT8, 2, sb));
	OK(dt_new(&c, &dy, SPYRE_INT32, 2, so));
	rnd_fill(a, M * K, -128, 128, 91, SPYRE_INT8);
	rnd_fill(b, K * N, -128, 128, 92, SPYRE_INT8);
	for (i = 0; i < M * K; i++)
		a[i] = floor(a[i]);
	for (i = 0; i < K * N; i++)
		b[i] = floor(b[i]);
	a[0] = -128;	/* the extremes */
	b[0] = -128;
	OK(dt_write(&c, &da, a));
	OK(dt_write(&c, &db, b));
	OK(spyre_op_matmul(c.ops, c.s, &da.t, &db.t, &dy.t));
	OK(dt_read(&c, &dy, y));
	for (i = 0; i < M; i++)
		for (j = 0; j < N; j++) {
			double s = 0;

			for (p = 0; p < K; p++)
				s += a[i * K + p] * b[p * N + j];
			r[i * N + j] = s;
		}
	CHECK(compare("int8 matmul shared tiles", y, r, NULL, M * N, SPYRE_INT32, 0) < 0,
	      "exact");
	dt_free(&da);
	dt_free(&db);
	dt_free(&dy);
	free(a);
	free(b);
	free(y);
	free(r);
	tctx_close(&c);
}

/* The shared-tile schedule reads operands once per grid row/column: fast. */
TEST(ops_matmul_shared_tiles_time)
{
	int64_t sh[2] = { 512, 512 };
	struct spyre_device_props pr;
	struct dtensor da, dy;
	spyre_event *e0, *e1;
	struct tctx c;
	uint64_t ns;

	OK(tctx_open(dev, &c));
	OK(spyre_device_get_props(c.dev, &pr));
	OK(dt_new(&c, &da, SPYRE_FLOAT16, 2, sh));
	OK(dt_new(&c, &dy, SPYRE_FLOAT16, 2, sh));
	OK(spyre_memset32_async(c.s, &da.t.buf, 0x3c003c00u, da.t.buf.size & ~3ull));
	OK(spyre_event_create(c.dev, SPYRE_EVENT_TIMING, &e0));
	OK(spyre_event_create(c.dev, SPYRE_EVENT_TIMING, &e1));
	OK(spyre_op_matmul(c.ops, c.s, &da.t, &da.t, &dy.t));
	OK(spyre_event_record(e0, c.s));
	OK(spyre_op_matmul(c.ops, c.s, &da.t, &da.t, &dy.t));
	OK(spyre_event_record(e1, c.s));
	OK(spyre_event_synchronize(e1));
	OK(spyre_event_elapsed_ns(e0, e1, &ns));
	/*
	 * 2 x 512^3 FLOPs at 65.5 TFLOP/s is 4.1 us, + 2 us launch; one load
	 * per core per tile (before 1.12) took 36 us on the sim card. Only the
	 * sim card's clock is the embedder's: in QEMU a command starts no
	 * earlier than its doorbell, which follows host time under TCG, so
	 * there the interval also holds the second launch's submission.
	 */
	if (!strcmp(test_backend, "sim") && pr.hw_version >= SPYRE_HW_VERSION(1, 12))
		CHECK(ns < 12000, "512^3 fp16 matmul took %llu ns", (unsigned long long)ns);
	spyre_event_destroy(e0);
	spyre_event_destroy(e1);
	dt_free(&da);
	dt_free(&dy);
	tctx_close(&c);
}

TEST(ops_matmul_empty_k)
{
	/* K = 0: the product is all zeros (plus nothing) */
	int64_t sa[2] = { 3, 0 }, sb[2] = { 0, 5 }, so[2] = { 3, 5 };
	struct dtensor da, db, dy;
	double y[15], r[15] = { 0 };
	struct tctx c;
	int i;

	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &da, SPYRE_FLOAT32, 2, sa));
	OK(dt_new(&c, &db, SPYRE_FLOAT32, 2, sb));
	OK(dt_new(&c, &dy, SPYRE_FLOAT32, 2, so));
	for (i = 0; i < 15; i++)
		y[i] = 7;
	OK(dt_write(&c, &dy, y));
	OK(spyre_op_matmul(c.ops, c.s, &da.t, &db.t, &dy.t));
	OK(dt_read(&c, &dy, y));
	CHECK(compare("matmul k=0", y, r, NULL, 15, SPYRE_FLOAT32, 1) < 0, "zeros");
	dt_free(&da);
	dt_free(&db);
	dt_free(&dy);
	tctx_close(&c);
}

/* Reductions and row ops over dim @dim of a [d0, d1, d2] tensor. */
TEST(ops_reduce_softmax)
{
	static const int64_t sx[3] = { 3, 5, 70 };
	int64_t n = numel(3, sx), i, o, q, r;
	double *x = calloc(n, 8), *y = calloc(n, 8), *ref = calloc(n, 8);
	struct dtensor dx, dy;
	struct tctx c;
	unsigned int d, op;
	int dim, keep;

	OK(tctx_open(dev, &c));
	for (d = 0; d < 3; d++) {
		enum spyre_dtype dt = fdt[d];

		OK(dt_new(&c, &dx, dt, 3, sx));
		rnd_fill(x, n, -3, 3, 7 + d, dt);
		OK(dt_write(&c, &dx, x));
		for (dim = 0; dim < 3; dim++) {
			int64_t inner = 1, len = sx[dim], outer = 1, os[3];
			unsigned int ond;

			for (i = dim + 1; i < 3; i++)
				inner *= sx[i];
			for (i = 0; i < dim; i++)
				outer *= sx[i];
			for (keep = 0; keep < 2; keep++) {
				ond = 0;
				for (i = 0; i < 3; i++)
					if (i != dim)
						os[ond++] = sx[i];
					else if (keep)
						os[ond++] = 1;
				OK(dt_new(&c, &dy, dt, ond, os));
				for (op = 0; op < SPYRE_RED_COUNT; op++) {
					OK(spyre_op_reduce(c.ops, c.s, op, &dx.t, dim, keep,
							   &dy.t));
					OK(dt_read(&c, &dy, y));
					for (o = 0; o < outer; o++)
						for (q = 0; q < inner; q++) {
							double s = 0, mx = -INFINITY, mn = INFINITY;

							for (r = 0; r < len; r++) {
								double v;

								v = x[(o * len + r) * inner + q];

								s += v;
								mx = v > mx ? v : mx;
								mn = v < mn ? v : mn;
							}
							ref[o * inner + q] = round_to(dt,
								op == SPYRE_RED_SUM ? s :
								op == SPYRE_RED_MEAN ? s / len :
								op == SPYRE_RED_MAX ? mx : mn);
						}
					CHECK(compare("reduce", y, ref, NULL, outer * inner, dt,
						      op < 2 ? len : 1) < 0,
					      "op %u dim %d keep %d %s", op, dim, keep,
					      spyre_dtype_name(dt));
				}
				dt_free(&dy);
			}
			/* softmax and log_softmax over the same dim */
			OK(dt_new(&c, &dy, dt, 3, sx));
			for (op = 0; op < 2; op++) {
				if (op)
					OK(spyre_op_log_softmax(c.ops, c.s, &dx.t, dim, &dy.t));
				else
					OK(spyre_op_softmax(c.ops, c.s, &dx.t, dim, &dy.t));
				OK(dt_read(&c, &dy, y));
				for (o = 0; o < outer; o++)
					for (q = 0; q < inner; q++) {
						double mx = -INFINITY, s = 0;

						for (r = 0; r < len; r++)
							mx = fmax(mx, x[(o * len + r) * inner + q]);
						for (r = 0; r < len; r++)
							s += exp(x[(o * len + r) * inner + q] - mx);
						for (r = 0; r < len; r++) {
							int64_t e = (o * len + r) * inner + q;
							double v = x[e] - mx;

							ref[e] = round_to(dt, op ? v - log(s) :
										   exp(v) / s);
						}
					}
				CHECK(compare("softmax", y, ref, NULL, n, dt, 2) < 0,
				      "%s dim %d %s", op ? "log_softmax" : "softmax", dim,
				      spyre_dtype_name(dt));
			}
			dt_free(&dy);
		}
		dt_free(&dx);
	}
	tctx_close(&c);
	free(x);
	free(y);
	free(ref);
}

TEST(ops_softmax_inf_nan)
{
	/* rows: with -inf (weight 0), with NaN (NaN row), all -inf (NaN row) */
	static const int64_t sx[2] = { 3, 4 };
	double x[12] = { 1, -INFINITY, 2, 0, 1, NAN, 0, 0,
			 -INFINITY, -INFINITY, -INFINITY, -INFINITY }, y[12], r[12];
	struct dtensor dx, dy;
	struct tctx c;
	double s;
	int i;

	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &dx, SPYRE_FLOAT32, 2, sx));
	OK(dt_new(&c, &dy, SPYRE_FLOAT32, 2, sx));
	OK(dt_write(&c, &dx, x));
	OK(spyre_op_softmax(c.ops, c.s, &dx.t, 1, &dy.t));
	OK(dt_read(&c, &dy, y));
	s = exp(1 - 2) + exp(0) + exp(0 - 2);
	r[0] = exp(-1) / s;
	r[1] = 0;
	r[2] = 1 / s;
	r[3] = exp(-2) / s;
	for (i = 4; i < 12; i++)
		r[i] = NAN;
	CHECK(compare("softmax inf/nan", y, r, NULL, 12, SPYRE_FLOAT32, 1) < 0, "rows");
	dt_free(&dx);
	dt_free(&dy);
	tctx_close(&c);
}

TEST(ops_norms)
{
	static const int64_t sx[2] = { 37, 200 };
	int64_t n = numel(2, sx), C = sx[1], i, j;
	double *x = calloc(n, 8), *y = calloc(n, 8), *r = calloc(n, 8), w[200], b[200];
	double rm[37], rr[37];	/* each row's mean and 1/sqrt(var + eps) */
	struct dtensor dx, dy, dw, db;
	struct tctx c;
	unsigned int d;

	OK(tctx_open(dev, &c));
	for (d = 0; d < 3; d++) {
		enum spyre_dtype dt = fdt[d];

		OK(dt_new(&c, &dx, dt, 2, sx));
		OK(dt_new(&c, &dy, dt, 2, sx));
		OK(dt_new(&c, &dw, dt, 1, &C));
		OK(dt_new(&c, &db, dt, 1, &C));
		rnd_fill(x, n, -2, 3, 11, dt);
		rnd_fill(w, C, 0.5, 1.5, 12, dt);
		rnd_fill(b, C, -1, 1, 13, dt);
		OK(dt_write(&c, &dx, x));
		OK(dt_write(&c, &dw, w));
		OK(dt_write(&c, &db, b));
		OK(spyre_op_layer_norm(c.ops, c.s, &dx.t, &dw.t, &db.t, 1e-5, &dy.t));
		OK(dt_read(&c, &dy, y));
		for (i = 0; i < sx[0]; i++) {
			double mu = 0, var = 0;

			for (j = 0; j < C; j++)
				mu += x[i * C + j] / C;
			for (j = 0; j < C; j++)
				var += (x[i * C + j] - mu) * (x[i * C + j] - mu) / C;
			for (j = 0; j < C; j++)
				r[i * C + j] = round_to(dt, (x[i * C + j] - mu) / sqrt(var + 1e-5) *
							    w[j] + b[j]);
			/* the row statistics spyre_op_layer_norm_stats writes */
			rm[i] = round_to(dt, mu);
			rr[i] = round_to(dt, 1 / sqrt(var + 1e-5));
		}
		CHECK(compare("layer_norm", y, r, NULL, n, dt, 4) < 0, "%s", spyre_dtype_name(dt));
		{
			/* the same with each row's mean and rstd, in one SUBMIT */
			int64_t ss[2] = { sx[0], 1 };
			double mean[37], rstd[37], y2[37 * 200];
			struct spyre_device_stats s0, s1;
			struct dtensor dm, drs;

			OK(dt_new(&c, &dm, dt, 2, ss));
			OK(dt_new(&c, &drs, dt, 2, ss));
			/* the first call compiles (and may upload a library constant) */
			OK(spyre_op_layer_norm_stats(c.ops, c.s, &dx.t, &dw.t, &db.t, 1e-5, &dy.t,
						     &dm.t, &drs.t));
			OK(spyre_memset32_async(c.s, &dy.t.buf, 0, dy.t.buf.size));
			OK(spyre_stream_synchronize(c.s));
			OK(spyre_device_get_stats(dev, &s0));
			OK(spyre_op_layer_norm_stats(c.ops, c.s, &dx.t, &dw.t, &db.t, 1e-5, &dy.t,
						     &dm.t, &drs.t));
			OK(spyre_stream_synchronize(c.s));
			OK(spyre_device_get_stats(dev, &s1));
			CHECK(s1.submits - s0.submits == 1, "%llu SUBMITs",
			      (unsigned long long)(s1.submits - s0.submits));
			OK(dt_read(&c, &dy, y2));
			OK(dt_read(&c, &dm, mean));
			OK(dt_read(&c, &drs, rstd));
			CHECK(compare("layer_norm_stats", y2, r, NULL, n, dt, 4) < 0, "%s",
			      spyre_dtype_name(dt));
			CHECK(compare("mean", mean, rm, NULL, sx[0], dt, 4) < 0, "%s",
			      spyre_dtype_name(dt));
			CHECK(compare("rstd", rstd, rr, NULL, sx[0], dt, 4) < 0, "%s",
			      spyre_dtype_name(dt));
			FAILS_WITH(spyre_op_layer_norm_stats(c.ops, c.s, &dx.t, &dw.t, &db.t, 1e-5,
							     &dy.t, &dy.t, &drs.t),
				   -EINVAL, "out 1");
			dt_free(&dm);
			dt_free(&drs);
		}
		OK(spyre_op_rms_norm(c.ops, c.s, &dx.t, &dw.t, 1e-6, &dy.t));
		OK(dt_read(&c, &dy, y));
		for (i = 0; i < sx[0]; i++) {
			double ms = 0;

			for (j = 0; j < C; j++)
				ms += x[i * C + j] * x[i * C + j] / C;
			for (j = 0; j < C; j++)
				r[i * C + j] = round_to(dt, x[i * C + j] / sqrt(ms + 1e-6) * w[j]);
		}
		CHECK(compare("rms_norm", y, r, NULL, n, dt, 4) < 0, "%s", spyre_dtype_name(dt));
		dt_free(&dx);
		dt_free(&dy);
		dt_free(&dw);
		dt_free(&db);
	}
	tctx_close(&c);
	free(x);
	free(y);
	free(r);
}

TEST(ops_copy_strided_cast)
{
	/* a [4, 6, 70] tensor; copies of permuted/sliced/expanded views, and casts */
	static const int64_t sx[3] = { 4, 6, 70 };
	int64_t n = numel(3, sx), i, a, b, e;
	double *x = calloc(n, 8), *y = calloc(n * 4, 8), *r = calloc(n * 4, 8);
	struct dtensor dx, dy;
	struct spyre_tensor v;
	struct tctx c;
	unsigned int d, d2;

	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &dx, SPYRE_FLOAT32, 3, sx));
	rnd_fill(x, n, -100, 100, 21, SPYRE_FLOAT32);
	OK(dt_write(&c, &dx, x));
	/* transpose(0, 2): [70, 6, 4] view */
	{
		int64_t so[3] = { 70, 6, 4 };

		v = dx.t;
		v.shape[0] = 70;
		v.shape[2] = 4;
		v.strides[0] = 1;
		v.strides[2] = 6 * 70;
		OK(dt_new(&c, &dy, SPYRE_FLOAT32, 3, so));
		OK(spyre_op_copy(c.ops, c.s, &v, &dy.t));
		OK(dt_read(&c, &dy, y));
		for (e = 0; e < 70; e++)
			for (b = 0; b < 6; b++)
				for (a = 0; a < 4; a++)
					r[(e * 6 + b) * 4 + a] = x[(a * 6 + b) * 70 + e];
		CHECK(compare("transpose copy", y, r, NULL, n, SPYRE_FLOAT32, 0) < 0, "exact");
		dt_free(&dy);
	}
	/* slice [1:3, :, 5:69] with an offset, then expand a [1, 70] row to [6, 70] */
	{
		int64_t so[3] = { 2, 6, 64 }, se[2] = { 6, 70 };

		v = dx.t;
		v.shape[0] = 2;
		v.shape[2] = 64;
		v.buf.offset += (uint64_t)(1 * 6 * 70 + 5) * 4;
		v.buf.size -= (uint64_t)(1 * 6 * 70 + 5) * 4;
		OK(dt_new(&c, &dy, SPYRE_FLOAT32, 3, so));
		OK(spyre_op_copy(c.ops, c.s, &v, &dy.t));
		OK(dt_read(&c, &dy, y));
		for (a = 0; a < 2; a++)
			for (b = 0; b < 6; b++)
				for (e = 0; e < 64; e++)
					r[(a * 6 + b) * 64 + e] = x[((a + 1) * 6 + b) * 70 + e + 5];
		CHECK(compare("slice copy", y, r, NULL, 2 * 6 * 64, SPYRE_FLOAT32, 0) < 0, "exact");
		dt_free(&dy);
		v = dx.t;
		v.ndim = 2;
		v.shape[0] = 6;
		v.shape[1] = 70;
		v.strides[0] = 0;
		v.strides[1] = 1;
		OK(dt_new(&c, &dy, SPYRE_FLOAT32, 2, se));
		OK(spyre_op_copy(c.ops, c.s, &v, &dy.t));
		OK(dt_read(&c, &dy, y));
		for (b = 0; b < 6; b++)
			for (e = 0; e < 70; e++)
				r[b * 70 + e] = x[e];
		CHECK(compare("expand copy", y, r, NULL, 6 * 70, SPYRE_FLOAT32, 0) < 0, "exact");
		dt_free(&dy);
	}
	/* casts between every pair of card dtypes (values in int8 range) */
	{
		static const enum spyre_dtype all[] = { SPYRE_FLOAT32, SPYRE_FLOAT16,
							SPYRE_BFLOAT16, SPYRE_INT8, SPYRE_INT32 };
		struct dtensor ds, dd;

		for (d = 0; d < 5; d++) {
			OK(dt_new(&c, &ds, all[d], 3, sx));
			rnd_fill(x, n, -120, 120, 22, all[d]);
			for (i = 0; i < n; i++)
				x[i] = round_to(all[d], x[i]);
			OK(dt_write(&c, &ds, x));
			for (d2 = 0; d2 < 5; d2++) {
				OK(dt_new(&c, &dd, all[d2], 3, sx));
				OK(spyre_op_copy(c.ops, c.s, &ds.t, &dd.t));
				OK(dt_read(&c, &dd, y));
				/* float -> integer truncates toward zero, as PyTorch */
				for (i = 0; i < n; i++)
					r[i] = round_to(all[d2], all[d2] == SPYRE_INT8 ||
								 all[d2] == SPYRE_INT32 ?
								 trunc(x[i]) : x[i]);
				CHECK(compare("cast", y, r, NULL, n, SPYRE_FLOAT32, 0) < 0,
				      "%s -> %s", spyre_dtype_name(all[d]),
				      spyre_dtype_name(all[d2]));
				dt_free(&dd);
			}
			dt_free(&ds);
		}
	}
	dt_free(&dx);
	tctx_close(&c);
	free(x);
	free(y);
	free(r);
}

TEST(ops_edge_shapes)
{
	struct spyre_ops_stats st0, st1;
	struct spyre_device_stats ds0, ds1;
	struct dtensor dx, dy;
	struct tctx c;
	int64_t zero[2] = { 0, 5 }, one[1] = { 1 }, big[1] = { (1 << 21) + 3 }, i;
	double v = 2.5, y1, *x, *y;

	OK(tctx_open(dev, &c));
	/* 0-sized: validated, nothing launched */
	OK(dt_new(&c, &dx, SPYRE_FLOAT16, 2, zero));
	OK(dt_new(&c, &dy, SPYRE_FLOAT16, 2, zero));
	OK(spyre_ops_get_stats(c.ops, &st0));
	OK(spyre_device_get_stats(dev, &ds0));
	OK(spyre_op_unary(c.ops, c.s, SPYRE_UN_EXP, &dx.t, &dy.t));
	OK(spyre_op_binary(c.ops, c.s, SPYRE_BIN_ADD, &dx.t, &dy.t, &dy.t));
	OK(spyre_ops_get_stats(c.ops, &st1));
	OK(spyre_device_get_stats(dev, &ds1));
	CHECK(st1.launches == st0.launches && ds1.submits == ds0.submits, "no launch");
	dt_free(&dx);
	dt_free(&dy);
	/* one element */
	OK(dt_new(&c, &dx, SPYRE_FLOAT32, 1, one));
	OK(dt_new(&c, &dy, SPYRE_FLOAT32, 1, one));
	OK(dt_write(&c, &dx, &v));
	OK(spyre_op_unary(c.ops, c.s, SPYRE_UN_SQUARE, &dx.t, &dy.t));
	OK(dt_read(&c, &dy, &y1));
	CHECK(y1 == 6.25, "1 element: %g", y1);
	dt_free(&dx);
	dt_free(&dy);
	/* 2^21 + 3 fp32: several tiles per core, an odd tail */
	x = calloc(big[0], 8);
	y = calloc(big[0], 8);
	ASSERT(x && y, "alloc");
	rnd_fill(x, big[0], -10, 10, 31, SPYRE_FLOAT32);
	OK(dt_new(&c, &dx, SPYRE_FLOAT32, 1, big));
	OK(dt_new(&c, &dy, SPYRE_FLOAT32, 1, big));
	OK(dt_write(&c, &dx, x));
	OK(spyre_op_binary_scalar(c.ops, c.s, SPYRE_BIN_SUB, &dx.t, 1.5, 1, &dy.t));
	OK(dt_read(&c, &dy, y));
	for (i = 0; i < big[0]; i++)
		x[i] = round_to(SPYRE_FLOAT32, 1.5 - x[i]);
	CHECK(compare("big rsub", y, x, NULL, big[0], SPYRE_FLOAT32, 1) < 0, "2^21+3");
	dt_free(&dx);
	dt_free(&dy);
	free(x);
	free(y);
	tctx_close(&c);
}

TEST(ops_scalar_clamp_fill)
{
	static const int64_t sx[2] = { 9, 33 };
	int64_t n = numel(2, sx), i;
	double x[297], y[297], r[297];
	struct dtensor dx, dy;
	struct tctx c;
	unsigned int op;
	int rev;

	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &dx, SPYRE_FLOAT16, 2, sx));
	OK(dt_new(&c, &dy, SPYRE_FLOAT16, 2, sx));
	rnd_fill(x, n, 0.5, 4, 41, SPYRE_FLOAT16);
	OK(dt_write(&c, &dx, x));
	for (op = 0; op < SPYRE_BIN_COUNT; op++)
		for (rev = 0; rev < 2 && arith_row(op); rev++) {
			OK(spyre_op_binary_scalar(c.ops, c.s, op, &dx.t, 1.75, rev, &dy.t));
			OK(dt_read(&c, &dy, y));
			for (i = 0; i < n; i++)
				r[i] = round_to(SPYRE_FLOAT16, rev ? ref_binary(op, 1.75, x[i]) :
								 ref_binary(op, x[i], 1.75));
			CHECK(compare("scalar", y, r, NULL, n, SPYRE_FLOAT16, 1) < 0,
			      "op %u rev %d", op, rev);
		}
	OK(spyre_op_clamp(c.ops, c.s, &dx.t, 1.0, 2.0, &dy.t));
	OK(dt_read(&c, &dy, y));
	for (i = 0; i < n; i++)
		r[i] = x[i] < 1 ? 1 : x[i] > 2 ? 2 : x[i];
	CHECK(compare("clamp", y, r, NULL, n, SPYRE_FLOAT16, 0) < 0, "clamp");
	OK(spyre_op_fill(c.ops, c.s, -3.25, &dy.t));
	OK(dt_read(&c, &dy, y));
	for (i = 0; i < n; i++)
		r[i] = -3.25;
	CHECK(compare("fill", y, r, NULL, n, SPYRE_FLOAT16, 0) < 0, "fill");
	dt_free(&dx);
	dt_free(&dy);
	tctx_close(&c);
}

TEST(ops_embedding)
{
	int64_t sw[2] = { 50, 24 }, si[2] = { 3, 7 }, so[3] = { 3, 7, 24 }, i, j;
	double w[50 * 24], idx[21], y[3 * 7 * 24], r[3 * 7 * 24];
	struct dtensor dw, di, dy;
	struct tctx c;
	int t;

	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &dw, SPYRE_FLOAT16, 2, sw));
	OK(dt_new(&c, &dy, SPYRE_FLOAT16, 3, so));
	rnd_fill(w, 50 * 24, -2, 2, 51, SPYRE_FLOAT16);
	OK(dt_write(&c, &dw, w));
	for (i = 0; i < 21; i++)
		idx[i] = (double)((i * 17 + 3) % 50);
	idx[0] = 0;
	idx[1] = 49;
	for (t = 0; t < 2; t++) {
		OK(dt_new(&c, &di, t ? SPYRE_INT64 : SPYRE_INT32, 2, si));
		OK(dt_write(&c, &di, idx));
		OK(spyre_op_embedding(c.ops, c.s, &dw.t, &di.t, &dy.t));
		OK(dt_read(&c, &dy, y));
		for (i = 0; i < 21; i++)
			for (j = 0; j < 24; j++)
				r[i * 24 + j] = w[(int64_t)idx[i] * 24 + j];
		CHECK(compare("embedding", y, r, NULL, 21 * 24, SPYRE_FLOAT16, 0) < 0, "%s",
		      t ? "int64" : "int32");
		dt_free(&di);
	}
	dt_free(&dw);
	dt_free(&dy);
	tctx_close(&c);
}

TEST(ops_cache)
{
	int64_t s1[1] = { 100 }, s2[1] = { 200 }, s3[1] = { 300 };
	struct dtensor a1, a2, a3;
	struct spyre_ops_stats st;
	spyre_ops *ops;
	struct tctx c;

	OK(tctx_open(dev, &c));
	OK(spyre_ops_create(dev, 2, &ops));
	OK(dt_new(&c, &a1, SPYRE_FLOAT32, 1, s1));
	OK(dt_new(&c, &a2, SPYRE_FLOAT32, 1, s2));
	OK(dt_new(&c, &a3, SPYRE_FLOAT32, 1, s3));
	OK(spyre_op_unary(ops, c.s, SPYRE_UN_RELU, &a1.t, &a1.t));
	OK(spyre_op_unary(ops, c.s, SPYRE_UN_RELU, &a1.t, &a1.t));
	OK(spyre_ops_get_stats(ops, &st));
	CHECK(st.misses == 1 && st.hits == 1 && st.entries == 1, "hit %llu miss %llu",
	      (unsigned long long)st.hits, (unsigned long long)st.misses);
	CHECK(st.programs_built == 1, "one program built: %llu",
	      (unsigned long long)st.programs_built);
	OK(spyre_op_unary(ops, c.s, SPYRE_UN_RELU, &a2.t, &a2.t));
	OK(spyre_op_unary(ops, c.s, SPYRE_UN_RELU, &a3.t, &a3.t));	/* evicts a1's */
	OK(spyre_op_unary(ops, c.s, SPYRE_UN_EXP, &a3.t, &a3.t));	/* evicts a2's */
	OK(spyre_op_unary(ops, c.s, SPYRE_UN_RELU, &a1.t, &a1.t));	/* miss again */
	OK(spyre_ops_get_stats(ops, &st));
	CHECK(st.misses == 5 && st.hits == 1 && st.evictions == 3 && st.entries == 2 &&
	      st.capacity == 2 && st.launches == 6, "miss %llu evict %llu entries %llu",
	      (unsigned long long)st.misses, (unsigned long long)st.evictions,
	      (unsigned long long)st.entries);
	OK(spyre_stream_synchronize(c.s));
	OK(spyre_ops_destroy(ops));
	dt_free(&a1);
	dt_free(&a2);
	dt_free(&a3);
	tctx_close(&c);
}

TEST(ops_bad_inputs)
{
	int64_t s1[2] = { 4, 8 }, s2[2] = { 3, 8 }, s3[2] = { 8, 4 };
	struct spyre_device_stats d0, d1;
	struct dtensor a, b, o, i32, w;
	struct spyre_tensor t;
	spyre_bo *host;
	struct tctx c;

	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &a, SPYRE_FLOAT32, 2, s1));
	OK(dt_new(&c, &b, SPYRE_FLOAT32, 2, s2));
	OK(dt_new(&c, &o, SPYRE_FLOAT32, 2, s1));
	OK(dt_new(&c, &w, SPYRE_FLOAT16, 2, s3));
	OK(dt_new(&c, &i32, SPYRE_INT32, 2, s1));
	OK(spyre_device_get_stats(dev, &d0));
	FAILS_WITH(spyre_op_binary(c.ops, c.s, SPYRE_BIN_ADD, &a.t, &b.t, &o.t), -EINVAL,
		   "do not broadcast");
	FAILS_WITH(spyre_op_unary(c.ops, c.s, SPYRE_UN_EXP, &a.t, &b.t), -EINVAL, "out is");
	FAILS_WITH(spyre_op_matmul(c.ops, c.s, &a.t, &a.t, &o.t), -EINVAL, "inner dims");
	FAILS_WITH(spyre_op_matmul(c.ops, c.s, &a.t, &w.t, &o.t), -EINVAL, "dtypes");
	FAILS_WITH(spyre_op_binary(c.ops, c.s, SPYRE_BIN_DIV, &i32.t, &i32.t, &i32.t),
		   -EOPNOTSUPP, "int32 [4, 8]");
	t = a.t;
	t.buf.offset = 2;
	FAILS_WITH(spyre_op_unary(c.ops, c.s, SPYRE_UN_EXP, &t, &o.t), -EINVAL,
		   "not a multiple");
	t = a.t;
	t.shape[0] = 1000;
	FAILS_WITH(spyre_op_unary(c.ops, c.s, SPYRE_UN_EXP, &t, &o.t), -EINVAL, "reach");
	t = a.t;
	t.dtype = (enum spyre_dtype)9;
	FAILS_WITH(spyre_op_unary(c.ops, c.s, SPYRE_UN_EXP, &t, &o.t), -EINVAL,
		   "unknown dtype");
	t = o.t;
	t.strides[0] = 0;
	FAILS_WITH(spyre_op_unary(c.ops, c.s, SPYRE_UN_EXP, &a.t, &t), -EINVAL, "stride 0");
	FAILS_WITH(spyre_op_reduce(c.ops, c.s, SPYRE_RED_SUM, &a.t, 5, 0, &o.t), -EINVAL,
		   "dim 5");
	OK(spyre_bo_create(dev, 4096, SPYRE_MEM_HOST, &host));
	t = a.t;
	t.buf = spyre_bo_buf(host);
	FAILS_WITH(spyre_op_unary(c.ops, c.s, SPYRE_UN_EXP, &t, &o.t), -EINVAL, "host memory");
	OK(spyre_device_get_stats(dev, &d1));
	CHECK(d1.submits == d0.submits, "bad inputs launched %llu submits",
	      (unsigned long long)(d1.submits - d0.submits));
	spyre_bo_destroy(host);
	dt_free(&a);
	dt_free(&b);
	dt_free(&o);
	dt_free(&w);
	dt_free(&i32);
	tctx_close(&c);
}

TEST(ops_copy_many_programs)
{
	/* a transposed [4, 70000] view: element-wise loads, more than one program */
	int64_t sx[2] = { 4, 70000 }, so[2] = { 70000, 4 }, i, j;
	double *x = calloc(280000, 8), *y = calloc(280000, 8), *r = calloc(280000, 8);
	struct spyre_ops_stats st;
	struct dtensor dx, dy;
	struct spyre_tensor v;
	struct tctx c;

	ASSERT(x && y && r, "alloc");
	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &dx, SPYRE_FLOAT32, 2, sx));
	OK(dt_new(&c, &dy, SPYRE_FLOAT32, 2, so));
	rnd_fill(x, 280000, -5, 5, 61, SPYRE_FLOAT32);
	OK(dt_write(&c, &dx, x));
	v = dx.t;
	v.shape[0] = 70000;
	v.shape[1] = 4;
	v.strides[0] = 1;
	v.strides[1] = 70000;
	OK(spyre_op_copy(c.ops, c.s, &v, &dy.t));
	OK(dt_read(&c, &dy, y));
	for (i = 0; i < 70000; i++)
		for (j = 0; j < 4; j++)
			r[i * 4 + j] = x[j * 70000 + i];
	CHECK(compare("transposed copy", y, r, NULL, 280000, SPYRE_FLOAT32, 0) < 0, "exact");
	OK(spyre_ops_get_stats(c.ops, &st));
	CHECK(st.programs_built >= 2, "split into %llu programs",
	      (unsigned long long)st.programs_built);
	dt_free(&dx);
	dt_free(&dy);
	tctx_close(&c);
	free(x);
	free(y);
	free(r);
}

TEST(ops_cat)
{
	int64_t s1[2] = { 3, 5 }, s2[2] = { 3, 0 }, s3[2] = { 3, 9 }, so[2] = { 3, 14 }, i, j;
	double a[15], b[27], y[42], r[42];
	struct dtensor d1, d2, d3, dy;
	struct spyre_tensor xs[3];
	spyre_value v[3], vo;
	spyre_compiled *k;
	spyre_graph *g;
	struct tctx c;

	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &d1, SPYRE_FLOAT16, 2, s1));
	OK(dt_new(&c, &d2, SPYRE_FLOAT16, 2, s2));
	OK(dt_new(&c, &d3, SPYRE_FLOAT16, 2, s3));
	OK(dt_new(&c, &dy, SPYRE_FLOAT16, 2, so));
	rnd_fill(a, 15, -3, 3, 71, SPYRE_FLOAT16);
	rnd_fill(b, 27, -3, 3, 72, SPYRE_FLOAT16);
	OK(dt_write(&c, &d1, a));
	OK(dt_write(&c, &d3, b));
	for (i = 0; i < 3; i++)
		for (j = 0; j < 14; j++)
			r[i * 14 + j] = j < 5 ? a[i * 5 + j] : b[i * 9 + j - 5];
	xs[0] = d1.t;
	xs[1] = d2.t;
	xs[2] = d3.t;
	OK(spyre_op_cat(c.ops, c.s, xs, 3, 1, &dy.t));
	OK(dt_read(&c, &dy, y));
	CHECK(compare("eager cat", y, r, NULL, 42, SPYRE_FLOAT16, 0) < 0, "eager");
	FAILS_WITH(spyre_op_cat(c.ops, c.s, xs, 2, 1, &dy.t), -EINVAL, "sum to 5");
	/* graph: cat of two exp() results, then a scale: the copies fuse their producers */
	OK(spyre_graph_create(c.ops, &g));
	OK(spyre_graph_input(g, SPYRE_FLOAT16, 2, s1, &v[0]));
	OK(spyre_graph_input(g, SPYRE_FLOAT16, 2, s3, &v[1]));
	OK(spyre_graph_unary(g, SPYRE_UN_NEG, v[0], &v[0]));
	OK(spyre_graph_unary(g, SPYRE_UN_NEG, v[1], &v[1]));
	OK(spyre_graph_cat(g, v, 2, -1, &vo));
	OK(spyre_graph_binary_scalar(g, SPYRE_BIN_MUL, vo, 2, 0, &vo));
	OK(spyre_graph_output(g, vo));
	OK(spyre_graph_compile(g, &k));
	xs[1] = d3.t;
	OK(spyre_compiled_run(k, c.s, xs, 2, &dy.t, 1));
	OK(spyre_stream_synchronize(c.s));
	OK(dt_read(&c, &dy, y));
	for (i = 0; i < 42; i++)
		r[i] = -2 * r[i];
	CHECK(compare("graph cat", y, r, NULL, 42, SPYRE_FLOAT16, 0) < 0, "graph");
	OK(spyre_compiled_destroy(k));
	OK(spyre_graph_destroy(g));
	dt_free(&d1);
	dt_free(&d2);
	dt_free(&d3);
	dt_free(&dy);
	tctx_close(&c);
}

TEST(ops_matmul_int8)
{
	/* exact int32 products; dequantised per channel in a fused epilogue */
	int64_t sa[2] = { 37, 300 }, sb[2] = { 300, 45 }, so[2] = { 37, 45 }, sn[1] = { 45 };
	int64_t i, j, p;
	double *a = calloc(37 * 300, 8), *b = calloc(300 * 45, 8), y[37 * 45], r[37 * 45];
	double sc[45], mag[37 * 45];
	struct dtensor da, db, dy, ds, df;
	struct spyre_compiled_stats st;
	spyre_value va, vb, vs, t;
	spyre_compiled *k;
	spyre_graph *g;
	struct tctx c;

	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &da, SPYRE_INT8, 2, sa));
	OK(dt_new(&c, &db, SPYRE_INT8, 2, sb));
	OK(dt_new(&c, &dy, SPYRE_INT32, 2, so));
	OK(dt_new(&c, &ds, SPYRE_FLOAT32, 1, sn));
	OK(dt_new(&c, &df, SPYRE_FLOAT32, 2, so));
	rnd_fill(a, 37 * 300, -128, 128, 81, SPYRE_INT8);
	rnd_fill(b, 300 * 45, -128, 128, 82, SPYRE_INT8);
	rnd_fill(sc, 45, 0.001, 0.01, 83, SPYRE_FLOAT32);
	for (i = 0; i < 37 * 300; i++)
		a[i] = floor(a[i]);
	for (i = 0; i < 300 * 45; i++)
		b[i] = floor(b[i]);
	OK(dt_write(&c, &da, a));
	OK(dt_write(&c, &db, b));
	OK(dt_write(&c, &ds, sc));
	OK(spyre_op_matmul(c.ops, c.s, &da.t, &db.t, &dy.t));
	OK(dt_read(&c, &dy, y));
	for (i = 0; i < 37; i++)
		for (j = 0; j < 45; j++) {
			double s = 0;

			for (p = 0; p < 300; p++)
				s += a[i * 300 + p] * b[p * 45 + j];
			r[i * 45 + j] = s;
		}
	CHECK(compare("int8 matmul", y, r, NULL, 37 * 45, SPYRE_INT32, 0) < 0, "exact");
	OK(spyre_graph_create(c.ops, &g));
	OK(spyre_graph_input(g, SPYRE_INT8, 2, sa, &va));
	OK(spyre_graph_constant(g, &db.t, &vb));
	OK(spyre_graph_constant(g, &ds.t, &vs));
	OK(spyre_graph_matmul(g, va, vb, &t));
	OK(spyre_graph_cast(g, t, SPYRE_FLOAT32, &t));
	OK(spyre_graph_binary(g, SPYRE_BIN_MUL, t, vs, &t));
	OK(spyre_graph_output(g, t));
	OK(spyre_graph_compile(g, &k));
	OK(spyre_compiled_get_stats(k, &st));
	CHECK(st.kernels == 1, "dequantisation fused: %u kernels", st.kernels);
	OK(spyre_compiled_run(k, c.s, &da.t, 1, &df.t, 1));
	OK(spyre_stream_synchronize(c.s));
	OK(dt_read(&c, &df, y));
	for (i = 0; i < 37; i++)
		for (j = 0; j < 45; j++) {
			r[i * 45 + j] *= sc[j];
			mag[i * 45 + j] = fabs(r[i * 45 + j]) + 1e-3;
		}
	CHECK(compare("int8 dequant", y, r, mag, 37 * 45, SPYRE_FLOAT32, 1) < 0, "scaled");
	OK(spyre_compiled_destroy(k));
	OK(spyre_graph_destroy(g));
	dt_free(&da);
	dt_free(&db);
	dt_free(&dy);
	dt_free(&ds);
	dt_free(&df);
	tctx_close(&c);
	free(a);
	free(b);
}

TEST(ops_pow_scalar)
{
	static const double ps[] = { 0, 1, 2, 3, 7, -1, -2, 0.5, -0.5, 1.5, -2.25 };
	static const int64_t sx[1] = { 200 };
	double x[200], y[200], r[200];
	struct dtensor dx, dy;
	struct tctx c;
	unsigned int k;
	int i;

	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &dx, SPYRE_FLOAT32, 1, sx));
	OK(dt_new(&c, &dy, SPYRE_FLOAT32, 1, sx));
	rnd_fill(x, 200, -3, 3, 91, SPYRE_FLOAT32);
	x[0] = 0;
	x[1] = -0.0;
	x[2] = INFINITY;
	x[3] = NAN;
	OK(dt_write(&c, &dx, x));
	for (k = 0; k < sizeof(ps) / sizeof(ps[0]); k++) {
		OK(spyre_op_pow_scalar(c.ops, c.s, &dx.t, ps[k], &dy.t));
		OK(dt_read(&c, &dy, y));
		for (i = 0; i < 200; i++)
			r[i] = round_to(SPYRE_FLOAT32, pow(x[i], ps[k]));
		r[1] = ps[k] == 0.5 ? -0.0 : r[1];	/* sqrt(-0) = -0 */
		CHECK(compare("pow", y, r, NULL, 200, SPYRE_FLOAT32, 4) < 0, "p = %g", ps[k]);
	}
	dt_free(&dx);
	dt_free(&dy);
	tctx_close(&c);
}

TEST(ops_scalar_and_strided_operands)
{
	/* 0-dim tensors; a transposed operand in a binary op */
	int64_t s2[2] = { 33, 20 }, st[2] = { 20, 33 }, i, j;
	double x = 1.5, y, a[660], b[660], out[660], r[660];
	struct dtensor d0, d1, da, db, dy;
	struct spyre_tensor bt;
	struct tctx c;

	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &d0, SPYRE_FLOAT32, 0, NULL));
	OK(dt_new(&c, &d1, SPYRE_FLOAT32, 0, NULL));
	OK(dt_write(&c, &d0, &x));
	OK(spyre_op_unary(c.ops, c.s, SPYRE_UN_EXP, &d0.t, &d1.t));
	OK(dt_read(&c, &d1, &y));
	CHECK(fabs(y - exp(1.5)) < 1e-5, "exp of a 0-dim tensor: %g", y);
	OK(dt_new(&c, &da, SPYRE_FLOAT32, 2, s2));
	OK(dt_new(&c, &db, SPYRE_FLOAT32, 2, st));
	OK(dt_new(&c, &dy, SPYRE_FLOAT32, 2, s2));
	rnd_fill(a, 660, -2, 2, 101, SPYRE_FLOAT32);
	rnd_fill(b, 660, -2, 2, 102, SPYRE_FLOAT32);
	OK(dt_write(&c, &da, a));
	OK(dt_write(&c, &db, b));
	bt = db.t;	/* b^T: [33, 20] with strides (1, 33) */
	bt.shape[0] = 33;
	bt.shape[1] = 20;
	bt.strides[0] = 1;
	bt.strides[1] = 33;
	OK(spyre_op_binary(c.ops, c.s, SPYRE_BIN_SUB, &da.t, &bt, &dy.t));
	OK(dt_read(&c, &dy, out));
	for (i = 0; i < 33; i++)
		for (j = 0; j < 20; j++)
			r[i * 20 + j] = round_to(SPYRE_FLOAT32, a[i * 20 + j] - b[j * 33 + i]);
	CHECK(compare("a - b^T", out, r, NULL, 660, SPYRE_FLOAT32, 1) < 0, "strided operand");
	/* and the 0-dim tensor broadcast against a matrix */
	OK(spyre_op_binary(c.ops, c.s, SPYRE_BIN_DIV, &d0.t, &da.t, &dy.t));
	OK(dt_read(&c, &dy, out));
	for (i = 0; i < 660; i++)
		r[i] = round_to(SPYRE_FLOAT32, 1.5 / a[i]);
	CHECK(compare("scalar / a", out, r, NULL, 660, SPYRE_FLOAT32, 1) < 0, "0-dim operand");
	dt_free(&d0);
	dt_free(&d1);
	dt_free(&da);
	dt_free(&db);
	dt_free(&dy);
	tctx_close(&c);
}

struct eager_thread {
	spyre_device *dev;
	spyre_ops *ops;
	int seed, bad;
};

static void *eager_worker(void *arg)
{
	struct eager_thread *w = arg;
	int64_t s[2] = { 16, 100 + 10 * (w->seed % 2) }, i;
	double x[1760], y[1760];
	struct dtensor dx, dy;
	struct tctx c;
	int k;

	if (tctx_open(w->dev, &c)) {
		w->bad = 1;
		return NULL;
	}
	spyre_ops_destroy(c.ops);
	c.ops = w->ops;	/* shared context: one cache for all threads */
	if (dt_new(&c, &dx, SPYRE_FLOAT32, 2, s) || dt_new(&c, &dy, SPYRE_FLOAT32, 2, s)) {
		w->bad = 1;
		return NULL;
	}
	rnd_fill(x, s[0] * s[1], -1, 1, (unsigned int)w->seed, SPYRE_FLOAT32);
	dt_write(&c, &dx, x);
	for (k = 0; k < 20 && !w->bad; k++) {
		if (spyre_op_binary_scalar(w->ops, c.s, SPYRE_BIN_ADD, &dx.t, k, 0, &dy.t) ||
		    dt_read(&c, &dy, y))
			w->bad = 1;
		for (i = 0; i < s[0] * s[1] && !w->bad; i++)
			if (y[i] != (float)(x[i] + k))
				w->bad = 2;
	}
	dt_free(&dx);
	dt_free(&dy);
	c.ops = NULL;
	tctx_close(&c);
	return NULL;
}

/*
 * The eager fast path keys a call by its tensors' dtypes, shapes and
 * strides, not their buffers: the same call over other buffers reuses the
 * entry (and computes on those buffers), and the same shape with other
 * strides (a transposed view) or another scalar is a call of its own.
 */
TEST(ops_fast_path_keys)
{
	int64_t s[2] = { 8, 16 }, i, j;
	double va[128], vb[128], y[128], r[128];
	struct dtensor a, b, out;
	struct spyre_tensor at, ot, bt;
	struct spyre_ops_stats s0, s1;
	struct tctx c;
	int pass;

	for (i = 0; i < 128; i++) {
		va[i] = (double)i;
		vb[i] = 1000.0 + 2.0 * (double)i;
	}

	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &a, SPYRE_FLOAT32, 2, s));
	OK(dt_new(&c, &b, SPYRE_FLOAT32, 2, s));
	OK(dt_new(&c, &out, SPYRE_FLOAT32, 2, s));
	OK(dt_write(&c, &a, va));
	OK(dt_write(&c, &b, vb));
	OK(spyre_ops_get_stats(c.ops, &s0));
	for (pass = 0; pass < 3; pass++) {
		/* a + b, then b + a: the same call, other buffers */
		const struct dtensor *x = pass == 1 ? &b : &a, *z = pass == 1 ? &a : &b;

		OK(spyre_op_binary(c.ops, c.s, SPYRE_BIN_SUB, &x->t, &z->t, &out.t));
		OK(dt_read(&c, &out, y));
		for (i = 0; i < 128; i++)
			r[i] = pass == 1 ? vb[i] - va[i] : va[i] - vb[i];
		CHECK(compare("fast path sub", y, r, NULL, 128, SPYRE_FLOAT32, 0) < 0,
		      "pass %d", pass);
	}
	/* a viewed transposed, [16, 8] strides [1, 16], minus b's buffer as [16, 8] */
	at = a.t;
	at.shape[0] = 16;
	at.shape[1] = 8;
	at.strides[0] = 1;
	at.strides[1] = 16;
	ot = out.t;
	ot.shape[0] = 16;
	ot.shape[1] = 8;
	ot.strides[0] = 8;
	ot.strides[1] = 1;
	bt = b.t;
	bt.shape[0] = 16;
	bt.shape[1] = 8;
	bt.strides[0] = 8;
	bt.strides[1] = 1;
	OK(spyre_op_binary(c.ops, c.s, SPYRE_BIN_SUB, &at, &bt, &ot));
	OK(dt_read(&c, &out, y));
	for (i = 0; i < 16; i++)
		for (j = 0; j < 8; j++)
			r[i * 8 + j] = va[j * 16 + i] - vb[i * 8 + j];
	CHECK(compare("fast path strided sub", y, r, NULL, 128, SPYRE_FLOAT32, 0) < 0,
	      "transposed operand");
	/* another scalar is another program */
	OK(spyre_op_binary_scalar(c.ops, c.s, SPYRE_BIN_ADD, &a.t, 1.5, 0, &out.t));
	OK(spyre_op_binary_scalar(c.ops, c.s, SPYRE_BIN_ADD, &a.t, -4.0, 0, &out.t));
	OK(dt_read(&c, &out, y));
	for (i = 0; i < 128; i++)
		r[i] = va[i] - 4.0;
	CHECK(compare("fast path scalar", y, r, NULL, 128, SPYRE_FLOAT32, 0) < 0, "a + -4");
	OK(spyre_ops_get_stats(c.ops, &s1));
	CHECK(s1.launches - s0.launches == 6, "launches %llu",
	      (unsigned long long)(s1.launches - s0.launches));
	OK(spyre_stream_synchronize(c.s));
	dt_free(&a);
	dt_free(&b);
	dt_free(&out);
	tctx_close(&c);
}

TEST(ops_threads_shared_cache)
{
	struct eager_thread w[4];
	struct spyre_ops_stats st;
	pthread_t th[4];
	spyre_ops *ops;
	int i;

	OK(spyre_ops_create(dev, 64, &ops));
	for (i = 0; i < 4; i++) {
		w[i] = (struct eager_thread){ dev, ops, i, 0 };
		pthread_create(&th[i], NULL, eager_worker, &w[i]);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		CHECK(!w[i].bad, "thread %d failed (%d)", i, w[i].bad);
	}
	OK(spyre_ops_get_stats(ops, &st));
	/* 2 shapes x 20 scalars: each key is built once, under the cache lock */
	CHECK(st.launches == 80 && st.hits == 40 && st.misses == 40,
	      "launches %llu hits %llu misses %llu", (unsigned long long)st.launches,
	      (unsigned long long)st.hits, (unsigned long long)st.misses);
	OK(spyre_ops_destroy(ops));
}

/*
 * Eager ops launch outside the cache lock, holding a use of their entry: with
 * room for one entry every build evicts the entry another thread may be
 * launching right then, which must stay alive until that launch is queued
 * (ASan and TSan builds check the lifetime) and compute the right values.
 */
TEST(ops_threads_evicting_cache)
{
	struct eager_thread w[4];
	struct spyre_ops_stats st;
	pthread_t th[4];
	spyre_ops *ops;
	int i;

	OK(spyre_ops_create(dev, 1, &ops));
	for (i = 0; i < 4; i++) {
		w[i] = (struct eager_thread){ dev, ops, i, 0 };
		pthread_create(&th[i], NULL, eager_worker, &w[i]);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		CHECK(!w[i].bad, "thread %d failed (%d)", i, w[i].bad);
	}
	OK(spyre_ops_get_stats(ops, &st));
	CHECK(st.launches == 80 && st.entries == 1 && st.evictions == st.misses - 1,
	      "launches %llu entries %llu evictions %llu misses %llu",
	      (unsigned long long)st.launches, (unsigned long long)st.entries,
	      (unsigned long long)st.evictions, (unsigned long long)st.misses);
	OK(spyre_ops_destroy(ops));
}

TEST(ops_matmul_strided_operands)
{
	/* A^T @ B with A stored [K, M]: the library makes A contiguous first */
	int64_t sa[2] = { 70, 30 }, sb[2] = { 70, 50 }, so[2] = { 30, 50 }, i, j, p;
	double *a = calloc(2100, 8), *b = calloc(3500, 8), y[1500], r[1500], mag[1500];
	struct dtensor da, db, dy;
	struct spyre_tensor at;
	struct tctx c;

	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &da, SPYRE_BFLOAT16, 2, sa));
	OK(dt_new(&c, &db, SPYRE_BFLOAT16, 2, sb));
	OK(dt_new(&c, &dy, SPYRE_BFLOAT16, 2, so));
	rnd_fill(a, 2100, -1, 1, 111, SPYRE_BFLOAT16);
	rnd_fill(b, 3500, -1, 1, 112, SPYRE_BFLOAT16);
	OK(dt_write(&c, &da, a));
	OK(dt_write(&c, &db, b));
	at = da.t;
	at.shape[0] = 30;
	at.shape[1] = 70;
	at.strides[0] = 1;
	at.strides[1] = 30;
	OK(spyre_op_matmul(c.ops, c.s, &at, &db.t, &dy.t));
	OK(dt_read(&c, &dy, y));
	for (i = 0; i < 30; i++)
		for (j = 0; j < 50; j++) {
			double s = 0, m = 0;

			for (p = 0; p < 70; p++) {
				s += a[p * 30 + i] * b[p * 50 + j];
				m += fabs(a[p * 30 + i] * b[p * 50 + j]);
			}
			r[i * 50 + j] = s;
			mag[i * 50 + j] = m + fabs(s);
		}
	CHECK(compare("A^T B", y, r, mag, 1500, SPYRE_BFLOAT16, 1) < 0, "values");
	dt_free(&da);
	dt_free(&db);
	dt_free(&dy);
	tctx_close(&c);
	free(a);
	free(b);
}

/* Card interface 1.3 or later (VEC compare/select)? */
static bool has_select(spyre_device *dev)
{
	struct spyre_device_props p;

	return !spyre_device_get_props(dev, &p) && p.hw_version >= SPYRE_HW_VERSION(1, 3);
}

TEST(ops_compare_select)
{
	int64_t sa[2] = { 6, 40 }, sb[1] = { 40 }, sm[2] = { 6, 1 }, s3[3] = { 2, 5, 7 }, i, j, q;
	double a[240], b[40], m[6], y[240], r[240], t[70];
	struct dtensor da, db, dm, dy, dby, d3, d3y;
	struct tctx c;
	unsigned int op;
	int k;

	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &da, SPYRE_FLOAT16, 2, sa));
	OK(dt_new(&c, &db, SPYRE_FLOAT16, 1, sb));
	OK(dt_new(&c, &dm, SPYRE_BOOL, 2, sm));
	OK(dt_new(&c, &dy, SPYRE_FLOAT16, 2, sa));
	OK(dt_new(&c, &dby, SPYRE_BOOL, 2, sa));
	for (i = 0; i < 240; i++)
		a[i] = (double)(i % 7) - 3;
	for (i = 0; i < 40; i++)
		b[i] = (double)(i % 5) - 2;
	a[3] = NAN;
	for (i = 0; i < 6; i++)
		m[i] = i % 2;
	OK(dt_write(&c, &da, a));
	OK(dt_write(&c, &db, b));
	OK(dt_write(&c, &dm, m));
	if (!has_select(dev)) {
		/* an older card: refused up front, naming the op and the need */
		FAILS_WITH(spyre_op_binary(c.ops, c.s, SPYRE_BIN_LT, &da.t, &db.t, &dby.t),
			   -EOPNOTSUPP, "interface 1.3");
		FAILS_WITH(spyre_op_where(c.ops, c.s, &dm.t, &da.t, &db.t, &dy.t), -EOPNOTSUPP,
			   "where of float16 [6, 40]");
		goto out;
	}
	/* every binary row of the op table with a bool result */
	for (op = 0; op < SPYRE_BIN_COUNT; op++) {
		if (spyre_op_find(SPYRE_OPK_BINARY, (int)op)->result != SPYRE_RESULT_BOOL)
			continue;
		OK(spyre_op_binary(c.ops, c.s, op, &da.t, &db.t, &dby.t));
		OK(dt_read(&c, &dby, y));
		for (i = 0; i < 240; i++)
			r[i] = ref_bool(op, a[i], b[i % 40]);
		CHECK(compare("compare", y, r, NULL, 240, SPYRE_INT32, 0) < 0, "op %u", op);
		/* a scalar operand (either side), negative and zero */
		for (q = 0; q < 4; q++) {
			double v = q & 1 ? 0.0 : -2.0;

			OK(spyre_op_binary_scalar(c.ops, c.s, op, &da.t, v, q >= 2, &dby.t));
			OK(dt_read(&c, &dby, y));
			for (i = 0; i < 240; i++)
				r[i] = q >= 2 ? ref_bool(op, v, a[i]) : ref_bool(op, a[i], v);
			CHECK(compare("compare scalar", y, r, NULL, 240, SPYRE_INT32, 0) < 0,
			      "op %u scalar %g reverse %d", op, v, q >= 2);
		}
	}
	OK(spyre_op_unary(c.ops, c.s, SPYRE_UN_LOGICAL_NOT, &da.t, &dby.t));
	OK(dt_read(&c, &dby, y));
	for (i = 0; i < 240; i++)
		r[i] = a[i] == 0;
	CHECK(compare("logical_not", y, r, NULL, 240, SPYRE_INT32, 0) < 0, "not");
	/* where(mask [6,1], a [6,40], b [40]) and masked_fill(a, mask, -inf) */
	OK(spyre_op_where(c.ops, c.s, &dm.t, &da.t, &db.t, &dy.t));
	OK(dt_read(&c, &dy, y));
	for (i = 0; i < 240; i++)
		r[i] = m[i / 40] != 0 ? a[i] : b[i % 40];
	CHECK(compare("where", y, r, NULL, 240, SPYRE_FLOAT16, 0) < 0, "where");
	OK(spyre_op_masked_fill(c.ops, c.s, &da.t, &dm.t, -INFINITY, &dy.t));
	OK(dt_read(&c, &dy, y));
	for (i = 0; i < 240; i++)
		r[i] = m[i / 40] != 0 ? -INFINITY : a[i];
	CHECK(compare("masked_fill", y, r, NULL, 240, SPYRE_FLOAT16, 0) < 0, "masked_fill");
	/* tril / triu of [2, 5, 7] with several diagonals */
	OK(dt_new(&c, &d3, SPYRE_FLOAT32, 3, s3));
	OK(dt_new(&c, &d3y, SPYRE_FLOAT32, 3, s3));
	rnd_fill(t, 70, -5, 5, 121, SPYRE_FLOAT32);
	t[0] = INFINITY;
	t[1] = NAN;
	OK(dt_write(&c, &d3, t));
	for (k = -2; k <= 3; k += 1)
		for (op = 0; op < 2; op++) {
			OK(spyre_op_tril(c.ops, c.s, &d3.t, k, (int)op, &d3y.t));
			OK(dt_read(&c, &d3y, y));
			for (q = 0; q < 2; q++)
				for (i = 0; i < 5; i++)
					for (j = 0; j < 7; j++) {
						int64_t e = (q * 5 + i) * 7 + j;
						bool keep = op ? j - i >= k : j - i <= k;

						r[e] = keep ? t[e] : 0;
					}
			CHECK(compare("tril", y, r, NULL, 70, SPYRE_FLOAT32, 0) < 0, "%s k=%d",
			      op ? "triu" : "tril", k);
		}
	dt_free(&d3);
	dt_free(&d3y);
	/* bool (attention's causal masks): a bool result, exactly 0 or 1 */
	OK(dt_new(&c, &d3, SPYRE_BOOL, 3, s3));
	OK(dt_new(&c, &d3y, SPYRE_BOOL, 3, s3));
	for (i = 0; i < 70; i++)
		t[i] = i % 3 != 1;
	OK(dt_write(&c, &d3, t));
	for (k = -6; k <= 7; k += 3)
		for (op = 0; op < 2; op++) {
			OK(spyre_op_tril(c.ops, c.s, &d3.t, k, (int)op, &d3y.t));
			OK(dt_read(&c, &d3y, y));
			for (i = 0; i < 70; i++) {
				int64_t d = i % 7 - i / 7 % 5;

				r[i] = (op ? d >= k : d <= k) && t[i];
			}
			CHECK(compare("tril bool", y, r, NULL, 70, SPYRE_INT32, 0) < 0,
			      "%s k=%d", op ? "triu" : "tril", k);
		}
	dt_free(&d3);
	dt_free(&d3y);
out:
	dt_free(&da);
	dt_free(&db);
	dt_free(&dm);
	dt_free(&dy);
	dt_free(&dby);
	tctx_close(&c);
}

TEST(ops_argmax_cumsum)
{
	static const int64_t sx[3] = { 3, 5, 70 };
	int64_t n = 1050, o, q, r, i;
	double x[1050], y[1050], ref[1050], mag[1050];
	struct dtensor dx, dy, di;
	struct tctx c;
	int dim;

	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &dx, SPYRE_FLOAT16, 3, sx));
	OK(dt_new(&c, &dy, SPYRE_FLOAT16, 3, sx));
	for (i = 0; i < n; i++)
		x[i] = (double)((i * 37) % 23) - 11;	/* many ties */
	x[100] = NAN;
	OK(dt_write(&c, &dx, x));
	if (!has_select(dev)) {
		FAILS_WITH(spyre_op_cumsum(c.ops, c.s, &dx.t, 0, &dy.t), -EOPNOTSUPP,
			   "interface 1.3");
		goto out;
	}
	for (dim = 0; dim < 3; dim++) {
		int64_t inner = 1, len = sx[dim], outer = 1, os[3];
		unsigned int ond = 0;

		for (i = dim + 1; i < 3; i++)
			inner *= sx[i];
		for (i = 0; i < dim; i++)
			outer *= sx[i];
		for (i = 0; i < 3; i++)
			if (i != dim)
				os[ond++] = sx[i];
		OK(dt_new(&c, &di, SPYRE_INT32, ond, os));
		OK(spyre_op_argmax(c.ops, c.s, &dx.t, dim, 0, &di.t));
		OK(dt_read(&c, &di, y));
		OK(spyre_op_cumsum(c.ops, c.s, &dx.t, dim, &dy.t));
		for (o = 0; o < outer; o++)
			for (q = 0; q < inner; q++) {
				double mx = x[o * len * inner + q], s = 0;
				int64_t at = 0;

				for (r = 0; r < len; r++) {
					double v = x[(o * len + r) * inner + q];
					int64_t e = (o * len + r) * inner + q;

					if (!isnan(mx) && (isnan(v) || v > mx)) {
						mx = v;
						at = r;
					}
					s += v;
					ref[e] = round_to(SPYRE_FLOAT16, s);
					mag[e] = fabs(s) + r + 1;
				}
				CHECK(y[o * inner + q] == at,
				      "argmax dim %d at %lld: %g, want %lld", dim,
				      (long long)(o * inner + q), y[o * inner + q], (long long)at);
			}
		OK(dt_read(&c, &dy, y));
		CHECK(compare("cumsum", y, ref, mag, n, SPYRE_FLOAT16, 1) < 0, "dim %d", dim);
		dt_free(&di);
	}
out:
	dt_free(&dx);
	dt_free(&dy);
	tctx_close(&c);
}

TEST(ops_gather_rows)
{
	/* 1.3 cards: LOAD GATHER; transposed index view; an index past the table */
	int64_t sw[2] = { 1000, 300 }, si[2] = { 7, 40 }, so[3] = { 40, 7, 300 }, i, j;
	double *w = calloc(300000, 8), idx[280], *y = calloc(84000, 8), *r = calloc(84000, 8);
	struct dtensor dw, di, dy;
	struct spyre_tensor it;
	struct tctx c;
	int ret;

	ASSERT(w && y && r, "alloc");
	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &dw, SPYRE_BFLOAT16, 2, sw));
	OK(dt_new(&c, &di, SPYRE_INT64, 2, si));
	OK(dt_new(&c, &dy, SPYRE_BFLOAT16, 3, so));
	rnd_fill(w, 300000, -4, 4, 131, SPYRE_BFLOAT16);
	for (i = 0; i < 280; i++)
		idx[i] = (double)((i * 389 + 5) % 1000);
	OK(dt_write(&c, &dw, w));
	OK(dt_write(&c, &di, idx));
	it = di.t;	/* idx^T: [40, 7] */
	it.shape[0] = 40;
	it.shape[1] = 7;
	it.strides[0] = 1;
	it.strides[1] = 40;
	OK(spyre_op_embedding(c.ops, c.s, &dw.t, &it, &dy.t));
	OK(dt_read(&c, &dy, y));
	for (i = 0; i < 280; i++) {
		int64_t t = (i % 7) * 40 + i / 7;	/* element (i/7, i%7) of idx^T */

		for (j = 0; j < 300; j++)
			r[i * 300 + j] = w[(int64_t)idx[t] * 300 + j];
	}
	CHECK(compare("gather", y, r, NULL, 84000, SPYRE_BFLOAT16, 0) < 0, "rows");
	if (has_select(dev)) {
		idx[5] = 1000;	/* out of range: the card refuses the job */
		OK(dt_write(&c, &di, idx));
		OK(spyre_op_embedding(c.ops, c.s, &dw.t, &it, &dy.t));
		ret = spyre_stream_synchronize(c.s);
		CHECK(ret < 0, "an index past the table fails the launch (got %d)", ret);
	}
	dt_free(&dw);
	dt_free(&di);
	dt_free(&dy);
	tctx_close(&c);
	free(w);
	free(y);
	free(r);
}

/* round: ties to even, the sign of a zero result, past 2^22, inf and NaN. */
TEST(ops_round_edges)
{
	static const double xs[] = { 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.3, 0.0,
				     4194304.5, 4194305.5, 8388607.5, -8388607.5, 8388609.0,
				     1e30, -1e30, INFINITY, -INFINITY, NAN, 123.456, -7.5 };
	int64_t n = sizeof(xs) / sizeof(xs[0]), i;
	double y[sizeof(xs) / sizeof(xs[0])];
	struct dtensor dx, dy;
	struct tctx c;

	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &dx, SPYRE_FLOAT32, 1, &n));
	OK(dt_new(&c, &dy, SPYRE_FLOAT32, 1, &n));
	OK(dt_write(&c, &dx, xs));
	OK(spyre_op_unary(c.ops, c.s, SPYRE_UN_ROUND, &dx.t, &dy.t));
	OK(dt_read(&c, &dy, y));
	for (i = 0; i < n; i++) {
		double want = nearbyint((float)xs[i]);

		CHECK(isnan(want) ? isnan(y[i]) : y[i] == want && signbit(y[i]) == signbit(want),
		      "round(%.9g) = %.9g, want %.9g", xs[i], y[i], want);
	}
	dt_free(&dx);
	dt_free(&dy);
	tctx_close(&c);
}
