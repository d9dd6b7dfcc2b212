// SPDX-License-Identifier: GPL-2.0-only
/*
 * Spyre jobs that run in their file's card address space
 * (DRM_SPYRE_SUBMIT_VA, card interface 1.10): the commands name card VAs,
 * the driver only checks their form and starts the job with SET_CTX. What
 * an address reaches is decided by the file's page tables, not here.
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#include <linux/string.h>
#include <drm/drm_gem.h>
#include <uapi/drm/spyre_accel.h>

#include "spyre_desc.h"
#include "spyre_drv.h"
#include "spyre_job.h"
#include "spyre_vm.h"

/*
 * The object whose reservation tracks the file's VA jobs (a reference for
 * the job), and the context they run in. The job adds its fence to it, so
 * an unmap or the file's close waits for the jobs that may still use the
 * tables.
 */
struct drm_gem_object *spyre_vm_job_obj(struct spyre_file *sfile, u32 *ctx)
{
	struct drm_gem_object *obj = NULL;

	mutex_lock(&sfile->vm_lock);
	if (sfile->vm) {
		obj = sfile->vm->gpuvm.r_obj;
		drm_gem_object_get(obj);
		*ctx = sfile->vm->ctx;
	}
	mutex_unlock(&sfile->vm_lock);
	return obj;
}

/* [va, va + size) lies in the translated space (the card faults the rest). */
static bool spyre_va_range_ok(u64 va, u64 size)
{
	return va < DRM_SPYRE_VA_END && size <= DRM_SPYRE_VA_END - va;
}

/* Bytes of a command's union past @used must be zero. */
static bool spyre_va_tail_zero(const struct drm_spyre_cmd *cmd, size_t used)
{
	return !memchr_inv((const u8 *)cmd->rsvd + used, 0, sizeof(cmd->rsvd) - used);
}

int spyre_vm_parse_cmd(struct spyre_job *job, const struct drm_spyre_cmd *cmd)
{
	const struct drm_spyre_cmd_fill *f = &cmd->fill;
	const struct drm_spyre_cmd_timestamp *t = &cmd->timestamp;

	if (cmd->flags)
		return -EINVAL;
	switch (cmd->type) {
	case DRM_SPYRE_CMD_NOP:
		if (!spyre_va_tail_zero(cmd, 0))
			return -EINVAL;
		spyre_desc_nop(spyre_next_desc(job));
		return 0;
	case DRM_SPYRE_CMD_FILL:
		if (!spyre_va_tail_zero(cmd, sizeof(*f)) || f->handle ||
		    !IS_ALIGNED(f->offset | f->size, 4) || !spyre_va_range_ok(f->offset, f->size))
			return -EINVAL;
		if (f->size)
			spyre_desc_dma_fill(spyre_next_desc(job), f->size, f->offset, f->pattern);
		return 0;
	case DRM_SPYRE_CMD_TIMESTAMP:
		if (!spyre_va_tail_zero(cmd, sizeof(*t)) || t->handle || t->pad ||
		    !IS_ALIGNED(t->offset, 8) || !spyre_va_range_ok(t->offset, 8))
			return -EINVAL;
		/* In a context F_DEVMEM changes nothing: the page says where. */
		spyre_desc_timestamp_dev(spyre_next_desc(job), t->offset);
		return 0;
	case DRM_SPYRE_CMD_COPY:
	case DRM_SPYRE_CMD_LAUNCH:
		/* Not in this form yet: the uAPI says so. */
		return -EOPNOTSUPP;
	default:
		return -EINVAL;
	}
}
