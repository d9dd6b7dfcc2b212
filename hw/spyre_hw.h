/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note OR MIT */
/*
 * Hardware interface of the virtual Spyre card: PCI identity, registers,
 * rings, command descriptors and completion records.
 *
 * This header is the contract between every layer that talks to the card:
 * the card model (qemu-device/), the driver (driver/), libspyre's sim
 * backend, the selftests and the benchmarks all include it from hw/, and
 * none of them owns it. Documentation/spyre-card.rst is the prose
 * specification of everything defined here; hw/spyre_desc.h builds the
 * descriptors, hw/spyre_isa.h is the program format. All multi-byte fields
 * the card reads from or writes to memory are little endian.
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#ifndef SPYRE_HW_H
#define SPYRE_HW_H

#include <linux/types.h>
#ifdef __KERNEL__
#include <linux/build_bug.h>
#else
#include <assert.h>	/* static_assert (C11; a keyword in C++) */
#endif

/*
 * PCI identity. 0x1234 is QEMU's experimental vendor ID; IBM's cards use
 * IBM's own vendor ID, so this card can never be mistaken for real silicon
 * (its register interface is our own).
 */
#define SPYRE_PCI_VENDOR_ID		0x1234
#define SPYRE_PCI_DEVICE_ID		0x5350	/* "SP" */
#define SPYRE_PCI_REVISION		0x01
#define SPYRE_PCI_CLASS			0x120000 /* processing accelerator */

#define SPYRE_BAR_REGS			0	/* registers, doorbells, MSI-X */
#define SPYRE_BAR_MEM			2	/* 64-bit prefetchable device memory */
/*
 * (1.10) One 4 KiB doorbell page per ring, so a user-mode queue's page can
 * be mapped into its process alone: offset 0 of page n is ring n's
 * SPYRE_RING_TAIL (write) and SPYRE_RING_HEAD (read).
 */
#define SPYRE_BAR_DOORBELL		4
#define SPYRE_DOORBELL_STRIDE		0x1000
#define SPYRE_REGS_SIZE			0x10000
#define SPYRE_MSIX_TABLE_OFFSET		0x8000
#define SPYRE_MSIX_PBA_OFFSET		0x9000

/*
 * Interface version reported in SPYRE_REG_VERSION: major << 16 | minor.
 * 1.1: FENCE F_SEM, SEM_* registers; 1.2: SPYRE_RING_PROGRESS;
 * 1.3: VEC compare, select, argmax and cumsum, LOAD GATHER;
 * 1.4: VEC sin, cos and erf, same-type VEC COPY moves bits;
 * 1.5: LAUNCH F_SCRUB (zero every scratchpad before the program);
 * 1.6: completion records say where a failed LAUNCH stopped (fault_insn,
 *      fault_core, fault_space, fault_addr);
 * 1.7: a LAUNCH binds up to 64 argument slots (16 before);
 * 1.8: the BARRIER instruction (one program runs kernels that depend on
 *      each other across cores);
 * 1.9: integer mode of the vector unit (VEC flag SPYRE_VEC_INT, element
 *      type INT64, integer functions NEG..REM, SPYRE_CMD_ERR_ARITH);
 * 1.10: the card MMU: per-context page tables, SPYRE_RING_CTX, the
 *      SPYRE_REG_MMU_* registers, SPYRE_OP_SET_CTX, SPYRE_OP_WAIT_MEM,
 *      SPYRE_CMD_ERR_PAGE_FAULT, BAR4 doorbell pages;
 * 1.11: the card scrubs the scratchpads before a LAUNCH when the compute
 *      engine passes to or from a user-mode queue of another context;
 * 1.12: LOAD flag SPYRE_LOAD_MCAST (one LPDDR5 read into several cores'
 *      scratchpads);
 * 1.13: peer DMA: DMA directions SPYRE_DMA_D2P and SPYRE_DMA_P2D move bytes
 *      between device memory and a contiguous PCI bus range (another
 *      card's BAR2), without a scatter list;
 * 1.14: per-ring engine-time counters SPYRE_RING_COMPUTE_NS_* and
 *      SPYRE_RING_DMA_NS_* (what the ring's finished jobs used);
 * 1.15: per-ring fault records SPYRE_RING_FAULT_INFO and
 *      SPYRE_RING_FAULT_ADDR_* (the translation fault that stopped the
 *      ring's context, which the card-wide latch may no longer hold);
 * 1.16: the MMU's page-walk cache and line fill: a walk starts below the
 *      levels whose table it holds, and a level-0 walk's 64-byte read fills
 *      the TLB with the line's other valid entries (fewer, shorter walks;
 *      INVALIDATE drops both, as before).
 */
