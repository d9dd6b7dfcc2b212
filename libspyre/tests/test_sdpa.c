// SPDX-License-Identifier: MIT
/*
 * spyre_op_sdpa: attention in one launch, against a double-precision
 * reference, with no mask, an additive float mask, a bool mask and the
 * causal mask, for fp32 and fp16 (scores in fp32 either way); queries that
 * every key is masked from give 0 (PyTorch's safe softmax), NaN scores NaN.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ops_ref.h"

enum { B = 2, LQ = 5, LK = 7, DH = 16 };

/*
 * out[b] = softmax(q k^T * scale + mask) v, NaN-free masks only; a row of
 * nothing but -inf scores gives 0, a NaN score a NaN row.
 */
static void reference(const double *q, const double *k, const double *v, const double *fm,
		      const double *bm, int causal, double scale, double *out)
{
	int b, i, j, d;

	for (b = 0; b < B; b++)
		for (i = 0; i < LQ; i++) {
			double s[LK], mx = -INFINITY, sum = 0;
			int nan = 0;

			for (j = 0; j < LK; j++) {
				double acc = 0;

				for (d = 0; d < DH; d++)
					acc += q[(b * LQ + i) * DH + d] * k[(b * LK + j) * DH + d];
				s[j] = acc * scale;
				if (fm)
					s[j] += fm[i * LK + j];
				if ((bm && !bm[i * LK + j]) || (causal && j > i))
					s[j] = -INFINITY;
				nan |= isnan(s[j]);
				mx = s[j] > mx ? s[j] : mx;
			}
			for (j = 0; j < LK; j++)
				sum += s[j] = exp(s[j] - mx);
			for (d = 0; d < DH; d++) {
				double acc = 0;

				for (j = 0; j < LK; j++)
					acc += s[j] / sum * v[(b * LK + j) * DH + d];
				out[(b * LQ + i) * DH + d] = nan ? NAN : mx == -INFINITY ? 0 : acc;
			}
		}
}

