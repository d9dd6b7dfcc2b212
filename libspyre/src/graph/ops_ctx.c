// SPDX-License-Identifier: MIT
/*
 * The op library context: the bounded LRU cache of compiled eager ops (key:
 * the lowered one-node graph, i.e. op, shapes, strides, dtypes, layouts and
 * SPYRE_OPS_VERSION) and the library's device constants.
 */
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "lower.h"
#include "ops_ctx.h"

struct cache_entry {
	struct cache_entry *prev, *next;
	void *key;
	size_t keylen;
	spyre_compiled *c;
	/*
	 * Eager calls launching it now (they launch outside ops->lock): an
	 * entry evicted while used is freed by its last user.
	 */
	unsigned int users;
	bool evicted;
};

/*
 * The eager fast path's table: direct-mapped by the call's hash (a
 * collision replaces the older call, which then takes the slow path once
 * and comes back). Four times the cache's default capacity, so that the
 * calls of a model's forward rarely collide.
 */
#define MEMO_SLOTS 1024u

struct memo_slot {
	uint64_t hash;
	void *fkey;
	size_t len;
	struct cache_entry *e;
};

int spyre_ops_create(spyre_device *dev, unsigned int cache_entries, spyre_ops **out)
{
	struct spyre_device_props props;
	spyre_ops *ops;
	int ret;

	if (!dev || !out)
		return spy_err(-EINVAL, "spyre_ops_create: device or out is NULL");
	ret = spyre_device_get_props(dev, &props);
	if (ret)
		return ret;
	ops = calloc(1, sizeof(*ops));
	if (!ops)
		return spy_err(-ENOMEM, "spyre_ops_create: out of memory");
	ops->dev = dev;
	ops->ncores = props.num_cores ? props.num_cores : 1;
	ops->hw_version = props.hw_version;
	if (ops->ncores > 32)
		ops->ncores = 32;
	ops->capacity = cache_entries ? cache_entries : 256;
	ops->stats.capacity = ops->capacity;
	pthread_mutex_init(&ops->lock, NULL);
	pthread_mutex_init(&ops->iota_lock, NULL);
	*out = ops;
	return 0;
}

static void entry_free(struct cache_entry *e)
{
	spyre_compiled_destroy(e->c);
	free(e->key);
	free(e);
}

int spyre_ops_destroy(spyre_ops *ops)
{
	struct cache_entry *e, *n;
	unsigned int i;

	if (!ops)
		return spy_err(-EINVAL, "spyre_ops_destroy: ops is NULL");
	for (e = ops->lru; e; e = n) {
		n = e->next;
		entry_free(e);
	}
	if (ops->memo)
		for (i = 0; i < MEMO_SLOTS; i++)
			free(ops->memo[i].fkey);
	free(ops->memo);
	for (i = 0; i < ops->niota; i++)
		spyre_bo_destroy(ops->iota[i]);
	free(ops->iota);
	free(ops->iota_len);
	pthread_mutex_destroy(&ops->lock);
	pthread_mutex_destroy(&ops->iota_lock);
	free(ops);
	return 0;
}

int spyre_ops_get_stats(spyre_ops *ops, struct spyre_ops_stats *st)
{
	if (!ops || !st)
		return spy_err(-EINVAL, "spyre_ops_get_stats: NULL argument");
	pthread_mutex_lock(&ops->lock);
	*st = ops->stats;
	st->entries = ops->entries;
	pthread_mutex_unlock(&ops->lock);
	return 0;
}

static void unlink_entry(spyre_ops *ops, struct cache_entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		ops->lru = e->next;
	if (e->next)
		e->next->prev = e->prev;
	e->prev = e->next = NULL;
}

static void push_front(spyre_ops *ops, struct cache_entry *e)
{
	e->next = ops->lru;
	e->prev = NULL;
	if (ops->lru)
		ops->lru->prev = e;
	ops->lru = e;
}

/* Caller holds ops->lock: @e, leaving the cache, leaves the memo too. */
static void memo_forget(spyre_ops *ops, const struct cache_entry *e)
{
	unsigned int i;

	if (!ops->memo)
		return;
	for (i = 0; i < MEMO_SLOTS; i++)
		if (ops->memo[i].e == e) {
			free(ops->memo[i].fkey);
			memset(&ops->memo[i], 0, sizeof(ops->memo[i]));
		}
}

/* Caller holds ops->lock. */
struct cache_entry *ops_memo_get(spyre_ops *ops, const void *fkey, size_t len, uint64_t hash)
{
	struct memo_slot *m;
	struct cache_entry *e;

	if (!ops->memo)
		return NULL;
	m = &ops->memo[hash % MEMO_SLOTS];
	if (!m->e || m->hash != hash || m->len != len || memcmp(m->fkey, fkey, len))
		return NULL;
	e = m->e;
	if (ops->lru != e) {
		unlink_entry(ops, e);
		push_front(ops, e);
	}
	ops->stats.hits++;
	e->users++;
	return e;
}

/* Caller holds ops->lock; copies @fkey. Out of memory it records nothing. */
void ops_memo_set(spyre_ops *ops, const void *fkey, size_t len, uint64_t hash,
		  struct cache_entry *e)
{
	struct memo_slot *m;
	void *k;

