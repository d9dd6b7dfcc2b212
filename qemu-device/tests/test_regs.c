// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/* Register file: identity, read-only registers, bad accesses, reset. */
#include "harness.h"

TEST(regs_identity)
{
	struct tcard *t = tc_new(NULL);

	CHECK_EQ(tc_rd(t, SPYRE_REG_ID), SPYRE_ID_MAGIC);
	CHECK_EQ(tc_rd(t, SPYRE_REG_VERSION), SPYRE_HW_VERSION_CURRENT);
	CHECK_EQ(tc_rd(t, SPYRE_REG_NUM_CORES), 32);
	CHECK_EQ(tc_rd(t, SPYRE_REG_SCRATCHPAD_KB), 2048);
	CHECK_EQ(tc_rd(t, SPYRE_REG_NUM_RINGS), 4);
	CHECK_EQ(tc_rd(t, SPYRE_REG_CLOCK_MHZ), 1000);
	CHECK_EQ(tc_rd(t, SPYRE_REG_MEM_SIZE_LO), 64u << 20);
	CHECK_EQ(tc_rd(t, SPYRE_REG_MEM_SIZE_HI), 0);
	CHECK_EQ(tc_rd(t, SPYRE_REG_MEM_APERTURE_LO), 64u << 20);
	CHECK_EQ(tc_rd(t, SPYRE_REG_NUM_SEMS), 64);
	CHECK_EQ(tc_rd(t, SPYRE_REG_IRQ_ERR_VECTOR), 4);
	CHECK_EQ(tc_rd(t, SPYRE_REG_STATUS), SPYRE_STATUS_READY);
	CHECK_EQ(tc_rd(t, SPYRE_REG_ERR_STATUS), 0);
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(2, SPYRE_RING_IRQ_VECTOR)), 2);
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(0, SPYRE_RING_STATUS)), SPYRE_RING_STATUS_IDLE);
	tc_free(t);
}

static void big(struct spyre_model_config *c)
{
	c->mem_size = 128ull << 30;
	c->mem_aperture = 16ull << 30;
	c->num_rings = 16;
	c->num_cores = 8;
}

TEST(regs_config_properties)
{
	struct tcard *t = tc_new(big);

	CHECK_EQ(tc_rd(t, SPYRE_REG_MEM_SIZE_LO), 0);
	CHECK_EQ(tc_rd(t, SPYRE_REG_MEM_SIZE_HI), 32);
	CHECK_EQ(tc_rd(t, SPYRE_REG_MEM_APERTURE_HI), 4);
	CHECK_EQ(tc_rd(t, SPYRE_REG_NUM_RINGS), 16);
	CHECK_EQ(tc_rd(t, SPYRE_REG_NUM_CORES), 8);
	CHECK_EQ(tc_rd(t, SPYRE_REG_IRQ_ERR_VECTOR), 16);
	tc_free(t);
}

TEST(regs_bad_config_rejected)
{
	struct spyre_model_config c;
	struct spyre_model_ops ops = { 0 };
	const char *err = NULL;
	uint8_t mem[16];

	spyre_model_config_defaults(&c);
	c.num_cores = 33;
	CHECK(!spyre_model_new(&c, &ops, NULL, mem, &err));
	CHECK(err != NULL);
	spyre_model_config_defaults(&c);
	c.mem_size = 200ull << 30;
	err = NULL;
	CHECK(!spyre_model_new(&c, &ops, NULL, mem, &err));
	CHECK(err != NULL);
}

TEST(regs_scratch_and_time)
{
	struct tcard *t = tc_new(NULL);

	tc_wr(t, SPYRE_REG_SCRATCH, 0xdeadbeef);
	CHECK_EQ(tc_rd(t, SPYRE_REG_SCRATCH), 0xdeadbeef);
	t->now = 0x123456789ull;
	CHECK_EQ(tc_rd(t, SPYRE_REG_TIME_LO), 0x23456789);
	t->now = 0x923456789ull;	/* HI is latched by the LO read */
	CHECK_EQ(tc_rd(t, SPYRE_REG_TIME_HI), 0x1);
	/* reset restarts device time at zero */
	tc_wr(t, SPYRE_REG_CTRL, SPYRE_CTRL_RESET);
	t->now += 500;
	CHECK_EQ(tc_rd(t, SPYRE_REG_TIME_LO), 500);
	CHECK_EQ(tc_rd(t, SPYRE_REG_SCRATCH), 0);
	tc_free(t);
}

