/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Spyre dependencies between the rings of one card, resolved by the card's
 * semaphores in device time (see spyre_sem.c).
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#ifndef SPYRE_SEM_H
#define SPYRE_SEM_H

#include <linux/types.h>

struct dma_fence;
struct drm_sched_fence;
struct spyre_device;
union spyre_hw_desc;
struct spyre_job;
struct spyre_ring;

/* Dependencies one job can hand to the card; more are waited for by the host. */
#define SPYRE_SEM_MAX_DEPS	16

/**
 * struct spyre_sem_dep - an in-fence that is a job of this card
 * @sched: the job's scheduler fence (holds a reference on its finished fence)
 * @hw: the job's hardware fence (reference) once it reached its ring, else NULL
 */
struct spyre_sem_dep {
	struct drm_sched_fence *sched;
	struct dma_fence *hw;
};

bool spyre_sem_supported(struct spyre_device *sdev);
u32 spyre_sem_lead_slots(struct spyre_device *sdev);
int spyre_sem_add_dependency(struct spyre_job *job, struct dma_fence *fence);
void spyre_sem_job_free(struct spyre_job *job);
int spyre_sem_prepare(struct spyre_job *job);
void spyre_sem_mark_fence(struct spyre_ring *ring, struct spyre_job *job,
			  union spyre_hw_desc *fence);
int spyre_sem_dep_error(struct spyre_job *job);
void spyre_sem_reap_deps(struct spyre_ring *ring);
bool spyre_sem_job_blocked(struct spyre_job *job);
u64 spyre_sem_plan_release_locked(struct spyre_ring *ring);
void spyre_sem_release_locked(struct spyre_ring *ring, u64 value);

#endif /* SPYRE_SEM_H */
