// SPDX-License-Identifier: MIT
/*
 * Compiled graphs with thousands of inputs and outputs (a model's weights
 * are inputs): one recipe of that many argument slots, each LAUNCH binding
 * only the slots its kernel reads; they run, serialise and reload, and bad
 * bindings are still refused by name.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ops_ref.h"

enum { NIN = 2048, NOUT = NIN / 2, LEN = 32 };

/*
 * out[k] = in[2k] * (k + 1) + in[2k + 1] for k < NOUT over fp32 [LEN]
 * tensors; input HOST_IN is a host input (the graph uploads it), so the
 * host-input flags go past the first 64 inputs.
 */
enum { HOST_IN = 1001 };

static void build(struct tctx *c, spyre_graph **out)
{
	int64_t shape[1] = { LEN };
	spyre_value *in = calloc(NIN, sizeof(*in)), t;
	spyre_graph *g;
	unsigned int k;

	ASSERT(in, "out of memory");
	OK(spyre_graph_create(c->ops, &g));
	for (k = 0; k < NIN; k++) {
		if (k == HOST_IN)
			OK(spyre_graph_host_input(g, SPYRE_FLOAT32, 1, shape, &in[k]));
		else
			OK(spyre_graph_input(g, SPYRE_FLOAT32, 1, shape, &in[k]));
	}
	for (k = 0; k < NOUT; k++) {
		OK(spyre_graph_binary_scalar(g, SPYRE_BIN_MUL, in[2 * k], k + 1, 0, &t));
		OK(spyre_graph_binary(g, SPYRE_BIN_ADD, t, in[2 * k + 1], &t));
		OK(spyre_graph_output(g, t));
	}
	free(in);
	*out = g;
}

struct io {
	spyre_bo *din, *dout, *hin, *hstage;
	float *in, *out, *stage;
	struct spyre_tensor ti[NIN], to[NOUT];
};

static int io_open(struct tctx *c, struct io *io)
{
	uint64_t nb = (uint64_t)LEN * 4;
	int64_t shape[1] = { LEN };
	unsigned int k;
	int ret;

	ret = spyre_bo_create(c->dev, NIN * nb, SPYRE_MEM_DEVICE, &io->din);
	if (!ret)
		ret = spyre_bo_create(c->dev, NOUT * nb, SPYRE_MEM_DEVICE, &io->dout);
	if (!ret)
		ret = host_bo(c->dev, NIN * nb, &io->hin, (void **)&io->in);
	if (!ret)
		ret = host_bo(c->dev, NOUT * nb, &io->hstage, (void **)&io->out);
	if (ret)
		return ret;
	for (k = 0; k < NIN * LEN; k++)
		io->in[k] = (float)((k * 37u) % 101) / 8.0f - 6.0f;
	for (k = 0; k < NIN; k++)
		io->ti[k] = spyre_tensor_make(SPYRE_FLOAT32, 1, shape,
					      k == HOST_IN ? buf_of(io->hin, k * nb, nb) :
							     buf_of(io->din, k * nb, nb));
	for (k = 0; k < NOUT; k++)
		io->to[k] = spyre_tensor_make(SPYRE_FLOAT32, 1, shape,
					      buf_of(io->dout, k * nb, nb));
	{
		struct spyre_buf d = spyre_bo_buf(io->din), h = spyre_bo_buf(io->hin);

		ret = spyre_memcpy_async(c->s, &d, &h, NIN * nb);
	}
	return ret ? ret : spyre_stream_synchronize(c->s);
}

/* Run @k and compare every output with the fp32 reference; the first bad index or -1. */
static int64_t run_check(struct tctx *c, struct io *io, spyre_compiled *k, int *err)
{
	uint64_t nb = (uint64_t)LEN * 4;
	unsigned int o, i;

	memset(io->out, 0xff, NOUT * nb);
	*err = spyre_compiled_run(k, c->s, io->ti, NIN, io->to, NOUT);
	if (!*err) {
		struct spyre_buf h = spyre_bo_buf(io->hstage), d = spyre_bo_buf(io->dout);

		*err = spyre_memcpy_async(c->s, &h, &d, NOUT * nb);
	}
	if (!*err)
		*err = spyre_stream_synchronize(c->s);
	if (*err)
		return -1;
	for (o = 0; o < NOUT; o++)
		for (i = 0; i < LEN; i++) {
			float a = io->in[2 * o * LEN + i], b = io->in[(2 * o + 1) * LEN + i];
			float want = a * (float)(o + 1) + b;

			if (io->out[o * LEN + i] != want)
				return (int64_t)o * LEN + i;
		}
	return -1;
}

