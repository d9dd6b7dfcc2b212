// SPDX-License-Identifier: GPL-2.0
/*
 * Spyre accel selftests: DRM_IOCTL_SPYRE_SUBMIT. Validation of every field
 * and command with the exact errno, "a failing submit has no effect",
 * ordering within a queue, independence across queues, transfer/compute
 * overlap in device time, big submissions and full rings.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "spyre_prog.h"
#include "spyre_util.h"

#define BO_SIZE		(64 * 1024)

FIXTURE(submit) {
	struct sp_dev d;
	uint32_t cq, dq;	/* compute and DMA queues */
	uint32_t dev, dev2;	/* device BOs of BO_SIZE */
	uint32_t host;		/* host BO of BO_SIZE, mapped at map */
	uint8_t *map;
	uint32_t out;		/* a binary syncobj */
};

FIXTURE_SETUP(submit)
{
	SP_OPEN_OR_SKIP(&self->d, 0);
	ASSERT_EQ(0, sp_queue_create(self->d.fd, DRM_SPYRE_ENGINE_COMPUTE,
				     DRM_SPYRE_PRIORITY_NORMAL, &self->cq));
	ASSERT_EQ(0, sp_queue_create(self->d.fd, DRM_SPYRE_ENGINE_DMA,
				     DRM_SPYRE_PRIORITY_NORMAL, &self->dq));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, BO_SIZE, DRM_SPYRE_PLACEMENT_DEVICE, &self->dev));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, BO_SIZE, DRM_SPYRE_PLACEMENT_DEVICE, &self->dev2));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, BO_SIZE, DRM_SPYRE_PLACEMENT_HOST, &self->host));
	self->map = sp_bo_mmap(self->d.fd, self->host, BO_SIZE);
	ASSERT_NE(NULL, self->map);
	memset(self->map, 0, BO_SIZE);
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &self->out, false));
}

FIXTURE_TEARDOWN(submit)
{
	sp_dev_close(&self->d);
}

/* Submit one command on @q; 0 or -errno of the ioctl. */
static int submit1(FIXTURE_DATA(submit) *self, uint32_t q, struct drm_spyre_cmd cmd)
{
	struct drm_spyre_sync out = { .handle = self->out };

	return sp_submit(self->d.fd, q, &cmd, 1, NULL, 0, &out, 1);
}

/* A NOP job and an empty job both run and signal their out-syncobj. */
TEST_F(submit, nop_and_empty_jobs)
{
	struct drm_spyre_cmd nop = sp_cmd_nop();

	EXPECT_EQ(0, sp_run(self->d.fd, self->cq, &nop, 1));
	EXPECT_EQ(0, sp_run(self->d.fd, self->dq, &nop, 1));
	EXPECT_EQ(0, sp_run(self->d.fd, self->cq, NULL, 0));
	EXPECT_EQ(0, sp_run(self->d.fd, self->dq, NULL, 0));
}

TEST_F(submit, bad_flags_pad)
{
	struct drm_spyre_cmd nop = sp_cmd_nop();
	struct drm_spyre_submit s = {
		.queue_id = self->dq, .cmds = (uintptr_t)&nop, .cmd_count = 1,
		.cmd_stride = sizeof(nop),
	};

	s.flags = 1;
	EXPECT_EQ(-EINVAL, sp_ioctl(self->d.fd, DRM_IOCTL_SPYRE_SUBMIT, &s));
	s.flags = 0;
	s.pad = 1;
	EXPECT_EQ(-EINVAL, sp_ioctl(self->d.fd, DRM_IOCTL_SPYRE_SUBMIT, &s));
	s.pad = 0;
	EXPECT_EQ(0, sp_ioctl(self->d.fd, DRM_IOCTL_SPYRE_SUBMIT, &s));
}

TEST_F(submit, unknown_queue)
{
	EXPECT_EQ(-ENOENT, sp_submit(self->d.fd, 0, NULL, 0, NULL, 0, NULL, 0));
	EXPECT_EQ(-ENOENT, sp_submit(self->d.fd, self->cq + self->dq + 1000, NULL, 0,
				     NULL, 0, NULL, 0));
}

