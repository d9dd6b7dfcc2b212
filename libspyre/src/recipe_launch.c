// SPDX-License-Identifier: MIT
/*
 * Recipes: launching a finalized plan.
 *
 * A launch binds the argument buffers into preallocated copies of the
 * commands (one "instance" per launch in flight) and enqueues the nodes in
 * their issue order: nothing is allocated and each SUBMIT node costs one
 * ioctl. Building is in recipe_build.c.
 *
 * Streams are used through stream_use.h only: their kernel queues are made
 * ready before the launch takes r->lock, each node is one spy_op_enqueue,
 * and the stream references the recipe keeps (the workspace copies' last
 * users, the scalar blocks' last copies) are stored with one lock at the
 * end of the launch.
 */
#include <stdlib.h>
#include <string.h>

#include "recipe.h"

static void inst_done(struct spy_op *op)
{
	struct instance *in = op->user2;

	__atomic_sub_fetch(&in->outstanding, 1, __ATOMIC_RELEASE);
	spy_dev_wake_locked(in->r->dev);
}

static void host_node(struct spy_op *op)
{
	struct instance *in = op->user2;
	spyre_recipe_host_fn fn = (spyre_recipe_host_fn)(uintptr_t)op->host_fn;

	fn(op->user, in->args, in->r->nargs);
}

int spy_recipe_make_instances(spyre_recipe *r)
{
	unsigned int k, i;

	r->inst = calloc(r->depth, sizeof(*r->inst));
	r->slot_engines = calloc(r->nstreams ? r->nstreams : 1, sizeof(*r->slot_engines));
	r->hold_slots = calloc(2 * r->nnodes + 1, sizeof(*r->hold_slots));
	r->hold_vals = calloc(2 * r->nnodes + 1, sizeof(*r->hold_vals));
	if (!r->inst || !r->slot_engines || !r->hold_slots || !r->hold_vals)
		return -ENOMEM;
	for (i = 0; i < r->nnodes; i++) {
		const struct rnode *n = &r->nodes[i];
		int e = n->host ? -1 : spy_cmds_engine(r->tmpl + n->cmd0, n->ncmds);

		if (e >= 0)
			r->slot_engines[n->stream] |= SPY_ENGINE_BIT(e);
	}
	for (k = 0; k < r->depth; k++) {
		struct instance *in = &r->inst[k];

		in->r = r;
		in->index = k;
		in->bound_ws = -1;
		in->ops = calloc(r->nnodes ? r->nnodes : 1, sizeof(*in->ops));
		in->cmds = calloc(r->ncmds ? r->ncmds : 1, sizeof(*in->cmds));
		in->ranges = calloc(r->nranges ? r->nranges : 1, sizeof(*in->ranges));
		in->args = calloc(r->nargs ? r->nargs : 1, sizeof(*in->args));
		in->scal_dep = calloc(r->nnodes ? r->nnodes : 1, sizeof(*in->scal_dep));
		if (!in->ops || !in->cmds || !in->ranges || !in->args || !in->scal_dep)
			return -ENOMEM;
		memcpy(in->cmds, r->tmpl, r->ncmds * sizeof(*in->cmds));
		memcpy(in->ranges, r->tmpl_ranges, r->nranges * sizeof(*in->ranges));
		for (i = 0; i < r->ncmds; i++)
			if (in->cmds[i].type == DRM_SPYRE_CMD_LAUNCH)
				in->cmds[i].launch.args =
					(uintptr_t)(in->ranges + in->cmds[i].launch.args);
		for (i = 0; i < r->nnodes; i++) {
			struct spy_op *op = &in->ops[i];
			struct rnode *n = &r->nodes[i];

			op->kind = n->host ? SPY_OP_HOST : SPY_OP_SUBMIT;
			op->cmds = in->cmds + n->cmd0;
			op->ncmds = n->ncmds;
			op->fn = host_node;
			op->host_fn = (spyre_host_fn)(uintptr_t)n->fn;
			op->user = n->user;
			op->user2 = in;
			op->done = inst_done;
			op->what = "spyre_recipe_launch";
		}
	}
	return 0;
}

