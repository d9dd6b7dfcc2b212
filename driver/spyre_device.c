// SPDX-License-Identifier: GPL-2.0-only
/*
 * Spyre card bring-up and teardown, and the card-error interrupt (resets
 * are in spyre_recovery.c).
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#include <linux/interrupt.h>
#include <linux/iopoll.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>

#include "spyre_device.h"
#include "spyre_drv.h"
#include "spyre_queue.h"
#include "spyre_recovery.h"
#include "spyre_ring.h"
#include "spyre_uq.h"

#define SPYRE_RESET_TIMEOUT_US	1000000

u64 spyre_device_time_ns(struct spyre_device *sdev)
{
	u32 lo = spyre_read(sdev, SPYRE_REG_TIME_LO);	/* latches HI */

	return (u64)spyre_read(sdev, SPYRE_REG_TIME_HI) << 32 | lo;
}

/* Resets the whole card and waits until it reports ready. */
int spyre_card_reset_hw(struct spyre_device *sdev)
{
	u32 status;
	int ret;

	spyre_write(sdev, SPYRE_REG_CTRL, SPYRE_CTRL_RESET);
	ret = readl_poll_timeout(sdev->regs + SPYRE_REG_STATUS, status,
				 (status & SPYRE_STATUS_READY) && !(status & SPYRE_STATUS_FATAL),
				 10, SPYRE_RESET_TIMEOUT_US);
	if (ret)
		drm_err(&sdev->drm, "card does not come out of reset (status %#x)\n", status);
	spyre_write(sdev, SPYRE_REG_ERR_STATUS, spyre_read(sdev, SPYRE_REG_ERR_STATUS));
	return ret;
}

static irqreturn_t spyre_err_irq(int irq, void *arg)
{
	struct spyre_device *sdev = arg;
	u32 err = spyre_read(sdev, SPYRE_REG_ERR_STATUS);
	u32 status = spyre_read(sdev, SPYRE_REG_STATUS);
	unsigned int i;

	if (!err && !(status & SPYRE_STATUS_FATAL))
		return IRQ_NONE;
	spyre_write(sdev, SPYRE_REG_ERR_STATUS, err);
	drm_err_ratelimited(&sdev->drm, "card error %#x (status %#x, info %#x)\n",
			    err, status, spyre_read(sdev, SPYRE_REG_ERR_INFO));

	if (err & SPYRE_ERR_STATUS_MMU) {
		/*
		 * The failed job reports the fault in its own record; clear
		 * the latch so the next fault is latched in full.
		 */
		u32 info = spyre_read(sdev, SPYRE_REG_MMU_FAULT_INFO);
		u64 addr = (u64)spyre_read(sdev, SPYRE_REG_MMU_FAULT_ADDR_HI) << 32 |
			   spyre_read(sdev, SPYRE_REG_MMU_FAULT_ADDR_LO);

		drm_dbg(&sdev->drm, "MMU fault: context %u reason %u access %u at %#x%08x\n",
			SPYRE_MMU_FAULT_CTX(info), SPYRE_MMU_FAULT_REASON(info),
			SPYRE_MMU_FAULT_ACCESS(info),
			upper_32_bits(addr), lower_32_bits(addr));
		if (info & SPYRE_MMU_FAULT_VALID) {
			WRITE_ONCE(sdev->ctx_fault_addr[SPYRE_MMU_FAULT_CTX(info)], addr);
			smp_mb__before_atomic();	/* the address, then the flag */
			set_bit(SPYRE_MMU_FAULT_CTX(info), sdev->ctx_fault_known);
		}
		spyre_write(sdev, SPYRE_REG_MMU_FAULT_INFO, SPYRE_MMU_FAULT_VALID);
	}
	/* A user queue's waiter learns of its fault or ring error here. */
	if (err & (SPYRE_ERR_STATUS_MMU | SPYRE_ERR_STATUS_RING))
		spyre_uq_wake_all(sdev);
	if ((err & SPYRE_ERR_STATUS_MEM_UE) || (status & SPYRE_STATUS_FATAL)) {
		spyre_schedule_card_reset(sdev);
		return IRQ_HANDLED;
	}
	if (err & SPYRE_ERR_STATUS_RING) {
		/* Let the ring's timeout handler recover it now. */
		for (i = 0; i < sdev->num_rings; i++)
			if (spyre_ring_read(&sdev->rings[i], SPYRE_RING_STATUS) &
			    SPYRE_RING_STATUS_ERROR)
				drm_sched_fault(&sdev->rings[i].sched);
	}
	return IRQ_HANDLED;
}

