/* SPDX-License-Identifier: GPL-2.0-or-later OR MIT */
/*
 * Spyre card model: program execution (the compute engine's cores).
 */
#ifndef SPYRE_EXEC_H
#define SPYRE_EXEC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spyre_hw.h"
#include "spyre_isa.h"
#include "spyre_model.h"

/* What a LAUNCH binds: device memory, argument slots and workspace. */
struct card_bind {
	uint8_t *devmem;
	uint32_t nslots;
	uint64_t slot_addr[SPYRE_MAX_ARGS];
	uint64_t slot_len[SPYRE_MAX_ARGS];
	uint64_t ws_addr;
	uint64_t ws_len;
	/* MMU context (interface 1.10): slot addresses are card VAs; NULL: physical */
	struct card_va *va;
};

/* Per-token queue of signal times (data tokens are counting). */
struct card_token {
	uint32_t head, count;
	uint64_t ns[SPYRE_ISA_TOKEN_MAX];
};

/* Scratchpad pages of the poison bookkeeping (card_sp_dirty). */
#define CARD_SP_PAGE_SHIFT 12
#define CARD_SP_PAGES (SPYRE_MODEL_SCRATCHPAD_BYTES >> CARD_SP_PAGE_SHIFT)

struct card_exec {
	unsigned int cores;
	uint8_t *sp[SPYRE_MODEL_MAX_CORES];	/* scratchpads, allocated on first use */
	float *tmp[4];				/* fp32 staging: A, B, C, B^T */
	size_t tmp_len[4];
	int64_t *itmp[2];			/* integer-mode staging: src0, src1 */
	size_t itmp_len[2];
	struct card_token tokens[SPYRE_MODEL_MAX_CORES][SPYRE_ISA_TOKENS];
	uint64_t unit_free[SPYRE_MODEL_MAX_CORES][SPYRE_UNIT_COUNT];
	uint64_t dram_free;			/* without @dram: this launch's own */
	struct card_dram *dram;		/* the card's LPDDR5 channel */
	uint64_t time_base;			/* device time of program time 0 */
	uint64_t lsu_addr;			/* device address of the last LSU row 0 */
	/* Where a failed program stopped (completion record fault_*). */
	uint32_t fault_insn;
	unsigned int fault_core;
	uint16_t fault_space;			/* SPYRE_FAULT_SPACE_* */
	uint64_t fault_addr;
	bool poison;				/* scratchpads poisoned at launch start */
	/* Hazard check (spyre_hazard.c). */
	bool hazard_check;
	unsigned int cur_unit;			/* unit of the executing instruction */
	uint32_t vc[SPYRE_MODEL_MAX_CORES][SPYRE_UNIT_COUNT][SPYRE_UNIT_COUNT];
	uint32_t tok_vc[SPYRE_MODEL_MAX_CORES][SPYRE_ISA_TOKENS][SPYRE_ISA_TOKEN_MAX]
		       [SPYRE_UNIT_COUNT];
	struct card_hazard *hz[SPYRE_MODEL_MAX_CORES];
	bool hz_used[SPYRE_MODEL_MAX_CORES];
	unsigned int hazard_core;
	uint64_t hazard_off;
	bool sp_used[SPYRE_MODEL_MAX_CORES];	/* touched since the last poisoning */
	/*
	 * Pages of each scratchpad that may hold bytes other than the poison
	 * (written since they were last poisoned): poisoning rewrites only
	 * those, not 2 MiB per core per launch; the contents end up the same.
	 * A superset is harmless (a write may be marked before the scratchpad
	 * is allocated, poisoned, which keeps the mark).
	 */
	uint64_t sp_dirty[SPYRE_MODEL_MAX_CORES][CARD_SP_PAGES / 64];
	const int *abort;			/* model's abort request */
	uint32_t *progress;			/* ring's SPYRE_RING_PROGRESS, or NULL */
};

/*
 * Scratchpad contents at launch start are undefined by the card's spec;
 * with the poison property they read as this byte (NaN in every float
 * type, -1 in INT8), so a program that reads what it never wrote fails
 * visibly instead of seeing the previous launch's data.
 */
#define CARD_SP_POISON 0xff

