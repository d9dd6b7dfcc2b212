// SPDX-License-Identifier: MIT
/*
 * From a lowered graph to card programs and one recipe (the compute stream
 * slot, plus a transfer slot when the graph has host inputs; inputs then
 * outputs as argument slots, the planned workspace), and running it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "graph_build.h"
#include "lower.h"

static struct spyre_operand operand(spyre_graph *g, spyre_compiled *c, int st)
{
	const struct gstore *s = &g->st[st];
	struct spyre_buf b;

	switch (s->kind) {
	case ST_INPUT:
		return spyre_op_arg((unsigned int)s->io);
	case ST_CONST:
		return spyre_op_buf(s->buf);
	case ST_HOST_INPUT:
		/* where the run's upload put it */
		return spyre_op_ws(s->ws_off, (s->bytes + 127) & ~127ull);
	default:
		if (s->io >= 0)
			return spyre_op_arg(g->ninputs + (unsigned int)s->io);
		if (c->ws) {
			b.bo = c->ws;
			b.offset = s->ws_off;
			b.size = (s->bytes + 127) & ~127ull;
			return spyre_op_buf(b);
		}
		return spyre_op_ws(s->ws_off, (s->bytes + 127) & ~127ull);
	}
}

int g_load_program(spyre_compiled *c, unsigned int k, struct gprog *p)
{
	int ret = g_grow((void **)&c->img, &c->img_cap, k, sizeof(*c->img));

	if (ret)
		return ret;
	ret = spyre_program_load(c->ops->dev, p->img, p->size, &c->progs[k]);
	if (ret)
		return ret;
	c->img[k] = (struct gimage){ p->img, p->size };
	c->nimg = k + 1;
	c->steps[k] = p->st;
	c->nprogs = k + 1;
	p->img = NULL;
	return 0;
}

/* The operands of a program of kernel @k, into @st. */
static void step_operands(spyre_graph *g, spyre_compiled *c, const struct lowered *L,
			  unsigned int k, struct cstep *st)
{
	const struct lnode *ln = &L->k[k];
	unsigned int j;

	st->nops = ln->nslots;
	for (j = 0; j < ln->nslots; j++)
		st->ops[j] = operand(g, c, ln->slot_store[j]);
}

int g_make_recipe(spyre_compiled *c)
{
	unsigned int i, nargs = c->ninputs + c->noutputs;
	int ret;

	ret = spyre_recipe_create(c->ops->dev, c->nup ? 2 : 1, nargs, c->ws_size, &c->recipe);
	if (!ret && c->nup)
		ret = spyre_recipe_set_inflight(c->recipe, SPYRE_RECIPE_INFLIGHT, 2);
	for (i = 0; i < c->nup && !ret; i++)
		ret = spyre_recipe_h2d(c->recipe, 1, spyre_op_ws(c->up[i].ws_off, c->up[i].bytes),
				       spyre_op_arg(c->up[i].input), c->up[i].bytes);
	if (!ret && c->nup)
		ret = spyre_recipe_signal(c->recipe, 1, 0);
	if (!ret && c->nup)
		ret = spyre_recipe_wait(c->recipe, 0, 0);
	for (i = 0; i < c->nprogs && !ret; i++)
		ret = spyre_recipe_compute(c->recipe, 0, c->progs[i], c->steps[i].ops,
					   c->steps[i].nops, spyre_op_ws(0, 0));
	if (!ret)
		ret = spyre_recipe_finalize(c->recipe);
	if (!ret)
		ret = spyre_recipe_submits_per_launch(c->recipe, &c->stats.submits);
	return ret;
}

/* The uploads of @g's host inputs that a kernel reads. */
static int collect_uploads(spyre_graph *g, spyre_compiled *c)
{
	unsigned int i;

	for (i = 0; i < g->nst; i++) {
		const struct gstore *s = &g->st[i];

		if (s->kind != ST_HOST_INPUT || !s->planned)
			continue;
		if (g_grow((void **)&c->up, &c->up_cap, c->nup, sizeof(*c->up)))
			return -ENOMEM;
		c->up[c->nup++] = (struct gupload){ (unsigned int)s->io, s->ws_off, s->bytes };
	}
	return 0;
}

/*
 * SPYRE_COMPILE_OP_BY_OP: the trace label of program @j of @n of kernel
 * @ln ("matmul 12x512x64x512 float16 1966080B": batch.., M, N, K; elementwise
 * kernels their iteration space; then the bytes of the tensors it binds),
 * so a device trace of a graph compiled op by op shows the modelled time
 * of each kernel and what its roofline is.
 */
