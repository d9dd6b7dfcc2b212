/* SPDX-License-Identifier: MIT */
/* The eager-op cache of an op library context (ops_ctx.c). */
#ifndef SPYRE_OPS_CTX_H
#define SPYRE_OPS_CTX_H

#include "graph.h"

/* Both with ops->lock held. */
spyre_compiled *ops_cache_find(spyre_ops *ops, const void *key, size_t len);
int ops_cache_insert(spyre_ops *ops, void *key, size_t len, spyre_compiled *c);

#endif
