// SPDX-License-Identifier: MIT
/*
 * Matmul with operand tiles shared by a grid of cores (card interface
 * 1.12, LOAD MCAST). The 32 cores form a gr x gc grid; a round computes a
 * block of gr x gc output tiles [tm x tn], one per core. For each K chunk
 * the A tile of grid row i is read from LPDDR5 once and multicast to that
 * row's gc cores, the B tile of grid column j once to its gr cores: every
 * operand byte is read gc (A) or gr (B) times fewer than with a load per
 * core, which is what lets the PE arrays, not the 200 GB/s channel, set
 * the time of a large GEMM.
 *
 * K chunks are double-buffered (the multicasts of chunk i+1 overlap the
 * products of chunk i) and the two accumulators let the epilogue and store
 * of one round overlap the products of the next. When a core's A rows over
 * the whole K fit next to the rest (an LM head's 512 x 768 activations do),
 * they stay resident while the rounds of their block row stream B: A is
 * read once instead of once per column block, and narrower column blocks
 * (more rounds) leave only a small last store unoverlapped. Grid shape and tile sizes
 * come from an analytic model of the card's timing (PE rate, LPDDR5 and
 * ring-port bytes per chunk); the generated programs are cached with the
 * kernel's spec like every other kernel.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ew_plan.h"
#include "mm_gen.h"

/* Card defaults (Documentation/spyre-card.rst, "Timing parameters"). */
#define MC_DRAM_BYTES_PER_CYCLE 200.0
#define MC_RING_BYTES_PER_CYCLE 128.0
#define MC_INSN_CYCLES 24.0	/* issue + PE fill */

struct mc_plan {
	unsigned int gr, gc;	/* grid rows x columns (gr * gc = 32) */
	uint32_t tm, tn, tk;
	uint32_t rb, cb;	/* block rows and block columns: rounds = rb * cb */
	bool ares;		/* A resident across a block row's rounds */
	double est;		/* modelled cycles */
};

static uint32_t cdiv32(int64_t a, int64_t b)
{
	return (uint32_t)((a + b - 1) / b);
}

static double max3(double a, double b, double c)
{
	double m = a > b ? a : b;

	return m > c ? m : c;
}

/* Modelled cycles of plan @c (pe: MACs per cycle, es/oes: element sizes). */
static double mc_estimate(const struct mm_spec *s, const struct mc_plan *c, unsigned int rate,
			  unsigned int es, unsigned int bes, unsigned int oes, bool trans)
{
	uint32_t nkc = cdiv32(s->k, c->tk), arow, orow;
	double pe, adram, bdram, aring, bring, store, stall, first, first0, rest, brows;

	pe = MC_INSN_CYCLES + (double)align_up(c->tm, 8) * align_up(c->tn, 8) * c->tk / rate;
	if (s->b_int8)	/* int8 weights widened by the vector unit (128 per cycle) */
		pe += 4.0 + (double)c->tn * c->tk / 128;
	pe *= 1 + s->dual;	/* a dual spec: two products per chunk */
	/* loads move whole 128-byte sticks: a row of 64 int8 values costs 128 bytes */
	arow = align_up(c->tk * es, 128);
	brows = (1 + s->dual) * (trans ? (double)c->tn * align_up(c->tk * bes, 128) :
					 (double)c->tk * align_up(c->tn * bes, 128));
	adram = (double)c->gr * c->tm * arow / MC_DRAM_BYTES_PER_CYCLE;
	bdram = (double)c->gc * brows / MC_DRAM_BYTES_PER_CYCLE;
	aring = (double)c->tm * arow / MC_RING_BYTES_PER_CYCLE;
	bring = 40.0 + brows / MC_RING_BYTES_PER_CYCLE;
	/* stores too: a row that does not start on a stick touches one more */
	orow = align_up(c->tn * oes, 128);
	if ((c->tn * oes) % 128 || (s->epi.out.strides[s->nbatch] * oes) % 128)
		orow += 128;
	store = 32.0 * c->tm * orow / MC_DRAM_BYTES_PER_CYCLE;
	/*
	 * A round that loads A; with A resident the block row's others do not.
	 * The previous round's store sits on the load/store unit after this
	 * round's first two chunks: the PE array has only those to work on
	 * while the store drains.
	 */
	stall = store > (nkc > 1 ? 2 : 1) * pe ? store - (nkc > 1 ? 2 : 1) * pe : 0;
	first = max3(nkc * pe + stall, nkc * (adram + bdram) + store, nkc * (aring + bring));
	rest = c->ares ? max3(nkc * pe + stall, nkc * bdram + store, nkc * bring) : first;
	/*
	 * The kernel's first round has no store before it to drain (counted,
	 * a one-round plan paid its store twice: 512x768x768 took a 3-round
	 * A-resident plan, 18.3 us, over the one-round one, 16.4 us).
	 */
	first0 = max3(nkc * pe, nkc * (adram + bdram), nkc * (aring + bring));
	/* the first chunk's loads and the last round's store are not overlapped */
	return first0 + (c->rb - 1) * first + (double)c->rb * (c->cb - 1) * rest + adram + bdram +
	       store;
}

