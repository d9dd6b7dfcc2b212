// SPDX-License-Identifier: MIT
/*
 * Device addresses: every BO gets a range of a per-device 64-bit address
 * space when it is created, so a framework can hold a plain pointer-like
 * integer (its allocator's DataPtr) and find the (BO, offset) back.
 *
 * Addresses are handed out in increasing order and never reused within an
 * open device, with an unmapped gap after each BO, so a stale or
 * overrunning address finds nothing instead of another BO. The top 16
 * bits tag the open device: an address of another device is recognised.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define VA_TAG_SHIFT 48
#define VA_START (1ull << 32)	/* small integers are never addresses */
#define VA_GAP (64ull << 10)
/*
 * The low 48 bits are the card VA on the drm backend (backend_drm.c maps
 * every BO there); the top 1 TiB of the card space is the backend's own
 * (its user-queue rings), never handed out here.
 */
#define VA_ROOM ((1ull << VA_TAG_SHIFT) - (1ull << 40))

static uint64_t next_tag = 1;	/* atomic */

void spy_va_init(spyre_device *dev)
{
	uint64_t tag = __atomic_fetch_add(&next_tag, 1, __ATOMIC_RELAXED) & 0xffff;

	pthread_rwlock_init(&dev->va_lock, NULL);
	dev->va_next = (tag ? tag : 1) << VA_TAG_SHIFT | VA_START;
}

void spy_va_fini(spyre_device *dev)
{
	free(dev->va);
	pthread_rwlock_destroy(&dev->va_lock);
}

int spy_va_add(spyre_bo *bo)
{
	spyre_device *dev = bo->dev;
	uint64_t room = (1ull << VA_TAG_SHIFT) - 1;
	int ret = 0;

	pthread_rwlock_wrlock(&dev->va_lock);
	if (dev->nva == dev->va_cap) {
		size_t cap = dev->va_cap ? dev->va_cap * 2 : 64;
		struct spy_va *v = realloc(dev->va, cap * sizeof(*v));

		if (!v) {
			ret = -ENOMEM;
			goto out;
		}
		dev->va = v;
		dev->va_cap = cap;
	}
	if (bo->size + VA_GAP > VA_ROOM - (dev->va_next & room)) {
		ret = -ENOSPC;	/* 255 TiB handed out by one open device */
		goto out;
	}
	bo->addr = dev->va_next;
	dev->va_next += bo->size + VA_GAP;
	dev->va[dev->nva++] = (struct spy_va){ bo->addr, bo };	/* stays sorted */
out:
	pthread_rwlock_unlock(&dev->va_lock);
	return ret;
}

/* Index of the last entry with base <= @addr, or -1. Under va_lock. */
static long va_find(const spyre_device *dev, uint64_t addr)
{
	long lo = 0, hi = (long)dev->nva - 1, found = -1;

	while (lo <= hi) {
		long mid = lo + (hi - lo) / 2;

		if (dev->va[mid].base <= addr) {
			found = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return found;
}

void spy_va_remove(spyre_bo *bo)
{
	spyre_device *dev = bo->dev;
	long i;

	pthread_rwlock_wrlock(&dev->va_lock);
	i = va_find(dev, bo->addr);
	if (i >= 0 && dev->va[i].bo == bo) {
		memmove(&dev->va[i], &dev->va[i + 1], (dev->nva - i - 1) * sizeof(dev->va[0]));
		dev->nva--;
	}
	pthread_rwlock_unlock(&dev->va_lock);
}

uint64_t spyre_bo_addr(const spyre_bo *bo)
{
	return bo ? bo->addr : 0;
}

uint64_t spyre_buf_addr(const struct spyre_buf *buf)
{
	return buf && buf->bo ? buf->bo->addr + buf->offset : 0;
}

int spyre_addr_lookup(spyre_device *dev, uint64_t addr, uint64_t size, struct spyre_buf *out)
{
	static const char *call = "spyre_addr_lookup";
	spyre_bo *bo = NULL;
	long i;

	if (!dev || !out)
		return spy_err(-EINVAL, "%s: device or out is NULL", call);
	if ((addr >> VA_TAG_SHIFT) != (dev->va_next >> VA_TAG_SHIFT))
		return spy_err(addr >> VA_TAG_SHIFT ? -EXDEV : -EFAULT, "%s: %s: 0x%llx is %s",
			       call, dev->name, (unsigned long long)addr,
			       addr >> VA_TAG_SHIFT ? "an address of another device"
						    : "not a device address");
	pthread_rwlock_rdlock(&dev->va_lock);
	i = va_find(dev, addr);
	if (i >= 0 && addr - dev->va[i].base < dev->va[i].bo->size)
		bo = dev->va[i].bo;
	pthread_rwlock_unlock(&dev->va_lock);
	if (!bo)
		return spy_err(-EFAULT, "%s: %s: no live BO at 0x%llx", call, dev->name,
			       (unsigned long long)addr);
	if (size > bo->size - (addr - bo->addr))
		return spy_err(-EFAULT, "%s: %s: %llu bytes at 0x%llx run past the end of their "
			       "%llu-byte BO", call, dev->name, (unsigned long long)size,
			       (unsigned long long)addr, (unsigned long long)bo->size);
	out->bo = bo;
	out->offset = addr - bo->addr;
	out->size = size;
	return 0;
}
