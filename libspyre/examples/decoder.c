// SPDX-License-Identifier: MIT
/* GPT-style decoder through the graph API, and its host reference. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decoder.h"

static double rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return (double)(*x >> 11) / 9007199254740992.0;
}

static double to_dtype(enum spyre_dtype dt, double v)
{
	float f = (float)v;
	uint32_t u;

	if (dt == SPYRE_FLOAT16)
		return (double)(float)(_Float16)f;
	if (dt == SPYRE_BFLOAT16) {
		memcpy(&u, &f, 4);
		u += 0x7fff + ((u >> 16) & 1);
		u &= 0xffff0000u;
		memcpy(&f, &u, 4);
	}
	return f;
}

static void encode(enum spyre_dtype dt, double v, uint8_t *p)
{
	float f = (float)v;
	_Float16 h = (_Float16)f;
	uint32_t u;

	if (dt == SPYRE_FLOAT32) {
		memcpy(p, &f, 4);
	} else if (dt == SPYRE_FLOAT16) {
		memcpy(p, &h, 2);
	} else {
		memcpy(&u, &f, 4);
		p[0] = (uint8_t)(u >> 16);
		p[1] = (uint8_t)(u >> 24);
	}
}

static int upload(spyre_device *dev, struct gpt *w, unsigned int i, unsigned int ndim,
		  const int64_t *shape, double lo, double hi, uint64_t *seed)
{
	int64_t n = 1, k;
	unsigned int d, es = spyre_dtype_bytes(w->cfg.dtype);
	spyre_bo *h = NULL;
	spyre_stream *s = NULL;
	struct spyre_buf hb, db;
	void *map;
	int ret;

	for (d = 0; d < ndim; d++)
		n *= shape[d];
	w->host[i] = malloc((size_t)n * sizeof(double));
	if (!w->host[i])
		return -1;
	ret = spyre_bo_create(dev, (uint64_t)n * es, SPYRE_MEM_DEVICE, &w->bo[i]);
	if (!ret)
		ret = spyre_bo_create(dev, (uint64_t)n * es, SPYRE_MEM_HOST, &h);
	if (!ret)
		ret = spyre_bo_map(h, &map);
	if (ret)
		goto out;
	for (k = 0; k < n; k++) {
		w->host[i][k] = to_dtype(w->cfg.dtype, lo + (hi - lo) * rnd(seed));
		encode(w->cfg.dtype, w->host[i][k], (uint8_t *)map + k * es);
	}
	ret = spyre_stream_create(dev, SPYRE_ENGINE_DMA, &s);
	if (!ret) {
		hb = spyre_bo_buf(h);
		db = spyre_bo_buf(w->bo[i]);
		ret = spyre_memcpy_async(s, &db, &hb, (uint64_t)n * es);
		if (!ret)
			ret = spyre_stream_synchronize(s);
		spyre_stream_destroy(s);
	}
	w->t[i] = spyre_tensor_make(w->cfg.dtype, ndim, shape, spyre_bo_buf(w->bo[i]));
out:
	if (h)
		spyre_bo_destroy(h);
	return ret;
}

int gpt_make(spyre_device *dev, const struct gpt_cfg *cfg, unsigned int seed, struct gpt *w)
{
	int64_t D = cfg->dim, F = cfg->ffn, V = cfg->vocab;
	int64_t s_vd[2] = { V, D }, s_d[1] = { D }, s_dd[2] = { D, D }, s_fd[2] = { F, D },
		s_df[2] = { D, F };
	double sd = 1.0 / sqrt((double)D), sf = 1.0 / sqrt((double)F);
	uint64_t x = 0x243f6a8885a308d3ull ^ seed;
	unsigned int l, i = 0;
	int ret;

	memset(w, 0, sizeof(*w));
	w->cfg = *cfg;
	w->dev = dev;
	if (cfg->layers > 8)
		return -1;
	w->nw = 2 + GPT_W_PER_LAYER * (unsigned int)cfg->layers;
	ret = upload(dev, w, i++, 2, s_vd, -1, 1, &x);
	if (!ret)
		ret = upload(dev, w, i++, 1, s_d, 0.8, 1.2, &x);
	for (l = 0; l < (unsigned int)cfg->layers && !ret; l++) {
		ret = upload(dev, w, i++, 1, s_d, 0.8, 1.2, &x);	/* g1 */
		if (!ret)
			ret = upload(dev, w, i++, 2, s_dd, -sd, sd, &x);	/* wq */
		if (!ret)
			ret = upload(dev, w, i++, 2, s_dd, -sd, sd, &x);	/* wk */
		if (!ret)
			ret = upload(dev, w, i++, 2, s_dd, -sd, sd, &x);	/* wv */
		if (!ret)
			ret = upload(dev, w, i++, 2, s_dd, -sd, sd, &x);	/* wo */
		if (!ret)
			ret = upload(dev, w, i++, 1, s_d, 0.8, 1.2, &x);	/* g2 */
		if (!ret)
			ret = upload(dev, w, i++, 2, s_fd, -sd, sd, &x);	/* w1 */
		if (!ret)
			ret = upload(dev, w, i++, 2, s_fd, -sd, sd, &x);	/* w3 */
		if (!ret)
			ret = upload(dev, w, i++, 2, s_df, -sf, sf, &x);	/* w2 */
	}
	return ret;
}

