// SPDX-License-Identifier: MIT
/*
 * The deferred queue: ops that wait for a point that does not exist in the
 * kernel yet (host work's, signalled by the worker when its callback
 * returns), in their stream's FIFO, and the event waits a stream collects
 * for its next op.
 *
 * A stream with deferred ops is on dev->deferred (holding a reference);
 * whoever materialises a point (the worker, or a submission) flushes the
 * list under dev->lock, issuing every op whose dependencies now exist.
 */
#include <stdlib.h>
#include <string.h>

#include "stream.h"

bool spy_deps_ready(const struct spy_op *op)
{
	unsigned int i;

	for (i = 0; i < op->ndeps; i++)
		if (op->deps[i].point > op->deps[i].s->issued_point)
			return false;
	return true;
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

			while ((op = s->dq_head) && spy_deps_ready(op) &&
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
					int ret = spy_issue_submit_locked(op);

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

void spy_waits_consumed_locked(struct spyre_stream *s, unsigned int n)
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

int spy_defer_locked(struct spyre_stream *s, struct spy_op *op, unsigned int nwait)
{
	struct spy_op *q = op;

	if (!op->done) {	/* not persistent: the caller's memory goes away */
		q = op_clone(op);
		if (!q)
			return -ENOMEM;
	}
	deps_get(q);
	if (s->dq_tail)
		s->dq_tail->next = q;
	else
		s->dq_head = q;
	s->dq_tail = q;
	if (!s->on_deferred_list)
		s->refs++;
	deferred_list_add(s->dev, s);
	spy_waits_consumed_locked(s, nwait);
	spy_flush_deferred_locked(s->dev);
	return 0;
}
