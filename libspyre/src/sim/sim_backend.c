// SPDX-License-Identifier: MIT
/*
 * Sim backend: the ops table, the card's creation and the model's
 * callbacks. Host "DMA addresses" are process addresses: the in-process
 * card reads and writes host BOs, rings and records directly.
 */
#define _GNU_SOURCE /* memfd_create */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sim.h"

_Static_assert(SPY_MAX_ARGS == SPYRE_MAX_ARGS, "libspyre binds as many slots as the card");

static struct sim *S(spyre_device *dev)
{
	return dev->priv;
}

/* As on the bus: the card's own memory is no target of its DMA. */
static bool own_memory(const struct sim *sim, uint64_t addr, uint64_t len)
{
	uintptr_t mem = (uintptr_t)sim->devmem;

	return addr < mem + sim->cfg.mem_size && addr + len > mem;
}

static int m_host_read(void *opaque, uint64_t addr, void *buf, uint64_t len)
{
	if (!addr || own_memory(opaque, addr, len))
		return -1;
	memcpy(buf, (const void *)(uintptr_t)addr, len);
	return 0;
}

static int m_host_write(void *opaque, uint64_t addr, const void *buf, uint64_t len)
{
	if (!addr || own_memory(opaque, addr, len))
		return -1;
	memcpy((void *)(uintptr_t)addr, buf, len);
	return 0;
}

static void m_raise_irq(void *opaque, unsigned int vector)
{
	struct sim *sim = opaque;

	(void)vector;
	sim->kicks++;	/* the card thread reaps after process() returns */
}

static uint64_t m_now(void *opaque)
{
	struct sim *sim = opaque;

	return sim->virtual_clock ? __atomic_load_n(&sim->vclock, __ATOMIC_RELAXED) : spy_now_ns();
}

static void m_unlock(void *opaque)
{
	pthread_mutex_unlock(&((struct sim *)opaque)->lock);
}

static void m_lock(void *opaque)
{
	pthread_mutex_lock(&((struct sim *)opaque)->lock);
}

static const struct spyre_model_ops model_ops = {
	.host_read = m_host_read,
	.host_write = m_host_write,
	.raise_irq = m_raise_irq,
	.now_ns = m_now,
	.unlock = m_unlock,
	.lock = m_lock,
};

static uint64_t env_size(const char *name, uint64_t def)
{
	const char *v = getenv(name);
	char *end;
	uint64_t x;

	if (!v || !*v)
		return def;
	x = strtoull(v, &end, 0);
	switch (*end) {
	case 'G': case 'g': x <<= 30; break;
	case 'M': case 'm': x <<= 20; break;
	case 'K': case 'k': x <<= 10; break;
	}
	return x;
}

/*
 * The interface version the card reports. SPYRE_SIM_HW_VERSION=major.minor
 * makes the sim report an older card (read on every query, so a test can
 * switch it around creating an op context); the model still runs all of
 * its instructions, only the library's capability checks see the change.
 */
static uint64_t sim_hw_version(struct sim *sim)
{
	uint64_t cur = spyre_model_read(sim->model, SPYRE_REG_VERSION);
	const char *env = getenv("SPYRE_SIM_HW_VERSION");
	unsigned int major, minor;
	uint64_t v;

	if (!env || sscanf(env, "%u.%u", &major, &minor) != 2)
		return cur;
	v = SPYRE_HW_VERSION(major, minor);
	return v < cur ? v : cur;
}

