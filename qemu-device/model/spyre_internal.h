/* SPDX-License-Identifier: GPL-2.0-or-later OR MIT */
/*
 * Internal state of the Spyre card model, shared by the model's files only.
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
enum spyre_engine {
	SPYRE_ENG_COMPUTE,
	SPYRE_ENG_H2D,
	SPYRE_ENG_D2H,
	SPYRE_ENG_D2D,		/* D2D copies and fills */
	SPYRE_ENG_NONE,		/* commands that take no engine time */
	SPYRE_ENG_COUNT = SPYRE_ENG_NONE,
};

/* Internal result code: work abandoned because a reset is pending. */
#define SPYRE_CMD_ABORTED		0x100

/*
 * A doorbell: entries below @tail became visible at device time @ns; @seq
 * numbers doorbells card-wide, in the order the card saw them.
 */
struct spyre_doorbell {
	uint32_t tail;
	uint64_t ns;
	uint64_t seq;
};

/* A retired FENCE whose outputs wait for device time to reach @ns (pacing). */
struct spyre_pending {
	uint64_t ns;
	uint64_t rec_addr;
	bool has_rec;
	bool irq;
	struct spyre_hw_completion rec;	/* little endian, as written */
	struct spyre_hw_ring_wb wb;
};

#define SPYRE_DB_QUEUE			64
#define SPYRE_SEM_HISTORY		16

/* Accounting of the job (commands since the previous FENCE) a ring runs. */
struct spyre_job {
	bool started;
	uint32_t status;
	uint32_t error_index;
	uint64_t start_ns;
	uint64_t compute_ns;
	uint64_t dma_ns;
};

struct spyre_ring {
	/* Register images (config is latched when the ring is enabled). */
	uint32_t base_lo, base_hi, size_log2, wb_lo, wb_hi;
	bool enabled;
	bool error;
	uint32_t error_code;
	uint32_t head, tail;
	uint32_t progress;	/* SPYRE_RING_PROGRESS, accessed atomically */

	/* Latched configuration. */
	uint64_t base, wb;
	uint32_t entries;

	struct spyre_doorbell db[SPYRE_DB_QUEUE];
	unsigned int db_count;

	uint64_t ready_ns;	/* device time the ring's last command ended */
	bool skipping;		/* a command failed: skip to the next FENCE */
	bool hung;		/* fault: the current command never completes */
	bool need_tail;		/* a LAUNCH waits for its ARGS to be doorbelled */
	bool sem_blocked;	/* SEM_WAIT not satisfied yet */
	uint32_t fault;		/* armed one-shot SPYRE_FAULT_* */
	struct spyre_job job;

	struct spyre_pending *pend;	/* completions not yet visible (pacing) */
	uint32_t npend, pend_cap;
};

struct spyre_sem {
	uint64_t value;
	unsigned int nhist;
	struct {
		uint64_t value;
		uint64_t ns;
		bool failed;	/* raised by a failed job or by software */
	} hist[SPYRE_SEM_HISTORY];
};

/* One decoded command, as handed to an engine. */
struct spyre_cmd {
	uint32_t index;		/* ring index of the first descriptor */
	uint32_t ndesc;		/* descriptors consumed (LAUNCH + ARGS) */
	uint64_t avail_ns;	/* doorbell time of its last descriptor */
	union spyre_hw_desc desc;	/* as fetched: little endian */
	uint32_t nargs;
	uint64_t arg_addr[SPYRE_MAX_ARGS];
	uint64_t arg_len[SPYRE_MAX_ARGS];
};

struct spyre_exec;

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

	struct spyre_ring rings[SPYRE_MODEL_MAX_RINGS];
	uint64_t engine_busy[SPYRE_ENG_COUNT];
	struct spyre_sem sems[SPYRE_MODEL_MAX_SEMS];

	int abort_req;		/* accessed atomically */
	int exec_ring;		/* ring whose command runs unlocked, or -1 */
	uint64_t db_seq;	/* doorbells seen since reset */
	uint64_t cmd_count;	/* commands executed since reset (fault knobs) */
	uint64_t dma_count;

	struct spyre_exec *exec; /* program execution engine (scratchpads) */
};

