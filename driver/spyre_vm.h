/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Spyre card address spaces: one MMU context per open file.
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#ifndef SPYRE_VM_H
#define SPYRE_VM_H

#include <drm/drm_gpuvm.h>

struct drm_device;
struct drm_file;
struct drm_gem_object;
struct drm_spyre_cmd;
struct spyre_job;
struct spyre_device;
struct spyre_file;
struct spyre_pt;

/**
 * struct spyre_vm - the card address space of one open file
 * @gpuvm: the VA ranges in use (drm_gpuvm's interval tree); each
 *	&drm_gpuva holds a reference to its BO
 * @sdev: the device
 * @root: the level-3 page table, in device memory only the driver maps
 * @ctx: the card MMU context, 1..SPYRE_MMU_NUM_CTX-1
 * @link: entry in the device's list of address spaces (under mmu_lock)
 */
struct spyre_vm {
	struct drm_gpuvm gpuvm;
	struct spyre_device *sdev;
	struct spyre_pt *root;
	u32 ctx;
	struct list_head link;
};

void spyre_vm_destroy(struct spyre_file *sfile);
void spyre_vm_restore_roots(struct spyre_device *sdev);
int spyre_vm_bind_ioctl(struct drm_device *drm, void *data, struct drm_file *file);
struct drm_gem_object *spyre_vm_job_obj(struct spyre_file *sfile, u32 *ctx);
int spyre_vm_parse_cmd(struct spyre_job *job, const struct drm_spyre_cmd *cmd, u32 max_descs);

#endif /* SPYRE_VM_H */
