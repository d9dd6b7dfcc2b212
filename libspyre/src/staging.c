// SPDX-License-Identifier: MIT
/*
 * Staging blocks for copies from and to pageable host memory: a host pool
 * owned by the device (made on first use), whose blocks are given back
 * once the copy that reads or writes them completed. Completed blocks are
 * collected whenever a new one is needed, so no host work item is queued
 * behind the copy.
 */
#include <stdlib.h>

#include "internal.h"
#include "stream_use.h"

#define STAGING_CHUNK (4ull << 20)

struct spy_staged {
	struct spyre_buf buf;
	struct spyre_stream *s;	/* reference held */
	uint64_t point;
	struct spy_staged *next;
};

void spy_staging_init(spyre_device *dev)
{
	pthread_mutex_init(&dev->staging_lock, NULL);
}

/* Free the blocks whose copies completed (all of them if @wait). Under staging_lock. */
static void collect_locked(spyre_device *dev, bool wait)
{
	struct spy_staged **pp = &dev->staged, *e;

	while ((e = *pp)) {
		if (wait)
			spy_stream_wait_point(e->s, e->point);
		else if (!spy_stream_point_done(e->s, e->point)) {
			pp = &e->next;
			continue;
		}
		*pp = e->next;
		spyre_pool_free(dev->staging, &e->buf);
		spy_stream_put(e->s);
		free(e);
	}
}

int spy_staging_alloc(spyre_device *dev, uint64_t size, struct spyre_buf *buf, void **ptr)
{
	void *map;
	int ret;

	pthread_mutex_lock(&dev->staging_lock);
	if (!dev->staging) {
		ret = spyre_pool_create(dev, SPYRE_MEM_HOST, STAGING_CHUNK, &dev->staging);
		if (ret)
			goto out;
	}
	collect_locked(dev, false);
	ret = spyre_pool_alloc(dev->staging, size, 0, buf);
	if (ret)
		goto out;
	ret = spyre_bo_map(buf->bo, &map);
	if (ret) {
		spyre_pool_free(dev->staging, buf);
		goto out;
	}
	*ptr = (char *)map + buf->offset;
out:
	pthread_mutex_unlock(&dev->staging_lock);
	return ret;
}

void spy_staging_free(spyre_device *dev, const struct spyre_buf *buf)
{
	pthread_mutex_lock(&dev->staging_lock);
	spyre_pool_free(dev->staging, buf);
	pthread_mutex_unlock(&dev->staging_lock);
}

void spy_staging_release_after(spyre_device *dev, const struct spyre_buf *buf,
			       struct spyre_stream *s, uint64_t point)
{
	struct spy_staged *e = malloc(sizeof(*e));

	if (!e) {
		/* No memory to remember it: wait for the copy instead. */
		spy_stream_wait_point(s, point);
		spy_staging_free(dev, buf);
		return;
	}
	spy_stream_get(s);
	e->buf = *buf;
	e->s = s;
	e->point = point;
	pthread_mutex_lock(&dev->staging_lock);
	e->next = dev->staged;
	dev->staged = e;
	pthread_mutex_unlock(&dev->staging_lock);
}

void spy_staging_fini(spyre_device *dev)
{
	pthread_mutex_lock(&dev->staging_lock);
	collect_locked(dev, true);
	if (dev->staging && !spyre_pool_destroy(dev->staging))
		dev->staging = NULL;
	pthread_mutex_unlock(&dev->staging_lock);
}
