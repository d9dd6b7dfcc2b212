// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Spyre card model: the data-triggered program scheduler. Each core runs
 * three units (LSU, PE array, SFU); each unit takes its own instructions in
 * program order and starts one when the tokens it waits for are available.
 * The scheduler always runs the instruction that can start earliest in
 * device time, so results and timeline are deterministic. When no unit can
 * start but instructions remain, the program is deadlocked. A BARRIER
 * (interface 1.8) sits in every unit's list and starts, for all the cores
 * of its mask at once, when each of their units has reached it.
 */
#include <stdlib.h>
#include <string.h>

#include "spyre_exec.h"
#include "spyre_hw.h"
#include "spyre_internal.h"
#include "spyre_mmu.h"

struct card_exec *card_exec_new(unsigned int cores)
{
	struct card_exec *e = calloc(1, sizeof(*e));

	if (e)
		e->cores = cores;
	return e;
}

void card_exec_free(struct card_exec *e)
{
	unsigned int i;

	if (!e)
		return;
	for (i = 0; i < SPYRE_MODEL_MAX_CORES; i++)
		free(e->sp[i]);
	card_hazard_free(e);
	for (i = 0; i < 4; i++)
		free(e->tmp[i]);
	for (i = 0; i < 2; i++)
		free(e->itmp[i]);
	free(e);
}

unsigned int card_insn_unit(const struct spyre_insn *in)
{
	switch (in->op) {
	case SPYRE_I_LOAD:
	case SPYRE_I_STORE:
		return SPYRE_UNIT_LSU;
	case SPYRE_I_MATMUL:
		return SPYRE_UNIT_PE;
	case SPYRE_I_VEC:
		return SPYRE_UNIT_SFU;
	default:
		return in->flags;	/* NOP names its unit */
	}
}

static bool zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		if (*b++)
			return false;
	return true;
}

