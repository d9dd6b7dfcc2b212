/* SPDX-License-Identifier: MIT */
/*
 * State shared by the matmul schedules (mm.c: one core per output tile,
 * mm_mc.c: a grid of cores sharing operand tiles over the ring).
 */
#ifndef SPYRE_MM_GEN_H
#define SPYRE_MM_GEN_H

#include "tile.h"

struct mm_gen {
	const struct mm_spec *s;
	struct texpr t;
	uint8_t cls[K_MAX_IN];
	bool trans;
	uint32_t es, tm, tn, tk, nmt, nnt, nkc;
	uint32_t abuf[2], bbuf[2], acc[2];
	uint32_t b8buf[2];	/* int8 B chunks before widening (spec b_int8) */
	uint32_t b2buf[2], b28buf[2], acc2[2];	/* spec dual: the second B's */
	uint32_t bes;		/* bytes per B element in memory */
	/*
	 * A resident (mm_mc.c): the whole K of a core's A rows stays in the
	 * scratchpad (abuf[] are two such panels, row stride alda elements)
	 * while the rounds of one block row stream B, so A is read once.
	 */
	bool ares;
	uint32_t alda;
	int64_t nb;	/* batch count */
	unsigned int q[32];	/* chunk counter per core (A/B buffer parity) */
};

/* Element offset of batch @bi in a tensor of @strides. */
int64_t batch_off(const struct mm_spec *s, const int64_t *strides, int64_t bi);
/* Lay out A/B chunk buffers, accumulators and the epilogue; returns the end. */
uint32_t mm_layout(struct mm_gen *g, uint32_t tm, uint32_t tn, uint32_t tk);
/*
 * Widen the int8 chunk at @src (@rows x @cols, row stride @ld) into @dst
 * in the A dtype on core @c.
 */
void mm_widen(struct mm_gen *g, struct pb *p, unsigned int c, uint32_t src, uint32_t dst,
	      uint32_t rows, uint32_t cols, uint32_t ld);
/* Epilogue inputs (phase 0) or epilogue + store (phase 1) of tile @ti. */
void mm_epi(struct mm_gen *g, struct pb *p, unsigned int c, int64_t ti, unsigned int par,
	    int phase);
/*
 * The shared-operand schedule: 0, an error, or -EAGAIN when it does not
 * suit the shape (the caller uses the one-core-per-tile schedule).
 */
int mm_mc(struct mm_gen *g, unsigned int ncores, struct kprogs *out);

#endif
