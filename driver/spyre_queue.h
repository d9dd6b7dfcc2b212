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
#include <linux/spinlock.h>
#include <drm/gpu_scheduler.h>

struct drm_device;
struct drm_file;
struct spyre_device;
struct spyre_file;
struct spyre_job;
struct spyre_ring;

/**
 * struct spyre_fault - where on the card a failed launch stopped
 * @flags: DRM_SPYRE_FAULT_* saying which fields below are valid
 * @insn: instruction index in the program
 * @core: the core that executed it
 * @addr: the address its failing access started at
 */
struct spyre_fault {
	u32 flags;
	u32 insn;
	u32 core;
	u64 addr;
};

/**
 * struct spyre_queue_failure - the first failed job of a queue
 * @error: negative errno its fence carries; 0: no job failed
 * @job: its number on the queue (spyre_job.queue_seq)
 * @point: the point of its first out-sync
 * @failed: jobs that failed since the record was cleared
 * @fault: where the card says the job's launch stopped
 */
struct spyre_queue_failure {
	int error;
	u64 job;
	u64 point;
	u64 failed;
	struct spyre_fault fault;
};

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
 * @failure_lock: protects @failure (taken inside a ring's lock)
 * @failure: the first failed job since DRM_IOCTL_SPYRE_QUEUE_ERROR last
 *	cleared it
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
	spinlock_t failure_lock; /* @failure */
	struct spyre_queue_failure failure;
};

struct spyre_queue *spyre_queue_lookup(struct spyre_file *sfile, u32 id);
void spyre_queue_put(struct spyre_queue *queue);
void spyre_queues_destroy_all(struct spyre_file *sfile);
int spyre_kernel_queue_init(struct spyre_device *sdev);
void spyre_kernel_queue_fini(struct spyre_device *sdev);
int spyre_queue_create_ioctl(struct drm_device *drm, void *data, struct drm_file *file);
int spyre_queue_destroy_ioctl(struct drm_device *drm, void *data, struct drm_file *file);
int spyre_queue_error_ioctl(struct drm_device *drm, void *data, struct drm_file *file);
void spyre_queue_note_failure(struct spyre_job *job, int error);

#endif /* SPYRE_QUEUE_H */
