/* SPDX-License-Identifier: MIT */
/* Helpers shared by the graph builder files (graph*.c). */
#ifndef SPYRE_GRAPH_BUILD_H
#define SPYRE_GRAPH_BUILD_H

#include "graph.h"

/* An expression under construction: operand ids < K_MAX_IN are inputs. */
struct ewb {
	unsigned int nin, nuops;
	int in[K_MAX_IN];
	struct uop u[K_MAX_UOPS];
};

int g_grow(void **p, unsigned int *cap, unsigned int n, size_t sz);
int g_new_store(spyre_graph *g, int kind, enum spyre_dtype dt, int64_t numel);
int64_t g_numel_of(unsigned int ndim, const int64_t *shape);
int g_check_val(spyre_graph *g, const char *call, spyre_value v, const char *what);
int g_check_shape(const char *call, unsigned int ndim, const int64_t *shape);
int g_norm_dim(const char *call, const struct gval *x, int dim, int *out);
bool g_is_float(enum spyre_dtype dt);
int g_need_iface(spyre_graph *g, unsigned int minor, const char *call, const char *op,
		 const struct gval *x);
int g_need_select(spyre_graph *g, const char *call, const char *op, const struct gval *x);
int g_unsupported(const char *call, const char *op, const struct gval *x, const char *why);
/* -EOPNOTSUPP unless op table row @op takes @x's dtype on this card. */
int g_check_row(spyre_graph *g, const char *call, const struct spyre_op_info *op,
		const struct gval *x);

int g_ew_in(struct ewb *b, int value);
int g_ew_op(struct ewb *b, unsigned int func, int a, int bb, float i0, float i1);
int g_ew_const(struct ewb *b, float c);
void g_ew_fix(struct ewb *b);
int g_new_node(spyre_graph *g, const char *name, int kind, enum spyre_dtype dt,
	       unsigned int ondim, const int64_t *oshape, spyre_value *out);
int g_broadcast(const char *call, unsigned int na, const int64_t *a, unsigned int nb,
		const int64_t *b, unsigned int *nout, int64_t *out);
/* The fp32 iota constant (0, 1, ... n-1) as a graph value of shape [n]. */
int g_iota_value(spyre_graph *g, int64_t n, spyre_value *out);
int g_make_ew(spyre_graph *g, const char *call, const char *name, struct ewb *b,
	      enum spyre_dtype dt, spyre_value *out);
int g_make_mm(spyre_graph *g, const char *call, const char *name, spyre_value a,
	      spyre_value b, spyre_value *out);

/*
 * Softmax over the last dim whose all -inf rows give 0 (graph_ops.c): what
 * attention uses, as PyTorch's SDPA does. Needs card interface 1.3.
 */
int g_safe_softmax(spyre_graph *g, spyre_value x, spyre_value *out);

/*
 * Scaled dot-product attention with the scores and softmax in @sdt (q and
 * k cast to it, the probabilities cast to v's dtype); an additive @mask is
 * cast to @sdt, a bool one keeps the scores where it is true.
 * (graph_composite.c; spyre_graph_sdpa uses q's dtype.)
 */
int g_sdpa(spyre_graph *g, spyre_value q, spyre_value k, spyre_value v, spyre_value mask,
	   int causal, double scale, enum spyre_dtype sdt, spyre_value *out);

/* Exact integers in the vector unit's integer mode, interface 1.9 (graph_intops.c) */
bool g_is_int(enum spyre_dtype dt);
uint8_t g_int_t(enum spyre_dtype dt);
int g_need_int(spyre_graph *g, const char *call, const char *op, const struct gval *x);
int g_ew_iop(struct ewb *b, unsigned int func, int a, int bb, uint8_t t, int64_t k);
int g_ew_iconst(struct ewb *b, int64_t k, uint8_t t);
int g_int_as(struct ewb *b, int x, enum spyre_dtype dt, uint8_t t);
int g_int_binary(spyre_graph *g, const char *call, const struct spyre_op_info *row,
		 spyre_value a, spyre_value b, bool scalar, double s, int reverse,
		 spyre_value *out);
int g_int_unary(spyre_graph *g, const char *call, const struct spyre_op_info *row,
		spyre_value x, spyre_value *out);
int g_int_cast(spyre_graph *g, const char *call, spyre_value x, enum spyre_dtype dt,
	       spyre_value *out);
int g_int_fill(spyre_graph *g, enum spyre_dtype dt, unsigned int ndim, const int64_t *shape,
	       double value, spyre_value *out);
int g_int_arange(spyre_graph *g, const char *call, double start, double step, int64_t n,
		 enum spyre_dtype dt, spyre_value io, spyre_value *out);
int g_int_reduce_expr(spyre_graph *g, const char *call, const struct spyre_op_info *row,
		      spyre_value x, struct ewb *e);
int g_int_where(spyre_graph *g, const char *call, spyre_value cond, spyre_value a,
		spyre_value b, spyre_value *out);
int g_int_masked_fill(spyre_graph *g, const char *call, spyre_value x, spyre_value mask,
		      double value, spyre_value *out);
int g_int_clamp(spyre_graph *g, const char *call, spyre_value x, double lo, double hi,
		spyre_value *out);

#endif
