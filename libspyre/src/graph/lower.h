/* SPDX-License-Identifier: MIT */
/* Lowered graph: the kernel specs of the live nodes and their bindings. */
#ifndef SPYRE_LOWER_H
#define SPYRE_LOWER_H

#include "graph.h"

struct lnode {
	int kind;
	const char *name;
	union {
		struct ew_spec ew;
		struct mm_spec mm;
		struct ga_spec ga;
		struct fa_spec fa;
	} u;
	unsigned int nslots;
	int slot_store[16];	/* storage bound to each program slot */
};

struct lowered {
	struct lnode *k;
	unsigned int n;		/* kernels */
	unsigned int nodes;	/* nodes recorded */
	unsigned int ninputs, noutputs;
	uint64_t ws, inter;	/* planned workspace, sum of intermediates */
};

int g_lower(spyre_graph *g, struct lowered *L, unsigned int flags, const char *call);
void lowered_free(struct lowered *L);
int lowered_key(spyre_graph *g, const struct lowered *L, void **key, size_t *len);
/* Programs and recipe of a lowered graph. */
int lowered_build(spyre_graph *g, const struct lowered *L, unsigned int flags,
		  spyre_compiled **out, const char *call);

#endif
