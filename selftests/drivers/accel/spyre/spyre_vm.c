// SPDX-License-Identifier: GPL-2.0
/*
 * Spyre accel selftests: card address spaces (DRM_IOCTL_SPYRE_VM_BIND,
 * card interface 1.10). Mapping and unmapping both placements, the exact
 * error of every bad input, a failed bind changing nothing, one address
 * space per open file (and a context number for each), mapped BOs and
 * page tables released at unmap and close, and the SUBMIT path (context 0)
 * unaffected by a file's mappings.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "spyre_util.h"

#define VA	0x100000ull	/* a card VA every test may use */
#define BO_SIZE	(64 * 1024ull)
#define NUM_CTX	256		/* the card's MMU contexts, 0 included */

static int vm_map(int fd, uint32_t handle, uint64_t bo_offset, uint64_t addr, uint64_t range)
{
	return sp_vm_bind(fd, DRM_SPYRE_VM_BIND_OP_MAP, 0, handle, bo_offset, addr, range);
}

static int vm_unmap(int fd, uint64_t addr, uint64_t range)
{
	return sp_vm_bind(fd, DRM_SPYRE_VM_BIND_OP_UNMAP, 0, 0, 0, addr, range);
}

/* The card MMU and VM_BIND came with card interface 1.10. */
#define SP_NEED_MMU(d) do {						\
	if ((d)->p[DRM_SPYRE_PARAM_HW_VERSION] < ((1u << 16) | 10))	\
		SKIP(return, "card interface older than 1.10: no MMU");	\
} while (0)

FIXTURE(vm) {
	struct sp_dev d;
	uint32_t dev;	/* a device BO of BO_SIZE */
	uint32_t host;	/* a host BO of BO_SIZE */
};

FIXTURE_SETUP(vm)
{
	SP_OPEN_OR_SKIP(&self->d, 0);
	SP_NEED_MMU(&self->d);
	ASSERT_EQ(0, sp_bo_create(self->d.fd, BO_SIZE, DRM_SPYRE_PLACEMENT_DEVICE, &self->dev));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, BO_SIZE, DRM_SPYRE_PLACEMENT_HOST, &self->host));
}

FIXTURE_TEARDOWN(vm)
{
	sp_dev_close(&self->d);
}

/* Both placements map whole and in part, read-only and executable, and unmap. */
TEST_F(vm, map_unmap)
{
	int fd = self->d.fd;

	ASSERT_EQ(0, vm_map(fd, self->dev, 0, VA, BO_SIZE));
	ASSERT_EQ(0, vm_map(fd, self->host, 0, VA + BO_SIZE, BO_SIZE));
	/* The last page of the BO, and a window in its middle. */
	ASSERT_EQ(0, vm_map(fd, self->dev, BO_SIZE - SP_PAGE, VA + 4 * BO_SIZE, SP_PAGE));
	ASSERT_EQ(0, vm_map(fd, self->host, 2 * SP_PAGE, VA + 5 * BO_SIZE, 3 * SP_PAGE));
	ASSERT_EQ(0, sp_vm_bind(fd, DRM_SPYRE_VM_BIND_OP_MAP,
			     DRM_SPYRE_VM_BIND_READ_ONLY | DRM_SPYRE_VM_BIND_EXEC,
			     self->dev, 0, VA + 6 * BO_SIZE, BO_SIZE));
	ASSERT_EQ(0, sp_vm_bind(fd, DRM_SPYRE_VM_BIND_OP_MAP, DRM_SPYRE_VM_BIND_READ_ONLY,
			     self->host, 0, VA + 7 * BO_SIZE, BO_SIZE));
	/* The same BO twice at different addresses. */
	ASSERT_EQ(0, vm_map(fd, self->dev, 0, VA + 8 * BO_SIZE, BO_SIZE));

	ASSERT_EQ(0, vm_unmap(fd, VA, BO_SIZE));
	ASSERT_EQ(0, vm_unmap(fd, VA + BO_SIZE, BO_SIZE));
	ASSERT_EQ(0, vm_unmap(fd, VA + 4 * BO_SIZE, SP_PAGE));
	/* One unmap removes every mapping inside its range, holes allowed. */
	ASSERT_EQ(0, vm_unmap(fd, VA + 5 * BO_SIZE, 4 * BO_SIZE));
	ASSERT_EQ(-ENOENT, vm_unmap(fd, VA, 9 * BO_SIZE));
	/* The whole space, first and last page included, is usable. */
	ASSERT_EQ(0, vm_map(fd, self->dev, 0, DRM_SPYRE_VA_START, SP_PAGE));
	ASSERT_EQ(0, vm_map(fd, self->dev, 0, DRM_SPYRE_VA_END - SP_PAGE, SP_PAGE));
	ASSERT_EQ(0, vm_unmap(fd, DRM_SPYRE_VA_START, DRM_SPYRE_VA_END - DRM_SPYRE_VA_START));
}

