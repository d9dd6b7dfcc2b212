// SPDX-License-Identifier: MIT
/*
 * A sub-allocator for small buffers: first fit over a sorted free list in
 * each chunk (one BO per chunk), so thousands of small tensors cost a few
 * BOs. Chunks are added on demand and released by spyre_pool_trim (those
 * with no allocation) or when the pool is destroyed.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define POOL_MIN_ALIGN 128ull	/* one stick */

struct pool_range {
	uint64_t off, size;
	struct pool_range *next;
};

struct pool_chunk {
	spyre_bo *bo;
	struct pool_range *free;	/* sorted by offset, coalesced */
	struct pool_range *used;
	struct pool_chunk *next;
};

struct spyre_pool {
	spyre_device *dev;
	enum spyre_mem mem;
	uint64_t chunk_size;
	pthread_mutex_t lock;
	struct pool_chunk *chunks;
	uint64_t used, reserved;
	uint64_t peak_used, peak_reserved, allocs, frees, trimmed;
};

int spyre_pool_create(spyre_device *dev, enum spyre_mem mem, uint64_t chunk_size,
		      spyre_pool **out)
{
	spyre_pool *p;

	if (!dev || !out)
		return spy_err(-EINVAL, "spyre_pool_create: device or out is NULL");
	if (mem != SPYRE_MEM_DEVICE && mem != SPYRE_MEM_HOST)
		return spy_err(-EINVAL, "spyre_pool_create: %s: unknown memory kind %d",
			       dev->name, (int)mem);
	if (!chunk_size)
		chunk_size = 2ull << 20;
	p = calloc(1, sizeof(*p));
	if (!p)
		return spy_err(-ENOMEM, "spyre_pool_create: out of memory");
	p->dev = dev;
	p->mem = mem;
	p->chunk_size = (chunk_size + SPY_PAGE - 1) & ~(SPY_PAGE - 1);
	pthread_mutex_init(&p->lock, NULL);
	spy_dev_get(dev);
	*out = p;
	return 0;
}

static int chunk_add(spyre_pool *p, uint64_t min_size, struct pool_chunk **out)
{
	uint64_t size = p->chunk_size > min_size ? p->chunk_size : min_size;
	struct pool_chunk *c = calloc(1, sizeof(*c));
	struct pool_range *r = calloc(1, sizeof(*r));
	int ret;

	if (!c || !r) {
		free(c);
		free(r);
		return spy_err(-ENOMEM, "spyre_pool_alloc: out of memory");
	}
	ret = spyre_bo_create(p->dev, size, p->mem, &c->bo);
	if (ret) {
		free(c);
		free(r);
		return ret;
	}
	r->off = 0;
	r->size = c->bo->size;
	c->free = r;
	c->next = p->chunks;
	p->chunks = c;
	p->reserved += c->bo->size;
	if (p->reserved > p->peak_reserved)
		p->peak_reserved = p->reserved;
	*out = c;
	return 0;
}

/* Carve @size at @align from chunk @c's free list; true on success. */
static bool chunk_take(struct pool_chunk *c, uint64_t size, uint64_t align, uint64_t *off)
{
	struct pool_range **pp, *r;

	for (pp = &c->free; (r = *pp); pp = &r->next) {
		uint64_t start = (r->off + align - 1) & ~(align - 1);
		uint64_t pad = start - r->off;
		struct pool_range *u;

		if (pad > r->size || r->size - pad < size)
			continue;
		u = calloc(1, sizeof(*u));
		if (!u)
			return false;
		u->off = start;
		u->size = size;
		u->next = c->used;
		c->used = u;
		if (pad) {
			/* keep the alignment gap as a free range before the block */
			struct pool_range *tail = calloc(1, sizeof(*tail));

			if (!tail) {
				c->used = u->next;
				free(u);
				return false;
			}
			tail->off = start + size;
			tail->size = r->size - pad - size;
			r->size = pad;
			if (tail->size) {
				tail->next = r->next;
				r->next = tail;
			} else {
				free(tail);
			}
		} else {
			r->off += size;
			r->size -= size;
			if (!r->size) {
				*pp = r->next;
				free(r);
			}
		}
		*off = start;
		return true;
	}
	return false;
}

int spyre_pool_alloc(spyre_pool *p, uint64_t size, uint64_t align, struct spyre_buf *out)
{
	struct pool_chunk *c;
	uint64_t off, asize;
	int ret;

	if (!p || !out)
		return spy_err(-EINVAL, "spyre_pool_alloc: pool or out is NULL");
	if (!size)
		return spy_err(-EINVAL, "spyre_pool_alloc: %s: size 0", p->dev->name);
	if (align & (align - 1))
		return spy_err(-EINVAL, "spyre_pool_alloc: %s: alignment %llu is not a power of "
			       "two", p->dev->name, (unsigned long long)align);
	if (align < POOL_MIN_ALIGN)
		align = POOL_MIN_ALIGN;
	if (size > UINT64_MAX / 2)
		return spy_err(-E2BIG, "spyre_pool_alloc: %s: size too large", p->dev->name);
	asize = (size + POOL_MIN_ALIGN - 1) & ~(POOL_MIN_ALIGN - 1);
	pthread_mutex_lock(&p->lock);
	for (c = p->chunks; c; c = c->next)
		if (chunk_take(c, asize, align, &off))
			goto found;
	ret = chunk_add(p, asize + align, &c);
	if (ret) {
		pthread_mutex_unlock(&p->lock);
		return ret;
	}
	if (!chunk_take(c, asize, align, &off)) {
		pthread_mutex_unlock(&p->lock);
		return spy_err(-ENOMEM, "spyre_pool_alloc: out of memory");
	}
found:
	p->used += asize;
	p->allocs++;
	if (p->used > p->peak_used)
		p->peak_used = p->used;
	pthread_mutex_unlock(&p->lock);
	out->bo = c->bo;
	out->offset = off;
	out->size = size;
	return 0;
}

