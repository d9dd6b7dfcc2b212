// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Spyre card model: the public entry (spyre_model.h): creation, card
 * reset, global registers. The rest of the card is in the other files,
 * which share spyre_internal.h and never call back into this one.
 */
#include <stdlib.h>

#include "spyre_exec.h"
#include "spyre_internal.h"
#include "spyre_mmu.h"

void spyre_model_config_defaults(struct spyre_model_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mem_size = 1ull << 30;
	cfg->mem_aperture = cfg->mem_size;
	cfg->num_cores = 32;
	cfg->num_rings = 4;
	cfg->num_sems = 64;
	cfg->timing.clock_mhz = 1000;
	cfg->timing.pcie_bytes_per_us = 50000;
	cfg->timing.dram_bytes_per_us = 200000;
	cfg->timing.ring_bytes_per_cycle = 128;
	cfg->timing.dma_latency_ns = 1000;
	cfg->timing.launch_latency_ns = 2000;
	cfg->timing.pe_macs_fp32 = 256;
	cfg->timing.pe_macs_fp16 = 1024;
	cfg->timing.pe_macs_int8 = 4096;
	cfg->timing.pe_fill_cycles = 16;
	cfg->timing.sfu_elems = 128;
	cfg->timing.sfu_transc_elems = 32;
	cfg->timing.unit_issue_cycles = 4;
	cfg->timing.barrier_cycles = 64;
	cfg->timing.mmu_walk_read_ns = 100;
	cfg->timing.mcast_cycles = 16;
}

static const char *check_config(const struct spyre_model_config *c)
{
	const struct spyre_timing *t = &c->timing;

	if (c->mem_size < (1ull << 20) || c->mem_size > (128ull << 30) ||
	    c->mem_size % 4096)
		return "memory size must be 1 MiB..128 GiB, a multiple of 4 KiB";
	if (c->mem_aperture > c->mem_size || c->mem_aperture % 4096)
		return "aperture must be a multiple of 4 KiB, at most the memory size";
	if (c->num_cores < 1 || c->num_cores > SPYRE_MODEL_MAX_CORES)
		return "cores must be 1..32";
	if (c->num_rings < 1 || c->num_rings > SPYRE_MODEL_MAX_RINGS)
		return "rings must be 1..64";
	if (c->num_sems < 1 || c->num_sems > SPYRE_MODEL_MAX_SEMS)
		return "semaphores must be 1..256";
	if (!t->clock_mhz || !t->pcie_bytes_per_us || !t->dram_bytes_per_us ||
	    !t->ring_bytes_per_cycle || !t->pe_macs_fp32 || !t->pe_macs_fp16 ||
	    !t->pe_macs_int8 || !t->sfu_elems || !t->sfu_transc_elems)
		return "timing parameters must be non-zero";
	return NULL;
}

