// SPDX-License-Identifier: MIT
/*
 * Streams and the submission engine.
 *
 * A stream is one kernel queue plus a timeline syncobj: library operation
 * n on the stream signals point n. A dependency is a point of some
 * stream's timeline and becomes an in-sync of the submission.
 *
 * The kernel only accepts in-syncs whose point already has a fence. Host
 * work creates points that get one only when the worker signals them, so
 * an operation that depends on such a point (directly, or because an
 * earlier operation of its stream is still waiting) is deferred in its
 * stream's FIFO and issued by whoever materialises the point: the worker,
 * right after the callback returned. Everything else is issued at once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define WAIT_FOREVER INT64_MAX

static bool deps_ready(const struct spy_op *op)
{
	unsigned int i;

	for (i = 0; i < op->ndeps; i++)
		if (op->deps[i].point > op->deps[i].s->issued_point)
			return false;
	return true;
}

void spy_stream_put_locked(struct spyre_stream *s)
{
	spyre_device *dev = s->dev;

	if (--s->refs)
		return;
	pthread_mutex_destroy(&s->submit_lock);
	dev->ops->syncobj_destroy(dev, s->timeline);
	spy_dev_put(dev);
	free(s);
}

static void deps_get(struct spy_op *op)
{
	unsigned int i;

	for (i = 0; i < op->ndeps; i++)
		op->deps[i].s->refs++;
}

static void deps_put(struct spy_op *op)
{
	unsigned int i;

	for (i = 0; i < op->ndeps; i++)
		spy_stream_put_locked(op->deps[i].s);
}

/* The engine an op runs on: launches on compute, copies and fills on DMA. */
static int op_engine(const struct spyre_stream *s, const struct spy_op *op)
{
	bool dma = false;
	unsigned int i;

	for (i = 0; i < op->ncmds; i++) {
		if (op->cmds[i].type == DRM_SPYRE_CMD_LAUNCH)
			return SPYRE_ENGINE_COMPUTE;
		if (op->cmds[i].type == DRM_SPYRE_CMD_COPY || op->cmds[i].type == DRM_SPYRE_CMD_FILL)
			dma = true;
	}
	if (dma)
		return SPYRE_ENGINE_DMA;
	/* Timestamps and empty submissions stay where the stream last ran. */
	return s->last_engine >= 0 ? s->last_engine : (int)s->engine;
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

/*
 * The queue of @engine, made on first use; if the driver refuses a second
 * queue (the per-file limit), the stream's first queue serves (copies run
 * on any ring; a DMA stream that cannot get a compute queue fails launches).
 */
static int stream_queue(struct spyre_stream *s, int engine, uint32_t *id)
{
	int ret;

	if (!s->has_queue[engine] && !s->queue_failed[engine]) {
		ret = queue_make(s->dev, engine, s->priority, &s->queue[engine]);
		if (ret)
			s->queue_failed[engine] = true;
		else
			s->has_queue[engine] = true;
	}
	if (s->has_queue[engine]) {
		*id = s->queue[engine];
		return engine;
	}
	if (engine == SPYRE_ENGINE_COMPUTE)
		return -EINVAL;
	*id = s->queue[s->engine];
	return s->engine;
}

/* A SUBMIT ready to go to the kernel (built under dev->lock, issued without). */
struct submit_ctx {
	struct drm_spyre_sync in[SPY_MAX_DEPS + 1], out;
	struct drm_spyre_submit sub;
	int engine;
};

static int prepare_submit_locked(struct spy_op *op, struct submit_ctx *x)
{
	struct spyre_stream *s = op->s;
	unsigned int i, j, nin = 0;
	uint32_t qid = 0;
	int engine;

	engine = stream_queue(s, op_engine(s, op), &qid);
	if (engine < 0)
		return engine;
	for (i = 0; i < op->ndeps; i++) {
		const struct spy_dep *d = &op->deps[i];

		/*
		 * Same-stream points need no in-sync: kernel points are ordered
		 * by the queue (a change of queue is handled below), and host
		 * points are signalled before anything after them is issued.
		 */
		if (!d->point || d->s == s)
			continue;
		for (j = 0; j < nin; j++)
			if (x->in[j].handle == d->s->timeline)
				break;
		if (j < nin) {
			if (x->in[j].point < d->point)
				x->in[j].point = d->point;
			continue;
		}
		x->in[nin].handle = d->s->timeline;
		x->in[nin].flags = 0;
		x->in[nin].point = d->point;
		nin++;
	}
	if (s->last_engine >= 0 && s->last_engine != engine && op->point > 1) {
		x->in[nin].handle = s->timeline;
		x->in[nin].flags = 0;
		x->in[nin].point = op->point - 1;
		nin++;
	}
	x->engine = engine;
	x->out.handle = s->timeline;
	x->out.flags = 0;
	x->out.point = op->point;
	memset(&x->sub, 0, sizeof(x->sub));
	x->sub.queue_id = qid;
	x->sub.cmds = (uintptr_t)op->cmds;
	x->sub.cmd_count = op->ncmds;
	x->sub.cmd_stride = op->ncmds ? sizeof(struct drm_spyre_cmd) : 0;
	x->sub.in_syncs = (uintptr_t)x->in;
	x->sub.in_sync_count = nin;
	x->sub.out_syncs = (uintptr_t)&x->out;
	x->sub.out_sync_count = 1;
	x->sub.sync_stride = sizeof(struct drm_spyre_sync);
	return 0;
}

static int do_submit(spyre_device *dev, struct submit_ctx *x, const struct spy_op *op)
{
	spy_stat_add(&dev->stat_submits, 1);
	return spy_trace_submit(dev, &x->sub, x->engine, op->what, op->label);
}

static void submitted_locked(struct spy_op *op, const struct submit_ctx *x)
{
	op->s->issued_point = op->point;
	op->s->last_engine = x->engine;
}

/* Issue a SUBMIT op whose dependencies all exist, holding dev->lock (deferred ops). */
static int issue_submit_locked(struct spy_op *op)
{
	struct submit_ctx x;
	int ret = prepare_submit_locked(op, &x);

	if (!ret)
		ret = do_submit(op->s->dev, &x, op);
	if (!ret)
		submitted_locked(op, &x);
	return ret;
}

/* Free a deferred (heap) copy, or tell a persistent op's owner it is done. */
static void op_retire_locked(struct spy_op *op)
{
	if (op->done)
		op->done(op);
	if (op->owned)
		free(op);
}

/*
 * A deferred SUBMIT failed: nobody is there to return the error to, so it
 * becomes the stream's sticky error, and the point is signalled from the
 * host so that work depending on it is not stuck forever.
 */
static void deferred_failed_locked(struct spy_op *op, int ret)
{
	struct spyre_stream *s = op->s;

	if (!s->error) {
		s->error = spy_dev_err(s->dev, ret, "deferred submission",
				       "stream operation %llu (%s)", (unsigned long long)op->point,
				       op->what ? op->what : "operation");
		s->error_point = op->point;
		s->error_what = op->what;
		s->fault = (struct spy_fault){ .core = -1, .insn = -1 };
	}
	s->dev->ops->syncobj_signal(s->dev, s->timeline, op->point);
	s->issued_point = op->point;
}

static void deferred_list_add(spyre_device *dev, struct spyre_stream *s)
{
	if (s->on_deferred_list)
		return;
	s->on_deferred_list = true;
	s->next_deferred = dev->deferred;
	dev->deferred = s;
}

/* Issue every deferred op whose dependencies now exist. Under dev->lock. */
void spy_flush_deferred_locked(spyre_device *dev)
{
	bool progress = true;

	while (progress) {
		struct spyre_stream **pp = &dev->deferred, *s;

		progress = false;
		while ((s = *pp)) {
			struct spy_op *op;

			while ((op = s->dq_head) && deps_ready(op) &&
			       !(op->kind == SPY_OP_SUBMIT && s->running_host)) {
				s->dq_head = op->next;
				if (!s->dq_head)
					s->dq_tail = NULL;
				op->next = NULL;
				progress = true;
				if (op->kind == SPY_OP_HOST) {
					spy_worker_push_locked(dev, op);
					break;	/* later ops wait for its point */
				}
				{
					int ret = issue_submit_locked(op);

					if (ret)
						deferred_failed_locked(op, ret);
				}
				deps_put(op);
				op_retire_locked(op);
			}
			if (!s->dq_head) {
				*pp = s->next_deferred;
				s->on_deferred_list = false;
				s->next_deferred = NULL;
				spy_stream_put_locked(s);	/* the list's reference */
			} else {
				pp = &s->next_deferred;
			}
		}
	}
	spy_dev_wake_locked(dev);
}

static bool cmd_uses(const struct drm_spyre_cmd *c, uint32_t h)
{
	const struct drm_spyre_bo_range *r;
	unsigned int i;

	switch (c->type) {
	case DRM_SPYRE_CMD_COPY:
		return c->copy.src_handle == h || c->copy.dst_handle == h;
	case DRM_SPYRE_CMD_FILL:
		return c->fill.handle == h;
	case DRM_SPYRE_CMD_TIMESTAMP:
		return c->timestamp.handle == h;
	case DRM_SPYRE_CMD_LAUNCH:
		if (c->launch.prog_handle == h || c->launch.ws_handle == h)
			return true;
		r = (const struct drm_spyre_bo_range *)(uintptr_t)c->launch.args;
		for (i = 0; i < c->launch.nargs; i++)
			if (r[i].handle == h)
				return true;
		return false;
	}
	return false;
}

bool spy_deferred_uses_locked(spyre_device *dev, uint32_t handle)
{
	const struct spyre_stream *s;
	const struct spy_op *op;
	unsigned int i;

	for (s = dev->deferred; s; s = s->next_deferred)
		for (op = s->dq_head; op; op = op->next)
			for (i = 0; i < op->ncmds; i++)
				if (cmd_uses(&op->cmds[i], handle))
					return true;
	return false;
}

/* The stream's pending event waits went into an op: drop their references. */
static void waits_consumed_locked(struct spyre_stream *s, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		spy_stream_put_locked(s->wait[i].s);
	s->nwait = 0;
}

int spy_stream_add_wait_locked(struct spyre_stream *s, struct spyre_stream *on, uint64_t point)
{
	unsigned int i;

	for (i = 0; i < s->nwait; i++) {
		if (s->wait[i].s == on) {
			if (s->wait[i].point < point)
				s->wait[i].point = point;
			return 0;
		}
	}
	if (s->nwait == SPY_MAX_WAITS)
		return -E2BIG;
	s->wait[s->nwait++] = (struct spy_dep){ on, point };
	on->refs++;
	return 0;
}

/* A heap copy of a caller's op (commands and launch argument tables too). */
static struct spy_op *op_clone(const struct spy_op *op)
{
	size_t nranges = 0, size;
	struct drm_spyre_bo_range *r;
	struct spy_op *c;
	unsigned int i;

	for (i = 0; i < op->ncmds; i++)
		if (op->cmds[i].type == DRM_SPYRE_CMD_LAUNCH)
			nranges += op->cmds[i].launch.nargs;
	size = sizeof(*c) + op->ncmds * sizeof(struct drm_spyre_cmd) +
	       nranges * sizeof(struct drm_spyre_bo_range);
	c = malloc(size);
	if (!c)
		return NULL;
	*c = *op;
	c->cmds = (struct drm_spyre_cmd *)(c + 1);
	if (op->ncmds)
		memcpy(c->cmds, op->cmds, op->ncmds * sizeof(struct drm_spyre_cmd));
	r = (struct drm_spyre_bo_range *)(c->cmds + op->ncmds);
	for (i = 0; i < op->ncmds; i++) {
		struct drm_spyre_cmd_launch *l = &c->cmds[i].launch;

		if (c->cmds[i].type != DRM_SPYRE_CMD_LAUNCH)
			continue;
		memcpy(r, (void *)(uintptr_t)l->args, l->nargs * sizeof(*r));
		l->args = (uintptr_t)r;
		r += l->nargs;
	}
	c->owned = true;
	c->done = NULL;
	return c;
}

/*
 * Add @op to @s. Ops the caller marks persistent (op->owned == false and
 * op->done set) are used in place; others are copied if they must wait.
 */
int spy_op_enqueue(struct spyre_stream *s, struct spy_op *op)
{
	spyre_device *dev = s->dev;
	struct spy_dep taken[SPY_MAX_WAITS];
	struct submit_ctx x;
	uint64_t saved_host;
	bool persistent = op->done != NULL;
	struct spy_op *q = op;
	unsigned int i, nwait = 0;
	int ret = 0;

	pthread_mutex_lock(&s->submit_lock);
	pthread_mutex_lock(&dev->lock);
	if (s->destroyed) {
		pthread_mutex_unlock(&dev->lock);
		pthread_mutex_unlock(&s->submit_lock);
		return -EINVAL;
	}
	op->s = s;
	op->next = NULL;
	op->label = spy_trace_label();	/* deferred ops are issued on other threads */
	op->point = ++s->next_point;
	s->what[op->point % SPY_OP_NAMES] = op->what;
	saved_host = s->last_host_point;
	if (op->ndeps + s->nwait >= SPY_MAX_DEPS) {
		ret = -E2BIG;
		goto undo;
	}
	nwait = s->nwait;
	memcpy(op->deps + op->ndeps, s->wait, nwait * sizeof(s->wait[0]));
	op->ndeps += nwait;
	if (op->kind == SPY_OP_HOST) {
		if (op->point > 1)
			op->deps[op->ndeps++] = (struct spy_dep){ s, op->point - 1 };
		s->last_host_point = op->point;
	} else if (s->last_host_point && s->last_host_point == op->point - 1) {
		op->deps[op->ndeps++] = (struct spy_dep){ s, s->last_host_point };
	}
	if (op->kind == SPY_OP_SUBMIT && !s->dq_head && !s->running_host && deps_ready(op)) {
		ret = prepare_submit_locked(op, &x);
		if (ret)
			goto undo;
		/*
		 * The waits leave the stream now (their references with them),
		 * so waits added while the ioctl runs apply to the next op.
		 */
		memcpy(taken, s->wait, nwait * sizeof(taken[0]));
		s->nwait = 0;
		pthread_mutex_unlock(&dev->lock);
		ret = do_submit(dev, &x, op);	/* no device-wide lock held */
		pthread_mutex_lock(&dev->lock);
		if (ret) {
			for (i = 0; i < nwait; i++) {
				spy_stream_add_wait_locked(s, taken[i].s, taken[i].point);
				spy_stream_put_locked(taken[i].s);
			}
			goto undo;
		}
		submitted_locked(op, &x);
		if (persistent)
			op->done(op);
		for (i = 0; i < nwait; i++)
			spy_stream_put_locked(taken[i].s);
		if (dev->deferred)	/* ops that waited for this point */
			spy_flush_deferred_locked(dev);
		spy_dev_wake_locked(dev);
		pthread_mutex_unlock(&dev->lock);
		pthread_mutex_unlock(&s->submit_lock);
		return 0;
	}
	/* Deferred (or host work): keep the op and the streams it names alive. */
	if (!persistent) {
		q = op_clone(op);
		if (!q) {
			ret = -ENOMEM;
			goto undo;
		}
	}
	deps_get(q);
	if (s->dq_tail)
		s->dq_tail->next = q;
	else
		s->dq_head = q;
	s->dq_tail = q;
	if (!s->on_deferred_list)
		s->refs++;
	deferred_list_add(dev, s);
	waits_consumed_locked(s, nwait);
	spy_flush_deferred_locked(dev);
	pthread_mutex_unlock(&dev->lock);
	pthread_mutex_unlock(&s->submit_lock);
	return 0;
undo:
	if (persistent)
		op->ndeps -= nwait;
	s->next_point--;
	s->last_host_point = saved_host;
	spy_dev_wake_locked(dev);	/* waiters for the vanished point */
	pthread_mutex_unlock(&dev->lock);
	pthread_mutex_unlock(&s->submit_lock);
	return ret;
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
	s->dev = dev;
	s->engine = engine;
	s->last_engine = -1;
	s->refs = 1;
	pthread_mutex_init(&s->submit_lock, NULL);
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

/* The stream's sticky error as a return value with its message. */
static int sticky_error(struct spyre_stream *s, const char *call)
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
	if (f.insn >= 0) {
		int n = snprintf(where, sizeof(where), " at instruction %lld on core %d",
				 (long long)f.insn, f.core);

		if (f.space == SPY_FAULT_SPACE_SP)
			snprintf(where + n, sizeof(where) - n, " (scratchpad offset 0x%llx)",
				 (unsigned long long)f.addr);
		else if (f.space == SPY_FAULT_SPACE_DEV)
			snprintf(where + n, sizeof(where) - n, " (device address 0x%llx)",
				 (unsigned long long)f.addr);
	}
	return spy_dev_err(s->dev, err, call, "operation %llu (%s) on the %s stream failed on "
			   "the card%s", (unsigned long long)point, what ? what : "operation",
			   engine_name(s), where);
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
	return sticky_error(s, "spyre_stream_synchronize");
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
		info->addr = s->fault.addr;
	}
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

/* References to every live stream of @dev (NULL-terminated, heap); NULL on ENOMEM. */
static struct spyre_stream **live_streams(spyre_device *dev)
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

static void put_streams(spyre_device *dev, struct spyre_stream **v)
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
	v = live_streams(dev);
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
		ret = sticky_error(failed, "spyre_device_synchronize");
	put_streams(dev, v);
	return ret;
}

