// SPDX-License-Identifier: GPL-2.0
/*
 * Spyre accel selftests: fences. Binary and timeline syncobjs as in- and
 * out-syncs, cross-queue and cross-file dependencies, wait-any/wait-all,
 * timeouts, sync_file export/import, and errors of failed jobs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "spyre_prog.h"
#include "spyre_util.h"

#define HOST_SIZE	(64 * 1024)

FIXTURE(fence) {
	struct sp_dev d;
	uint32_t cq, dq, dq2;
	uint32_t dev, big;	/* device BOs: 64 KiB and 16 MiB */
	uint32_t host;		/* host BO, mapped at map */
	uint64_t *map;
};

FIXTURE_SETUP(fence)
{
	SP_OPEN_OR_SKIP(&self->d, 0);
	ASSERT_EQ(0, sp_queue_create(self->d.fd, DRM_SPYRE_ENGINE_COMPUTE,
				     DRM_SPYRE_PRIORITY_NORMAL, &self->cq));
	ASSERT_EQ(0, sp_queue_create(self->d.fd, DRM_SPYRE_ENGINE_DMA,
				     DRM_SPYRE_PRIORITY_NORMAL, &self->dq));
	ASSERT_EQ(0, sp_queue_create(self->d.fd, DRM_SPYRE_ENGINE_DMA,
				     DRM_SPYRE_PRIORITY_NORMAL, &self->dq2));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, HOST_SIZE, DRM_SPYRE_PLACEMENT_DEVICE, &self->dev));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, 16 * SP_MiB, DRM_SPYRE_PLACEMENT_DEVICE,
				  &self->big));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, HOST_SIZE, DRM_SPYRE_PLACEMENT_HOST, &self->host));
	self->map = sp_bo_mmap(self->d.fd, self->host, HOST_SIZE);
	ASSERT_NE(NULL, self->map);
	memset(self->map, 0, HOST_SIZE);
}

FIXTURE_TEARDOWN(fence)
{
	sp_dev_close(&self->d);
}

/*
 * Submit a job of @nfill 16 MiB fills (about 85 us of device time each)
 * followed by a timestamp at map[@ts_slot], signalling @out.
 */
static int long_job(FIXTURE_DATA(fence) *self, uint32_t q, uint32_t nfill, uint32_t ts_slot,
		    const struct drm_spyre_sync *in, uint32_t nin,
		    const struct drm_spyre_sync *out, uint32_t nout)
{
	struct drm_spyre_cmd cmds[257];
	uint32_t i;

	for (i = 0; i < nfill; i++)
		cmds[i] = sp_cmd_fill(self->big, 0, 16 * SP_MiB, i);
	cmds[nfill] = sp_cmd_ts(self->host, 8 * ts_slot);
	return sp_submit(self->d.fd, q, cmds, nfill + 1, in, nin, out, nout);
}

/* A job's finished fence lands in every out-syncobj, and signals. */
TEST_F(fence, binary_out_syncs)
{
	struct drm_spyre_sync out[3] = { { 0 }, { 0 }, { 0 } };
	struct drm_spyre_cmd c = sp_cmd_ts(self->host, 0);
	uint32_t h[3];
	int i;

	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &out[i].handle, i == 2));
		h[i] = out[i].handle;
	}
	ASSERT_EQ(0, sp_submit(self->d.fd, self->dq, &c, 1, NULL, 0, out, 3));
	ASSERT_EQ(0, sp_syncobj_wait_many(self->d.fd, h, 3, true, false, SP_WAIT_NS, NULL));
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(1, sp_fence_status(self->d.fd, h[i], 0));
	}
	EXPECT_NE(0, self->map[0]);
}

/*
 * Event semantics across queues: a consumer on another queue waits for a
 * long producer through a binary syncobj, sees its data and starts after
 * it in device time.
 */
