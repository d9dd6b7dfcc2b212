// SPDX-License-Identifier: MIT
/*
 * Recipes: launching a finalized plan.
 *
 * A launch binds the argument buffers into preallocated copies of the
 * commands (one "instance" per launch in flight) and enqueues the nodes in
 * their issue order: nothing is allocated and each SUBMIT node costs one
 * ioctl. Building is in recipe_build.c.
 */
#include <stdlib.h>
#include <string.h>

#include "recipe.h"

static void inst_done(struct spy_op *op)
{
	struct instance *in = op->user2;

	in->outstanding--;
	pthread_cond_broadcast(&in->r->dev->cond);
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

	for (k = 0; k < SPYRE_RECIPE_INFLIGHT; k++) {
		struct instance *in = &r->inst[k];

		in->r = r;
		in->ops = calloc(r->nnodes ? r->nnodes : 1, sizeof(*in->ops));
		in->cmds = calloc(r->ncmds ? r->ncmds : 1, sizeof(*in->cmds));
		in->ranges = calloc(r->nranges ? r->nranges : 1, sizeof(*in->ranges));
		in->args = calloc(r->nargs ? r->nargs : 1, sizeof(*in->args));
		if (!in->ops || !in->cmds || !in->ranges || !in->args)
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
		}
	}
	return 0;
}

void spy_recipe_free_instances(spyre_recipe *r)
{
	unsigned int k;

	/* Wait until no launch still needs the instances. */
	pthread_mutex_lock(&r->dev->lock);
	for (k = 0; k < SPYRE_RECIPE_INFLIGHT; k++)
		while (r->inst[k].outstanding)
			pthread_cond_wait(&r->dev->cond, &r->dev->lock);
	pthread_mutex_unlock(&r->dev->lock);
	for (k = 0; k < SPYRE_RECIPE_INFLIGHT; k++) {
		free(r->inst[k].ops);
		free(r->inst[k].cmds);
		free(r->inst[k].ranges);
		free(r->inst[k].args);
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
		const struct spyre_buf *b = &args[p->op.arg];
		struct drm_spyre_cmd *c = &in->cmds[r->nodes[p->node].cmd0] +
					  (p->cmd - r->nodes[p->node].cmd0);
		uint64_t size;

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
		switch (p->field) {
		case PF_SRC:
			c->copy.src_handle = b->bo->handle;
			c->copy.src_offset = b->offset + p->op.offset;
			break;
		case PF_DST:
			c->copy.dst_handle = b->bo->handle;
			c->copy.dst_offset = b->offset + p->op.offset;
			break;
		case PF_TS:
			c->timestamp.handle = b->bo->handle;
			c->timestamp.offset = b->offset + p->op.offset;
			break;
		case PF_RANGE:
			in->ranges[p->range].handle = b->bo->handle;
			in->ranges[p->range].offset = b->offset + p->op.offset;
			in->ranges[p->range].size = size;
			break;
		}
	}
	return 0;
}

int spyre_recipe_launch(spyre_recipe *r, spyre_stream *const *streams,
			const struct spyre_buf *args, unsigned int nargs)
{
	static const char *call = "spyre_recipe_launch";
	spyre_device *dev;
	struct instance *in;
	unsigned int i, k;
	int ret;

	if (!r || !streams)
		return spy_err(-EINVAL, "%s: recipe or streams is NULL", call);
	dev = r->dev;
	if (!r->final)
		return spy_err(-EINVAL, "%s: %s: finalize the recipe first", call, dev->name);
	if (nargs != r->nargs || (nargs && !args))
		return spy_err(-EINVAL, "%s: %s: %u arguments bound, the recipe has %u slots", call,
			       dev->name, nargs, r->nargs);
	for (i = 0; i < r->nnodes; i++) {
		spyre_stream *s = streams[r->nodes[i].stream];

		if (!s)
			return spy_err(-EINVAL, "%s: %s: stream slot %u is NULL", call, dev->name,
				       r->nodes[i].stream);
		if (s->dev != dev)
			return spy_err(-EXDEV, "%s: stream slot %u belongs to %s, not %s", call,
				       r->nodes[i].stream, s->dev->name, dev->name);
	}
	for (i = 0; i < r->nsteps; i++)
		if (r->steps[i].kind == ST_COMPUTE &&
		    streams[r->steps[i].stream]->engine != SPYRE_ENGINE_COMPUTE)
			return spy_err(-EINVAL, "%s: %s: stream slot %u runs a compute step but is "
				       "a DMA stream", call, dev->name, r->steps[i].stream);
	pthread_mutex_lock(&r->lock);
	in = &r->inst[r->launches % SPYRE_RECIPE_INFLIGHT];
	pthread_mutex_lock(&dev->lock);
	while (in->outstanding)
		pthread_cond_wait(&dev->cond, &dev->lock);
	pthread_mutex_unlock(&dev->lock);
	ret = bind(r, in, args);
	if (ret) {
		pthread_mutex_unlock(&r->lock);
		return ret;
	}
	r->launches++;
	in->outstanding = r->nnodes;
	for (k = 0; k < r->nnodes; k++) {
		unsigned int ni = r->order[k], j;
		struct rnode *n = &r->nodes[ni];
		struct spy_op *op = &in->ops[ni];

		op->ndeps = 0;
		for (j = 0; j < n->ndeps; j++) {
			struct spy_op *dep = &in->ops[n->deps[j]];

			op->deps[op->ndeps++] = (struct spy_dep){
				streams[r->nodes[n->deps[j]].stream], dep->point };
		}
		ret = spy_op_enqueue(streams[n->stream], op);
		if (ret) {
			pthread_mutex_lock(&dev->lock);
			in->outstanding -= r->nnodes - k;
			pthread_cond_broadcast(&dev->cond);
			pthread_mutex_unlock(&dev->lock);
			pthread_mutex_unlock(&r->lock);
			return spy_dev_err(dev, ret, call, "submission %u of %u refused (the "
					   "earlier ones were issued)", k + 1, r->nnodes);
		}
	}
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

