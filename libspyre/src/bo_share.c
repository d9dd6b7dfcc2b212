// SPDX-License-Identifier: MIT
/*
 * Device memory shared with another process's card (spyre.h,
 * spyre_bo_export): the exporter's backend names the BO by an fd (a
 * dma-buf on drm, the card's memfd on the sim) and an offset, the
 * importer's backend turns that into a peer BO of its own card.
 */
#include <stdlib.h>

#include "internal.h"

int spyre_bo_export(spyre_bo *bo, struct spyre_bo_export *out)
{
	spyre_device *dev;
	uint64_t offset = 0;
	int fd = -1, ret;

	if (!bo || !out)
		return spy_err(-EINVAL, "spyre_bo_export: bo or out is NULL");
	dev = bo->dev;
	if (bo->mem != SPYRE_MEM_DEVICE)
		return spy_err(-EINVAL, "spyre_bo_export: %s: only device BOs can be shared "
			       "(this one is %s memory)", dev->name,
			       bo->mem == SPYRE_MEM_HOST ? "host" : "peer");
	if (!dev->ops->bo_export)
		return spy_err(-EOPNOTSUPP, "spyre_bo_export: %s: the %s backend cannot share "
			       "device memory between processes", dev->name, dev->ops->name);
	ret = dev->ops->bo_export(dev, bo->handle, &fd, &offset);
	if (ret)
		return spy_dev_err(dev, ret, "spyre_bo_export", "BO of %llu bytes",
				   (unsigned long long)bo->size);
	out->fd = fd;
	out->offset = offset;
	out->size = bo->size;
	return 0;
}

int spyre_bo_import_peer(spyre_device *dev, const struct spyre_bo_export *exp, spyre_bo **out)
{
	uint32_t handle;
	int ret;

	if (!dev || !exp || !out)
		return spy_err(-EINVAL, "spyre_bo_import_peer: device, exp or out is NULL");
	if (exp->fd < 0 || !exp->size)
		return spy_err(-EINVAL, "spyre_bo_import_peer: %s: fd %d, size %llu", dev->name,
			       exp->fd, (unsigned long long)exp->size);
	if (!dev->ops->bo_import)
		return spy_err(-EOPNOTSUPP, "spyre_bo_import_peer: %s: the %s backend cannot "
			       "import device memory of another process", dev->name,
			       dev->ops->name);
	ret = dev->ops->bo_import(dev, exp->fd, exp->offset, exp->size, &handle);
	if (ret)
		return spy_dev_err(dev, ret, "spyre_bo_import_peer", "fd %d (%llu bytes at %llu)",
				   exp->fd, (unsigned long long)exp->size,
				   (unsigned long long)exp->offset);
	return spy_bo_adopt(dev, "spyre_bo_import_peer", handle, SPYRE_MEM_PEER, exp->size, NULL,
			    out);
}
