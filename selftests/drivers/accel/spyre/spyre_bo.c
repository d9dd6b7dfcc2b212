// SPDX-License-Identifier: GPL-2.0
/*
 * Spyre accel selftests: buffer objects. BO_CREATE/BO_INFO/BO_WAIT and
 * their bad inputs, both placements, mmap, data through the card, PRIME,
 * lifetime against running jobs and device-memory exhaustion; BOs over the
 * caller's own memory (BO_USERPTR).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/udmabuf.h>

#include "kselftest_harness.h"
#include "spyre_util.h"

FIXTURE(bo) {
	struct sp_dev d;
	uint32_t q;	/* a DMA queue for data movement */
};

FIXTURE_VARIANT(bo) {
	uint32_t placement;
};

FIXTURE_VARIANT_ADD(bo, device) {
	.placement = DRM_SPYRE_PLACEMENT_DEVICE,
};

FIXTURE_VARIANT_ADD(bo, host) {
	.placement = DRM_SPYRE_PLACEMENT_HOST,
};

FIXTURE_SETUP(bo)
{
	SP_OPEN_OR_SKIP(&self->d, 0);
	ASSERT_EQ(0, sp_queue_create(self->d.fd, DRM_SPYRE_ENGINE_DMA,
				     DRM_SPYRE_PRIORITY_NORMAL, &self->q));
}

FIXTURE_TEARDOWN(bo)
{
	sp_dev_close(&self->d);
}

/* Tests of one placement or of data movement: no variants. */
FIXTURE(bo_data) {
	struct sp_dev d;
	uint32_t q;
};

FIXTURE_SETUP(bo_data)
{
	SP_OPEN_OR_SKIP(&self->d, 0);
	ASSERT_EQ(0, sp_queue_create(self->d.fd, DRM_SPYRE_ENGINE_DMA,
				     DRM_SPYRE_PRIORITY_NORMAL, &self->q));
}

FIXTURE_TEARDOWN(bo_data)
{
	sp_dev_close(&self->d);
}

static uint64_t placement_limit(const struct sp_dev *d, uint32_t placement)
{
	return placement == DRM_SPYRE_PLACEMENT_DEVICE ? d->p[DRM_SPYRE_PARAM_MEM_SIZE] :
							 d->p[DRM_SPYRE_PARAM_MAX_HOST_BO_SIZE];
}

/* A new BO reports its page-rounded size, placement and mappability. */
TEST_F(bo, create_info)
{
	struct drm_spyre_bo_info info;
	uint32_t h;

	ASSERT_EQ(0, sp_bo_create(self->d.fd, 5000, variant->placement, &h));
	EXPECT_NE(0, h);
	ASSERT_EQ(0, sp_bo_info(self->d.fd, h, &info));
	EXPECT_EQ(8192, info.size);
	EXPECT_EQ(variant->placement, info.placement);
	EXPECT_EQ(0, info.bo_flags & DRM_SPYRE_BO_IMPORTED);
	if (variant->placement == DRM_SPYRE_PLACEMENT_HOST) {
		EXPECT_EQ(DRM_SPYRE_BO_MAPPABLE, info.bo_flags & DRM_SPYRE_BO_MAPPABLE);
		EXPECT_NE(0, info.mmap_offset);
	} else {
		EXPECT_EQ(0, info.bo_flags & DRM_SPYRE_BO_MAPPABLE);
		EXPECT_EQ(0, info.mmap_offset);
	}
	EXPECT_EQ(0, sp_bo_close(self->d.fd, h));
	EXPECT_EQ(-ENOENT, sp_bo_info(self->d.fd, h, &info));
}

TEST_F(bo, create_zero_size)
{
	uint32_t h = 0;

	EXPECT_EQ(-EINVAL, sp_bo_create(self->d.fd, 0, variant->placement, &h));
}

/* Larger than the placement can ever hold: -E2BIG, not -ENOMEM. */
TEST_F(bo, create_too_big)
{
	uint64_t lim = placement_limit(&self->d, variant->placement);

	EXPECT_EQ(-E2BIG, sp_bo_create(self->d.fd, lim + SP_PAGE, variant->placement, NULL));
	EXPECT_EQ(-E2BIG, sp_bo_create(self->d.fd, lim + 1, variant->placement, NULL));
}

/* Sizes whose page rounding overflows must not wrap to a small BO. */
TEST_F(bo, create_size_overflow)
{
	EXPECT_EQ(-E2BIG, sp_bo_create(self->d.fd, ~0ull, variant->placement, NULL));
	EXPECT_EQ(-E2BIG, sp_bo_create(self->d.fd, ~0ull - SP_PAGE + 2, variant->placement,
				       NULL));
	EXPECT_EQ(-E2BIG, sp_bo_create(self->d.fd, 1ull << 63, variant->placement, NULL));
}

