/* SPDX-License-Identifier: MIT */
/*
 * libspyre op library and graph compiler: PyTorch-level tensor ops lowered
 * to card programs and recipes.
 *
 * One lowering serves both modes:
 *
 * - Eager: spyre_op_*() run one op now on a stream. An eager op is a
 *   one-node graph, compiled once into a recipe and cached by (op, shapes,
 *   strides, dtypes, layouts, library version); later calls with the same
 *   signature only bind the tensors and launch (one SUBMIT).
 * - Graph: spyre_graph_*() record a graph of ops on symbolic values;
 *   spyre_graph_compile() fuses elementwise chains into their producers,
 *   plans one workspace for the intermediates and emits one recipe. Weights
 *   (spyre_graph_constant) are bound once at build time, inputs and outputs
 *   at each run.
 *
 * Conventions are those of spyre.h: 0 or a negative errno, and a message in
 * spyre_last_error(). Bad inputs (mismatched shapes, unsupported dtype,
 * misaligned or out-of-range tensors) fail before anything is launched. An
 * op the card cannot run fails with -EOPNOTSUPP naming op, shape and dtype;
 * nothing falls back to the host.
 */
#ifndef SPYRE_OPS_H
#define SPYRE_OPS_H

#include <stdint.h>

#include "spyre/spyre.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever generated programs change: part of every cache key. */
#define SPYRE_OPS_VERSION 10

#define SPYRE_MAX_DIMS 6

/* Element types (the values of the card's ISA dtypes where they exist). */
enum spyre_dtype {
	SPYRE_FLOAT32 = 0,
	SPYRE_FLOAT16 = 1,
	SPYRE_BFLOAT16 = 2,
	SPYRE_INT8 = 4,
	SPYRE_INT32 = 5,
	SPYRE_INT64 = 6,	/* an 8-byte card element from interface 1.9 */
	SPYRE_BOOL = 7,		/* one byte, 0 or 1 (comparisons, masks) */
};

/* Device layouts. */
enum spyre_layout {
	SPYRE_LAYOUT_STRIDED = 0,	/* element (i0..in) at sum(i_k * strides[k]) */
};

/*
 * A tensor in device memory: @buf.bo + @buf.offset holds element 0 (the
 * offset a multiple of the element size); @buf.size bytes from there must
 * cover every element the strides reach. Strides are in elements, >= 0
 * (0 expands a dimension). Dimensions of size 0 are allowed (no work).
 */
struct spyre_tensor {
	enum spyre_dtype dtype;
	enum spyre_layout layout;
	unsigned int ndim;			/* 0 (a scalar) .. SPYRE_MAX_DIMS */
	int64_t shape[SPYRE_MAX_DIMS];
	int64_t strides[SPYRE_MAX_DIMS];
	struct spyre_buf buf;
};

/* Bytes per element (0 for an unknown dtype). */
unsigned int spyre_dtype_bytes(enum spyre_dtype dt);
const char *spyre_dtype_name(enum spyre_dtype dt);
/* A contiguous (row-major) tensor over @buf. */
struct spyre_tensor spyre_tensor_make(enum spyre_dtype dt, unsigned int ndim,
				      const int64_t *shape, struct spyre_buf buf);
/* Elements of the shape; bytes of a contiguous tensor of that shape. */
int64_t spyre_tensor_numel(const struct spyre_tensor *t);
uint64_t spyre_tensor_nbytes(const struct spyre_tensor *t);

/* ---- Op library context: the program/recipe cache of one device ------ */

typedef struct spyre_ops spyre_ops;

/* @cache_entries: compiled eager ops kept (LRU); 0 = default (256). */
int spyre_ops_create(spyre_device *dev, unsigned int cache_entries, spyre_ops **out);
/*
 * Frees the cache and the constants. Destroy the context's graphs and
 * compiled graphs first; launches still in flight are waited for.
 */
int spyre_ops_destroy(spyre_ops *ops);

