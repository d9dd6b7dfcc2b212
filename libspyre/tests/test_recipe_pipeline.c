// SPDX-License-Identifier: MIT
/*
 * Recipes launched back to back: launches that share the workspace must not
 * overwrite each other's data, the in-flight depth is a parameter, and a
 * profiled recipe reports per-step completion times.
 */
#include "harness.h"
#include "kernels.h"

enum { N = 1 << 16, BYTES = N * 4, LAUNCHES = 6 };

/*
 * Slot 0 (compute): ws = 2 * x + 1, signal 0. Slot 1 (DMA): wait 0, y = ws.
 * Arguments: 0 = device x, 1 = host y.
 */
static int build(spyre_device *dev, spyre_program *prog, unsigned int depth,
		 unsigned int workspaces, bool profile, spyre_recipe **out)
{
	struct spyre_operand cargs[2] = { spyre_op_arg(0), spyre_op_ws(0, BYTES) };
	spyre_recipe *r;
	int ret;

	ret = spyre_recipe_create(dev, 2, 2, BYTES, &r);
	if (ret)
		return ret;
	if ((depth && (ret = spyre_recipe_set_inflight(r, depth, workspaces))) ||
	    (profile && (ret = spyre_recipe_set_profiling(r, true))) ||
	    (ret = spyre_recipe_compute(r, 0, prog, cargs, 2, spyre_op_ws(0, 0))) ||
	    (ret = spyre_recipe_signal(r, 0, 0)) || (ret = spyre_recipe_wait(r, 1, 0)) ||
	    (ret = spyre_recipe_d2h(r, 1, spyre_op_arg(1), spyre_op_ws(0, BYTES), BYTES)) ||
	    (ret = spyre_recipe_finalize(r))) {
		spyre_recipe_destroy(r);
		return ret;
	}
	*out = r;
	return 0;
}

/* Launch LAUNCHES times without waiting; every output must be its own input's. */
static void run(spyre_device *dev, unsigned int depth, unsigned int workspaces)
{
	spyre_bo *xh, *x[LAUNCHES], *y[LAUNCHES];
	void *xm, *ym[LAUNCHES];
	spyre_stream *st[2];
	spyre_program *prog;
	spyre_recipe *r;
	size_t sz;
	void *img;
	int i, k, bad;

	img = kern_scale_f32(N, 2.0f, 1.0f, &sz);
	OK(spyre_program_load(dev, img, sz, &prog));
	free(img);
	OK(build(dev, prog, depth, workspaces, false, &r));
	OK(spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &st[0]));
	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &st[1]));
	OK(host_bo(dev, BYTES, &xh, &xm));
	for (k = 0; k < LAUNCHES; k++) {
		OK(spyre_bo_create(dev, BYTES, SPYRE_MEM_DEVICE, &x[k]));
		OK(host_bo(dev, BYTES, &y[k], &ym[k]));
		for (i = 0; i < N; i++)
			((float *)xm)[i] = (float)(i + 1000 * k);
		OK(spyre_memcpy_async(st[1], &(struct spyre_buf){ x[k], 0, BYTES },
				      &(struct spyre_buf){ xh, 0, BYTES }, BYTES));
		OK(spyre_stream_synchronize(st[1]));
	}
	for (k = 0; k < LAUNCHES; k++) {
		struct spyre_buf args[2] = { spyre_bo_buf(x[k]), spyre_bo_buf(y[k]) };

		OK(spyre_recipe_launch(r, st, args, 2));
	}
	OK(spyre_stream_synchronize(st[0]));
	OK(spyre_stream_synchronize(st[1]));
	for (k = 0; k < LAUNCHES; k++) {
		bad = -1;
		for (i = 0; i < N && bad < 0; i++)
			if (((float *)ym[k])[i] != 2.0f * (float)(i + 1000 * k) + 1.0f)
				bad = i;
		CHECK(bad < 0, "depth %u, %u workspaces: launch %d: y[%d] = %g, want %g", depth,
		      workspaces, k, bad, bad < 0 ? 0 : ((float *)ym[k])[bad],
		      bad < 0 ? 0 : 2.0f * (float)(bad + 1000 * k) + 1.0f);
	}
	OK(spyre_recipe_destroy(r));
	OK(spyre_stream_destroy(st[0]));
	OK(spyre_stream_destroy(st[1]));
	OK(spyre_program_destroy(prog));
	spyre_bo_destroy(xh);
	for (k = 0; k < LAUNCHES; k++) {
		spyre_bo_destroy(x[k]);
		spyre_bo_destroy(y[k]);
	}
}

