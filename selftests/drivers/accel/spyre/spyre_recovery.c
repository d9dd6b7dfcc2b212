// SPDX-License-Identifier: GPL-2.0
/*
 * Spyre accel selftests: recovery, driven by the card's fault knobs through
 * the driver's debugfs ("fault" arms a one-shot fault on a ring, "reset"
 * resets the card). A hung engine times out, its ring is reset, the guilty
 * job fails, its queue is banned and every other queue keeps working; a
 * failed DMA or a garbled completion fails only its job.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "spyre_prog.h"
#include "spyre_util.h"

/* One-shot faults of the card's SPYRE_REG_FAULT (Documentation/spyre-card.rst). */
#define SP_FAULT_HANG		1	/* the ring's next command never completes */
#define SP_FAULT_DMA		2	/* its next DMA fails */
#define SP_FAULT_CORRUPT	3	/* its next completion record is garbage */
#define SP_FAULT_MEM_UE		4	/* an uncorrectable memory error */

#define TIMEOUT_PARAM	"/sys/module/spyre/parameters/job_timeout_ms"
/* Job timeout during these tests: hangs are detected quickly. */
#define TEST_TIMEOUT_MS	"2000"

FIXTURE(recovery) {
	struct sp_dev d;
	uint32_t host, dev;
	uint64_t *map;
	uint64_t resets;
	char saved_timeout[32];
};

FIXTURE_VARIANT(recovery) {
	uint32_t engine;	/* engine of the queue that gets the fault */
};

FIXTURE_VARIANT_ADD(recovery, compute) {
	.engine = DRM_SPYRE_ENGINE_COMPUTE,
};

FIXTURE_VARIANT_ADD(recovery, dma) {
	.engine = DRM_SPYRE_ENGINE_DMA,
};

FIXTURE_SETUP(recovery)
{
	char path[256];

	SP_OPEN_OR_SKIP(&self->d, 0);
	if (sp_debugfs_path(&self->d, "fault", path, sizeof(path)))
		SKIP(return, "no fault knob in debugfs (not root, or no debugfs)");
	ASSERT_EQ(0, sp_bo_create(self->d.fd, SP_PAGE, DRM_SPYRE_PLACEMENT_HOST, &self->host));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, SP_MiB, DRM_SPYRE_PLACEMENT_DEVICE, &self->dev));
	self->map = sp_bo_mmap(self->d.fd, self->host, SP_PAGE);
	ASSERT_NE(NULL, self->map);
	memset(self->map, 0, SP_PAGE);
	ASSERT_EQ(0, sp_get_param(self->d.fd, DRM_SPYRE_PARAM_RESET_COUNT, &self->resets));
	/* shorten the job timeout if the driver lets us (restored at teardown) */
	if (!sp_read_file(TIMEOUT_PARAM, self->saved_timeout, sizeof(self->saved_timeout)) &&
	    sp_write_file(TIMEOUT_PARAM, TEST_TIMEOUT_MS))
		self->saved_timeout[0] = '\0';
}

FIXTURE_TEARDOWN(recovery)
{
	/* never leave a fault armed for the next test */
	sp_debugfs_write(&self->d, "fault", "0");
	if (self->saved_timeout[0])
		sp_write_file(TIMEOUT_PARAM, self->saved_timeout);
	sp_dev_close(&self->d);
}

/* A queue on @engine (for DMA: on a ring other than @avoid_ring, if any). */
static int make_queue(FIXTURE_DATA(recovery) *self, uint32_t engine, int avoid_ring,
		      uint32_t *q)
{
	int tries, ring, ret;

	for (tries = 0; tries < 8; tries++) {
		ret = sp_queue_create(self->d.fd, engine, DRM_SPYRE_PRIORITY_NORMAL, q);
		if (ret)
			return ret;
		ring = sp_queue_ring(&self->d, *q);
		if (ring < 0)
			return ring;
		if (ring != avoid_ring || engine == DRM_SPYRE_ENGINE_COMPUTE)
			return 0;
	}
	return 0;
}

static uint64_t reset_count(FIXTURE_DATA(recovery) *self)
{
	uint64_t v = 0;

	sp_get_param(self->d.fd, DRM_SPYRE_PARAM_RESET_COUNT, &v);
	return v;
}

/*
 * A card-level error is recovered by a worker that has no fence to wait
 * on: poll the reset count (bounded) until it moves past @old.
 */