/* Reserved fields, unknown ops and flags, unmap-only fields: -EINVAL. */
TEST_F(vm, reserved_fields)
{
	struct drm_spyre_vm_bind b;
	int fd = self->d.fd;
	unsigned int i;

	for (i = 0; i < 8; i++) {
		memset(&b, 0, sizeof(b));
		b.op = DRM_SPYRE_VM_BIND_OP_MAP;
		b.handle = self->dev;
		b.addr = VA;
		b.range = BO_SIZE;
		switch (i) {
		case 0: b.pad = 1; break;
		case 1: b.in_syncobj = 1; break;
		case 2: b.out_syncobj = 1; break;
		case 3: b.in_point = 1; break;
		case 4: b.out_point = 1; break;
		case 5: b.op = 2; break;
		case 6: b.op = ~0u; break;
		case 7: b.flags = 0x4; break;
		}
		EXPECT_EQ(-EINVAL, sp_ioctl(fd, DRM_IOCTL_SPYRE_VM_BIND, &b)) TH_LOG("case %u", i);
	}
	ASSERT_EQ(0, vm_map(fd, self->dev, 0, VA, BO_SIZE));
	EXPECT_EQ(-EINVAL, sp_vm_bind(fd, DRM_SPYRE_VM_BIND_OP_UNMAP, DRM_SPYRE_VM_BIND_READ_ONLY,
				   0, 0, VA, BO_SIZE));
	EXPECT_EQ(-EINVAL, sp_vm_bind(fd, DRM_SPYRE_VM_BIND_OP_UNMAP, 0, self->dev, 0, VA, BO_SIZE));
	EXPECT_EQ(-EINVAL, sp_vm_bind(fd, DRM_SPYRE_VM_BIND_OP_UNMAP, 0, 0, SP_PAGE, VA, BO_SIZE));
	/* None of them unmapped anything. */
	EXPECT_EQ(0, vm_unmap(fd, VA, BO_SIZE));
}

/* addr, range and bo_offset must be whole pages, range non-zero: -EINVAL. */
TEST_F(vm, misaligned)
{
	int fd = self->d.fd;

	EXPECT_EQ(-EINVAL, vm_map(fd, self->dev, 0, VA + 1, SP_PAGE));
	EXPECT_EQ(-EINVAL, vm_map(fd, self->dev, 0, VA + 2048, SP_PAGE));
	EXPECT_EQ(-EINVAL, vm_map(fd, self->dev, 0, VA, SP_PAGE + 1));
	EXPECT_EQ(-EINVAL, vm_map(fd, self->dev, 0, VA, SP_PAGE - 1));
	EXPECT_EQ(-EINVAL, vm_map(fd, self->dev, 8, VA, SP_PAGE));
	EXPECT_EQ(-EINVAL, vm_map(fd, self->host, 2048, VA, SP_PAGE));
	EXPECT_EQ(-EINVAL, vm_map(fd, self->dev, 0, VA, 0));
	ASSERT_EQ(0, vm_map(fd, self->dev, 0, VA, BO_SIZE));
	EXPECT_EQ(-EINVAL, vm_unmap(fd, VA + 1, BO_SIZE));
	EXPECT_EQ(-EINVAL, vm_unmap(fd, VA, BO_SIZE - 1));
	EXPECT_EQ(-EINVAL, vm_unmap(fd, VA, 0));
	EXPECT_EQ(0, vm_unmap(fd, VA, BO_SIZE));
}

