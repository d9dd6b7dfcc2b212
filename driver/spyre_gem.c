// SPDX-License-Identifier: GPL-2.0-only
/*
 * Spyre buffer objects.
 *
 * Device BOs are contiguous ranges of card memory from a buddy allocator:
 * the card's DMA and launch descriptors take one device address and a
 * length. Host BOs are shmem objects whose pages are pinned and mapped for
 * the card when created; the driver writes their DMA segments once into a
 * scatter list the card walks, so a copy of any size is one descriptor and
 * a host BO needs no physically contiguous memory.
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/mm.h>
#include <linux/capability.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_prime.h>
#include <drm/drm_print.h>
#include <drm/drm_utils.h>
#include <uapi/drm/spyre_accel.h>

#include "spyre_drv.h"
#include "spyre_gem.h"
#include "spyre_job.h"
#include "spyre_peer.h"

static void spyre_bo_track(struct spyre_device *sdev, struct spyre_bo *bo)
{
	bo->owner_pid = task_tgid_nr(current);
	mutex_lock(&sdev->bo_lock);
	list_add_tail(&bo->link, &sdev->bo_list);
	mutex_unlock(&sdev->bo_lock);
	atomic_inc(&sdev->bo_count);
}

static void spyre_bo_untrack(struct spyre_device *sdev, struct spyre_bo *bo)
{
	if (list_empty(&bo->link))
		return;
	mutex_lock(&sdev->bo_lock);
	list_del_init(&bo->link);
	mutex_unlock(&sdev->bo_lock);
	atomic_dec(&sdev->bo_count);
}

u64 spyre_mem_free(struct spyre_device *sdev)
{
	u64 used;

	mutex_lock(&sdev->mm_lock);
	used = sdev->mem_used;
	mutex_unlock(&sdev->mm_lock);
	return sdev->mem_size - used;
}

u64 spyre_max_host_bo_size(void)
{
	u64 limit = (u64)spyre_max_host_bo_mb << 20;
	u64 half_ram = (u64)totalram_pages() << (PAGE_SHIFT - 1);

	return round_down(min(limit, half_ram), PAGE_SIZE);
}

/* --- limits --------------------------------------------------------------- */

/*
 * Host BOs pin their pages for as long as they live, like mlock(): the
 * pages are charged to the creating user's locked memory and limited by
 * RLIMIT_MEMLOCK, shared with io_uring, RDMA and the rest. CAP_IPC_LOCK
 * lifts the limit (and the charge), as for mlock().
 */
int spyre_pin_charge(struct spyre_bo *bo, u64 size)
{
	unsigned long pages = size >> PAGE_SHIFT, limit, cur, new;
	struct user_struct *user = current_user();

	if (capable(CAP_IPC_LOCK))
		return 0;
	limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	cur = atomic_long_read(&user->locked_vm);
	do {
		new = cur + pages;
		if (new < cur || new > limit)
			return -ENOMEM;
	} while (!atomic_long_try_cmpxchg(&user->locked_vm, &cur, new));
	bo->pin_user = get_uid(user);
	bo->pinned_pages = pages;
	return 0;
}

static void spyre_pin_uncharge(struct spyre_bo *bo)
{
	if (!bo->pin_user)
		return;
	atomic_long_sub(bo->pinned_pages, &bo->pin_user->locked_vm);
	free_uid(bo->pin_user);
	bo->pin_user = NULL;
}

/*
 * Device memory one open file may hold (module parameter
 * file_mem_quota_mb, 0 for no quota): the quota in force when a BO is
 * created counts, BOs keep their charge until they are freed.
 */
static int spyre_quota_charge(struct spyre_file *sfile, struct spyre_bo *bo, u64 size)
{
	u64 quota = (u64)READ_ONCE(spyre_file_mem_quota_mb) << 20;
	u64 used = atomic64_add_return(size, &sfile->dev_mem_used);

	if (quota && used > quota) {
		atomic64_sub(size, &sfile->dev_mem_used);
		return -EDQUOT;
	}
	kref_get(&sfile->ref);
	bo->sfile = sfile;
	return 0;
}