TEST_F(bo, create_bad_flags_pad)
{
	struct drm_spyre_bo_create c = { .size = SP_PAGE, .placement = variant->placement };

	c.flags = 1;
	EXPECT_EQ(-EINVAL, sp_ioctl(self->d.fd, DRM_IOCTL_SPYRE_BO_CREATE, &c));
	c.flags = 0x80000000;
	EXPECT_EQ(-EINVAL, sp_ioctl(self->d.fd, DRM_IOCTL_SPYRE_BO_CREATE, &c));
	c.flags = 0;
	c.pad = 1;
	EXPECT_EQ(-EINVAL, sp_ioctl(self->d.fd, DRM_IOCTL_SPYRE_BO_CREATE, &c));
}

TEST_F(bo_data, create_bad_placement)
{
	EXPECT_EQ(-EINVAL, sp_bo_create(self->d.fd, SP_PAGE, 2, NULL));
	EXPECT_EQ(-EINVAL, sp_bo_create(self->d.fd, SP_PAGE, ~0u, NULL));
}

TEST_F(bo, info_bad_input)
{
	struct drm_spyre_bo_info info = { 0 };
	uint32_t h;

	EXPECT_EQ(-ENOENT, sp_bo_info(self->d.fd, 0, &info));
	EXPECT_EQ(-ENOENT, sp_bo_info(self->d.fd, 0xfffff, &info));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, SP_PAGE, variant->placement, &h));
	info.handle = h;
	info.flags = 1;
	EXPECT_EQ(-EINVAL, sp_ioctl(self->d.fd, DRM_IOCTL_SPYRE_BO_INFO, &info));
	sp_bo_close(self->d.fd, h);
}

/* Handles are per open file: another file of the same card cannot use them. */
TEST_F(bo, foreign_handle)
{
	struct drm_spyre_bo_info info;
	struct sp_dev other;
	uint32_t h;

	ASSERT_EQ(0, sp_bo_create(self->d.fd, SP_PAGE, variant->placement, &h));
	ASSERT_EQ(0, sp_dev_reopen(&self->d, &other));
	EXPECT_EQ(-ENOENT, sp_bo_info(other.fd, h, &info));
	EXPECT_EQ(-ENOENT, sp_bo_wait(other.fd, h, 0));
	EXPECT_EQ(-EINVAL, sp_bo_close(other.fd, h));
	/* still alive in its own file */
	EXPECT_EQ(0, sp_bo_info(self->d.fd, h, &info));
	sp_dev_close(&other);
}

/* An idle BO waits in no time; bad handles and flags are rejected. */
TEST_F(bo, wait_idle_and_bad_input)
{
	struct drm_spyre_bo_wait w = { 0 };
	uint32_t h;

	ASSERT_EQ(0, sp_bo_create(self->d.fd, SP_PAGE, variant->placement, &h));
	EXPECT_EQ(0, sp_bo_wait(self->d.fd, h, 0));		/* poll */
	EXPECT_EQ(0, sp_bo_wait(self->d.fd, h, -1000000000));	/* past */
	EXPECT_EQ(-ENOENT, sp_bo_wait(self->d.fd, h + 100, 0));
	w.handle = h;
	w.flags = 1;
	EXPECT_EQ(-EINVAL, sp_ioctl(self->d.fd, DRM_IOCTL_SPYRE_BO_WAIT, &w));
	sp_bo_close(self->d.fd, h);
}

/*
 * BO_WAIT returns once the jobs using the BO finished: afterwards the
 * job's out-syncobj must already be signalled.
 */
TEST_F(bo, wait_busy)
{
	struct drm_spyre_sync out = { 0 };
	struct drm_spyre_cmd cmds[64];
	uint32_t dev, h, i;

	ASSERT_EQ(0, sp_bo_create(self->d.fd, 4 * SP_MiB, DRM_SPYRE_PLACEMENT_DEVICE, &dev));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, 4 * SP_MiB, variant->placement, &h));
	for (i = 0; i < 64; i++)
		cmds[i] = variant->placement == DRM_SPYRE_PLACEMENT_HOST ?
			sp_cmd_copy(h, 0, dev, 0, 4 * SP_MiB) :
			sp_cmd_copy(dev, 0, h, 0, 4 * SP_MiB);
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &out.handle, false));
	ASSERT_EQ(0, sp_submit(self->d.fd, self->q, cmds, 64, NULL, 0, &out, 1));
	ASSERT_EQ(0, sp_bo_wait(self->d.fd, h, SP_WAIT_NS));
	EXPECT_EQ(1, sp_fence_status(self->d.fd, out.handle, 0));
	EXPECT_EQ(0, sp_bo_wait(self->d.fd, dev, 0));
}

