// SPDX-License-Identifier: MIT
/* Copies of every direction and size, fills, and refused copies. */
#include <sys/mman.h>

#include "harness.h"

/* H2D, D2D, D2H of @size bytes at odd offsets; the bytes must survive. */
static void round_trip(spyre_device *dev, spyre_stream *s, uint64_t size, uint64_t so,
		       uint64_t mo, unsigned int seed)
{
	spyre_bo *src, *dst, *d1, *d2;
	uint64_t bsz = size + 8192;
	void *sm, *dm;
	struct spyre_buf bs, bd1, bd2, bdst;

	OK(host_bo(dev, bsz, &src, &sm));
	OK(host_bo(dev, bsz, &dst, &dm));
	OK(spyre_bo_create(dev, bsz, SPYRE_MEM_DEVICE, &d1));
	OK(spyre_bo_create(dev, bsz, SPYRE_MEM_DEVICE, &d2));
	fill_pat(sm, bsz, seed, 0);
	memset(dm, 0xee, bsz);
	bs = buf_of(src, so, size);
	bd1 = buf_of(d1, mo, size);
	bd2 = buf_of(d2, mo + 5, size);
	bdst = buf_of(dst, so + 2, size);
	OK(spyre_memcpy_async(s, &bd1, &bs, size));
	OK(spyre_memcpy_async(s, &bd2, &bd1, size));
	OK(spyre_memcpy_async(s, &bdst, &bd2, size));
	OK(spyre_stream_synchronize(s));
	CHECK(diff_pat((uint8_t *)dm + so + 2, size, seed, so) < 0,
	      "size %llu: byte %lld differs", (unsigned long long)size,
	      (long long)diff_pat((uint8_t *)dm + so + 2, size, seed, so));
	/* Nothing outside the range was touched. */
	CHECK(((uint8_t *)dm)[so + 1] == 0xee && ((uint8_t *)dm)[so + 2 + size] == 0xee,
	      "size %llu: bytes around the range changed", (unsigned long long)size);
	spyre_bo_destroy(src);
	spyre_bo_destroy(dst);
	spyre_bo_destroy(d1);
	spyre_bo_destroy(d2);
}

TEST(copy_all_directions_and_sizes)
{
	static const uint64_t sizes[] = { 0, 1, 3, 4096, 4097, 65536 + 7, (5 << 20) + 13 };
	spyre_stream *s;
	unsigned int i, e;

	for (e = 0; e < 2; e++) {
		OK(spyre_stream_create(dev, e ? SPYRE_ENGINE_COMPUTE : SPYRE_ENGINE_DMA, &s));
		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			round_trip(dev, s, sizes[i], i * 3 + 1, 4096 - i, i + e * 10);
		OK(spyre_stream_destroy(s));
	}
}

TEST(fill_device_memory)
{
	spyre_stream *s;
	spyre_bo *d, *h;
	uint32_t *m;
	void *map;
	struct spyre_buf bd, bh, sub;
	int i;

	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &s));
	OK(spyre_bo_create(dev, 1 << 20, SPYRE_MEM_DEVICE, &d));
	OK(host_bo(dev, 1 << 20, &h, &map));
	m = map;
	bd = spyre_bo_buf(d);
	bh = spyre_bo_buf(h);
	sub = buf_of(d, 4096, 8192);
	OK(spyre_memset32_async(s, &bd, 0x11223344, 1 << 20));
	OK(spyre_memset32_async(s, &sub, 0xdeadbeef, 8192));
	OK(spyre_memcpy_async(s, &bh, &bd, 1 << 20));
	OK(spyre_stream_synchronize(s));
	for (i = 0; i < (1 << 18); i++) {
		uint32_t want = i >= 1024 && i < 1024 + 2048 ? 0xdeadbeef : 0x11223344;

		if (m[i] != want) {
			CHECK(m[i] == want, "word %d is %#x", i, m[i]);
			break;
		}
	}
	FAILS_WITH(spyre_memset32_async(s, &bh, 0, 4096), -EINVAL, "fill needs device memory");
	sub = buf_of(d, 2, 64);
	FAILS_WITH(spyre_memset32_async(s, &sub, 0, 64), -EINVAL, "multiples of 4");
	OK(spyre_stream_destroy(s));
	spyre_bo_destroy(d);
	spyre_bo_destroy(h);
}

