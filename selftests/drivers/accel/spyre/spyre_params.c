// SPDX-License-Identifier: GPL-2.0
/*
 * Spyre accel selftests: device identity and DRM_IOCTL_SPYRE_GET_PARAM.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "spyre_util.h"

FIXTURE(params) {
	struct sp_dev d;
};

FIXTURE_SETUP(params)
{
	SP_OPEN_OR_SKIP(&self->d, 0);
}

FIXTURE_TEARDOWN(params)
{
	sp_dev_close(&self->d);
}

/* The DRM core reports our driver's name through DRM_IOCTL_VERSION. */
TEST_F(params, version_name)
{
	char name[64] = { 0 };
	struct drm_version v = { .name = name, .name_len = sizeof(name) - 1 };

	ASSERT_EQ(0, sp_ioctl(self->d.fd, DRM_IOCTL_VERSION, &v));
	EXPECT_STREQ("spyre", name);
}

/* Syncobjs, timelines and PRIME are part of the contract. */
TEST_F(params, caps)
{
	struct drm_get_cap cap = { .capability = DRM_CAP_SYNCOBJ };

	ASSERT_EQ(0, sp_ioctl(self->d.fd, DRM_IOCTL_GET_CAP, &cap));
	EXPECT_EQ(1, cap.value);
	cap.capability = DRM_CAP_SYNCOBJ_TIMELINE;
	cap.value = 0;
	ASSERT_EQ(0, sp_ioctl(self->d.fd, DRM_IOCTL_GET_CAP, &cap));
	EXPECT_EQ(1, cap.value);
	cap.capability = DRM_CAP_PRIME;
	cap.value = 0;
	ASSERT_EQ(0, sp_ioctl(self->d.fd, DRM_IOCTL_GET_CAP, &cap));
	EXPECT_EQ(DRM_PRIME_CAP_IMPORT | DRM_PRIME_CAP_EXPORT,
		  cap.value & (DRM_PRIME_CAP_IMPORT | DRM_PRIME_CAP_EXPORT));
}

/* Every documented parameter answers, with values that make sense. */
TEST_F(params, all_params_sane)
{
	const uint64_t *p = self->d.p;

	EXPECT_EQ(0x1234, p[DRM_SPYRE_PARAM_PCI_VENDOR]);
	EXPECT_EQ(0x5350, p[DRM_SPYRE_PARAM_PCI_DEVICE]);
	EXPECT_GE(p[DRM_SPYRE_PARAM_HW_VERSION] >> 16, 1);
	EXPECT_GE(p[DRM_SPYRE_PARAM_NUM_CORES], 1);
	EXPECT_LE(p[DRM_SPYRE_PARAM_NUM_CORES], 32);
	EXPECT_EQ(2ull << 20, p[DRM_SPYRE_PARAM_SCRATCHPAD_SIZE]);
	EXPECT_GE(p[DRM_SPYRE_PARAM_MEM_SIZE], 16 * SP_MiB);
	EXPECT_LE(p[DRM_SPYRE_PARAM_MEM_FREE], p[DRM_SPYRE_PARAM_MEM_SIZE]);
	EXPECT_GT(p[DRM_SPYRE_PARAM_CLOCK_MHZ], 0);
	EXPECT_GE(p[DRM_SPYRE_PARAM_COMPUTE_RINGS], 1);
	EXPECT_GE(p[DRM_SPYRE_PARAM_DMA_RINGS], 1);
	EXPECT_EQ(p[DRM_SPYRE_PARAM_NUM_RINGS],
		  p[DRM_SPYRE_PARAM_COMPUTE_RINGS] + p[DRM_SPYRE_PARAM_DMA_RINGS]);
	EXPECT_GE(p[DRM_SPYRE_PARAM_RING_ENTRIES], 16);
	/* ring sizes are powers of two */
	EXPECT_EQ(0, p[DRM_SPYRE_PARAM_RING_ENTRIES] & (p[DRM_SPYRE_PARAM_RING_ENTRIES] - 1));
	EXPECT_GE(p[DRM_SPYRE_PARAM_NUM_SEMS], 1);
	EXPECT_GE(p[DRM_SPYRE_PARAM_MAX_CMDS], 64);
	EXPECT_GE(p[DRM_SPYRE_PARAM_MAX_SYNCS], 8);
	EXPECT_EQ(64, p[DRM_SPYRE_PARAM_MAX_ARGS]);	/* card interface 1.7 */
	EXPECT_GE(p[DRM_SPYRE_PARAM_MAX_QUEUES], 8);
	EXPECT_GE(p[DRM_SPYRE_PARAM_MAX_HOST_BO_SIZE], 64 * SP_MiB);
}

