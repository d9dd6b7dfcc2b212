// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * The card's events to its embedder (spyre_model_ops.event), which the QEMU
 * glue turns into trace points and guest-error logs.
 */
#include "harness.h"

TEST(events_trace_descriptors_and_fences)
{
	struct tcard *t = tc_new(NULL);

	ring_setup(t, 2, 4);
	push_dma(t, 2, SPYRE_DMA_FILL, 64, 0, 0, 0, 0, 0, 0x11111111);
	fence_and_run(t, 2, 5, 0, true);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_OK);
	CHECK_EQ(t->events[SPYRE_MODEL_EV_DESC], 2);		/* the DMA, the FENCE */
	CHECK_EQ(t->last_event[SPYRE_MODEL_EV_DESC].ring, 2);
	CHECK_EQ(t->last_event[SPYRE_MODEL_EV_DESC].a, 1);	/* ring index */
	CHECK_EQ(t->last_event[SPYRE_MODEL_EV_DESC].b, SPYRE_OP_FENCE);
	CHECK_EQ(t->events[SPYRE_MODEL_EV_FENCE], 1);
	CHECK_EQ(t->last_event[SPYRE_MODEL_EV_FENCE].a, 5);	/* seqno */
	CHECK_EQ(t->last_event[SPYRE_MODEL_EV_FENCE].b, SPYRE_CMD_OK);
	CHECK_EQ(t->events[SPYRE_MODEL_EV_CMD_ERROR], 0);
	CHECK_EQ(t->events[SPYRE_MODEL_EV_CARD_ERROR], 0);
	tc_free(t);
}

TEST(events_report_command_and_card_errors)
{
	struct tcard *t = tc_new(NULL);

	ring_setup(t, 1, 4);
	/* a FILL past the end of device memory fails with a bounds error */
	push_dma(t, 1, SPYRE_DMA_FILL, 64, t->cfg.mem_size, 0, 0, 0, 0, 0);
	fence_and_run(t, 1, 1, 0, false);
	CHECK_EQ(rec(t, 0)->status, SPYRE_CMD_ERR_BOUNDS);
	CHECK_EQ(t->events[SPYRE_MODEL_EV_CMD_ERROR], 1);
	CHECK_EQ(t->last_event[SPYRE_MODEL_EV_CMD_ERROR].ring, 1);
	CHECK_EQ(t->last_event[SPYRE_MODEL_EV_CMD_ERROR].a, 0);
	CHECK_EQ(t->last_event[SPYRE_MODEL_EV_CMD_ERROR].b, SPYRE_CMD_ERR_BOUNDS);
	CHECK_EQ(t->last_event[SPYRE_MODEL_EV_FENCE].b, SPYRE_CMD_ERR_BOUNDS);
	/* a write to a read-only register is a card error, as ERR_STATUS says */
	tc_wr(t, SPYRE_REG_ID, 1);
	CHECK_EQ(t->events[SPYRE_MODEL_EV_CARD_ERROR], 1);
	CHECK_EQ(t->last_event[SPYRE_MODEL_EV_CARD_ERROR].a, SPYRE_ERR_STATUS_BAD_ACCESS);
	CHECK_EQ(t->last_event[SPYRE_MODEL_EV_CARD_ERROR].b, tc_rd(t, SPYRE_REG_ERR_INFO));
	/* a tail moved past a full ring is a ring error, on that ring */
	tc_wr(t, SPYRE_RING_REG(1, SPYRE_RING_TAIL), 1000);
	CHECK_EQ(t->events[SPYRE_MODEL_EV_CARD_ERROR], 2);
	CHECK_EQ(t->last_event[SPYRE_MODEL_EV_CARD_ERROR].ring, 1);
	CHECK_EQ(t->last_event[SPYRE_MODEL_EV_CARD_ERROR].a, SPYRE_ERR_STATUS_RING);
	CHECK_EQ(t->last_event[SPYRE_MODEL_EV_CARD_ERROR].b,
		 SPYRE_ERR_INFO(SPYRE_ERR_INFO_SRC_RING, 1, SPYRE_RING_ERR_BAD_TAIL));
	tc_free(t);
}
