// SPDX-License-Identifier: GPL-2.0-only
/*
 * Spyre user-mode queues (driver 1.4, card interface 1.10): a hardware
 * ring whose descriptors and write-back live in the file's card address
 * space (RING_CTX.VA) and whose doorbell page of BAR4 is mapped into the
 * process. The driver only sets the ring up, tears it down, sleeps for
 * waiters until the write-back reaches a value, and watches the rings for
 * hangs (a ring that stops moving is reset and its queue ended with
 * -ETIMEDOUT); everything the ring runs is translated by the file's page
 * tables. Design: Documentation/accel/spyre/vm.rst ("User-mode queues").
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#include <linux/highmem.h>
#include <linux/interrupt.h>
#include <linux/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_managed.h>
#include <drm/drm_gem.h>
#include <drm/drm_utils.h>
#include <drm/drm_vma_manager.h>
#include <uapi/drm/spyre_accel.h>

#include "spyre_drv.h"
#include "spyre_gem.h"
#include "spyre_recovery.h"
#include "spyre_uq.h"
#include "spyre_vm.h"

/* A CPU page must be one doorbell page, else a mapping would reach others. */
#if PAGE_SHIFT == 12
#define SPYRE_UQ_PAGE_IS_DOORBELL	true
#else
#define SPYRE_UQ_PAGE_IS_DOORBELL	false
#endif

/* Doorbell mmap offsets (pages): below the GEM offsets, one per ring. */
#define SPYRE_UQ_PGOFF		0x10000UL

/**
 * struct spyre_uq - one user-mode queue
 * @ref: held by the file's ID, by waiters and by doorbell mappings
 * @sdev: the device (a drm_dev reference keeps it)
 * @sfile: the file whose usage the queue's engine time counts in (a
 *	reference, so the statistics outlive a closed file)
 * @slot: the hardware ring
 * @id: ID in the file
 * @ctx: the file's MMU context
 * @wb_obj: the host BO holding the write-back (a reference)
 * @wb_page: the write-back's page
 * @wb_off: its offset in the page
 * @error: 0 while the queue lives, else what waiters return (written
 *	under &spyre_device.uq_mutex)
 * @sink: a zeroed page of the queue's own that the doorbell mapping shows
 *	once the queue ended, so a process that rings a dead queue writes
 *	into nothing instead of dying of SIGBUS (NULL: SIGBUS then)
 * @seen_head: the ring's head at the watchdog's last look
 * @seen_progress: its progress counter then
 * @seen_done: its write-back's completed seqno then
 * @seen_card: the sum over the card's rings then (see spyre_uq_watchdog())
 * @moved: jiffies when the watchdog last saw the ring move or idle
 * @hw_live: the ring runs this queue and has not been reset since: its
 *	engine-time counters are the queue's (under &spyre_device.uq_mutex)
 * @busy_seen: the ring's engine-time counters (per enum drm_spyre_engine)
 *	already added to @sfile's usage (under &spyre_device.uq_mutex)
 */
struct spyre_uq {
	struct kref ref;
	struct spyre_device *sdev;
	struct spyre_file *sfile;
	struct spyre_uq_slot *slot;
	u32 id;
	u32 ctx;
	struct drm_gem_object *wb_obj;
	struct page *wb_page;
	u32 wb_off;
	int error;
	struct page *sink;
	u32 seen_head;
	u32 seen_progress;
	u64 seen_done;
	u64 seen_card;
	unsigned long moved;
	bool hw_live;
	u64 busy_seen[SPYRE_NUM_ENGINES];
};

static void spyre_uq_release(struct kref *ref)
{
	struct spyre_uq *uq = container_of(ref, struct spyre_uq, ref);

	if (uq->sink)
		__free_page(uq->sink);
	drm_gem_object_put(uq->wb_obj);
	spyre_file_put(uq->sfile);
	drm_dev_put(&uq->sdev->drm);
	kfree(uq);
}

static void spyre_uq_put(struct spyre_uq *uq)
{
	kref_put(&uq->ref, spyre_uq_release);
}

static u64 spyre_uq_doorbell_pgoff(const struct spyre_uq_slot *slot)
{
	return SPYRE_UQ_PGOFF + slot->hw;
}

/* --- the hardware ring -------------------------------------------------- */

static void spyre_uq_ring_write(struct spyre_device *sdev, u32 hw, u32 reg, u32 val)
{
	spyre_write(sdev, SPYRE_RING_REG(hw, reg), val);
}