/*
 * Modelled cycles of the one-core-per-tile schedule (mm.c): every core
 * loads its own A and B tiles, so LPDDR5 carries them once per tile; it
 * spreads small batched products over all cores better than rounds of a
 * grid do.
 */
static double mc_old_estimate(const struct mm_gen *g)
{
	const struct mm_spec *s = g->s;
	unsigned int rate = s->dtype == SPYRE_DT_INT8 ? 4096 : s->dtype == SPYRE_DT_FP32 ? 256 :
							     1024;
	double tm = s->m < 128 ? (double)s->m : 128, tn = s->n < 256 ? (double)s->n : 256;
	double tiles = (double)g->nb * cdiv32(s->m, (int64_t)tm) * cdiv32(s->n, (int64_t)tn);
	double bytes = tiles * (tm * g->es + (1 + s->dual) * tn * g->bes) * s->k +
		       (double)g->nb * s->m * s->n * pb_dtype_size(s->epi.out.dtype);
	double pe = (1 + s->dual) * (double)g->nb * align_up((uint32_t)s->m, 8) *
		    align_up((uint32_t)s->n, 8) * s->k / rate / 32;

	return bytes / MC_DRAM_BYTES_PER_CYCLE > pe ? bytes / MC_DRAM_BYTES_PER_CYCLE : pe;
}

static int mc_plan(struct mm_gen *g, struct mc_plan *best)
{
	static const unsigned int grids[][2] = { { 4, 8 }, { 8, 4 }, { 2, 16 }, { 16, 2 } };
	static const uint32_t tks[] = { 256, 128, 64 };
	const struct mm_spec *s = g->s;
	unsigned int rate = s->dtype == SPYRE_DT_INT8 ? 4096 : s->dtype == SPYRE_DT_FP32 ? 256 :
							     1024;
	unsigned int oes = pb_dtype_size(s->epi.out.dtype), gi, ki;
	uint32_t rb, cb;
	bool pe_bound;

	/*
	 * A resident only where LPDDR5 sets the time (an LM head, a prefill's
	 * linears): where the PE arrays do, the A re-reads it saves were hidden
	 * anyway and the sim card runs its plans slower than the model says.
	 * Int8 weights count as LPDDR5-bound (their widening is not PE time).
	 */
	pe_bound = !s->b_int8 &&
		   (1 + s->dual) * (double)g->nb * s->m * s->n * s->k / (32.0 * rate) >
		   (double)g->nb * (s->m * s->k * g->es + s->m * s->n * oes) / MC_DRAM_BYTES_PER_CYCLE +
			   (1 + s->dual) * (double)s->k * s->n * g->bes / MC_DRAM_BYTES_PER_CYCLE;
	best->est = 0;
	for (gi = 0; gi < sizeof(grids) / sizeof(grids[0]); gi++) {
		for (rb = 1; rb <= 64; rb++) {
			struct mc_plan c = { grids[gi][0], grids[gi][1], 0, 0, 0, rb, 0, false, 0 };

			c.tm = cdiv32(s->m, (int64_t)c.gr * rb);
			if (c.tm < 64 || (int64_t)(c.gr * rb - 1) * c.tm >= s->m)
				break;	/* too thin, or a core without rows */
			for (cb = 1; cb <= 128; cb++) {
				c.cb = cb;
				c.tn = cdiv32(s->n, (int64_t)c.gc * cb);
				if (c.tn < 64 || (int64_t)(c.gc * cb - 1) * c.tn >= s->n)
					break;
				for (ki = 0; ki < 2 * sizeof(tks) / sizeof(tks[0]); ki++) {
					c.tk = (uint32_t)(s->k < tks[ki / 2] ? s->k : tks[ki / 2]);
					/*
					 * A resident pays off when a block row has
					 * rounds; on the sim card it only does with
					 * the largest chunks (fewer multicasts that
					 * hold a grid's cores in step)
					 */
					c.ares = ki & 1;
					if (c.ares && (cb < 3 || ki / 2 || pe_bound))
						continue;
					g->ares = c.ares;
					if (c.tm > 0xffff || c.tn > 0xffff ||
					    mm_layout(g, c.tm, c.tn, c.tk) > PB_SP_BYTES)
						continue;
					c.est = mc_estimate(s, &c, rate, g->es, g->bes, oes, g->trans);
					if (!best->est || c.est < best->est)
						*best = c;
				}
			}
		}
	}
	g->ares = false;
	return best->est ? 0 : -EAGAIN;
}

