// SPDX-License-Identifier: GPL-2.0
/*
 * Spyre accel selftests: hot removal of a card in use.
 *
 * The card disappears while a process has it open, has a host BO mapped,
 * a long job on the card and a job and syncobj fence exported as a
 * sync_file, jobs in its card address space (from card interface 1.10),
 * and a second process keeps submitting: through QEMU's monitor
 * (device_del, as a surprise-free PCIe hot unplug; needs `spyre-vm
 * --monitor`, which also makes the card hot-pluggable) and through sysfs
 * `remove`. Then: every ioctl fails with -ENODEV, the other process sees
 * -ENODEV too, the in-flight job's fence signals, the mapping stays usable
 * until unmapped, nothing crashes; the card comes back (device_add, or a
 * PCI rescan), works, nothing leaked, and the module unloads and reloads.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "spyre_hotplug_util.h"
#include "spyre_state.h"
#include "spyre_util.h"

FIXTURE(hp) {
	struct sp_dev d;
	struct sp_state base;
	char bdf[64];
};

FIXTURE_VARIANT(hp) {
	bool qemu_monitor;	/* device_del/device_add, else sysfs remove/rescan */
};

FIXTURE_VARIANT_ADD(hp, monitor) {
	.qemu_monitor = true,
};

FIXTURE_VARIANT_ADD(hp, sysfs) {
	.qemu_monitor = false,
};

FIXTURE_SETUP(hp)
{
	if (variant->qemu_monitor && !getenv("SPYRE_VM_MONITOR_DIR"))
		SKIP(return, "no QEMU monitor (run the VM with spyre-vm --monitor)");
	if (geteuid())
		SKIP(return, "needs root");
	SP_OPEN_OR_SKIP(&self->d, 0);
	ASSERT_EQ(0, sp_pci_address(&self->d, self->bdf, sizeof(self->bdf)));
	ASSERT_EQ(0, sp_state_take(&self->base));
}

FIXTURE_TEARDOWN(hp)
{
	sp_dev_close(&self->d);
}

/* A second process: submits until an ioctl fails; sends back that error. */
static pid_t submitter(int minor, int wfd)
{
	struct drm_spyre_cmd c = sp_cmd_nop();
	struct sp_dev d;
	uint32_t q, bo;
	int ret;
	pid_t pid = fork();

	if (pid)
		return pid;
	memset(&d, 0, sizeof(d));
	d.fd = -1;
	ret = sp_dev_open(&d, 0);
	if (!ret)
		ret = sp_queue_create(d.fd, DRM_SPYRE_ENGINE_DMA, DRM_SPYRE_PRIORITY_NORMAL, &q);
	if (write(wfd, "r", 1) != 1)
		_exit(1);
	while (!ret) {
		ret = sp_bo_create(d.fd, SP_PAGE, DRM_SPYRE_PLACEMENT_DEVICE, &bo);
		if (!ret) {
			c = sp_cmd_fill(bo, 0, SP_PAGE, 1);
			ret = sp_submit(d.fd, q, &c, 1, NULL, 0, NULL, 0);
			sp_bo_close(d.fd, bo);
		}
	}
	if (write(wfd, &ret, sizeof(ret)) != sizeof(ret))
		_exit(1);
	_exit(0);
}

#define HP_VA	0x100000ull

