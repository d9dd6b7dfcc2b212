/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Spyre user-mode queues: hardware rings a process feeds itself, in its
 * card address space, through a doorbell page of BAR4.
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#ifndef SPYRE_UQ_H
#define SPYRE_UQ_H

#include <linux/spinlock.h>
#include <linux/wait.h>

struct drm_device;
struct drm_file;
struct file;
struct seq_file;
struct vm_area_struct;
struct spyre_device;
struct spyre_file;
struct spyre_uq;

/**
 * struct spyre_uq_slot - a hardware ring reserved for user-mode queues
 * @wq: woken by the ring's interrupt and by card errors
 * @uq: the queue on the ring, or NULL (under &spyre_device.uq_lock)
 * @hw: the ring's index on the card
 * @irq: its interrupt
 * @irq_ok: the interrupt was requested
 */
struct spyre_uq_slot {
	wait_queue_head_t wq;
	struct spyre_uq *uq;
	u32 hw;
	int irq;
	bool irq_ok;
};

int spyre_uq_init(struct spyre_device *sdev);
void spyre_uq_fini(struct spyre_device *sdev);
void spyre_uq_wake_all(struct spyre_device *sdev);
void spyre_uq_card_reset(struct spyre_device *sdev);
void spyre_uq_destroy_all(struct spyre_file *sfile);
void spyre_uq_account_file(struct spyre_file *sfile);
void spyre_uq_debugfs_show(struct seq_file *m, struct spyre_file *sfile);
int spyre_uq_create_ioctl(struct drm_device *drm, void *data, struct drm_file *file);
int spyre_uq_destroy_ioctl(struct drm_device *drm, void *data, struct drm_file *file);
int spyre_uq_wait_ioctl(struct drm_device *drm, void *data, struct drm_file *file);
int spyre_mmap(struct file *filp, struct vm_area_struct *vma);

#endif /* SPYRE_UQ_H */
