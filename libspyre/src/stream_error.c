// SPDX-License-Identifier: MIT
/*
 * Sticky stream errors: the first operation of a stream that failed on the
 * card (read from the driver's per-queue record, or point by point from an
 * older driver's timeline) or whose deferred submission failed is kept
 * until spyre_stream_clear_error, and every later synchronize reports it
 * with the operation's name and, for a launch, where it stopped.
 */
#include <stdio.h>
#include <string.h>

#include "stream.h"

static const char *engine_name(const struct spyre_stream *s)
{
	return s->engine == SPYRE_ENGINE_DMA ? "DMA" : "compute";
}

/*
 * The first failure the queues of @s recorded (the driver keeps it until
 * cleared, so later jobs that succeed cannot hide it): 0 and @err set, or
 * -EOPNOTSUPP when the backend has no such record.
 */
static int queue_failure(struct spyre_stream *s, int *err, uint64_t *point,
			 struct spy_fault *fault)
{
	spyre_device *dev = s->dev;
	struct spy_queue_error qe;
	int e, ret;

	*err = 0;
	if (!dev->ops->queue_error)
		return -EOPNOTSUPP;
	for (e = 0; e < 2; e++) {
		if (!s->has_queue[e])
			continue;
		ret = dev->ops->queue_error(dev, s->queue[e], false, &qe);
		if (ret)
			return ret;
		/* Both engines failed: the earlier operation is the first. */
		if (qe.error && (!*err || qe.point < *point)) {
			*err = qe.error;
			*point = qe.point;
			*fault = qe.fault;
		}
	}
	return 0;
}

void spy_stream_poll_errors(struct spyre_stream *s, uint64_t upto)
{
	spyre_device *dev = s->dev;
	struct spy_fault fault = { .core = -1, .insn = -1 };
	uint64_t from, p = 0;
	int ret = 0;

	pthread_mutex_lock(&dev->lock);
	from = s->checked_point;
	if (upto > from)
		s->checked_point = upto;
	pthread_mutex_unlock(&dev->lock);
	if (upto <= from)
		return;
	if (queue_failure(s, &ret, &p, &fault) == -EOPNOTSUPP) {
		/* An older driver: ask the timeline point by point (lossy). */
		for (p = from + 1; p <= upto && !ret; p++)
			ret = dev->ops->fence_error(dev, s->timeline, p);
		p--;
	}
	if (!ret)
		return;
	pthread_mutex_lock(&dev->lock);
	if (!s->error) {
		s->error = ret;
		s->error_point = p;
		s->fault = fault;
		/* Names older than the ring's reach are gone. */
		s->error_what = s->next_point - p < SPY_OP_NAMES ? s->what[p % SPY_OP_NAMES] : NULL;
	}
	pthread_mutex_unlock(&dev->lock);
}

int spy_stream_sticky_error(struct spyre_stream *s, const char *call)
{
	int err;
	uint64_t point;
	const char *what;
	struct spy_fault f;
	char where[96] = "";

	pthread_mutex_lock(&s->dev->lock);
	err = s->error;
	point = s->error_point;
	what = s->error_what;
	f = s->fault;
	pthread_mutex_unlock(&s->dev->lock);
	if (!err)
		return 0;
	if (f.insn >= 0 || f.space == SPY_FAULT_SPACE_VA) {
		int n = f.insn >= 0 ? snprintf(where, sizeof(where), " at instruction %lld on "
					       "core %d", (long long)f.insn, f.core) : 0;

		if (f.space == SPY_FAULT_SPACE_SP)
			snprintf(where + n, sizeof(where) - n, " (scratchpad offset 0x%llx)",
				 (unsigned long long)f.addr);
		else if (f.space == SPY_FAULT_SPACE_DEV)
			snprintf(where + n, sizeof(where) - n, " (device address 0x%llx)",
				 (unsigned long long)f.addr);
		else if (f.space == SPY_FAULT_SPACE_VA)
			snprintf(where + n, sizeof(where) - n, " (page fault at card address "
				 "0x%llx)", (unsigned long long)f.addr);
	}
	return spy_dev_err(s->dev, err, call, "operation %llu (%s) on the %s stream failed on "
			   "the card%s", (unsigned long long)point, what ? what : "operation",
			   engine_name(s), where);
}


/* Highest point of @s that completed (0 if none). */
static int completed_point(struct spyre_stream *s, uint64_t *point)
{
	spyre_device *dev = s->dev;
	uint64_t issued, done = 0;
	int ret;

	pthread_mutex_lock(&dev->lock);
	issued = s->issued_point;
	pthread_mutex_unlock(&dev->lock);
	ret = issued ? dev->ops->syncobj_query(dev, s->timeline, &done) : 0;
	*point = done < issued ? done : issued;
	return ret;
}

static void fill_info(const struct spyre_stream *s, struct spyre_error_info *info)
{
	memset(info, 0, sizeof(*info));
	info->core = -1;
	info->insn = -1;
	info->error = s->error;
	if (!s->error)
		return;
	info->op = s->error_point;
	snprintf(info->call, sizeof(info->call), "%s", s->error_what ? s->error_what : "");
	if (s->fault.insn >= 0) {
		info->core = s->fault.core;
		info->insn = s->fault.insn;
	}
	if (s->fault.insn >= 0 || s->fault.space == SPY_FAULT_SPACE_VA)
		info->addr = s->fault.addr;
}

int spyre_stream_get_error(spyre_stream *s, struct spyre_error_info *info)
{
	uint64_t done;
	int ret;

	if (!s || !info)
		return spy_err(-EINVAL, "spyre_stream_get_error: stream or info is NULL");
	ret = completed_point(s, &done);
	if (ret)
		return spy_dev_err(s->dev, ret, "spyre_stream_get_error", "querying the timeline");
	spy_stream_poll_errors(s, done);
	pthread_mutex_lock(&s->dev->lock);
	fill_info(s, info);
	pthread_mutex_unlock(&s->dev->lock);
	return 0;
}

int spyre_stream_clear_error(spyre_stream *s)
{
	uint64_t done;
	int ret;

	if (!s)
		return spy_err(-EINVAL, "spyre_stream_clear_error: stream is NULL");
	/* Errors of work that completed so far are cleared too. */
	ret = completed_point(s, &done);
	if (ret)
		return spy_dev_err(s->dev, ret, "spyre_stream_clear_error", "querying the timeline");
	if (s->dev->ops->queue_error) {
		struct spy_queue_error qe;
		int e;

		for (e = 0; e < 2; e++)
			if (s->has_queue[e])
				s->dev->ops->queue_error(s->dev, s->queue[e], true, &qe);
	}
	pthread_mutex_lock(&s->dev->lock);
	if (done > s->checked_point)
		s->checked_point = done;
	s->error = 0;
	s->error_point = 0;
	s->error_what = NULL;
	s->fault = (struct spy_fault){ .core = -1, .insn = -1 };
	pthread_mutex_unlock(&s->dev->lock);
	return 0;
}


int spyre_device_get_error(spyre_device *dev, struct spyre_error_info *info)
{
	struct spyre_stream **v;
	size_t i;
	int ret = 0;

	if (!dev || !info)
		return spy_err(-EINVAL, "spyre_device_get_error: device or info is NULL");
	v = spy_live_streams(dev);
	if (!v)
		return spy_err(-ENOMEM, "spyre_device_get_error: out of memory");
	memset(info, 0, sizeof(*info));
	info->core = -1;
	info->insn = -1;
	for (i = 0; v[i] && !ret && !info->error; i++)
		ret = spyre_stream_get_error(v[i], info);
	spy_put_streams(dev, v);
	return ret;
}
