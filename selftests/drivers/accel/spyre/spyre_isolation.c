// SPDX-License-Identifier: GPL-2.0
/*
 * Spyre accel selftests: isolation between processes. A forked child with
 * its own open file cannot name, map or reach the parent's BOs, queues or
 * syncobjs, nor read device memory the parent used; sharing works only
 * through an explicit dma-buf.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "spyre_prog.h"
#include "spyre_util.h"

FIXTURE(iso) {
	struct sp_dev d;
	uint32_t q, dev, host, sync;
	uint64_t mmap_offset;
};

FIXTURE_SETUP(iso)
{
	struct drm_spyre_bo_info info;

	SP_OPEN_OR_SKIP(&self->d, 0);
	ASSERT_EQ(0, sp_queue_create(self->d.fd, DRM_SPYRE_ENGINE_DMA,
				     DRM_SPYRE_PRIORITY_NORMAL, &self->q));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, SP_MiB, DRM_SPYRE_PLACEMENT_DEVICE, &self->dev));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, SP_MiB, DRM_SPYRE_PLACEMENT_HOST, &self->host));
	ASSERT_EQ(0, sp_bo_info(self->d.fd, self->host, &info));
	self->mmap_offset = info.mmap_offset;
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &self->sync, true));
}

FIXTURE_TEARDOWN(iso)
{
	sp_dev_close(&self->d);
}

/* Run the block in a child and wait; its EXPECTs land in the shared _metadata. */
#define IN_CHILD(...) do {						\
	pid_t __pid = fork();						\
	int __status;							\
	ASSERT_LE(0, __pid);						\
	if (__pid == 0) {						\
		__VA_ARGS__						\
		_exit(0);						\
	}								\
	ASSERT_EQ(__pid, waitpid(__pid, &__status, 0));			\
	ASSERT_TRUE(WIFEXITED(__status));				\
	EXPECT_EQ(0, WEXITSTATUS(__status));				\
} while (0)

/* The child's own file knows none of the parent's handles or queue IDs. */
TEST_F(iso, child_cannot_name_parent_objects)
{
	struct drm_spyre_bo_info info;
	uint32_t q2;

	IN_CHILD({
		struct sp_dev c;
		struct drm_spyre_cmd cmd;
		struct drm_spyre_sync s = { .handle = self->sync };
		uint32_t q;
		int buf;

		EXPECT_EQ(0, sp_dev_open(&c, 0));
		EXPECT_EQ(-ENOENT, sp_bo_info(c.fd, self->dev, &info));
		EXPECT_EQ(-ENOENT, sp_bo_info(c.fd, self->host, &info));
		EXPECT_EQ(-ENOENT, sp_bo_wait(c.fd, self->dev, 0));
		EXPECT_EQ(-ENOENT, sp_prime_export(c.fd, self->host, &buf));
		EXPECT_EQ(-ENOENT, sp_submit(c.fd, self->q, NULL, 0, NULL, 0, NULL, 0));
		EXPECT_EQ(-ENOENT, sp_queue_destroy(c.fd, self->q));
		/* its own queue cannot carry the parent's BOs or syncobjs */
		EXPECT_EQ(0, sp_queue_create(c.fd, DRM_SPYRE_ENGINE_DMA,
					     DRM_SPYRE_PRIORITY_NORMAL, &q));
		cmd = sp_cmd_copy(self->dev, 0, self->host, 0, 64);
		EXPECT_EQ(-ENOENT, sp_submit(c.fd, q, &cmd, 1, NULL, 0, NULL, 0));
		cmd = sp_cmd_fill(self->dev, 0, 64, 0);
		EXPECT_EQ(-ENOENT, sp_submit(c.fd, q, &cmd, 1, NULL, 0, NULL, 0));
		EXPECT_EQ(-ENOENT, sp_submit(c.fd, q, NULL, 0, &s, 1, NULL, 0));
		EXPECT_EQ(-ENOENT, sp_submit(c.fd, q, NULL, 0, NULL, 0, &s, 1));
		sp_dev_close(&c);
	});
	/* the parent's objects are unharmed */
	EXPECT_EQ(0, sp_bo_info(self->d.fd, self->dev, &info));
	EXPECT_EQ(0, sp_queue_create(self->d.fd, DRM_SPYRE_ENGINE_DMA,
				     DRM_SPYRE_PRIORITY_NORMAL, &q2));
	EXPECT_EQ(0, sp_run(self->d.fd, self->q, NULL, 0));
}

