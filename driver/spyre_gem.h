/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Spyre buffer objects.
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#ifndef SPYRE_GEM_H
#define SPYRE_GEM_H

#include <drm/drm_gem_shmem_helper.h>

struct dma_buf;
struct spyre_device;
struct spyre_file;
struct user_struct;

#include "spyre_drv.h"

/**
 * struct spyre_bo - a BO in device or host memory
 * @shmem: host BOs are shmem objects; device BOs only use its GEM base
 * @placement: enum drm_spyre_placement
 * @link: entry in the device's BO list
 * @blocks: device BOs: buddy blocks (one contiguous range)
 * @dev_addr: device BOs: card address of the first byte
 * @sg: host BOs: the card's scatter list of the pages (coherent DMA)
 * @sg_dma: bus address of @sg
 * @sg_count: entries in @sg
 * @owner_pid: process that created the BO, for debugfs
 * @pin_user: host BOs: the user whose locked memory the pages are charged
 *	to (reference), NULL if not charged (CAP_IPC_LOCK, imports)
 * @pinned_pages: pages charged to @pin_user
 * @sfile: device BOs: the file whose quota the BO counts in (reference)
 * @user_pages: user-pointer BOs: the caller's pages, pinned (else NULL)
 * @user_npages: entries of @user_pages that are pinned
 * @peer_buf: peer BOs: the dma-buf of the other card's device BO (reference)
 * @peer_dma: peer BOs: the bus address of that BO for this card's DMA
 * @peer_sdev: peer BOs: the exporting card (its drm_device is held by the
 *	dma-buf)
 * @peer_link: peer BOs: entry in @peer_sdev's peer_imports until revoked
 * @peer_revoked: peer BOs: @peer_dma is unmapped, the exporter went away
 *	(spyre_peer.c's lock)
 */
struct spyre_bo {
	struct drm_gem_shmem_object shmem;
	u32 placement;
	struct list_head link;
	struct list_head blocks;
	u64 dev_addr;
	struct spyre_hw_sg *sg;
	dma_addr_t sg_dma;
	u32 sg_count;
	pid_t owner_pid;
	struct user_struct *pin_user;
	unsigned long pinned_pages;
	struct spyre_file *sfile;
	struct page **user_pages;
	unsigned long user_npages;
	struct dma_buf *peer_buf;
	dma_addr_t peer_dma;
	struct spyre_device *peer_sdev;
	struct list_head peer_link;
	bool peer_revoked;
};

static inline struct spyre_bo *to_spyre_bo(struct drm_gem_object *obj)
{
	return container_of(obj, struct spyre_bo, shmem.base);
}

struct drm_gem_object *spyre_gem_create_object(struct drm_device *drm, size_t size);
struct drm_gem_object *spyre_gem_prime_import(struct drm_device *drm, struct dma_buf *dma_buf);
struct drm_gem_object *spyre_gem_prime_import_sg_table(struct drm_device *drm,
						       struct dma_buf_attachment *attach,
						       struct sg_table *sgt);
void spyre_gem_release_dma(struct spyre_device *sdev);
int spyre_bo_create_ioctl(struct drm_device *drm, void *data, struct drm_file *file);
int spyre_bo_info_ioctl(struct drm_device *drm, void *data, struct drm_file *file);
int spyre_bo_wait_ioctl(struct drm_device *drm, void *data, struct drm_file *file);
u64 spyre_mem_free(struct spyre_device *sdev);
int spyre_pin_charge(struct spyre_bo *bo, u64 size);
void spyre_host_bo_publish(struct spyre_device *sdev, struct spyre_bo *bo);
void spyre_host_bo_forget(struct spyre_bo *bo);
int spyre_host_bo_build_sg(struct spyre_device *sdev, struct spyre_bo *bo, struct sg_table *sgt);
int spyre_bo_userptr_ioctl(struct drm_device *drm, void *data, struct drm_file *file);
u64 spyre_max_host_bo_size(void);

#endif /* SPYRE_GEM_H */