struct spyre_ops_stats {
	uint64_t hits, misses, evictions;	/* eager-op cache */
	uint64_t entries, capacity;
	uint64_t programs_built;		/* card programs generated so far */
	uint64_t launches;			/* eager recipe launches */
	uint64_t graphs_loaded;			/* spyre_compiled_deserialize calls */
};
int spyre_ops_get_stats(spyre_ops *ops, struct spyre_ops_stats *st);

/* ---- Op kinds ------------------------------------------------------------
 *
 * Made from the op table (op_table.h): its rows give each op's value, name,
 * dtypes and the card interface it needs.
 */
#include "spyre/op_table.h"

#define SPYRE_UN_ENUM_(e, v, ...) SPYRE_UN_##e = v,
#define SPYRE_BIN_ENUM_(e, v, ...) SPYRE_BIN_##e = v,
#define SPYRE_RED_ENUM_(e, v, ...) SPYRE_RED_##e = v,
#define SPYRE_OP_ONE_(...) +1

enum spyre_unary_op {
	SPYRE_UNARY_OPS(SPYRE_UN_ENUM_)
	SPYRE_UN_COUNT = 0 SPYRE_UNARY_OPS(SPYRE_OP_ONE_),
};

enum spyre_binary_op {
	SPYRE_BINARY_OPS(SPYRE_BIN_ENUM_)
	SPYRE_BIN_COUNT = 0 SPYRE_BINARY_OPS(SPYRE_OP_ONE_),
};

enum spyre_reduce_op {
	SPYRE_REDUCE_OPS(SPYRE_RED_ENUM_)
	SPYRE_RED_COUNT = 0 SPYRE_REDUCE_OPS(SPYRE_OP_ONE_),
};

enum spyre_op_kind { SPYRE_OPK_UNARY, SPYRE_OPK_BINARY, SPYRE_OPK_REDUCE };
enum spyre_op_result { SPYRE_RESULT_SAME, SPYRE_RESULT_BOOL };

/* One row of the op table. */
struct spyre_op_info {
	enum spyre_op_kind kind;
	int op;				/* its enum spyre_{unary,binary,reduce}_op */
	const char *name;		/* PyTorch's name */
	uint32_t iface;			/* oldest card interface, as hw_version */
	uint32_t dtypes;		/* input dtypes, bit 1 << enum spyre_dtype */
	enum spyre_op_result result;
	unsigned int flags;		/* SPYRE_OPF_* */
};

/* The whole table, unary rows first, then binary, then reductions. */
const struct spyre_op_info *spyre_op_table(unsigned int *count);
/* The row of op @op of @kind, NULL when there is none. */
const struct spyre_op_info *spyre_op_find(enum spyre_op_kind kind, int op);
/*
 * 1 when @ops's card runs @op on inputs of dtype @dt (its interface and the
 * row's dtypes), 0 when it does not: the op would fail with -EOPNOTSUPP.
 */
int spyre_ops_supports(spyre_ops *ops, const struct spyre_op_info *op, enum spyre_dtype dt);
/*
 * The card interface (as hw_version) @op needs for inputs of dtype @dt:
 * its row's, or 1.9 (SPYRE_IFACE_INT) for int32 and int64, which the card
 * computes exactly in its vector unit's integer mode.
 */
uint32_t spyre_op_iface(const struct spyre_op_info *op, enum spyre_dtype dt);

/* ---- Eager ops: run now on compute stream @s ------------------------------
 *
 * Outputs are preallocated by the caller with the op's result shape and
 * dtype (any strides whose innermost dimension is contiguous, or any
 * strides for elementwise ops). Inputs of a binary op share one dtype;
 * broadcasting follows NumPy. Float dtypes compute in fp32 on the card and
 * round once to the output dtype.
 */
int spyre_op_unary(spyre_ops *ops, spyre_stream *s, enum spyre_unary_op op,
		   const struct spyre_tensor *x, const struct spyre_tensor *out);