struct spyre_model *spyre_model_new(const struct spyre_model_config *cfg,
				    const struct spyre_model_ops *ops, void *opaque,
				    uint8_t *devmem, const char **err)
{
	struct spyre_model *m;
	const char *msg = check_config(cfg);

	if (!msg && (!ops->host_read || !ops->host_write || !ops->raise_irq || !ops->now_ns))
		msg = "host_read, host_write, raise_irq and now_ns callbacks are required";
	if (!msg && !devmem)
		msg = "no device memory";
	if (msg) {
		if (err)
			*err = msg;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (m) {
		m->exec = card_exec_new(cfg->num_cores);
		m->mmu = card_mmu_new();
	}
	if (m && m->exec) {
		m->exec->poison = cfg->poison;
		m->exec->hazard_check = cfg->hazard_check;
	}
	if (!m || !m->exec || !m->mmu) {
		if (m) {
			card_exec_free(m->exec);
			card_mmu_free(m->mmu);
		}
		free(m);
		if (err)
			*err = "out of memory";
		return NULL;
	}
	m->cfg = *cfg;
	m->ops = *ops;
	m->opaque = opaque;
	m->devmem = devmem;
	spyre_model_reset(m);
	return m;
}

void spyre_model_free(struct spyre_model *m)
{
	unsigned int i;

	if (!m)
		return;
	for (i = 0; i < SPYRE_MODEL_MAX_RINGS; i++)
		free(m->rings[i].pend);
	card_exec_free(m->exec);
	card_mmu_free(m->mmu);
	free(m);
}

const struct spyre_model_config *spyre_model_get_config(const struct spyre_model *m)
{
	return &m->cfg;
}

void spyre_model_reset(struct spyre_model *m)
{
	unsigned int i;

	m->time_base = m->ops.now_ns(m->opaque);
	m->status = SPYRE_STATUS_READY;
	m->err_status = 0;
	m->err_info = 0;
	m->scratch = 0;
	m->fault_reg = 0;
	m->time_hi_latch = 0;
	m->sem_select = 0;
	m->sem_lo_latch = 0;
	m->cmd_count = 0;
	m->dma_count = 0;
	m->db_seq = 0;
	m->exec_ring = -1;
	memset(m->engine_busy, 0, sizeof(m->engine_busy));
	card_dram_reset(&m->dram);
	for (i = 0; i < SPYRE_MODEL_MAX_RINGS; i++) {
		card_ring_clear_config(&m->rings[i]);
		card_ring_reset(m, &m->rings[i]);
	}
	card_sem_reset(m);
	card_mmu_reset(m->mmu);
	m->sp_owner = CARD_SP_OWNER_KERNEL;
}

uint64_t spyre_model_now(struct spyre_model *m)
{
	return card_now(m);
}

void spyre_model_request_abort(struct spyre_model *m, bool abort)
{
	__atomic_store_n(&m->abort_req, abort ? 1 : 0, __ATOMIC_RELEASE);
}

static void bad_access(struct spyre_model *m, uint32_t off)
{
	card_error(m, SPYRE_ERR_STATUS_BAD_ACCESS,
			 SPYRE_ERR_INFO(SPYRE_ERR_INFO_SRC_ACCESS, 0, off), false);
}

static bool ring_reg(struct spyre_model *m, uint32_t off, unsigned int *n, uint32_t *reg)
{
	if (off < SPYRE_RING_REGS_BASE)
		return false;
	*n = (off - SPYRE_RING_REGS_BASE) / SPYRE_RING_REGS_STRIDE;
	*reg = (off - SPYRE_RING_REGS_BASE) % SPYRE_RING_REGS_STRIDE;
	return *n < m->cfg.num_rings;
}

uint32_t spyre_model_read(struct spyre_model *m, uint32_t off)
{
	unsigned int n;
	uint32_t reg, v;
	uint64_t t;

	if (off & 3)
		goto bad;
	if (card_mmu_reg_read(m, off, &v))
		return v;
	switch (off) {
	case SPYRE_REG_ID:
		return SPYRE_ID_MAGIC;
	case SPYRE_REG_VERSION:
		return SPYRE_HW_VERSION_CURRENT;
	case SPYRE_REG_NUM_CORES:
		return m->cfg.num_cores;
	case SPYRE_REG_SCRATCHPAD_KB:
		return SPYRE_MODEL_SCRATCHPAD_BYTES / 1024;
	case SPYRE_REG_NUM_RINGS:
		return m->cfg.num_rings;
	case SPYRE_REG_CLOCK_MHZ:
		return m->cfg.timing.clock_mhz;
	case SPYRE_REG_MEM_SIZE_LO:
		return (uint32_t)m->cfg.mem_size;
	case SPYRE_REG_MEM_SIZE_HI:
		return (uint32_t)(m->cfg.mem_size >> 32);
	case SPYRE_REG_NUM_SEMS:
		return m->cfg.num_sems;
	case SPYRE_REG_MEM_APERTURE_LO:
		return (uint32_t)m->cfg.mem_aperture;
	case SPYRE_REG_MEM_APERTURE_HI:
		return (uint32_t)(m->cfg.mem_aperture >> 32);
	case SPYRE_REG_CTRL:
		return 0;
	case SPYRE_REG_STATUS:
		return m->status;
	case SPYRE_REG_ERR_STATUS:
		return m->err_status;
	case SPYRE_REG_ERR_INFO:
		return m->err_info;
	case SPYRE_REG_TIME_LO:
		t = card_now(m);
		m->time_hi_latch = (uint32_t)(t >> 32);
		return (uint32_t)t;
	case SPYRE_REG_TIME_HI:
		return m->time_hi_latch;
	case SPYRE_REG_SCRATCH:
		return m->scratch;
	case SPYRE_REG_IRQ_ERR_VECTOR:
		return m->cfg.num_rings;
	case SPYRE_REG_FAULT:
		return m->fault_reg;
	case SPYRE_REG_SEM_SELECT:
		return m->sem_select;
	case SPYRE_REG_SEM_VALUE_LO:
		return (uint32_t)m->sems[m->sem_select].value;
	case SPYRE_REG_SEM_VALUE_HI:
		return (uint32_t)(m->sems[m->sem_select].value >> 32);
	}
	if (ring_reg(m, off, &n, &reg))
		return card_ring_read(m, n, reg);
bad:
	bad_access(m, off);
	return 0;
}

static void arm_fault(struct spyre_model *m, uint32_t val)
{
	uint32_t kind = val & SPYRE_FAULT_KIND_MASK;
	uint32_t ring = (val & SPYRE_FAULT_RING_MASK) >> SPYRE_FAULT_RING_SHIFT;

	if (kind > SPYRE_FAULT_MEM_UE || ring >= m->cfg.num_rings ||
	    (val & ~(SPYRE_FAULT_KIND_MASK | SPYRE_FAULT_RING_MASK))) {
		bad_access(m, SPYRE_REG_FAULT);
		return;
	}
	m->rings[ring].fault = kind;
	m->fault_reg = kind ? val : 0;
}

bool spyre_model_write_needs_quiesce(struct spyre_model *m, uint32_t off, uint32_t val)
{
	uint32_t reg = (off - SPYRE_RING_REGS_BASE) % SPYRE_RING_REGS_STRIDE;
	uint32_t n = (off - SPYRE_RING_REGS_BASE) / SPYRE_RING_REGS_STRIDE;

	if (m->exec_ring < 0)
		return false;
	if (off == SPYRE_REG_CTRL)
		return val & SPYRE_CTRL_RESET;
	return off >= SPYRE_RING_REGS_BASE && reg == SPYRE_RING_CTRL &&
	       (val & SPYRE_RING_CTRL_RESET) && n == (uint32_t)m->exec_ring;
}

static bool model_write(struct spyre_model *m, uint32_t off, uint32_t val)
{
	unsigned int n;
	uint32_t reg;
	bool kick;

	if (off & 3)
		goto bad;
	if (off >= SPYRE_REG_MMU_NUM_CTX && off <= SPYRE_REG_MMU_TLB_MISSES) {
		if (!card_mmu_reg_write(m, off, val, &kick))
			goto bad;
		return kick;
	}
	switch (off) {
	case SPYRE_REG_CTRL:
		if (val & ~SPYRE_CTRL_RESET)
			goto bad;
		if (val & SPYRE_CTRL_RESET)
			spyre_model_reset(m);
		return false;
	case SPYRE_REG_ERR_STATUS:
		m->err_status &= ~val;
		return false;
	case SPYRE_REG_SCRATCH:
		m->scratch = val;
		return false;
	case SPYRE_REG_FAULT:
		arm_fault(m, val);
		return true;
	case SPYRE_REG_SEM_SELECT:
		if (val >= m->cfg.num_sems)
			goto bad;
		m->sem_select = val;
		return false;
	case SPYRE_REG_SEM_VALUE_LO:
		m->sem_lo_latch = val;
		return false;
	case SPYRE_REG_SEM_VALUE_HI:
		card_sem_signal_now(m, m->sem_select, (uint64_t)val << 32 | m->sem_lo_latch);
		return true;
	}
	if (ring_reg(m, off, &n, &reg))
		return card_ring_write(m, n, reg, val);
bad:
	bad_access(m, off);
	return false;
}

/*
 * A register write may follow software's write of a counter a WAIT_MEM
 * waits for (1.10): then it may make work runnable too.
 */
bool spyre_model_write(struct spyre_model *m, uint32_t off, uint32_t val)
{
	bool kick = model_write(m, off, val);

	return card_wait_mem_pending(m) || kick;
}

uint64_t spyre_model_process(struct spyre_model *m)
{
	return card_sched_run(m);
}