struct mc_gen {
	struct mm_gen *g;
	struct mc_plan c;
	uint32_t kc_all;	/* chunks emitted so far: the A/B buffer parity */
	uint32_t apanels;	/* resident A panels loaded so far: their parity */
	bool aload;		/* this round loads its resident A panel */
};

static uint32_t row_mask(const struct mc_plan *c, unsigned int i)
{
	return (c->gc >= 32 ? 0xffffffffu : (1u << c->gc) - 1) << (i * c->gc);
}

static uint32_t col_mask(const struct mc_plan *c, unsigned int j)
{
	uint32_t m = 0;
	unsigned int i;

	for (i = 0; i < c->gr; i++)
		m |= 1u << (i * c->gc + j);
	return m;
}

/* Output tile of core @core in round @j (its index as mm_epi counts tiles). */
static int64_t mc_tile(const struct mc_gen *x, int64_t j, unsigned int core)
{
	const struct mc_plan *c = &x->c;
	int64_t per = (int64_t)c->rb * c->cb, bi = j / per;
	int64_t r = j % per / c->cb, b = j % c->cb;
	int64_t mt = r * c->gr + core / c->gc, nt = b * c->gc + core % c->gc;

	return (bi * x->g->nmt + mt) * x->g->nnt + nt;
}

/*
 * Chunk @k0 (@tkk of K) of B (@w 0) or a dual spec's B2 (@w 1) for grid
 * column @i of block @blk, batch @bi, into buffer parity @b: multicast down
 * the column, int8 widened on every core of it.
 */
static void mc_load_b(struct mc_gen *x, struct pb *p, unsigned int w, unsigned int b,
		      unsigned int i, int64_t blk, int64_t bi, int64_t k0, uint32_t tkk)
{
	struct mm_gen *g = x->g;
	const struct mm_spec *s = g->s;
	const struct mc_plan *c = &x->c;
	const int64_t *bs = s->b.strides;
	unsigned int nb = s->nbatch, core;
	int64_t n0 = (blk * c->gc + i) * g->tn;
	uint32_t tnn = (uint32_t)(s->n - n0 < g->tn ? s->n - n0 : g->tn);
	uint32_t bsp = w ? g->b2buf[b] : g->bbuf[b], b8 = w ? g->b28buf[b] : g->b8buf[b];
	uint32_t bdst = s->b_int8 ? b8 : bsp;
	int64_t el = (w ? s->b2.off : s->b.off) + batch_off(s, bs, bi) +
		     (g->trans ? n0 * bs[nb + 1] + k0 : k0 * bs[nb] + n0);
	uint8_t slot = w ? s->b2.slot : s->b.slot;

	if (g->trans)
		pb_load_mcast(p, col_mask(c, i), slot, (uint64_t)el * g->bes, tnn, tkk * g->bes,
			      (uint32_t)(bs[nb + 1] * g->bes), bdst, g->tk * g->bes);
	else
		pb_load_mcast(p, col_mask(c, i), slot, (uint64_t)el * g->bes, tkk, tnn * g->bes,
			      (uint32_t)(bs[nb] * g->bes), bdst, g->tn * g->bes);
	for (core = 0; s->b_int8 && core < 32; core++)
		if (col_mask(c, i) & (1u << core))
			mm_widen(g, p, core, b8, bsp, g->trans ? tnn : tkk, g->trans ? tkk : tnn,
				 g->trans ? g->tk : g->tn);
}

