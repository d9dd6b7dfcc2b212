// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Peer DMA (interface 1.13): two test cards on one bus, card A's DMA
 * engine writing (D2P) and reading (P2D) card B's memory at the bus
 * address of B's BAR2 (PEER_BASE), its timing on A's PCIe link, and the
 * descriptors and addresses it refuses.
 */
#include "mmu_util.h"

static void pattern(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 29 + seed * 13 + (i >> 10));
}

/* A and B, with A's bus showing B's memory at PEER_BASE. */
static struct tcard *pair(struct tcard **b)
{
	struct tcard *a = tc_new(NULL);

	*b = tc_new(NULL);
	a->peer = *b;
	return a;
}

static void free_pair(struct tcard *a)
{
	tc_free(a->peer);
	tc_free(a);
}

static void push_peer(struct tcard *t, unsigned int n, unsigned int dir, uint64_t len,
		      uint64_t dev, uint64_t bus)
{
	union spyre_hw_desc d;

	spyre_desc_dma_peer(&d, dir, len, dev, bus);
	ring_push(t, n, &d);
}

TEST(peer_d2p_and_p2d_move_bytes_between_cards)
{
	struct tcard *b, *a = pair(&b);
	enum { N = 3 << 20 };	/* three 1 MiB chunks: the chunk loop runs */

	pattern(a->dev + 0x100000, N + 100, 1);
	pattern(b->dev + 0x800000, 5000, 2);
	ring_setup(a, 0, 4);
	/* A's bytes land in B's memory at an unaligned offset ... */
	push_peer(a, 0, SPYRE_DMA_D2P, N, 0x100000 + 100, PEER_BASE + 0x400000 + 3);
	/* ... and B's bytes come back into A */
	push_peer(a, 0, SPYRE_DMA_P2D, 5000, 0x2000000, PEER_BASE + 0x800000);
	fence_and_run(a, 0, 1, 0, false);
	CHECK_EQ(rec(a, 0)->status, SPYRE_CMD_OK);
	CHECK(!memcmp(b->dev + 0x400000 + 3, a->dev + 0x100000 + 100, N));
	CHECK_EQ(b->dev[0x400000 + 2], 0);		/* nothing before the range */
	CHECK_EQ(b->dev[0x400000 + 3 + N], 0);		/* nothing after it */
	CHECK(!memcmp(a->dev + 0x2000000, b->dev + 0x800000, 5000));
	/* B's card did nothing: its rings never ran */
	CHECK_EQ(tc_rd(b, SPYRE_RING_REG(0, SPYRE_RING_HEAD)), 0);
	free_pair(a);
}

TEST(peer_dma_zero_length_touches_nothing)
{
	struct tcard *b, *a = pair(&b);

	ring_setup(a, 0, 4);
	push_peer(a, 0, SPYRE_DMA_D2P, 0, 0x1000, PEER_BASE);
	/* zero bytes at a bus address nobody decodes: still fine */
	push_peer(a, 0, SPYRE_DMA_P2D, 0, 0x1000, 0x7000000000ull);
	fence_and_run(a, 0, 1, 0, false);
	CHECK_EQ(rec(a, 0)->status, SPYRE_CMD_OK);
	CHECK_EQ(a->host_writes, 2);	/* the record and the write-back only */
	free_pair(a);
}

/*
 * D2P uses A's D2H engine and P2D its H2D engine (outbound and inbound on
 * the link): each lasts 1000 ns setup + len / 50 GB/s and takes its bytes
 * of A's LPDDR5 budget; a D2P overlaps an H2D of another ring and a D2H
 * queues behind it.
 */
TEST(peer_dma_timing_on_the_pcie_link)
{
	struct tcard *b, *a = pair(&b);
	uint64_t sg = sg_simple(a, 0, 0, 1 << 20);
	/* ceil(2^20 B * 1000 / 50000 B/us) = 20972 ns + 1000 ns setup */
	const uint64_t mb_ns = 1000 + ((1000ull << 20) + 49999) / 50000;

	ring_setup(a, 0, 4);
	ring_setup(a, 1, 4);
	ring_setup(a, 2, 4);
	ring_setup(a, 3, 4);
	push_peer(a, 0, SPYRE_DMA_D2P, 1 << 20, 0, PEER_BASE);
	push_fence(a, 0, 1, 0, false);
	push_dma(a, 1, SPYRE_DMA_H2D, 1 << 20, 0x200000, 0, sg, 1, 0, 0);
	push_fence(a, 1, 1, 1, false);
	push_dma(a, 2, SPYRE_DMA_D2H, 1 << 20, 0x300000, 0, sg, 1, 0, 0);
	push_fence(a, 2, 1, 2, false);
	push_peer(a, 3, SPYRE_DMA_P2D, 45900, 0x400000, PEER_BASE + 0x100000);
	push_fence(a, 3, 1, 3, false);
	ring_doorbell(a, 0);
	ring_doorbell(a, 1);
	ring_doorbell(a, 2);
	ring_run(a, 3);
	CHECK_EQ(mb_ns, 21972);
	CHECK_EQ(rec(a, 0)->start_ns, 0);
	CHECK_EQ(rec(a, 0)->end_ns, mb_ns);
	CHECK_EQ(rec(a, 0)->dma_ns, mb_ns);
	CHECK_EQ(rec(a, 1)->start_ns, 0);		/* H2D engine: overlaps */
	CHECK_EQ(rec(a, 2)->start_ns, mb_ns);		/* D2H engine: after the D2P */
	CHECK_EQ(rec(a, 3)->start_ns, mb_ns);		/* P2D: after the H2D */
	/*
	 * Its link time would end it at mb_ns + 1000 + 918, but the LPDDR5
	 * channel is the D2H's from mb_ns + 1000 for 5243 ns (1 MiB at
	 * 200 GB/s): the P2D's 230 ns of it come after.
	 */
	CHECK_EQ(rec(a, 3)->end_ns, mb_ns + 1000 + 5243 + 230);
	free_pair(a);
}