/* Unknown command types, command flags and stray bytes in the union. */
TEST_F(submit, bad_command_header)
{
	struct drm_spyre_cmd c = sp_cmd_nop();

	c.type = DRM_SPYRE_CMD_TIMESTAMP + 1;
	EXPECT_EQ(-EINVAL, submit1(self, self->cq, c));
	c.type = ~0u;
	EXPECT_EQ(-EINVAL, submit1(self, self->cq, c));
	c = sp_cmd_nop();
	c.flags = 1;
	EXPECT_EQ(-EINVAL, submit1(self, self->cq, c));
	c = sp_cmd_nop();
	c.rsvd[6] = 1;
	EXPECT_EQ(-EINVAL, submit1(self, self->cq, c));
	c = sp_cmd_fill(self->dev, 0, 4, 0);
	c.rsvd[6] = 1;		/* past struct drm_spyre_cmd_fill */
	EXPECT_EQ(-EINVAL, submit1(self, self->dq, c));
	c = sp_cmd_ts(self->dev, 0);
	c.timestamp.pad = 1;
	EXPECT_EQ(-EINVAL, submit1(self, self->dq, c));
}

/* cmd_stride: too small or above 4096 -EINVAL; larger with zero tail fine, else -E2BIG. */
TEST_F(submit, cmd_stride)
{
	struct drm_spyre_submit s = { .queue_id = self->dq, .cmd_count = 2 };
	uint8_t buf[2 * 128];
	struct drm_spyre_cmd nop = sp_cmd_nop();

	memset(buf, 0, sizeof(buf));
	memcpy(buf, &nop, sizeof(nop));
	memcpy(buf + 128, &nop, sizeof(nop));
	s.cmds = (uintptr_t)buf;
	s.cmd_stride = 32;
	EXPECT_EQ(-EINVAL, sp_ioctl(self->d.fd, DRM_IOCTL_SPYRE_SUBMIT, &s));
	s.cmd_stride = 0;
	EXPECT_EQ(-EINVAL, sp_ioctl(self->d.fd, DRM_IOCTL_SPYRE_SUBMIT, &s));
	s.cmd_stride = 4096 + 64;	/* strides above 4096 are refused */
	s.cmd_count = 1;
	EXPECT_EQ(-EINVAL, sp_ioctl(self->d.fd, DRM_IOCTL_SPYRE_SUBMIT, &s));
	s.cmd_count = 2;
	s.cmd_stride = 128;
	EXPECT_EQ(0, sp_ioctl(self->d.fd, DRM_IOCTL_SPYRE_SUBMIT, &s));
	buf[128 + 100] = 1;	/* unknown bytes of the second element */
	EXPECT_EQ(-E2BIG, sp_ioctl(self->d.fd, DRM_IOCTL_SPYRE_SUBMIT, &s));
	/* no commands: the stride may be anything */
	s.cmd_count = 0;
	s.cmd_stride = 0;
	EXPECT_EQ(0, sp_ioctl(self->d.fd, DRM_IOCTL_SPYRE_SUBMIT, &s));
}

TEST_F(submit, too_many_commands)
{
	uint32_t max = self->d.p[DRM_SPYRE_PARAM_MAX_CMDS];
	struct drm_spyre_cmd *cmds = calloc(max + 1, sizeof(*cmds));

	ASSERT_NE(NULL, cmds);
	EXPECT_EQ(-E2BIG, sp_submit(self->d.fd, self->dq, cmds, max + 1, NULL, 0, NULL, 0));
	EXPECT_EQ(-E2BIG, sp_submit(self->d.fd, self->dq, cmds, ~0u, NULL, 0, NULL, 0));
	free(cmds);
}

TEST_F(submit, bad_user_pointers)
{
	struct drm_spyre_sync sync = { .handle = self->out };

	EXPECT_EQ(-EFAULT, sp_submit(self->d.fd, self->dq, (void *)8, 1, NULL, 0, NULL, 0));
	EXPECT_EQ(-EFAULT, sp_submit(self->d.fd, self->dq, NULL, 0, (void *)8, 1, NULL, 0));
	EXPECT_EQ(-EFAULT, sp_submit(self->d.fd, self->dq, NULL, 0, NULL, 0, (void *)8, 1));
	EXPECT_EQ(0, sp_submit(self->d.fd, self->dq, NULL, 0, NULL, 0, &sync, 1));
}

