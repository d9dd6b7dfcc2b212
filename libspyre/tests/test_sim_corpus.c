// SPDX-License-Identifier: MIT
/*
 * The sim card's replay corpus: programs the op library generates for a
 * representative set of ops (matmuls of several shapes and dtypes,
 * attention, norms, softmax, elementwise float and integer ops, casts over
 * every 16-bit pattern, reductions, a compiled decoder), run on inputs made
 * from fixed seeds. Each case's output bits (SHA-256) and its modelled
 * device time (ns, timing events around a warm call) must equal the values
 * recorded in sim_corpus_expected.h: a change to the card model's speed
 * must change neither a result bit nor the modelled timeline.
 *
 * When a case differs: if the programs the op library generates changed on
 * purpose (SPYRE_OPS_VERSION was bumped), record the corpus again with
 * scripts/sim-corpus-regen; otherwise the card model now computes or times
 * something differently, which is a bug.
 *
 * Sim only: on the drm backend the device clock includes the host's time.
 */
#include <math.h>

#include "decoder.h"
#include "ops_ref.h"
#include "sha256.h"

struct corpus_expect {
	const char *name;
	const char *sha256;
	uint64_t ns;
};

#include "sim_corpus_expected.h"

struct corpus {
	struct tctx c;
	spyre_event *ev[2];
	bool print;	/* SPYRE_SIM_CORPUS_PRINT: print the records, check nothing */
	unsigned int seed;
};

static bool corpus_open(spyre_device *dev, struct corpus *k)
{
	const char *p = getenv("SPYRE_SIM_CORPUS_PRINT");

	memset(k, 0, sizeof(*k));
	if (strcmp(test_backend, "sim")) {
		fprintf(stderr, "  skipped: the corpus replays the sim card only\n");
		return false;
	}
	k->print = p && *p && strcmp(p, "0");
	if (tctx_open(dev, &k->c) || spyre_event_create(dev, SPYRE_EVENT_TIMING, &k->ev[0]) ||
	    spyre_event_create(dev, SPYRE_EVENT_TIMING, &k->ev[1])) {
		test_failures++;
		fprintf(stderr, "  corpus setup: %s\n", spyre_last_error());
		return false;
	}
	return true;
}

static void corpus_close(struct corpus *k)
{
	if (k->ev[0])
		spyre_event_destroy(k->ev[0]);
	if (k->ev[1])
		spyre_event_destroy(k->ev[1]);
	tctx_close(&k->c);
}

static const struct corpus_expect *expected(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(corpus_expected) / sizeof(corpus_expected[0]); i++)
		if (!strcmp(corpus_expected[i].name, name))
			return &corpus_expected[i];
	return NULL;
}

/* Compare (or print) one case: the outputs' bits and the modelled time. */
static void record(struct corpus *k, const char *name, int ret, uint64_t ns,
		   const struct dtensor *outs, unsigned int nout)
{
	const struct corpus_expect *e = expected(name);
	struct sha256 h;
	char hex[65];
	unsigned int i;

	if (ret) {
		test_failures++;
		fprintf(stderr, "  %s: failed (%d): %s\n", name, ret, spyre_last_error());
		return;
	}
	sha256_init(&h);
	for (i = 0; i < nout; i++) {
		uint64_t n = spyre_tensor_nbytes(&outs[i].t);
		void *p = malloc(n ? n : 1);

		if (!p || dt_read_raw(&k->c, &outs[i], p)) {
			free(p);
			test_failures++;
			fprintf(stderr, "  %s: reading output %u: %s\n", name, i, spyre_last_error());
			return;
		}
		sha256_update(&h, p, n);
		free(p);
	}
	sha256_hex(&h, hex);
	if (k->print) {
		printf("@corpus %s %s %llu\n", name, hex, (unsigned long long)ns);
		fflush(stdout);
		return;
	}
	CHECK(e, "%s: not in sim_corpus_expected.h (a new case: record it with "
	      "scripts/sim-corpus-regen)", name);
	if (!e)
		return;
	CHECK(!strcmp(e->sha256, hex), "%s: output bits changed: sha256 %s, recorded %s", name,
	      hex, e->sha256);
	CHECK(e->ns == ns, "%s: modelled time changed: %llu ns, recorded %llu ns", name,
	      (unsigned long long)ns, (unsigned long long)e->ns);
}

