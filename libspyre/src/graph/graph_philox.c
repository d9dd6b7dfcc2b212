// SPDX-License-Identifier: MIT
/*
 * Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
 * 3", SC'11; the generator of CUDA's curand and of PyTorch's CUDA
 * generator) computed by card programs in the vector unit's integer mode
 * (card interface 1.9).
 *
 * A round maps the counter (c0, c1, c2, c3) under the key (k0, k1) to
 * (hi(M1 c2) ^ c1 ^ k0, lo(M1 c2), hi(M0 c0) ^ c3 ^ k1, lo(M0 c0)). The card
 * has no 32x32->64 multiply-high, but its integer mode computes on 64-bit
 * integers: two 32-bit words packed in one int64, P = c0 | c1 << 32 and
 * Q = c2 | c3 << 32, give the whole round with 64-bit MUL, SHR, SHL, AND,
 * XOR and OR (the product of two values below 2^32 is below 2^64, so its
 * wrapped int64 holds exactly its 64 bits):
 *
 *   P' = ((((M1 * (Q & W)) ^ P) >> 32) & W ^ k0) | (M1 * (Q & W)) << 32
 *   Q' = ((((M0 * (P & W)) ^ Q) >> 32) & W ^ k1) | (M0 * (P & W)) << 32
 *
 * with W = 2^32 - 1 (the arithmetic shift's sign bits are masked off). Each
 * of P' and Q' is one elementwise node per round (a node has one output,
 * and both read both); the ten round keys, the counter base and the offset
 * come from a small int64 key tensor, so one program serves every seed
 * and offset. Counter j of the call is (base + j) in (c0, c1) and the
 * offset in (c2, c3): a call with another offset draws from a disjoint
 * set of counters.
 */
#include <string.h>

#include "../internal.h"
#include "graph_build.h"

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u
#define PHILOX_ROUNDS 10
#define WORD_MASK 0xFFFFFFFFll

/* Counters per row of the 2-D iteration space of a long call. */
#define PHILOX_COLS 4096

void spyre_philox_key(uint64_t seed, uint64_t offset, uint64_t counter,
		      int64_t key[SPYRE_PHILOX_KEY_LEN])
{
	uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
	int r;

	for (r = 0; r < PHILOX_ROUNDS; r++) {
		key[2 * r] = k0;
		key[2 * r + 1] = k1;
		k0 += PHILOX_W0;
		k1 += PHILOX_W1;
	}
	key[2 * PHILOX_ROUNDS] = (int64_t)counter;
	key[2 * PHILOX_ROUNDS + 1] = (int64_t)offset;
}

/* A view of key word @i broadcast over @ndim dims of @shape. */
static int key_word(spyre_graph *g, spyre_value key, int i, unsigned int ndim,
		    const int64_t *shape)
{
	static const int64_t zero[SPYRE_MAX_DIMS];
	const struct gval *K = &g->v[key];

	return g_value(g, SPYRE_INT64, ndim, shape, zero, K->off + i * K->strides[0], K->store);
}

/* One half of a round: F(self, other, m, k) above. */
static int half_round(spyre_graph *g, spyre_value self, spyre_value other, spyre_value k,
		      uint32_t m, spyre_value *out)
{
	const uint8_t t = SPYRE_DT_INT64;
	struct ewb e = { 0 };
	int s = g_ew_in(&e, self), o = g_ew_in(&e, other), kk = g_ew_in(&e, k);
	int w = g_ew_iconst(&e, WORD_MASK, t), sh = g_ew_iconst(&e, 32, t);
	int prod, x, hi;

	prod = g_ew_iop(&e, SPYRE_VF_AND, o, w, t, 0);
	prod = g_ew_iop(&e, SPYRE_VF_MUL, prod, g_ew_iconst(&e, m, t), t, 0);
	x = g_ew_iop(&e, SPYRE_VF_XOR, prod, s, t, 0);
	x = g_ew_iop(&e, SPYRE_VF_SHR, x, sh, t, 0);
	x = g_ew_iop(&e, SPYRE_VF_AND, x, w, t, 0);
	x = g_ew_iop(&e, SPYRE_VF_XOR, x, kk, t, 0);
	hi = g_ew_iop(&e, SPYRE_VF_SHL, prod, sh, t, 0);
	g_ew_iop(&e, SPYRE_VF_OR, x, hi, t, 0);
	return g_make_ew(g, "spyre_graph_philox", "philox", &e, SPYRE_INT64, out);
}

