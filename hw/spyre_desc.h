/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note OR MIT */
/*
 * Encoders for the Spyre card's command descriptors (hw/spyre_hw.h) and the
 * errno each command status stands for.
 *
 * Everything that writes descriptors (the driver, libspyre's sim backend,
 * the card model's tests) builds them here, so the encoding exists once and
 * is little endian on every host; the card model reads them back through
 * the same typed structs with spyre_le*_to_cpu(). What stays with each
 * caller is what differs: how a handle becomes an address, and the range
 * checks.
 *
 * Every encoder first zeroes the whole descriptor: reserved fields must be
 * zero, or the card fails the command with SPYRE_CMD_ERR_INVALID.
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#ifndef SPYRE_DESC_H
#define SPYRE_DESC_H

#include "spyre_hw.h"

#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/string.h>
#include <asm/byteorder.h>

#define spyre_cpu_to_le16(v)	cpu_to_le16(v)
#define spyre_cpu_to_le32(v)	cpu_to_le32(v)
#define spyre_cpu_to_le64(v)	cpu_to_le64(v)
#define spyre_le16_to_cpu(v)	le16_to_cpu(v)
#define spyre_le32_to_cpu(v)	le32_to_cpu(v)
#define spyre_le64_to_cpu(v)	le64_to_cpu(v)
#else
#include <endian.h>
#include <errno.h>
#include <string.h>

#define spyre_cpu_to_le16(v)	htole16(v)
#define spyre_cpu_to_le32(v)	htole32(v)
#define spyre_cpu_to_le64(v)	htole64(v)
#define spyre_le16_to_cpu(v)	le16toh(v)
#define spyre_le32_to_cpu(v)	le32toh(v)
#define spyre_le64_to_cpu(v)	le64toh(v)
#endif

/* NOP: runs nothing (a cancelled command becomes one). */
static inline void spyre_desc_nop(union spyre_hw_desc *d)
{
	memset(d, 0, sizeof(*d));
	d->hdr.opcode = SPYRE_OP_NOP;
}

static inline void spyre_desc_dma_init(union spyre_hw_desc *d, enum spyre_hw_dma_dir dir,
				       __u64 len, __u64 dev_addr)
{
	memset(d, 0, sizeof(*d));
	d->dma.opcode = SPYRE_OP_DMA;
	d->dma.dir = spyre_cpu_to_le16(dir);
	d->dma.len = spyre_cpu_to_le64(len);
	d->dma.dev_addr = spyre_cpu_to_le64(dev_addr);
}

/*
 * H2D (@dir SPYRE_DMA_H2D) or D2H (SPYRE_DMA_D2H) of @len bytes between
 * device address @dev_addr and the host buffer described by the scatter
 * list at @sg_addr (@sg_count entries), starting @host_off bytes into it.
 */
static inline void spyre_desc_dma_host(union spyre_hw_desc *d, enum spyre_hw_dma_dir dir,
				       __u64 len, __u64 dev_addr, __u64 sg_addr,
				       __u32 sg_count, __u64 host_off)
{
	spyre_desc_dma_init(d, dir, len, dev_addr);
	d->dma.sg_addr = spyre_cpu_to_le64(sg_addr);
	d->dma.sg_count = spyre_cpu_to_le32(sg_count);
	d->dma.host_off = spyre_cpu_to_le64(host_off);
}

/*
 * Peer DMA (interface 1.13): D2P (@dir SPYRE_DMA_D2P) moves @len bytes from
 * device address @dev_addr to the contiguous bus range at @bus_addr (a peer
 * card's BAR2), P2D (SPYRE_DMA_P2D) the other way.
 */
static inline void spyre_desc_dma_peer(union spyre_hw_desc *d, enum spyre_hw_dma_dir dir,
				       __u64 len, __u64 dev_addr, __u64 bus_addr)
{
	spyre_desc_dma_init(d, dir, len, dev_addr);
	d->dma.sg_addr = spyre_cpu_to_le64(bus_addr);
}

