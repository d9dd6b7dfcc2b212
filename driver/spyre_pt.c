// SPDX-License-Identifier: GPL-2.0-only
/*
 * Spyre card MMU page tables (card interface 1.10).
 *
 * The tables live in device memory that only the driver owns: they are
 * not buffer objects, so no handle, mmap or context mapping reaches them.
 * They are allocated inside the BAR2 aperture and written by the CPU
 * through it, so a bind needs no ring and no job. Tables below the root
 * are created on first use; an unmap clears leaf entries and never
 * allocates. A table whose last entry it cleared goes too (else a process
 * whose BOs come and go at new addresses would pile up tables), but only
 * after the caller's TLB invalidation: until then the card may still walk
 * it, so its memory must not hold anyone else's data yet.
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#include <linux/io.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sizes.h>
#include <linux/gpu_buddy.h>

#include "spyre_device.h"
#include "spyre_pt.h"

#define SPYRE_PT_SIZE	SZ_4K

static unsigned int spyre_pt_index(u64 va, unsigned int level)
{
	return (va >> (12 + 9 * level)) & (SPYRE_PTE_PER_TABLE - 1);
}

static void spyre_pt_write(struct spyre_device *sdev, struct spyre_pt *pt, unsigned int idx,
			   u64 entry)
{
	writeq(entry, sdev->mem_bar + pt->addr + 8ull * idx);
}

static void spyre_pt_free(struct spyre_device *sdev, struct spyre_pt *pt)
{
	if (!list_empty(&pt->blocks)) {
		mutex_lock(&sdev->mm_lock);
		gpu_buddy_free_list(&sdev->mm, &pt->blocks, 0);
		sdev->mem_used -= SPYRE_PT_SIZE;
		mutex_unlock(&sdev->mm_lock);
	}
	kfree(pt->child);
	kfree(pt);
}

/* A zeroed table (every entry invalid); @level > 0 tables track children. */
static struct spyre_pt *spyre_pt_alloc(struct spyre_device *sdev, unsigned int level)
{
	u64 end = min(sdev->aperture, sdev->mem_size);
	struct spyre_pt *pt;
	int ret;

	pt = kzalloc(sizeof(*pt), GFP_KERNEL);
	if (!pt)
		return NULL;
	INIT_LIST_HEAD(&pt->blocks);
	if (level) {
		pt->child = kcalloc(SPYRE_PTE_PER_TABLE, sizeof(*pt->child), GFP_KERNEL);
		if (!pt->child)
			goto err;
	}

	/* The CPU writes tables through BAR2: they must lie in the aperture. */
	mutex_lock(&sdev->mm_lock);
	ret = gpu_buddy_alloc_blocks(&sdev->mm, 0, end, SPYRE_PT_SIZE, SPYRE_PT_SIZE,
				     &pt->blocks, GPU_BUDDY_RANGE_ALLOCATION);
	if (!ret)
		sdev->mem_used += SPYRE_PT_SIZE;
	mutex_unlock(&sdev->mm_lock);
	if (ret)
		goto err;
	pt->addr = gpu_buddy_block_offset(list_first_entry(&pt->blocks,
							   struct gpu_buddy_block, link));
	/* Device memory keeps what its last owner wrote: no stale entries. */
	memset_io(sdev->mem_bar + pt->addr, 0, SPYRE_PT_SIZE);
	return pt;

err:
	spyre_pt_free(sdev, pt);
	return NULL;
}

/* The caller holds drm_dev_enter(), since the table is cleared via BAR2. */
struct spyre_pt *spyre_pt_create(struct spyre_device *sdev)
{
	struct spyre_pt *root = spyre_pt_alloc(sdev, SPYRE_PTE_LEVELS - 1);

	/* Drain write-combining before the card may walk the root. */
	wmb();
	return root;
}

static void spyre_pt_destroy_level(struct spyre_device *sdev, struct spyre_pt *pt,
				   unsigned int level)
{
	unsigned int i;

	if (level)
		for (i = 0; i < SPYRE_PTE_PER_TABLE; i++)
			if (pt->child[i])
				spyre_pt_destroy_level(sdev, pt->child[i], level - 1);
	spyre_pt_free(sdev, pt);
}

