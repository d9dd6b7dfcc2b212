/* SPDX-License-Identifier: GPL-2.0-or-later OR MIT */
/*
 * Portable model of the virtual Spyre card: public interface.
 *
 * The model is plain C with no QEMU headers. Its embedder (the QEMU glue in
 * qemu-device/spyre_pci.c, or libspyre's in-process "sim" backend) supplies
 * the card's device memory and a handful of callbacks, forwards register
 * accesses, and calls spyre_model_process() from one execution thread.
 *
 * Locking contract: the model is not thread safe. The embedder serialises
 * every call with one lock. During long operations (DMA payloads, program
 * execution) spyre_model_process() drops that lock through ops->unlock()
 * and takes it back with ops->lock(), so register accesses stay responsive;
 * a reset requested meanwhile is honoured through spyre_model_request_abort().
 */
#ifndef SPYRE_MODEL_H
#define SPYRE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SPYRE_MODEL_MAX_CORES		32
#define SPYRE_MODEL_MAX_RINGS		64
#define SPYRE_MODEL_MAX_SEMS		256
#define SPYRE_MODEL_SCRATCHPAD_BYTES	(2u << 20)
#define SPYRE_MODEL_NEVER		UINT64_MAX

/*
 * Timing parameters of the device-time model (Documentation/spyre-card.rst,
 * "Timing model"). Bandwidths are bytes per microsecond (= MB/s).
 */
struct spyre_timing {
	uint32_t clock_mhz;		/* core clock: 1000 */
	uint64_t pcie_bytes_per_us;	/* H2D/D2H: 50000 (PCIe Gen5 x16 effective) */
	uint64_t dram_bytes_per_us;	/* LPDDR5: 200000 */
	uint32_t ring_bytes_per_cycle;	/* on-chip ring per core: 128 */
	uint32_t dma_latency_ns;	/* setup cost of each DMA command */
	uint32_t launch_latency_ns;	/* setup cost of each LAUNCH */
	uint32_t pe_macs_fp32;		/* MACs per cycle per core, fp32 */
	uint32_t pe_macs_fp16;		/* ... 16-bit floats */
	uint32_t pe_macs_int8;		/* ... int8 */
	uint32_t pe_fill_cycles;	/* systolic pipeline fill per matmul */
	uint32_t sfu_elems;		/* simple vector elements per cycle per core */
	uint32_t sfu_transc_elems;	/* transcendental elements per cycle per core */
	uint32_t unit_issue_cycles;	/* fixed cost of any program instruction */
	uint32_t barrier_cycles;	/* a BARRIER: a signal round the core ring */
	uint32_t mmu_walk_read_ns;	/* card MMU (1.10): one table level read: 100 */
	uint32_t mcast_cycles;		/* LOAD MCAST (1.12): ring delivery latency: 16 */
};

struct spyre_model_config {
	uint64_t mem_size;		/* device memory bytes */
	uint64_t mem_aperture;		/* bytes of it visible through BAR2 */
	uint32_t num_cores;		/* 1..32 */
	uint32_t num_rings;		/* 1..64 */
	uint32_t num_sems;		/* 1..256 */
	bool pacing;			/* completions not before their device time */
	bool poison;			/* scratchpads poisoned at each launch start */
	bool hazard_check;		/* racing programs fail (ERR_PROGRAM) */
	uint32_t fault_dma_every;	/* every Nth DMA command fails (0: off) */
	uint32_t fault_hang_after;	/* the Nth command of the card hangs (0: off) */
	struct spyre_timing timing;
};

/*
 * What the card tells its embedder for tracing and error logs, through the
 * optional spyre_model_ops.event (what each passes in @ring, @a and @b).
 */
enum spyre_model_event {
	SPYRE_MODEL_EV_DESC,		/* @ring fetched a command: index @a, opcode @b */
	SPYRE_MODEL_EV_CMD_ERROR,	/* the command at index @a failed: SPYRE_CMD_ERR_* @b */
	SPYRE_MODEL_EV_FENCE,		/* @ring retired a FENCE: seqno @a, job status @b */
	SPYRE_MODEL_EV_CARD_ERROR,	/* ERR_STATUS bits @a raised with ERR_INFO @b */
};

struct spyre_model_ops {
	/* Host (guest) memory; return 0 on success, negative on failure. */
	int (*host_read)(void *opaque, uint64_t addr, void *buf, uint64_t len);
	int (*host_write)(void *opaque, uint64_t addr, const void *buf, uint64_t len);
	/* Raise MSI-X vector @vector (rings: 0..num_rings-1, errors: num_rings). */
	void (*raise_irq)(void *opaque, unsigned int vector);
	/* Monotonic time in ns; the model subtracts the value at card reset. */
	uint64_t (*now_ns)(void *opaque);
	/* Optional: drop / retake the embedder's lock around long work. */
	void (*unlock)(void *opaque);
	void (*lock)(void *opaque);
	/* Optional: an event of enum spyre_model_event (called under the lock). */
	void (*event)(void *opaque, enum spyre_model_event ev, unsigned int ring, uint64_t a,
		      uint64_t b);
};

struct spyre_model;

/* Fill @cfg with the documented defaults (1 GiB, 32 cores, 4 rings...). */
void spyre_model_config_defaults(struct spyre_model_config *cfg);

/*
 * Create a card. @devmem points at cfg->mem_size bytes of device memory
 * owned by the caller (may be sparse, zero-filled). Returns NULL and a
 * message in @err (if non-NULL) on a bad configuration.
 */
struct spyre_model *spyre_model_new(const struct spyre_model_config *cfg,
				    const struct spyre_model_ops *ops, void *opaque,
				    uint8_t *devmem, const char **err);
void spyre_model_free(struct spyre_model *m);

/* Full card reset (also what FLR and a system reset do). */
void spyre_model_reset(struct spyre_model *m);

/* 32-bit register access at byte offset @off of BAR0 (below 0x8000). */
uint32_t spyre_model_read(struct spyre_model *m, uint32_t off);
/* Returns true when the write may have made work runnable (kick the worker). */
bool spyre_model_write(struct spyre_model *m, uint32_t off, uint32_t val);

/*
 * True when writing @val at @off resets the card, or the ring whose command
 * runs right now with the lock dropped. The embedder must then call
 * spyre_model_request_abort(m, true), wait until the lock was retaken by
 * spyre_model_process() (it returns soon), do the write and clear the abort.
 */
bool spyre_model_write_needs_quiesce(struct spyre_model *m, uint32_t off, uint32_t val);
/*
 * May be called without the lock, from any thread. While set, the command
 * running unlocked stops early and spyre_model_process() returns without
 * committing it: the command runs again from its start later unless its
 * ring or the card was reset meanwhile. So request it only for the resets
 * above (a LAUNCH that updates memory in place is not safely restartable).
 */
void spyre_model_request_abort(struct spyre_model *m, bool abort);

/*
 * Run the card until nothing more can be done now. Returns the absolute
 * time (in ops->now_ns units) at which calling again can make progress
 * (pacing), or SPYRE_MODEL_NEVER when only a register write can.
 */
uint64_t spyre_model_process(struct spyre_model *m);

/* Device time now: ns since the last card reset. */
uint64_t spyre_model_now(struct spyre_model *m);

const struct spyre_model_config *spyre_model_get_config(const struct spyre_model *m);

#endif /* SPYRE_MODEL_H */