/* A reset drops the ring's work; the context goes last (config, ring off). */
static void spyre_uq_hw_stop(struct spyre_device *sdev, u32 hw)
{
	spyre_uq_ring_write(sdev, hw, SPYRE_RING_CTRL, SPYRE_RING_CTRL_RESET);
	spyre_uq_ring_write(sdev, hw, SPYRE_RING_CTX, 0);
}

static int spyre_uq_hw_start(struct spyre_device *sdev, u32 hw, u32 ctx,
			     const struct drm_spyre_uq_create *args)
{
	u32 status;

	spyre_uq_hw_stop(sdev, hw);
	spyre_uq_ring_write(sdev, hw, SPYRE_RING_BASE_LO, lower_32_bits(args->ring_addr));
	spyre_uq_ring_write(sdev, hw, SPYRE_RING_BASE_HI, upper_32_bits(args->ring_addr));
	spyre_uq_ring_write(sdev, hw, SPYRE_RING_SIZE_LOG2, args->ring_log2);
	spyre_uq_ring_write(sdev, hw, SPYRE_RING_WB_LO, lower_32_bits(args->wb_addr));
	spyre_uq_ring_write(sdev, hw, SPYRE_RING_WB_HI, upper_32_bits(args->wb_addr));
	spyre_uq_ring_write(sdev, hw, SPYRE_RING_CTX, ctx | SPYRE_RING_CTX_VA);
	spyre_uq_ring_write(sdev, hw, SPYRE_RING_CTRL, SPYRE_RING_CTRL_ENABLE);
	status = spyre_read(sdev, SPYRE_RING_REG(hw, SPYRE_RING_STATUS));
	if (!(status & SPYRE_RING_STATUS_ENABLED) || (status & SPYRE_RING_STATUS_ERROR)) {
		spyre_uq_hw_stop(sdev, hw);
		return -EINVAL;
	}
	return 0;
}

/*
 * Engine time of user-queue work (card interface 1.14): the kernel sees
 * none of the queue's jobs, and their completion records are in the
 * process's memory where it could rewrite them, so the driver reads the
 * ring's own counters (what its finished jobs used) and adds what they
 * gained since the last look to the file's usage. It looks when fdinfo or
 * debugfs are read, at each watchdog period and just before the ring is
 * reset (destroy, hang): a card reset zeroes the counters first, so what
 * a queue did since the last look before a card reset is not counted.
 */
static u64 spyre_uq_ring_busy(struct spyre_device *sdev, u32 hw, u32 lo, u32 hi)
{
	u32 low = spyre_read(sdev, SPYRE_RING_REG(hw, lo));

	return (u64)spyre_read(sdev, SPYRE_RING_REG(hw, hi)) << 32 | low;
}

/* Under uq_mutex, with the card present. */
static void spyre_uq_account_locked(struct spyre_uq *uq)
{
	struct spyre_device *sdev = uq->sdev;
	u32 hw = uq->slot->hw;
	u64 v[SPYRE_NUM_ENGINES];
	int e;

	if (!uq->hw_live ||
	    sdev->hw_version < SPYRE_HW_VERSION(1, SPYRE_HW_RING_BUSY_MINOR))
		return;
	v[DRM_SPYRE_ENGINE_COMPUTE] = spyre_uq_ring_busy(sdev, hw, SPYRE_RING_COMPUTE_NS_LO,
							 SPYRE_RING_COMPUTE_NS_HI);
	v[DRM_SPYRE_ENGINE_DMA] = spyre_uq_ring_busy(sdev, hw, SPYRE_RING_DMA_NS_LO,
						     SPYRE_RING_DMA_NS_HI);
	for (e = 0; e < SPYRE_NUM_ENGINES; e++) {
		/* counters only grow while the ring is the queue's */
		if (v[e] > uq->busy_seen[e])
			atomic64_add(v[e] - uq->busy_seen[e], &uq->sfile->engine_ns[e]);
		uq->busy_seen[e] = v[e];
	}
}

/* Under uq_mutex: the ring's last engine time counts, then it is reset. */
static void spyre_uq_stop_locked(struct spyre_uq *uq)
{
	spyre_uq_account_locked(uq);
	spyre_uq_hw_stop(uq->sdev, uq->slot->hw);
	uq->hw_live = false;
}

/* Brings the file's usage up to date with its live queues' rings. */
void spyre_uq_account_file(struct spyre_file *sfile)
{
	struct spyre_device *sdev = sfile->sdev;
	struct spyre_uq *uq;
	unsigned long id;
	int idx;

	if (!drm_dev_enter(&sdev->drm, &idx))
		return;
	/* A queue erased meanwhile is freed only after it took uq_mutex. */
	mutex_lock(&sdev->uq_mutex);
	xa_for_each(&sfile->uqs, id, uq)
		spyre_uq_account_locked(uq);
	mutex_unlock(&sdev->uq_mutex);
	drm_dev_exit(idx);
}

