// SPDX-License-Identifier: MIT
/*
 * Streams: lifecycle, references, kernel queues, and waiting for points.
 *
 * A stream is a kernel queue per engine plus a timeline syncobj: library
 * operation n on the stream signals point n (stream_submit.c assigns and
 * issues them). The queue of the stream's own engine is made with the
 * stream; the other engine's (a launch on a DMA stream, a copy on a
 * compute stream) on its first use, by spy_stream_prepare before the
 * submitting call takes any lock, so no queue ioctl runs on the
 * submission path.
 */
#include <stdlib.h>

#include "stream.h"
#include "stream_use.h"

#define WAIT_FOREVER INT64_MAX

void spy_stream_put_locked(struct spyre_stream *s)
{
	spyre_device *dev = s->dev;

	if (--s->refs)
		return;
	pthread_mutex_destroy(&s->submit_lock);
	pthread_mutex_destroy(&s->queue_lock);
	dev->ops->syncobj_destroy(dev, s->timeline);
	spy_dev_put(dev);
	free(s);
}

void spy_stream_get(struct spyre_stream *s)
{
	pthread_mutex_lock(&s->dev->lock);
	s->refs++;
	pthread_mutex_unlock(&s->dev->lock);
}

void spy_stream_put(struct spyre_stream *s)
{
	spyre_device *dev = s->dev;

	pthread_mutex_lock(&dev->lock);
	spy_stream_put_locked(s);
	pthread_mutex_unlock(&dev->lock);
}

void spy_deps_hold(spyre_device *dev, struct spy_dep *const *slots, const struct spy_dep *vals,
		   unsigned int n)
{
	unsigned int i;

	/* the common case: each slot keeps its stream, only the point moves on */
	for (i = 0; i < n && slots[i]->s == vals[i].s; i++)
		;
	if (i == n) {
		for (i = 0; i < n; i++)
			slots[i]->point = vals[i].point;
		return;
	}
	pthread_mutex_lock(&dev->lock);
	for (i = 0; i < n; i++) {
		struct spy_dep *d = slots[i];

		if (vals[i].s)
			vals[i].s->refs++;
		if (d->s)
			spy_stream_put_locked(d->s);
		*d = vals[i];
	}
	pthread_mutex_unlock(&dev->lock);
}

bool spy_stream_point_done(struct spyre_stream *s, uint64_t point)
{
	spyre_device *dev = s->dev;
	uint64_t done = 0;
	bool issued;

	pthread_mutex_lock(&dev->lock);
	issued = s->issued_point >= point;
	pthread_mutex_unlock(&dev->lock);
	return issued && !dev->ops->syncobj_query(dev, s->timeline, &done) && done >= point;
}

static int queue_make(spyre_device *dev, int engine, uint32_t priority, uint32_t *id)
{
	struct drm_spyre_queue_create qc = { 0 };
	int ret;

	qc.engine = engine;
	qc.priority = priority;
	ret = dev->ops->queue_create(dev, &qc);
	if (!ret)
		*id = qc.queue_id;
	return ret;
}

spyre_device *spy_stream_device(const struct spyre_stream *s)
{
	return s->dev;
}

void spy_stream_prepare(struct spyre_stream *s, unsigned int engines)
{
	spyre_device *dev = s->dev;
	unsigned int e;

	if (!(engines & ~__atomic_load_n(&s->queues_tried, __ATOMIC_ACQUIRE)))
		return;	/* the common case: made at creation or by an earlier call */
	pthread_mutex_lock(&s->queue_lock);
	for (e = 0; e < 2; e++) {
		uint32_t id = 0;
		int ret;

		if (!(engines & SPY_ENGINE_BIT(e)) || (s->queues_tried & SPY_ENGINE_BIT(e)))
			continue;
		/*
		 * If the driver refuses a second queue (the per-file limit),
		 * the stream's first queue serves: spy_stream_queue_locked.
		 */
		ret = queue_make(dev, e, s->priority, &id);
		pthread_mutex_lock(&dev->lock);
		if (ret) {
			s->queue_failed[e] = true;
		} else {
			s->queue[e] = id;
			s->has_queue[e] = true;
		}
		pthread_mutex_unlock(&dev->lock);
		__atomic_or_fetch(&s->queues_tried, SPY_ENGINE_BIT(e), __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&s->queue_lock);
}

int spy_cmds_engine(const struct drm_spyre_cmd *cmds, unsigned int n)
{
	bool dma = false;
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (cmds[i].type == DRM_SPYRE_CMD_LAUNCH)
			return SPYRE_ENGINE_COMPUTE;
		if (cmds[i].type == DRM_SPYRE_CMD_COPY || cmds[i].type == DRM_SPYRE_CMD_FILL)
			dma = true;
	}
	return dma ? SPYRE_ENGINE_DMA : -1;
}