/* Host BOs: CPU writes through one mapping are seen through another. */
TEST_F(bo_data, mmap_round_trip)
{
	size_t len = 3 * SP_PAGE;
	uint32_t h;
	void *a, *b;

	ASSERT_EQ(0, sp_bo_create(self->d.fd, len, DRM_SPYRE_PLACEMENT_HOST, &h));
	a = sp_bo_mmap(self->d.fd, h, len);
	ASSERT_NE(NULL, a);
	sp_pattern(a, len, 7);
	ASSERT_EQ(0, munmap(a, len));
	b = sp_bo_mmap(self->d.fd, h, len);
	ASSERT_NE(NULL, b);
	EXPECT_EQ(-1, sp_pattern_check(b, len, 7));
	munmap(b, len);
	sp_bo_close(self->d.fd, h);
}

/* Device BOs have no CPU mapping; a made-up offset maps nothing. */
TEST_F(bo, mmap_refused)
{
	uint32_t h;
	void *p;

	ASSERT_EQ(0, sp_bo_create(self->d.fd, SP_PAGE, variant->placement, &h));
	if (variant->placement == DRM_SPYRE_PLACEMENT_DEVICE) {
		EXPECT_EQ(NULL, sp_bo_mmap(self->d.fd, h, SP_PAGE));
	}
	p = mmap(NULL, SP_PAGE, PROT_READ, MAP_SHARED, self->d.fd, 1ull << 40);
	EXPECT_EQ(MAP_FAILED, p);
	sp_bo_close(self->d.fd, h);
}

/*
 * Data survives host -> device -> host through the card, for sizes that
 * span many non-contiguous host pages and at unaligned offsets.
 */
TEST_F_TIMEOUT(bo_data, data_round_trip, 60)
{
	static const struct { uint64_t size, off, len; } cases[] = {
		{ SP_PAGE, 0, SP_PAGE },
		{ 4 * SP_MiB, 3, 4 * SP_MiB - 7 },
		{ 32 * SP_MiB, 12345, 20 * SP_MiB + 1 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		uint64_t size = cases[i].size, len = cases[i].len, off = cases[i].off;
		struct drm_spyre_cmd cmd[2];
		uint32_t dev, src, dst;
		uint8_t *s, *d;

		ASSERT_EQ(0, sp_bo_create(self->d.fd, size, DRM_SPYRE_PLACEMENT_DEVICE, &dev));
		ASSERT_EQ(0, sp_bo_create(self->d.fd, size, DRM_SPYRE_PLACEMENT_HOST, &src));
		ASSERT_EQ(0, sp_bo_create(self->d.fd, size, DRM_SPYRE_PLACEMENT_HOST, &dst));
		s = sp_bo_mmap(self->d.fd, src, size);
		d = sp_bo_mmap(self->d.fd, dst, size);
		ASSERT_NE(NULL, s);
		ASSERT_NE(NULL, d);
		sp_pattern(s, size, i + 1);
		memset(d, 0xaa, size);
		cmd[0] = sp_cmd_copy(src, off, dev, size - off - len, len);
		cmd[1] = sp_cmd_copy(dev, size - off - len, dst, off, len);
		ASSERT_EQ(0, sp_run(self->d.fd, self->q, cmd, 2));
		EXPECT_EQ(0, memcmp(s + off, d + off, len));
		/* bytes outside the range are untouched */
		if (off) {
			EXPECT_EQ(0xaa, d[off - 1]);
		}
		if (off + len < size) {
			EXPECT_EQ(0xaa, d[off + len]);
		}
		munmap(s, size);
		munmap(d, size);
		sp_bo_close(self->d.fd, dev);
		sp_bo_close(self->d.fd, src);
		sp_bo_close(self->d.fd, dst);
	}
}

/* FILL writes its pattern over exactly its range; D2D copies device data. */
TEST_F(bo_data, fill_and_d2d)
{
	struct drm_spyre_cmd cmd[3];
	uint32_t a, b, *out;
	uint8_t buf[3 * SP_PAGE];
	size_t i;

	ASSERT_EQ(0, sp_bo_create(self->d.fd, sizeof(buf), DRM_SPYRE_PLACEMENT_DEVICE, &a));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, sizeof(buf), DRM_SPYRE_PLACEMENT_DEVICE, &b));
	cmd[0] = sp_cmd_fill(a, 0, sizeof(buf), 0x11111111);
	cmd[1] = sp_cmd_fill(a, 4, SP_PAGE, 0xc0ffee00);
	cmd[2] = sp_cmd_copy(a, 0, b, SP_PAGE, 2 * SP_PAGE);
	ASSERT_EQ(0, sp_run(self->d.fd, self->q, cmd, 3));
	ASSERT_EQ(0, sp_download(&self->d, self->q, a, 0, buf, sizeof(buf)));
	out = (uint32_t *)buf;
	EXPECT_EQ(0x11111111, out[0]);
	for (i = 1; i <= SP_PAGE / 4; i++) {
		ASSERT_EQ(0xc0ffee00, out[i]);
	}
	EXPECT_EQ(0x11111111, out[SP_PAGE / 4 + 1]);
	EXPECT_EQ(0x00, buf[4]);	/* little endian */
	EXPECT_EQ(0xc0, buf[7]);
	ASSERT_EQ(0, sp_download(&self->d, self->q, b, SP_PAGE, buf, 2 * SP_PAGE));
	EXPECT_EQ(0x11111111, out[0]);
	EXPECT_EQ(0xc0ffee00, out[1]);
	EXPECT_EQ(0x11111111, out[2 * SP_PAGE / 4 - 1]);
}

