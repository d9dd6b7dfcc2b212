/* SPDX-License-Identifier: GPL-2.0-or-later OR MIT */
/*
 * Internal state of the Spyre card model, shared by the model's files only.
 *
 * Names: spyre_model_* is the public interface (spyre_model.h, implemented
 * by spyre_model.c alone); everything inside the card is card_*, so no
 * name means one thing here and another in the driver (whose struct
 * card_ring is the host's side of a ring). The helpers every file needs
 * (time, locking, card errors) are inlines here, so no file calls back
 * into spyre_model.c.
 */
#ifndef SPYRE_INTERNAL_H
#define SPYRE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "spyre_desc.h"
#include "spyre_model.h"

/* Engines that commands are dispatched to; each has its own busy-until clock. */
enum card_engine {
	CARD_ENG_COMPUTE,
	CARD_ENG_H2D,
	CARD_ENG_D2H,
	CARD_ENG_D2D,		/* D2D copies and fills */
	CARD_ENG_NONE,		/* commands that take no engine time */
	CARD_ENG_COUNT = CARD_ENG_NONE,
};

/* Internal result code: work abandoned because a reset is pending. */
#define CARD_CMD_ABORTED		0x100

/*
 * A doorbell: entries below @tail became visible at device time @ns; @seq
 * numbers doorbells card-wide, in the order the card saw them.
 */
struct card_doorbell {
	uint32_t tail;
	uint64_t ns;
	uint64_t seq;
};

/* A retired FENCE whose outputs wait for device time to reach @ns (pacing). */
struct card_pending {
	uint64_t ns;
	uint64_t rec_addr;
	bool has_rec;
	bool rec_dev;		/* rec_addr is device memory (a translated record) */
	bool irq;
	struct spyre_hw_completion rec;	/* little endian, as written */
	struct spyre_hw_ring_wb wb;
};

#define CARD_DB_QUEUE			64
#define CARD_SEM_HISTORY		16

/* Accounting of the job (commands since the previous FENCE) a ring runs. */
struct card_job {
	bool started;
	uint32_t status;
	uint32_t error_index;
	uint64_t start_ns;
	uint64_t compute_ns;
	uint64_t dma_ns;
	/* where the failed LAUNCH stopped (spyre_hw_completion.fault_*) */
	bool has_fault;
	uint32_t fault_insn;
	uint16_t fault_core, fault_space;
	uint64_t fault_addr;
	/* SET_CTX (1.10): the MMU context of the job's commands from there on */
	bool ctx_set;
	uint32_t ctx;
};

struct card_ring {
	/* Register images (config is latched when the ring is enabled). */
	uint32_t base_lo, base_hi, size_log2, wb_lo, wb_hi;
	bool enabled;
	bool error;
	uint32_t error_code;
	uint32_t head, tail;
	uint32_t progress;	/* SPYRE_RING_PROGRESS, accessed atomically */
	/* SPYRE_RING_{COMPUTE,DMA}_NS (1.14): finished jobs' engine time, atomic */
	uint64_t busy_ns[2];
	uint32_t busy_hi_latch;	/* high word latched by the last _LO read */
	/* SPYRE_RING_FAULT_* (1.15): the fault that stopped its context (reset clears) */
	uint32_t mmu_fault_info;
	uint64_t mmu_fault_addr;

	/* Latched configuration. */
	uint64_t base, wb;
	uint32_t entries;
	uint32_t ctx;		/* SPYRE_RING_CTX: MMU context, 0 physical (1.10) */
	bool ring_va;		/* SPYRE_RING_CTX_VA: ring and write-back are card VAs */

	struct card_doorbell db[CARD_DB_QUEUE];
	unsigned int db_count;

	uint64_t ready_ns;	/* device time the ring's last command ended */
	bool skipping;		/* a command failed: skip to the next FENCE */
	bool hung;		/* fault: the current command never completes */
	bool need_tail;		/* a LAUNCH waits for its ARGS to be doorbelled */
	bool sem_blocked;	/* SEM_WAIT not satisfied yet */
	bool mem_blocked;	/* WAIT_MEM not satisfied yet (1.10) */
	uint32_t fault;		/* armed one-shot SPYRE_FAULT_* */
	struct card_job job;