#define SPYRE_HW_VERSION_MAJOR		1
#define SPYRE_HW_VERSION_MINOR		16
/* The first interface with SPYRE_DMA_D2P and SPYRE_DMA_P2D. */
#define SPYRE_HW_PEER_DMA_MINOR		13
/* The SPYRE_REG_VERSION value of @major.@minor; such values compare in order. */
#define SPYRE_HW_VERSION(major, minor)	((__u32)(major) << 16 | (__u32)(minor))
#define SPYRE_HW_VERSION_CURRENT \
	SPYRE_HW_VERSION(SPYRE_HW_VERSION_MAJOR, SPYRE_HW_VERSION_MINOR)
/* The parts of a SPYRE_REG_VERSION value (the one place that decodes it). */
#define SPYRE_HW_VERSION_MAJOR_OF(v)	((__u32)(v) >> 16)
#define SPYRE_HW_VERSION_MINOR_OF(v)	((__u32)(v) & 0xffff)

/* --- Global registers (BAR0, 32-bit access only) ------------------------ */
#define SPYRE_REG_ID			0x000	/* RO: SPYRE_ID_MAGIC */
#define   SPYRE_ID_MAGIC		0x53505952 /* "SPYR" */
#define SPYRE_REG_VERSION		0x004	/* RO: major << 16 | minor */
#define SPYRE_REG_NUM_CORES		0x008	/* RO: AI cores (32) */
#define SPYRE_REG_SCRATCHPAD_KB		0x00c	/* RO: scratchpad per core, KiB */
#define SPYRE_REG_NUM_RINGS		0x010	/* RO: command rings */
#define SPYRE_REG_CLOCK_MHZ		0x014	/* RO: modelled core clock */
#define SPYRE_REG_MEM_SIZE_LO		0x018	/* RO: device memory bytes */
#define SPYRE_REG_MEM_SIZE_HI		0x01c
#define SPYRE_REG_NUM_SEMS		0x020	/* RO: cross-ring semaphores */
#define SPYRE_REG_MEM_APERTURE_LO	0x024	/* RO: bytes of BAR2 mapping memory */
#define SPYRE_REG_MEM_APERTURE_HI	0x028

#define SPYRE_REG_CTRL			0x040	/* RW */
#define   SPYRE_CTRL_RESET		0x00000001 /* W1: full card reset */
#define SPYRE_REG_STATUS		0x044	/* RO */
#define   SPYRE_STATUS_READY		0x00000001 /* reset done, rings usable */
#define   SPYRE_STATUS_FATAL		0x00000002 /* uncorrectable error: reset */
#define SPYRE_REG_ERR_STATUS		0x048	/* RW1C: card-level errors */
#define   SPYRE_ERR_STATUS_MEM_UE	0x00000001 /* uncorrectable memory error */
#define   SPYRE_ERR_STATUS_RING		0x00000002 /* a ring hit a ring error */
#define   SPYRE_ERR_STATUS_BAD_ACCESS	0x00000004 /* bad register access */
#define   SPYRE_ERR_STATUS_MMU		0x00000008 /* a translation fault (1.10) */
#define SPYRE_REG_ERR_INFO		0x04c	/* RO: detail of the last error */
#define   SPYRE_ERR_INFO_SRC_MEM_UE	1	/* source (bits 31:24): memory UE, */
#define   SPYRE_ERR_INFO_SRC_RING	2	/* a ring error, */
#define   SPYRE_ERR_INFO_SRC_ACCESS	3	/* a bad register access, */
#define   SPYRE_ERR_INFO_SRC_MMU	4	/* a translation fault: detail = context */
/* ERR_INFO of @src on ring @ring: ring error code or register offset @detail */
#define   SPYRE_ERR_INFO(src, ring, detail) \
	((__u32)(src) << 24 | ((__u32)(ring) & 0xff) << 16 | ((__u32)(detail) & 0xffff))
#define SPYRE_REG_TIME_LO		0x050	/* RO: device time, ns; read LO first, */
#define SPYRE_REG_TIME_HI		0x054	/*     LO latches HI */
#define SPYRE_REG_SCRATCH		0x058	/* RW: free for software */
#define SPYRE_REG_IRQ_ERR_VECTOR	0x05c	/* RO: MSI-X vector of card errors */

/*
 * Fault injection (debug register), so software can test its recovery.
 * Writing arms a one-shot fault on one ring; reads return what is armed.
 */