static bool wait_reset_past(FIXTURE_DATA(recovery) *self, uint64_t old)
{
	uint64_t deadline = sp_now_ns() + SP_WAIT_NS;

	while (sp_now_ns() < deadline) {
		if (reset_count(self) > old)
			return true;
		usleep(1000);
	}
	return false;
}

/*
 * Engine hang: the job never completes, times out, its ring is reset; the
 * job fails with -ETIMEDOUT, the queue's next queued job is cancelled, the
 * queue is banned (-ECANCELED) and a queue on another engine is unaffected
 * (it completes even while the hang is pending).
 */
TEST_F_TIMEOUT(recovery, hang_timeout_reset_ban, 60)
{
	struct drm_spyre_sync hung = { 0 }, behind = { 0 }, other_done = { 0 };
	uint32_t q, other, fresh, other_engine;
	struct drm_spyre_cmd c = sp_cmd_ts(self->host, 0);
	int ring;

	other_engine = variant->engine == DRM_SPYRE_ENGINE_DMA ? DRM_SPYRE_ENGINE_COMPUTE :
								  DRM_SPYRE_ENGINE_DMA;
	ASSERT_EQ(0, make_queue(self, variant->engine, -1, &q));
	ring = sp_queue_ring(&self->d, q);
	ASSERT_LE(0, ring);
	ASSERT_EQ(0, make_queue(self, other_engine, ring, &other));
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &hung.handle, false));
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &behind.handle, false));
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &other_done.handle, false));

	ASSERT_EQ(0, sp_arm_fault(&self->d, SP_FAULT_HANG, ring));
	ASSERT_EQ(0, sp_submit(self->d.fd, q, &c, 1, NULL, 0, &hung, 1));
	c = sp_cmd_ts(self->host, 8);
	ASSERT_EQ(0, sp_submit(self->d.fd, q, &c, 1, NULL, 0, &behind, 1));

	/* the other engine's queue completes while the hang is still pending */
	c = sp_cmd_ts(self->host, 16);
	ASSERT_EQ(0, sp_submit(self->d.fd, other, &c, 1, NULL, 0, &other_done, 1));
	ASSERT_EQ(0, sp_syncobj_wait(self->d.fd, other_done.handle, 0, SP_WAIT_NS));
	EXPECT_EQ(1, sp_fence_status(self->d.fd, other_done.handle, 0));
	EXPECT_EQ(0, sp_fence_status(self->d.fd, hung.handle, 0));
	/* the BO the hung job uses stays busy */
	EXPECT_EQ(-ETIME, sp_bo_wait(self->d.fd, self->host, 100 * 1000 * 1000));

	ASSERT_EQ(0, sp_syncobj_wait(self->d.fd, behind.handle, 0, SP_WAIT_NS));
	EXPECT_EQ(-ETIMEDOUT, sp_fence_status(self->d.fd, hung.handle, 0));
	EXPECT_EQ(-ECANCELED, sp_fence_status(self->d.fd, behind.handle, 0));
	EXPECT_EQ(0, self->map[0]);
	EXPECT_EQ(0, self->map[1]);
	EXPECT_LT(self->resets, reset_count(self));

	/* banned */
	EXPECT_EQ(-ECANCELED, sp_submit(self->d.fd, q, &c, 1, NULL, 0, NULL, 0));
	/* everyone else still works, on both engines */
	EXPECT_EQ(0, sp_run(self->d.fd, other, &c, 1));
	ASSERT_EQ(0, sp_queue_create(self->d.fd, variant->engine, DRM_SPYRE_PRIORITY_NORMAL,
				     &fresh));
	c = sp_cmd_ts(self->host, 24);
	EXPECT_EQ(0, sp_run(self->d.fd, fresh, &c, 1));
	EXPECT_NE(0, self->map[3]);
	EXPECT_EQ(0, sp_bo_wait(self->d.fd, self->host, 0));
	/* a banned queue can still be destroyed */
	EXPECT_EQ(0, sp_queue_destroy(self->d.fd, q));
}

/*
 * Jobs of other queues queued on the same ring behind a hung job are not
 * lost: the reset replays them and they complete successfully.
 */
