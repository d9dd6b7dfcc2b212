// SPDX-License-Identifier: MIT
/*
 * The "drm" backend: the driver's ioctls on /dev/accel/accelN through
 * libdrm. libdrm has no accel enumeration, so cards are found in
 * /sys/class/accel by their driver's name.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/sync_file.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xf86drm.h>

#include "backend_drm.h"

#define SYSFS_ACCEL "/sys/class/accel"

/* True when /sys/class/accel/@name is bound to the spyre driver. */
static bool is_spyre(const char *name)
{
	char link[PATH_MAX], target[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), SYSFS_ACCEL "/%s/device/driver", name);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = 0;
	return !strcmp(strrchr(target, '/') ? strrchr(target, '/') + 1 : target, "spyre");
}

static int cmp_minor(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Minors of spyre accel nodes, ascending; returns the count or -errno. */
static int list_minors(int *minors, int max)
{
	DIR *d = opendir(SYSFS_ACCEL);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		int minor;

		if (sscanf(e->d_name, "accel%d", &minor) != 1 || !is_spyre(e->d_name))
			continue;
		if (n < max)
			minors[n++] = minor;
	}
	closedir(d);
	qsort(minors, n, sizeof(int), cmp_minor);
	return n;
}

int spy_drm_count(int *count)
{
	int minors[64];
	int n = list_minors(minors, 64);

	if (n == -ENOENT)
		n = 0;	/* no accel class at all: no cards */
	if (n < 0)
		return spy_err(n, "spyre_device_count: cannot read " SYSFS_ACCEL);
	*count = n;
	return 0;
}

int spy_drm_path_of_index(int index, char *path, size_t len)
{
	int minors[64];
	int n = list_minors(minors, 64);

	if (n == -ENOENT || n == 0)
		return spy_err(-ENODEV, "no Spyre card found: " SYSFS_ACCEL
				" has no spyre devices; is the module loaded?");
	if (n < 0)
		return spy_err(n, "spyre_device_open: cannot read " SYSFS_ACCEL);
	if (index < 0 || index >= n)
		return spy_err(-ENODEV, "spyre_device_open: card index %d out of range (%d Spyre "
				"card%s found)", index, n, n == 1 ? "" : "s");
	snprintf(path, len, "/dev/accel/accel%d", minors[index]);
	return 0;
}

int spy_drm_ioctl(spyre_device *dev, unsigned long req, void *arg)
{
	spy_stat_add(&dev->stat_ioctls, 1);
	if (drmIoctl(dev->fd, req, arg))
		return -errno;
	return 0;
}

#define xioctl spy_drm_ioctl

int spy_drm_get_param(spyre_device *dev, uint32_t param, uint64_t *value)
{
	struct drm_spyre_get_param gp = { .param = param };
	int ret = xioctl(dev, DRM_IOCTL_SPYRE_GET_PARAM, &gp);

	if (!ret)
		*value = gp.value;
	return ret;
}

int spy_drm_bo_create(spyre_device *dev, uint64_t size, uint32_t placement, uint32_t *handle)
{
	struct drm_spyre_bo_create bc = { .size = size, .placement = placement };
	int ret = xioctl(dev, DRM_IOCTL_SPYRE_BO_CREATE, &bc);

	if (!ret)
		*handle = bc.handle;
	return ret;
}

int spy_drm_bo_info(spyre_device *dev, struct drm_spyre_bo_info *info)
{
	return xioctl(dev, DRM_IOCTL_SPYRE_BO_INFO, info);
}

int spy_drm_bo_map(spyre_device *dev, uint32_t handle, uint64_t size, void **ptr)
{
	struct drm_spyre_bo_info info = { .handle = handle };
	void *p;
	int ret = spy_drm_bo_info(dev, &info);

	if (ret)
		return ret;
	if (!(info.bo_flags & DRM_SPYRE_BO_MAPPABLE))
		return -EINVAL;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, dev->fd, info.mmap_offset);
	if (p == MAP_FAILED)
		return -errno;
	*ptr = p;
	return 0;
}

