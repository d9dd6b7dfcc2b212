// SPDX-License-Identifier: GPL-2.0
/*
 * Spyre accel selftests: COPY and LAUNCH in a file's card address space
 * (DRM_SPYRE_SUBMIT_VA). Copies in every direction and a program land
 * where the mappings say; crafted programs and DMA aimed outside the
 * file's mappings (at an address another file has mapped in its own
 * space, at a page without EXEC, at the wrong kind of memory) fail with
 * -EFAULT and the address, while the other file's data and jobs stay
 * right; malformed commands get their errno and queue nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "spyre_prog.h"
#include "spyre_util.h"

#define XVA	0x200000ull	/* device BO x: input */
#define YVA	0x400000ull	/* device BO y: output */
#define PVA	0x600000ull	/* the program, EXEC */
#define HVA	0x800000ull	/* a host BO */
#define HOLE	0xa00000ull	/* never mapped in the test's own file */
#define N	256

static int map(int fd, uint32_t flags, uint32_t handle, uint64_t addr, uint64_t range)
{
	return sp_vm_bind(fd, DRM_SPYRE_VM_BIND_OP_MAP, flags, handle, 0, addr, range);
}

/* Submit one VA job and wait: its fence status, or the submit's error. */
static int va_run(int fd, uint32_t q, const struct drm_spyre_cmd *cmds, uint32_t n)
{
	struct drm_spyre_sync out = { 0 };
	struct drm_spyre_submit s = {
		.queue_id = q, .flags = DRM_SPYRE_SUBMIT_VA,
		.cmds = (uintptr_t)cmds, .cmd_count = n, .cmd_stride = sizeof(*cmds),
		.sync_stride = sizeof(out), .out_sync_count = 1,
	};
	int ret;

	ret = sp_syncobj_create(fd, &out.handle, false);
	if (ret)
		return ret;
	s.out_syncs = (uintptr_t)&out;
	ret = sp_ioctl(fd, DRM_IOCTL_SPYRE_SUBMIT, &s);
	if (!ret)
		ret = sp_syncobj_wait(fd, out.handle, 0, SP_WAIT_NS);
	if (!ret) {
		ret = sp_fence_status(fd, out.handle, 0);
		ret = ret == 1 ? 0 : ret == 0 ? -EINPROGRESS : ret;
	}
	sp_syncobj_destroy(fd, out.handle);
	return ret;
}

static struct drm_spyre_cmd vcopy(uint32_t flags, uint64_t src, uint64_t dst, uint64_t size)
{
	struct drm_spyre_cmd c = sp_cmd_copy(0, src, 0, dst, size);

	c.flags = flags;
	return c;
}

static void expect_fault(struct __test_metadata *_metadata, int fd, uint32_t q, uint64_t addr)
{
	struct drm_spyre_queue_error e = { .queue_id = q, .flags = DRM_SPYRE_QUEUE_ERROR_CLEAR };

	ASSERT_EQ(0, sp_ioctl(fd, DRM_IOCTL_SPYRE_QUEUE_ERROR, &e));
	EXPECT_EQ(-EFAULT, e.error);
	EXPECT_TRUE(e.fault_flags & DRM_SPYRE_FAULT_ADDR_VIRTUAL);
	EXPECT_EQ(addr, e.fault_addr);
}

FIXTURE(vl) {
	struct sp_dev d;
	uint32_t cq, dq;	/* compute and DMA queues */
	uint32_t x, y, prog, host;
	float *hmem;		/* the host BO, mapped */
	size_t plen;
};

