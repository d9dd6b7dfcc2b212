// SPDX-License-Identifier: GPL-2.0-only
/*
 * Spyre user-pointer BOs: a host BO over memory the process already has
 * (like cudaHostRegister), so a framework can copy from its own buffers
 * without staging them through a driver-allocated host BO.
 *
 * The pages are pinned long-term (FOLL_LONGTERM: they are never migrated
 * while the card may reach them) and charged to the caller's locked memory
 * like every host BO. They are mapped for the card once and described by
 * the same scatter list as a shmem host BO, so DMA commands cannot tell
 * the two apart. The driver offers no CPU mapping of its own: the caller
 * already has one. Pages stay pinned until the BO is freed, even if the
 * process unmaps the range first, so the card never writes freed memory.
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <uapi/drm/spyre_accel.h>

#include "spyre_drv.h"
#include "spyre_gem.h"

static void spyre_userptr_bo_free(struct drm_gem_object *obj)
{
	struct spyre_bo *bo = to_spyre_bo(obj);
	struct sg_table *sgt = bo->shmem.sgt;

	spyre_host_bo_forget(bo);
	/* Gone already if the card was removed (spyre_gem_release_dma()). */
	if (sgt) {
		dma_unmap_sgtable(obj->dev->dev, sgt, DMA_BIDIRECTIONAL, 0);
		sg_free_table(sgt);
		kfree(sgt);
	}
	if (bo->user_npages)
		unpin_user_pages_dirty_lock(bo->user_pages, bo->user_npages, true);
	kvfree(bo->user_pages);
	drm_gem_object_release(obj);
	kfree(bo);
}

/* Sharing someone else's pages onwards through a dma-buf is not offered. */
static struct dma_buf *spyre_userptr_bo_export(struct drm_gem_object *obj, int flags)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static enum drm_gem_object_status spyre_userptr_bo_status(struct drm_gem_object *obj)
{
	return DRM_GEM_OBJECT_RESIDENT;
}

static const struct drm_gem_object_funcs spyre_userptr_bo_funcs = {
	.free = spyre_userptr_bo_free,
	.export = spyre_userptr_bo_export,
	.status = spyre_userptr_bo_status,
};

/* Pins @bo's pages and maps them for the card; undone by the free. */
static int spyre_userptr_bo_pin_map(struct spyre_device *sdev, struct spyre_bo *bo, u64 uaddr)
{
	unsigned long npages = bo->shmem.base.size >> PAGE_SHIFT;
	struct sg_table *sgt;
	long pinned;
	int ret;

	bo->user_pages = kvmalloc_array(npages, sizeof(*bo->user_pages), GFP_KERNEL);
	if (!bo->user_pages)
		return -ENOMEM;
	pinned = pin_user_pages_fast(uaddr, npages, FOLL_WRITE | FOLL_LONGTERM, bo->user_pages);
	if (pinned < 0)
		return pinned;
	bo->user_npages = pinned;
	/* A hole, a read-only mapping or memory that cannot be pinned long-term. */
	if (pinned != npages)
		return -EFAULT;

	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	if (!sgt)
		return -ENOMEM;
	ret = sg_alloc_table_from_pages(sgt, bo->user_pages, npages, 0, bo->shmem.base.size,
					GFP_KERNEL);
	if (ret)
		goto err_free;
	ret = dma_map_sgtable(sdev->drm.dev, sgt, DMA_BIDIRECTIONAL, 0);
	if (ret)
		goto err_table;
	bo->shmem.sgt = sgt;
	return spyre_host_bo_build_sg(sdev, bo, sgt);

err_table:
	sg_free_table(sgt);
err_free:
	kfree(sgt);
	return ret;
}

int spyre_bo_userptr_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct spyre_device *sdev = to_spyre_device(drm);
	struct drm_spyre_bo_userptr *args = data;
	struct spyre_bo *bo;
	u64 end;
	int ret;

	if (args->flags || args->pad || args->pad2)
		return -EINVAL;
	if (!args->size || !PAGE_ALIGNED(args->user_ptr) || !PAGE_ALIGNED(args->size) ||
	    check_add_overflow(args->user_ptr, args->size, &end))
		return -EINVAL;
	if (args->size > spyre_max_host_bo_size())
		return -E2BIG;

	bo = kzalloc(sizeof(*bo), GFP_KERNEL);
	if (!bo)
		return -ENOMEM;
	bo->placement = DRM_SPYRE_PLACEMENT_HOST;
	INIT_LIST_HEAD(&bo->blocks);
	INIT_LIST_HEAD(&bo->link);
	bo->shmem.base.funcs = &spyre_userptr_bo_funcs;
	drm_gem_private_object_init(drm, &bo->shmem.base, args->size);

	ret = spyre_pin_charge(bo, args->size);
	if (!ret)
		ret = spyre_userptr_bo_pin_map(sdev, bo, args->user_ptr);
	if (!ret) {
		spyre_host_bo_publish(sdev, bo);
		ret = drm_gem_handle_create(file, &bo->shmem.base, &args->handle);
	}
	/* The handle holds the reference now (or nothing does: freed). */
	drm_gem_object_put(&bo->shmem.base);
	return ret;
}
