// SPDX-License-Identifier: MIT
/*
 * spyre_op_paged_attention against a double-precision reference that reads
 * K/V through the block table itself: block sizes 1, 4 and 16, sequence
 * lengths that are not multiples of the block size, a batch of mixed
 * lengths (prefill rows padded on the left, decode rows), grouped KV heads,
 * fp32, fp16 and bf16; NaN in the cache rows no request owns does not leak;
 * bad shapes and dtypes are refused.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ops_ref.h"

enum { R = 4, H = 4, HKV = 2, DH = 8 };

struct paged_case {
	int64_t bs, mb, nq, nblocks;
	int32_t seq[R];
};

/* out[r, h, i, :] for q [R, H, nq, DH], cache [nb, HKV, bs, 2 * DH] */
static void reference(const struct paged_case *pc, const double *q, const double *cache,
		      const int32_t *bt, double scale, double *out)
{
	int64_t bs = pc->bs, nq = pc->nq;
	int r, h, i, j, d;

	for (r = 0; r < R; r++)
		for (h = 0; h < H; h++)
			for (i = 0; i < nq; i++) {
				int64_t pos = pc->seq[r] - nq + i, kh = h / (H / HKV);
				double s[256], mx = -INFINITY, sum = 0;
				double *o = &out[((r * H + h) * nq + i) * DH];

				for (j = 0; j <= pos; j++) {
					int64_t blk = bt[r * pc->mb + j / bs];
					const double *row =
						&cache[((blk * HKV + kh) * bs + j % bs) * 2 * DH];
					double acc = 0;

					for (d = 0; d < DH; d++)
						acc += q[((r * H + h) * nq + i) * DH + d] * row[d];
					s[j] = acc * scale;
					mx = s[j] > mx ? s[j] : mx;
				}
				for (j = 0; j <= pos; j++)
					sum += s[j] = exp(s[j] - mx);
				for (d = 0; d < DH; d++) {
					double acc = 0;

					for (j = 0; j <= pos; j++) {
						int64_t blk = bt[r * pc->mb + j / bs];

						acc += s[j] / sum *
						       cache[((blk * HKV + kh) * bs + j % bs) * 2 * DH +
							     DH + d];
					}
					o[d] = pos < 0 ? 0 : acc;
				}
			}
}

/*
 * Request r owns blocks handed out in a shuffled order; its table pads with
 * the last block (owned by nobody: NaN rows). Every cache row no request
 * owns at a position below its length is NaN.
 */
static void layout(const struct paged_case *pc, int32_t *bt, double *cache)
{
	int64_t next = 0, r, m, row, rows = pc->nblocks * HKV * pc->bs * 2 * DH;
	int64_t perm_mul = 7;	/* coprime to the block counts used */
	bool *owned = calloc((size_t)rows, sizeof(bool));

	for (r = 0; r < R; r++) {
		int64_t need = (pc->seq[r] + pc->bs - 1) / pc->bs;

		for (m = 0; m < pc->mb; m++) {
			int64_t blk = (next * perm_mul) % (pc->nblocks - 1);

			if (m >= need) {
				bt[r * pc->mb + m] = (int32_t)(pc->nblocks - 1);
				continue;
			}
			bt[r * pc->mb + m] = (int32_t)blk;
			next++;
			for (row = m * pc->bs; row < (m + 1) * pc->bs && row < pc->seq[r]; row++) {
				int64_t h, base;

				for (h = 0; h < HKV; h++) {
					base = ((blk * HKV + h) * pc->bs + row % pc->bs) * 2 * DH;
					memset(&owned[base], 1, 2 * DH * sizeof(bool));
				}
			}
		}
	}
	for (row = 0; row < rows; row++)
		if (!owned[row])
			cache[row] = NAN;
	free(owned);
}

