// SPDX-License-Identifier: GPL-2.0-only
/*
 * Spyre peer BOs: a device BO of one card used by another card's DMA.
 *
 * A device BO is exported as a dma-buf that only Spyre cards can import:
 * its memory has no CPU pages to hand out, so every other importer is
 * refused at attach time (-EOPNOTSUPP). A Spyre card importing a device
 * BO of a different card gets a peer BO: the bus address of the
 * exporter's BAR2 range, mapped for the importer with dma_map_resource()
 * (an IOMMU in between gets its entry there), which the importer's DMA
 * engine writes (D2P) or reads (P2D) like PCIe peer-to-peer DMA, without a
 * copy in host memory. Importing into the exporting card itself returns
 * the BO (the usual PRIME self-import).
 *
 * A peer BO keeps the dma-buf (and so the exporter's BO and drm_device)
 * alive and shares the exporter's reservation object, so DRM_IOCTL_SPYRE_
 * BO_WAIT on either card waits for the other card's jobs on the memory.
 *
 * When the exporting card goes away (unbind, hot unplug) its BAR range may
 * soon be another device's, so the importers' mappings of it are revoked
 * at its removal: a job not yet on its ring that names such a peer BO
 * fails with -ENODEV instead of running, the removal waits (bounded by the
 * job timeout, so it never hangs on another card's work) for the jobs
 * already running, found through the shared reservation object, then
 * unmaps the range. The peer BO itself lives on as a handle that every
 * later SUBMIT refuses with -ENODEV until its file closes it; it still
 * holds the dma-buf, so the exporter's BO and drm_device are freed then.
 * An importing card that goes away drops its own mappings the same way.
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_prime.h>
#include <drm/drm_print.h>
#include <uapi/drm/spyre_accel.h>

#include "spyre_device.h"
#include "spyre_drv.h"
#include "spyre_gem.h"
#include "spyre_job.h"
#include "spyre_peer.h"

/*
 * Protects every card's peer_imports and peer_gone and every peer BO's
 * peer_link and peer_revoked: an import and a revocation meet two cards.
 */
static DEFINE_MUTEX(spyre_peer_lock);

/* Nothing but a Spyre card may attach: there are no pages to map. */
static int spyre_peer_buf_attach(struct dma_buf *dma_buf, struct dma_buf_attachment *attach)
{
	return -EOPNOTSUPP;
}

static struct sg_table *spyre_peer_buf_map(struct dma_buf_attachment *attach,
					   enum dma_data_direction dir)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static void spyre_peer_buf_unmap(struct dma_buf_attachment *attach, struct sg_table *sgt,
				 enum dma_data_direction dir)
{
}

static const struct dma_buf_ops spyre_peer_buf_ops = {
	.attach = spyre_peer_buf_attach,
	.map_dma_buf = spyre_peer_buf_map,
	.unmap_dma_buf = spyre_peer_buf_unmap,
	.release = drm_gem_dmabuf_release,
};

struct dma_buf *spyre_peer_export(struct drm_gem_object *obj, int flags)
{
	DEFINE_DMA_BUF_EXPORT_INFO(exp_info);

	exp_info.ops = &spyre_peer_buf_ops;
	exp_info.size = obj->size;
	exp_info.flags = flags;
	exp_info.priv = obj;
	exp_info.resv = obj->resv;
	/* takes references on @obj and its drm_device for the dma-buf */
	return drm_gem_dmabuf_export(obj->dev, &exp_info);
}

bool spyre_peer_is_ours(const struct dma_buf *dma_buf)
{
	return dma_buf->ops == &spyre_peer_buf_ops;
}

/* Drops @bo's mapping of the exporter's BAR range, once. */
static void spyre_peer_unmap_locked(struct spyre_bo *bo)
{
	struct drm_gem_object *obj = &bo->shmem.base;

	lockdep_assert_held(&spyre_peer_lock);
	if (bo->peer_revoked)
		return;
	list_del_init(&bo->peer_link);
	dma_unmap_resource(obj->dev->dev, bo->peer_dma, obj->size, DMA_BIDIRECTIONAL,
			   DMA_ATTR_SKIP_CPU_SYNC);
	bo->peer_revoked = true;
}

