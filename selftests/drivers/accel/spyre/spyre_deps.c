// SPDX-License-Identifier: GPL-2.0
/*
 * Spyre accel selftests: dependencies between the rings of one card. The
 * driver hands them to the card (semaphores), so they are resolved in
 * device time: a dependent job starts exactly when its input ended on the
 * card's timeline, however late the host noticed, and independent work on
 * the input's ring keeps overlapping it. Errors and hangs of the input
 * still reach the dependent job, which never hangs behind them.
 *
 * The inputs sit behind a long but cheaply emulated compute job (the busy
 * program: ~2 ms of device time per instruction), so every dependent job
 * reaches its ring long before its input ends in device time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "spyre_prog.h"
#include "spyre_util.h"

#define HOST_SIZE	(64 * 1024)
#define COPY_SIZE	(16 * SP_MiB)
#define BUSY_LONG	25	/* instructions: ~50 ms of device time */
#define BUSY_SHORT	2	/* ~4 ms */
#define SP_FAULT_HANG	1	/* SPYRE_FAULT_HANG: the ring's next command never completes */

FIXTURE(deps) {
	struct sp_dev d;
	uint32_t cq, dq;
	uint32_t host, src, dst, arg_bo;
	uint32_t busy_long, busy_short;
	size_t long_len, short_len;
	uint64_t *ts;
};

FIXTURE_SETUP(deps)
{
	uint8_t pbuf[SPYRE_PROG_HEADER_SIZE + BUSY_LONG * SPYRE_PROG_INSN_SIZE];

	SP_OPEN_OR_SKIP(&self->d, 0);
	ASSERT_EQ(0, sp_queue_create(self->d.fd, DRM_SPYRE_ENGINE_COMPUTE,
				     DRM_SPYRE_PRIORITY_NORMAL, &self->cq));
	ASSERT_EQ(0, sp_queue_create(self->d.fd, DRM_SPYRE_ENGINE_DMA,
				     DRM_SPYRE_PRIORITY_NORMAL, &self->dq));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, HOST_SIZE, DRM_SPYRE_PLACEMENT_HOST, &self->host));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, COPY_SIZE, DRM_SPYRE_PLACEMENT_HOST, &self->src));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, COPY_SIZE, DRM_SPYRE_PLACEMENT_DEVICE, &self->dst));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, SP_PAGE, DRM_SPYRE_PLACEMENT_DEVICE,
				  &self->arg_bo));
	self->ts = sp_bo_mmap(self->d.fd, self->host, HOST_SIZE);
	ASSERT_NE(NULL, self->ts);
	memset(self->ts, 0, HOST_SIZE);

	self->long_len = sp_prog_busy(pbuf, BUSY_LONG);
	ASSERT_EQ(0, sp_prog_upload(&self->d, self->dq, pbuf, self->long_len, SP_PAGE,
				    &self->busy_long));
	self->short_len = sp_prog_busy(pbuf, BUSY_SHORT);
	ASSERT_EQ(0, sp_prog_upload(&self->d, self->dq, pbuf, self->short_len, SP_PAGE,
				    &self->busy_short));
}

FIXTURE_TEARDOWN(deps)
{
	sp_dev_close(&self->d);
}

static struct drm_spyre_cmd busy(FIXTURE_DATA(deps) *self, bool lng)
{
	struct drm_spyre_bo_range arg = { .handle = self->arg_bo, .size = SP_PAGE };

	return sp_cmd_launch(lng ? self->busy_long : self->busy_short, 0,
			     lng ? self->long_len : self->short_len, 0, 0, 0, &arg, 1);
}

static uint64_t reset_count(FIXTURE_DATA(deps) *self)
{
	uint64_t v = 0;

	sp_get_param(self->d.fd, DRM_SPYRE_PARAM_RESET_COUNT, &v);
	return v;
}

/*
 * K (compute, long) -> H2D A1 (DMA queue) -> compute C, with A2, a second
 * H2D on the DMA queue that depends on nothing but A1's place in its
 * queue. Timestamps: K end k, A1 start/end a1s/a1e, C start/end c0/c1,
 * A2 start/end a2s/a2e. @timeline: the A1 -> C dependency goes through a
 * timeline point instead of a binary syncobj.
 */
