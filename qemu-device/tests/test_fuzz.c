// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Garbage in: random descriptors, random programs, random register writes.
 * The model must never crash, never touch host memory outside what it was
 * given (the test card's callbacks refuse it), and recover after resets.
 */
#include <stdlib.h>

#include "harness.h"

static uint32_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (uint32_t)*s;
}

/* Mostly-plausible garbage: a real opcode with random fields, or pure noise. */
static void garbage_desc(uint64_t *s, uint8_t *d)
{
	unsigned int i;

	for (i = 0; i < 64; i++)
		d[i] = (uint8_t)rnd(s);
	if (rnd(s) % 4) {
		d[0] = rnd(s) % 9;
		if (rnd(s) % 2)
			memset(d + 1, 0, 7);
		if (d[0] == SPYRE_OP_DMA && rnd(s) % 2) {
			struct spyre_hw_dma *x = (void *)d;

			x->len = rnd(s) % 100000;
			x->dev_addr = rnd(s) % (80u << 20);
			x->sg_addr = HOST_BASE + H_SG + (rnd(s) % 64) * 16;
			x->sg_count = rnd(s) % 8;
			x->dir = rnd(s) % 5;
			x->dev_src = x->dir == SPYRE_DMA_D2D ? rnd(s) % (64u << 20) : 0;
			x->rsvd = 0;
			x->rsvd2 = 0;
			x->host_off = rnd(s) % 5000;
		}
	}
}

TEST(fuzz_random_descriptors_never_crash)
{
	struct tcard *t = tc_new(NULL);
	uint64_t s = 0x9e3779b97f4a7c15ull;
	struct spyre_hw_sg *sg = hptr(t, H_SG);
	uint8_t d[64];
	unsigned int i, round, fences = 0;

	for (i = 0; i < 64; i++) {	/* scatter entries: some valid, some wild */
		sg[i].addr = (i % 3) ? HOST_BASE + H_DATA + rnd(&s) % (1 << 20) : rnd(&s);
		sg[i].len = rnd(&s) % 70000;
	}
	for (round = 0; round < 300; round++) {
		unsigned int n = round % 4;

		if (!(ring_status(t, n) & SPYRE_RING_STATUS_ENABLED)) {
			tc_wr(t, SPYRE_RING_REG(n, SPYRE_RING_CTRL), SPYRE_RING_CTRL_RESET);
			ring_setup(t, n, 6);
		}
		for (i = 0; i < 10; i++) {
			garbage_desc(&s, d);
			ring_push(t, n, d);
		}
		fence_and_run(t, n, round + 1, n, true);
		if (round % 50 == 49)	/* hung rings (SEM_WAIT) are reset by the "driver" */
			tc_wr(t, SPYRE_REG_CTRL, SPYRE_CTRL_RESET);
	}
	for (i = 0; i < 4; i++)
		fences += t->irqs[i];
	CHECK(fences > 100);	/* most jobs completed with some status */
	/* the card still works */
	tc_wr(t, SPYRE_REG_CTRL, SPYRE_CTRL_RESET);
	ring_setup(t, 0, 4);
	push_dma(t, 0, SPYRE_DMA_FILL, 4, 0, 0, 0, 0, 0, 0x1234);
	fence_and_run(t, 0, 777, 0, true);
	CHECK_EQ(rec(t, 0)->seqno, 777);
	CHECK_EQ(rec(t, 0)->status, 0);
	tc_free(t);
}

TEST(fuzz_random_programs_never_crash)
{
	struct tcard *t = tc_new(NULL);
	uint64_t s = 12345, slots[6] = { 0x200000, 4096, 0x300000, 65536, 0x400000, 1 << 20 };
	unsigned int round, i, ok = 0;
	struct prog p;

	for (round = 0; round < 400; round++) {
		uint64_t len;

		prog_init(&p, rnd(&s) % 4, rnd(&s) % 2 ? 0 : 4096);
		for (i = 0; i < 1 + rnd(&s) % 8; i++) {
			struct spyre_insn *in = prog_add(&p, rnd(&s) % 6, rnd(&s) % 4 ? 1 : rnd(&s),
							 rnd(&s) % 3 ? 0 : rnd(&s) & 0xf,
							 rnd(&s) & 0xf);
			unsigned int k;

			for (k = 0; k < sizeof(in->u.raw); k++)
				in->u.raw[k] = (uint8_t)(rnd(&s) % 3 ? rnd(&s) % 64 : rnd(&s));
			in->dtype = rnd(&s) % 7;
			in->dtype_out = rnd(&s) % 7;
			in->flags = rnd(&s) % 4;
			if (in->op == SPYRE_I_LOAD || in->op == SPYRE_I_STORE) {
				in->u.mem.slot = rnd(&s) % 5;
				in->u.mem.rows = 1 + rnd(&s) % 8;
				in->u.mem.rsvd = 0;
				in->u.mem.core_div = rnd(&s) % 3;
			}
		}
		len = prog_store(t, &p, 0x100000);
		ok += run_launch(t, 0x100000, len, 0x800000, 4096, 3, slots).status == 0;
	}
	CHECK(ok < 400);	/* garbage was rejected ... */
	prog_init(&p, 0, 0);	/* ... and a good program still runs */
	prog_add(&p, SPYRE_I_NOP, 1, 0, 0);
	CHECK_EQ(run_launch(t, 0x100000, prog_store(t, &p, 0x100000), 0, 0, 0, NULL).status, 0);
	CHECK_EQ(ring_status(t, 0), SPYRE_RING_STATUS_ENABLED | SPYRE_RING_STATUS_IDLE);
	tc_free(t);
}

TEST(fuzz_every_register_random_values)
{
	struct tcard *t = tc_new(NULL);
	uint64_t s = 777;
	uint32_t off;
	unsigned int round;

	for (round = 0; round < 20; round++) {
		for (off = 0; off < 0x8000; off += 4) {
			if (off == SPYRE_REG_CTRL && rnd(&s) % 8)
				continue;
			tc_wr(t, off, rnd(&s));
			tc_rd(t, off ^ (rnd(&s) & 0x7ffc));
		}
		tc_wr(t, SPYRE_REG_FAULT, SPYRE_FAULT_NONE);
		tc_run(t);
	}
	/* unaligned offsets */
	for (off = 1; off < 0x100; off += 2) {
		tc_wr(t, off, rnd(&s));
		tc_rd(t, off);
	}
	tc_wr(t, SPYRE_REG_CTRL, SPYRE_CTRL_RESET);
	CHECK_EQ(tc_rd(t, SPYRE_REG_STATUS), SPYRE_STATUS_READY);
	CHECK_EQ(tc_rd(t, SPYRE_REG_ID), SPYRE_ID_MAGIC);
	tc_free(t);
}