static int timed_begin(struct corpus *k)
{
	int ret = spyre_stream_synchronize(k->c.s);

	return ret ? ret : spyre_event_record(k->ev[0], k->c.s);
}

static int timed_end(struct corpus *k, uint64_t *ns)
{
	int ret = spyre_event_record(k->ev[1], k->c.s);

	if (!ret)
		ret = spyre_event_synchronize(k->ev[1]);
	return ret ? ret : spyre_event_elapsed_ns(k->ev[0], k->ev[1], ns);
}

/*
 * Run @call twice (the first call builds and loads its programs) and time
 * the second, then record outputs @outs...
 */
#define CASE(k, name, call, ...)                                                      \
	do {                                                                          \
		const struct dtensor outs_[] = { __VA_ARGS__ };                       \
		uint64_t ns_ = 0;                                                     \
		int r_ = (call);                                                      \
		if (!r_)                                                              \
			r_ = timed_begin(k);                                          \
		if (!r_)                                                              \
			r_ = (call);                                                  \
		if (!r_)                                                              \
			r_ = timed_end(k, &ns_);                                      \
		record(k, name, r_, ns_, outs_, sizeof(outs_) / sizeof(outs_[0]));    \
	} while (0)

/* A tensor of values in [lo, hi) rounded to @dt. */
static struct dtensor vals(struct corpus *k, enum spyre_dtype dt, unsigned int ndim,
			   const int64_t *shape, double lo, double hi)
{
	int64_t n = numel(ndim, shape);
	double *v = malloc((n ? n : 1) * sizeof(double));
	struct dtensor d;

	memset(&d, 0, sizeof(d));
	if (!v || dt_new(&k->c, &d, dt, ndim, shape)) {
		free(v);
		return d;
	}
	rnd_fill(v, n, lo, hi, ++k->seed, dt);
	if (dt_write(&k->c, &d, v))
		dt_free(&d);
	free(v);
	return d;
}

/*
 * Values over the whole range of a float type and its edges: magnitudes
 * from 2^-30 to 2^30, zeros of both signs, infinities, NaN, fp16
 * subnormals; integers in [-1000, 1000) for integer types.
 */
static struct dtensor wide(struct corpus *k, enum spyre_dtype dt, unsigned int ndim,
			   const int64_t *shape)
{
	static const double edge[] = { 0.0, -0.0, INFINITY, -INFINITY, NAN, 0x1p-24, -0x1p-20,
				       65504.0, 65520.0, -1e30, 1e-40, 0.5 };
	int64_t n = numel(ndim, shape), i;
	double *v = malloc((n ? n : 1) * sizeof(double)), *u = malloc((n ? n : 1) * sizeof(double));
	struct dtensor d;
	bool flt = dt == SPYRE_FLOAT32 || dt == SPYRE_FLOAT16 || dt == SPYRE_BFLOAT16;

	memset(&d, 0, sizeof(d));
	if (!v || !u || dt_new(&k->c, &d, dt, ndim, shape))
		goto out;
	rnd_fill(v, n, -1, 1, ++k->seed, SPYRE_FLOAT32);
	rnd_fill(u, n, -30, 30, ++k->seed, SPYRE_FLOAT32);
	for (i = 0; i < n; i++) {
		if (!flt)
			v[i] = floor(v[i] * 1000);
		else if (i % 16 == 0)
			v[i] = edge[(i / 16) % (sizeof(edge) / sizeof(edge[0]))];
		else
			v[i] = round_to(dt, v[i] * exp2(floor(u[i])));
	}
	if (dt_write(&k->c, &d, v))
		dt_free(&d);
out:
	free(v);
	free(u);
	return d;
}

