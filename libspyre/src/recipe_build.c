// SPDX-License-Identifier: MIT
/*
 * Recipes: prepared launch plans, built here.
 *
 * At build time the typed steps of each stream slot are grouped into
 * nodes: a run of device steps (copies, launches, timestamps, event signals
 * and waits) becomes one SUBMIT; a host step becomes one host work item.
 * Event waits become dependencies on the node holding the signal (so a wait
 * covers the signalling stream's whole submission: the price of one submit
 * per stream). Nodes are put in an issue order where every dependency comes
 * first; a cycle is refused. Launching is in recipe_launch.c.
 */
#include <stdlib.h>
#include <string.h>

#include "recipe.h"
#include "spyre_hw.h"

int spyre_recipe_create(spyre_device *dev, unsigned int nstreams, unsigned int nargs,
			uint64_t workspace_size, spyre_recipe **out)
{
	spyre_recipe *r;
	int ret;

	if (!dev || !out)
		return spy_err(-EINVAL, "spyre_recipe_create: device or out is NULL");
	if (!nstreams || nstreams > 8)
		return spy_err(-EINVAL, "spyre_recipe_create: %s: %u stream slots (1..8)",
			       dev->name, nstreams);
	if (nargs > SPYRE_RECIPE_MAX_ARGS)
		return spy_err(-E2BIG, "spyre_recipe_create: %s: %u argument slots (at most %d)",
			       dev->name, nargs, SPYRE_RECIPE_MAX_ARGS);
	r = calloc(1, sizeof(*r));
	if (!r || !(r->ws = calloc(1, sizeof(*r->ws)))) {
		free(r);
		return spy_err(-ENOMEM, "spyre_recipe_create: out of memory");
	}
	r->dev = dev;
	r->nstreams = nstreams;
	r->nargs = nargs;
	r->ws_size = workspace_size;
	r->depth = SPYRE_RECIPE_INFLIGHT;
	r->nws = 1;
	if (workspace_size) {
		ret = spyre_bo_create(dev, workspace_size, SPYRE_MEM_DEVICE, &r->ws[0]);
		if (ret) {
			free(r->ws);
			free(r);
			return ret;
		}
	}
	pthread_mutex_init(&r->lock, NULL);
	spy_dev_get(dev);
	*out = r;
	return 0;
}

int spyre_recipe_set_inflight(spyre_recipe *r, unsigned int depth, unsigned int workspaces)
{
	static const char *call = "spyre_recipe_set_inflight";

	if (!r)
		return spy_err(-EINVAL, "%s: recipe is NULL", call);
	if (r->final)
		return spy_err(-EBUSY, "%s: %s: the recipe is finalized", call, r->dev->name);
	if (!depth || depth > SPYRE_RECIPE_MAX_INFLIGHT)
		return spy_err(-EINVAL, "%s: %s: depth %u (1..%d)", call, r->dev->name, depth,
			       SPYRE_RECIPE_MAX_INFLIGHT);
	if (!workspaces || workspaces > depth)
		return spy_err(-EINVAL, "%s: %s: %u workspace copies for depth %u (1..depth)",
			       call, r->dev->name, workspaces, depth);
	r->depth = depth;
	r->nws = workspaces;
	return 0;
}

int spyre_recipe_set_scalars(spyre_recipe *r, uint32_t size)
{
	static const char *call = "spyre_recipe_set_scalars";
	unsigned int i;

	if (!r)
		return spy_err(-EINVAL, "%s: recipe is NULL", call);
	if (r->final)
		return spy_err(-EBUSY, "%s: %s: the recipe is finalized", call, r->dev->name);
	if (size > SPYRE_RECIPE_MAX_SCALARS)
		return spy_err(-E2BIG, "%s: %s: %u bytes of scalars (at most %d)", call,
			       r->dev->name, size, SPYRE_RECIPE_MAX_SCALARS);
	for (i = 0; i < r->nsteps; i++)
		if (r->steps[i].uses_scalars)
			return spy_err(-EBUSY, "%s: %s: steps already use the scalar block", call,
				       r->dev->name);
	r->scal_size = size;
	r->scal_stride = (size + 127) & ~127u;
	return 0;
}

