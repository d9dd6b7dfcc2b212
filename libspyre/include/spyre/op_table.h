/* SPDX-License-Identifier: MIT */
/*
 * The op table: every op the op library knows by name, one row each. The
 * enums of ops.h, the library's names, dtype checks and card-interface
 * gates, and the PyTorch plugin's bindings, lowerings, eager registrations
 * and OpInfo allow-list are all made from these rows (at compile time here,
 * at run time through spyre_op_table() in the plugin). Adding an op the card
 * can already compute is a row here plus its expression in
 * src/graph/graph_ops.c (Documentation/adding-an-op.rst).
 *
 * A row: X(ENUM, value, "name", iface, dtypes, result, flags)
 *
 * ENUM    the enum constant's suffix (SPYRE_UN_<ENUM>, SPYRE_BIN_<ENUM>,
 *         SPYRE_RED_<ENUM>)
 * value   its value: never reused or renumbered (an ABI); a new op takes
 *         the next free value of its kind, the row may go anywhere
 * name    PyTorch's name of the op (aten::<name>), used in messages
 * iface   the oldest card interface that runs it, SPYRE_IFACE(1, minor);
 *         older cards get -EOPNOTSUPP naming the interface it needs
 * dtypes  the input dtypes it takes (SPYRE_DTYPES_*); others get
 *         -EOPNOTSUPP naming the dtype. int32 and int64 inputs are
 *         computed exactly, in the vector unit's integer mode, so they need
 *         interface 1.9 (SPYRE_IFACE_INT) whatever @iface says; only a
 *         row reading its operands as truth values (SPYRE_OPF_TRUTH) takes
 *         int32 from @iface on (x != 0 is exact in fp32).
 *         spyre_op_iface() gives the interface for one dtype.
 * result  SPYRE_RESULT_SAME (the input's dtype) or SPYRE_RESULT_BOOL
 * flags   SPYRE_OPF_TORCH: aten::<name> is exactly this op on tensors, so
 *         the plugin registers its eager forms and lowers it from the row
 *         (ops PyTorch reaches otherwise, e.g. gelu's approximate argument,
 *         leave it out and are bound by hand); SPYRE_OPF_TRUTH: operands
 *         are read as truth values (x != 0), as logical ops do;
 *         SPYRE_OPF_TRUE_DIV: integer inputs give PyTorch's default float
 *         dtype (true division), for the plugin's type promotion
 */
#ifndef SPYRE_OP_TABLE_H
#define SPYRE_OP_TABLE_H

/* A card interface version, encoded as spyre_device_props.hw_version. */
#define SPYRE_IFACE(major, minor) (((major) << 16) | (minor))
/* Exact integers: the vector unit's integer mode and int64 elements. */
#define SPYRE_IFACE_INT SPYRE_IFACE(1, 9)

/* Sets of dtypes: bit (1 << enum spyre_dtype). */
#define SPYRE_DTYPE_BIT(dt) (1u << (dt))
#define SPYRE_DTYPES_FLOAT                                                                         \
	(SPYRE_DTYPE_BIT(SPYRE_FLOAT32) | SPYRE_DTYPE_BIT(SPYRE_FLOAT16) |                          \
	 SPYRE_DTYPE_BIT(SPYRE_BFLOAT16))
/* every dtype the vector unit loads (int64 is two words, not an element) */
#define SPYRE_DTYPES_VECTOR                                                                        \
	(SPYRE_DTYPES_FLOAT | SPYRE_DTYPE_BIT(SPYRE_INT8) | SPYRE_DTYPE_BIT(SPYRE_INT32) |          \
	 SPYRE_DTYPE_BIT(SPYRE_BOOL))

/* computed exactly in integer mode (interface 1.9) */
#define SPYRE_DTYPES_INT (SPYRE_DTYPE_BIT(SPYRE_INT32) | SPYRE_DTYPE_BIT(SPYRE_INT64))
#define SPYRE_DTYPES_NUM (SPYRE_DTYPES_FLOAT | SPYRE_DTYPES_INT)

