/* SPDX-License-Identifier: MIT */
/*
 * The drm backend's per-device state, shared by backend_drm.c (the kernel
 * queues, BOs and the card address space) and backend_drm_uq.c (user-mode
 * queues: launches written into the process's own rings).
 */
#ifndef SPYRE_BACKEND_DRM_H_LIB
#define SPYRE_BACKEND_DRM_H_LIB

#include "internal.h"

/*
 * Card VAs: the low 48 bits of a library address (spyre_bo_addr); the
 * top 16 bits tag the open device (addr.c) and the card ignores nothing,
 * so they are cut off before an address reaches the driver or a ring.
 */
#define SPY_CARD_VA(addr)	((addr) & (DRM_SPYRE_VA_END - 1))

/* Where a BO handle is bound in the file's address space. */
struct drm_va_ent {
	uint64_t va;		/* card VA of byte 0, 0: not bound */
	uint64_t size;
	bool host;
};

struct spy_uq;

struct drm_priv {
	pthread_mutex_t lock;	/* scratch, and the handle table below */
	uint32_t scratch;	/* a binary syncobj reused to read fence errors */
	bool has_queue_error;	/* driver 1.1: DRM_IOCTL_SPYRE_QUEUE_ERROR */
	bool has_userptr;	/* driver 1.2: DRM_IOCTL_SPYRE_BO_USERPTR */
	bool has_vm;		/* driver 1.3: DRM_IOCTL_SPYRE_VM_BIND */
	bool vm_failed;		/* the first VM_BIND failed: no address space */
	struct drm_va_ent *va;	/* by handle */
	uint32_t nva;
	struct spy_uq *uq;	/* user-mode queues in use, else NULL */
};

int spy_drm_ioctl(spyre_device *dev, unsigned long req, void *arg);
int spy_drm_vm_map(spyre_device *dev, uint32_t handle, uint64_t va, uint64_t size, uint32_t flags);
int spy_drm_vm_unmap(spyre_device *dev, uint64_t va, uint64_t size);
/* The handle's binding (under priv->lock); NULL when not bound. */
const struct drm_va_ent *spy_drm_va_of(struct drm_priv *priv, uint32_t handle);

/*
 * User-mode queues (backend_drm_uq.c). spy_uq_open decides at open: 0
 * with priv->uq set (use them), 0 with it NULL (kernel queues), or -errno
 * when SPYRE_DRM_QUEUES=user asked for them and they cannot be had.
 */
int spy_uq_open(spyre_device *dev, unsigned int driver_minor);
void spy_uq_close(spyre_device *dev);
extern const struct spy_backend_ops spy_drm_uq_ops;

/* The kernel-queue ops the user-queue table shares. */
int spy_drm_get_param(spyre_device *dev, uint32_t param, uint64_t *value);
int spy_drm_bo_create(spyre_device *dev, uint64_t size, uint32_t placement, uint32_t *handle);
int spy_drm_bo_userptr(spyre_device *dev, void *ptr, uint64_t size, uint32_t *handle);
int spy_drm_bo_info(spyre_device *dev, struct drm_spyre_bo_info *info);
int spy_drm_bo_map(spyre_device *dev, uint32_t handle, uint64_t size, void **ptr);
int spy_drm_bo_unmap(spyre_device *dev, uint32_t handle, void *ptr, uint64_t size);
int spy_drm_bo_bind(spyre_bo *bo);
int spy_drm_gem_close(spyre_device *dev, uint32_t handle);
void spy_drm_close(spyre_device *dev);
int spy_drm_inject_fault(spyre_device *dev, enum spyre_engine engine, unsigned int kind);
int spy_drm_debugfs_fault(spyre_device *dev, unsigned int val);
int spy_drm_bo_peer_import(spyre_device *dev, spyre_device *owner, uint32_t owner_handle,
			   uint32_t *handle);
/* PRIME between processes: a device BO's dma-buf, another card's as a peer BO. */
int spy_drm_bo_export(spyre_device *dev, uint32_t handle, int *fd, uint64_t *offset);
int spy_drm_bo_import(spyre_device *dev, int fd, uint64_t offset, uint64_t size,
		      uint32_t *handle);

#endif /* SPYRE_BACKEND_DRM_H_LIB */