static int sim_get_param(spyre_device *dev, uint32_t param, uint64_t *v)
{
	struct sim *sim = S(dev);
	const struct spyre_model_config *c = &sim->cfg;
	int ret = 0;

	pthread_mutex_lock(&sim->lock);
	if (sim->lost) {
		pthread_mutex_unlock(&sim->lock);
		return -ENODEV;
	}
	switch (param) {
	case DRM_SPYRE_PARAM_HW_VERSION:
		*v = sim_hw_version(sim);
		break;
	case DRM_SPYRE_PARAM_NUM_CORES: *v = c->num_cores; break;
	case DRM_SPYRE_PARAM_SCRATCHPAD_SIZE: *v = SPYRE_MODEL_SCRATCHPAD_BYTES; break;
	case DRM_SPYRE_PARAM_MEM_SIZE: *v = c->mem_size; break;
	case DRM_SPYRE_PARAM_MEM_FREE: *v = c->mem_size - sim->mem_used; break;
	case DRM_SPYRE_PARAM_CLOCK_MHZ: *v = c->timing.clock_mhz; break;
	case DRM_SPYRE_PARAM_NUM_RINGS: *v = sim->nrings; break;
	case DRM_SPYRE_PARAM_COMPUTE_RINGS: *v = 1; break;
	case DRM_SPYRE_PARAM_DMA_RINGS: *v = sim->nrings - 1; break;
	case DRM_SPYRE_PARAM_RING_ENTRIES: *v = 1u << SIM_RING_LOG2; break;
	case DRM_SPYRE_PARAM_PCI_VENDOR: *v = SPYRE_PCI_VENDOR_ID; break;
	case DRM_SPYRE_PARAM_PCI_DEVICE: *v = SPYRE_PCI_DEVICE_ID; break;
	case DRM_SPYRE_PARAM_PCI_REVISION: *v = SPYRE_PCI_REVISION; break;
	case DRM_SPYRE_PARAM_NUM_SEMS: *v = c->num_sems; break;
	case DRM_SPYRE_PARAM_MAX_CMDS: *v = SIM_MAX_CMDS; break;
	case DRM_SPYRE_PARAM_MAX_SYNCS: *v = SIM_MAX_SYNCS; break;
	case DRM_SPYRE_PARAM_MAX_ARGS: *v = SPYRE_MAX_ARGS; break;
	case DRM_SPYRE_PARAM_MAX_QUEUES: *v = SIM_MAX_QUEUES; break;
	case DRM_SPYRE_PARAM_MAX_HOST_BO_SIZE: *v = SIM_MAX_HOST_BO; break;
	case DRM_SPYRE_PARAM_DEVICE_TIME_NS:
		*v = spyre_model_now(sim->model);
		if (sim->virtual_clock)	/* the latest completion, never backwards */
			*v = sim->vmax + *v > sim->vclock ? sim->vmax + *v - sim->vclock : 0;
		break;
	case DRM_SPYRE_PARAM_RESET_COUNT: *v = sim->reset_count; break;
	default: ret = -EINVAL; break;
	}
	pthread_mutex_unlock(&sim->lock);
	return ret;
}

/* The card's scatter list of a host BO's memory, in 64 KiB segments. */
static int sim_bo_build_sg(struct sim_bo *bo)
{
	uint32_t i;

	bo->sg_count = (bo->size + SIM_SG_SEG - 1) / SIM_SG_SEG;
	bo->sg = calloc(bo->sg_count, sizeof(*bo->sg));
	if (!bo->sg)
		return -ENOMEM;
	for (i = 0; i < bo->sg_count; i++) {
		uint64_t off = (uint64_t)i * SIM_SG_SEG;

		bo->sg[i].addr = spyre_cpu_to_le64((uintptr_t)bo->host + off);
		bo->sg[i].len = spyre_cpu_to_le64(bo->size - off < SIM_SG_SEG ? bo->size - off
										: SIM_SG_SEG);
	}
	return 0;
}

/* Gives @bo a handle (and device memory for the device placement). */
static int sim_bo_insert(struct sim *sim, struct sim_bo *bo, uint32_t *handle)
{
	struct sim_bo **tab;
	uint32_t i;
	int ret = 0;

	pthread_mutex_lock(&sim->lock);
	if (sim->lost) {
		ret = -ENODEV;
		goto out;
	}
	/* Freed ranges were given back (sim_mem_free): they read as zero. */
	if (bo->placement == DRM_SPYRE_PLACEMENT_DEVICE) {
		ret = sim_mem_alloc(sim, bo->size, &bo->dev_addr);
		if (ret)
			goto out;
	}
	for (i = 0; i < sim->nbos && sim->bos[i]; i++)
		;
	if (i == sim->nbos) {
		tab = realloc(sim->bos, (sim->nbos * 2 + 16) * sizeof(*tab));
		if (!tab) {
			if (bo->placement == DRM_SPYRE_PLACEMENT_DEVICE)
				sim_mem_free(sim, bo->dev_addr, bo->size);
			ret = -ENOMEM;
			goto out;
		}
		memset(tab + sim->nbos, 0, (sim->nbos + 16) * sizeof(*tab));
		sim->bos = tab;
		sim->nbos = sim->nbos * 2 + 16;
	}
	sim->bos[i] = bo;
	*handle = i + 1;
out:
	pthread_mutex_unlock(&sim->lock);
	return ret;
}

