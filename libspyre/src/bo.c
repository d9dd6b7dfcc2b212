// SPDX-License-Identifier: MIT
/*
 * Buffer objects: device and host memory, CPU mappings.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* (internal.h) */
int spy_bo_adopt(spyre_device *dev, const char *call, uint32_t handle, enum spyre_mem mem,
		 uint64_t size, void *map, spyre_bo **out)
{
	spyre_bo *bo = calloc(1, sizeof(*bo));
	int ret;

	if (!bo) {
		dev->ops->bo_close(dev, handle);
		return spy_err(-ENOMEM, "%s: out of memory", call);
	}
	bo->dev = dev;
	bo->handle = handle;
	bo->mem = mem;
	bo->size = size;
	bo->map = map;
	bo->user = map != NULL;
	ret = spy_va_add(bo);
	if (ret) {
		dev->ops->bo_close(dev, handle);
		free(bo);
		return spy_err(ret, "%s: %s: no device address range left", call, dev->name);
	}
	ret = dev->ops->bo_bind ? dev->ops->bo_bind(bo) : 0;
	if (ret) {
		uint64_t va = bo->addr & ((1ull << 48) - 1);

		spy_va_remove(bo);
		dev->ops->bo_close(dev, handle);
		free(bo);
		return spy_dev_err(dev, ret, call, "mapping %llu bytes at card address 0x%llx",
				   (unsigned long long)size, (unsigned long long)va);
	}
	spy_dev_get(dev);
	*out = bo;
	return 0;
}

int spyre_bo_create(spyre_device *dev, uint64_t size, enum spyre_mem mem, spyre_bo **out)
{
	uint32_t handle;
	int ret;

	if (!dev || !out)
		return spy_err(-EINVAL, "spyre_bo_create: device or out is NULL");
	if (mem != SPYRE_MEM_DEVICE && mem != SPYRE_MEM_HOST)
		return spy_err(-EINVAL, "spyre_bo_create: %s: unknown memory kind %d", dev->name,
			       (int)mem);
	if (!size)
		return spy_err(-EINVAL, "spyre_bo_create: %s: size 0", dev->name);
	if (size > UINT64_MAX - SPY_PAGE)
		return spy_err(-E2BIG, "spyre_bo_create: %s: size %llu too large", dev->name,
			       (unsigned long long)size);
	size = (size + SPY_PAGE - 1) & ~(SPY_PAGE - 1);
	ret = dev->ops->bo_create(dev, size, mem == SPYRE_MEM_HOST, &handle);
	if (ret)
		return spy_dev_err(dev, ret, "spyre_bo_create", "%s BO of %llu bytes",
				   mem == SPYRE_MEM_HOST ? "host" : "device",
				   (unsigned long long)size);
	return spy_bo_adopt(dev, "spyre_bo_create", handle, mem, size, NULL, out);
}

int spyre_host_register(spyre_device *dev, void *ptr, uint64_t size, spyre_bo **out)
{
	uint32_t handle;
	int ret;

	if (!dev || !ptr || !out)
		return spy_err(-EINVAL, "spyre_host_register: device, ptr or out is NULL");
	if ((uintptr_t)ptr % SPY_PAGE || !size || size % SPY_PAGE)
		return spy_err(-EINVAL, "spyre_host_register: %s: %p + %llu is not whole 4 KiB "
			       "pages", dev->name, ptr, (unsigned long long)size);
	ret = dev->ops->bo_userptr ? dev->ops->bo_userptr(dev, ptr, size, &handle) : -EOPNOTSUPP;
	if (ret == -EOPNOTSUPP)
		return spy_err(ret, "spyre_host_register: %s: the driver cannot register user "
			       "memory (needs spyre driver 1.2)", dev->name);
	if (ret == -EFAULT)
		return spy_err(ret, "spyre_host_register: %s: %p + %llu is not writable memory "
			       "that can be pinned", dev->name, ptr, (unsigned long long)size);
	if (ret)
		return spy_dev_err(dev, ret, "spyre_host_register", "%llu bytes at %p",
				   (unsigned long long)size, ptr);
	return spy_bo_adopt(dev, "spyre_host_register", handle, SPYRE_MEM_HOST, size, ptr, out);
}

int spyre_bo_destroy(spyre_bo *bo)
{
	spyre_device *dev;
	int ret;

	if (!bo)
		return spy_err(-EINVAL, "spyre_bo_destroy: BO is NULL");
	dev = bo->dev;
	/*
	 * Work deferred behind host work names the BO by handle and is not in
	 * the kernel yet (so the kernel holds no reference): wait until the
	 * deferred ops that use this BO were issued (others do not matter).
	 * The worker itself cannot wait for work queued behind its callback.
	 */
	if (!spy_worker_is_self(dev)) {
		pthread_mutex_lock(&dev->lock);
		while (spy_deferred_uses_locked(dev, bo->handle))
			spy_dev_wait_locked(dev);
		pthread_mutex_unlock(&dev->lock);
	}
	spy_va_remove(bo);
	if (bo->map && !bo->user)	/* registered memory stays the caller's */
		dev->ops->bo_unmap(dev, bo->handle, bo->map, bo->size);
	ret = dev->ops->bo_close(dev, bo->handle);
	spy_dev_put(dev);
	free(bo);
	if (ret)
		return spy_dev_err(dev, ret, "spyre_bo_destroy", "closing the BO handle");
	return 0;
}

int spyre_bo_map(spyre_bo *bo, void **ptr)
{
	int ret;

	if (!bo || !ptr)
		return spy_err(-EINVAL, "spyre_bo_map: BO or ptr is NULL");
	if (bo->mem != SPYRE_MEM_HOST)
		return spy_err(-EINVAL, "spyre_bo_map: %s: device BOs are not mappable; copy "
			       "through a host BO", bo->dev->name);
	if (!bo->map) {
		ret = bo->dev->ops->bo_map(bo->dev, bo->handle, bo->size, &bo->map);
		if (ret)
			return spy_dev_err(bo->dev, ret, "spyre_bo_map", "mapping a host BO of "
					   "%llu bytes", (unsigned long long)bo->size);
	}
	*ptr = bo->map;
	return 0;
}

int spyre_bo_unmap(spyre_bo *bo)
{
	int ret;

	if (!bo)
		return spy_err(-EINVAL, "spyre_bo_unmap: BO is NULL");
	if (!bo->map || bo->user)	/* registered memory is always mapped */
		return 0;
	ret = bo->dev->ops->bo_unmap(bo->dev, bo->handle, bo->map, bo->size);
	bo->map = NULL;
	if (ret)
		return spy_dev_err(bo->dev, ret, "spyre_bo_unmap", "munmap");
	return 0;
}

uint64_t spyre_bo_size(const spyre_bo *bo)
{
	return bo ? bo->size : 0;
}

enum spyre_mem spyre_bo_mem(const spyre_bo *bo)
{
	return bo ? bo->mem : SPYRE_MEM_DEVICE;
}

struct spyre_buf spyre_bo_buf(spyre_bo *bo)
{
	struct spyre_buf b = { bo, 0, bo ? bo->size : 0 };

	return b;
}