#define SPYRE_REG_FAULT			0x060
#define   SPYRE_FAULT_KIND_MASK		0x000000ff
#define   SPYRE_FAULT_NONE		0
#define   SPYRE_FAULT_HANG		1 /* next command never completes */
#define   SPYRE_FAULT_DMA		2 /* next DMA fails: SPYRE_CMD_ERR_DMA */
#define   SPYRE_FAULT_CORRUPT_COMPLETION 3 /* next completion record is garbage */
#define   SPYRE_FAULT_MEM_UE		4 /* raise an uncorrectable memory error */
#define   SPYRE_FAULT_RING_SHIFT	8
#define   SPYRE_FAULT_RING_MASK		0x0000ff00

/*
 * Semaphore access (1.1). SEM_SELECT picks a semaphore; SEM_VALUE_LO/HI
 * read its value. Writing SEM_VALUE_LO latches a low word, writing
 * SEM_VALUE_HI then raises the semaphore to max(current, HI:LO) at the
 * current device time, as a SEM_SIGNAL would, but as a failed job's FENCE
 * would for SPYRE_DESC_F_ERR: software releases the waiters of jobs a ring
 * reset dropped, without needing ring space.
 */
#define SPYRE_REG_SEM_SELECT		0x064	/* RW: semaphore index */
#define SPYRE_REG_SEM_VALUE_LO		0x068	/* RW: read value / latch low word */
#define SPYRE_REG_SEM_VALUE_HI		0x06c	/* RW: read value / write signals */

/*
 * The card MMU (1.10, Documentation/spyre-card.rst "Card MMU"). Context 0
 * is the physical mode (no translation); contexts 1..NUM_CTX-1 translate
 * card virtual addresses through their page tables in device memory.
 * MMU_CTX_SELECT picks the context that ROOT, CTRL and STATUS access.
 * Writing ROOT_LO latches a low word; writing ROOT_HI sets the context's
 * root to HI:latched LO and drops its TLB entries.
 */
#define SPYRE_REG_MMU_NUM_CTX		0x080	/* RO: contexts, including 0 */
#define SPYRE_REG_MMU_CTX_SELECT	0x084	/* RW: context of ROOT/CTRL/STATUS */
#define SPYRE_REG_MMU_CTX_ROOT_LO	0x088	/* RW: root table | SPYRE_MMU_ROOT_VALID */
#define SPYRE_REG_MMU_CTX_ROOT_HI	0x08c	/* RW: high word; the write commits */
#define   SPYRE_MMU_ROOT_VALID		0x00000001
#define SPYRE_REG_MMU_CTX_CTRL		0x090	/* WO (reads 0) */
#define   SPYRE_MMU_CTRL_INVALIDATE	0x00000001 /* drop the context's TLB entries */
#define   SPYRE_MMU_CTRL_RESUME		0x00000002 /* restart its fault-stopped rings */
#define   SPYRE_MMU_CTRL_INVALIDATE_ALL	0x00000004 /* drop every TLB entry */
#define SPYRE_REG_MMU_CTX_STATUS	0x094	/* RO */
#define   SPYRE_MMU_CTX_FAULTED		0x00000001 /* stopped by a translation fault */
#define   SPYRE_MMU_CTX_ROOT_SET	0x00000002 /* has a valid root */
#define SPYRE_REG_MMU_FAULT_INFO	0x098	/* RO, W1C bit 31: the first fault */
#define   SPYRE_MMU_FAULT_VALID		0x80000000u
#define   SPYRE_MMU_FAULT_OVERFLOW	0x40000000u /* more faults came after it */
#define   SPYRE_MMU_FAULT_RING(v)	(((v) >> 16) & 0xff)
#define   SPYRE_MMU_FAULT_CTX(v)	(((v) >> 8) & 0xff)
#define   SPYRE_MMU_FAULT_REASON(v)	(((v) >> 4) & 0xf)
#define   SPYRE_MMU_FAULT_ACCESS(v)	((v) & 0xf)
#define SPYRE_REG_MMU_FAULT_ADDR_LO	0x09c	/* RO: the faulting card virtual address */
#define SPYRE_REG_MMU_FAULT_ADDR_HI	0x0a0
#define SPYRE_REG_MMU_TLB_MISSES	0x0a4	/* RO: table walks since reset (wraps) */

#define SPYRE_MMU_NUM_CTX		256
#define SPYRE_MMU_VA_BITS		48

/* Access kinds (SPYRE_MMU_FAULT_ACCESS). */
#define SPYRE_MMU_ACCESS_READ		0
#define SPYRE_MMU_ACCESS_WRITE		1
#define SPYRE_MMU_ACCESS_EXEC		2	/* program fetch */

