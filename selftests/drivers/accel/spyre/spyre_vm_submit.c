// SPDX-License-Identifier: GPL-2.0
/*
 * Spyre accel selftests: jobs in a file's card address space
 * (DRM_SPYRE_SUBMIT_VA, card interface 1.10). Data lands where the file's
 * mappings say; an unmapped, read-only or unmapped-since address fails the
 * job with -EFAULT and the address in the queue's error record, while
 * another file's jobs on the same card run untouched; a fault stops the
 * file's space until its next bind; bad VA submissions get their errno.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "spyre_util.h"

#define VA	0x200000ull	/* where the tests map their BO */
#define HOLE	0x800000ull	/* never mapped */
#define BO_SIZE	(64 * 1024ull)
#define PAT	0x5a17c0deu

static int vm_map(int fd, uint32_t handle, uint64_t bo_offset, uint64_t addr, uint64_t range)
{
	return sp_vm_bind(fd, DRM_SPYRE_VM_BIND_OP_MAP, 0, handle, bo_offset, addr, range);
}

/* Submit a VA job; with @wait, wait and return its fence status. */
static int va_submit(int fd, uint32_t q, const struct drm_spyre_cmd *cmds, uint32_t n, bool wait)
{
	struct drm_spyre_sync out = { 0 };
	struct drm_spyre_submit s = {
		.queue_id = q, .flags = DRM_SPYRE_SUBMIT_VA,
		.cmds = (uintptr_t)cmds, .cmd_count = n, .cmd_stride = sizeof(*cmds),
	};
	int ret;

	if (!wait)
		return sp_ioctl(fd, DRM_IOCTL_SPYRE_SUBMIT, &s);
	ret = sp_syncobj_create(fd, &out.handle, false);
	if (ret)
		return ret;
	s.out_syncs = (uintptr_t)&out;
	s.out_sync_count = 1;
	s.sync_stride = sizeof(out);
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

static int va_fill(int fd, uint32_t q, uint64_t va, uint64_t size, uint32_t pattern)
{
	struct drm_spyre_cmd c = sp_cmd_fill(0, va, size, pattern);

	return va_submit(fd, q, &c, 1, true);
}

static int queue_error(int fd, uint32_t q, struct drm_spyre_queue_error *e)
{
	memset(e, 0, sizeof(*e));
	e->queue_id = q;
	e->flags = DRM_SPYRE_QUEUE_ERROR_CLEAR;
	return sp_ioctl(fd, DRM_IOCTL_SPYRE_QUEUE_ERROR, e);
}

/* Index of the first 32-bit word of @buf[from, to) that is not @v, or -1. */
static long first_not(const uint32_t *buf, size_t from, size_t to, uint32_t v)
{
	size_t i;

	for (i = from / 4; i < to / 4; i++)
		if (buf[i] != v)
			return i;
	return -1;
}

FIXTURE(va) {
	struct sp_dev d;
	uint32_t q;	/* a DMA queue */
	uint32_t dev;	/* a device BO of BO_SIZE, mapped at VA */
	uint32_t *buf;	/* BO_SIZE bytes for downloads */
};

FIXTURE_SETUP(va)
{
	SP_OPEN_OR_SKIP(&self->d, 0);
	if (self->d.p[DRM_SPYRE_PARAM_HW_VERSION] < ((1u << 16) | 10))
		SKIP(return, "card interface older than 1.10: no MMU");
	ASSERT_EQ(0, sp_queue_create(self->d.fd, DRM_SPYRE_ENGINE_DMA,
				     DRM_SPYRE_PRIORITY_NORMAL, &self->q));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, BO_SIZE, DRM_SPYRE_PLACEMENT_DEVICE, &self->dev));
	ASSERT_EQ(0, vm_map(self->d.fd, self->dev, 0, VA, BO_SIZE));
	self->buf = malloc(BO_SIZE);
	ASSERT_NE(NULL, self->buf);
}

FIXTURE_TEARDOWN(va)
{
	free(self->buf);
	sp_dev_close(&self->d);
}

/* A FILL lands where the mapping says, including at a BO offset. */
TEST_F(va, fill_translates)
{
	int fd = self->d.fd;

	ASSERT_EQ(0, va_fill(fd, self->q, VA + 4096, 8192, PAT));
	/* The BO's second half, mapped again elsewhere. */
	ASSERT_EQ(0, vm_map(fd, self->dev, BO_SIZE / 2, 3 * VA, BO_SIZE / 2));
	ASSERT_EQ(0, va_fill(fd, self->q, 3 * VA + 4096, 4096, ~PAT));
	ASSERT_EQ(0, sp_download(&self->d, self->q, self->dev, 0, self->buf, BO_SIZE));
	EXPECT_EQ(-1, first_not(self->buf, 0, 4096, 0));
	EXPECT_EQ(-1, first_not(self->buf, 4096, 12288, PAT));
	EXPECT_EQ(-1, first_not(self->buf, 12288, BO_SIZE / 2 + 4096, 0));
	EXPECT_EQ(-1, first_not(self->buf, BO_SIZE / 2 + 4096, BO_SIZE / 2 + 8192, ~PAT));
	EXPECT_EQ(-1, first_not(self->buf, BO_SIZE / 2 + 8192, BO_SIZE, 0));
}