/*
 * A BO not yet in the table: host placement gets zeroed pages, or the
 * caller's memory @user (BO_USERPTR), and their scatter list.
 */
static struct sim_bo *sim_bo_new(uint64_t size, uint32_t placement, void *user)
{
	struct sim_bo *bo = calloc(1, sizeof(*bo));

	if (!bo)
		return NULL;
	bo->refs = 1;
	bo->open = true;
	bo->size = size;
	bo->placement = placement;
	if (placement != DRM_SPYRE_PLACEMENT_HOST)
		return bo;
	bo->user = user != NULL;
	bo->host = user ? user : aligned_alloc(SPY_PAGE, size);
	if (!bo->host || sim_bo_build_sg(bo)) {
		sim_bo_discard(bo);
		return NULL;
	}
	if (!user)
		memset(bo->host, 0, size);
	return bo;
}

/* A new BO (over the caller's @user memory, or its own) with a handle. */
static int sim_bo_add(struct sim *sim, uint64_t size, uint32_t placement, void *user,
		      uint32_t *handle)
{
	struct sim_bo *bo = sim_bo_new(size, placement, user);
	int ret;

	if (!bo)
		return -ENOMEM;
	ret = sim_bo_insert(sim, bo, handle);
	if (ret)
		sim_bo_discard(bo);
	return ret;
}

static int sim_bo_create(spyre_device *dev, uint64_t size, uint32_t placement, uint32_t *handle)
{
	struct sim *sim = S(dev);

	if (!size || placement > DRM_SPYRE_PLACEMENT_HOST)
		return -EINVAL;
	size = (size + SPY_PAGE - 1) & ~(SPY_PAGE - 1);
	if (placement == DRM_SPYRE_PLACEMENT_DEVICE ? size > sim->cfg.mem_size
						    : size > SIM_MAX_HOST_BO)
		return -E2BIG;
	return sim_bo_add(sim, size, placement, NULL, handle);
}

/*
 * As the driver's BO_USERPTR: page-aligned, mapped memory of the caller
 * (msync() finds holes; a read-only mapping is not detected here).
 */
static int sim_bo_userptr(spyre_device *dev, void *ptr, uint64_t size, uint32_t *handle)
{
	struct sim *sim = S(dev);
	uintptr_t p = (uintptr_t)ptr;

	if (!size || p % SPY_PAGE || size % SPY_PAGE || p + size < p)
		return -EINVAL;
	if (size > SIM_MAX_HOST_BO)
		return -E2BIG;
	if (msync(ptr, size, MS_ASYNC))
		return -EFAULT;
	return sim_bo_add(sim, size, DRM_SPYRE_PLACEMENT_HOST, ptr, handle);
}

static int sim_bo_info(spyre_device *dev, struct drm_spyre_bo_info *info)
{
	struct sim *sim = S(dev);
	struct sim_bo *bo;
	int ret = 0;

	pthread_mutex_lock(&sim->lock);
	bo = sim_bo_lookup(sim, info->handle);
	if (sim->lost)
		ret = -ENODEV;
	else if (!bo)
		ret = -ENOENT;
	else if (info->flags)
		ret = -EINVAL;
	if (!ret) {
		info->size = bo->size;
		info->placement = bo->placement;
		info->bo_flags = bo->user ? DRM_SPYRE_BO_USER_MEMORY :
			bo->placement == DRM_SPYRE_PLACEMENT_HOST ? DRM_SPYRE_BO_MAPPABLE : 0;
		info->mmap_offset = 0;
	}
	pthread_mutex_unlock(&sim->lock);
	return ret;
}

static int sim_bo_map(spyre_device *dev, uint32_t handle, uint64_t size, void **ptr)
{
	struct sim *sim = S(dev);
	struct sim_bo *bo;
	int ret = 0;

	pthread_mutex_lock(&sim->lock);
	bo = sim_bo_lookup(sim, handle);
	if (!bo)
		ret = -ENOENT;
	else if (bo->placement != DRM_SPYRE_PLACEMENT_HOST || size > bo->size)
		ret = -EINVAL;
	else
		*ptr = bo->host;
	pthread_mutex_unlock(&sim->lock);
	return ret;
}

static int sim_bo_unmap(spyre_device *dev, uint32_t handle, void *ptr, uint64_t size)
{
	(void)dev;
	(void)handle;
	(void)ptr;
	(void)size;
	return 0;
}