/* Fault reasons (SPYRE_MMU_FAULT_REASON). */
#define SPYRE_MMU_FAULT_NOT_PRESENT	1 /* an entry on the walk is not VALID */
#define SPYRE_MMU_FAULT_PROTECTION	2 /* write to a page without WRITE, fetch without EXEC */
#define SPYRE_MMU_FAULT_KIND		3 /* host page where device memory is needed, or back */
#define SPYRE_MMU_FAULT_BAD_ENTRY	4 /* reserved bits, misaligned 2 MiB page, wild address */
#define SPYRE_MMU_FAULT_RANGE		5 /* address at or above 2^48 */
#define SPYRE_MMU_FAULT_NO_ROOT		6 /* the context has no valid root */

/*
 * Page-table entries: 4 levels of 512 64-bit entries, each table one 4 KiB
 * page of device memory; a 48-bit card virtual address indexes them with
 * bits 47:39, 38:30, 29:21 and 20:12. A level-1 entry (bits 29:21) with
 * SPYRE_PTE_LARGE maps a 2 MiB page. Only leaf entries may set WRITE, EXEC
 * or SYS; every bit not defined here must be zero.
 */
#define SPYRE_PTE_VALID			0x001ull
#define SPYRE_PTE_WRITE			0x002ull
#define SPYRE_PTE_EXEC			0x004ull
#define SPYRE_PTE_SYS			0x008ull /* host bus address, not device memory */
#define SPYRE_PTE_LARGE			0x080ull /* level 1: a 2 MiB page */
#define SPYRE_PTE_ADDR_MASK		0x000ffffffffff000ull /* bits 51:12 */
#define SPYRE_PTE_LEVELS		4
#define SPYRE_PTE_PER_TABLE		512

/* --- Per-ring registers: SPYRE_RING_REG(n, reg) ------------------------- */
#define SPYRE_RING_REGS_BASE		0x1000
#define SPYRE_RING_REGS_STRIDE		0x100
#define SPYRE_RING_REG(n, reg) \
	(SPYRE_RING_REGS_BASE + (n) * SPYRE_RING_REGS_STRIDE + (reg))

#define SPYRE_RING_BASE_LO		0x00	/* RW: ring DMA address, 64 B aligned */
#define SPYRE_RING_BASE_HI		0x04
#define SPYRE_RING_SIZE_LOG2		0x08	/* RW: entries = 1 << n, 4..16 */
#define SPYRE_RING_WB_LO		0x0c	/* RW: write-back DMA address, 64 B aligned */
#define SPYRE_RING_WB_HI		0x10
#define SPYRE_RING_CTRL			0x14	/* RW */
#define   SPYRE_RING_CTRL_ENABLE	0x00000001 /* latch config, start fetching */
#define   SPYRE_RING_CTRL_RESET		0x00000002 /* W1: stop, drop work, zero head/tail */
#define SPYRE_RING_STATUS		0x18	/* RO */
#define   SPYRE_RING_STATUS_ENABLED	0x00000001
#define   SPYRE_RING_STATUS_IDLE	0x00000002 /* head == tail, nothing running */
#define   SPYRE_RING_STATUS_ERROR	0x00000004 /* ring error: reset the ring */
#define   SPYRE_RING_STATUS_CTX_FAULT	0x00000008 /* its context is fault-stopped (1.10) */
#define SPYRE_RING_HEAD			0x1c	/* RO: free-running index of next fetch */
#define SPYRE_RING_TAIL			0x20	/* RW doorbell: free-running index past last one */
#define SPYRE_RING_ERROR		0x24	/* RO: SPYRE_RING_ERR_* */
#define SPYRE_RING_IRQ_VECTOR		0x28	/* RO: MSI-X vector of this ring */
/* RO (1.2): free-running count that moves while a command of the ring executes */
#define SPYRE_RING_PROGRESS		0x2c
/* RW (1.10), config (written while disabled): MMU context of the ring's commands */
#define SPYRE_RING_CTX			0x30
#define   SPYRE_RING_CTX_ID_MASK	0x000000ff
#define   SPYRE_RING_CTX_VA		0x00010000 /* BASE and WB are card VAs too */
/*
 * RO (1.14): compute- and DMA-engine time in ns of the jobs the ring has
 * finished (the sum of their completion records' compute_ns and dma_ns),
 * since the ring's last reset. Reading _LO latches _HI, as for TIME.
 */