#define SPYRE_OPF_TORCH 0x1u
#define SPYRE_OPF_TRUTH 0x2u
#define SPYRE_OPF_TRUE_DIV 0x4u

/* Elementwise functions of one tensor (spyre_op_unary, spyre_graph_unary). */
#define SPYRE_UNARY_OPS(X)                                                                         \
	X(NEG, 0, "neg", SPYRE_IFACE(1, 0), SPYRE_DTYPES_NUM, SPYRE_RESULT_SAME, SPYRE_OPF_TORCH)   \
	X(ABS, 1, "abs", SPYRE_IFACE(1, 0), SPYRE_DTYPES_NUM, SPYRE_RESULT_SAME, SPYRE_OPF_TORCH)   \
	X(EXP, 2, "exp", SPYRE_IFACE(1, 0), SPYRE_DTYPES_FLOAT, SPYRE_RESULT_SAME, SPYRE_OPF_TORCH) \
	X(LOG, 3, "log", SPYRE_IFACE(1, 0), SPYRE_DTYPES_FLOAT, SPYRE_RESULT_SAME, SPYRE_OPF_TORCH) \
	X(SQRT, 4, "sqrt", SPYRE_IFACE(1, 0), SPYRE_DTYPES_FLOAT, SPYRE_RESULT_SAME,                \
	  SPYRE_OPF_TORCH)                                                                         \
	X(RSQRT, 5, "rsqrt", SPYRE_IFACE(1, 0), SPYRE_DTYPES_FLOAT, SPYRE_RESULT_SAME,              \
	  SPYRE_OPF_TORCH)                                                                         \
	X(RECIPROCAL, 6, "reciprocal", SPYRE_IFACE(1, 0), SPYRE_DTYPES_FLOAT, SPYRE_RESULT_SAME,    \
	  SPYRE_OPF_TORCH)                                                                         \
	X(TANH, 7, "tanh", SPYRE_IFACE(1, 0), SPYRE_DTYPES_FLOAT, SPYRE_RESULT_SAME,                \
	  SPYRE_OPF_TORCH)                                                                         \
	X(SIGMOID, 8, "sigmoid", SPYRE_IFACE(1, 0), SPYRE_DTYPES_FLOAT, SPYRE_RESULT_SAME,          \
	  SPYRE_OPF_TORCH)                                                                         \
	X(RELU, 9, "relu", SPYRE_IFACE(1, 0), SPYRE_DTYPES_FLOAT, SPYRE_RESULT_SAME,                \
	  SPYRE_OPF_TORCH)                                                                         \
	/* aten::gelu(x, approximate): the plugin picks GELU or GELU_TANH */                       \
	X(GELU, 10, "gelu", SPYRE_IFACE(1, 0), SPYRE_DTYPES_FLOAT, SPYRE_RESULT_SAME, 0)            \
	X(GELU_TANH, 11, "gelu_tanh", SPYRE_IFACE(1, 0), SPYRE_DTYPES_FLOAT, SPYRE_RESULT_SAME, 0)  \
	X(SILU, 12, "silu", SPYRE_IFACE(1, 0), SPYRE_DTYPES_FLOAT, SPYRE_RESULT_SAME,                \
	  SPYRE_OPF_TORCH)                                                                         \
	/* aten::square is a composite PyTorch runs as pow(x, 2) */                                \
	X(SQUARE, 13, "square", SPYRE_IFACE(1, 0), SPYRE_DTYPES_FLOAT, SPYRE_RESULT_SAME, 0)        \
	X(SIN, 14, "sin", SPYRE_IFACE(1, 4), SPYRE_DTYPES_FLOAT, SPYRE_RESULT_SAME, SPYRE_OPF_TORCH) \
	X(COS, 15, "cos", SPYRE_IFACE(1, 4), SPYRE_DTYPES_FLOAT, SPYRE_RESULT_SAME, SPYRE_OPF_TORCH) \
	X(ERF, 16, "erf", SPYRE_IFACE(1, 4), SPYRE_DTYPES_FLOAT, SPYRE_RESULT_SAME, SPYRE_OPF_TORCH) \
	X(LOGICAL_NOT, 17, "logical_not", SPYRE_IFACE(1, 3),                                        \
	  SPYRE_DTYPES_VECTOR | SPYRE_DTYPE_BIT(SPYRE_INT64), SPYRE_RESULT_BOOL,                   \
	  SPYRE_OPF_TORCH | SPYRE_OPF_TRUTH)                                                       \
	X(LOG2, 18, "log2", SPYRE_IFACE(1, 0), SPYRE_DTYPES_FLOAT, SPYRE_RESULT_SAME,                \
	  SPYRE_OPF_TORCH)                                                                         \
	/* ~x: integers in integer mode; on bool it is logical not */                              \
	X(BITWISE_NOT, 19, "bitwise_not", SPYRE_IFACE(1, 3),                                        \
	  SPYRE_DTYPES_INT | SPYRE_DTYPE_BIT(SPYRE_BOOL), SPYRE_RESULT_SAME, SPYRE_OPF_TORCH)      \
	/* to the nearest integer, ties to even (fp32 magic-number addition) */                    \
	X(ROUND, 20, "round", SPYRE_IFACE(1, 3), SPYRE_DTYPES_FLOAT, SPYRE_RESULT_SAME,              \
	  SPYRE_OPF_TORCH)