int spyre_op_binary(spyre_ops *ops, spyre_stream *s, enum spyre_binary_op op,
		    const struct spyre_tensor *a, const struct spyre_tensor *b,
		    const struct spyre_tensor *out);
/* out = a op scalar (@reverse: scalar op a). */
int spyre_op_binary_scalar(spyre_ops *ops, spyre_stream *s, enum spyre_binary_op op,
			   const struct spyre_tensor *a, double scalar, int reverse,
			   const struct spyre_tensor *out);
/*
 * out = x ** p for a scalar p: integer p (|p| <= 64) by multiplications
 * (and a reciprocal for p < 0), 0.5 as sqrt, any other p as exp(p log x)
 * (NaN for x < 0, as PyTorch).
 */
int spyre_op_pow_scalar(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *x, double p,
			const struct spyre_tensor *out);
/* out = min(max(x, lo), hi) */
int spyre_op_clamp(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *x, double lo,
		   double hi, const struct spyre_tensor *out);
/*
 * Copy any strided view into @out (same shape); a cast when dtypes differ,
 * as PyTorch casts: float -> float rounds to nearest even; on card
 * interface 1.9 float -> integer truncates toward zero (NaN and out of
 * range: the type's minimum, as x86), integer -> integer keeps the low
 * bits, integer -> float rounds to nearest even, -> bool is x != 0. Before
 * 1.9 only the casts fp32 gets exactly right run (int8/int32 -> float,
 * -> bool, same-type copies); int64 and the others return -EOPNOTSUPP.
 */
int spyre_op_copy(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *src,
		  const struct spyre_tensor *out);
/* out = value everywhere (integers: exact to |value| <= 2^53, else -EOPNOTSUPP). */
int spyre_op_fill(spyre_ops *ops, spyre_stream *s, double value, const struct spyre_tensor *out);
/*
 * out[i] = start + i * step for a 1-D @out of n elements (torch.arange with
 * n = ceil((end - start) / step), computed by the caller). Computed on the
 * card in fp32 as i * (float)step + (float)start, rounded once to out's
 * dtype: fp32/fp16/bf16; int32 or int64 exactly in the integer type (card
 * interface 1.9; integral start and step, |start|, |step| <= 2^53, else
 * -EOPNOTSUPP); n <= 2^24.
 */
int spyre_op_arange(spyre_ops *ops, spyre_stream *s, double start, double step,
		    const struct spyre_tensor *out);
/*
 * out[..., M, N] = a[..., M, K] @ b[..., K, N], batch dims broadcast
 * (1-D operands as in torch.matmul are the caller's reshape).
 */
int spyre_op_matmul(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *a,
		    const struct spyre_tensor *b, const struct spyre_tensor *out);
/* out = x @ w^T + bias; w is [N, K] (PyTorch's weight), bias [N] or NULL. */
int spyre_op_linear(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *x,
		    const struct spyre_tensor *w, const struct spyre_tensor *bias,
		    const struct spyre_tensor *out);
/*
 * Weight-only int8 linear: out = (x @ w^T) * scale + bias, per output
 * channel. x float [.., K]; w int8 [N, K] (PyTorch's weight layout, any
 * strides along one of its dims); scale [N] and bias [N] (or NULL) of x's
 * dtype. The card reads w as int8 (half the bytes of fp16) and widens each
 * chunk to x's dtype in the scratchpad (exact) before the PE array; the
 * product is fp32, scaled, biased and rounded once to out's dtype (x's).
 * Scales are applied as IEEE fp32 multiplies: an inf scale gives +-inf
 * where the column's product is nonzero and NaN where it is 0; a NaN scale
 * gives a NaN column.
 */
int spyre_op_linear_w8(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *x,
		       const struct spyre_tensor *w, const struct spyre_tensor *scale,
		       const struct spyre_tensor *bias, const struct spyre_tensor *out);
