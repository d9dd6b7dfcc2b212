// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Spyre card model: the DMA command (H2D, D2H, D2D, FILL, and the peer
 * directions D2P/P2D of interface 1.13) and host scatter-list walking.
 * Payloads move with the embedder's lock dropped.
 */
#include "spyre_internal.h"
#include "spyre_mmu.h"

#define SG_BATCH		64
#define CHUNK			(1u << 20)

/*
 * Peer DMA (1.13): one contiguous bus range, so no scatter list, no host
 * offset and no second device address; the bus range must not wrap.
 */
static uint32_t peer_check(struct spyre_model *m, const struct spyre_hw_dma *d)
{
	uint64_t len = spyre_le64_to_cpu(d->len);
	uint64_t bus = spyre_le64_to_cpu(d->sg_addr);

	if (d->fill || d->dev_src || d->sg_count || d->host_off)
		return SPYRE_CMD_ERR_INVALID;
	if (!card_range_ok(spyre_le64_to_cpu(d->dev_addr), len, m->cfg.mem_size))
		return SPYRE_CMD_ERR_BOUNDS;
	if (len && (!bus || bus + len < bus))
		return SPYRE_CMD_ERR_DMA;
	return SPYRE_CMD_OK;
}

uint32_t card_dma_check(struct spyre_model *m, const struct card_cmd *c)
{
	const struct spyre_hw_dma *d = &c->desc.dma;
	unsigned int dir = spyre_le16_to_cpu(d->dir);
	uint64_t len = spyre_le64_to_cpu(d->len);
	uint64_t dst = spyre_le64_to_cpu(d->dev_addr);
	uint64_t src = spyre_le64_to_cpu(d->dev_src);
	uint64_t off = spyre_le64_to_cpu(d->host_off);
	uint64_t size = m->cfg.mem_size;

	if (c->ctx)
		return card_va_dma_check(m, d);
	if (d->flags || dir > SPYRE_DMA_P2D || d->rsvd || d->rsvd2)
		return SPYRE_CMD_ERR_INVALID;
	if (dir == SPYRE_DMA_D2P || dir == SPYRE_DMA_P2D)
		return peer_check(m, d);
	if (dir != SPYRE_DMA_D2D && src)
		return SPYRE_CMD_ERR_INVALID;
	if (dir == SPYRE_DMA_FILL && (len % 4))
		return SPYRE_CMD_ERR_INVALID;
	if (!card_range_ok(dst, len, size))
		return SPYRE_CMD_ERR_BOUNDS;
	if (dir == SPYRE_DMA_D2D && !card_range_ok(src, len, size))
		return SPYRE_CMD_ERR_BOUNDS;
	if ((dir == SPYRE_DMA_H2D || dir == SPYRE_DMA_D2H) && len &&
	    (!d->sg_count || off + len < off))
		return SPYRE_CMD_ERR_BOUNDS;
	return SPYRE_CMD_OK;
}

/*
 * Move @len bytes between @dev and the host buffer described by the
 * scatter list at @sg_addr (@sg_count entries), starting @host_off bytes
 * into that buffer. A list shorter than the transfer is a bounds error, a
 * failed host access a DMA error.
 */
uint32_t card_sg_xfer(struct spyre_model *m, uint64_t sg_addr, uint32_t sg_count,
		       uint64_t host_off, uint8_t *dev, uint64_t len, bool to_host)
{
	struct spyre_hw_sg sg[SG_BATCH];
	uint64_t skip = host_off, done = 0;
	uint32_t i = 0;

	if (sg_addr + (uint64_t)sg_count * sizeof(struct spyre_hw_sg) < sg_addr)
		return SPYRE_CMD_ERR_DMA;
	while (done < len) {
		const struct spyre_hw_sg *e = &sg[i % SG_BATCH];
		uint64_t addr, seg, n;

		if (i == sg_count)
			return SPYRE_CMD_ERR_BOUNDS;
		if (i % SG_BATCH == 0) {
			uint32_t k = sg_count - i < SG_BATCH ? sg_count - i : SG_BATCH;

			if (m->ops.host_read(m->opaque, sg_addr + (uint64_t)i * sizeof(sg[0]), sg,
					     k * sizeof(sg[0])))
				return SPYRE_CMD_ERR_DMA;
		}
		addr = spyre_le64_to_cpu(e->addr);
		seg = spyre_le64_to_cpu(e->len);
		i++;
		if (!seg)
			return SPYRE_CMD_ERR_INVALID;
		if (addr + seg < addr)
			return SPYRE_CMD_ERR_DMA;
		if (skip >= seg) {
			skip -= seg;
			continue;
		}
		addr += skip;
		seg -= skip;
		skip = 0;
		while (seg && done < len) {
			n = seg < len - done ? seg : len - done;
			if (n > CHUNK)
				n = CHUNK;
			card_progress_step(m);
			if (card_abort_pending(m))
				return CARD_CMD_ABORTED;
			if (to_host ? m->ops.host_write(m->opaque, addr, dev + done, n) :
				      m->ops.host_read(m->opaque, addr, dev + done, n))
				return SPYRE_CMD_ERR_DMA;
			addr += n;
			seg -= n;
			done += n;
		}
	}
	return SPYRE_CMD_OK;
}