/*
 * A BO closed by userspace while a queued job still uses it stays alive
 * until the job is done: the job completes with the right data, and the
 * BO is released after the job (the last reference).
 */
TEST_F_TIMEOUT(bo_data, close_while_in_use, 60)
{
	struct drm_spyre_sync out = { 0 };
	struct drm_spyre_cmd cmds[65];
	uint32_t src, dev, dst, i;
	size_t len = 4 * SP_MiB;
	uint64_t before = 0, seen;
	bool counted;
	uint8_t *s, *d;

	counted = !sp_bo_count(&self->d, &before);
	ASSERT_EQ(0, sp_bo_create(self->d.fd, len, DRM_SPYRE_PLACEMENT_HOST, &src));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, len, DRM_SPYRE_PLACEMENT_DEVICE, &dev));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, len, DRM_SPYRE_PLACEMENT_HOST, &dst));
	s = sp_bo_mmap(self->d.fd, src, len);
	d = sp_bo_mmap(self->d.fd, dst, len);
	ASSERT_NE(NULL, s);
	ASSERT_NE(NULL, d);
	sp_pattern(s, len, 99);
	memset(d, 0, len);
	munmap(s, len);
	/* a backlog first, so the copies below are still queued at close */
	for (i = 0; i < 63; i++)
		cmds[i] = sp_cmd_copy(src, 0, dev, 0, len);
	cmds[63] = sp_cmd_copy(src, 0, dev, 0, len);
	cmds[64] = sp_cmd_copy(dev, 0, dst, 0, len);
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &out.handle, false));
	ASSERT_EQ(0, sp_submit(self->d.fd, self->q, cmds, 65, NULL, 0, &out, 1));
	ASSERT_EQ(0, sp_bo_close(self->d.fd, src));
	ASSERT_EQ(0, sp_bo_close(self->d.fd, dev));
	ASSERT_EQ(0, sp_syncobj_wait(self->d.fd, out.handle, 0, SP_WAIT_NS));
	EXPECT_EQ(1, sp_fence_status(self->d.fd, out.handle, 0));
	EXPECT_EQ(-1, sp_pattern_check(d, len, 99));
	munmap(d, len);
	/* the job held the last references: once it is done, both BOs go */
	if (counted) {
		EXPECT_EQ(0, sp_wait_bo_count(&self->d, before + 1, &seen));
		EXPECT_EQ(before + 1, seen);
	}
}

/*
 * Device memory runs out with -ENOMEM (the request is possible, just not
 * now), and freeing makes room again.
 */
TEST_F_TIMEOUT(bo_data, device_memory_exhaustion, 60)
{
	uint64_t mem = self->d.p[DRM_SPYRE_PARAM_MEM_SIZE], chunk = mem / 16, free_now;
	uint32_t h[64], n = 0, extra;
	int ret = 0;

	while (n < 64) {
		ret = sp_bo_create(self->d.fd, chunk, DRM_SPYRE_PLACEMENT_DEVICE, &h[n]);
		if (ret)
			break;
		n++;
	}
	EXPECT_EQ(-ENOMEM, ret);
	EXPECT_GE(n, 8);
	ASSERT_EQ(0, sp_get_param(self->d.fd, DRM_SPYRE_PARAM_MEM_FREE, &free_now));
	EXPECT_LT(free_now, chunk);
	/* still possible in principle, so -ENOMEM and not -E2BIG */
	EXPECT_EQ(-ENOMEM, sp_bo_create(self->d.fd, mem / 2, DRM_SPYRE_PLACEMENT_DEVICE, NULL));
	/* free one chunk: the same request fits again */
	ASSERT_LT(0, n);
	ASSERT_EQ(0, sp_bo_close(self->d.fd, h[--n]));
	EXPECT_EQ(0, sp_bo_create(self->d.fd, chunk, DRM_SPYRE_PLACEMENT_DEVICE, &extra));
	while (n)
		sp_bo_close(self->d.fd, h[--n]);
	sp_bo_close(self->d.fd, extra);
	ASSERT_EQ(0, sp_get_param(self->d.fd, DRM_SPYRE_PARAM_MEM_FREE, &free_now));
	EXPECT_GE(free_now, 8 * chunk);
}

/*
 * PRIME: a host BO exported and imported into a second file of the same
 * card is the same memory (CPU writes through one are read through the
 * other, and the card copies from the import).
 */
