// SPDX-License-Identifier: GPL-2.0-only
/*
 * Spyre card address spaces and DRM_IOCTL_SPYRE_VM_BIND (card interface
 * 1.10). Design: Documentation/accel/spyre/vm.rst.
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#include <linux/dma-resv.h>
#include <linux/idr.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sizes.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <uapi/drm/spyre_accel.h>

#include "spyre_drv.h"
#include "spyre_gem.h"
#include "spyre_pt.h"
#include "spyre_vm.h"

#define SPYRE_VM_PAGE	SZ_4K

static inline struct spyre_vm *to_spyre_vm(struct drm_gpuvm *gpuvm)
{
	return container_of(gpuvm, struct spyre_vm, gpuvm);
}

/* --- context registers (serialised: MMU_CTX_SELECT is card-wide) --------- */

/*
 * Points @ctx at the table @root, or at none (@root NULL; device address 0
 * is a valid table). A context number may have been
 * stopped by a fault of its previous owner; setting a root does not clear
 * that, so a new root is followed by RESUME (the context has no rings of
 * its own to reset: shared rings are never stopped by a context fault).
 */
static void spyre_ctx_set_root_locked(struct spyre_device *sdev, u32 ctx,
				      const struct spyre_pt *root)
{
	u64 addr = root ? root->addr : 0;
	u32 lo = root ? lower_32_bits(addr) | SPYRE_MMU_ROOT_VALID : 0;

	lockdep_assert_held(&sdev->mmu_lock);
	spyre_write(sdev, SPYRE_REG_MMU_CTX_SELECT, ctx);
	spyre_write(sdev, SPYRE_REG_MMU_CTX_ROOT_LO, lo);
	/* The high word commits the root and drops the context's TLB entries. */
	spyre_write(sdev, SPYRE_REG_MMU_CTX_ROOT_HI, upper_32_bits(addr));
	if (root && (spyre_read(sdev, SPYRE_REG_MMU_CTX_STATUS) & SPYRE_MMU_CTX_FAULTED)) {
		clear_bit(ctx, sdev->ctx_fault_known);
		spyre_write(sdev, SPYRE_REG_MMU_CTX_CTRL, SPYRE_MMU_CTRL_RESUME);
	}
}

/*
 * A card reset clears every root (the tables in device memory survive):
 * the recovery code calls this once the card is back, so the files'
 * address spaces work again.
 */
void spyre_vm_restore_roots(struct spyre_device *sdev)
{
	struct spyre_vm *vm;

	mutex_lock(&sdev->mmu_lock);
	bitmap_zero(sdev->ctx_fault_known, SPYRE_MMU_NUM_CTX);	/* no context is stopped */
	list_for_each_entry(vm, &sdev->vms, link)
		spyre_ctx_set_root_locked(sdev, vm->ctx, vm->root);
	mutex_unlock(&sdev->mmu_lock);
}

/* After entries were cleared: no translation that starts later sees them. */
static void spyre_ctx_invalidate(struct spyre_device *sdev, u32 ctx)
{
	mutex_lock(&sdev->mmu_lock);
	spyre_write(sdev, SPYRE_REG_MMU_CTX_SELECT, ctx);
	spyre_write(sdev, SPYRE_REG_MMU_CTX_CTRL, SPYRE_MMU_CTRL_INVALIDATE);
	/* A read flushes the posted write before the BO's memory is reused. */
	spyre_read(sdev, SPYRE_REG_MMU_CTX_STATUS);
	mutex_unlock(&sdev->mmu_lock);
}

/*
 * After a translation fault stopped the context (its jobs fail at their
 * SET_CTX), a successful bind is the fix the card spec expects before
 * RESUME: the file's next jobs run again.
 */
