// SPDX-License-Identifier: MIT
/*
 * spyre_compiled_serialize/deserialize: a loaded graph runs like the one
 * it came from without generating a program; damaged, stale or
 * unserialisable graphs are refused with an error.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ops_ref.h"

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (n--)
		h = (h ^ *p++) * 0x100000001b3ull;
	return h;
}

static int run2(struct tctx *c, spyre_compiled *k, struct dtensor *x, struct dtensor *w,
		struct dtensor *y, struct dtensor *z)
{
	struct spyre_tensor in[2] = { x->t, w->t }, out[2] = { y->t, z->t };
	int ret = spyre_compiled_run(k, c->s, in, 2, out, 2);

	return ret ? ret : spyre_stream_synchronize(c->s);
}

/* y = tril(softmax(x @ w^T)) (an iota constant), z = relu(x @ w^T) * 2 */
TEST(graph_serialize_roundtrip)
{
	int64_t sx[2] = { 8, 16 }, sw[2] = { 8, 16 }, sy[2] = { 8, 8 };
	double x[8 * 16], w[8 * 16], y1[64], y2[64], z1[64], z2[64];
	struct spyre_ops_stats o0, o1;
	struct spyre_compiled_stats st, st2;
	struct dtensor dx, dw, dy, dz;
	spyre_value vx, vw, t, vy, vz;
	spyre_compiled *k, *k2;
	void *blob, *blob2;
	size_t len, len2;
	uint8_t *bad;
	spyre_graph *g;
	struct tctx c;
	uint64_t sum;

	OK(tctx_open(dev, &c));
	OK(dt_new(&c, &dx, SPYRE_FLOAT32, 2, sx));
	OK(dt_new(&c, &dw, SPYRE_FLOAT32, 2, sw));
	OK(dt_new(&c, &dy, SPYRE_FLOAT32, 2, sy));
	OK(dt_new(&c, &dz, SPYRE_FLOAT32, 2, sy));
	rnd_fill(x, 8 * 16, -1, 1, 1, SPYRE_FLOAT32);
	rnd_fill(w, 8 * 16, -1, 1, 2, SPYRE_FLOAT32);
	OK(dt_write(&c, &dx, x));
	OK(dt_write(&c, &dw, w));
	OK(spyre_graph_create(c.ops, &g));
	OK(spyre_graph_input(g, SPYRE_FLOAT32, 2, sx, &vx));
	OK(spyre_graph_input(g, SPYRE_FLOAT32, 2, sw, &vw));
	OK(spyre_graph_linear(g, vx, vw, -1, &t));
	OK(spyre_graph_softmax(g, t, -1, &vy));
	OK(spyre_graph_tril(g, vy, 0, 0, &vy));
	OK(spyre_graph_unary(g, SPYRE_UN_RELU, t, &vz));
	OK(spyre_graph_binary_scalar(g, SPYRE_BIN_MUL, vz, 2.0, 0, &vz));
	OK(spyre_graph_output(g, vy));
	OK(spyre_graph_output(g, vz));
	OK(spyre_graph_compile(g, &k));
	OK(run2(&c, k, &dx, &dw, &dy, &dz));
	OK(dt_read(&c, &dy, y1));
	OK(dt_read(&c, &dz, z1));

	OK(spyre_compiled_get_stats(k, &st));
	OK(spyre_compiled_serialize(k, &blob, &len));
	OK(spyre_compiled_destroy(k));
	OK(spyre_ops_get_stats(c.ops, &o0));
	OK(spyre_compiled_deserialize(c.ops, blob, len, &k2));
	OK(spyre_ops_get_stats(c.ops, &o1));
	CHECK(o1.programs_built == o0.programs_built, "loading generated %llu programs",
	      (unsigned long long)(o1.programs_built - o0.programs_built));
	CHECK(o1.graphs_loaded == o0.graphs_loaded + 1, "graphs_loaded counts the load");
	OK(spyre_compiled_get_stats(k2, &st2));
	CHECK(st2.kernels >= 2 && st2.programs == st.programs && st2.submits == 1,
	      "loaded: %u kernels, %u programs (%u compiled), %u submits", st2.kernels,
	      st2.programs, st.programs, st2.submits);
	memset(y2, 0, sizeof(y2));
	OK(dt_write(&c, &dy, y2));
	OK(dt_write(&c, &dz, y2));
	OK(run2(&c, k2, &dx, &dw, &dy, &dz));
	OK(dt_read(&c, &dy, y2));
	OK(dt_read(&c, &dz, z2));
	CHECK(!memcmp(y1, y2, sizeof(y1)) && !memcmp(z1, z2, sizeof(z1)),
	      "the loaded graph computes what the compiled one did");
	CHECK(y2[1] == 0 && y2[8] != 0, "tril kept: %g %g", y2[1], y2[8]);
	/* the same bytes again from the loaded graph */
	OK(spyre_compiled_serialize(k2, &blob2, &len2));
	CHECK(len2 == len && !memcmp(blob, blob2, len), "re-serialised bytes differ");
	free(blob2);
	OK(spyre_compiled_destroy(k2));

	/* damaged bytes: every one is refused, none crashes */
	bad = malloc(len);
	ASSERT(bad, "malloc");
	memcpy(bad, blob, len);
	bad[len / 2] ^= 0x10;
	FAILS_WITH(spyre_compiled_deserialize(c.ops, bad, len, &k2), -EBADMSG, "checksum");
	FAILS_WITH(spyre_compiled_deserialize(c.ops, blob, len - 1, &k2), -EBADMSG, "checksum");
	FAILS_WITH(spyre_compiled_deserialize(c.ops, blob, 3, &k2), -EBADMSG, "too short");
	/* another op library version, checksum fixed up: stale, not corrupt */
	memcpy(bad, blob, len);
	bad[8] ^= 0x40;
	sum = fnv1a(bad, len - 8);
	memcpy(bad + len - 8, &sum, 8);
	FAILS_WITH(spyre_compiled_deserialize(c.ops, bad, len, &k2), -ESTALE, "op library");
	/* a consistent checksum over a bad structure: an argument slot out of range */
	memcpy(bad, blob, len);
	memset(bad + 20, 0xff, 4);	/* noutputs */
	sum = fnv1a(bad, len - 8);
	memcpy(bad + len - 8, &sum, 8);
	FAILS_WITH(spyre_compiled_deserialize(c.ops, bad, len, &k2), -EBADMSG, "malformed");
	FAILS_WITH(spyre_compiled_deserialize(c.ops, NULL, len, &k2), -EINVAL, "NULL");
	free(bad);
	free(blob);

	/* op by op, or over a constant tensor: not serialisable */
	OK(spyre_graph_compile_flags(g, SPYRE_COMPILE_OP_BY_OP, &k));
	FAILS_WITH(spyre_compiled_serialize(k, &blob, &len), -EOPNOTSUPP, "op by op");
	OK(spyre_compiled_destroy(k));
	OK(spyre_graph_destroy(g));
	OK(spyre_graph_create(c.ops, &g));
	OK(spyre_graph_input(g, SPYRE_FLOAT32, 2, sx, &vx));
	OK(spyre_graph_constant(g, &dw.t, &vw));
	OK(spyre_graph_linear(g, vx, vw, -1, &t));
	OK(spyre_graph_output(g, t));
	OK(spyre_graph_compile(g, &k));
	OK(spyre_compiled_get_stats(k, &st));
	FAILS_WITH(spyre_compiled_serialize(k, &blob, &len), -EOPNOTSUPP, "constant tensor");
	OK(spyre_compiled_destroy(k));
	OK(spyre_graph_destroy(g));
	dt_free(&dx);
	dt_free(&dw);
	dt_free(&dy);
	dt_free(&dz);
	tctx_close(&c);
}
