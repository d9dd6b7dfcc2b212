// SPDX-License-Identifier: MIT
/*
 * Sim backend objects: fences, timeline syncobjs, BOs and the device
 * memory allocator. Every function runs under sim->lock.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sim.h"

struct sim_fence *sim_fence_new(void)
{
	struct sim_fence *f = calloc(1, sizeof(*f));

	if (f)
		f->refs = 1;
	return f;
}

void sim_fence_put(struct sim_fence *f)
{
	if (f && !--f->refs)
		free(f);
}

void sim_fence_signal(struct sim *sim, struct sim_fence *f, int error)
{
	if (f->signaled)
		return;
	f->error = error;
	f->signaled = true;
	pthread_cond_broadcast(&sim->cond);
	pthread_cond_broadcast(&sim->kick);	/* jobs may have become runnable */
	sim->kicks++;
}

struct sim_bo *sim_bo_lookup(struct sim *sim, uint32_t handle)
{
	if (!handle || handle > sim->nbos || !sim->bos[handle - 1] || !sim->bos[handle - 1]->open)
		return NULL;
	return sim->bos[handle - 1];
}

/* Frees @bo's host memory (not the caller's), scatter list and itself. */
void sim_bo_discard(struct sim_bo *bo)
{
	if (!bo->user)
		free(bo->host);
	if (bo->peer_map)
		munmap(bo->peer_map, bo->peer_map_len);
	free(bo->sg);
	free(bo);
}

void sim_bo_put(struct sim *sim, struct sim_bo *bo)
{
	if (--bo->refs)
		return;
	if (bo->placement == DRM_SPYRE_PLACEMENT_DEVICE)
		sim_mem_free(sim, bo->dev_addr, bo->size);
	sim_bo_discard(bo);
}

struct sim_syncobj *sim_syncobj_lookup(struct sim *sim, uint32_t handle)
{
	if (!handle || handle > sim->nsyncs || !sim->syncs[handle - 1])
		return NULL;
	return sim->syncs[handle - 1];
}

/* Drop the signalled prefix of @so's points, remembering failures. */
void sim_syncobj_collect(struct sim_syncobj *so)
{
	unsigned int n = 0;

	while (n < so->npts && so->pts[n].fence->signaled) {
		struct sim_point *p = &so->pts[n];

		if (p->fence->error) {
			so->errs[so->errs_next] = (struct sim_err_point){ p->point, p->fence->error };
			so->errs_next = (so->errs_next + 1) % 64;
			if (so->nerrs < 64)
				so->nerrs++;
		}
		so->signaled_upto = p->point;
		if (p->fence->dev_end > so->dev_upto)
			so->dev_upto = p->fence->dev_end;
		sim_fence_put(p->fence);
		n++;
	}
	if (n) {
		memmove(so->pts, so->pts + n, (so->npts - n) * sizeof(so->pts[0]));
		so->npts -= n;
	}
}

int sim_syncobj_add(struct sim *sim, struct sim_syncobj *so, uint64_t point, struct sim_fence *f)
{
	(void)sim;
	if (point <= so->last)
		return -EINVAL;
	if (so->npts == so->cap) {
		unsigned int cap = so->cap ? so->cap * 2 : 16;
		struct sim_point *p = realloc(so->pts, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		so->pts = p;
		so->cap = cap;
	}
	f->refs++;
	so->pts[so->npts++] = (struct sim_point){ point, f };
	so->last = point;
	sim_syncobj_collect(so);
	return 0;
}

struct sim_fence *sim_syncobj_find(struct sim_syncobj *so, uint64_t point, int *ret)
{
	unsigned int i;

	*ret = 0;
	sim_syncobj_collect(so);
	if (point <= so->signaled_upto)
		return NULL;
	if (point > so->last) {
		*ret = -EINVAL;
		return NULL;
	}
	for (i = 0; i < so->npts; i++)
		if (so->pts[i].point >= point)
			return so->pts[i].fence;
	return NULL;
}

uint64_t sim_syncobj_point_dev(struct sim_syncobj *so, uint64_t point)
{
	unsigned int i;

	if (point <= so->signaled_upto)
		return so->dev_upto;
	for (i = 0; i < so->npts; i++)
		if (so->pts[i].point >= point)
			return so->pts[i].fence->signaled ? so->pts[i].fence->dev_end : 0;
	return 0;
}

bool sim_syncobj_signaled(struct sim_syncobj *so, uint64_t point)
{
	sim_syncobj_collect(so);
	return point <= so->signaled_upto;
}

/* First fit over the sorted free list; 4 KiB granules. */
int sim_mem_alloc(struct sim *sim, uint64_t size, uint64_t *addr)
{
	struct sim_range **pp, *r;

	for (pp = &sim->free; (r = *pp); pp = &r->next) {
		if (r->size < size)
			continue;
		*addr = r->off;
		r->off += size;
		r->size -= size;
		if (!r->size) {
			*pp = r->next;
			free(r);
		}
		sim->mem_used += size;
		return 0;
	}
	return -ENOMEM;
}

void sim_mem_free(struct sim *sim, uint64_t addr, uint64_t size)
{
	struct sim_range **pp, *r, *prev = NULL, *n;

	/*
	 * Give the pages back to the host; the range reads as zero when reused
	 * (devmem is a shared memfd mapping, where only MADV_REMOVE frees).
	 */
	madvise(sim->devmem + addr, size, sim->memfd >= 0 ? MADV_REMOVE : MADV_DONTNEED);
	sim->mem_used -= size;
	for (pp = &sim->free; (r = *pp) && r->off < addr; pp = &r->next)
		prev = r;
	if (prev && prev->off + prev->size == addr) {
		prev->size += size;
		if (r && addr + size == r->off) {
			prev->size += r->size;
			prev->next = r->next;
			free(r);
		}
		return;
	}
	if (r && addr + size == r->off) {
		r->off = addr;
		r->size += size;
		return;
	}
	n = malloc(sizeof(*n));
	if (!n)
		return;	/* the range leaks from the simulated card, not from the host */
	n->off = addr;
	n->size = size;
	n->next = r;
	*pp = n;
}
