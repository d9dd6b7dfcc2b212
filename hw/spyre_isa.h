/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note OR MIT */
/*
 * Program format and instruction set of the virtual Spyre card's cores:
 * the compiler target that libspyre emits and the card executes on LAUNCH.
 * Part of the hardware contract in hw/ (with spyre_hw.h): the card model,
 * libspyre, the selftests and the benchmarks include it from here.
 * Documentation/spyre-card.rst ("Programs") is the prose specification.
 *
 * A program is a header followed by fixed-size 64-byte instructions, all
 * little endian. Each instruction belongs to one functional unit of a core
 * (load/store unit, PE array, vector/special-function unit) and runs on
 * every core of its core mask. Per core, each unit executes its own
 * instructions in program order; units are ordered against each other by
 * data tokens: an instruction starts once every token of its @wait mask has
 * a count above zero on that core (consuming one of each), and adds one to
 * every token of its @signal mask when it completes.
 */
#ifndef SPYRE_ISA_H
#define SPYRE_ISA_H

#include <stdint.h>

#define SPYRE_PROG_MAGIC		0x47525053u /* "SPRG" */
#define SPYRE_PROG_VERSION		1
#define SPYRE_PROG_HEADER_SIZE		32
#define SPYRE_PROG_INSN_SIZE		64
#define SPYRE_PROG_MAX_INSNS		65536
#define SPYRE_ISA_TOKENS		16	/* data tokens per core */
#define SPYRE_ISA_TOKEN_MAX		64	/* outstanding signals per token */
#define SPYRE_ISA_SLOT_WS		0xff	/* memory operand: the workspace */
#define SPYRE_ISA_STICK			128	/* bytes moved per stick */

/**
 * struct spyre_prog_header - start of every program
 * @magic: SPYRE_PROG_MAGIC
 * @version: SPYRE_PROG_VERSION
 * @header_size: SPYRE_PROG_HEADER_SIZE; instructions start here
 * @num_insns: instructions that follow (1..SPYRE_PROG_MAX_INSNS)
 * @num_slots: argument slots the program uses; the LAUNCH must bind at least
 *             this many
 * @rsvd: zero
 * @workspace_size: bytes of workspace the program uses; the LAUNCH's ws_len
 *                  must be at least this
 * @rsvd2: zero
 */
struct spyre_prog_header {
	uint32_t magic;
	uint16_t version;
	uint16_t header_size;
	uint32_t num_insns;
	uint16_t num_slots;
	uint16_t rsvd;
	uint64_t workspace_size;
	uint64_t rsvd2;
};

/* Opcodes (spyre_insn.op) and the unit each runs on. */
enum spyre_isa_op {
	SPYRE_I_NOP = 0,	/* unit in flags bits 0-1; only waits and signals */
	SPYRE_I_LOAD = 1,	/* LSU: device memory -> scratchpad */
	SPYRE_I_STORE = 2,	/* LSU: scratchpad -> device memory */
	SPYRE_I_MATMUL = 3,	/* PE array: C (+)= A x B */
	SPYRE_I_VEC = 4,	/* vector/SFU: elementwise and row operations */
	/*
	 * Interface 1.8, all units of the cores of core_mask: starts once
	 * every earlier instruction of those cores has completed, and no later
	 * instruction of theirs starts before it completed (a round of the
	 * ring); the device memory the cores stored before it is what every
	 * one of them loads after it. flags, dtypes, wait, signal and operands
	 * are zero.
	 */
	SPYRE_I_BARRIER = 5,
};

enum spyre_isa_unit {
	SPYRE_UNIT_LSU = 0,
	SPYRE_UNIT_PE = 1,
	SPYRE_UNIT_SFU = 2,
	SPYRE_UNIT_COUNT = 3,
};

/* Element types (spyre_insn.dtype, dtype_out). */
enum spyre_isa_dtype {
	SPYRE_DT_FP32 = 0,
	SPYRE_DT_FP16 = 1,	/* IEEE 754 binary16 */
	SPYRE_DT_BF16 = 2,	/* bfloat16 */
	SPYRE_DT_DLF16 = 3,	/* DLFloat16: 1 sign, 6 exponent (bias 31), 9 fraction */
	SPYRE_DT_INT8 = 4,
	SPYRE_DT_INT32 = 5,
	SPYRE_DT_INT64 = 6,	/* interface 1.9: integer-mode VEC only */
	SPYRE_DT_COUNT = 7,
};

/* SPYRE_I_MATMUL flags. */
#define SPYRE_MM_ACC			0x01 /* C += A x B (else C = A x B) */
#define SPYRE_MM_TRANS_B		0x02 /* B is stored N x K */