TEST(copy_refused)
{
	spyre_stream *s;
	spyre_bo *h1, *h2, *d;
	void *m;
	struct spyre_buf a, b, c;

	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &s));
	OK(host_bo(dev, 4096, &h1, &m));
	OK(host_bo(dev, 4096, &h2, &m));
	OK(spyre_bo_create(dev, 4096, SPYRE_MEM_DEVICE, &d));
	a = spyre_bo_buf(h1);
	b = spyre_bo_buf(h2);
	FAILS_WITH(spyre_memcpy_async(s, &a, &b, 16), -EINVAL, "host-to-host copy");
	c = buf_of(d, 4000, 200);
	FAILS_WITH(spyre_memcpy_async(s, &c, &a, 200), -EINVAL, "outside its 4096-byte BO");
	c = spyre_bo_buf(d);
	FAILS_WITH(spyre_memcpy_async(s, &c, &a, 8192), -EINVAL, "do not fit");
	FAILS_WITH(spyre_memcpy_async(s, NULL, &a, 1), -EINVAL, "destination buffer is NULL");
	FAILS_WITH(spyre_memcpy_async(NULL, &c, &a, 1), -EINVAL, "stream is NULL");
	/* Refused calls lose nothing: the stream still works. */
	OK(spyre_memcpy_async(s, &c, &a, 4096));
	OK(spyre_stream_synchronize(s));
	OK(spyre_stream_destroy(s));
	spyre_bo_destroy(h1);
	spyre_bo_destroy(h2);
	spyre_bo_destroy(d);
}

static void *anon_pages(size_t size, int prot)
{
	void *p = mmap(NULL, size, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * Registered memory (cudaHostRegister) is a host BO over the caller's own
 * pages: copies read what the caller wrote, also after registering, write
 * into it, touch nothing else, and the memory is the caller's again after
 * the BO is destroyed.
 */
TEST(host_register_round_trip)
{
	const uint64_t size = 1 << 20, off = 4097, len = (1 << 20) - 8200;
	spyre_bo *src, *dst, *dev_bo;
	struct spyre_buf bs, bd, bdev;
	uint8_t *sm = anon_pages(size, PROT_READ | PROT_WRITE);
	uint8_t *dm = anon_pages(size, PROT_READ | PROT_WRITE);
	spyre_stream *s;
	void *p;
	unsigned int round;

	CHECK(sm && dm, "mmap failed");
	if (!sm || !dm)
		return;
	memset(dm, 0xee, size);
	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &s));
	OK(spyre_host_register(dev, sm, size, &src));
	OK(spyre_host_register(dev, dm, size, &dst));
	OK(spyre_bo_create(dev, size, SPYRE_MEM_DEVICE, &dev_bo));
	CHECK(spyre_bo_mem(src) == SPYRE_MEM_HOST && spyre_bo_size(src) == size, "kind/size");
	OK(spyre_bo_map(src, &p));
	CHECK(p == sm, "map gives %p, registered %p", p, (void *)sm);
	OK(spyre_bo_unmap(src));	/* a no-op: the memory stays mapped */
	for (round = 1; round <= 2; round++) {
		fill_pat(sm, size, round, 0);
		bs = buf_of(src, off, len);
		bdev = buf_of(dev_bo, 0, len);
		bd = buf_of(dst, off, len);
		OK(spyre_memcpy_async(s, &bdev, &bs, len));
		OK(spyre_memcpy_async(s, &bd, &bdev, len));
		OK(spyre_stream_synchronize(s));
		CHECK(diff_pat(dm + off, len, round, off) < 0, "round %u: byte %lld differs", round,
		      (long long)diff_pat(dm + off, len, round, off));
		CHECK(dm[off - 1] == 0xee && dm[off + len] == 0xee, "bytes around the range changed");
	}
	OK(spyre_bo_destroy(src));
	OK(spyre_bo_destroy(dst));
	OK(spyre_bo_destroy(dev_bo));
	OK(spyre_stream_destroy(s));
	/* still the caller's, still mapped, still holding the data */
	CHECK(diff_pat(sm, size, 2, 0) < 0, "the source changed");
	CHECK(diff_pat(dm + off, len, 2, off) < 0, "the destination changed after destroy");
	munmap(sm, size);
	munmap(dm, size);
}

TEST(host_register_bad_input)
{
	uint8_t *rw = anon_pages(2 * 4096, PROT_READ | PROT_WRITE);
	uint8_t *gone = anon_pages(4096, PROT_READ | PROT_WRITE);
	uint8_t *ro = anon_pages(4096, PROT_READ);
	spyre_bo *bo;

	CHECK(rw && gone && ro, "mmap failed");
	if (!rw || !gone || !ro)
		return;
	munmap(gone, 4096);
	FAILS_WITH(spyre_host_register(NULL, rw, 4096, &bo), -EINVAL, "NULL");
	FAILS_WITH(spyre_host_register(dev, NULL, 4096, &bo), -EINVAL, "NULL");
	FAILS_WITH(spyre_host_register(dev, rw + 8, 4096, &bo), -EINVAL, "4 KiB pages");
	FAILS_WITH(spyre_host_register(dev, rw, 100, &bo), -EINVAL, "4 KiB pages");
	FAILS_WITH(spyre_host_register(dev, rw, 0, &bo), -EINVAL, "4 KiB pages");
	FAILS_WITH(spyre_host_register(dev, gone, 4096, &bo), -EFAULT, "can be pinned");
	/* the kernel refuses a read-only mapping; the sim cannot tell */
	if (!strcmp(test_backend, "drm"))
		FAILS_WITH(spyre_host_register(dev, ro, 4096, &bo), -EFAULT, "can be pinned");
	munmap(rw, 2 * 4096);
	munmap(ro, 4096);
}