TEST(regs_bad_access_recorded_not_fatal)
{
	struct tcard *t = tc_new(NULL);

	tc_wr(t, SPYRE_REG_ID, 1);		/* read-only */
	CHECK_EQ(tc_rd(t, SPYRE_REG_ID), SPYRE_ID_MAGIC);
	CHECK(tc_rd(t, SPYRE_REG_ERR_STATUS) & SPYRE_ERR_STATUS_BAD_ACCESS);
	CHECK_EQ(tc_rd(t, SPYRE_REG_ERR_INFO), 3u << 24 | SPYRE_REG_ID);
	CHECK_EQ(t->irqs[4], 0);		/* no interrupt for bad accesses */
	tc_wr(t, SPYRE_REG_ERR_STATUS, SPYRE_ERR_STATUS_BAD_ACCESS);	/* RW1C */
	CHECK_EQ(tc_rd(t, SPYRE_REG_ERR_STATUS), 0);
	CHECK_EQ(tc_rd(t, 0x7ffc), 0);		/* unknown offset */
	CHECK(tc_rd(t, SPYRE_REG_ERR_STATUS) & SPYRE_ERR_STATUS_BAD_ACCESS);
	tc_wr(t, SPYRE_REG_ERR_STATUS, ~0u);
	tc_rd(t, SPYRE_RING_REG(4, SPYRE_RING_HEAD));	/* ring 4 does not exist */
	CHECK(tc_rd(t, SPYRE_REG_ERR_STATUS) & SPYRE_ERR_STATUS_BAD_ACCESS);
	tc_wr(t, SPYRE_REG_ERR_STATUS, ~0u);
	tc_wr(t, SPYRE_REG_CTRL, 0x80);		/* undefined bit */
	CHECK(tc_rd(t, SPYRE_REG_ERR_STATUS) & SPYRE_ERR_STATUS_BAD_ACCESS);
	CHECK_EQ(tc_rd(t, SPYRE_REG_STATUS), SPYRE_STATUS_READY);
	tc_free(t);
}

TEST(regs_ring_config_readback_and_lock)
{
	struct tcard *t = tc_new(NULL);

	ring_setup(t, 1, 5);
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(1, SPYRE_RING_BASE_LO)), (uint32_t)(HOST_BASE + H_RING(1)));
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(1, SPYRE_RING_SIZE_LOG2)), 5);
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(1, SPYRE_RING_CTRL)), SPYRE_RING_CTRL_ENABLE);
	CHECK_EQ(ring_status(t, 1), SPYRE_RING_STATUS_ENABLED | SPYRE_RING_STATUS_IDLE);
	/* config registers are locked while enabled */
	tc_wr(t, SPYRE_RING_REG(1, SPYRE_RING_SIZE_LOG2), 7);
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(1, SPYRE_RING_SIZE_LOG2)), 5);
	CHECK(tc_rd(t, SPYRE_REG_ERR_STATUS) & SPYRE_ERR_STATUS_BAD_ACCESS);
	/* card reset clears everything */
	tc_wr(t, SPYRE_REG_CTRL, SPYRE_CTRL_RESET);
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(1, SPYRE_RING_BASE_LO)), 0);
	CHECK_EQ(ring_status(t, 1), SPYRE_RING_STATUS_IDLE);
	CHECK_EQ(tc_rd(t, SPYRE_REG_ERR_STATUS), 0);
	tc_free(t);
}

static void bad_ring_cfg(struct tcard *t, uint32_t log2, uint64_t base, uint64_t wb)
{
	tc_wr(t, SPYRE_RING_REG(0, SPYRE_RING_CTRL), SPYRE_RING_CTRL_RESET);
	tc_wr(t, SPYRE_REG_ERR_STATUS, ~0u);
	tc_wr(t, SPYRE_RING_REG(0, SPYRE_RING_BASE_LO), (uint32_t)base);
	tc_wr(t, SPYRE_RING_REG(0, SPYRE_RING_BASE_HI), (uint32_t)(base >> 32));
	tc_wr(t, SPYRE_RING_REG(0, SPYRE_RING_SIZE_LOG2), log2);
	tc_wr(t, SPYRE_RING_REG(0, SPYRE_RING_WB_LO), (uint32_t)wb);
	tc_wr(t, SPYRE_RING_REG(0, SPYRE_RING_WB_HI), (uint32_t)(wb >> 32));
	tc_wr(t, SPYRE_RING_REG(0, SPYRE_RING_CTRL), SPYRE_RING_CTRL_ENABLE);
}