TEST_F_TIMEOUT(recovery, hang_spares_same_ring_queue, 60)
{
	struct drm_spyre_sync hung = { 0 }, victim = { 0 };
	struct drm_spyre_cmd c = sp_cmd_ts(self->host, 0);
	uint32_t q, q2;
	int ring, tries;

	ASSERT_EQ(0, make_queue(self, variant->engine, -1, &q));
	ring = sp_queue_ring(&self->d, q);
	/* a second queue on the very same ring */
	for (tries = 0; tries < 32; tries++) {
		ASSERT_EQ(0, sp_queue_create(self->d.fd, variant->engine,
					     DRM_SPYRE_PRIORITY_NORMAL, &q2));
		if (sp_queue_ring(&self->d, q2) == ring)
			break;
	}
	ASSERT_EQ(ring, sp_queue_ring(&self->d, q2));
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &hung.handle, false));
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &victim.handle, false));
	ASSERT_EQ(0, sp_arm_fault(&self->d, SP_FAULT_HANG, ring));
	ASSERT_EQ(0, sp_submit(self->d.fd, q, &c, 1, NULL, 0, &hung, 1));
	c = sp_cmd_ts(self->host, 8);
	ASSERT_EQ(0, sp_submit(self->d.fd, q2, &c, 1, NULL, 0, &victim, 1));
	ASSERT_EQ(0, sp_syncobj_wait(self->d.fd, victim.handle, 0, SP_WAIT_NS));
	ASSERT_EQ(0, sp_syncobj_wait(self->d.fd, hung.handle, 0, SP_WAIT_NS));
	EXPECT_EQ(-ETIMEDOUT, sp_fence_status(self->d.fd, hung.handle, 0));
	EXPECT_EQ(1, sp_fence_status(self->d.fd, victim.handle, 0));
	EXPECT_NE(0, self->map[1]);
	EXPECT_EQ(0, sp_run(self->d.fd, q2, &c, 1));
}

/*
 * The timeout catches hangs, not long jobs: a job of many short commands
 * that runs for several job timeouts (and over a second), but makes
 * progress all along, succeeds. The timeout is sized from the measured
 * speed of one command (40 commands' worth, at least 50 ms), so a loaded
 * host does not turn progress into a hang.
 */
TEST_F_TIMEOUT(recovery, long_job_outlives_short_timeout, 90)
{
	uint32_t max = self->d.p[DRM_SPYRE_PARAM_MAX_CMDS], n, q, big, i;
	struct drm_spyre_cmd *cmds = calloc(max, sizeof(*cmds));
	uint64_t fill = 64 * SP_MiB, bo_size = 256 * SP_MiB;
	uint64_t t0, t16, t64, per_cmd, timeout_ms, elapsed, target_ns;
	bool proven = false;
	int ret, attempt;
	char val[32];

	if (!self->saved_timeout[0])
		SKIP(return, "job_timeout_ms is not writable");
	ASSERT_NE(NULL, cmds);
	ASSERT_LE(160, max);
	ASSERT_EQ(0, sp_queue_create(self->d.fd, variant->engine, DRM_SPYRE_PRIORITY_NORMAL, &q));
	/* room to make each command longer on a fast host (fills up to 256 MiB) */
	if (sp_bo_create(self->d.fd, bo_size, DRM_SPYRE_PLACEMENT_DEVICE, &big)) {
		bo_size = fill;
		ASSERT_EQ(0, sp_bo_create(self->d.fd, bo_size, DRM_SPYRE_PLACEMENT_DEVICE, &big));
	}
	for (i = 0; i < max; i++)
		cmds[i] = sp_cmd_fill(big, 0, fill, i);
	/* calibrate: the cost of one command here, now, without fixed costs */
	cmds[15] = sp_cmd_ts(self->host, 8);
	t0 = sp_now_ns();
	ASSERT_EQ(0, sp_run(self->d.fd, q, cmds, 16));
	t16 = sp_now_ns() - t0;
	cmds[15] = sp_cmd_fill(big, 0, fill, 15);
	cmds[63] = sp_cmd_ts(self->host, 8);
	t0 = sp_now_ns();
	ASSERT_EQ(0, sp_run(self->d.fd, q, cmds, 64));
	t64 = sp_now_ns() - t0;
	cmds[63] = sp_cmd_fill(big, 0, fill, 63);
	per_cmd = t64 > t16 ? (t64 - t16) / 48 : t64 / 64;
	/*
	 * The host's speed varies (it is shared): if the job ran shorter than
	 * its timeout it proved nothing, so size it again from that run.
	 */
	for (attempt = 0; attempt < 4 && !proven; attempt++) {
		if (!per_cmd)
			per_cmd = 1;
		timeout_ms = per_cmd * 40 / 1000000 + 1;
		if (timeout_ms < 50)
			timeout_ms = 50;
		/* aim at 4 timeouts, and at least 1.5 s (drivers may floor the limit at 1 s) */
		target_ns = timeout_ms * 4000000 > 1500000000 ? timeout_ms * 4000000 : 1500000000;
		n = target_ns / per_cmd + 1;
		if (n > max)
			n = max;
		cmds[n - 1] = sp_cmd_ts(self->host, 0);
		self->map[0] = 0;
		snprintf(val, sizeof(val), "%llu", (unsigned long long)timeout_ms);
		ASSERT_EQ(0, sp_write_file(TIMEOUT_PARAM, val));
		t0 = sp_now_ns();
		ret = sp_run(self->d.fd, q, cmds, n);
		elapsed = sp_now_ns() - t0;
		ASSERT_EQ(0, sp_write_file(TIMEOUT_PARAM, TEST_TIMEOUT_MS));
		cmds[n - 1] = sp_cmd_fill(big, 0, fill, n - 1);
		TH_LOG("%u commands ran %llu ms against a %llu ms timeout", n,
		       (unsigned long long)elapsed / 1000000, (unsigned long long)timeout_ms);
		/* any failure here is a progressing job taken for a hang */
		ASSERT_EQ(0, ret);
		ASSERT_EQ(self->resets, reset_count(self));
		ASSERT_NE(0, self->map[0]);
		proven = elapsed / 1000000 > 3 * timeout_ms && elapsed > 1000000000;
		per_cmd = elapsed / n;
		/* MAX_CMDS commands were not enough: make each one longer */
		if (!proven && n == max && fill < bo_size) {
			fill *= 2;
			per_cmd *= 2;
			for (i = 0; i < max; i++)
				cmds[i] = sp_cmd_fill(big, 0, fill, i);
		}
	}
	EXPECT_TRUE(proven);
	free(cmds);
}

