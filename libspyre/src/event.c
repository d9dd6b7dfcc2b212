// SPDX-License-Identifier: MIT
/*
 * Events: a recorded event is a point of the recording stream's timeline.
 * Waiting for it on another stream makes that point an in-sync of the
 * stream's next submission, so the card side orders the work without the
 * host. Timing events also write a device timestamp into a small host BO.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int spyre_event_create(spyre_device *dev, unsigned int flags, spyre_event **out)
{
	spyre_event *ev;
	void *map;
	int ret;

	if (!dev || !out)
		return spy_err(-EINVAL, "spyre_event_create: device or out is NULL");
	if (flags & ~SPYRE_EVENT_TIMING)
		return spy_err(-EINVAL, "spyre_event_create: %s: unknown flags 0x%x", dev->name,
			       flags);
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return spy_err(-ENOMEM, "spyre_event_create: out of memory");
	ev->dev = dev;
	ev->flags = flags;
	if (flags & SPYRE_EVENT_TIMING) {
		ret = spyre_bo_create(dev, SPY_PAGE, SPYRE_MEM_HOST, &ev->ts_bo);
		if (!ret)
			ret = spyre_bo_map(ev->ts_bo, &map);
		if (ret) {
			if (ev->ts_bo)
				spyre_bo_destroy(ev->ts_bo);
			free(ev);
			return ret;
		}
		ev->ts = map;
	}
	spy_dev_get(dev);
	*out = ev;
	return 0;
}

int spyre_event_destroy(spyre_event *ev)
{
	spyre_device *dev;
	unsigned int i;

	if (!ev)
		return spy_err(-EINVAL, "spyre_event_destroy: event is NULL");
	dev = ev->dev;
	/* A timing event's BO may still be written by the card: wait for it. */
	for (i = 0; i < SPY_TS_SLOTS; i++)
		if (ev->slot_dep[i].s)
			spy_stream_wait_point(ev->slot_dep[i].s, ev->slot_dep[i].point);
	pthread_mutex_lock(&dev->lock);
	if (ev->s)
		spy_stream_put_locked(ev->s);
	for (i = 0; i < SPY_TS_SLOTS; i++)
		if (ev->slot_dep[i].s)
			spy_stream_put_locked(ev->slot_dep[i].s);
	pthread_mutex_unlock(&dev->lock);
	if (ev->ts_bo)
		spyre_bo_destroy(ev->ts_bo);
	spy_dev_put(dev);
	free(ev);
	return 0;
}

int spyre_event_record(spyre_event *ev, spyre_stream *s)
{
	struct drm_spyre_cmd c;
	struct spy_op op;
	spyre_device *dev;
	unsigned int slot = 0;
	int ret;

	if (!ev || !s)
		return spy_err(-EINVAL, "spyre_event_record: event or stream is NULL");
	dev = s->dev;
	if (ev->dev != dev)
		return spy_err(-EXDEV, "spyre_event_record: event of %s, stream of %s",
			       ev->dev->name, dev->name);
	if (!ev->ts_bo) {
		/*
		 * A plain event after work with no pending waits is the point of
		 * the stream's last operation: no submission needed (a SUBMIT
		 * costs the guest far more than the card's work on small jobs).
		 */
		pthread_mutex_lock(&s->submit_lock);	/* the last point is final */
		pthread_mutex_lock(&dev->lock);
		if (!s->destroyed && s->next_point && !s->nwait) {
			if (ev->s)
				spy_stream_put_locked(ev->s);
			ev->s = s;
			s->refs++;
			ev->point = s->next_point;
			pthread_mutex_unlock(&dev->lock);
			pthread_mutex_unlock(&s->submit_lock);
			return 0;
		}
		pthread_mutex_unlock(&dev->lock);
		pthread_mutex_unlock(&s->submit_lock);
	}
	memset(&op, 0, sizeof(op));
	op.kind = SPY_OP_SUBMIT;
	op.what = "spyre_event_record";
	if (ev->ts_bo) {
		/*
		 * Each record writes the next of SPY_TS_SLOTS slots, so re-recording
		 * waits only for the record SPY_TS_SLOTS back, not the previous one.
		 */
		slot = ev->records % SPY_TS_SLOTS;
		if (ev->slot_dep[slot].s)
			spy_stream_wait_point(ev->slot_dep[slot].s, ev->slot_dep[slot].point);
		ev->ts[slot] = 0;
		spy_cmd_timestamp(&c, ev->ts_bo, slot * sizeof(uint64_t));
		op.cmds = &c;
		op.ncmds = 1;
	}
	ret = spy_op_enqueue(s, &op);
	if (ret)
		return spy_dev_err(dev, ret, "spyre_event_record", "submission refused");
	pthread_mutex_lock(&dev->lock);
	if (ev->s)
		spy_stream_put_locked(ev->s);
	ev->s = s;
	s->refs++;
	ev->point = op.point;
	if (ev->ts_bo) {
		struct spy_dep *d = &ev->slot_dep[slot];

		if (d->s)
			spy_stream_put_locked(d->s);
		*d = (struct spy_dep){ s, op.point };
		s->refs++;
		ev->slot = slot;
		ev->records++;
	}
	pthread_mutex_unlock(&dev->lock);
	return 0;
}