/* Core @core's scratchpad (allocated on first use), marked as used. */
static inline uint8_t *card_exec_scratchpad(struct card_exec *e, unsigned int core)
{
	if (!e->sp[core]) {
		e->sp[core] = malloc(SPYRE_MODEL_SCRATCHPAD_BYTES);
		if (e->sp[core])
			memset(e->sp[core], e->poison ? CARD_SP_POISON : 0,
			       SPYRE_MODEL_SCRATCHPAD_BYTES);
	}
	e->sp_used[core] = true;
	return e->sp[core];
}

/*
 * Bytes [@off, @off + @len) of core @core's scratchpad are about to be
 * written: their pages no longer hold only the poison.
 */
static inline void card_sp_dirty(struct card_exec *e, unsigned int core, uint64_t off,
				 uint64_t len)
{
	uint64_t first, last, w, lo, hi;

	if (!len || off >= SPYRE_MODEL_SCRATCHPAD_BYTES)
		return;
	if (len > SPYRE_MODEL_SCRATCHPAD_BYTES - off)
		len = SPYRE_MODEL_SCRATCHPAD_BYTES - off;
	first = off >> CARD_SP_PAGE_SHIFT;
	last = (off + len - 1) >> CARD_SP_PAGE_SHIFT;
	/* a word of the bitmap at a time: bits lo..hi of word w */
	for (w = first / 64; w <= last / 64; w++) {
		lo = w == first / 64 ? first % 64 : 0;
		hi = w == last / 64 ? last % 64 : 63;
		e->sp_dirty[core][w] |= (~0ull >> (63 - hi)) & (~0ull << lo);
	}
}

/* Hazard check: start of a launch; a wait joining a signaller's clock; an access. */
void card_hazard_launch(struct card_exec *e);
void card_hazard_free(struct card_exec *e);
void card_hazard_wait(struct card_exec *e, unsigned int core, unsigned int unit,
		       const uint32_t *vc);
void card_hazard_barrier(struct card_exec *e, unsigned int core);
/*
 * @rows rows of @bytes, @stride apart, from scratchpad offset @off; every
 * scratchpad write is declared here first (it also marks the pages dirty).
 */
uint32_t card_hazard_access(struct card_exec *e, unsigned int core, uint64_t off,
			     uint64_t rows, uint64_t stride, uint64_t bytes, bool write);

/* Run @n decoded instructions; *ns receives the program's device time. */
/*
 * Zero every core's scratchpad (LAUNCH F_SCRUB, interface 1.5); returns the
 * modelled time it takes (the cores clear in parallel).
 */
uint64_t card_scrub_scratchpads(struct card_exec *e, const struct spyre_timing *t);
uint32_t card_program_run(struct card_exec *e, const struct spyre_timing *t,
			   const struct card_bind *b, const struct spyre_insn *insn,
			   uint32_t n, uint64_t *ns);

/* Static checks of one instruction (0 or SPYRE_CMD_ERR_PROGRAM). */
uint32_t card_insn_check(const struct spyre_insn *in, unsigned int cores, uint32_t nslots);
unsigned int card_insn_unit(const struct spyre_insn *in);

/* Functional execution on one core (spyre_units.c); SPYRE_CMD_* status. */
uint32_t card_unit_lsu(struct card_exec *e, const struct card_bind *b,
			const struct spyre_insn *in, unsigned int core, unsigned int rank);
uint32_t card_unit_pe(struct card_exec *e, const struct spyre_insn *in, unsigned int core);
uint32_t card_unit_sfu(struct card_exec *e, const struct spyre_insn *in, unsigned int core);
/* Integer mode of the vector unit (SPYRE_VEC_INT, spyre_sfu_int.c). */
uint32_t card_unit_sfu_int(struct card_exec *e, const struct spyre_insn *in, unsigned int core);
bool card_vec_int_valid(const struct spyre_insn *in);
/*
 * Bounds (SPYRE_CMD_ERR_BOUNDS) and hazard (SPYRE_CMD_ERR_PROGRAM) checks of
 * a VEC's scratchpad accesses: src0 unless FILL, src1 when @bin, and
 * @out_cols columns of dst.
 */
uint32_t card_sfu_access(struct card_exec *e, const struct spyre_insn *in, unsigned int core,
			 bool bin, uint32_t out_cols);

/* Modelled duration of an instruction on one core, ns (spyre_units_time.c). */
/* @mem_addr: device address of a LOAD/STORE's first row (its sticks' alignment). */
uint64_t card_insn_ns(const struct spyre_timing *t, const struct spyre_insn *in, uint64_t mem_addr,
		       uint64_t *dram_ns);

#endif /* SPYRE_EXEC_H */