FIXTURE_SETUP(vl)
{
	uint8_t pbuf[SP_PAGE] = { 0 };
	int fd;

	SP_OPEN_OR_SKIP(&self->d, 0);
	if (self->d.p[DRM_SPYRE_PARAM_HW_VERSION] < ((1u << 16) | 10))
		SKIP(return, "card interface older than 1.10: no MMU");
	fd = self->d.fd;
	ASSERT_EQ(0, sp_queue_create(fd, DRM_SPYRE_ENGINE_COMPUTE, DRM_SPYRE_PRIORITY_NORMAL,
				     &self->cq));
	ASSERT_EQ(0, sp_queue_create(fd, DRM_SPYRE_ENGINE_DMA, DRM_SPYRE_PRIORITY_NORMAL,
				     &self->dq));
	self->plen = sp_prog_scale(pbuf, N, 2.0f, 1.0f);
	ASSERT_EQ(0, sp_prog_upload(&self->d, self->dq, pbuf, self->plen, SP_PAGE, &self->prog));
	ASSERT_EQ(0, sp_bo_create(fd, SP_PAGE, DRM_SPYRE_PLACEMENT_DEVICE, &self->x));
	ASSERT_EQ(0, sp_bo_create(fd, SP_PAGE, DRM_SPYRE_PLACEMENT_DEVICE, &self->y));
	ASSERT_EQ(0, sp_bo_create(fd, 2 * SP_PAGE, DRM_SPYRE_PLACEMENT_HOST, &self->host));
	self->hmem = sp_bo_mmap(fd, self->host, 2 * SP_PAGE);
	ASSERT_NE(NULL, self->hmem);
	memset(self->hmem, 0, 2 * SP_PAGE);
	ASSERT_EQ(0, map(fd, 0, self->x, XVA, SP_PAGE));
	ASSERT_EQ(0, map(fd, 0, self->y, YVA, SP_PAGE));
	ASSERT_EQ(0, map(fd, DRM_SPYRE_VM_BIND_EXEC | DRM_SPYRE_VM_BIND_READ_ONLY, self->prog,
			 PVA, SP_PAGE));
	ASSERT_EQ(0, map(fd, 0, self->host, HVA, 2 * SP_PAGE));
}

FIXTURE_TEARDOWN(vl)
{
	if (self->hmem)
		munmap(self->hmem, 2 * SP_PAGE);
	sp_dev_close(&self->d);
}

/* x from host memory to the card, y = 2x + 1, y back to host memory. */
TEST_F(vl, copy_launch_copy)
{
	struct drm_spyre_bo_range args[2] = {
		{ .offset = XVA, .size = N * 4 }, { .offset = YVA, .size = N * 4 },
	};
	struct drm_spyre_cmd c;
	int fd = self->d.fd, i;

	for (i = 0; i < N; i++)
		self->hmem[i] = (float)i - 100.0f;
	c = vcopy(DRM_SPYRE_COPY_SRC_HOST, HVA, XVA, N * 4);
	ASSERT_EQ(0, va_run(fd, self->dq, &c, 1));
	c = sp_cmd_launch(0, PVA, self->plen, 0, 0, 0, args, 2);
	ASSERT_EQ(0, va_run(fd, self->cq, &c, 1));
	c = vcopy(DRM_SPYRE_COPY_DST_HOST, YVA, HVA + SP_PAGE, N * 4);
	ASSERT_EQ(0, va_run(fd, self->dq, &c, 1));
	for (i = 0; i < N; i++)
		ASSERT_EQ(2.0f * ((float)i - 100.0f) + 1.0f, self->hmem[1024 + i]);
	/* D2D: y to x, checked through the handle path. */
	c = vcopy(0, YVA, XVA + 2048, N * 4);
	ASSERT_EQ(0, va_run(fd, self->dq, &c, 1));
	ASSERT_EQ(0, sp_download(&self->d, self->dq, self->x, 2048, self->hmem, N * 4));
	for (i = 0; i < N; i++)
		ASSERT_EQ(2.0f * ((float)i - 100.0f) + 1.0f, self->hmem[i]);
}

/*
 * A program whose output slot is an address another file has mapped (in
 * its own space) faults at that address; the other file's BO stays as it
 * was and its own jobs run meanwhile.
 */
TEST_F(vl, launch_aimed_at_other_file)
{
	struct drm_spyre_bo_range args[2] = {
		{ .offset = XVA, .size = N * 4 }, { .offset = HOLE + 512, .size = N * 4 },
	};
	uint32_t q2, h2, buf[SP_PAGE / 4];
	struct drm_spyre_cmd c;
	struct sp_dev other;
	unsigned int i;

	ASSERT_EQ(0, sp_dev_reopen(&self->d, &other));
	ASSERT_EQ(0, sp_queue_create(other.fd, DRM_SPYRE_ENGINE_DMA,
				     DRM_SPYRE_PRIORITY_NORMAL, &q2));
	ASSERT_EQ(0, sp_bo_create(other.fd, SP_PAGE, DRM_SPYRE_PLACEMENT_DEVICE, &h2));
	ASSERT_EQ(0, map(other.fd, 0, h2, HOLE, SP_PAGE));
	c = sp_cmd_fill(0, HOLE, SP_PAGE, 0x5a5a5a5a);
	ASSERT_EQ(0, va_run(other.fd, q2, &c, 1));

	c = sp_cmd_launch(0, PVA, self->plen, 0, 0, 0, args, 2);
	EXPECT_EQ(-EFAULT, va_run(self->d.fd, self->cq, &c, 1));
	expect_fault(_metadata, self->d.fd, self->cq, HOLE + 512);
	/* A DMA aimed there too (the space is stopped: it fails at once). */
	c = vcopy(0, XVA, HOLE, 64);
	EXPECT_EQ(-EFAULT, va_run(self->d.fd, self->dq, &c, 1));

	c = sp_cmd_fill(0, HOLE + 2048, 2048, 0x12345678);
	ASSERT_EQ(0, va_run(other.fd, q2, &c, 1));
	ASSERT_EQ(0, sp_download(&other, q2, h2, 0, buf, SP_PAGE));
	for (i = 0; i < SP_PAGE / 4; i++)
		ASSERT_EQ(i < 512 ? 0x5a5a5a5au : 0x12345678u, buf[i]);
	sp_dev_close(&other);
}