/* Reduction over any one dimension @dim (negative counts from the end). */
int spyre_op_reduce(spyre_ops *ops, spyre_stream *s, enum spyre_reduce_op op,
		    const struct spyre_tensor *x, int dim, int keepdim,
		    const struct spyre_tensor *out);
/*
 * Reduction over the @ndims distinct dims @dims (any order, negative from
 * the end; ndims 0: all dims, giving a 0-dim result without keepdim), as
 * torch.sum(x, dims). Dims adjacent in memory are one kernel; others are
 * reduced one after another (mean: sums, then one scale). @out must be
 * contiguous when more than one dim is reduced.
 */
int spyre_op_reduce_dims(spyre_ops *ops, spyre_stream *s, enum spyre_reduce_op op,
			 const struct spyre_tensor *x, const int *dims, unsigned int ndims,
			 int keepdim, const struct spyre_tensor *out);
int spyre_op_softmax(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *x, int dim,
		     const struct spyre_tensor *out);
/*
 * Card interface 1.3: argmax over @dim (first maximum, NaN wins; int32
 * indices), cumsum over @dim (fp32 running sum, rounded once).
 */
int spyre_op_argmax(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *x, int dim,
		    int keepdim, const struct spyre_tensor *out);
int spyre_op_cumsum(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *x, int dim,
		    const struct spyre_tensor *out);
int spyre_op_log_softmax(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *x,
			 int dim, const struct spyre_tensor *out);
/* Over the last dimension; weight/bias [C] or NULL. */
int spyre_op_layer_norm(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *x,
			const struct spyre_tensor *w, const struct spyre_tensor *b, double eps,
			const struct spyre_tensor *out);
/*
 * spyre_op_layer_norm that also writes each row's mean and 1/sqrt(var +
 * eps) (biased variance), x's dtype, into @mean and @rstd (x's shape with
 * the last dim 1), as autograd keeps them: one launch for all three.
 */
int spyre_op_layer_norm_stats(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *x,
			      const struct spyre_tensor *w, const struct spyre_tensor *b,
			      double eps, const struct spyre_tensor *out,
			      const struct spyre_tensor *mean, const struct spyre_tensor *rstd);
/*
 * Scaled dot-product attention in one launch: q [.., Lq, D], k [.., Lk, D],
 * v [.., Lk, Dv] (float types), out [.., Lq, Dv]. Scores and softmax in
 * fp32 (half-precision scores of a few hundred would lose whole units
 * before the exponentials), the probabilities rounded once to v's dtype.
 * @mask (NULL: none) broadcasts to [.., Lq, Lk]: a float one is added to
 * the scores, a bool one keeps the scores where it is true. @causal masks
 * key j > query i (top-left aligned). @scale 0: 1/sqrt(D). A query whose
 * scores are all -inf (every key masked) gets 0, as PyTorch's SDPA (its
 * safe softmax), not NaN; a mask needs card interface 1.3.
 */
int spyre_op_sdpa(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *q,
		  const struct spyre_tensor *k, const struct spyre_tensor *v,
		  const struct spyre_tensor *mask, int causal, double scale,
		  const struct spyre_tensor *out);
/*
 * Paged attention over vLLM's block-table KV cache, prefill and decode
 * alike, in one launch. @kv_cache [blocks, kv_heads, block_size, 2 * D]
 * (K in columns 0..D-1, V in D..2D-1, q's dtype); @block_table int32
 * [R, max_blocks]: request r's context position p is in block
 * block_table[r, p / block_size], row p % block_size; @seq_lens int32 [R]:
 * each request's context length, its queries included (at most max_blocks
 * * block_size). @q [R, H, Q, D] holds each request's queries right
 * aligned: query row i sits at position seq_lens[r] - Q + i and sees the
 * keys 0..that position (decode: Q = 1); a row at a negative position (a
 * request with fewer than Q queries) sees no key and gives 0. H a multiple
 * of kv_heads (query head h reads KV head h / (H / kv_heads)). @out
 * [R, H, Q, D]. The K/V rows are gathered through the block table on the
 * card (LOAD GATHER, card interface 1.3); scores and softmax in fp32 as
 * spyre_op_sdpa. @scale 0: 1/sqrt(D). Cache rows at or past a request's
 * length never reach its result, whatever they hold (NaN included). A
 * block id outside [0, blocks) fails
 * the launch, as embedding's indices; the cache may have at most 2^24
 * rows (blocks * kv_heads * block_size).
 */
