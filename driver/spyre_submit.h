/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Spyre SUBMIT: checks a submission and turns it into a job.
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#ifndef SPYRE_SUBMIT_H
#define SPYRE_SUBMIT_H

struct drm_device;
struct drm_file;

int spyre_submit_ioctl(struct drm_device *drm, void *data, struct drm_file *file);

#endif /* SPYRE_SUBMIT_H */
