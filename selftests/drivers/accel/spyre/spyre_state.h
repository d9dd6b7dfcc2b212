/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a long test (fuzzer, stress, hot removal) must leave as it found
 * it: every card's BO count, free device memory and pinned host memory;
 * a smoke test that proves a card still moves data correctly; and a
 * module unload and reload.
 */
#ifndef SPYRE_STATE_H
#define SPYRE_STATE_H

#include <stdint.h>

#include "spyre_util.h"

struct sp_state {
	int ncards;
	uint64_t bos[SP_MAX_CARDS];
	uint64_t mem_free[SP_MAX_CARDS];
	int64_t host_used[SP_MAX_CARDS];
};

/* Snapshot every card's counters (needs root for debugfs). */
int sp_state_take(struct sp_state *s);
/*
 * Wait (bounded) until every counter is back to @base: jobs release their
 * BOs in cleanup work after their fences signal, so this polls. Prints
 * each difference that remains; 0 when none does.
 */
int sp_state_settle(const struct sp_state *base);
/* Fill, copy and read back through both engines of @d; 0 or -errno. */
int sp_smoke(struct sp_dev *d);
/* Unload the spyre module (no file may be open) and load it again. */
int sp_module_reload(void);

#endif /* SPYRE_STATE_H */