/* The context must no longer use @root (its root register cleared). */
void spyre_pt_destroy(struct spyre_device *sdev, struct spyre_pt *root)
{
	if (root)
		spyre_pt_destroy_level(sdev, root, SPYRE_PTE_LEVELS - 1);
}

/*
 * The level-0 table covering @va, created with its parents if @alloc;
 * @path (if not NULL) gets the table of every level on the way.
 */
static struct spyre_pt *spyre_pt_leaf(struct spyre_device *sdev, struct spyre_pt *root,
				      u64 va, bool alloc, struct spyre_pt **path)
{
	struct spyre_pt *pt = root;
	unsigned int level, idx;

	for (level = SPYRE_PTE_LEVELS - 1; level > 0; level--) {
		if (path)
			path[level] = pt;
		idx = spyre_pt_index(va, level);
		if (!pt->child[idx]) {
			if (!alloc)
				return NULL;
			pt->child[idx] = spyre_pt_alloc(sdev, level - 1);
			if (!pt->child[idx])
				return ERR_PTR(-ENOMEM);
			/* A table entry: only VALID and the address. */
			spyre_pt_write(sdev, pt, idx, pt->child[idx]->addr | SPYRE_PTE_VALID);
			pt->used++;
		}
		pt = pt->child[idx];
	}
	if (path)
		path[0] = pt;
	return pt;
}

/*
 * Makes @va's 4 KiB page translate as leaf entry @pte. The entry was
 * invalid, so the card holds no TLB entry for it: no invalidation needed
 * (the caller issues wmb() before the card may use it).
 */
int spyre_pt_map_page(struct spyre_device *sdev, struct spyre_pt *root, u64 va, u64 pte)
{
	struct spyre_pt *leaf = spyre_pt_leaf(sdev, root, va, true, NULL);

	if (IS_ERR(leaf))
		return PTR_ERR(leaf);
	spyre_pt_write(sdev, leaf, spyre_pt_index(va, 0), pte);
	leaf->used++;
	return 0;
}

/*
 * Invalidates the leaf entries of @va..+@size, which were all mapped; the
 * tables left empty are unlinked from their parents (never the root) and
 * put on @dead. The caller flushes the TLB, then frees @dead with
 * spyre_pt_free_dead().
 */
void spyre_pt_unmap(struct spyre_device *sdev, struct spyre_pt *root, u64 va, u64 size,
		    struct list_head *dead)
{
	struct spyre_pt *path[SPYRE_PTE_LEVELS];
	struct spyre_pt *leaf;
	unsigned int level, idx;
	u64 end = va + size;

	while (va < end) {
		leaf = spyre_pt_leaf(sdev, root, va, false, path);
		if (leaf) {
			spyre_pt_write(sdev, leaf, spyre_pt_index(va, 0), 0);
			if (leaf->used)
				leaf->used--;
			/* Unlink each table the clear emptied, upwards. */
			for (level = 1; level < SPYRE_PTE_LEVELS && !path[level - 1]->used;
			     level++) {
				idx = spyre_pt_index(va, level);
				spyre_pt_write(sdev, path[level], idx, 0);
				path[level]->child[idx] = NULL;
				path[level]->used--;
				list_add_tail(&path[level - 1]->dead, dead);
			}
		}
		va += SPYRE_PT_SIZE;
		if (!(va & (SZ_2M - 1)))
			cond_resched();
	}
	/* Drain write-combining before the caller's TLB invalidation. */
	wmb();
}

/* Frees the tables spyre_pt_unmap() unlinked, once the TLB was invalidated. */
void spyre_pt_free_dead(struct spyre_device *sdev, struct list_head *dead)
{
	struct spyre_pt *pt, *next;

	list_for_each_entry_safe(pt, next, dead, dead) {
		list_del(&pt->dead);
		spyre_pt_free(sdev, pt);
	}
}
