// SPDX-License-Identifier: GPL-2.0
/*
 * Spyre accel selftests: QUEUE_CREATE / QUEUE_DESTROY, priorities, limits
 * and what happens to submitted work when its queue goes away.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>

#include "kselftest_harness.h"
#include "spyre_util.h"

FIXTURE(queue) {
	struct sp_dev d;
};

FIXTURE_VARIANT(queue) {
	uint32_t engine;
};

FIXTURE_VARIANT_ADD(queue, compute) {
	.engine = DRM_SPYRE_ENGINE_COMPUTE,
};

FIXTURE_VARIANT_ADD(queue, dma) {
	.engine = DRM_SPYRE_ENGINE_DMA,
};

FIXTURE_SETUP(queue)
{
	SP_OPEN_OR_SKIP(&self->d, 0);
}

FIXTURE_TEARDOWN(queue)
{
	sp_dev_close(&self->d);
}

TEST_F(queue, create_destroy)
{
	uint32_t a = 0, b = 0;

	ASSERT_EQ(0, sp_queue_create(self->d.fd, variant->engine, DRM_SPYRE_PRIORITY_NORMAL, &a));
	ASSERT_EQ(0, sp_queue_create(self->d.fd, variant->engine, DRM_SPYRE_PRIORITY_LOW, &b));
	EXPECT_NE(0, a);
	EXPECT_NE(0, b);
	EXPECT_NE(a, b);
	EXPECT_EQ(0, sp_queue_destroy(self->d.fd, a));
	EXPECT_EQ(0, sp_queue_destroy(self->d.fd, b));
}

TEST_F(queue, create_bad_input)
{
	struct drm_spyre_queue_create c = {
		.engine = variant->engine, .priority = DRM_SPYRE_PRIORITY_NORMAL,
	};

	c.flags = 1;
	EXPECT_EQ(-EINVAL, sp_ioctl(self->d.fd, DRM_IOCTL_SPYRE_QUEUE_CREATE, &c));
	c.flags = 0;
	c.engine = 2;
	EXPECT_EQ(-EINVAL, sp_ioctl(self->d.fd, DRM_IOCTL_SPYRE_QUEUE_CREATE, &c));
	c.engine = ~0u;
	EXPECT_EQ(-EINVAL, sp_ioctl(self->d.fd, DRM_IOCTL_SPYRE_QUEUE_CREATE, &c));
	c.engine = variant->engine;
	c.priority = DRM_SPYRE_PRIORITY_HIGH + 1;
	EXPECT_EQ(-EINVAL, sp_ioctl(self->d.fd, DRM_IOCTL_SPYRE_QUEUE_CREATE, &c));
}

TEST_F(queue, destroy_bad_input)
{
	struct drm_spyre_queue_destroy d = { 0 };
	uint32_t id;

	EXPECT_EQ(-ENOENT, sp_queue_destroy(self->d.fd, 0));
	EXPECT_EQ(-ENOENT, sp_queue_destroy(self->d.fd, 12345));
	ASSERT_EQ(0, sp_queue_create(self->d.fd, variant->engine, DRM_SPYRE_PRIORITY_NORMAL, &id));
	d.queue_id = id;
	d.pad = 1;
	EXPECT_EQ(-EINVAL, sp_ioctl(self->d.fd, DRM_IOCTL_SPYRE_QUEUE_DESTROY, &d));
	EXPECT_EQ(0, sp_queue_destroy(self->d.fd, id));
	/* the ID is invalid at once */
	EXPECT_EQ(-ENOENT, sp_queue_destroy(self->d.fd, id));
	EXPECT_EQ(-ENOENT, sp_submit(self->d.fd, id, NULL, 0, NULL, 0, NULL, 0));
}

/* Root (CAP_SYS_NICE) may create high-priority queues. */
TEST_F(queue, high_priority_privileged)
{
	uint32_t id;

	if (geteuid())
		SKIP(return, "needs root");
	ASSERT_EQ(0, sp_queue_create(self->d.fd, variant->engine, DRM_SPYRE_PRIORITY_HIGH, &id));
	EXPECT_EQ(0, sp_run(self->d.fd, id, NULL, 0));
}

/* Without CAP_SYS_NICE a high-priority queue is refused with -EACCES. */
TEST_F(queue, high_priority_needs_cap)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];
	uint32_t id;

	ASSERT_EQ(0, syscall(SYS_capget, &hdr, data));
	data[CAP_SYS_NICE / 32].effective &= ~(1u << (CAP_SYS_NICE % 32));
	ASSERT_EQ(0, syscall(SYS_capset, &hdr, data));
	EXPECT_EQ(-EACCES, sp_queue_create(self->d.fd, variant->engine,
					   DRM_SPYRE_PRIORITY_HIGH, &id));
	EXPECT_EQ(0, sp_queue_create(self->d.fd, variant->engine, DRM_SPYRE_PRIORITY_NORMAL, &id));
}

