// SPDX-License-Identifier: GPL-2.0-only
/*
 * Spyre debugfs: state for humans and hooks for tests, under
 * /sys/kernel/debug/accel/<pci-id>/.
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <drm/drm_buddy.h>
#include <drm/drm_debugfs.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_print.h>
#include <uapi/drm/spyre_accel.h>

#include "spyre_debugfs.h"
#include "spyre_drv.h"
#include "spyre_gem.h"
#include "spyre_job.h"
#include "spyre_queue.h"
#include "spyre_recovery.h"
#include "spyre_ring.h"
#include "spyre_uq.h"

static const char * const spyre_engine_names[SPYRE_NUM_ENGINES] = {
	[DRM_SPYRE_ENGINE_COMPUTE] = "compute",
	[DRM_SPYRE_ENGINE_DMA] = "dma",
};

/* The device of a file of the drm_debugfs_add_files() list. */
static struct spyre_device *seq_to_spyre(struct seq_file *m)
{
	struct drm_debugfs_entry *entry = m->private;

	return to_spyre_device(entry->dev);
}

static int spyre_bos_show(struct seq_file *m, void *unused)
{
	struct spyre_device *sdev = seq_to_spyre(m);
	struct spyre_bo *bo;

	seq_printf(m, "%-8s %-12s %-18s %-8s %-6s %s\n",
		   "pid", "size", "address", "place", "refs", "busy");
	mutex_lock(&sdev->bo_lock);
	list_for_each_entry(bo, &sdev->bo_list, link) {
		struct drm_gem_object *obj = &bo->shmem.base;
		bool host = bo->placement == DRM_SPYRE_PLACEMENT_HOST;
		bool peer = bo->placement == DRM_SPYRE_PLACEMENT_PEER;
		const char *place = peer ? "peer" : !host ? "device" :
				    obj->import_attach ? "import" : "host";
		bool idle = dma_resv_test_signaled(obj->resv, DMA_RESV_USAGE_BOOKKEEP);
		u64 addr = host ? 0 : peer ? (u64)bo->peer_dma : bo->dev_addr;

		seq_printf(m, "%-8d %-12zu %#-18llx %-8s %-6u %s\n", bo->owner_pid, obj->size,
			   addr, place, kref_read(&obj->refcount), idle ? "no" : "yes");
	}
	mutex_unlock(&sdev->bo_lock);
	return 0;
}

static int spyre_bo_count_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "%d\n", atomic_read(&seq_to_spyre(m)->bo_count));
	return 0;
}

static int spyre_mem_show(struct seq_file *m, void *unused)
{
	struct spyre_device *sdev = seq_to_spyre(m);
	struct drm_printer p = drm_seq_file_printer(m);

	seq_printf(m, "device total %llu free %llu\nhost used %lld\n", sdev->mem_size,
		   spyre_mem_free(sdev), (s64)atomic64_read(&sdev->host_mem_used));
	mutex_lock(&sdev->mm_lock);
	drm_buddy_print(&sdev->mm, &p);
	mutex_unlock(&sdev->mm_lock);
	return 0;
}

static int spyre_rings_show(struct seq_file *m, void *unused)
{
	struct spyre_device *sdev = seq_to_spyre(m);
	unsigned int i;
	int idx;

	if (!drm_dev_enter(&sdev->drm, &idx))
		return -ENODEV;
	for (i = 0; i < sdev->num_rings; i++) {
		struct spyre_ring *ring = &sdev->rings[i];
		struct spyre_job *job;
		unsigned long flags;

		seq_printf(m, "%s: engine %s entries %u queues %d\n", ring->name,
			   spyre_engine_names[ring->engine], ring->entries,
			   atomic_read(&ring->queues));
		seq_printf(m, "  hw: status %#x error %u head %u tail %u\n",
			   spyre_ring_read(ring, SPYRE_RING_STATUS),
			   spyre_ring_read(ring, SPYRE_RING_ERROR),
			   spyre_ring_read(ring, SPYRE_RING_HEAD),
			   spyre_ring_read(ring, SPYRE_RING_TAIL));
		spin_lock_irqsave(&ring->lock, flags);
		seq_printf(m, "  sw: tail %u seqno %llu completed %llu done %lld failed %lld resets %d\n",
			   ring->tail, ring->seqno, le64_to_cpu(ring->wb->completed_seqno),
			   (s64)atomic64_read(&ring->jobs_done),
			   (s64)atomic64_read(&ring->jobs_failed), atomic_read(&ring->resets));
		list_for_each_entry(job, &ring->pending, link)
			seq_printf(m, "  pending: seqno %llu queue %u descs %u\n",
				   job->seqno, job->queue->id, job->ndescs);
		spin_unlock_irqrestore(&ring->lock, flags);
	}
	seq_printf(m, "card: status %#x err_status %#x fault %#x resets %d\n",
		   spyre_read(sdev, SPYRE_REG_STATUS), spyre_read(sdev, SPYRE_REG_ERR_STATUS),
		   spyre_read(sdev, SPYRE_REG_FAULT), atomic_read(&sdev->reset_count));
	drm_dev_exit(idx);
	return 0;
}