/*
 * Device-lifetime state is released by drmm actions after the last file
 * closed, in reverse order: the schedulers (no entity is left on them),
 * then the allocator, the workqueues and the rings' memory.
 *
 * Every job has finished by now (the card was quiesced at removal), but
 * the scheduler frees finished jobs from its work items, and
 * drm_sched_fini() cancels those: let them run first, so no job keeps its
 * BOs, its queue or a fence past the device.
 */
static void spyre_scheds_fini(struct drm_device *drm, void *arg)
{
	struct spyre_device *sdev = arg;
	struct drm_sched_job *s_job, *tmp;
	struct drm_gpu_scheduler *sched;
	unsigned int i;

	drain_workqueue(sdev->submit_wq);
	for (i = 0; i < sdev->num_rings; i++) {
		if (!sdev->rings[i].sdev)
			continue;
		sched = &sdev->rings[i].sched;
		drm_sched_fini(sched);
		list_for_each_entry_safe(s_job, tmp, &sched->pending_list, list) {
			/* An unfinished job may still be used by its fence: leave it. */
			if (drm_WARN_ON(drm, !dma_fence_is_signaled(&s_job->s_fence->finished)))
				continue;
			list_del_init(&s_job->list);
			sched->ops->free_job(s_job);
		}
	}
}

static void spyre_ring_set_release(struct drm_device *drm, void *set)
{
	spyre_ring_set_put(set);
}

static void spyre_mm_fini(struct drm_device *drm, void *arg)
{
	struct spyre_device *sdev = arg;

	gpu_buddy_fini(&sdev->mm);
}

static void spyre_destroy_wq(struct drm_device *drm, void *wq)
{
	destroy_workqueue(wq);
}

static int spyre_read_config(struct spyre_device *sdev)
{
	u32 id = spyre_read(sdev, SPYRE_REG_ID);

	if (id != SPYRE_ID_MAGIC) {
		drm_err(&sdev->drm, "not a Spyre card (ID %#x)\n", id);
		return -ENODEV;
	}
	sdev->hw_version = spyre_read(sdev, SPYRE_REG_VERSION);
	if (SPYRE_HW_VERSION_MAJOR_OF(sdev->hw_version) != SPYRE_HW_VERSION_MAJOR) {
		drm_err(&sdev->drm, "unsupported card interface %u.%u\n",
			SPYRE_HW_VERSION_MAJOR_OF(sdev->hw_version),
			SPYRE_HW_VERSION_MINOR_OF(sdev->hw_version));
		return -ENODEV;
	}
	sdev->num_cores = spyre_read(sdev, SPYRE_REG_NUM_CORES);
	sdev->scratchpad_kb = spyre_read(sdev, SPYRE_REG_SCRATCHPAD_KB);
	sdev->clock_mhz = spyre_read(sdev, SPYRE_REG_CLOCK_MHZ);
	sdev->num_sems = spyre_read(sdev, SPYRE_REG_NUM_SEMS);
	sdev->mem_size = (u64)spyre_read(sdev, SPYRE_REG_MEM_SIZE_HI) << 32 |
			 spyre_read(sdev, SPYRE_REG_MEM_SIZE_LO);
	sdev->mem_size = round_down(sdev->mem_size, PAGE_SIZE);
	sdev->aperture = (u64)spyre_read(sdev, SPYRE_REG_MEM_APERTURE_HI) << 32 |
			 spyre_read(sdev, SPYRE_REG_MEM_APERTURE_LO);
	/* The rings past the kernel's serve user-mode queues (spyre_uq.c). */
	sdev->hw_rings = min_t(u32, spyre_read(sdev, SPYRE_REG_NUM_RINGS), SPYRE_MAX_HW_RINGS);
	sdev->num_rings = min3(sdev->hw_rings, (u32)SPYRE_MAX_RINGS, spyre_kernel_rings);
	if (!sdev->num_rings || !sdev->mem_size) {
		drm_err(&sdev->drm, "card reports %u rings and %llu bytes of memory\n",
			sdev->num_rings, sdev->mem_size);
		return -ENODEV;
	}
	return 0;
}

