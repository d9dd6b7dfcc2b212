// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/* Semaphores across rings, TIMESTAMP, FENCE details. */
#include "harness.h"

#define MB_NS	(1000 + 20972)

TEST(sem_wait_blocks_until_signal_and_takes_its_time)
{
	struct tcard *t = tc_new(NULL);

	ring_setup(t, 0, 5);
	ring_setup(t, 1, 5);
	push_sem(t, 1, false, 3, 1);
	push_dma(t, 1, SPYRE_DMA_FILL, 4, 0, 0, 0, 0, 0, 0xabcd);
	fence_and_run(t, 1, 11, 1, true);
	CHECK_EQ(wb_seqno(t, 1), 0);				/* blocked */
	CHECK(!(ring_status(t, 1) & SPYRE_RING_STATUS_IDLE));
	CHECK_EQ(*(uint32_t *)t->dev, 0);
	push_dma(t, 0, SPYRE_DMA_H2D, 1 << 20, 0x1000, 0, sg_simple(t, 0, 0, 1 << 20), 1, 0, 0);
	push_sem(t, 0, true, 3, 1);
	fence_and_run(t, 0, 10, 0, true);
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
	push_sem(t, 0, true, 0, 5);
	d_sem(d, true, 0, 2);		/* lower: no effect */
	ring_push(t, 0, d);
	fence_and_run(t, 0, 1, 0, false);
	d_sem(d, false, 0, 5);		/* satisfied */
	ring_push(t, 1, d);
	push_fence(t, 1, 2, 1, false);
	d_sem(d, false, 0, 6);		/* not yet */
	ring_push(t, 1, d);
	fence_and_run(t, 1, 3, 2, false);
	CHECK_EQ(wb_seqno(t, 1), 2);
	push_sem(t, 0, true, 0, 6);
	ring_run(t, 0);
	CHECK_EQ(wb_seqno(t, 1), 3);
	/* a card reset zeroes semaphores: the same wait blocks again */
	tc_wr(t, SPYRE_REG_CTRL, SPYRE_CTRL_RESET);
	ring_setup(t, 1, 5);
	push_sem(t, 1, false, 0, 1);
	fence_and_run(t, 1, 4, 1, false);
	CHECK_EQ(rec(t, 1)->seqno, 2);
	tc_free(t);
}

TEST(sem_bad_index_and_fields_invalid)
{
	struct tcard *t = tc_new(NULL);
	uint8_t d[64];

	ring_setup(t, 0, 5);
	push_sem(t, 0, true, 64, 1);
	push_fence(t, 0, 1, 0, false);
	d_sem(d, false, 0, 0);
	d[40] = 1;				/* reserved */
	ring_push(t, 0, d);
	fence_and_run(t, 0, 2, 1, false);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_ERR_INVALID);
	CHECK_EQ(rec(t, 1)->status, SPYRE_CMD_ERR_INVALID);
	CHECK_EQ(rec(t, 1)->error_index, 2);
	tc_free(t);
}

/* Interface 1.1: a FENCE with F_SEM signals a semaphore, even for a failed job. */
TEST(fence_sem_signals_even_when_the_job_failed)
{
	struct tcard *t = tc_new(NULL);
	struct spyre_hw_fence *f;
	uint8_t d[64];

	ring_setup(t, 0, 5);
	ring_setup(t, 1, 5);
	d_sem(d, false, 7, 1);			/* ring 1 waits for ring 0's job 1 */
	ring_push(t, 1, d);
	push_fence(t, 1, 20, 2, false);
	d_sem(d, false, 7, 2);			/* ... and then for its job 2 */
	ring_push(t, 1, d);
	push_fence(t, 1, 21, 3, false);
	ring_doorbell(t, 1);
	push_dma(t, 0, SPYRE_DMA_H2D, 1 << 20, 0x1000, 0, sg_simple(t, 0, 0, 1 << 20), 1, 0, 0);
	d_fence(d, 1, 0, false);
	f = (struct spyre_hw_fence *)d;
	f->flags |= SPYRE_DESC_F_SEM;
	f->sem = 7;
	f->sem_value = 1;
	ring_push(t, 0, d);
	ring_run(t, 0);
	CHECK_EQ(wb_seqno(t, 1), 20);		/* the first wait is over */
	tc_wr(t, SPYRE_REG_FAULT, SPYRE_FAULT_DMA);	/* job 2's DMA fails */
	push_dma(t, 0, SPYRE_DMA_H2D, 4096, 0x1000, 0, sg_simple(t, 1, 0, 4096), 1, 0, 0);
	d_fence(d, 2, 1, false);
	f->flags |= SPYRE_DESC_F_SEM;
	f->sem = 7;
	f->sem_value = 2;
	ring_push(t, 0, d);
	ring_run(t, 0);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_OK);
	CHECK_EQ(rec(t, 1)->status, SPYRE_CMD_ERR_DMA);
	CHECK_EQ(wb_seqno(t, 1), 21);		/* both waits were released */
	/* the first wait resumed at the end of the 1 MiB copy, in device time */
	CHECK_EQ(rec(t, 2)->end_ns, rec(t, 0)->end_ns);
	tc_wr(t, SPYRE_REG_SEM_SELECT, 7);
	CHECK_EQ(tc_rd(t, SPYRE_REG_SEM_VALUE_LO), 2);
	CHECK_EQ(tc_rd(t, SPYRE_REG_SEM_VALUE_HI), 0);
	tc_free(t);
}