void gpt_free(struct gpt *w)
{
	unsigned int i;

	for (i = 0; i < w->nw; i++) {
		free(w->host[i]);
		if (w->bo[i])
			spyre_bo_destroy(w->bo[i]);
	}
	memset(w, 0, sizeof(*w));
}

#define TRY(x)                         \
	do {                           \
		int r_ = (x);          \
		if (r_)                \
			return r_;     \
	} while (0)

/* [T, D] -> [H, T, hd] view */
static int heads(spyre_graph *g, const struct gpt_cfg *c, spyre_value x, spyre_value *out)
{
	int64_t sh[3] = { c->tokens, c->heads, c->dim / c->heads };
	static const int perm[3] = { 1, 0, 2 };
	spyre_value r;

	TRY(spyre_graph_reshape(g, x, 3, sh, &r));
	return spyre_graph_permute(g, r, perm, out);
}

int gpt_build(spyre_graph *g, const struct gpt *w, spyre_value ids, spyre_value *logits)
{
	const struct gpt_cfg *c = &w->cfg;
	spyre_value W[2 + 8 * GPT_W_PER_LAYER], x, h, q, k, v, a, o, gt, up, m;
	int64_t td[2] = { c->tokens, c->dim };
	static const int perm[3] = { 1, 0, 2 };
	unsigned int i, l;

	for (i = 0; i < w->nw; i++)
		TRY(spyre_graph_constant(g, &w->t[i], &W[i]));
	TRY(spyre_graph_embedding(g, W[0], ids, &x));
	for (l = 0; l < (unsigned int)c->layers; l++) {
		const spyre_value *L = &W[2 + l * GPT_W_PER_LAYER];

		TRY(spyre_graph_rms_norm(g, x, L[0], 1e-6, &h));
		TRY(spyre_graph_linear(g, h, L[1], -1, &q));
		TRY(spyre_graph_linear(g, h, L[2], -1, &k));
		TRY(spyre_graph_linear(g, h, L[3], -1, &v));
		TRY(heads(g, c, q, &q));
		TRY(heads(g, c, k, &k));
		TRY(heads(g, c, v, &v));
		TRY(spyre_graph_sdpa(g, q, k, v, -1, 1, 0, &a));	/* [H, T, hd] */
		TRY(spyre_graph_permute(g, a, perm, &a));
		TRY(spyre_graph_reshape(g, a, 2, td, &a));
		TRY(spyre_graph_linear(g, a, L[4], -1, &o));
		TRY(spyre_graph_binary(g, SPYRE_BIN_ADD, x, o, &x));
		TRY(spyre_graph_rms_norm(g, x, L[5], 1e-6, &h));
		TRY(spyre_graph_linear(g, h, L[6], -1, &gt));
		TRY(spyre_graph_linear(g, h, L[7], -1, &up));
		TRY(spyre_graph_unary(g, SPYRE_UN_SILU, gt, &gt));
		TRY(spyre_graph_binary(g, SPYRE_BIN_MUL, gt, up, &m));
		TRY(spyre_graph_linear(g, m, L[8], -1, &o));
		TRY(spyre_graph_binary(g, SPYRE_BIN_ADD, x, o, &x));
	}
	TRY(spyre_graph_rms_norm(g, x, W[1], 1e-6, &h));
	return spyre_graph_linear(g, h, W[0], -1, logits);
}

