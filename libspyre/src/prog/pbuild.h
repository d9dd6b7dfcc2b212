/* SPDX-License-Identifier: MIT */
/*
 * The program builder: the only code of the op library that knows the card's
 * program encoding (spyre_isa.h). Kernels emit per-core instructions with
 * their scratchpad operands; pb_finish() derives every data-token wait and
 * signal from the scratchpad ranges each instruction reads and writes, so a
 * kernel cannot get the synchronisation wrong by hand.
 *
 * Token rule: units of one core run their own instructions in order, so an
 * instruction only needs ordering against the latest conflicting
 * instruction of each other unit (read-after-write, write-after-read,
 * write-after-write on overlapping scratchpad bytes). Each ordered unit
 * pair (P -> Q) owns one token; P signals it exactly for the instructions a
 * later Q instruction waits for, so signals and waits pair up in order.
 */
#ifndef SPYRE_PBUILD_H
#define SPYRE_PBUILD_H

#include <stddef.h>
#include <stdint.h>

#include "spyre_isa.h"

/* Instructions per program we emit (below SPYRE_PROG_MAX_INSNS). */
#define PB_MAX_INSNS 60000u
#define PB_SP_BYTES (2u << 20)	/* scratchpad per core */

struct pb;

struct pb *pb_new(unsigned int ncores);
void pb_free(struct pb *p);
/* Instructions emitted so far. */
uint32_t pb_count(const struct pb *p);
/* Nonzero after an allocation failure or an impossible instruction. */
int pb_error(const struct pb *p);

/* LOAD/STORE of @rows rows of @row_bytes on @core. */
void pb_load(struct pb *p, unsigned int core, uint8_t slot, uint64_t mem_off, uint32_t rows,
	     uint32_t row_bytes, uint32_t mem_stride, uint32_t sp_off, uint32_t sp_stride);
void pb_store(struct pb *p, unsigned int core, uint8_t slot, uint64_t mem_off, uint32_t rows,
	      uint32_t row_bytes, uint32_t mem_stride, uint32_t sp_off, uint32_t sp_stride);
/*
 * LOAD MCAST (card interface 1.12): the same rows into the scratchpad of
 * every core of @mask at @sp_off, one LPDDR5 read for all of them. Every
 * core of the group must get the same tokens (symmetric programs), else
 * pb_finish() fails with -EINVAL.
 */
void pb_load_mcast(struct pb *p, uint32_t mask, uint8_t slot, uint64_t mem_off, uint32_t rows,
		   uint32_t row_bytes, uint32_t mem_stride, uint32_t sp_off, uint32_t sp_stride);
/* LOAD GATHER: row r from mem_off + idx[r] * mem_stride, idx (int32) at @idx_sp. */
void pb_gather(struct pb *p, unsigned int core, uint8_t slot, uint64_t mem_off, uint32_t rows,
	       uint32_t row_bytes, uint32_t mem_stride, uint32_t idx_sp, uint32_t sp_off,
	       uint32_t sp_stride);
/* C (fp32/int32) (+)= A x B (B^T when @trans_b). */
void pb_matmul(struct pb *p, unsigned int core, uint8_t dtype, int acc, int trans_b,
	       uint32_t m, uint32_t n, uint32_t k, uint32_t a_off, uint32_t lda, uint32_t b_off,
	       uint32_t ldb, uint32_t c_off, uint32_t ldc);

struct pb_vec {
	uint8_t func, flags, dtype, dtype_out;
	uint32_t rows, cols;
	/* offsets in bytes, strides in elements */
	uint32_t s0, s0_stride, s1, s1_stride, d, d_stride;
	float imm0, imm1;
	int64_t k;	/* the immediate in integer mode (flags SPYRE_VEC_INT) */
};
void pb_vec(struct pb *p, unsigned int core, const struct pb_vec *v);

/*
 * Derive the tokens and encode the image (malloc'd) for @nslots argument
 * slots. Returns 0, -ENOMEM, -E2BIG (too many instructions) or -EINVAL.
 * The builder is reset for the next program either way.
 */
int pb_finish(struct pb *p, unsigned int nslots, void **image, size_t *size);

/*
 * Program concatenation (card interface 1.8). Slot @s of a program becomes
 * slot @slot[s] of the merged one, or the workspace (SPYRE_ISA_SLOT_WS) at
 * byte @ws_off[s] on.
 */
struct pb_remap {
	uint8_t slot[SPYRE_ISA_SLOT_WS];
	uint64_t ws_off[SPYRE_ISA_SLOT_WS];
};
/*
 * 1 when image @img (one of ours) can share a LAUNCH with other programs:
 * every data token it signals is waited for on the same core, and it uses
 * no workspace of its own. 0 otherwise.
 */
int pb_can_concat(const void *img, size_t size);
/*
 * One program from @n images run in order, each renamed by @maps[i], with
 * a BARRIER of all @ncores cores between consecutive ones (what one stored
 * the next may load, whichever cores they run on), for @nslots slots and
 * @ws_size bytes of workspace. Returns 0, -ENOMEM or -E2BIG.
 */
int pb_concat(const void *const *img, const size_t *size, const struct pb_remap *maps,
	      unsigned int n, unsigned int nslots, uint64_t ws_size, unsigned int ncores,
	      void **out, size_t *outsize);

/* Element size of an ISA dtype. */
unsigned int pb_dtype_size(unsigned int dt);

#endif
