// SPDX-License-Identifier: GPL-2.0-only
/*
 * Spyre DRM accel driver: module, PCI binding, DRM driver and ioctl table.
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <drm/drm_accel.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_print.h>
#include <uapi/drm/spyre_accel.h>

#include "spyre_debugfs.h"
#include "spyre_drv.h"
#include "spyre_gem.h"
#include "spyre_peer.h"
#include "spyre_queue.h"
#include "spyre_recovery.h"
#include "spyre_ring.h"
#include "spyre_submit.h"
#include "spyre_uq.h"
#include "spyre_vm.h"

/* Bound devices, so a new job timeout reaches every scheduler. */
static DEFINE_MUTEX(spyre_devices_lock);
static LIST_HEAD(spyre_devices);

unsigned int spyre_job_timeout_ms = 5000;

static int spyre_set_job_timeout(const char *val, const struct kernel_param *kp)
{
	struct spyre_device *sdev;
	unsigned int ms, i;
	int ret;

	ret = kstrtouint(val, 0, &ms);
	if (ret)
		return ret;
	if (ms < 10 || ms > 600000)
		return -EINVAL;

	mutex_lock(&spyre_devices_lock);
	spyre_job_timeout_ms = ms;
	/* Read by the scheduler each time it arms its timer. */
	list_for_each_entry(sdev, &spyre_devices, link)
		for (i = 0; i < sdev->num_rings; i++)
			WRITE_ONCE(sdev->rings[i].sched.timeout, msecs_to_jiffies(ms));
	mutex_unlock(&spyre_devices_lock);
	return 0;
}

static const struct kernel_param_ops spyre_job_timeout_ops = {
	.set = spyre_set_job_timeout,
	.get = param_get_uint,
};
module_param_cb(job_timeout_ms, &spyre_job_timeout_ops, &spyre_job_timeout_ms, 0644);
MODULE_PARM_DESC(job_timeout_ms,
		 "Time without progress after which a job counts as hung, 10..600000 ms (default 5000); takes effect at once");

unsigned int spyre_ring_order = 12;
module_param_named(ring_order, spyre_ring_order, uint, 0444);
MODULE_PARM_DESC(ring_order, "Descriptors per ring as a power of two (6..16, default 12)");

unsigned int spyre_kernel_rings = 4;
module_param_named(kernel_rings, spyre_kernel_rings, uint, 0444);
MODULE_PARM_DESC(kernel_rings,
		 "Rings for kernel queues (1..16, default 4); the card's other rings serve user-mode queues");

unsigned int spyre_file_mem_quota_mb;
module_param_named(file_mem_quota_mb, spyre_file_mem_quota_mb, uint, 0644);
MODULE_PARM_DESC(file_mem_quota_mb,
		 "Device memory one open file may hold in BOs, in MiB (0: no quota, the default); takes effect for new BOs");

unsigned int spyre_max_host_bo_mb = 1024;
module_param_named(max_host_bo_mb, spyre_max_host_bo_mb, uint, 0444);
MODULE_PARM_DESC(max_host_bo_mb,
		 "Largest host BO in MiB, capped at half of RAM (default 1024)");

/*
 * Commands one SUBMIT may carry: even a submit of only full launches (and
 * its FENCE) must fit in one ring, whatever ring_order is.
 */
u32 spyre_max_cmds(void)
{
	return min_t(u32, SPYRE_MAX_SUBMIT_CMDS,
		     ((1U << spyre_ring_order) - 1) / SPYRE_BUDGET_DESCS_PER_CMD);
}

/* Descriptors one SUBMIT's commands may take: what MAX_CMDS promises. */
u32 spyre_max_job_descs(void)
{
	return spyre_max_cmds() * SPYRE_BUDGET_DESCS_PER_CMD;
}

/* Argument slots of one launch: 64 from card interface 1.7, 16 before. */
u32 spyre_max_args(const struct spyre_device *sdev)
{
	return sdev->hw_version >= SPYRE_HW_VERSION(1, 7) ? SPYRE_MAX_ARGS : SPYRE_MAX_ARGS_V1_6;
}