uint32_t card_insn_check(const struct spyre_insn *in, unsigned int cores, uint32_t nslots)
{
	uint32_t all = cores >= 32 ? 0xffffffffu : (1u << cores) - 1;

	if (in->rsvd || (in->core_mask & ~all))
		return SPYRE_CMD_ERR_PROGRAM;
	switch (in->op) {
	case SPYRE_I_NOP:
		if (in->flags >= SPYRE_UNIT_COUNT || in->dtype || in->dtype_out ||
		    !zero(in->u.raw, sizeof(in->u.raw)))
			return SPYRE_CMD_ERR_PROGRAM;
		return SPYRE_CMD_OK;
	case SPYRE_I_LOAD:
	case SPYRE_I_STORE:
		if (in->flags == SPYRE_LOAD_GATHER && in->op == SPYRE_I_LOAD &&
		    (in->u.mem.core_div || in->u.mem.core_stride ||
		     in->u.mem.core_stride2 % 4 ||
		     in->u.mem.core_stride2 + 4ull * in->u.mem.rows > SPYRE_MODEL_SCRATCHPAD_BYTES))
			return SPYRE_CMD_ERR_PROGRAM;
		if (in->flags == SPYRE_LOAD_MCAST && in->op == SPYRE_I_LOAD &&
		    (in->u.mem.core_div || in->u.mem.core_stride || in->u.mem.core_stride2 ||
		     !in->core_mask))
			return SPYRE_CMD_ERR_PROGRAM;
		if ((in->flags && !((in->flags == SPYRE_LOAD_GATHER ||
				     in->flags == SPYRE_LOAD_MCAST) && in->op == SPYRE_I_LOAD)) ||
		    in->dtype || in->dtype_out || in->u.mem.rsvd ||
		    (in->u.mem.slot >= nslots && in->u.mem.slot != SPYRE_ISA_SLOT_WS) ||
		    !in->u.mem.rows || !in->u.mem.row_bytes ||
		    (uint64_t)in->u.mem.rows * in->u.mem.row_bytes > SPYRE_MODEL_SCRATCHPAD_BYTES)
			return SPYRE_CMD_ERR_PROGRAM;	/* at most a scratchpad per instruction */
		return SPYRE_CMD_OK;
	case SPYRE_I_MATMUL:
		if ((in->flags & ~(SPYRE_MM_ACC | SPYRE_MM_TRANS_B)) || in->u.mm.rsvd ||
		    !zero(in->u.mm.rsvd2, sizeof(in->u.mm.rsvd2)) ||
		    !in->u.mm.m || !in->u.mm.n || !in->u.mm.k)
			return SPYRE_CMD_ERR_PROGRAM;
		if (in->dtype == SPYRE_DT_INT8 ? in->dtype_out != SPYRE_DT_INT32 :
		    (in->dtype > SPYRE_DT_DLF16 || in->dtype_out != SPYRE_DT_FP32))
			return SPYRE_CMD_ERR_PROGRAM;
		return SPYRE_CMD_OK;
	case SPYRE_I_BARRIER:
		if (in->flags || in->dtype || in->dtype_out || in->wait || in->signal ||
		    !in->core_mask || !zero(in->u.raw, sizeof(in->u.raw)))
			return SPYRE_CMD_ERR_PROGRAM;
		return SPYRE_CMD_OK;
	case SPYRE_I_VEC:
		if ((in->flags & SPYRE_VEC_INT) ? !card_vec_int_valid(in) :
		    (in->u.vec.func >= SPYRE_VF_NEG || in->dtype == SPYRE_DT_INT64 ||
		     in->dtype_out == SPYRE_DT_INT64))
			return SPYRE_CMD_ERR_PROGRAM;	/* integer mode: 1.9 */
		if ((in->flags & ~(SPYRE_VEC_SRC1_COL | SPYRE_VEC_INT)) ||
		    in->u.vec.func >= SPYRE_VF_COUNT ||
		    in->dtype >= SPYRE_DT_COUNT || in->dtype_out >= SPYRE_DT_COUNT ||
		    !zero(in->u.vec.rsvd, 3) || in->u.vec.rsvd2 ||
		    !in->u.vec.rows || !in->u.vec.cols ||
		    (uint64_t)in->u.vec.rows * in->u.vec.cols > SPYRE_MODEL_SCRATCHPAD_BYTES)
			return SPYRE_CMD_ERR_PROGRAM;
		return SPYRE_CMD_OK;
	}
	return SPYRE_CMD_ERR_PROGRAM;
}

/* What (core, unit) can do next: its head instruction and when it can start. */
struct cand {
	uint32_t i;		/* head instruction, UINT32_MAX when none is left */
	bool ok;		/* it can start (its tokens are there) */
	uint64_t start;
};

/*
 * The scheduler's state. Each (core, unit) has its own list of the
 * instructions it runs, so finding its next one is an array read. A
 * candidate depends only on its core's tokens, its unit's clock and its
 * head, which change only when that core runs something (or a BARRIER of
 * it does): only the cores in @dirty are evaluated again before the next
 * choice, which stays the same as evaluating every core every time.
 */
struct sched {
	const struct spyre_insn *insn;
	uint32_t n;
	uint32_t *idx;		/* every (core, unit) list, back to back */
	uint32_t *list[SPYRE_MODEL_MAX_CORES][SPYRE_UNIT_COUNT];
	uint32_t len[SPYRE_MODEL_MAX_CORES][SPYRE_UNIT_COUNT];
	uint32_t pc[SPYRE_MODEL_MAX_CORES][SPYRE_UNIT_COUNT];
	uint32_t *arrived;	/* per BARRIER: (core, unit) heads that reached it */
	struct cand cand[SPYRE_MODEL_MAX_CORES][SPYRE_UNIT_COUNT];
	uint32_t dirty;		/* cores whose candidates must be evaluated again */
};

/* Next instruction of (core, unit), or UINT32_MAX. */
static uint32_t head(struct sched *s, unsigned int c, unsigned int u)
{
	return s->pc[c][u] < s->len[c][u] ? s->list[c][u][s->pc[c][u]] : UINT32_MAX;
}

