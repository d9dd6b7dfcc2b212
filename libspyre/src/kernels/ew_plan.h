/* SPDX-License-Identifier: MIT */
/* Coalesced iteration plan of an elementwise kernel, shared with matmul. */
#ifndef SPYRE_EW_PLAN_H
#define SPYRE_EW_PLAN_H

#include <stdbool.h>

#include "kern.h"
#include "../prog/pbuild.h"

struct ew_plan {
	int64_t numel, O, R, C;
	unsigned int nouter;
	int64_t outer[K_MAX_DIMS];
	/* per operand (inputs, then the output) */
	int64_t sc[K_MAX_IN + 1], sr[K_MAX_IN + 1], so[K_MAX_IN + 1][K_MAX_DIMS];
};

int ew_plan(struct ew_plan *pl, const struct ew_spec *s, bool keep_last);
uint8_t ew_class(const struct ew_plan *pl, unsigned int k);
int64_t ew_outer_off(const struct ew_plan *pl, unsigned int k, int64_t o);
void xfer(struct pb *p, unsigned int core, int store, uint8_t slot, uint64_t mem_off,
	  uint32_t rows, uint32_t cols, int64_t msr, int64_t msc, uint32_t es, uint32_t sp_off,
	  uint32_t ssr);
int kprogs_add(struct kprogs *k, struct pb *p);

#endif
