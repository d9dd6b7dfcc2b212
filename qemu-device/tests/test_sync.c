// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/* Semaphores across rings, TIMESTAMP, FENCE details. */
#include "harness.h"

#define MB_NS	(1000 + 20972)

TEST(sem_wait_blocks_until_signal_and_takes_its_time)
{
	struct tcard *t = tc_new(NULL);
	uint8_t d[64];

	ring_setup(t, 0, 5);
	ring_setup(t, 1, 5);
	d_sem(d, false, 3, 1);
	ring_push(t, 1, d);
	d_dma(d, SPYRE_DMA_FILL, 4, 0, 0, 0, 0, 0, 0xabcd);
	ring_push(t, 1, d);
	d_fence(d, 11, 1, true);
	ring_push(t, 1, d);
	ring_doorbell(t, 1);
	tc_run(t);
	CHECK_EQ(wb_seqno(t, 1), 0);				/* blocked */
	CHECK(!(ring_status(t, 1) & SPYRE_RING_STATUS_IDLE));
	CHECK_EQ(*(uint32_t *)t->dev, 0);
	d_dma(d, SPYRE_DMA_H2D, 1 << 20, 0x1000, 0, sg_simple(t, 0, 0, 1 << 20), 1, 0, 0);
	ring_push(t, 0, d);
	d_sem(d, true, 3, 1);
	ring_push(t, 0, d);
	d_fence(d, 10, 0, true);
	ring_push(t, 0, d);
	ring_doorbell(t, 0);
	tc_run(t);
	CHECK_EQ(wb_seqno(t, 0), 10);
	CHECK_EQ(wb_seqno(t, 1), 11);
	CHECK_EQ(*(uint32_t *)t->dev, 0xabcd);
	/* ring 1 resumed when ring 0 signalled, at the end of its DMA */
	CHECK_EQ(rec(t, 1)->end_ns, MB_NS + 1000 + 1);
	CHECK_EQ(rec(t, 1)->start_ns, 0);
	tc_free(t);
}

TEST(sem_values_only_grow_and_wait_for_reached_value)
{
	struct tcard *t = tc_new(NULL);
	uint8_t d[64];

	ring_setup(t, 0, 5);
	ring_setup(t, 1, 5);
	d_sem(d, true, 0, 5);
	ring_push(t, 0, d);
	d_sem(d, true, 0, 2);		/* lower: no effect */
	ring_push(t, 0, d);
	d_fence(d, 1, 0, false);
	ring_push(t, 0, d);
	ring_doorbell(t, 0);
	tc_run(t);
	d_sem(d, false, 0, 5);		/* satisfied */
	ring_push(t, 1, d);
	d_fence(d, 2, 1, false);
	ring_push(t, 1, d);
	d_sem(d, false, 0, 6);		/* not yet */
	ring_push(t, 1, d);
	d_fence(d, 3, 2, false);
	ring_push(t, 1, d);
	ring_doorbell(t, 1);
	tc_run(t);
	CHECK_EQ(wb_seqno(t, 1), 2);
	d_sem(d, true, 0, 6);
	ring_push(t, 0, d);
	ring_doorbell(t, 0);
	tc_run(t);
	CHECK_EQ(wb_seqno(t, 1), 3);
	/* a card reset zeroes semaphores: the same wait blocks again */
	tc_wr(t, SPYRE_REG_CTRL, SPYRE_CTRL_RESET);
	ring_setup(t, 1, 5);
	d_sem(d, false, 0, 1);
	ring_push(t, 1, d);
	d_fence(d, 4, 1, false);
	ring_push(t, 1, d);
	ring_doorbell(t, 1);
	tc_run(t);
	CHECK_EQ(rec(t, 1)->seqno, 2);
	tc_free(t);
}

TEST(sem_bad_index_and_fields_invalid)
{
	struct tcard *t = tc_new(NULL);
	uint8_t d[64];

	ring_setup(t, 0, 5);
	d_sem(d, true, 64, 1);
	ring_push(t, 0, d);
	d_fence(d, 1, 0, false);
	ring_push(t, 0, d);
	d_sem(d, false, 0, 0);
	d[40] = 1;				/* reserved */
	ring_push(t, 0, d);
	d_fence(d, 2, 1, false);
	ring_push(t, 0, d);
	ring_doorbell(t, 0);
	tc_run(t);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_ERR_INVALID);
	CHECK_EQ(rec(t, 1)->status, SPYRE_CMD_ERR_INVALID);
	CHECK_EQ(rec(t, 1)->error_index, 2);
	tc_free(t);
}

TEST(timestamp_host_and_devmem)
{
	struct tcard *t = tc_new(NULL);
	uint8_t d[64];
	uint64_t al[4] = { HOST_BASE + H_DATA, 12, HOST_BASE + H_DATA + 0x1000, 64 };
	uint64_t sg = sg_write(t, 0, 2, al), v;

	ring_setup(t, 0, 5);
	t->now = 300;
	d_ts(d, false, sg, 2, 8);	/* straddles the two segments */
	ring_push(t, 0, d);
	d_dma(d, SPYRE_DMA_H2D, 1 << 20, 0x1000, 0, sg_simple(t, 1, 0x10000, 1 << 20), 1, 0, 0);
	ring_push(t, 0, d);
	d_ts(d, true, 0x800, 0, 0);
	ring_push(t, 0, d);
	d_fence(d, 1, 0, false);
	ring_push(t, 0, d);
	ring_doorbell(t, 0);
	tc_run(t);
	CHECK_EQ(rec(t, 0)->status, 0);
	memcpy(&v, hptr(t, H_DATA + 8), 4);
	memcpy((uint8_t *)&v + 4, hptr(t, H_DATA + 0x1000), 4);
	CHECK_EQ(v, 300);			/* doorbell time, nothing before it */
	memcpy(&v, t->dev + 0x800, 8);
	CHECK_EQ(v, 300 + MB_NS);		/* after the DMA completed */
	CHECK_EQ(rec(t, 0)->start_ns, 300);
	d_ts(d, true, t->cfg.mem_size - 4, 0, 0);
	ring_push(t, 0, d);
	d_fence(d, 2, 0, false);
	ring_push(t, 0, d);
	ring_doorbell(t, 0);
	tc_run(t);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_ERR_BOUNDS);
	tc_free(t);
}

TEST(fence_record_fields_and_irq_flag)
{
	struct tcard *t = tc_new(NULL);
	uint8_t d[64];

	ring_setup(t, 3, 4);
	d_fence(d, 0x1122334455667788ull, 5, false);
	ring_push(t, 3, d);
	d_fence(d, 42, 6, true);
	ring_push(t, 3, d);
	d_fence(d, 43, 7, true);
	d[30] = 1;			/* reserved byte: job reports INVALID */
	ring_push(t, 3, d);
	d_fence(d, 44, 8, true);
	((struct spyre_hw_fence *)d)->record_addr += 4;	/* misaligned: no record */
	ring_push(t, 3, d);
	ring_doorbell(t, 3);
	tc_run(t);
	CHECK_EQ(rec(t, 5)->seqno, 0x1122334455667788ull);
	CHECK_EQ(rec(t, 6)->seqno, 42);
	CHECK_EQ(rec(t, 7)->status, SPYRE_CMD_ERR_INVALID);
	CHECK_EQ(rec(t, 7)->error_index, 2);
	CHECK_EQ(rec(t, 8)->seqno, 0);
	CHECK_EQ(wb_seqno(t, 3), 44);
	CHECK_EQ(wb_head(t, 3), 4);
	CHECK_EQ(t->irqs[3], 3);
	tc_free(t);
}