static void spyre_peer_bo_free(struct drm_gem_object *obj)
{
	struct spyre_device *sdev = to_spyre_device(obj->dev);
	struct spyre_bo *bo = to_spyre_bo(obj);

	mutex_lock(&sdev->bo_lock);
	list_del_init(&bo->link);
	mutex_unlock(&sdev->bo_lock);
	atomic_dec(&sdev->bo_count);
	mutex_lock(&spyre_peer_lock);
	spyre_peer_unmap_locked(bo);
	mutex_unlock(&spyre_peer_lock);
	dma_buf_put(bo->peer_buf);
	drm_gem_object_release(obj);
	kfree(bo);
}

static enum drm_gem_object_status spyre_peer_bo_status(struct drm_gem_object *obj)
{
	return DRM_GEM_OBJECT_RESIDENT;
}

static const struct drm_gem_object_funcs spyre_peer_bo_funcs = {
	.free = spyre_peer_bo_free,
	.status = spyre_peer_bo_status,
};

/*
 * Why a peer import can fail: the importing card cannot do peer DMA
 * (-EOPNOTSUPP), the cards sit under different PCI host bridges, where
 * peer-to-peer traffic is not guaranteed to be routed (-EXDEV), or the BO
 * lies beyond the exporter's BAR2 aperture (-ERANGE).
 */
static int spyre_peer_check(struct spyre_device *imp, struct spyre_device *exp,
			    struct spyre_bo *ebo)
{
	if (imp->hw_version < SPYRE_HW_VERSION(1, SPYRE_HW_PEER_DMA_MINOR)) {
		drm_dbg(&imp->drm, "peer import: card %u.%u has no peer DMA\n",
			SPYRE_HW_VERSION_MAJOR_OF(imp->hw_version),
			SPYRE_HW_VERSION_MINOR_OF(imp->hw_version));
		return -EOPNOTSUPP;
	}
	if (pci_find_host_bridge(imp->pdev->bus) != pci_find_host_bridge(exp->pdev->bus)) {
		drm_dbg(&imp->drm, "peer import: %s is under another host bridge\n",
			pci_name(exp->pdev));
		return -EXDEV;
	}
	if (ebo->dev_addr > exp->aperture ||
	    ebo->shmem.base.size > exp->aperture - ebo->dev_addr) {
		drm_dbg(&imp->drm, "peer import: BO beyond %s's BAR2 aperture\n",
			pci_name(exp->pdev));
		return -ERANGE;
	}
	return 0;
}

struct drm_gem_object *spyre_peer_import(struct drm_device *drm, struct dma_buf *dma_buf)
{
	struct drm_gem_object *eobj = dma_buf->priv;
	struct spyre_device *imp = to_spyre_device(drm);
	struct spyre_device *exp = to_spyre_device(eobj->dev);
	struct spyre_bo *ebo = to_spyre_bo(eobj), *bo;
	phys_addr_t phys;
	int ret;

	if (eobj->dev == drm) {
		drm_gem_object_get(eobj);
		return eobj;
	}
	ret = spyre_peer_check(imp, exp, ebo);
	if (ret)
		return ERR_PTR(ret);

	bo = kzalloc(sizeof(*bo), GFP_KERNEL);
	if (!bo)
		return ERR_PTR(-ENOMEM);
	phys = pci_resource_start(exp->pdev, SPYRE_BAR_MEM) + ebo->dev_addr;
	/*
	 * A BAR has no CPU cache lines to keep in sync, and one BO may be
	 * imported more than once (each import maps it again): without
	 * SKIP_CPU_SYNC, DMA debugging reports the overlap as an error.
	 */
	bo->peer_dma = dma_map_resource(drm->dev, phys, eobj->size, DMA_BIDIRECTIONAL,
					DMA_ATTR_SKIP_CPU_SYNC);
	if (dma_mapping_error(drm->dev, bo->peer_dma)) {
		kfree(bo);
		return ERR_PTR(-ENOMEM);
	}
	bo->placement = DRM_SPYRE_PLACEMENT_PEER;
	INIT_LIST_HEAD(&bo->blocks);
	INIT_LIST_HEAD(&bo->link);
	INIT_LIST_HEAD(&bo->peer_link);
	bo->shmem.base.funcs = &spyre_peer_bo_funcs;
	drm_gem_private_object_init(drm, &bo->shmem.base, eobj->size);
	bo->shmem.base.resv = dma_buf->resv;
	get_dma_buf(dma_buf);
	bo->peer_buf = dma_buf;
	bo->peer_sdev = exp;
	bo->owner_pid = task_tgid_nr(current);
	mutex_lock(&imp->bo_lock);
	list_add_tail(&bo->link, &imp->bo_list);
	mutex_unlock(&imp->bo_lock);
	atomic_inc(&imp->bo_count);