/* Runs one LAUNCH of a busy program of @n instructions; its wall time in *@ns. */
static int run_busy_launch(FIXTURE_DATA(recovery) *self, uint32_t q, uint32_t n, uint64_t *ns)
{
	size_t plen = sp_prog_size(n);
	struct drm_spyre_bo_range arg = { .size = SP_PAGE };
	struct drm_spyre_cmd c[2];
	uint8_t *pbuf = malloc(plen);
	uint64_t t0;
	uint32_t prog;
	int ret;

	if (!pbuf)
		return -ENOMEM;
	sp_prog_busy(pbuf, n);
	ret = sp_prog_upload(&self->d, q, pbuf, plen, (plen + SP_PAGE - 1) & ~(SP_PAGE - 1ull),
			     &prog);
	free(pbuf);
	if (ret)
		return ret;
	ret = sp_bo_create(self->d.fd, SP_PAGE, DRM_SPYRE_PLACEMENT_DEVICE, &arg.handle);
	if (!ret) {
		c[0] = sp_cmd_launch(prog, 0, plen, 0, 0, 0, &arg, 1);
		c[1] = sp_cmd_ts(self->host, 0);
		self->map[0] = 0;
		t0 = sp_now_ns();
		ret = sp_run(self->d.fd, q, c, 2);
		*ns = sp_now_ns() - t0;
		sp_bo_close(self->d.fd, arg.handle);
	}
	sp_bo_close(self->d.fd, prog);
	return ret;
}

/*
 * The timeout catches hangs, not long commands: a single LAUNCH that takes
 * several job timeouts (and over the driver's 1 s floor) to run moves no
 * ring head, but the card's progress counter (interface 1.2) moves all
 * along, so the job succeeds. Sized from the measured speed of the busy
 * program's instructions on this host, now.
 */
