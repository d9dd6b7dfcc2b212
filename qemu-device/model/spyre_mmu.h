/* SPDX-License-Identifier: GPL-2.0-or-later OR MIT */
/*
 * Spyre card model: the card MMU (interface 1.10). Per-context page tables
 * in device memory translate 48-bit card virtual addresses to device memory
 * or host bus addresses; one TLB serves the whole card. Context 0 is the
 * physical mode: nothing here runs for it, so every pre-MMU path keeps its
 * behaviour bit for bit.
 *
 * Threads: translations run on the worker, often with the embedder's lock
 * dropped, while register writes (root changes, invalidations) come in
 * under the lock from other threads. Roots are therefore read and written
 * atomically and invalidations are posted as atomic requests that the
 * worker applies before its next lookup; everything else (faulted
 * contexts, the fault registers) is only touched under the lock.
 */
#ifndef SPYRE_MMU_H
#define SPYRE_MMU_H

#include <stdbool.h>
#include <stdint.h>

#include "spyre_hw.h"
#include "spyre_model.h"

struct spyre_model;
struct card_dram;

/* The TLB: CARD_TLB_SETS sets of CARD_TLB_WAYS entries, least recently used out. */
#define CARD_TLB_SETS		64
#define CARD_TLB_WAYS		8
/* Bytes of LPDDR5 one level of a table walk reads (one burst). */
#define CARD_MMU_WALK_BURST	64
/* Entries one burst holds: a level-0 read fills the TLB with its line (1.16). */
#define CARD_MMU_LINE_ENTRIES	(CARD_MMU_WALK_BURST / 8)
/* The page-walk cache (1.16): table addresses of levels 1 and 0, fully associative. */
#define CARD_PWC_ENTRIES	32

/* Which kinds of page an access may reach. */
#define CARD_VA_DEV		1	/* device memory (LPDDR5) */
#define CARD_VA_SYS		2	/* host memory (a bus address) */

struct card_tlb_entry {
	uint64_t vpn;		/* va >> page shift */
	uint64_t pa;		/* page base: device or host bus address */
	uint64_t lru;		/* use stamp; 0: empty */
	uint16_t ctx;
	uint8_t shift;		/* 12 or 21 */
	uint8_t flags;		/* SPYRE_PTE_WRITE | EXEC | SYS of the leaf */
};

/*
 * A table the walk reached below the root: the level-@level table (0 or 1)
 * that translates the VAs whose bits above that table's index are @tag.
 */
struct card_pwc_entry {
	uint64_t tag;		/* va >> (21 + 9 * level) */
	uint64_t table;		/* device address of the table */
	uint64_t lru;		/* use stamp; 0: empty */
	uint16_t ctx;
	uint8_t level;
};

struct card_mmu_fault {
	bool valid;
	uint8_t access;		/* SPYRE_MMU_ACCESS_* */
	uint8_t reason;		/* SPYRE_MMU_FAULT_* */
	uint32_t ctx;
	uint64_t va;
};

/* A counter the card wrote (write-back, record) and when: WAIT_MEM's device time. */
#define CARD_WMEM_HIST		64
struct card_wmem_write {
	bool sys;
	uint64_t pa;
	uint64_t value;
	uint64_t ns;
};

struct card_mmu {
	uint64_t root[SPYRE_MMU_NUM_CTX];	/* atomic: SPYRE_MMU_ROOT_VALID | table */
	bool faulted[SPYRE_MMU_NUM_CTX];	/* under the lock */
	uint32_t select, root_lo_latch;
	uint32_t fault_info;			/* SPYRE_REG_MMU_FAULT_INFO */
	uint64_t fault_addr;
	uint32_t misses;			/* atomic: SPYRE_REG_MMU_TLB_MISSES */

	/* Posted invalidations (atomic): a bitmap of contexts, or all. */
	uint64_t inval_ctx[SPYRE_MMU_NUM_CTX / 64];
	int inval_all;
	int inval_any;

	/* Worker side. */
	struct card_tlb_entry tlb[CARD_TLB_SETS][CARD_TLB_WAYS];
	struct card_pwc_entry pwc[CARD_PWC_ENTRIES];
	uint64_t lru_clock;
	struct card_mmu_fault pending;		/* the running command's fault */

	/* Counters the card wrote lately (spyre_waitmem.c), under the lock. */
	struct card_wmem_write wmem[CARD_WMEM_HIST];
	unsigned int wmem_next;
};

/*
 * The translations of one command (or one launch): its context, the walks
 * it did (not yet turned into device time) and a one-page cache of the
 * last translation. That cache only serves the access right after the
 * lookup that filled it, when the TLB entry is the most recently used one
 * anyway, so it never changes what the TLB would have answered.
 */
