/*
 * Virtual Spyre card: the few QEMU API differences between the versions
 * the glue builds against (Debian's 7.2 and 10.x).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef SPYRE_COMPAT_H
#define SPYRE_COMPAT_H

#define SPYRE_QEMU_AT_LEAST(maj, min) \
    (QEMU_VERSION_MAJOR > (maj) || \
     (QEMU_VERSION_MAJOR == (maj) && QEMU_VERSION_MINOR >= (min)))

/* PCIDevice and the pci_dma_* helpers moved to pci_device.h in 8.0. */
#if __has_include("hw/pci/pci_device.h")
#include "hw/pci/pci_device.h"
#else
#include "hw/pci/pci.h"
#endif

/* exec/memory.h became system/memory.h in the 10.x series. */
#if __has_include("system/memory.h")
#include "system/memory.h"
#else
#include "exec/memory.h"
#endif

/* Property arrays became const and lost their terminator in 10.0. */
#if SPYRE_QEMU_AT_LEAST(10, 0)
#define SPYRE_PROPS_CONST const
#define SPYRE_PROP_END
#else
#define SPYRE_PROPS_CONST
#define SPYRE_PROP_END DEFINE_PROP_END_OF_LIST(),
#endif

/* class_init's data argument became const in 10.1. */
#if SPYRE_QEMU_AT_LEAST(10, 1)
#define SPYRE_CLASS_DATA const void
#else
#define SPYRE_CLASS_DATA void
#endif

/* dc->reset became device_class_set_legacy_reset() in 9.2. */
#if SPYRE_QEMU_AT_LEAST(9, 2)
#define spyre_set_reset(dc, fn) device_class_set_legacy_reset((dc), (fn))
#else
#define spyre_set_reset(dc, fn) ((dc)->reset = (fn))
#endif

/*
 * Bottom halves guarded against re-entrancy (a BH touching its own device's
 * MMIO) came with the DMA re-entrancy fix (upstream 8.1, backported to
 * Debian's 7.2); without the guard, a plain BH.
 */
#include "qemu/main-loop.h"
#ifdef qemu_bh_new_guarded
#define spyre_bh_new(cb, dev) \
    qemu_bh_new_guarded((cb), (dev), &DEVICE(dev)->mem_reentrancy_guard)
#else
#define spyre_bh_new(cb, dev) qemu_bh_new((cb), (dev))
#endif

/* The big QEMU lock's functions were renamed in 9.0. */
#if SPYRE_QEMU_AT_LEAST(9, 0)
#define spyre_bql_lock() bql_lock()
#define spyre_bql_unlock() bql_unlock()
#else
#define spyre_bql_lock() qemu_mutex_lock_iothread()
#define spyre_bql_unlock() qemu_mutex_unlock_iothread()
#endif

#endif /* SPYRE_COMPAT_H */
