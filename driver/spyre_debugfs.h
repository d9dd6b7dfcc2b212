/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Spyre debugfs.
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#ifndef SPYRE_DEBUGFS_H
#define SPYRE_DEBUGFS_H

struct spyre_device;

void spyre_debugfs_init(struct spyre_device *sdev);

#endif /* SPYRE_DEBUGFS_H */