void spy_recipe_free_instances(spyre_recipe *r)
{
	spyre_device *dev = r->dev;
	unsigned int k;

	/* Wait until no launch still needs the instances. */
	pthread_mutex_lock(&dev->lock);
	for (k = 0; r->inst && k < r->depth; k++)
		while (__atomic_load_n(&r->inst[k].outstanding, __ATOMIC_ACQUIRE))
			spy_dev_wait_locked(dev);
	for (k = 0; r->ws_last && k < r->nws * r->nstreams; k++)
		if (r->ws_last[k].s)
			spy_stream_put_locked(r->ws_last[k].s);
	for (k = 0; r->inst && k < r->depth; k++) {
		unsigned int n;

		for (n = 0; r->inst[k].scal_dep && n < r->nnodes; n++)
			if (r->inst[k].scal_dep[n].s)
				spy_stream_put_locked(r->inst[k].scal_dep[n].s);
	}
	pthread_mutex_unlock(&dev->lock);
	free(r->ws_last);
	r->ws_last = NULL;
	for (k = 0; r->inst && k < r->depth; k++) {
		free(r->inst[k].ops);
		free(r->inst[k].cmds);
		free(r->inst[k].ranges);
		free(r->inst[k].args);
		free(r->inst[k].scal_dep);
	}
	free(r->inst);
	r->inst = NULL;
	free(r->slot_engines);
	free(r->hold_slots);
	free(r->hold_vals);
	r->slot_engines = NULL;
	r->hold_slots = NULL;
	r->hold_vals = NULL;
}

/* Point a patched field at @handle + @offset (@size for argument ranges). */
static void patch_field(struct instance *in, const struct patch *p, uint32_t handle,
			uint64_t offset, uint64_t size)
{
	struct drm_spyre_cmd *c = &in->cmds[p->cmd];

	switch (p->field) {
	case PF_SRC:
		c->copy.src_handle = handle;
		c->copy.src_offset = offset;
		break;
	case PF_DST:
		c->copy.dst_handle = handle;
		c->copy.dst_offset = offset;
		break;
	case PF_TS:
		c->timestamp.handle = handle;
		c->timestamp.offset = offset;
		break;
	case PF_LAUNCH_WS:
		c->launch.ws_handle = handle;
		break;
	case PF_RANGE:
		in->ranges[p->range].handle = handle;
		in->ranges[p->range].offset = offset;
		in->ranges[p->range].size = size;
		break;
	}
}

/* Workspace and profiling fields of instance @in for a launch using workspace copy @w. */
static void bind_internal(spyre_recipe *r, struct instance *in, unsigned int w)
{
	unsigned int i;

	for (i = 0; i < r->npatches; i++) {
		const struct patch *p = &r->patches[i];

		if (p->op.kind == SPYRE_OPERAND_WS) {
			/* Offsets and sizes were set at build time; only the copy changes. */
			if (p->field == PF_RANGE)
				in->ranges[p->range].handle = r->ws[w]->handle;
			else if (p->field == PF_SRC)
				in->cmds[p->cmd].copy.src_handle = r->ws[w]->handle;
			else if (p->field == PF_DST)
				in->cmds[p->cmd].copy.dst_handle = r->ws[w]->handle;
			else
				in->cmds[p->cmd].launch.ws_handle = r->ws[w]->handle;
		} else if (p->op.kind == SPYRE_OPERAND_SCALARS) {
			uint64_t block = ((uint64_t)in->index * r->nnodes + p->node) * r->scal_stride;

			patch_field(in, p, r->scal_dev->handle, block + p->op.offset,
				    p->op.size ? p->op.size : r->scal_size - p->op.offset);
		} else if (p->op.kind == SPY_OPERAND_SCAL_HOST) {
			patch_field(in, p, r->scal_host->handle,
				    (uint64_t)in->index * r->scal_stride, r->scal_size);
		} else if (p->op.kind == SPY_OPERAND_PROF) {
			patch_field(in, p, r->prof_bo->handle,
				    ((uint64_t)in->index * r->nsteps + p->op.arg) * 8, 0);
		}
	}
}

/* Bind the launch's arguments into instance @in. No allocation. */
static int bind(spyre_recipe *r, struct instance *in, const struct spyre_buf *args)
{
	static const char *call = "spyre_recipe_launch";
	unsigned int i;

	for (i = 0; i < r->nargs; i++) {
		const struct spyre_buf *b = &args[i];

		if (!b->bo)
			return spy_err(-EINVAL, "%s: %s: argument %u is unbound", call,
				       r->dev->name, i);
		if (b->bo->dev != r->dev)
			return spy_err(-EXDEV, "%s: argument %u belongs to %s, not %s", call, i,
				       b->bo->dev->name, r->dev->name);
		if (b->offset > b->bo->size || b->size > b->bo->size - b->offset)
			return spy_err(-EINVAL, "%s: %s: argument %u range lies outside its BO",
				       call, r->dev->name, i);
		in->args[i] = *b;
	}
	for (i = 0; i < r->npatches; i++) {
		const struct patch *p = &r->patches[i];
		const struct spyre_buf *b;
		uint64_t size;

		if (p->op.kind != SPYRE_OPERAND_ARG)
			continue;
		b = &args[p->op.arg];
		if (p->op.offset > b->size)
			return spy_err(-EINVAL, "%s: %s: argument %u has %llu bytes, a step uses "
				       "offset %llu", call, r->dev->name, p->op.arg,
				       (unsigned long long)b->size,
				       (unsigned long long)p->op.offset);
		size = p->op.size ? p->op.size : b->size - p->op.offset;
		if (size > b->size - p->op.offset || size < p->need)
			return spy_err(-EINVAL, "%s: %s: argument %u has %llu bytes, a step needs "
				       "%llu at offset %llu", call, r->dev->name, p->op.arg,
				       (unsigned long long)b->size,
				       (unsigned long long)(p->need > size ? p->need : size),
				       (unsigned long long)p->op.offset);
		if (b->bo->mem != p->mem)
			return spy_err(-EINVAL, "%s: %s: argument %u is %s memory, a step needs %s "
				       "memory", call, r->dev->name, p->op.arg,
				       b->bo->mem == SPYRE_MEM_HOST ? "host" : "device",
				       p->mem == SPYRE_MEM_HOST ? "host" : "device");
		patch_field(in, p, b->bo->handle, b->offset + p->op.offset, size);
	}
	return 0;
}