/* The parent's mmap offset is useless through another open file. */
TEST_F(iso, child_cannot_map_parent_bo)
{
	IN_CHILD({
		struct sp_dev c;
		void *p;

		EXPECT_EQ(0, sp_dev_open(&c, 0));
		p = mmap(NULL, SP_MiB, PROT_READ, MAP_SHARED, c.fd, self->mmap_offset);
		EXPECT_EQ(MAP_FAILED, p);
		EXPECT_EQ(EACCES, errno);
		sp_dev_close(&c);
	});
}

/*
 * Device memory is not handed over with its old contents: a child that
 * allocates device memory after the parent freed it reads zeroes, never
 * the parent's data.
 */
TEST_F(iso, freed_device_memory_is_not_leaked)
{
	uint64_t size = 4 * SP_MiB;
	struct drm_spyre_cmd c;
	uint32_t secret;

	ASSERT_EQ(0, sp_bo_create(self->d.fd, size, DRM_SPYRE_PLACEMENT_DEVICE, &secret));
	c = sp_cmd_fill(secret, 0, size, 0x5ec2e7ed);
	ASSERT_EQ(0, sp_run(self->d.fd, self->q, &c, 1));
	ASSERT_EQ(0, sp_bo_close(self->d.fd, secret));
	IN_CHILD({
		struct sp_dev cd;
		uint32_t q, bo[4], *buf = malloc(size);
		uint64_t i;
		int j, hits = 0, nonzero = 0;

		EXPECT_EQ(0, sp_dev_open(&cd, 0));
		EXPECT_EQ(0, sp_queue_create(cd.fd, DRM_SPYRE_ENGINE_DMA,
					     DRM_SPYRE_PRIORITY_NORMAL, &q));
		for (j = 0; j < 4 && buf; j++) {
			EXPECT_EQ(0, sp_bo_create(cd.fd, size, DRM_SPYRE_PLACEMENT_DEVICE,
						  &bo[j]));
			EXPECT_EQ(0, sp_download(&cd, q, bo[j], 0, buf, size));
			for (i = 0; i < size / 4; i++) {
				hits += buf[i] == 0x5ec2e7ed;
				nonzero += buf[i] != 0;
			}
		}
		EXPECT_EQ(0, hits);
		EXPECT_EQ(0, nonzero);
		free(buf);
		sp_dev_close(&cd);
	});
}

/* Explicit sharing works: a dma-buf passed to the child imports into its file. */
TEST_F(iso, dmabuf_is_the_way_to_share)
{
	uint8_t *p;
	int buf;

	p = sp_bo_mmap(self->d.fd, self->host, SP_MiB);
	ASSERT_NE(NULL, p);
	sp_pattern(p, SP_MiB, 31);
	ASSERT_EQ(0, sp_prime_export(self->d.fd, self->host, &buf));
	IN_CHILD({
		struct sp_dev c;
		uint32_t h;
		uint8_t *m;

		EXPECT_EQ(0, sp_dev_open(&c, 0));
		EXPECT_EQ(0, sp_prime_import(c.fd, buf, &h));
		m = sp_bo_mmap(c.fd, h, SP_MiB);
		EXPECT_NE(NULL, m);
		if (m) {
			EXPECT_EQ(-1, sp_pattern_check(m, SP_MiB, 31));
			m[0] ^= 0xff;
		}
		sp_dev_close(&c);
	});
	/* the child's write is visible to the parent: one object */
	EXPECT_EQ(0, sp_pattern_check(p, SP_MiB, 31));
	close(buf);
	munmap(p, SP_MiB);
}

/* Each open file is its own DRM client, visible as such in fdinfo. */
TEST_F(iso, separate_clients_in_fdinfo)
{
	char a[4096], b[4096], *pa, *pb;
	struct sp_dev other;

	ASSERT_EQ(0, sp_dev_reopen(&self->d, &other));
	ASSERT_EQ(0, sp_fdinfo(self->d.fd, a, sizeof(a)));
	ASSERT_EQ(0, sp_fdinfo(other.fd, b, sizeof(b)));
	pa = strstr(a, "drm-client-id:");
	pb = strstr(b, "drm-client-id:");
	ASSERT_NE(NULL, pa);
	ASSERT_NE(NULL, pb);
	EXPECT_NE(strtoull(pa + 14, NULL, 10), strtoull(pb + 14, NULL, 10));
	sp_dev_close(&other);
}

/*
 * A child that dies with work queued does not disturb the parent: the
 * parent's queue keeps running jobs with correct results.
 */
