// SPDX-License-Identifier: MIT
/*
 * Devices: choosing a backend, opening and closing, properties.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

uint64_t spy_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * DEFAULT: SPYRE_BACKEND if set (anything but drm/sim is an error), else drm
 * when a Spyre card is present, else sim.
 */
static int resolve_backend(enum spyre_backend b, const char *call, enum spyre_backend *out)
{
	const char *env;
	int cards = 0;

	if (b == SPYRE_BACKEND_DRM || b == SPYRE_BACKEND_SIM) {
		*out = b;
		return 0;
	}
	if (b != SPYRE_BACKEND_DEFAULT)
		return spy_err(-EINVAL, "%s: unknown backend %d", call, (int)b);
	env = getenv("SPYRE_BACKEND");
	if (!env || !*env) {
		*out = !spy_drm_count(&cards) && cards > 0 ? SPYRE_BACKEND_DRM : SPYRE_BACKEND_SIM;
		return 0;
	}
	if (!strcmp(env, "drm")) {
		*out = SPYRE_BACKEND_DRM;
		return 0;
	}
	if (!strcmp(env, "sim")) {
		*out = SPYRE_BACKEND_SIM;
		return 0;
	}
	return spy_err(-EINVAL, "%s: SPYRE_BACKEND=\"%s\" is neither \"drm\" nor \"sim\"", call,
		       env);
}

int spyre_device_count(enum spyre_backend backend, int *count)
{
	enum spyre_backend b;
	int ret;

	if (!count)
		return spy_err(-EINVAL, "spyre_device_count: count is NULL");
	ret = resolve_backend(backend, "spyre_device_count", &b);
	if (ret)
		return ret;
	return b == SPYRE_BACKEND_SIM ? spy_sim_count(count) : spy_drm_count(count);
}

static spyre_device *dev_alloc(void)
{
	spyre_device *dev = calloc(1, sizeof(*dev));

	if (!dev)
		return NULL;
	dev->fd = -1;
	pthread_mutex_init(&dev->lock, NULL);
	pthread_cond_init(&dev->cond, NULL);
	spy_va_init(dev);
	spy_staging_init(dev);
	return dev;
}

static void dev_free(spyre_device *dev)
{
	spy_va_fini(dev);
	pthread_mutex_destroy(&dev->staging_lock);
	pthread_mutex_destroy(&dev->lock);
	pthread_cond_destroy(&dev->cond);
	free(dev);
}

/* Limits every submission needs; read once. */
static int dev_init(spyre_device *dev)
{
	int ret;

	ret = spy_get_param(dev, DRM_SPYRE_PARAM_MAX_CMDS, &dev->max_cmds);
	if (!ret)
		ret = spy_get_param(dev, DRM_SPYRE_PARAM_MAX_SYNCS, &dev->max_syncs);
	if (!ret)
		ret = spy_get_param(dev, DRM_SPYRE_PARAM_MAX_ARGS, &dev->max_args);
	if (ret)
		return spy_err(ret, "spyre_device_open: %s: cannot read its limits", dev->name);
	return 0;
}

static int open_common(spyre_device *dev, spyre_device **out)
{
	int ret = dev_init(dev);

	if (!ret) {
		ret = spy_worker_start(dev);
		if (ret)
			spy_err(ret, "spyre_device_open: %s: cannot start the host-work thread",
				dev->name);
	}
	if (ret) {
		dev->ops->close(dev);
		dev_free(dev);
		return ret;
	}
	/* SPYRE_TRACE=path.json: trace the device's whole life (trace.c). */
	if (getenv("SPYRE_TRACE") && *getenv("SPYRE_TRACE"))
		spyre_trace_start(dev, getenv("SPYRE_TRACE"));
	*out = dev;
	return 0;
}

int spyre_device_open_backend(enum spyre_backend backend, int index, spyre_device **out)
{
	char path[64];
	enum spyre_backend b;
	spyre_device *dev;
	int ret;

	if (!out)
		return spy_err(-EINVAL, "spyre_device_open: out is NULL");
	ret = resolve_backend(backend, "spyre_device_open", &b);
	if (ret)
		return ret;
	if (b == SPYRE_BACKEND_DRM) {
		ret = spy_drm_path_of_index(index, path, sizeof(path));
		if (ret)
			return ret;
		return spyre_device_open_path(path, out);
	}
	dev = dev_alloc();
	if (!dev)
		return spy_err(-ENOMEM, "spyre_device_open: out of memory");
	ret = spy_sim_open(dev, index);
	if (ret) {
		dev_free(dev);
		return ret;
	}
	return open_common(dev, out);
}

int spyre_device_open(int index, spyre_device **out)
{
	return spyre_device_open_backend(SPYRE_BACKEND_DEFAULT, index, out);
}

int spyre_device_open_path(const char *path, spyre_device **out)
{
	spyre_device *dev;
	int ret;

	if (!path || !out)
		return spy_err(-EINVAL, "spyre_device_open_path: path or out is NULL");
	dev = dev_alloc();
	if (!dev)
		return spy_err(-ENOMEM, "spyre_device_open_path: out of memory");
	ret = spy_drm_open(dev, path);
	if (ret) {
		dev_free(dev);
		return ret;
	}
	return open_common(dev, out);
}

void spy_dev_get(spyre_device *dev)
{
	__atomic_fetch_add(&dev->objects, 1, __ATOMIC_RELAXED);
}