TEST_F(fence, binary_cross_queue_dependency)
{
	struct drm_spyre_sync s = { 0 }, done = { 0 };
	struct drm_spyre_cmd c[3];
	uint32_t *word = (uint32_t *)&self->map[100];

	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &s.handle, false));
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &done.handle, false));
	c[0] = sp_cmd_fill(self->dev, 0, 4, 0x600dcafe);
	ASSERT_EQ(0, sp_submit(self->d.fd, self->dq, c, 1, NULL, 0, NULL, 0));
	ASSERT_EQ(0, long_job(self, self->dq, 64, 0, NULL, 0, &s, 1));
	c[0] = sp_cmd_ts(self->host, 8);
	c[1] = sp_cmd_copy(self->dev, 0, self->host, 800, 4);
	ASSERT_EQ(0, sp_submit(self->d.fd, self->cq, c, 2, &s, 1, &done, 1));
	ASSERT_EQ(0, sp_syncobj_wait(self->d.fd, done.handle, 0, SP_WAIT_NS));
	EXPECT_EQ(0x600dcafe, *word);
	EXPECT_LE(self->map[0], self->map[1]);
}

/* Timeline points as out- and in-syncs; the syncobj reports its last point. */
TEST_F(fence, timeline_points)
{
	struct drm_spyre_sync t = { 0 }, done = { 0 };
	struct drm_spyre_cmd c = sp_cmd_ts(self->host, 16);
	uint64_t point = 0;

	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &t.handle, false));
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &done.handle, false));
	t.point = 3;
	ASSERT_EQ(0, long_job(self, self->dq, 16, 0, NULL, 0, &t, 1));
	t.point = 7;
	ASSERT_EQ(0, long_job(self, self->dq, 16, 1, NULL, 0, &t, 1));
	/* wait for point 7 on another queue */
	ASSERT_EQ(0, sp_submit(self->d.fd, self->dq2, &c, 1, &t, 1, &done, 1));
	ASSERT_EQ(0, sp_syncobj_wait(self->d.fd, t.handle, 3, SP_WAIT_NS));
	ASSERT_EQ(0, sp_syncobj_wait(self->d.fd, done.handle, 0, SP_WAIT_NS));
	EXPECT_EQ(1, sp_fence_status(self->d.fd, t.handle, 7));
	ASSERT_EQ(0, sp_syncobj_query(self->d.fd, t.handle, &point));
	EXPECT_EQ(7, point);
	EXPECT_LE(self->map[1], self->map[2]);
	EXPECT_LE(self->map[0], self->map[1]);
}

/* An out point at or below the timeline's last point is refused. */
TEST_F(fence, timeline_point_must_increase)
{
	struct drm_spyre_sync t = { .point = 5 };
	struct drm_spyre_cmd c = sp_cmd_nop();

	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &t.handle, false));
	ASSERT_EQ(0, sp_submit(self->d.fd, self->dq, &c, 1, NULL, 0, &t, 1));
	EXPECT_EQ(-EINVAL, sp_submit(self->d.fd, self->dq, &c, 1, NULL, 0, &t, 1));
	t.point = 4;
	EXPECT_EQ(-EINVAL, sp_submit(self->d.fd, self->dq, &c, 1, NULL, 0, &t, 1));
	t.point = 6;
	EXPECT_EQ(0, sp_submit(self->d.fd, self->dq, &c, 1, NULL, 0, &t, 1));
}

/* In-syncs need a fence (a submitted point): else -EINVAL. */
TEST_F(fence, in_sync_without_fence)
{
	struct drm_spyre_sync s = { 0 }, t = { .point = 2 };
	struct drm_spyre_cmd c = sp_cmd_nop();

	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &s.handle, false));
	EXPECT_EQ(-EINVAL, sp_submit(self->d.fd, self->dq, &c, 1, &s, 1, NULL, 0));
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &t.handle, false));
	t.point = 1;
	ASSERT_EQ(0, sp_submit(self->d.fd, self->dq, &c, 1, NULL, 0, &t, 1));
	t.point = 2;
	EXPECT_EQ(-EINVAL, sp_submit(self->d.fd, self->dq, &c, 1, &t, 1, NULL, 0));
	t.point = 1;
	EXPECT_EQ(0, sp_submit(self->d.fd, self->dq, &c, 1, &t, 1, NULL, 0));
}