/* Below DRM_SPYRE_VA_START, beyond 2^48 or wrapping around: -ERANGE. */
TEST_F(vm, out_of_range)
{
	int fd = self->d.fd;

	EXPECT_EQ(-ERANGE, vm_map(fd, self->dev, 0, 0, SP_PAGE));
	EXPECT_EQ(-ERANGE, vm_map(fd, self->dev, 0, DRM_SPYRE_VA_START - SP_PAGE, SP_PAGE));
	/* Straddling the start. */
	EXPECT_EQ(-ERANGE, vm_map(fd, self->dev, 0, DRM_SPYRE_VA_START - SP_PAGE, 2 * SP_PAGE));
	EXPECT_EQ(-ERANGE, vm_map(fd, self->dev, 0, DRM_SPYRE_VA_END, SP_PAGE));
	EXPECT_EQ(-ERANGE, vm_map(fd, self->dev, 0, DRM_SPYRE_VA_END - SP_PAGE, 2 * SP_PAGE));
	EXPECT_EQ(-ERANGE, vm_map(fd, self->dev, 0, 1ull << 63, SP_PAGE));
	/* addr + range wraps to a small address. */
	EXPECT_EQ(-ERANGE, vm_map(fd, self->dev, 0, VA, -VA + SP_PAGE));
	EXPECT_EQ(-ERANGE, vm_map(fd, self->dev, 0, ~0ull - SP_PAGE + 1, SP_PAGE));
	EXPECT_EQ(-ERANGE, vm_unmap(fd, 0, SP_PAGE));
	EXPECT_EQ(-ERANGE, vm_unmap(fd, DRM_SPYRE_VA_END, SP_PAGE));
	EXPECT_EQ(-ERANGE, vm_unmap(fd, VA, ~0ull - SP_PAGE + 1));
}

/* A handle the file does not hold: -ENOENT; another file's handle too. */
TEST_F(vm, unknown_bo)
{
	struct sp_dev other;
	uint32_t h;

	EXPECT_EQ(-ENOENT, vm_map(self->d.fd, 0, 0, VA, SP_PAGE));
	EXPECT_EQ(-ENOENT, vm_map(self->d.fd, 0x7fffffff, 0, VA, SP_PAGE));
	ASSERT_EQ(0, sp_dev_reopen(&self->d, &other));
	/* A handle the other file holds and we do not (we hold two). */
	do {
		ASSERT_EQ(0, sp_bo_create(other.fd, BO_SIZE, DRM_SPYRE_PLACEMENT_DEVICE, &h));
	} while (h <= self->dev || h <= self->host);
	EXPECT_EQ(-ENOENT, vm_map(self->d.fd, h, 0, VA, SP_PAGE));
	EXPECT_EQ(0, vm_map(other.fd, h, 0, VA, SP_PAGE));
	ASSERT_EQ(0, sp_bo_close(self->d.fd, self->host));
	EXPECT_EQ(-ENOENT, vm_map(self->d.fd, self->host, 0, VA, SP_PAGE));
	sp_dev_close(&other);
}

/* bo_offset..+range must lie inside the BO: -EINVAL. */
TEST_F(vm, beyond_bo)
{
	int fd = self->d.fd;
	uint32_t h;

	for (h = 0; h < 2; h++) {
		uint32_t bo = h ? self->host : self->dev;

		EXPECT_EQ(-EINVAL, vm_map(fd, bo, 0, VA, BO_SIZE + SP_PAGE));
		EXPECT_EQ(-EINVAL, vm_map(fd, bo, SP_PAGE, VA, BO_SIZE));
		EXPECT_EQ(-EINVAL, vm_map(fd, bo, BO_SIZE, VA, SP_PAGE));
		EXPECT_EQ(-EINVAL, vm_map(fd, bo, BO_SIZE + SP_PAGE, VA, SP_PAGE));
		/* bo_offset + range wraps around. */
		EXPECT_EQ(-EINVAL, vm_map(fd, bo, ~0ull - SP_PAGE + 1, VA, 2 * SP_PAGE));
	}
	/* Programs are fetched from device memory only. */
	EXPECT_EQ(-EINVAL, sp_vm_bind(fd, DRM_SPYRE_VM_BIND_OP_MAP, DRM_SPYRE_VM_BIND_EXEC,
				   self->host, 0, VA, BO_SIZE));
	/* Nothing was mapped by the failed calls. */
	EXPECT_EQ(-ENOENT, vm_unmap(fd, VA, 2 * BO_SIZE));
}

/* Any overlap with a mapping: -EEXIST, and the mapping stays whole. */
TEST_F(vm, overlap)
{
	int fd = self->d.fd;

	ASSERT_EQ(0, vm_map(fd, self->dev, 0, VA, BO_SIZE));
	EXPECT_EQ(-EEXIST, vm_map(fd, self->dev, 0, VA, BO_SIZE));
	EXPECT_EQ(-EEXIST, vm_map(fd, self->host, 0, VA, SP_PAGE));
	EXPECT_EQ(-EEXIST, vm_map(fd, self->host, 0, VA + BO_SIZE - SP_PAGE, BO_SIZE));
	EXPECT_EQ(-EEXIST, vm_map(fd, self->host, 0, VA - SP_PAGE, 2 * SP_PAGE));
	EXPECT_EQ(-EEXIST, vm_map(fd, self->host, 0, VA + SP_PAGE, SP_PAGE));
	/* Covering it from both sides. */
	EXPECT_EQ(-EEXIST, vm_map(fd, self->dev, 0, VA - 2 * SP_PAGE, SP_PAGE * 8));
	/* Adjacent on both sides is no overlap. */
	EXPECT_EQ(0, vm_map(fd, self->host, 0, VA - BO_SIZE, BO_SIZE));
	EXPECT_EQ(0, vm_map(fd, self->host, 0, VA + BO_SIZE, BO_SIZE));
	EXPECT_EQ(0, vm_unmap(fd, VA - BO_SIZE, 3 * BO_SIZE));
}