/* COPY: handles, ranges, overflow, and the forbidden host-to-host direction. */
TEST_F(submit, copy_bad_input)
{
	uint32_t h2;

	EXPECT_EQ(-ENOENT, submit1(self, self->dq, sp_cmd_copy(0x999, 0, self->dev, 0, 4)));
	EXPECT_EQ(-ENOENT, submit1(self, self->dq, sp_cmd_copy(self->dev, 0, 0x999, 0, 4)));
	EXPECT_EQ(-ENOENT, submit1(self, self->dq, sp_cmd_copy(0, 0, self->dev, 0, 4)));
	/* out of range on either side */
	EXPECT_EQ(-EINVAL, submit1(self, self->dq,
				   sp_cmd_copy(self->dev, 1, self->dev2, 0, BO_SIZE)));
	EXPECT_EQ(-EINVAL, submit1(self, self->dq,
				   sp_cmd_copy(self->dev, 0, self->dev2, 1, BO_SIZE)));
	EXPECT_EQ(-EINVAL, submit1(self, self->dq,
				   sp_cmd_copy(self->dev, BO_SIZE + 1, self->dev2, 0, 0)));
	EXPECT_EQ(-EINVAL, submit1(self, self->dq,
				   sp_cmd_copy(self->dev, 0, self->dev2, 0, BO_SIZE + 1)));
	/* offset + size wraps around */
	EXPECT_EQ(-EINVAL, submit1(self, self->dq,
				   sp_cmd_copy(self->dev, ~0ull - 1, self->dev2, 0, 4)));
	EXPECT_EQ(-EINVAL, submit1(self, self->dq,
				   sp_cmd_copy(self->dev, 8, self->dev2, 0, ~0ull - 3)));
	/* host to host */
	ASSERT_EQ(0, sp_bo_create(self->d.fd, BO_SIZE, DRM_SPYRE_PLACEMENT_HOST, &h2));
	EXPECT_EQ(-EINVAL, submit1(self, self->dq, sp_cmd_copy(self->host, 0, h2, 0, 4)));
	/* the whole BO, and an empty copy at its very end, are fine */
	EXPECT_EQ(0, submit1(self, self->dq, sp_cmd_copy(self->dev, 0, self->dev2, 0, BO_SIZE)));
	EXPECT_EQ(0, submit1(self, self->dq,
			     sp_cmd_copy(self->dev, BO_SIZE, self->host, BO_SIZE, 0)));
	EXPECT_EQ(0, sp_syncobj_wait(self->d.fd, self->out, 0, SP_WAIT_NS));
}

/* FILL: device BOs only, 4-byte alignment of offset and size, in range. */
TEST_F(submit, fill_bad_input)
{
	EXPECT_EQ(-ENOENT, submit1(self, self->dq, sp_cmd_fill(0x999, 0, 4, 0)));
	EXPECT_EQ(-EINVAL, submit1(self, self->dq, sp_cmd_fill(self->host, 0, 4, 0)));
	EXPECT_EQ(-EINVAL, submit1(self, self->dq, sp_cmd_fill(self->dev, 2, 4, 0)));
	EXPECT_EQ(-EINVAL, submit1(self, self->dq, sp_cmd_fill(self->dev, 0, 6, 0)));
	EXPECT_EQ(-EINVAL, submit1(self, self->dq, sp_cmd_fill(self->dev, 4, BO_SIZE, 0)));
	EXPECT_EQ(-EINVAL, submit1(self, self->dq, sp_cmd_fill(self->dev, ~0ull - 3, 8, 0)));
	EXPECT_EQ(0, submit1(self, self->dq, sp_cmd_fill(self->dev, BO_SIZE - 4, 4, 0)));
}

/* TIMESTAMP: 8-byte aligned, 8 bytes inside the BO; either placement. */
TEST_F(submit, timestamp_bad_input)
{
	EXPECT_EQ(-ENOENT, submit1(self, self->dq, sp_cmd_ts(0x999, 0)));
	EXPECT_EQ(-EINVAL, submit1(self, self->dq, sp_cmd_ts(self->host, 4)));
	EXPECT_EQ(-EINVAL, submit1(self, self->dq, sp_cmd_ts(self->host, BO_SIZE)));
	EXPECT_EQ(-EINVAL, submit1(self, self->dq, sp_cmd_ts(self->host, ~0ull - 7)));
	EXPECT_EQ(0, submit1(self, self->dq, sp_cmd_ts(self->host, BO_SIZE - 8)));
	EXPECT_EQ(0, submit1(self, self->dq, sp_cmd_ts(self->dev, BO_SIZE - 8)));
	ASSERT_EQ(0, sp_syncobj_wait(self->d.fd, self->out, 0, SP_WAIT_NS));
	EXPECT_NE(0, *(uint64_t *)(self->map + BO_SIZE - 8));
}