static irqreturn_t spyre_uq_irq(int irq, void *arg)
{
	struct spyre_uq_slot *slot = arg;

	wake_up_all(&slot->wq);
	return IRQ_HANDLED;
}

/* Card errors (a ring error, a fault) may concern any queue's waiter. */
void spyre_uq_wake_all(struct spyre_device *sdev)
{
	u32 i;

	for (i = 0; i < sdev->num_uq_slots; i++)
		wake_up_all(&sdev->uq_slots[i].wq);
}

/*
 * Ends @uq: no waiter sleeps on it and no doorbell access reaches the card
 * after this returns. The ring itself is stopped by the caller (or is gone
 * with a card reset or the device).
 */
static void spyre_uq_revoke(struct spyre_uq *uq)
{
	struct spyre_device *sdev = uq->sdev;

	/* Faults from now on see the error: revoke what was mapped before. */
	unmap_mapping_range(sdev->drm.anon_inode->i_mapping,
			    spyre_uq_doorbell_pgoff(uq->slot) << PAGE_SHIFT, PAGE_SIZE, 1);
	wake_up_all(&uq->slot->wq);
}

static void spyre_uq_kill(struct spyre_uq *uq, int error)
{
	struct spyre_device *sdev = uq->sdev;

	mutex_lock(&sdev->uq_mutex);
	if (!uq->error)
		WRITE_ONCE(uq->error, error);
	mutex_unlock(&sdev->uq_mutex);
	spyre_uq_revoke(uq);
}

/* After a card reset every ring is blank: the queues are lost. */
void spyre_uq_card_reset(struct spyre_device *sdev)
{
	struct spyre_uq *uqs[64];
	u32 i, n = 0;

	mutex_lock(&sdev->uq_mutex);
	for (i = 0; i < sdev->num_uq_slots && n < ARRAY_SIZE(uqs); i++) {
		if (sdev->uq_slots[i].uq) {
			uqs[n] = sdev->uq_slots[i].uq;
			uqs[n]->hw_live = false;	/* its counters are gone too */
			kref_get(&uqs[n++]->ref);
		}
	}
	mutex_unlock(&sdev->uq_mutex);
	for (i = 0; i < n; i++) {
		spyre_uq_kill(uqs[i], -ECANCELED);
		spyre_uq_put(uqs[i]);
	}
}

/* --- hang detection ----------------------------------------------------- */

/*
 * The kernel never sees the jobs of a user-mode queue, so drm_sched's job
 * timeout cannot watch them: a periodic check does, by the same rule as
 * spyre_ring_is_stuck_locked() for the kernel's rings. A ring with work
 * (not idle) whose head, progress counter and write-back have not moved
 * for the job timeout (at least SPYRE_MIN_HANG_MS) is hung; while the rest
 * of the card moves it may be waiting its turn or for another ring (a
 * WAIT_MEM), and gets SPYRE_MAX_STALLS times as long. A ring stopped on a
 * ring error or by its context's translation fault is the process's to
 * handle (its waiters hear -EIO or -EFAULT), not a hang.
 */
static unsigned long spyre_uq_hang_limit(void)
{
	return msecs_to_jiffies(max(READ_ONCE(spyre_job_timeout_ms), SPYRE_MIN_HANG_MS));
}

static unsigned long spyre_uq_watch_period(void)
{
	return max(spyre_uq_hang_limit() / 4, 1UL);
}

static u64 spyre_uq_completed(struct spyre_uq *uq)
{
	void *p = kmap_local_page(uq->wb_page);
	u64 v = le64_to_cpu(READ_ONCE(*(__le64 *)(p + uq->wb_off)));

	kunmap_local(p);
	return v;
}