int spy_drm_bo_unmap(spyre_device *dev, uint32_t handle, void *ptr, uint64_t size)
{
	(void)dev;
	(void)handle;
	return munmap(ptr, size) ? -errno : 0;
}

int spy_drm_gem_close(spyre_device *dev, uint32_t handle)
{
	struct drm_gem_close gc = { .handle = handle };

	return xioctl(dev, DRM_IOCTL_GEM_CLOSE, &gc);
}

/* ---- the file's card address space (driver 1.3) ---- */

int spy_drm_vm_map(spyre_device *dev, uint32_t handle, uint64_t va, uint64_t size, uint32_t flags)
{
	struct drm_spyre_vm_bind b = {
		.op = DRM_SPYRE_VM_BIND_OP_MAP, .flags = flags, .handle = handle,
		.addr = va, .range = size,
	};

	return xioctl(dev, DRM_IOCTL_SPYRE_VM_BIND, &b);
}

int spy_drm_vm_unmap(spyre_device *dev, uint64_t va, uint64_t size)
{
	struct drm_spyre_vm_bind b = { .op = DRM_SPYRE_VM_BIND_OP_UNMAP, .addr = va, .range = size };

	return xioctl(dev, DRM_IOCTL_SPYRE_VM_BIND, &b);
}

const struct drm_va_ent *spy_drm_va_of(struct drm_priv *priv, uint32_t handle)
{
	return handle < priv->nva && priv->va[handle].va ? &priv->va[handle] : NULL;
}

/*
 * With user-mode queues every BO is mapped at its library address (the
 * low 48 bits), so spyre_bo_addr is the card VA and a ring entry can use
 * it. On the kernel's queues nothing is mapped yet: the page tables
 * would count against the file's device memory for no use.
 * Device BOs are executable: programs are device BOs of the same
 * allocator, and a process's programs reach only its own mappings anyway.
 * The first failure to bind (no free MMU context, an old card) leaves the
 * file without an address space: the kernel queues work without one.
 */
int spy_drm_bo_bind(spyre_bo *bo)
{
	spyre_device *dev = bo->dev;
	struct drm_priv *priv = dev->priv;
	uint64_t va = SPY_CARD_VA(bo->addr);
	int ret;

	if (!priv->uq || !priv->has_vm || priv->vm_failed)
		return 0;	/* the kernel's queues resolve handles themselves */
	if (bo->mem == SPYRE_MEM_PEER)
		return 0;	/* VM_BIND refuses another card's memory: its copies
				 * go through a kernel queue (backend_drm_uq.c) */
	ret = spy_drm_vm_map(dev, bo->handle, va, bo->size,
			     bo->mem == SPYRE_MEM_DEVICE ? DRM_SPYRE_VM_BIND_EXEC : 0);
	if (ret) {
		if (priv->uq)
			return ret;	/* the user queues need every BO mapped */
		priv->vm_failed = true;
		return 0;
	}
	pthread_mutex_lock(&priv->lock);
	if (bo->handle >= priv->nva) {
		uint32_t n = priv->nva ? priv->nva : 64;
		struct drm_va_ent *v;

		while (n <= bo->handle)
			n *= 2;
		v = realloc(priv->va, n * sizeof(*v));
		if (!v) {
			pthread_mutex_unlock(&priv->lock);
			spy_drm_vm_unmap(dev, va, bo->size);
			return -ENOMEM;
		}
		memset(v + priv->nva, 0, (n - priv->nva) * sizeof(*v));
		priv->va = v;
		priv->nva = n;
	}
	priv->va[bo->handle] = (struct drm_va_ent){ va, bo->size, bo->mem == SPYRE_MEM_HOST };
	pthread_mutex_unlock(&priv->lock);
	return 0;
}

/* Unmap a bound handle (its jobs on the kernel queues hold the BO itself). */
static void drm_bo_unbind(spyre_device *dev, uint32_t handle)
{
	struct drm_priv *priv = dev->priv;
	struct drm_va_ent e = { 0 };

	pthread_mutex_lock(&priv->lock);
	if (spy_drm_va_of(priv, handle)) {
		e = priv->va[handle];
		priv->va[handle].va = 0;
	}
	pthread_mutex_unlock(&priv->lock);
	if (e.va)
		spy_drm_vm_unmap(dev, e.va, e.size);	/* -ENODEV after unplug: gone anyway */
}