/* LAUNCH field checks that need no valid program. */
TEST_F(submit, launch_bad_input)
{
	struct drm_spyre_bo_range args[65];
	uint64_t max_args = self->d.p[DRM_SPYRE_PARAM_MAX_ARGS];
	struct drm_spyre_cmd c;
	int i;

	memset(args, 0, sizeof(args));
	for (i = 0; i < 65; i++) {
		args[i].handle = self->dev2;
		args[i].size = 256;
	}
	ASSERT_LE(max_args, 64);
	/* compute queues only */
	c = sp_cmd_launch(self->dev, 0, 4096, 0, 0, 0, args, 1);
	EXPECT_EQ(-EINVAL, submit1(self, self->dq, c));
	/* program: non-zero size, in range, device placement, real handle */
	c = sp_cmd_launch(self->dev, 0, 0, 0, 0, 0, args, 1);
	EXPECT_EQ(-EINVAL, submit1(self, self->cq, c));
	c = sp_cmd_launch(self->dev, 4096, BO_SIZE, 0, 0, 0, args, 1);
	EXPECT_EQ(-EINVAL, submit1(self, self->cq, c));
	c = sp_cmd_launch(self->host, 0, 4096, 0, 0, 0, args, 1);
	EXPECT_EQ(-EINVAL, submit1(self, self->cq, c));
	c = sp_cmd_launch(0x999, 0, 4096, 0, 0, 0, args, 1);
	EXPECT_EQ(-ENOENT, submit1(self, self->cq, c));
	/* workspace: none means offset and size zero too */
	c = sp_cmd_launch(self->dev, 0, 4096, 0, 0, 4096, args, 1);
	EXPECT_EQ(-EINVAL, submit1(self, self->cq, c));
	c = sp_cmd_launch(self->dev, 0, 4096, self->dev2, BO_SIZE - 8, 16, args, 1);
	EXPECT_EQ(-EINVAL, submit1(self, self->cq, c));
	c = sp_cmd_launch(self->dev, 0, 4096, self->host, 0, 16, args, 1);
	EXPECT_EQ(-EINVAL, submit1(self, self->cq, c));
	/* argument slots: count, stride, pad, range, placement, handle */
	c = sp_cmd_launch(self->dev, 0, 4096, 0, 0, 0, args, max_args + 1);
	EXPECT_EQ(-E2BIG, submit1(self, self->cq, c));
	c = sp_cmd_launch(self->dev, 0, 4096, 0, 0, 0, args, 1);
	c.launch.args_stride = 8;
	EXPECT_EQ(-EINVAL, submit1(self, self->cq, c));
	c.launch.args_stride = 4096 + 32;
	EXPECT_EQ(-EINVAL, submit1(self, self->cq, c));
	args[0].pad = 1;
	c = sp_cmd_launch(self->dev, 0, 4096, 0, 0, 0, args, 1);
	EXPECT_EQ(-EINVAL, submit1(self, self->cq, c));
	args[0].pad = 0;
	args[0].offset = BO_SIZE - 128;
	EXPECT_EQ(-EINVAL, submit1(self, self->cq, c));
	args[0].offset = ~0ull - 64;
	EXPECT_EQ(-EINVAL, submit1(self, self->cq, c));
	args[0].offset = 0;
	args[0].handle = self->host;
	EXPECT_EQ(-EINVAL, submit1(self, self->cq, c));
	args[0].handle = 0x999;
	EXPECT_EQ(-ENOENT, submit1(self, self->cq, c));
	args[0].handle = self->dev2;
	c.launch.args = 8;
	EXPECT_EQ(-EFAULT, submit1(self, self->cq, c));
}

/*
 * Everything is checked before anything is queued: a valid FILL followed
 * by an invalid command leaves the BO and the out-syncobj untouched.
 */