/* TIMESTAMPs into a device page and a host (SYS) page. */
TEST_F(va, timestamp_both_placements)
{
	struct drm_spyre_cmd c[2];
	uint64_t *host;
	uint32_t h;

	ASSERT_EQ(0, sp_bo_create(self->d.fd, 4096, DRM_SPYRE_PLACEMENT_HOST, &h));
	host = sp_bo_mmap(self->d.fd, h, 4096);
	ASSERT_NE(NULL, host);
	memset(host, 0, 4096);
	ASSERT_EQ(0, vm_map(self->d.fd, h, 0, 2 * VA, 4096));
	c[0] = sp_cmd_ts(0, VA + 64);
	c[1] = sp_cmd_ts(0, 2 * VA + 8);
	ASSERT_EQ(0, va_submit(self->d.fd, self->q, c, 2, true));
	ASSERT_EQ(0, sp_download(&self->d, self->q, self->dev, 0, self->buf, 4096));
	EXPECT_NE(0, self->buf[16] | self->buf[17]);
	EXPECT_NE(0, host[1]);
	EXPECT_EQ(0, host[0]);
	munmap(host, 4096);
}

/*
 * An unmapped address fails the job with -EFAULT and the address; the
 * space stays stopped until the next bind. Another file's jobs (VA and
 * plain) run meanwhile.
 */
TEST_F(va, fault_then_resume)
{
	struct drm_spyre_queue_error e;
	struct drm_spyre_cmd c;
	struct sp_dev other;
	uint32_t q2, h2;
	int fd = self->d.fd;

	ASSERT_EQ(-EFAULT, va_fill(fd, self->q, HOLE + 256, 256, PAT));
	ASSERT_EQ(0, queue_error(fd, self->q, &e));
	EXPECT_EQ(-EFAULT, e.error);
	EXPECT_TRUE(e.fault_flags & DRM_SPYRE_FAULT_ADDR_VIRTUAL);
	EXPECT_EQ(HOLE + 256, e.fault_addr);

	ASSERT_EQ(0, sp_dev_reopen(&self->d, &other));
	ASSERT_EQ(0, sp_queue_create(other.fd, DRM_SPYRE_ENGINE_DMA,
				     DRM_SPYRE_PRIORITY_NORMAL, &q2));
	ASSERT_EQ(0, sp_bo_create(other.fd, BO_SIZE, DRM_SPYRE_PLACEMENT_DEVICE, &h2));
	ASSERT_EQ(0, vm_map(other.fd, h2, 0, VA, BO_SIZE));
	EXPECT_EQ(0, va_fill(other.fd, q2, VA, BO_SIZE, PAT));
	c = sp_cmd_fill(h2, 0, 4096, ~PAT);
	EXPECT_EQ(0, sp_run(other.fd, q2, &c, 1));
	ASSERT_EQ(0, sp_download(&other, q2, h2, 0, self->buf, BO_SIZE));
	EXPECT_EQ(-1, first_not(self->buf, 0, 4096, ~PAT));
	EXPECT_EQ(-1, first_not(self->buf, 4096, BO_SIZE, PAT));
	sp_dev_close(&other);

	/* Stopped: even a good address fails now, and writes nothing. */
	EXPECT_EQ(-EFAULT, va_fill(fd, self->q, VA, 4096, PAT));
	ASSERT_EQ(0, queue_error(fd, self->q, &e));
	EXPECT_EQ(-EFAULT, e.error);
	/* Plain jobs of the file are not in the context: they run. */
	ASSERT_EQ(0, sp_download(&self->d, self->q, self->dev, 0, self->buf, 4096));
	EXPECT_EQ(-1, first_not(self->buf, 0, 4096, 0));
	/* The fix: map the hole; the space runs again. */
	ASSERT_EQ(0, vm_map(fd, self->dev, 0, HOLE, 4096));
	EXPECT_EQ(0, va_fill(fd, self->q, HOLE + 256, 256, PAT));
	EXPECT_EQ(0, va_fill(fd, self->q, VA + 4096, 4096, PAT));
	ASSERT_EQ(0, sp_download(&self->d, self->q, self->dev, 0, self->buf, 8192));
	EXPECT_EQ(-1, first_not(self->buf, 0, 256, 0));
	EXPECT_EQ(-1, first_not(self->buf, 256, 512, PAT));
	EXPECT_EQ(-1, first_not(self->buf, 512, 4096, 0));
	EXPECT_EQ(-1, first_not(self->buf, 4096, 8192, PAT));
}