static int drm_bo_close(spyre_device *dev, uint32_t handle)
{
	drm_bo_unbind(dev, handle);
	return spy_drm_gem_close(dev, handle);
}

static int drm_queue_create(spyre_device *dev, struct drm_spyre_queue_create *qc)
{
	return xioctl(dev, DRM_IOCTL_SPYRE_QUEUE_CREATE, qc);
}

static int drm_queue_destroy(spyre_device *dev, uint32_t id)
{
	struct drm_spyre_queue_destroy qd = { .queue_id = id };

	return xioctl(dev, DRM_IOCTL_SPYRE_QUEUE_DESTROY, &qd);
}

static int drm_submit(spyre_device *dev, const struct drm_spyre_submit *sub)
{
	return xioctl(dev, DRM_IOCTL_SPYRE_SUBMIT, (void *)sub);
}

static int drm_syncobj_create(spyre_device *dev, uint32_t *handle)
{
	struct drm_syncobj_create sc = { 0 };
	int ret = xioctl(dev, DRM_IOCTL_SYNCOBJ_CREATE, &sc);

	if (!ret)
		*handle = sc.handle;
	return ret;
}

static int drm_syncobj_destroy(spyre_device *dev, uint32_t handle)
{
	struct drm_syncobj_destroy sd = { .handle = handle };

	return xioctl(dev, DRM_IOCTL_SYNCOBJ_DESTROY, &sd);
}

static int drm_syncobj_wait(spyre_device *dev, const uint32_t *handles, const uint64_t *points,
			    unsigned int count, int64_t abs_timeout_ns)
{
	struct drm_syncobj_timeline_wait w = {
		.handles = (uintptr_t)handles,
		.points = (uintptr_t)points,
		.timeout_nsec = abs_timeout_ns,
		.count_handles = count,
		.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL,
	};

	return xioctl(dev, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &w);
}

static int drm_syncobj_query(spyre_device *dev, uint32_t handle, uint64_t *point)
{
	struct drm_syncobj_timeline_array a = {
		.handles = (uintptr_t)&handle,
		.points = (uintptr_t)point,
		.count_handles = 1,
	};

	return xioctl(dev, DRM_IOCTL_SYNCOBJ_QUERY, &a);
}

static int drm_syncobj_signal(spyre_device *dev, uint32_t handle, uint64_t point)
{
	struct drm_syncobj_timeline_array a = {
		.handles = (uintptr_t)&handle,
		.points = (uintptr_t)&point,
		.count_handles = 1,
	};

	return xioctl(dev, DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, &a);
}

/*
 * The error of the fence at a timeline point: move the point into a
 * scratch binary syncobj, export it as a sync_file and read the status of
 * the fences it holds (the point's job fence among them).
 */
int spy_drm_bo_userptr(spyre_device *dev, void *ptr, uint64_t size, uint32_t *handle)
{
	struct drm_spyre_bo_userptr u = { .user_ptr = (uintptr_t)ptr, .size = size };
	struct drm_priv *priv = dev->priv;
	int ret;

	if (!priv->has_userptr)
		return -EOPNOTSUPP;
	ret = xioctl(dev, DRM_IOCTL_SPYRE_BO_USERPTR, &u);
	if (!ret)
		*handle = u.handle;
	return ret;
}

static int drm_queue_error(spyre_device *dev, uint32_t queue_id, bool clear,
			   struct spy_queue_error *out)
{
	struct drm_priv *priv = dev->priv;
	struct drm_spyre_queue_error qe = { .queue_id = queue_id };
	int ret;

