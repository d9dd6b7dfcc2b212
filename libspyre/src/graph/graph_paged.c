// SPDX-License-Identifier: MIT
/*
 * Paged attention over a block-table KV cache (vLLM's layout), composed
 * from graph ops. One kernel turns the block table into the cache row of
 * every (request, KV head, context position) in fp32 (exact below 2^24
 * rows), LOAD GATHER brings those rows from the cache into the scratchpad
 * (K and V of a position are one row), and the attention is spyre_graph_sdpa's
 * (fp32 scores, safe softmax) with a bool mask built on the card from the
 * sequence lengths. Rows past a request's length never reach its result,
 * whatever they hold. Prefill and decode are the same lowering: decode is
 * the case of one query row per request.
 */
#include <math.h>
#include <string.h>

#include "../internal.h"
#include "graph_build.h"

/* Rows of the cache a gather index may name: fp32 integers are exact to 2^24. */
#define PAGED_MAX_ROWS ((int64_t)1 << 24)

/* A [n] fp32 arange start + i * step viewed with @n at dim @at of @nd dims. */
static int iota_at(spyre_graph *g, double step, int64_t n, unsigned int nd, unsigned int at,
		   spyre_value *out)
{
	int64_t sh[SPYRE_MAX_DIMS];
	unsigned int d;
	int ret = spyre_graph_arange(g, 0.0, step, n, SPYRE_FLOAT32, out);

	for (d = 0; d < nd; d++)
		sh[d] = d == at ? n : 1;
	return ret ? ret : spyre_graph_reshape(g, *out, nd, sh, out);
}

/*
 * The cache row of (r, h, m, o): block_table[r, m] * Hkv * BS + h * BS + o,
 * as int32 [R, Hkv, MB * BS].
 */
static int cache_rows(spyre_graph *g, spyre_value bt, int64_t R, int64_t hkv, int64_t mb,
		      int64_t bs, spyre_value *out)
{
	int64_t sh4[4] = { R, 1, mb, 1 }, sh3[3] = { R, hkv, mb * bs };
	spyre_value t, h, o;
	int ret;

	ret = spyre_graph_cast(g, bt, SPYRE_FLOAT32, &t);
	if (!ret)
		ret = spyre_graph_reshape(g, t, 4, sh4, &t);
	if (!ret)
		ret = spyre_graph_binary_scalar(g, SPYRE_BIN_MUL, t, (double)(hkv * bs), 0, &t);
	if (!ret)
		ret = iota_at(g, (double)bs, hkv, 4, 1, &h);
	if (!ret)
		ret = iota_at(g, 1.0, bs, 4, 3, &o);
	if (!ret)
		ret = spyre_graph_binary(g, SPYRE_BIN_ADD, t, h, &t);
	if (!ret)
		ret = spyre_graph_binary(g, SPYRE_BIN_ADD, t, o, &t);
	if (!ret)
		ret = spyre_graph_cast(g, t, SPYRE_INT32, &t);
	if (!ret)
		ret = spyre_graph_reshape(g, t, 3, sh3, out);
	return ret;
}

/*
 * keep[r, 0, 0, i, j] = j - i <= seq_lens[r] - Q: query row i of request r
 * sits at position seq_lens[r] - Q + i and sees the keys up to it (so never
 * one at or past seq_lens[r]); a row at a negative position sees none.
 */
static int keep_mask(spyre_graph *g, spyre_value sl, int64_t R, int64_t nq, int64_t L,
		     spyre_value *out)
{
	int64_t sh[5] = { R, 1, 1, 1, 1 };
	spyre_value j, i, d, t;
	int ret;

	ret = iota_at(g, 1.0, L, 5, 4, &j);
	if (!ret)
		ret = iota_at(g, 1.0, nq, 5, 3, &i);
	if (!ret)
		ret = spyre_graph_binary(g, SPYRE_BIN_SUB, j, i, &d);
	if (!ret)
		ret = spyre_graph_cast(g, sl, SPYRE_FLOAT32, &t);
	if (!ret)
		ret = spyre_graph_reshape(g, t, 5, sh, &t);
	if (!ret)
		ret = spyre_graph_binary_scalar(g, SPYRE_BIN_SUB, t, (double)nq, 0, &t);
	if (!ret)
		ret = spyre_graph_binary(g, SPYRE_BIN_LE, d, t, out);
	return ret;
}

/*
 * V rows at or past a request's length read as 0: they are masked out of
 * the scores, but a NaN or inf left there (a block's unused rows, the
 * blocks a short request's table pads with) would still reach the result
 * through probability 0 times the row.
 */
static int past_end_zero(spyre_graph *g, spyre_value sl, int64_t R, int64_t L, spyre_value v,
			 spyre_value *out)
{
	int64_t sh[5] = { R, 1, 1, 1, 1 };
	spyre_value j, t, past;
	int ret;

	ret = iota_at(g, 1.0, L, 5, 3, &j);
	if (!ret)
		ret = spyre_graph_cast(g, sl, SPYRE_FLOAT32, &t);
	if (!ret)
		ret = spyre_graph_reshape(g, t, 5, sh, &t);
	if (!ret)
		ret = spyre_graph_binary(g, SPYRE_BIN_GE, j, t, &past);
	if (!ret)
		ret = spyre_graph_masked_fill(g, v, past, 0.0, out);
	return ret;
}