/*
 * The counters base + j over the iteration space: [m] from the iota, or
 * [m / C, C] as r * C + c from two broadcast views of a shorter one.
 */
static int counters(spyre_graph *g, spyre_value key, unsigned int nd, const int64_t *sh,
		    spyre_value *out)
{
	const uint8_t t = SPYRE_DT_INT64;
	int64_t len = nd == 1 ? sh[0] : (sh[0] > sh[1] ? sh[0] : sh[1]);
	int64_t st[2] = { 1, 0 };
	struct spyre_tensor it;
	struct spyre_buf buf;
	struct ewb e = { 0 };
	spyre_value io, base;
	int j, ret;

	ret = ops_iota(g->ops, len, &buf);
	if (ret)
		return ret;
	it = spyre_tensor_make(SPYRE_FLOAT32, 1, &len, buf);
	ret = spyre_graph_constant(g, &it, &io);
	if (ret)
		return ret;
	base = key_word(g, key, 2 * PHILOX_ROUNDS, nd, sh);
	if (base < 0)
		return base;
	if (nd == 1) {
		j = g_ew_iop(&e, SPYRE_VF_COPY, g_ew_in(&e, io), -1, t, 0);
	} else {
		spyre_value row = g_value(g, SPYRE_FLOAT32, 2, sh, st, 0, g->v[io].store);
		spyre_value col;
		int r, c;

		st[0] = 0;
		st[1] = 1;
		col = g_value(g, SPYRE_FLOAT32, 2, sh, st, 0, g->v[io].store);
		if (row < 0 || col < 0)
			return -ENOMEM;
		r = g_ew_iop(&e, SPYRE_VF_COPY, g_ew_in(&e, row), -1, t, 0);
		r = g_ew_iop(&e, SPYRE_VF_MUL, r, g_ew_iconst(&e, sh[1], t), t, 0);
		c = g_ew_iop(&e, SPYRE_VF_COPY, g_ew_in(&e, col), -1, t, 0);
		j = g_ew_iop(&e, SPYRE_VF_ADD, r, c, t, 0);
	}
	g_ew_iop(&e, SPYRE_VF_ADD, j, g_ew_in(&e, base), t, 0);
	return g_make_ew(g, "spyre_graph_philox", "philox_counter", &e, SPYRE_INT64, out);
}

/*
 * out[j, w] = word w of the block of counter j: column w takes P (w < 2)
 * or Q, shifted right by 32 for odd w, masked to 32 bits. The column
 * index comes from the iota.
 */