	if (!priv->has_queue_error)
		return -EOPNOTSUPP;
	qe.flags = clear ? DRM_SPYRE_QUEUE_ERROR_CLEAR : 0;
	ret = xioctl(dev, DRM_IOCTL_SPYRE_QUEUE_ERROR, &qe);
	if (ret)
		return ret;
	out->error = qe.error;
	out->job = qe.job;
	out->point = qe.point;
	out->failed = qe.failed;
	out->fault = (struct spy_fault){ .core = -1, .insn = -1 };
	if (qe.fault_flags & DRM_SPYRE_FAULT_ADDR_VIRTUAL) {
		out->fault.space = SPY_FAULT_SPACE_VA;
		out->fault.addr = qe.fault_addr;
	}
	if (qe.fault_flags & DRM_SPYRE_FAULT_LOCATED) {
		out->fault.core = (int32_t)qe.fault_core;
		out->fault.insn = qe.fault_insn;
		if (qe.fault_flags & DRM_SPYRE_FAULT_ADDR_SCRATCHPAD)
			out->fault.space = SPY_FAULT_SPACE_SP;
		else if (qe.fault_flags & DRM_SPYRE_FAULT_ADDR_DEVICE)
			out->fault.space = SPY_FAULT_SPACE_DEV;
		if (out->fault.space)
			out->fault.addr = qe.fault_addr;
	}
	return 0;
}

static int drm_fence_error(spyre_device *dev, uint32_t handle, uint64_t point)
{
	struct drm_priv *priv = dev->priv;
	struct sync_fence_info fi[32];
	struct sync_file_info info;
	struct drm_syncobj_transfer tr = { 0 };
	struct drm_syncobj_handle h = { 0 };
	uint32_t tmp;
	unsigned int i;
	int ret = 0, err = 0;

	pthread_mutex_lock(&priv->lock);
	if (!priv->scratch)
		ret = drm_syncobj_create(dev, &priv->scratch);
	tmp = priv->scratch;
	if (ret) {
		priv->scratch = 0;
		pthread_mutex_unlock(&priv->lock);
		return ret;
	}
	tr.src_handle = handle;
	tr.src_point = point;
	tr.dst_handle = tmp;
	ret = xioctl(dev, DRM_IOCTL_SYNCOBJ_TRANSFER, &tr);
	if (ret)
		goto out;
	h.handle = tmp;
	h.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE;
	h.fd = -1;
	ret = xioctl(dev, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h);
	if (ret)
		goto out;
	memset(&info, 0, sizeof(info));
	info.num_fences = 32;
	info.sync_fence_info = (uintptr_t)fi;
	spy_stat_add(&dev->stat_ioctls, 1);
	if (!ioctl(h.fd, SYNC_IOC_FILE_INFO, &info)) {
		if (info.status < 0)
			err = info.status;
		for (i = 0; i < info.num_fences && i < 32 && !err; i++)
			if (fi[i].status < 0)
				err = fi[i].status;
	} else if (errno == EINVAL) {
		/* more fences than our array: the overall status must do */
		memset(&info, 0, sizeof(info));
		spy_stat_add(&dev->stat_ioctls, 1);
		if (ioctl(h.fd, SYNC_IOC_FILE_INFO, &info))
			ret = -errno;
		else if (info.status < 0)
			err = info.status;
	} else {
		ret = -errno;
	}
	close(h.fd);
out:
	pthread_mutex_unlock(&priv->lock);
	return ret ? ret : err;
}

void spy_drm_close(spyre_device *dev)
{
	struct drm_priv *priv = dev->priv;

	spy_uq_close(dev);
	if (dev->fd >= 0)
		close(dev->fd);	/* releases every handle, the scratch syncobj too */
	dev->fd = -1;
	if (priv) {
		pthread_mutex_destroy(&priv->lock);
		free(priv->va);
		free(priv);
		dev->priv = NULL;
	}
}

