// SPDX-License-Identifier: MIT
/* Philox4x32-10 on the card (spyre_op_philox) against a host reference and Random123's KAT. */
#include <stdlib.h>

#include "ops_ref.h"
#include "spyre_hw.h"

/* The host reference: ten rounds on 32-bit words, the key bumped after each. */
static void ref_philox(uint32_t c[4], uint32_t k0, uint32_t k1)
{
	int r;

	for (r = 0; r < 10; r++) {
		uint64_t p0 = (uint64_t)0xD2511F53u * c[0], p1 = (uint64_t)0xCD9E8D57u * c[2];
		uint32_t n0 = (uint32_t)(p1 >> 32) ^ c[1] ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c[3] ^ k1;

		c[1] = (uint32_t)p1;
		c[3] = (uint32_t)p0;
		c[0] = n0;
		c[2] = n2;
		k0 += 0x9E3779B9u;
		k1 += 0xBB67AE85u;
	}
}

static bool has_int(spyre_device *dev)
{
	struct spyre_device_props p;

	return !spyre_device_get_props(dev, &p) && p.hw_version >= SPYRE_HW_VERSION(1, 9);
}

/* Run the op for @m counters and compare every word with the reference. */
static void philox_case(struct tctx *c, int64_t m, uint64_t seed, uint64_t offset,
			uint64_t counter)
{
	int64_t key[SPYRE_PHILOX_KEY_LEN], klen = SPYRE_PHILOX_KEY_LEN, sh[2] = { m, 4 }, j;
	int64_t *got = malloc((size_t)m * 4 * sizeof(int64_t));
	struct dtensor dk, dout;
	int bad = 0;

	ASSERT(got, "alloc");
	spyre_philox_key(seed, offset, counter, key);
	OK(dt_new(c, &dk, SPYRE_INT64, 1, &klen));
	OK(dt_new(c, &dout, SPYRE_INT64, 2, sh));
	OK(dt_write_raw(c, &dk, key));
	OK(spyre_op_philox(c->ops, c->s, &dk.t, &dout.t));
	OK(dt_read_raw(c, &dout, got));
	for (j = 0; j < m && bad < 5; j++) {
		uint64_t ctr = counter + (uint64_t)j;
		uint32_t w[4] = { (uint32_t)ctr, (uint32_t)(ctr >> 32), (uint32_t)offset,
				  (uint32_t)(offset >> 32) };
		int k;

		ref_philox(w, (uint32_t)seed, (uint32_t)(seed >> 32));
		for (k = 0; k < 4; k++) {
			if (got[j * 4 + k] == (int64_t)w[k])
				continue;
			CHECK(0, "m %lld counter %lld word %d: %llx, reference %x", (long long)m,
			      (long long)j, k, (unsigned long long)got[j * 4 + k], w[k]);
			bad++;
		}
	}
	dt_free(&dk);
	dt_free(&dout);
	free(got);
}

TEST(ops_philox)
{
	struct tctx c;

	if (!has_int(dev))
		return;
	OK(tctx_open(dev, &c));
	/* Random123's known answers (kat_vectors: philox4x32 10) */
	philox_case(&c, 1, 0, 0, 0);
	philox_case(&c, 1, ~0ull, ~0ull, ~0ull);
	philox_case(&c, 1, 0x299f31d0a4093822ull, 0x0370734413198a2eull, 0x85a308d3243f6a88ull);
	/* short, odd, one row of the 2-D space, several rows; the counter wrapping */
	philox_case(&c, 37, 42, 7, 0);
	philox_case(&c, 4096, 42, 8, 100);
	philox_case(&c, 4096 * 3, 0x123456789abcdefull, 1ull << 40, ~0ull - 5000);
	philox_case(&c, 5000, 1, 2, 3);
	tctx_close(&c);
}

TEST(ops_philox_known_answer)
{
	static const uint32_t kat[3][4] = {
		{ 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8 },
		{ 0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd },
		{ 0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1 },
	};
	uint32_t w[3][4] = {
		{ 0, 0, 0, 0 },
		{ ~0u, ~0u, ~0u, ~0u },
		{ 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344 },
	};
	static const uint32_t k[3][2] = { { 0, 0 }, { ~0u, ~0u }, { 0xa4093822, 0x299f31d0 } };
	int i, j;

	/* the reference itself: the cases of ops_philox compare against it */
	for (i = 0; i < 3; i++) {
		ref_philox(w[i], k[i][0], k[i][1]);
		for (j = 0; j < 4; j++)
			CHECK(w[i][j] == kat[i][j], "KAT %d word %d: %x != %x", i, j, w[i][j],
			      kat[i][j]);
	}
}

TEST(ops_philox_bad_args)
{
	int64_t klen = SPYRE_PHILOX_KEY_LEN, sh[2] = { 8, 4 }, bad[2] = { 8, 3 }, short_k = 5;
	int64_t empty[2] = { 0, 4 }, key[SPYRE_PHILOX_KEY_LEN];
	struct dtensor dk, dout, d3, dshort, dempty;
	struct tctx c;

	if (!has_int(dev))
		return;
	OK(tctx_open(dev, &c));
	spyre_philox_key(1, 2, 3, key);
	OK(dt_new(&c, &dk, SPYRE_INT64, 1, &klen));
	OK(dt_write_raw(&c, &dk, key));
	OK(dt_new(&c, &dout, SPYRE_INT64, 2, sh));
	OK(dt_new(&c, &d3, SPYRE_INT64, 2, bad));
	OK(dt_new(&c, &dshort, SPYRE_INT64, 1, &short_k));
	OK(dt_new(&c, &dempty, SPYRE_INT64, 2, empty));
	FAILS_WITH(spyre_op_philox(c.ops, c.s, &dk.t, &d3.t), -EINVAL, "[m, 4]");
	FAILS_WITH(spyre_op_philox(c.ops, c.s, &dshort.t, &dout.t), -EINVAL, "key must be");
	FAILS_WITH(spyre_op_philox(c.ops, c.s, NULL, &dout.t), -EINVAL, "NULL");
	OK(spyre_op_philox(c.ops, c.s, &dk.t, &dempty.t));
	dt_free(&dk);
	dt_free(&dout);
	dt_free(&d3);
	dt_free(&dshort);
	dt_free(&dempty);
	tctx_close(&c);
}