/* Each process's data and program VAs; the other process maps nothing there. */
#define PP_DATA(role)	(0x10000000ull * ((role) + 1))
#define PP_PROG(role)	(PP_DATA(role) + 0x4000000ull)
#define PP_JUNK		0x40000000ull	/* binds that resume a stopped space */
#define PP_ROUNDS	6
#define PP_PATTERN(role) (0x5e5e0000u + (role))

/* The fault the queue's last job reported (cleared), or a negative errno. */
static int64_t queue_fault(int fd, uint32_t q, int *error)
{
	struct drm_spyre_queue_error e = { .queue_id = q, .flags = DRM_SPYRE_QUEUE_ERROR_CLEAR };
	int ret = sp_ioctl(fd, DRM_IOCTL_SPYRE_QUEUE_ERROR, &e);

	*error = ret ? ret : e.error;
	if (ret || !(e.fault_flags & DRM_SPYRE_FAULT_ADDR_VIRTUAL))
		return -1;
	return (int64_t)e.fault_addr;
}

/*
 * One of the two processes of vl.two_processes_isolated: the kernel-ring
 * (DRM_SPYRE_SUBMIT_VA) form of uq.two_processes_isolated. Each round it
 * aims, with the other process, a copy, a program storing, or a program
 * fetched at the other's VAs; the job fails with -EFAULT and exactly its
 * own address.
 */