/* ERR_INFO layout (see Documentation/spyre-card.rst). */
#define SPYRE_ERR_SRC_MEM_UE		1
#define SPYRE_ERR_SRC_RING		2
#define SPYRE_ERR_SRC_ACCESS		3
#define SPYRE_ERR_INFO(src, ring, detail) \
	(((uint32_t)(src) << 24) | (((uint32_t)(ring) & 0xff) << 16) | ((detail) & 0xffff))

/* True when the @n bytes at @p (a reserved field) are all zero. */
static inline bool spyre_all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		if (*b++)
			return false;
	return true;
}

/* True when [off, off + len) lies inside [0, size). */
static inline bool spyre_range_ok(uint64_t off, uint64_t len, uint64_t size)
{
	return len <= size && off <= size - len;
}

static inline uint64_t spyre_max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/*
 * A step of the command running unlocked (an instruction, a DMA chunk):
 * moves its ring's SPYRE_RING_PROGRESS, which MMIO reads without the
 * worker, so the driver sees a long command is alive.
 */
static inline void spyre_progress_step(struct spyre_model *m)
{
	if (m->exec_ring >= 0)
		__atomic_fetch_add(&m->rings[m->exec_ring].progress, 1, __ATOMIC_RELAXED);
}

static inline bool spyre_abort_pending(struct spyre_model *m)
{
	return __atomic_load_n(&m->abort_req, __ATOMIC_ACQUIRE) != 0;
}

/* spyre_model.c */
uint64_t spyre_now(struct spyre_model *m);
void spyre_card_error(struct spyre_model *m, uint32_t bits, uint32_t info, bool fatal);
void spyre_unlock(struct spyre_model *m, int ring);
void spyre_lock(struct spyre_model *m);

/* spyre_ring.c */
void spyre_ring_reset(struct spyre_model *m, struct spyre_ring *r);
void spyre_ring_clear_config(struct spyre_ring *r);
uint32_t spyre_ring_read(struct spyre_model *m, unsigned int n, uint32_t reg);
bool spyre_ring_write(struct spyre_model *m, unsigned int n, uint32_t reg, uint32_t val);
void spyre_ring_error(struct spyre_model *m, unsigned int n, uint32_t code);

/* spyre_sched.c */
uint64_t spyre_sched_run(struct spyre_model *m);

/* spyre_fence.c */
uint32_t spyre_fence(struct spyre_model *m, unsigned int n, const struct spyre_cmd *c,
		     uint64_t t);
uint64_t spyre_fence_release(struct spyre_model *m, uint64_t now);

/* spyre_timing.c */
uint64_t spyre_time_bytes(uint64_t bytes, uint64_t bytes_per_us);
uint64_t spyre_time_dma(const struct spyre_timing *t, unsigned int dir, uint64_t len);
uint64_t spyre_time_cycles(const struct spyre_timing *t, uint64_t cycles);
enum spyre_engine spyre_dma_engine(unsigned int dir);

/* spyre_dma.c */
uint32_t spyre_cmd_dma(struct spyre_model *m, unsigned int ring, const struct spyre_cmd *c);
uint32_t spyre_dma_check(struct spyre_model *m, const struct spyre_cmd *c);
uint32_t spyre_sg_xfer(struct spyre_model *m, uint64_t sg_addr, uint32_t sg_count,
		       uint64_t host_off, uint8_t *dev, uint64_t len, bool to_host);

/* spyre_sem.c */
void spyre_sem_reset(struct spyre_model *m);
void spyre_sem_signal(struct spyre_model *m, uint32_t sem, uint64_t value, uint64_t ns,
		      bool failed);
bool spyre_sem_reached(struct spyre_model *m, uint32_t sem, uint64_t value, uint64_t *ns,
		       bool *failed);
void spyre_sem_signal_wake(struct spyre_model *m, uint32_t sem, uint64_t value, uint64_t ns,
			   bool failed);
void spyre_sem_signal_now(struct spyre_model *m, uint32_t sem, uint64_t value);

/* spyre_launch.c */
uint32_t spyre_launch_check(struct spyre_model *m, const struct spyre_cmd *c);
uint32_t spyre_cmd_launch(struct spyre_model *m, unsigned int ring, const struct spyre_cmd *c,
			  uint64_t *duration_ns);

/* spyre_program.c */
struct spyre_exec *spyre_exec_new(unsigned int cores);
void spyre_exec_free(struct spyre_exec *e);

#endif /* SPYRE_INTERNAL_H */
