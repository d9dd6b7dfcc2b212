// SPDX-License-Identifier: MIT
/*
 * Submission: an op gets its stream's next point, takes over the stream's
 * event waits as dependencies, and becomes one SUBMIT ioctl when all its
 * dependencies exist in the kernel.
 *
 * The kernel only accepts in-syncs whose point already has a fence. Host
 * work creates points that get one only when the worker signals them, so
 * an operation that depends on such a point (directly, or because an
 * earlier operation of its stream is still waiting) is deferred
 * (stream_deferred.c) and issued by whoever materialises the point.
 * Everything else is issued at once, the ioctl outside dev->lock.
 */
#include <stdlib.h>
#include <string.h>

#include "stream.h"
#include "stream_use.h"

/* The engine an op runs on: launches on compute, copies and fills on DMA. */
static int op_engine(const struct spyre_stream *s, const struct spy_op *op)
{
	int e = spy_cmds_engine(op->cmds, op->ncmds);

	if (e >= 0)
		return e;
	/* Timestamps and empty submissions stay where the stream last ran. */
	return s->last_engine >= 0 ? s->last_engine : (int)s->engine;
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

	engine = spy_stream_queue_locked(s, op_engine(s, op), &qid);
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

int spy_issue_submit_locked(struct spy_op *op)
{
	struct submit_ctx x;
	int ret = prepare_submit_locked(op, &x);

	if (!ret)
		ret = do_submit(op->s->dev, &x, op);
	if (!ret)
		submitted_locked(op, &x);
	return ret;
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
	unsigned int i, nwait = 0;
	int ret = 0, e;

	/* a queue the op needs and the stream lacks is made here, under no lock */
	e = spy_cmds_engine(op->cmds, op->ncmds);
	if (e >= 0)
		spy_stream_prepare(s, SPY_ENGINE_BIT(e));
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
	if (op->kind == SPY_OP_SUBMIT && !s->dq_head && !s->running_host && spy_deps_ready(op)) {
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
	ret = spy_defer_locked(s, op, nwait);
	if (ret)
		goto undo;
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