/* Raw bytes: every 16-bit pattern once (@n16), else xorshift bits. */
static struct dtensor bits(struct corpus *k, enum spyre_dtype dt, unsigned int ndim,
			   const int64_t *shape, bool n16)
{
	uint64_t bytes = (uint64_t)numel(ndim, shape) * spyre_dtype_bytes(dt), i;
	uint64_t x = 0x2545f4914f6cdd1dull * ++k->seed;
	uint8_t *p = malloc(bytes ? bytes : 1);
	struct dtensor d;

	memset(&d, 0, sizeof(d));
	if (!p || dt_new(&k->c, &d, dt, ndim, shape)) {
		free(p);
		return d;
	}
	for (i = 0; i < bytes; i++) {
		if (n16) {
			p[i] = i & 1 ? (uint8_t)(i >> 9) : (uint8_t)(i >> 1);
			continue;
		}
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)(x >> 32);
	}
	if (dt_write_raw(&k->c, &d, p))
		dt_free(&d);
	free(p);
	return d;
}

static struct dtensor out(struct corpus *k, enum spyre_dtype dt, unsigned int ndim,
			  const int64_t *shape)
{
	struct dtensor d;

	memset(&d, 0, sizeof(d));
	if (dt_new(&k->c, &d, dt, ndim, shape))
		memset(&d, 0, sizeof(d));
	return d;
}

static const enum spyre_dtype fdts[] = { SPYRE_FLOAT16, SPYRE_BFLOAT16, SPYRE_FLOAT32 };

static const char *dn(enum spyre_dtype dt)
{
	return spyre_dtype_name(dt);
}

static void free_all(struct dtensor *d, unsigned int n)
{
	while (n--)
		dt_free(&d[n]);
}

/* Matmul and linear: decode-shaped (M = 1), prefill-shaped, odd and batched. */
TEST(sim_corpus_matmul)
{
	static const int64_t mm[][3] = {
		{ 1, 768, 2304 }, { 32, 768, 768 }, { 5, 100, 33 }, { 17, 64, 129 },
	};
	static const int64_t lin[][3] = { { 1, 768, 768 }, { 32, 768, 3072 }, { 7, 300, 130 } };
	struct corpus k;
	struct dtensor d[4];
	char name[96];
	unsigned int i, t;

	if (!corpus_open(dev, &k))
		return;
	for (t = 0; t < 3; t++) {
		enum spyre_dtype dt = fdts[t];

		for (i = 0; i < 4; i++) {
			int64_t sa[2] = { mm[i][0], mm[i][1] }, sb[2] = { mm[i][1], mm[i][2] };
			int64_t so[2] = { mm[i][0], mm[i][2] };

			if (dt == SPYRE_FLOAT32 && i < 2)
				continue;	/* fp32 only small: the 16-bit types are the point */
			d[0] = vals(&k, dt, 2, sa, -1, 1);
			d[1] = vals(&k, dt, 2, sb, -1, 1);
			d[2] = out(&k, dt, 2, so);
			snprintf(name, sizeof(name), "matmul_%s_%lldx%lldx%lld", dn(dt),
				 (long long)mm[i][0], (long long)mm[i][1], (long long)mm[i][2]);
			CASE(&k, name, spyre_op_matmul(k.c.ops, k.c.s, &d[0].t, &d[1].t, &d[2].t),
			     d[2]);
			free_all(d, 3);
		}
		for (i = 0; i < 3; i++) {
			int64_t sx[2] = { lin[i][0], lin[i][1] }, sw[2] = { lin[i][2], lin[i][1] };
			int64_t sb[1] = { lin[i][2] }, so[2] = { lin[i][0], lin[i][2] };

			if (dt == SPYRE_FLOAT32 && i < 2)
				continue;
			d[0] = vals(&k, dt, 2, sx, -1, 1);
			d[1] = vals(&k, dt, 2, sw, -0.1, 0.1);
			d[2] = vals(&k, dt, 1, sb, -1, 1);
			d[3] = out(&k, dt, 2, so);
			snprintf(name, sizeof(name), "linear_%s_%lldx%lldx%lld", dn(dt),
				 (long long)lin[i][0], (long long)lin[i][1], (long long)lin[i][2]);
			CASE(&k, name, spyre_op_linear(k.c.ops, k.c.s, &d[0].t, &d[1].t,
						       i == 2 ? NULL : &d[2].t, &d[3].t), d[3]);
			free_all(d, 4);
		}
	}
	{
		int64_t sa[3] = { 3, 17, 64 }, sb[3] = { 3, 64, 29 }, so[3] = { 3, 17, 29 };

		d[0] = vals(&k, SPYRE_FLOAT16, 3, sa, -2, 2);
		d[1] = vals(&k, SPYRE_FLOAT16, 3, sb, -2, 2);
		d[2] = out(&k, SPYRE_FLOAT16, 3, so);
		CASE(&k, "matmul_float16_batched_3x17x64x29",
		     spyre_op_matmul(k.c.ops, k.c.s, &d[0].t, &d[1].t, &d[2].t), d[2]);
		free_all(d, 3);
	}
	corpus_close(&k);
}

