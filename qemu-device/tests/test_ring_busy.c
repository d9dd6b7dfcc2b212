// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * SPYRE_RING_COMPUTE_NS and SPYRE_RING_DMA_NS (1.14): per ring, the
 * engine time of its finished jobs, equal to the sum of their completion
 * records' compute_ns and dma_ns, so a driver can account the work of a
 * ring whose jobs it never sees (a user-mode queue); zero after a reset.
 */
#include "harness.h"

#define PROG	0x100000ull
#define ARG0	0x200000ull

static uint64_t busy(struct tcard *t, unsigned int ring, bool dma)
{
	uint32_t lo = tc_rd(t, SPYRE_RING_REG(ring, dma ? SPYRE_RING_DMA_NS_LO :
						      SPYRE_RING_COMPUTE_NS_LO));

	return (uint64_t)tc_rd(t, SPYRE_RING_REG(ring, dma ? SPYRE_RING_DMA_NS_HI :
						       SPYRE_RING_COMPUTE_NS_HI)) << 32 | lo;
}

TEST(ring_busy_version_is_1_14_or_later)
{
	struct tcard *t = tc_new(NULL);

	CHECK(tc_rd(t, SPYRE_REG_VERSION) >= SPYRE_HW_VERSION(1, SPYRE_HW_RING_BUSY_MINOR));
	CHECK_EQ(busy(t, 0, false), 0);
	CHECK_EQ(busy(t, 0, true), 0);
	tc_free(t);
}

TEST(ring_busy_sums_the_records)
{
	struct tcard *t = tc_new(NULL);
	uint64_t slots[2] = { ARG0, 4096 }, len, dma1;
	struct spyre_hw_completion c;
	struct prog p;

	ring_setup(t, 1, 4);
	push_dma(t, 1, SPYRE_DMA_FILL, 1ull << 20, 0, 0, 0, 0, 0, 0x5a5a5a5a);
	fence_and_run(t, 1, 1, 0, false);
	dma1 = spyre_le64_to_cpu(rec(t, 0)->dma_ns);
	CHECK(dma1 > 0);
	CHECK_EQ(busy(t, 1, true), dma1);
	CHECK_EQ(busy(t, 1, false), 0);
	push_dma(t, 1, SPYRE_DMA_FILL, 4096, 0, 0, 0, 0, 0, 0);
	fence_and_run(t, 1, 2, 1, false);
	CHECK_EQ(busy(t, 1, true), dma1 + spyre_le64_to_cpu(rec(t, 1)->dma_ns));

	prog_init(&p, 1, 0);
	p_load(&p, false, 1, 0, 0, 1, 64, 0, 0, 0);
	len = prog_store(t, &p, PROG);
	c = run_launch(t, PROG, len, 0, 0, 1, slots);
	CHECK_EQ(c.status, SPYRE_CMD_OK);
	CHECK(spyre_le64_to_cpu(c.compute_ns) > 0);
	CHECK_EQ(busy(t, 0, false), spyre_le64_to_cpu(c.compute_ns));
	CHECK_EQ(busy(t, 0, true), 0);
	CHECK_EQ(busy(t, 1, false), 0);			/* only the ring's own */

	/* Read-only: a write is a bad access and changes nothing. */
	tc_wr(t, SPYRE_REG_ERR_STATUS, 0xffffffff);
	tc_wr(t, SPYRE_RING_REG(1, SPYRE_RING_DMA_NS_LO), 0);
	CHECK(tc_rd(t, SPYRE_REG_ERR_STATUS) & SPYRE_ERR_STATUS_BAD_ACCESS);
	CHECK(busy(t, 1, true) > dma1);
	/* A ring reset starts them over; the other ring keeps its own. */
	tc_wr(t, SPYRE_RING_REG(1, SPYRE_RING_CTRL), SPYRE_RING_CTRL_RESET);
	CHECK_EQ(busy(t, 1, true), 0);
	CHECK_EQ(busy(t, 0, false), spyre_le64_to_cpu(c.compute_ns));
	tc_free(t);
}