int spy_stream_queue_locked(const struct spyre_stream *s, int engine, uint32_t *id)
{
	if (s->has_queue[engine]) {
		*id = s->queue[engine];
		return engine;
	}
	if (engine == SPYRE_ENGINE_COMPUTE)
		return -EINVAL;
	*id = s->queue[s->engine];
	return s->engine;
}

int spyre_stream_create_with_priority(spyre_device *dev, enum spyre_engine engine,
				      enum spyre_priority priority, spyre_stream **out)
{
	static const char *call = "spyre_stream_create";
	struct spyre_stream *s;
	int ret;

	if (!dev || !out)
		return spy_err(-EINVAL, "%s: device or out is NULL", call);
	if (engine != SPYRE_ENGINE_COMPUTE && engine != SPYRE_ENGINE_DMA)
		return spy_err(-EINVAL, "%s: %s: unknown engine %d", call, dev->name, (int)engine);
	if (priority != SPYRE_PRIORITY_LOW && priority != SPYRE_PRIORITY_NORMAL &&
	    priority != SPYRE_PRIORITY_HIGH)
		return spy_err(-EINVAL, "%s: %s: unknown priority %d", call, dev->name,
			       (int)priority);
	s = calloc(1, sizeof(*s));
	if (!s)
		return spy_err(-ENOMEM, "%s: out of memory", call);
	ret = dev->ops->syncobj_create(dev, &s->timeline);
	if (ret) {
		free(s);
		return spy_dev_err(dev, ret, call, "creating its syncobj");
	}
	s->priority = priority == SPYRE_PRIORITY_LOW    ? DRM_SPYRE_PRIORITY_LOW
		      : priority == SPYRE_PRIORITY_HIGH ? DRM_SPYRE_PRIORITY_HIGH
							: DRM_SPYRE_PRIORITY_NORMAL;
	ret = queue_make(dev, engine, s->priority, &s->queue[engine]);
	if (ret) {
		dev->ops->syncobj_destroy(dev, s->timeline);
		free(s);
		if (ret == -ENOSPC)
			return spy_err(ret, "%s: %s: this process already holds the most queues "
				       "the driver allows per open device", call, dev->name);
		if (ret == -EACCES)
			return spy_err(ret, "%s: %s: high priority needs CAP_SYS_NICE", call,
				       dev->name);
		return spy_dev_err(dev, ret, call, "creating a %s queue",
				   engine == SPYRE_ENGINE_DMA ? "DMA" : "compute");
	}
	s->has_queue[engine] = true;
	s->queues_tried = SPY_ENGINE_BIT(engine);
	s->dev = dev;
	s->engine = engine;
	s->last_engine = -1;
	s->refs = 1;
	pthread_mutex_init(&s->submit_lock, NULL);
	pthread_mutex_init(&s->queue_lock, NULL);
	spy_dev_get(dev);
	pthread_mutex_lock(&dev->lock);
	s->next_live = dev->streams;
	dev->streams = s;
	pthread_mutex_unlock(&dev->lock);
	*out = s;
	return 0;
}

int spyre_stream_create(spyre_device *dev, enum spyre_engine engine, spyre_stream **out)
{
	return spyre_stream_create_with_priority(dev, engine, SPYRE_PRIORITY_NORMAL, out);
}

enum spyre_engine spyre_stream_engine(const spyre_stream *s)
{
	return s ? s->engine : SPYRE_ENGINE_COMPUTE;
}

/* Wait until @point of @s exists in the kernel, then until it signalled. */
int spy_stream_wait_point(struct spyre_stream *s, uint64_t point)
{
	spyre_device *dev = s->dev;

	if (!point)
		return 0;
	pthread_mutex_lock(&dev->lock);
	/* A point whose submission failed is handed out again: stop at the last one. */
	while (s->issued_point < point && point <= s->next_point)
		spy_dev_wait_locked(dev);
	if (point > s->next_point)
		point = s->next_point;
	pthread_mutex_unlock(&dev->lock);
	if (!point)
		return 0;
	return dev->ops->syncobj_wait(dev, &s->timeline, &point, 1, WAIT_FOREVER);
}