/* Under uq_mutex, inside drm_dev_enter(). */
static bool spyre_uq_is_stuck(struct spyre_uq *uq, u64 card)
{
	struct spyre_device *sdev = uq->sdev;
	u32 hw = uq->slot->hw;
	u32 status = spyre_read(sdev, SPYRE_RING_REG(hw, SPYRE_RING_STATUS));
	u32 head = spyre_read(sdev, SPYRE_RING_REG(hw, SPYRE_RING_HEAD));
	u32 count = spyre_read(sdev, SPYRE_RING_REG(hw, SPYRE_RING_PROGRESS));
	u64 done = spyre_uq_completed(uq);
	bool card_moved = card != uq->seen_card;
	unsigned long limit = spyre_uq_hang_limit();

	uq->seen_card = card;
	if (!(status & SPYRE_RING_STATUS_ENABLED) ||
	    (status & (SPYRE_RING_STATUS_IDLE | SPYRE_RING_STATUS_ERROR |
		       SPYRE_RING_STATUS_CTX_FAULT)) ||
	    head != uq->seen_head || count != uq->seen_progress || done != uq->seen_done) {
		uq->seen_head = head;
		uq->seen_progress = count;
		uq->seen_done = done;
		uq->moved = jiffies;
		return false;
	}
	if (card_moved)
		limit *= SPYRE_MAX_STALLS;
	return time_after_eq(jiffies, uq->moved + limit);
}

static void spyre_uq_watchdog(struct work_struct *work)
{
	struct spyre_device *sdev = container_of(to_delayed_work(work), struct spyre_device,
						 uq_watchdog);
	struct spyre_uq *hung[8];
	bool busy = false;
	u32 i, n = 0;
	u64 card;
	int idx;

	if (!drm_dev_enter(&sdev->drm, &idx))
		return;
	card = atomic64_read(&sdev->completions);
	for (i = 0; i < sdev->hw_rings; i++)
		card += spyre_read(sdev, SPYRE_RING_REG(i, SPYRE_RING_HEAD)) +
			spyre_read(sdev, SPYRE_RING_REG(i, SPYRE_RING_PROGRESS));
	mutex_lock(&sdev->uq_mutex);
	for (i = 0; i < sdev->num_uq_slots; i++) {
		struct spyre_uq *uq = sdev->uq_slots[i].uq;

		if (!uq || uq->error)
			continue;
		busy = true;
		spyre_uq_account_locked(uq);
		if (n == ARRAY_SIZE(hung) || !spyre_uq_is_stuck(uq, card))
			continue;
		/*
		 * The ban: the queue ends and its ring stops fetching, under
		 * the lock a destroy takes, so the ring is still this queue's.
		 */
		WRITE_ONCE(uq->error, -ETIMEDOUT);
		spyre_uq_stop_locked(uq);
		atomic_inc(&sdev->reset_count);
		kref_get(&uq->ref);
		hung[n++] = uq;
	}
	mutex_unlock(&sdev->uq_mutex);
	drm_dev_exit(idx);
	for (i = 0; i < n; i++) {
		drm_warn(&sdev->drm, "user queue %u (context %u) hung at seqno %llu, resetting its ring\n",
			 hung[i]->id, hung[i]->ctx, hung[i]->seen_done);
		spyre_uq_revoke(hung[i]);
		spyre_uq_put(hung[i]);
	}
	if (busy)
		queue_delayed_work(system_wq, &sdev->uq_watchdog, spyre_uq_watch_period());
}

/* --- create and destroy ------------------------------------------------- */

/* The page of the host BO mapped at @addr that the write-back lands in. */
static int spyre_uq_find_wb(struct spyre_vm *vm, u64 addr, struct spyre_uq *uq)
{
	struct drm_gpuva *va = drm_gpuva_find_first(&vm->gpuvm, addr, 64);
	struct spyre_bo *bo;
	struct page *page;
	u64 off;

	if (!va || va->va.addr > addr || addr + 64 > va->va.addr + va->va.range)
		return -ENOENT;
	bo = to_spyre_bo(va->gem.obj);
	if (bo->placement != DRM_SPYRE_PLACEMENT_HOST)
		return -EINVAL;
	off = va->gem.offset + (addr - va->va.addr);
	if (bo->user_pages)
		page = bo->user_pages[off >> PAGE_SHIFT];
	else if (bo->shmem.pages)
		page = bo->shmem.pages[off >> PAGE_SHIFT];
	else
		return -EINVAL;	/* an import: no pages of ours to read */
	drm_gem_object_get(va->gem.obj);
	uq->wb_obj = va->gem.obj;
	uq->wb_page = page;
	uq->wb_off = offset_in_page(off);
	return 0;
}

static int spyre_uq_check_create(const struct drm_spyre_uq_create *args)
{
	u64 ring_bytes;

	if (args->flags || args->pad || args->ring_log2 < SPYRE_RING_MIN_LOG2 ||
	    args->ring_log2 > SPYRE_RING_MAX_LOG2)
		return -EINVAL;
	ring_bytes = (u64)SPYRE_DESC_SIZE << args->ring_log2;
	if (!IS_ALIGNED(args->ring_addr, SZ_4K) || !IS_ALIGNED(args->wb_addr, 64) ||
	    args->ring_addr < DRM_SPYRE_VA_START || args->ring_addr >= DRM_SPYRE_VA_END ||
	    ring_bytes > DRM_SPYRE_VA_END - args->ring_addr ||
	    args->wb_addr < DRM_SPYRE_VA_START || args->wb_addr > DRM_SPYRE_VA_END - 64)
		return -EINVAL;
	return 0;
}