TEST_F_TIMEOUT(recovery, long_launch_outlives_short_timeout, 120)
{
	uint64_t t16, t64, per_insn, elapsed = 0, timeout_ms = 100, target_ns;
	bool proven = false;
	int attempt, ret;
	uint32_t q, n;
	char val[32];

	if (!self->saved_timeout[0])
		SKIP(return, "job_timeout_ms is not writable");
	/* a LAUNCH runs on the compute engine, whatever the variant */
	ASSERT_EQ(0, sp_queue_create(self->d.fd, DRM_SPYRE_ENGINE_COMPUTE,
				     DRM_SPYRE_PRIORITY_NORMAL, &q));
	ASSERT_EQ(0, run_busy_launch(self, q, 16, &t16));
	ASSERT_EQ(0, run_busy_launch(self, q, 64, &t64));
	per_insn = t64 > t16 ? (t64 - t16) / 48 : t64 / 64;
	snprintf(val, sizeof(val), "%llu", (unsigned long long)timeout_ms);
	for (attempt = 0; attempt < 3 && !proven; attempt++) {
		if (!per_insn)
			per_insn = 1;
		/* aim at 2.5 s: 25 timeouts, well over the 1 s floor of a hang */
		target_ns = 2500000000ull;
		n = target_ns / per_insn + 1 < 65536 ? target_ns / per_insn + 1 : 65536;
		ASSERT_EQ(0, sp_write_file(TIMEOUT_PARAM, val));
		ret = run_busy_launch(self, q, n, &elapsed);
		ASSERT_EQ(0, sp_write_file(TIMEOUT_PARAM, TEST_TIMEOUT_MS));
		TH_LOG("one LAUNCH of %u instructions ran %llu ms against a %llu ms timeout", n,
		       (unsigned long long)elapsed / 1000000, (unsigned long long)timeout_ms);
		/* any failure here is a busy card taken for a hung one */
		ASSERT_EQ(0, ret);
		ASSERT_EQ(self->resets, reset_count(self));
		ASSERT_NE(0, self->map[0]);
		proven = elapsed > 1500000000ull && elapsed / 1000000 > 3 * timeout_ms;
		per_insn = elapsed / n;
	}
	EXPECT_TRUE(proven);
}

/* A failed DMA fails its job with -EIO; the queue is not banned. */
TEST_F(recovery, dma_fault_fails_job)
{
	struct drm_spyre_cmd c[2];
	uint32_t q;
	int ring;

	ASSERT_EQ(0, make_queue(self, variant->engine, -1, &q));
	ring = sp_queue_ring(&self->d, q);
	ASSERT_LE(0, ring);
	c[0] = sp_cmd_fill(self->dev, 0, 64, 0x12345678);
	c[1] = sp_cmd_copy(self->dev, 0, self->host, 64, 8);
	ASSERT_EQ(0, sp_arm_fault(&self->d, SP_FAULT_DMA, ring));
	EXPECT_EQ(-EIO, sp_run(self->d.fd, q, c, 2));
	/* the next job on the same queue works */
	EXPECT_EQ(0, sp_run(self->d.fd, q, c, 2));
	EXPECT_EQ(0x1234567812345678ull, self->map[8]);
	EXPECT_EQ(self->resets, reset_count(self));
}

/* A garbled completion record fails only its job (-EIO), then all is well. */
TEST_F(recovery, corrupt_completion_fails_job)
{
	struct drm_spyre_cmd c = sp_cmd_ts(self->host, 0);
	uint32_t q;
	int ring, ret;

	ASSERT_EQ(0, make_queue(self, variant->engine, -1, &q));
	ring = sp_queue_ring(&self->d, q);
	ASSERT_LE(0, ring);
	ASSERT_EQ(0, sp_arm_fault(&self->d, SP_FAULT_CORRUPT, ring));
	ret = sp_run(self->d.fd, q, &c, 1);
	EXPECT_EQ(-EIO, ret);
	c = sp_cmd_ts(self->host, 8);
	EXPECT_EQ(0, sp_run(self->d.fd, q, &c, 1));
	EXPECT_NE(0, self->map[1]);
}

/*
 * An uncorrectable memory error resets the whole card: the job that hit it
 * fails with -EIO, and afterwards queues of both engines work again.
 */
