/* SPDX-License-Identifier: MIT */
/*
 * Graph IR of the op library. Values are strided views of storages; a
 * storage is a graph input, a constant (weight) or the contiguous result of
 * a node. Nodes are kernels: "ew" (an expression over broadcast inputs, see
 * kern.h) or "mm" (batched matmul with an ew epilogue). Eager ops build a
 * one-node graph through the same calls.
 */
#ifndef SPYRE_GRAPH_H
#define SPYRE_GRAPH_H

#include <pthread.h>
#include <stdbool.h>

#include "spyre/ops.h"
#include "../kernels/kern.h"
#include "spyre_hw.h"
#include "spyre_isa.h"

/*
 * ST_HOST_INPUT: an input that arrives in host memory; it lives in the
 * workspace, where each run's upload (an H2D step on the transfer stream
 * slot) puts it.
 */
enum { ST_INPUT, ST_CONST, ST_NODE, ST_HOST_INPUT };
/* NK_ATTN: fused attention (kernels/attn.c): a q, b k, in[0] v, in[1] the mask */
enum { NK_EW, NK_MM, NK_GATHER, NK_ATTN };

struct gstore {
	int kind;
	int node;			/* ST_NODE: producer */
	int io;				/* input index; ST_NODE: output index or -1 */
	struct spyre_buf buf;		/* ST_CONST */
	enum spyre_dtype dt;
	int64_t numel;			/* elements of the storage */
	uint64_t bytes;			/* bytes bound (inputs/consts: the whole extent) */
	/* planning */
	int uses, last_use;
	bool planned;
	uint64_t ws_off;
};

struct gval {
	enum spyre_dtype dt;
	unsigned int ndim;
	int64_t shape[SPYRE_MAX_DIMS];
	int64_t strides[SPYRE_MAX_DIMS];
	int64_t off;			/* elements into the storage */
	int store;
};

struct gnode {
	int kind;
	bool dead;
	const char *name;
	int out;			/* value */
	/* ew: iteration space; mm: [batch.., M, N] (the epilogue's space) */
	unsigned int ndim;
	int64_t shape[SPYRE_MAX_DIMS];
	bool out_col;			/* ew: reduces the last iteration dim */
	unsigned int nin;		/* ew inputs; mm: epilogue inputs incl. slot 0 */
	int in[K_MAX_IN];		/* values (mm: in[0] unused) */
	unsigned int nuops;
	struct uop u[K_MAX_UOPS];
	int a, b;			/* mm: b viewed as [.., K, N]; gather: table, indices */
	/*
	 * mm: a second product A x b2 (b2 shaped and strided as b), epilogue
	 * value 1 (in[1] unused): a gated MLP's two projections in one kernel
	 */
	bool dual;
	int b2;
	/* row nodes: iteration dim d is dim perm[d] of the input; the reduced
	 * dim rdim comes last (kept in the output with size 1 when keepdim) */
	bool permuted, keepdim;
	int perm[SPYRE_MAX_DIMS];
	int rdim;
	/* attention: scale, causal, mask kind (1 added, 2 bool keep) */
	float attn_scale;
	uint8_t attn_causal, attn_mask;
};

struct spyre_graph {
	spyre_ops *ops;
	struct gval *v;
	unsigned int nv, capv;
	struct gstore *st;
	unsigned int nst, capst;
	struct gnode *n;
	unsigned int nn, capn;
	unsigned int ninputs;
	int *outputs;			/* values, noutputs of them (capout room) */
	unsigned int noutputs, capout;
	int iota;			/* value of the iota constant, -1 until needed */
	int64_t iota_len;
};

/* ---- ops context (ops_ctx.c) ---- */
struct spyre_ops {
	spyre_device *dev;
	unsigned int ncores;
	uint32_t hw_version;		/* card interface: major << 16 | minor */
	struct cache_entry *lru;	/* most recent first */
	struct memo_slot *memo;		/* eager fast path (ops_ctx.c), lazily allocated */
	unsigned int entries, capacity;
	struct spyre_ops_stats stats;
	struct spyre_bo **iota;		/* fp32 0..len-1 constants, kept alive */
	int64_t *iota_len;
	unsigned int niota;
	pthread_mutex_t lock;		/* the cache */
	pthread_mutex_t iota_lock;	/* the constants */
};

/* Device BO holding fp32 0..n-1 (n rounded up); cached per context. */
int ops_iota(spyre_ops *ops, int64_t n, struct spyre_buf *out);