TEST(ops_sdpa_one_launch)
{
	int64_t sq[3] = { B, LQ, DH }, sk[3] = { B, LK, DH }, sm[2] = { LQ, LK };
	double q[B * LQ * DH], k[B * LK * DH], v[B * LK * DH], fm[LQ * LK], bm[LQ * LK];
	double got[B * LQ * DH], want[B * LQ * DH];
	static const enum spyre_dtype dts[2] = { SPYRE_FLOAT32, SPYRE_FLOAT16 };
	struct dtensor dq, dk, dv, dfm, dbm, dy;
	struct spyre_device_stats s0, s1;
	struct tctx c;
	int t, i, kind;

	OK(tctx_open(dev, &c));
	for (i = 0; i < LQ * LK; i++) {
		fm[i] = (double)((i * 5) % 7) / 4 - 0.75;
		bm[i] = (i % 3) != 1 || i % LK == 0;	/* every row keeps key 0 */
	}
	for (t = 0; t < 2; t++) {
		enum spyre_dtype dt = dts[t];

		OK(dt_new(&c, &dq, dt, 3, sq));
		OK(dt_new(&c, &dk, dt, 3, sk));
		OK(dt_new(&c, &dv, dt, 3, sk));
		OK(dt_new(&c, &dy, dt, 3, sq));
		OK(dt_new(&c, &dfm, dt, 2, sm));
		OK(dt_new(&c, &dbm, SPYRE_BOOL, 2, sm));
		rnd_fill(q, B * LQ * DH, -1, 1, 21, dt);
		rnd_fill(k, B * LK * DH, -1, 1, 22, dt);
		rnd_fill(v, B * LK * DH, -1, 1, 23, dt);
		for (i = 0; i < LQ * LK; i++)
			fm[i] = round_to(dt, fm[i]);
		OK(dt_write(&c, &dq, q));
		OK(dt_write(&c, &dk, k));
		OK(dt_write(&c, &dv, v));
		OK(dt_write(&c, &dfm, fm));
		OK(dt_write(&c, &dbm, bm));
		for (kind = 0; kind < 4; kind++) {
			const struct spyre_tensor *m = kind == 1 ? &dfm.t : kind == 2 ? &dbm.t : NULL;

			OK(spyre_op_sdpa(c.ops, c.s, &dq.t, &dk.t, &dv.t, m, kind == 3, 0.3, &dy.t));
			OK(spyre_stream_synchronize(c.s));
			OK(spyre_device_get_stats(dev, &s0));
			OK(spyre_op_sdpa(c.ops, c.s, &dq.t, &dk.t, &dv.t, m, kind == 3, 0.3, &dy.t));
			OK(spyre_stream_synchronize(c.s));
			OK(spyre_device_get_stats(dev, &s1));
			CHECK(s1.submits - s0.submits == 1, "mask kind %d: %llu SUBMITs", kind,
			      (unsigned long long)(s1.submits - s0.submits));
			OK(dt_read(&c, &dy, got));
			reference(q, k, v, kind == 1 ? fm : NULL, kind == 2 ? bm : NULL, kind == 3,
				  0.3, want);
			for (i = 0; i < B * LQ * DH; i++)
				want[i] = round_to(dt, want[i]);
			CHECK(compare("sdpa", got, want, NULL, B * LQ * DH, dt, 8) < 0,
			      "%s, mask kind %d", spyre_dtype_name(dt), kind);
		}
		dt_free(&dq);
		dt_free(&dk);
		dt_free(&dv);
		dt_free(&dy);
		dt_free(&dfm);
		dt_free(&dbm);
	}
	/* shapes that do not fit and integer attention are refused */
	OK(dt_new(&c, &dq, SPYRE_FLOAT32, 3, sq));
	OK(dt_new(&c, &dk, SPYRE_FLOAT32, 3, sk));
	OK(dt_new(&c, &dy, SPYRE_FLOAT32, 3, sk));
	CHECK(spyre_op_sdpa(c.ops, c.s, &dq.t, &dk.t, &dk.t, NULL, 0, 0, &dy.t) == -EINVAL,
	      "an out of the wrong shape");
	dt_free(&dq);
	dt_free(&dk);
	dt_free(&dy);
	OK(dt_new(&c, &dq, SPYRE_INT32, 3, sq));
	FAILS_WITH(spyre_op_sdpa(c.ops, c.s, &dq.t, &dq.t, &dq.t, NULL, 0, 0, &dq.t),
		   -EOPNOTSUPP, "int32");
	dt_free(&dq);
	tctx_close(&c);
}

/*
 * Fully masked queries: a bool mask with whole rows false and an additive
 * one with whole rows -inf give those queries 0 (PyTorch's SDPA), the
 * others their softmax; a NaN in q stays NaN unless the bool mask masks the
 * row out. A card before interface 1.3 refuses a mask rather than give NaN.
 */
