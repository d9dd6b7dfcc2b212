// SPDX-License-Identifier: MIT
/*
 * The fused attention kernel (kernels/attn.c) through spyre_graph_sdpa:
 * one kernel per attention, against a double-precision reference, on
 * shapes that cross its 128-query/key blocks and the scratchpad: causal
 * and not, queries before and after the keys' end, a float mask, a bool
 * mask with fully masked queries (0, as PyTorch), grouped-query heads (k
 * and v broadcast over the group), odd head sizes, fp32/fp16/bf16, one
 * query against many keys (decode), 1,500 keys (12 key blocks) and 4,096
 * keys of 128-wide heads (K and V larger than a scratchpad).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ops_ref.h"

struct fa_case {
	const char *name;
	enum spyre_dtype dt;
	int64_t hkv, grp;	/* batch [hkv, grp]; k/v have grp 1 when gqa */
	int gqa;
	int64_t lq, lk, d, dv;
	int causal, mask;	/* mask: 0 none, 1 float, 2 bool (rows 5 and lq-3 fully masked) */
};

static const struct fa_case cases[] = {
	{ "causal 300", SPYRE_FLOAT16, 2, 3, 0, 300, 300, 64, 64, 1, 0 },
	{ "float mask, odd dims", SPYRE_BFLOAT16, 1, 2, 0, 130, 257, 40, 24, 0, 1 },
	{ "gqa causal", SPYRE_FLOAT16, 2, 3, 1, 200, 200, 32, 32, 1, 0 },
	{ "decode", SPYRE_FLOAT32, 3, 1, 0, 1, 77, 64, 64, 0, 0 },
	{ "causal, fewer queries", SPYRE_FLOAT16, 1, 2, 0, 3, 200, 16, 16, 1, 0 },
	{ "causal, fewer keys", SPYRE_FLOAT16, 1, 2, 0, 300, 140, 16, 16, 1, 0 },
	{ "1500 keys", SPYRE_FLOAT16, 1, 1, 0, 64, 1500, 64, 64, 0, 0 },
	{ "bool mask, masked rows", SPYRE_FLOAT16, 1, 2, 0, 150, 260, 64, 64, 0, 2 },
	{ "bool mask causal fp32", SPYRE_FLOAT32, 1, 1, 0, 140, 140, 8, 8, 1, 2 },
	/* K and V (4 MiB) more than a scratchpad holds: streamed by key block */
	{ "4096 keys, d128", SPYRE_BFLOAT16, 1, 2, 0, 40, 4096, 128, 128, 0, 0 },
};

static void reference(const struct fa_case *t, const double *q, const double *k,
		      const double *v, const double *mask, double scale, double *out)
{
	int64_t nb = t->hkv * t->grp, b, i, j, x;
	double *s = malloc(sizeof(double) * (size_t)t->lk);

	for (b = 0; b < nb; b++) {
		int64_t kb = t->gqa ? b / t->grp : b;

		for (i = 0; i < t->lq; i++) {
			double mx = -INFINITY, sum = 0;

			for (j = 0; j < t->lk; j++) {
				double acc = 0;

				for (x = 0; x < t->d; x++)
					acc += q[(b * t->lq + i) * t->d + x] *
					       k[(kb * t->lk + j) * t->d + x];
				s[j] = acc * scale;
				if (t->mask == 1)
					s[j] += mask[i * t->lk + j];
				if ((t->mask == 2 && !mask[i * t->lk + j]) || (t->causal && j > i))
					s[j] = -INFINITY;
				mx = s[j] > mx ? s[j] : mx;
			}
			for (j = 0; j < t->lk; j++)
				sum += s[j] = mx == -INFINITY ? 0 : exp(s[j] - mx);
			for (x = 0; x < t->dv; x++) {
				double acc = 0;

				for (j = 0; j < t->lk; j++)
					acc += s[j] * v[(kb * t->lk + j) * t->dv + x];
				out[(b * t->lq + i) * t->dv + x] = sum ? acc / sum : 0;
			}
		}
	}
	free(s);
}

