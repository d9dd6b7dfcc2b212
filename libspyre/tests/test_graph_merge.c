// SPDX-License-Identifier: MIT
/*
 * Program merging (card interface 1.8): a compiled graph's kernels run as
 * one program with BARRIERs between them, compute exactly what one LAUNCH
 * per program computes, in less modelled time; more distinct operands than
 * a LAUNCH binds split the graph; older cards get a LAUNCH per program.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ops_ref.h"

enum { R = 64, D = 96, H = 160 };

/*
 * y = layer_norm(softmax(x @ w1^T) @ w2^T + x): matmuls tiled over the cores
 * feed row functions and each other, so kernels depend across cores.
 */
static void build(struct tctx *c, spyre_ops *ops, unsigned int flags, spyre_compiled **k)
{
	int64_t sx[2] = { R, D }, s1[2] = { H, D }, s2[2] = { D, H };
	spyre_value x, w1, w2, t;
	spyre_graph *g;

	OK(spyre_graph_create(ops ? ops : c->ops, &g));
	OK(spyre_graph_input(g, SPYRE_FLOAT32, 2, sx, &x));
	OK(spyre_graph_input(g, SPYRE_FLOAT32, 2, s1, &w1));
	OK(spyre_graph_input(g, SPYRE_FLOAT32, 2, s2, &w2));
	OK(spyre_graph_linear(g, x, w1, -1, &t));
	OK(spyre_graph_softmax(g, t, -1, &t));
	OK(spyre_graph_linear(g, t, w2, -1, &t));
	OK(spyre_graph_binary(g, SPYRE_BIN_ADD, t, x, &t));
	OK(spyre_graph_layer_norm(g, t, -1, -1, 1e-5, &t));
	OK(spyre_graph_output(g, t));
	OK(spyre_graph_compile_flags(g, flags, k));
	OK(spyre_graph_destroy(g));
}

/* Run @k once; its modelled device time in @ns. */
static void timed_run(struct tctx *c, spyre_compiled *k, struct spyre_tensor *in,
		      struct spyre_tensor *out, uint64_t *ns)
{
	spyre_event *a, *b;

	OK(spyre_event_create(c->dev, SPYRE_EVENT_TIMING, &a));
	OK(spyre_event_create(c->dev, SPYRE_EVENT_TIMING, &b));
	OK(spyre_event_record(a, c->s));
	OK(spyre_compiled_run(k, c->s, in, 3, out, 1));
	OK(spyre_event_record(b, c->s));
	OK(spyre_event_synchronize(b));
	OK(spyre_event_elapsed_ns(a, b, ns));
	OK(spyre_event_destroy(a));
	OK(spyre_event_destroy(b));
}

TEST(graph_merge_runs_kernels_as_one_program)
{
	int64_t sx[2] = { R, D }, s1[2] = { H, D }, s2[2] = { D, H };
	double *x = malloc(sizeof(double) * R * D), *w1 = malloc(sizeof(double) * H * D);
	double *w2 = malloc(sizeof(double) * D * H), *y1 = malloc(sizeof(double) * R * D);
	double *y2 = malloc(sizeof(double) * R * D);
	struct spyre_compiled_stats st, st2;
	struct dtensor dx, d1, d2, dy;
	struct spyre_tensor in[3];
	uint64_t t_merged, t_apart;
	spyre_compiled *k, *k2;
	struct tctx c;

	ASSERT(x && w1 && w2 && y1 && y2, "malloc");
	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &dx, SPYRE_FLOAT32, 2, sx));
	OK(dt_new(&c, &d1, SPYRE_FLOAT32, 2, s1));
	OK(dt_new(&c, &d2, SPYRE_FLOAT32, 2, s2));
	OK(dt_new(&c, &dy, SPYRE_FLOAT32, 2, sx));
	rnd_fill(x, R * D, -1, 1, 1, SPYRE_FLOAT32);
	rnd_fill(w1, H * D, -0.2, 0.2, 2, SPYRE_FLOAT32);
	rnd_fill(w2, D * H, -0.2, 0.2, 3, SPYRE_FLOAT32);
	OK(dt_write(&c, &dx, x));
	OK(dt_write(&c, &d1, w1));
	OK(dt_write(&c, &d2, w2));
	in[0] = dx.t;
	in[1] = d1.t;
	in[2] = d2.t;

	build(&c, NULL, 0, &k);
	build(&c, NULL, SPYRE_COMPILE_NO_MERGE, &k2);
	OK(spyre_compiled_get_stats(k, &st));
	OK(spyre_compiled_get_stats(k2, &st2));
	CHECK(st.kernels >= 4 && st.programs == 1 && st2.programs >= st.kernels,
	      "%u kernels: %u programs merged, %u apart", st.kernels, st.programs, st2.programs);
	timed_run(&c, k2, in, &dy.t, &t_apart);
	OK(dt_read(&c, &dy, y2));
	OK(spyre_memset32_async(c.s, &dy.t.buf, 0, dy.t.buf.size));
	timed_run(&c, k, in, &dy.t, &t_merged);
	OK(dt_read(&c, &dy, y1));
	/* the same instructions in the same order per core: the same bits */
	CHECK(!memcmp(y1, y2, sizeof(double) * R * D), "merged and apart differ");
	/*
	 * One LAUNCH setup (2 us on the model) instead of one per program.
	 * Asserted on the sim, whose clock is the card's alone: a card in the
	 * VM also waits for the emulated host, and that is in its timeline.
	 */
	if (!strcmp(test_backend, "sim"))
		CHECK(t_merged + (uint64_t)(st2.programs - 1) * 1500 < t_apart,
		      "merged %llu ns, apart %llu ns over %u programs",
		      (unsigned long long)t_merged, (unsigned long long)t_apart, st2.programs);
	printf("# %u kernels: %llu ns as one program, %llu ns as %u\n", st.kernels,
	       (unsigned long long)t_merged, (unsigned long long)t_apart, st2.programs);
	OK(spyre_compiled_destroy(k));
	OK(spyre_compiled_destroy(k2));

	/* a card before interface 1.8 has no BARRIER: a LAUNCH per program */
	{
		struct spyre_device_props p;
		spyre_ops *old;

		OK(spyre_device_get_props(dev, &p));
		if (!strcmp(p.backend, "sim")) {
			setenv("SPYRE_SIM_HW_VERSION", "1.7", 1);
			OK(spyre_ops_create(dev, 0, &old));
			unsetenv("SPYRE_SIM_HW_VERSION");
			build(&c, old, 0, &k);
			OK(spyre_compiled_get_stats(k, &st));
			CHECK(st.programs == st2.programs, "on a 1.7 card: %u programs, want %u",
			      st.programs, st2.programs);
			OK(spyre_compiled_run(k, c.s, in, 3, &dy.t, 1));
			OK(dt_read(&c, &dy, y1));
			CHECK(!memcmp(y1, y2, sizeof(double) * R * D), "1.7 result differs");
			OK(spyre_compiled_destroy(k));
			OK(spyre_ops_destroy(old));
		}
	}
	dt_free(&dx);
	dt_free(&d1);
	dt_free(&d2);
	dt_free(&dy);
	tctx_close(&c);
	free(x);
	free(w1);
	free(w2);
	free(y1);
	free(y2);
}