/* Unknown parameters fail with -EINVAL, including just past the last. */
TEST_F(params, unknown_param)
{
	uint64_t v = 0xdead;

	EXPECT_EQ(-EINVAL, sp_get_param(self->d.fd, DRM_SPYRE_PARAM_USER_QUEUES + 1, &v));
	EXPECT_EQ(-EINVAL, sp_get_param(self->d.fd, 0x80000000u, &v));
	EXPECT_EQ(-EINVAL, sp_get_param(self->d.fd, ~0u, &v));
	EXPECT_EQ(0xdead, v);
}

TEST_F(params, nonzero_pad)
{
	struct drm_spyre_get_param gp = {
		.param = DRM_SPYRE_PARAM_NUM_CORES, .pad = 1,
	};

	EXPECT_EQ(-EINVAL, sp_ioctl(self->d.fd, DRM_IOCTL_SPYRE_GET_PARAM, &gp));
}

/* The device clock of DRM_SPYRE_CMD_TIMESTAMP never runs backwards. */
TEST_F(params, device_time_monotonic)
{
	uint64_t t0, t1, t2;

	ASSERT_EQ(0, sp_get_param(self->d.fd, DRM_SPYRE_PARAM_DEVICE_TIME_NS, &t0));
	ASSERT_EQ(0, sp_get_param(self->d.fd, DRM_SPYRE_PARAM_DEVICE_TIME_NS, &t1));
	ASSERT_EQ(0, sp_get_param(self->d.fd, DRM_SPYRE_PARAM_DEVICE_TIME_NS, &t2));
	EXPECT_LE(t0, t1);
	EXPECT_LE(t1, t2);
	EXPECT_LT(t0, t2);
}

/* MEM_FREE follows device BO allocation and release, page-rounded. */
TEST_F(params, mem_free_tracks_bos)
{
	uint64_t before, during, after;
	uint32_t bo;

	ASSERT_EQ(0, sp_get_param(self->d.fd, DRM_SPYRE_PARAM_MEM_FREE, &before));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, 8 * SP_MiB + 1, DRM_SPYRE_PLACEMENT_DEVICE, &bo));
	ASSERT_EQ(0, sp_get_param(self->d.fd, DRM_SPYRE_PARAM_MEM_FREE, &during));
	EXPECT_LE(during + 8 * SP_MiB + SP_PAGE, before);
	ASSERT_EQ(0, sp_bo_close(self->d.fd, bo));
	ASSERT_EQ(0, sp_get_param(self->d.fd, DRM_SPYRE_PARAM_MEM_FREE, &after));
	EXPECT_EQ(before, after);
}

/*
 * Structures only grow at their end: an older, shorter GET_PARAM (param
 * and pad only) is zero-extended by the DRM core and still accepted.
 */
TEST_F(params, short_struct_accepted)
{
	struct {
		__u32 param;
		__u32 pad;
	} old = { .param = DRM_SPYRE_PARAM_NUM_CORES };
	unsigned long req = _IOC(_IOC_READ | _IOC_WRITE, DRM_IOCTL_BASE,
				 DRM_COMMAND_BASE + DRM_SPYRE_GET_PARAM, sizeof(old));

	EXPECT_EQ(0, sp_ioctl(self->d.fd, req, &old));
}