static uint32_t local_copy(struct spyre_model *m, uint64_t dst, uint64_t src, uint64_t len)
{
	uint64_t done, n;

	if (dst > src && dst < src + len) {	/* overlapping, copy backwards */
		for (done = 0; done < len; done += n) {
			n = len - done < CHUNK ? len - done : CHUNK;
			card_progress_step(m);
			if (card_abort_pending(m))
				return CARD_CMD_ABORTED;
			memmove(m->devmem + dst + len - done - n, m->devmem + src + len - done - n, n);
		}
		return SPYRE_CMD_OK;
	}
	for (done = 0; done < len; done += n) {
		n = len - done < CHUNK ? len - done : CHUNK;
		card_progress_step(m);
		if (card_abort_pending(m))
			return CARD_CMD_ABORTED;
		memmove(m->devmem + dst + done, m->devmem + src + done, n);
	}
	return SPYRE_CMD_OK;
}

/*
 * Peer DMA: the bus range is written (D2P) or read (P2D) through the
 * embedder's bus access in chunks, like a host segment; the embedder
 * routes the address (in QEMU: the PCI address space, where a peer card's
 * BAR2 is its memory).
 */
static uint32_t peer_xfer(struct spyre_model *m, uint64_t bus, uint8_t *dev, uint64_t len,
			  bool to_peer)
{
	uint64_t done, n;

	for (done = 0; done < len; done += n) {
		n = len - done < CHUNK ? len - done : CHUNK;
		card_progress_step(m);
		if (card_abort_pending(m))
			return CARD_CMD_ABORTED;
		if (to_peer ? m->ops.host_write(m->opaque, bus + done, dev + done, n) :
			      m->ops.host_read(m->opaque, bus + done, dev + done, n))
			return SPYRE_CMD_ERR_DMA;
	}
	return SPYRE_CMD_OK;
}

/* Fill with a repeated 32-bit pattern: seed one chunk, then copy it. */
static uint32_t local_fill(struct spyre_model *m, uint64_t dst, uint32_t pattern, uint64_t len)
{
	uint8_t *p = m->devmem + dst;
	uint32_t b = spyre_cpu_to_le32(pattern);
	uint64_t seeded, done, n;

	seeded = len < 4 ? len : 4;
	memcpy(p, &b, seeded);
	while (seeded < len && seeded < CHUNK) {	/* double the seeded prefix */
		n = seeded < len - seeded ? seeded : len - seeded;
		memcpy(p + seeded, p, n);
		seeded += n;
	}
	for (done = seeded; done < len; done += n) {
		n = len - done < seeded ? len - done : seeded;
		card_progress_step(m);
		if (card_abort_pending(m))
			return CARD_CMD_ABORTED;
		memcpy(p + done, p, n);
	}
	return SPYRE_CMD_OK;
}

/* The payload of a checked physical-mode DMA (the lock is dropped). */
static uint32_t run_phys(struct spyre_model *m, const struct spyre_hw_dma *d)
{
	unsigned int dir = spyre_le16_to_cpu(d->dir);
	uint64_t len = spyre_le64_to_cpu(d->len);
	uint64_t dst = spyre_le64_to_cpu(d->dev_addr);

	switch (dir) {
	case SPYRE_DMA_H2D:
	case SPYRE_DMA_D2H:
		return card_sg_xfer(m, spyre_le64_to_cpu(d->sg_addr),
				     spyre_le32_to_cpu(d->sg_count), spyre_le64_to_cpu(d->host_off),
				     m->devmem + dst, len, dir == SPYRE_DMA_D2H);
	case SPYRE_DMA_D2D:
		return local_copy(m, dst, spyre_le64_to_cpu(d->dev_src), len);
	case SPYRE_DMA_D2P:
	case SPYRE_DMA_P2D:
		return peer_xfer(m, spyre_le64_to_cpu(d->sg_addr), m->devmem + dst, len,
				 dir == SPYRE_DMA_D2P);
	default:
		return local_fill(m, dst, spyre_le32_to_cpu(d->fill), len);
	}
}

/* Execute a checked DMA command; the caller accounts its device time. */
uint32_t card_dma_run(struct spyre_model *m, unsigned int ring, const struct card_cmd *c,
		       struct card_va *v)
{
	const struct spyre_hw_dma *d = &c->desc.dma;
	uint32_t st;

	if (!d->len)
		return SPYRE_CMD_OK;
	card_unlock(m, (int)ring);
	st = v ? card_va_dma_run(m, v, d) : run_phys(m, d);
	card_lock(m);
	if (card_abort_pending(m))
		return CARD_CMD_ABORTED;
	return st;
}