TEST(regs_ring_bad_config_is_ring_error)
{
	struct tcard *t = tc_new(NULL);
	uint64_t b = HOST_BASE, w = HOST_BASE + H_WB(0);
	unsigned int irq0;

	bad_ring_cfg(t, 3, b, w);		/* too small */
	CHECK_EQ(ring_status(t, 0), SPYRE_RING_STATUS_ERROR | SPYRE_RING_STATUS_IDLE);
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(0, SPYRE_RING_ERROR)), SPYRE_RING_ERR_BAD_CONFIG);
	CHECK(tc_rd(t, SPYRE_REG_ERR_STATUS) & SPYRE_ERR_STATUS_RING);
	CHECK_EQ(tc_rd(t, SPYRE_REG_ERR_INFO), 2u << 24 | SPYRE_RING_ERR_BAD_CONFIG);
	CHECK_EQ(t->irqs[4], 1);		/* error vector */
	irq0 = t->irqs[4];
	bad_ring_cfg(t, 17, b, w);
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(0, SPYRE_RING_ERROR)), SPYRE_RING_ERR_BAD_CONFIG);
	bad_ring_cfg(t, 4, b + 8, w);		/* misaligned base */
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(0, SPYRE_RING_ERROR)), SPYRE_RING_ERR_BAD_CONFIG);
	bad_ring_cfg(t, 4, b, w + 4);		/* misaligned write-back */
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(0, SPYRE_RING_ERROR)), SPYRE_RING_ERR_BAD_CONFIG);
	bad_ring_cfg(t, 4, 0, w);		/* no base */
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(0, SPYRE_RING_ERROR)), SPYRE_RING_ERR_BAD_CONFIG);
	bad_ring_cfg(t, 16, ~0ull << 6, w);	/* wraps the address space */
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(0, SPYRE_RING_ERROR)), SPYRE_RING_ERR_BAD_CONFIG);
	CHECK(t->irqs[4] > irq0);
	/* enabling again without a reset does not leave the error state */
	tc_wr(t, SPYRE_RING_REG(0, SPYRE_RING_SIZE_LOG2), 4);
	tc_wr(t, SPYRE_RING_REG(0, SPYRE_RING_CTRL), SPYRE_RING_CTRL_ENABLE);
	CHECK(ring_status(t, 0) & SPYRE_RING_STATUS_ERROR);
	/* a good config after RING_CTRL_RESET works */
	bad_ring_cfg(t, 4, b, w);
	CHECK_EQ(ring_status(t, 0), SPYRE_RING_STATUS_ENABLED | SPYRE_RING_STATUS_IDLE);
	tc_free(t);
}

TEST(regs_bad_tail_is_ring_error)
{
	struct tcard *t = tc_new(NULL);

	ring_setup(t, 0, 4);
	tc_wr(t, SPYRE_RING_REG(0, SPYRE_RING_TAIL), 17);	/* beyond a 16-entry ring */
	CHECK_EQ(ring_status(t, 0), SPYRE_RING_STATUS_ERROR | SPYRE_RING_STATUS_IDLE);
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(0, SPYRE_RING_ERROR)), SPYRE_RING_ERR_BAD_TAIL);
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(0, SPYRE_RING_TAIL)), 0);
	tc_wr(t, SPYRE_RING_REG(0, SPYRE_RING_CTRL), SPYRE_RING_CTRL_RESET);
	CHECK_EQ(ring_status(t, 0), SPYRE_RING_STATUS_IDLE);
	ring_setup(t, 0, 4);
	/* tail moving backwards (nothing processed yet: head is 0) */
	tc_wr(t, SPYRE_RING_REG(0, SPYRE_RING_TAIL), 5);
	CHECK(!(ring_status(t, 0) & SPYRE_RING_STATUS_ERROR));
	tc_wr(t, SPYRE_RING_REG(0, SPYRE_RING_TAIL), 3);
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(0, SPYRE_RING_ERROR)), SPYRE_RING_ERR_BAD_TAIL);
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(0, SPYRE_RING_TAIL)), 5);
	tc_free(t);
}

TEST(regs_tail_when_disabled_is_bad_access)
{
	struct tcard *t = tc_new(NULL);

	tc_wr(t, SPYRE_RING_REG(0, SPYRE_RING_TAIL), 3);
	CHECK_EQ(tc_rd(t, SPYRE_RING_REG(0, SPYRE_RING_TAIL)), 0);
	CHECK(tc_rd(t, SPYRE_REG_ERR_STATUS) & SPYRE_ERR_STATUS_BAD_ACCESS);
	CHECK(!(ring_status(t, 0) & SPYRE_RING_STATUS_ERROR));
	tc_free(t);
}
