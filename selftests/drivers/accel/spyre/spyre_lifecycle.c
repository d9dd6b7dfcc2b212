// SPDX-License-Identifier: GPL-2.0
/*
 * Spyre accel selftests: lifecycle. Files closed and processes killed with
 * work in flight, two cards side by side, unbinding a card under an open
 * file, and unloading/reloading the module. Run this binary last: the
 * module and unbind tests take the driver away for a moment.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "spyre_util.h"

FIXTURE(life) {
	struct sp_dev d;
	uint64_t bos;		/* debugfs BO count at setup */
	bool have_debugfs;
};

FIXTURE_SETUP(life)
{
	SP_OPEN_OR_SKIP(&self->d, 0);
	self->have_debugfs = !sp_bo_count(&self->d, &self->bos);
}

FIXTURE_TEARDOWN(life)
{
	sp_dev_close(&self->d);
}

/*
 * Closing a file with a backlog queued ends cleanly: the exported fence of
 * its last job still signals, and every BO of the file is released.
 */
TEST_F_TIMEOUT(life, close_fd_with_jobs_in_flight, 60)
{
	struct drm_spyre_sync out = { 0 };
	struct drm_spyre_cmd cmds[128];
	uint64_t seen, mem_before, mem_after;
	struct sp_dev f;
	uint32_t q, big, host;
	int i, sf, st;

	ASSERT_EQ(0, sp_get_param(self->d.fd, DRM_SPYRE_PARAM_MEM_FREE, &mem_before));
	ASSERT_EQ(0, sp_dev_reopen(&self->d, &f));
	ASSERT_EQ(0, sp_queue_create(f.fd, DRM_SPYRE_ENGINE_DMA, DRM_SPYRE_PRIORITY_NORMAL, &q));
	ASSERT_EQ(0, sp_bo_create(f.fd, 16 * SP_MiB, DRM_SPYRE_PLACEMENT_DEVICE, &big));
	ASSERT_EQ(0, sp_bo_create(f.fd, SP_PAGE, DRM_SPYRE_PLACEMENT_HOST, &host));
	ASSERT_EQ(0, sp_syncobj_create(f.fd, &out.handle, false));
	for (i = 0; i < 127; i++)
		cmds[i] = sp_cmd_fill(big, 0, 16 * SP_MiB, i);
	cmds[127] = sp_cmd_ts(host, 0);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, sp_submit(f.fd, q, cmds, 128, NULL, 0, &out, 1));
	}
	sf = sp_syncobj_export(f.fd, out.handle, 0);
	ASSERT_LE(0, sf);
	sp_dev_close(&f);
	ASSERT_EQ(0, sp_sync_file_wait(sf, 20000));
	st = sp_sync_file_status(sf);
	TH_LOG("last job of the closed file: status %d", st);
	EXPECT_NE(0, st);
	close(sf);
	if (self->have_debugfs) {
		EXPECT_EQ(0, sp_wait_bo_count(&self->d, self->bos, &seen));
		EXPECT_EQ(self->bos, seen);
	}
	ASSERT_EQ(0, sp_get_param(self->d.fd, DRM_SPYRE_PARAM_MEM_FREE, &mem_after));
	EXPECT_EQ(mem_before, mem_after);
}

/*
 * A process killed while it submits in a loop leaves nothing behind: the
 * card keeps serving others and its BOs are released.
 */
TEST_F_TIMEOUT(life, process_killed_mid_submit, 60)
{
	struct drm_spyre_cmd c;
	uint64_t seen;
	int pipefd[2], status;
	uint32_t q, h;
	pid_t pid;
	char ok;

	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct drm_spyre_cmd cmds[16];
		struct sp_dev cd;
		uint32_t cq, dq, bo;
		int i, n = 0;

		close(pipefd[0]);
		if (sp_dev_open(&cd, 0) ||
		    sp_queue_create(cd.fd, DRM_SPYRE_ENGINE_DMA, DRM_SPYRE_PRIORITY_NORMAL, &dq) ||
		    sp_queue_create(cd.fd, DRM_SPYRE_ENGINE_COMPUTE, DRM_SPYRE_PRIORITY_NORMAL,
				    &cq) ||
		    sp_bo_create(cd.fd, 4 * SP_MiB, DRM_SPYRE_PLACEMENT_DEVICE, &bo))
			_exit(1);
		for (i = 0; i < 16; i++)
			cmds[i] = sp_cmd_fill(bo, 0, 4 * SP_MiB, i);
		for (;;) {
			if (sp_submit(cd.fd, n & 1 ? cq : dq, cmds, 16, NULL, 0, NULL, 0))
				_exit(2);
			if (++n == 32 && write(pipefd[1], "x", 1) != 1)
				_exit(3);
		}
	}
	close(pipefd[1]);
	ASSERT_EQ(1, read(pipefd[0], &ok, 1));
	close(pipefd[0]);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status));
	/* others are still served */
	ASSERT_EQ(0, sp_queue_create(self->d.fd, DRM_SPYRE_ENGINE_DMA, DRM_SPYRE_PRIORITY_NORMAL,
				     &q));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, SP_PAGE, DRM_SPYRE_PLACEMENT_HOST, &h));
	c = sp_cmd_ts(h, 0);
	EXPECT_EQ(0, sp_run(self->d.fd, q, &c, 1));
	ASSERT_EQ(0, sp_bo_close(self->d.fd, h));
	if (self->have_debugfs) {
		EXPECT_EQ(0, sp_wait_bo_count(&self->d, self->bos, &seen));
		EXPECT_EQ(self->bos, seen);
	}
}