/* Writes to a read-only mapping fault; so does an address unmapped since. */
TEST_F(va, read_only_and_unmapped)
{
	struct drm_spyre_queue_error e;
	int fd = self->d.fd;

	ASSERT_EQ(0, sp_vm_bind(fd, DRM_SPYRE_VM_BIND_OP_MAP, DRM_SPYRE_VM_BIND_READ_ONLY,
			     self->dev, 0, 2 * VA, BO_SIZE));
	EXPECT_EQ(-EFAULT, va_fill(fd, self->q, 2 * VA + 8192, 4096, PAT));
	ASSERT_EQ(0, queue_error(fd, self->q, &e));
	EXPECT_EQ(2 * VA + 8192, e.fault_addr);
	EXPECT_TRUE(e.fault_flags & DRM_SPYRE_FAULT_ADDR_VIRTUAL);

	/* The unmap resumes the space and its translations are gone. */
	ASSERT_EQ(0, sp_vm_bind(fd, DRM_SPYRE_VM_BIND_OP_UNMAP, 0, 0, 0, VA, BO_SIZE));
	EXPECT_EQ(-EFAULT, va_fill(fd, self->q, VA, 4096, PAT));
	ASSERT_EQ(0, sp_download(&self->d, self->q, self->dev, 0, self->buf, BO_SIZE));
	EXPECT_EQ(-1, first_not(self->buf, 0, BO_SIZE, 0));
}

/* One file's VA reaches nothing of another file's mapping at that VA. */
TEST_F(va, isolation)
{
	struct sp_dev other;
	uint32_t q2, h2;

	ASSERT_EQ(0, sp_dev_reopen(&self->d, &other));
	ASSERT_EQ(0, sp_queue_create(other.fd, DRM_SPYRE_ENGINE_DMA,
				     DRM_SPYRE_PRIORITY_NORMAL, &q2));
	ASSERT_EQ(0, sp_bo_create(other.fd, BO_SIZE, DRM_SPYRE_PLACEMENT_DEVICE, &h2));
	/* The other file maps its BO at our HOLE; we write there. */
	ASSERT_EQ(0, vm_map(other.fd, h2, 0, HOLE, BO_SIZE));
	EXPECT_EQ(-EFAULT, va_fill(self->d.fd, self->q, HOLE, BO_SIZE, PAT));
	ASSERT_EQ(0, sp_download(&other, q2, h2, 0, self->buf, BO_SIZE));
	EXPECT_EQ(-1, first_not(self->buf, 0, BO_SIZE, 0));
	/* And the same VA in both files reaches each one's own BO. */
	ASSERT_EQ(0, vm_map(other.fd, h2, 0, VA, BO_SIZE));
	EXPECT_EQ(0, va_fill(other.fd, q2, VA, 4096, ~PAT));
	ASSERT_EQ(0, sp_download(&self->d, self->q, self->dev, 0, self->buf, BO_SIZE));
	EXPECT_EQ(-1, first_not(self->buf, 0, BO_SIZE, 0));
	sp_dev_close(&other);
}

/* Bad VA submissions: -EINVAL, nothing queued (spyre_vm_launch: COPY, LAUNCH). */
TEST_F(va, bad_submit)
{
	struct drm_spyre_submit bad = { .queue_id = self->q, .flags = 0x2 };
	struct drm_spyre_cmd c;
	struct sp_dev other;
	uint32_t q2;
	int fd = self->d.fd;

	/* A file without an address space. */
	ASSERT_EQ(0, sp_dev_reopen(&self->d, &other));
	ASSERT_EQ(0, sp_queue_create(other.fd, DRM_SPYRE_ENGINE_DMA,
				     DRM_SPYRE_PRIORITY_NORMAL, &q2));
	c = sp_cmd_nop();
	EXPECT_EQ(-EINVAL, va_submit(other.fd, q2, &c, 1, false));
	sp_dev_close(&other);

	c = sp_cmd_fill(self->dev, VA, 4096, PAT);	/* a handle */
	EXPECT_EQ(-EINVAL, va_submit(fd, self->q, &c, 1, false));
	c = sp_cmd_fill(0, VA + 2, 4096, PAT);		/* misaligned */
	EXPECT_EQ(-EINVAL, va_submit(fd, self->q, &c, 1, false));
	c = sp_cmd_fill(0, DRM_SPYRE_VA_END - 4096, 8192, PAT);
	EXPECT_EQ(-EINVAL, va_submit(fd, self->q, &c, 1, false));
	c = sp_cmd_fill(0, VA, ~0ull - 3, PAT);		/* wraps */
	EXPECT_EQ(-EINVAL, va_submit(fd, self->q, &c, 1, false));
	c = sp_cmd_ts(0, VA + 4);
	EXPECT_EQ(-EINVAL, va_submit(fd, self->q, &c, 1, false));
	c = sp_cmd_nop();
	c.flags = 1;
	EXPECT_EQ(-EINVAL, va_submit(fd, self->q, &c, 1, false));
	c = sp_cmd_launch(0, VA, 4096, 0, 0, 0, NULL, 0);	/* on a DMA queue */
	EXPECT_EQ(-EINVAL, va_submit(fd, self->q, &c, 1, false));
	EXPECT_EQ(-EINVAL, sp_ioctl(fd, DRM_IOCTL_SPYRE_SUBMIT, &bad));
	/* Nothing ran: the BO is still zero. */
	ASSERT_EQ(0, sp_download(&self->d, self->q, self->dev, 0, self->buf, BO_SIZE));
	EXPECT_EQ(-1, first_not(self->buf, 0, BO_SIZE, 0));
}