/* A LOAD MCAST (1.12): one instruction run once for all the cores of its mask. */
static bool is_mcast(const struct spyre_insn *in)
{
	return in->op == SPYRE_I_LOAD && in->flags == SPYRE_LOAD_MCAST;
}

static uint32_t barrier_need(const struct spyre_insn *in)
{
	return (uint32_t)__builtin_popcount(in->core_mask) *
	       (is_mcast(in) ? 1 : SPYRE_UNIT_COUNT);
}

/* (core, unit)'s head moved: count its arrival if it is a BARRIER or an MCAST. */
static void arrive(struct sched *s, unsigned int c, unsigned int u)
{
	uint32_t i = head(s, c, u);

	if (i != UINT32_MAX && (s->insn[i].op == SPYRE_I_BARRIER || is_mcast(&s->insn[i])) &&
	    ++s->arrived[i] == barrier_need(&s->insn[i]))
		s->dirty |= s->insn[i].core_mask;	/* it can start now */
}

static unsigned int rank_of(uint32_t mask, unsigned int core)
{
	return (unsigned int)__builtin_popcount(mask & ((1u << core) - 1));
}

static uint32_t execute(struct card_exec *e, const struct card_bind *b,
			const struct spyre_insn *in, unsigned int c)
{
	switch (in->op) {
	case SPYRE_I_LOAD:
	case SPYRE_I_STORE:
		return card_unit_lsu(e, b, in, c, rank_of(in->core_mask, c));
	case SPYRE_I_MATMUL:
		return card_unit_pe(e, in, c);
	case SPYRE_I_VEC:
		return card_unit_sfu(e, in, c);
	}
	return SPYRE_CMD_OK;
}

/* Earliest start of instruction @i on core @c, or false if a token is missing. */
static bool can_start(struct card_exec *e, const struct spyre_insn *in, unsigned int c,
		      unsigned int u, uint64_t *start)
{
	uint64_t t = e->unit_free[c][u];
	unsigned int k;

	for (k = 0; k < SPYRE_ISA_TOKENS; k++) {
		struct card_token *tk = &e->tokens[c][k];

		if (!(in->wait & (1u << k)))
			continue;
		if (!tk->count)
			return false;
		t = card_max64(t, tk->ns[tk->head]);
	}
	*start = t;
	return true;
}

/*
 * Start of BARRIER @i: once every unit of every core of its mask has it at
 * the head of its list (so all their earlier instructions ran), when the
 * last of those units is free; false before.
 */
static bool barrier_start(struct card_exec *e, struct sched *s, uint32_t i, uint64_t *start)
{
	uint32_t mask = s->insn[i].core_mask;
	uint64_t t = 0;
	unsigned int c, u;

	if (s->arrived[i] != barrier_need(&s->insn[i]))
		return false;
	for (c = 0; c < e->cores; c++) {
		if (!(mask & (1u << c)))
			continue;
		for (u = 0; u < SPYRE_UNIT_COUNT; u++)
			t = card_max64(t, e->unit_free[c][u]);
	}
	*start = t;
	return true;
}

/*
 * Start of MCAST @i, evaluated for its lowest core only (the other cores
 * hold it as a candidate that cannot start): once every core of its mask
 * has it next on its LSU, the latest of their LSUs' free times and of the
 * tokens it waits for on each of them; false before.
 */
static bool mcast_start(struct card_exec *e, struct sched *s, uint32_t i, unsigned int c,
			uint64_t *start)
{
	const struct spyre_insn *in = &s->insn[i];
	uint32_t mask = in->core_mask;
	uint64_t t = 0, tc;
	unsigned int d;

	if ((unsigned int)__builtin_ctz(mask) != c || s->arrived[i] != barrier_need(in))
		return false;
	for (d = 0; d < e->cores; d++) {
		if (!(mask & (1u << d)))
			continue;
		if (!can_start(e, in, d, SPYRE_UNIT_LSU, &tc))
			return false;
		t = card_max64(t, tc);
	}
	*start = t;
	return true;
}