/* D2D: @len bytes from device address @src to @dst. */
static inline void spyre_desc_dma_d2d(union spyre_hw_desc *d, __u64 len, __u64 dst, __u64 src)
{
	spyre_desc_dma_init(d, SPYRE_DMA_D2D, len, dst);
	d->dma.dev_src = spyre_cpu_to_le64(src);
}

/* FILL: @len bytes (a multiple of 4) at @dst with the 32-bit @pattern. */
static inline void spyre_desc_dma_fill(union spyre_hw_desc *d, __u64 len, __u64 dst,
				       __u32 pattern)
{
	spyre_desc_dma_init(d, SPYRE_DMA_FILL, len, dst);
	d->dma.fill = spyre_cpu_to_le32(pattern);
}

/*
 * LAUNCH of the program at @prog_addr (@prog_len bytes) with workspace
 * @ws_addr/@ws_len (0/0 for none) and @nargs argument slots; the
 * SPYRE_DESC_ARGS(@nargs) ARGS descriptors that must follow it are written
 * with spyre_desc_arg().
 */
static inline void spyre_desc_launch(union spyre_hw_desc *d, __u16 nargs, __u64 prog_addr,
				     __u64 prog_len, __u64 ws_addr, __u64 ws_len)
{
	memset(d, 0, sizeof(*d));
	d->launch.opcode = SPYRE_OP_LAUNCH;
	d->launch.nargs = spyre_cpu_to_le16(nargs);
	d->launch.prog_addr = spyre_cpu_to_le64(prog_addr);
	d->launch.prog_len = spyre_cpu_to_le64(prog_len);
	d->launch.ws_addr = spyre_cpu_to_le64(ws_addr);
	d->launch.ws_len = spyre_cpu_to_le64(ws_len);
}

/* ARGS descriptors that follow a LAUNCH of @nargs slots. */
#define SPYRE_DESC_ARGS(nargs) \
	(((nargs) + SPYRE_ARGS_PER_DESC - 1) / SPYRE_ARGS_PER_DESC)

/*
 * Sets argument slot @i (of @nargs) of a LAUNCH: @a is the ARGS descriptor
 * holding the slot, the (@i / SPYRE_ARGS_PER_DESC)th after the LAUNCH.
 * Slots are set in order: the first slot of a descriptor initialises it.
 */
static inline void spyre_desc_arg(union spyre_hw_desc *a, __u32 nargs, __u32 i,
				  __u64 addr, __u64 len)
{
	__u32 slot = i % SPYRE_ARGS_PER_DESC;
	__u32 left = nargs - (i - slot);

	if (!slot) {
		memset(a, 0, sizeof(*a));
		a->args.opcode = SPYRE_OP_ARGS;
		a->args.count = spyre_cpu_to_le16(left < SPYRE_ARGS_PER_DESC ?
						  left : SPYRE_ARGS_PER_DESC);
	}
	a->args.slot[slot].addr = spyre_cpu_to_le64(addr);
	a->args.slot[slot].len = spyre_cpu_to_le64(len);
}

/* TIMESTAMP into device memory at @dev_addr. */
static inline void spyre_desc_timestamp_dev(union spyre_hw_desc *d, __u64 dev_addr)
{
	memset(d, 0, sizeof(*d));
	d->ts.opcode = SPYRE_OP_TIMESTAMP;
	d->ts.flags = SPYRE_DESC_F_DEVMEM;
	d->ts.addr = spyre_cpu_to_le64(dev_addr);
}

/* TIMESTAMP into host memory: @host_off bytes into the scatter list's buffer. */
static inline void spyre_desc_timestamp_host(union spyre_hw_desc *d, __u64 sg_addr,
					     __u32 sg_count, __u64 host_off)
{
	memset(d, 0, sizeof(*d));
	d->ts.opcode = SPYRE_OP_TIMESTAMP;
	d->ts.addr = spyre_cpu_to_le64(sg_addr);
	d->ts.sg_count = spyre_cpu_to_le32(sg_count);
	d->ts.host_off = spyre_cpu_to_le64(host_off);
}

