// SPDX-License-Identifier: MIT
/*
 * Host inputs of a compiled graph (spyre_graph_host_input): the graph
 * uploads them itself on the transfer stream, the compute stream waits with
 * an event, one SUBMIT per stream per run, and consecutive runs pipeline
 * (a run's upload overlaps the previous run's compute). Serialised graphs
 * keep their uploads.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ops_ref.h"

enum { M = 256, K = 1024, N = 64, RUNS = 6 };

/* y = relu(x @ w^T) + 1 with x a host input [M, K] and w a device input [N, K]. */
static void compile_mlp(struct tctx *c, unsigned int flags, spyre_compiled **k)
{
	int64_t sx[2] = { M, K }, sw[2] = { N, K };
	spyre_value vx, vw, t;
	spyre_graph *g;

	OK(spyre_graph_create(c->ops, &g));
	OK(spyre_graph_host_input(g, SPYRE_FLOAT32, 2, sx, &vx));
	OK(spyre_graph_input(g, SPYRE_FLOAT32, 2, sw, &vw));
	OK(spyre_graph_linear(g, vx, vw, -1, &t));
	OK(spyre_graph_unary(g, SPYRE_UN_RELU, t, &t));
	OK(spyre_graph_binary_scalar(g, SPYRE_BIN_ADD, t, 1.0, 0, &t));
	OK(spyre_graph_output(g, t));
	if (flags)
		FAILS_WITH(spyre_graph_compile_flags(g, flags, k), -EOPNOTSUPP, "host inputs");
	else
		OK(spyre_graph_compile(g, k));
	OK(spyre_graph_destroy(g));
}

/* The reference and each element's magnitude (sum of |x||w|, for the tolerance). */
static void reference(const float *x, const double *w, double *y, double *mag)
{
	int i, j, l;

	for (i = 0; i < M; i++)
		for (j = 0; j < N; j++) {
			double acc = 0, m = 1;

			for (l = 0; l < K; l++) {
				acc += (double)x[i * K + l] * w[j * K + l];
				m += fabs((double)x[i * K + l] * w[j * K + l]);
			}
			y[i * N + j] = (acc > 0 ? acc : 0) + 1;
			mag[i * N + j] = m;
		}
}

static uint64_t submits(spyre_device *d)
{
	struct spyre_device_stats st;

	return spyre_device_get_stats(d, &st) ? 0 : st.submits;
}

struct runs {
	spyre_bo *xh[RUNS];
	float *xm[RUNS];
	struct dtensor y[RUNS];
};

/*
 * RUNS back-to-back runs, each with its own host input and output; the
 * modelled device time from the first start to the last end in @ns.
 */
static void run_all(struct tctx *c, spyre_compiled *k, spyre_stream *xfer, struct dtensor *w,
		    struct runs *r, uint64_t *ns)
{
	int64_t sx[2] = { M, K };
	spyre_event *e[4];
	uint64_t t[4];
	int i;

	for (i = 0; i < 4; i++)
		OK(spyre_event_create(c->dev, SPYRE_EVENT_TIMING, &e[i]));
	OK(spyre_stream_synchronize(c->s));
	OK(spyre_stream_synchronize(xfer));
	OK(spyre_event_record(e[0], c->s));
	OK(spyre_event_record(e[1], xfer));
	for (i = 0; i < RUNS; i++) {
		struct spyre_tensor in[2], out = r->y[i].t;

		memset(&in[0], 0, sizeof(in[0]));
		in[0].buf = buf_of(r->xh[i], 0, (uint64_t)M * K * 4);
		in[0].dtype = SPYRE_FLOAT32;
		in[0].ndim = 2;
		memcpy(in[0].shape, sx, sizeof(sx));
		in[0].strides[0] = K;
		in[0].strides[1] = 1;
		in[1] = w->t;
		OK(spyre_compiled_run_with_transfer(k, c->s, xfer, in, 2, &out, 1));
	}
	OK(spyre_event_record(e[2], c->s));
	OK(spyre_event_record(e[3], xfer));
	for (i = 0; i < 4; i++) {
		OK(spyre_event_synchronize(e[i]));
		OK(spyre_event_timestamp_ns(e[i], &t[i]));
	}
	*ns = (t[2] > t[3] ? t[2] : t[3]) - (t[0] < t[1] ? t[0] : t[1]);
	for (i = 0; i < 4; i++)
		OK(spyre_event_destroy(e[i]));
}

/* What both tests run on: a device, a DMA stream, the weight, RUNS host inputs. */
struct bed {
	struct tctx c;
	spyre_stream *xfer;
	struct dtensor dw;
	double *w;		/* the weight as written */
	struct runs r;
};

static void bed_open(spyre_device *d, unsigned int seed, struct bed *b)
{
	int64_t sw[2] = { N, K }, sy[2] = { M, N };
	double *xd = malloc(sizeof(double) * M * K);
	int i, l;

	memset(b, 0, sizeof(*b));
	b->w = malloc(sizeof(double) * N * K);
	ASSERT(b->w && xd, "malloc");
	OK(tctx_open(d, &b->c));
	OK(spyre_stream_create(d, SPYRE_ENGINE_DMA, &b->xfer));
	OK(dt_new(&b->c, &b->dw, SPYRE_FLOAT32, 2, sw));
	rnd_fill(b->w, N * K, -0.05, 0.05, seed, SPYRE_FLOAT32);
	OK(dt_write(&b->c, &b->dw, b->w));
	for (i = 0; i < RUNS; i++) {
		void *m;

		OK(host_bo(d, (uint64_t)M * K * 4, &b->r.xh[i], &m));
		b->r.xm[i] = m;
		rnd_fill(xd, M * K, -1, 1, 100 * seed + i, SPYRE_FLOAT32);
		for (l = 0; l < M * K; l++)
			b->r.xm[i][l] = (float)xd[l];
		OK(dt_new(&b->c, &b->r.y[i], SPYRE_FLOAT32, 2, sy));
	}
	free(xd);
}