TEST_F_TIMEOUT(hp, remove_in_use, 240)
{
	uint32_t host, dev, q, max = self->d.p[DRM_SPYRE_PARAM_MAX_CMDS], i;
	struct drm_spyre_sync out = { 0 };
	struct drm_spyre_cmd *cmds;
	int pfd[2], sf, child_err = 0, st, status;
	char reply[512];
	unsigned int retries;
	struct pollfd pf;
	bool has_vm;
	uint64_t v;
	uint8_t *map;
	pid_t pid;

	/* a mapped host BO, a long job in flight, its fence as a sync_file */
	ASSERT_EQ(0, sp_bo_create(self->d.fd, SP_MiB, DRM_SPYRE_PLACEMENT_HOST, &host));
	map = sp_bo_mmap(self->d.fd, host, SP_MiB);
	ASSERT_NE(NULL, map);
	sp_pattern(map, SP_MiB, 42);
	ASSERT_EQ(0, sp_bo_create(self->d.fd, 64 * SP_MiB, DRM_SPYRE_PLACEMENT_DEVICE, &dev));
	ASSERT_EQ(0, sp_queue_create(self->d.fd, DRM_SPYRE_ENGINE_COMPUTE,
				     DRM_SPYRE_PRIORITY_NORMAL, &q));
	cmds = calloc(max, sizeof(*cmds));
	ASSERT_NE(NULL, cmds);
	for (i = 0; i < max; i++)
		cmds[i] = sp_cmd_fill(dev, 0, 64 * SP_MiB, i);
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &out.handle, false));
	ASSERT_EQ(0, sp_submit(self->d.fd, q, cmds, max, NULL, 0, &out, 1));
	ASSERT_EQ(0, sp_submit(self->d.fd, q, cmds, max, NULL, 0, NULL, 0));
	/* and jobs in the file's card address space (card interface 1.10) */
	has_vm = !sp_vm_bind(self->d.fd, DRM_SPYRE_VM_BIND_OP_MAP, 0, dev, 0, HP_VA, 64 * SP_MiB);
	if (has_vm) {
		struct drm_spyre_submit s = {
			.queue_id = q, .flags = DRM_SPYRE_SUBMIT_VA, .cmds = (uintptr_t)cmds,
			.cmd_count = max, .cmd_stride = sizeof(*cmds),
		};

		for (i = 0; i < max; i++)
			cmds[i] = sp_cmd_fill(0, HP_VA, 64 * SP_MiB, i);
		ASSERT_EQ(0, sp_ioctl(self->d.fd, DRM_IOCTL_SPYRE_SUBMIT, &s));
	}
	sf = sp_syncobj_export(self->d.fd, out.handle, 0);
	ASSERT_LE(0, sf);

	ASSERT_EQ(0, pipe(pfd));
	pid = submitter(self->d.minor, pfd[1]);
	ASSERT_LT(0, pid);
	ASSERT_EQ(1, read(pfd[0], reply, 1));

	/* away with the card */
	ASSERT_EQ(0, sp_card_unplug(variant->qemu_monitor, 0, self->bdf, reply, sizeof(reply)));
	if (variant->qemu_monitor)
		TH_LOG("device_del: '%s'", reply);
	ASSERT_TRUE(sp_wait_card_gone(self->d.minor));

	/* every process sees -ENODEV */
	pf = (struct pollfd) { .fd = pfd[0], .events = POLLIN };
	ASSERT_EQ(1, poll(&pf, 1, SP_HOTPLUG_WAIT_MS));
	ASSERT_EQ(sizeof(child_err), read(pfd[0], &child_err, sizeof(child_err)));
	EXPECT_EQ(-ENODEV, child_err);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st));
	EXPECT_EQ(-ENODEV, sp_get_param(self->d.fd, DRM_SPYRE_PARAM_MEM_SIZE, &v));
	EXPECT_EQ(-ENODEV, sp_bo_create(self->d.fd, SP_PAGE, DRM_SPYRE_PLACEMENT_HOST, &i));
	EXPECT_EQ(-ENODEV, sp_submit(self->d.fd, q, cmds, 1, NULL, 0, NULL, 0));
	EXPECT_EQ(-ENODEV, sp_queue_create(self->d.fd, DRM_SPYRE_ENGINE_DMA,
					   DRM_SPYRE_PRIORITY_NORMAL, &i));
	if (has_vm) {
		/* the close below lets go of the mapped BO (no leak after) */
		EXPECT_EQ(-ENODEV, sp_vm_bind(self->d.fd, DRM_SPYRE_VM_BIND_OP_MAP, 0, dev, 0,
					      2 * HP_VA, SP_PAGE));
		EXPECT_EQ(-ENODEV, sp_vm_bind(self->d.fd, DRM_SPYRE_VM_BIND_OP_UNMAP, 0, 0, 0,
					      HP_VA, 64 * SP_MiB));
	}

	/* the job in flight ended (with an error, or done before the removal) */
	EXPECT_EQ(0, sp_sync_file_wait(sf, SP_HOTPLUG_WAIT_MS));
	status = sp_sync_file_status(sf);
	TH_LOG("the job in flight ended with %d", status);
	EXPECT_TRUE(status == 1 || status == -ENODEV);
	/* the mapping stays valid until unmapped */
	EXPECT_EQ(-1, sp_pattern_check(map, SP_MiB, 42));
	memset(map, 0x5a, SP_PAGE);
	EXPECT_EQ(0x5a, map[SP_PAGE - 1]);
	munmap(map, SP_MiB);
	close(sf);
	close(pfd[0]);
	close(pfd[1]);
	free(cmds);
	sp_dev_close(&self->d);

	/* back again, working, nothing leaked */
	ASSERT_EQ(0, sp_card_replug(variant->qemu_monitor, 0, reply, sizeof(reply), &retries));
	if (variant->qemu_monitor)
		TH_LOG("device_add: '%s' (after %u retries)", reply, retries);
	ASSERT_TRUE(sp_wait_cards_ready(1));
	ASSERT_EQ(0, sp_dev_open(&self->d, 0));
	EXPECT_EQ(0, sp_smoke(&self->d));
	sp_dev_close(&self->d);
	EXPECT_EQ(0, sp_state_settle(&self->base));
	/* and the module still unloads and comes back */
	EXPECT_EQ(0, sp_module_reload());
}

TEST_HARNESS_MAIN