/* A file holds at most MAX_QUEUES queues (-ENOSPC); destroying frees a slot. */
TEST_F(queue, max_queues)
{
	uint32_t max = self->d.p[DRM_SPYRE_PARAM_MAX_QUEUES], i, id, first = 0;
	struct sp_dev other;
	int ret = 0;

	ASSERT_LE(max, 4096);
	for (i = 0; i < max; i++) {
		ret = sp_queue_create(self->d.fd, variant->engine, DRM_SPYRE_PRIORITY_NORMAL, &id);
		ASSERT_EQ(0, ret);
		if (!i)
			first = id;
	}
	EXPECT_EQ(-ENOSPC, sp_queue_create(self->d.fd, variant->engine,
					   DRM_SPYRE_PRIORITY_NORMAL, &id));
	ASSERT_EQ(0, sp_queue_destroy(self->d.fd, first));
	EXPECT_EQ(0, sp_queue_create(self->d.fd, variant->engine, DRM_SPYRE_PRIORITY_NORMAL, &id));
	/* another file has its own budget */
	ASSERT_EQ(0, sp_dev_reopen(&self->d, &other));
	EXPECT_EQ(0, sp_queue_create(other.fd, variant->engine, DRM_SPYRE_PRIORITY_NORMAL, &id));
	sp_dev_close(&other);
}

/* Queue IDs are private to their file. */
TEST_F(queue, foreign_queue)
{
	struct sp_dev other;
	uint32_t id;

	ASSERT_EQ(0, sp_queue_create(self->d.fd, variant->engine, DRM_SPYRE_PRIORITY_NORMAL, &id));
	ASSERT_EQ(0, sp_dev_reopen(&self->d, &other));
	EXPECT_EQ(-ENOENT, sp_submit(other.fd, id, NULL, 0, NULL, 0, NULL, 0));
	EXPECT_EQ(-ENOENT, sp_queue_destroy(other.fd, id));
	EXPECT_EQ(0, sp_run(self->d.fd, id, NULL, 0));
	sp_dev_close(&other);
}

/*
 * Destroying a queue with work in flight: the ID is gone at once, but the
 * submitted jobs still run to completion and their fences signal cleanly.
 */
TEST_F(queue, destroy_with_jobs_in_flight)
{
	struct drm_spyre_cmd cmds[64];
	struct drm_spyre_sync out[8];
	uint32_t id, dev, ts, i;
	uint64_t *t;

	ASSERT_EQ(0, sp_queue_create(self->d.fd, variant->engine, DRM_SPYRE_PRIORITY_NORMAL, &id));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, 8 * SP_MiB, DRM_SPYRE_PLACEMENT_DEVICE, &dev));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, SP_PAGE, DRM_SPYRE_PLACEMENT_HOST, &ts));
	t = sp_bo_mmap(self->d.fd, ts, SP_PAGE);
	ASSERT_NE(NULL, t);
	memset(t, 0, SP_PAGE);
	for (i = 0; i < 63; i++)
		cmds[i] = sp_cmd_fill(dev, 0, 8 * SP_MiB, i);
	for (i = 0; i < 8; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &out[i].handle, false));
		cmds[63] = sp_cmd_ts(ts, 8 * i);
		ASSERT_EQ(0, sp_submit(self->d.fd, id, cmds, 64, NULL, 0, &out[i], 1));
	}
	ASSERT_EQ(0, sp_queue_destroy(self->d.fd, id));
	EXPECT_EQ(-ENOENT, sp_submit(self->d.fd, id, NULL, 0, NULL, 0, NULL, 0));
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(0, sp_syncobj_wait(self->d.fd, out[i].handle, 0, SP_WAIT_NS));
		EXPECT_EQ(1, sp_fence_status(self->d.fd, out[i].handle, 0));
		EXPECT_NE(0, t[i]);
		if (i) {
			EXPECT_LE(t[i - 1], t[i]);
		}
	}
}

struct destroyer {
	int fd;
	uint32_t max_id;
	atomic_bool stop;
	unsigned long destroyed;
};

/* Destroys every queue ID in turn, as fast as it can. */
static void *destroy_every_id(void *arg)
{
	struct destroyer *r = arg;
	uint32_t id;

	while (!atomic_load(&r->stop))
		for (id = 1; id <= r->max_id; id++)
			if (!sp_queue_destroy(r->fd, id))
				r->destroyed++;
	return NULL;
}

/*
 * Queue IDs are predictable, so another thread can destroy a queue the
 * moment QUEUE_CREATE makes it visible: CREATE must still return the ID it
 * allocated (not read it back from a queue that may be gone), destroy
 * finds that queue or nothing, and every queue ends up freed.
 */
TEST_F_TIMEOUT(queue, create_races_destroy, 60)
{
	struct destroyer r = { .fd = self->d.fd,
			       .max_id = self->d.p[DRM_SPYRE_PARAM_MAX_QUEUES] };
	unsigned long created = 0;
	pthread_t thread;
	uint32_t id, q;
	int i, ret;

	ASSERT_EQ(0, pthread_create(&thread, NULL, destroy_every_id, &r));
	for (i = 0; i < 20000; i++) {
		ret = sp_queue_create(self->d.fd, variant->engine, DRM_SPYRE_PRIORITY_NORMAL, &id);
		if (ret == -ENOSPC)
			continue;
		ASSERT_EQ(0, ret);
		ASSERT_LE(1, id);
		ASSERT_GE(r.max_id, id);
		created++;
	}
	atomic_store(&r.stop, true);
	pthread_join(thread, NULL);
	for (id = 1; id <= r.max_id; id++)
		if (!sp_queue_destroy(self->d.fd, id))
			r.destroyed++;
	EXPECT_EQ(created, r.destroyed);
	ASSERT_EQ(0, sp_queue_create(self->d.fd, variant->engine, DRM_SPYRE_PRIORITY_NORMAL, &q));
	EXPECT_EQ(0, sp_run(self->d.fd, q, NULL, 0));
}

TEST_HARNESS_MAIN