int spy_drm_open(spyre_device *dev, const char *path)
{
	char link[PATH_MAX], target[PATH_MAX];
	const char *base = strrchr(path, '/');
	drmVersionPtr v;
	ssize_t n;
	int fd, minor, ret;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		int err = -errno;

		if (err == -ENOENT)
			return spy_err(err, "spyre_device_open: %s does not exist; is the spyre "
				       "module loaded?", path);
		return spy_err(err, "spyre_device_open: cannot open %s", path);
	}
	v = drmGetVersion(fd);
	if (!v || strcmp(v->name, "spyre")) {
		spy_err(-ENODEV, "spyre_device_open: %s is not a Spyre device (driver \"%s\")",
			path, v ? v->name : "?");
		if (v)
			drmFreeVersion(v);
		close(fd);
		return -ENODEV;
	}
	dev->priv = calloc(1, sizeof(struct drm_priv));
	if (!dev->priv) {
		drmFreeVersion(v);
		close(fd);
		return spy_err(-ENOMEM, "spyre_device_open: out of memory");
	}
	/* the driver's 1.x minor says which ioctls it has (2.0 would keep them) */
	minor = v->version_major > 1 ? INT_MAX : v->version_minor;
	drmFreeVersion(v);
	((struct drm_priv *)dev->priv)->has_queue_error = minor >= 1;
	((struct drm_priv *)dev->priv)->has_userptr = minor >= 2;
	((struct drm_priv *)dev->priv)->has_vm = minor >= 3;
	pthread_mutex_init(&((struct drm_priv *)dev->priv)->lock, NULL);
	dev->fd = fd;
	dev->ops = &spy_drm_ops;
	ret = spy_uq_open(dev, minor);	/* may switch dev->ops to the user queues */
	if (ret) {
		spy_drm_close(dev);
		return ret;
	}
	base = base ? base + 1 : path;
	snprintf(dev->name, sizeof(dev->name), "%s", base);
	snprintf(dev->path, sizeof(dev->path), "%s", path);
	snprintf(link, sizeof(link), SYSFS_ACCEL "/%s/device", base);
	n = readlink(link, target, sizeof(target) - 1);
	if (n > 0) {
		target[n] = 0;
		const char *slot = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;

		snprintf(dev->pci_slot, sizeof(dev->pci_slot), "%.31s", slot);
	}
	return 0;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	close(fd);
	return n < 0 ? -errno : 0;
}

/*
 * Faults on the drm backend go through the driver's debugfs "fault" file
 * (a raw SPYRE_REG_FAULT write per ring: ring 0 is compute, the others
 * DMA); "lost" removes the PCI function, as a hot unplug would.
 */
int spy_drm_inject_fault(spyre_device *dev, enum spyre_engine engine, unsigned int kind)
{
	char path[PATH_MAX];
	uint64_t rings = 0;
	unsigned int n;
	int ret;

	if (!dev->pci_slot[0])
		return -EOPNOTSUPP;
	if (kind == 100) {
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/remove", dev->pci_slot);
		return write_file(path, "1");
	}
	ret = spy_drm_get_param(dev, DRM_SPYRE_PARAM_NUM_RINGS, &rings);
	if (ret)
		return ret;
	for (n = 0; n < rings; n++) {
		if ((n == 0) != (engine == SPYRE_ENGINE_COMPUTE))
			continue;
		ret = spy_drm_debugfs_fault(dev, kind | n << 8);
		if (ret)
			return ret;
	}
	return 0;
}

/* Write @val (SPYRE_REG_FAULT: kind | ring << 8) to the driver's debugfs "fault". */
int spy_drm_debugfs_fault(spyre_device *dev, unsigned int val)
{
	char path[PATH_MAX], text[32];
	int ret;

	if (!dev->pci_slot[0])
		return -EOPNOTSUPP;
	snprintf(path, sizeof(path), "/sys/kernel/debug/accel/%s/fault", dev->pci_slot);
	snprintf(text, sizeof(text), "%u", val);
	ret = write_file(path, text);
	return ret == -ENOENT ? -EOPNOTSUPP : ret;	/* no debugfs mounted */
}

/*
 * PRIME: export the owner's device BO as a dma-buf, import it here. The
 * driver makes it a peer BO (driver 1.5); an older driver refuses the
 * export with -EOPNOTSUPP. Two open files of one card get a device handle
 * of the same BO instead, which a COPY takes as well (D2D). libspyre has
 * no PRIME call of its own, so the handle is new in @dev's file and the
 * caller may close it.
 */
