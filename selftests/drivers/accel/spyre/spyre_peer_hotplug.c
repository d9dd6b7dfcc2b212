// SPDX-License-Identifier: GPL-2.0
/*
 * Spyre accel selftests: hot removal of a card whose memory another card
 * imported (peer DMA, driver 1.5). Card B's device BO is exported with
 * PRIME and imported into card A as a peer BO, A copies through it, a job
 * of A on it is in flight; then B goes away, through QEMU's monitor
 * (device_del, a PCIe hot unplug; needs `spyre-vm --monitor --cards 2`,
 * which puts card i behind root port rpI as spyreI) or through sysfs
 * `remove`. The removal must not wait on A's reference (A still holds the
 * peer BO and the dma-buf is still open), A's mapping of B's memory is
 * revoked: every later SUBMIT of A naming the peer BO fails with -ENODEV,
 * a new import of B's dma-buf too, while A's other work goes on; the job
 * in flight ends; closing everything leaves no BO behind; B comes back,
 * peer DMA works again and the module still unloads.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "spyre_hotplug_util.h"
#include "spyre_state.h"
#include "spyre_util.h"

#define PHP_SIZE	(4 * SP_MiB)
#define PHP_JOBS	8	/* of MAX_CMDS peer copies of PHP_SIZE each */

FIXTURE(php) {
	struct sp_dev a, b;
	struct sp_state base;
	char b_bdf[64];
	uint32_t qa, qb;
	uint32_t a_dev;		/* device BO of A */
	uint32_t b_dev;		/* device BO of B (in B's file) */
	uint32_t peer;		/* b_dev imported into A */
	int buf;		/* the dma-buf of b_dev */
};

FIXTURE_VARIANT(php) {
	bool qemu_monitor;	/* device_del/device_add, else sysfs remove/rescan */
};

FIXTURE_VARIANT_ADD(php, monitor) {
	.qemu_monitor = true,
};

FIXTURE_VARIANT_ADD(php, sysfs) {
	.qemu_monitor = false,
};

FIXTURE_SETUP(php)
{
	int ret;

	self->buf = -1;
	self->a.fd = -1;
	self->b.fd = -1;
	if (variant->qemu_monitor && !getenv("SPYRE_VM_MONITOR_DIR"))
		SKIP(return, "no QEMU monitor (run the VM with spyre-vm --monitor --cards 2)");
	if (geteuid())
		SKIP(return, "needs root");
	SP_OPEN_OR_SKIP(&self->a, 0);
	SP_OPEN_OR_SKIP(&self->b, 1);
	ASSERT_EQ(0, sp_pci_address(&self->b, self->b_bdf, sizeof(self->b_bdf)));
	ASSERT_EQ(0, sp_state_take(&self->base));
	ASSERT_EQ(0, sp_queue_create(self->a.fd, DRM_SPYRE_ENGINE_DMA,
				     DRM_SPYRE_PRIORITY_NORMAL, &self->qa));
	ASSERT_EQ(0, sp_queue_create(self->b.fd, DRM_SPYRE_ENGINE_DMA,
				     DRM_SPYRE_PRIORITY_NORMAL, &self->qb));
	ASSERT_EQ(0, sp_bo_create(self->a.fd, PHP_SIZE, DRM_SPYRE_PLACEMENT_DEVICE,
				  &self->a_dev));
	ASSERT_EQ(0, sp_bo_create(self->b.fd, PHP_SIZE, DRM_SPYRE_PLACEMENT_DEVICE,
				  &self->b_dev));
	ASSERT_EQ(0, sp_prime_export(self->b.fd, self->b_dev, &self->buf));
	ret = sp_prime_import(self->a.fd, self->buf, &self->peer);
	if (ret == -EOPNOTSUPP)
		SKIP(return, "card 0 has no peer DMA (card interface below 1.13)");
	ASSERT_EQ(0, ret);
}