static int spyre_get_param_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct spyre_device *sdev = to_spyre_device(drm);
	struct drm_spyre_get_param *args = data;
	int idx;

	if (args->pad)
		return -EINVAL;

	switch (args->param) {
	case DRM_SPYRE_PARAM_HW_VERSION:
		args->value = sdev->hw_version;
		break;
	case DRM_SPYRE_PARAM_NUM_CORES:
		args->value = sdev->num_cores;
		break;
	case DRM_SPYRE_PARAM_SCRATCHPAD_SIZE:
		args->value = (u64)sdev->scratchpad_kb * 1024;
		break;
	case DRM_SPYRE_PARAM_MEM_SIZE:
		args->value = sdev->mem_size;
		break;
	case DRM_SPYRE_PARAM_MEM_FREE:
		args->value = spyre_mem_free(sdev);
		break;
	case DRM_SPYRE_PARAM_CLOCK_MHZ:
		args->value = sdev->clock_mhz;
		break;
	case DRM_SPYRE_PARAM_NUM_RINGS:
		args->value = sdev->num_rings;
		break;
	case DRM_SPYRE_PARAM_COMPUTE_RINGS:
		args->value = 1;
		break;
	case DRM_SPYRE_PARAM_DMA_RINGS:
		args->value = max(sdev->num_rings - 1, 1U);
		break;
	case DRM_SPYRE_PARAM_RING_ENTRIES:
		args->value = 1U << spyre_ring_order;
		break;
	case DRM_SPYRE_PARAM_PCI_VENDOR:
		args->value = sdev->pdev->vendor;
		break;
	case DRM_SPYRE_PARAM_PCI_DEVICE:
		args->value = sdev->pdev->device;
		break;
	case DRM_SPYRE_PARAM_PCI_REVISION:
		args->value = sdev->pdev->revision;
		break;
	case DRM_SPYRE_PARAM_NUM_SEMS:
		args->value = sdev->num_sems;
		break;
	case DRM_SPYRE_PARAM_MAX_CMDS:
		args->value = spyre_max_cmds();
		break;
	case DRM_SPYRE_PARAM_MAX_SYNCS:
		args->value = SPYRE_MAX_SYNCS;
		break;
	case DRM_SPYRE_PARAM_MAX_ARGS:
		args->value = spyre_max_args(sdev);
		break;
	case DRM_SPYRE_PARAM_MAX_QUEUES:
		args->value = SPYRE_MAX_QUEUES;
		break;
	case DRM_SPYRE_PARAM_MAX_HOST_BO_SIZE:
		args->value = spyre_max_host_bo_size();
		break;
	case DRM_SPYRE_PARAM_DEVICE_TIME_NS:
		if (!drm_dev_enter(drm, &idx))
			return -ENODEV;
		args->value = spyre_device_time_ns(sdev);
		drm_dev_exit(idx);
		break;
	case DRM_SPYRE_PARAM_RESET_COUNT:
		args->value = atomic_read(&sdev->reset_count);
		break;
	case DRM_SPYRE_PARAM_USER_QUEUES:
		args->value = sdev->num_uq_slots;
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

static int spyre_open(struct drm_device *drm, struct drm_file *file)
{
	struct spyre_file *sfile;

	sfile = kzalloc(sizeof(*sfile), GFP_KERNEL);
	if (!sfile)
		return -ENOMEM;
	kref_init(&sfile->ref);
	sfile->sdev = to_spyre_device(drm);
	sfile->drm_client_id = file->client_id;
	xa_init_flags(&sfile->queues, XA_FLAGS_ALLOC1);
	mutex_init(&sfile->vm_lock);
	xa_init_flags(&sfile->uqs, XA_FLAGS_ALLOC1);
	file->driver_priv = sfile;
	return 0;
}

static void spyre_file_release(struct kref *ref)
{
	struct spyre_file *sfile = container_of(ref, struct spyre_file, ref);

	mutex_destroy(&sfile->vm_lock);
	kfree(sfile);
}

void spyre_file_put(struct spyre_file *sfile)
{
	kref_put(&sfile->ref, spyre_file_release);
}

static void spyre_postclose(struct drm_device *drm, struct drm_file *file)
{
	struct spyre_file *sfile = file->driver_priv;

	spyre_queues_destroy_all(sfile);
	spyre_uq_destroy_all(sfile);
	xa_destroy(&sfile->uqs);
	spyre_vm_destroy(sfile);
	xa_destroy(&sfile->queues);
	spyre_file_put(sfile);
}

static void spyre_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct spyre_file *sfile = file->driver_priv;
	struct drm_memory_stats stats[2] = {};
	struct drm_gem_object *obj;
	struct spyre_bo *bo;
	int id;

	spyre_uq_account_file(sfile);	/* user queues' work: see spyre_uq.c */
	drm_printf(p, "drm-engine-compute:\t%llu ns\n",
		   (u64)atomic64_read(&sfile->engine_ns[DRM_SPYRE_ENGINE_COMPUTE]));
	drm_printf(p, "drm-engine-dma:\t%llu ns\n",
		   (u64)atomic64_read(&sfile->engine_ns[DRM_SPYRE_ENGINE_DMA]));

	spin_lock(&file->table_lock);
	idr_for_each_entry(&file->object_idr, obj, id) {
		struct drm_memory_stats *s;

		bo = to_spyre_bo(obj);
		if (bo->placement == DRM_SPYRE_PLACEMENT_PEER)
			continue;	/* another card's memory */
		s = &stats[bo->placement == DRM_SPYRE_PLACEMENT_HOST];
		s->private += obj->handle_count > 1 ? 0 : obj->size;
		s->shared += obj->handle_count > 1 ? obj->size : 0;
		s->resident += obj->size;
		if (!dma_resv_test_signaled(obj->resv, DMA_RESV_USAGE_BOOKKEEP))
			s->active += obj->size;
	}
	spin_unlock(&file->table_lock);
	drm_print_memory_stats(p, &stats[0], DRM_GEM_OBJECT_RESIDENT, "device");
	drm_print_memory_stats(p, &stats[1], DRM_GEM_OBJECT_RESIDENT, "host");
}