/* Attention (decode and causal prefill), norms, softmax, embedding. */
TEST(sim_corpus_attention_norms)
{
	int64_t sq[4] = { 1, 12, 1, 64 }, skv[4] = { 1, 12, 33, 64 }, sp[4] = { 1, 12, 32, 64 };
	int64_t sx[2] = { 32, 768 }, sc[1] = { 768 }, sw[2] = { 1000, 768 }, si[1] = { 32 };
	int64_t ss[2] = { 7, 1000 }, s3[3] = { 3, 40, 5 };
	struct corpus k;
	struct dtensor d[6];
	char name[96];
	unsigned int t;

	if (!corpus_open(dev, &k))
		return;
	for (t = 0; t < 3; t++) {
		enum spyre_dtype dt = fdts[t];

		d[0] = vals(&k, dt, 4, sq, -1, 1);
		d[1] = vals(&k, dt, 4, skv, -1, 1);
		d[2] = vals(&k, dt, 4, skv, -1, 1);
		d[3] = out(&k, dt, 4, sq);
		snprintf(name, sizeof(name), "sdpa_decode_%s", dn(dt));
		CASE(&k, name, spyre_op_sdpa(k.c.ops, k.c.s, &d[0].t, &d[1].t, &d[2].t, NULL, 0, 0,
					     &d[3].t), d[3]);
		free_all(d, 4);
		d[0] = vals(&k, dt, 4, sp, -1, 1);
		d[1] = vals(&k, dt, 4, sp, -1, 1);
		d[2] = vals(&k, dt, 4, sp, -1, 1);
		d[3] = out(&k, dt, 4, sp);
		snprintf(name, sizeof(name), "sdpa_prefill_causal_%s", dn(dt));
		CASE(&k, name, spyre_op_sdpa(k.c.ops, k.c.s, &d[0].t, &d[1].t, &d[2].t, NULL, 1, 0,
					     &d[3].t), d[3]);
		free_all(d, 4);

		d[0] = vals(&k, dt, 2, sx, -3, 3);
		d[1] = vals(&k, dt, 1, sc, 0.5, 1.5);
		d[2] = vals(&k, dt, 1, sc, -1, 1);
		d[3] = out(&k, dt, 2, sx);
		snprintf(name, sizeof(name), "layer_norm_%s", dn(dt));
		CASE(&k, name, spyre_op_layer_norm(k.c.ops, k.c.s, &d[0].t, &d[1].t, &d[2].t, 1e-5,
						   &d[3].t), d[3]);
		snprintf(name, sizeof(name), "rms_norm_%s", dn(dt));
		CASE(&k, name, spyre_op_rms_norm(k.c.ops, k.c.s, &d[0].t, &d[1].t, 1e-6, &d[3].t),
		     d[3]);
		free_all(d, 4);

		d[0] = wide(&k, dt, 2, ss);
		d[1] = out(&k, dt, 2, ss);
		snprintf(name, sizeof(name), "softmax_wide_%s", dn(dt));
		CASE(&k, name, spyre_op_softmax(k.c.ops, k.c.s, &d[0].t, -1, &d[1].t), d[1]);
		free_all(d, 2);
		d[0] = vals(&k, dt, 2, ss, -8, 8);
		d[1] = out(&k, dt, 2, ss);
		snprintf(name, sizeof(name), "softmax_%s", dn(dt));
		CASE(&k, name, spyre_op_softmax(k.c.ops, k.c.s, &d[0].t, -1, &d[1].t), d[1]);
		snprintf(name, sizeof(name), "log_softmax_%s", dn(dt));
		CASE(&k, name, spyre_op_log_softmax(k.c.ops, k.c.s, &d[0].t, -1, &d[1].t), d[1]);
		free_all(d, 2);
		d[0] = vals(&k, dt, 3, s3, -8, 8);
		d[1] = out(&k, dt, 3, s3);
		snprintf(name, sizeof(name), "softmax_dim1_%s", dn(dt));
		CASE(&k, name, spyre_op_softmax(k.c.ops, k.c.s, &d[0].t, 1, &d[1].t), d[1]);
		free_all(d, 2);
	}
	{
		int64_t so[2] = { 32, 768 };
		int32_t ids[32];
		int i;

		for (i = 0; i < 32; i++)
			ids[i] = (i * 389 + 17) % 1000;
		d[0] = vals(&k, SPYRE_FLOAT16, 2, sw, -1, 1);
		d[1] = out(&k, SPYRE_INT32, 1, si);
		d[2] = out(&k, SPYRE_FLOAT16, 2, so);
		if (dt_write_raw(&k.c, &d[1], ids))
			dt_free(&d[1]);
		CASE(&k, "embedding_float16",
		     spyre_op_embedding(k.c.ops, k.c.s, &d[0].t, &d[1].t, &d[2].t), d[2]);
		free_all(d, 3);
	}
	corpus_close(&k);
}