TEST_F(submit, failed_submit_has_no_effect)
{
	struct drm_spyre_cmd cmds[3];
	struct drm_spyre_sync out = { .handle = self->out };
	uint8_t buf[64];

	cmds[0] = sp_cmd_fill(self->dev, 0, BO_SIZE, 0);
	ASSERT_EQ(0, sp_run(self->d.fd, self->dq, cmds, 1));
	cmds[0] = sp_cmd_fill(self->dev, 0, BO_SIZE, 0x5a5a5a5a);
	cmds[1] = sp_cmd_copy(self->dev, 0, self->host, 0, 64);
	cmds[2] = sp_cmd_fill(self->dev, 0, BO_SIZE + 4, 1);
	EXPECT_EQ(-EINVAL, sp_submit(self->d.fd, self->dq, cmds, 3, NULL, 0, &out, 1));
	/* the out-syncobj got no fence */
	EXPECT_EQ(-ENOENT, sp_fence_status(self->d.fd, self->out, 0));
	ASSERT_EQ(0, sp_download(&self->d, self->dq, self->dev, 0, buf, sizeof(buf)));
	EXPECT_EQ(0, buf[0]);
	EXPECT_EQ(0, buf[63]);
	EXPECT_EQ(0, self->map[0]);
}

/*
 * Jobs of one queue run in submission order without explicit dependencies:
 * fill A / read / fill B / read leaves A in the first read and B in the
 * second, and timestamps increase.
 */
TEST_F(submit, order_within_queue)
{
	struct drm_spyre_sync out = { .handle = self->out };
	struct drm_spyre_cmd c[2];
	uint32_t *m = (uint32_t *)self->map, i;
	uint64_t *ts = (uint64_t *)(self->map + 32768);

	for (i = 0; i < 16; i++) {
		c[0] = sp_cmd_fill(self->dev, 0, 4096, 0x1000 + i);
		ASSERT_EQ(0, sp_submit(self->d.fd, self->dq, c, 1, NULL, 0, NULL, 0));
		c[0] = sp_cmd_copy(self->dev, 0, self->host, 4096 * i, 4);
		c[1] = sp_cmd_ts(self->host, 32768 + 8 * i);
		ASSERT_EQ(0, sp_submit(self->d.fd, self->dq, c, 2, NULL, 0,
				       i == 15 ? &out : NULL, i == 15));
	}
	ASSERT_EQ(0, sp_syncobj_wait(self->d.fd, self->out, 0, SP_WAIT_NS));
	for (i = 0; i < 16; i++) {
		EXPECT_EQ(0x1000 + i, m[1024 * i]);
		if (i) {
			EXPECT_LT(ts[i - 1], ts[i]);
		}
	}
}

/*
 * Queues are independent: released together by one gate fence, a short job
 * on a second DMA queue runs (in device time) long before a backlog of
 * about 85 ms of host-to-device copies on the first queue has finished.
 */