void spy_dev_put(spyre_device *dev)
{
	__atomic_fetch_sub(&dev->objects, 1, __ATOMIC_RELAXED);
}

int spyre_device_close(spyre_device *dev)
{
	unsigned long n;

	if (!dev)
		return spy_err(-EINVAL, "spyre_device_close: device is NULL");
	if (dev->trace)
		spyre_trace_stop(dev);	/* its BO is a live object */
	spy_staging_fini(dev);	/* the library's own staging memory */
	n = __atomic_load_n(&dev->objects, __ATOMIC_RELAXED);
	if (n)
		return spy_err(-EBUSY, "spyre_device_close: %s still has %lu live object%s "
			       "(streams, events, BOs, pools, programs, recipes)",
			       dev->name, n, n == 1 ? "" : "s");
	spy_worker_stop(dev);
	dev->ops->close(dev);
	dev_free(dev);
	return 0;
}

int spy_get_param(spyre_device *dev, uint32_t param, uint64_t *value)
{
	return dev->ops->get_param(dev, param, value);
}

int spyre_device_get_props(spyre_device *dev, struct spyre_device_props *p)
{
	static const uint32_t params[] = {
		DRM_SPYRE_PARAM_HW_VERSION,	 DRM_SPYRE_PARAM_NUM_CORES,
		DRM_SPYRE_PARAM_SCRATCHPAD_SIZE, DRM_SPYRE_PARAM_MEM_SIZE,
		DRM_SPYRE_PARAM_MEM_FREE,	 DRM_SPYRE_PARAM_CLOCK_MHZ,
		DRM_SPYRE_PARAM_COMPUTE_RINGS,	 DRM_SPYRE_PARAM_DMA_RINGS,
		DRM_SPYRE_PARAM_MAX_CMDS,	 DRM_SPYRE_PARAM_MAX_SYNCS,
		DRM_SPYRE_PARAM_MAX_ARGS,	 DRM_SPYRE_PARAM_MAX_QUEUES,
		DRM_SPYRE_PARAM_MAX_HOST_BO_SIZE, DRM_SPYRE_PARAM_PCI_VENDOR,
		DRM_SPYRE_PARAM_PCI_DEVICE,	 DRM_SPYRE_PARAM_PCI_REVISION,
		DRM_SPYRE_PARAM_RESET_COUNT,
	};
	uint64_t v[sizeof(params) / sizeof(params[0])];
	unsigned int i;
	int ret;

	if (!dev || !p)
		return spy_err(-EINVAL, "spyre_device_get_props: device or props is NULL");
	for (i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
		ret = spy_get_param(dev, params[i], &v[i]);
		if (ret)
			return spy_err(ret, "spyre_device_get_props: %s: GET_PARAM %u failed",
				       dev->name, params[i]);
	}
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", dev->name);
	snprintf(p->path, sizeof(p->path), "%s", dev->path);
	snprintf(p->backend, sizeof(p->backend), "%s", dev->ops->name);
	snprintf(p->pci_slot, sizeof(p->pci_slot), "%s", dev->pci_slot);
	p->hw_version = v[0];
	p->num_cores = v[1];
	p->scratchpad_size = v[2];
	p->mem_total = v[3];
	p->mem_free = v[4];
	p->clock_mhz = v[5];
	p->compute_rings = v[6];
	p->dma_rings = v[7];
	p->max_cmds = v[8];
	p->max_syncs = v[9];
	p->max_args = v[10];
	p->max_queues = v[11];
	p->max_host_bo = v[12];
	p->pci_vendor = v[13];
	p->pci_device = v[14];
	p->pci_revision = v[15];
	p->reset_count = v[16];
	return 0;
}

int spyre_device_time_ns(spyre_device *dev, uint64_t *ns)
{
	int ret;

	if (!dev || !ns)
		return spy_err(-EINVAL, "spyre_device_time_ns: device or ns is NULL");
	ret = spy_get_param(dev, DRM_SPYRE_PARAM_DEVICE_TIME_NS, ns);
	if (ret)
		return spy_err(ret, "spyre_device_time_ns: %s: GET_PARAM failed", dev->name);
	return 0;
}

int spyre_device_get_stats(spyre_device *dev, struct spyre_device_stats *st)
{
	if (!dev || !st)
		return spy_err(-EINVAL, "spyre_device_get_stats: device or stats is NULL");
	st->submits = __atomic_load_n(&dev->stat_submits, __ATOMIC_RELAXED);
	st->ioctls = __atomic_load_n(&dev->stat_ioctls, __ATOMIC_RELAXED);
	st->host_work_runs = __atomic_load_n(&dev->stat_host_runs, __ATOMIC_RELAXED);
	return 0;
}

int spyre_sim_inject_fault(spyre_device *dev, enum spyre_engine engine, unsigned int kind)
{
	int ret;

	if (!dev)
		return spy_err(-EINVAL, "spyre_sim_inject_fault: device is NULL");
	ret = dev->ops->inject_fault(dev, engine, kind);
	if (ret == -EOPNOTSUPP)
		return spy_err(ret, "spyre_sim_inject_fault: %s: no fault hooks here (drm: "
			       "needs debugfs at /sys/kernel/debug and root)", dev->name);
	if (ret)
		return spy_err(ret, "spyre_sim_inject_fault: %s: bad engine %d or kind %u",
			       dev->name, (int)engine, kind);
	return 0;
}