int spyre_op_paged_attention(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *q,
			     const struct spyre_tensor *kv_cache,
			     const struct spyre_tensor *block_table,
			     const struct spyre_tensor *seq_lens, double scale,
			     const struct spyre_tensor *out);
int spyre_op_rms_norm(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *x,
		      const struct spyre_tensor *w, double eps, const struct spyre_tensor *out);
/* Concatenate @n tensors along @dim into @out (one copy per input). */
int spyre_op_cat(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *xs,
		 unsigned int n, int dim, const struct spyre_tensor *out);
/*
 * Selection (card interface 1.3): out = cond ? a : b (cond any dtype,
 * nonzero = true; a, b one float dtype, broadcast); masked_fill: out = mask ?
 * value : x; tril/triu: keep j - i <= k (tril) or >= k (triu) of the last
 * two dims, 0 elsewhere (float or bool x).
 */
int spyre_op_where(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *cond,
		   const struct spyre_tensor *a, const struct spyre_tensor *b,
		   const struct spyre_tensor *out);
int spyre_op_masked_fill(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *x,
			 const struct spyre_tensor *mask, double value,
			 const struct spyre_tensor *out);
int spyre_op_tril(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *x, int64_t k,
		  int upper, const struct spyre_tensor *out);
/*
 * out[..., D] = weight[idx[...], :]; idx int32 or int64 (below 2^31);
 * weight float, or int32/int64 on interface 1.9 (rows moved exactly). On
 * interface 1.3 cards a gather: an index outside [0, V) fails the launch
 * (reported by the next synchronize); before 1.3 a one-hot product, where
 * such an index gives a zero row.
 */
int spyre_op_embedding(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *weight,
		       const struct spyre_tensor *idx, const struct spyre_tensor *out);
/*
 * torch.gather: out[i] = x[i with dim @dim replaced by idx[i]]; idx int32 or
 * int64 with x's number of dims, no larger than x outside @dim; out has
 * idx's shape and x's dtype (float, int32, int64; integers exact on
 * interface 1.9, before it through fp32, exact to 2^24).
 * x may have at most 2^24 elements (the linear indices are built in fp32).
 * An index outside [0, x.shape[dim]) fails the launch, as embedding's.
 */
int spyre_op_gather(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *x, int dim,
		    const struct spyre_tensor *idx, const struct spyre_tensor *out);

/*
 * Random bits: Philox4x32-10 (the counter-based generator of CUDA's curand
 * and PyTorch's CUDA generator) computed on the card (interface 1.9).
 * spyre_philox_key() fills the int64 key table of a call (the ten round
 * keys of @seed, the first @counter and the @offset) on the host; the
 * caller copies it to the device. spyre_op_philox() writes out[j, w] =
 * word w (0..3, each in [0, 2^32)) of Philox(counter = (counter + j,
 * offset), key = seed) into an int64 [m, 4] @out: m from 1 to 2^24, or a
 * multiple of 4096 up to 2^36. The same key gives the same bits.
 */
#define SPYRE_PHILOX_KEY_LEN 22
void spyre_philox_key(uint64_t seed, uint64_t offset, uint64_t counter,
		      int64_t key[SPYRE_PHILOX_KEY_LEN]);
int spyre_op_philox(spyre_ops *ops, spyre_stream *s, const struct spyre_tensor *key,
		    const struct spyre_tensor *out);