/*
 * One case through a compiled graph; @fused: expect one kernel; @trans: the
 * result transposed to [hkv, lq, grp, dv] and made contiguous (the layout
 * an output projection reads), which the attention stores itself.
 */
static void run_case_t(struct tctx *c, const struct fa_case *t, int fused, int trans)
{
	int64_t kvh = t->gqa ? 1 : t->grp;
	int64_t sq[4] = { t->hkv, t->grp, t->lq, t->d }, sk[4] = { t->hkv, kvh, t->lk, t->d };
	int64_t sv[4] = { t->hkv, kvh, t->lk, t->dv }, so[4] = { t->hkv, t->grp, t->lq, t->dv };
	int64_t st4[4] = { t->hkv, t->lq, t->grp, t->dv };
	int64_t sm[2] = { t->lq, t->lk }, nq = numel(4, sq), nk = numel(4, sk), nv = numel(4, sv);
	int64_t no = numel(4, so), i;
	double *q = malloc(sizeof(double) * (size_t)nq), *k = malloc(sizeof(double) * (size_t)nk);
	double *v = malloc(sizeof(double) * (size_t)nv), *got = malloc(sizeof(double) * (size_t)no);
	double *want = malloc(sizeof(double) * (size_t)no);
	double *m = malloc(sizeof(double) * (size_t)(t->lq * t->lk));
	struct dtensor dq, dk, dv, dm, dy;
	struct spyre_tensor ins[4];
	struct spyre_compiled_stats st;
	spyre_value vq, vk, vv, vm = -1, vo;
	spyre_compiled *cc;
	spyre_graph *g;
	int nin = 3, zeros = 0;
	double scale = 1.0 / sqrt((double)t->d);

	ASSERT(q && k && v && got && want && m, "out of memory");
	rnd_fill(q, nq, -1.5, 1.5, 41, t->dt);
	rnd_fill(k, nk, -1.5, 1.5, 42, t->dt);
	rnd_fill(v, nv, -1, 1, 43, t->dt);
	for (i = 0; i < t->lq * t->lk; i++) {
		int64_t r = i / t->lk, j = i % t->lk;

		if (t->mask == 1)
			m[i] = round_to(t->dt, (double)((i * 7) % 11) / 4 - 1.25);
		else
			m[i] = r != 5 && r != t->lq - 3 && (j % 3 != 1 || j == 0);
	}
	OK(dt_new(c, &dq, t->dt, 4, sq));
	OK(dt_new(c, &dk, t->dt, 4, sk));
	OK(dt_new(c, &dv, t->dt, 4, sv));
	OK(dt_new(c, &dy, t->dt, 4, trans ? st4 : so));
	OK(dt_new(c, &dm, t->mask == 2 ? SPYRE_BOOL : t->dt, 2, sm));
	OK(dt_write(c, &dq, q));
	OK(dt_write(c, &dk, k));
	OK(dt_write(c, &dv, v));
	OK(dt_write(c, &dm, m));
	OK(spyre_graph_create(c->ops, &g));
	OK(spyre_graph_input(g, t->dt, 4, sq, &vq));
	OK(spyre_graph_input(g, t->dt, 4, sk, &vk));
	OK(spyre_graph_input(g, t->dt, 4, sv, &vv));
	ins[0] = dq.t;
	ins[1] = dk.t;
	ins[2] = dv.t;
	if (t->mask) {
		OK(spyre_graph_input(g, t->mask == 2 ? SPYRE_BOOL : t->dt, 2, sm, &vm));
		ins[nin++] = dm.t;
	}
	OK(spyre_graph_sdpa(g, vq, vk, vv, vm, t->causal, scale, &vo));
	if (trans) {
		OK(spyre_graph_transpose(g, vo, 1, 2, &vo));
		OK(spyre_graph_contiguous(g, vo, &vo));
	}
	OK(spyre_graph_output(g, vo));
	OK(spyre_graph_compile(g, &cc));
	OK(spyre_graph_destroy(g));
	OK(spyre_compiled_get_stats(cc, &st));
	if (fused)
		CHECK(st.kernels == 1, "%s: %u kernels, want the fused one", t->name, st.kernels);
	else
		CHECK(st.kernels > 1, "%s: unfused gave %u kernels", t->name, st.kernels);
	OK(spyre_compiled_run(cc, c->s, ins, (unsigned int)nin, &dy.t, 1));
	OK(spyre_stream_synchronize(c->s));
	OK(dt_read(c, &dy, got));
	reference(t, q, k, v, m, scale, want);
	for (i = 0; i < no; i++)
		want[i] = round_to(t->dt, want[i]);
	if (trans) {
		/* [hkv, grp, lq, dv] -> [hkv, lq, grp, dv] */
		double *tw = malloc(sizeof(double) * (size_t)no);

		ASSERT(tw, "out of memory");
		for (i = 0; i < no; i++) {
			int64_t x = i % t->dv, r = i / t->dv, qi = r % t->lq, hg = r / t->lq;
			int64_t gi = hg % t->grp, h = hg / t->grp;

			tw[((h * t->lq + qi) * t->grp + gi) * t->dv + x] = want[i];
		}
		memcpy(want, tw, sizeof(double) * (size_t)no);
		free(tw);
	}
	CHECK(compare(t->name, got, want, NULL, no, t->dt, 8) < 0, "%s (%s, %s)", t->name,
	      spyre_dtype_name(t->dt), fused ? "fused" : "unfused");
	if (t->mask == 2 && !trans) {
		/* the fully masked queries: exact +0 (PyTorch's safe softmax) */
		for (i = 0; i < no; i++) {
			int64_t r = (i / t->dv) % t->lq;

			zeros += (r == 5 || r == t->lq - 3) && got[i] == 0 && !signbit(got[i]);
		}
		CHECK(zeros == 2 * t->dv * t->hkv * t->grp, "%s: %d zeros", t->name, zeros);
	}
	OK(spyre_compiled_destroy(cc));
	dt_free(&dq);
	dt_free(&dk);
	dt_free(&dv);
	dt_free(&dy);
	dt_free(&dm);
	free(q);
	free(k);
	free(v);
	free(got);
	free(want);
	free(m);
}

