/* SPDX-License-Identifier: MIT */
/*
 * Op-library test helpers: device tensors filled from and read back into
 * double arrays, the host reference (double precision) and the per-dtype
 * tolerances, all in one place (Documentation/accel/spyre-ops.rst explains
 * them).
 */
#ifndef SPYRE_OPS_REF_H
#define SPYRE_OPS_REF_H

#include "harness.h"
#include "spyre/ops.h"

struct tctx {
	spyre_device *dev;
	spyre_stream *s;
	spyre_ops *ops;
};

struct dtensor {
	spyre_bo *bo;
	struct spyre_tensor t;
};

int tctx_open(spyre_device *dev, struct tctx *c);
void tctx_close(struct tctx *c);

/* A contiguous device tensor (room for @extra bytes more). */
int dt_new(struct tctx *c, struct dtensor *d, enum spyre_dtype dt, unsigned int ndim,
	   const int64_t *shape);
void dt_free(struct dtensor *d);
/* Element i of the tensor's logical (row-major) order in memory, via strides. */
int dt_write(struct tctx *c, struct dtensor *d, const double *v);
int dt_read(struct tctx *c, const struct dtensor *d, double *v);
/* The raw bytes of a contiguous tensor (int64 beyond 2^53, bit patterns). */
int dt_write_raw(struct tctx *c, struct dtensor *d, const void *p);
int dt_read_raw(struct tctx *c, const struct dtensor *d, void *p);
/* Round a value to a dtype (what the device stores). */
double round_to(enum spyre_dtype dt, double x);

/* Deterministic values in [lo, hi), rounded to @dt. */
void rnd_fill(double *v, int64_t n, double lo, double hi, unsigned int seed,
	      enum spyre_dtype dt);

/* Tolerances: |got - ref| <= atol(dt) + rtol(dt) * mag. */
double tol_abs(enum spyre_dtype dt);
double tol_rel(enum spyre_dtype dt);
/*
 * Compare; @mag NULL uses |ref| (elementwise), else per-element magnitude
 * (e.g. sum |a||b| of a dot product). NaN must match NaN, inf must match.
 * Returns the first bad index or -1, printing it.
 */
int64_t compare(const char *what, const double *got, const double *ref, const double *mag,
		int64_t n, enum spyre_dtype dt, double scale);

int64_t numel(unsigned int ndim, const int64_t *shape);

/*
 * An op context on @dev that sees card interface @ver ("1.3"): the sim
 * honours SPYRE_SIM_HW_VERSION; false on other backends.
 */
bool old_card_ops(spyre_device *dev, const char *ver, spyre_ops **ops);

#endif