/*
 * Add a dependency on @point of @s, merged with one on the same stream.
 * Room is left for the stream's own host-work dependency and event waits.
 */
static int add_dep(struct spy_op *op, struct spyre_stream *s, uint64_t point)
{
	unsigned int i;

	for (i = 0; i < op->ndeps; i++) {
		if (op->deps[i].s == s) {
			if (op->deps[i].point < point)
				op->deps[i].point = point;
			return 0;
		}
	}
	if (op->ndeps >= SPY_MAX_DEPS - 4)
		return -E2BIG;
	op->deps[op->ndeps++] = (struct spy_dep){ s, point };
	return 0;
}

/* Collect: dependency slot @slot is to hold @point of @s (stored by spy_deps_hold). */
static void hold(spyre_recipe *r, unsigned int *nhold, struct spy_dep *slot,
		 struct spyre_stream *s, uint64_t point)
{
	r->hold_slots[*nhold] = slot;
	r->hold_vals[*nhold] = (struct spy_dep){ s, point };
	(*nhold)++;
}

/*
 * Write the launch's scalars into instance @in's host block, once the
 * copies of that block's previous launch have completed (launches of
 * "depth" ago: normally long done, so this rarely waits).
 */
static void put_scalars(spyre_recipe *r, struct instance *in, const void *scalars)
{
	unsigned int n;

	for (n = 0; n < r->nnodes; n++) {
		struct spy_dep *d = &in->scal_dep[n];

		if (!d->s)
			continue;
		spy_stream_wait_point(d->s, d->point);
		spy_stream_put(d->s);
		d->s = NULL;
	}
	memcpy(r->scal_map + (size_t)in->index * r->scal_stride, scalars, r->scal_size);
}

int spyre_recipe_launch(spyre_recipe *r, spyre_stream *const *streams,
			const struct spyre_buf *args, unsigned int nargs)
{
	return spyre_recipe_launch_scalars(r, streams, args, nargs, NULL, 0);
}