struct card_va {
	struct spyre_model *m;
	struct card_mmu *mmu;
	uint32_t ctx;
	uint8_t *devmem;
	uint64_t mem_size;
	const struct spyre_timing *timing;
	uint64_t walk_reads;		/* table entries read since last taken */
	/*
	 * Replay: translate again what was translated (and timed) already:
	 * TLB hits change no use stamp, misses walk without filling the TLB
	 * or counting, so the TLB and the timing are as after the first pass.
	 */
	bool replay;
	bool last_ok;
	uint64_t last_vpn, last_pa;
	uint8_t last_shift, last_flags;
};

/* spyre_mmu.c: tables, TLB, registers, faults */
struct card_mmu *card_mmu_new(void);
void card_mmu_free(struct card_mmu *u);
void card_mmu_reset(struct card_mmu *u);
/* Global register access at @off (0x080..0x0a4); false: not an MMU register. */
bool card_mmu_reg_read(struct spyre_model *m, uint32_t off, uint32_t *val);
/* Returns false for a bad access; *kick: rings may have become runnable. */
bool card_mmu_reg_write(struct spyre_model *m, uint32_t off, uint32_t val, bool *kick);
bool card_mmu_ctx_faulted(const struct card_mmu *u, uint32_t ctx);

void card_va_init(struct card_va *v, struct spyre_model *m, uint32_t ctx);
/*
 * Translate @va for @access (SPYRE_MMU_ACCESS_*), reaching pages of @kinds
 * (CARD_VA_*). On success: *pa the device or host address, *sys whether it
 * is host memory, *avail the bytes left in the page. On a fault: false,
 * and the fault is recorded as the command's (the first one wins).
 */
bool card_va_translate(struct card_va *v, uint64_t va, unsigned int access, unsigned int kinds,
		       uint64_t *pa, bool *sys, uint64_t *avail);
/*
 * Turn the walks done since the last call into device time: they run one
 * after another from @start (absolute device ns), each level read taking
 * mmu_walk_read_ns and a burst of the LPDDR5 channel. Returns their end.
 */
uint64_t card_va_walk_end(struct card_va *v, struct card_dram *dram, uint64_t start);
/*
 * Under the lock, after a command of @ring faulted: report it (registers,
 * interrupt, context stopped) and, with @to_job, in the job's record.
 */
void card_mmu_fault_commit(struct spyre_model *m, unsigned int ring, bool to_job);

/* spyre_mmu_xfer.c: the commands' memory accesses through a context */
/* Copy between a card VA range and a host buffer (read: VA -> @buf). */
uint32_t card_va_copy(struct card_va *v, uint64_t va, void *buf, uint64_t len,
		      unsigned int access, unsigned int kinds);
uint32_t card_va_dma_check(struct spyre_model *m, const void *dma_desc);
/* Run a DMA descriptor in context @v; the caller accounts its device time. */
uint32_t card_va_dma_run(struct spyre_model *m, struct card_va *v, const void *dma_desc);
/* LOAD/STORE rows between device memory at card VA @va and the scratchpad. */
uint32_t card_va_rows(struct card_va *v, bool load, uint64_t va, uint64_t mem_stride,
		      uint8_t *sp, uint64_t sp_stride, uint64_t rows, uint64_t row_bytes,
		      uint16_t *fault_space, uint64_t *fault_addr);
/* A user-mode queue's ring and write-back accesses in context @ctx (1.10). */
uint32_t card_va_ring_read(struct spyre_model *m, uint32_t ctx, uint64_t va, void *buf,
			   uint64_t len);
uint32_t card_va_ring_write(struct spyre_model *m, uint32_t ctx, uint64_t va, const void *buf,
			    uint64_t len);
struct card_cmd;
/* TIMESTAMP in a context: write the 8 bytes at @val to its card VA. */
uint32_t card_va_timestamp(struct spyre_model *m, const struct card_cmd *c, const uint64_t *val);
/* Translate a FENCE's 64-byte-aligned record address for writing; false: fault. */
bool card_va_record(struct spyre_model *m, uint32_t ctx, uint64_t *addr, bool *dev);
/* Where a command wrote its fault: completion record fault_space of @access. */
uint16_t card_va_fault_space(unsigned int access);

/* spyre_waitmem.c: WAIT_MEM (1.10) */
uint32_t card_wait_mem_check(const struct card_cmd *c);
/*
 * Is the counter of WAIT_MEM @c reached? 1 with *ns the device time it
 * was, 0 not yet, -1 with *st the command's failure.
 */
int card_wait_mem_poll(struct spyre_model *m, const struct card_cmd *c, uint64_t *ns,
		       uint32_t *st);
/* The card wrote @value at @pa (host memory if @sys) at device time @ns. */
void card_wait_mem_note(struct spyre_model *m, bool sys, uint64_t pa, uint64_t value,
			uint64_t ns);
/* Let every waiting ring look at its counter again. */
void card_wait_mem_wake(struct spyre_model *m);
/* True when a ring waits for a counter. */
bool card_wait_mem_pending(const struct spyre_model *m);

#endif /* SPYRE_MMU_H */