/* Maps the part of device memory the CPU reaches through BAR2. */
static void spyre_map_aperture(struct spyre_device *sdev)
{
	struct pci_dev *pdev = sdev->pdev;

	sdev->aperture = min3(sdev->aperture, sdev->mem_size,
			      (u64)pci_resource_len(pdev, SPYRE_BAR_MEM));
	if (!sdev->aperture)
		return;
	sdev->mem_bar = devm_ioremap_wc(&pdev->dev, pci_resource_start(pdev, SPYRE_BAR_MEM),
					sdev->aperture);
	if (!sdev->mem_bar)
		sdev->aperture = 0;
}

/* Sets up every ring with its MSI-X vector, one vector per ring plus errors. */
static int spyre_rings_init(struct spyre_device *sdev, unsigned int nvec)
{
	struct pci_dev *pdev = sdev->pdev;
	unsigned int i, vec;
	int ret;

	for (i = 0; i < sdev->num_rings; i++) {
		struct spyre_ring *ring = &sdev->rings[i];

		vec = spyre_read(sdev, SPYRE_RING_REG(i, SPYRE_RING_IRQ_VECTOR));
		if (vec >= nvec) {
			ret = -EIO;
			goto err_rings;
		}
		ret = spyre_ring_init(sdev, ring, i, pci_irq_vector(pdev, vec));
		if (ret)
			goto err_rings;
		ret = spyre_ring_hw_start(ring);
		if (ret) {
			spyre_ring_fini(ring);
			ring->sdev = NULL;
			goto err_rings;
		}
	}
	return 0;

err_rings:
	while (i--) {
		spyre_ring_fini(&sdev->rings[i]);
		sdev->rings[i].sdev = NULL;
	}
	return ret;
}

static void spyre_rings_fini(struct spyre_device *sdev)
{
	unsigned int i;

	for (i = 0; i < sdev->num_rings; i++) {
		spyre_ring_fini(&sdev->rings[i]);
		sdev->rings[i].sdev = NULL;
	}
}

