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
 * Copyright (C) 2026 The Spyre stack authors
 */
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
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
#include "spyre_peer.h"

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

static void spyre_peer_bo_free(struct drm_gem_object *obj)
{
	struct spyre_device *sdev = to_spyre_device(obj->dev);
	struct spyre_bo *bo = to_spyre_bo(obj);

	mutex_lock(&sdev->bo_lock);
	list_del_init(&bo->link);
	mutex_unlock(&sdev->bo_lock);
	atomic_dec(&sdev->bo_count);
	dma_unmap_resource(obj->dev->dev, bo->peer_dma, obj->size, DMA_BIDIRECTIONAL, 0);
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
	bo->peer_dma = dma_map_resource(drm->dev, phys, eobj->size, DMA_BIDIRECTIONAL, 0);
	if (dma_mapping_error(drm->dev, bo->peer_dma)) {
		kfree(bo);
		return ERR_PTR(-ENOMEM);
	}
	bo->placement = DRM_SPYRE_PLACEMENT_PEER;
	INIT_LIST_HEAD(&bo->blocks);
	INIT_LIST_HEAD(&bo->link);
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
	return &bo->shmem.base;
}
