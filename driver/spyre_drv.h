/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Spyre DRM accel driver: module parameters, limits and the open file.
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#ifndef SPYRE_DRV_H
#define SPYRE_DRV_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/xarray.h>
#include <uapi/drm/spyre_accel.h>

#include "spyre_device.h"

struct spyre_vm;

#define SPYRE_DRIVER_NAME	"spyre"
#define SPYRE_DRIVER_DESC	"Spyre AI accelerator"

/* Limits of one open file and one submission (see the uAPI header). */
#define SPYRE_MAX_QUEUES	64
#define SPYRE_MAX_SUBMIT_CMDS	512
#define SPYRE_MAX_SYNCS		64
#define SPYRE_MAX_RINGS		16
/* Rings the driver looks at, the kernel's and the user queues' */
#define SPYRE_MAX_HW_RINGS	64
/* Descriptors one command can need: a launch with SPYRE_MAX_ARGS slots. */
#define SPYRE_MAX_DESCS_PER_CMD	(1 + DIV_ROUND_UP(SPYRE_MAX_ARGS, SPYRE_ARGS_PER_DESC))
/*
 * Descriptors per command the ring is budgeted for (DRM_SPYRE_PARAM_MAX_CMDS):
 * a launch of 16 slots. A launch with more slots (interface 1.7) uses the
 * budget of several commands.
 */
#define SPYRE_BUDGET_DESCS_PER_CMD \
	(1 + DIV_ROUND_UP(SPYRE_MAX_ARGS_V1_6, SPYRE_ARGS_PER_DESC))
/* Engines of enum drm_spyre_engine, for per-engine statistics. */
#define SPYRE_NUM_ENGINES	(DRM_SPYRE_ENGINE_DMA + 1)

extern unsigned int spyre_job_timeout_ms;
extern unsigned int spyre_ring_order;
extern unsigned int spyre_max_host_bo_mb;
extern unsigned int spyre_file_mem_quota_mb;
extern unsigned int spyre_kernel_rings;

/**
 * struct spyre_file - per open file state
 * @ref: held by the file and by each of its queues, so usage statistics
 *	outlive a closed file while its jobs finish
 * @sdev: the device
 * @queues: queue ID -> struct spyre_queue
 * @engine_ns: device time used per engine (enum drm_spyre_engine)
 * @jobs_done: finished jobs
 * @drm_client_id: the DRM file's client ID, for the scheduler
 * @dev_mem_used: bytes of device BOs the file created that still exist
 *	(module parameter file_mem_quota_mb)
 * @vm_lock: protects @vm and serialises its binds
 * @vm: the file's card address space, created by its first VM_BIND (or NULL)
 * @uqs: user-mode queue ID -> struct spyre_uq
 */
struct spyre_file {
	struct kref ref;
	struct spyre_device *sdev;
	struct xarray queues;
	atomic64_t engine_ns[SPYRE_NUM_ENGINES];
	atomic64_t jobs_done;
	u64 drm_client_id;
	atomic64_t dev_mem_used;
	struct mutex vm_lock; /* see above */
	struct spyre_vm *vm;
	struct xarray uqs;
};

void spyre_file_put(struct spyre_file *sfile);
u32 spyre_max_cmds(void);
u32 spyre_max_job_descs(void);
u32 spyre_max_args(const struct spyre_device *sdev);

#endif /* SPYRE_DRV_H */