/* Run BARRIER @i from @start: every unit of its cores moves past it at its end. */
static uint64_t run_barrier(struct card_exec *e, const struct spyre_timing *t, struct sched *s,
			    uint32_t i, uint64_t start)
{
	uint64_t end = start + card_time_cycles(t, t->barrier_cycles);
	uint32_t mask = s->insn[i].core_mask;
	unsigned int c, u;

	for (c = 0; c < e->cores; c++) {
		if (!(mask & (1u << c)))
			continue;
		if (e->hazard_check)
			card_hazard_barrier(e, c);
		for (u = 0; u < SPYRE_UNIT_COUNT; u++) {
			e->unit_free[c][u] = end;
			s->pc[c][u]++;
		}
		for (u = 0; u < SPYRE_UNIT_COUNT; u++)
			arrive(s, c, u);
	}
	s->dirty |= mask;
	return end;
}

static uint32_t run(struct card_exec *e, const struct spyre_timing *t,
		    const struct card_bind *b, struct sched *s, uint64_t *ns)
{
	uint64_t end_all = 0;

	for (;;) {
		uint32_t best = UINT32_MAX, i, st, cores, m, hd;
		unsigned int bc = 0, bu = 0, c, u, k;
		uint64_t best_t = UINT64_MAX, start, dur, dram_ns, end, at;
		bool left = false;
		const struct spyre_insn *in;

		if (__atomic_load_n(e->abort, __ATOMIC_ACQUIRE))
			return CARD_CMD_ABORTED;
		if (e->progress)
			__atomic_fetch_add(e->progress, 1, __ATOMIC_RELAXED);
		while (s->dirty) {
			c = (unsigned int)__builtin_ctz(s->dirty);
			s->dirty &= s->dirty - 1;
			for (u = 0; c < e->cores && u < SPYRE_UNIT_COUNT; u++) {
				struct cand *cd = &s->cand[c][u];

				cd->i = head(s, c, u);
				cd->ok = cd->i != UINT32_MAX &&
					 (s->insn[cd->i].op == SPYRE_I_BARRIER ?
						  barrier_start(e, s, cd->i, &cd->start) :
					  is_mcast(&s->insn[cd->i]) ?
						  mcast_start(e, s, cd->i, c, &cd->start) :
						  can_start(e, &s->insn[cd->i], c, u, &cd->start));
			}
		}
		/* earliest start, then lowest index, then lowest core */
		for (c = 0; c < e->cores; c++) {
			for (u = 0; u < SPYRE_UNIT_COUNT; u++) {
				const struct cand *cd = &s->cand[c][u];

				if (cd->i == UINT32_MAX)
					continue;
				left = true;
				start = cd->start;
				i = cd->i;
				if (!cd->ok)
					continue;
				if (start < best_t || (start == best_t && i < best)) {
					best_t = start;
					best = i;
					bc = c;
					bu = u;
				}
			}
		}
		if (best == UINT32_MAX) {
			*ns = end_all;
			return left ? SPYRE_CMD_ERR_DEADLOCK : SPYRE_CMD_OK;
		}
		in = &s->insn[best];
		if (in->op == SPYRE_I_BARRIER) {
			end_all = card_max64(end_all, run_barrier(e, t, s, best, best_t));
			continue;
		}
		/* an MCAST runs on every core of its mask; anything else on @bc */
		cores = is_mcast(in) ? in->core_mask : 1u << bc;
		for (m = cores; m; m &= m - 1) {
			c = (unsigned int)__builtin_ctz(m);
			for (k = 0; k < SPYRE_ISA_TOKENS; k++) {
				struct card_token *tk = &e->tokens[c][k];

				if (in->wait & (1u << k)) {
					if (e->hazard_check)
						card_hazard_wait(e, c, bu,
								 e->tok_vc[c][k][tk->head]);
					tk->head = (tk->head + 1) % SPYRE_ISA_TOKEN_MAX;
					tk->count--;
				}
			}
			e->vc[c][bu][bu]++;	/* this instruction's number on its unit */
			e->cur_unit = bu;
			e->fault_space = SPYRE_FAULT_SPACE_NONE;
			e->fault_addr = 0;
			st = execute(e, b, in, c);
			if (st != SPYRE_CMD_OK) {
				e->fault_insn = best;
				e->fault_core = c;
				return st;
			}
		}
		at = best_t;
		if (b->va && b->va->walk_reads && e->dram)	/* MMU table walks come first */
			at = card_va_walk_end(b->va, e->dram, e->time_base + best_t) - e->time_base;
		dur = card_insn_ns(t, in, e->lsu_addr, &dram_ns);
		if (is_mcast(in))	/* the ring carries the one read to every core */
			dur += card_time_cycles(t, t->mcast_cycles);
		end = at + dur;
		if (dram_ns && e->dram) {
			/* LPDDR5 is shared by all cores and the DMA engines */
			end = card_max64(end, card_dram_reserve(e->dram, e->time_base + at,
								  dram_ns) - e->time_base);
		} else if (dram_ns) {
			e->dram_free = card_max64(e->dram_free, at) + dram_ns;
			end = card_max64(end, e->dram_free);
		}
		end_all = card_max64(end_all, end);
		for (m = cores; m; m &= m - 1) {
			c = (unsigned int)__builtin_ctz(m);
			e->unit_free[c][bu] = end;
			for (k = 0; k < SPYRE_ISA_TOKENS; k++) {
				struct card_token *tk = &e->tokens[c][k];

				if (!(in->signal & (1u << k)))
					continue;
				if (tk->count == SPYRE_ISA_TOKEN_MAX) {
					e->fault_insn = best;	/* token overflow */
					e->fault_core = c;
					return SPYRE_CMD_ERR_PROGRAM;
				}
				tk->ns[(tk->head + tk->count) % SPYRE_ISA_TOKEN_MAX] = end;
				memcpy(e->tok_vc[c][k][(tk->head + tk->count) %
						       SPYRE_ISA_TOKEN_MAX],
				       e->vc[c][bu], sizeof(e->vc[c][bu]));
				tk->count++;
			}
			s->pc[c][bu]++;
			arrive(s, c, bu);
			s->dirty |= 1u << c;
			/* an MCAST waiting at this LSU depends on these tokens too */
			hd = head(s, c, SPYRE_UNIT_LSU);
			if (hd != UINT32_MAX && is_mcast(&s->insn[hd]))
				s->dirty |= s->insn[hd].core_mask;
		}
	}
}