/* A free ring for @uq, or NULL. */
static struct spyre_uq_slot *spyre_uq_slot_get(struct spyre_device *sdev, struct spyre_uq *uq)
{
	struct spyre_uq_slot *slot = NULL;
	u32 i;

	mutex_lock(&sdev->uq_mutex);
	for (i = 0; i < sdev->num_uq_slots; i++) {
		if (!sdev->uq_slots[i].uq && sdev->uq_slots[i].irq_ok) {
			slot = &sdev->uq_slots[i];
			slot->uq = uq;
			break;
		}
	}
	mutex_unlock(&sdev->uq_mutex);
	return slot;
}

static void spyre_uq_slot_put(struct spyre_device *sdev, struct spyre_uq_slot *slot)
{
	mutex_lock(&sdev->uq_mutex);
	slot->uq = NULL;
	mutex_unlock(&sdev->uq_mutex);
}

int spyre_uq_create_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct spyre_device *sdev = to_spyre_device(drm);
	struct spyre_file *sfile = file->driver_priv;
	struct drm_spyre_uq_create *args = data;
	struct spyre_uq *uq;
	u32 ctx = 0;
	int ret, idx;

	ret = spyre_uq_check_create(args);
	if (ret)
		return ret;
	if (!sdev->num_uq_slots)
		return -EOPNOTSUPP;
	uq = kzalloc(sizeof(*uq), GFP_KERNEL);
	if (!uq)
		return -ENOMEM;
	kref_init(&uq->ref);
	uq->sdev = sdev;
	kref_get(&sfile->ref);
	uq->sfile = sfile;
	uq->sink = alloc_page(GFP_KERNEL | __GFP_ZERO);
	uq->moved = jiffies;
	drm_dev_get(drm);

	mutex_lock(&sfile->vm_lock);
	ret = sfile->vm ? spyre_uq_find_wb(sfile->vm, args->wb_addr, uq) : -EINVAL;
	if (!ret)
		ctx = sfile->vm->ctx;
	uq->ctx = ctx;
	mutex_unlock(&sfile->vm_lock);
	if (ret)
		goto err_put;
	ret = -ENOSPC;
	uq->slot = spyre_uq_slot_get(sdev, uq);
	if (!uq->slot)
		goto err_put;
	ret = -ENODEV;
	if (drm_dev_enter(drm, &idx)) {
		ret = spyre_uq_hw_start(sdev, uq->slot->hw, ctx, args);
		drm_dev_exit(idx);
	}
	if (ret)
		goto err_slot;
	mutex_lock(&sdev->uq_mutex);
	uq->hw_live = true;	/* the ring reset zeroed its counters */
	mutex_unlock(&sdev->uq_mutex);
	ret = xa_alloc(&sfile->uqs, &uq->id, uq, XA_LIMIT(1, U32_MAX), GFP_KERNEL);
	if (ret)
		goto err_stop;
	args->queue_id = uq->id;
	args->doorbell_offset = spyre_uq_doorbell_pgoff(uq->slot) << PAGE_SHIFT;
	mod_delayed_work(system_wq, &sdev->uq_watchdog, spyre_uq_watch_period());
	return 0;

err_stop:
	if (drm_dev_enter(drm, &idx)) {
		mutex_lock(&sdev->uq_mutex);
		spyre_uq_stop_locked(uq);
		mutex_unlock(&sdev->uq_mutex);
		drm_dev_exit(idx);
	}
err_slot:
	spyre_uq_slot_put(sdev, uq->slot);
err_put:
	spyre_uq_put(uq);
	return ret;
}

/* Stops the ring, revokes the doorbell, frees the ring for others. */
static void spyre_uq_destroy(struct spyre_uq *uq)
{
	struct spyre_device *sdev = uq->sdev;
	int idx;

	spyre_uq_kill(uq, -ECANCELED);
	if (drm_dev_enter(&sdev->drm, &idx)) {
		mutex_lock(&sdev->uq_mutex);
		spyre_uq_stop_locked(uq);
		mutex_unlock(&sdev->uq_mutex);
		drm_dev_exit(idx);
	}
	spyre_uq_slot_put(sdev, uq->slot);
	spyre_uq_put(uq);
}