static int vl_pair_child(int role, struct sp_pair *pair, void *arg)
{
	struct drm_spyre_bo_range args[1] = { { .size = SP_PAGE } };
	uint32_t cq, dq, data, prog, junk, buf[SP_PAGE / 4];
	uint64_t other = PP_DATA(!role), target = 0;
	uint8_t pbuf[SP_PAGE] = { 0 };
	struct drm_spyre_cmd c;
	int bad = 0, k, ret, err = 0, fd;
	struct sp_dev d;
	int64_t fault;
	size_t plen, i;

	ret = sp_dev_open(&d, 0);
	SP_CHILD_CHECK(role, bad, !ret, "open: %d", ret);
	if (bad)
		return bad;
	fd = d.fd;
	plen = sp_prog_store_at(pbuf, 0, 256);
	ret = sp_queue_create(fd, DRM_SPYRE_ENGINE_COMPUTE, DRM_SPYRE_PRIORITY_NORMAL, &cq);
	ret = ret ?: sp_queue_create(fd, DRM_SPYRE_ENGINE_DMA, DRM_SPYRE_PRIORITY_NORMAL, &dq);
	ret = ret ?: sp_prog_upload(&d, dq, pbuf, plen, SP_PAGE, &prog);
	ret = ret ?: sp_bo_create(fd, 4 * SP_PAGE, DRM_SPYRE_PLACEMENT_DEVICE, &data);
	ret = ret ?: sp_bo_create(fd, SP_PAGE, DRM_SPYRE_PLACEMENT_DEVICE, &junk);
	ret = ret ?: map(fd, 0, data, PP_DATA(role), 4 * SP_PAGE);
	ret = ret ?: map(fd, DRM_SPYRE_VM_BIND_EXEC | DRM_SPYRE_VM_BIND_READ_ONLY, prog,
			 PP_PROG(role), SP_PAGE);
	c = sp_cmd_fill(0, PP_DATA(role), 4 * SP_PAGE, PP_PATTERN(role));
	ret = ret ?: va_run(fd, dq, &c, 1);
	SP_CHILD_CHECK(role, bad, !ret, "set-up: %d", ret);

	for (k = 0; k < PP_ROUNDS; k++) {
		if (!sp_pair_barrier(pair, k + 1)) {
			SP_CHILD_CHECK(role, bad, false, "round %d: the other process never came (gone or stuck)", k);
			break;
		}
		switch (k % 3) {
		case 0:		/* a copy into the other's data */
			target = other + k * 256 + 64 * (role + 1);
			c = vcopy(0, PP_DATA(role), target, 256);
			ret = va_run(fd, dq, &c, 1);
			fault = queue_fault(fd, dq, &err);
			break;
		case 1:		/* a program storing into it */
			target = other + SP_PAGE + k * 256;
			args[0].offset = target;
			c = sp_cmd_launch(0, PP_PROG(role), plen, 0, 0, 0, args, 1);
			ret = va_run(fd, cq, &c, 1);
			fault = queue_fault(fd, cq, &err);
			break;
		default:	/* a program fetched from the other's program VA */
			target = PP_PROG(!role);
			args[0].offset = PP_DATA(role) + 3 * SP_PAGE;
			c = sp_cmd_launch(0, target, plen, 0, 0, 0, args, 1);
			ret = va_run(fd, cq, &c, 1);
			fault = queue_fault(fd, cq, &err);
			break;
		}
		SP_CHILD_CHECK(role, bad, ret == -EFAULT && err == -EFAULT,
			       "round %d: job %d, queue error %d", k, ret, err);
		SP_CHILD_CHECK(role, bad, fault == (int64_t)target,
			       "round %d: fault_addr %#" PRIx64 ", aimed at %#" PRIx64, k,
			       (uint64_t)fault, target);
		ret = map(fd, 0, junk, PP_JUNK + k * SP_PAGE, SP_PAGE);	/* resumes */
		SP_CHILD_CHECK(role, bad, !ret, "round %d: bind: %d", k, ret);
	}
	SP_CHILD_CHECK(role, bad, sp_pair_barrier(pair, PP_ROUNDS + 1), "final barrier");
	ret = sp_download(&d, dq, data, 0, buf, SP_PAGE);
	SP_CHILD_CHECK(role, bad, !ret, "download: %d", ret);
	for (i = 0; i < SP_PAGE / 4 && buf[i] == PP_PATTERN(role); i++)
		;
	SP_CHILD_CHECK(role, bad, i == SP_PAGE / 4, "own data changed at word %zu", i);
	args[0].offset = PP_DATA(role) + 2 * SP_PAGE;
	c = sp_cmd_launch(0, PP_PROG(role), plen, 0, 0, 0, args, 1);
	ret = va_run(fd, cq, &c, 1);
	SP_CHILD_CHECK(role, bad, !ret, "own launch: %d", ret);
	sp_dev_close(&d);
	return bad;
}

/*
 * Two processes (fork), each with its own file, aim crafted programs and
 * copies at each other's card VAs through the kernel's rings at the same
 * moment: each job fails with exactly its own fault address (from its own
 * completion record), each one's data stays intact.
 */
TEST_F_TIMEOUT(vl, two_processes_isolated, 120)
{
	EXPECT_EQ(0, sp_pair_run(vl_pair_child, NULL));
}

/* A program fetched from a page without EXEC faults at the program's VA. */
TEST_F(vl, launch_needs_exec)
{
	struct drm_spyre_bo_range args[2] = {
		{ .offset = XVA, .size = N * 4 }, { .offset = YVA, .size = N * 4 },
	};
	struct drm_spyre_cmd c;
	int fd = self->d.fd;

	/* The same program BO, mapped again without EXEC. */
	ASSERT_EQ(0, map(fd, DRM_SPYRE_VM_BIND_READ_ONLY, self->prog, HOLE, SP_PAGE));
	c = sp_cmd_launch(0, HOLE, self->plen, 0, 0, 0, args, 2);
	EXPECT_EQ(-EFAULT, va_run(fd, self->cq, &c, 1));
	expect_fault(_metadata, fd, self->cq, HOLE);
	/* A bind fixes and restarts the space: the EXEC mapping runs. */
	ASSERT_EQ(0, sp_vm_bind(fd, DRM_SPYRE_VM_BIND_OP_UNMAP, 0, 0, 0, HOLE, SP_PAGE));
	c = sp_cmd_launch(0, PVA, self->plen, 0, 0, 0, args, 2);
	EXPECT_EQ(0, va_run(fd, self->cq, &c, 1));
}