static void run_case(struct tctx *c, const struct paged_case *pc, enum spyre_dtype dt)
{
	int64_t sq[4] = { R, H, pc->nq, DH }, sc[4] = { pc->nblocks, HKV, pc->bs, 2 * DH };
	int64_t sbt[2] = { R, pc->mb }, ssl[1] = { R };
	int64_t nqe = numel(4, sq), nce = numel(4, sc);
	double *q = malloc(nqe * sizeof(double)), *cache = malloc(nce * sizeof(double));
	double *got = malloc(nqe * sizeof(double)), *want = malloc(nqe * sizeof(double));
	int32_t *bt = malloc(R * pc->mb * sizeof(int32_t));
	struct dtensor dq, dc, dbt, dsl, dy;
	struct spyre_device_stats s0, s1;
	double scale = 0.37;
	int64_t i;

	rnd_fill(q, nqe, -1, 1, 31, dt);
	rnd_fill(cache, nce, -1, 1, 32, dt);
	layout(pc, bt, cache);
	OK(dt_new(c, &dq, dt, 4, sq));
	OK(dt_new(c, &dc, dt, 4, sc));
	OK(dt_new(c, &dbt, SPYRE_INT32, 2, sbt));
	OK(dt_new(c, &dsl, SPYRE_INT32, 1, ssl));
	OK(dt_new(c, &dy, dt, 4, sq));
	OK(dt_write(c, &dq, q));
	OK(dt_write(c, &dc, cache));
	OK(dt_write_raw(c, &dbt, bt));
	OK(dt_write_raw(c, &dsl, pc->seq));
	OK(spyre_op_paged_attention(c->ops, c->s, &dq.t, &dc.t, &dbt.t, &dsl.t, scale, &dy.t));
	OK(spyre_stream_synchronize(c->s));
	/* a second call is one SUBMIT: the whole op is one launch */
	OK(spyre_device_get_stats(c->dev, &s0));
	OK(spyre_op_paged_attention(c->ops, c->s, &dq.t, &dc.t, &dbt.t, &dsl.t, scale, &dy.t));
	OK(spyre_stream_synchronize(c->s));
	OK(spyre_device_get_stats(c->dev, &s1));
	CHECK(s1.submits - s0.submits == 1, "%llu SUBMITs",
	      (unsigned long long)(s1.submits - s0.submits));
	OK(dt_read(c, &dy, got));
	reference(pc, q, cache, bt, scale, want);
	for (i = 0; i < nqe; i++)
		want[i] = round_to(dt, want[i]);
	CHECK(compare("paged_attention", got, want, NULL, nqe, dt, 8) < 0,
	      "%s, block size %lld, %lld query rows, seq %d %d %d %d", spyre_dtype_name(dt),
	      (long long)pc->bs, (long long)pc->nq, pc->seq[0], pc->seq[1], pc->seq[2],
	      pc->seq[3]);
	dt_free(&dq);
	dt_free(&dc);
	dt_free(&dbt);
	dt_free(&dsl);
	dt_free(&dy);
	free(q);
	free(cache);
	free(got);
	free(want);
	free(bt);
}

TEST(ops_paged_attention)
{
	static const struct paged_case cases[] = {
		/* decode: one query per request, lengths across block edges */
		{ .bs = 4, .mb = 4, .nq = 1, .nblocks = 17, .seq = { 1, 5, 13, 16 } },
		{ .bs = 16, .mb = 2, .nq = 1, .nblocks = 9, .seq = { 17, 3, 31, 16 } },
		/* prefill and mixed: rows before a request's own queries are padding */
		{ .bs = 4, .mb = 3, .nq = 5, .nblocks = 13, .seq = { 5, 3, 11, 7 } },
		{ .bs = 16, .mb = 3, .nq = 6, .nblocks = 11, .seq = { 6, 37, 2, 20 } },
		{ .bs = 1, .mb = 9, .nq = 3, .nblocks = 37, .seq = { 9, 1, 4, 8 } },
	};
	static const enum spyre_dtype dts[3] = { SPYRE_FLOAT32, SPYRE_FLOAT16, SPYRE_BFLOAT16 };
	struct tctx c;
	unsigned int k, t;

	OK(tctx_open(dev, &c));
	for (t = 0; t < 3; t++)
		for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
			run_case(&c, &cases[k], dts[t]);
	tctx_close(&c);
}