/* Unary float functions over the types' whole ranges. */
TEST(sim_corpus_unary)
{
	static const enum spyre_unary_op ops[] = {
		SPYRE_UN_NEG, SPYRE_UN_ABS, SPYRE_UN_EXP, SPYRE_UN_LOG, SPYRE_UN_SQRT,
		SPYRE_UN_RSQRT, SPYRE_UN_RECIPROCAL, SPYRE_UN_TANH, SPYRE_UN_SIGMOID,
		SPYRE_UN_RELU, SPYRE_UN_GELU, SPYRE_UN_GELU_TANH, SPYRE_UN_SILU,
		SPYRE_UN_SQUARE, SPYRE_UN_SIN, SPYRE_UN_COS, SPYRE_UN_ERF, SPYRE_UN_LOG2,
	};
	int64_t sx[2] = { 3, 1111 };
	struct corpus k;
	struct dtensor d[2];
	char name[96];
	unsigned int t, i;

	if (!corpus_open(dev, &k))
		return;
	for (t = 0; t < 3; t++) {
		enum spyre_dtype dt = fdts[t];

		d[0] = wide(&k, dt, 2, sx);
		d[1] = out(&k, dt, 2, sx);
		for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
			snprintf(name, sizeof(name), "unary_%s_%s",
				 spyre_op_find(SPYRE_OPK_UNARY, (int)ops[i])->name, dn(dt));
			CASE(&k, name, spyre_op_unary(k.c.ops, k.c.s, ops[i], &d[0].t, &d[1].t),
			     d[1]);
		}
		snprintf(name, sizeof(name), "pow_3_%s", dn(dt));
		CASE(&k, name, spyre_op_pow_scalar(k.c.ops, k.c.s, &d[0].t, 3, &d[1].t), d[1]);
		snprintf(name, sizeof(name), "clamp_%s", dn(dt));
		CASE(&k, name, spyre_op_clamp(k.c.ops, k.c.s, &d[0].t, -0.5, 2, &d[1].t), d[1]);
		snprintf(name, sizeof(name), "mul_scalar_%s", dn(dt));
		CASE(&k, name, spyre_op_binary_scalar(k.c.ops, k.c.s, SPYRE_BIN_MUL, &d[0].t, 0.125,
						      0, &d[1].t), d[1]);
		free_all(d, 2);
	}
	corpus_close(&k);
}