TEST(fence_sem_fields_checked)
{
	struct tcard *t = tc_new(NULL);
	struct spyre_hw_fence *f = NULL;
	uint8_t d[64];

	ring_setup(t, 0, 5);
	d_fence(d, 1, 0, false);
	f = (struct spyre_hw_fence *)d;
	f->sem_value = 3;			/* without F_SEM: reserved */
	ring_push(t, 0, d);
	d_fence(d, 2, 1, false);
	f->flags |= SPYRE_DESC_F_SEM;
	f->sem = 64;				/* beyond NUM_SEMS */
	f->sem_value = 3;
	ring_push(t, 0, d);
	ring_run(t, 0);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_ERR_INVALID);
	CHECK_EQ(rec(t, 1)->status, SPYRE_CMD_ERR_INVALID);
	CHECK_EQ(wb_seqno(t, 0), 2);
	tc_free(t);
}

/* Interface 1.1: a WAIT with F_ERR fails (and skips its job) behind a failed job. */
TEST(sem_wait_f_err_fails_behind_failed_job)
{
	struct tcard *t = tc_new(NULL);
	struct spyre_hw_fence *f = NULL;
	uint8_t d[64];

	ring_setup(t, 0, 5);
	ring_setup(t, 1, 5);
	tc_wr(t, SPYRE_REG_FAULT, SPYRE_FAULT_DMA);	/* ring 0's first DMA fails */
	push_dma(t, 0, SPYRE_DMA_H2D, 4096, 0x1000, 0, sg_simple(t, 0, 0, 4096), 1, 0, 0);
	d_fence(d, 1, 0, false);
	f = (struct spyre_hw_fence *)d;
	f->flags |= SPYRE_DESC_F_SEM;
	f->sem = 2;
	f->sem_value = 1;
	ring_push(t, 0, d);
	push_dma(t, 0, SPYRE_DMA_FILL, 4, 0, 0, 0, 0, 0, 0x1234);
	d_fence(d, 2, 1, false);
	f->flags |= SPYRE_DESC_F_SEM;
	f->sem = 2;
	f->sem_value = 2;
	ring_push(t, 0, d);
	ring_doorbell(t, 0);
	d_sem(d, false, 2, 1);			/* behind the failed job */
	d[1] = SPYRE_DESC_F_ERR;
	ring_push(t, 1, d);
	push_dma(t, 1, SPYRE_DMA_FILL, 4, 8, 0, 0, 0, 0, 0xbad);
	push_fence(t, 1, 10, 2, false);
	d_sem(d, false, 2, 2);			/* behind the good one */
	d[1] = SPYRE_DESC_F_ERR;
	ring_push(t, 1, d);
	push_dma(t, 1, SPYRE_DMA_FILL, 4, 16, 0, 0, 0, 0, 0x600d);
	push_fence(t, 1, 11, 3, false);
	d_sem(d, false, 2, 2);
	d[1] = SPYRE_DESC_F_DEVMEM;		/* not a WAIT flag */
	ring_push(t, 1, d);
	fence_and_run(t, 1, 12, 4, false);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_ERR_DMA);
	CHECK_EQ(rec(t, 1)->status, SPYRE_CMD_OK);
	CHECK_EQ(rec(t, 2)->status, SPYRE_CMD_ERR_DEP);
	CHECK_EQ(rec(t, 2)->end_ns, rec(t, 0)->end_ns);	/* failed when its input did */
	CHECK_EQ(*(uint32_t *)(t->dev + 8), 0);		/* its FILL never ran */
	CHECK_EQ(rec(t, 3)->status, SPYRE_CMD_OK);
	CHECK_EQ(*(uint32_t *)(t->dev + 16), 0x600d);
	CHECK_EQ(rec(t, 4)->status, SPYRE_CMD_ERR_INVALID);
	/* a software release counts as a failure */
	d_sem(d, false, 3, 1);
	d[1] = SPYRE_DESC_F_ERR;
	ring_push(t, 1, d);
	push_fence(t, 1, 13, 5, false);
	ring_doorbell(t, 1);
	tc_wr(t, SPYRE_REG_SEM_SELECT, 3);
	tc_wr(t, SPYRE_REG_SEM_VALUE_LO, 1);
	tc_wr(t, SPYRE_REG_SEM_VALUE_HI, 0);
	tc_run(t);
	CHECK_EQ(rec(t, 5)->status, SPYRE_CMD_ERR_DEP);
	tc_free(t);
}