/* Default depth, one shared workspace: launches are ordered on the device. */
TEST(recipe_shared_workspace_ordered)
{
	run(dev, 0, 1);
}

/* Two workspaces: launch k and k + 1 overlap, k and k + 2 share one. */
TEST(recipe_double_buffered_workspace)
{
	run(dev, 3, 2);
}

/* Depth 1: every launch waits (on the host) for the previous one's issue. */
TEST(recipe_depth_one)
{
	run(dev, 1, 1);
}

/* Per-step completion times of a profiled recipe. */
TEST(recipe_step_times)
{
	spyre_bo *x, *y;
	void *ym;
	spyre_stream *st[2];
	spyre_program *prog;
	spyre_recipe *r, *plain;
	uint64_t t[5] = { 0 }, before, after;
	size_t sz;
	void *img;

	img = kern_scale_f32(N, 2.0f, 1.0f, &sz);
	OK(spyre_program_load(dev, img, sz, &prog));
	free(img);
	OK(build(dev, prog, 0, 1, true, &r));
	OK(build(dev, prog, 0, 1, false, &plain));
	OK(spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &st[0]));
	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &st[1]));
	OK(spyre_bo_create(dev, BYTES, SPYRE_MEM_DEVICE, &x));
	OK(host_bo(dev, BYTES, &y, &ym));
	FAILS_WITH(spyre_recipe_step_times(r, t, 4), -EINVAL, "never launched");
	OK(spyre_device_time_ns(dev, &before));
	OK(spyre_recipe_launch(r, st, (struct spyre_buf[]){ spyre_bo_buf(x), spyre_bo_buf(y) },
			       2));
	OK(spyre_stream_synchronize(st[0]));
	OK(spyre_stream_synchronize(st[1]));
	OK(spyre_device_time_ns(dev, &after));
	t[4] = 12345;
	OK(spyre_recipe_step_times(r, t, 5));
	/* Steps: compute, signal, wait, d2h; a fifth entry is not written. */
	CHECK(t[0] >= before && t[0] <= after, "compute done at %llu, launch between %llu and %llu",
	      (unsigned long long)t[0], (unsigned long long)before, (unsigned long long)after);
	CHECK(t[1] == 0 && t[2] == 0, "signal/wait steps have times %llu, %llu",
	      (unsigned long long)t[1], (unsigned long long)t[2]);
	CHECK(t[3] > t[0] && t[3] <= after, "d2h done at %llu, compute at %llu",
	      (unsigned long long)t[3], (unsigned long long)t[0]);
	CHECK(t[4] == 12345, "wrote past the recipe's 4 steps");
	FAILS_WITH(spyre_recipe_step_times(plain, t, 4), -EINVAL, "profiling");
	FAILS_WITH(spyre_recipe_set_profiling(r, 1), -EBUSY, "finalized");
	FAILS_WITH(spyre_recipe_set_inflight(plain, 2, 1), -EBUSY, "finalized");
	OK(spyre_recipe_destroy(r));
	OK(spyre_recipe_destroy(plain));
	OK(spyre_stream_destroy(st[0]));
	OK(spyre_stream_destroy(st[1]));
	OK(spyre_program_destroy(prog));
	spyre_bo_destroy(x);
	spyre_bo_destroy(y);
}

struct gate {
	int open;
	int runs;
};

static void wait_gate(void *user, const struct spyre_buf *args, unsigned int nargs)
{
	struct gate *g = user;

	while (!__atomic_load_n(&g->open, __ATOMIC_ACQUIRE))
		;
	__atomic_fetch_add(&g->runs, 1, __ATOMIC_RELAXED);
}

/*
 * The in-flight depth is a parameter: with depth 8, eight launches stuck
 * behind a host step return at once (with the default 4 the fifth waits).
 */