TEST_F_TIMEOUT(submit, independent_queues, 90)
{
	struct drm_spyre_sync gate = { 0 }, out = { .handle = self->out };
	uint32_t q2, gq, src, big, i, other, n = 256;
	struct drm_spyre_cmd *cmds = calloc(n + 2, sizeof(*cmds));
	uint64_t *ts = (uint64_t *)self->map;

	if (self->d.p[DRM_SPYRE_PARAM_DMA_RINGS] < 2)
		SKIP(return, "one DMA ring: queues share it");
	ASSERT_NE(NULL, cmds);
	ASSERT_LE(n + 2, self->d.p[DRM_SPYRE_PARAM_MAX_CMDS]);
	ASSERT_EQ(0, sp_queue_create(self->d.fd, DRM_SPYRE_ENGINE_DMA,
				     DRM_SPYRE_PRIORITY_NORMAL, &q2));
	ASSERT_EQ(0, sp_queue_create(self->d.fd, DRM_SPYRE_ENGINE_DMA,
				     DRM_SPYRE_PRIORITY_NORMAL, &gq));
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &other, false));
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &gate.handle, false));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, 16 * SP_MiB, DRM_SPYRE_PLACEMENT_HOST, &src));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, 16 * SP_MiB, DRM_SPYRE_PLACEMENT_DEVICE, &big));
	cmds[0] = sp_cmd_fill(big, 0, 16 * SP_MiB, 0);
	ASSERT_EQ(0, sp_submit(self->d.fd, gq, cmds, 1, NULL, 0, &gate, 1));
	/* 16 MiB over PCIe: about 335 us of device time each */
	cmds[0] = sp_cmd_ts(self->host, 0);
	for (i = 1; i <= n; i++)
		cmds[i] = sp_cmd_copy(src, 0, big, 0, 16 * SP_MiB);
	cmds[n + 1] = sp_cmd_ts(self->host, 8);
	ASSERT_EQ(0, sp_submit(self->d.fd, self->dq, cmds, n + 2, &gate, 1, &out, 1));
	cmds[0] = sp_cmd_ts(self->host, 16);
	out.handle = other;
	ASSERT_EQ(0, sp_submit(self->d.fd, q2, cmds, 1, &gate, 1, &out, 1));
	ASSERT_EQ(0, sp_syncobj_wait(self->d.fd, self->out, 0, SP_WAIT_NS));
	ASSERT_EQ(0, sp_syncobj_wait(self->d.fd, other, 0, SP_WAIT_NS));
	TH_LOG("backlog [%llu, %llu] ns, other queue at %llu ns",
	       (unsigned long long)ts[0], (unsigned long long)ts[1],
	       (unsigned long long)ts[2]);
	EXPECT_GE(ts[1] - ts[0], 80ull * 1000 * 1000);
	EXPECT_LT(ts[2], ts[1]);
	free(cmds);
}

/*
 * A transfer overlaps a compute job in device time: the compute queue runs
 * a long program while a DMA queue copies; both wait on one gate fence so
 * they become ready together.
 */
TEST_F_TIMEOUT(submit, transfer_overlaps_compute, 90)
{
	struct drm_spyre_sync gate = { 0 }, out[2] = { { 0 }, { 0 } };
	struct drm_spyre_bo_range arg = { 0 };
	struct drm_spyre_cmd c[3];
	uint32_t prog, src, dst, gq;
	uint8_t pbuf[SPYRE_PROG_HEADER_SIZE + 20 * SPYRE_PROG_INSN_SIZE];
	uint64_t *ts = (uint64_t *)self->map, c0, c1, d0, d1;
	size_t plen;

	plen = sp_prog_busy(pbuf, 20);	/* ~40 ms of device time */
	ASSERT_EQ(0, sp_prog_upload(&self->d, self->dq, pbuf, plen, SP_PAGE, &prog));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, SP_PAGE, DRM_SPYRE_PLACEMENT_DEVICE, &arg.handle));
	arg.size = SP_PAGE;
	ASSERT_EQ(0, sp_bo_create(self->d.fd, 8 * SP_MiB, DRM_SPYRE_PLACEMENT_HOST, &src));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, 8 * SP_MiB, DRM_SPYRE_PLACEMENT_DEVICE, &dst));
	/* the gate: a job on a third queue both others wait for */
	ASSERT_EQ(0, sp_queue_create(self->d.fd, DRM_SPYRE_ENGINE_DMA,
				     DRM_SPYRE_PRIORITY_NORMAL, &gq));
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &gate.handle, false));
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &out[0].handle, false));
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &out[1].handle, false));
	c[0] = sp_cmd_fill(dst, 0, 8 * SP_MiB, 0);
	ASSERT_EQ(0, sp_submit(self->d.fd, gq, c, 1, NULL, 0, &gate, 1));

	c[0] = sp_cmd_ts(self->host, 0);
	c[1] = sp_cmd_launch(prog, 0, plen, 0, 0, 0, &arg, 1);
	c[2] = sp_cmd_ts(self->host, 8);
	ASSERT_EQ(0, sp_submit(self->d.fd, self->cq, c, 3, &gate, 1, &out[0], 1));
	c[0] = sp_cmd_ts(self->host, 16);
	c[1] = sp_cmd_copy(src, 0, dst, 0, 8 * SP_MiB);
	c[2] = sp_cmd_ts(self->host, 24);
	ASSERT_EQ(0, sp_submit(self->d.fd, self->dq, c, 3, &gate, 1, &out[1], 1));
	ASSERT_EQ(0, sp_syncobj_wait(self->d.fd, out[0].handle, 0, SP_WAIT_NS));
	ASSERT_EQ(0, sp_syncobj_wait(self->d.fd, out[1].handle, 0, SP_WAIT_NS));
	EXPECT_EQ(1, sp_fence_status(self->d.fd, out[0].handle, 0));
	EXPECT_EQ(1, sp_fence_status(self->d.fd, out[1].handle, 0));
	c0 = ts[0], c1 = ts[1], d0 = ts[2], d1 = ts[3];
	TH_LOG("compute [%llu, %llu] ns, transfer [%llu, %llu] ns",
	       (unsigned long long)c0, (unsigned long long)c1,
	       (unsigned long long)d0, (unsigned long long)d1);
	EXPECT_LT(c0, c1);
	EXPECT_LT(d0, d1);
	/* the program takes at least its modelled time */
	EXPECT_GE(c1 - c0, 20u * 1000 * 1000);
	/* the intervals overlap */
	EXPECT_LT(d0, c1);
	EXPECT_LT(c0, d1);
}