static void causality_and_overlap(struct __test_metadata *_metadata,
				  FIXTURE_DATA(deps) *self, bool timeline)
{
	struct drm_spyre_sync k_out = { 0 }, a1_out = { 0 }, c_out = { 0 }, a2_out = { 0 };
	enum { K, A1S, A1E, C0, C1, A2S, A2E };
	uint64_t *ts = self->ts;
	struct drm_spyre_cmd c[3];

	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &k_out.handle, false));
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &a1_out.handle, false));
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &c_out.handle, false));
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &a2_out.handle, false));
	if (timeline) {
		/* a two-link chain: point 1 done at once, point 2 is A1 */
		c[0] = sp_cmd_ts(self->host, 8 * 40);
		a1_out.point = 1;
		ASSERT_EQ(0, sp_submit(self->d.fd, self->dq, c, 1, NULL, 0, &a1_out, 1));
		ASSERT_EQ(0, sp_syncobj_wait(self->d.fd, a1_out.handle, 1, SP_WAIT_NS));
		a1_out.point = 2;
	}

	c[0] = busy(self, true);
	c[1] = sp_cmd_ts(self->host, 8 * K);
	ASSERT_EQ(0, sp_submit(self->d.fd, self->cq, c, 2, NULL, 0, &k_out, 1));
	c[0] = sp_cmd_ts(self->host, 8 * A1S);
	c[1] = sp_cmd_copy(self->src, 0, self->dst, 0, COPY_SIZE);
	c[2] = sp_cmd_ts(self->host, 8 * A1E);
	ASSERT_EQ(0, sp_submit(self->d.fd, self->dq, c, 3, &k_out, 1, &a1_out, 1));
	c[0] = sp_cmd_ts(self->host, 8 * A2S);
	c[1] = sp_cmd_copy(self->src, 0, self->dst, 0, COPY_SIZE);
	c[2] = sp_cmd_ts(self->host, 8 * A2E);
	ASSERT_EQ(0, sp_submit(self->d.fd, self->dq, c, 3, NULL, 0, &a2_out, 1));
	c[0] = sp_cmd_ts(self->host, 8 * C0);
	c[1] = busy(self, false);
	c[2] = sp_cmd_ts(self->host, 8 * C1);
	ASSERT_EQ(0, sp_submit(self->d.fd, self->cq, c, 3, &a1_out, 1, &c_out, 1));

	ASSERT_EQ(0, sp_syncobj_wait(self->d.fd, c_out.handle, 0, SP_WAIT_NS));
	ASSERT_EQ(0, sp_syncobj_wait(self->d.fd, a2_out.handle, 0, SP_WAIT_NS));
	EXPECT_EQ(1, sp_fence_status(self->d.fd, c_out.handle, 0));
	EXPECT_EQ(1, sp_fence_status(self->d.fd, a2_out.handle, 0));
	TH_LOG("K end %llu, A1 %llu..%llu, C %llu..%llu, A2 %llu..%llu",
	       (unsigned long long)ts[K], (unsigned long long)ts[A1S],
	       (unsigned long long)ts[A1E], (unsigned long long)ts[C0],
	       (unsigned long long)ts[C1], (unsigned long long)ts[A2S],
	       (unsigned long long)ts[A2E]);

	/* each dependent job starts exactly when its input ended */
	EXPECT_LT(0, ts[K]);
	EXPECT_EQ(ts[K], ts[A1S]);
	EXPECT_LT(ts[A1S], ts[A1E]);
	EXPECT_EQ(ts[A1E], ts[C0]);
	EXPECT_LT(ts[C0], ts[C1]);
	/* the independent copy follows A1 on its ring and overlaps C */
	EXPECT_EQ(ts[A1E], ts[A2S]);
	EXPECT_LT(ts[A2S], ts[A2E]);
	EXPECT_LT(ts[A2S] > ts[C0] ? ts[A2S] : ts[C0], ts[A2E] < ts[C1] ? ts[A2E] : ts[C1]);
}