/*
 * 40 inputs and 30 constants in a chain of kernels: more distinct operands
 * than the 64 slots of one LAUNCH, so the graph is split between programs.
 */
TEST(graph_merge_splits_where_operands_exceed_a_launch)
{
	enum { NIN = 40, NCONST = 30, NV = NIN + NCONST, LEN = 256 };
	int64_t shape[1] = { LEN };
	struct spyre_tensor in[NIN], out;
	struct spyre_compiled_stats st;
	struct dtensor dx[NV], dy;
	double v[LEN], want[LEN], got[LEN];
	spyre_value x[NV], t, mx;
	spyre_compiled *k;
	spyre_graph *g;
	struct tctx c;
	int i, j;

	OK(tctx_open(dev, &c));
	OK(spyre_graph_create(c.ops, &g));
	for (i = 0; i < NV; i++) {
		OK(dt_new(&c, &dx[i], SPYRE_FLOAT32, 1, shape));
		for (j = 0; j < LEN; j++)
			v[j] = (double)((i * 7 + j) % 13) - 6;
		OK(dt_write(&c, &dx[i], v));
		if (i < NIN) {
			in[i] = dx[i].t;
			OK(spyre_graph_input(g, SPYRE_FLOAT32, 1, shape, &x[i]));
		} else {
			OK(spyre_graph_constant(g, &dx[i].t, &x[i]));
		}
	}
	/* a max between the adds keeps each add a kernel of its own */
	t = x[0];
	for (i = 1; i < NV; i++) {
		OK(spyre_graph_binary(g, SPYRE_BIN_ADD, t, x[i], &t));
		OK(spyre_graph_reduce(g, SPYRE_RED_MAX, t, 0, 1, &mx));
		OK(spyre_graph_binary(g, SPYRE_BIN_SUB, t, mx, &t));
	}
	OK(spyre_graph_output(g, t));
	OK(spyre_graph_compile(g, &k));
	OK(spyre_graph_destroy(g));
	OK(spyre_compiled_get_stats(k, &st));
	CHECK(st.programs >= 2 && st.programs < st.kernels,
	      "%d distinct operands over %u kernels: %u programs", NV + 1, st.kernels,
	      st.programs);
	OK(dt_new(&c, &dy, SPYRE_FLOAT32, 1, shape));
	out = dy.t;
	OK(spyre_compiled_run(k, c.s, in, NIN, &out, 1));
	OK(dt_read(&c, &dy, got));
	/* the host reference of the same chain */
	for (j = 0; j < LEN; j++)
		want[j] = (double)(j % 13) - 6;
	for (i = 1; i < NV; i++) {
		double m = -1e300;

		for (j = 0; j < LEN; j++) {
			want[j] += (double)((i * 7 + j) % 13) - 6;
			m = want[j] > m ? want[j] : m;
		}
		for (j = 0; j < LEN; j++)
			want[j] -= m;
	}
	CHECK(compare("chain", got, want, NULL, LEN, SPYRE_FLOAT32, 1.0) < 0, "results");
	OK(spyre_compiled_destroy(k));
	for (i = 0; i < NV; i++)
		dt_free(&dx[i]);
	dt_free(&dy);
	tctx_close(&c);
}