static void spyre_ctx_resume(struct spyre_device *sdev, u32 ctx)
{
	mutex_lock(&sdev->mmu_lock);
	spyre_write(sdev, SPYRE_REG_MMU_CTX_SELECT, ctx);
	if (spyre_read(sdev, SPYRE_REG_MMU_CTX_STATUS) & SPYRE_MMU_CTX_FAULTED) {
		u32 info = spyre_read(sdev, SPYRE_REG_MMU_FAULT_INFO);

		/*
		 * The fault is over: an error interrupt that comes only now
		 * must not record it as the context's next one.
		 */
		if ((info & SPYRE_MMU_FAULT_VALID) && SPYRE_MMU_FAULT_CTX(info) == ctx)
			spyre_write(sdev, SPYRE_REG_MMU_FAULT_INFO, SPYRE_MMU_FAULT_VALID);
		clear_bit(ctx, sdev->ctx_fault_known);
		spyre_write(sdev, SPYRE_REG_MMU_CTX_CTRL, SPYRE_MMU_CTRL_RESUME);
	}
	mutex_unlock(&sdev->mmu_lock);
}

/* --- the address space ---------------------------------------------------- */

static void spyre_vm_free(struct drm_gpuvm *gpuvm)
{
	kfree(to_spyre_vm(gpuvm));
}

static const struct drm_gpuvm_ops spyre_gpuvm_ops = {
	.vm_free = spyre_vm_free,
};

/* The caller holds sfile->vm_lock and drm_dev_enter(). */
static struct spyre_vm *spyre_vm_get(struct spyre_file *sfile)
{
	struct spyre_device *sdev = sfile->sdev;
	struct drm_gem_object *r_obj;
	struct spyre_vm *vm;
	int ctx;

	if (sfile->vm)
		return sfile->vm;
	if (sdev->hw_version < SPYRE_HW_VERSION(1, 10))
		return ERR_PTR(-EOPNOTSUPP);

	ctx = ida_alloc_range(&sdev->ctx_ida, 1, SPYRE_MMU_NUM_CTX - 1, GFP_KERNEL);
	if (ctx < 0)
		return ERR_PTR(ctx);
	vm = kzalloc(sizeof(*vm), GFP_KERNEL);
	if (!vm)
		goto err_ctx;
	vm->root = spyre_pt_create(sdev);
	if (!vm->root)
		goto err_vm;
	r_obj = drm_gpuvm_resv_object_alloc(&sdev->drm);
	if (!r_obj)
		goto err_pt;

	vm->sdev = sdev;
	vm->ctx = ctx;
	drm_gpuvm_init(&vm->gpuvm, "spyre", 0, &sdev->drm, r_obj, DRM_SPYRE_VA_START,
		       DRM_SPYRE_VA_END - DRM_SPYRE_VA_START, 0, 0, &spyre_gpuvm_ops);
	drm_gem_object_put(r_obj);
	mutex_lock(&sdev->mmu_lock);
	spyre_ctx_set_root_locked(sdev, ctx, vm->root);
	list_add_tail(&vm->link, &sdev->vms);
	mutex_unlock(&sdev->mmu_lock);
	sfile->vm = vm;
	return vm;

err_pt:
	spyre_pt_destroy(sdev, vm->root);
err_vm:
	kfree(vm);
err_ctx:
	ida_free(&sdev->ctx_ida, ctx);
	return ERR_PTR(-ENOMEM);
}

/*
 * Every job submitted in the context so far (DRM_SPYRE_SUBMIT_VA) added its
 * fence to the VM's reservation object: wait until none can still use a
 * translation it made before the tables changed.
 */
static long spyre_vm_wait_jobs(struct spyre_vm *vm, bool intr)
{
	/* Outside drm_dev_enter(): an unplug must not wait for our wait. */
	return dma_resv_wait_timeout(vm->gpuvm.r_obj->resv, DMA_RESV_USAGE_BOOKKEEP, intr,
				     MAX_SCHEDULE_TIMEOUT);
}

static void spyre_vma_free(struct drm_gpuva *va)
{
	drm_gpuva_remove(va);
	drm_gem_object_put(va->gem.obj);
	kfree(va);
}

/*
 * At close, after the file's queues are gone: once its jobs finished (a
 * hung one is ended by recovery) nothing names the context any more, and
 * the number can go to another file.
 */