uint64_t card_scrub_scratchpads(struct card_exec *e, const struct spyre_timing *t)
{
	uint64_t cycles = SPYRE_MODEL_SCRATCHPAD_BYTES / t->ring_bytes_per_cycle;
	unsigned int i;

	/* every core clears its own scratchpad, in parallel, a stick per cycle */
	for (i = 0; i < SPYRE_MODEL_MAX_CORES; i++) {
		if (e->sp[i]) {
			memset(e->sp[i], 0, SPYRE_MODEL_SCRATCHPAD_BYTES);
			memset(e->sp_dirty[i], 0xff, sizeof(e->sp_dirty[i]));
		}
	}
	return cycles * 1000 / t->clock_mhz;
}

/* Poison core @c's whole scratchpad: rewrite the pages written since the last time. */
static void repoison(struct card_exec *e, unsigned int c)
{
	unsigned int w, p, q;

	for (w = 0; w < CARD_SP_PAGES / 64; w++) {
		uint64_t bits = e->sp_dirty[c][w];

		while (bits) {
			/* one memset per run of dirty pages */
			p = (unsigned int)__builtin_ctzll(bits);
			q = p;
			while (q < 64 && (bits >> q & 1))
				q++;
			memset(e->sp[c] + ((size_t)(w * 64 + p) << CARD_SP_PAGE_SHIFT), CARD_SP_POISON,
			       (size_t)(q - p) << CARD_SP_PAGE_SHIFT);
			bits &= q < 64 ? ~((1ull << q) - 1) : 0;
		}
		e->sp_dirty[c][w] = 0;
	}
}