/* Binary ops, broadcast: floats over their whole ranges, int32 and int64. */
TEST(sim_corpus_binary)
{
	static const enum spyre_binary_op fops[] = {
		SPYRE_BIN_ADD, SPYRE_BIN_SUB, SPYRE_BIN_MUL, SPYRE_BIN_DIV, SPYRE_BIN_MAX,
		SPYRE_BIN_MIN, SPYRE_BIN_LT, SPYRE_BIN_EQ,
	};
	static const enum spyre_binary_op iops[] = {
		SPYRE_BIN_ADD, SPYRE_BIN_SUB, SPYRE_BIN_MUL, SPYRE_BIN_MAX, SPYRE_BIN_FLOOR_DIVIDE,
		SPYRE_BIN_REMAINDER, SPYRE_BIN_BITWISE_XOR, SPYRE_BIN_LT,
	};
	static const enum spyre_dtype idts[] = { SPYRE_INT32, SPYRE_INT64 };
	int64_t sa[2] = { 48, 257 }, sb[1] = { 257 };
	struct corpus k;
	struct dtensor d[4];
	char name[96];
	unsigned int t, i;

	if (!corpus_open(dev, &k))
		return;
	for (t = 0; t < 5; t++) {
		enum spyre_dtype dt = t < 3 ? fdts[t] : idts[t - 3];
		const enum spyre_binary_op *ops = t < 3 ? fops : iops;

		d[0] = wide(&k, dt, 2, sa);
		d[1] = t < 3 ? wide(&k, dt, 1, sb) : vals(&k, dt, 1, sb, 1, 50);
		d[2] = out(&k, dt, 2, sa);
		d[3] = out(&k, SPYRE_BOOL, 2, sa);
		for (i = 0; i < 8; i++) {
			const struct spyre_op_info *r = spyre_op_find(SPYRE_OPK_BINARY, (int)ops[i]);
			const struct dtensor *o = r->result == SPYRE_RESULT_BOOL ? &d[3] : &d[2];

			snprintf(name, sizeof(name), "binary_%s_%s", r->name, dn(dt));
			CASE(&k, name, spyre_op_binary(k.c.ops, k.c.s, ops[i], &d[0].t, &d[1].t, &o->t),
			     *o);
		}
		free_all(d, 4);
	}
	corpus_close(&k);
}

/* Casts over every 16-bit pattern and random fp32 bits; a transposing copy. */
TEST(sim_corpus_casts)
{
	static const enum spyre_dtype to[] = { SPYRE_FLOAT32, SPYRE_FLOAT16, SPYRE_BFLOAT16,
					       SPYRE_INT32, SPYRE_INT8, SPYRE_BOOL };
	int64_t s16[1] = { 65536 }, st[2] = { 64, 48 };
	struct corpus k;
	struct dtensor d[2], o;
	char name[96];
	unsigned int f, t;

	if (!corpus_open(dev, &k))
		return;
	for (f = 0; f < 3; f++) {
		enum spyre_dtype from = fdts[f];

		d[0] = bits(&k, from, 1, s16, from != SPYRE_FLOAT32);
		for (t = 0; t < sizeof(to) / sizeof(to[0]); t++) {
			if (to[t] == from)
				continue;
			o = out(&k, to[t], 1, s16);
			snprintf(name, sizeof(name), "cast_%s_%s", dn(from), dn(to[t]));
			CASE(&k, name, spyre_op_copy(k.c.ops, k.c.s, &d[0].t, &o.t), o);
			dt_free(&o);
		}
		dt_free(&d[0]);
	}
	d[0] = wide(&k, SPYRE_INT32, 1, s16);
	for (t = 1; t < 3; t++) {
		o = out(&k, to[t], 1, s16);
		snprintf(name, sizeof(name), "cast_int32_%s", dn(to[t]));
		CASE(&k, name, spyre_op_copy(k.c.ops, k.c.s, &d[0].t, &o.t), o);
		dt_free(&o);
	}
	dt_free(&d[0]);
	d[0] = vals(&k, SPYRE_FLOAT16, 2, st, -100, 100);
	d[1] = out(&k, SPYRE_FLOAT16, 2, (int64_t[2]){ 48, 64 });
	{
		struct spyre_tensor tr = d[0].t;

		tr.shape[0] = 48;
		tr.shape[1] = 64;
		tr.strides[0] = 1;
		tr.strides[1] = 48;
		CASE(&k, "copy_transpose_float16", spyre_op_copy(k.c.ops, k.c.s, &tr, &d[1].t),
		     d[1]);
	}
	free_all(d, 2);
	corpus_close(&k);
}

