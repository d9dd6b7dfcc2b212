// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/* Fault injection: HANG, DMA, CORRUPT_COMPLETION, MEM_UE, the config knobs. */
#include "harness.h"

static void fill_job(struct tcard *t, unsigned int ring, uint64_t dev, uint32_t val,
		     uint64_t seq, unsigned int r)
{

	push_dma(t, ring, SPYRE_DMA_FILL, 4, dev, 0, 0, 0, 0, val);
	push_fence(t, ring, seq, r, true);
	ring_doorbell(t, ring);
}

TEST(fault_hang_until_ring_reset)
{
	struct tcard *t = tc_new(NULL);

	ring_setup(t, 1, 4);
	tc_wr(t, SPYRE_REG_FAULT, SPYRE_FAULT_HANG | 1 << SPYRE_FAULT_RING_SHIFT);
	CHECK_EQ(tc_rd(t, SPYRE_REG_FAULT), SPYRE_FAULT_HANG | 1 << SPYRE_FAULT_RING_SHIFT);
	fill_job(t, 1, 0, 7, 1, 0);
	tc_run(t);
	tc_run(t);
	CHECK_EQ(tc_rd(t, SPYRE_REG_FAULT), 0);			/* consumed */
	CHECK_EQ(wb_seqno(t, 1), 0);
	CHECK_EQ(*(uint32_t *)t->dev, 0);
	CHECK_EQ(ring_status(t, 1), SPYRE_RING_STATUS_ENABLED);	/* busy, not idle */
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(1, SPYRE_RING_HEAD)), 0);
	/* other rings are unaffected */
	ring_setup(t, 0, 4);
	fill_job(t, 0, 4, 8, 2, 1);
	tc_run(t);
	CHECK_EQ(wb_seqno(t, 0), 2);
	/* a ring reset drops the hung work; the ring is usable again */
	tc_wr(t, SPYRE_RING_REG(1, SPYRE_RING_CTRL), SPYRE_RING_CTRL_RESET);
	CHECK_EQ(ring_status(t, 1), SPYRE_RING_STATUS_IDLE);
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(1, SPYRE_RING_HEAD)), 0);
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(1, SPYRE_RING_TAIL)), 0);
	ring_setup(t, 1, 4);
	fill_job(t, 1, 0, 9, 3, 2);
	tc_run(t);
	CHECK_EQ(wb_seqno(t, 1), 3);
	CHECK_EQ(*(uint32_t *)t->dev, 9);
	tc_free(t);
}

TEST(fault_hang_until_card_reset)
{
	struct tcard *t = tc_new(NULL);

	ring_setup(t, 0, 4);
	tc_wr(t, SPYRE_REG_FAULT, SPYRE_FAULT_HANG);
	fill_job(t, 0, 0, 7, 1, 0);
	tc_run(t);
	CHECK_EQ(wb_seqno(t, 0), 0);
	tc_wr(t, SPYRE_REG_CTRL, SPYRE_CTRL_RESET);
	CHECK_EQ(ring_status(t, 0), SPYRE_RING_STATUS_IDLE);
	ring_setup(t, 0, 4);
	fill_job(t, 0, 0, 7, 2, 0);
	tc_run(t);
	CHECK_EQ(wb_seqno(t, 0), 2);
	tc_free(t);
}

TEST(fault_dma_fails_next_dma_only)
{
	struct tcard *t = tc_new(NULL);

	ring_setup(t, 2, 4);
	tc_wr(t, SPYRE_REG_FAULT, SPYRE_FAULT_DMA | 2 << SPYRE_FAULT_RING_SHIFT);
	fill_job(t, 2, 0, 7, 1, 0);
	tc_run(t);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_ERR_DMA);
	CHECK_EQ(rec(t, 0)->error_index, 0);
	CHECK_EQ(*(uint32_t *)t->dev, 0);
	fill_job(t, 2, 0, 7, 2, 1);
	tc_run(t);
	CHECK_EQ(rec(t, 1)->status, SPYRE_CMD_OK);
	CHECK_EQ(*(uint32_t *)t->dev, 7);
	tc_free(t);
}

TEST(fault_corrupt_completion)
{
	struct tcard *t = tc_new(NULL);
	const uint8_t *r;
	unsigned int i, bad = 0;

	ring_setup(t, 0, 4);
	tc_wr(t, SPYRE_REG_FAULT, SPYRE_FAULT_CORRUPT_COMPLETION);
	fill_job(t, 0, 0, 7, 5, 0);
	tc_run(t);
	r = (const uint8_t *)rec(t, 0);
	for (i = 0; i < sizeof(struct spyre_hw_completion); i++)
		bad += r[i] == 0xa5;
	CHECK_EQ(bad, sizeof(struct spyre_hw_completion));
	CHECK(rec(t, 0)->seqno != 5);
	CHECK_EQ(wb_seqno(t, 0), 5);	/* write-back is right: the driver can tell */
	fill_job(t, 0, 0, 7, 6, 0);
	tc_run(t);
	CHECK_EQ(rec(t, 0)->seqno, 6);
	tc_free(t);
}