int spyre_uq_destroy_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct spyre_file *sfile = file->driver_priv;
	struct drm_spyre_uq_destroy *args = data;
	struct spyre_uq *uq;

	if (args->pad)
		return -EINVAL;
	uq = xa_erase(&sfile->uqs, args->queue_id);
	if (!uq)
		return -ENOENT;
	spyre_uq_destroy(uq);
	return 0;
}

/* At close, before the file's address space goes. */
void spyre_uq_destroy_all(struct spyre_file *sfile)
{
	struct spyre_uq *uq;
	unsigned long id;

	xa_for_each(&sfile->uqs, id, uq) {
		xa_erase(&sfile->uqs, id);
		spyre_uq_destroy(uq);
	}
}

/* --- waiting ------------------------------------------------------------ */

/* 0 when reached, -EAGAIN to sleep on, else why it never will be. */
static int spyre_uq_poll(struct spyre_uq *uq, u64 value, u64 *seen)
{
	struct spyre_device *sdev = uq->sdev;
	int err = READ_ONCE(uq->error), idx;
	u32 status;

	if (err)
		return err;
	*seen = spyre_uq_completed(uq);
	if (*seen >= value)
		return 0;
	if (!drm_dev_enter(&sdev->drm, &idx))
		return -ENODEV;
	status = spyre_read(sdev, SPYRE_RING_REG(uq->slot->hw, SPYRE_RING_STATUS));
	drm_dev_exit(idx);
	if (status & SPYRE_RING_STATUS_ERROR)
		return -EIO;
	if (status & SPYRE_RING_STATUS_CTX_FAULT)
		return -EFAULT;
	return -EAGAIN;
}

/*
 * Card interface 1.15: the ring's own fault record, written by the card in
 * the step that stopped the context (so before the ring showed CTX_FAULT),
 * whatever other contexts faulted meanwhile. 0 when it names no fault of
 * @uq's context: the context was resumed since (a VM_BIND of another
 * thread), or the ring was reset.
 */
static u64 spyre_uq_ring_fault_addr(struct spyre_uq *uq)
{
	struct spyre_device *sdev = uq->sdev;
	u32 hw = uq->slot->hw, info, again;
	u64 addr;
	int idx;

	if (!drm_dev_enter(&sdev->drm, &idx))
		return 0;
	info = spyre_read(sdev, SPYRE_RING_REG(hw, SPYRE_RING_FAULT_INFO));
	addr = (u64)spyre_read(sdev, SPYRE_RING_REG(hw, SPYRE_RING_FAULT_ADDR_HI)) << 32 |
	       spyre_read(sdev, SPYRE_RING_REG(hw, SPYRE_RING_FAULT_ADDR_LO));
	/* a RESUME between the reads would clear it: then it is over */
	again = spyre_read(sdev, SPYRE_RING_REG(hw, SPYRE_RING_FAULT_INFO));
	drm_dev_exit(idx);
	if (!(info & SPYRE_MMU_FAULT_VALID) || info != again ||
	    SPYRE_MMU_FAULT_CTX(info) != uq->ctx)
		return 0;
	return addr;
}

/*
 * The VA of the fault that stopped @uq's context. From card interface
 * 1.15 the ring's own record has it. Before, a waiter can see the ring's
 * CTX_FAULT before the error interrupt recorded the address (under load
 * the interrupt comes later): the card's latch holds it until that
 * handler, which records the address before it clears the latch. 0 when
 * the latch held another context's fault (the job's record has it); two
 * processes faulting at once can still see each other's address there.
 */
static u64 spyre_uq_fault_addr(struct spyre_uq *uq)
{
	struct spyre_device *sdev = uq->sdev;
	u32 info = 0, again = 0;
	u64 addr = 0;
	int idx;

	if (sdev->hw_version >= SPYRE_HW_VERSION(1, SPYRE_HW_RING_FAULT_MINOR))
		return spyre_uq_ring_fault_addr(uq);
	if (!test_bit(uq->ctx, sdev->ctx_fault_known) && drm_dev_enter(&sdev->drm, &idx)) {
		info = spyre_read(sdev, SPYRE_REG_MMU_FAULT_INFO);
		addr = (u64)spyre_read(sdev, SPYRE_REG_MMU_FAULT_ADDR_HI) << 32 |
		       spyre_read(sdev, SPYRE_REG_MMU_FAULT_ADDR_LO);
		again = spyre_read(sdev, SPYRE_REG_MMU_FAULT_INFO);
		drm_dev_exit(idx);
		if ((info & SPYRE_MMU_FAULT_VALID) && info == again &&
		    SPYRE_MMU_FAULT_CTX(info) == uq->ctx)
			return addr;
	}
	if (!test_bit(uq->ctx, sdev->ctx_fault_known))
		return 0;
	smp_mb__after_atomic();		/* the flag, then the address */
	return READ_ONCE(sdev->ctx_fault_addr[uq->ctx]);
}