/* ---- Graphs ------------------------------------------------------------------
 *
 * Values are small integers handed out by the graph (>= 0). Graph calls
 * return 0 or -errno like every call; a failed call leaves the graph as it
 * was. View calls (reshape, permute, transpose, slice, expand) make values
 * that alias their source and move no data.
 */
typedef struct spyre_graph spyre_graph;
typedef struct spyre_compiled spyre_compiled;
typedef int spyre_value;

int spyre_graph_create(spyre_ops *ops, spyre_graph **out);
int spyre_graph_destroy(spyre_graph *g);

/*
 * A run-time input (contiguous, bound at each run, in declaration order).
 * A graph has at most SPYRE_RECIPE_MAX_ARGS inputs and outputs together
 * (-E2BIG past that): each is an argument slot of the graph's recipe.
 */
int spyre_graph_input(spyre_graph *g, enum spyre_dtype dt, unsigned int ndim,
		      const int64_t *shape, spyre_value *out);
/*
 * A run-time input that arrives in host memory (a SPYRE_MEM_HOST buffer,
 * contiguous, bound at each run like any input). The compiled graph
 * uploads it itself: each run copies it into the graph's workspace with an
 * H2D step on the transfer stream and the compute stream waits for that
 * copy with an event, so the upload needs no separate copy call and no
 * device buffer from the caller. Runs of such a graph alternate between
 * two copies of the workspace: a run's uploads overlap the previous run's
 * compute (spyre_compiled_run_with_transfer).
 */
int spyre_graph_host_input(spyre_graph *g, enum spyre_dtype dt, unsigned int ndim,
			   const int64_t *shape, spyre_value *out);
/* A weight: the tensor is bound now and must outlive the compiled graph. */
int spyre_graph_constant(spyre_graph *g, const struct spyre_tensor *t, spyre_value *out);
/* Mark @v as an output (bound at each run, contiguous, in marking order). */
int spyre_graph_output(spyre_graph *g, spyre_value v);

int spyre_graph_unary(spyre_graph *g, enum spyre_unary_op op, spyre_value x, spyre_value *out);
int spyre_graph_binary(spyre_graph *g, enum spyre_binary_op op, spyre_value a, spyre_value b,
		       spyre_value *out);
int spyre_graph_binary_scalar(spyre_graph *g, enum spyre_binary_op op, spyre_value a,
			      double scalar, int reverse, spyre_value *out);
int spyre_graph_clamp(spyre_graph *g, spyre_value x, double lo, double hi, spyre_value *out);
int spyre_graph_pow_scalar(spyre_graph *g, spyre_value x, double p, spyre_value *out);
int spyre_graph_cast(spyre_graph *g, spyre_value x, enum spyre_dtype dt, spyre_value *out);
/* The [m, 4] words of spyre_op_philox from key value @key. */
int spyre_graph_philox(spyre_graph *g, spyre_value key, int64_t m, spyre_value *out);
/* A new [n] value start + i * step of dtype @dt, as spyre_op_arange. */
int spyre_graph_arange(spyre_graph *g, double start, double step, int64_t n,
		       enum spyre_dtype dt, spyre_value *out);
int spyre_graph_where(spyre_graph *g, spyre_value cond, spyre_value a, spyre_value b,
		      spyre_value *out);
int spyre_graph_masked_fill(spyre_graph *g, spyre_value x, spyre_value mask, double value,
			    spyre_value *out);
int spyre_graph_tril(spyre_graph *g, spyre_value x, int64_t k, int upper, spyre_value *out);
/* A contiguous copy of a (view) value. */
int spyre_graph_contiguous(spyre_graph *g, spyre_value x, spyre_value *out);
int spyre_graph_matmul(spyre_graph *g, spyre_value a, spyre_value b, spyre_value *out);
/* bias: a value or -1 for none. */
int spyre_graph_linear(spyre_graph *g, spyre_value x, spyre_value w, spyre_value bias,
		       spyre_value *out);