static void io_close(struct io *io)
{
	spyre_bo_destroy(io->din);
	spyre_bo_destroy(io->dout);
	spyre_bo_destroy(io->hin);
	spyre_bo_destroy(io->hstage);
}

TEST(graph_thousands_of_inputs_and_outputs)
{
	struct spyre_compiled_stats st;
	struct spyre_device_stats s0, s1;
	spyre_compiled *k, *k2;
	struct io *io = calloc(1, sizeof(*io));
	spyre_graph *g = NULL; /* set by build(), which aborts the test on failure */
	struct tctx c;
	int64_t bad;
	size_t len;
	void *blob;
	int err;

	ASSERT(io, "out of memory");
	OK(tctx_open(dev, &c));
	build(&c, &g);
	ASSERT(g, "no graph");
	OK(spyre_graph_compile(g, &k));
	OK(spyre_compiled_get_stats(k, &st));
	/* a transfer slot for the host input's upload, and the compute slot */
	CHECK(st.submits == 2, "%u SUBMITs per run, want one per stream slot", st.submits);
	CHECK(st.programs < NOUT, "%u programs for %u kernels: nothing merged", st.programs,
	      st.kernels);
	OK(io_open(&c, io));
	OK(spyre_device_get_stats(dev, &s0));
	bad = run_check(&c, io, k, &err);
	OK(err);
	OK(spyre_device_get_stats(dev, &s1));
	CHECK(bad < 0, "output element %lld wrong", (long long)bad);
	/* the run's submits plus the read-back copy */
	CHECK(s1.submits - s0.submits == st.submits + 1, "%llu SUBMITs",
	      (unsigned long long)(s1.submits - s0.submits));

	/* serialised and loaded back: same signature, same results */
	OK(spyre_compiled_serialize(k, &blob, &len));
	OK(spyre_compiled_deserialize(c.ops, blob, len, &k2));
	free(blob);
	bad = run_check(&c, io, k2, &err);
	OK(err);
	CHECK(bad < 0, "loaded graph: output element %lld wrong", (long long)bad);

	/* bad bindings are named: count, memory kind, shape past the 64th */
	FAILS_WITH(spyre_compiled_run(k, c.s, io->ti, NIN - 1, io->to, NOUT), -EINVAL,
		   "2047 inputs and 1024 outputs given, the graph has 2048 and 1024");
	io->ti[HOST_IN].buf = io->ti[HOST_IN - 1].buf;
	FAILS_WITH(spyre_compiled_run(k2, c.s, io->ti, NIN, io->to, NOUT), -EINVAL, "input 1001");
	io->ti[HOST_IN].buf = buf_of(io->hin, HOST_IN * LEN * 4ull, LEN * 4);
	io->to[900].shape[0] = LEN - 1;
	FAILS_WITH(spyre_compiled_run(k, c.s, io->ti, NIN, io->to, NOUT), -EINVAL, "output 900");
	io->to[900].shape[0] = LEN;

	OK(spyre_compiled_destroy(k2));
	OK(spyre_compiled_destroy(k));
	OK(spyre_graph_destroy(g));
	io_close(io);
	free(io);
	tctx_close(&c);
}

/* The input/output count limit is the recipe's (SPYRE_RECIPE_MAX_ARGS), not the card's 64. */
TEST(graph_io_limit)
{
	int64_t shape[1] = { 1 };
	spyre_graph *g;
	spyre_value v;
	struct tctx c;
	unsigned int k;

	OK(tctx_open(dev, &c));
	OK(spyre_graph_create(c.ops, &g));
	for (k = 0; k < SPYRE_RECIPE_MAX_ARGS - 1; k++)
		OK(spyre_graph_input(g, SPYRE_FLOAT32, 1, shape, &v));
	OK(spyre_graph_output(g, v));
	FAILS_WITH(spyre_graph_input(g, SPYRE_FLOAT32, 1, shape, &v), -E2BIG,
		   "at most 65536 inputs and outputs");
	FAILS_WITH(spyre_graph_output(g, v), -E2BIG, "at most 65536 inputs and outputs");
	OK(spyre_graph_destroy(g));
	tctx_close(&c);
}