TEST_F(bo_data, prime_share_between_files)
{
	struct drm_spyre_bo_info info;
	struct drm_spyre_cmd cmd[2];
	uint32_t h, h2, again, dev, dst, q2;
	struct sp_dev other;
	size_t len = 2 * SP_PAGE;
	uint8_t *a, *b;
	int buf;

	ASSERT_EQ(0, sp_bo_create(self->d.fd, len, DRM_SPYRE_PLACEMENT_HOST, &h));
	ASSERT_EQ(0, sp_prime_export(self->d.fd, h, &buf));
	/* importing into the exporting file gives back the same handle */
	ASSERT_EQ(0, sp_prime_import(self->d.fd, buf, &again));
	EXPECT_EQ(h, again);
	ASSERT_EQ(0, sp_dev_reopen(&self->d, &other));
	ASSERT_EQ(0, sp_prime_import(other.fd, buf, &h2));
	close(buf);
	ASSERT_EQ(0, sp_bo_info(other.fd, h2, &info));
	EXPECT_EQ(len, info.size);
	EXPECT_EQ(DRM_SPYRE_PLACEMENT_HOST, info.placement);
	a = sp_bo_mmap(self->d.fd, h, len);
	b = sp_bo_mmap(other.fd, h2, len);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	sp_pattern(a, len, 5);
	EXPECT_EQ(-1, sp_pattern_check(b, len, 5));
	/* the card reads the imported BO */
	ASSERT_EQ(0, sp_queue_create(other.fd, DRM_SPYRE_ENGINE_DMA, DRM_SPYRE_PRIORITY_NORMAL,
				     &q2));
	ASSERT_EQ(0, sp_bo_create(other.fd, len, DRM_SPYRE_PLACEMENT_DEVICE, &dev));
	ASSERT_EQ(0, sp_bo_create(other.fd, len, DRM_SPYRE_PLACEMENT_HOST, &dst));
	cmd[0] = sp_cmd_copy(h2, 0, dev, 0, len);
	cmd[1] = sp_cmd_copy(dev, 0, dst, 0, len);
	ASSERT_EQ(0, sp_run(other.fd, q2, cmd, 2));
	munmap(b, len);
	b = sp_bo_mmap(other.fd, dst, len);
	ASSERT_NE(NULL, b);
	EXPECT_EQ(-1, sp_pattern_check(b, len, 5));
	munmap(a, len);
	munmap(b, len);
	sp_dev_close(&other);
}

/*
 * Implicit fences: jobs put their fence on every BO they use, so polling an
 * exported host BO's dma-buf waits for the job writing it.
 */
TEST_F_TIMEOUT(bo_data, dmabuf_poll_waits_for_jobs, 60)
{
	struct drm_spyre_sync out = { 0 };
	struct drm_spyre_cmd cmds[64];
	struct pollfd p = { .events = POLLOUT };
	uint32_t host, dev, i;
	int ret;

	ASSERT_EQ(0, sp_bo_create(self->d.fd, 16 * SP_MiB, DRM_SPYRE_PLACEMENT_HOST, &host));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, 16 * SP_MiB, DRM_SPYRE_PLACEMENT_DEVICE, &dev));
	ASSERT_EQ(0, sp_prime_export(self->d.fd, host, &p.fd));
	for (i = 0; i < 64; i++)
		cmds[i] = sp_cmd_copy(dev, 0, host, 0, 16 * SP_MiB);
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &out.handle, false));
	ASSERT_EQ(0, sp_submit(self->d.fd, self->q, cmds, 64, NULL, 0, &out, 1));
	do {
		ret = poll(&p, 1, 20000);
	} while (ret < 0 && errno == EINTR);
	ASSERT_EQ(1, ret);
	EXPECT_EQ(1, sp_fence_status(self->d.fd, out.handle, 0));
	close(p.fd);
}

/* A foreign dma-buf (udmabuf over a memfd) imports as a host BO the card uses. */
TEST_F(bo_data, prime_import_udmabuf)
{
	struct udmabuf_create uc = { 0 };
	struct drm_spyre_bo_info info;
	struct drm_spyre_cmd cmd[2];
	uint32_t imp, dev, dst;
	size_t len = 4 * SP_PAGE;
	int memfd, ufd, buf;
	uint8_t *m, *out;

	ufd = open("/dev/udmabuf", O_RDWR);
	if (ufd < 0)
		SKIP(return, "no /dev/udmabuf");
	memfd = memfd_create("spyre-selftest", MFD_ALLOW_SEALING);
	ASSERT_LE(0, memfd);
	ASSERT_EQ(0, ftruncate(memfd, len));
	ASSERT_EQ(0, fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK));
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	ASSERT_NE(MAP_FAILED, m);
	sp_pattern(m, len, 77);
	uc.memfd = memfd;
	uc.size = len;
	buf = ioctl(ufd, UDMABUF_CREATE, &uc);
	ASSERT_LE(0, buf);
	ASSERT_EQ(0, sp_prime_import(self->d.fd, buf, &imp));
	ASSERT_EQ(0, sp_bo_info(self->d.fd, imp, &info));
	EXPECT_EQ(DRM_SPYRE_BO_IMPORTED, info.bo_flags & DRM_SPYRE_BO_IMPORTED);
	EXPECT_EQ(DRM_SPYRE_PLACEMENT_HOST, info.placement);
	EXPECT_EQ(len, info.size);
	ASSERT_EQ(0, sp_bo_create(self->d.fd, len, DRM_SPYRE_PLACEMENT_DEVICE, &dev));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, len, DRM_SPYRE_PLACEMENT_HOST, &dst));
	cmd[0] = sp_cmd_copy(imp, 0, dev, 0, len);
	cmd[1] = sp_cmd_copy(dev, 0, dst, 0, len);
	ASSERT_EQ(0, sp_run(self->d.fd, self->q, cmd, 2));
	out = sp_bo_mmap(self->d.fd, dst, len);
	ASSERT_NE(NULL, out);
	EXPECT_EQ(-1, sp_pattern_check(out, len, 77));
	munmap(out, len);
	munmap(m, len);
	close(buf);
	close(memfd);
	close(ufd);
}