static const struct drm_ioctl_desc spyre_ioctls[] = {
	DRM_IOCTL_DEF_DRV(SPYRE_GET_PARAM, spyre_get_param_ioctl, 0),
	DRM_IOCTL_DEF_DRV(SPYRE_BO_CREATE, spyre_bo_create_ioctl, 0),
	DRM_IOCTL_DEF_DRV(SPYRE_BO_INFO, spyre_bo_info_ioctl, 0),
	DRM_IOCTL_DEF_DRV(SPYRE_BO_WAIT, spyre_bo_wait_ioctl, 0),
	DRM_IOCTL_DEF_DRV(SPYRE_QUEUE_CREATE, spyre_queue_create_ioctl, 0),
	DRM_IOCTL_DEF_DRV(SPYRE_QUEUE_DESTROY, spyre_queue_destroy_ioctl, 0),
	DRM_IOCTL_DEF_DRV(SPYRE_SUBMIT, spyre_submit_ioctl, 0),
	DRM_IOCTL_DEF_DRV(SPYRE_QUEUE_ERROR, spyre_queue_error_ioctl, 0),
	DRM_IOCTL_DEF_DRV(SPYRE_BO_USERPTR, spyre_bo_userptr_ioctl, 0),
	DRM_IOCTL_DEF_DRV(SPYRE_VM_BIND, spyre_vm_bind_ioctl, 0),
	DRM_IOCTL_DEF_DRV(SPYRE_UQ_CREATE, spyre_uq_create_ioctl, 0),
	DRM_IOCTL_DEF_DRV(SPYRE_UQ_DESTROY, spyre_uq_destroy_ioctl, 0),
	DRM_IOCTL_DEF_DRV(SPYRE_UQ_WAIT, spyre_uq_wait_ioctl, 0),
};