/* A driver ioctl number past the table fails cleanly. */
TEST_F(params, unknown_ioctl)
{
	struct drm_spyre_get_param gp = { 0 };
	unsigned long req = DRM_IOWR(DRM_COMMAND_BASE + 0x3f, struct drm_spyre_get_param);

	EXPECT_EQ(-EINVAL, sp_ioctl(self->d.fd, req, &gp));
}

/* drm-usage-stats: the standard fdinfo keys tools like gputop read. */
TEST_F(params, fdinfo_keys)
{
	char buf[8192];

	ASSERT_EQ(0, sp_fdinfo(self->d.fd, buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "drm-driver:\tspyre"));
	EXPECT_NE(NULL, strstr(buf, "drm-client-id:"));
	EXPECT_NE(NULL, strstr(buf, "drm-engine-"));
	if (!strstr(buf, "drm-driver:\tspyre"))
		TH_LOG("fdinfo:\n%s", buf);
}

/*
 * fdinfo accounts this file's memory per region and the device time its
 * jobs used per engine (drm-usage-stats).
 */
TEST_F(params, fdinfo_usage)
{
	uint64_t dev_mem, host_mem, dma0, dma1, cmp0, cmp1;
	struct drm_spyre_cmd c;
	uint32_t dq, cq, dev, host;

	ASSERT_EQ(0, sp_bo_create(self->d.fd, 4 * SP_MiB, DRM_SPYRE_PLACEMENT_DEVICE, &dev));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, 2 * SP_MiB, DRM_SPYRE_PLACEMENT_HOST, &host));
	ASSERT_EQ(0, sp_fdinfo_u64(self->d.fd, "drm-total-device", &dev_mem));
	ASSERT_EQ(0, sp_fdinfo_u64(self->d.fd, "drm-total-host", &host_mem));
	EXPECT_EQ(4 * SP_MiB, dev_mem);
	EXPECT_EQ(2 * SP_MiB, host_mem);

	ASSERT_EQ(0, sp_queue_create(self->d.fd, DRM_SPYRE_ENGINE_DMA, DRM_SPYRE_PRIORITY_NORMAL,
				     &dq));
	ASSERT_EQ(0, sp_queue_create(self->d.fd, DRM_SPYRE_ENGINE_COMPUTE,
				     DRM_SPYRE_PRIORITY_NORMAL, &cq));
	ASSERT_EQ(0, sp_fdinfo_u64(self->d.fd, "drm-engine-dma", &dma0));
	ASSERT_EQ(0, sp_fdinfo_u64(self->d.fd, "drm-engine-compute", &cmp0));
	c = sp_cmd_copy(host, 0, dev, 0, 2 * SP_MiB);
	ASSERT_EQ(0, sp_run(self->d.fd, dq, &c, 1));
	ASSERT_EQ(0, sp_fdinfo_u64(self->d.fd, "drm-engine-dma", &dma1));
	/* 2 MiB over PCIe is tens of microseconds of modelled time */
	EXPECT_GE(dma1 - dma0, 10000);
	EXPECT_EQ(0, sp_fdinfo_u64(self->d.fd, "drm-engine-compute", &cmp1));
	EXPECT_EQ(cmp0, cmp1);
	ASSERT_EQ(0, sp_bo_close(self->d.fd, dev));
	ASSERT_EQ(0, sp_fdinfo_u64(self->d.fd, "drm-total-device", &dev_mem));
	EXPECT_EQ(0, dev_mem);
}

/* Every accel node bound to spyre opens and reports the card's identity. */
TEST(every_card_opens)
{
	int minors[SP_MAX_CARDS], n, i;
	struct sp_dev d;

	n = sp_find_cards(minors, SP_MAX_CARDS);
	if (!n)
		SKIP(return, "no Spyre card");
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, sp_dev_open(&d, i));
		EXPECT_EQ(minors[i], d.minor);
		EXPECT_EQ(0x5350, d.p[DRM_SPYRE_PARAM_PCI_DEVICE]);
		sp_dev_close(&d);
	}
}

TEST_HARNESS_MAIN