/*
 * Exporting a bad handle fails; device BOs export for other cards only
 * (driver 1.5, spyre_peer.c): they have no CPU pages, so no mmap.
 */
TEST_F(bo, prime_export_bad_input)
{
	int buf = -1;
	uint32_t h;

	EXPECT_EQ(-ENOENT, sp_prime_export(self->d.fd, 0x7777, &buf));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, SP_PAGE, variant->placement, &h));
	ASSERT_EQ(0, sp_prime_export(self->d.fd, h, &buf));
	if (variant->placement == DRM_SPYRE_PLACEMENT_DEVICE)
		EXPECT_EQ(MAP_FAILED, mmap(NULL, SP_PAGE, PROT_READ, MAP_SHARED, buf, 0));
	close(buf);
}

/* Closing every handle returns the device's BO count to where it was. */
TEST_F(bo, no_leak_after_close)
{
	uint64_t before, after;
	uint32_t h[8];
	int i;

	if (sp_bo_count(&self->d, &before))
		SKIP(return, "no bo_count in debugfs (not root?)");
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(0, sp_bo_create(self->d.fd, SP_PAGE * (i + 1), variant->placement,
					  &h[i]));
	}
	ASSERT_EQ(0, sp_bo_count(&self->d, &after));
	EXPECT_EQ(before + 8, after);
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(0, sp_bo_close(self->d.fd, h[i]));
	}
	ASSERT_EQ(0, sp_bo_count(&self->d, &after));
	EXPECT_EQ(before, after);
}

/*
 * Runs @body(fd) in a child that limits its locked memory to 1 MiB and then
 * becomes an unprivileged user (with the card already open on @fd);
 * returns the child's exit status (@body's result), or -1.
 */
static int unprivileged_with_1mib_memlock(int fd, int (*body)(int fd))
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct rlimit lim = { 1 * SP_MiB, 1 * SP_MiB };

		if (setrlimit(RLIMIT_MEMLOCK, &lim) || setgid(65534) || setuid(65534))
			_exit(10);
		_exit(body(fd));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static int host_bos_in_1mib(int fd)
{
	uint32_t a, b, c;

	if (sp_bo_create(fd, 512 * 1024, DRM_SPYRE_PLACEMENT_HOST, &a))
		return 11;
	if (sp_bo_create(fd, 768 * 1024, DRM_SPYRE_PLACEMENT_HOST, &b) != -ENOMEM)
		return 12;
	/* device memory is not pinned host memory */
	if (sp_bo_create(fd, 4 * SP_MiB, DRM_SPYRE_PLACEMENT_DEVICE, &c))
		return 13;
	if (sp_bo_close(fd, a))
		return 14;
	if (sp_bo_create(fd, 768 * 1024, DRM_SPYRE_PLACEMENT_HOST, &b))
		return 15;
	return 0;
}

/*
 * Host BOs pin memory like mlock(): without CAP_IPC_LOCK they count in the
 * user's locked memory up to RLIMIT_MEMLOCK (-ENOMEM beyond), freeing one
 * gives its pages back, and device BOs do not count.
 */
TEST(host_bos_count_in_memlock)
{
	struct sp_dev d;

	if (geteuid())
		SKIP(return, "needs root to switch to an unprivileged user");
	SP_OPEN_OR_SKIP(&d, 0);
	EXPECT_EQ(0, unprivileged_with_1mib_memlock(d.fd, host_bos_in_1mib));
	sp_dev_close(&d);
}

#define QUOTA_PARAM	"/sys/module/spyre/parameters/file_mem_quota_mb"

/*
 * file_mem_quota_mb caps the device memory each open file holds: past it
 * BO_CREATE fails with -EDQUOT, another file has its own quota, freeing a
 * BO makes room, and 0 lifts the quota.
 */