static const struct file_operations spyre_fops = {
	.owner = THIS_MODULE,
	/* DRM_ACCEL_FOPS, with an mmap that also maps user queues' doorbells */
	.open = accel_open,
	.release = drm_release,
	.unlocked_ioctl = drm_ioctl,
	.compat_ioctl = drm_compat_ioctl,
	.poll = drm_poll,
	.read = drm_read,
	.llseek = noop_llseek,
	.mmap = spyre_mmap,
	.fop_flags = FOP_UNSIGNED_OFFSET,
	.show_fdinfo = drm_show_fdinfo,
};

static const struct drm_driver spyre_drm_driver = {
	.driver_features = DRIVER_COMPUTE_ACCEL | DRIVER_GEM | DRIVER_SYNCOBJ |
			   DRIVER_SYNCOBJ_TIMELINE,
	.open = spyre_open,
	.postclose = spyre_postclose,
	.gem_create_object = spyre_gem_create_object,
	.gem_prime_import = spyre_gem_prime_import,
	.gem_prime_import_sg_table = spyre_gem_prime_import_sg_table,
	.show_fdinfo = spyre_show_fdinfo,
	.ioctls = spyre_ioctls,
	.num_ioctls = ARRAY_SIZE(spyre_ioctls),
	.fops = &spyre_fops,
	.name = SPYRE_DRIVER_NAME,
	.desc = SPYRE_DRIVER_DESC,
	.date = "20261204",
	.major = 1,
	/*
	 * 1: DRM_IOCTL_SPYRE_QUEUE_ERROR, 2: DRM_IOCTL_SPYRE_BO_USERPTR, 3: _VM_BIND,
	 * 4: user-mode queues (_UQ_*), COPY and LAUNCH in DRM_SPYRE_SUBMIT_VA jobs,
	 * 5: device BOs exported to other cards (DRM_SPYRE_PLACEMENT_PEER),
	 * 6: user-mode queues watched for hangs (_UQ_WAIT -ETIMEDOUT), an ended
	 * queue's doorbell page a sink, empty page tables freed at unmap,
	 * 7: user-mode queues in fdinfo and debugfs, 8: _UQ_WAIT's fault_addr
	 * from the queue's own ring record (card 1.15), not the card-wide latch
	 */
	.minor = 8,
};

/* --- sysfs: memory totals on the PCI device ------------------------------ */

static struct spyre_device *spyre_from_dev(struct device *dev)
{
	return pci_get_drvdata(to_pci_dev(dev));
}

static ssize_t mem_total_bytes_show(struct device *dev, struct device_attribute *attr,
				    char *buf)
{
	return sysfs_emit(buf, "%llu\n", spyre_from_dev(dev)->mem_size);
}
static DEVICE_ATTR_RO(mem_total_bytes);

static ssize_t mem_used_bytes_show(struct device *dev, struct device_attribute *attr,
				   char *buf)
{
	struct spyre_device *sdev = spyre_from_dev(dev);

	return sysfs_emit(buf, "%llu\n", sdev->mem_size - spyre_mem_free(sdev));
}
static DEVICE_ATTR_RO(mem_used_bytes);

static ssize_t host_mem_used_bytes_show(struct device *dev, struct device_attribute *attr,
					char *buf)
{
	return sysfs_emit(buf, "%lld\n",
			  (s64)atomic64_read(&spyre_from_dev(dev)->host_mem_used));
}
static DEVICE_ATTR_RO(host_mem_used_bytes);

static ssize_t reset_count_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&spyre_from_dev(dev)->reset_count));
}
static DEVICE_ATTR_RO(reset_count);

static struct attribute *spyre_attrs[] = {
	&dev_attr_mem_total_bytes.attr,
	&dev_attr_mem_used_bytes.attr,
	&dev_attr_host_mem_used_bytes.attr,
	&dev_attr_reset_count.attr,
	NULL,
};

static const struct attribute_group spyre_attr_group = {
	.attrs = spyre_attrs,
};

/* --- PCI ----------------------------------------------------------------- */