FIXTURE_TEARDOWN(php)
{
	if (self->buf >= 0)
		close(self->buf);
	sp_dev_close(&self->a);
	sp_dev_close(&self->b);
}

/* B's bytes reach A through the peer BO and back: peer DMA works. */
static int peer_round_trip(struct sp_dev *a, uint32_t qa, uint32_t a_dev, uint32_t peer,
			   uint8_t seed)
{
	uint8_t *src = malloc(SP_MiB), *out = malloc(SP_MiB);
	struct drm_spyre_cmd c[2];
	int ret;

	if (!src || !out) {
		free(src);
		free(out);
		return -ENOMEM;
	}
	sp_pattern(src, SP_MiB, seed);
	ret = sp_upload(a, qa, a_dev, 0, src, SP_MiB);
	/* A -> B, then B -> the second MiB of A */
	c[0] = sp_cmd_copy(a_dev, 0, peer, 0, SP_MiB);
	c[1] = sp_cmd_copy(peer, 0, a_dev, SP_MiB, SP_MiB);
	if (!ret)
		ret = sp_run(a->fd, qa, c, 2);
	if (!ret)
		ret = sp_download(a, qa, a_dev, SP_MiB, out, SP_MiB);
	if (!ret && sp_pattern_check(out, SP_MiB, seed) != -1)
		ret = -EIO;
	free(src);
	free(out);
	return ret;
}

