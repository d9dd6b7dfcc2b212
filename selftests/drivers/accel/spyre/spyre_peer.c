// SPDX-License-Identifier: GPL-2.0
/*
 * Spyre accel selftests: peer DMA between two cards (driver 1.5, card
 * interface 1.13). A device BO of card B exported with PRIME and imported
 * into card A is a peer BO there; a COPY between it and a device BO of A
 * moves the bytes card to card. The tests check the bytes both ways, the
 * modelled time on A's link, self-import, what a peer BO refuses, and that
 * it keeps B's BO alive until it is gone.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "spyre_util.h"

#define PEER_SIZE	(4 * SP_MiB)
#define SP_FAULT_HANG	1	/* the ring's next command never completes */

FIXTURE(peer) {
	struct sp_dev a, b;
	uint32_t qa, qb;
	uint32_t a_dev;		/* device BO of A */
	uint32_t b_dev;		/* device BO of B (in B's file) */
	uint32_t peer;		/* b_dev imported into A */
	int buf;		/* the dma-buf of b_dev */
};

FIXTURE_SETUP(peer)
{
	struct drm_spyre_bo_info info;
	int ret;

	self->buf = -1;
	SP_OPEN_OR_SKIP(&self->a, 0);
	SP_OPEN_OR_SKIP(&self->b, 1);
	ASSERT_EQ(0, sp_queue_create(self->a.fd, DRM_SPYRE_ENGINE_DMA,
				     DRM_SPYRE_PRIORITY_NORMAL, &self->qa));
	ASSERT_EQ(0, sp_queue_create(self->b.fd, DRM_SPYRE_ENGINE_DMA,
				     DRM_SPYRE_PRIORITY_NORMAL, &self->qb));
	ASSERT_EQ(0, sp_bo_create(self->a.fd, PEER_SIZE, DRM_SPYRE_PLACEMENT_DEVICE,
				  &self->a_dev));
	ASSERT_EQ(0, sp_bo_create(self->b.fd, PEER_SIZE, DRM_SPYRE_PLACEMENT_DEVICE,
				  &self->b_dev));
	ASSERT_EQ(0, sp_prime_export(self->b.fd, self->b_dev, &self->buf));
	ret = sp_prime_import(self->a.fd, self->buf, &self->peer);
	if (ret == -EOPNOTSUPP)
		SKIP(return, "card 0 has no peer DMA (card interface below 1.13)");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, sp_bo_info(self->a.fd, self->peer, &info));
	ASSERT_EQ(DRM_SPYRE_PLACEMENT_PEER, info.placement);
	ASSERT_EQ(PEER_SIZE, info.size);
	/* another card's memory: no CPU mapping through A */
	ASSERT_EQ(0, info.bo_flags & DRM_SPYRE_BO_MAPPABLE);
}

FIXTURE_TEARDOWN(peer)
{
	if (self->buf >= 0)
		close(self->buf);
	sp_dev_close(&self->a);
	sp_dev_close(&self->b);
}

/* A's bytes land in B's BO (D2P), B's come back into A (P2D). */
TEST_F(peer, copy_both_ways)
{
	const size_t n = 3 * SP_MiB + 123;
	struct drm_spyre_cmd c;
	uint8_t *src = malloc(n), *out = malloc(n);

	ASSERT_TRUE(src && out);
	sp_pattern(src, n, 7);
	ASSERT_EQ(0, sp_upload(&self->a, self->qa, self->a_dev, 0, src, n));
	/* A -> B at an odd offset on both sides */
	c = sp_cmd_copy(self->a_dev, 0, self->peer, 5, n);
	ASSERT_EQ(0, sp_run(self->a.fd, self->qa, &c, 1));
	memset(out, 0, n);
	ASSERT_EQ(0, sp_download(&self->b, self->qb, self->b_dev, 5, out, n));
	EXPECT_EQ(-1, sp_pattern_check(out, n, 7));
	/* the bytes around the range are untouched (zero since creation) */
	ASSERT_EQ(0, sp_download(&self->b, self->qb, self->b_dev, 0, out, 5));
	EXPECT_EQ(0, out[0] | out[1] | out[2] | out[3] | out[4]);

	/* B writes its own pattern; A reads it over the peer BO */
	sp_pattern(src, SP_MiB, 9);
	ASSERT_EQ(0, sp_upload(&self->b, self->qb, self->b_dev, SP_MiB, src, SP_MiB));
	c = sp_cmd_copy(self->peer, SP_MiB, self->a_dev, 2 * SP_MiB, SP_MiB);
	ASSERT_EQ(0, sp_run(self->a.fd, self->qa, &c, 1));
	ASSERT_EQ(0, sp_download(&self->a, self->qa, self->a_dev, 2 * SP_MiB, out, SP_MiB));
	EXPECT_EQ(-1, sp_pattern_check(out, SP_MiB, 9));
	/* a zero-length copy is allowed and moves nothing */
	c = sp_cmd_copy(self->a_dev, 0, self->peer, 0, 0);
	EXPECT_EQ(0, sp_run(self->a.fd, self->qa, &c, 1));
	free(src);
	free(out);
}