int spyre_recipe_set_profiling(spyre_recipe *r, int enable)
{
	if (!r)
		return spy_err(-EINVAL, "spyre_recipe_set_profiling: recipe is NULL");
	if (r->final)
		return spy_err(-EBUSY, "spyre_recipe_set_profiling: %s: the recipe is finalized",
			       r->dev->name);
	r->profile = enable != 0;
	return 0;
}

static int add_step(spyre_recipe *r, const char *call, unsigned int stream, struct rstep *st)
{
	unsigned int i;

	if (!r)
		return spy_err(-EINVAL, "%s: recipe is NULL", call);
	if (r->final)
		return spy_err(-EBUSY, "%s: %s: the recipe is finalized", call, r->dev->name);
	if (stream >= r->nstreams)
		return spy_err(-EINVAL, "%s: %s: stream slot %u, the recipe has %u", call,
			       r->dev->name, stream, r->nstreams);
	if (r->nsteps == r->cap) {
		unsigned int cap = r->cap ? r->cap * 2 : 16;
		struct rstep *s = realloc(r->steps, cap * sizeof(*s));

		if (!s)
			return spy_err(-ENOMEM, "%s: out of memory", call);
		r->steps = s;
		r->cap = cap;
	}
	st->stream = stream;
	st->uses_scalars = st->dst.kind == SPYRE_OPERAND_SCALARS ||
			   st->src.kind == SPYRE_OPERAND_SCALARS;
	for (i = 0; i < st->nargs; i++)
		if (st->args[i].kind == SPYRE_OPERAND_SCALARS)
			st->uses_scalars = true;
	r->steps[r->nsteps++] = *st;
	return 0;
}

/* Build-time checks of an operand that do not need the bound arguments. */
static int check_operand(spyre_recipe *r, const char *call, const struct spyre_operand *o,
			 uint64_t need, enum spyre_mem mem)
{
	switch (o->kind) {
	case SPYRE_OPERAND_ARG:
		if (o->arg >= r->nargs)
			return spy_err(-EINVAL, "%s: %s: argument slot %u, the recipe has %u", call,
				       r->dev->name, o->arg, r->nargs);
		if (o->size && o->size < need)
			return spy_err(-EINVAL, "%s: %s: the step moves %llu bytes, its operand "
				       "has %llu", call, r->dev->name, (unsigned long long)need,
				       (unsigned long long)o->size);
		return 0;
	case SPYRE_OPERAND_WS:
		if (mem != SPYRE_MEM_DEVICE)
			return spy_err(-EINVAL, "%s: %s: the workspace is device memory; this "
				       "operand must be host memory", call, r->dev->name);
		if (o->offset > r->ws_size || need > r->ws_size - o->offset ||
		    (o->size && o->size > r->ws_size - o->offset))
			return spy_err(-EINVAL, "%s: %s: workspace range [%llu, +%llu) outside the "
				       "%llu-byte workspace", call, r->dev->name,
				       (unsigned long long)o->offset,
				       (unsigned long long)(o->size ? o->size : need),
				       (unsigned long long)r->ws_size);
		return 0;
	case SPYRE_OPERAND_SCALARS:
		if (!r->scal_size)
			return spy_err(-EINVAL, "%s: %s: scalar operand, but the recipe has no "
				       "scalar block (spyre_recipe_set_scalars)", call, r->dev->name);
		if (mem != SPYRE_MEM_DEVICE)
			return spy_err(-EINVAL, "%s: %s: the scalar block is device memory; this "
				       "operand must be host memory", call, r->dev->name);
		if (o->offset > r->scal_size || need > r->scal_size - o->offset ||
		    (o->size && o->size > r->scal_size - o->offset))
			return spy_err(-EINVAL, "%s: %s: scalar range [%llu, +%llu) outside the "
				       "%u-byte block", call, r->dev->name,
				       (unsigned long long)o->offset,
				       (unsigned long long)(o->size ? o->size : need), r->scal_size);
		return 0;
	case SPYRE_OPERAND_BUF:
		if (!o->buf.bo || o->buf.bo->dev != r->dev)
			return spy_err(-EINVAL, "%s: %s: fixed buffer is NULL or of another device",
				       call, r->dev->name);
		if (o->buf.bo->mem != mem)
			return spy_err(-EINVAL, "%s: %s: fixed buffer is %s memory, the step needs "
				       "%s memory", call, r->dev->name,
				       o->buf.bo->mem == SPYRE_MEM_HOST ? "host" : "device",
				       mem == SPYRE_MEM_HOST ? "host" : "device");
		if (need > o->buf.size || o->buf.offset > o->buf.bo->size ||
		    o->buf.size > o->buf.bo->size - o->buf.offset)
			return spy_err(-EINVAL, "%s: %s: fixed buffer range does not fit", call,
				       r->dev->name);
		return 0;
	}
	return spy_err(-EINVAL, "%s: %s: unknown operand kind %d", call, r->dev->name,
		       (int)o->kind);
}

