// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers of the Spyre hot-removal selftests (spyre_hotplug_util.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spyre_hotplug_util.h"
#include "spyre_util.h"

int sp_vm_monitor(const char *cmd, char *reply, size_t len)
{
	const char *dir = getenv("SPYRE_VM_MONITOR_DIR");
	char req[PATH_MAX], tmp[PATH_MAX], rep[PATH_MAX];
	int n, fd, i;
	ssize_t got;

	if (!dir)
		return -ENOENT;
	/*
	 * The agent answers req-N with rep-N. The next free number: requests
	 * go one after another. The request appears by rename, so the agent
	 * never reads half a command.
	 */
	for (n = 1;; n++) {
		snprintf(req, sizeof(req), "%s/req-%d", dir, n);
		if (access(req, F_OK))
			break;
	}
	snprintf(tmp, sizeof(tmp), "%s/.req-%d", dir, n);
	snprintf(rep, sizeof(rep), "%s/rep-%d", dir, n);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, cmd, strlen(cmd)) < 0) {
		close(fd);
		return -errno;
	}
	close(fd);
	if (rename(tmp, req))
		return -errno;
	for (i = 0; i < SP_HOTPLUG_WAIT_MS / 10; i++) {
		fd = open(rep, O_RDONLY);
		if (fd >= 0) {
			got = read(fd, reply, len - 1);
			reply[got > 0 ? got : 0] = '\0';
			close(fd);
			return 0;
		}
		usleep(10000);
	}
	return -ETIMEDOUT;
}

bool sp_wait_card_gone(int minor)
{
	char path[64];
	int i;

	snprintf(path, sizeof(path), "/sys/class/accel/accel%d", minor);
	for (i = 0; i < SP_HOTPLUG_WAIT_MS / 20; i++) {
		if (access(path, F_OK) != 0)
			return true;
		usleep(20000);
	}
	return false;
}

/* The card answers on its node: open() and a GET_PARAM both succeed. */
static bool card_answers(int minor)
{
	char node[64];
	bool ok;
	int fd;

	snprintf(node, sizeof(node), "/dev/accel/accel%d", minor);
	fd = open(node, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return false;
	ok = !sp_get_param(fd, DRM_SPYRE_PARAM_MEM_SIZE, NULL);
	close(fd);
	return ok;
}

bool sp_wait_cards_ready(int want)
{
	int minors[SP_MAX_CARDS], n, i, j;

	for (i = 0; i < SP_HOTPLUG_WAIT_MS / 20; i++) {
		n = sp_find_cards(minors, SP_MAX_CARDS);
		for (j = 0; j < n; j++)
			if (!card_answers(minors[j]))
				break;
		if (n >= want && j == n)
			return true;
		usleep(20000);
	}
	return false;
}

int sp_card_unplug(bool qemu_monitor, int slot, const char *bdf, char *reply, size_t len)
{
	char cmd[64], path[128];

	reply[0] = '\0';
	if (qemu_monitor) {
		snprintf(cmd, sizeof(cmd), "device_del spyre%d", slot);
		return sp_vm_monitor(cmd, reply, len);
	}
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/remove", bdf);
	return sp_write_file(path, "1");
}

int sp_card_replug(bool qemu_monitor, int slot, char *reply, size_t len, unsigned int *retries)
{
	char cmd[64];
	int ret;

	reply[0] = '\0';
	*retries = 0;
	if (!qemu_monitor)
		return sp_write_file("/sys/bus/pci/rescan", "1");
	snprintf(cmd, sizeof(cmd), "device_add spyre,id=spyre%d,bus=rp%d", slot, slot);
	for (; *retries < SP_HOTPLUG_WAIT_MS / 100; (*retries)++) {
		ret = sp_vm_monitor(cmd, reply, len);
		if (ret || !strstr(reply, "Duplicate device ID"))
			return ret;
		usleep(100 * 1000);
	}
	return -ETIMEDOUT;
}