/*
 * The copy takes the card's documented peer time on A's timeline: 1000 ns
 * setup + 1 MiB at 50 GB/s = 21972 ns, no less (spyre-card.rst).
 */
TEST_F(peer, copy_time_is_the_link_time)
{
	struct drm_spyre_cmd c[3];
	uint32_t ts;
	uint64_t t[2];
	uint64_t *map;

	ASSERT_EQ(0, sp_bo_create(self->a.fd, SP_PAGE, DRM_SPYRE_PLACEMENT_HOST, &ts));
	map = sp_bo_mmap(self->a.fd, ts, SP_PAGE);
	ASSERT_NE(NULL, map);
	c[0] = sp_cmd_ts(ts, 0);
	c[1] = sp_cmd_copy(self->a_dev, 0, self->peer, 0, SP_MiB);
	c[2] = sp_cmd_ts(ts, 8);
	ASSERT_EQ(0, sp_run(self->a.fd, self->qa, c, 3));
	memcpy(t, map, sizeof(t));
	EXPECT_LE(21972, t[1] - t[0]);
	/* and not wildly more on an otherwise idle card */
	EXPECT_GT(1000000, t[1] - t[0]);
	munmap(map, SP_PAGE);
}

/* Imported into its own card, the dma-buf is the BO itself. */
TEST_F(peer, self_import_is_the_bo)
{
	struct drm_spyre_bo_info info;
	struct sp_dev b2;
	uint32_t again, other;

	ASSERT_EQ(0, sp_prime_import(self->b.fd, self->buf, &again));
	EXPECT_EQ(self->b_dev, again);
	ASSERT_EQ(0, sp_dev_reopen(&self->b, &b2));
	ASSERT_EQ(0, sp_prime_import(b2.fd, self->buf, &other));
	ASSERT_EQ(0, sp_bo_info(b2.fd, other, &info));
	EXPECT_EQ(DRM_SPYRE_PLACEMENT_DEVICE, info.placement);
	sp_dev_close(&b2);
	/* importing twice into A gives the same peer handle */
	ASSERT_EQ(0, sp_prime_import(self->a.fd, self->buf, &again));
	EXPECT_EQ(self->peer, again);
}

/* A peer BO is only ever one side of a copy with a device BO of A. */
TEST_F(peer, peer_bo_refuses_everything_else)
{
	struct drm_spyre_bo_range arg = { .handle = self->peer, .size = SP_PAGE };
	struct drm_spyre_cmd c;
	uint32_t host, prog, cq, peer2, b_dev2;
	int buf2;

	ASSERT_EQ(0, sp_bo_create(self->a.fd, SP_PAGE, DRM_SPYRE_PLACEMENT_HOST, &host));
	ASSERT_EQ(0, sp_bo_create(self->a.fd, SP_PAGE, DRM_SPYRE_PLACEMENT_DEVICE, &prog));
	ASSERT_EQ(0, sp_queue_create(self->a.fd, DRM_SPYRE_ENGINE_COMPUTE,
				     DRM_SPYRE_PRIORITY_NORMAL, &cq));
	c = sp_cmd_copy(host, 0, self->peer, 0, SP_PAGE);
	EXPECT_EQ(-EINVAL, sp_submit(self->a.fd, self->qa, &c, 1, NULL, 0, NULL, 0));
	c = sp_cmd_copy(self->peer, 0, host, 0, SP_PAGE);
	EXPECT_EQ(-EINVAL, sp_submit(self->a.fd, self->qa, &c, 1, NULL, 0, NULL, 0));
	/* peer to peer: a second BO of B */
	ASSERT_EQ(0, sp_bo_create(self->b.fd, SP_PAGE, DRM_SPYRE_PLACEMENT_DEVICE, &b_dev2));
	ASSERT_EQ(0, sp_prime_export(self->b.fd, b_dev2, &buf2));
	ASSERT_EQ(0, sp_prime_import(self->a.fd, buf2, &peer2));
	close(buf2);
	c = sp_cmd_copy(self->peer, 0, peer2, 0, SP_PAGE);
	EXPECT_EQ(-EINVAL, sp_submit(self->a.fd, self->qa, &c, 1, NULL, 0, NULL, 0));
	c = sp_cmd_fill(self->peer, 0, SP_PAGE, 0x1234);
	EXPECT_EQ(-EINVAL, sp_submit(self->a.fd, self->qa, &c, 1, NULL, 0, NULL, 0));
	c = sp_cmd_ts(self->peer, 0);
	EXPECT_EQ(-EINVAL, sp_submit(self->a.fd, self->qa, &c, 1, NULL, 0, NULL, 0));
	c = sp_cmd_launch(prog, 0, SP_PAGE, 0, 0, 0, &arg, 1);
	EXPECT_EQ(-EINVAL, sp_submit(self->a.fd, cq, &c, 1, NULL, 0, NULL, 0));
	c = sp_cmd_launch(self->peer, 0, SP_PAGE, 0, 0, 0, NULL, 0);
	EXPECT_EQ(-EINVAL, sp_submit(self->a.fd, cq, &c, 1, NULL, 0, NULL, 0));
	/* ranges are checked against the peer BO's size */
	c = sp_cmd_copy(self->a_dev, 0, self->peer, PEER_SIZE - 8, 16);
	EXPECT_EQ(-EINVAL, sp_submit(self->a.fd, self->qa, &c, 1, NULL, 0, NULL, 0));
	/* no card VA mapping of another card's memory */
	EXPECT_EQ(-EINVAL, sp_vm_bind(self->a.fd, DRM_SPYRE_VM_BIND_OP_MAP, 0, self->peer, 0,
				      0x100000000ull, SP_PAGE));
	/* no CPU mapping of device memory through a dma-buf */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, SP_PAGE, PROT_READ, MAP_SHARED, self->buf, 0));
	/* a peer placement cannot be created */
	EXPECT_EQ(-EINVAL, sp_bo_create(self->a.fd, SP_PAGE, DRM_SPYRE_PLACEMENT_PEER, &host));
}