int spyre_device_get_error(spyre_device *dev, struct spyre_error_info *info)
{
	struct spyre_stream **v;
	size_t i;
	int ret = 0;

	if (!dev || !info)
		return spy_err(-EINVAL, "spyre_device_get_error: device or info is NULL");
	v = live_streams(dev);
	if (!v)
		return spy_err(-ENOMEM, "spyre_device_get_error: out of memory");
	memset(info, 0, sizeof(*info));
	info->core = -1;
	info->insn = -1;
	for (i = 0; v[i] && !ret && !info->error; i++)
		ret = spyre_stream_get_error(v[i], info);
	put_streams(dev, v);
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
	waits_consumed_locked(s, s->nwait);
	spy_stream_put_locked(s);
	pthread_mutex_unlock(&dev->lock);
	if (!ret && ret2 && ret2 != -ENODEV)
		ret = spy_dev_err(dev, ret2, "spyre_stream_destroy", "destroying the queue");
	return ret;
}

int spy_submit_cmds(struct spyre_stream *s, struct drm_spyre_cmd *cmds, unsigned int n,
		    const char *call, uint64_t *point)
{
	unsigned int done = 0;
	struct spy_op op;
	int ret;

	do {
		memset(&op, 0, sizeof(op));
		op.kind = SPY_OP_SUBMIT;
		op.cmds = cmds + done;
		op.ncmds = n ? spy_cmds_fit(s->dev, cmds + done, n - done) : 0;
		op.what = call;
		ret = spy_op_enqueue(s, &op);
		if (ret)
			return spy_dev_err(s->dev, ret, call, "submission refused%s",
					   done ? " (earlier parts were issued)" : "");
		done += op.ncmds;
	} while (done < n);
	if (point)
		*point = op.point;
	return 0;
}