	struct card_pending *pend;	/* completions not yet visible (pacing) */
	uint32_t npend, pend_cap;
};

struct card_sem {
	uint64_t value;
	unsigned int nhist;
	struct {
		uint64_t value;
		uint64_t ns;
		bool failed;	/* raised by a failed job or by software */
	} hist[CARD_SEM_HISTORY];
};

/* One decoded command, as handed to an engine. */
struct card_cmd {
	uint32_t index;		/* ring index of the first descriptor */
	uint32_t ndesc;		/* descriptors consumed (LAUNCH + ARGS) */
	uint64_t avail_ns;	/* doorbell time of its last descriptor */
	uint32_t ctx;		/* its ring's MMU context: addresses are card VAs if set */
	union spyre_hw_desc desc;	/* as fetched: little endian */
	uint32_t nargs;
	uint64_t arg_addr[SPYRE_MAX_ARGS];
	uint64_t arg_len[SPYRE_MAX_ARGS];
};

struct card_exec;

/* The LPDDR5 channel's reservations (spyre_dram.c), in device ns. */
#define CARD_DRAM_SLOTS 256
struct card_dram {
	struct { uint64_t s, e; } busy[CARD_DRAM_SLOTS];	/* sorted, disjoint */
	unsigned int n;
};

void card_dram_reset(struct card_dram *d);
/* Take @need ns of the channel at or after @start; returns when the last ns ends. */
uint64_t card_dram_reserve(struct card_dram *d, uint64_t start, uint64_t need);

struct spyre_model {
	struct spyre_model_config cfg;
	struct spyre_model_ops ops;
	void *opaque;
	uint8_t *devmem;

	uint64_t time_base;
	uint32_t status;
	uint32_t err_status;
	uint32_t err_info;
	uint32_t scratch;
	uint32_t fault_reg;
	uint32_t time_hi_latch;
	uint32_t sem_select;	/* SEM_SELECT */
	uint32_t sem_lo_latch;	/* SEM_VALUE_LO written, awaiting SEM_VALUE_HI */

	struct card_ring rings[SPYRE_MODEL_MAX_RINGS];
	uint64_t engine_busy[CARD_ENG_COUNT];
	struct card_dram dram;		/* LPDDR5, shared by programs and DMA */
	uint64_t cmd_start;		/* device time the running command started */
	struct card_sem sems[SPYRE_MODEL_MAX_SEMS];

	int abort_req;		/* accessed atomically */
	int exec_ring;		/* ring whose command runs unlocked, or -1 */
	uint64_t db_seq;	/* doorbells seen since reset */
	uint64_t cmd_count;	/* commands executed since reset (fault knobs) */
	uint64_t dma_count;

	struct card_exec *exec; /* program execution engine (scratchpads) */
	struct card_mmu *mmu;	/* the card MMU (spyre_mmu.c) */
	/*
	 * Whose data the scratchpads hold (1.11): the context of a user-mode
	 * queue whose LAUNCH ran last, or CARD_SP_OWNER_KERNEL for rings the
	 * driver writes (the driver scrubs between its clients with F_SCRUB).
	 */
	uint32_t sp_owner;
};

#define CARD_SP_OWNER_KERNEL	0xffffffffu

/* True when the @n bytes at @p (a reserved field) are all zero. */
static inline bool card_all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		if (*b++)
			return false;
	return true;
}

/* True when [off, off + len) lies inside [0, size). */
static inline bool card_range_ok(uint64_t off, uint64_t len, uint64_t size)
{
	return len <= size && off <= size - len;
}

static inline uint64_t card_max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/*
 * A step of the command running unlocked (an instruction, a DMA chunk):
 * moves its ring's SPYRE_RING_PROGRESS, which MMIO reads without the
 * worker, so the driver sees a long command is alive.
 */
static inline void card_progress_step(struct spyre_model *m)
{
	if (m->exec_ring >= 0)
		__atomic_fetch_add(&m->rings[m->exec_ring].progress, 1, __ATOMIC_RELAXED);
}

static inline bool card_abort_pending(struct spyre_model *m)
{
	return __atomic_load_n(&m->abort_req, __ATOMIC_ACQUIRE) != 0;
}