void spyre_vm_destroy(struct spyre_file *sfile)
{
	struct spyre_vm *vm = sfile->vm;
	struct spyre_device *sdev;
	struct drm_gpuva *va, *next;
	int idx;

	if (!vm)
		return;
	sdev = vm->sdev;
	spyre_vm_wait_jobs(vm, false);
	mutex_lock(&sdev->mmu_lock);
	list_del(&vm->link);
	if (drm_dev_enter(&sdev->drm, &idx)) {
		/* Clearing the root also drops the context's TLB entries. */
		spyre_ctx_set_root_locked(sdev, vm->ctx, NULL);
		drm_dev_exit(idx);
	}
	mutex_unlock(&sdev->mmu_lock);
	drm_gpuvm_for_each_va_safe(va, next, &vm->gpuvm)
		spyre_vma_free(va);
	spyre_pt_destroy(sdev, vm->root);
	ida_free(&sdev->ctx_ida, vm->ctx);
	sfile->vm = NULL;
	drm_gpuvm_put(&vm->gpuvm);
}

/* --- binding -------------------------------------------------------------- */

/*
 * Walks a BO page by page: device BOs are one contiguous range, host BOs
 * a scatter list of DMA-mapped segments (SYS pages).
 */
struct spyre_bo_cursor {
	struct spyre_bo *bo;
	u32 seg;
	u64 seg_start;
};

static int spyre_bo_page_pte(struct spyre_bo_cursor *c, u64 off, u64 *pte)
{
	struct spyre_bo *bo = c->bo;
	u64 addr, len;

	if (bo->placement == DRM_SPYRE_PLACEMENT_DEVICE) {
		*pte = (bo->dev_addr + off) | SPYRE_PTE_VALID;
		return 0;
	}
	for (; c->seg < bo->sg_count; c->seg++) {
		addr = le64_to_cpu(bo->sg[c->seg].addr);
		len = le64_to_cpu(bo->sg[c->seg].len);
		/* A host page must be a whole page of one segment. */
		if (!IS_ALIGNED(addr | len, SPYRE_VM_PAGE))
			return -EINVAL;
		if (off < c->seg_start + len) {
			*pte = (addr + off - c->seg_start) | SPYRE_PTE_SYS | SPYRE_PTE_VALID;
			return 0;
		}
		c->seg_start += len;
	}
	return -EINVAL;
}

static int spyre_vm_map(struct spyre_vm *vm, struct drm_file *file,
			const struct drm_spyre_vm_bind *args)
{
	struct spyre_device *sdev = vm->sdev;
	struct spyre_bo_cursor cur = {};
	struct drm_gem_object *obj;
	struct drm_gpuva *va;
	u64 off, pte, bits = 0;
	LIST_HEAD(dead);
	int ret;

	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	cur.bo = to_spyre_bo(obj);
	ret = -EINVAL;
	if (args->bo_offset > obj->size || args->range > obj->size - args->bo_offset)
		goto err_put;
	if (cur.bo->placement != DRM_SPYRE_PLACEMENT_DEVICE) {
		/* Programs run from device memory only: EXEC on host pages would fault. */
		if ((args->flags & DRM_SPYRE_VM_BIND_EXEC) || !cur.bo->sg)
			goto err_put;
	}
	ret = -EEXIST;
	if (drm_gpuva_find_first(&vm->gpuvm, args->addr, args->range))
		goto err_put;
	ret = -ENOMEM;
	va = kzalloc(sizeof(*va), GFP_KERNEL);
	if (!va)
		goto err_put;

	if (!(args->flags & DRM_SPYRE_VM_BIND_READ_ONLY))
		bits |= SPYRE_PTE_WRITE;
	if (args->flags & DRM_SPYRE_VM_BIND_EXEC)
		bits |= SPYRE_PTE_EXEC;
	for (off = 0; off < args->range; off += SPYRE_VM_PAGE) {
		ret = spyre_bo_page_pte(&cur, args->bo_offset + off, &pte);
		if (!ret)
			ret = spyre_pt_map_page(sdev, vm->root, args->addr + off, pte | bits);
		if (ret)
			goto err_unmap;
		/* A large BO is many entries: let others run between tables. */
		if (!((args->addr + off) & (SZ_2M - SPYRE_VM_PAGE)))
			cond_resched();
	}
	/* Drain write-combining: the card may walk the new entries at once. */
	wmb();

	drm_gpuva_init(va, args->addr, args->range, obj, args->bo_offset);
	ret = drm_gpuva_insert(&vm->gpuvm, va);
	if (ret)
		goto err_unmap;
	/* The mapping keeps the BO reference taken by the lookup. */
	return 0;

err_unmap:
	if (off) {
		spyre_pt_unmap(sdev, vm->root, args->addr, off, &dead);
		spyre_ctx_invalidate(sdev, vm->ctx);
		spyre_pt_free_dead(sdev, &dead);
	}
	kfree(va);
err_put:
	drm_gem_object_put(obj);
	return ret;
}