/* Two cards are independent devices, and share host memory through PRIME. */
TEST_F(life, two_cards)
{
	uint32_t q0, q1, dev0, dev1, host0, imp1, out1;
	struct drm_spyre_bo_info info;
	struct drm_spyre_cmd c[2];
	size_t len = 256 * 1024;
	struct sp_dev d1;
	uint8_t *m, *o, *ref = malloc(len);
	int buf, ret;

	ret = sp_dev_open(&d1, 1);
	if (ret == -ENODEV)
		SKIP(return, "needs two Spyre cards");
	ASSERT_EQ(0, ret);
	ASSERT_NE(NULL, ref);
	EXPECT_NE(self->d.minor, d1.minor);
	ASSERT_EQ(0, sp_queue_create(self->d.fd, DRM_SPYRE_ENGINE_DMA, DRM_SPYRE_PRIORITY_NORMAL,
				     &q0));
	ASSERT_EQ(0, sp_queue_create(d1.fd, DRM_SPYRE_ENGINE_DMA, DRM_SPYRE_PRIORITY_NORMAL, &q1));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, len, DRM_SPYRE_PLACEMENT_DEVICE, &dev0));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, len, DRM_SPYRE_PLACEMENT_HOST, &host0));
	/* card 0's handles mean nothing on card 1 */
	EXPECT_EQ(-ENOENT, sp_bo_info(d1.fd, host0, &info));
	EXPECT_EQ(-ENOENT, sp_submit(d1.fd, q0 + q1 + 100, NULL, 0, NULL, 0, NULL, 0));
	/* card 0 produces data into a host BO */
	m = sp_bo_mmap(self->d.fd, host0, len);
	ASSERT_NE(NULL, m);
	sp_pattern(m, len, 3);
	c[0] = sp_cmd_copy(host0, 0, dev0, 0, len);
	c[1] = sp_cmd_fill(dev0, 0, 4096, 0x0c0c0c0c);
	ASSERT_EQ(0, sp_run(self->d.fd, q0, c, 2));
	c[0] = sp_cmd_copy(dev0, 0, host0, 0, len);
	ASSERT_EQ(0, sp_run(self->d.fd, q0, c, 1));
	/* card 1 imports it (a foreign dma-buf there) and copies it through itself */
	ASSERT_EQ(0, sp_prime_export(self->d.fd, host0, &buf));
	ASSERT_EQ(0, sp_prime_import(d1.fd, buf, &imp1));
	close(buf);
	ASSERT_EQ(0, sp_bo_info(d1.fd, imp1, &info));
	EXPECT_EQ(DRM_SPYRE_BO_IMPORTED, info.bo_flags & DRM_SPYRE_BO_IMPORTED);
	ASSERT_EQ(0, sp_bo_create(d1.fd, len, DRM_SPYRE_PLACEMENT_DEVICE, &dev1));
	ASSERT_EQ(0, sp_bo_create(d1.fd, len, DRM_SPYRE_PLACEMENT_HOST, &out1));
	c[0] = sp_cmd_copy(imp1, 0, dev1, 0, len);
	c[1] = sp_cmd_copy(dev1, 0, out1, 0, len);
	ASSERT_EQ(0, sp_run(d1.fd, q1, c, 2));
	o = sp_bo_mmap(d1.fd, out1, len);
	ASSERT_NE(NULL, o);
	/* what card 0 wrote: its fill over the first 4 KiB, then the pattern */
	EXPECT_EQ(0x0c, m[0]);
	EXPECT_EQ(0x0c, m[4095]);
	sp_pattern(ref, len, 3);
	EXPECT_EQ(0, memcmp(m + 4096, ref + 4096, len - 4096));
	/* ... is what card 1 read */
	EXPECT_EQ(0, memcmp(m, o, len));
	free(ref);
	munmap(m, len);
	munmap(o, len);
	sp_dev_close(&d1);
}

/* An open file pins the module: a non-blocking unload fails, all keeps working. */
TEST_F(life, unload_busy)
{
	uint32_t q;

	if (geteuid() || !sp_is_module())
		SKIP(return, "needs root and spyre as a module");
	EXPECT_EQ(-1, syscall(SYS_delete_module, "spyre", O_NONBLOCK));
	EXPECT_EQ(EWOULDBLOCK, errno);
	ASSERT_EQ(0, sp_queue_create(self->d.fd, DRM_SPYRE_ENGINE_DMA,
				     DRM_SPYRE_PRIORITY_NORMAL, &q));
	EXPECT_EQ(0, sp_run(self->d.fd, q, NULL, 0));
}