static void bed_close(struct bed *b)
{
	int i;

	for (i = 0; i < RUNS; i++) {
		OK(spyre_bo_destroy(b->r.xh[i]));
		dt_free(&b->r.y[i]);
	}
	dt_free(&b->dw);
	OK(spyre_stream_destroy(b->xfer));
	tctx_close(&b->c);
	free(b->w);
}

TEST(graph_host_input_uploads_on_the_transfer_stream)
{
	double *y = malloc(sizeof(double) * M * N), *ref = malloc(sizeof(double) * M * N);
	double *mag = malloc(sizeof(double) * M * N);
	struct spyre_compiled_stats st;
	uint64_t pipelined, serial, s0, s1;
	spyre_compiled *k, *k2;
	struct bed b;
	int i;

	ASSERT(y && ref && mag, "malloc");
	bed_open(dev, 1, &b);
	compile_mlp(&b.c, 0, &k);
	OK(spyre_compiled_get_stats(k, &st));
	CHECK(st.submits == 2, "one SUBMIT per stream touched: %u", st.submits);
	compile_mlp(&b.c, SPYRE_COMPILE_OP_BY_OP, &k2);

	/* the runs' uploads on the transfer stream: one SUBMIT on each stream per run */
	s0 = submits(dev);
	run_all(&b.c, k, b.xfer, &b.dw, &b.r, &pipelined);
	s1 = submits(dev);
	CHECK(s1 - s0 <= 2 * RUNS + 4, "%llu SUBMITs for %d runs on two streams",
	      (unsigned long long)(s1 - s0), RUNS);
	for (i = 0; i < RUNS; i++) {
		OK(dt_read(&b.c, &b.r.y[i], y));
		reference(b.r.xm[i], b.w, ref, mag);
		CHECK(compare("y", y, ref, mag, M * N, SPYRE_FLOAT32, 1.0) < 0, "run %d", i);
	}
	/* the same runs with the uploads on the compute stream: no overlap */
	run_all(&b.c, k, b.c.s, &b.dw, &b.r, &serial);
	/*
	 * The sim's clock is the card's alone; a card in the VM also waits
	 * for the emulated host to submit, and that wait is in its timeline,
	 * so there the ratio is only printed.
	 */
	if (!strcmp(test_backend, "sim"))
		CHECK(pipelined * 100 < serial * 85,
		      "uploads on a transfer stream overlap compute: %llu ns vs %llu ns in one "
		      "stream", (unsigned long long)pipelined, (unsigned long long)serial);
	printf("# %d runs: %llu ns with a transfer stream, %llu ns on one stream (%.2fx)\n", RUNS,
	       (unsigned long long)pipelined, (unsigned long long)serial,
	       (double)serial / (double)pipelined);

	/* the host input must be host memory: a device buffer is refused at launch */
	{
		struct spyre_tensor in[2] = { b.r.y[0].t, b.dw.t }, out = b.r.y[1].t;
		int64_t sx[2] = { M, K };
		struct dtensor dx;

		OK(dt_new(&b.c, &dx, SPYRE_FLOAT32, 2, sx));
		in[0] = dx.t;
		FAILS_WITH(spyre_compiled_run_with_transfer(k, b.c.s, b.xfer, in, 2, &out, 1),
			   -EINVAL, "a host input takes host memory");
		dt_free(&dx);
	}
	OK(spyre_compiled_destroy(k));
	bed_close(&b);
	free(y);
	free(ref);
	free(mag);
}

TEST(graph_host_input_survives_serialisation)
{
	double *y1 = malloc(sizeof(double) * M * N), *y2 = malloc(sizeof(double) * M * N);
	struct spyre_compiled_stats st;
	spyre_compiled *k, *k2;
	struct bed b;
	size_t len;
	void *blob;
	uint64_t ns;
	int i;

	ASSERT(y1 && y2, "malloc");
	bed_open(dev, 2, &b);
	compile_mlp(&b.c, 0, &k);
	run_all(&b.c, k, b.xfer, &b.dw, &b.r, &ns);
	OK(dt_read(&b.c, &b.r.y[RUNS - 1], y1));
	OK(spyre_compiled_serialize(k, &blob, &len));
	OK(spyre_compiled_destroy(k));
	OK(spyre_compiled_deserialize(b.c.ops, blob, len, &k2));
	free(blob);
	OK(spyre_compiled_get_stats(k2, &st));
	CHECK(st.submits == 2, "the loaded graph uploads on its transfer slot: %u SUBMITs",
	      st.submits);
	for (i = 0; i < RUNS; i++)
		OK(spyre_memset32_async(b.c.s, &b.r.y[i].t.buf, 0, b.r.y[i].t.buf.size));
	run_all(&b.c, k2, b.xfer, &b.dw, &b.r, &ns);
	OK(dt_read(&b.c, &b.r.y[RUNS - 1], y2));
	CHECK(!memcmp(y1, y2, sizeof(double) * M * N), "the loaded graph computes the same");
	OK(spyre_compiled_destroy(k2));
	bed_close(&b);
	free(y1);
	free(y2);
}