static int add_copy(spyre_recipe *r, const char *call, enum step_kind k, unsigned int stream,
		    struct spyre_operand dst, struct spyre_operand src, uint64_t size)
{
	struct rstep st = { .kind = k, .dst = dst, .src = src, .size = size };
	enum spyre_mem dm = k == ST_D2H ? SPYRE_MEM_HOST : SPYRE_MEM_DEVICE;
	enum spyre_mem sm = k == ST_H2D ? SPYRE_MEM_HOST : SPYRE_MEM_DEVICE;
	int ret;

	if (!r)
		return spy_err(-EINVAL, "%s: recipe is NULL", call);
	ret = check_operand(r, call, &dst, size, dm);
	if (!ret)
		ret = check_operand(r, call, &src, size, sm);
	return ret ? ret : add_step(r, call, stream, &st);
}

int spyre_recipe_h2d(spyre_recipe *r, unsigned int stream, struct spyre_operand dst,
		     struct spyre_operand src, uint64_t size)
{
	return add_copy(r, "spyre_recipe_h2d", ST_H2D, stream, dst, src, size);
}

int spyre_recipe_d2h(spyre_recipe *r, unsigned int stream, struct spyre_operand dst,
		     struct spyre_operand src, uint64_t size)
{
	return add_copy(r, "spyre_recipe_d2h", ST_D2H, stream, dst, src, size);
}

int spyre_recipe_d2d(spyre_recipe *r, unsigned int stream, struct spyre_operand dst,
		     struct spyre_operand src, uint64_t size)
{
	return add_copy(r, "spyre_recipe_d2d", ST_D2D, stream, dst, src, size);
}

int spyre_recipe_compute(spyre_recipe *r, unsigned int stream, const spyre_program *prog,
			 const struct spyre_operand *args, unsigned int nargs,
			 struct spyre_operand workspace)
{
	const char *call = "spyre_recipe_compute";
	struct rstep st = { .kind = ST_COMPUTE, .prog = prog, .nargs = nargs, .ws = workspace };
	unsigned int i;
	int ret;