static bool spyre_uq_done(struct spyre_uq *uq, u64 value)
{
	u64 seen;

	return spyre_uq_poll(uq, value, &seen) != -EAGAIN;
}

int spyre_uq_wait_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct spyre_file *sfile = file->driver_priv;
	struct drm_spyre_uq_wait *args = data;
	struct spyre_uq *uq;
	long timeout, left;
	u64 seen = 0;
	int ret;

	if (args->flags)
		return -EINVAL;
	xa_lock(&sfile->uqs);
	uq = xa_load(&sfile->uqs, args->queue_id);
	if (uq)
		kref_get(&uq->ref);
	xa_unlock(&sfile->uqs);
	if (!uq)
		return -ENOENT;

	timeout = drm_timeout_abs_to_jiffies(args->timeout_ns);
	ret = spyre_uq_poll(uq, args->value, &seen);
	if (ret == -EAGAIN && timeout) {
		wait_queue_head_t *wq = &uq->slot->wq;

		left = wait_event_interruptible_timeout(*wq, spyre_uq_done(uq, args->value),
							timeout);
		/* The condition held: take its verdict once more (it only moves on). */
		ret = left < 0 ? left : spyre_uq_poll(uq, args->value, &seen);
	}
	if (ret == -EAGAIN)
		ret = -ETIME;
	args->completed = seen;
	args->fault_addr = ret == -EFAULT ? spyre_uq_fault_addr(uq) : 0;
	spyre_uq_put(uq);
	return ret;
}

/* --- debugfs ------------------------------------------------------------ */

/*
 * One line per user queue of @sfile under its client line of debugfs
 * "queues": ring, context, the write-back's completed seqno, and how it
 * ended (BANNED after a hang, as for kernel queues).
 */
void spyre_uq_debugfs_show(struct seq_file *m, struct spyre_file *sfile)
{
	struct spyre_device *sdev = sfile->sdev;
	struct spyre_uq *uq;
	unsigned long id;

	mutex_lock(&sdev->uq_mutex);
	xa_for_each(&sfile->uqs, id, uq) {
		seq_printf(m, "  user queue %u: ring %u ctx %u completed %llu", uq->id,
			   uq->slot->hw, uq->ctx, spyre_uq_completed(uq));
		if (uq->error == -ETIMEDOUT)
			seq_puts(m, " BANNED\n");
		else if (uq->error)
			seq_printf(m, " ENDED %d\n", uq->error);
		else
			seq_puts(m, "\n");
	}
	mutex_unlock(&sdev->uq_mutex);
}

/* --- the doorbell mapping ----------------------------------------------- */

static void spyre_uq_vm_open(struct vm_area_struct *vma)
{
	struct spyre_uq *uq = vma->vm_private_data;

	kref_get(&uq->ref);
}

static void spyre_uq_vm_close(struct vm_area_struct *vma)
{
	spyre_uq_put(vma->vm_private_data);
}

/*
 * The page is inserted at the first access, under the lock that
 * spyre_uq_kill() takes, so a destroyed queue's page is never mapped again:
 * an ended queue shows its sink page instead. A process may be ringing the
 * doorbell just when the watchdog ends its queue; it hears of the end from
 * its next wait, not from a signal.
 */
static vm_fault_t spyre_uq_vm_fault(struct vm_fault *vmf)
{
	struct spyre_uq *uq = vmf->vma->vm_private_data;
	struct spyre_device *sdev = uq->sdev;
	vm_fault_t ret = VM_FAULT_SIGBUS;
	unsigned long pfn;
	int idx;

	mutex_lock(&sdev->uq_mutex);
	if (!uq->error && drm_dev_enter(&sdev->drm, &idx)) {
		pfn = (pci_resource_start(sdev->pdev, SPYRE_BAR_DOORBELL) >> PAGE_SHIFT) +
		      uq->slot->hw;
		ret = vmf_insert_pfn(vmf->vma, vmf->address, pfn);
		drm_dev_exit(idx);
	} else if (uq->error && uq->sink) {
		ret = vmf_insert_pfn_prot(vmf->vma, vmf->address, page_to_pfn(uq->sink),
					  vm_get_page_prot(vmf->vma->vm_flags));
	}
	mutex_unlock(&sdev->uq_mutex);
	return ret;
}