/* ---- host reference ---- */

static void rmsnorm(const double *x, const double *g, double *y, int T, int D)
{
	int t, i;

	for (t = 0; t < T; t++) {
		double ms = 0;

		for (i = 0; i < D; i++)
			ms += x[t * D + i] * x[t * D + i] / D;
		for (i = 0; i < D; i++)
			y[t * D + i] = x[t * D + i] / sqrt(ms + 1e-6) * g[i];
	}
}

/* y [T, N] = x [T, K] @ w[N, K]^T */
static void lin(const double *x, const double *w, double *y, int T, int K, int N)
{
	int t, n, k;

	for (t = 0; t < T; t++)
		for (n = 0; n < N; n++) {
			double s = 0;

			for (k = 0; k < K; k++)
				s += x[t * K + k] * w[n * K + k];
			y[t * N + n] = s;
		}
}

void gpt_reference(const struct gpt *w, const int32_t *ids, double *logits)
{
	const struct gpt_cfg *c = &w->cfg;
	int T = c->tokens, D = c->dim, H = c->heads, hd = D / H, F = c->ffn, t, i, l, hh, j;
	double *x = calloc((size_t)T * D, 8), *h = calloc((size_t)T * D, 8);
	double *q = calloc((size_t)T * D, 8), *k = calloc((size_t)T * D, 8);
	double *v = calloc((size_t)T * D, 8), *a = calloc((size_t)T * D, 8);
	double *o = calloc((size_t)T * D, 8), *g1 = calloc((size_t)T * F, 8);
	double *g3 = calloc((size_t)T * F, 8), *p = calloc((size_t)T, 8);

	for (t = 0; t < T; t++)
		for (i = 0; i < D; i++)
			x[t * D + i] = w->host[0][ids[t] * D + i];
	for (l = 0; l < c->layers; l++) {
		double *const *L = &w->host[2 + l * GPT_W_PER_LAYER];

		rmsnorm(x, L[0], h, T, D);
		lin(h, L[1], q, T, D, D);
		lin(h, L[2], k, T, D, D);
		lin(h, L[3], v, T, D, D);
		for (hh = 0; hh < H; hh++)
			for (t = 0; t < T; t++) {
				double mx = -INFINITY, s = 0;

				for (j = 0; j <= t; j++) {
					double d = 0;

					for (i = 0; i < hd; i++)
						d += q[t * D + hh * hd + i] *
						     k[j * D + hh * hd + i];
					p[j] = d / sqrt((double)hd);
					mx = fmax(mx, p[j]);
				}
				for (j = 0; j <= t; j++) {
					p[j] = exp(p[j] - mx);
					s += p[j];
				}
				for (i = 0; i < hd; i++) {
					double acc = 0;

					for (j = 0; j <= t; j++)
						acc += p[j] / s * v[j * D + hh * hd + i];
					a[t * D + hh * hd + i] = acc;
				}
			}
		lin(a, L[4], o, T, D, D);
		for (i = 0; i < T * D; i++)
			x[i] += o[i];
		rmsnorm(x, L[5], h, T, D);
		lin(h, L[6], g1, T, D, F);
		lin(h, L[7], g3, T, D, F);
		for (i = 0; i < T * F; i++)
			g1[i] = g1[i] / (1 + exp(-g1[i])) * g3[i];
		lin(g1, L[8], o, T, F, D);
		for (i = 0; i < T * D; i++)
			x[i] += o[i];
	}
	rmsnorm(x, w->host[1], h, T, D);
	lin(h, w->host[0], logits, T, D, c->vocab);
	free(x);
	free(h);
	free(q);
	free(k);
	free(v);
	free(a);
	free(o);
	free(g1);
	free(g3);
	free(p);
}