/* Unmap of nothing: -ENOENT; of part of a mapping: -EINVAL, nothing removed. */
TEST_F(vm, unmap_errors)
{
	int fd = self->d.fd;

	/* Before the file has any address space, and after. */
	EXPECT_EQ(-ENOENT, vm_unmap(fd, VA, SP_PAGE));
	ASSERT_EQ(0, vm_map(fd, self->dev, 0, VA, BO_SIZE));
	EXPECT_EQ(-ENOENT, vm_unmap(fd, VA + BO_SIZE, SP_PAGE));
	EXPECT_EQ(-ENOENT, vm_unmap(fd, VA - SP_PAGE, SP_PAGE));
	EXPECT_EQ(-EINVAL, vm_unmap(fd, VA, SP_PAGE));
	EXPECT_EQ(-EINVAL, vm_unmap(fd, VA + SP_PAGE, BO_SIZE));
	EXPECT_EQ(-EINVAL, vm_unmap(fd, VA - SP_PAGE, 2 * SP_PAGE));
	/* A range holding one whole mapping and cutting another. */
	ASSERT_EQ(0, vm_map(fd, self->host, 0, VA + BO_SIZE, BO_SIZE));
	EXPECT_EQ(-EINVAL, vm_unmap(fd, VA, BO_SIZE + SP_PAGE));
	/* Both mappings are still there, whole. */
	EXPECT_EQ(-EEXIST, vm_map(fd, self->dev, 0, VA, SP_PAGE));
	EXPECT_EQ(0, vm_unmap(fd, VA, BO_SIZE));
	EXPECT_EQ(0, vm_unmap(fd, VA + BO_SIZE, BO_SIZE));
	EXPECT_EQ(-ENOENT, vm_unmap(fd, VA, 2 * BO_SIZE));
}

/* Each open file has its own space: the same VA maps in both. */
TEST_F(vm, per_file)
{
	struct sp_dev other;
	uint32_t h;

	ASSERT_EQ(0, vm_map(self->d.fd, self->dev, 0, VA, BO_SIZE));
	ASSERT_EQ(0, sp_dev_reopen(&self->d, &other));
	ASSERT_EQ(0, sp_bo_create(other.fd, BO_SIZE, DRM_SPYRE_PLACEMENT_DEVICE, &h));
	EXPECT_EQ(-ENOENT, vm_unmap(other.fd, VA, BO_SIZE));
	EXPECT_EQ(0, vm_map(other.fd, h, 0, VA, BO_SIZE));
	EXPECT_EQ(0, vm_unmap(other.fd, VA, BO_SIZE));
	/* Ours is untouched by the other file's unmap. */
	EXPECT_EQ(-EEXIST, vm_map(self->d.fd, self->dev, 0, VA, SP_PAGE));
	sp_dev_close(&other);
	EXPECT_EQ(0, vm_unmap(self->d.fd, VA, BO_SIZE));
}

/*
 * A mapping holds its BO after the handle is closed; unmap and close
 * release the BO and the page tables (MEM_FREE returns to where it was).
 */