/*
 * Unbinding the card under an open file with work queued: the work ends,
 * the file's ioctls fail with -ENODEV, and rebinding brings a working card.
 */
TEST_F_TIMEOUT(life, unbind_with_open_fd, 60)
{
	struct drm_spyre_sync out = { 0 };
	struct drm_spyre_cmd cmds[64];
	uint32_t q, big, h;
	struct sp_dev again;
	int minors[SP_MAX_CARDS], i, sf, cards, n;
	char addr[64];
	uint64_t v;

	if (geteuid())
		SKIP(return, "needs root");
	ASSERT_EQ(0, sp_pci_address(&self->d, addr, sizeof(addr)));
	cards = sp_find_cards(minors, SP_MAX_CARDS);
	ASSERT_EQ(0, sp_queue_create(self->d.fd, DRM_SPYRE_ENGINE_DMA, DRM_SPYRE_PRIORITY_NORMAL,
				     &q));
	ASSERT_EQ(0, sp_bo_create(self->d.fd, 16 * SP_MiB, DRM_SPYRE_PLACEMENT_DEVICE, &big));
	ASSERT_EQ(0, sp_syncobj_create(self->d.fd, &out.handle, false));
	for (i = 0; i < 64; i++)
		cmds[i] = sp_cmd_fill(big, 0, 16 * SP_MiB, i);
	ASSERT_EQ(0, sp_submit(self->d.fd, q, cmds, 64, NULL, 0, &out, 1));
	sf = sp_syncobj_export(self->d.fd, out.handle, 0);
	ASSERT_LE(0, sf);

	ASSERT_EQ(0, sp_write_file("/sys/bus/pci/drivers/spyre/unbind", addr));
	EXPECT_EQ(0, sp_sync_file_wait(sf, 20000));
	EXPECT_NE(0, sp_sync_file_status(sf));
	close(sf);
	EXPECT_EQ(-ENODEV, sp_get_param(self->d.fd, DRM_SPYRE_PARAM_NUM_CORES, &v));
	EXPECT_EQ(-ENODEV, sp_bo_create(self->d.fd, SP_PAGE, DRM_SPYRE_PLACEMENT_HOST, &h));
	EXPECT_EQ(-ENODEV, sp_submit(self->d.fd, q, NULL, 0, NULL, 0, NULL, 0));
	sp_dev_close(&self->d);

	ASSERT_EQ(0, sp_write_file("/sys/bus/pci/drivers/spyre/bind", addr));
	n = sp_find_cards(minors, SP_MAX_CARDS);
	EXPECT_EQ(cards, n);
	for (i = 0; i < n; i++) {
		char a2[64];

		ASSERT_EQ(0, sp_dev_open(&again, i));
		if (!sp_pci_address(&again, a2, sizeof(a2)) && !strcmp(a2, addr))
			break;
		sp_dev_close(&again);
	}
	ASSERT_LT(i, n);
	ASSERT_EQ(0, sp_queue_create(again.fd, DRM_SPYRE_ENGINE_DMA, DRM_SPYRE_PRIORITY_NORMAL,
				     &q));
	EXPECT_EQ(0, sp_run(again.fd, q, NULL, 0));
	sp_dev_close(&again);
}

/*
 * Module unload and reload between runs: with no file open, every card's
 * BO count is zero (nothing leaked by the tests before), the module
 * unloads, reloads, binds every card again and they work.
 */
TEST_F_TIMEOUT(life, module_reload, 60)
{
	int minors[SP_MAX_CARDS], before, after, i, ret;
	struct sp_dev d;
	uint64_t count;
	uint32_t q;

	if (geteuid() || !sp_is_module())
		SKIP(return, "needs root and spyre as a module");
	before = sp_find_cards(minors, SP_MAX_CARDS);
	for (i = 0; i < before; i++) {
		ASSERT_EQ(0, sp_dev_open(&d, i));
		if (!sp_bo_count(&d, &count)) {
			EXPECT_EQ(0, sp_wait_bo_count(&d, 0, &count));
			EXPECT_EQ(0, count);
		}
		sp_dev_close(&d);
	}
	sp_dev_close(&self->d);

	ret = syscall(SYS_delete_module, "spyre", O_NONBLOCK);
	ASSERT_EQ(0, ret ? -errno : 0);
	EXPECT_EQ(0, sp_find_cards(minors, SP_MAX_CARDS));
	ASSERT_EQ(0, sp_load_module(NULL));
	after = sp_find_cards(minors, SP_MAX_CARDS);
	EXPECT_EQ(before, after);
	for (i = 0; i < after; i++) {
		ASSERT_EQ(0, sp_dev_open(&d, i));
		ASSERT_EQ(0, sp_queue_create(d.fd, DRM_SPYRE_ENGINE_COMPUTE,
					     DRM_SPYRE_PRIORITY_NORMAL, &q));
		EXPECT_EQ(0, sp_run(d.fd, q, NULL, 0));
		sp_dev_close(&d);
	}
}

TEST_HARNESS_MAIN