static void spyre_quota_uncharge(struct spyre_bo *bo)
{
	if (!bo->sfile)
		return;
	atomic64_sub(bo->shmem.base.size, &bo->sfile->dev_mem_used);
	spyre_file_put(bo->sfile);
	bo->sfile = NULL;
}

/* --- device BOs ---------------------------------------------------------- */

static void spyre_dev_bo_free(struct drm_gem_object *obj)
{
	struct spyre_device *sdev = to_spyre_device(obj->dev);
	struct spyre_bo *bo = to_spyre_bo(obj);

	spyre_bo_untrack(sdev, bo);
	spyre_quota_uncharge(bo);
	if (!list_empty(&bo->blocks)) {
		mutex_lock(&sdev->mm_lock);
		gpu_buddy_free_list(&sdev->mm, &bo->blocks, 0);
		sdev->mem_used -= obj->size;
		mutex_unlock(&sdev->mm_lock);
	}
	drm_gem_object_release(obj);
	kfree(bo);
}

static enum drm_gem_object_status spyre_bo_status(struct drm_gem_object *obj)
{
	return DRM_GEM_OBJECT_RESIDENT;
}

/* Card memory has no CPU pages to share: only other cards may import it. */
static const struct drm_gem_object_funcs spyre_dev_bo_funcs = {
	.free = spyre_dev_bo_free,
	.status = spyre_bo_status,
	.export = spyre_peer_export,
};

/*
 * New device BOs start zeroed, so no process sees what an earlier owner of
 * the memory left there: the CPU clears what BAR2 reaches, the card fills
 * the rest (retried once, since an injected fault may hit the fill).
 */
static int spyre_dev_mem_clear(struct spyre_device *sdev, u64 addr, u64 size)
{
	u64 cpu = 0;
	int ret = 0, idx;

	if (!drm_dev_enter(&sdev->drm, &idx))
		return -ENODEV;
	if (addr < sdev->aperture) {
		cpu = min(size, sdev->aperture - addr);
		memset_io(sdev->mem_bar + addr, 0, cpu);
		/* Drain write-combining before the card may read the memory. */
		wmb();
	}
	if (cpu < size) {
		ret = spyre_kernel_fill(sdev, addr + cpu, size - cpu);
		if (ret && ret != -ENODEV)
			ret = spyre_kernel_fill(sdev, addr + cpu, size - cpu);
		if (ret && ret != -ENODEV)
			ret = -EIO;
	}
	drm_dev_exit(idx);
	return ret;
}

static struct spyre_bo *spyre_dev_bo_create(struct spyre_device *sdev, struct spyre_file *sfile,
					    u64 size)
{
	struct gpu_buddy_block *block;
	struct spyre_bo *bo;
	int ret;

	bo = kzalloc(sizeof(*bo), GFP_KERNEL);
	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->placement = DRM_SPYRE_PLACEMENT_DEVICE;
	INIT_LIST_HEAD(&bo->blocks);
	INIT_LIST_HEAD(&bo->link);
	bo->shmem.base.funcs = &spyre_dev_bo_funcs;
	drm_gem_private_object_init(&sdev->drm, &bo->shmem.base, size);
	ret = spyre_quota_charge(sfile, bo, size);
	if (ret) {
		drm_gem_object_put(&bo->shmem.base);
		return ERR_PTR(ret);
	}

	mutex_lock(&sdev->mm_lock);
	ret = gpu_buddy_alloc_blocks(&sdev->mm, 0, sdev->mem_size, size, PAGE_SIZE,
				     &bo->blocks, GPU_BUDDY_CONTIGUOUS_ALLOCATION);
	if (!ret)
		sdev->mem_used += size;
	mutex_unlock(&sdev->mm_lock);
	if (ret) {
		drm_gem_object_put(&bo->shmem.base);
		/* The buddy allocator says -ENOSPC when memory is short. */
		return ERR_PTR(ret == -ENOSPC ? -ENOMEM : ret);
	}
	block = list_first_entry(&bo->blocks, struct gpu_buddy_block, link);
	bo->dev_addr = gpu_buddy_block_offset(block);
	spyre_bo_track(sdev, bo);

	ret = spyre_dev_mem_clear(sdev, bo->dev_addr, size);
	if (ret) {
		drm_gem_object_put(&bo->shmem.base);
		return ERR_PTR(ret);
	}
	return bo;
}