#define SPYRE_RING_COMPUTE_NS_LO	0x34
#define SPYRE_RING_COMPUTE_NS_HI	0x38
#define SPYRE_RING_DMA_NS_LO		0x3c
#define SPYRE_RING_DMA_NS_HI		0x40
/* The first interface with the engine-time counters. */
#define SPYRE_HW_RING_BUSY_MINOR	14
/*
 * RO (1.15): the ring's fault record, encoded as SPYRE_REG_MMU_FAULT_INFO
 * (SPYRE_MMU_FAULT_RING/CTX/REASON/ACCESS; OVERFLOW: more faults came
 * after it). The card writes it in the same step as it stops the faulting
 * context, before the error interrupt, so a ring that reads CTX_FAULT
 * already has its record: that of its own command's fault, or, for a ring
 * whose SPYRE_RING_CTX is the faulting context, that of its sibling's.
 * The first fault wins; a RESUME of the context the record names, a ring
 * reset and a card reset clear it. Several processes faulting at once
 * each find their own address here, unlike in the card-wide latch.
 */
#define SPYRE_RING_FAULT_INFO		0x44
#define SPYRE_RING_FAULT_ADDR_LO	0x48	/* the faulting card VA */
#define SPYRE_RING_FAULT_ADDR_HI	0x4c
/* The first interface with the per-ring fault records. */
#define SPYRE_HW_RING_FAULT_MINOR	15

/* Ring errors: the ring stops and must be reset. */
#define SPYRE_RING_ERR_NONE		0
#define SPYRE_RING_ERR_BAD_CONFIG	1 /* bad base/size/write-back address */
#define SPYRE_RING_ERR_BAD_TAIL		2 /* tail moved backwards or past a full ring */
#define SPYRE_RING_ERR_FETCH		3 /* descriptor fetch DMA failed */
#define SPYRE_RING_ERR_WRITEBACK	4 /* completion write DMA failed */

#define SPYRE_RING_MIN_LOG2		4
#define SPYRE_RING_MAX_LOG2		16

/* --- Command descriptors (64 bytes each) -------------------------------- */
#define SPYRE_DESC_SIZE			64

enum spyre_hw_opcode {
	SPYRE_OP_NOP = 0,
	SPYRE_OP_DMA = 1,
	SPYRE_OP_LAUNCH = 2,
	SPYRE_OP_ARGS = 3,		/* argument slots of the preceding LAUNCH */
	SPYRE_OP_SEM_SIGNAL = 4,
	SPYRE_OP_SEM_WAIT = 5,
	SPYRE_OP_TIMESTAMP = 6,
	SPYRE_OP_FENCE = 7,
	SPYRE_OP_SET_CTX = 8,		/* MMU context of the rest of the job (1.10) */
	SPYRE_OP_WAIT_MEM = 9,		/* wait for a 64-bit value in memory (1.10) */
};

/* Descriptor flags (byte 1 of every descriptor). */
#define SPYRE_DESC_F_IRQ		0x01 /* FENCE: raise the ring's MSI-X vector */
#define SPYRE_DESC_F_DEVMEM		0x02 /* TIMESTAMP: target is device memory */
#define SPYRE_DESC_F_SEM		0x04 /* FENCE: also signal a semaphore (1.1) */
#define SPYRE_DESC_F_ERR		0x08 /* SEM_WAIT: fail if a failed job signalled (1.1) */
#define SPYRE_DESC_F_SCRUB		0x10 /* LAUNCH: zero every scratchpad first (1.5) */

/* DMA directions (spyre_hw_dma.dir). */
enum spyre_hw_dma_dir {
	SPYRE_DMA_H2D = 0,	/* host (scatter list) -> device memory */
	SPYRE_DMA_D2H = 1,	/* device memory -> host (scatter list) */
	SPYRE_DMA_D2D = 2,	/* device memory -> device memory */
	SPYRE_DMA_FILL = 3,	/* fill device memory with a 32-bit pattern */
	SPYRE_DMA_D2P = 4,	/* (1.13) device memory -> PCI bus range (a peer) */
	SPYRE_DMA_P2D = 5,	/* (1.13) PCI bus range (a peer) -> device memory */
};

/**
 * struct spyre_hw_sg - one entry of a host scatter list
 * @addr: DMA address of the segment
 * @len: length of the segment in bytes (non-zero)
 *
 * Host buffers are not physically contiguous: the driver writes one scatter
 * list per host buffer and DMA descriptors point at it, so a transfer of
 * any size is one descriptor.
 */
struct spyre_hw_sg {
	__le64 addr;
	__le64 len;
};

