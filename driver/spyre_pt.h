/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Spyre card MMU page tables: four levels of 4 KiB tables in device memory.
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#ifndef SPYRE_PT_H
#define SPYRE_PT_H

#include <linux/list.h>
#include <linux/types.h>

struct spyre_device;

/**
 * struct spyre_pt - one table: its device memory and the tables below it
 * @addr: device address of the table (inside the BAR2 aperture)
 * @blocks: the buddy block holding it
 * @child: levels 3..1: the next-level tables by index; NULL at level 0
 * @used: valid entries in the table; an unmap frees a table it empties
 * @dead: link in the list of emptied tables freed after the TLB flush
 */
struct spyre_pt {
	u64 addr;
	struct list_head blocks;
	struct spyre_pt **child;
	u32 used;
	struct list_head dead;
};

struct spyre_pt *spyre_pt_create(struct spyre_device *sdev);
void spyre_pt_destroy(struct spyre_device *sdev, struct spyre_pt *root);
int spyre_pt_map_page(struct spyre_device *sdev, struct spyre_pt *root, u64 va, u64 pte);
void spyre_pt_unmap(struct spyre_device *sdev, struct spyre_pt *root, u64 va, u64 size,
		    struct list_head *dead);
void spyre_pt_free_dead(struct spyre_device *sdev, struct list_head *dead);

#endif /* SPYRE_PT_H */
