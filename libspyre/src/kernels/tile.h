/* SPDX-License-Identifier: MIT */
/*
 * Shared machinery of the tile kernels: the expression evaluator that turns
 * an ew_spec expression into vector instructions over one tile, used by the
 * elementwise kernel and by the matmul epilogue.
 */
#ifndef SPYRE_TILE_H
#define SPYRE_TILE_H

#include <stdbool.h>

#include "kern.h"
#include "../prog/pbuild.h"

/* Shape class of a value inside a tile [tr x tc]. */
enum { CL_SCAL = 0, CL_ROW = 1, CL_COL = 2, CL_FULL = 3 };	/* bit 0: has C, bit 1: has R */

#define SP_ALIGN 128u

struct texpr {
	/* static analysis */
	unsigned int nv;			/* nin + nuops */
	uint8_t cls[K_MAX_IN + K_MAX_UOPS];
	uint8_t dt[K_MAX_IN + K_MAX_UOPS];	/* ISA dtype of the value as stored */
	bool conv[K_MAX_IN + K_MAX_UOPS];	/* needs an fp32 copy */
	bool imode[K_MAX_IN + K_MAX_UOPS];	/* an integer value (1.9 integer mode) */
	bool expand[K_MAX_UOPS];		/* src0 expanded first */
	uint8_t edt[K_MAX_UOPS];		/* dtype of the expanded src0 */
	bool need_iones[2];			/* int32, int64 ones rows */
	bool swap[K_MAX_UOPS];
	bool need_ones, whole;
	uint8_t out_cls, out_dt;
	bool direct;			/* last uop writes the staging buffer itself */
	bool passthru;			/* matmul result stored as it is */
	bool final_expand;		/* an extra instruction fills the staging buffer */
	/* scratchpad layout, per parity */
	uint32_t off[2][K_MAX_IN + K_MAX_UOPS];
	uint32_t coff[2][K_MAX_IN + K_MAX_UOPS];	/* fp32 copies */
	uint32_t eoff[2][K_MAX_UOPS];			/* expanded src0 */
	uint32_t stage[2];
	uint32_t ones, consts;		/* shared (per core) */
	uint32_t iones[2];		/* int32, int64 ones (integer expansion) */
	uint32_t end;
	uint32_t tr, tc;
};

/*
 * Analyse @s (inputs' classes in @in_cls, the result's in @out_cls; value 0
 * is the fp32 matmul product when @acc0). Returns 0 or -EOPNOTSUPP with @why.
 */
int texpr_analyse(struct texpr *t, const struct ew_spec *s, const uint8_t *in_cls,
		  uint8_t out_cls, bool acc0, char *why, size_t whylen);
/*
 * Lay out buffers for a tile [tr x tc] from @base; returns the end offset
 * (may exceed the scratchpad: the caller shrinks the tile). Buffers of
 * values below @skip are placed by the caller (its off[] entries kept).
 */
uint32_t texpr_layout(struct texpr *t, const struct ew_spec *s, uint32_t base, uint32_t tr,
		      uint32_t tc, unsigned int skip);
/* Per-core prologue: ones row and constants. */
void texpr_prologue(struct texpr *t, const struct ew_spec *s, struct pb *p, unsigned int core);
/* Evaluate the expression on one tile of trr x tcc in parity @par. */
void texpr_eval(struct texpr *t, const struct ew_spec *s, struct pb *p, unsigned int core,
		unsigned int par, uint32_t trr, uint32_t tcc);
/* Scratchpad offset of the result (out dtype, class out_cls) after eval. */
uint32_t texpr_result(const struct texpr *t, unsigned int par);

static inline uint32_t align_up(uint32_t x, uint32_t a)
{
	return (x + a - 1) / a * a;
}

#endif