/**
 * struct spyre_hw_dma - SPYRE_OP_DMA descriptor
 * @opcode: SPYRE_OP_DMA
 * @flags: zero
 * @dir: enum spyre_hw_dma_dir
 * @fill: pattern for SPYRE_DMA_FILL (little endian, repeated)
 * @len: bytes to move; FILL needs a multiple of 4
 * @dev_addr: device memory address: destination (H2D, D2D, FILL, P2D) or
 *	source (D2H, D2P)
 * @dev_src: D2D source device address
 * @sg_addr: DMA address of the host scatter list (H2D, D2H); D2P/P2D: the
 *	bus address of the contiguous peer range (another card's BAR2)
 * @sg_count: entries in the scatter list
 * @rsvd: zero
 * @host_off: byte offset into the buffer the scatter list describes
 * @rsvd2: zero
 */
struct spyre_hw_dma {
	__u8 opcode;
	__u8 flags;
	__le16 dir;
	__le32 fill;
	__le64 len;
	__le64 dev_addr;
	__le64 dev_src;
	__le64 sg_addr;
	__le32 sg_count;
	__le32 rsvd;
	__le64 host_off;
	__le64 rsvd2;
};

/**
 * struct spyre_hw_launch - SPYRE_OP_LAUNCH descriptor
 * @opcode: SPYRE_OP_LAUNCH
 * @flags: SPYRE_DESC_F_SCRUB (interface 1.5) to zero every core's
 *	scratchpad before the program starts (a driver sets it when the compute
 *	engine passes from one client to another), else zero
 * @nargs: argument slots; DIV_ROUND_UP(nargs, 3) SPYRE_OP_ARGS follow
 * @rsvd: zero
 * @prog_addr: device address of the program (Documentation/spyre-card.rst)
 * @prog_len: bytes of the program buffer; the card never reads past it
 * @ws_addr: device address of the workspace (intermediates)
 * @ws_len: bytes of the workspace, 0 for none
 * @rsvd2: zero
 *
 * The program may only touch its argument slots and its workspace: every
 * access outside them fails the job with SPYRE_CMD_ERR_BOUNDS.
 */
struct spyre_hw_launch {
	__u8 opcode;
	__u8 flags;
	__le16 nargs;
	__le32 rsvd;
	__le64 prog_addr;
	__le64 prog_len;
	__le64 ws_addr;
	__le64 ws_len;
	__le64 rsvd2[3];
};

#define SPYRE_MAX_ARGS			64 /* interface 1.7 */
#define SPYRE_MAX_ARGS_V1_6		16 /* cards before 1.7 */
#define SPYRE_ARGS_PER_DESC		3

/**
 * struct spyre_hw_args - SPYRE_OP_ARGS descriptor: up to three slots
 * @opcode: SPYRE_OP_ARGS
 * @flags: zero
 * @count: slots used in this descriptor (1..3)
 * @rsvd: zero
 * @slot: device address and length of each argument slot
 * @rsvd2: zero
 */
struct spyre_hw_args {
	__u8 opcode;
	__u8 flags;
	__le16 count;
	__le32 rsvd;
	struct {
		__le64 addr;
		__le64 len;
	} slot[SPYRE_ARGS_PER_DESC];
	__le64 rsvd2;
};

/**
 * struct spyre_hw_sem - SPYRE_OP_SEM_SIGNAL / SPYRE_OP_SEM_WAIT descriptor
 * @opcode: SPYRE_OP_SEM_SIGNAL or SPYRE_OP_SEM_WAIT
 * @flags: zero; a WAIT may set SPYRE_DESC_F_ERR: if the value it waits for
 *         was reached by the FENCE of a failed job (or by software through
 *         SPYRE_REG_SEM_VALUE_HI), the WAIT fails with SPYRE_CMD_ERR_DEP and
 *         the rest of its job is skipped
 * @sem: semaphore index, below SPYRE_REG_NUM_SEMS
 * @rsvd: zero
 * @value: SIGNAL: set the semaphore to max(current, value);
 *         WAIT: block this ring until the semaphore is >= value
 * @rsvd2: zero
 */
struct spyre_hw_sem {
	__u8 opcode;
	__u8 flags;
	__le16 sem;
	__le32 rsvd;
	__le64 value;
	__le64 rsvd2[6];
};

/**
 * struct spyre_hw_timestamp - SPYRE_OP_TIMESTAMP descriptor
 * @opcode: SPYRE_OP_TIMESTAMP
 * @flags: SPYRE_DESC_F_DEVMEM when @addr is a device address
 * @rsvd: zero
 * @rsvd1: zero
 * @addr: device address, or DMA address of a host scatter list
 * @sg_count: scatter list entries (host target)
 * @rsvd2: zero
 * @host_off: byte offset in the host buffer
 * @rsvd3: zero
 *
 * Writes the device time (u64 ns) at which all preceding commands of the
 * ring have completed.
 */