/* Return [off, off + size) to @c's sorted free list, merging neighbours. */
static int chunk_give(struct pool_chunk *c, uint64_t off, uint64_t size)
{
	struct pool_range **pp, *r, *prev = NULL, *n;

	for (pp = &c->free; (r = *pp) && r->off < off; pp = &r->next)
		prev = r;
	if (prev && prev->off + prev->size == off) {
		prev->size += size;
		if (r && off + size == r->off) {
			prev->size += r->size;
			prev->next = r->next;
			free(r);
		}
		return 0;
	}
	if (r && off + size == r->off) {
		r->off = off;
		r->size += size;
		return 0;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->off = off;
	n->size = size;
	n->next = r;
	*pp = n;
	return 0;
}

int spyre_pool_free(spyre_pool *p, const struct spyre_buf *buf)
{
	struct pool_chunk *c;
	struct pool_range **pp, *u;
	int ret;

	if (!p || !buf)
		return spy_err(-EINVAL, "spyre_pool_free: pool or buffer is NULL");
	pthread_mutex_lock(&p->lock);
	for (c = p->chunks; c; c = c->next) {
		if (c->bo != buf->bo)
			continue;
		for (pp = &c->used; (u = *pp); pp = &u->next) {
			if (u->off != buf->offset)
				continue;
			*pp = u->next;
			ret = chunk_give(c, u->off, u->size);
			if (ret) {
				u->next = c->used;
				c->used = u;
				pthread_mutex_unlock(&p->lock);
				return spy_err(ret, "spyre_pool_free: out of memory");
			}
			p->used -= u->size;
			p->frees++;
			free(u);
			pthread_mutex_unlock(&p->lock);
			return 0;
		}
	}
	pthread_mutex_unlock(&p->lock);
	return spy_err(-EINVAL, "spyre_pool_free: %s: buffer at offset %llu was not allocated "
		       "from this pool (or was already freed)", p->dev->name,
		       (unsigned long long)buf->offset);
}

int spyre_pool_usage(spyre_pool *p, uint64_t *used, uint64_t *reserved)
{
	if (!p)
		return spy_err(-EINVAL, "spyre_pool_usage: pool is NULL");
	pthread_mutex_lock(&p->lock);
	if (used)
		*used = p->used;
	if (reserved)
		*reserved = p->reserved;
	pthread_mutex_unlock(&p->lock);
	return 0;
}

int spyre_pool_get_stats(spyre_pool *p, struct spyre_pool_stats *st)
{
	struct pool_chunk *c;
	struct pool_range *r;

	if (!p || !st)
		return spy_err(-EINVAL, "spyre_pool_get_stats: pool or stats is NULL");
	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&p->lock);
	st->used = p->used;
	st->reserved = p->reserved;
	st->peak_used = p->peak_used;
	st->peak_reserved = p->peak_reserved;
	st->allocs = p->allocs;
	st->frees = p->frees;
	st->trimmed = p->trimmed;
	for (c = p->chunks; c; c = c->next) {
		st->chunks++;
		for (r = c->free; r; r = r->next)
			if (r->size > st->largest_free)
				st->largest_free = r->size;
	}
	pthread_mutex_unlock(&p->lock);
	return 0;
}

static void chunk_free(struct pool_chunk *c)
{
	while (c->free) {
		struct pool_range *r = c->free;

		c->free = r->next;
		free(r);
	}
	spyre_bo_destroy(c->bo);
	free(c);
}

int spyre_pool_trim(spyre_pool *p, uint64_t keep, uint64_t *released)
{
	struct pool_chunk **pp, *c, *gone = NULL;
	uint64_t n = 0;

	if (!p)
		return spy_err(-EINVAL, "spyre_pool_trim: pool is NULL");
	pthread_mutex_lock(&p->lock);
	for (pp = &p->chunks; (c = *pp) && p->reserved > keep;) {
		if (c->used) {
			pp = &c->next;
			continue;
		}
		*pp = c->next;
		p->reserved -= c->bo->size;
		p->trimmed += c->bo->size;
		n += c->bo->size;
		c->next = gone;
		gone = c;
	}
	pthread_mutex_unlock(&p->lock);
	/* Work still using a freed block keeps its BO's memory until it ends. */
	while ((c = gone)) {
		gone = c->next;
		chunk_free(c);
	}
	if (released)
		*released = n;
	return 0;
}

int spyre_pool_destroy(spyre_pool *p)
{
	struct pool_chunk *c;

	if (!p)
		return spy_err(-EINVAL, "spyre_pool_destroy: pool is NULL");
	if (p->used)
		return spy_err(-EBUSY, "spyre_pool_destroy: %s: %llu bytes still allocated",
			       p->dev->name, (unsigned long long)p->used);
	while ((c = p->chunks)) {
		p->chunks = c->next;
		chunk_free(c);
	}
	pthread_mutex_destroy(&p->lock);
	spy_dev_put(p->dev);
	free(p);
	return 0;
}
