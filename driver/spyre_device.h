/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Spyre card: the bound device, its registers and bring-up.
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#ifndef SPYRE_DEVICE_H
#define SPYRE_DEVICE_H

#include <linux/idr.h>
#include <linux/io.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/workqueue.h>
#include <linux/gpu_buddy.h>
#include <drm/drm_device.h>

#include "spyre_hw.h"

struct spyre_ring;
struct spyre_ring_set;
struct spyre_queue;
struct spyre_uq_slot;

/**
 * struct spyre_device - one bound card
 * @drm: the DRM device (/dev/accel/accelN)
 * @pdev: the PCI function
 * @regs: BAR0 register mapping
 * @hw_version: SPYRE_REG_VERSION
 * @num_cores: AI cores
 * @scratchpad_kb: scratchpad per core in KiB
 * @clock_mhz: modelled core clock
 * @num_sems: cross-ring semaphores
 * @mem_size: bytes of device memory under @mm
 * @aperture: bytes of device memory the CPU reaches through BAR2
 * @mem_bar: write-combined mapping of those bytes
 * @kqueue: the driver's own queue (clearing memory beyond @aperture)
 * @num_rings: rings in use (at most SPYRE_MAX_RINGS)
 * @ring_set: the memory of the rings (reference)
 * @rings: the rings; ring 0 serves compute queues, the others DMA queues
 * @next_dma_ring: round-robin counter spreading DMA queues over rings
 * @mm_lock: protects @mm and @mem_used
 * @mm: buddy allocator over device memory
 * @mem_used: bytes of device memory allocated to BOs
 * @bo_lock: protects @bo_list
 * @bo_list: every live BO of this device, for debugfs
 * @bo_count: live BOs (debugfs "bo_count"; tests check it returns to zero)
 * @host_mem_used: bytes of host BOs created by this device
 * @submit_wq: the schedulers' queue for run_job and free_job: per-CPU and
 *	high priority, so a submit's run_job runs on the submitting CPU right
 *	away instead of waking a worker on another CPU first
 * @reset_wq: ordered queue running every recovery, timeouts included, so
 *	two recoveries never overlap
 * @recovery_lock: serialises ring resets, card resets and cancellations
 * @reset_work: full card reset outside a job timeout (error IRQ, debugfs);
 *	see spyre_recovery.c
 * @reset_count: ring and card resets so far
 * @card_reset_pending: a card-level error asks for a full reset
 * @completions: jobs completed on any ring, for hang detection
 * @err_irq: Linux IRQ of the card-error vector
 * @mmu_lock: serialises MMU context register sequences (MMU_CTX_SELECT is
 *	card-wide)
 * @ctx_ida: MMU contexts in use by open files' address spaces (1..255)
 * @vms: those address spaces (under @mmu_lock), to restore their roots
 *	after a card reset
 * @link: entry in the driver's list of bound devices
 * @hw_rings: rings of the card the driver uses: the kernel's first
 *	(@num_rings), then those of user-mode queues
 * @uq_mutex: protects the slots' queues, their errors and doorbell faults
 * @num_uq_slots: rings for user-mode queues (0: none offered)
 * @uq_slots: those rings
 * @ctx_fault_addr: per MMU context, the VA of its last fault the card
 *	latched (for user queues' waiters)
 * @ctx_fault_known: per MMU context, @ctx_fault_addr holds the fault that
 *	stopped it (set by the error interrupt, cleared at RESUME)
 * @uq_watchdog: looks for hung user-mode queues while any is live
 * @peer_imports: peer BOs other cards imported from this card's device BOs
 *	(spyre_peer.c's lock), revoked when this card goes away
 * @peer_gone: this card went away: no new peer imports of its BOs (same lock)
 */
struct spyre_device {
	struct drm_device drm;
	struct pci_dev *pdev;
	void __iomem *regs;

	u32 hw_version;
	u32 num_cores;
	u32 scratchpad_kb;
	u32 clock_mhz;
	u32 num_sems;
	u64 mem_size;

	u64 aperture;
	void __iomem *mem_bar;
	struct spyre_queue *kqueue;
	unsigned int num_rings;
	struct spyre_ring_set *ring_set;
	struct spyre_ring *rings;
	atomic_t next_dma_ring;

	struct mutex mm_lock; /* protects mm, mem_used */
	struct gpu_buddy mm;
	u64 mem_used;

	struct mutex bo_lock; /* protects bo_list */
	struct list_head bo_list;
	atomic_t bo_count;
	atomic64_t host_mem_used;

	struct workqueue_struct *submit_wq;
	struct workqueue_struct *reset_wq;
	struct mutex recovery_lock; /* see above */
	struct work_struct reset_work;
	atomic_t reset_count;
	atomic_t card_reset_pending;
	atomic64_t completions;
	int err_irq;
	struct mutex mmu_lock; /* see above */
	struct ida ctx_ida;
	struct list_head vms;
	struct list_head link;
	u32 hw_rings;
	struct mutex uq_mutex; /* user queue slots, their errors, doorbell faults */
	u32 num_uq_slots;
	struct spyre_uq_slot *uq_slots;
	u64 ctx_fault_addr[SPYRE_MMU_NUM_CTX];
	unsigned long ctx_fault_known[BITS_TO_LONGS(SPYRE_MMU_NUM_CTX)];
	struct delayed_work uq_watchdog;
	struct list_head peer_imports;
	bool peer_gone;
};

static inline struct spyre_device *to_spyre_device(struct drm_device *drm)
{
	return container_of(drm, struct spyre_device, drm);
}

static inline u32 spyre_read(struct spyre_device *sdev, u32 reg)
{
	return readl(sdev->regs + reg);
}

static inline void spyre_write(struct spyre_device *sdev, u32 reg, u32 val)
{
	writel(val, sdev->regs + reg);
}

int spyre_device_init(struct spyre_device *sdev);
void spyre_device_fini(struct spyre_device *sdev);
u64 spyre_device_time_ns(struct spyre_device *sdev);
int spyre_card_reset_hw(struct spyre_device *sdev);

#endif /* SPYRE_DEVICE_H */
