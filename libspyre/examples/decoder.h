/* SPDX-License-Identifier: MIT */
/*
 * A GPT-style decoder (token embedding, causal multi-head attention,
 * rms_norm, SiLU-gated MLP, tied output projection) with random weights,
 * built through the op library's graph API, plus its host reference in
 * double precision. Used by the tests and the benchmark.
 */
#ifndef SPYRE_EXAMPLE_DECODER_H
#define SPYRE_EXAMPLE_DECODER_H

#include "spyre/ops.h"

struct gpt_cfg {
	int vocab, dim, heads, ffn, layers, tokens;
	enum spyre_dtype dtype;	/* weights and activations */
};

#define GPT_W_PER_LAYER 9	/* g1 wq wk wv wo g2 w1 w3 w2 */

struct gpt {
	struct gpt_cfg cfg;
	spyre_device *dev;
	/* 0: wte [V, D]; 1: final norm [D]; then GPT_W_PER_LAYER per layer */
	unsigned int nw;
	double *host[2 + 8 * GPT_W_PER_LAYER];
	spyre_bo *bo[2 + 8 * GPT_W_PER_LAYER];
	struct spyre_tensor t[2 + 8 * GPT_W_PER_LAYER];
};

/* Random weights (deterministic in @seed), rounded to the dtype, on the card. */
int gpt_make(spyre_device *dev, const struct gpt_cfg *cfg, unsigned int seed, struct gpt *w);
void gpt_free(struct gpt *w);
/* Graph: input ids int32 [T]; returns logits [T, V]. */
int gpt_build(spyre_graph *g, const struct gpt *w, spyre_value ids, spyre_value *logits);
/* Host reference in double precision: logits [T * V]. */
void gpt_reference(const struct gpt *w, const int32_t *ids, double *logits);

#endif