int spyre_stream_wait_event(spyre_stream *s, spyre_event *ev)
{
	spyre_device *dev;
	int ret = 0;

	if (!ev || !s)
		return spy_err(-EINVAL, "spyre_stream_wait_event: event or stream is NULL");
	dev = s->dev;
	if (ev->dev != dev)
		return spy_err(-EXDEV, "spyre_stream_wait_event: event of %s, stream of %s",
			       ev->dev->name, dev->name);
	pthread_mutex_lock(&dev->lock);
	/* A never-recorded event is complete: nothing to wait for. */
	if (ev->s && ev->s != s) {
		ret = spy_stream_add_wait_locked(s, ev->s, ev->point);
		if (ret)
			spy_err(ret, "spyre_stream_wait_event: %s: too many pending waits",
				dev->name);
	}
	pthread_mutex_unlock(&dev->lock);
	return ret;
}

static int event_stream(spyre_event *ev, const char *call, struct spyre_stream **s,
			uint64_t *point)
{
	*s = NULL;
	*point = 0;
	if (!ev)
		return spy_err(-EINVAL, "%s: event is NULL", call);
	pthread_mutex_lock(&ev->dev->lock);
	*s = ev->s;
	*point = ev->point;
	pthread_mutex_unlock(&ev->dev->lock);
	return 0;
}

int spyre_event_synchronize(spyre_event *ev)
{
	struct spyre_stream *s;
	uint64_t point;
	int ret = event_stream(ev, "spyre_event_synchronize", &s, &point);

	if (ret || !s)	/* never recorded: complete */
		return ret;
	ret = spy_stream_wait_point(s, point);
	if (!ret)
		ret = ev->dev->ops->fence_error(ev->dev, s->timeline, point);
	if (ret)
		return spy_dev_err(ev->dev, ret, "spyre_event_synchronize",
				   "work before the event failed");
	return 0;
}

int spyre_event_query(spyre_event *ev)
{
	struct spyre_stream *s;
	uint64_t point, done = 0;
	bool issued;
	int ret = event_stream(ev, "spyre_event_query", &s, &point);

	if (ret || !s)	/* never recorded: complete, as CUDA and Level Zero say */
		return ret;
	pthread_mutex_lock(&ev->dev->lock);
	issued = s->issued_point >= point;
	pthread_mutex_unlock(&ev->dev->lock);
	if (!issued)
		return -EBUSY;
	ret = ev->dev->ops->syncobj_query(ev->dev, s->timeline, &done);
	if (ret)
		return spy_dev_err(ev->dev, ret, "spyre_event_query", "querying the timeline");
	return done >= point ? 0 : -EBUSY;
}

int spyre_event_timestamp_ns(spyre_event *ev, uint64_t *ns)
{
	int ret;

	if (!ev || !ns)
		return spy_err(-EINVAL, "spyre_event_timestamp_ns: event or ns is NULL");
	if (!ev->ts_bo)
		return spy_err(-EINVAL, "spyre_event_timestamp_ns: %s: the event was created "
			       "without SPYRE_EVENT_TIMING", ev->dev->name);
	if (!ev->records)
		return spy_err(-EINVAL, "spyre_event_timestamp_ns: %s: the event was never "
			       "recorded", ev->dev->name);
	ret = spyre_event_query(ev);
	if (ret == -EBUSY)
		return spy_err(ret, "spyre_event_timestamp_ns: %s: the event has not completed",
			       ev->dev->name);
	if (ret)
		return ret;
	*ns = __atomic_load_n(&ev->ts[ev->slot], __ATOMIC_ACQUIRE);
	return 0;
}

int spyre_event_elapsed_ns(spyre_event *start, spyre_event *end, uint64_t *ns)
{
	uint64_t a, b;
	int ret;

	if (!start || !end || !ns)
		return spy_err(-EINVAL, "spyre_event_elapsed_ns: an argument is NULL");
	ret = spyre_event_timestamp_ns(start, &a);
	if (!ret)
		ret = spyre_event_timestamp_ns(end, &b);
	if (ret)
		return ret;
	if (b < a)
		return spy_err(-ERANGE, "spyre_event_elapsed_ns: %s: the end event completed %llu "
			       "ns before the start event", start->dev->name,
			       (unsigned long long)(a - b));
	*ns = b - a;
	return 0;
}