/* Unknown, foreign and destroyed syncobjs; flags; stride; counts. */
TEST_F(fence, sync_bad_input)
{
	uint32_t max = self->d.p[DRM_SPYRE_PARAM_MAX_SYNCS];
	struct drm_spyre_sync *many = calloc(max + 1, sizeof(*many));
	struct drm_spyre_cmd c = sp_cmd_nop();
	struct drm_spyre_sync s = { 0 };
	struct drm_spyre_submit sub = {
		.queue_id = self->dq, .cmds = (uintptr_t)&c, .cmd_count = 1,
		.cmd_stride = sizeof(c),
	};
	uint8_t wide[2][32];
	struct sp_dev other;
	uint32_t i, foreign;

	ASSERT_NE(NULL, many);
	s.handle = 0x4444;
	EXPECT_EQ(-ENOENT, sp_submit(self->d.fd, self->dq, &c, 1, &s, 1, NULL, 0));
	EXPECT_EQ(-ENOENT, sp_submit(self->d.fd, self->dq, &c, 1, NULL, 0, &s, 1));
	/* another file's syncobj: its handle number means nothing here */
	ASSERT_EQ(0, sp_dev_reopen(&self->d, &other));
	for (i = 0; i < 64; i++) {
		ASSERT_EQ(0, sp_syncobj_create(other.fd, &foreign, true));
	}
	s.handle = foreign;
	EXPECT_EQ(-ENOENT, sp_submit(self->d.fd, self->dq, &c, 1, &s, 1, NULL, 0));
	EXPECT_EQ(-ENOENT, sp_submit(self->d.fd, self->dq, &c, 1, NULL, 0, &s, 1));
	sp_dev_close(&other);
	/* a destroyed syncobj */
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &s.handle, true));
	ASSERT_EQ(0, sp_syncobj_destroy(self->d.fd, s.handle));
	EXPECT_EQ(-ENOENT, sp_submit(self->d.fd, self->dq, &c, 1, &s, 1, NULL, 0));
	EXPECT_EQ(-ENOENT, sp_submit(self->d.fd, self->dq, &c, 1, NULL, 0, &s, 1));
	/* flags */
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &s.handle, true));
	s.flags = 1;
	EXPECT_EQ(-EINVAL, sp_submit(self->d.fd, self->dq, &c, 1, &s, 1, NULL, 0));
	EXPECT_EQ(-EINVAL, sp_submit(self->d.fd, self->dq, &c, 1, NULL, 0, &s, 1));
	s.flags = 0;
	/* stride: too small, or larger with unknown non-zero bytes */
	memset(wide, 0, sizeof(wide));
	memcpy(wide[0], &s, sizeof(s));
	memcpy(wide[1], &s, sizeof(s));
	sub.in_syncs = (uintptr_t)wide;
	sub.in_sync_count = 2;
	sub.sync_stride = 8;
	EXPECT_EQ(-EINVAL, sp_ioctl(self->d.fd, DRM_IOCTL_SPYRE_SUBMIT, &sub));
	sub.sync_stride = 4096 + 16;
	sub.in_sync_count = 1;
	EXPECT_EQ(-EINVAL, sp_ioctl(self->d.fd, DRM_IOCTL_SPYRE_SUBMIT, &sub));
	sub.in_sync_count = 2;
	sub.sync_stride = 32;
	EXPECT_EQ(0, sp_ioctl(self->d.fd, DRM_IOCTL_SPYRE_SUBMIT, &sub));
	wide[1][20] = 1;
	EXPECT_EQ(-E2BIG, sp_ioctl(self->d.fd, DRM_IOCTL_SPYRE_SUBMIT, &sub));
	/* counts */
	for (i = 0; i <= max; i++)
		many[i] = s;
	EXPECT_EQ(-E2BIG, sp_submit(self->d.fd, self->dq, &c, 1, many, max + 1, NULL, 0));
	EXPECT_EQ(-E2BIG, sp_submit(self->d.fd, self->dq, &c, 1, NULL, 0, many, max + 1));
	free(many);
}

/* MAX_SYNCS in-syncs and MAX_SYNCS distinct out-syncs in one submit. */
TEST_F(fence, max_syncs)
{
	uint32_t max = self->d.p[DRM_SPYRE_PARAM_MAX_SYNCS], i;
	struct drm_spyre_sync *in = calloc(max, sizeof(*in));
	struct drm_spyre_sync *out = calloc(max, sizeof(*out));
	uint32_t *h = calloc(max, sizeof(*h));
	struct drm_spyre_cmd c = sp_cmd_nop();

	ASSERT_NE(NULL, in);
	ASSERT_NE(NULL, out);
	ASSERT_NE(NULL, h);
	for (i = 0; i < max; i++) {
		ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &in[i].handle, true));
		ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &out[i].handle, false));
		h[i] = out[i].handle;
	}
	ASSERT_EQ(0, sp_submit(self->d.fd, self->dq, &c, 1, in, max, out, max));
	EXPECT_EQ(0, sp_syncobj_wait_many(self->d.fd, h, max, true, false, SP_WAIT_NS, NULL));
	free(in);
	free(out);
	free(h);
}