int spyre_device_init(struct spyre_device *sdev)
{
	struct pci_dev *pdev = sdev->pdev;
	unsigned int nvec, err_vec;
	int ret;

	ret = spyre_read_config(sdev);
	if (ret)
		return ret;
	ret = spyre_card_reset_hw(sdev);
	if (ret)
		return ret;
	/* The CPU clears device memory it can reach through BAR2. */
	spyre_map_aperture(sdev);

	ret = drmm_mutex_init(&sdev->drm, &sdev->mm_lock);
	if (ret)
		return ret;
	ret = drmm_mutex_init(&sdev->drm, &sdev->bo_lock);
	if (ret)
		return ret;
	ret = drmm_mutex_init(&sdev->drm, &sdev->recovery_lock);
	if (ret)
		return ret;
	ret = drmm_mutex_init(&sdev->drm, &sdev->mmu_lock);
	if (ret)
		return ret;
	ret = drmm_mutex_init(&sdev->drm, &sdev->uq_mutex);
	if (ret)
		return ret;
	/* Empty again once every file closed: it needs no teardown. */
	ida_init(&sdev->ctx_ida);
	INIT_LIST_HEAD(&sdev->vms);
	INIT_LIST_HEAD(&sdev->bo_list);
	INIT_LIST_HEAD(&sdev->peer_imports);
	spyre_recovery_init(sdev);
	sdev->ring_set = spyre_ring_set_alloc(sdev->num_rings);
	if (!sdev->ring_set)
		return -ENOMEM;
	sdev->rings = sdev->ring_set->rings;
	/* Runs last; hardware fences may keep the rings' memory longer. */
	ret = drmm_add_action_or_reset(&sdev->drm, spyre_ring_set_release, sdev->ring_set);
	if (ret)
		return ret;

	/*
	 * drm_sched's default queue is ordered, hence unbound: a submit
	 * would wake a worker on whichever CPU, often another one, an
	 * inter-processor interrupt away. The scheduler does not need the
	 * ordering (each of its work items never runs concurrently with
	 * itself, and run_job and free_job only share locked state).
	 */
	sdev->submit_wq = alloc_workqueue("spyre-submit-%s", WQ_HIGHPRI | WQ_MEM_RECLAIM, 0,
					  pci_name(pdev));
	if (!sdev->submit_wq)
		return -ENOMEM;
	ret = drmm_add_action_or_reset(&sdev->drm, spyre_destroy_wq, sdev->submit_wq);
	if (ret)
		return ret;
	sdev->reset_wq = alloc_ordered_workqueue("spyre-reset-%s", 0, pci_name(pdev));
	if (!sdev->reset_wq)
		return -ENOMEM;
	ret = drmm_add_action_or_reset(&sdev->drm, spyre_destroy_wq, sdev->reset_wq);
	if (ret)
		return ret;
	ret = gpu_buddy_init(&sdev->mm, sdev->mem_size, PAGE_SIZE);
	if (ret)
		return ret;
	ret = drmm_add_action_or_reset(&sdev->drm, spyre_mm_fini, sdev);
	if (ret)
		return ret;
	/* Runs before the actions above: the schedulers use the queues. */
	ret = drmm_add_action_or_reset(&sdev->drm, spyre_scheds_fini, sdev);
	if (ret)
		return ret;

	err_vec = spyre_read(sdev, SPYRE_REG_IRQ_ERR_VECTOR);
	nvec = max(sdev->hw_rings, err_vec) + 1;
	ret = pci_alloc_irq_vectors(pdev, nvec, nvec, PCI_IRQ_MSIX);
	if (ret < 0) {
		drm_err(&sdev->drm, "cannot get %u MSI-X vectors: %d\n", nvec, ret);
		return ret;
	}
	ret = spyre_rings_init(sdev, nvec);
	if (ret)
		return ret;
	sdev->err_irq = pci_irq_vector(pdev, err_vec);
	ret = request_irq(sdev->err_irq, spyre_err_irq, 0, "spyre-err", sdev);
	if (ret)
		goto err_rings;
	ret = spyre_kernel_queue_init(sdev);
	if (ret)
		goto err_irq;
	ret = spyre_uq_init(sdev);
	if (ret)
		goto err_kqueue;
	return 0;

err_kqueue:
	spyre_kernel_queue_fini(sdev);
err_irq:
	free_irq(sdev->err_irq, sdev);
err_rings:
	spyre_rings_fini(sdev);
	return ret;
}

/* Quiesces the card when the PCI function goes away. */
void spyre_device_fini(struct spyre_device *sdev)
{
	unsigned int i;

	spyre_uq_fini(sdev);
	free_irq(sdev->err_irq, sdev);
	cancel_work_sync(&sdev->reset_work);
	spyre_kernel_queue_fini(sdev);
	for (i = 0; i < sdev->num_rings; i++) {
		struct spyre_ring *ring = &sdev->rings[i];

		drm_sched_wqueue_stop(&ring->sched);
		spyre_ring_hw_reset(ring);
		free_irq(ring->irq, ring);
		spyre_ring_retire_pending(ring, NULL, 0, -ENODEV);
		drm_sched_wqueue_start(&ring->sched);
	}
	spyre_write(sdev, SPYRE_REG_CTRL, SPYRE_CTRL_RESET);
}
