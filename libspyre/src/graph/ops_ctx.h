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
/*
 * The eager fast path: @fkey (@len bytes, hash @hash) is an eager call's
 * own description (its op, arguments and tensors' dtypes, shapes and
 * strides: everything its one-node graph is built from), mapped to the
 * entry that call's lowering found, so that the same call again skips
 * building, lowering and keying the graph. Both with ops->lock held;
 * ops_memo_get returns the entry with a use taken, as ops_cache_get does.
 * An entry evicted from the cache leaves the memo with it.
 */
struct cache_entry *ops_memo_get(spyre_ops *ops, const void *fkey, size_t len, uint64_t hash);
void ops_memo_set(spyre_ops *ops, const void *fkey, size_t len, uint64_t hash,
		  struct cache_entry *e);
/* Under no lock: the launch is queued. */
void ops_cache_put(spyre_ops *ops, struct cache_entry *e);

#endif