/* --- host BOs ------------------------------------------------------------ */

/* A host BO of any kind (shmem, import, user pointer) is ready for the card. */
void spyre_host_bo_publish(struct spyre_device *sdev, struct spyre_bo *bo)
{
	atomic64_add(bo->shmem.base.size, &sdev->host_mem_used);
	spyre_bo_track(sdev, bo);
}

/*
 * Undoes what every kind of host BO has in common: its accounting, its
 * pinned-memory charge and the card's scatter list. The pages are the
 * caller's to release.
 */
void spyre_host_bo_forget(struct spyre_bo *bo)
{
	struct drm_gem_object *obj = &bo->shmem.base;
	struct spyre_device *sdev = to_spyre_device(obj->dev);

	if (!list_empty(&bo->link))
		atomic64_sub(obj->size, &sdev->host_mem_used);
	spyre_bo_untrack(sdev, bo);
	spyre_pin_uncharge(bo);
	if (bo->sg)
		dma_free_coherent(obj->dev->dev, (size_t)bo->sg_count * sizeof(*bo->sg),
				  bo->sg, bo->sg_dma);
	bo->sg = NULL;
}

static void spyre_host_bo_free(struct drm_gem_object *obj)
{
	spyre_host_bo_forget(to_spyre_bo(obj));
	drm_gem_shmem_free(to_drm_gem_shmem_obj(obj));
}

static const struct drm_gem_object_funcs spyre_host_bo_funcs = {
	.free = spyre_host_bo_free,
	.print_info = drm_gem_shmem_object_print_info,
	.pin = drm_gem_shmem_object_pin,
	.unpin = drm_gem_shmem_object_unpin,
	.get_sg_table = drm_gem_shmem_object_get_sg_table,
	.vmap = drm_gem_shmem_object_vmap,
	.vunmap = drm_gem_shmem_object_vunmap,
	.mmap = drm_gem_shmem_object_mmap,
	.status = spyre_bo_status,
	.vm_ops = &drm_gem_shmem_vm_ops,
};

/* Called by the shmem helpers for every host BO, imported ones included. */
struct drm_gem_object *spyre_gem_create_object(struct drm_device *drm, size_t size)
{
	struct spyre_bo *bo = kzalloc(sizeof(*bo), GFP_KERNEL);

	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->placement = DRM_SPYRE_PLACEMENT_HOST;
	INIT_LIST_HEAD(&bo->blocks);
	INIT_LIST_HEAD(&bo->link);
	bo->shmem.base.funcs = &spyre_host_bo_funcs;
	return &bo->shmem.base;
}

/* Writes the card's scatter list of a host BO's DMA-mapped segments. */
int spyre_host_bo_build_sg(struct spyre_device *sdev, struct spyre_bo *bo, struct sg_table *sgt)
{
	struct scatterlist *sg;
	u64 total = 0;
	unsigned int i;
	u32 n = 0;

	bo->sg_count = 0;
	for_each_sgtable_dma_sg(sgt, sg, i)
		bo->sg_count++;
	if (!bo->sg_count)
		return -EINVAL;

	/*
	 * One table the card walks; for a BO of the largest size made of
	 * single pages it is the largest allocation the page allocator
	 * serves. Fail without a warning when memory is too fragmented.
	 */
	bo->sg = dma_alloc_coherent(sdev->drm.dev, (size_t)bo->sg_count * sizeof(*bo->sg),
				    &bo->sg_dma, GFP_KERNEL | __GFP_NOWARN);
	if (!bo->sg)
		return -ENOMEM;
	for_each_sgtable_dma_sg(sgt, sg, i) {
		bo->sg[n].addr = cpu_to_le64(sg_dma_address(sg));
		bo->sg[n].len = cpu_to_le64(sg_dma_len(sg));
		total += sg_dma_len(sg);
		n++;
	}
	/* Copies are checked against the BO size: the list must cover it. */
	if (total < bo->shmem.base.size)
		return -EINVAL;
	return 0;
}

