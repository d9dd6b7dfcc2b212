// SPDX-License-Identifier: GPL-2.0-only
/*
 * Spyre jobs that run in their file's card address space
 * (DRM_SPYRE_SUBMIT_VA, card interface 1.10): the commands name card VAs,
 * the driver only checks their form and starts the job with SET_CTX. What
 * an address reaches (a program, a DMA source or destination, a launch
 * argument) is decided by the file's page tables, not here.
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#include <linux/sizes.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <drm/drm_gem.h>
#include <uapi/drm/spyre_accel.h>

#include "spyre_desc.h"
#include "spyre_drv.h"
#include "spyre_job.h"
#include "spyre_queue.h"
#include "spyre_ring.h"
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

/*
 * COPY: the direction comes from the command's flags (the driver does not
 * look at the tables); a wrong one makes the card fault with the address,
 * since the device side must translate to device pages and the host side
 * to host pages.
 */
static int spyre_vm_copy(struct spyre_job *job, const struct drm_spyre_cmd *cmd)
{
	const struct drm_spyre_cmd_copy *c = &cmd->copy;
	union spyre_hw_desc *d;

	if (!spyre_va_tail_zero(cmd, sizeof(*c)) || c->src_handle || c->dst_handle ||
	    (cmd->flags & ~DRM_SPYRE_COPY_HOST_MASK) ||
	    (cmd->flags & DRM_SPYRE_COPY_HOST_MASK) == DRM_SPYRE_COPY_HOST_MASK ||
	    !spyre_va_range_ok(c->src_offset, c->size) ||
	    !spyre_va_range_ok(c->dst_offset, c->size))
		return -EINVAL;
	if (!c->size)
		return 0;
	d = spyre_next_desc(job);
	/* In a context the host side is a VA: no scatter list, no offset. */
	if (cmd->flags & DRM_SPYRE_COPY_SRC_HOST)
		spyre_desc_dma_host(d, SPYRE_DMA_H2D, c->size, c->dst_offset, c->src_offset, 0, 0);
	else if (cmd->flags & DRM_SPYRE_COPY_DST_HOST)
		spyre_desc_dma_host(d, SPYRE_DMA_D2H, c->size, c->src_offset, c->dst_offset, 0, 0);
	else
		spyre_desc_dma_d2d(d, c->size, c->dst_offset, c->src_offset);
	return 0;
}

/*
 * LAUNCH: program, workspace and every argument slot are VAs. The card
 * fetches the program with exec access and confines the program to its
 * slots and workspace as in context 0; the tables confine all of it to
 * the file's mappings.
 */
static int spyre_vm_launch(struct spyre_job *job, const struct drm_spyre_cmd *cmd,
			   u32 max_descs)
{
	const struct drm_spyre_cmd_launch *c = &cmd->launch;
	struct drm_spyre_bo_range arg;
	union spyre_hw_desc *a = NULL;
	int err;
	u32 i;

	if (cmd->flags || c->prog_handle || c->ws_handle || !c->prog_size)
		return -EINVAL;
	if (job->queue->engine != DRM_SPYRE_ENGINE_COMPUTE)
		return -EINVAL;
	if (c->nargs > spyre_max_args(job->ring->sdev))
		return -E2BIG;
	if (job->ndescs + 1 + DIV_ROUND_UP(c->nargs, SPYRE_ARGS_PER_DESC) > max_descs)
		return -E2BIG;
	if (c->nargs && (c->args_stride < sizeof(arg) || c->args_stride > SZ_4K))
		return -EINVAL;
	if (!spyre_va_range_ok(c->prog_offset, c->prog_size) ||
	    !spyre_va_range_ok(c->ws_offset, c->ws_size) || (!c->ws_size && c->ws_offset))
		return -EINVAL;

	spyre_desc_launch(spyre_next_desc(job), c->nargs, c->prog_offset, c->prog_size,
			  c->ws_offset, c->ws_size);
	for (i = 0; i < c->nargs; i++) {
		void __user *uarg = u64_to_user_ptr(c->args + (u64)i * c->args_stride);

		err = copy_struct_from_user(&arg, sizeof(arg), uarg, c->args_stride);
		if (err)
			return err;
		if (arg.handle || arg.pad || !spyre_va_range_ok(arg.offset, arg.size))
			return -EINVAL;
		if (i % SPYRE_ARGS_PER_DESC == 0)
			a = spyre_next_desc(job);
		spyre_desc_arg(a, c->nargs, i, arg.offset, arg.size);
	}
	return 0;
}

int spyre_vm_parse_cmd(struct spyre_job *job, const struct drm_spyre_cmd *cmd, u32 max_descs)
{
	const struct drm_spyre_cmd_fill *f = &cmd->fill;
	const struct drm_spyre_cmd_timestamp *t = &cmd->timestamp;

	/* COPY has flags of its own; no other command has any. */
	if (cmd->type == DRM_SPYRE_CMD_COPY)
		return spyre_vm_copy(job, cmd);
	if (cmd->type == DRM_SPYRE_CMD_LAUNCH)
		return spyre_vm_launch(job, cmd, max_descs);
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
	default:
		return -EINVAL;
	}
}