	if (!r || !prog)
		return spy_err(-EINVAL, "%s: recipe or program is NULL", call);
	if (nargs > SPY_MAX_ARGS || nargs > r->dev->max_args)
		return spy_err(-E2BIG, "%s: %s: %u arguments, at most %llu", call, r->dev->name,
			       nargs, (unsigned long long)r->dev->max_args);
	if (nargs < prog->num_args)
		return spy_err(-EINVAL, "%s: %s: the program uses %u argument slots, %u given",
			       call, r->dev->name, prog->num_args, nargs);
	if (nargs && !args)
		return spy_err(-EINVAL, "%s: %s: args is NULL", call, r->dev->name);
	for (i = 0; i < nargs; i++) {
		ret = check_operand(r, call, &args[i], 0, SPYRE_MEM_DEVICE);
		if (ret)
			return ret;
		st.args[i] = args[i];
	}
	if (workspace.kind == SPYRE_OPERAND_ARG || workspace.kind == SPYRE_OPERAND_SCALARS) {
		return spy_err(-EINVAL, "%s: %s: the workspace of a step is fixed (WS or BUF), "
			       "not an argument", call, r->dev->name);
	}
	if (prog->ws_size || workspace.size || workspace.buf.bo) {
		uint64_t need = prog->ws_size;

		ret = check_operand(r, call, &workspace, need, SPYRE_MEM_DEVICE);
		if (ret)
			return ret;
	}
	return add_step(r, call, stream, &st);
}

int spyre_recipe_host(spyre_recipe *r, unsigned int stream, spyre_recipe_host_fn fn, void *user)
{
	struct rstep st = { .kind = ST_HOST, .fn = fn, .user = user };

	if (!fn)
		return spy_err(-EINVAL, "spyre_recipe_host: function is NULL");
	return add_step(r, "spyre_recipe_host", stream, &st);
}

static int add_event(spyre_recipe *r, const char *call, enum step_kind k, unsigned int stream,
		     unsigned int ev)
{
	struct rstep st = { .kind = k, .event = ev };
	unsigned int i;

	if (!r)
		return spy_err(-EINVAL, "%s: recipe is NULL", call);
	if (ev >= MAX_EVENTS)
		return spy_err(-EINVAL, "%s: %s: event id %u (0..%d)", call, r->dev->name, ev,
			       MAX_EVENTS - 1);
	if (k == ST_WAIT) {
		for (i = 0; i < r->nsteps; i++)
			if (r->steps[i].kind == ST_SIGNAL && r->steps[i].event == ev)
				break;
		if (i == r->nsteps)
			return spy_err(-EINVAL, "%s: %s: no signal of event %u before this wait",
				       call, r->dev->name, ev);
	}
	return add_step(r, call, stream, &st);
}

int spyre_recipe_timestamp(spyre_recipe *r, unsigned int stream, struct spyre_operand dst)
{
	static const char *call = "spyre_recipe_timestamp";
	struct rstep st = { .kind = ST_TIMESTAMP, .dst = dst, .size = sizeof(uint64_t) };
	int ret;

	if (!r)
		return spy_err(-EINVAL, "%s: recipe is NULL", call);
	/* Host memory only: the point is that the host reads the time back. */
	ret = check_operand(r, call, &dst, sizeof(uint64_t), SPYRE_MEM_HOST);
	return ret ? ret : add_step(r, call, stream, &st);
}

int spyre_recipe_signal(spyre_recipe *r, unsigned int stream, unsigned int event_id)
{
	return add_event(r, "spyre_recipe_signal", ST_SIGNAL, stream, event_id);
}

int spyre_recipe_wait(spyre_recipe *r, unsigned int stream, unsigned int event_id)
{
	return add_event(r, "spyre_recipe_wait", ST_WAIT, stream, event_id);
}