struct spyre_hw_timestamp {
	__u8 opcode;
	__u8 flags;
	__le16 rsvd;
	__le32 rsvd1;
	__le64 addr;
	__le32 sg_count;
	__le32 rsvd2;
	__le64 host_off;
	__le64 rsvd3[4];
};

/**
 * struct spyre_hw_fence - SPYRE_OP_FENCE descriptor: the end of a job
 * @opcode: SPYRE_OP_FENCE
 * @flags: SPYRE_DESC_F_IRQ to interrupt, SPYRE_DESC_F_SEM to signal @sem
 * @sem: with SPYRE_DESC_F_SEM: semaphore to raise to @sem_value; else zero
 * @rsvd1: zero
 * @seqno: job sequence number, written to the completion record and to
 *         spyre_hw_ring_wb.completed_seqno
 * @record_addr: DMA address of the job's struct spyre_hw_completion
 * @sem_value: with SPYRE_DESC_F_SEM: value for @sem; else zero
 * @rsvd2: zero
 *
 * A failed command makes the ring skip to the next FENCE; that FENCE then
 * reports the failure in its completion record. The semaphore is signalled
 * either way, so jobs on other rings waiting for this one are released
 * even when it failed (they learn of the failure from its record).
 */
struct spyre_hw_fence {
	__u8 opcode;
	__u8 flags;
	__le16 sem;
	__le32 rsvd1;
	__le64 seqno;
	__le64 record_addr;
	__le64 sem_value;
	__le64 rsvd2[4];
};

/**
 * struct spyre_hw_set_ctx - SPYRE_OP_SET_CTX descriptor (interface 1.10)
 * @opcode: SPYRE_OP_SET_CTX
 * @flags: zero
 * @ctx: MMU context of the job's following commands (FENCE excepted), below
 *       SPYRE_MMU_NUM_CTX
 * @rsvd: zero
 * @rsvd2: zero
 *
 * Privileged: only a ring whose SPYRE_RING_CTX is 0 (a ring the driver
 * writes) may switch contexts, so jobs of several processes can share a
 * kernel ring; anywhere else it fails with SPYRE_CMD_ERR_INVALID. The
 * FENCE ends the job and the ring's own context applies again.
 */
struct spyre_hw_set_ctx {
	__u8 opcode;
	__u8 flags;
	__le16 ctx;
	__le32 rsvd;
	__le64 rsvd2[7];
};

/**
 * struct spyre_hw_wait_mem - SPYRE_OP_WAIT_MEM descriptor (interface 1.10)
 * @opcode: SPYRE_OP_WAIT_MEM
 * @flags: zero
 * @rsvd: zero
 * @rsvd1: zero
 * @addr: 8-byte aligned address of a little-endian 64-bit counter: a card
 *        VA in an MMU context, a device memory address in context 0
 * @value: block this ring until the counter is >= @value (unsigned)
 * @rsvd2: zero
 *
 * The waits of queues that may not use the card-wide semaphores: a
 * process waits on counters in its own address space, e.g. another of its
 * queues' write-back record.
 */
struct spyre_hw_wait_mem {
	__u8 opcode;
	__u8 flags;
	__le16 rsvd;
	__le32 rsvd1;
	__le64 addr;
	__le64 value;
	__le64 rsvd2[5];
};

/**
 * union spyre_hw_desc - one 64-byte descriptor, of the type its opcode says
 * @hdr: the two bytes every descriptor starts with
 * @hdr.opcode: enum spyre_hw_opcode
 * @hdr.flags: SPYRE_DESC_F_* the opcode allows, else zero
 * @dma: SPYRE_OP_DMA
 * @launch: SPYRE_OP_LAUNCH
 * @args: SPYRE_OP_ARGS
 * @sem: SPYRE_OP_SEM_SIGNAL, SPYRE_OP_SEM_WAIT
 * @ts: SPYRE_OP_TIMESTAMP
 * @fence: SPYRE_OP_FENCE
 * @set_ctx: SPYRE_OP_SET_CTX
 * @wait_mem: SPYRE_OP_WAIT_MEM
 * @raw: the bytes as the ring holds them (a NOP is all zero)
 */
union spyre_hw_desc {
	struct {
		__u8 opcode;
		__u8 flags;
	} hdr;
	struct spyre_hw_dma dma;
	struct spyre_hw_launch launch;
	struct spyre_hw_args args;
	struct spyre_hw_sem sem;
	struct spyre_hw_timestamp ts;
	struct spyre_hw_fence fence;
	struct spyre_hw_set_ctx set_ctx;
	struct spyre_hw_wait_mem wait_mem;
	__u8 raw[SPYRE_DESC_SIZE];
};