TEST_F_TIMEOUT(php, exporter_removed, 300)
{
	uint32_t max = self->a.p[DRM_SPYRE_PARAM_MAX_CMDS], a2_peer, i;
	struct drm_spyre_sync out = { 0 };
	struct drm_spyre_cmd *cmds, c;
	struct drm_spyre_bo_info info;
	char reply[512];
	unsigned int retries;
	int b_minor = self->b.minor, sf, status;
	uint64_t t0, t1;
	struct sp_dev a2;

	ASSERT_EQ(0, peer_round_trip(&self->a, self->qa, self->a_dev, self->peer, 3));

	/*
	 * Jobs of A on the peer BO, likely still running at the removal
	 * (which waits for them): gigabytes of peer copies; the last one's
	 * fence as a sync_file.
	 */
	cmds = calloc(max, sizeof(*cmds));
	ASSERT_NE(NULL, cmds);
	for (i = 0; i < max; i++)
		cmds[i] = sp_cmd_copy(self->a_dev, 0, self->peer, 0, PHP_SIZE);
	ASSERT_EQ(0, sp_syncobj_create(self->a.fd, &out.handle, false));
	for (i = 0; i < PHP_JOBS - 1; i++)
		ASSERT_EQ(0, sp_submit(self->a.fd, self->qa, cmds, max, NULL, 0, NULL, 0));
	ASSERT_EQ(0, sp_submit(self->a.fd, self->qa, cmds, max, NULL, 0, &out, 1));
	sf = sp_syncobj_export(self->a.fd, out.handle, 0);
	ASSERT_LE(0, sf);

	/*
	 * Away with B, while A holds the peer BO and the dma-buf is open.
	 * spyre-vm --monitor puts card i behind rpI as spyreI; which of them
	 * is B is checked by B's minor going away and A working on.
	 */
	t0 = sp_now_ns();
	ASSERT_EQ(0, sp_card_unplug(variant->qemu_monitor, 1, self->b_bdf, reply, sizeof(reply)));
	if (variant->qemu_monitor)
		TH_LOG("device_del: '%s'", reply);
	ASSERT_TRUE(sp_wait_card_gone(b_minor));
	t1 = sp_now_ns();
	TH_LOG("card B (%s) gone after %llu ms", self->b_bdf,
	       (unsigned long long)((t1 - t0) / 1000000));

	/* the job in flight ended, done before the removal or failed */
	EXPECT_EQ(0, sp_sync_file_wait(sf, SP_HOTPLUG_WAIT_MS));
	status = sp_sync_file_status(sf);
	TH_LOG("A's job on the peer BO ended with %d", status);
	EXPECT_TRUE(status == 1 || status == -ENODEV);
	close(sf);
	free(cmds);

	/* A's mapping is revoked: no copy either way names B's memory */
	c = sp_cmd_copy(self->a_dev, 0, self->peer, 0, SP_PAGE);
	EXPECT_EQ(-ENODEV, sp_submit(self->a.fd, self->qa, &c, 1, NULL, 0, NULL, 0));
	c = sp_cmd_copy(self->peer, 0, self->a_dev, 0, SP_PAGE);
	EXPECT_EQ(-ENODEV, sp_submit(self->a.fd, self->qa, &c, 1, NULL, 0, NULL, 0));
	c = sp_cmd_copy(self->a_dev, 0, self->peer, 0, 0);
	EXPECT_EQ(-ENODEV, sp_submit(self->a.fd, self->qa, &c, 1, NULL, 0, NULL, 0));
	/* the handle itself stays until closed, idle */
	ASSERT_EQ(0, sp_bo_info(self->a.fd, self->peer, &info));
	EXPECT_EQ(DRM_SPYRE_PLACEMENT_PEER, info.placement);
	EXPECT_EQ(0, sp_bo_wait(self->a.fd, self->peer, SP_WAIT_NS));
	/* a new import of the dead card's BO is refused (a fresh file of A) */
	ASSERT_EQ(0, sp_dev_reopen(&self->a, &a2));
	EXPECT_EQ(-ENODEV, sp_prime_import(a2.fd, self->buf, &a2_peer));
	sp_dev_close(&a2);
	/* A itself goes on working */
	EXPECT_EQ(0, sp_smoke(&self->a));
	/* B's file only fails */
	EXPECT_EQ(-ENODEV, sp_bo_create(self->b.fd, SP_PAGE, DRM_SPYRE_PLACEMENT_DEVICE, &i));

	/* let go of everything: nothing stays behind on A */
	EXPECT_EQ(0, sp_bo_close(self->a.fd, self->peer));
	close(self->buf);
	self->buf = -1;
	sp_dev_close(&self->b);
	sp_dev_close(&self->a);

	/* B back, peer DMA between the two again, and nothing leaked */
	ASSERT_EQ(0, sp_card_replug(variant->qemu_monitor, 1, reply, sizeof(reply), &retries));
	if (variant->qemu_monitor)
		TH_LOG("device_add: '%s' (after %u retries)", reply, retries);
	ASSERT_TRUE(sp_wait_cards_ready(2));
	ASSERT_EQ(0, sp_dev_open(&self->a, 0));
	ASSERT_EQ(0, sp_dev_open(&self->b, 1));
	ASSERT_EQ(0, sp_queue_create(self->a.fd, DRM_SPYRE_ENGINE_DMA,
				     DRM_SPYRE_PRIORITY_NORMAL, &self->qa));
	ASSERT_EQ(0, sp_bo_create(self->a.fd, PHP_SIZE, DRM_SPYRE_PLACEMENT_DEVICE,
				  &self->a_dev));
	ASSERT_EQ(0, sp_bo_create(self->b.fd, PHP_SIZE, DRM_SPYRE_PLACEMENT_DEVICE,
				  &self->b_dev));
	ASSERT_EQ(0, sp_prime_export(self->b.fd, self->b_dev, &self->buf));
	ASSERT_EQ(0, sp_prime_import(self->a.fd, self->buf, &self->peer));
	EXPECT_EQ(0, peer_round_trip(&self->a, self->qa, self->a_dev, self->peer, 5));
	close(self->buf);
	self->buf = -1;
	sp_dev_close(&self->a);
	sp_dev_close(&self->b);
	EXPECT_EQ(0, sp_state_settle(&self->base));
	EXPECT_EQ(0, sp_module_reload());
}

TEST_HARNESS_MAIN