/*
 * SPYRE_I_LOAD flags (interface 1.3). GATHER: row r comes from byte
 * mem_off + idx[r] * mem_row_stride of the slot, idx[] being @rows int32
 * values in the scratchpad at byte offset core_stride2 (core_div and
 * core_stride must be 0); an index outside the slot fails the job.
 */
#define SPYRE_LOAD_GATHER		0x01
/*
 * Interface 1.12, MCAST: one LPDDR5 read delivered over the ring into the
 * scratchpad of every core of core_mask (same sp_off); the instruction runs
 * once for all of them, when each has it next on its LSU and holds its
 * wait tokens. core_div, core_stride and core_stride2 must be 0.
 */
#define SPYRE_LOAD_MCAST		0x02

/* SPYRE_I_VEC flags. */
#define SPYRE_VEC_SRC1_COL		0x01 /* src1 holds one value per row */
/*
 * Interface 1.9, integer mode: sources (int8, int32, int64, sign-extended;
 * a float source for COPY only) are computed on as 64-bit two's-complement
 * integers, wrapping; an integer dtype_out keeps the low bits of the
 * result, a float one gets it rounded to nearest even (through fp32). The
 * immediate is the 64-bit integer imm1 << 32 | imm0. Only the functions
 * the card spec lists for integer mode are valid; integer FLOORDIV and REM
 * by zero fail the job with SPYRE_CMD_ERR_ARITH.
 */
#define SPYRE_VEC_INT			0x02

/* Vector functions (spyre_insn.u.vec.func). */
enum spyre_isa_vfunc {
	SPYRE_VF_COPY = 0,	/* dst = src0 (converts dtype -> dtype_out; 1.4: bits if equal) */
	SPYRE_VF_FILL,		/* dst = imm0 */
	SPYRE_VF_SCALE,		/* dst = src0 * imm0 + imm1 */
	SPYRE_VF_ADD,		/* dst = src0 + src1 */
	SPYRE_VF_SUB,
	SPYRE_VF_MUL,
	SPYRE_VF_DIV,
	SPYRE_VF_MAX,
	SPYRE_VF_MIN,
	SPYRE_VF_RELU,
	SPYRE_VF_GELU,		/* exact: x/2 * (1 + erf(x / sqrt 2)) */
	SPYRE_VF_SILU,
	SPYRE_VF_SIGMOID,
	SPYRE_VF_TANH,
	SPYRE_VF_EXP,
	SPYRE_VF_LOG,
	SPYRE_VF_SQRT,
	SPYRE_VF_RSQRT,
	SPYRE_VF_RECIP,
	SPYRE_VF_SOFTMAX_ROW,	/* each row: softmax over cols */
	SPYRE_VF_SUM_ROW,	/* dst[r] = sum of row r */
	SPYRE_VF_MAX_ROW,	/* dst[r] = max of row r */
	/* interface 1.3: binary, 1.0 or 0.0 (NaN: false, except NE) */
	SPYRE_VF_CMP_EQ,
	SPYRE_VF_CMP_NE,
	SPYRE_VF_CMP_LT,
	SPYRE_VF_CMP_LE,
	SPYRE_VF_CMP_GT,
	SPYRE_VF_CMP_GE,
	SPYRE_VF_SELECT,	/* 1.3: dst = src1 != 0 ? src0 : imm0 */
	SPYRE_VF_ARGMAX_ROW,	/* 1.3: dst[r] = index of the first max of row r */
	SPYRE_VF_CUMSUM_ROW,	/* 1.3: each row: running sum over cols */
	/* interface 1.4: unary, fp32 (see the card spec for their accuracy) */
	SPYRE_VF_SIN,		/* dst = sin(src0), radians */
	SPYRE_VF_COS,		/* dst = cos(src0), radians */
	SPYRE_VF_ERF,		/* dst = erf(src0) */
	/* interface 1.9, integer mode (SPYRE_VEC_INT) only */
	SPYRE_VF_NEG,		/* dst = -src0 (wraps) */
	SPYRE_VF_ABS,		/* dst = |src0| (the minimum wraps to itself) */
	SPYRE_VF_NOT,		/* dst = ~src0 */
	SPYRE_VF_AND,		/* dst = src0 & src1 */
	SPYRE_VF_OR,		/* dst = src0 | src1 */
	SPYRE_VF_XOR,		/* dst = src0 ^ src1 */
	SPYRE_VF_SHL,		/* dst = src0 << src1; 0 when src1 < 0 or >= 64 */
	SPYRE_VF_SHR,		/* dst = src0 >> src1 (arithmetic); src1 < 0 or >= 64: >> 63 */
	SPYRE_VF_FLOORDIV,	/* dst = floor(src0 / src1); MIN / -1 wraps to MIN */
	SPYRE_VF_REM,		/* dst = src0 - floor(src0 / src1) * src1 (src1's sign) */
	SPYRE_VF_COUNT,
};