TEST(ops_sdpa_fully_masked_rows)
{
	int64_t sq[3] = { B, LQ, DH }, sk[3] = { B, LK, DH }, sm[2] = { LQ, LK };
	double q[B * LQ * DH], k[B * LK * DH], v[B * LK * DH], fm[LQ * LK], bm[LQ * LK];
	double got[B * LQ * DH], want[B * LQ * DH];
	static const enum spyre_dtype dts[3] = { SPYRE_FLOAT32, SPYRE_FLOAT16, SPYRE_BFLOAT16 };
	struct dtensor dq, dk, dv, dfm, dbm, dy;
	spyre_ops *old = NULL;
	struct tctx c;
	int t, i, kind, nzero;

	OK(tctx_open(dev, &c));
	for (i = 0; i < LQ * LK; i++) {
		int r = i / LK;

		/* rows 1 and 4 fully masked, row 2 keeps one key */
		bm[i] = r != 1 && r != 4 && (r != 2 || i % LK == 3);
		fm[i] = bm[i] ? (double)((i * 3) % 5) / 4 - 0.5 : -INFINITY;
	}
	for (t = 0; t < 3; t++) {
		enum spyre_dtype dt = dts[t];

		OK(dt_new(&c, &dq, dt, 3, sq));
		OK(dt_new(&c, &dk, dt, 3, sk));
		OK(dt_new(&c, &dv, dt, 3, sk));
		OK(dt_new(&c, &dy, dt, 3, sq));
		OK(dt_new(&c, &dfm, dt, 2, sm));
		OK(dt_new(&c, &dbm, SPYRE_BOOL, 2, sm));
		rnd_fill(q, B * LQ * DH, -1, 1, 31, dt);
		rnd_fill(k, B * LK * DH, -1, 1, 32, dt);
		rnd_fill(v, B * LK * DH, -1, 1, 33, dt);
		for (i = 0; i < LQ * LK; i++)
			fm[i] = round_to(dt, fm[i]);
		/* a NaN in batch 1's query 3 (kept) and query 4 (fully masked) */
		q[(1 * LQ + 3) * DH + 5] = NAN;
		q[(1 * LQ + 4) * DH + 2] = NAN;
		OK(dt_write(&c, &dq, q));
		OK(dt_write(&c, &dk, k));
		OK(dt_write(&c, &dv, v));
		OK(dt_write(&c, &dfm, fm));
		OK(dt_write(&c, &dbm, bm));
		for (kind = 1; kind <= 2; kind++) {
			const struct spyre_tensor *m = kind == 1 ? &dfm.t : &dbm.t;

			OK(spyre_op_sdpa(c.ops, c.s, &dq.t, &dk.t, &dv.t, m, 0, 0.3, &dy.t));
			OK(spyre_stream_synchronize(c.s));
			OK(dt_read(&c, &dy, got));
			reference(q, k, v, kind == 1 ? fm : NULL, kind == 2 ? bm : NULL, 0, 0.3,
				  want);
			for (i = 0; i < B * LQ * DH; i++)
				want[i] = round_to(dt, want[i]);
			CHECK(compare("sdpa", got, want, NULL, B * LQ * DH, dt, 8) < 0,
			      "%s, mask kind %d", spyre_dtype_name(dt), kind);
			/* exact zeros: the masked rows, and batch 1's query 4 by bool only */
			for (i = 0, nzero = 0; i < B * LQ * DH; i++)
				nzero += got[i] == 0 && !signbit(got[i]);
			CHECK(nzero == (kind == 1 ? 3 : 4) * DH, "%s, mask kind %d: %d zeros",
			      spyre_dtype_name(dt), kind, nzero);
			CHECK(isnan(got[(1 * LQ + 3) * DH]), "%s, mask kind %d: NaN query",
			      spyre_dtype_name(dt), kind);
		}
		dt_free(&dq);
		dt_free(&dk);
		dt_free(&dv);
		dt_free(&dy);
		dt_free(&dfm);
		dt_free(&dbm);
	}
	if (old_card_ops(dev, "1.2", &old)) {
		OK(dt_new(&c, &dq, SPYRE_FLOAT32, 3, sq));
		OK(dt_new(&c, &dk, SPYRE_FLOAT32, 3, sk));
		OK(dt_new(&c, &dy, SPYRE_FLOAT32, 3, sq));
		OK(dt_new(&c, &dfm, SPYRE_FLOAT32, 2, sm));
		FAILS_WITH(spyre_op_sdpa(old, c.s, &dq.t, &dk.t, &dk.t, &dfm.t, 0, 0, &dy.t),
			   -EOPNOTSUPP, "needs card interface 1.3");
		OK(spyre_op_sdpa(old, c.s, &dq.t, &dk.t, &dk.t, NULL, 0, 0, &dy.t));
		OK(spyre_stream_synchronize(c.s));
		dt_free(&dq);
		dt_free(&dk);
		dt_free(&dy);
		dt_free(&dfm);
		spyre_ops_destroy(old);
	}
	tctx_close(&c);
}
