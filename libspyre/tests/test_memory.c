// SPDX-License-Identifier: MIT
/* Memory: BOs of both placements, mapping, exhaustion, the pool. */
#include "harness.h"

TEST(bo_alloc_and_map)
{
	struct spyre_device_props p0, p1;
	spyre_bo *d, *h;
	void *map, *map2;

	OK(spyre_device_get_props(dev, &p0));
	OK(spyre_bo_create(dev, 1, SPYRE_MEM_DEVICE, &d));
	CHECK(spyre_bo_size(d) == 4096, "size %llu", (unsigned long long)spyre_bo_size(d));
	OK(spyre_bo_create(dev, 3 << 20, SPYRE_MEM_HOST, &h));
	OK(spyre_device_get_props(dev, &p1));
	CHECK(p0.mem_free - p1.mem_free >= 4096, "device memory accounted: %llu -> %llu",
	      (unsigned long long)p0.mem_free, (unsigned long long)p1.mem_free);
	OK(spyre_bo_map(h, &map));
	memset(map, 0x5a, 3 << 20);
	OK(spyre_bo_map(h, &map2));
	CHECK(map == map2, "map is idempotent");
	CHECK(spyre_bo_mem(h) == SPYRE_MEM_HOST && spyre_bo_mem(d) == SPYRE_MEM_DEVICE, "mem");
	FAILS_WITH(spyre_bo_map(d, &map), -EINVAL, "device BOs are not mappable");
	OK(spyre_bo_unmap(h));
	OK(spyre_bo_destroy(h));
	OK(spyre_bo_destroy(d));
	OK(spyre_device_get_props(dev, &p1));
	CHECK(p1.mem_free == p0.mem_free, "memory returned: %llu vs %llu",
	      (unsigned long long)p1.mem_free, (unsigned long long)p0.mem_free);
}

TEST(bo_bad_args)
{
	spyre_bo *bo = NULL;

	FAILS_WITH(spyre_bo_create(dev, 0, SPYRE_MEM_DEVICE, &bo), -EINVAL, "size 0");
	FAILS_WITH(spyre_bo_create(dev, 4096, (enum spyre_mem)7, &bo), -EINVAL,
		   "unknown memory kind");
	FAILS_WITH(spyre_bo_create(NULL, 4096, SPYRE_MEM_DEVICE, &bo), -EINVAL, "NULL");
	FAILS_WITH(spyre_bo_destroy(NULL), -EINVAL, "NULL");
}

TEST(bo_out_of_memory)
{
	struct spyre_device_props p;
	spyre_bo *bos[64], *bo = NULL;
	uint64_t chunk;
	int n = 0, ret = 0, i;

	OK(spyre_device_get_props(dev, &p));
	/* More than the card can ever hold: E2BIG, not ENOMEM. */
	FAILS_WITH(spyre_bo_create(dev, p.mem_total * 2, SPYRE_MEM_DEVICE, &bo), -E2BIG,
		   "larger than the device can ever hold");
	/* Exhaust it in chunks: the failing one is ENOMEM with a message. */
	chunk = p.mem_total / 8;
	while (n < 64 && !(ret = spyre_bo_create(dev, chunk, SPYRE_MEM_DEVICE, &bos[n])))
		n++;
	CHECK(ret == -ENOMEM, "ret %d after %d chunks", ret, n);
	CHECK(strstr(spyre_last_error(), "out of memory"), "message");
	CHECK(n >= 6 && n <= 8, "%d chunks of 1/8 fit", n);
	for (i = 0; i < n; i++)
		OK(spyre_bo_destroy(bos[i]));
	/* Everything is usable again. */
	OK(spyre_bo_create(dev, chunk, SPYRE_MEM_DEVICE, &bo));
	OK(spyre_bo_destroy(bo));
}