/* Each (core, unit)'s list of instructions, in program order. */
static bool build_lists(struct card_exec *e, struct sched *s)
{
	uint32_t cnt[SPYRE_MODEL_MAX_CORES][SPYRE_UNIT_COUNT] = { { 0 } }, i, mask;
	unsigned int c, u, u0, u1;
	uint64_t total = 0;
	uint32_t *p;

	for (i = 0; i < s->n; i++) {
		const struct spyre_insn *in = &s->insn[i];

		u0 = in->op == SPYRE_I_BARRIER ? 0 : card_insn_unit(in);
		u1 = in->op == SPYRE_I_BARRIER ? SPYRE_UNIT_COUNT : u0 + 1;
		for (mask = in->core_mask; mask; mask &= mask - 1) {
			c = (unsigned int)__builtin_ctz(mask);
			for (u = u0; c < e->cores && u < u1; u++)
				cnt[c][u]++;
		}
	}
	for (c = 0; c < e->cores; c++)
		for (u = 0; u < SPYRE_UNIT_COUNT; u++)
			total += cnt[c][u];
	s->idx = malloc((total ? total : 1) * sizeof(uint32_t));
	s->arrived = calloc(s->n, sizeof(uint32_t));
	if (!s->idx || !s->arrived)
		return false;
	p = s->idx;
	for (c = 0; c < e->cores; c++) {
		for (u = 0; u < SPYRE_UNIT_COUNT; u++) {
			s->list[c][u] = p;
			p += cnt[c][u];
		}
	}
	for (i = 0; i < s->n; i++) {
		const struct spyre_insn *in = &s->insn[i];

		u0 = in->op == SPYRE_I_BARRIER ? 0 : card_insn_unit(in);
		u1 = in->op == SPYRE_I_BARRIER ? SPYRE_UNIT_COUNT : u0 + 1;
		for (mask = in->core_mask; mask; mask &= mask - 1) {
			c = (unsigned int)__builtin_ctz(mask);
			for (u = u0; c < e->cores && u < u1; u++)
				s->list[c][u][s->len[c][u]++] = i;
		}
	}
	for (c = 0; c < e->cores; c++)
		for (u = 0; u < SPYRE_UNIT_COUNT; u++)
			arrive(s, c, u);
	s->dirty = e->cores >= 32 ? 0xffffffffu : (1u << e->cores) - 1;
	return true;
}

uint32_t card_program_run(struct card_exec *e, const struct spyre_timing *t,
			   const struct card_bind *b, const struct spyre_insn *insn,
			   uint32_t n, uint64_t *ns)
{
	struct sched *s = calloc(1, sizeof(*s));
	uint32_t i, st = SPYRE_CMD_ERR_PROGRAM;

	*ns = 0;
	e->fault_insn = SPYRE_FAULT_INSN_NONE;
	e->fault_core = 0;
	e->fault_space = SPYRE_FAULT_SPACE_NONE;
	e->fault_addr = 0;
	if (!s)
		return st;
	s->insn = insn;
	s->n = n;
	if (!build_lists(e, s))
		goto out;
	/*
	 * Empty every token queue: a slot's time is only read between head
	 * and head + count, so the 266 KB of slots need no clearing (that
	 * memset was most of a small launch's host time on the sim).
	 */
	for (i = 0; i < SPYRE_MODEL_MAX_CORES * SPYRE_ISA_TOKENS; i++) {
		struct card_token *tk = &e->tokens[0][0] + i;

		tk->head = tk->count = 0;
	}
	memset(e->unit_free, 0, sizeof(e->unit_free));
	e->dram_free = 0;
	if (e->hazard_check)
		card_hazard_launch(e);
	for (i = 0; e->poison && i < SPYRE_MODEL_MAX_CORES; i++) {
		if (e->sp_used[i] && e->sp[i])
			repoison(e, i);
		e->sp_used[i] = false;
	}
	st = run(e, t, b, s, ns);
out:
	free(s->idx);
	free(s->arrived);
	free(s);
	return st;
}