int spyre_stream_synchronize(spyre_stream *s)
{
	spyre_device *dev;
	uint64_t target;
	int ret;

	if (!s)
		return spy_err(-EINVAL, "spyre_stream_synchronize: stream is NULL");
	dev = s->dev;
	pthread_mutex_lock(&dev->lock);
	target = s->next_point;
	pthread_mutex_unlock(&dev->lock);
	ret = spy_stream_wait_point(s, target);
	if (ret)
		return spy_dev_err(dev, ret, "spyre_stream_synchronize", "waiting for operation "
				   "%llu", (unsigned long long)target);
	spy_stream_poll_errors(s, target);
	return spy_stream_sticky_error(s, "spyre_stream_synchronize");
}


/* References to every live stream of @dev (NULL-terminated, heap); NULL on ENOMEM. */
struct spyre_stream **spy_live_streams(spyre_device *dev)
{
	struct spyre_stream **v, *s;
	size_t n = 0;

	pthread_mutex_lock(&dev->lock);
	for (s = dev->streams; s; s = s->next_live)
		n++;
	v = calloc(n + 1, sizeof(*v));
	for (n = 0, s = dev->streams; v && s; s = s->next_live) {
		s->refs++;
		v[n++] = s;
	}
	pthread_mutex_unlock(&dev->lock);
	return v;
}

void spy_put_streams(spyre_device *dev, struct spyre_stream **v)
{
	size_t i;

	pthread_mutex_lock(&dev->lock);
	for (i = 0; v[i]; i++)
		spy_stream_put_locked(v[i]);
	pthread_mutex_unlock(&dev->lock);
	free(v);
}

int spyre_device_synchronize(spyre_device *dev)
{
	struct spyre_stream **v, *failed = NULL;
	int ret = 0, r;
	size_t i;

	if (!dev)
		return spy_err(-EINVAL, "spyre_device_synchronize: device is NULL");
	v = spy_live_streams(dev);
	if (!v)
		return spy_err(-ENOMEM, "spyre_device_synchronize: out of memory");
	for (i = 0; v[i]; i++) {
		r = spyre_stream_synchronize(v[i]);
		if (r && !ret) {
			ret = r;
			failed = v[i];
		}
	}
	/* The message names the first failing stream's operation. */
	if (failed && failed->error)
		ret = spy_stream_sticky_error(failed, "spyre_device_synchronize");
	spy_put_streams(dev, v);
	return ret;
}

int spyre_stream_query(spyre_stream *s)
{
	spyre_device *dev;
	uint64_t target, done = 0;
	bool issued;
	int ret;

	if (!s)
		return spy_err(-EINVAL, "spyre_stream_query: stream is NULL");
	dev = s->dev;
	pthread_mutex_lock(&dev->lock);
	target = s->next_point;
	issued = s->issued_point >= target;
	pthread_mutex_unlock(&dev->lock);
	if (!issued)
		return -EBUSY;
	if (!target)
		return 0;
	ret = dev->ops->syncobj_query(dev, s->timeline, &done);
	if (ret)
		return spy_dev_err(dev, ret, "spyre_stream_query", "querying the timeline");
	return done >= target ? 0 : -EBUSY;
}

int spyre_stream_destroy(spyre_stream *s)
{
	struct spyre_stream **pp;
	spyre_device *dev;
	int ret, ret2, e;

	if (!s)
		return spy_err(-EINVAL, "spyre_stream_destroy: stream is NULL");
	dev = s->dev;
	ret = spyre_stream_synchronize(s);
	ret2 = 0;
	for (e = 0; e < 2; e++) {
		int r = s->has_queue[e] ? dev->ops->queue_destroy(dev, s->queue[e]) : 0;

		if (r && !ret2)
			ret2 = r;
	}
	pthread_mutex_lock(&dev->lock);
	s->destroyed = true;
	for (pp = &dev->streams; *pp; pp = &(*pp)->next_live) {
		if (*pp == s) {
			*pp = s->next_live;
			break;
		}
	}
	spy_waits_consumed_locked(s, s->nwait);
	spy_stream_put_locked(s);
	pthread_mutex_unlock(&dev->lock);
	if (!ret && ret2 && ret2 != -ENODEV)
		ret = spy_dev_err(dev, ret2, "spyre_stream_destroy", "destroying the queue");
	return ret;
}