TEST(pool_suballocation)
{
	struct spyre_buf b[200], extra;
	spyre_pool *pool;
	uint64_t used, reserved;
	int i, j;

	OK(spyre_pool_create(dev, SPYRE_MEM_DEVICE, 64 << 10, &pool));
	for (i = 0; i < 200; i++) {
		OK(spyre_pool_alloc(pool, 1 + (i * 37) % 700, i % 3 ? 0 : 1024, &b[i]));
		CHECK(b[i].offset % (i % 3 ? 128 : 1024) == 0, "alignment of %d", i);
	}
	/* No two allocations of one BO overlap. */
	for (i = 0; i < 200; i++)
		for (j = i + 1; j < 200; j++)
			if (b[i].bo == b[j].bo)
				CHECK(b[i].offset + b[i].size <= b[j].offset ||
				      b[j].offset + b[j].size <= b[i].offset,
				      "%d and %d overlap", i, j);
	OK(spyre_pool_usage(pool, &used, &reserved));
	CHECK(reserved <= 4 * (64 << 10), "200 small buffers in %llu bytes of BOs",
	      (unsigned long long)reserved);
	FAILS_WITH(spyre_pool_destroy(pool), -EBUSY, "still allocated");
	for (i = 0; i < 200; i += 2)
		OK(spyre_pool_free(pool, &b[i]));
	FAILS_WITH(spyre_pool_free(pool, &b[0]), -EINVAL, "already freed");
	/* A large allocation gets its own chunk. */
	OK(spyre_pool_alloc(pool, 1 << 20, 0, &extra));
	CHECK(spyre_bo_size(extra.bo) >= 1 << 20, "big chunk");
	OK(spyre_pool_free(pool, &extra));
	for (i = 1; i < 200; i += 2)
		OK(spyre_pool_free(pool, &b[i]));
	OK(spyre_pool_usage(pool, &used, &reserved));
	CHECK(used == 0, "used %llu", (unsigned long long)used);
	OK(spyre_pool_destroy(pool));
}

/* Pools give memory back (trim) and report statistics. */
TEST(pool_trim_and_stats)
{
	enum { CHUNK = 1 << 20, K = 40 };
	struct spyre_device_props before, full, after;
	struct spyre_pool_stats st;
	struct spyre_buf b[K];
	spyre_pool *p;
	uint64_t released = 0;
	int i;

	OK(spyre_device_get_props(dev, &before));
	OK(spyre_pool_create(dev, SPYRE_MEM_DEVICE, CHUNK, &p));
	for (i = 0; i < K; i++)
		OK(spyre_pool_alloc(p, 100 << 10, 0, &b[i]));	/* 10 per chunk: 4 chunks */
	OK(spyre_pool_get_stats(p, &st));
	CHECK(st.allocs == K && st.frees == 0 && st.chunks == 4 && st.reserved == 4ull * CHUNK,
	      "allocs %llu chunks %llu reserved %llu", (unsigned long long)st.allocs,
	      (unsigned long long)st.chunks, (unsigned long long)st.reserved);
	CHECK(st.used == st.peak_used && st.peak_reserved == st.reserved, "peaks");
	OK(spyre_device_get_props(dev, &full));
	/* Free all but one block: one chunk stays, three go back. */
	for (i = 1; i < K; i++)
		OK(spyre_pool_free(p, &b[i]));
	OK(spyre_pool_trim(p, 0, &released));
	OK(spyre_pool_get_stats(p, &st));
	CHECK(released == 3ull * CHUNK && st.chunks == 1 && st.reserved == CHUNK &&
	      st.trimmed == 3ull * CHUNK, "released %llu, %llu chunks left",
	      (unsigned long long)released, (unsigned long long)st.chunks);
	CHECK(st.peak_reserved == 4ull * CHUNK && st.frees == K - 1, "peak %llu frees %llu",
	      (unsigned long long)st.peak_reserved, (unsigned long long)st.frees);
	CHECK(st.largest_free == CHUNK - 102400,
	      "largest free block %llu", (unsigned long long)st.largest_free);
	OK(spyre_device_get_props(dev, &after));
	CHECK(after.mem_free >= full.mem_free + 3ull * CHUNK, "device free %llu -> %llu",
	      (unsigned long long)full.mem_free, (unsigned long long)after.mem_free);
	/* keep: trimming to a budget leaves that much. */
	OK(spyre_pool_free(p, &b[0]));
	OK(spyre_pool_alloc(p, 2 * CHUNK, 0, &b[0]));
	OK(spyre_pool_free(p, &b[0]));
	OK(spyre_pool_get_stats(p, &st));
	OK(spyre_pool_trim(p, st.reserved, &released));
	CHECK(released == 0, "trim to the current size released %llu", (unsigned long long)released);
	OK(spyre_pool_trim(p, 0, &released));
	OK(spyre_pool_get_stats(p, &st));
	CHECK(st.reserved == 0 && st.chunks == 0, "reserved %llu after a full trim",
	      (unsigned long long)st.reserved);
	OK(spyre_device_get_props(dev, &after));
	CHECK(after.mem_free == before.mem_free, "device free %llu, was %llu",
	      (unsigned long long)after.mem_free, (unsigned long long)before.mem_free);
	OK(spyre_pool_destroy(p));
}