TEST(peer_dma_refuses_bad_descriptors)
{
	struct tcard *b, *a = pair(&b);
	union spyre_hw_desc d;
	unsigned int i;

	ring_setup(a, 0, 6);
	for (i = 0; i < 6; i++) {
		spyre_desc_dma_peer(&d, SPYRE_DMA_D2P, 64, 0x1000, PEER_BASE);
		switch (i) {
		case 0:
			d.dma.sg_count = spyre_cpu_to_le32(1);	/* no scatter list */
			break;
		case 1:
			d.dma.host_off = spyre_cpu_to_le64(8);
			break;
		case 2:
			d.dma.dev_src = spyre_cpu_to_le64(0x2000);
			break;
		case 3:
			d.dma.fill = spyre_cpu_to_le32(1);
			break;
		case 4:
			d.dma.flags = 1;
			break;
		default:
			d.dma.dir = spyre_cpu_to_le16(SPYRE_DMA_P2D + 1);	/* unknown */
			break;
		}
		ring_push(a, 0, &d);
		push_fence(a, 0, i + 1, i, false);
	}
	ring_run(a, 0);
	for (i = 0; i < 6; i++)
		CHECK_EQ(rec(a, i)->status, SPYRE_CMD_ERR_INVALID);
	CHECK_EQ(b->dev[0x0], 0);
	free_pair(a);
}

TEST(peer_dma_bounds_and_bus_errors)
{
	struct tcard *b, *a = pair(&b);
	uint64_t mem = a->cfg.mem_size;

	pattern(a->dev, 4096, 3);
	ring_setup(a, 0, 6);
	push_peer(a, 0, SPYRE_DMA_D2P, 4096, mem - 4095, PEER_BASE);	/* past A's memory */
	push_fence(a, 0, 1, 0, false);
	push_peer(a, 0, SPYRE_DMA_P2D, 16, 0, 0);			/* bus address 0 */
	push_fence(a, 0, 2, 1, false);
	push_peer(a, 0, SPYRE_DMA_D2P, 4096, 0, ~0ull - 100);		/* wraps the bus */
	push_fence(a, 0, 3, 2, false);
	/* runs off the end of B's BAR: nothing decodes the rest */
	push_peer(a, 0, SPYRE_DMA_D2P, 8192, 0, PEER_BASE + b->cfg.mem_size - 4096);
	push_fence(a, 0, 4, 3, false);
	push_peer(a, 0, SPYRE_DMA_P2D, 64, 0, 0x7000000000ull);	/* no device there */
	push_fence(a, 0, 5, 4, false);
	push_peer(a, 0, SPYRE_DMA_D2P, 4096, 0, PEER_BASE + 0x1000);	/* the ring goes on */
	push_fence(a, 0, 6, 5, false);
	ring_run(a, 0);
	CHECK_EQ(rec(a, 0)->status, SPYRE_CMD_ERR_BOUNDS);
	CHECK_EQ(rec(a, 1)->status, SPYRE_CMD_ERR_DMA);
	CHECK_EQ(rec(a, 2)->status, SPYRE_CMD_ERR_DMA);
	CHECK_EQ(rec(a, 3)->status, SPYRE_CMD_ERR_DMA);
	CHECK_EQ(rec(a, 4)->status, SPYRE_CMD_ERR_DMA);
	CHECK_EQ(rec(a, 5)->status, SPYRE_CMD_OK);
	CHECK(!memcmp(b->dev + 0x1000, a->dev, 4096));
	CHECK_EQ(wb_seqno(a, 0), 6);
	CHECK_EQ(ring_status(a, 0), SPYRE_RING_STATUS_ENABLED | SPYRE_RING_STATUS_IDLE);
	free_pair(a);
}

/*
 * A card VA names no bus address: a context's DMA cannot aim at a peer
 * (the MMU keeps a process inside its own mappings), so the peer
 * directions are refused in a context.
 */
TEST(peer_dma_not_in_a_va_context)
{
	struct tcard *b, *a = pair(&b);
	const uint64_t va = 0x40000000ull;
	struct pt p1;

	pt_init(&p1, a, 1, PT1);
	map4k(&p1, va, 0x100000, SPYRE_PTE_WRITE);
	ring_setup(a, 0, 5);
	push_set_ctx(a, 0, 1);
	push_peer(a, 0, SPYRE_DMA_D2P, 64, va, PEER_BASE);
	push_fence(a, 0, 1, 0, false);
	ring_run(a, 0);
	CHECK_EQ(rec(a, 0)->status, SPYRE_CMD_ERR_INVALID);
	CHECK_EQ(b->dev[0], 0);
	free_pair(a);
}