int spy_drm_bo_peer_import(spyre_device *dev, spyre_device *owner, uint32_t owner_handle,
			   uint32_t *handle)
{
	struct drm_prime_handle ex = { .handle = owner_handle, .flags = DRM_CLOEXEC, .fd = -1 };
	struct drm_prime_handle im = { 0 };
	struct drm_spyre_bo_info info = { 0 };
	int ret;

	if (owner->ops != &spy_drm_ops && owner->ops != &spy_drm_uq_ops)
		return -EXDEV;
	if (owner == dev)
		return -EINVAL;
	ret = xioctl(owner, DRM_IOCTL_PRIME_HANDLE_TO_FD, &ex);
	if (ret)
		return ret;
	im.fd = ex.fd;
	ret = xioctl(dev, DRM_IOCTL_PRIME_FD_TO_HANDLE, &im);
	close(ex.fd);
	if (ret)
		return ret;
	info.handle = im.handle;
	ret = spy_drm_bo_info(dev, &info);
	if (!ret && info.placement != DRM_SPYRE_PLACEMENT_PEER &&
	    info.placement != DRM_SPYRE_PLACEMENT_DEVICE)
		ret = -EOPNOTSUPP;
	if (ret)
		drm_bo_close(dev, im.handle);
	else
		*handle = im.handle;
	return ret;
}

/* Between processes: the device BO's dma-buf (the driver's PRIME export). */
int spy_drm_bo_export(spyre_device *dev, uint32_t handle, int *fd, uint64_t *offset)
{
	struct drm_prime_handle ex = { .handle = handle, .flags = DRM_CLOEXEC, .fd = -1 };
	int ret = xioctl(dev, DRM_IOCTL_PRIME_HANDLE_TO_FD, &ex);

	if (ret)
		return ret;
	*fd = ex.fd;
	*offset = 0;
	return 0;
}

/*
 * A dma-buf of another card's device BO becomes a peer BO here. The
 * importing card's own BO comes back as itself (PRIME self-import: a handle
 * this file may already use for the BO, which closing would end): refused.
 */
int spy_drm_bo_import(spyre_device *dev, int fd, uint64_t offset, uint64_t size,
		      uint32_t *handle)
{
	struct drm_prime_handle im = { .fd = fd };
	struct drm_spyre_bo_info info = { 0 };
	int ret;

	if (offset)
		return -EINVAL;	/* a dma-buf names the whole BO */
	ret = xioctl(dev, DRM_IOCTL_PRIME_FD_TO_HANDLE, &im);
	if (ret)
		return ret;
	info.handle = im.handle;
	ret = spy_drm_bo_info(dev, &info);
	if (ret)
		return ret;
	if (info.placement != DRM_SPYRE_PLACEMENT_PEER)
		return info.placement == DRM_SPYRE_PLACEMENT_DEVICE ? -EXDEV : -EOPNOTSUPP;
	if (size > info.size) {
		drm_bo_close(dev, im.handle);
		return -ERANGE;
	}
	*handle = im.handle;
	return 0;
}

const struct spy_backend_ops spy_drm_ops = {
	.name = "drm",
	.close = spy_drm_close,
	.get_param = spy_drm_get_param,
	.bo_create = spy_drm_bo_create,
	.bo_userptr = spy_drm_bo_userptr,
	.bo_info = spy_drm_bo_info,
	.bo_map = spy_drm_bo_map,
	.bo_unmap = spy_drm_bo_unmap,
	.bo_bind = spy_drm_bo_bind,
	.bo_close = drm_bo_close,
	.queue_create = drm_queue_create,
	.queue_destroy = drm_queue_destroy,
	.submit = drm_submit,
	.syncobj_create = drm_syncobj_create,
	.syncobj_destroy = drm_syncobj_destroy,
	.syncobj_wait = drm_syncobj_wait,
	.syncobj_query = drm_syncobj_query,
	.syncobj_signal = drm_syncobj_signal,
	.fence_error = drm_fence_error,
	.queue_error = drm_queue_error,
	.inject_fault = spy_drm_inject_fault,
	.bo_peer_import = spy_drm_bo_peer_import,
	.bo_export = spy_drm_bo_export,
	.bo_import = spy_drm_bo_import,
};