static void run_case(struct tctx *c, const struct fa_case *t, int fused)
{
	run_case_t(c, t, fused, 0);
}

TEST(graph_sdpa_fused)
{
	struct tctx c;
	unsigned int i;

	OK(tctx_open(dev, &c));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&c, &cases[i], 1);
	tctx_close(&c);
}

/* The unfused sequence (SPYRE_ATTN_UNFUSED=1) on the same cases agrees. */
TEST(graph_sdpa_unfused_agrees)
{
	struct tctx c;

	OK(tctx_open(dev, &c));
	setenv("SPYRE_ATTN_UNFUSED", "1", 1);
	run_case(&c, &cases[0], 0);
	run_case(&c, &cases[2], 0);
	run_case(&c, &cases[7], 0);
	unsetenv("SPYRE_ATTN_UNFUSED");
	tctx_close(&c);
}

/*
 * The attention's result transposed and made contiguous: still one kernel
 * (the attention stores its rows where the copy would have put them).
 */
TEST(graph_sdpa_transposed_out)
{
	struct tctx c;

	OK(tctx_open(dev, &c));
	run_case_t(&c, &cases[0], 1, 1);	/* causal fp16 */
	run_case_t(&c, &cases[1], 1, 1);	/* float mask, odd dims, bf16 */
	run_case_t(&c, &cases[3], 1, 1);	/* decode fp32 */
	tctx_close(&c);
}