/* ---- building (graph.c) ---- */
int g_value(spyre_graph *g, enum spyre_dtype dt, unsigned int ndim, const int64_t *shape,
	    const int64_t *strides, int64_t off, int store);
int g_input_tensor(spyre_graph *g, const struct spyre_tensor *t, spyre_value *out);
const struct gval *g_val(const spyre_graph *g, spyre_value v);
bool g_contiguous(const struct gval *v);
/* Validate a public tensor descriptor; @what names it in the message. */
int g_check_tensor(const char *call, const char *what, const struct spyre_tensor *t);
/* The same for a tensor that must be in @mem. */
int g_check_tensor_in(const char *call, const char *what, const struct spyre_tensor *t,
		      enum spyre_mem mem);
/* Bytes from element 0 to one past the last element the strides reach. */
uint64_t g_extent_bytes(enum spyre_dtype dt, unsigned int ndim, const int64_t *shape,
			const int64_t *strides);
unsigned int g_isa_dtype(enum spyre_dtype dt);
int g_fill(spyre_graph *g, enum spyre_dtype dt, unsigned int ndim, const int64_t *shape,
	   double value, spyre_value *out);
void g_shape_str(char *buf, size_t len, unsigned int ndim, const int64_t *shape);

/* ---- lowering (lower.c) ---- */
struct spyre_compiled {
	spyre_ops *ops;
	spyre_recipe *recipe;		/* NULL when the graph has no work */
	spyre_recipe **per_op;		/* SPYRE_COMPILE_OP_BY_OP: one per program */
	spyre_bo *ws;			/* SPYRE_COMPILE_OP_BY_OP: the intermediates */
	char **labels;			/* SPYRE_COMPILE_OP_BY_OP: each program's trace label */
	unsigned int nlabels;
	spyre_program **progs;
	unsigned int nprogs;
	unsigned int ninputs, noutputs;
	bool *host_in;			/* per input: a host input (ninputs + 1 entries) */
	struct gval *io;		/* shapes/dtypes of inputs then outputs */
	struct spyre_compiled_stats stats;
	/* what spyre_compiled_serialize writes (serial.c) */
	struct gimage {
		void *p;		/* a program image, as loaded */
		size_t size;
	} *img;
	unsigned int nimg, img_cap;
	struct cstep *steps;		/* the recipe step of each program */
	uint64_t ws_size;		/* the recipe's workspace */
	struct gupload *up;		/* host inputs' uploads, in input order */
	unsigned int nup, up_cap;
};

/* One host input's upload: argument slot @input into the workspace. */
struct gupload {
	unsigned int input;
	uint64_t ws_off, bytes;
};

/* The operands of one recipe step (one program). */
struct cstep {
	unsigned int nops;
	struct spyre_operand ops[SPY_MAX_ARGS];
};

/* A generated program before it is loaded: its image and step operands. */
struct gprog {
	void *img;
	size_t size;
	struct cstep st;
};

/*
 * Merge runs of consecutive programs of @p (@*n of them) into one program
 * each, a BARRIER between their parts (card interface 1.8): one LAUNCH
 * instead of several. Workspace operands become the LAUNCH's workspace,
 * the others share up to SPY_MAX_ARGS slots. Rewrites @p and @*n; images
 * that are replaced are freed. Out of memory it merges less, never fails:
 * it is an optimisation. (merge.c)
 */
void g_merge_programs(spyre_compiled *c, struct gprog *p, unsigned int *n);

/*
 * The recipe of @c from its programs, steps and uploads (compiling and
 * loading share it): the uploads on stream slot 1 signal event 0, which
 * the compute steps on slot 0 wait for; with uploads, runs alternate
 * between two workspace copies so one run's uploads overlap the previous
 * run's compute.
 */
int g_make_recipe(spyre_compiled *c);

/*
 * Load @p as program @k of @c (c->progs and c->steps have room): the image
 * moves into c->img (kept for spyre_compiled_serialize; p->img becomes
 * NULL), the operands into c->steps[k]. Compiling and loading share it.
 */
int g_load_program(spyre_compiled *c, unsigned int k, struct gprog *p);

/* Compile @g; @key/@keylen receive the cache key (malloc'd) when non-NULL. */
int g_compile(spyre_graph *g, spyre_compiled **out, void **key, size_t *keylen);
int g_launch(spyre_compiled *c, spyre_stream *s, spyre_stream *transfer,
	     const struct spyre_tensor *inputs,
	     unsigned int ninputs, const struct spyre_tensor *outputs, unsigned int noutputs,
	     const char *call);

#endif