/* A real computation: y = 2x + 1 on the compute engine. */
TEST_F(submit, launch_computes)
{
	struct drm_spyre_bo_range args[2] = { { 0 }, { 0 } };
	float x[256], y[256];
	uint32_t prog, ws;
	struct drm_spyre_cmd c;
	uint8_t pbuf[512];
	size_t plen;
	int i;

	for (i = 0; i < 256; i++)
		x[i] = i - 100.5f;
	plen = sp_prog_scale(pbuf, 256, 2.0f, 1.0f);
	ASSERT_EQ(0, sp_prog_upload(&self->d, self->dq, pbuf, plen, SP_PAGE, &prog));
	ASSERT_EQ(0, sp_upload(&self->d, self->dq, self->dev, 0, x, sizeof(x)));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, SP_PAGE, DRM_SPYRE_PLACEMENT_DEVICE, &ws));
	args[0].handle = self->dev;
	args[0].size = sizeof(x);
	args[1].handle = self->dev2;
	args[1].offset = 4096;
	args[1].size = sizeof(y);
	c = sp_cmd_launch(prog, 0, plen, ws, 0, SP_PAGE, args, 2);
	ASSERT_EQ(0, sp_run(self->d.fd, self->cq, &c, 1));
	ASSERT_EQ(0, sp_download(&self->d, self->dq, self->dev2, 4096, y, sizeof(y)));
	for (i = 0; i < 256; i++) {
		ASSERT_EQ(2 * x[i] + 1, y[i]);
	}
}

/*
 * A launch binding MAX_ARGS slots runs; the argument array may use a wider
 * stride whose extra bytes are zero (non-zero: -E2BIG).
 */
TEST_F(submit, launch_max_args_and_stride)
{
	struct { struct drm_spyre_bo_range r; uint64_t ext[2]; } wide[64];
	uint32_t max = self->d.p[DRM_SPYRE_PARAM_MAX_ARGS], i, prog;
	struct drm_spyre_bo_range args[65];
	struct drm_spyre_cmd c;
	uint8_t pbuf[256];
	size_t plen;

	ASSERT_LE(max, 64);
	plen = sp_prog_load_at(pbuf, 0, 128);
	ASSERT_EQ(0, sp_prog_upload(&self->d, self->dq, pbuf, plen, SP_PAGE, &prog));
	memset(wide, 0, sizeof(wide));
	for (i = 0; i < max; i++) {
		args[i].handle = i & 1 ? self->dev : self->dev2;
		args[i].pad = 0;
		args[i].offset = 1024 * i;	/* 64 slots in a 64 KiB BO */
		args[i].size = 1024;
		wide[i].r = args[i];
	}
	c = sp_cmd_launch(prog, 0, plen, 0, 0, 0, args, max);
	EXPECT_EQ(0, sp_run(self->d.fd, self->cq, &c, 1));
	c = sp_cmd_launch(prog, 0, plen, 0, 0, 0, &wide[0].r, max);
	c.launch.args_stride = sizeof(wide[0]);
	EXPECT_EQ(0, sp_run(self->d.fd, self->cq, &c, 1));
	wide[max - 1].ext[1] = 1;
	EXPECT_EQ(-E2BIG, submit1(self, self->cq, c));
	/* one slot more than the card binds */
	args[max] = args[0];
	c = sp_cmd_launch(prog, 0, plen, 0, 0, 0, args, max + 1);
	EXPECT_EQ(-E2BIG, submit1(self, self->cq, c));
}