static int sim_bo_close(spyre_device *dev, uint32_t handle)
{
	struct sim *sim = S(dev);
	struct sim_bo *bo;

	pthread_mutex_lock(&sim->lock);
	bo = sim_bo_lookup(sim, handle);
	if (!bo) {
		pthread_mutex_unlock(&sim->lock);
		return -EINVAL;
	}
	bo->open = false;
	sim->bos[handle - 1] = NULL;
	sim_bo_put(sim, bo);
	pthread_mutex_unlock(&sim->lock);
	return 0;
}

static int sim_queue_create(spyre_device *dev, struct drm_spyre_queue_create *qc)
{
	struct sim *sim = S(dev);
	struct sim_queue *q;
	unsigned int i;
	int ret = 0;

	if (qc->engine > DRM_SPYRE_ENGINE_DMA || qc->priority > DRM_SPYRE_PRIORITY_HIGH ||
	    qc->flags)
		return -EINVAL;
	pthread_mutex_lock(&sim->lock);
	if (sim->lost) {
		ret = -ENODEV;
		goto out;
	}
	for (i = 0; i < SIM_MAX_QUEUES && sim->queues[i]; i++)
		;
	if (i == SIM_MAX_QUEUES) {
		ret = -ENOSPC;
		goto out;
	}
	q = calloc(1, sizeof(*q));
	if (!q) {
		ret = -ENOMEM;
		goto out;
	}
	q->id = i + 1;
	q->engine = qc->engine;
	if (qc->engine == DRM_SPYRE_ENGINE_COMPUTE || sim->nrings == 1) {
		q->ring = &sim->rings[0];
	} else {
		q->ring = &sim->rings[1 + sim->next_dma_ring % (sim->nrings - 1)];
		sim->next_dma_ring++;
	}
	sim->queues[i] = q;
	qc->queue_id = q->id;
out:
	pthread_mutex_unlock(&sim->lock);
	return ret;
}

static int sim_queue_destroy(spyre_device *dev, uint32_t id)
{
	struct sim *sim = S(dev);
	struct sim_queue *q;
	int ret = 0;

	pthread_mutex_lock(&sim->lock);
	if (!id || id > SIM_MAX_QUEUES || !(q = sim->queues[id - 1]) || q->dead) {
		ret = -ENOENT;
	} else {
		q->dead = true;
		sim_queue_reap_dead(sim);
	}
	pthread_mutex_unlock(&sim->lock);
	return ret;
}

_Thread_local int spy_in_backend;

static int sim_submit(spyre_device *dev, const struct drm_spyre_submit *sub)
{
	struct sim *sim = S(dev);
	int ret;

	spy_in_backend++;
	pthread_mutex_lock(&sim->lock);
	ret = sim_submit_ioctl(dev, sim, sub);
	pthread_mutex_unlock(&sim->lock);
	spy_in_backend--;
	return ret;
}

static int sim_syncobj_create(spyre_device *dev, uint32_t *handle)
{
	struct sim *sim = S(dev);
	struct sim_syncobj *so = calloc(1, sizeof(*so)), **tab;
	unsigned int i;

	if (!so)
		return -ENOMEM;
	pthread_mutex_lock(&sim->lock);
	for (i = 0; i < sim->nsyncs && sim->syncs[i]; i++)
		;
	if (i == sim->nsyncs) {
		tab = realloc(sim->syncs, (sim->nsyncs * 2 + 16) * sizeof(*tab));
		if (!tab) {
			pthread_mutex_unlock(&sim->lock);
			free(so);
			return -ENOMEM;
		}
		memset(tab + sim->nsyncs, 0, (sim->nsyncs + 16) * sizeof(*tab));
		sim->syncs = tab;
		sim->nsyncs = sim->nsyncs * 2 + 16;
	}
	sim->syncs[i] = so;
	*handle = i + 1;
	pthread_mutex_unlock(&sim->lock);
	return 0;
}

static int sim_syncobj_destroy(spyre_device *dev, uint32_t handle)
{
	struct sim *sim = S(dev);
	struct sim_syncobj *so;
	unsigned int i;

	pthread_mutex_lock(&sim->lock);
	so = sim_syncobj_lookup(sim, handle);
	if (so) {
		sim->syncs[handle - 1] = NULL;
		for (i = 0; i < so->npts; i++)
			sim_fence_put(so->pts[i].fence);
		free(so->pts);
		free(so);
	}
	pthread_mutex_unlock(&sim->lock);
	return so ? 0 : -EINVAL;
}