TEST_F_TIMEOUT(recovery, memory_error_resets_card, 60)
{
	struct drm_spyre_cmd c = sp_cmd_ts(self->host, 0);
	uint32_t q, q2;
	int ring;

	ASSERT_EQ(0, make_queue(self, variant->engine, -1, &q));
	ASSERT_EQ(0, sp_queue_create(self->d.fd, DRM_SPYRE_ENGINE_DMA + DRM_SPYRE_ENGINE_COMPUTE -
				     variant->engine, DRM_SPYRE_PRIORITY_NORMAL, &q2));
	ring = sp_queue_ring(&self->d, q);
	ASSERT_LE(0, ring);
	ASSERT_EQ(0, sp_arm_fault(&self->d, SP_FAULT_MEM_UE, ring));
	EXPECT_EQ(-EIO, sp_run(self->d.fd, q, &c, 1));
	ASSERT_TRUE(wait_reset_past(self, self->resets));
	/* after the reset, both engines work, the queue that saw the error too */
	c = sp_cmd_ts(self->host, 8);
	EXPECT_EQ(0, sp_run(self->d.fd, q2, &c, 1));
	c = sp_cmd_ts(self->host, 16);
	EXPECT_EQ(0, sp_run(self->d.fd, q, &c, 1));
	EXPECT_NE(0, self->map[1]);
	EXPECT_NE(0, self->map[2]);
}

/*
 * A card reset through debugfs with idle queues loses nothing: the reset
 * count goes up, device memory keeps its data, every queue keeps working.
 */
TEST_F(recovery, idle_card_reset)
{
	struct drm_spyre_cmd c[2];
	uint32_t q;

	ASSERT_EQ(0, sp_queue_create(self->d.fd, variant->engine, DRM_SPYRE_PRIORITY_NORMAL, &q));
	c[0] = sp_cmd_fill(self->dev, 0, 8, 0x0badf00d);
	ASSERT_EQ(0, sp_run(self->d.fd, q, c, 1));
	ASSERT_EQ(0, sp_debugfs_write(&self->d, "reset", "1"));
	EXPECT_LT(self->resets, reset_count(self));
	c[0] = sp_cmd_copy(self->dev, 0, self->host, 0, 8);
	c[1] = sp_cmd_ts(self->host, 8);
	EXPECT_EQ(0, sp_run(self->d.fd, q, c, 2));
	EXPECT_EQ(0x0badf00d0badf00dull, self->map[0]);
	EXPECT_NE(0, self->map[1]);
}

/*
 * A PCI function-level reset (sysfs "reset") under an open file with work
 * on the rings: the driver quiesces the card before and restarts it after,
 * so the work that was on the card completes without error, no queue is
 * banned, and the next jobs run at once instead of hanging until the
 * timeout. The device keeps its memory.
 */
TEST_F_TIMEOUT(recovery, pci_function_reset, 60)
{
	struct drm_spyre_sync out = { 0 };
	struct drm_spyre_cmd c[32];
	char addr[64], path[128];
	uint64_t start;
	uint32_t q;
	int i;

	ASSERT_EQ(0, sp_pci_address(&self->d, addr, sizeof(addr)));
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/reset", addr);
	if (access(path, W_OK))
		SKIP(return, "no PCI reset method for the card");
	ASSERT_EQ(0, sp_queue_create(self->d.fd, variant->engine, DRM_SPYRE_PRIORITY_NORMAL, &q));
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &out.handle, false));
	c[0] = sp_cmd_fill(self->dev, 0, 8, 0x600df00d);
	ASSERT_EQ(0, sp_run(self->d.fd, q, c, 1));
	/* a backlog that is still on the ring when the reset comes */
	for (i = 0; i < 32; i++)
		c[i] = sp_cmd_fill(self->dev, 8, SP_MiB - 8, i);
	ASSERT_EQ(0, sp_submit(self->d.fd, q, c, 32, NULL, 0, NULL, 0));
	c[0] = sp_cmd_ts(self->host, 0);
	ASSERT_EQ(0, sp_submit(self->d.fd, q, c, 1, NULL, 0, &out, 1));

	ASSERT_EQ(0, sp_write_file(path, "1"));
	ASSERT_EQ(0, sp_syncobj_wait(self->d.fd, out.handle, 0, SP_WAIT_NS));
	EXPECT_EQ(1, sp_fence_status(self->d.fd, out.handle, 0));
	EXPECT_NE(0, self->map[0]);

	/* the card works at once: well within the (shortened) job timeout */
	start = sp_now_ns();
	c[0] = sp_cmd_copy(self->dev, 0, self->host, 8, 8);
	EXPECT_EQ(0, sp_run(self->d.fd, q, c, 1));
	EXPECT_GT(1000ull * 1000 * 1000, sp_now_ns() - start);
	EXPECT_EQ(0x600df00d600df00dull, self->map[1]);
	EXPECT_LT(self->resets, reset_count(self));
}

TEST_HARNESS_MAIN