/* Elementwise functions of two broadcast tensors of one dtype. */
#define SPYRE_BINARY_OPS(X)                                                                        \
	/* bool add/mul/maximum/minimum: or/and, exact in fp32 */                                  \
	X(ADD, 0, "add", SPYRE_IFACE(1, 0), SPYRE_DTYPES_NUM | SPYRE_DTYPE_BIT(SPYRE_BOOL),         \
	  SPYRE_RESULT_SAME, SPYRE_OPF_TORCH)                                                      \
	X(SUB, 1, "sub", SPYRE_IFACE(1, 0), SPYRE_DTYPES_NUM, SPYRE_RESULT_SAME, SPYRE_OPF_TORCH)   \
	X(MUL, 2, "mul", SPYRE_IFACE(1, 0), SPYRE_DTYPES_NUM | SPYRE_DTYPE_BIT(SPYRE_BOOL),         \
	  SPYRE_RESULT_SAME, SPYRE_OPF_TORCH)                                                      \
	X(DIV, 3, "div", SPYRE_IFACE(1, 0), SPYRE_DTYPES_FLOAT, SPYRE_RESULT_SAME,                 \
	  SPYRE_OPF_TORCH | SPYRE_OPF_TRUE_DIV)                                                    \
	X(MAX, 4, "maximum", SPYRE_IFACE(1, 0), SPYRE_DTYPES_NUM | SPYRE_DTYPE_BIT(SPYRE_BOOL),     \
	  SPYRE_RESULT_SAME,                                                                       \
	  SPYRE_OPF_TORCH)                                                                         \
	X(MIN, 5, "minimum", SPYRE_IFACE(1, 0), SPYRE_DTYPES_NUM | SPYRE_DTYPE_BIT(SPYRE_BOOL),     \
	  SPYRE_RESULT_SAME,                                                                       \
	  SPYRE_OPF_TORCH)                                                                         \
	X(EQ, 6, "eq", SPYRE_IFACE(1, 3), SPYRE_DTYPES_NUM, SPYRE_RESULT_BOOL, SPYRE_OPF_TORCH)     \
	X(NE, 7, "ne", SPYRE_IFACE(1, 3), SPYRE_DTYPES_NUM, SPYRE_RESULT_BOOL, SPYRE_OPF_TORCH)     \
	X(LT, 8, "lt", SPYRE_IFACE(1, 3), SPYRE_DTYPES_NUM, SPYRE_RESULT_BOOL, SPYRE_OPF_TORCH)     \
	X(LE, 9, "le", SPYRE_IFACE(1, 3), SPYRE_DTYPES_NUM, SPYRE_RESULT_BOOL, SPYRE_OPF_TORCH)     \
	X(GT, 10, "gt", SPYRE_IFACE(1, 3), SPYRE_DTYPES_NUM, SPYRE_RESULT_BOOL, SPYRE_OPF_TORCH)    \
	X(GE, 11, "ge", SPYRE_IFACE(1, 3), SPYRE_DTYPES_NUM, SPYRE_RESULT_BOOL, SPYRE_OPF_TORCH)    \
	X(LOGICAL_AND, 12, "logical_and", SPYRE_IFACE(1, 3),                                        \
	  SPYRE_DTYPES_VECTOR | SPYRE_DTYPE_BIT(SPYRE_INT64), SPYRE_RESULT_BOOL,                   \
	  SPYRE_OPF_TORCH | SPYRE_OPF_TRUTH)                                                       \
	X(LOGICAL_OR, 13, "logical_or", SPYRE_IFACE(1, 3),                                          \
	  SPYRE_DTYPES_VECTOR | SPYRE_DTYPE_BIT(SPYRE_INT64), SPYRE_RESULT_BOOL,                   \
	  SPYRE_OPF_TORCH | SPYRE_OPF_TRUTH)                                                       \
	/* integer ops (bool: and/or/xor of truth values, exact in fp32 from 1.3) */               \
	X(BITWISE_AND, 14, "bitwise_and", SPYRE_IFACE(1, 3),                                        \
	  SPYRE_DTYPES_INT | SPYRE_DTYPE_BIT(SPYRE_BOOL), SPYRE_RESULT_SAME, SPYRE_OPF_TORCH)      \
	X(BITWISE_OR, 15, "bitwise_or", SPYRE_IFACE(1, 3),                                          \
	  SPYRE_DTYPES_INT | SPYRE_DTYPE_BIT(SPYRE_BOOL), SPYRE_RESULT_SAME, SPYRE_OPF_TORCH)      \
	X(BITWISE_XOR, 16, "bitwise_xor", SPYRE_IFACE(1, 3),                                        \
	  SPYRE_DTYPES_INT | SPYRE_DTYPE_BIT(SPYRE_BOOL), SPYRE_RESULT_SAME, SPYRE_OPF_TORCH)      \
	/* floor division and its remainder; by zero the job fails with -EDOM */                  \
	X(FLOOR_DIVIDE, 17, "floor_divide", SPYRE_IFACE_INT, SPYRE_DTYPES_INT, SPYRE_RESULT_SAME,   \
	  SPYRE_OPF_TORCH)                                                                         \
	X(REMAINDER, 18, "remainder", SPYRE_IFACE_INT, SPYRE_DTYPES_INT, SPYRE_RESULT_SAME,         \
	  SPYRE_OPF_TORCH)                                                                         \
	X(LSHIFT, 19, "bitwise_left_shift", SPYRE_IFACE_INT, SPYRE_DTYPES_INT, SPYRE_RESULT_SAME,   \
	  SPYRE_OPF_TORCH)                                                                         \
	X(RSHIFT, 20, "bitwise_right_shift", SPYRE_IFACE_INT, SPYRE_DTYPES_INT, SPYRE_RESULT_SAME,  \
	  SPYRE_OPF_TORCH)

/* Reductions over dims (spyre_op_reduce, spyre_op_reduce_dims). */
#define SPYRE_REDUCE_OPS(X)                                                                        \
	X(SUM, 0, "sum", SPYRE_IFACE(1, 0), SPYRE_DTYPES_NUM, SPYRE_RESULT_SAME, SPYRE_OPF_TORCH)   \
	X(MEAN, 1, "mean", SPYRE_IFACE(1, 0), SPYRE_DTYPES_FLOAT, SPYRE_RESULT_SAME,                \
	  SPYRE_OPF_TORCH)                                                                         \
	X(MAX, 2, "amax", SPYRE_IFACE(1, 0), SPYRE_DTYPES_NUM, SPYRE_RESULT_SAME, SPYRE_OPF_TORCH)  \
	X(MIN, 3, "amin", SPYRE_IFACE(1, 0), SPYRE_DTYPES_NUM, SPYRE_RESULT_SAME, SPYRE_OPF_TORCH)

#endif /* SPYRE_OP_TABLE_H */