/* A copy whose flags call a device page host memory faults at it. */
TEST_F(vl, copy_wrong_kind)
{
	struct drm_spyre_cmd c;
	int fd = self->d.fd;

	c = vcopy(DRM_SPYRE_COPY_SRC_HOST, XVA + 64, YVA, 64);
	EXPECT_EQ(-EFAULT, va_run(fd, self->dq, &c, 1));
	expect_fault(_metadata, fd, self->dq, XVA + 64);
	ASSERT_EQ(0, map(fd, 0, self->x, HOLE, SP_PAGE));
	c = vcopy(DRM_SPYRE_COPY_DST_HOST, XVA, HVA + 128, 64);
	EXPECT_EQ(0, va_run(fd, self->dq, &c, 1));
	/* A write into a read-only program mapping faults too. */
	c = vcopy(0, XVA, PVA, 64);
	EXPECT_EQ(-EFAULT, va_run(fd, self->dq, &c, 1));
	expect_fault(_metadata, fd, self->dq, PVA);
}

/* Malformed COPY and LAUNCH: their errno, nothing queued. */
TEST_F(vl, bad_commands)
{
	struct drm_spyre_bo_range args[65] = { { 0 } };
	uint32_t max = self->d.p[DRM_SPYRE_PARAM_MAX_ARGS], i;
	struct drm_spyre_cmd c;
	int fd = self->d.fd;

	for (i = 0; i < 65; i++) {
		args[i].offset = XVA;
		args[i].size = 64;
	}
	c = vcopy(DRM_SPYRE_COPY_HOST_MASK, HVA, XVA, 64);
	EXPECT_EQ(-EINVAL, va_run(fd, self->dq, &c, 1));
	c = vcopy(0x4, XVA, YVA, 64);
	EXPECT_EQ(-EINVAL, va_run(fd, self->dq, &c, 1));
	c = sp_cmd_copy(self->x, XVA, 0, YVA, 64);		/* a handle */
	EXPECT_EQ(-EINVAL, va_run(fd, self->dq, &c, 1));
	c = vcopy(0, DRM_SPYRE_VA_END - 32, YVA, 64);		/* past 2^48 */
	EXPECT_EQ(-EINVAL, va_run(fd, self->dq, &c, 1));
	c = sp_cmd_launch(0, PVA, self->plen, 0, 0, 0, args, 2);
	EXPECT_EQ(-EINVAL, va_run(fd, self->dq, &c, 1));	/* a DMA queue */
	c = sp_cmd_launch(self->prog, PVA, self->plen, 0, 0, 0, args, 2);
	EXPECT_EQ(-EINVAL, va_run(fd, self->cq, &c, 1));
	c = sp_cmd_launch(0, PVA, 0, 0, 0, 0, args, 2);		/* empty program */
	EXPECT_EQ(-EINVAL, va_run(fd, self->cq, &c, 1));
	c = sp_cmd_launch(0, PVA, self->plen, 0, YVA, 0, args, 2); /* ws VA, no size */
	EXPECT_EQ(-EINVAL, va_run(fd, self->cq, &c, 1));
	c = sp_cmd_launch(0, PVA, self->plen, 0, 0, 0, args, max + 1);
	EXPECT_EQ(-E2BIG, va_run(fd, self->cq, &c, 1));
	args[1].handle = self->y;
	c = sp_cmd_launch(0, PVA, self->plen, 0, 0, 0, args, 2);
	EXPECT_EQ(-EINVAL, va_run(fd, self->cq, &c, 1));
	args[1].handle = 0;
	args[1].offset = DRM_SPYRE_VA_END;
	EXPECT_EQ(-EINVAL, va_run(fd, self->cq, &c, 1));
	c.launch.args = 8;					/* a bad pointer */
	EXPECT_EQ(-EFAULT, va_run(fd, self->cq, &c, 1));
	c = sp_cmd_launch(0, PVA, self->plen, 0, 0, 0, args, 2);
	c.flags = 1;
	EXPECT_EQ(-EINVAL, va_run(fd, self->cq, &c, 1));
	/* Nothing ran: y is still zero. */
	ASSERT_EQ(0, sp_download(&self->d, self->dq, self->y, 0, self->hmem, SP_PAGE));
	for (i = 0; i < SP_PAGE / 4; i++)
		ASSERT_EQ(0.0f, self->hmem[i]);
}

TEST_HARNESS_MAIN