static int words(spyre_graph *g, spyre_value p, spyre_value q, int64_t m, spyre_value *out)
{
	const uint8_t t = SPYRE_DT_INT64;
	int64_t sh[2] = { m, 4 }, st[2] = { 1, 0 }, len = 4;
	struct spyre_tensor it;
	struct spyre_buf buf;
	struct ewb e = { 0 };
	spyre_value io, pv, qv, col;
	int c, isq, isp, one, a, b, w;
	int ret;

	ret = ops_iota(g->ops, len, &buf);
	if (ret)
		return ret;
	it = spyre_tensor_make(SPYRE_FLOAT32, 1, &len, buf);
	ret = spyre_graph_constant(g, &it, &io);
	if (ret)
		return ret;
	pv = g_value(g, SPYRE_INT64, 2, sh, st, g->v[p].off, g->v[p].store);
	qv = g_value(g, SPYRE_INT64, 2, sh, st, g->v[q].off, g->v[q].store);
	st[0] = 0;
	st[1] = 1;
	col = g_value(g, SPYRE_FLOAT32, 2, sh, st, 0, g->v[io].store);
	if (pv < 0 || qv < 0 || col < 0)
		return -ENOMEM;
	one = g_ew_iconst(&e, 1, t);
	c = g_ew_iop(&e, SPYRE_VF_COPY, g_ew_in(&e, col), -1, t, 0);
	isq = g_ew_iop(&e, SPYRE_VF_SHR, c, one, t, 0);
	isp = g_ew_iop(&e, SPYRE_VF_XOR, isq, one, t, 0);
	a = g_ew_iop(&e, SPYRE_VF_SELECT, g_ew_in(&e, pv), isp, t, 0);
	b = g_ew_iop(&e, SPYRE_VF_SELECT, g_ew_in(&e, qv), isq, t, 0);
	w = g_ew_iop(&e, SPYRE_VF_OR, a, b, t, 0);
	c = g_ew_iop(&e, SPYRE_VF_AND, c, one, t, 0);
	c = g_ew_iop(&e, SPYRE_VF_SHL, c, g_ew_iconst(&e, 5, t), t, 0);
	w = g_ew_iop(&e, SPYRE_VF_SHR, w, c, t, 0);
	g_ew_iop(&e, SPYRE_VF_AND, w, g_ew_iconst(&e, WORD_MASK, t), t, 0);
	return g_make_ew(g, "spyre_graph_philox", "philox_words", &e, SPYRE_INT64, out);
}

int spyre_graph_philox(spyre_graph *g, spyre_value key, int64_t m, spyre_value *out)
{
	static const char *call = "spyre_graph_philox";
	const struct gval *K;
	spyre_value p, q, np, nq, kv;
	int64_t sh[2];
	unsigned int nd;
	int r, ret;

	if (!g || !out)
		return spy_err(-EINVAL, "%s: graph or out is NULL", call);
	ret = g_check_val(g, call, key, "key");
	if (ret)
		return ret;
	K = &g->v[key];
	if (K->dt != SPYRE_INT64 || K->ndim != 1 || K->shape[0] != SPYRE_PHILOX_KEY_LEN)
		return spy_err(-EINVAL, "%s: the key must be int64 [%d] (spyre_philox_key), not "
			       "%s with %u dims", call, SPYRE_PHILOX_KEY_LEN,
			       spyre_dtype_name(K->dt), K->ndim);
	if (m < 1 || m > ((int64_t)1 << 24) * PHILOX_COLS ||
	    (m > (1 << 24) && m % PHILOX_COLS))
		return spy_err(-EINVAL, "%s: %lld counters: 1 to 2^24, or a multiple of %d up to "
			       "2^36", call, (long long)m, PHILOX_COLS);
	ret = g_need_int(g, call, "philox", K);
	if (ret)
		return ret;
	if (m > PHILOX_COLS && m % PHILOX_COLS == 0) {
		nd = 2;
		sh[0] = m / PHILOX_COLS;
		sh[1] = PHILOX_COLS;
	} else {
		nd = 1;
		sh[0] = m;
	}
	ret = counters(g, key, nd, sh, &p);
	if (ret)
		return ret;
	q = key_word(g, key, 2 * PHILOX_ROUNDS + 1, nd, sh);
	if (q < 0)
		return q;
	for (r = 0; r < PHILOX_ROUNDS; r++) {
		kv = key_word(g, key, 2 * r, nd, sh);
		if (kv < 0)
			return kv;
		ret = half_round(g, p, q, kv, PHILOX_M1, &np);
		if (ret)
			return ret;
		kv = key_word(g, key, 2 * r + 1, nd, sh);
		if (kv < 0)
			return kv;
		ret = half_round(g, q, p, kv, PHILOX_M0, &nq);
		if (ret)
			return ret;
		p = np;
		q = nq;
	}
	return words(g, p, q, m, out);
}