TEST_F_TIMEOUT(deps, device_time_causality_and_overlap, 60)
{
	causality_and_overlap(_metadata, self, false);
}

TEST_F_TIMEOUT(deps, timeline_point_causality_and_overlap, 60)
{
	causality_and_overlap(_metadata, self, true);
}

/*
 * A timeline point behind many unfinished points of one queue (as a
 * stream's events make): still one wait on the card, resolved exactly at
 * the last job's end, not a host wait for the whole chain.
 */
TEST_F_TIMEOUT(deps, long_timeline_chain_stays_on_card, 120)
{
	struct drm_spyre_sync k_out = { 0 }, tl = { 0 }, c_out = { 0 };
	struct drm_spyre_bo_range arg = { .handle = self->arg_bo, .size = SP_PAGE };
	uint32_t i, n = 24, insns = BUSY_LONG, prog;
	struct drm_spyre_cmd c[2];
	uint64_t *ts = self->ts;
	bool pending = false, on_card = false;
	int attempt;

	/*
	 * The chain must still be running when the scheduler looks at the
	 * dependent, or the host resolves the dependency and nothing is
	 * proven: on a slow kernel (the debugging one) the submissions and the
	 * scheduler's work can outlast K, so K grows until they do not. A
	 * driver that never resolves on the card fails every attempt.
	 */
	for (attempt = 0; attempt < 4 && !on_card; attempt++, insns *= 4) {
		size_t plen = sp_prog_size(insns);
		uint8_t *pbuf = malloc(plen);

		ASSERT_NE(NULL, pbuf);
		sp_prog_busy(pbuf, insns);
		ASSERT_EQ(0, sp_prog_upload(&self->d, self->dq, pbuf, plen,
					    (plen + SP_PAGE - 1) & ~(SP_PAGE - 1ull), &prog));
		free(pbuf);
		ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &k_out.handle, false));
		ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &tl.handle, false));
		ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &c_out.handle, false));
		c[0] = sp_cmd_launch(prog, 0, plen, 0, 0, 0, &arg, 1);
		ASSERT_EQ(0, sp_submit(self->d.fd, self->cq, c, 1, NULL, 0, &k_out, 1));
		for (i = 1; i <= n; i++) {
			c[0] = sp_cmd_copy(self->src, 0, self->dst, 0, SP_MiB);
			c[1] = sp_cmd_ts(self->host, 8 * i);
			tl.point = i;
			ASSERT_EQ(0, sp_submit(self->d.fd, self->dq, c, 2, i == 1 ? &k_out : NULL,
					       i == 1, &tl, 1));
		}
		c[0] = sp_cmd_ts(self->host, 0);
		ASSERT_EQ(0, sp_submit(self->d.fd, self->cq, c, 1, &tl, 1, &c_out, 1));
		pending = sp_fence_status(self->d.fd, tl.handle, n) == 0;
		ASSERT_EQ(0, sp_syncobj_wait(self->d.fd, c_out.handle, 0, SP_WAIT_NS));
		EXPECT_EQ(1, sp_fence_status(self->d.fd, c_out.handle, 0));
		sp_bo_close(self->d.fd, prog);
		TH_LOG("%u busy instructions: chain %s at submit, last copy ended %llu, "
		       "dependent started %llu", insns, pending ? "pending" : "done",
		       (unsigned long long)ts[n], (unsigned long long)ts[0]);
		on_card = pending && ts[n] == ts[0];
	}
	ASSERT_TRUE(pending);
	EXPECT_LT(ts[1], ts[n]);
	EXPECT_EQ(ts[n], ts[0]);
}

/*
 * A job that already waits on the card for an input that then fails does
 * not run (its commands are skipped) and ends with the input's error; its
 * queue goes on behind it.
 */