/* Interface 1.1: software releases a semaphore through SEM_VALUE_LO/HI. */
TEST(sem_registers_signal_and_wake_waiters)
{
	struct tcard *t = tc_new(NULL);

	ring_setup(t, 1, 5);
	push_sem(t, 1, false, 5, 0x100000002ull);
	fence_and_run(t, 1, 9, 0, false);
	CHECK_EQ(wb_seqno(t, 1), 0);
	tc_wr(t, SPYRE_REG_SEM_SELECT, 5);
	tc_wr(t, SPYRE_REG_SEM_VALUE_LO, 2);
	CHECK_EQ(tc_rd(t, SPYRE_REG_SEM_VALUE_LO), 0);	/* latched, not yet signalled */
	tc_wr(t, SPYRE_REG_SEM_VALUE_HI, 1);
	tc_run(t);
	CHECK_EQ(wb_seqno(t, 1), 9);
	CHECK_EQ(tc_rd(t, SPYRE_REG_SEM_VALUE_HI), 1);
	tc_wr(t, SPYRE_REG_SEM_VALUE_LO, 1);	/* lower: no effect */
	tc_wr(t, SPYRE_REG_SEM_VALUE_HI, 0);
	CHECK_EQ(tc_rd(t, SPYRE_REG_SEM_VALUE_LO), 2);
	CHECK_EQ(tc_rd(t, SPYRE_REG_ERR_STATUS), 0);
	tc_wr(t, SPYRE_REG_SEM_SELECT, 64);	/* beyond NUM_SEMS: bad access */
	CHECK_EQ(tc_rd(t, SPYRE_REG_ERR_STATUS), SPYRE_ERR_STATUS_BAD_ACCESS);
	CHECK_EQ(tc_rd(t, SPYRE_REG_SEM_SELECT), 5);
	/* a card reset zeroes them */
	tc_wr(t, SPYRE_REG_CTRL, SPYRE_CTRL_RESET);
	CHECK_EQ(tc_rd(t, SPYRE_REG_SEM_SELECT), 0);
	tc_wr(t, SPYRE_REG_SEM_SELECT, 5);
	CHECK_EQ(tc_rd(t, SPYRE_REG_SEM_VALUE_HI), 0);
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
	push_dma(t, 0, SPYRE_DMA_H2D, 1 << 20, 0x1000, 0, sg_simple(t, 1, 0x10000, 1 << 20), 1, 0, 0);
	push_ts(t, 0, true, 0x800, 0, 0);
	fence_and_run(t, 0, 1, 0, false);
	CHECK_EQ(rec(t, 0)->status, 0);
	memcpy(&v, hptr(t, H_DATA + 8), 4);
	memcpy((uint8_t *)&v + 4, hptr(t, H_DATA + 0x1000), 4);
	CHECK_EQ(v, 300);			/* doorbell time, nothing before it */
	memcpy(&v, t->dev + 0x800, 8);
	CHECK_EQ(v, 300 + MB_NS);		/* after the DMA completed */
	CHECK_EQ(rec(t, 0)->start_ns, 300);
	push_ts(t, 0, true, t->cfg.mem_size - 4, 0, 0);
	fence_and_run(t, 0, 2, 0, false);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_ERR_BOUNDS);
	tc_free(t);
}

TEST(fence_record_fields_and_irq_flag)
{
	struct tcard *t = tc_new(NULL);
	uint8_t d[64];

	ring_setup(t, 3, 4);
	push_fence(t, 3, 0x1122334455667788ull, 5, false);
	push_fence(t, 3, 42, 6, true);
	d_fence(d, 43, 7, true);
	d[30] = 1;			/* reserved byte: job reports INVALID */
	ring_push(t, 3, d);
	d_fence(d, 44, 8, true);
	((struct spyre_hw_fence *)d)->record_addr += 4;	/* misaligned: no record */
	ring_push(t, 3, d);
	ring_run(t, 3);
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
