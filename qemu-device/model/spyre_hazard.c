// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Spyre card model: the hazard check (card property "hazard-check"). The
 * three units of a core run concurrently and are ordered only by program
 * order within a unit and by data tokens between units; a program that
 * reads scratchpad bytes another unit writes (or writes bytes another unit
 * reads or writes) without a token path between the two instructions
 * races, and its results would depend on timing. In this mode such a
 * launch fails with SPYRE_CMD_ERR_PROGRAM instead.
 *
 * Happens-before is tracked with a vector clock per unit (one entry per
 * unit of the core): an instruction ticks its unit's entry, a token signal
 * carries the signaller's clock, and a wait joins it into the waiter's.
 * Each 128-byte stick of the scratchpad remembers its last writer and the
 * last reader of each unit.
 */
#include <stdlib.h>
#include <string.h>

#include "spyre_exec.h"
#include "spyre_internal.h"

#define STICKS (SPYRE_MODEL_SCRATCHPAD_BYTES / SPYRE_ISA_STICK)

struct stick {
	uint32_t w_seq;			/* 0: never written in this launch */
	uint8_t w_unit;
	uint32_t r_seq[SPYRE_UNIT_COUNT];
};

struct card_hazard {
	struct stick s[STICKS];
	/* sticks [lo, hi) hold all this launch's marks (hi 0: none), so a launch clears only those */
	uint32_t lo, hi;
};

void card_hazard_launch(struct card_exec *e)
{
	unsigned int c;

	memset(e->vc, 0, sizeof(e->vc));
	for (c = 0; c < SPYRE_MODEL_MAX_CORES; c++)
		if (e->hz[c] && e->hz_used[c] && e->hz[c]->hi) {
			memset(&e->hz[c]->s[e->hz[c]->lo], 0,
			       (e->hz[c]->hi - e->hz[c]->lo) * sizeof(struct stick));
			e->hz[c]->lo = e->hz[c]->hi = 0;
		}
	memset(e->hz_used, 0, sizeof(e->hz_used));
}

void card_hazard_free(struct card_exec *e)
{
	unsigned int c;

	for (c = 0; c < SPYRE_MODEL_MAX_CORES; c++)
		free(e->hz[c]);
}

void card_hazard_wait(struct card_exec *e, unsigned int core, unsigned int unit,
		       const uint32_t *vc)
{
	unsigned int u;

	for (u = 0; u < SPYRE_UNIT_COUNT; u++)
		if (vc[u] > e->vc[core][unit][u])
			e->vc[core][unit][u] = vc[u];
}

/* A BARRIER orders every unit of @core after all of them: join their clocks. */
void card_hazard_barrier(struct card_exec *e, unsigned int core)
{
	uint32_t j[SPYRE_UNIT_COUNT] = { 0 };
	unsigned int u, k;

	for (u = 0; u < SPYRE_UNIT_COUNT; u++)
		for (k = 0; k < SPYRE_UNIT_COUNT; k++)
			if (e->vc[core][u][k] > j[k])
				j[k] = e->vc[core][u][k];
	for (u = 0; u < SPYRE_UNIT_COUNT; u++)
		memcpy(e->vc[core][u], j, sizeof(j));
}

static bool ordered(const uint32_t *vc, unsigned int unit, uint8_t other, uint32_t seq)
{
	return other == unit || vc[other] >= seq;
}

/* Sticks @first..@last of @h may get marks. */
static void touch(struct card_hazard *h, uint64_t first, uint64_t last)
{
	if (!h->hi || first < h->lo)
		h->lo = (uint32_t)first;
	if (last + 1 > h->hi)
		h->hi = (uint32_t)(last + 1);
}

uint32_t card_hazard_access(struct card_exec *e, unsigned int core, uint64_t off,
			     uint64_t rows, uint64_t stride, uint64_t bytes, bool write)
{
	unsigned int unit = e->cur_unit, u;
	const uint32_t *vc = e->vc[core][unit];
	uint64_t r, k;

	if (write && bytes && rows)
		card_sp_dirty(e, core, off, stride ? (rows - 1) * stride + bytes : bytes);
	if (!e->hazard_check || !bytes || !rows)
		return SPYRE_CMD_OK;
	if (!e->hz[core] && !(e->hz[core] = calloc(1, sizeof(*e->hz[core]))))
		return SPYRE_CMD_ERR_PROGRAM;
	e->hz_used[core] = true;
	if (!stride)
		rows = 1;	/* every row is the same bytes */
	touch(e->hz[core], off / SPYRE_ISA_STICK,
	      (off + (rows - 1) * stride + bytes - 1) / SPYRE_ISA_STICK);
	for (r = 0; r < rows; r++) {
		uint64_t a = off + r * stride;

		for (k = a / SPYRE_ISA_STICK; k <= (a + bytes - 1) / SPYRE_ISA_STICK; k++) {
			struct stick *s = &e->hz[core]->s[k];

			if (s->w_seq && !ordered(vc, unit, s->w_unit, s->w_seq)) {
				e->fault_addr = k * SPYRE_ISA_STICK;
				goto hazard;	/* RAW or WAW */
			}
			if (!write) {
				s->r_seq[unit] = vc[unit];
				continue;
			}
			for (u = 0; u < SPYRE_UNIT_COUNT; u++)
				if (s->r_seq[u] && !ordered(vc, unit, u, s->r_seq[u])) {
					e->fault_addr = k * SPYRE_ISA_STICK;
					goto hazard;	/* WAR */
				}
			s->w_seq = vc[unit];
			s->w_unit = unit;
			memset(s->r_seq, 0, sizeof(s->r_seq));
		}
	}
	return SPYRE_CMD_OK;
hazard:
	/* The completion record names the first unordered stick (interface 1.6). */
	e->fault_space = SPYRE_FAULT_SPACE_SCRATCHPAD;
	e->hazard_core = core;
	e->hazard_off = off;
	return SPYRE_CMD_ERR_PROGRAM;
}
