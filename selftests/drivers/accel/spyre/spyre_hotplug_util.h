/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the Spyre hot-removal selftests: QEMU monitor commands sent
 * through spyre-vm's monitor agent, and waiting for a card to leave or for
 * cards to come back (sysfs class device and device node).
 */
#ifndef SPYRE_HOTPLUG_UTIL_H
#define SPYRE_HOTPLUG_UTIL_H

#include <stdbool.h>
#include <stddef.h>

/* Removal and re-enumeration take seconds under TCG: the waits' bound. */
#define SP_HOTPLUG_WAIT_MS	60000

/*
 * Send one command to QEMU's monitor (`spyre-vm --monitor` exports
 * SPYRE_VM_MONITOR_DIR) and read its reply into @reply (NUL-terminated).
 * 0, -ENOENT without a monitor, -ETIMEDOUT without a reply, else -errno.
 */
int sp_vm_monitor(const char *cmd, char *reply, size_t len);
/* True once accel@minor is gone from sysfs (within SP_HOTPLUG_WAIT_MS). */
bool sp_wait_card_gone(int minor);
/*
 * True once at least @want cards are bound and each answers on its device
 * node. A hot-added card is probed from a kernel thread, so its class device
 * and node appear before the probe ends: DRM publishes the minor for open()
 * only after device_add() of the node (open() gives -ENODEV in between), and
 * devtmpfs may create the node a little after sysfs shows the class device.
 */
bool sp_wait_cards_ready(int want);

/*
 * Take a card away: QEMU's device_del of spyre@slot (`spyre-vm --monitor`
 * puts card i behind root port rpI as spyreI) when @qemu_monitor, else a
 * sysfs remove of the PCI function @bdf. The monitor's reply goes to
 * @reply. 0 or -errno; the caller waits with sp_wait_card_gone().
 */
int sp_card_unplug(bool qemu_monitor, int slot, const char *bdf, char *reply, size_t len);
/*
 * Bring it back: device_add of spyre@slot on rp@slot, retried while QEMU
 * still holds the id (it lets go once the guest has powered the slot off,
 * a little after the driver did), else a PCI rescan. @retries gets the
 * number of retries. 0 or -errno; the caller waits with
 * sp_wait_cards_ready().
 */
int sp_card_replug(bool qemu_monitor, int slot, char *reply, size_t len, unsigned int *retries);

#endif
