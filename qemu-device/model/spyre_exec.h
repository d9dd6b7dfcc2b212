/* SPDX-License-Identifier: GPL-2.0-or-later OR MIT */
/*
 * Spyre card model: program execution (the compute engine's cores).
 */
#ifndef SPYRE_EXEC_H
#define SPYRE_EXEC_H

#include <stdbool.h>
#include <stdint.h>

#include "spyre_isa.h"
#include "spyre_model.h"

/* What a LAUNCH binds: device memory, argument slots and workspace. */
struct card_bind {
	uint8_t *devmem;
	uint32_t nslots;
	uint64_t slot_addr[16];
	uint64_t slot_len[16];
	uint64_t ws_addr;
	uint64_t ws_len;
};

/* Per-token queue of signal times (data tokens are counting). */
struct card_token {
	uint32_t head, count;
	uint64_t ns[SPYRE_ISA_TOKEN_MAX];
};

struct card_exec {
	unsigned int cores;
	uint8_t *sp[SPYRE_MODEL_MAX_CORES];	/* scratchpads, allocated on first use */
	float *tmp[4];				/* fp32 staging: A, B, C, B^T */
	size_t tmp_len[4];
	struct card_token tokens[SPYRE_MODEL_MAX_CORES][SPYRE_ISA_TOKENS];
	uint64_t unit_free[SPYRE_MODEL_MAX_CORES][SPYRE_UNIT_COUNT];
	uint64_t dram_free;
	const int *abort;			/* model's abort request */
	uint32_t *progress;			/* ring's SPYRE_RING_PROGRESS, or NULL */
};

/* Run @n decoded instructions; *ns receives the program's device time. */
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

/* Modelled duration of an instruction on one core, ns (spyre_units_time.c). */
uint64_t card_insn_ns(const struct spyre_timing *t, const struct spyre_insn *in,
		       uint64_t *dram_ns);

#endif /* SPYRE_EXEC_H */