static int spyre_vm_unmap(struct spyre_vm *vm, const struct drm_spyre_vm_bind *args)
{
	u64 end = args->addr + args->range;
	struct drm_gpuva *va, *next;
	bool found = false;
	LIST_HEAD(dead);
	long ret;
	int idx;

	/* Check everything first: a failed unmap changes nothing. */
	drm_gpuvm_for_each_va_range(va, &vm->gpuvm, args->addr, end) {
		if (va->va.addr < args->addr || va->va.addr + va->va.range > end)
			return -EINVAL;
		found = true;
	}
	if (!found)
		return -ENOENT;

	/* Jobs submitted before the unmap still see the mapping. */
	ret = spyre_vm_wait_jobs(vm, true);
	if (ret < 0)
		return ret;
	/* An unplugged card translates nothing any more: only forget. */
	if (drm_dev_enter(&vm->sdev->drm, &idx)) {
		drm_gpuvm_for_each_va_range(va, &vm->gpuvm, args->addr, end)
			spyre_pt_unmap(vm->sdev, vm->root, va->va.addr, va->va.range, &dead);
		/* Before the BOs' (and tables') memory can be handed to someone else. */
		spyre_ctx_invalidate(vm->sdev, vm->ctx);
		spyre_pt_free_dead(vm->sdev, &dead);
		drm_dev_exit(idx);
	}
	/* A job submitted meanwhile may have translated before the invalidation. */
	spyre_vm_wait_jobs(vm, false);
	drm_gpuvm_for_each_va_range_safe(va, next, &vm->gpuvm, args->addr, end)
		spyre_vma_free(va);
	return 0;
}

static int spyre_vm_bind_check(const struct drm_spyre_vm_bind *args)
{
	if (args->pad || args->in_syncobj || args->out_syncobj || args->in_point ||
	    args->out_point)
		return -EINVAL;
	switch (args->op) {
	case DRM_SPYRE_VM_BIND_OP_MAP:
		if (args->flags & ~(DRM_SPYRE_VM_BIND_READ_ONLY | DRM_SPYRE_VM_BIND_EXEC))
			return -EINVAL;
		break;
	case DRM_SPYRE_VM_BIND_OP_UNMAP:
		if (args->flags || args->handle || args->bo_offset)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (!args->range || !IS_ALIGNED(args->addr | args->range | args->bo_offset, SPYRE_VM_PAGE))
		return -EINVAL;
	if (args->addr < DRM_SPYRE_VA_START || args->addr >= DRM_SPYRE_VA_END ||
	    args->range > DRM_SPYRE_VA_END - args->addr)
		return -ERANGE;
	return 0;
}

int spyre_vm_bind_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct spyre_file *sfile = file->driver_priv;
	struct drm_spyre_vm_bind *args = data;
	struct spyre_vm *vm;
	int ret, idx;

	ret = spyre_vm_bind_check(args);
	if (ret)
		return ret;
	mutex_lock(&sfile->vm_lock);
	if (args->op == DRM_SPYRE_VM_BIND_OP_UNMAP) {
		/* Nothing to unmap creates no address space. */
		ret = sfile->vm ? spyre_vm_unmap(sfile->vm, args) : -ENOENT;
	} else if (drm_dev_enter(drm, &idx)) {
		/* Creating the space and mapping write tables and registers. */
		vm = spyre_vm_get(sfile);
		ret = IS_ERR(vm) ? PTR_ERR(vm) : spyre_vm_map(vm, file, args);
		drm_dev_exit(idx);
	} else {
		ret = -ENODEV;
	}
	if (!ret && drm_dev_enter(drm, &idx)) {
		spyre_ctx_resume(sfile->vm->sdev, sfile->vm->ctx);
		drm_dev_exit(idx);
	}
	mutex_unlock(&sfile->vm_lock);
	return ret;
}