static struct spyre_bo *spyre_host_bo_create(struct spyre_device *sdev, u64 size)
{
	struct drm_gem_shmem_object *shmem;
	struct sg_table *sgt;
	struct spyre_bo *bo;
	int ret;

	shmem = drm_gem_shmem_create(&sdev->drm, size);
	if (IS_ERR(shmem))
		return ERR_CAST(shmem);
	bo = to_spyre_bo(&shmem->base);
	ret = spyre_pin_charge(bo, size);
	if (ret)
		goto err;

	/* Pins the pages and maps them for the card, once for the BO's life. */
	sgt = drm_gem_shmem_get_pages_sgt(shmem);
	if (IS_ERR(sgt)) {
		ret = PTR_ERR(sgt);
		goto err;
	}
	ret = spyre_host_bo_build_sg(sdev, bo, sgt);
	if (ret)
		goto err;
	ret = drm_gem_create_mmap_offset(&shmem->base);
	if (ret)
		goto err;
	spyre_host_bo_publish(sdev, bo);
	return bo;

err:
	drm_gem_object_put(&shmem->base);
	return ERR_PTR(ret);
}

/*
 * Imports a foreign dma-buf (or one of this driver's, which gives back the
 * same object). Checked against the host BO size limit before attaching,
 * so an oversized buffer costs nothing.
 */
struct drm_gem_object *spyre_gem_prime_import(struct drm_device *drm, struct dma_buf *dma_buf)
{
	if (spyre_peer_is_ours(dma_buf))
		return spyre_peer_import(drm, dma_buf);
	if (dma_buf->size > spyre_max_host_bo_size())
		return ERR_PTR(-E2BIG);
	return drm_gem_prime_import(drm, dma_buf);
}

struct drm_gem_object *spyre_gem_prime_import_sg_table(struct drm_device *drm,
						       struct dma_buf_attachment *attach,
						       struct sg_table *sgt)
{
	struct spyre_device *sdev = to_spyre_device(drm);
	struct drm_gem_object *obj;
	struct spyre_bo *bo;
	int ret;

	obj = drm_gem_shmem_prime_import_sg_table(drm, attach, sgt);
	if (IS_ERR(obj))
		return obj;
	bo = to_spyre_bo(obj);
	ret = spyre_host_bo_build_sg(sdev, bo, sgt);
	if (ret)
		goto err;
	ret = drm_gem_create_mmap_offset(obj);
	if (ret)
		goto err;
	spyre_host_bo_publish(sdev, bo);
	return obj;

err:
	/*
	 * The sg_table belongs to the attachment, which the caller unmaps and
	 * detaches when we fail; import_attach is not set yet, so the shmem
	 * free would otherwise unmap and free it as if it were ours.
	 */
	bo->shmem.sgt = NULL;
	drm_gem_object_put(obj);
	return ERR_PTR(ret);
}

/**
 * spyre_gem_release_dma() - drop the DMA mappings of a removed card's BOs
 * @sdev: the card, unplugged and reset (no DMA in flight)
 *
 * BOs outlive the card while files hold them, but their DMA mappings (the
 * pages' scatter-gather mapping, an import's attachment mapping, the card's
 * coherent scatter list) belong to the device: they must go when the driver
 * lets the device go, not when the last handle does, or the DMA layer finds
 * them mapped to a device that no longer has a driver. The BOs keep their
 * pages (and their CPU mappings); no job can use them again.
 */
