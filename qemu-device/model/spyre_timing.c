// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Spyre card model: durations of engine work in device time. All results
 * are pure functions of the command and the timing parameters, so the
 * modelled timeline never depends on how fast the host emulates it.
 */
#include "spyre_internal.h"

/* ns to move @bytes at @bytes_per_us, rounded up. */
uint64_t card_time_bytes(uint64_t bytes, uint64_t bytes_per_us)
{
	if (bytes > UINT64_MAX / 1000)
		return UINT64_MAX / 4;
	return (bytes * 1000 + bytes_per_us - 1) / bytes_per_us;
}

uint64_t card_time_cycles(const struct spyre_timing *t, uint64_t cycles)
{
	if (cycles > UINT64_MAX / 1000)
		return UINT64_MAX / 4;
	return (cycles * 1000 + t->clock_mhz - 1) / t->clock_mhz;
}

enum card_engine card_dma_engine(unsigned int dir)
{
	switch (dir) {
	case SPYRE_DMA_H2D:
	case SPYRE_DMA_P2D:	/* inbound over the card's PCIe link */
		return CARD_ENG_H2D;
	case SPYRE_DMA_D2H:
	case SPYRE_DMA_D2P:	/* outbound over the card's PCIe link */
		return CARD_ENG_D2H;
	default:
		return CARD_ENG_D2D;
	}
}

/*
 * H2D/D2H and the peer directions D2P/P2D cross the card's PCIe link; D2D
 * reads and writes LPDDR5 (twice the bytes); FILL only writes it. Every
 * command pays the DMA setup latency.
 */
uint64_t card_time_dma(const struct spyre_timing *t, unsigned int dir, uint64_t len)
{
	uint64_t x;

	switch (dir) {
	case SPYRE_DMA_H2D:
	case SPYRE_DMA_D2H:
	case SPYRE_DMA_D2P:
	case SPYRE_DMA_P2D:
		x = card_time_bytes(len, t->pcie_bytes_per_us);
		break;
	case SPYRE_DMA_D2D:
		x = card_time_bytes(len, t->dram_bytes_per_us / 2);
		break;
	default:
		x = card_time_bytes(len, t->dram_bytes_per_us);
		break;
	}
	return t->dma_latency_ns + x;
}