TEST(recipe_inflight_depth)
{
	enum { DEPTH = 8 };
	struct gate g = { 0, 0 };
	spyre_recipe *r;
	spyre_stream *s;
	spyre_bo *d;
	int k;

	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &s));
	OK(spyre_bo_create(dev, 4096, SPYRE_MEM_DEVICE, &d));
	OK(spyre_recipe_create(dev, 1, 0, 0, &r));
	FAILS_WITH(spyre_recipe_set_inflight(r, 0, 1), -EINVAL, "depth 0");
	FAILS_WITH(spyre_recipe_set_inflight(r, 2, 3), -EINVAL, "3 workspace copies");
	OK(spyre_recipe_set_inflight(r, DEPTH, 1));
	OK(spyre_recipe_host(r, 0, wait_gate, &g));
	OK(spyre_recipe_d2d(r, 0, spyre_op_buf(buf_of(d, 0, 64)), spyre_op_buf(buf_of(d, 64, 64)),
			    64));
	OK(spyre_recipe_finalize(r));
	for (k = 0; k < DEPTH; k++)
		OK(spyre_recipe_launch(r, &s, NULL, 0));
	CHECK(__atomic_load_n(&g.runs, __ATOMIC_RELAXED) <= 1, "%d host steps ran behind a closed gate",
	      g.runs);
	__atomic_store_n(&g.open, 1, __ATOMIC_RELEASE);
	OK(spyre_stream_synchronize(s));
	CHECK(g.runs == DEPTH, "host step ran %d times", g.runs);
	OK(spyre_recipe_destroy(r));
	OK(spyre_stream_destroy(s));
	spyre_bo_destroy(d);
}

/* Launch-time scalars: each launch's bytes reach the program that reads them. */
TEST(recipe_scalars)
{
	enum { V = 8, K = 6 };
	struct spyre_operand cargs[3] = { spyre_op_arg(0), spyre_op_scalars(0, V * 4),
					  spyre_op_ws(0, V * 4) };
	float sc[K][V], x[V], *ym[K];
	spyre_program *prog;
	spyre_recipe *r, *bad;
	spyre_stream *s;
	spyre_bo *xd, *y[K];
	size_t sz;
	void *img;
	int i, k;

	img = kern_add_f32(V, &sz);
	OK(spyre_program_load(dev, img, sz, &prog));
	free(img);
	OK(spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &s));
	OK(spyre_bo_create(dev, 4096, SPYRE_MEM_DEVICE, &xd));
	for (i = 0; i < V; i++)
		x[i] = (float)i;
	OK(spyre_memcpy_from_host_async(s, &(struct spyre_buf){ xd, 0, V * 4 }, x, V * 4));
	OK(spyre_recipe_create(dev, 1, 2, 4096, &r));
	FAILS_WITH(spyre_recipe_compute(r, 0, prog, cargs, 3, spyre_op_ws(0, 0)), -EINVAL,
		   "no scalar block");
	FAILS_WITH(spyre_recipe_set_scalars(r, 8192), -E2BIG, "at most 4096");
	OK(spyre_recipe_set_scalars(r, V * 4));
	OK(spyre_recipe_set_inflight(r, 2, 1));
	OK(spyre_recipe_compute(r, 0, prog, cargs, 3, spyre_op_ws(0, 0)));
	OK(spyre_recipe_d2h(r, 0, spyre_op_arg(1), spyre_op_ws(0, V * 4), V * 4));
	OK(spyre_recipe_finalize(r));
	for (k = 0; k < K; k++) {
		void *m;

		OK(host_bo(dev, 4096, &y[k], &m));
		ym[k] = m;
	}
	FAILS_WITH(spyre_recipe_launch(r, &s, (struct spyre_buf[]){ { xd, 0, V * 4 },
								     spyre_bo_buf(y[0]) }, 2),
		   -EINVAL, "the recipe takes 32");
	for (k = 0; k < K; k++) {
		struct spyre_buf args[2] = { { xd, 0, V * 4 }, spyre_bo_buf(y[k]) };

		for (i = 0; i < V; i++)
			sc[k][i] = (float)(100 * (k + 1) + i);
		OK(spyre_recipe_launch_scalars(r, &s, args, 2, sc[k], sizeof(sc[k])));
		memset(sc[k], 0, sizeof(sc[k]));	/* copied at the call */
	}
	OK(spyre_stream_synchronize(s));
	for (k = 0; k < K; k++)
		for (i = 0; i < V; i++)
			CHECK(ym[k][i] == (float)(i + 100 * (k + 1) + i), "launch %d: y[%d] = %g",
			      k, i, ym[k][i]);
	OK(spyre_recipe_create(dev, 1, 0, 0, &bad));
	FAILS_WITH(spyre_recipe_d2d(bad, 0, spyre_op_scalars(0, 4), spyre_op_scalars(0, 4), 4),
		   -EINVAL, "no scalar block");
	OK(spyre_recipe_destroy(bad));
	OK(spyre_recipe_destroy(r));
	OK(spyre_stream_destroy(s));
	OK(spyre_program_destroy(prog));
	spyre_bo_destroy(xd);
	for (k = 0; k < K; k++)
		spyre_bo_destroy(y[k]);
}