/* Command errors (spyre_hw_completion.status). */
#define SPYRE_CMD_OK			0
#define SPYRE_CMD_ERR_INVALID		1 /* unknown opcode, bad field, non-zero rsvd */
#define SPYRE_CMD_ERR_BOUNDS		2 /* access outside device memory or a slot */
#define SPYRE_CMD_ERR_DMA		3 /* host memory access failed */
#define SPYRE_CMD_ERR_PROGRAM		4 /* malformed program */
#define SPYRE_CMD_ERR_DEADLOCK		5 /* program units wait on tokens never set */
#define SPYRE_CMD_ERR_MEM_UE		6 /* uncorrectable memory error */
#define SPYRE_CMD_ERR_DEP		7 /* SEM_WAIT with F_ERR: the awaited job failed (1.1) */
#define SPYRE_CMD_ERR_ARITH		8 /* integer division by zero in a program (1.9) */
#define SPYRE_CMD_ERR_PAGE_FAULT	9 /* a card virtual address did not translate (1.10) */

/**
 * struct spyre_hw_completion - per-job completion record, written by FENCE
 * @seqno: the FENCE's seqno
 * @status: SPYRE_CMD_OK or the SPYRE_CMD_ERR_* of the first failed command
 * @error_index: ring index (free-running) of the failed descriptor
 * @start_ns: device time the job's first command started
 * @end_ns: device time the job's last command completed
 * @compute_ns: modelled compute-engine time the job used
 * @dma_ns: modelled DMA-engine time the job used
 * @fault_insn: when a LAUNCH's program failed: index of the failing
 *              instruction; else SPYRE_FAULT_INSN_NONE (interface 1.6)
 * @fault_core: core that executed it (with @fault_insn; else zero)
 * @fault_space: SPYRE_FAULT_SPACE_* of @fault_addr
 * @fault_addr: the address the failing access started at, when known
 *
 * Before 1.6 the last 16 bytes were reserved and written as zero.
 */
struct spyre_hw_completion {
	__le64 seqno;
	__le32 status;
	__le32 error_index;
	__le64 start_ns;
	__le64 end_ns;
	__le64 compute_ns;
	__le64 dma_ns;
	__le32 fault_insn;
	__le16 fault_core;
	__le16 fault_space;
	__le64 fault_addr;
};

#define SPYRE_FAULT_INSN_NONE		0xffffffffu
#define SPYRE_FAULT_SPACE_NONE		0 /* @fault_addr unknown (zero) */
#define SPYRE_FAULT_SPACE_SCRATCHPAD	1 /* offset in @fault_core's scratchpad */
#define SPYRE_FAULT_SPACE_DEVMEM	2 /* device memory address */
/* (1.10) @fault_addr is a card virtual address whose read / write / fetch faulted */
#define SPYRE_FAULT_SPACE_VA_READ	3
#define SPYRE_FAULT_SPACE_VA_WRITE	4
#define SPYRE_FAULT_SPACE_VA_EXEC	5

/**
 * struct spyre_hw_ring_wb - per-ring write-back record
 * @completed_seqno: seqno of the last FENCE reached, written after its
 *                   completion record
 * @head: free-running index of the next descriptor the card fetches
 * @rsvd: zero
 */
struct spyre_hw_ring_wb {
	__le64 completed_seqno;
	__le32 head;
	__le32 rsvd[13];
};

static_assert(sizeof(union spyre_hw_desc) == SPYRE_DESC_SIZE, "descriptor size");
static_assert(sizeof(struct spyre_hw_dma) == SPYRE_DESC_SIZE, "DMA descriptor");
static_assert(sizeof(struct spyre_hw_launch) == SPYRE_DESC_SIZE, "LAUNCH descriptor");
static_assert(sizeof(struct spyre_hw_args) == SPYRE_DESC_SIZE, "ARGS descriptor");
static_assert(sizeof(struct spyre_hw_sem) == SPYRE_DESC_SIZE, "SEM descriptor");
static_assert(sizeof(struct spyre_hw_timestamp) == SPYRE_DESC_SIZE, "TIMESTAMP descriptor");
static_assert(sizeof(struct spyre_hw_fence) == SPYRE_DESC_SIZE, "FENCE descriptor");
static_assert(sizeof(struct spyre_hw_set_ctx) == SPYRE_DESC_SIZE, "SET_CTX descriptor");
static_assert(sizeof(struct spyre_hw_wait_mem) == SPYRE_DESC_SIZE, "WAIT_MEM descriptor");
static_assert(sizeof(struct spyre_hw_completion) == 64, "completion record");
static_assert(sizeof(struct spyre_hw_ring_wb) == 64, "write-back record");

#endif /* SPYRE_HW_H */