/* An unmap right behind queued jobs waits for them; closing with jobs too. */
TEST_F(va, unmap_waits_for_jobs)
{
	struct drm_spyre_cmd c[16];
	int fd = self->d.fd;
	unsigned int i;

	for (i = 0; i < 16; i++)
		c[i] = sp_cmd_fill(0, VA, BO_SIZE, PAT + i);
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, va_submit(fd, self->q, c, 16, false));
	ASSERT_EQ(0, sp_vm_bind(fd, DRM_SPYRE_VM_BIND_OP_UNMAP, 0, 0, 0, VA, BO_SIZE));
	/* Every job had finished: the last fill is complete. */
	ASSERT_EQ(0, sp_download(&self->d, self->q, self->dev, 0, self->buf, BO_SIZE));
	EXPECT_EQ(-1, first_not(self->buf, 0, BO_SIZE, PAT + 15));
	ASSERT_EQ(0, vm_map(fd, self->dev, 0, VA, BO_SIZE));
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, va_submit(fd, self->q, c, 16, false));
	sp_dev_close(&self->d);
}

/*
 * A mapping across table boundaries: 8 MiB from 2 MiB below 1 GiB takes
 * two level-2 entries (so two level-1 tables) and four level-0 tables. A
 * word written at the start of each 1 MiB lands at the matching BO offset.
 */
TEST_F(va, large_mapping)
{
	const uint64_t size = 8 * SP_MiB, base = (1ull << 30) - 2 * SP_MiB;
	uint32_t h, word, i;
	int fd = self->d.fd;

	ASSERT_EQ(0, sp_bo_create(fd, size, DRM_SPYRE_PLACEMENT_DEVICE, &h));
	ASSERT_EQ(0, vm_map(fd, h, 0, base, size));
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, va_fill(fd, self->q, base + i * SP_MiB, 4, PAT + i));
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(0, sp_download(&self->d, self->q, h, i * SP_MiB, &word, 4));
		EXPECT_EQ(PAT + i, word);
	}
	/* The last word too, and nothing past the end. */
	ASSERT_EQ(0, va_fill(fd, self->q, base + size - 4, 4, ~PAT));
	ASSERT_EQ(0, sp_download(&self->d, self->q, h, size - 4, &word, 4));
	EXPECT_EQ(~PAT, word);
	EXPECT_EQ(-EFAULT, va_fill(fd, self->q, base + size, 4, PAT));
}

/* A VA job without commands (SET_CTX and FENCE only) orders and signals. */
TEST_F(va, empty_job)
{
	unsigned int i;

	for (i = 0; i < 64; i++)
		ASSERT_EQ(0, va_submit(self->d.fd, self->q, NULL, 0, i == 63));
}

/* A card reset clears the card's roots: the driver restores them. */
TEST_F(va, survives_card_reset)
{
	int fd = self->d.fd;

	ASSERT_EQ(0, va_fill(fd, self->q, VA, 4096, PAT));
	if (sp_debugfs_write(&self->d, "reset", "1"))
		SKIP(return, "no debugfs reset");
	EXPECT_EQ(0, va_fill(fd, self->q, VA + 4096, 4096, ~PAT));
	ASSERT_EQ(0, sp_download(&self->d, self->q, self->dev, 0, self->buf, 8192));
	EXPECT_EQ(-1, first_not(self->buf, 0, 4096, PAT));
	EXPECT_EQ(-1, first_not(self->buf, 4096, 8192, ~PAT));
}

TEST_HARNESS_MAIN