/* Wait-all and wait-any over jobs of two queues, and a wait that times out. */
TEST_F(fence, wait_any_all_timeout)
{
	uint32_t h[3], first = 99;
	struct drm_spyre_sync s = { 0 };
	struct drm_spyre_cmd c = sp_cmd_nop();
	int i;

	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &h[i], false));
	}
	s.handle = h[1];
	ASSERT_EQ(0, long_job(self, self->dq, 32, 0, NULL, 0, &s, 1));
	s.handle = h[2];
	ASSERT_EQ(0, sp_submit(self->d.fd, self->cq, &c, 1, NULL, 0, &s, 1));
	/* h[0] never gets a fence: any must still return, with a submitted one */
	ASSERT_EQ(0, sp_syncobj_wait_many(self->d.fd, h, 3, false, true, SP_WAIT_NS, &first));
	EXPECT_TRUE(first == 1 || first == 2);
	ASSERT_EQ(0, sp_syncobj_wait_many(self->d.fd, h + 1, 2, true, true, SP_WAIT_NS, NULL));
	EXPECT_EQ(1, sp_fence_status(self->d.fd, h[1], 0));
	EXPECT_EQ(1, sp_fence_status(self->d.fd, h[2], 0));
	/* all, including the never-submitted one: times out */
	EXPECT_EQ(-ETIME, sp_syncobj_wait_many(self->d.fd, h, 3, true, true, 50000000, NULL));
	EXPECT_EQ(-ETIME, sp_syncobj_wait(self->d.fd, h[0], 0, 20000000));
	/* a deadline already in the past only polls */
	EXPECT_EQ(0, sp_syncobj_wait_many(self->d.fd, h + 1, 2, true, true, -1000000, NULL));
}

/*
 * sync_file export/import: a pending job's fence exported from one file
 * orders a job of another file behind it.
 */
TEST_F(fence, sync_file_cross_file)
{
	struct drm_spyre_sync s = { 0 }, s2 = { 0 }, done = { 0 };
	struct drm_spyre_cmd c;
	uint32_t q2, host2;
	struct sp_dev other;
	uint64_t *m2;
	int sf;

	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &s.handle, false));
	ASSERT_EQ(0, long_job(self, self->dq, 128, 0, NULL, 0, &s, 1));
	sf = sp_syncobj_export(self->d.fd, s.handle, 0);
	ASSERT_LE(0, sf);

	ASSERT_EQ(0, sp_dev_reopen(&self->d, &other));
	ASSERT_EQ(0, sp_queue_create(other.fd, DRM_SPYRE_ENGINE_DMA, DRM_SPYRE_PRIORITY_NORMAL,
				     &q2));
	ASSERT_EQ(0, sp_bo_create(other.fd, SP_PAGE, DRM_SPYRE_PLACEMENT_HOST, &host2));
	m2 = sp_bo_mmap(other.fd, host2, SP_PAGE);
	ASSERT_NE(NULL, m2);
	ASSERT_EQ(0, sp_syncobj_create(other.fd, &s2.handle, false));
	ASSERT_EQ(0, sp_syncobj_import(other.fd, s2.handle, sf));
	ASSERT_EQ(0, sp_syncobj_create(other.fd, &done.handle, false));
	c = sp_cmd_ts(host2, 0);
	ASSERT_EQ(0, sp_submit(other.fd, q2, &c, 1, &s2, 1, &done, 1));
	ASSERT_EQ(0, sp_syncobj_wait(other.fd, done.handle, 0, SP_WAIT_NS));
	/* the sync_file itself signalled, without error */
	EXPECT_EQ(0, sp_sync_file_wait(sf, 0));
	EXPECT_EQ(1, sp_sync_file_status(sf));
	EXPECT_NE(0, self->map[0]);
	EXPECT_LE(self->map[0], m2[0]);
	close(sf);
	sp_dev_close(&other);
}