/* Reductions, scans, selection. */
TEST(sim_corpus_reduce)
{
	static const enum spyre_reduce_op rops[] = { SPYRE_RED_SUM, SPYRE_RED_MEAN, SPYRE_RED_MAX,
						     SPYRE_RED_MIN };
	int64_t sx[2] = { 32, 768 }, sr[1] = { 32 }, sc[1] = { 768 }, sa[2] = { 5, 1000 };
	int64_t sai[1] = { 5 };
	struct corpus k;
	struct dtensor d[5];
	char name[96];
	unsigned int t, i;

	if (!corpus_open(dev, &k))
		return;
	for (t = 0; t < 3; t++) {
		enum spyre_dtype dt = fdts[t];

		d[0] = vals(&k, dt, 2, sx, -4, 4);
		d[1] = out(&k, dt, 1, sr);
		d[2] = out(&k, dt, 1, sc);
		for (i = 0; i < 4; i++) {
			const char *rn = spyre_op_find(SPYRE_OPK_REDUCE, (int)rops[i])->name;

			snprintf(name, sizeof(name), "reduce_%s_rows_%s", rn, dn(dt));
			CASE(&k, name, spyre_op_reduce(k.c.ops, k.c.s, rops[i], &d[0].t, 1, 0, &d[1].t),
			     d[1]);
			snprintf(name, sizeof(name), "reduce_%s_cols_%s", rn, dn(dt));
			CASE(&k, name, spyre_op_reduce(k.c.ops, k.c.s, rops[i], &d[0].t, 0, 0, &d[2].t),
			     d[2]);
		}
		free_all(d, 3);
		d[0] = wide(&k, dt, 2, sa);
		d[1] = out(&k, SPYRE_INT32, 1, sai);
		d[2] = out(&k, dt, 2, sa);
		d[3] = out(&k, SPYRE_BOOL, 2, sa);
		d[4] = out(&k, dt, 2, sa);
		snprintf(name, sizeof(name), "argmax_%s", dn(dt));
		CASE(&k, name, spyre_op_argmax(k.c.ops, k.c.s, &d[0].t, 1, 0, &d[1].t), d[1]);
		snprintf(name, sizeof(name), "cumsum_%s", dn(dt));
		CASE(&k, name, spyre_op_cumsum(k.c.ops, k.c.s, &d[0].t, 1, &d[2].t), d[2]);
		snprintf(name, sizeof(name), "tril_%s", dn(dt));
		CASE(&k, name, spyre_op_tril(k.c.ops, k.c.s, &d[0].t, 3, 0, &d[2].t), d[2]);
		snprintf(name, sizeof(name), "gt_scalar_%s", dn(dt));
		CASE(&k, name, spyre_op_binary_scalar(k.c.ops, k.c.s, SPYRE_BIN_GT, &d[0].t, 0.0, 0, &d[3].t),
		     d[3]);
		snprintf(name, sizeof(name), "where_%s", dn(dt));
		CASE(&k, name, spyre_op_where(k.c.ops, k.c.s, &d[3].t, &d[0].t, &d[2].t, &d[4].t),
		     d[4]);
		snprintf(name, sizeof(name), "masked_fill_%s", dn(dt));
		CASE(&k, name, spyre_op_masked_fill(k.c.ops, k.c.s, &d[0].t, &d[3].t, -INFINITY,
						    &d[4].t), d[4]);
		free_all(d, 5);
	}
	d[0] = wide(&k, SPYRE_INT32, 2, sx);
	d[1] = out(&k, SPYRE_INT32, 1, sr);
	CASE(&k, "reduce_sum_rows_int32",
	     spyre_op_reduce(k.c.ops, k.c.s, SPYRE_RED_SUM, &d[0].t, 1, 0, &d[1].t), d[1]);
	CASE(&k, "reduce_max_rows_int32",
	     spyre_op_reduce(k.c.ops, k.c.s, SPYRE_RED_MAX, &d[0].t, 1, 0, &d[1].t), d[1]);
	free_all(d, 2);
	corpus_close(&k);
}