/* Chunks [kc0, kc1) of round @j into accumulator @par on every core. */
static void mc_chunks(struct mc_gen *x, struct pb *p, int64_t j, unsigned int par, uint32_t kc0,
		      uint32_t kc1)
{
	struct mm_gen *g = x->g;
	const struct mm_spec *s = g->s;
	const struct mc_plan *c = &x->c;
	const int64_t *as = s->a.strides;
	int64_t per = (int64_t)c->rb * c->cb, bi = j / per;
	int64_t r = j % per / c->cb, blk = j % c->cb;
	int64_t aoff = s->a.off + batch_off(s, as, bi);
	unsigned int i, core, nb = s->nbatch, w;
	uint32_t kc;

	for (kc = kc0; kc < kc1; kc++) {
		int64_t k0 = (int64_t)kc * g->tk;
		uint32_t tkk = (uint32_t)(s->k - k0 < g->tk ? s->k - k0 : g->tk);
		unsigned int b = x->kc_all++ & 1;
		uint32_t lda = g->ares ? g->alda : g->tk;
		uint32_t asp = g->ares ? g->abuf[(x->apanels - 1) & 1] + (uint32_t)k0 * g->es :
					 g->abuf[b];

		for (i = 0; i < c->gr && (!g->ares || x->aload); i++) {
			int64_t m0 = (r * c->gr + i) * g->tm;
			uint32_t tmm = (uint32_t)(s->m - m0 < g->tm ? s->m - m0 : g->tm);

			pb_load_mcast(p, row_mask(c, i), s->a.slot,
				      (uint64_t)(aoff + m0 * as[nb] + k0) * g->es, tmm,
				      tkk * g->es, (uint32_t)(as[nb] * g->es), asp,
				      lda * g->es);
		}
		/* B, then a dual spec's B2 (value 1's product) */
		for (w = 0; w <= s->dual; w++) {
			uint32_t bsp = w ? g->b2buf[b] : g->bbuf[b];

			for (i = 0; i < c->gc; i++)
				mc_load_b(x, p, w, b, i, blk, bi, k0, tkk);
			for (core = 0; core < 32; core++) {
				int64_t m0 = (r * c->gr + core / c->gc) * g->tm;
				int64_t n0 = (blk * c->gc + core % c->gc) * g->tn;
				uint32_t tmm = (uint32_t)(s->m - m0 < g->tm ? s->m - m0 : g->tm);
				uint32_t tnn = (uint32_t)(s->n - n0 < g->tn ? s->n - n0 : g->tn);

				pb_matmul(p, core, s->dtype, kc > 0, g->trans, tmm, tnn, tkk, asp,
					  lda, bsp, g->trans ? g->tk : g->tn,
					  w ? g->acc2[par] : g->acc[par], g->tn);
			}
		}
	}
}

int mm_mc(struct mm_gen *g, unsigned int ncores, struct kprogs *out)
{
	const struct mm_spec *s = g->s;
	const struct ew_spec *e = &s->epi;
	unsigned int core, nslots = out->nslots;
	int64_t rounds, j, start = 0;
	uint64_t per_round;
	uint32_t k1;
	struct mm_gen saved;
	struct mc_gen x;
	struct pb *p;
	int ret = 0;

	if (ncores != 32 || s->m < 64 || s->n < 64 || s->k < 64)
		return -EAGAIN;
	saved = *g;
	memset(&x, 0, sizeof(x));
	x.g = g;
	if (mc_plan(g, &x.c)) {
		*g = saved;
		return -EAGAIN;
	}
	g->tm = x.c.tm;
	g->tn = x.c.tn;
	g->tk = x.c.tk;
	g->ares = x.c.ares;
	g->nmt = x.c.gr * x.c.rb;
	g->nnt = x.c.gc * x.c.cb;
	g->nkc = cdiv32(s->k, g->tk);
	mm_layout(g, g->tm, g->tn, g->tk);
	rounds = g->nb * x.c.rb * x.c.cb;	/* batches one after another */
	if ((double)g->nb * x.c.est >= mc_old_estimate(g)) {
		*g = saved;
		return -EAGAIN;
	}
	/* members of the multicasts count one per core until pb_finish merges them */
	per_round = (uint64_t)g->nkc * (1 + (1 + s->dual) * (s->b_int8 ? 3 : 2)) * 32 +
		    32ull * (2 * (e->nin + e->nuops) + 4);
	if (2 * per_round > PB_MAX_INSNS) {
		*g = saved;
		return -EAGAIN;
	}
	p = pb_new(ncores);
	if (!p)
		return -ENOMEM;
	k1 = g->nkc < 2 ? g->nkc : 2;
	for (j = 0; j < rounds && !ret; j++) {
		unsigned int par = (unsigned int)(j & 1);

		if (j == start)
			for (core = 0; core < 32; core++)
				texpr_prologue(&g->t, e, p, core);
		/* a new block row (or program) loads its A panel */
		x.aload = j == start || j % x.c.cb == 0;
		x.apanels += x.aload;
		/* two chunks ahead of the previous round's store: the PE array
		 * has their products to work on while the store drains */
		mc_chunks(&x, p, j, par, 0, k1);
		for (core = 0; core < 32; core++)
			mm_epi(g, p, core, mc_tile(&x, j, core), par, 0);
		if (j > start)
			for (core = 0; core < 32; core++)
				mm_epi(g, p, core, mc_tile(&x, j - 1, core), par ^ 1, 1);
		mc_chunks(&x, p, j, par, k1, g->nkc);
		if (j + 1 == rounds || pb_count(p) + 2 * per_round > PB_MAX_INSNS) {
			for (core = 0; core < 32; core++)
				mm_epi(g, p, core, mc_tile(&x, j, core), par, 1);
			ret = kprogs_add(out, p);
			start = j + 1;
		}
	}
	pb_free(p);
	if (ret == -EINVAL) {
		/* the grid's cores did not get the same tokens: use the other schedule */
		kprogs_free(out);
		out->nslots = nslots;
		*g = saved;
		ret = -EAGAIN;
	}
	return ret;
}