/* Upload a program and launch it with one 4 KiB slot; returns the status. */
static int run_program(FIXTURE_DATA(fence) *self, const void *prog, size_t plen,
		       uint32_t out_syncobj)
{
	struct drm_spyre_bo_range arg = { .handle = self->dev, .size = 4096 };
	struct drm_spyre_sync out = { .handle = out_syncobj };
	struct drm_spyre_cmd c;
	uint32_t pbo;
	int ret;

	ret = sp_prog_upload(&self->d, self->dq, prog, plen, SP_PAGE, &pbo);
	if (ret)
		return ret;
	c = sp_cmd_launch(pbo, 0, plen, 0, 0, 0, &arg, 1);
	ret = sp_submit(self->d.fd, self->cq, &c, 1, NULL, 0, &out, 1);
	if (ret)
		return ret;
	ret = sp_syncobj_wait(self->d.fd, out_syncobj, 0, SP_WAIT_NS);
	return ret ? ret : sp_fence_status(self->d.fd, out_syncobj, 0);
}

/*
 * A program reading outside its argument slot fails its job with -EFAULT:
 * the error reaches the out-syncobj and its sync_file; the queue goes on.
 */
TEST_F(fence, error_out_of_bounds_program)
{
	uint8_t prog[256];
	size_t plen = sp_prog_load_at(prog, 8192, 128);
	struct drm_spyre_cmd nop = sp_cmd_nop();
	uint32_t s;

	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &s, false));
	EXPECT_EQ(-EFAULT, run_program(self, prog, plen, s));
	/* in range it is fine */
	plen = sp_prog_load_at(prog, 4096 - 128, 128);
	EXPECT_EQ(1, run_program(self, prog, plen, s));
	/* a failed job does not ban its queue */
	EXPECT_EQ(0, sp_run(self->d.fd, self->cq, &nop, 1));
}

/* Malformed programs and deadlocked programs fail their job, not the card. */
TEST_F(fence, error_bad_programs)
{
	uint8_t prog[256];
	size_t plen;
	uint32_t s;

	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &s, false));
	plen = sp_prog_load_at(prog, 0, 128);
	prog[0] ^= 0xff;	/* bad magic */
	EXPECT_EQ(-ENOEXEC, run_program(self, prog, plen, s));
	plen = sp_prog_deadlock(prog);
	EXPECT_EQ(-EDEADLK, run_program(self, prog, plen, s));
	plen = sp_prog_load_at(prog, 0, 128);
	EXPECT_EQ(1, run_program(self, prog, plen, s));
}

static int queue_error(int fd, uint32_t queue, uint32_t flags, struct drm_spyre_queue_error *e)
{
	memset(e, 0, sizeof(*e));
	e->queue_id = queue;
	e->flags = flags;
	return sp_ioctl(fd, DRM_IOCTL_SPYRE_QUEUE_ERROR, e);
}

/*
 * A queue keeps its first failure until it is cleared, although later jobs
 * succeed and the timeline folds the failed point into them; the record
 * names the job, its out-sync point and where on the card the launch
 * stopped (interface 1.6).
 */
TEST_F(fence, queue_error_keeps_first_failure)
{
	struct drm_spyre_bo_range arg = { .handle = self->dev, .size = 4096 };
	struct drm_spyre_sync tl = { 0 };
	struct drm_spyre_queue_error e;
	uint8_t good[256], bad[256];
	size_t glen = sp_prog_load_at(good, 0, 128);
	size_t blen = sp_prog_sp_overrun(bad, (2u << 20) - 64, 128);
	uint32_t gbo, bbo, p;

	ASSERT_EQ(0, sp_prog_upload(&self->d, self->dq, good, glen, SP_PAGE, &gbo));
	ASSERT_EQ(0, sp_prog_upload(&self->d, self->dq, bad, blen, SP_PAGE, &bbo));
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &tl.handle, false));
	ASSERT_EQ(0, queue_error(self->d.fd, self->cq, 0, &e));
	EXPECT_EQ(0, e.error);
	EXPECT_EQ(0, e.failed);
	for (p = 1; p <= 5; p++) {
		struct drm_spyre_cmd c = p == 2 ? sp_cmd_launch(bbo, 0, blen, 0, 0, 0, &arg, 1) :
						  sp_cmd_launch(gbo, 0, glen, 0, 0, 0, &arg, 1);

		tl.point = 10 * p;
		ASSERT_EQ(0, sp_submit(self->d.fd, self->cq, &c, 1, NULL, 0, &tl, 1));
	}
	ASSERT_EQ(0, sp_syncobj_wait(self->d.fd, tl.handle, 50, SP_WAIT_NS));

	ASSERT_EQ(0, queue_error(self->d.fd, self->cq, 0, &e));
	EXPECT_EQ(-EFAULT, e.error);
	EXPECT_EQ(2, e.job);
	EXPECT_EQ(20, e.point);
	EXPECT_EQ(1, e.failed);
	EXPECT_EQ(DRM_SPYRE_FAULT_LOCATED | DRM_SPYRE_FAULT_ADDR_SCRATCHPAD, e.fault_flags);
	EXPECT_EQ(1, e.fault_insn);
	EXPECT_LT(e.fault_core, 32);
	EXPECT_EQ((2u << 20) - 64, e.fault_addr);
	/* reading does not clear; CLEAR returns the record once more */
	ASSERT_EQ(0, queue_error(self->d.fd, self->cq, DRM_SPYRE_QUEUE_ERROR_CLEAR, &e));
	EXPECT_EQ(-EFAULT, e.error);
	EXPECT_EQ(2, e.job);
	ASSERT_EQ(0, queue_error(self->d.fd, self->cq, 0, &e));
	EXPECT_EQ(0, e.error);
	EXPECT_EQ(0, e.job);
	EXPECT_EQ(0, e.failed);
	/* other queues saw no failure */
	ASSERT_EQ(0, queue_error(self->d.fd, self->dq, 0, &e));
	EXPECT_EQ(0, e.error);
}

