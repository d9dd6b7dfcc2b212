// SPDX-License-Identifier: MIT
/*
 * Device addresses, pageable host copies, strided copies, fills of any
 * pattern size at any alignment, and copies between two open devices.
 */
#include "harness.h"

TEST(device_addresses)
{
	spyre_device *d2;
	spyre_bo *a, *b, *h, *other;
	spyre_pool *pool;
	struct spyre_buf buf, pb;
	void *m;

	OK(spyre_bo_create(dev, 8192, SPYRE_MEM_DEVICE, &a));
	OK(spyre_bo_create(dev, 4096, SPYRE_MEM_DEVICE, &b));
	OK(host_bo(dev, 4096, &h, &m));
	CHECK(spyre_bo_addr(a) && spyre_bo_addr(b) >= spyre_bo_addr(a) + 8192 &&
	      spyre_bo_addr(h) >= spyre_bo_addr(b) + 4096, "addresses %llx %llx %llx",
	      (unsigned long long)spyre_bo_addr(a), (unsigned long long)spyre_bo_addr(b),
	      (unsigned long long)spyre_bo_addr(h));
	OK(spyre_addr_lookup(dev, spyre_bo_addr(a) + 100, 50, &buf));
	CHECK(buf.bo == a && buf.offset == 100 && buf.size == 50, "lookup: offset %llu",
	      (unsigned long long)buf.offset);
	OK(spyre_addr_lookup(dev, spyre_bo_addr(h) + 4095, 1, &buf));
	CHECK(buf.bo == h && buf.offset == 4095, "host BO lookup");
	FAILS_WITH(spyre_addr_lookup(dev, spyre_bo_addr(a) + 8000, 500, &buf), -EFAULT,
		   "run past the end");
	FAILS_WITH(spyre_addr_lookup(dev, spyre_bo_addr(a) + 8192, 1, &buf), -EFAULT,
		   "no live BO");
	FAILS_WITH(spyre_addr_lookup(dev, 4096, 1, &buf), -EFAULT, "not a device address");
	/* A freed BO's range is gone and is not handed out again. */
	{
		uint64_t gone = spyre_bo_addr(b);

		OK(spyre_bo_destroy(b));
		FAILS_WITH(spyre_addr_lookup(dev, gone, 1, &buf), -EFAULT, "no live BO");
		OK(spyre_bo_create(dev, 4096, SPYRE_MEM_DEVICE, &b));
		CHECK(spyre_bo_addr(b) > gone, "address %llx reused",
		      (unsigned long long)gone);
	}
	/* Pool allocations are plain addresses too. */
	OK(spyre_pool_create(dev, SPYRE_MEM_DEVICE, 0, &pool));
	OK(spyre_pool_alloc(pool, 1000, 0, &pb));
	OK(spyre_addr_lookup(dev, spyre_buf_addr(&pb), 1000, &buf));
	CHECK(buf.bo == pb.bo && buf.offset == pb.offset, "pool block lookup");
	/* Another open device's addresses are recognised. */
	OK(spyre_device_open(0, &d2));
	OK(spyre_bo_create(d2, 4096, SPYRE_MEM_DEVICE, &other));
	FAILS_WITH(spyre_addr_lookup(dev, spyre_bo_addr(other), 1, &buf), -EXDEV,
		   "another device");
	OK(spyre_bo_destroy(other));
	OK(spyre_device_close(d2));
	OK(spyre_pool_free(pool, &pb));
	OK(spyre_pool_destroy(pool));
	spyre_bo_destroy(a);
	spyre_bo_destroy(b);
	spyre_bo_destroy(h);
}

