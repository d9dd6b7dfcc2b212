/* SPDX-License-Identifier: MIT */
/* The eager-op cache of an op library context (ops_ctx.c). */
#ifndef SPYRE_OPS_CTX_H
#define SPYRE_OPS_CTX_H

#include "graph.h"

struct cache_entry;

/*
 * Both with ops->lock held; each returns the entry with a use taken, so the
 * caller may launch its compiled graph after dropping the lock (ops_cache_put
 * when done: an entry evicted meanwhile is freed then).
 */
struct cache_entry *ops_cache_get(spyre_ops *ops, const void *key, size_t len);
int ops_cache_insert(spyre_ops *ops, void *key, size_t len, spyre_compiled *c,
		     struct cache_entry **out);
spyre_compiled *ops_cache_compiled(const struct cache_entry *e);
/* Under no lock: the launch is queued. */
void ops_cache_put(spyre_ops *ops, struct cache_entry *e);

#endif