static int sim_syncobj_wait(spyre_device *dev, const uint32_t *handles, const uint64_t *points,
			    unsigned int count, int64_t abs_timeout_ns)
{
	struct sim *sim = S(dev);
	struct timespec ts;
	unsigned int i;
	int ret = 0;

	ts.tv_sec = abs_timeout_ns / 1000000000ll;
	ts.tv_nsec = abs_timeout_ns % 1000000000ll;
	pthread_mutex_lock(&sim->lock);
	for (;;) {
		bool all = true;

		for (i = 0; i < count; i++) {
			struct sim_syncobj *so = sim_syncobj_lookup(sim, handles[i]);

			if (!so) {
				ret = -ENOENT;
				goto out;
			}
			if (points[i] > so->last) {
				ret = -EINVAL;	/* not submitted, and no WAIT_FOR_SUBMIT */
				goto out;
			}
			if (!sim_syncobj_signaled(so, points[i]))
				all = false;
		}
		if (all) {
			for (i = 0; i < count; i++) {
				struct sim_syncobj *so = sim_syncobj_lookup(sim, handles[i]);
				uint64_t t = sim_syncobj_point_dev(so, points[i]);

				if (t > sim->observed)
					sim->observed = t;
			}
			break;
		}
		if (pthread_cond_timedwait(&sim->cond, &sim->lock, &ts) == ETIMEDOUT) {
			ret = -ETIME;
			break;
		}
	}
out:
	pthread_mutex_unlock(&sim->lock);
	return ret;
}

static int sim_syncobj_query(spyre_device *dev, uint32_t handle, uint64_t *point)
{
	struct sim *sim = S(dev);
	struct sim_syncobj *so;

	pthread_mutex_lock(&sim->lock);
	so = sim_syncobj_lookup(sim, handle);
	if (so) {
		sim_syncobj_collect(so);
		*point = so->signaled_upto;
		if (so->dev_upto > sim->observed)
			sim->observed = so->dev_upto;
	}
	pthread_mutex_unlock(&sim->lock);
	return so ? 0 : -ENOENT;
}

static int sim_syncobj_signal(spyre_device *dev, uint32_t handle, uint64_t point)
{
	struct sim *sim = S(dev);
	struct sim_syncobj *so;
	struct sim_fence *f;
	int ret;

	pthread_mutex_lock(&sim->lock);
	so = sim_syncobj_lookup(sim, handle);
	f = sim_fence_new();
	if (!so || !f) {
		sim_fence_put(f);
		pthread_mutex_unlock(&sim->lock);
		return so ? -ENOMEM : -ENOENT;
	}
	f->signaled = true;
	f->dev_end = sim->observed;	/* host work takes no device time */
	ret = sim_syncobj_add(sim, so, point, f);
	sim_fence_put(f);
	pthread_cond_broadcast(&sim->cond);
	sim_kick(sim);
	pthread_mutex_unlock(&sim->lock);
	return ret;
}

static int sim_queue_error(spyre_device *dev, uint32_t queue_id, bool clear,
			   struct spy_queue_error *out)
{
	struct sim *sim = S(dev);
	struct sim_queue *q;
	int ret = 0;

	pthread_mutex_lock(&sim->lock);
	if (!queue_id || queue_id > SIM_MAX_QUEUES || !(q = sim->queues[queue_id - 1]) ||
	    q->dead) {
		ret = -ENOENT;
	} else {
		*out = q->failure;
		if (!out->error)
			out->fault = (struct spy_fault){ .core = -1, .insn = -1 };
		if (clear)
			memset(&q->failure, 0, sizeof(q->failure));
	}
	pthread_mutex_unlock(&sim->lock);
	return ret;
}

static int sim_fence_error(spyre_device *dev, uint32_t handle, uint64_t point)
{
	struct sim *sim = S(dev);
	struct sim_syncobj *so;
	unsigned int i;
	int ret = 0;

	pthread_mutex_lock(&sim->lock);
	so = sim_syncobj_lookup(sim, handle);
	if (!so) {
		ret = -ENOENT;
		goto out;
	}
	sim_syncobj_collect(so);
	for (i = 0; i < so->nerrs; i++)
		if (so->errs[i].point == point)
			ret = so->errs[i].error;
	for (i = 0; i < so->npts; i++)
		if (so->pts[i].point == point && so->pts[i].fence->signaled)
			ret = so->pts[i].fence->error;
out:
	pthread_mutex_unlock(&sim->lock);
	return ret;
}