/*
 * The peer BO holds B's BO: with B's handle and the dma-buf closed, a copy
 * through it still lands, and B's BO count drops only when A lets go.
 */
TEST_F(peer, peer_keeps_the_exporters_bo)
{
	uint64_t before, seen;
	struct drm_spyre_cmd c;
	uint32_t again;
	int buf;

	ASSERT_EQ(0, sp_bo_count(&self->b, &before));
	/* a second export of the same BO is the same dma-buf for importers */
	ASSERT_EQ(0, sp_prime_export(self->b.fd, self->b_dev, &buf));
	ASSERT_EQ(0, sp_prime_import(self->a.fd, buf, &again));
	EXPECT_EQ(self->peer, again);
	close(buf);
	close(self->buf);
	self->buf = -1;
	ASSERT_EQ(0, sp_bo_close(self->b.fd, self->b_dev));
	c = sp_cmd_copy(self->a_dev, 0, self->peer, 0, SP_MiB);
	ASSERT_EQ(0, sp_run(self->a.fd, self->qa, &c, 1));
	EXPECT_EQ(0, sp_wait_bo_count(&self->b, before, &seen));
	EXPECT_EQ(before, seen);
	ASSERT_EQ(0, sp_bo_close(self->a.fd, self->peer));
	EXPECT_EQ(0, sp_wait_bo_count(&self->b, before - 1, &seen));
	EXPECT_EQ(before - 1, seen);
}

/*
 * BO_WAIT on B's handle sees A's job on the shared memory: A's copy hangs
 * (injected), so B's BO is busy until A's driver times the job out.
 */
TEST_F_TIMEOUT(peer, bo_wait_sees_the_other_cards_job, 90)
{
	struct drm_spyre_sync out = { 0 };
	struct drm_spyre_cmd c = sp_cmd_copy(self->a_dev, 0, self->peer, 0, SP_PAGE);
	int ring = sp_queue_ring(&self->a, self->qa);
	uint32_t q2;

	ASSERT_LE(0, ring);
	EXPECT_EQ(0, sp_bo_wait(self->b.fd, self->b_dev, 0));
	ASSERT_EQ(0, sp_syncobj_create(self->a.fd, &out.handle, false));
	ASSERT_EQ(0, sp_arm_fault(&self->a, SP_FAULT_HANG, ring));
	ASSERT_EQ(0, sp_submit(self->a.fd, self->qa, &c, 1, NULL, 0, &out, 1));
	EXPECT_EQ(-ETIME, sp_bo_wait(self->b.fd, self->b_dev, 0));
	EXPECT_EQ(0, sp_bo_wait(self->b.fd, self->b_dev, SP_WAIT_NS));
	EXPECT_EQ(-ETIMEDOUT, sp_fence_status(self->a.fd, out.handle, 0));
	/* the hung queue is banned (-ECANCELED); a new one of A copies again */
	ASSERT_EQ(0, sp_queue_create(self->a.fd, DRM_SPYRE_ENGINE_DMA,
				     DRM_SPYRE_PRIORITY_NORMAL, &q2));
	EXPECT_EQ(0, sp_run(self->a.fd, q2, &c, 1));
}

TEST_HARNESS_MAIN
