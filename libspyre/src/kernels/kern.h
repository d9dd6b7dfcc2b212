/* SPDX-License-Identifier: MIT */
/*
 * Kernel generators: one per op family. A kernel is described by a spec of
 * plain values (shapes, strides in elements, dtypes, element offsets,
 * argument slots), which is also its cache key, and generated into one or
 * more card programs (more when the work exceeds one program's instruction
 * budget; they run in order).
 *
 * Elementwise family ("ew"): an iteration space and a small SSA expression
 * of card vector functions over input tensors broadcast into it. Row
 * functions (row sum/max/softmax) need whole rows in a tile and reduce the
 * innermost dimension; one kernel covers unary/binary/scalar ops, casts,
 * strided copies, fills, reductions over the last dim, softmax and
 * log_softmax, layer_norm, rms_norm and fused chains of them.
 *
 * Matmul family ("mm"): batched C = A x B (B optionally transposed) with an
 * ew expression as epilogue (bias, activation, residual, cast); "dual"
 * computes A x B and A x B2 in one pass over A and combines them in the
 * epilogue (silu(x Wg^T) * (x Wu^T)).
 */
#ifndef SPYRE_KERN_H
#define SPYRE_KERN_H

#include <stddef.h>
#include <stdint.h>

#define K_MAX_DIMS 6
#define K_MAX_IN 8		/* input tensors of one kernel */
#define K_MAX_UOPS 40		/* expression nodes */

/* A tensor operand: @slot of the program, element @off, strides over the
 * kernel's iteration space (0 = broadcast). */
struct kview {
	uint8_t dtype;		/* ISA dtype */
	uint8_t slot;
	uint16_t rsvd;
	uint32_t rsvd2;
	int64_t off;		/* elements */
	int64_t strides[K_MAX_DIMS];
};

/* Expression node: value ids < nin are inputs, then uop results in order. */
enum {
	U_VF = 0,	/* a card vector function (func) */
	U_CONST,	/* scalar constant imm0 */
	/*
	 * Rotate half (rotary embeddings): each row of the last dim, C = 2h
	 * values, becomes [-a[h..C), a[0..h)]. A row function: whole rows.
	 */
	U_ROTH,
};

/*
 * @dt: the ISA dtype the result is kept in (0: FP32, the fp32 mode). An
 * integer @dt (INT32, INT64; card interface 1.9) runs the function in the
 * vector unit's integer mode, exact and wrapping in that type, its
 * operands of that same type (a COPY converts from any type); so does a
 * COPY of an INT64 value to fp32. U_CONST of an integer @dt is @k.
 */
struct uop {
	uint8_t kind, func;
	int8_t a, b;		/* value ids, -1: none */
	float imm0, imm1;
	uint8_t dt, rsvd[11];	/* no implicit padding: the spec is a cache key */
	int64_t k;		/* integer immediate (integer mode) */
};
_Static_assert(sizeof(struct uop) == 32, "uop layout");

struct ew_spec {
	uint32_t magic;			/* 'EW01', part of the key */
	uint8_t ndim, nin, nuops, out_col;	/* out_col: output reduces the last dim */
	int64_t shape[K_MAX_DIMS];	/* iteration space */
	struct kview in[K_MAX_IN];
	struct kview out;		/* strides: 0 on the last dim when out_col */
	struct uop u[K_MAX_UOPS];
};

struct mm_spec {
	uint32_t magic;			/* 'MM01' */
	uint8_t nbatch, trans_b, dtype;
	uint8_t mcast;			/* the card has LOAD MCAST (interface 1.12) */
	/*
	 * B is int8 in memory while A is a float type (weight-only int8): each
	 * B chunk is loaded as int8 and widened to @dtype by the vector unit in
	 * the scratchpad before the PE array takes it.
	 */
	uint8_t b_int8;
	/*
	 * Two products over one A (a gated MLP's gate and up projections):
	 * b2 has b's dtype and strides; epilogue value 1 is A x b2 in fp32
	 * (epi.in[1] is not loaded). Float A only.
	 */
	uint8_t dual;
	uint8_t rsvd[6];		/* no implicit padding: the spec is a cache key */
	int64_t batch[K_MAX_DIMS];	/* batch dims of C */
	int64_t m, n, k;
	/* A [b.., M, K]: strides batch.., M (K stride 1) */
	struct kview a, b;		/* b: [b.., K, N] or [b.., N, K] (trans_b) */
	struct kview b2;		/* dual: the second B (b's strides) */
	/* epilogue: iteration space [b.., M, N]; value 0 is the fp32 product */
	struct ew_spec epi;		/* epi.in[0] unused (the product); epi.out = C */
};

/*
 * Gather ("ga"): out[t, :] = w[idx[t], :] for @nidx indices, with the
 * card's LOAD GATHER (interface 1.3). idx: int32 at element stride
 * idx.strides[0] (2: the low words of int64); w and out: row stride
 * strides[0], contiguous rows. An index outside w fails the job.
 */
struct ga_spec {
	uint32_t magic;			/* 'GA01' */
	uint8_t dtype, rsvd[3];
	int64_t nidx, d;
	struct kview w, idx, out;
};

/*
 * Fused attention ("fa", flash-attention style): out = softmax(q k^T *
 * scale + mask) v per batch index, the scores and the running row max and
 * sum kept in the scratchpad (never written to device memory). q [b..,
 * Lq, D], k [b.., Lk, D], v [b.., Lk, Dv], out [b.., Lq, Dv]: strides over
 * those spaces (batch dims, then the row stride; rows are contiguous),
 * @dtype for q, k, v and out. mask [b.., Lq, Lk] (any strides, 0:
 * broadcast) when @mask_kind is 1 (added, @mdtype float) or 2 (bool: keep
 * where non-zero, card interface 1.3). @causal: key j > query i masked
 * (top-left aligned). Scores, max and sums in fp32, the probabilities
 * rounded to @dtype for the PE array; a query every key is masked from
 * gives 0 (PyTorch's safe softmax).
 */
struct fa_spec {
	uint32_t magic;			/* 'FA01' */
	uint8_t nbatch, dtype, causal, mask_kind, mdtype;
	uint8_t rsvd[3];		/* no implicit padding: the spec is a cache key */
	float scale;
	int64_t batch[K_MAX_DIMS];
	int64_t lq, lk, d, dv;
	struct kview q, k, v, mask, out;
};

/* A generated kernel: programs run in order, all with @nslots slots. */
struct kprogs {
	unsigned int n;
	void **img;
	size_t *size;
	unsigned int nslots;
};
void kprogs_free(struct kprogs *k);

/*
 * Generate. Return 0, -EOPNOTSUPP (with @why filled: the reason) or
 * -ENOMEM. A spec with no elements generates zero programs.
 */
int kern_ew(const struct ew_spec *s, unsigned int ncores, struct kprogs *out, char *why,
	    size_t whylen);
int kern_mm(const struct mm_spec *s, unsigned int ncores, struct kprogs *out, char *why,
	    size_t whylen);

int kern_ga(const struct ga_spec *s, unsigned int ncores, struct kprogs *out, char *why,
	    size_t whylen);
int kern_fa(const struct fa_spec *s, unsigned int ncores, struct kprogs *out, char *why,
	    size_t whylen);

/* Row functions need whole rows in a tile. */
int uop_is_row(const struct uop *u);

#endif