/*
 * Launches of more than 16 slots (card interface 1.7) take more of the
 * ring than MAX_CMDS budgets per command: a submission of MAX_CMDS such
 * launches is refused whole, one that fits the budget runs.
 */
TEST_F(submit, wide_launches_count_against_the_ring)
{
	uint32_t max = self->d.p[DRM_SPYRE_PARAM_MAX_ARGS];
	uint32_t ncmds = self->d.p[DRM_SPYRE_PARAM_MAX_CMDS];
	struct drm_spyre_bo_range args[64];
	struct drm_spyre_cmd *c;
	uint32_t i, prog, fit;
	uint8_t pbuf[256];
	size_t plen;

	if (max <= 16)
		SKIP(return, "a card before interface 1.7 binds 16 slots");
	plen = sp_prog_load_at(pbuf, 0, 128);
	ASSERT_EQ(0, sp_prog_upload(&self->d, self->dq, pbuf, plen, SP_PAGE, &prog));
	for (i = 0; i < max; i++)
		args[i] = (struct drm_spyre_bo_range){ .handle = self->dev, .offset = 1024 * i,
						       .size = 1024 };
	c = calloc(ncmds, sizeof(*c));
	ASSERT_NE(NULL, c);
	for (i = 0; i < ncmds; i++)
		c[i] = sp_cmd_launch(prog, 0, plen, 0, 0, 0, args, max);
	EXPECT_EQ(-E2BIG, sp_submit(self->d.fd, self->cq, c, ncmds, NULL, 0, NULL, 0));
	/* the budget: 7 descriptors per command; a 64-slot launch takes 23 */
	fit = ncmds * 7 / (1 + (max + 2) / 3);
	EXPECT_EQ(0, sp_run(self->d.fd, self->cq, c, fit));
	free(c);
}

/*
 * MAX_CMDS commands in one submission (more descriptors than a ring has
 * entries) all run, in order.
 */
TEST_F(submit, max_commands_one_submit)
{
	uint32_t max = self->d.p[DRM_SPYRE_PARAM_MAX_CMDS], i;
	struct drm_spyre_cmd *cmds = calloc(max, sizeof(*cmds));
	uint64_t *ts = (uint64_t *)self->map;

	ASSERT_NE(NULL, cmds);
	ASSERT_LE(max * 8, BO_SIZE);
	for (i = 0; i < max; i++)
		cmds[i] = sp_cmd_ts(self->host, 8 * i);
	ASSERT_EQ(0, sp_run(self->d.fd, self->dq, cmds, max));
	for (i = 1; i < max; i++) {
		ASSERT_LE(ts[i - 1], ts[i]);
	}
	EXPECT_NE(0, ts[max - 1]);
	free(cmds);
}

/*
 * Full rings are back-pressure, not failure: many more jobs than the ring
 * has entries are all accepted and complete in order.
 */
TEST_F_TIMEOUT(submit, full_ring_backpressure, 120)
{
	uint32_t n = self->d.p[DRM_SPYRE_PARAM_RING_ENTRIES] * 4, i;
	struct drm_spyre_sync out = { .handle = self->out };
	uint64_t *ts = (uint64_t *)self->map;
	struct drm_spyre_cmd c[4];

	if (n > BO_SIZE / 8)
		n = BO_SIZE / 8;
	for (i = 0; i < n; i++) {
		c[0] = sp_cmd_fill(self->dev, 0, BO_SIZE, i);
		c[1] = sp_cmd_nop();
		c[2] = sp_cmd_nop();
		c[3] = sp_cmd_ts(self->host, 8 * i);
		ASSERT_EQ(0, sp_submit(self->d.fd, self->dq, c, 4, NULL, 0,
				       i == n - 1 ? &out : NULL, i == n - 1));
	}
	ASSERT_EQ(0, sp_syncobj_wait(self->d.fd, self->out, 0, SP_WAIT_NS));
	for (i = 1; i < n; i++) {
		ASSERT_LT(ts[i - 1], ts[i]);
	}
}

TEST_HARNESS_MAIN