/*
 * a [.., M, K] (float) @ b [.., K, N] (int8, widened on the card as
 * spyre_op_linear_w8's weight) -> a's dtype: a weight-only int8 product
 * whose scale the caller applies (an elementwise consumer fuses into the
 * product's epilogue).
 */
int spyre_graph_matmul_w8(spyre_graph *g, spyre_value a, spyre_value b, spyre_value *out);
/* spyre_op_linear_w8 in a graph (bias < 0: none). */
int spyre_graph_linear_w8(spyre_graph *g, spyre_value x, spyre_value w, spyre_value scale,
			  spyre_value bias, spyre_value *out);
int spyre_graph_reduce(spyre_graph *g, enum spyre_reduce_op op, spyre_value x, int dim,
		       int keepdim, spyre_value *out);
int spyre_graph_reduce_dims(spyre_graph *g, enum spyre_reduce_op op, spyre_value x,
			    const int *dims, unsigned int ndims, int keepdim, spyre_value *out);
int spyre_graph_softmax(spyre_graph *g, spyre_value x, int dim, spyre_value *out);
int spyre_graph_argmax(spyre_graph *g, spyre_value x, int dim, int keepdim, spyre_value *out);
int spyre_graph_cumsum(spyre_graph *g, spyre_value x, int dim, spyre_value *out);
int spyre_graph_log_softmax(spyre_graph *g, spyre_value x, int dim, spyre_value *out);
/* w, b: values or -1. */
int spyre_graph_layer_norm(spyre_graph *g, spyre_value x, spyre_value w, spyre_value b,
			   double eps, spyre_value *out);
int spyre_graph_rms_norm(spyre_graph *g, spyre_value x, spyre_value w, double eps,
			 spyre_value *out);
/*
 * Rotate half (rotary position embeddings): along the last dim (even size
 * 2h), out = cat(-x[..., h:], x[..., :h]); float dtypes. One row kernel,
 * into which products and sums with it fuse (x * cos + rotate_half(x) *
 * sin: one pass over x).
 */
int spyre_graph_rotate_half(spyre_graph *g, spyre_value x, spyre_value *out);
int spyre_graph_embedding(spyre_graph *g, spyre_value weight, spyre_value idx,
			  spyre_value *out);
int spyre_graph_gather(spyre_graph *g, spyre_value x, int dim, spyre_value idx,
		       spyre_value *out);
/*
 * Scaled dot-product attention, composed: q [.., Lq, D], k [.., Lk, D],
 * v [.., Lk, Dv]; @causal masks key j > query i; @mask: an additive mask
 * value broadcastable to [.., Lq, Lk], or -1. @scale 0: 1/sqrt(D).
 */
int spyre_graph_sdpa(spyre_graph *g, spyre_value q, spyre_value k, spyre_value v,
		     spyre_value mask, int causal, double scale, spyre_value *out);

/* Paged attention, as spyre_op_paged_attention, on values. */
int spyre_graph_paged_attention(spyre_graph *g, spyre_value q, spyre_value kv_cache,
				spyre_value block_table, spyre_value seq_lens, double scale,
				spyre_value *out);

/* Concatenation of @n values along @dim (copies into slices of the result). */
int spyre_graph_cat(spyre_graph *g, const spyre_value *xs, unsigned int n, int dim,
		    spyre_value *out);

/* Views. */
int spyre_graph_reshape(spyre_graph *g, spyre_value x, unsigned int ndim, const int64_t *shape,
			spyre_value *out);
int spyre_graph_permute(spyre_graph *g, spyre_value x, const int *perm, spyre_value *out);
int spyre_graph_transpose(spyre_graph *g, spyre_value x, int d0, int d1, spyre_value *out);
int spyre_graph_slice(spyre_graph *g, spyre_value x, int dim, int64_t start, int64_t end,
		      spyre_value *out);
