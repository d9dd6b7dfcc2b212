// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Spyre card model: the LAUNCH command. Checks the descriptor and its
 * argument slots, copies the program out of device memory (so the host
 * cannot change it under the running cores), checks its header and every
 * instruction, then runs it on the compute engine with the lock dropped.
 */
#include <stdlib.h>

#include "spyre_exec.h"
#include "spyre_internal.h"
#include "spyre_mmu.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the program decoder assumes a little-endian host"
#endif

uint32_t card_launch_check(struct spyre_model *m, const struct card_cmd *c)
{
	const struct spyre_hw_launch *d = &c->desc.launch;
	/* in an MMU context the ranges are card VAs, translated when used */
	uint64_t size = c->ctx ? 1ull << SPYRE_MMU_VA_BITS : m->cfg.mem_size;
	uint32_t i;

	if ((d->flags & ~SPYRE_DESC_F_SCRUB) || d->rsvd ||
	    !card_all_zero(d->rsvd2, sizeof(d->rsvd2)))
		return SPYRE_CMD_ERR_INVALID;
	if (!card_range_ok(spyre_le64_to_cpu(d->prog_addr), spyre_le64_to_cpu(d->prog_len),
			    size) ||
	    !card_range_ok(spyre_le64_to_cpu(d->ws_addr), spyre_le64_to_cpu(d->ws_len), size))
		return SPYRE_CMD_ERR_BOUNDS;
	for (i = 0; i < c->nargs; i++)
		if (!card_range_ok(c->arg_addr[i], c->arg_len[i], size))
			return SPYRE_CMD_ERR_BOUNDS;
	return SPYRE_CMD_OK;
}

/* Read @len program bytes at @off: from device memory, or fetched through the MMU. */
static uint32_t prog_read(struct spyre_model *m, const struct card_cmd *c, struct card_va *v,
			  uint64_t off, void *buf, uint64_t len)
{
	uint64_t addr = spyre_le64_to_cpu(c->desc.launch.prog_addr) + off;

	if (v)
		return card_va_copy(v, addr, buf, len, SPYRE_MMU_ACCESS_EXEC, CARD_VA_DEV);
	memcpy(buf, m->devmem + addr, len);
	return SPYRE_CMD_OK;
}

/* Check the header; copy and check the instructions. */
static uint32_t load_program(struct spyre_model *m, const struct card_cmd *c, struct card_va *v,
			     struct spyre_insn **out, uint32_t *count)
{
	const struct spyre_hw_launch *d = &c->desc.launch;
	uint64_t len = spyre_le64_to_cpu(d->prog_len);
	struct spyre_prog_header h;
	struct spyre_insn *in;
	uint32_t i, st;

	if (len < sizeof(h))
		return SPYRE_CMD_ERR_PROGRAM;
	st = prog_read(m, c, v, 0, &h, sizeof(h));
	if (st != SPYRE_CMD_OK)
		return st;
	if (h.magic != SPYRE_PROG_MAGIC || h.version != SPYRE_PROG_VERSION ||
	    h.header_size != SPYRE_PROG_HEADER_SIZE || h.rsvd || h.rsvd2 ||
	    h.num_insns < 1 || h.num_insns > SPYRE_PROG_MAX_INSNS ||
	    len < SPYRE_PROG_HEADER_SIZE + (uint64_t)h.num_insns * SPYRE_PROG_INSN_SIZE)
		return SPYRE_CMD_ERR_PROGRAM;
	if (h.num_slots > c->nargs || h.workspace_size > spyre_le64_to_cpu(d->ws_len))
		return SPYRE_CMD_ERR_PROGRAM;
	in = malloc((size_t)h.num_insns * sizeof(*in));
	if (!in)
		return SPYRE_CMD_ERR_PROGRAM;
	st = prog_read(m, c, v, SPYRE_PROG_HEADER_SIZE, in, (size_t)h.num_insns * sizeof(*in));
	if (st != SPYRE_CMD_OK) {
		free(in);
		return st;
	}
	for (i = 0; i < h.num_insns; i++) {
		st = card_insn_check(&in[i], m->cfg.num_cores, c->nargs);
		if (st != SPYRE_CMD_OK) {
			free(in);
			return st;
		}
	}
	*out = in;
	*count = h.num_insns;
	return SPYRE_CMD_OK;
}