/* A GPT-style decoder compiled into one recipe, and op by op. */
static void corpus_decoder(struct corpus *k, const char *tag, const struct gpt_cfg *cfg)
{
	int64_t sid[1] = { cfg->tokens }, so[2] = { cfg->tokens, cfg->vocab };
	struct spyre_tensor ti, to;
	spyre_compiled *kc[2] = { NULL, NULL };
	spyre_value ids, logits;
	struct dtensor did, dy;
	spyre_graph *g = NULL;
	char name[96];
	int32_t *idv = malloc(cfg->tokens * sizeof(int32_t));
	struct gpt w;
	int i;

	if (!idv || gpt_make(k->c.dev, cfg, 3, &w)) {
		free(idv);
		test_failures++;
		fprintf(stderr, "  %s: weights: %s\n", tag, spyre_last_error());
		return;
	}
	for (i = 0; i < cfg->tokens; i++)
		idv[i] = (i * 97 + 5) % cfg->vocab;
	did = out(k, SPYRE_INT32, 1, sid);
	dy = out(k, cfg->dtype, 2, so);
	if (dt_write_raw(&k->c, &did, idv) || spyre_graph_create(k->c.ops, &g) ||
	    spyre_graph_input(g, SPYRE_INT32, 1, sid, &ids) || gpt_build(g, &w, ids, &logits) ||
	    spyre_graph_output(g, logits) || spyre_graph_compile(g, &kc[0]) ||
	    spyre_graph_compile_flags(g, SPYRE_COMPILE_OP_BY_OP | SPYRE_COMPILE_NO_FUSION, &kc[1])) {
		test_failures++;
		fprintf(stderr, "  %s: building: %s\n", tag, spyre_last_error());
	} else {
		ti = did.t;
		to = dy.t;
		snprintf(name, sizeof(name), "decoder_%s_compiled", tag);
		CASE(k, name, spyre_compiled_run(kc[0], k->c.s, &ti, 1, &to, 1), dy);
		snprintf(name, sizeof(name), "decoder_%s_op_by_op", tag);
		CASE(k, name, spyre_compiled_run(kc[1], k->c.s, &ti, 1, &to, 1), dy);
	}
	for (i = 0; i < 2; i++)
		if (kc[i])
			spyre_compiled_destroy(kc[i]);
	if (g)
		spyre_graph_destroy(g);
	dt_free(&did);
	dt_free(&dy);
	gpt_free(&w);
	free(idv);
}

TEST(sim_corpus_decoder)
{
	struct gpt_cfg prefill = { 512, 256, 8, 688, 2, 32, SPYRE_FLOAT16 };
	struct gpt_cfg small = { 96, 64, 4, 128, 2, 16, SPYRE_BFLOAT16 };
	struct corpus k;

	if (!corpus_open(dev, &k))
		return;
	corpus_decoder(&k, "float16_prefill32", &prefill);
	prefill.tokens = 1;
	corpus_decoder(&k, "float16_token1", &prefill);
	corpus_decoder(&k, "bfloat16_small", &small);
	corpus_close(&k);
}