static int add_patch(spyre_recipe *r, unsigned int node, unsigned int cmd, unsigned int range,
		     enum patch_field f, const struct spyre_operand *o, uint64_t need,
		     enum spyre_mem mem)
{
	struct patch *p = realloc(r->patches, (r->npatches + 1) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	r->patches = p;
	p[r->npatches++] = (struct patch){ node, cmd, range, f, *o, need, mem };
	return 0;
}

/* Where a command field's operand sits; argument and workspace operands are patched at launch. */
struct field {
	unsigned int node, cmd, range;
	enum patch_field f;
};

static int operand(spyre_recipe *r, const struct field *fl, const struct spyre_operand *o,
		   uint64_t need, enum spyre_mem mem, __u32 *handle, __u64 *off, __u64 *size)
{
	switch (o->kind) {
	case SPYRE_OPERAND_BUF:
		*handle = o->buf.bo->handle;
		*off = o->buf.offset;
		*size = o->buf.size;
		return 0;
	case SPYRE_OPERAND_WS:
		/* The handle is the launch's copy of the workspace. */
		*off = o->offset;
		*size = o->size ? o->size : (need ? need : r->ws_size - o->offset);
		return add_patch(r, fl->node, fl->cmd, fl->range, fl->f, o, need, mem);
	case SPYRE_OPERAND_SCALARS:
		/* Handle and offset are the launch's block, size is known now. */
		*size = o->size ? o->size : (need ? need : r->scal_size - o->offset);
		return add_patch(r, fl->node, fl->cmd, fl->range, fl->f, o, need, mem);
	default:
		return add_patch(r, fl->node, fl->cmd, fl->range, fl->f, o, need, mem);
	}
}

/* Template command of a device step; argument operands are patched at launch. */
static int build_cmd(spyre_recipe *r, struct rstep *st, unsigned int node, unsigned int ci,
		     unsigned int *ri)
{
	struct drm_spyre_cmd *c = &r->tmpl[ci];
	struct field fl = { node, ci, 0, PF_SRC };
	__u64 size = 0;
	unsigned int i;
	int ret = 0;

	memset(c, 0, sizeof(*c));
	if (st->kind == ST_COMPUTE) {
		c->type = DRM_SPYRE_CMD_LAUNCH;
		c->launch.prog_handle = st->prog->bo->handle;
		c->launch.prog_size = st->prog->size;
		c->launch.nargs = st->nargs;
		c->launch.args_stride = sizeof(struct drm_spyre_bo_range);
		if (st->ws.kind == SPYRE_OPERAND_BUF ? st->ws.buf.bo != NULL
						     : (st->prog->ws_size || st->ws.size)) {
			fl.f = PF_LAUNCH_WS;
			ret = operand(r, &fl, &st->ws, st->prog->ws_size, SPYRE_MEM_DEVICE,
				      &c->launch.ws_handle, &c->launch.ws_offset,
				      &c->launch.ws_size);
			if (ret)
				return ret;
		}
		c->launch.args = *ri;	/* index for now; a pointer per instance */
		fl.f = PF_RANGE;
		for (i = 0; i < st->nargs; i++) {
			struct drm_spyre_bo_range *rg = &r->tmpl_ranges[*ri + i];

			memset(rg, 0, sizeof(*rg));
			fl.range = *ri + i;
			ret = operand(r, &fl, &st->args[i], 0, SPYRE_MEM_DEVICE, &rg->handle,
				      &rg->offset, &rg->size);
			if (ret)
				return ret;
		}
		*ri += st->nargs;
		return 0;
	}
	if (st->kind == ST_TIMESTAMP) {
		c->type = DRM_SPYRE_CMD_TIMESTAMP;
		fl.f = PF_TS;
		return operand(r, &fl, &st->dst, st->size, SPYRE_MEM_HOST, &c->timestamp.handle,
			       &c->timestamp.offset, &size);
	}
	c->type = DRM_SPYRE_CMD_COPY;
	c->copy.size = st->size;
	ret = operand(r, &fl, &st->src, st->size,
		      st->kind == ST_H2D ? SPYRE_MEM_HOST : SPYRE_MEM_DEVICE, &c->copy.src_handle,
		      &c->copy.src_offset, &size);
	fl.f = PF_DST;
	if (!ret)
		ret = operand(r, &fl, &st->dst, st->size,
			      st->kind == ST_D2H ? SPYRE_MEM_HOST : SPYRE_MEM_DEVICE,
			      &c->copy.dst_handle, &c->copy.dst_offset, &size);
	return ret;
}

/* The copy of the launch's scalar bytes into node @node's device block. */
static int build_scalar_copy(spyre_recipe *r, unsigned int node, unsigned int ci)
{
	struct spyre_operand src = { SPY_OPERAND_SCAL_HOST, 0, { 0, 0, 0 }, 0, r->scal_size };
	struct spyre_operand dst = spyre_op_scalars(0, r->scal_size);
	int ret;

	memset(&r->tmpl[ci], 0, sizeof(r->tmpl[ci]));
	r->tmpl[ci].type = DRM_SPYRE_CMD_COPY;
	r->tmpl[ci].copy.size = r->scal_size;
	ret = add_patch(r, node, ci, 0, PF_SRC, &src, r->scal_size, SPYRE_MEM_HOST);
	return ret ? ret : add_patch(r, node, ci, 0, PF_DST, &dst, r->scal_size,
				     SPYRE_MEM_DEVICE);
}

/* Profiling: a TIMESTAMP into the launch's slot of step @step. */
static int build_prof_cmd(spyre_recipe *r, unsigned int step, unsigned int node, unsigned int ci)
{
	struct spyre_operand o = { SPY_OPERAND_PROF, step, { 0, 0, 0 }, 0, 8 };

	memset(&r->tmpl[ci], 0, sizeof(r->tmpl[ci]));
	r->tmpl[ci].type = DRM_SPYRE_CMD_TIMESTAMP;
	return add_patch(r, node, ci, 0, PF_TS, &o, 8, SPYRE_MEM_HOST);
}

/* Commands and ring descriptors device step @st adds to a node (its scalar copy apart). */
static void step_cost(const spyre_recipe *r, const struct rstep *st, unsigned int *cmds,
		      unsigned int *descs)
{
	unsigned int n = r->profile ? 2 : 1;

	*cmds = *descs = 0;
	if (st->kind == ST_HOST || st->kind == ST_SIGNAL || st->kind == ST_WAIT)
		return;
	*cmds = n;
	*descs = n;
	if (st->kind == ST_COMPUTE)
		*descs += (st->nargs + SPYRE_ARGS_PER_DESC - 1) / SPYRE_ARGS_PER_DESC;
}

/*
 * Group steps into nodes per stream slot: a host step is a node; a run of
 * device steps is one node (one SUBMIT) unless it exceeds what one
 * submission may carry (spy_submit_budget), then it is cut into as few
 * consecutive nodes as fit, in order.
 */
static int make_nodes(spyre_recipe *r)
{
	struct spy_budget b = spy_submit_budget(r->dev);
	unsigned int s, i, ncmds = 0, nranges = 0, ci = 0, ri = 0, ndescs = 0;
	int cur;

	r->nodes = calloc(r->nsteps, sizeof(*r->nodes));
	if (!r->nodes)
		return -ENOMEM;
	for (s = 0; s < r->nstreams; s++) {
		cur = -1;
		for (i = 0; i < r->nsteps; i++) {
			struct rstep *st = &r->steps[i];
			unsigned int c, d, sc;

			if (st->stream != s)
				continue;
			step_cost(r, st, &c, &d);
			sc = st->uses_scalars && cur >= 0 && !r->nodes[cur].scalars;
			if (st->kind == ST_HOST || cur < 0 || r->nodes[cur].host ||
			    r->nodes[cur].ncmds + c + sc > b.cmds || ndescs + d + sc > b.descs) {
				cur = r->nnodes++;
				r->nodes[cur].stream = s;
				r->nodes[cur].host = st->kind == ST_HOST;
				r->nodes[cur].fn = st->fn;
				r->nodes[cur].user = st->user;
				ndescs = 0;
			}
			st->node = cur;
			if (st->kind == ST_HOST) {
				cur = -1;	/* the next device step starts a new node */
				continue;
			}
			if (st->uses_scalars && !r->nodes[cur].scalars) {
				r->nodes[cur].scalars = true;
				r->nodes[cur].ncmds++;
				ncmds++;
				ndescs++;
			}
			r->nodes[cur].ncmds += c;
			ncmds += c;
			ndescs += d;
			if (st->kind == ST_COMPUTE) {
				r->nodes[cur].nranges += st->nargs;
				nranges += st->nargs;
			}
		}
	}
	for (s = 0; s < r->nnodes; s++) {
		r->nodes[s].first = !s || r->nodes[s - 1].stream != r->nodes[s].stream;
		r->nodes[s].last = s + 1 == r->nnodes || r->nodes[s + 1].stream != r->nodes[s].stream;
	}
	r->tmpl = calloc(ncmds ? ncmds : 1, sizeof(*r->tmpl));
	r->tmpl_ranges = calloc(nranges ? nranges : 1, sizeof(*r->tmpl_ranges));
	if (!r->tmpl || !r->tmpl_ranges)
		return -ENOMEM;
	r->ncmds = ncmds;
	r->nranges = nranges;
	for (s = 0; s < r->nnodes; s++) {
		struct rnode *n = &r->nodes[s];
		unsigned int c = ci;

		n->cmd0 = ci;
		n->range0 = ri;
		ci += n->ncmds;
		if (n->host)
			continue;
		r->nsubmits++;
		if (n->scalars) {
			int ret = build_scalar_copy(r, s, c++);

			if (ret)
				return ret;
		}
		for (i = 0; i < r->nsteps; i++) {
			struct rstep *st = &r->steps[i];
			int ret;

			if (st->node != s || st->kind == ST_HOST || st->kind == ST_SIGNAL ||
			    st->kind == ST_WAIT)
				continue;
			ret = build_cmd(r, st, s, c++, &ri);
			if (!ret && r->profile)
				ret = build_prof_cmd(r, i, s, c++);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* Event edges, then an issue order (Kahn); -EDEADLK on a cycle. */
static int order_nodes(spyre_recipe *r)
{
	int signal_node[MAX_EVENTS];
	unsigned int *indeg, i, j, n = 0;
	bool *done;

	for (i = 0; i < MAX_EVENTS; i++)
		signal_node[i] = -1;
	for (i = 0; i < r->nsteps; i++) {
		struct rstep *st = &r->steps[i];
		struct rnode *nd = &r->nodes[st->node];

		if (st->kind == ST_SIGNAL)
			signal_node[st->event] = st->node;
		if (st->kind != ST_WAIT || (unsigned int)signal_node[st->event] == st->node)
			continue;
		for (j = 0; j < nd->ndeps; j++)
			if (nd->deps[j] == (unsigned int)signal_node[st->event])
				break;
		if (j < nd->ndeps)
			continue;
		if (nd->ndeps == sizeof(nd->deps) / sizeof(nd->deps[0]))
			return spy_err(-E2BIG, "spyre_recipe_finalize: %s: too many event waits in "
				       "one submission", r->dev->name);
		nd->deps[nd->ndeps++] = signal_node[st->event];
	}
	indeg = calloc(r->nnodes, sizeof(*indeg));
	done = calloc(r->nnodes, sizeof(*done));
	r->order = calloc(r->nnodes ? r->nnodes : 1, sizeof(*r->order));
	if (!indeg || !done || !r->order) {
		free(indeg);
		free(done);
		return spy_err(-ENOMEM, "spyre_recipe_finalize: out of memory");
	}
	/* Ready: all event deps placed and the previous node of the stream placed. */
	while (n < r->nnodes) {
		bool progress = false;

		for (i = 0; i < r->nnodes; i++) {
			bool ok = !done[i];

			for (j = 0; ok && j < r->nodes[i].ndeps; j++)
				ok = done[r->nodes[i].deps[j]];
			for (j = 0; ok && j < i; j++)
				if (r->nodes[j].stream == r->nodes[i].stream && !done[j])
					ok = false;
			if (!ok)
				continue;
			done[i] = true;
			r->order[n++] = i;
			progress = true;
		}
		if (!progress)
			break;
	}
	free(indeg);
	free(done);
	if (n < r->nnodes)
		return spy_err(-EDEADLK, "spyre_recipe_finalize: %s: the event waits form a cycle "
			       "once each stream's steps are one submission; move the signal "
			       "before the waits or split the work over more streams",
			       r->dev->name);
	return 0;
}

/* The extra workspace copies and the profiling slots. */
static int alloc_launch_memory(spyre_recipe *r)
{
	spyre_bo **ws;
	unsigned int i;
	void *map;
	int ret;

	r->ws_last = calloc((size_t)r->nws * r->nstreams, sizeof(*r->ws_last));
	ws = realloc(r->ws, r->nws * sizeof(*ws));
	if (!r->ws_last || !ws) {
		if (ws)
			r->ws = ws;
		else
			r->nws = 1;
		return spy_err(-ENOMEM, "spyre_recipe_finalize: out of memory");
	}
	r->ws = ws;
	for (i = 1; i < r->nws; i++)
		r->ws[i] = NULL;
	for (i = 1; r->ws_size && i < r->nws; i++) {
		ret = spyre_bo_create(r->dev, r->ws_size, SPYRE_MEM_DEVICE, &r->ws[i]);
		if (ret)
			return ret;
	}
	if (r->scal_size) {
		ret = spyre_bo_create(r->dev, (uint64_t)r->depth * r->scal_stride, SPYRE_MEM_HOST,
				      &r->scal_host);
		if (!ret)
			ret = spyre_bo_map(r->scal_host, &map);
		if (!ret)
			ret = spyre_bo_create(r->dev,
					      (uint64_t)r->depth * r->nnodes * r->scal_stride,
					      SPYRE_MEM_DEVICE, &r->scal_dev);
		if (ret)
			return ret;
		r->scal_map = map;
	}
	if (!r->profile)
		return 0;
	ret = spyre_bo_create(r->dev, (uint64_t)r->depth * r->nsteps * sizeof(uint64_t),
			      SPYRE_MEM_HOST, &r->prof_bo);
	if (!ret)
		ret = spyre_bo_map(r->prof_bo, &map);
	if (ret)
		return ret;
	r->prof = map;
	memset(r->prof, 0, spyre_bo_size(r->prof_bo));
	return 0;
}

int spyre_recipe_finalize(spyre_recipe *r)
{
	int ret;

	if (!r)
		return spy_err(-EINVAL, "spyre_recipe_finalize: recipe is NULL");
	if (r->final)
		return spy_err(-EBUSY, "spyre_recipe_finalize: %s: already finalized",
			       r->dev->name);
	if (!r->nsteps)
		return spy_err(-EINVAL, "spyre_recipe_finalize: %s: the recipe has no steps",
			       r->dev->name);
	ret = make_nodes(r);
	if (ret)
		return spy_err(ret, "spyre_recipe_finalize: out of memory");
	ret = order_nodes(r);
	if (ret)
		return ret;
	ret = alloc_launch_memory(r);
	if (ret)
		return ret;
	ret = spy_recipe_make_instances(r);
	if (ret)
		return spy_err(ret, "spyre_recipe_finalize: out of memory");
	r->final = true;
	return 0;
}

int spyre_recipe_destroy(spyre_recipe *r)
{
	unsigned int i;

	if (!r)
		return spy_err(-EINVAL, "spyre_recipe_destroy: recipe is NULL");
	spy_recipe_free_instances(r);
	for (i = 0; i < r->nws; i++)
		if (r->ws[i])
			spyre_bo_destroy(r->ws[i]);
	free(r->ws);
	if (r->prof_bo)
		spyre_bo_destroy(r->prof_bo);
	if (r->scal_host)
		spyre_bo_destroy(r->scal_host);
	if (r->scal_dev)
		spyre_bo_destroy(r->scal_dev);
	free(r->steps);
	free(r->nodes);
	free(r->order);
	free(r->tmpl);
	free(r->tmpl_ranges);
	free(r->patches);
	pthread_mutex_destroy(&r->lock);
	spy_dev_put(r->dev);
	free(r);
	return 0;
}