TEST(copy_pageable_host_memory)
{
	enum { SZ = 3 << 20 };
	uint8_t *src = malloc(SZ), *dst = malloc(SZ);
	spyre_stream *s;
	spyre_bo *d;
	struct spyre_buf bd;
	int round;

	ASSERT(src && dst, "malloc");
	OK(spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &s));
	OK(spyre_bo_create(dev, SZ, SPYRE_MEM_DEVICE, &d));
	bd = spyre_bo_buf(d);
	for (round = 0; round < 6; round++) {
		fill_pat(src, SZ, 40 + round, 0);
		OK(spyre_memcpy_from_host_async(s, &bd, src, SZ));
		memset(src, 0, SZ);	/* the source may be reused at once */
		memset(dst, 0, SZ);
		OK(spyre_memcpy_to_host(s, dst, &bd, SZ));
		CHECK(diff_pat(dst, SZ, 40 + round, 0) < 0, "round %d: byte %lld differs", round,
		      (long long)diff_pat(dst, SZ, 40 + round, 0));
	}
	/* An unaligned piece in the middle. */
	fill_pat(src, 1001, 77, 0);
	bd = buf_of(d, 4097, 1001);
	OK(spyre_memcpy_from_host_async(s, &bd, src, 1001));
	OK(spyre_memcpy_to_host(s, dst, &bd, 1001));
	CHECK(diff_pat(dst, 1001, 77, 0) < 0, "unaligned piece differs");
	FAILS_WITH(spyre_memcpy_from_host_async(s, &bd, src, 1002), -EINVAL, "do not fit");
	OK(spyre_stream_destroy(s));
	spyre_bo_destroy(d);
	free(src);
	free(dst);
}

/* 2-D and 3-D sub-blocks against a CPU reference. */
TEST(copy_strided)
{
	enum { W = 40, H = 9, D = 3, SP = 64, SS = SP * 16, DP = 48, DS = DP * 10, SZ = 16384 };
	uint8_t *host = malloc(SZ), *out = malloc(SZ), *ref = malloc(SZ);
	struct spyre_copy3d c;
	spyre_stream *s;
	spyre_bo *a, *b;
	struct spyre_buf ba, bb;
	int x, y, z;

	ASSERT(host && out && ref, "malloc");
	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &s));
	OK(spyre_bo_create(dev, SZ, SPYRE_MEM_DEVICE, &a));
	OK(spyre_bo_create(dev, SZ, SPYRE_MEM_DEVICE, &b));
	ba = spyre_bo_buf(a);
	bb = spyre_bo_buf(b);
	fill_pat(host, SZ, 5, 0);
	OK(spyre_memcpy_from_host_async(s, &ba, host, SZ));
	OK(spyre_memset_async(s, &bb, 0xab, 1, SZ));
	memset(ref, 0xab, SZ);
	memset(&c, 0, sizeof(c));
	c.src = buf_of(a, 3, SZ - 3);	/* unaligned start */
	c.dst = buf_of(b, 5, SZ - 5);
	c.src_pitch = SP;
	c.src_slice = SS;
	c.dst_pitch = DP;
	c.dst_slice = DS;
	c.width = W;
	c.height = H;
	c.depth = D;
	OK(spyre_memcpy3d_async(s, &c));
	for (z = 0; z < D; z++)
		for (y = 0; y < H; y++)
			for (x = 0; x < W; x++)
				ref[5 + z * DS + y * DP + x] = host[3 + z * SS + y * SP + x];
	OK(spyre_memcpy_to_host(s, out, &bb, SZ));
	CHECK(!memcmp(out, ref, SZ), "3-D copy differs from the reference");
	/* 2-D with contiguous rows on both sides merges into one command. */
	OK(spyre_memcpy2d_async(s, &bb, 100, &ba, 100, 100, 20));
	memcpy(ref, host, 2000);
	OK(spyre_memcpy_to_host(s, out, &bb, SZ));
	CHECK(!memcmp(out, ref, SZ), "contiguous 2-D copy differs");
	FAILS_WITH(spyre_memcpy2d_async(s, &bb, 10, &ba, 100, 20, 2), -EINVAL,
		   "pitches shorter than a row");
	FAILS_WITH(spyre_memcpy2d_async(s, &bb, 1000, &ba, 1000, 100, 18), -EINVAL,
		   "does not fit");
	OK(spyre_stream_destroy(s));
	spyre_bo_destroy(a);
	spyre_bo_destroy(b);
	free(host);
	free(out);
	free(ref);
}