void spyre_gem_release_dma(struct spyre_device *sdev)
{
	struct device *dev = sdev->drm.dev;
	struct spyre_bo *bo;

	mutex_lock(&sdev->bo_lock);
	list_for_each_entry(bo, &sdev->bo_list, link) {
		struct drm_gem_shmem_object *shmem = &bo->shmem;
		struct drm_gem_object *obj = &shmem->base;

		if (bo->placement != DRM_SPYRE_PLACEMENT_HOST)
			continue;
		/* an import shares the exporter's reservation, as unmapping needs */
		dma_resv_lock(obj->resv, NULL);
		if (bo->sg) {
			dma_free_coherent(dev, (size_t)bo->sg_count * sizeof(*bo->sg), bo->sg,
					  bo->sg_dma);
			bo->sg = NULL;
		}
		if (shmem->sgt && obj->import_attach) {
			dma_buf_unmap_attachment(obj->import_attach, shmem->sgt,
						 DMA_BIDIRECTIONAL);
		} else if (shmem->sgt) {
			dma_unmap_sgtable(dev, shmem->sgt, DMA_BIDIRECTIONAL, 0);
			sg_free_table(shmem->sgt);
			kfree(shmem->sgt);
		}
		shmem->sgt = NULL;
		dma_resv_unlock(obj->resv);
	}
	mutex_unlock(&sdev->bo_lock);
}

/* --- ioctls -------------------------------------------------------------- */

int spyre_bo_create_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct spyre_device *sdev = to_spyre_device(drm);
	struct drm_spyre_bo_create *args = data;
	struct spyre_bo *bo;
	u64 size, max;
	int ret;

	if (args->flags || args->pad)
		return -EINVAL;
	if (args->placement != DRM_SPYRE_PLACEMENT_DEVICE &&
	    args->placement != DRM_SPYRE_PLACEMENT_HOST)
		return -EINVAL;
	if (!args->size)
		return -EINVAL;

	max = args->placement == DRM_SPYRE_PLACEMENT_DEVICE ? sdev->mem_size :
							      spyre_max_host_bo_size();
	if (args->size > max)
		return -E2BIG;
	size = PAGE_ALIGN(args->size);

	if (args->placement == DRM_SPYRE_PLACEMENT_DEVICE)
		bo = spyre_dev_bo_create(sdev, file->driver_priv, size);
	else
		bo = spyre_host_bo_create(sdev, size);
	if (IS_ERR(bo))
		return PTR_ERR(bo);

	ret = drm_gem_handle_create(file, &bo->shmem.base, &args->handle);
	/* The handle holds the reference now (or nothing does). */
	drm_gem_object_put(&bo->shmem.base);
	return ret;
}

int spyre_bo_info_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_spyre_bo_info *args = data;
	struct drm_gem_object *obj;
	struct spyre_bo *bo;

	if (args->flags)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	bo = to_spyre_bo(obj);

	args->size = obj->size;
	args->placement = bo->placement;
	args->bo_flags = 0;
	args->mmap_offset = 0;
	if (bo->user_pages) {
		args->bo_flags |= DRM_SPYRE_BO_USER_MEMORY;	/* the caller's own memory */
	} else if (bo->placement == DRM_SPYRE_PLACEMENT_HOST) {
		args->bo_flags |= DRM_SPYRE_BO_MAPPABLE;
		args->mmap_offset = drm_vma_node_offset_addr(&obj->vma_node);
	}
	if (obj->import_attach)
		args->bo_flags |= DRM_SPYRE_BO_IMPORTED;
	drm_gem_object_put(obj);
	return 0;
}

int spyre_bo_wait_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_spyre_bo_wait *args = data;
	struct drm_gem_object *obj;
	long timeout, ret;

	if (args->flags)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;

	timeout = drm_timeout_abs_to_jiffies(args->timeout_ns);
	if (!timeout) {
		ret = dma_resv_test_signaled(obj->resv, DMA_RESV_USAGE_BOOKKEEP) ? 0 : -ETIME;
	} else {
		ret = dma_resv_wait_timeout(obj->resv, DMA_RESV_USAGE_BOOKKEEP, true, timeout);
		if (ret == 0)
			ret = -ETIME;
		else if (ret > 0)
			ret = 0;
	}
	drm_gem_object_put(obj);
	return ret;
}