/* Issue (or defer) a one-command op: the body of every async call. */
static int submit_one(struct spyre_stream *s, struct drm_spyre_cmd *cmd, const char *call)
{
	return spy_submit_cmds(s, cmd, 1, call, NULL);
}

int spyre_memcpy_async(spyre_stream *s, const struct spyre_buf *dst, const struct spyre_buf *src,
		       uint64_t size)
{
	struct drm_spyre_cmd c;
	int ret;

	if (!s)
		return spy_err(-EINVAL, "spyre_memcpy_async: stream is NULL");
	ret = spy_cmd_copy("spyre_memcpy_async", &c, dst, src, size);
	if (ret)
		return ret;
	if (dst->bo->dev != s->dev)
		return spy_err(-EXDEV, "spyre_memcpy_async: buffers of %s on a stream of %s",
			       dst->bo->dev->name, s->dev->name);
	return submit_one(s, &c, "spyre_memcpy_async");
}

int spyre_memset32_async(spyre_stream *s, const struct spyre_buf *dst, uint32_t pattern,
			 uint64_t size)
{
	struct drm_spyre_cmd c;
	int ret;

	if (!s)
		return spy_err(-EINVAL, "spyre_memset32_async: stream is NULL");
	ret = spy_cmd_fill("spyre_memset32_async", &c, dst, pattern, size);
	if (ret)
		return ret;
	if (dst->bo->dev != s->dev)
		return spy_err(-EXDEV, "spyre_memset32_async: buffer of %s on a stream of %s",
			       dst->bo->dev->name, s->dev->name);
	return submit_one(s, &c, "spyre_memset32_async");
}