static int sim_inject_fault(spyre_device *dev, enum spyre_engine engine, unsigned int kind)
{
	struct sim *sim = S(dev);
	unsigned int n;

	if (engine != SPYRE_ENGINE_COMPUTE && engine != SPYRE_ENGINE_DMA)
		return -EINVAL;
	if (kind != 0 && kind != SPYRE_FAULT_HANG && kind != SPYRE_FAULT_DMA &&
	    kind != SPYRE_FAULT_MEM_UE && kind != SPYRE_FAULT_CORRUPT_COMPLETION && kind != 100)
		return -EINVAL;
	pthread_mutex_lock(&sim->lock);
	if (kind == 100) {
		sim_device_lost(sim);
	} else {
		for (n = 0; n < sim->nrings; n++)
			if ((n == 0) == (engine == SPYRE_ENGINE_COMPUTE))
				spyre_model_write(sim->model, SPYRE_REG_FAULT,
						  kind | n << SPYRE_FAULT_RING_SHIFT);
		sim_kick(sim);
	}
	pthread_mutex_unlock(&sim->lock);
	return 0;
}

static void sim_close(spyre_device *dev)
{
	struct sim *sim = S(dev);
	unsigned int i;

	pthread_mutex_lock(&sim->lock);
	sim->stop = true;
	sim_kick(sim);
	pthread_mutex_unlock(&sim->lock);
	pthread_join(sim->thread, NULL);
	/* Fail what is left (a hung ring the library never waited for). */
	sim_device_lost(sim);
	for (i = 0; i < SIM_MAX_QUEUES; i++)
		free(sim->queues[i]);
	for (i = 0; i < sim->nbos; i++)
		if (sim->bos[i])
			sim_bo_put(sim, sim->bos[i]);
	for (i = 0; i < sim->nsyncs; i++)
		if (sim->syncs[i])
			sim_syncobj_destroy(dev, i + 1);
	free(sim->bos);
	free(sim->syncs);
	for (i = 0; i < sim->nrings; i++) {
		free(sim->rings[i].descs);
		free(sim->rings[i].wb);
	}
	while (sim->free) {
		struct sim_range *r = sim->free;

		sim->free = r->next;
		free(r);
	}
	spyre_model_free(sim->model);
	munmap(sim->devmem, sim->cfg.mem_size);
	if (sim->memfd >= 0)
		close(sim->memfd);
	pthread_mutex_destroy(&sim->lock);
	pthread_cond_destroy(&sim->cond);
	pthread_cond_destroy(&sim->kick);
	free(sim);
	dev->priv = NULL;
}

/*
 * Device memory: a memfd mapped shared, so another process's sim card can
 * map a BO of it (spyre_bo_export, peer DMA between processes); private
 * anonymous memory when the memfd cannot be made (no sharing then).
 */