/**
 * struct spyre_insn_mem - SPYRE_I_LOAD / SPYRE_I_STORE operands
 * @slot: argument slot (0..SPYRE_MAX_ARGS - 1; 0..15 before interface 1.7)
 *	or SPYRE_ISA_SLOT_WS
 * @rsvd: zero
 * @core_div: 0: the offset of a core is rank * core_stride; otherwise the
 *            rank is split into (rank % core_div, rank / core_div)
 * @rows: rows to move (>= 1)
 * @mem_off: byte offset in the slot/workspace of row 0 on rank 0
 * @core_stride: bytes added per step of rank % core_div
 * @core_stride2: bytes added per step of rank / core_div
 * @mem_row_stride: bytes between rows in device memory
 * @row_bytes: bytes per row; costs whole 128-byte sticks
 * @sp_off: scratchpad byte offset of row 0
 * @sp_row_stride: bytes between rows in the scratchpad
 *
 * A core's rank is the number of set bits of core_mask below its index.
 */
struct spyre_insn_mem {
	uint8_t slot;
	uint8_t rsvd;
	uint16_t core_div;
	uint32_t rows;
	uint64_t mem_off;
	uint64_t core_stride;
	uint64_t core_stride2;
	uint32_t mem_row_stride;
	uint32_t row_bytes;
	uint32_t sp_off;
	uint32_t sp_row_stride;
};

/**
 * struct spyre_insn_mm - SPYRE_I_MATMUL operands (scratchpad only)
 * @m: rows of A and C
 * @n: columns of B and C
 * @k: columns of A, rows of B
 * @rsvd: zero
 * @a_off: scratchpad byte offset of A (dtype, M x K, row stride lda)
 * @b_off: of B (dtype, K x N, or N x K with SPYRE_MM_TRANS_B; stride ldb)
 * @c_off: of C (dtype_out: FP32 for float inputs, INT32 for INT8)
 * @lda: row stride of A in elements
 * @ldb: row stride of B in elements
 * @ldc: row stride of C in elements
 * @rsvd2: zero
 */
struct spyre_insn_mm {
	uint16_t m, n, k;
	uint16_t rsvd;
	uint32_t a_off, b_off, c_off;
	uint32_t lda, ldb, ldc;
	uint32_t rsvd2[4];
};

/**
 * struct spyre_insn_vec - SPYRE_I_VEC operands (scratchpad only)
 * @func: enum spyre_isa_vfunc
 * @rsvd: zero
 * @rows: rows
 * @cols: columns (elements per row)
 * @src0_off: byte offset of src0 (dtype); @src0_stride: row stride, elements
 * @src1_off: byte offset of src1 (dtype); @src1_stride: row stride, elements
 *            (0 broadcasts one row to all rows)
 * @dst_off: byte offset of dst (dtype_out); @dst_stride: row stride, elements
 * @imm0: fp32 immediate (bits)
 * @imm1: fp32 immediate (bits)
 * @rsvd2: zero
 */
struct spyre_insn_vec {
	uint8_t func;
	uint8_t rsvd[3];
	uint32_t rows, cols;
	uint32_t src0_off, src0_stride;
	uint32_t src1_off, src1_stride;
	uint32_t dst_off, dst_stride;
	uint32_t imm0, imm1;
	uint32_t rsvd2;
};

/**
 * struct spyre_insn - one 64-byte instruction
 * @op: enum spyre_isa_op
 * @flags: per-op flags (NOP: the unit)
 * @dtype: element type of the sources
 * @dtype_out: element type of the destination
 * @core_mask: cores that execute the instruction (bit n = core n)
 * @wait: tokens to wait for and consume, per core
 * @signal: tokens to produce at completion, per core
 * @rsvd: zero
 * @u: operands
 */
struct spyre_insn {
	uint8_t op;
	uint8_t flags;
	uint8_t dtype;
	uint8_t dtype_out;
	uint32_t core_mask;
	uint16_t wait;
	uint16_t signal;
	uint32_t rsvd;
	union {
		struct spyre_insn_mem mem;
		struct spyre_insn_mm mm;
		struct spyre_insn_vec vec;
		uint8_t raw[48];
	} u;
};

#ifdef __cplusplus
static_assert(sizeof(struct spyre_prog_header) == SPYRE_PROG_HEADER_SIZE, "header");
static_assert(sizeof(struct spyre_insn) == SPYRE_PROG_INSN_SIZE, "insn");
#else
_Static_assert(sizeof(struct spyre_prog_header) == SPYRE_PROG_HEADER_SIZE, "header");
_Static_assert(sizeof(struct spyre_insn) == SPYRE_PROG_INSN_SIZE, "insn");
#endif

#endif /* SPYRE_ISA_H */