/*
 * Scratchpads do not carry one client's data to the next: after this
 * process LOADs a secret into core 0's scratchpad, another process's
 * program that only STOREs that scratchpad reads zeros (the driver has the
 * card scrub scratchpads when the compute engine changes clients).
 */
TEST_F(iso, scratchpad_is_not_leaked_between_clients)
{
	struct drm_spyre_bo_range arg = { .handle = self->dev, .size = SP_PAGE };
	uint8_t prog[256];
	size_t plen = sp_prog_load_at(prog, 0, SP_PAGE);
	struct drm_spyre_cmd c;
	uint32_t cq, pbo;

	ASSERT_EQ(0, sp_queue_create(self->d.fd, DRM_SPYRE_ENGINE_COMPUTE,
				     DRM_SPYRE_PRIORITY_NORMAL, &cq));
	c = sp_cmd_fill(self->dev, 0, SP_PAGE, 0x5ec2e7ed);
	ASSERT_EQ(0, sp_run(self->d.fd, self->q, &c, 1));
	ASSERT_EQ(0, sp_prog_upload(&self->d, self->q, prog, plen, SP_PAGE, &pbo));
	c = sp_cmd_launch(pbo, 0, plen, 0, 0, 0, &arg, 1);
	ASSERT_EQ(0, sp_run(self->d.fd, cq, &c, 1));
	IN_CHILD({
		struct sp_dev cd;
		uint32_t dq, ccq, bo, cpbo, *buf = calloc(1, SP_PAGE);
		struct drm_spyre_bo_range carg = { .size = SP_PAGE };
		size_t clen = sp_prog_store_at(prog, 0, SP_PAGE);
		int i, hits = 0;

		EXPECT_EQ(0, sp_dev_open(&cd, 0));
		EXPECT_EQ(0, sp_queue_create(cd.fd, DRM_SPYRE_ENGINE_DMA,
					     DRM_SPYRE_PRIORITY_NORMAL, &dq));
		EXPECT_EQ(0, sp_queue_create(cd.fd, DRM_SPYRE_ENGINE_COMPUTE,
					     DRM_SPYRE_PRIORITY_NORMAL, &ccq));
		EXPECT_EQ(0, sp_bo_create(cd.fd, SP_PAGE, DRM_SPYRE_PLACEMENT_DEVICE, &bo));
		EXPECT_EQ(0, sp_prog_upload(&cd, dq, prog, clen, SP_PAGE, &cpbo));
		carg.handle = bo;
		c = sp_cmd_launch(cpbo, 0, clen, 0, 0, 0, &carg, 1);
		EXPECT_EQ(0, sp_run(cd.fd, ccq, &c, 1));
		EXPECT_EQ(0, sp_download(&cd, dq, bo, 0, buf, SP_PAGE));
		for (i = 0; buf && i < SP_PAGE / 4; i++)
			hits += buf[i] == 0x5ec2e7ed;
		EXPECT_EQ(0, hits);
		free(buf);
		sp_dev_close(&cd);
	});
}

TEST_F(iso, child_death_does_not_disturb_parent)
{
	struct drm_spyre_cmd c[2];
	uint32_t *m;

	IN_CHILD({
		struct sp_dev cd;
		struct drm_spyre_cmd cmds[64];
		uint32_t q, big;
		int i;

		EXPECT_EQ(0, sp_dev_open(&cd, 0));
		EXPECT_EQ(0, sp_queue_create(cd.fd, DRM_SPYRE_ENGINE_DMA,
					     DRM_SPYRE_PRIORITY_NORMAL, &q));
		EXPECT_EQ(0, sp_bo_create(cd.fd, SP_MiB, DRM_SPYRE_PLACEMENT_DEVICE, &big));
		for (i = 0; i < 64; i++)
			cmds[i] = sp_cmd_fill(big, 0, SP_MiB, i);
		for (i = 0; i < 8; i++) {
			EXPECT_EQ(0, sp_submit(cd.fd, q, cmds, 64, NULL, 0, NULL, 0));
		}
		/* exit without closing anything */
	});
	c[0] = sp_cmd_fill(self->dev, 0, 64, 0xabcdef01);
	c[1] = sp_cmd_copy(self->dev, 0, self->host, 0, 64);
	ASSERT_EQ(0, sp_run(self->d.fd, self->q, c, 2));
	m = sp_bo_mmap(self->d.fd, self->host, SP_PAGE);
	ASSERT_NE(NULL, m);
	EXPECT_EQ(0xabcdef01, m[0]);
	EXPECT_EQ(0xabcdef01, m[15]);
	munmap(m, SP_PAGE);
}

TEST_HARNESS_MAIN
