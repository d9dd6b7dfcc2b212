/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Spyre recovery: ring and card resets, timeouts, PCI resets and errors
 * (see spyre_recovery.c).
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#ifndef SPYRE_RECOVERY_H
#define SPYRE_RECOVERY_H

#include <linux/types.h>
#include <drm/gpu_scheduler.h>

struct pci_error_handlers;
struct spyre_device;
struct spyre_job;

/**
 * enum spyre_reset_scope - what a recovery resets
 * @SPYRE_RESET_NONE: nothing; the schedulers are stopped and restarted
 * @SPYRE_RESET_RING: the rings of the recovery
 * @SPYRE_RESET_CARD: the whole card (every ring)
 */
enum spyre_reset_scope {
	SPYRE_RESET_NONE,
	SPYRE_RESET_RING,
	SPYRE_RESET_CARD,
};

/**
 * struct spyre_recovery - what a recovery resets and whom it blames
 * @rings: BIT(index) of each ring stopped and restarted
 * @scope: enum spyre_reset_scope
 * @bad: the job whose timeout started the recovery, or NULL
 * @guilty: the job to fail with @guilty_error, or NULL
 * @guilty_error: its error
 * @ban: ban @guilty's queue: its later submits and its other jobs on the
 *	rings fail with -ECANCELED
 * @other_error: error of every other job that was on the rings; 0 writes
 *	them again to the reset rings
 */
struct spyre_recovery {
	u32 rings;
	enum spyre_reset_scope scope;
	struct spyre_job *bad;
	struct spyre_job *guilty;
	int guilty_error;
	bool ban;
	int other_error;
};

/* Shortest time without progress that counts as a hang, whatever the timeout. */
#define SPYRE_MIN_HANG_MS	1000
/* How much longer a ring may sit still while the rest of the card works. */
#define SPYRE_MAX_STALLS	6

extern const struct pci_error_handlers spyre_pci_err_handlers;

void spyre_recovery_init(struct spyre_device *sdev);
void spyre_reset_begin_locked(struct spyre_device *sdev, u32 rings, struct spyre_job *bad);
void spyre_reset_done_locked(struct spyre_device *sdev, const struct spyre_recovery *rec);
void spyre_recover_locked(struct spyre_device *sdev, const struct spyre_recovery *rec);
enum drm_gpu_sched_stat spyre_job_timedout(struct drm_sched_job *sched_job);
void spyre_schedule_card_reset(struct spyre_device *sdev);

#endif /* SPYRE_RECOVERY_H */