/* Hardware fences not signalled yet, oldest first per ring. */
static int spyre_fences_show(struct seq_file *m, void *unused)
{
	struct spyre_device *sdev = seq_to_spyre(m);
	unsigned int i;

	seq_printf(m, "%-12s %-8s %-6s %-8s %-6s %-10s %s\n",
		   "ring", "seqno", "queue", "client", "descs", "age_ms", "state");
	for (i = 0; i < sdev->num_rings; i++) {
		struct spyre_ring *ring = &sdev->rings[i];
		struct spyre_job *job;
		unsigned long flags;

		spin_lock_irqsave(&ring->lock, flags);
		list_for_each_entry(job, &ring->pending, link) {
			struct spyre_queue *queue = job->queue;

			seq_printf(m, "%-12s %-8llu %-6u %-8llu %-6u %-10u %s\n", ring->name,
				   job->seqno, queue->id,
				   queue->sfile ? queue->sfile->drm_client_id : 0, job->ndescs,
				   jiffies_to_msecs(jiffies - job->emit_time),
				   job->cancelled ? "cancelled" : "running");
		}
		spin_unlock_irqrestore(&ring->lock, flags);
	}
	return 0;
}

static int spyre_queues_show(struct seq_file *m, void *unused)
{
	struct drm_device *drm = &seq_to_spyre(m)->drm;
	struct drm_file *file;

	mutex_lock(&drm->filelist_mutex);
	list_for_each_entry(file, &drm->filelist, lhead) {
		struct spyre_file *sfile = file->driver_priv;
		struct spyre_queue *queue;
		unsigned long id;

		spyre_uq_account_file(sfile);
		seq_printf(m, "client %llu: jobs done %lld, compute %lld ns, dma %lld ns\n",
			   file->client_id, (s64)atomic64_read(&sfile->jobs_done),
			   (s64)atomic64_read(&sfile->engine_ns[DRM_SPYRE_ENGINE_COMPUTE]),
			   (s64)atomic64_read(&sfile->engine_ns[DRM_SPYRE_ENGINE_DMA]));
		xa_lock(&sfile->queues);
		xa_for_each(&sfile->queues, id, queue)
			seq_printf(m, "  queue %u: %s prio %u %s submitted %lld%s\n", queue->id,
				   spyre_engine_names[queue->engine], queue->priority,
				   queue->ring->name, (s64)atomic64_read(&queue->jobs_submitted),
				   READ_ONCE(queue->banned) ? " BANNED" : "");
		xa_unlock(&sfile->queues);
		spyre_uq_debugfs_show(m, sfile);
	}
	mutex_unlock(&drm->filelist_mutex);
	return 0;
}

static const struct drm_debugfs_info spyre_debugfs_list[] = {
	{ "bos", spyre_bos_show, 0 },
	{ "bo_count", spyre_bo_count_show, 0 },
	{ "memory", spyre_mem_show, 0 },
	{ "rings", spyre_rings_show, 0 },
	{ "queues", spyre_queues_show, 0 },
	{ "fences", spyre_fences_show, 0 },
};

/* Writing anything resets the card now and waits for the reset to finish. */
static int spyre_reset_set(void *data, u64 val)
{
	struct spyre_device *sdev = data;

	spyre_schedule_card_reset(sdev);
	flush_work(&sdev->reset_work);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(spyre_reset_fops, NULL, spyre_reset_set, "%llu\n");

/* Raw access to SPYRE_REG_FAULT, so tests can arm the card's faults. */
static int spyre_fault_get(void *data, u64 *val)
{
	struct spyre_device *sdev = data;
	int idx;

	if (!drm_dev_enter(&sdev->drm, &idx))
		return -ENODEV;
	*val = spyre_read(sdev, SPYRE_REG_FAULT);
	drm_dev_exit(idx);
	return 0;
}

static int spyre_fault_set(void *data, u64 val)
{
	struct spyre_device *sdev = data;
	int idx;

	if (val > U32_MAX)
		return -EINVAL;
	if (!drm_dev_enter(&sdev->drm, &idx))
		return -ENODEV;
	spyre_write(sdev, SPYRE_REG_FAULT, val);
	drm_dev_exit(idx);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(spyre_fault_fops, spyre_fault_get, spyre_fault_set, "%#llx\n");

void spyre_debugfs_init(struct spyre_device *sdev)
{
	struct dentry *root = sdev->drm.debugfs_root;

	drm_debugfs_add_files(&sdev->drm, spyre_debugfs_list, ARRAY_SIZE(spyre_debugfs_list));
	debugfs_create_file("reset", 0200, root, sdev, &spyre_reset_fops);
	debugfs_create_file("fault", 0600, root, sdev, &spyre_fault_fops);
}
