/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Spyre peer BOs: device BOs of one card used by another card's DMA.
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#ifndef SPYRE_PEER_H
#define SPYRE_PEER_H

#include <linux/types.h>

struct dma_buf;
struct drm_device;
struct drm_gem_object;
struct spyre_device;
struct spyre_job;

struct dma_buf *spyre_peer_export(struct drm_gem_object *obj, int flags);
bool spyre_peer_is_ours(const struct dma_buf *dma_buf);
struct drm_gem_object *spyre_peer_import(struct drm_device *drm, struct dma_buf *dma_buf);
void spyre_peer_revoke_exporter(struct spyre_device *exp);
void spyre_peer_revoke_importer(struct spyre_device *imp);
bool spyre_peer_job_revoked(const struct spyre_job *job);

#endif /* SPYRE_PEER_H */