TEST(fault_mem_ue_is_fatal_until_card_reset)
{
	struct tcard *t = tc_new(NULL);

	ring_setup(t, 0, 4);
	ring_setup(t, 1, 4);
	tc_wr(t, SPYRE_REG_FAULT, SPYRE_FAULT_MEM_UE | 1 << SPYRE_FAULT_RING_SHIFT);
	tc_run(t);
	CHECK_EQ(tc_rd(t, SPYRE_REG_STATUS), SPYRE_STATUS_READY);	/* fires on use */
	fill_job(t, 1, 0, 7, 1, 0);
	tc_run(t);
	CHECK_EQ(tc_rd(t, SPYRE_REG_STATUS), SPYRE_STATUS_READY | SPYRE_STATUS_FATAL);
	CHECK(tc_rd(t, SPYRE_REG_ERR_STATUS) & SPYRE_ERR_STATUS_MEM_UE);
	CHECK_EQ(tc_rd(t, SPYRE_REG_ERR_INFO), 1u << 24 | 1u << 16);
	CHECK_EQ(t->irqs[4], 1);
	CHECK_EQ(*(uint32_t *)t->dev, 0);
	/* everything stops */
	fill_job(t, 0, 4, 8, 2, 1);
	tc_run(t);
	CHECK_EQ(wb_seqno(t, 0), 0);
	CHECK_EQ(wb_seqno(t, 1), 0);
	tc_wr(t, SPYRE_REG_CTRL, SPYRE_CTRL_RESET);
	CHECK_EQ(tc_rd(t, SPYRE_REG_STATUS), SPYRE_STATUS_READY);
	CHECK_EQ(tc_rd(t, SPYRE_REG_ERR_STATUS), 0);
	ring_setup(t, 0, 4);
	fill_job(t, 0, 4, 8, 3, 1);
	tc_run(t);
	CHECK_EQ(wb_seqno(t, 0), 3);
	tc_free(t);
}

TEST(fault_register_rejects_garbage)
{
	struct tcard *t = tc_new(NULL);

	tc_wr(t, SPYRE_REG_FAULT, 9);				/* unknown kind */
	CHECK_EQ(tc_rd(t, SPYRE_REG_FAULT), 0);
	CHECK(tc_rd(t, SPYRE_REG_ERR_STATUS) & SPYRE_ERR_STATUS_BAD_ACCESS);
	tc_wr(t, SPYRE_REG_FAULT, SPYRE_FAULT_HANG | 4 << SPYRE_FAULT_RING_SHIFT); /* no ring 4 */
	CHECK_EQ(tc_rd(t, SPYRE_REG_FAULT), 0);
	tc_wr(t, SPYRE_REG_FAULT, SPYRE_FAULT_HANG | 1u << 31);
	CHECK_EQ(tc_rd(t, SPYRE_REG_FAULT), 0);
	/* disarm by writing NONE */
	tc_wr(t, SPYRE_REG_FAULT, SPYRE_FAULT_HANG);
	tc_wr(t, SPYRE_REG_FAULT, SPYRE_FAULT_NONE);
	ring_setup(t, 0, 4);
	fill_job(t, 0, 0, 1, 1, 0);
	tc_run(t);
	CHECK_EQ(wb_seqno(t, 0), 1);
	tc_free(t);
}

static void dma_every_2(struct spyre_model_config *c)
{
	c->fault_dma_every = 2;
}

TEST(fault_knob_dma_every)
{
	struct tcard *t = tc_new(dma_every_2);
	unsigned int i;

	ring_setup(t, 0, 5);
	for (i = 0; i < 4; i++) {
		fill_job(t, 0, 4 * i, 1, i + 1, i);
		tc_run(t);
	}
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_OK);
	CHECK_EQ(rec(t, 1)->status, SPYRE_CMD_ERR_DMA);
	CHECK_EQ(rec(t, 2)->status, SPYRE_CMD_OK);
	CHECK_EQ(rec(t, 3)->status, SPYRE_CMD_ERR_DMA);
	tc_free(t);
}

static void hang_after_3(struct spyre_model_config *c)
{
	c->fault_hang_after = 3;
}

TEST(fault_knob_hang_after)
{
	struct tcard *t = tc_new(hang_after_3);

	ring_setup(t, 0, 5);
	fill_job(t, 0, 0, 1, 1, 0);	/* commands 1, 2 */
	fill_job(t, 0, 4, 1, 2, 1);	/* command 3 hangs */
	tc_run(t);
	CHECK_EQ(wb_seqno(t, 0), 1);
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(0, SPYRE_RING_HEAD)), 2);
	tc_free(t);
}