int spyre_recipe_launch_scalars(spyre_recipe *r, spyre_stream *const *streams,
				const struct spyre_buf *args, unsigned int nargs,
				const void *scalars, size_t size)
{
	static const char *call = "spyre_recipe_launch";
	spyre_device *dev;
	struct instance *in;
	unsigned int i, k, w, nhold = 0;
	int ret;

	if (!r || !streams)
		return spy_err(-EINVAL, "%s: recipe or streams is NULL", call);
	dev = r->dev;
	if (!r->final)
		return spy_err(-EINVAL, "%s: %s: finalize the recipe first", call, dev->name);
	if (nargs != r->nargs || (nargs && !args))
		return spy_err(-EINVAL, "%s: %s: %u arguments bound, the recipe has %u slots", call,
			       dev->name, nargs, r->nargs);
	if (size != r->scal_size || (size && !scalars))
		return spy_err(-EINVAL, "%s: %s: %zu bytes of scalars given, the recipe takes %u",
			       call, dev->name, scalars ? size : 0, r->scal_size);
	for (i = 0; i < r->nnodes; i++) {
		spyre_stream *s = streams[r->nodes[i].stream];

		if (!s)
			return spy_err(-EINVAL, "%s: %s: stream slot %u is NULL", call, dev->name,
				       r->nodes[i].stream);
		if (spy_stream_device(s) != dev)
			return spy_err(-EXDEV, "%s: stream slot %u belongs to %s, not %s", call,
				       r->nodes[i].stream, spy_stream_device(s)->name, dev->name);
	}
	/* a queue a stream lacks (a launch on a DMA stream) is made here, not under r->lock */
	for (i = 0; i < r->nstreams; i++)
		if (r->slot_engines[i] && streams[i])
			spy_stream_prepare(streams[i], r->slot_engines[i]);
	pthread_mutex_lock(&r->lock);
	in = &r->inst[r->launches % r->depth];
	w = r->launches % r->nws;
	/* the instance's launch of depth ago is normally long issued: no lock then */
	if (__atomic_load_n(&in->outstanding, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&dev->lock);
		while (__atomic_load_n(&in->outstanding, __ATOMIC_ACQUIRE))
			spy_dev_wait_locked(dev);
		pthread_mutex_unlock(&dev->lock);
	}
	ret = bind(r, in, args);
	if (ret) {
		pthread_mutex_unlock(&r->lock);
		return ret;
	}
	if (in->bound_ws != (int)w) {
		bind_internal(r, in, w);
		in->bound_ws = (int)w;
	}
	if (r->scal_size)
		put_scalars(r, in, scalars);
	r->launches++;
	__atomic_store_n(&in->outstanding, r->nnodes, __ATOMIC_RELAXED);
	for (k = 0; k < r->nnodes; k++) {
		unsigned int ni = r->order[k], j;
		struct rnode *n = &r->nodes[ni];
		struct spy_op *op = &in->ops[ni];

		op->ndeps = 0;
		ret = 0;
		for (j = 0; j < n->ndeps; j++) {
			struct spy_op *dep = &in->ops[n->deps[j]];

			if (!ret)
				ret = add_dep(op, streams[r->nodes[n->deps[j]].stream],
					      dep->point);
		}
		/* The workspace copy's previous launch must be done with it. */
		for (j = 0; n->first && r->ws_size && j < r->nstreams; j++) {
			const struct spy_dep *d = &r->ws_last[w * r->nstreams + j];

			if (d->s && !ret)
				ret = add_dep(op, d->s, d->point);
		}
		if (!ret)
			ret = spy_op_enqueue(streams[n->stream], op);
		/* the workspace copy's users and the scalar block's last copy */
		if (!ret && n->last && r->ws_size)
			hold(r, &nhold, &r->ws_last[w * r->nstreams + n->stream],
			     streams[n->stream], op->point);
		if (!ret && n->scalars)
			hold(r, &nhold, &in->scal_dep[ni], streams[n->stream], op->point);
		if (ret) {
			spy_deps_hold(dev, r->hold_slots, r->hold_vals, nhold);
			pthread_mutex_lock(&dev->lock);
			__atomic_sub_fetch(&in->outstanding, r->nnodes - k, __ATOMIC_RELEASE);
			spy_dev_wake_locked(dev);
			pthread_mutex_unlock(&dev->lock);
			pthread_mutex_unlock(&r->lock);
			return spy_dev_err(dev, ret, call, "submission %u of %u refused (the "
					   "earlier ones were issued)", k + 1, r->nnodes);
		}
	}
	spy_deps_hold(dev, r->hold_slots, r->hold_vals, nhold);
	pthread_mutex_unlock(&r->lock);
	return 0;
}

int spyre_recipe_submits_per_launch(const spyre_recipe *r, unsigned int *n)
{
	if (!r || !n)
		return spy_err(-EINVAL, "spyre_recipe_submits_per_launch: an argument is NULL");
	if (!r->final)
		return spy_err(-EINVAL, "spyre_recipe_submits_per_launch: %s: not finalized",
			       r->dev->name);
	*n = r->nsubmits;
	return 0;
}


int spyre_recipe_step_times(spyre_recipe *r, uint64_t *ns, unsigned int count)
{
	static const char *call = "spyre_recipe_step_times";
	const struct instance *in;
	unsigned int i;

	if (!r || (count && !ns))
		return spy_err(-EINVAL, "%s: recipe or ns is NULL", call);
	if (!r->final || !r->profile)
		return spy_err(-EINVAL, "%s: %s: the recipe was not finalized with profiling on",
			       call, r->dev->name);
	if (!r->launches)
		return spy_err(-EINVAL, "%s: %s: the recipe was never launched", call,
			       r->dev->name);
	if (count > r->nsteps)
		count = r->nsteps;
	in = &r->inst[(r->launches - 1) % r->depth];
	for (i = 0; i < r->nnodes; i++) {
		const struct spy_op *op = &in->ops[i];

		if (op->kind != SPY_OP_SUBMIT)
			continue;
		if (!spy_stream_point_done(op->s, op->point))
			return spy_err(-EBUSY, "%s: %s: the last launch has not completed", call,
				       r->dev->name);
	}
	for (i = 0; i < count; i++) {
		enum step_kind k = r->steps[i].kind;
		bool timed = k != ST_HOST && k != ST_SIGNAL && k != ST_WAIT;

		ns[i] = timed ? __atomic_load_n(&r->prof[(uint64_t)in->index * r->nsteps + i],
						__ATOMIC_ACQUIRE)
			      : 0;
	}
	return 0;
}