	/* The exporter's removal revokes what is on its list from now on. */
	mutex_lock(&spyre_peer_lock);
	ret = exp->peer_gone ? -ENODEV : 0;
	if (!ret)
		list_add_tail(&bo->peer_link, &exp->peer_imports);
	mutex_unlock(&spyre_peer_lock);
	if (ret) {
		drm_gem_object_put(&bo->shmem.base);
		return ERR_PTR(ret);
	}
	return &bo->shmem.base;
}

/**
 * spyre_peer_revoke_exporter() - revoke the peer BOs of a card going away
 * @exp: the card, unplugged (new SUBMITs naming its peer BOs fail) and
 *	with its own jobs failed
 *
 * Every peer BO other cards imported from @exp: waits for the importer's
 * jobs on it (a job that has not reached its ring yet fails with -ENODEV,
 * see spyre_peer_job_revoked()), at most twice the job timeout, since a
 * hung job is the importer's recovery's to end, and then unmaps the
 * importer's mapping of @exp's BAR range. Later imports of @exp's BOs fail
 * with -ENODEV.
 */
void spyre_peer_revoke_exporter(struct spyre_device *exp)
{
	long timeout = msecs_to_jiffies(2 * spyre_job_timeout_ms + 1000);
	struct drm_gem_object *obj;
	struct spyre_bo *bo, *tmp;
	LIST_HEAD(held);
	long ret;

	mutex_lock(&spyre_peer_lock);
	WRITE_ONCE(exp->peer_gone, true);
	/* a BO whose last reference is gone is its free path's to unmap */
	list_for_each_entry_safe(bo, tmp, &exp->peer_imports, peer_link)
		if (kref_get_unless_zero(&bo->shmem.base.refcount))
			list_move_tail(&bo->peer_link, &held);
	mutex_unlock(&spyre_peer_lock);

	for (;;) {
		mutex_lock(&spyre_peer_lock);
		bo = list_first_entry_or_null(&held, struct spyre_bo, peer_link);
		if (bo)
			list_del_init(&bo->peer_link);
		mutex_unlock(&spyre_peer_lock);
		if (!bo)
			break;
		obj = &bo->shmem.base;
		/*
		 * A SUBMIT that checked @exp before the unplug adds its fence
		 * under the reservation lock: taking it once orders that
		 * fence before the wait, or the job's run_job after the
		 * unplug (and so it fails there).
		 */
		dma_resv_lock(obj->resv, NULL);
		dma_resv_unlock(obj->resv);
		ret = dma_resv_wait_timeout(obj->resv, DMA_RESV_USAGE_BOOKKEEP, false, timeout);
		if (ret <= 0)
			drm_err(obj->dev, "peer BO of %s: jobs still running at its removal (%ld)\n",
				pci_name(exp->pdev), ret);
		mutex_lock(&spyre_peer_lock);
		spyre_peer_unmap_locked(bo);
		mutex_unlock(&spyre_peer_lock);
		drm_gem_object_put(obj);
	}
}

/**
 * spyre_peer_revoke_importer() - unmap a removed card's peer BOs
 * @imp: the card, unplugged and with its jobs failed
 *
 * The mappings belong to @imp's device: they go when the driver lets it go.
 */
void spyre_peer_revoke_importer(struct spyre_device *imp)
{
	struct spyre_bo *bo;

	mutex_lock(&imp->bo_lock);
	list_for_each_entry(bo, &imp->bo_list, link) {
		if (bo->placement != DRM_SPYRE_PLACEMENT_PEER)
			continue;
		mutex_lock(&spyre_peer_lock);
		spyre_peer_unmap_locked(bo);
		mutex_unlock(&spyre_peer_lock);
	}
	mutex_unlock(&imp->bo_lock);
}

/**
 * spyre_peer_job_revoked() - does @job name a peer BO of a removed card?
 * @job: a job about to be written to its ring
 *
 * Return: true if the job must not run (its fence gets -ENODEV).
 */
bool spyre_peer_job_revoked(const struct spyre_job *job)
{
	struct spyre_bo *bo;
	u32 i;

	for (i = 0; i < job->nbos; i++) {
		/*
		 * Not every object a job holds is a spyre BO: a VA job holds
		 * its VM's reservation object, which is smaller.
		 */
		if (job->bos[i]->funcs != &spyre_peer_bo_funcs)
			continue;
		bo = to_spyre_bo(job->bos[i]);
		if (drm_dev_is_unplugged(&bo->peer_sdev->drm))
			return true;
	}
	return false;
}