TEST(ops_paged_attention_refusals)
{
	int64_t sq[4] = { R, H, 1, DH }, sc[4] = { 5, HKV, 4, 2 * DH }, sbt[2] = { R, 2 };
	int64_t ssl[1] = { R }, sbad[4] = { 5, HKV, 4, DH }, sh3[3] = { 3, 5, 4 };
	struct dtensor dq, dc, dbt, dsl, dy, dbad, dbt64, dqi;
	struct tctx c;

	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &dq, SPYRE_FLOAT32, 4, sq));
	OK(dt_new(&c, &dy, SPYRE_FLOAT32, 4, sq));
	OK(dt_new(&c, &dc, SPYRE_FLOAT32, 4, sc));
	OK(dt_new(&c, &dbad, SPYRE_FLOAT32, 4, sbad));
	OK(dt_new(&c, &dbt, SPYRE_INT32, 2, sbt));
	OK(dt_new(&c, &dbt64, SPYRE_INT64, 2, sbt));
	OK(dt_new(&c, &dsl, SPYRE_INT32, 1, ssl));
	OK(dt_new(&c, &dqi, SPYRE_INT32, 4, sq));
	FAILS_WITH(spyre_op_paged_attention(c.ops, c.s, &dq.t, &dbad.t, &dbt.t, &dsl.t, 0, &dy.t),
		   -EINVAL, "2 * D");
	FAILS_WITH(spyre_op_paged_attention(c.ops, c.s, &dq.t, &dc.t, &dbt64.t, &dsl.t, 0, &dy.t),
		   -EINVAL, "int32");
	FAILS_WITH(spyre_op_paged_attention(c.ops, c.s, &dqi.t, &dc.t, &dbt.t, &dsl.t, 0, &dqi.t),
		   -EOPNOTSUPP, "float queries");
	FAILS_WITH(spyre_op_paged_attention(c.ops, c.s, &dq.t, &dc.t, &dbt.t, &dsl.t, 0, &dc.t),
		   -EINVAL, "out");
	FAILS_WITH(spyre_op_paged_attention(c.ops, c.s, &dq.t, &dc.t, &dbt.t, NULL, 0, &dy.t),
		   -EINVAL, "NULL");
	dt_free(&dqi);
	OK(dt_new(&c, &dqi, SPYRE_FLOAT32, 3, sh3));
	FAILS_WITH(spyre_op_paged_attention(c.ops, c.s, &dqi.t, &dc.t, &dbt.t, &dsl.t, 0, &dy.t),
		   -EINVAL, "[R, H, Q, D]");
	dt_free(&dq);
	dt_free(&dy);
	dt_free(&dc);
	dt_free(&dbad);
	dt_free(&dbt);
	dt_free(&dbt64);
	dt_free(&dsl);
	dt_free(&dqi);
	tctx_close(&c);
}

/* A table with no blocks gives every query 0 (no key); an empty batch runs nothing. */
TEST(ops_paged_attention_empty)
{
	int64_t sq[4] = { 2, H, 1, DH }, sc[4] = { 3, HKV, 4, 2 * DH }, sbt[2] = { 2, 0 };
	int64_t ssl[1] = { 2 }, sq0[4] = { 0, H, 1, DH }, sbt0[2] = { 0, 2 }, ssl0[1] = { 0 };
	double got[2 * H * DH], ones[2 * H * DH];
	struct dtensor dq, dc, dbt, dsl, dy;
	struct tctx c;
	int i;

	OK(tctx_open(dev, &c));
	for (i = 0; i < 2 * H * DH; i++)
		ones[i] = 1;
	OK(dt_new(&c, &dq, SPYRE_FLOAT32, 4, sq));
	OK(dt_new(&c, &dy, SPYRE_FLOAT32, 4, sq));
	OK(dt_new(&c, &dc, SPYRE_FLOAT32, 4, sc));
	OK(dt_new(&c, &dbt, SPYRE_INT32, 2, sbt));
	OK(dt_new(&c, &dsl, SPYRE_INT32, 1, ssl));
	OK(dt_write(&c, &dq, ones));
	OK(dt_write(&c, &dy, ones));
	OK(spyre_op_paged_attention(c.ops, c.s, &dq.t, &dc.t, &dbt.t, &dsl.t, 0, &dy.t));
	OK(spyre_stream_synchronize(c.s));
	OK(dt_read(&c, &dy, got));
	for (i = 0; i < 2 * H * DH; i++)
		CHECK(got[i] == 0 && !signbit(got[i]), "element %d is %g", i, got[i]);
	dt_free(&dq);
	dt_free(&dy);
	dt_free(&dbt);
	dt_free(&dsl);
	OK(dt_new(&c, &dq, SPYRE_FLOAT32, 4, sq0));
	OK(dt_new(&c, &dy, SPYRE_FLOAT32, 4, sq0));
	OK(dt_new(&c, &dbt, SPYRE_INT32, 2, sbt0));
	OK(dt_new(&c, &dsl, SPYRE_INT32, 1, ssl0));
	OK(spyre_op_paged_attention(c.ops, c.s, &dq.t, &dc.t, &dbt.t, &dsl.t, 0, &dy.t));
	OK(spyre_stream_synchronize(c.s));
	dt_free(&dq);
	dt_free(&dy);
	dt_free(&dc);
	dt_free(&dbt);
	dt_free(&dsl);
	tctx_close(&c);
}