/*
 * 1.11: the card scrubs the scratchpads itself when the compute engine
 * passes to or from a user-mode queue of another owner: the driver, which
 * sets F_SCRUB between the clients of its own rings, never sees the
 * LAUNCHes a process writes into its queue. Called when the program
 * starts (a LAUNCH that fails before does not touch the scratchpads).
 */
static bool user_queue_scrub(struct spyre_model *m, unsigned int ring)
{
	const struct card_ring *r = &m->rings[ring];
	uint32_t owner = r->ring_va ? r->ctx : CARD_SP_OWNER_KERNEL;
	bool scrub = owner != m->sp_owner;

	m->sp_owner = owner;
	return scrub;
}

uint32_t card_launch_run(struct spyre_model *m, unsigned int ring, const struct card_cmd *c,
			  uint64_t *duration_ns)
{
	const struct spyre_hw_launch *d = &c->desc.launch;
	struct spyre_insn *in = NULL;
	struct card_bind b;
	struct card_va v;
	uint64_t ns = 0, base = m->cmd_start + m->cfg.timing.launch_latency_ns;
	uint64_t fetch_at = m->cmd_start;
	uint32_t n = 0, st, i;

	memset(&b, 0, sizeof(b));
	if (c->ctx) {
		card_va_init(&v, m, c->ctx);
		b.va = &v;
	}
	b.devmem = m->devmem;
	b.nslots = c->nargs;
	for (i = 0; i < c->nargs; i++) {
		b.slot_addr[i] = c->arg_addr[i];
		b.slot_len[i] = c->arg_len[i];
	}
	b.ws_addr = spyre_le64_to_cpu(d->ws_addr);
	b.ws_len = spyre_le64_to_cpu(d->ws_len);

	m->exec->fault_insn = SPYRE_FAULT_INSN_NONE;	/* a bad program names none */
	card_unlock(m, (int)ring);
	st = load_program(m, c, b.va, &in, &n);
	if (st == SPYRE_CMD_OK && b.va)	/* the fetch waits for its table walks */
		fetch_at = card_va_walk_end(b.va, &m->dram, m->cmd_start);
	if (st == SPYRE_CMD_OK) {
		/*
		 * The program is read from LPDDR5 during the launch latency; its
		 * bytes take their share of the channel, and a program too big
		 * for the latency to cover delays the start.
		 */
		uint64_t fetch = card_time_bytes(SPYRE_PROG_HEADER_SIZE +
						  (uint64_t)n * SPYRE_PROG_INSN_SIZE,
						  m->cfg.timing.dram_bytes_per_us);

		base = card_max64(base, card_dram_reserve(&m->dram, fetch_at, fetch));
		if (user_queue_scrub(m, ring) || (d->flags & SPYRE_DESC_F_SCRUB))
			base += card_scrub_scratchpads(m->exec, &m->cfg.timing);
		m->exec->abort = &m->abort_req;
		m->exec->progress = &m->rings[ring].progress;
		m->exec->dram = &m->dram;
		m->exec->time_base = base;
		st = card_program_run(m->exec, &m->cfg.timing, &b, in, n, &ns);
	}
	free(in);
	card_lock(m);
	if (card_abort_pending(m))
		return CARD_CMD_ABORTED;
	if (st != SPYRE_CMD_OK && m->exec->fault_insn != SPYRE_FAULT_INSN_NONE &&
	    m->rings[ring].job.status == SPYRE_CMD_OK) {
		struct card_job *j = &m->rings[ring].job;

		j->has_fault = true;
		j->fault_insn = m->exec->fault_insn;
		j->fault_core = m->exec->fault_core;
		j->fault_space = m->exec->fault_space;
		j->fault_addr = m->exec->fault_addr;
	}
	*duration_ns = base - m->cmd_start + ns;
	return st;
}