TEST(fill_patterns_any_alignment)
{
	enum { SZ = 256 };
	static const unsigned int sizes[] = { 1, 2, 4 };
	static const uint64_t lens[] = { 0, 4, 8, 12, 24, 100, 128 };
	uint8_t out[SZ], ref[SZ];
	spyre_stream *s;
	spyre_bo *d;
	struct spyre_buf bd = { 0 }, part;
	unsigned int p, off, l, i;
	int bad = 0;

	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &s));
	OK(spyre_bo_create(dev, 4096, SPYRE_MEM_DEVICE, &d));
	bd = buf_of(d, 0, SZ);
	for (p = 0; p < 3; p++) {
		for (off = 0; off < 7; off++) {
			for (l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
				uint32_t pattern = 0x04030201u;
				uint64_t n = lens[l] / sizes[p] * sizes[p] + sizes[p] * (off & 1);

				OK(spyre_memset32_async(s, &bd, 0xeeeeeeee, SZ));
				part = buf_of(d, off, n);
				OK(spyre_memset_async(s, &part, pattern, sizes[p], n));
				OK(spyre_memcpy_to_host(s, out, &bd, SZ));
				memset(ref, 0xee, SZ);
				for (i = 0; i < n; i++)
					ref[off + i] = (uint8_t)(pattern >> (8 * (i % sizes[p])));
				if (memcmp(out, ref, SZ) && bad++ < 3)
					CHECK(0, "pattern size %u, offset %u, %llu bytes differ",
					      sizes[p], off, (unsigned long long)n);
			}
		}
	}
	CHECK(!bad, "%d fills differ", bad);
	part = buf_of(d, 1, 6);
	FAILS_WITH(spyre_memset_async(s, &part, 1, 4, 6), -EINVAL, "whole number");
	FAILS_WITH(spyre_memset_async(s, &part, 1, 3, 6), -EINVAL, "pattern size 3");
	OK(spyre_stream_destroy(s));
	spyre_bo_destroy(d);
}

/* Two open devices (two cards on the sim when SPYRE_SIM_CARDS allows). */
TEST(copy_peer)
{
	enum { SZ = 5 << 20 };
	uint8_t *host = malloc(SZ), *out = malloc(SZ);
	spyre_device *d2;
	spyre_stream *s1, *s2;
	spyre_bo *a, *b;
	struct spyre_buf ba, bb;
	int cards = 1;

	ASSERT(host && out, "malloc");
	spyre_device_count(SPYRE_BACKEND_DEFAULT, &cards);
	OK(spyre_device_open(cards > 1 ? 1 : 0, &d2));
	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &s1));
	OK(spyre_stream_create(d2, SPYRE_ENGINE_DMA, &s2));
	OK(spyre_bo_create(dev, SZ, SPYRE_MEM_DEVICE, &a));
	OK(spyre_bo_create(d2, SZ, SPYRE_MEM_DEVICE, &b));
	ba = spyre_bo_buf(a);
	bb = spyre_bo_buf(b);
	fill_pat(host, SZ, 9, 0);
	OK(spyre_memcpy_from_host_async(s1, &ba, host, SZ));
	OK(spyre_memcpy_peer(s2, &bb, s1, &ba, SZ));
	OK(spyre_memcpy_to_host(s2, out, &bb, SZ));
	CHECK(diff_pat(out, SZ, 9, 0) < 0, "peer copy: byte %lld differs",
	      (long long)diff_pat(out, SZ, 9, 0));
	FAILS_WITH(spyre_memcpy_peer(s2, &ba, s1, &ba, 16), -EXDEV, "on a stream of");
	OK(spyre_stream_destroy(s1));
	OK(spyre_stream_destroy(s2));
	spyre_bo_destroy(a);
	spyre_bo_destroy(b);
	OK(spyre_device_close(d2));
	free(host);
	free(out);
}

static uint64_t submits_of(spyre_device *d)
{
	struct spyre_device_stats st;

	return spyre_device_get_stats(d, &st) ? ~0ull : st.submits;
}