int spyre_graph_paged_attention(spyre_graph *g, spyre_value q, spyre_value kv_cache,
				spyre_value block_table, spyre_value seq_lens, double scale,
				spyre_value *out)
{
	static const char *call = "spyre_graph_paged_attention";
	int64_t R, H, nq, D, nb, hkv, bs, mb, L, sh[SPYRE_MAX_DIMS], st[SPYRE_MAX_DIMS];
	const struct gval *Q, *KV, *BT, *SL;
	spyre_value table, ix, rows, k, v, qv, keep, o;
	int ret = g_check_val(g, call, q, "q");

	if (!ret)
		ret = g_check_val(g, call, kv_cache, "kv_cache");
	if (!ret)
		ret = g_check_val(g, call, block_table, "block_table");
	if (!ret)
		ret = g_check_val(g, call, seq_lens, "seq_lens");
	if (ret)
		return ret;
	if (!out)
		return spy_err(-EINVAL, "%s: out is NULL", call);
	Q = &g->v[q];
	KV = &g->v[kv_cache];
	BT = &g->v[block_table];
	SL = &g->v[seq_lens];
	if (!g_is_float(Q->dt))
		return g_unsupported(call, "paged attention", Q, "float queries only");
	ret = g_need_select(g, call, "paged attention", Q);	/* LOAD GATHER, the mask */
	if (ret)
		return ret;
	if (Q->ndim != 4 || KV->ndim != 4 || BT->ndim != 2 || SL->ndim != 1)
		return spy_err(-EINVAL, "%s: q must be [R, H, Q, D], kv_cache [blocks, kv_heads, "
			       "block_size, 2 * D], block_table [R, max_blocks], seq_lens [R] "
			       "(got %u, %u, %u and %u dims)", call, Q->ndim, KV->ndim, BT->ndim,
			       SL->ndim);
	if (KV->dt != Q->dt)
		return spy_err(-EINVAL, "%s: kv_cache is %s, q %s", call, spyre_dtype_name(KV->dt),
			       spyre_dtype_name(Q->dt));
	if (BT->dt != SPYRE_INT32 || SL->dt != SPYRE_INT32)
		return spy_err(-EINVAL, "%s: block_table and seq_lens must be int32 (got %s, %s)",
			       call, spyre_dtype_name(BT->dt), spyre_dtype_name(SL->dt));
	R = Q->shape[0];
	H = Q->shape[1];
	nq = Q->shape[2];
	D = Q->shape[3];
	nb = KV->shape[0];
	hkv = KV->shape[1];
	bs = KV->shape[2];
	mb = BT->shape[1];
	L = mb * bs;
	if (KV->shape[3] != 2 * D || BT->shape[0] != R || SL->shape[0] != R || !hkv ||
	    H % hkv)
		return spy_err(-EINVAL, "%s: shapes do not fit: q [%lld, %lld, %lld, %lld], "
			       "kv_cache [%lld, %lld, %lld, %lld], block_table [%lld, %lld], "
			       "seq_lens [%lld] (kv_cache's last dim is 2 * D, heads a multiple "
			       "of kv_heads)", call, (long long)R, (long long)H, (long long)nq,
			       (long long)D, (long long)nb, (long long)hkv, (long long)bs,
			       (long long)KV->shape[3], (long long)BT->shape[0], (long long)mb,
			       (long long)SL->shape[0]);
	if (nb * hkv * bs > PAGED_MAX_ROWS)
		return g_unsupported(call, "paged attention", KV,
				     "cache rows are indexed in fp32, exact up to 2^24 rows");
	/* nothing to compute, or no key: every query sees nothing, 0 as the safe softmax */
	if (!R || !H || !nq || !D || !L || !nb) {
		memcpy(sh, Q->shape, 4 * sizeof(int64_t));
		return g_fill(g, Q->dt, 4, sh, 0.0, out);
	}

	/* the cache as rows of 2 * D: [blocks * kv_heads * block_size, 2 * D] */
	sh[0] = nb * hkv * bs;
	sh[1] = 2 * D;
	ret = spyre_graph_reshape(g, kv_cache, 2, sh, &table);
	if (!ret)
		ret = cache_rows(g, block_table, R, hkv, mb, bs, &ix);
	if (!ret)
		ret = spyre_graph_embedding(g, table, ix, &rows);	/* [R, Hkv, L, 2D] */
	if (ret)
		return ret;
	/* K and V as [R, Hkv, 1, L, D] views of the gathered rows */
	sh[0] = R;
	sh[1] = hkv;
	sh[2] = 1;
	sh[3] = L;
	sh[4] = D;
	st[0] = hkv * L * 2 * D;
	st[1] = L * 2 * D;
	st[2] = 0;
	st[3] = 2 * D;
	st[4] = 1;
	k = g_value(g, g->v[rows].dt, 5, sh, st, g->v[rows].off, g->v[rows].store);
	v = g_value(g, g->v[rows].dt, 5, sh, st, g->v[rows].off + D, g->v[rows].store);
	if (k < 0 || v < 0)
		return k < 0 ? k : v;
	/* query heads of one KV head side by side: [R, Hkv, G, Q, D] */
	sh[2] = H / hkv;
	sh[3] = nq;
	ret = spyre_graph_reshape(g, q, 5, sh, &qv);
	if (!ret)
		ret = keep_mask(g, seq_lens, R, nq, L, &keep);
	if (!ret)
		ret = past_end_zero(g, seq_lens, R, L, v, &v);
	if (!ret)
		ret = g_sdpa(g, qv, k, v, keep, 0, scale, SPYRE_FLOAT32, &o);
	if (ret)
		return ret;
	sh[0] = R;
	sh[1] = H;
	sh[2] = nq;
	sh[3] = D;
	return spyre_graph_reshape(g, o, 4, sh, out);
}