/*
 * SEM_SIGNAL (@opcode SPYRE_OP_SEM_SIGNAL) or SEM_WAIT (SPYRE_OP_SEM_WAIT,
 * @flags 0 or SPYRE_DESC_F_ERR) of semaphore @sem at @value.
 */
static inline void spyre_desc_sem(union spyre_hw_desc *d, enum spyre_hw_opcode opcode,
				  __u8 flags, __u16 sem, __u64 value)
{
	memset(d, 0, sizeof(*d));
	d->sem.opcode = opcode;
	d->sem.flags = flags;
	d->sem.sem = spyre_cpu_to_le16(sem);
	d->sem.value = spyre_cpu_to_le64(value);
}

/*
 * FENCE ending a job, @flags SPYRE_DESC_F_IRQ or 0. Its sequence number and
 * record address are known only once the job reaches its ring:
 * spyre_desc_fence_seal() fills them in.
 */
static inline void spyre_desc_fence(union spyre_hw_desc *d, __u8 flags)
{
	memset(d, 0, sizeof(*d));
	d->fence.opcode = SPYRE_OP_FENCE;
	d->fence.flags = flags;
}

static inline void spyre_desc_fence_seal(union spyre_hw_desc *d, __u64 seqno,
					 __u64 record_addr)
{
	d->fence.seqno = spyre_cpu_to_le64(seqno);
	d->fence.record_addr = spyre_cpu_to_le64(record_addr);
}

/* Makes the FENCE also raise semaphore @sem to @value (interface 1.1). */
static inline void spyre_desc_fence_sem(union spyre_hw_desc *d, __u16 sem, __u64 value)
{
	d->fence.flags |= SPYRE_DESC_F_SEM;
	d->fence.sem = spyre_cpu_to_le16(sem);
	d->fence.sem_value = spyre_cpu_to_le64(value);
}

/*
 * SET_CTX (interface 1.10): the job's following commands use MMU context
 * @ctx. Only a ring of context 0, which the driver writes, may carry it.
 */
static inline void spyre_desc_set_ctx(union spyre_hw_desc *d, __u16 ctx)
{
	memset(d, 0, sizeof(*d));
	d->set_ctx.opcode = SPYRE_OP_SET_CTX;
	d->set_ctx.ctx = spyre_cpu_to_le16(ctx);
}

/* A leaf page-table entry (interface 1.10): @addr with SPYRE_PTE_* @flags. */
static inline __u64 spyre_pte_leaf(__u64 addr, __u64 flags)
{
	return (addr & SPYRE_PTE_ADDR_MASK) | flags | SPYRE_PTE_VALID;
}

/*
 * The error a job that ended with command status @status reports to its
 * submitter (0 for SPYRE_CMD_OK): the errors of the fences the driver
 * signals, which libspyre's sim backend reproduces. A job failed by
 * SPYRE_CMD_ERR_DEP takes its dependency's error where software knows it.
 */
static inline int spyre_status_to_errno(__u32 status)
{
	switch (status) {
	case SPYRE_CMD_OK:
		return 0;
	case SPYRE_CMD_ERR_BOUNDS:
	case SPYRE_CMD_ERR_PAGE_FAULT:	/* a card VA outside the mapping (1.10) */
		return -EFAULT;
	case SPYRE_CMD_ERR_PROGRAM:
		return -ENOEXEC;
	case SPYRE_CMD_ERR_DEADLOCK:
		return -EDEADLK;
	case SPYRE_CMD_ERR_INVALID:
		return -EPROTO;		/* the card refused a descriptor */
	case SPYRE_CMD_ERR_ARITH:
		return -EDOM;		/* integer division by zero (1.9) */
	case SPYRE_CMD_ERR_DMA:
	case SPYRE_CMD_ERR_MEM_UE:
	case SPYRE_CMD_ERR_DEP:
	default:
		return -EIO;
	}
}

#endif /* SPYRE_DESC_H */