/*
 * Device to device between two cards goes card to card (peer DMA): the
 * source card runs nothing for it; SPYRE_PEER_DMA=0 takes the host path,
 * which the source card serves with a D2H. Odd offsets and sizes; the
 * bytes around the range stay as they were.
 */
TEST(copy_peer_dma_and_host_fallback)
{
	enum { SZ = 3 << 20 };
	uint8_t *host = malloc(SZ), *out = malloc(SZ);
	spyre_device *d2;
	spyre_stream *s1, *s2;
	spyre_bo *a, *b;
	struct spyre_buf ba, bb;
	uint64_t before;
	int cards = 1, can;

	ASSERT(host && out, "malloc");
	spyre_device_count(SPYRE_BACKEND_DEFAULT, &cards);
	OK(spyre_device_open(cards > 1 ? 1 : 0, &d2));
	can = spyre_device_can_peer(d2, dev);
	CHECK(can == 1, "spyre_device_can_peer: %d", can);
	CHECK(spyre_device_can_peer(dev, dev) == 0, "a card is not its own peer");
	FAILS_WITH(spyre_device_can_peer(NULL, dev), -EINVAL, "NULL device");
	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &s1));
	OK(spyre_stream_create(d2, SPYRE_ENGINE_DMA, &s2));
	OK(spyre_bo_create(dev, SZ, SPYRE_MEM_DEVICE, &a));
	OK(spyre_bo_create(d2, SZ, SPYRE_MEM_DEVICE, &b));
	ba = spyre_bo_buf(a);
	bb = spyre_bo_buf(b);
	fill_pat(host, SZ, 4, 0);
	OK(spyre_memcpy_from_host_async(s1, &ba, host, SZ));
	memset(out, 0xee, SZ);
	OK(spyre_memcpy_from_host_async(s2, &bb, out, SZ));

	/* a's bytes 7.. land at b's byte 3: the copy waits for s1's upload */
	before = submits_of(dev);
	ba = (struct spyre_buf){ a, 7, SZ - 7 };
	bb = (struct spyre_buf){ b, 3, SZ - 7 };
	OK(spyre_memcpy_peer(s2, &bb, s1, &ba, SZ - 11));
	CHECK(submits_of(dev) == before, "peer DMA: the source card ran %llu submissions",
	      (unsigned long long)(submits_of(dev) - before));
	bb = spyre_bo_buf(b);
	OK(spyre_memcpy_to_host(s2, out, &bb, SZ));
	CHECK(out[0] == 0xee && out[2] == 0xee && out[SZ - 8] == 0xee && out[SZ - 1] == 0xee,
	      "bytes around the range changed: %02x %02x %02x", out[2], out[SZ - 8], out[SZ - 1]);
	CHECK(diff_pat(out + 3, SZ - 11, 4, 7) < 0, "peer DMA: byte %lld differs",
	      (long long)diff_pat(out + 3, SZ - 11, 4, 7));

	/* the host path, forced: the source card serves a download */
	setenv("SPYRE_PEER_DMA", "0", 1);
	CHECK(spyre_device_can_peer(d2, dev) == 0, "SPYRE_PEER_DMA=0 still peers");
	fill_pat(host, SZ, 5, 0);
	ba = spyre_bo_buf(a);
	OK(spyre_memcpy_from_host_async(s1, &ba, host, SZ));
	before = submits_of(dev);
	OK(spyre_memcpy_peer(s2, &bb, s1, &ba, SZ));
	CHECK(submits_of(dev) > before, "host path: no download on the source card");
	unsetenv("SPYRE_PEER_DMA");
	OK(spyre_memcpy_to_host(s2, out, &bb, SZ));
	CHECK(diff_pat(out, SZ, 5, 0) < 0, "host path: byte %lld differs",
	      (long long)diff_pat(out, SZ, 5, 0));

	OK(spyre_stream_destroy(s1));
	OK(spyre_stream_destroy(s2));
	spyre_bo_destroy(a);
	spyre_bo_destroy(b);
	OK(spyre_device_close(d2));
	free(host);
	free(out);
}
