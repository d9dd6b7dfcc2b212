/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Spyre user queues: one scheduler entity on one ring each.
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#ifndef SPYRE_QUEUE_H
#define SPYRE_QUEUE_H

#include <linux/kref.h>
#include <linux/mutex.h>
#include <drm/gpu_scheduler.h>

struct drm_device;
struct drm_file;
struct spyre_device;
struct spyre_file;
struct spyre_ring;

/**
 * struct spyre_queue - a user queue: one scheduler entity on one ring
 * @ref: held by the file's queue table and by every job of the queue
 * @id: ID in the file's queue table
 * @engine: enum drm_spyre_engine
 * @priority: enum drm_spyre_priority
 * @sfile: owning file (reference)
 * @ring: ring the queue feeds
 * @entity: the scheduler entity; its FIFO gives stream order
 * @submit_lock: makes job arm and push atomic, so jobs keep submit order
 * @last_scheduled: scheduled fence of the last pushed job (under
 *	@submit_lock), to wait for before tearing the entity down
 * @banned: one of the queue's jobs hung; no more submissions
 * @kernel: the driver's own queue (no file, never banned)
 * @destroyed: torn down; set under @submit_lock so no job can follow
 * @jobs_submitted: jobs pushed to the queue
 */
struct spyre_queue {
	struct kref ref;
	u32 id;
	u32 engine;
	u32 priority;
	struct spyre_file *sfile;
	struct spyre_ring *ring;
	struct drm_sched_entity entity;
	struct mutex submit_lock; /* job arm + push, last_scheduled */
	struct dma_fence *last_scheduled;
	bool banned;
	bool kernel;
	bool destroyed;
	atomic64_t jobs_submitted;
};

struct spyre_queue *spyre_queue_lookup(struct spyre_file *sfile, u32 id);
void spyre_queue_put(struct spyre_queue *queue);
void spyre_queues_destroy_all(struct spyre_file *sfile);
int spyre_kernel_queue_init(struct spyre_device *sdev);
void spyre_kernel_queue_fini(struct spyre_device *sdev);
int spyre_queue_create_ioctl(struct drm_device *drm, void *data, struct drm_file *file);
int spyre_queue_destroy_ioctl(struct drm_device *drm, void *data, struct drm_file *file);

#endif /* SPYRE_QUEUE_H */