static uint8_t *sim_devmem_map(struct sim *sim)
{
	void *p;

	sim->memfd = memfd_create("spyre-sim-devmem", MFD_CLOEXEC);
	if (sim->memfd >= 0 && ftruncate(sim->memfd, (off_t)sim->cfg.mem_size) == 0) {
		p = mmap(NULL, sim->cfg.mem_size, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_NORESERVE, sim->memfd, 0);
		if (p != MAP_FAILED)
			return p;
	}
	if (sim->memfd >= 0)
		close(sim->memfd);
	sim->memfd = -1;
	return mmap(NULL, sim->cfg.mem_size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
}

/* The sim has one card unless SPYRE_SIM_CARDS asks for more (1..8). */
int spy_sim_count(int *count)
{
	const char *env = getenv("SPYRE_SIM_CARDS");
	int n = env ? atoi(env) : 1;

	*count = n < 1 ? 1 : n > 8 ? 8 : n;
	return 0;
}

int spy_sim_open(spyre_device *dev, int index)
{
	struct sim *sim;
	pthread_condattr_t ca;
	const char *err = NULL;
	unsigned int i;
	int count = 1;

	spy_sim_count(&count);
	if (index < 0 || index >= count)
		return spy_err(-ENODEV, "spyre_device_open: sim card index %d out of range (%d "
			       "card%s; SPYRE_SIM_CARDS sets more)", index, count,
			       count == 1 ? "" : "s");
	sim = calloc(1, sizeof(*sim));
	if (!sim)
		return spy_err(-ENOMEM, "spyre_device_open: out of memory");
	spyre_model_config_defaults(&sim->cfg);
	sim->cfg.mem_size = env_size("SPYRE_SIM_MEM", 1ull << 30);
	sim->cfg.mem_aperture = sim->cfg.mem_size;
	sim->virtual_clock =
		!(getenv("SPYRE_SIM_CLOCK") && !strcmp(getenv("SPYRE_SIM_CLOCK"), "real"));
	/* Pacing waits for real time to catch up: only meaningful on the real clock. */
	sim->cfg.pacing = !sim->virtual_clock && getenv("SPYRE_SIM_PACING") &&
			  atoi(getenv("SPYRE_SIM_PACING"));
	/* Scratchpads poisoned at launch start unless SPYRE_SIM_POISON=0. */
	sim->cfg.poison = !getenv("SPYRE_SIM_POISON") || atoi(getenv("SPYRE_SIM_POISON"));
	/* Racing programs fail unless SPYRE_SIM_HAZARD_CHECK=0. */
	sim->cfg.hazard_check = !getenv("SPYRE_SIM_HAZARD_CHECK") ||
				atoi(getenv("SPYRE_SIM_HAZARD_CHECK"));
	sim->timeout_ns = env_size("SPYRE_SIM_TIMEOUT_MS", 1000) * 1000000ull;
	sim->devmem = sim_devmem_map(sim);
	if (sim->devmem == MAP_FAILED) {
		uint64_t size = sim->cfg.mem_size;

		if (sim->memfd >= 0)
			close(sim->memfd);
		free(sim);
		return spy_err(-ENOMEM, "spyre_device_open: sim%d: cannot reserve %llu bytes of "
			       "device memory", index, (unsigned long long)size);
	}
	sim->model = spyre_model_new(&sim->cfg, &model_ops, sim, sim->devmem, &err);
	if (!sim->model) {
		munmap(sim->devmem, sim->cfg.mem_size);
		if (sim->memfd >= 0)
			close(sim->memfd);
		free(sim);
		return spy_err(-EINVAL, "spyre_device_open: sim%d: the card model refused its "
			       "configuration: %s", index, err ? err : "?");
	}
	sim->free = calloc(1, sizeof(*sim->free));
	sim->free->size = sim->cfg.mem_size;
	pthread_mutex_init(&sim->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&sim->cond, &ca);
	pthread_cond_init(&sim->kick, &ca);
	pthread_condattr_destroy(&ca);
	sim->nrings = sim->cfg.num_rings;
	for (i = 0; i < sim->nrings; i++) {
		struct sim_ring *r = &sim->rings[i];

		r->index = i;
		r->engine = i ? DRM_SPYRE_ENGINE_DMA : DRM_SPYRE_ENGINE_COMPUTE;
		r->descs = aligned_alloc(64, (size_t)SPYRE_DESC_SIZE << SIM_RING_LOG2);
		r->wb = aligned_alloc(64, sizeof(*r->wb));
		memset(r->descs, 0, (size_t)SPYRE_DESC_SIZE << SIM_RING_LOG2);
		sim_ring_hw_start(sim, r);
	}
	pthread_create(&sim->thread, NULL, sim_driver_thread, sim);
	dev->priv = sim;
	dev->ops = &spy_sim_ops;
	snprintf(dev->name, sizeof(dev->name), "sim%d", index);
	snprintf(dev->path, sizeof(dev->path), "(in-process card model)");
	return 0;
}

/*
 * A peer BO: in the sim, "bus addresses" are process addresses, so the
 * owner card's memory is at its devmem pointer. Unlike the driver's, the
 * peer BO does not hold the owner's BO: its user (peer.c) waits for the
 * copy before it returns, while the caller still holds both.
 */
static int sim_bo_peer_import(spyre_device *dev, spyre_device *owner, uint32_t owner_handle,
			      uint32_t *handle)
{
	struct sim *sim = S(dev), *o;
	struct sim_bo *obo, *bo;
	uint64_t size, bus = 0;
	int ret = 0;

	if (owner->ops != &spy_sim_ops)
		return -EXDEV;
	if (owner == dev)
		return -EOPNOTSUPP;	/* the driver's self-import gives the BO itself */
	o = S(owner);
	pthread_mutex_lock(&o->lock);
	obo = sim_bo_lookup(o, owner_handle);
	if (o->lost)
		ret = -ENODEV;
	else if (!obo)
		ret = -ENOENT;
	else if (obo->placement != DRM_SPYRE_PLACEMENT_DEVICE)
		ret = -EINVAL;
	if (!ret) {
		size = obo->size;
		bus = (uintptr_t)(o->devmem + obo->dev_addr);
	}
	pthread_mutex_unlock(&o->lock);
	if (ret)
		return ret;
	bo = sim_bo_new(size, DRM_SPYRE_PLACEMENT_PEER, NULL);
	if (!bo)
		return -ENOMEM;
	bo->dev_addr = bus;
	ret = sim_bo_insert(sim, bo, handle);
	if (ret)
		sim_bo_discard(bo);
	return ret;
}

/* Between processes: the card's memfd (a dup the caller owns) and the BO's place in it. */
static int sim_bo_export(spyre_device *dev, uint32_t handle, int *fd, uint64_t *offset)
{
	struct sim *sim = S(dev);
	struct sim_bo *bo;
	int ret = 0;

	if (sim->memfd < 0)
		return -EOPNOTSUPP;
	pthread_mutex_lock(&sim->lock);
	bo = sim_bo_lookup(sim, handle);
	if (sim->lost)
		ret = -ENODEV;
	else if (!bo)
		ret = -ENOENT;
	else if (bo->placement != DRM_SPYRE_PLACEMENT_DEVICE)
		ret = -EINVAL;
	else
		*offset = bo->dev_addr;
	pthread_mutex_unlock(&sim->lock);
	if (ret)
		return ret;
	*fd = fcntl(sim->memfd, F_DUPFD_CLOEXEC, 0);
	return *fd < 0 ? -errno : 0;
}

/* The fd names a sim card's device memory? (a memfd of spyre_bo_export) */
static bool sim_fd_is_devmem(int fd)
{
	static const char want[] = "/memfd:spyre-sim-devmem";
	char path[64], link[128];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = 0;
	return !strncmp(link, want, sizeof(want) - 1);
}

/*
 * A peer BO over another process's sim card memory: mapped here, so its
 * "bus address" is a process address like the in-process peers'. The
 * mapping lives as long as the BO (and the jobs holding it).
 */
static int sim_bo_import(spyre_device *dev, int fd, uint64_t offset, uint64_t size,
			 uint32_t *handle)
{
	struct sim *sim = S(dev);
	uint64_t head = offset % 4096;
	struct stat st, own;
	struct sim_bo *bo;
	void *map;
	int ret;

	if (!sim_fd_is_devmem(fd))
		return -EOPNOTSUPP;	/* e.g. a dma-buf of a real card */
	if (sim->memfd >= 0 && !fstat(fd, &st) && !fstat(sim->memfd, &own) &&
	    st.st_ino == own.st_ino && st.st_dev == own.st_dev)
		return -EXDEV;		/* this card's own memory */
	map = mmap(NULL, size + head, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   (off_t)(offset - head));
	if (map == MAP_FAILED)
		return -errno == -EINVAL ? -ERANGE : -errno;
	bo = sim_bo_new(size, DRM_SPYRE_PLACEMENT_PEER, NULL);
	if (!bo) {
		munmap(map, size + head);
		return -ENOMEM;
	}
	bo->dev_addr = (uintptr_t)map + head;
	bo->peer_map = map;
	bo->peer_map_len = size + head;
	ret = sim_bo_insert(sim, bo, handle);
	if (ret)
		sim_bo_discard(bo);
	return ret;
}

const struct spy_backend_ops spy_sim_ops = {
	.name = "sim",
	.close = sim_close,
	.get_param = sim_get_param,
	.bo_create = sim_bo_create,
	.bo_userptr = sim_bo_userptr,
	.bo_info = sim_bo_info,
	.bo_map = sim_bo_map,
	.bo_unmap = sim_bo_unmap,
	.bo_close = sim_bo_close,
	.queue_create = sim_queue_create,
	.queue_destroy = sim_queue_destroy,
	.submit = sim_submit,
	.syncobj_create = sim_syncobj_create,
	.syncobj_destroy = sim_syncobj_destroy,
	.syncobj_wait = sim_syncobj_wait,
	.syncobj_query = sim_syncobj_query,
	.syncobj_signal = sim_syncobj_signal,
	.fence_error = sim_fence_error,
	.queue_error = sim_queue_error,
	.inject_fault = sim_inject_fault,
	.bo_peer_import = sim_bo_peer_import,
	.bo_export = sim_bo_export,
	.bo_import = sim_bo_import,
};