TEST_F(vm, lifetime)
{
	uint64_t bos, seen, free0, free1;
	struct sp_dev other;
	uint32_t h;

	ASSERT_EQ(0, sp_dev_reopen(&self->d, &other));
	ASSERT_EQ(0, sp_get_param(other.fd, DRM_SPYRE_PARAM_MEM_FREE, &free0));
	if (sp_bo_count(&self->d, &bos))
		SKIP(return, "no debugfs bo_count");
	ASSERT_EQ(0, sp_bo_create(other.fd, BO_SIZE, DRM_SPYRE_PLACEMENT_DEVICE, &h));
	ASSERT_EQ(0, vm_map(other.fd, h, 0, VA, BO_SIZE));
	/* Far apart: tables of every level for each. */
	ASSERT_EQ(0, vm_map(other.fd, h, 0, 1ull << 46, BO_SIZE));
	ASSERT_EQ(0, sp_get_param(other.fd, DRM_SPYRE_PARAM_MEM_FREE, &free1));
	/* The BO and 7 tables (one root, two of each lower level). */
	EXPECT_EQ(free0 - BO_SIZE - 7 * SP_PAGE, free1);
	ASSERT_EQ(0, sp_bo_close(other.fd, h));
	ASSERT_EQ(0, sp_bo_count(&self->d, &seen));
	EXPECT_EQ(bos + 1, seen);
	ASSERT_EQ(0, vm_unmap(other.fd, VA, BO_SIZE));
	ASSERT_EQ(0, sp_bo_count(&self->d, &seen));
	EXPECT_EQ(bos + 1, seen);
	ASSERT_EQ(0, vm_unmap(other.fd, 1ull << 46, BO_SIZE));
	ASSERT_EQ(0, sp_wait_bo_count(&self->d, bos, &seen));
	EXPECT_EQ(bos, seen);

	/* Close with a mapping in place. */
	ASSERT_EQ(0, sp_bo_create(other.fd, BO_SIZE, DRM_SPYRE_PLACEMENT_HOST, &h));
	ASSERT_EQ(0, vm_map(other.fd, h, 0, VA, BO_SIZE));
	sp_dev_close(&other);
	ASSERT_EQ(0, sp_wait_bo_count(&self->d, bos, &seen));
	EXPECT_EQ(bos, seen);
	ASSERT_EQ(0, sp_get_param(self->d.fd, DRM_SPYRE_PARAM_MEM_FREE, &free1));
	EXPECT_EQ(free0, free1);
}

/*
 * Every file that binds holds one of the card's 255 contexts: one more
 * fails with -ENOSPC, and a context is reused once its file closed.
 */
TEST_F(vm, contexts)
{
	static struct sp_dev files[NUM_CTX];
	uint32_t h[NUM_CTX];
	int n, used, ret = 0;

	for (n = 0; n < NUM_CTX; n++) {
		ASSERT_EQ(0, sp_dev_reopen(&self->d, &files[n]));
		ASSERT_EQ(0, sp_bo_create(files[n].fd, SP_PAGE, DRM_SPYRE_PLACEMENT_DEVICE,
					  &h[n]));
		ret = vm_map(files[n].fd, h[n], 0, VA, SP_PAGE);
		if (ret)
			break;
	}
	used = n;
	/* Other tests' files may hold a few, never all of them. */
	ASSERT_EQ(-ENOSPC, ret);
	EXPECT_LE(NUM_CTX - 8, used);
	EXPECT_GE(NUM_CTX - 1, used);
	/* A file without a context still works otherwise. */
	EXPECT_EQ(-ENOENT, vm_unmap(files[used].fd, VA, SP_PAGE));
	sp_dev_close(&files[0]);
	EXPECT_EQ(0, vm_map(files[used].fd, h[used], 0, VA, SP_PAGE));
	for (n = 1; n <= used; n++)
		sp_dev_close(&files[n]);
}

/* SUBMIT (context 0) moves data exactly as before in a file with mappings. */
TEST_F(vm, submit_unaffected)
{
	size_t len = BO_SIZE;
	uint8_t *in, *out;
	uint32_t q;

	in = malloc(len);
	out = malloc(len);
	ASSERT_TRUE(in && out);
	ASSERT_EQ(0, vm_map(self->d.fd, self->dev, 0, VA, BO_SIZE));
	ASSERT_EQ(0, vm_map(self->d.fd, self->host, 0, VA + BO_SIZE, BO_SIZE));
	ASSERT_EQ(0, sp_queue_create(self->d.fd, DRM_SPYRE_ENGINE_DMA,
				     DRM_SPYRE_PRIORITY_NORMAL, &q));
	sp_pattern(in, len, 27);
	ASSERT_EQ(0, sp_upload(&self->d, q, self->dev, 0, in, len));
	memset(out, 0, len);
	ASSERT_EQ(0, sp_download(&self->d, q, self->dev, 0, out, len));
	EXPECT_EQ(-1, sp_pattern_check(out, len, 27));
	/* After an unmap too (the TLB invalidation touches no ring). */
	ASSERT_EQ(0, vm_unmap(self->d.fd, VA, 2 * BO_SIZE));
	memset(out, 0, len);
	ASSERT_EQ(0, sp_download(&self->d, q, self->dev, 0, out, len));
	EXPECT_EQ(-1, sp_pattern_check(out, len, 27));
	free(in);
	free(out);
}

TEST_HARNESS_MAIN