TEST(device_bos_count_in_file_quota)
{
	uint32_t a, b, c, e;
	struct sp_dev d, f;

	if (geteuid())
		SKIP(return, "needs root to set file_mem_quota_mb");
	SP_OPEN_OR_SKIP(&d, 0);
	ASSERT_EQ(0, access(QUOTA_PARAM, W_OK));
	ASSERT_EQ(0, sp_dev_reopen(&d, &f));
	ASSERT_EQ(0, sp_write_file(QUOTA_PARAM, "4"));
	EXPECT_EQ(0, sp_bo_create(d.fd, 3 * SP_MiB, DRM_SPYRE_PLACEMENT_DEVICE, &a));
	EXPECT_EQ(-EDQUOT, sp_bo_create(d.fd, 2 * SP_MiB, DRM_SPYRE_PLACEMENT_DEVICE, &b));
	/* host BOs are not device memory */
	EXPECT_EQ(0, sp_bo_create(d.fd, 2 * SP_MiB, DRM_SPYRE_PLACEMENT_HOST, &e));
	EXPECT_EQ(0, sp_bo_create(f.fd, 3 * SP_MiB, DRM_SPYRE_PLACEMENT_DEVICE, &c));
	EXPECT_EQ(0, sp_bo_close(d.fd, a));
	EXPECT_EQ(0, sp_bo_create(d.fd, 2 * SP_MiB, DRM_SPYRE_PLACEMENT_DEVICE, &b));
	EXPECT_EQ(-EDQUOT, sp_bo_create(d.fd, 3 * SP_MiB, DRM_SPYRE_PLACEMENT_DEVICE, &a));
	ASSERT_EQ(0, sp_write_file(QUOTA_PARAM, "0"));
	EXPECT_EQ(0, sp_bo_create(d.fd, 3 * SP_MiB, DRM_SPYRE_PLACEMENT_DEVICE, &a));
	sp_dev_close(&f);
	sp_dev_close(&d);
}

static int userptr(int fd, void *ptr, uint64_t size, uint32_t *handle)
{
	struct drm_spyre_bo_userptr u = { .user_ptr = (uintptr_t)ptr, .size = size };
	int ret = sp_ioctl(fd, DRM_IOCTL_SPYRE_BO_USERPTR, &u);

	if (!ret)
		*handle = u.handle;
	return ret;
}

static void *anon(size_t size, int prot)
{
	void *p = mmap(NULL, size, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * A BO over the caller's memory is a host BO the card copies to and from:
 * the data is the memory itself (written after registration too), nothing
 * outside the copied range changes, and the driver offers no mapping.
 */
TEST_F_TIMEOUT(bo_data, userptr_round_trip, 60)
{
	const uint64_t size = 4 * SP_MiB, off = 4099, len = 3 * SP_MiB + 5;
	struct drm_spyre_bo_info info = { 0 };
	struct drm_spyre_cmd cmd[2];
	uint32_t src, dst, dev;
	uint8_t *s, *d;
	int round;

	s = anon(size, PROT_READ | PROT_WRITE);
	d = anon(size, PROT_READ | PROT_WRITE);
	ASSERT_NE(NULL, s);
	ASSERT_NE(NULL, d);
	memset(d, 0xaa, size);
	ASSERT_EQ(0, userptr(self->d.fd, s, size, &src));
	ASSERT_EQ(0, userptr(self->d.fd, d, size, &dst));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, size, DRM_SPYRE_PLACEMENT_DEVICE, &dev));
	ASSERT_EQ(0, sp_bo_info(self->d.fd, src, &info));
	EXPECT_EQ(size, info.size);
	EXPECT_EQ(DRM_SPYRE_PLACEMENT_HOST, info.placement);
	EXPECT_EQ(DRM_SPYRE_BO_USER_MEMORY, info.bo_flags);
	EXPECT_EQ(0, info.mmap_offset);
	for (round = 1; round <= 2; round++) {
		sp_pattern(s, size, round);	/* written while registered */
		cmd[0] = sp_cmd_copy(src, off, dev, 0, len);
		cmd[1] = sp_cmd_copy(dev, 0, dst, off, len);
		ASSERT_EQ(0, sp_run(self->d.fd, self->q, cmd, 2));
		EXPECT_EQ(0, memcmp(s + off, d + off, len));
		EXPECT_EQ(0xaa, d[off - 1]);
		EXPECT_EQ(0xaa, d[off + len]);
	}
	sp_bo_close(self->d.fd, src);
	sp_bo_close(self->d.fd, dst);
	sp_bo_close(self->d.fd, dev);
	/* the memory is the process's again, untouched by the close */
	EXPECT_EQ(-1, sp_pattern_check(s, size, 2));
	munmap(s, size);
	munmap(d, size);
}