int spyre_graph_expand(spyre_graph *g, spyre_value x, unsigned int ndim, const int64_t *shape,
		       spyre_value *out);

/* Shape and dtype of a value. */
int spyre_graph_value_info(spyre_graph *g, spyre_value v, enum spyre_dtype *dt,
			   unsigned int *ndim, int64_t *shape);

/* Compile: the graph may be destroyed afterwards. */
int spyre_graph_compile(spyre_graph *g, spyre_compiled **out);
/*
 * Compile with options: SPYRE_COMPILE_NO_FUSION keeps one kernel per op;
 * SPYRE_COMPILE_OP_BY_OP runs like eager ops do (one recipe and SUBMIT per
 * kernel, every intermediate in its own buffer, no merging), for
 * comparisons; SPYRE_COMPILE_NO_MERGE (above) a LAUNCH per program.
 */
#define SPYRE_COMPILE_NO_FUSION 0x1u
#define SPYRE_COMPILE_OP_BY_OP 0x2u
/*
 * On cards from interface 1.8 consecutive programs are merged into one,
 * with a BARRIER between them: one LAUNCH (and its setup cost) for several
 * kernels. SPYRE_COMPILE_NO_MERGE keeps a LAUNCH per program.
 */
#define SPYRE_COMPILE_NO_MERGE 0x4u
int spyre_graph_compile_flags(spyre_graph *g, unsigned int flags, spyre_compiled **out);

struct spyre_compiled_stats {
	unsigned int nodes;		/* ops recorded (views excluded) */
	unsigned int kernels;		/* kernels after fusion */
	unsigned int programs;		/* card programs launched per run */
	unsigned int submits;		/* SUBMITs per run */
	uint64_t workspace_bytes;	/* planned workspace (peak) */
	uint64_t intermediate_bytes;	/* sum of all intermediates */
};
int spyre_compiled_get_stats(const spyre_compiled *c, struct spyre_compiled_stats *st);
/*
 * Run on compute stream @s: @inputs and @outputs in declaration order,
 * each matching its value's shape and dtype, contiguous.
 */
int spyre_compiled_run(spyre_compiled *c, spyre_stream *s, const struct spyre_tensor *inputs,
		       unsigned int ninputs, const struct spyre_tensor *outputs,
		       unsigned int noutputs);
/*
 * spyre_compiled_run with the host inputs' uploads on @transfer (a stream
 * of the same device, normally a SPYRE_ENGINE_DMA one; NULL: on @s). Each
 * stream touched costs one SUBMIT per run. Returns once the run is queued:
 * host inputs must keep their bytes until the run completed.
 */
int spyre_compiled_run_with_transfer(spyre_compiled *c, spyre_stream *s, spyre_stream *transfer,
				     const struct spyre_tensor *inputs, unsigned int ninputs,
				     const struct spyre_tensor *outputs, unsigned int noutputs);
int spyre_compiled_destroy(spyre_compiled *c);

/*
 * A compiled graph as bytes (malloc'd into *@out, the caller frees): its
 * program images, recipe steps, workspace plan and argument bindings, for
 * an on-disk compile cache. Weights and other tensors are arguments bound
 * at launch and are not in the bytes; a graph holding a constant tensor
 * (spyre_graph_constant) or compiled SPYRE_COMPILE_OP_BY_OP is refused
 * (-EOPNOTSUPP).
 */
int spyre_compiled_serialize(const spyre_compiled *c, void **out, size_t *len);
/*
 * The compiled graph back, on the context's device, without lowering or
 * generating a program: -ESTALE when the bytes were made by another
 * SPYRE_OPS_VERSION, card interface version or core count, -EBADMSG when
 * they are truncated, corrupt (checksum) or malformed.
 */
int spyre_compiled_deserialize(spyre_ops *ops, const void *buf, size_t len,
			       spyre_compiled **out);

#ifdef __cplusplus
}
#endif

#endif /* SPYRE_OPS_H */