/* Device time now: ns since the last card reset. */
static inline uint64_t card_now(struct spyre_model *m)
{
	uint64_t t = m->ops.now_ns(m->opaque);

	return t > m->time_base ? t - m->time_base : 0;
}

/* Drop the embedder's lock while ring @ring runs a long command. */
static inline void card_unlock(struct spyre_model *m, int ring)
{
	m->exec_ring = ring;
	if (m->ops.unlock)
		m->ops.unlock(m->opaque);
}

static inline void card_lock(struct spyre_model *m)
{
	if (m->ops.lock)
		m->ops.lock(m->opaque);
	m->exec_ring = -1;
}

/* Report an event to the embedder (tracing, logs), if it listens. */
static inline void card_event(struct spyre_model *m, enum spyre_model_event ev, unsigned int ring,
			      uint64_t a, uint64_t b)
{
	if (m->ops.event)
		m->ops.event(m->opaque, ev, ring, a, b);
}

/*
 * Record a card-level error. Fatal errors stop every ring until a card
 * reset; both kinds raise the error vector (vector number num_rings),
 * except bad register accesses, which are only recorded.
 */
static inline void card_error(struct spyre_model *m, uint32_t bits, uint32_t info, bool fatal)
{
	card_event(m, SPYRE_MODEL_EV_CARD_ERROR, (info >> 16) & 0xff, bits, info);
	m->err_status |= bits;
	m->err_info = info;
	if (fatal)
		m->status |= SPYRE_STATUS_FATAL;
	if (bits & ~SPYRE_ERR_STATUS_BAD_ACCESS)
		m->ops.raise_irq(m->opaque, m->cfg.num_rings);
}

/* spyre_ring.c */
void card_ring_reset(struct spyre_model *m, struct card_ring *r);
void card_ring_clear_config(struct card_ring *r);
uint32_t card_ring_read(struct spyre_model *m, unsigned int n, uint32_t reg);
bool card_ring_write(struct spyre_model *m, unsigned int n, uint32_t reg, uint32_t val);
void card_ring_error(struct spyre_model *m, unsigned int n, uint32_t code);

/* spyre_sched.c */
uint64_t card_sched_run(struct spyre_model *m);

/* card_fence.c */
uint32_t card_fence(struct spyre_model *m, unsigned int n, const struct card_cmd *c,
		     uint64_t t);
uint64_t card_fence_release(struct spyre_model *m, uint64_t now, bool *delivered);

/* spyre_timing.c */
uint64_t card_time_bytes(uint64_t bytes, uint64_t bytes_per_us);
uint64_t card_time_dma(const struct spyre_timing *t, unsigned int dir, uint64_t len);
uint64_t card_time_cycles(const struct spyre_timing *t, uint64_t cycles);
enum card_engine card_dma_engine(unsigned int dir);

/* spyre_dma.c */
struct card_va;
/* @v: the ring's MMU context (its addresses are card VAs), or NULL: physical */
uint32_t card_dma_run(struct spyre_model *m, unsigned int ring, const struct card_cmd *c,
		       struct card_va *v);
uint32_t card_dma_check(struct spyre_model *m, const struct card_cmd *c);
uint32_t card_sg_xfer(struct spyre_model *m, uint64_t sg_addr, uint32_t sg_count,
		       uint64_t host_off, uint8_t *dev, uint64_t len, bool to_host);

/* spyre_sem.c */
void card_sem_reset(struct spyre_model *m);
void card_sem_signal(struct spyre_model *m, uint32_t sem, uint64_t value, uint64_t ns,
		      bool failed);
bool card_sem_reached(struct spyre_model *m, uint32_t sem, uint64_t value, uint64_t *ns,
		       bool *failed);
void card_sem_signal_wake(struct spyre_model *m, uint32_t sem, uint64_t value, uint64_t ns,
			   bool failed);
void card_sem_signal_now(struct spyre_model *m, uint32_t sem, uint64_t value);

/* spyre_launch.c */
uint32_t card_launch_check(struct spyre_model *m, const struct card_cmd *c);
uint32_t card_launch_run(struct spyre_model *m, unsigned int ring, const struct card_cmd *c,
			  uint64_t *duration_ns);

/* spyre_program.c */
struct card_exec *card_exec_new(unsigned int cores);
void card_exec_free(struct card_exec *e);

#endif /* SPYRE_INTERNAL_H */