static void dims_str(char *buf, size_t len, unsigned int nd, const int64_t *d)
{
	size_t at = 0;
	unsigned int i;

	buf[0] = 0;
	for (i = 0; i < nd && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%lld", i ? "x" : "", (long long)d[i]);
}

static char *kernel_label(const spyre_graph *g, const struct lnode *ln, unsigned int j,
			  unsigned int n)
{
	char sh[96], part[48] = "", *s;
	uint64_t bytes = 0;
	const char *dt;
	size_t len;
	unsigned int i;

	for (i = 0; i < ln->nslots; i++)
		bytes += g->st[ln->slot_store[i]].bytes;

	if (ln->kind == NK_MM) {
		const struct mm_spec *m = &ln->u.mm;
		int64_t d[K_MAX_DIMS + 3];

		for (i = 0; i < m->nbatch; i++)
			d[i] = m->batch[i];
		d[i++] = m->m;
		d[i++] = m->n;
		d[i++] = m->k;
		dims_str(sh, sizeof(sh), i, d);
		dt = spyre_dtype_name((enum spyre_dtype)m->dtype);
	} else if (ln->kind == NK_ATTN) {
		const struct fa_spec *a = &ln->u.fa;
		int64_t d[K_MAX_DIMS + 3];

		for (i = 0; i < a->nbatch; i++)
			d[i] = a->batch[i];
		d[i++] = a->lq;
		d[i++] = a->lk;
		d[i++] = a->d;
		dims_str(sh, sizeof(sh), i, d);
		dt = spyre_dtype_name((enum spyre_dtype)a->dtype);
	} else if (ln->kind == NK_GATHER) {
		int64_t d[2] = { ln->u.ga.nidx, ln->u.ga.d };

		dims_str(sh, sizeof(sh), 2, d);
		dt = spyre_dtype_name((enum spyre_dtype)ln->u.ga.dtype);
	} else {
		dims_str(sh, sizeof(sh), ln->u.ew.ndim, ln->u.ew.shape);
		dt = spyre_dtype_name((enum spyre_dtype)ln->u.ew.out.dtype);
	}
	snprintf(part, sizeof(part), " %lluB", (unsigned long long)bytes);
	if (n > 1)
		snprintf(part + strlen(part), sizeof(part) - strlen(part), " (%u/%u)", j + 1, n);
	len = strlen(ln->name) + strlen(sh) + strlen(dt) + strlen(part) + 8;
	s = malloc(len);
	if (s)
		snprintf(s, len, "%s %s %s%s%s", ln->name, sh, dt,
			 ln->kind == NK_MM && ln->u.mm.b_int8 ? " w8" : "", part);
	return s;
}

/* SPYRE_COMPILE_OP_BY_OP: a recipe per program over a private buffer. */
static int build_per_op(spyre_graph *g, spyre_compiled *c, const struct lowered *L)
{
	unsigned int i, n, nargs = L->ninputs + L->noutputs;
	int ret = 0;

	c->per_op = calloc(c->nprogs, sizeof(*c->per_op));
	if (!c->per_op)
		return -ENOMEM;
	for (i = 0; i < c->nprogs && !ret; i++) {
		const struct cstep *st = &c->steps[i];

		ret = spyre_recipe_create(c->ops->dev, 1, nargs, 0, &c->per_op[i]);
		if (!ret)
			ret = spyre_recipe_compute(c->per_op[i], 0, c->progs[i], st->ops, st->nops,
						   spyre_op_ws(0, 0));
		if (!ret)
			ret = spyre_recipe_finalize(c->per_op[i]);
		if (!ret)
			ret = spyre_recipe_submits_per_launch(c->per_op[i], &n);
		if (!ret)
			c->stats.submits += n;
	}
	return ret;
}

int lowered_build(spyre_graph *g, const struct lowered *L, unsigned int flags,
		  spyre_compiled **out, const char *call)
{
	spyre_compiled *c = calloc(1, sizeof(*c));
	unsigned int i, j, npend = 0, pend_cap = 0, lab_cap = 0;
	struct gprog *pend = NULL;
	char why[160];
	int ret = 0;

	if (!c)
		return spy_err(-ENOMEM, "%s: out of memory", call);
	c->ops = g->ops;
	c->ninputs = L->ninputs;
	c->noutputs = L->noutputs;
	c->io = calloc(L->ninputs + L->noutputs + 1, sizeof(*c->io));
	c->host_in = calloc(L->ninputs + 1, sizeof(*c->host_in));
	if (!c->io || !c->host_in) {
		free(c->io);
		free(c->host_in);
		free(c);
		return spy_err(-ENOMEM, "%s: out of memory", call);
	}
	for (i = 0; i < g->nst; i++) {
		if (g->st[i].kind == ST_HOST_INPUT)
			c->host_in[g->st[i].io] = true;
		if (g->st[i].kind == ST_INPUT || g->st[i].kind == ST_HOST_INPUT)
			for (j = 0; j < g->nv; j++)
				if (g->v[j].store == (int)i) {
					c->io[g->st[i].io] = g->v[j];
					break;
				}
	}
	for (i = 0; i < g->noutputs; i++)
		c->io[L->ninputs + i] = g->v[g->outputs[i]];
	c->stats.nodes = L->nodes;
	c->stats.kernels = L->n;
	c->stats.workspace_bytes = L->ws;
	c->stats.intermediate_bytes = L->inter;
	/* op by op, every intermediate has a buffer of its own (the operands name it) */
	if ((flags & SPYRE_COMPILE_OP_BY_OP) && L->ws)
		ret = spyre_bo_create(c->ops->dev, L->ws, SPYRE_MEM_DEVICE, &c->ws);
	for (i = 0; i < L->n && !ret; i++) {
		const struct lnode *ln = &L->k[i];
		unsigned int nc = c->ops->ncores;
		struct kprogs kp;

		why[0] = 0;
		ret = ln->kind == NK_EW ? kern_ew(&ln->u.ew, nc, &kp, why, sizeof(why)) :
		      ln->kind == NK_MM ? kern_mm(&ln->u.mm, nc, &kp, why, sizeof(why)) :
		      ln->kind == NK_ATTN ? kern_fa(&ln->u.fa, nc, &kp, why, sizeof(why)) :
					  kern_ga(&ln->u.ga, nc, &kp, why, sizeof(why));
		if (ret == -EOPNOTSUPP) {
			const struct ew_spec *e = ln->kind == NK_EW ? &ln->u.ew : &ln->u.mm.epi;
			int64_t gs[2] = { ln->u.ga.nidx, ln->u.ga.d };
			unsigned int dt = ln->kind == NK_GATHER ? ln->u.ga.dtype :
					  ln->kind == NK_ATTN ? ln->u.fa.dtype : e->out.dtype;
			char sh[96];

			if (ln->kind == NK_GATHER)
				g_shape_str(sh, sizeof(sh), 2, gs);
			else if (ln->kind == NK_ATTN) {
				int64_t fs[K_MAX_DIMS];

				memcpy(fs, ln->u.fa.batch, sizeof(fs));
				fs[ln->u.fa.nbatch] = ln->u.fa.lq;
				fs[ln->u.fa.nbatch + 1] = ln->u.fa.dv;
				g_shape_str(sh, sizeof(sh), ln->u.fa.nbatch + 2u, fs);
			}
			else
				g_shape_str(sh, sizeof(sh), e->ndim, e->shape);
			ret = spy_err(-EOPNOTSUPP, "%s: %s over %s (%s): %s", call, ln->name, sh,
				      spyre_dtype_name((enum spyre_dtype)dt), why);
			break;
		}
		if (ret) {
			ret = spy_err(ret, "%s: %s: generating the kernel failed", call, ln->name);
			break;
		}
		__atomic_fetch_add(&c->ops->stats.programs_built, kp.n, __ATOMIC_RELAXED);
		for (j = 0; j < kp.n && !ret; j++) {
			ret = g_grow((void **)&pend, &pend_cap, npend, sizeof(*pend));
			if (!ret && (flags & SPYRE_COMPILE_OP_BY_OP)) {
				ret = g_grow((void **)&c->labels, &lab_cap, npend,
					     sizeof(*c->labels));
				if (!ret) {
					c->labels[npend] = kernel_label(g, ln, j, kp.n);
					ret = c->labels[npend] ? 0 : -ENOMEM;
					c->nlabels = npend + !ret;
				}
			}
			if (ret)
				break;
			pend[npend] = (struct gprog){ .img = kp.img[j], .size = kp.size[j] };
			kp.img[j] = NULL;
			step_operands(g, c, L, i, &pend[npend++].st);
		}
		kprogs_free(&kp);
	}
	if (!ret && npend > 1 && c->ops->hw_version >= SPYRE_HW_VERSION(1, 8) &&
	    !(flags & (SPYRE_COMPILE_OP_BY_OP | SPYRE_COMPILE_NO_MERGE)))
		g_merge_programs(c, pend, &npend);
	if (!ret && npend) {
		c->progs = calloc(npend, sizeof(*c->progs));
		c->steps = calloc(npend, sizeof(*c->steps));
		if (!c->progs || !c->steps)
			ret = -ENOMEM;
	}
	for (i = 0; i < npend && !ret; i++)
		ret = g_load_program(c, i, &pend[i]);
	for (i = 0; i < npend; i++)
		free(pend[i].img);
	free(pend);
	if (!ret)
		ret = collect_uploads(g, c);
	if (!ret && c->nup && (flags & SPYRE_COMPILE_OP_BY_OP)) {
		ret = spy_err(-EOPNOTSUPP, "%s: host inputs are uploaded by the graph's one recipe; "
			      "SPYRE_COMPILE_OP_BY_OP has none", call);
	} else if (!ret && c->nprogs && (flags & SPYRE_COMPILE_OP_BY_OP)) {
		ret = build_per_op(g, c, L);
	} else if (!ret && c->nprogs) {
		c->ws_size = L->ws;
		ret = g_make_recipe(c);
	}
	c->stats.programs = c->nprogs;
	if (ret) {
		spyre_compiled_destroy(c);
		return ret;
	}
	*out = c;
	return 0;
}

int spyre_compiled_destroy(spyre_compiled *c)
{
	unsigned int i;

	if (!c)
		return spy_err(-EINVAL, "spyre_compiled_destroy: NULL");
	if (c->recipe)
		spyre_recipe_destroy(c->recipe);
	for (i = 0; c->per_op && i < c->nprogs; i++)
		if (c->per_op[i])
			spyre_recipe_destroy(c->per_op[i]);
	free(c->per_op);
	for (i = 0; i < c->nlabels; i++)
		free(c->labels[i]);
	free(c->labels);
	for (i = 0; i < c->nprogs; i++)
		spyre_program_destroy(c->progs[i]);
	free(c->progs);
	for (i = 0; i < c->nimg; i++)
		free(c->img[i].p);
	free(c->img);
	free(c->steps);
	free(c->up);
	if (c->ws)
		spyre_bo_destroy(c->ws);
	free(c->io);
	free(c->host_in);
	free(c);
	return 0;
}

int spyre_compiled_get_stats(const spyre_compiled *c, struct spyre_compiled_stats *st)
{
	if (!c || !st)
		return spy_err(-EINVAL, "spyre_compiled_get_stats: NULL argument");
	*st = c->stats;
	return 0;
}

int g_launch(spyre_compiled *c, spyre_stream *s, spyre_stream *transfer,
	     const struct spyre_tensor *inputs, unsigned int ninputs,
	     const struct spyre_tensor *outputs, unsigned int noutputs, const char *call)
{
	spyre_stream *streams[2] = { s, transfer };
	struct spyre_buf small[64], *args = small, dummy;
	unsigned int i, n = ninputs + noutputs;
	int ret = 0;

	if (!c->recipe && !c->per_op)
		return 0;	/* no elements anywhere: nothing to run */
	/* a large graph's argument list (weights are inputs) is built on the heap */
	if (n > sizeof(small) / sizeof(small[0])) {
		args = malloc(n * sizeof(*args));
		if (!args)
			return spy_err(-ENOMEM, "%s: out of memory", call);
	}
	for (i = 0; i < n; i++) {
		const struct spyre_tensor *t = i < ninputs ? &inputs[i] : &outputs[i - ninputs];
		uint64_t ext = g_extent_bytes(t->dtype, t->ndim, t->shape, t->strides);

		if (!ext) {
			/* no elements: never accessed, but the slot needs a buffer */
			ret = ops_iota(c->ops, 1, &dummy);
			if (ret)
				goto out;
			args[i] = dummy;
			continue;
		}
		args[i].bo = t->buf.bo;
		args[i].offset = t->buf.offset;
		args[i].size = ext;
	}
	if (c->per_op) {
		/* each program's submission named after its kernel in a trace */
		const char *label = spy_trace_label();

		for (i = 0; i < c->nprogs && !ret; i++) {
			spyre_trace_label(i < c->nlabels ? c->labels[i] : label);
			ret = spyre_recipe_launch(c->per_op[i], &s, args, n);
		}
		spyre_trace_label(label);
	} else {
		ret = spyre_recipe_launch(c->recipe, streams, args, n);
	}
	if (!ret)
		__atomic_fetch_add(&c->ops->stats.launches, 1, __ATOMIC_RELAXED);
out:
	if (args != small)
		free(args);
	return ret;
}

int spyre_compiled_run(spyre_compiled *c, spyre_stream *s, const struct spyre_tensor *inputs,
		       unsigned int ninputs, const struct spyre_tensor *outputs,
		       unsigned int noutputs)
{
	return spyre_compiled_run_with_transfer(c, s, NULL, inputs, ninputs, outputs, noutputs);
}

int spyre_compiled_run_with_transfer(spyre_compiled *c, spyre_stream *s, spyre_stream *transfer,
				     const struct spyre_tensor *inputs, unsigned int ninputs,
				     const struct spyre_tensor *outputs, unsigned int noutputs)
{
	static const char *call = "spyre_compiled_run";
	unsigned int i;
	char what[32];
	int ret;

	if (!c || !s)
		return spy_err(-EINVAL, "%s: compiled graph or stream is NULL", call);
	if (ninputs != c->ninputs || noutputs != c->noutputs ||
	    (ninputs && !inputs) || (noutputs && !outputs))
		return spy_err(-EINVAL, "%s: %u inputs and %u outputs given, the graph has %u "
			       "and %u", call, ninputs, noutputs, c->ninputs, c->noutputs);
	for (i = 0; i < ninputs + noutputs; i++) {
		const struct spyre_tensor *t = i < ninputs ? &inputs[i] : &outputs[i - ninputs];
		const struct gval *v = &c->io[i];
		struct gval tv;
		char a[96], b[96];

		snprintf(what, sizeof(what), "%s %u", i < ninputs ? "input" : "output",
			 i < ninputs ? i : i - ninputs);
		ret = g_check_tensor_in(call, what, t,
					i < ninputs && c->host_in[i] ? SPYRE_MEM_HOST
								     : SPYRE_MEM_DEVICE);
		if (ret)
			return ret;
		memset(&tv, 0, sizeof(tv));
		tv.ndim = t->ndim;
		memcpy(tv.shape, t->shape, sizeof(tv.shape));
		memcpy(tv.strides, t->strides, sizeof(tv.strides));
		if (t->dtype != v->dt || t->ndim != v->ndim ||
		    memcmp(t->shape, v->shape, v->ndim * sizeof(int64_t)) || !g_contiguous(&tv)) {
			g_shape_str(a, sizeof(a), t->ndim, t->shape);
			g_shape_str(b, sizeof(b), v->ndim, v->shape);
			return spy_err(-EINVAL, "%s: %s is %s %s%s, the graph expects contiguous "
				       "%s %s", call, what, spyre_dtype_name(t->dtype), a,
				       g_contiguous(&tv) ? "" : " (strided)",
				       spyre_dtype_name(v->dt), b);
		}
	}
	return g_launch(c, s, transfer ? transfer : s, inputs, ninputs, outputs, noutputs, call);
}

int spyre_graph_compile(spyre_graph *g, spyre_compiled **out)
{
	return spyre_graph_compile_flags(g, 0, out);
}

int spyre_graph_compile_flags(spyre_graph *g, unsigned int flags, spyre_compiled **out)
{
	static const char *call = "spyre_graph_compile";
	struct spyre_graph copy;
	struct lowered L;
	int ret;

	if (!g || !out)
		return spy_err(-EINVAL, "%s: graph or out is NULL", call);
	if (!g->noutputs)
		return spy_err(-EINVAL, "%s: the graph has no outputs", call);
	if (flags & ~(SPYRE_COMPILE_NO_FUSION | SPYRE_COMPILE_OP_BY_OP | SPYRE_COMPILE_NO_MERGE))
		return spy_err(-EINVAL, "%s: unknown flags 0x%x", call, flags);
	/* lowering rewrites nodes (fusion): work on a copy, the graph stays reusable */
	copy = *g;
	copy.v = malloc((g->nv + 1) * sizeof(*g->v));
	copy.st = malloc((g->nst + 1) * sizeof(*g->st));
	copy.n = malloc((g->nn + 1) * sizeof(*g->n));
	/* fusion may add values (fold_view_producer): the copy grows on its own */
	copy.capv = g->nv + 1;
	copy.capst = g->nst + 1;
	copy.capn = g->nn + 1;
	if (!copy.v || !copy.st || !copy.n) {
		ret = spy_err(-ENOMEM, "%s: out of memory", call);
	} else {
		memcpy(copy.v, g->v, g->nv * sizeof(*g->v));
		memcpy(copy.st, g->st, g->nst * sizeof(*g->st));
		memcpy(copy.n, g->n, g->nn * sizeof(*g->n));
		ret = g_lower(&copy, &L, flags, call);
		if (!ret)
			ret = lowered_build(&copy, &L, flags, out, call);
		lowered_free(&L);
	}
	free(copy.v);
	free(copy.st);
	free(copy.n);
	return ret;
}
