// SPDX-License-Identifier: MIT
/*
 * Op library benchmark: a 2-layer GPT-style decoder (fp16) built through
 * the graph API, run compiled (fused, one recipe) and op by op (one recipe
 * and SUBMIT per kernel, the eager execution model). Prints modelled device
 * time per forward (timing events: the card model's clock), programs and
 * SUBMITs per forward, and the ratio, all measured in this one run.
 *
 *   SPYRE_BACKEND=sim build/libspyre/bench/ops-bench [tokens]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder.h"

#define DIE(x)                                                                          \
	do {                                                                            \
		int r_ = (x);                                                           \
		if (r_) {                                                               \
			fprintf(stderr, "ops-bench: %s: %s\n", #x, spyre_last_error()); \
			exit(1);                                                        \
		}                                                                       \
	} while (0)

struct result {
	uint64_t ns, submits;
	struct spyre_compiled_stats st;
};

static void measure(spyre_device *dev, spyre_stream *s, spyre_compiled *k,
		    const struct spyre_tensor *ids, const struct spyre_tensor *out, int reps,
		    struct result *r)
{
	struct spyre_device_stats d0, d1;
	spyre_event *e0, *e1;
	uint64_t ns, best = UINT64_MAX;
	int i;

	DIE(spyre_compiled_get_stats(k, &r->st));
	DIE(spyre_event_create(dev, SPYRE_EVENT_TIMING, &e0));
	DIE(spyre_event_create(dev, SPYRE_EVENT_TIMING, &e1));
	DIE(spyre_compiled_run(k, s, ids, 1, out, 1));	/* warm up */
	DIE(spyre_stream_synchronize(s));
	DIE(spyre_device_get_stats(dev, &d0));
	DIE(spyre_compiled_run(k, s, ids, 1, out, 1));
	DIE(spyre_stream_synchronize(s));
	DIE(spyre_device_get_stats(dev, &d1));
	r->submits = d1.submits - d0.submits;
	for (i = 0; i < reps; i++) {
		DIE(spyre_event_record(e0, s));
		DIE(spyre_compiled_run(k, s, ids, 1, out, 1));
		DIE(spyre_event_record(e1, s));
		DIE(spyre_event_synchronize(e1));
		DIE(spyre_event_elapsed_ns(e0, e1, &ns));
		if (ns < best)
			best = ns;
	}
	r->ns = best;
	spyre_event_destroy(e0);
	spyre_event_destroy(e1);
}

int main(int argc, char **argv)
{
	int tokens = argc > 1 ? atoi(argv[1]) : 64;
	struct gpt_cfg cfg = { 512, 256, 8, 688, 2, tokens, SPYRE_FLOAT16 };
	int64_t sid[1] = { tokens }, so[2] = { tokens, 512 };
	struct spyre_tensor tid, tout;
	spyre_bo *bid, *bout;
	struct result fused, opbo;
	spyre_compiled *k, *k2;
	spyre_value ids, logits;
	spyre_device *dev;
	spyre_stream *s;
	spyre_graph *g;
	spyre_ops *ops;
	struct gpt w;

	if (tokens < 1 || tokens > 4096) {
		fprintf(stderr, "ops-bench: tokens 1..4096\n");
		return 2;
	}
	DIE(spyre_device_open(0, &dev));
	DIE(spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &s));
	DIE(spyre_ops_create(dev, 0, &ops));
	DIE(gpt_make(dev, &cfg, 1, &w));
	DIE(spyre_bo_create(dev, (uint64_t)tokens * 4, SPYRE_MEM_DEVICE, &bid));
	DIE(spyre_bo_create(dev, (uint64_t)tokens * 512 * 2, SPYRE_MEM_DEVICE, &bout));
	DIE(spyre_memset32_async(s, &(struct spyre_buf){ bid, 0, (uint64_t)tokens * 4 }, 7,
				 (uint64_t)tokens * 4));
	tid = spyre_tensor_make(SPYRE_INT32, 1, sid, spyre_bo_buf(bid));
	tout = spyre_tensor_make(SPYRE_FLOAT16, 2, so, spyre_bo_buf(bout));
	DIE(spyre_graph_create(ops, &g));
	DIE(spyre_graph_input(g, SPYRE_INT32, 1, sid, &ids));
	DIE(gpt_build(g, &w, ids, &logits));
	DIE(spyre_graph_output(g, logits));
	DIE(spyre_graph_compile(g, &k));
	DIE(spyre_graph_compile_flags(g, SPYRE_COMPILE_OP_BY_OP | SPYRE_COMPILE_NO_FUSION, &k2));
	measure(dev, s, k, &tid, &tout, 3, &fused);
	measure(dev, s, k2, &tid, &tout, 3, &opbo);
	printf("decoder fp16 (2 layers, vocab 512, dim 256, 8 heads, ffn 688, %d tokens)\n",
	       tokens);
	printf("  compiled:    %9.1f us device/forward, %3u kernels, %3u programs, %3llu SUBMITs, "
	       "workspace %llu KiB (intermediates %llu KiB)\n", fused.ns / 1e3,
	       fused.st.kernels, fused.st.programs, (unsigned long long)fused.submits,
	       (unsigned long long)fused.st.workspace_bytes >> 10,
	       (unsigned long long)fused.st.intermediate_bytes >> 10);
	printf("  op by op:    %9.1f us device/forward, %3u kernels, %3u programs, %3llu SUBMITs\n",
	       opbo.ns / 1e3, opbo.st.kernels, opbo.st.programs,
	       (unsigned long long)opbo.submits);
	printf("  op by op / compiled device time: %.2fx\n", (double)opbo.ns / (double)fused.ns);
	spyre_compiled_destroy(k);
	spyre_compiled_destroy(k2);
	spyre_graph_destroy(g);
	gpt_free(&w);
	spyre_bo_destroy(bid);
	spyre_bo_destroy(bout);
	spyre_ops_destroy(ops);
	spyre_stream_destroy(s);
	return spyre_device_close(dev) ? 1 : 0;
}