/*
 * A job depending on a failed job never runs on its bad data: its fence
 * signals (never hangs) carrying the failed job's error. Both queues
 * record their failure: the launch with where the card stopped (a device
 * address past its slot), the dependent without a location.
 */
TEST_F(fence, dependent_of_failed_job_completes)
{
	struct drm_spyre_bo_range arg = { .handle = self->dev, .size = 4096 };
	struct drm_spyre_sync bad = { 0 }, done = { 0 };
	struct drm_spyre_queue_error e;
	struct drm_spyre_cmd c;
	uint8_t prog[256];
	size_t plen = sp_prog_load_at(prog, 1 << 20, 128);
	uint32_t pbo;
	int st;

	ASSERT_EQ(0, sp_prog_upload(&self->d, self->dq, prog, plen, SP_PAGE, &pbo));
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &bad.handle, false));
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &done.handle, false));
	c = sp_cmd_launch(pbo, 0, plen, 0, 0, 0, &arg, 1);
	ASSERT_EQ(0, sp_submit(self->d.fd, self->cq, &c, 1, NULL, 0, &bad, 1));
	c = sp_cmd_ts(self->host, 0);
	ASSERT_EQ(0, sp_submit(self->d.fd, self->dq2, &c, 1, &bad, 1, &done, 1));
	ASSERT_EQ(0, sp_syncobj_wait(self->d.fd, done.handle, 0, SP_WAIT_NS));
	EXPECT_EQ(-EFAULT, sp_fence_status(self->d.fd, bad.handle, 0));
	st = sp_fence_status(self->d.fd, done.handle, 0);
	EXPECT_EQ(-EFAULT, st);

	ASSERT_EQ(0, queue_error(self->d.fd, self->dq2, 0, &e));
	EXPECT_EQ(-EFAULT, e.error);
	EXPECT_EQ(1, e.job);
	EXPECT_EQ(0, e.point);	/* a binary out-sync */
	EXPECT_EQ(0, e.fault_flags & DRM_SPYRE_FAULT_LOCATED);
	ASSERT_EQ(0, queue_error(self->d.fd, self->cq, 0, &e));
	EXPECT_EQ(-EFAULT, e.error);
	EXPECT_EQ(DRM_SPYRE_FAULT_LOCATED | DRM_SPYRE_FAULT_ADDR_DEVICE, e.fault_flags);
	EXPECT_EQ(0, e.fault_insn);
}

TEST_F(fence, queue_error_bad_input)
{
	struct drm_spyre_queue_error e;

	EXPECT_EQ(-ENOENT, queue_error(self->d.fd, 0, 0, &e));
	EXPECT_EQ(-ENOENT, queue_error(self->d.fd, self->cq + 1000, 0, &e));
	EXPECT_EQ(-EINVAL, queue_error(self->d.fd, self->cq, 0x2, &e));
	EXPECT_EQ(-EINVAL, queue_error(self->d.fd, self->cq, ~0u, &e));
}

TEST_HARNESS_MAIN