static int spyre_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct spyre_device *sdev;
	int ret;

	sdev = devm_drm_dev_alloc(&pdev->dev, &spyre_drm_driver, struct spyre_device, drm);
	if (IS_ERR(sdev))
		return PTR_ERR(sdev);
	sdev->pdev = pdev;
	pci_set_drvdata(pdev, sdev);

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	pci_set_master(pdev);
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;
	/*
	 * A host segment's length is a 64-bit field of the card's segment
	 * table: no limit below what the DMA layer can describe. Without
	 * this, the 64 KiB default makes every merged shmem segment a
	 * DMA-API violation.
	 */
	dma_set_max_seg_size(&pdev->dev, UINT_MAX);
	sdev->regs = pcim_iomap_region(pdev, SPYRE_BAR_REGS, SPYRE_DRIVER_NAME);
	if (IS_ERR(sdev->regs))
		return PTR_ERR(sdev->regs);

	ret = spyre_device_init(sdev);
	if (ret)
		return ret;
	spyre_debugfs_init(sdev);

	ret = devm_device_add_group(&pdev->dev, &spyre_attr_group);
	if (ret)
		goto err_fini;
	ret = drm_dev_register(&sdev->drm, 0);
	if (ret)
		goto err_fini;

	mutex_lock(&spyre_devices_lock);
	list_add_tail(&sdev->link, &spyre_devices);
	mutex_unlock(&spyre_devices_lock);

	drm_info(&sdev->drm, "Spyre card %u.%u: %u cores, %llu MiB, %u rings\n",
		 SPYRE_HW_VERSION_MAJOR_OF(sdev->hw_version),
		 SPYRE_HW_VERSION_MINOR_OF(sdev->hw_version), sdev->num_cores,
		 sdev->mem_size >> 20, sdev->num_rings);
	return 0;

err_fini:
	spyre_device_fini(sdev);
	return ret;
}

static void spyre_remove(struct pci_dev *pdev)
{
	struct spyre_device *sdev = pci_get_drvdata(pdev);

	mutex_lock(&spyre_devices_lock);
	list_del(&sdev->link);
	mutex_unlock(&spyre_devices_lock);

	/* Ioctls in flight finish first; new ones fail with -ENODEV. */
	drm_dev_unplug(&sdev->drm);
	spyre_device_fini(sdev);
	/* other cards' mappings of this card's memory, then its own of theirs */
	spyre_peer_revoke_exporter(sdev);
	spyre_peer_revoke_importer(sdev);
	/* BOs files still hold keep their pages, not the device's mappings */
	spyre_gem_release_dma(sdev);
}

/* Stops the card's DMA before a reboot or kexec hands memory to someone else. */
static void spyre_shutdown(struct pci_dev *pdev)
{
	struct spyre_device *sdev = pci_get_drvdata(pdev);

	if (sdev && sdev->regs)
		spyre_write(sdev, SPYRE_REG_CTRL, SPYRE_CTRL_RESET);
}

static const struct pci_device_id spyre_pci_ids[] = {
	{ PCI_DEVICE(SPYRE_PCI_VENDOR_ID, SPYRE_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, spyre_pci_ids);

static struct pci_driver spyre_pci_driver = {
	.name = SPYRE_DRIVER_NAME,
	.id_table = spyre_pci_ids,
	.probe = spyre_probe,
	.remove = spyre_remove,
	.shutdown = spyre_shutdown,
	.err_handler = &spyre_pci_err_handlers,
};

static int __init spyre_init(void)
{
	if (spyre_ring_order < 6 || spyre_ring_order > SPYRE_RING_MAX_LOG2 ||
	    !spyre_kernel_rings || spyre_kernel_rings > SPYRE_MAX_RINGS ||
	    !spyre_max_host_bo_mb)
		return -EINVAL;
	return pci_register_driver(&spyre_pci_driver);
}
module_init(spyre_init);

static void __exit spyre_exit(void)
{
	pci_unregister_driver(&spyre_pci_driver);
}
module_exit(spyre_exit);

MODULE_DESCRIPTION("DRM accel driver for the Spyre AI accelerator");
MODULE_AUTHOR("The Spyre stack authors");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(DMA_BUF);