TEST_F(bo_data, userptr_bad_input)
{
	struct drm_spyre_bo_userptr u = { 0 };
	uint8_t *rw = anon(4 * SP_PAGE, PROT_READ | PROT_WRITE);
	uint8_t *ro = anon(SP_PAGE, PROT_READ);
	uint8_t *gone = anon(SP_PAGE, PROT_READ | PROT_WRITE);
	uint64_t max = self->d.p[DRM_SPYRE_PARAM_MAX_HOST_BO_SIZE];
	uint32_t h;
	int buf = -1;

	ASSERT_NE(NULL, rw);
	ASSERT_NE(NULL, ro);
	ASSERT_NE(NULL, gone);
	munmap(gone, SP_PAGE);
	EXPECT_EQ(-EINVAL, userptr(self->d.fd, rw + 1, SP_PAGE, &h));
	EXPECT_EQ(-EINVAL, userptr(self->d.fd, rw, 0, &h));
	EXPECT_EQ(-EINVAL, userptr(self->d.fd, rw, SP_PAGE + 1, &h));
	EXPECT_EQ(-EINVAL, userptr(self->d.fd, (void *)(uintptr_t)-SP_PAGE, 2 * SP_PAGE, &h));
	EXPECT_EQ(-E2BIG, userptr(self->d.fd, rw, max + SP_PAGE, &h));
	EXPECT_EQ(-EFAULT, userptr(self->d.fd, gone, SP_PAGE, &h));
	EXPECT_EQ(-EFAULT, userptr(self->d.fd, ro, SP_PAGE, &h));
	/* part of the range mapped is no better: rw's last page becomes a hole */
	munmap(rw + 3 * SP_PAGE, SP_PAGE);
	EXPECT_EQ(-EFAULT, userptr(self->d.fd, rw + 2 * SP_PAGE, 2 * SP_PAGE, &h));
	u.user_ptr = (uintptr_t)rw;
	u.size = SP_PAGE;
	u.flags = 1;
	EXPECT_EQ(-EINVAL, sp_ioctl(self->d.fd, DRM_IOCTL_SPYRE_BO_USERPTR, &u));
	u.flags = 0;
	u.pad = 1;
	EXPECT_EQ(-EINVAL, sp_ioctl(self->d.fd, DRM_IOCTL_SPYRE_BO_USERPTR, &u));
	u.pad = 0;
	u.pad2 = 1;
	EXPECT_EQ(-EINVAL, sp_ioctl(self->d.fd, DRM_IOCTL_SPYRE_BO_USERPTR, &u));
	/* someone else's pages are not passed on through PRIME */
	ASSERT_EQ(0, userptr(self->d.fd, rw, SP_PAGE, &h));
	EXPECT_EQ(-EOPNOTSUPP, sp_prime_export(self->d.fd, h, &buf));
	EXPECT_EQ(0, sp_bo_close(self->d.fd, h));
	munmap(rw, 3 * SP_PAGE);
	munmap(ro, SP_PAGE);
}

/*
 * The process unmaps its memory while the BO lives: the pages stay pinned,
 * so the card writes into them, not into memory the kernel gave to
 * someone else (KASAN and the page allocator would notice in check-debug).
 */
TEST_F(bo_data, userptr_outlives_munmap)
{
	const uint64_t size = SP_MiB;
	uint32_t h, dev;
	struct drm_spyre_cmd cmd[2];
	uint8_t *p = anon(size, PROT_READ | PROT_WRITE);

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, userptr(self->d.fd, p, size, &h));
	munmap(p, size);
	ASSERT_EQ(0, sp_bo_create(self->d.fd, size, DRM_SPYRE_PLACEMENT_DEVICE, &dev));
	cmd[0] = sp_cmd_fill(dev, 0, size, 0x5a5a5a5a);
	cmd[1] = sp_cmd_copy(dev, 0, h, 0, size);
	EXPECT_EQ(0, sp_run(self->d.fd, self->q, cmd, 2));
	EXPECT_EQ(0, sp_bo_close(self->d.fd, h));
	sp_bo_close(self->d.fd, dev);
}

static int userptr_bos_in_1mib(int fd)
{
	uint8_t *p = anon(2 * SP_MiB, PROT_READ | PROT_WRITE);
	uint32_t a, b;

	if (!p)
		return 10;
	if (userptr(fd, p, 512 * 1024, &a))
		return 11;
	if (userptr(fd, p + SP_MiB, 768 * 1024, &b) != -ENOMEM)
		return 12;
	if (sp_bo_close(fd, a))
		return 13;
	if (userptr(fd, p + SP_MiB, 768 * 1024, &b))
		return 14;
	return 0;
}

/* User-pointer BOs pin memory: they count in RLIMIT_MEMLOCK like host BOs. */
TEST(userptr_bos_count_in_memlock)
{
	struct sp_dev d;

	if (geteuid())
		SKIP(return, "needs root to switch to an unprivileged user");
	SP_OPEN_OR_SKIP(&d, 0);
	EXPECT_EQ(0, unprivileged_with_1mib_memlock(d.fd, userptr_bos_in_1mib));
	sp_dev_close(&d);
}

TEST_HARNESS_MAIN