int spyre_launch_async(spyre_stream *s, const spyre_program *prog, const struct spyre_buf *args,
		       unsigned int nargs, const struct spyre_buf *workspace)
{
	struct drm_spyre_bo_range ranges[SPY_MAX_ARGS];
	struct drm_spyre_cmd c;
	int ret;

	if (!s)
		return spy_err(-EINVAL, "spyre_launch_async: stream is NULL");
	ret = spy_cmd_launch("spyre_launch_async", &c, ranges, prog, args, nargs, workspace);
	if (ret)
		return ret;
	if (prog->dev != s->dev)
		return spy_err(-EXDEV, "spyre_launch_async: program of %s on a stream of %s",
			       prog->dev->name, s->dev->name);
	return submit_one(s, &c, "spyre_launch_async");
}

static void host_body(struct spy_op *op)
{
	op->host_fn(op->user);
}

int spyre_host_work_async(spyre_stream *s, spyre_host_fn fn, void *user)
{
	struct spy_op op;
	int ret;

	if (!s || !fn)
		return spy_err(-EINVAL, "spyre_host_work_async: stream or function is NULL");
	memset(&op, 0, sizeof(op));
	op.kind = SPY_OP_HOST;
	op.fn = host_body;
	op.host_fn = fn;
	op.user = user;
	op.what = "spyre_host_work_async";
	ret = spy_op_enqueue(s, &op);
	if (ret)
		return spy_dev_err(s->dev, ret, "spyre_host_work_async", "queueing host work");
	return 0;
}