static const struct vm_operations_struct spyre_uq_vm_ops = {
	.open = spyre_uq_vm_open,
	.close = spyre_uq_vm_close,
	.fault = spyre_uq_vm_fault,
};

static int spyre_uq_mmap(struct spyre_file *sfile, struct vm_area_struct *vma)
{
	struct spyre_uq *uq, *found = NULL;
	unsigned long id;

	if (vma->vm_end - vma->vm_start != PAGE_SIZE || !(vma->vm_flags & VM_SHARED) ||
	    (vma->vm_flags & VM_EXEC))
		return -EINVAL;
	xa_lock(&sfile->uqs);
	xa_for_each(&sfile->uqs, id, uq) {
		if (spyre_uq_doorbell_pgoff(uq->slot) == vma->vm_pgoff) {
			found = uq;
			kref_get(&uq->ref);
			break;
		}
	}
	xa_unlock(&sfile->uqs);
	if (!found)
		return -EINVAL;
	vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP);
	vm_flags_clear(vma, VM_MAYEXEC);
	vma->vm_page_prot = pgprot_noncached(vm_get_page_prot(vma->vm_flags));
	vma->vm_private_data = found;
	vma->vm_ops = &spyre_uq_vm_ops;
	return 0;
}

/* BOs live above DRM_FILE_PAGE_OFFSET_START; doorbells below. */
int spyre_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct drm_file *file = filp->private_data;

	if (vma->vm_pgoff >= DRM_FILE_PAGE_OFFSET_START)
		return drm_gem_mmap(filp, vma);
	if (drm_dev_is_unplugged(file->minor->dev))
		return -ENODEV;
	return spyre_uq_mmap(file->driver_priv, vma);
}

/* --- the rings for user queues ------------------------------------------ */

/*
 * The rings past the kernel's (module parameter kernel_rings) serve user
 * queues, each with its interrupt. They need the MMU (1.10), the card's
 * own scratchpad scrub between a queue and other owners (1.11) and a doorbell
 * page that is a whole CPU page, so mapping one exposes no other.
 */
int spyre_uq_init(struct spyre_device *sdev)
{
	struct pci_dev *pdev = sdev->pdev;
	u32 i, n = sdev->hw_rings - sdev->num_rings, vec;
	int ret;

	sdev->num_uq_slots = 0;
	INIT_DELAYED_WORK(&sdev->uq_watchdog, spyre_uq_watchdog);
	if (!n || sdev->hw_version < SPYRE_HW_VERSION(1, 11) ||
	    !SPYRE_UQ_PAGE_IS_DOORBELL ||
	    pci_resource_len(pdev, SPYRE_BAR_DOORBELL) < (u64)sdev->hw_rings * PAGE_SIZE)
		return 0;
	sdev->uq_slots = drmm_kcalloc(&sdev->drm, n, sizeof(*sdev->uq_slots), GFP_KERNEL);
	if (!sdev->uq_slots)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct spyre_uq_slot *slot = &sdev->uq_slots[i];

		init_waitqueue_head(&slot->wq);
		slot->hw = sdev->num_rings + i;
		spyre_uq_hw_stop(sdev, slot->hw);
		vec = spyre_read(sdev, SPYRE_RING_REG(slot->hw, SPYRE_RING_IRQ_VECTOR));
		slot->irq = pci_irq_vector(pdev, vec);
		if (slot->irq < 0)
			continue;
		ret = request_irq(slot->irq, spyre_uq_irq, 0, "spyre-uq", slot);
		slot->irq_ok = !ret;
	}
	sdev->num_uq_slots = n;
	return 0;
}

/* The card goes away: every queue ends with -ENODEV. */
void spyre_uq_fini(struct spyre_device *sdev)
{
	struct spyre_uq *uq;
	u32 i;

	cancel_delayed_work_sync(&sdev->uq_watchdog);
	for (i = 0; i < sdev->num_uq_slots; i++) {
		struct spyre_uq_slot *slot = &sdev->uq_slots[i];

		mutex_lock(&sdev->uq_mutex);
		uq = slot->uq;
		if (uq)
			kref_get(&uq->ref);
		mutex_unlock(&sdev->uq_mutex);
		if (uq) {
			spyre_uq_kill(uq, -ENODEV);
			spyre_uq_put(uq);
		}
		spyre_uq_hw_stop(sdev, slot->hw);
		if (slot->irq_ok)
			free_irq(slot->irq, slot);
		slot->irq_ok = false;
	}
}