	if (!ops->memo) {
		ops->memo = calloc(MEMO_SLOTS, sizeof(*ops->memo));
		if (!ops->memo)
			return;
	}
	k = malloc(len);
	if (!k)
		return;
	memcpy(k, fkey, len);
	m = &ops->memo[hash % MEMO_SLOTS];
	free(m->fkey);
	m->hash = hash;
	m->fkey = k;
	m->len = len;
	m->e = e;
}

/* Caller holds ops->lock. */
struct cache_entry *ops_cache_get(spyre_ops *ops, const void *key, size_t len)
{
	struct cache_entry *e;

	for (e = ops->lru; e; e = e->next)
		if (e->keylen == len && !memcmp(e->key, key, len)) {
			unlink_entry(ops, e);
			push_front(ops, e);
			ops->stats.hits++;
			e->users++;
			return e;
		}
	ops->stats.misses++;
	return NULL;
}

/* Caller holds ops->lock; takes @key and @c. */
int ops_cache_insert(spyre_ops *ops, void *key, size_t len, spyre_compiled *c,
		     struct cache_entry **out)
{
	struct cache_entry *e = calloc(1, sizeof(*e)), *last;

	if (!e)
		return -ENOMEM;
	e->key = key;
	e->keylen = len;
	e->c = c;
	e->users = 1;
	push_front(ops, e);
	ops->entries++;
	while (ops->entries > ops->capacity) {
		for (last = ops->lru; last->next; last = last->next)
			;
		unlink_entry(ops, last);
		memo_forget(ops, last);
		ops->entries--;
		ops->stats.evictions++;
		if (last->users)
			last->evicted = true;	/* its last user frees it */
		else
			entry_free(last);	/* waits for its launches in flight */
	}
	*out = e;
	return 0;
}

spyre_compiled *ops_cache_compiled(const struct cache_entry *e)
{
	return e->c;
}

void ops_cache_put(spyre_ops *ops, struct cache_entry *e)
{
	bool last;

	pthread_mutex_lock(&ops->lock);
	last = !--e->users && e->evicted;
	pthread_mutex_unlock(&ops->lock);
	if (last)
		entry_free(e);
}

int ops_iota(spyre_ops *ops, int64_t n, struct spyre_buf *out)
{
	spyre_bo *host = NULL, *dev = NULL, **nb;
	spyre_stream *s = NULL;
	struct spyre_buf hb, db;
	int64_t len, *nl, i;
	unsigned int k;
	float *f;
	void *map;
	int ret;

	pthread_mutex_lock(&ops->iota_lock);
	for (k = 0; k < ops->niota; k++)
		if (ops->iota_len[k] >= n) {
			*out = spyre_bo_buf(ops->iota[k]);
			out->size = (uint64_t)ops->iota_len[k] * 4;
			pthread_mutex_unlock(&ops->iota_lock);
			return 0;
		}
	len = n < 4096 ? 4096 : (n + 4095) / 4096 * 4096;
	if (len > (1 << 24)) {
		pthread_mutex_unlock(&ops->iota_lock);
		return spy_err(-EOPNOTSUPP, "op library: index constants above 2^24 are not exact "
			       "in fp32 (asked for %lld)", (long long)n);
	}
	ret = spyre_bo_create(ops->dev, (uint64_t)len * 4, SPYRE_MEM_HOST, &host);
	if (!ret)
		ret = spyre_bo_map(host, &map);
	if (!ret) {
		f = map;
		for (i = 0; i < len; i++)
			f[i] = (float)i;
		ret = spyre_bo_create(ops->dev, (uint64_t)len * 4, SPYRE_MEM_DEVICE, &dev);
	}
	if (!ret)
		ret = spyre_stream_create(ops->dev, SPYRE_ENGINE_DMA, &s);
	if (!ret) {
		hb = spyre_bo_buf(host);
		db = spyre_bo_buf(dev);
		ret = spyre_memcpy_async(s, &db, &hb, (uint64_t)len * 4);
		if (!ret)
			ret = spyre_stream_synchronize(s);
		spyre_stream_destroy(s);
	}
	if (host)
		spyre_bo_destroy(host);
	nb = ret ? NULL : realloc(ops->iota, (ops->niota + 1) * sizeof(*nb));
	if (nb)
		ops->iota = nb;
	nl = nb ? realloc(ops->iota_len, (ops->niota + 1) * sizeof(*nl)) : NULL;
	if (nl)
		ops->iota_len = nl;
	if (!ret && (!nb || !nl))
		ret = spy_err(-ENOMEM, "op library: out of memory");
	if (ret) {
		if (dev)
			spyre_bo_destroy(dev);
		pthread_mutex_unlock(&ops->iota_lock);
		return ret;
	}
	ops->iota[ops->niota] = dev;
	ops->iota_len[ops->niota++] = len;
	*out = spyre_bo_buf(dev);
	out->size = (uint64_t)len * 4;
	pthread_mutex_unlock(&ops->iota_lock);
	return 0;
}