TEST_F_TIMEOUT(deps, error_through_semaphore_dependency, 60)
{
	struct drm_spyre_bo_range arg = { .handle = self->arg_bo, .size = SP_PAGE };
	struct drm_spyre_sync bad = { 0 }, done = { 0 }, after = { 0 };
	struct drm_spyre_cmd c[2];
	uint8_t prog[256];
	size_t plen = sp_prog_load_at(prog, 1 << 20, 128);
	uint32_t pbo;

	ASSERT_EQ(0, sp_prog_upload(&self->d, self->dq, prog, plen, SP_PAGE, &pbo));
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &bad.handle, false));
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &done.handle, false));
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &after.handle, false));
	c[0] = busy(self, true);
	c[1] = sp_cmd_ts(self->host, 0);
	ASSERT_EQ(0, sp_submit(self->d.fd, self->cq, c, 2, NULL, 0, NULL, 0));
	c[0] = sp_cmd_launch(pbo, 0, plen, 0, 0, 0, &arg, 1);	/* out of bounds */
	ASSERT_EQ(0, sp_submit(self->d.fd, self->cq, c, 1, NULL, 0, &bad, 1));
	c[0] = sp_cmd_ts(self->host, 8);
	ASSERT_EQ(0, sp_submit(self->d.fd, self->dq, c, 1, &bad, 1, &done, 1));
	/* the DMA queue itself goes on */
	c[0] = sp_cmd_ts(self->host, 16);
	ASSERT_EQ(0, sp_submit(self->d.fd, self->dq, c, 1, NULL, 0, &after, 1));

	ASSERT_EQ(0, sp_syncobj_wait(self->d.fd, done.handle, 0, SP_WAIT_NS));
	ASSERT_EQ(0, sp_syncobj_wait(self->d.fd, after.handle, 0, SP_WAIT_NS));
	EXPECT_EQ(-EFAULT, sp_fence_status(self->d.fd, bad.handle, 0));
	EXPECT_EQ(-EFAULT, sp_fence_status(self->d.fd, done.handle, 0));
	EXPECT_EQ(1, sp_fence_status(self->d.fd, after.handle, 0));
	EXPECT_LT(0, self->ts[0]);
	EXPECT_EQ(0, self->ts[1]);	/* nothing of the dependent job ran */
	EXPECT_LE(self->ts[0], self->ts[2]);
}

/*
 * The input hangs: only its ring is reset (the waiting ring is not blamed),
 * the waiting job ends with the input's -ETIMEDOUT instead of hanging, and
 * its queue keeps working.
 */
TEST_F_TIMEOUT(deps, hung_input_releases_waiter, 90)
{
	struct drm_spyre_sync hung = { 0 }, waiter = { 0 };
	struct drm_spyre_cmd c = sp_cmd_ts(self->host, 0);
	uint64_t resets = reset_count(self);
	int ring = sp_queue_ring(&self->d, self->dq);

	ASSERT_LE(0, ring);
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &hung.handle, false));
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &waiter.handle, false));
	ASSERT_EQ(0, sp_arm_fault(&self->d, SP_FAULT_HANG, ring));
	ASSERT_EQ(0, sp_submit(self->d.fd, self->dq, &c, 1, NULL, 0, &hung, 1));
	c = sp_cmd_ts(self->host, 8);
	ASSERT_EQ(0, sp_submit(self->d.fd, self->cq, &c, 1, &hung, 1, &waiter, 1));

	ASSERT_EQ(0, sp_syncobj_wait(self->d.fd, waiter.handle, 0, SP_WAIT_NS));
	EXPECT_EQ(-ETIMEDOUT, sp_fence_status(self->d.fd, hung.handle, 0));
	EXPECT_EQ(-ETIMEDOUT, sp_fence_status(self->d.fd, waiter.handle, 0));
	/* one ring reset: the hung ring's, not the waiting one's */
	EXPECT_EQ(resets + 1, reset_count(self));
	c = sp_cmd_ts(self->host, 16);
	EXPECT_EQ(0, sp_run(self->d.fd, self->cq, &c, 1));
	EXPECT_NE(0, self->ts[2]);
}

TEST_HARNESS_MAIN
