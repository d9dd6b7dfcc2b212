/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Userspace interface of the Spyre DRM accel driver (/dev/accel/accelN).
 *
 * Copyright (C) 2026 The Spyre stack authors
 */
#ifndef _UAPI_SPYRE_ACCEL_H_
#define _UAPI_SPYRE_ACCEL_H_

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

/**
 * DOC: conventions
 *
 * Rules shared by every ioctl:
 *
 * - Structures only grow at their end: the DRM core zero-extends a
 *   shorter structure from older userspace and truncates output for it.
 * - Every pad, reserved and flags field must be zero unless a flag is
 *   defined for it; anything else fails with -EINVAL.
 * - Memory operands are a GEM handle of the calling file plus an offset
 *   and a size inside that buffer object (BO); the driver checks each
 *   range and turns it into card addresses itself. A handle that is not
 *   open in the calling file fails with -ENOENT; a range that does not lie
 *   inside its BO, including one whose end overflows, fails with -EINVAL.
 * - Arrays passed by pointer carry a count and a stride (the size of one
 *   element as userspace knows it), so elements can grow too: a stride
 *   smaller than the first version of the element, or above 4096, fails
 *   with -EINVAL, and bytes past the size the kernel knows must be zero
 *   (else -E2BIG).
 * - A SUBMIT is checked completely before anything is queued: when it
 *   fails, nothing happened.
 */

#define DRM_SPYRE_GET_PARAM		0x00
#define DRM_SPYRE_BO_CREATE		0x01
#define DRM_SPYRE_BO_INFO		0x02
#define DRM_SPYRE_BO_WAIT		0x03
#define DRM_SPYRE_QUEUE_CREATE		0x04
#define DRM_SPYRE_QUEUE_DESTROY		0x05
#define DRM_SPYRE_SUBMIT		0x06
#define DRM_SPYRE_QUEUE_ERROR		0x07
#define DRM_SPYRE_BO_USERPTR		0x08
#define DRM_SPYRE_VM_BIND		0x09
#define DRM_SPYRE_UQ_CREATE		0x0a
#define DRM_SPYRE_UQ_DESTROY		0x0b
#define DRM_SPYRE_UQ_WAIT		0x0c

#define DRM_IOCTL_SPYRE_GET_PARAM \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_SPYRE_GET_PARAM, struct drm_spyre_get_param)
#define DRM_IOCTL_SPYRE_BO_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_SPYRE_BO_CREATE, struct drm_spyre_bo_create)
#define DRM_IOCTL_SPYRE_BO_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_SPYRE_BO_INFO, struct drm_spyre_bo_info)
#define DRM_IOCTL_SPYRE_BO_WAIT \
	DRM_IOW(DRM_COMMAND_BASE + DRM_SPYRE_BO_WAIT, struct drm_spyre_bo_wait)
#define DRM_IOCTL_SPYRE_QUEUE_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_SPYRE_QUEUE_CREATE, struct drm_spyre_queue_create)
#define DRM_IOCTL_SPYRE_QUEUE_DESTROY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_SPYRE_QUEUE_DESTROY, struct drm_spyre_queue_destroy)
#define DRM_IOCTL_SPYRE_SUBMIT \
	DRM_IOW(DRM_COMMAND_BASE + DRM_SPYRE_SUBMIT, struct drm_spyre_submit)
#define DRM_IOCTL_SPYRE_QUEUE_ERROR \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_SPYRE_QUEUE_ERROR, struct drm_spyre_queue_error)
#define DRM_IOCTL_SPYRE_BO_USERPTR \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_SPYRE_BO_USERPTR, struct drm_spyre_bo_userptr)
#define DRM_IOCTL_SPYRE_VM_BIND \
	DRM_IOW(DRM_COMMAND_BASE + DRM_SPYRE_VM_BIND, struct drm_spyre_vm_bind)
#define DRM_IOCTL_SPYRE_UQ_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_SPYRE_UQ_CREATE, struct drm_spyre_uq_create)
#define DRM_IOCTL_SPYRE_UQ_DESTROY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_SPYRE_UQ_DESTROY, struct drm_spyre_uq_destroy)
#define DRM_IOCTL_SPYRE_UQ_WAIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_SPYRE_UQ_WAIT, struct drm_spyre_uq_wait)

/**
 * enum drm_spyre_param - what DRM_IOCTL_SPYRE_GET_PARAM can report
 * @DRM_SPYRE_PARAM_HW_VERSION: card interface version, major << 16 | minor
 * @DRM_SPYRE_PARAM_NUM_CORES: AI cores on the card
 * @DRM_SPYRE_PARAM_SCRATCHPAD_SIZE: scratchpad bytes per core
 * @DRM_SPYRE_PARAM_MEM_SIZE: device memory bytes the driver manages
 * @DRM_SPYRE_PARAM_MEM_FREE: device memory bytes not allocated to any BO
 * @DRM_SPYRE_PARAM_CLOCK_MHZ: modelled core clock in MHz
 * @DRM_SPYRE_PARAM_NUM_RINGS: hardware command rings in use
 * @DRM_SPYRE_PARAM_COMPUTE_RINGS: rings serving DRM_SPYRE_ENGINE_COMPUTE
 * @DRM_SPYRE_PARAM_DMA_RINGS: rings serving DRM_SPYRE_ENGINE_DMA
 * @DRM_SPYRE_PARAM_RING_ENTRIES: descriptors per ring
 * @DRM_SPYRE_PARAM_PCI_VENDOR: PCI vendor ID
 * @DRM_SPYRE_PARAM_PCI_DEVICE: PCI device ID
 * @DRM_SPYRE_PARAM_PCI_REVISION: PCI revision ID
 * @DRM_SPYRE_PARAM_NUM_SEMS: cross-ring hardware semaphores
 * @DRM_SPYRE_PARAM_MAX_CMDS: most commands one DRM_IOCTL_SPYRE_SUBMIT takes;
 *	at most 512, less when the rings are small (module parameter
 *	ring_order), so that any submission fits in a ring; a launch of more
 *	than 16 argument slots takes the ring space of several commands
 *	(-E2BIG when the submission's launches do not fit)
 * @DRM_SPYRE_PARAM_MAX_SYNCS: most in-syncs (and, separately, out-syncs)
 *	one DRM_IOCTL_SPYRE_SUBMIT takes
 * @DRM_SPYRE_PARAM_MAX_ARGS: most argument slots of one launch (64 from card
 *	interface 1.7, 16 before)
 * @DRM_SPYRE_PARAM_MAX_QUEUES: most queues one open file may hold
 * @DRM_SPYRE_PARAM_MAX_HOST_BO_SIZE: largest host BO in bytes
 * @DRM_SPYRE_PARAM_DEVICE_TIME_NS: current device time in ns, the clock of
 *	DRM_SPYRE_CMD_TIMESTAMP
 * @DRM_SPYRE_PARAM_RESET_COUNT: ring and card resets since the driver bound
 * @DRM_SPYRE_PARAM_USER_QUEUES: user-mode queues the card can hold at once
 *	(DRM_IOCTL_SPYRE_UQ_CREATE, driver 1.4); 0 when it offers none
 */
enum drm_spyre_param {
	DRM_SPYRE_PARAM_HW_VERSION = 0,
	DRM_SPYRE_PARAM_NUM_CORES = 1,
	DRM_SPYRE_PARAM_SCRATCHPAD_SIZE = 2,
	DRM_SPYRE_PARAM_MEM_SIZE = 3,
	DRM_SPYRE_PARAM_MEM_FREE = 4,
	DRM_SPYRE_PARAM_CLOCK_MHZ = 5,
	DRM_SPYRE_PARAM_NUM_RINGS = 6,
	DRM_SPYRE_PARAM_COMPUTE_RINGS = 7,
	DRM_SPYRE_PARAM_DMA_RINGS = 8,
	DRM_SPYRE_PARAM_RING_ENTRIES = 9,
	DRM_SPYRE_PARAM_PCI_VENDOR = 10,
	DRM_SPYRE_PARAM_PCI_DEVICE = 11,
	DRM_SPYRE_PARAM_PCI_REVISION = 12,
	DRM_SPYRE_PARAM_NUM_SEMS = 13,
	DRM_SPYRE_PARAM_MAX_CMDS = 14,
	DRM_SPYRE_PARAM_MAX_SYNCS = 15,
	DRM_SPYRE_PARAM_MAX_ARGS = 16,
	DRM_SPYRE_PARAM_MAX_QUEUES = 17,
	DRM_SPYRE_PARAM_MAX_HOST_BO_SIZE = 18,
	DRM_SPYRE_PARAM_DEVICE_TIME_NS = 19,
	DRM_SPYRE_PARAM_RESET_COUNT = 20,
	DRM_SPYRE_PARAM_USER_QUEUES = 21,
};

/**
 * struct drm_spyre_get_param - argument of DRM_IOCTL_SPYRE_GET_PARAM
 * @param: in, one of enum drm_spyre_param; unknown values fail with -EINVAL
 * @pad: must be zero
 * @value: out, the parameter's value
 */
struct drm_spyre_get_param {
	__u32 param;
	__u32 pad;
	__u64 value;
};

/**
 * enum drm_spyre_placement - where a BO's memory lives
 * @DRM_SPYRE_PLACEMENT_DEVICE: card memory (LPDDR5), one contiguous range
 *	of device addresses; compute operands must be here. Not mappable by
 *	the CPU: move data with DRM_SPYRE_CMD_COPY. A new device BO reads as
 *	zeroes.
 * @DRM_SPYRE_PLACEMENT_HOST: system memory pinned for the card's DMA,
 *	mappable with mmap() at the offset DRM_IOCTL_SPYRE_BO_INFO returns,
 *	exportable and importable with PRIME. An imported dma-buf is a host
 *	BO too: one larger than DRM_SPYRE_PARAM_MAX_HOST_BO_SIZE fails the
 *	import with -E2BIG.
 * @DRM_SPYRE_PLACEMENT_PEER: (driver 1.5) another card's device BO,
 *	imported through PRIME: only DRM_IOCTL_SPYRE_BO_INFO reports it (a
 *	create with it fails with -EINVAL). See DOC: peer DMA.
 */
enum drm_spyre_placement {
	DRM_SPYRE_PLACEMENT_DEVICE = 0,
	DRM_SPYRE_PLACEMENT_HOST = 1,
	DRM_SPYRE_PLACEMENT_PEER = 2,
};

/**
 * DOC: peer DMA
 *
 * A device BO can be exported with PRIME (DRM_IOCTL_PRIME_HANDLE_TO_FD,
 * driver 1.5; before, -EOPNOTSUPP) for other Spyre cards only: any other
 * importer fails to attach with -EOPNOTSUPP. Imported into the card that
 * owns it, the fd gives back that BO. Imported into another card of the
 * machine, it becomes a BO of placement DRM_SPYRE_PLACEMENT_PEER on the
 * importing card: a DRM_SPYRE_CMD_COPY between it and a device BO of the
 * importing card moves the bytes card to card (the importing card's DMA
 * engine writes or reads the exporter's BAR2: PCIe peer-to-peer, card
 * interface 1.13), without host memory. A peer BO is nothing else: FILL,
 * TIMESTAMP, LAUNCH operands, VM_BIND, host or peer as the other side of
 * a copy fail with -EINVAL. The import fails with -EOPNOTSUPP when the
 * importing card has no peer DMA (card interface below 1.13), -EXDEV
 * when the two cards sit under different PCI host bridges, -ERANGE when
 * the BO lies beyond the exporter's BAR2 aperture. When the exporting
 * card goes away its removal revokes the peer BO: a copy through it, and a
 * new import of the exporter's dma-buf, fail with -ENODEV, and so does a
 * job naming it that had not reached its ring; the removal waits (at most
 * twice the job timeout) for those already running. The peer BO keeps the
 * exporter's BO alive and shares its reservation object: DRM_IOCTL_SPYRE_
 * BO_WAIT on either card's handle waits for both cards' jobs on it. No
 * other ordering is implied: a process orders the two cards' work itself
 * (wait for the exporter's writes before copying them, and the other way).
 */

/**
 * struct drm_spyre_bo_create - argument of DRM_IOCTL_SPYRE_BO_CREATE
 * @size: in, bytes; rounded up to the page size. 0 fails with -EINVAL;
 *	more than the placement can ever hold (DRM_SPYRE_PARAM_MEM_SIZE,
 *	DRM_SPYRE_PARAM_MAX_HOST_BO_SIZE) with -E2BIG; more than is free now
 *	with -ENOMEM. A host BO pins its pages: they count in the creating
 *	user's locked memory, and beyond RLIMIT_MEMLOCK (without
 *	CAP_IPC_LOCK) the create fails with -ENOMEM. A device BO beyond the
 *	file's device memory quota (module parameter file_mem_quota_mb, off
 *	by default) fails with -EDQUOT.
 * @placement: in, enum drm_spyre_placement
 * @flags: in, must be zero
 * @handle: out, GEM handle of the new BO, released with DRM_IOCTL_GEM_CLOSE
 * @pad: must be zero
 */
struct drm_spyre_bo_create {
	__u64 size;
	__u32 placement;
	__u32 flags;
	__u32 handle;
	__u32 pad;
};

/**
 * struct drm_spyre_bo_userptr - argument of DRM_IOCTL_SPYRE_BO_USERPTR
 * @user_ptr: in, start of the caller's memory, page-aligned
 * @size: in, bytes, a non-zero multiple of the page size (else -EINVAL);
 *	more than DRM_SPYRE_PARAM_MAX_HOST_BO_SIZE fails with -E2BIG
 * @flags: in, must be zero
 * @handle: out, GEM handle of the new host BO
 * @pad: must be zero
 * @pad2: must be zero
 *
 * Makes a host BO of memory the process already has (driver 1.2), like
 * cudaHostRegister: DMA commands use it as any host BO. The pages are
 * pinned until the BO is freed and count in the caller's locked memory
 * (RLIMIT_MEMLOCK, as for DRM_IOCTL_SPYRE_BO_CREATE: -ENOMEM beyond it).
 * The range must be writable memory that can be pinned long-term
 * (anonymous memory, not a DAX or read-only mapping), else -EFAULT. The
 * driver offers no mmap of such a BO (the process has the memory), and it
 * cannot be exported through PRIME (-EOPNOTSUPP). Unmapping the range
 * while the BO exists does not free the pages the card may still use.
 */
struct drm_spyre_bo_userptr {
	__u64 user_ptr;
	__u64 size;
	__u32 flags;
	__u32 handle;
	__u32 pad;
	__u32 pad2;
};

/* drm_spyre_bo_info.bo_flags */
#define DRM_SPYRE_BO_MAPPABLE		0x1 /* mmap_offset is valid */
#define DRM_SPYRE_BO_IMPORTED		0x2 /* came in through PRIME */
#define DRM_SPYRE_BO_USER_MEMORY	0x4 /* the caller's memory (DRM_IOCTL_SPYRE_BO_USERPTR) */

/**
 * struct drm_spyre_bo_info - argument of DRM_IOCTL_SPYRE_BO_INFO
 * @handle: in, GEM handle
 * @flags: in, must be zero
 * @size: out, bytes
 * @placement: out, enum drm_spyre_placement
 * @bo_flags: out, DRM_SPYRE_BO_* bits
 * @mmap_offset: out, offset to pass to mmap() on the device file when
 *	DRM_SPYRE_BO_MAPPABLE is set, else zero
 */
struct drm_spyre_bo_info {
	__u32 handle;
	__u32 flags;
	__u64 size;
	__u32 placement;
	__u32 bo_flags;
	__u64 mmap_offset;
};

/**
 * struct drm_spyre_bo_wait - argument of DRM_IOCTL_SPYRE_BO_WAIT
 * @handle: in, GEM handle
 * @flags: in, must be zero
 * @timeout_ns: in, absolute CLOCK_MONOTONIC time to give up at; a time in
 *	the past only polls
 *
 * Waits until every submitted job that uses the BO has finished (whatever
 * its outcome). Returns 0 when idle, -ETIME when the timeout passed first,
 * -ERESTARTSYS/-EINTR on a signal.
 */
struct drm_spyre_bo_wait {
	__u32 handle;
	__u32 flags;
	__s64 timeout_ns;
};

/**
 * enum drm_spyre_engine - the engine a queue feeds
 * @DRM_SPYRE_ENGINE_COMPUTE: the compute engine; every command type.
 *	All compute queues of all processes share it in FIFO order.
 * @DRM_SPYRE_ENGINE_DMA: a copy engine that runs concurrently with compute;
 *	DRM_SPYRE_CMD_NOP, _COPY, _FILL and _TIMESTAMP only (a launch on a DMA
 *	queue fails the submit with -EINVAL).
 */
enum drm_spyre_engine {
	DRM_SPYRE_ENGINE_COMPUTE = 0,
	DRM_SPYRE_ENGINE_DMA = 1,
};

/**
 * enum drm_spyre_priority - scheduling priority of a queue
 * @DRM_SPYRE_PRIORITY_LOW: below normal
 * @DRM_SPYRE_PRIORITY_NORMAL: the default
 * @DRM_SPYRE_PRIORITY_HIGH: ahead of normal; needs CAP_SYS_NICE (-EACCES)
 */
enum drm_spyre_priority {
	DRM_SPYRE_PRIORITY_LOW = 0,
	DRM_SPYRE_PRIORITY_NORMAL = 1,
	DRM_SPYRE_PRIORITY_HIGH = 2,
};

/**
 * struct drm_spyre_queue_create - argument of DRM_IOCTL_SPYRE_QUEUE_CREATE
 * @engine: in, enum drm_spyre_engine
 * @priority: in, enum drm_spyre_priority
 * @flags: in, must be zero
 * @queue_id: out, non-zero ID of the queue, private to the open file
 *
 * A queue is an ordered stream: its jobs start in submission order, each
 * after the previous one finished. Fails with -ENOSPC when the file already
 * holds DRM_SPYRE_PARAM_MAX_QUEUES queues.
 */
struct drm_spyre_queue_create {
	__u32 engine;
	__u32 priority;
	__u32 flags;
	__u32 queue_id;
};

#define DRM_SPYRE_QUEUE_ERROR_CLEAR	0x1 /* forget the record once read */

#define DRM_SPYRE_FAULT_LOCATED		0x1 /* @fault_insn and @fault_core are valid */
#define DRM_SPYRE_FAULT_ADDR_SCRATCHPAD	0x2 /* @fault_addr: offset in the core's scratchpad */
#define DRM_SPYRE_FAULT_ADDR_DEVICE	0x4 /* @fault_addr: device memory address */
#define DRM_SPYRE_FAULT_ADDR_VIRTUAL	0x8 /* @fault_addr: card VA that did not translate */

/**
 * struct drm_spyre_queue_error - argument of DRM_IOCTL_SPYRE_QUEUE_ERROR
 * @queue_id: in, ID from DRM_IOCTL_SPYRE_QUEUE_CREATE (-ENOENT if unknown)
 * @flags: in, 0 or DRM_SPYRE_QUEUE_ERROR_CLEAR (other bits: -EINVAL)
 * @error: out, the negative errno of the queue's first failed job since the
 *	record was last cleared (the error its fence carries); 0 if none failed
 * @fault_flags: out, DRM_SPYRE_FAULT_* saying which fault fields are valid
 * @job: out, the failed job's number on the queue (1 for the queue's first
 *	successful DRM_IOCTL_SPYRE_SUBMIT)
 * @point: out, the point of the failed job's first out-sync (0 when it had
 *	none or that out-sync was a binary syncobj)
 * @failed: out, jobs of the queue that failed since the record was cleared
 * @fault_insn: out, index of the instruction a failed launch stopped at
 * @fault_core: out, the core that executed it
 * @fault_addr: out, the address the failing access started at
 *
 * The record of the queue's first failure is kept until a call with
 * DRM_SPYRE_QUEUE_ERROR_CLEAR, so a failure is never lost to later jobs
 * that succeed (a timeline syncobj folds signalled points together, so the
 * error of an old point cannot be read back from it). It is written
 * before the failed job's fence signals: a caller that saw the fence
 * signal finds the record. Where the card reports it (interface 1.6), the
 * record says where a failed launch stopped.
 */
struct drm_spyre_queue_error {
	__u32 queue_id;
	__u32 flags;
	__s32 error;
	__u32 fault_flags;
	__u64 job;
	__u64 point;
	__u64 failed;
	__u32 fault_insn;
	__u32 fault_core;
	__u64 fault_addr;
};

/**
 * struct drm_spyre_queue_destroy - argument of DRM_IOCTL_SPYRE_QUEUE_DESTROY
 * @queue_id: in, ID from DRM_IOCTL_SPYRE_QUEUE_CREATE (-ENOENT if unknown)
 * @pad: must be zero
 *
 * Jobs already submitted still run to completion (their fences signal);
 * the ID is invalid at once.
 */
struct drm_spyre_queue_destroy {
	__u32 queue_id;
	__u32 pad;
};

/**
 * enum drm_spyre_cmd_type - command types of DRM_IOCTL_SPYRE_SUBMIT
 * @DRM_SPYRE_CMD_NOP: does nothing (measures submission overhead)
 * @DRM_SPYRE_CMD_COPY: &struct drm_spyre_cmd_copy
 * @DRM_SPYRE_CMD_FILL: &struct drm_spyre_cmd_fill
 * @DRM_SPYRE_CMD_LAUNCH: &struct drm_spyre_cmd_launch
 * @DRM_SPYRE_CMD_TIMESTAMP: &struct drm_spyre_cmd_timestamp
 */
enum drm_spyre_cmd_type {
	DRM_SPYRE_CMD_NOP = 0,
	DRM_SPYRE_CMD_COPY = 1,
	DRM_SPYRE_CMD_FILL = 2,
	DRM_SPYRE_CMD_LAUNCH = 3,
	DRM_SPYRE_CMD_TIMESTAMP = 4,
};

/**
 * struct drm_spyre_cmd_copy - copy bytes from one BO to another
 * @src_handle: source BO
 * @dst_handle: destination BO
 * @src_offset: byte offset in the source
 * @dst_offset: byte offset in the destination
 * @size: bytes to copy; 0 is allowed and copies nothing
 *
 * The direction follows the placements: host to device, device to host or
 * device to device. Host to host fails with -EINVAL (use the CPU). Both
 * ranges must lie inside their BOs (-EINVAL).
 */
struct drm_spyre_cmd_copy {
	__u32 src_handle;
	__u32 dst_handle;
	__u64 src_offset;
	__u64 dst_offset;
	__u64 size;
};

/**
 * struct drm_spyre_cmd_fill - fill a device BO range with a 32-bit pattern
 * @handle: device-placement BO (a host BO fails with -EINVAL)
 * @pattern: value repeated over the range, stored little endian
 * @offset: byte offset, a multiple of 4
 * @size: bytes, a multiple of 4
 */
struct drm_spyre_cmd_fill {
	__u32 handle;
	__u32 pattern;
	__u64 offset;
	__u64 size;
};

/**
 * struct drm_spyre_bo_range - a byte range of a BO
 * @handle: GEM handle
 * @pad: must be zero
 * @offset: byte offset in the BO
 * @size: bytes
 */
struct drm_spyre_bo_range {
	__u32 handle;
	__u32 pad;
	__u64 offset;
	__u64 size;
};

/**
 * struct drm_spyre_cmd_launch - run a program on the compute engine
 * @prog_handle: device BO holding the program
 * @ws_handle: device BO of the workspace, or 0 for none
 * @prog_offset: offset of the program in @prog_handle
 * @prog_size: bytes of the program buffer (non-zero)
 * @ws_offset: offset of the workspace in @ws_handle (0 without workspace)
 * @ws_size: bytes of the workspace (0 without workspace)
 * @args: pointer to an array of @nargs &struct drm_spyre_bo_range, each a
 *	range of a device BO bound to argument slot i of the program
 * @nargs: argument slots, at most DRM_SPYRE_PARAM_MAX_ARGS (else -E2BIG)
 * @args_stride: bytes between array elements, at least
 *	sizeof(struct drm_spyre_bo_range)
 *
 * The card confines every memory access of the program to its argument
 * slots and workspace; an access outside them fails the job with -EFAULT.
 * Only on DRM_SPYRE_ENGINE_COMPUTE queues.
 */
struct drm_spyre_cmd_launch {
	__u32 prog_handle;
	__u32 ws_handle;
	__u64 prog_offset;
	__u64 prog_size;
	__u64 ws_offset;
	__u64 ws_size;
	__u64 args;
	__u32 nargs;
	__u32 args_stride;
};

/**
 * struct drm_spyre_cmd_timestamp - write the device time into a BO
 * @handle: BO of either placement
 * @pad: must be zero
 * @offset: byte offset, a multiple of 8; 8 bytes are written
 *
 * Writes the device time in ns (u64, little endian) at which every earlier
 * command of the same ring had completed.
 */
struct drm_spyre_cmd_timestamp {
	__u32 handle;
	__u32 pad;
	__u64 offset;
};

/**
 * struct drm_spyre_cmd - one command of a submission (64 bytes)
 * @type: enum drm_spyre_cmd_type; unknown types fail with -EINVAL
 * @flags: must be zero, except DRM_SPYRE_COPY_* of a copy in a
 *	DRM_SPYRE_SUBMIT_VA job
 * @copy: operands of DRM_SPYRE_CMD_COPY
 * @fill: operands of DRM_SPYRE_CMD_FILL
 * @launch: operands of DRM_SPYRE_CMD_LAUNCH
 * @timestamp: operands of DRM_SPYRE_CMD_TIMESTAMP
 * @rsvd: sizes the union; bytes a command type does not use must be zero
 */
struct drm_spyre_cmd {
	__u32 type;
	__u32 flags;
	union {
		struct drm_spyre_cmd_copy copy;
		struct drm_spyre_cmd_fill fill;
		struct drm_spyre_cmd_launch launch;
		struct drm_spyre_cmd_timestamp timestamp;
		__u64 rsvd[7];
	};
};

/**
 * struct drm_spyre_sync - a syncobj a submission waits on or signals
 * @handle: syncobj handle of the calling file (-ENOENT if unknown)
 * @flags: must be zero
 * @point: 0 for a binary syncobj, else the timeline point
 *
 * An in-sync must already have a fence (for a timeline: the point must have
 * been submitted), else the submit fails with -EINVAL. An out-sync receives
 * the job's finished fence: a binary syncobj has its fence replaced, a
 * timeline gets a new point, which must be above its last point (else
 * -EINVAL).
 */
struct drm_spyre_sync {
	__u32 handle;
	__u32 flags;
	__u64 point;
};

/*
 * The job runs in the file's card address space (DRM_IOCTL_SPYRE_VM_BIND;
 * -EINVAL if the file has none yet): every command names card virtual
 * addresses instead of BOs. Its handle fields must be zero and its offset
 * fields are card VAs (below DRM_SPYRE_VA_END with their size, else
 * -EINVAL):
 *
 * - _FILL: the VA of device pages; _TIMESTAMP: of a device or host page.
 * - _COPY: @src_offset and @dst_offset are VAs; the command's flags say
 *   which side is host memory (DRM_SPYRE_COPY_SRC_HOST: host to device,
 *   DRM_SPYRE_COPY_DST_HOST: device to host, neither: device to device;
 *   both: -EINVAL). A side that is not the kind the flags say faults.
 * - _LAUNCH: @prog_offset, @ws_offset and each argument's @offset are VAs
 *   (@ws_offset 0 with @ws_size 0 for none); the program must be mapped
 *   with DRM_SPYRE_VM_BIND_EXEC, its arguments and workspace are device
 *   pages; every &struct drm_spyre_bo_range has @handle and @pad zero.
 *
 * An access to an address the space does not map (or maps without the
 * access: a write to a read-only page, a program fetch from a page without
 * EXEC) fails the job with -EFAULT; the queue's error record then has
 * DRM_SPYRE_FAULT_ADDR_VIRTUAL and the address. A fault stops the address
 * space: the file's later jobs of this kind fail with -EFAULT too until
 * its next successful DRM_IOCTL_SPYRE_VM_BIND (which fixes the mapping and
 * restarts it). Jobs of other files keep running.
 */
#define DRM_SPYRE_SUBMIT_VA		0x1

/* drm_spyre_cmd.flags of a DRM_SPYRE_CMD_COPY in a DRM_SPYRE_SUBMIT_VA job */
#define DRM_SPYRE_COPY_SRC_HOST		0x1 /* the source VA is host memory */
#define DRM_SPYRE_COPY_DST_HOST		0x2 /* the destination VA is host memory */
#define DRM_SPYRE_COPY_HOST_MASK	(DRM_SPYRE_COPY_SRC_HOST | DRM_SPYRE_COPY_DST_HOST)

/**
 * struct drm_spyre_submit - argument of DRM_IOCTL_SPYRE_SUBMIT
 * @queue_id: in, queue to run the job on; -ENOENT if unknown or destroyed,
 *	-ECANCELED if the queue was banned after one of its jobs hung
 * @flags: in, 0 or DRM_SPYRE_SUBMIT_VA (other bits: -EINVAL)
 * @cmds: in, pointer to an array of @cmd_count &struct drm_spyre_cmd
 * @cmd_count: in, 0..DRM_SPYRE_PARAM_MAX_CMDS (more: -E2BIG); a job without
 *	commands only orders and signals, like an event record
 * @cmd_stride: in, bytes between commands, at least 64 (may be 0 when
 *	@cmd_count is 0)
 * @in_syncs: in, pointer to @in_sync_count &struct drm_spyre_sync
 * @in_sync_count: in, at most DRM_SPYRE_PARAM_MAX_SYNCS (else -E2BIG)
 * @sync_stride: in, bytes between syncs of both arrays, at least 16
 *	(may be 0 when both counts are 0)
 * @out_syncs: in, pointer to @out_sync_count &struct drm_spyre_sync
 * @out_sync_count: in, at most DRM_SPYRE_PARAM_MAX_SYNCS (else -E2BIG)
 * @pad: must be zero
 *
 * All commands form one job. The job starts once every in-sync has
 * signalled and the queue's previous job has finished; its commands run in
 * order; then its finished fence signals and is installed in every
 * out-sync. The fence carries an error when the job failed
 * (Documentation/accel/spyre/fences.rst lists them). Everything is checked
 * before anything is queued: a failing submit has no effect. A full ring
 * delays the job, it never fails the submit.
 */
struct drm_spyre_submit {
	__u32 queue_id;
	__u32 flags;
	__u64 cmds;
	__u32 cmd_count;
	__u32 cmd_stride;
	__u64 in_syncs;
	__u32 in_sync_count;
	__u32 sync_stride;
	__u64 out_syncs;
	__u32 out_sync_count;
	__u32 pad;
};

/*
 * The card virtual address space of an open file (card interface 1.10).
 * Addresses below DRM_SPYRE_VA_START are never mapped, so a zero pointer
 * always faults; the card translates 48 bits.
 */
#define DRM_SPYRE_VA_START		0x10000ull
#define DRM_SPYRE_VA_END		0x1000000000000ull /* 2^48 */
#define DRM_SPYRE_VA_PAGE_SIZE		4096

/**
 * enum drm_spyre_vm_bind_op - what DRM_IOCTL_SPYRE_VM_BIND does
 * @DRM_SPYRE_VM_BIND_OP_MAP: map @bo_offset..+@range of BO @handle at card
 *	virtual address @addr
 * @DRM_SPYRE_VM_BIND_OP_UNMAP: remove every mapping inside @addr..+@range
 */
enum drm_spyre_vm_bind_op {
	DRM_SPYRE_VM_BIND_OP_MAP = 0,
	DRM_SPYRE_VM_BIND_OP_UNMAP = 1,
};

#define DRM_SPYRE_VM_BIND_READ_ONLY	0x1 /* map: the card may not write the pages */
#define DRM_SPYRE_VM_BIND_EXEC		0x2 /* map: programs may be fetched from the pages */

/**
 * struct drm_spyre_vm_bind - argument of DRM_IOCTL_SPYRE_VM_BIND
 * @op: in, enum drm_spyre_vm_bind_op (else -EINVAL)
 * @flags: in, map: DRM_SPYRE_VM_BIND_* flags; unmap: zero (else -EINVAL)
 * @handle: in, map: GEM handle of the BO (-ENOENT if not open in the
 *	file); unmap: zero
 * @pad: must be zero
 * @bo_offset: in, map: first byte of the BO to map; unmap: zero
 * @addr: in, card virtual address of the first page
 * @range: in, bytes to map or unmap
 * @in_syncobj: reserved for the asynchronous form (wait for this syncobj
 *	before binding); must be zero
 * @out_syncobj: reserved for the asynchronous form (signalled once the
 *	binding took effect); must be zero
 * @in_point: reserved, must be zero
 * @out_point: reserved, must be zero
 *
 * Changes the card address space of the calling open file; the first call
 * creates it (a card MMU context of the file's own, -ENOSPC when the card
 * has none left). The call is synchronous: when it returns, the page
 * tables and the card's TLB reflect it. An unmap first waits for the
 * file's DRM_SPYRE_SUBMIT_VA jobs submitted before it (they still see the
 * mapping), then for any submitted meanwhile, before it returns; a job
 * submitted after it returns faults on the range.
 *
 * @addr, @range and @bo_offset must be multiples of
 * DRM_SPYRE_VA_PAGE_SIZE and @range non-zero (else -EINVAL); the range
 * must lie within DRM_SPYRE_VA_START..DRM_SPYRE_VA_END (else -ERANGE).
 * A map fails with -EINVAL when @bo_offset..+@range does not lie inside
 * the BO and with -EEXIST when it overlaps an existing mapping (mapping
 * over a mapping needs an unmap first). An unmap fails with -ENOENT when
 * no mapping lies inside the range and with -EINVAL when the range cuts a
 * mapping in two (mappings are removed whole). A failed call changes
 * nothing. A mapped BO stays allocated (and its host pages pinned) until
 * it is unmapped or the file is closed, even when its handle is closed.
 */
struct drm_spyre_vm_bind {
	__u32 op;
	__u32 flags;
	__u32 handle;
	__u32 pad;
	__u64 bo_offset;
	__u64 addr;
	__u64 range;
	__u32 in_syncobj;
	__u32 out_syncobj;
	__u64 in_point;
	__u64 out_point;
};

/**
 * DOC: user-mode queues
 *
 * A user-mode queue (driver 1.4, card interface 1.11) is a hardware ring
 * of the card that the process feeds itself: the ring and its write-back
 * record live in the file's card address space, the process writes
 * 64-byte card descriptors (hw/spyre_hw.h) into the ring and writes the
 * new tail into the queue's doorbell page, which it maps with mmap() at
 * @doorbell_offset. No system call is on that path. The card fetches the
 * ring and runs every command in the file's MMU context, so what the
 * queue can reach is what DRM_IOCTL_SPYRE_VM_BIND mapped; SET_CTX and the
 * card's semaphores are refused on such a ring (its queues order
 * themselves with WAIT_MEM on counters in their own memory).
 *
 * After each FENCE the card writes the FENCE's seqno into the first 8
 * bytes of the write-back record (completed_seqno), and with the FENCE
 * flag F_IRQ raises the queue's interrupt, which wakes
 * DRM_IOCTL_SPYRE_UQ_WAIT. Documentation/accel/spyre/vm.rst has the rules.
 */

/**
 * struct drm_spyre_uq_create - argument of DRM_IOCTL_SPYRE_UQ_CREATE
 * @ring_addr: in, card VA of the ring: (1 << @ring_log2) descriptors of
 *	64 bytes, 4096-byte aligned, lying below DRM_SPYRE_VA_END
 * @wb_addr: in, card VA of the 64-byte write-back record, 64-byte aligned,
 *	inside a host BO mapped writable in the file's space (the driver
 *	reads completed_seqno from that BO for DRM_IOCTL_SPYRE_UQ_WAIT)
 * @ring_log2: in, 4..16
 * @flags: in, must be zero
 * @queue_id: out, non-zero ID, private to the open file
 * @pad: must be zero
 * @doorbell_offset: out, mmap() offset of the queue's doorbell page (one
 *	page, shared, no execute). A 32-bit write at offset 0 sets the
 *	ring's tail (free-running, at most 1 << @ring_log2 past the card's
 *	head); a read returns the card's head.
 *
 * The file must have an address space (a DRM_IOCTL_SPYRE_VM_BIND first,
 * else -EINVAL). Fails with -EOPNOTSUPP on a card without user-mode
 * queues, -ENOSPC when all DRM_SPYRE_PARAM_USER_QUEUES are in use,
 * -EINVAL for a bad address, size or flag, -ENOENT when @wb_addr is not
 * inside a mapping and -EINVAL when that mapping is not of a host BO
 * created by DRM_IOCTL_SPYRE_BO_CREATE or DRM_IOCTL_SPYRE_BO_USERPTR.
 * The ring starts empty (head and tail 0).
 */
struct drm_spyre_uq_create {
	__u64 ring_addr;
	__u64 wb_addr;
	__u32 ring_log2;
	__u32 flags;
	__u32 queue_id;
	__u32 pad;
	__u64 doorbell_offset;
};

/**
 * struct drm_spyre_uq_destroy - argument of DRM_IOCTL_SPYRE_UQ_DESTROY
 * @queue_id: in, ID from DRM_IOCTL_SPYRE_UQ_CREATE (-ENOENT if unknown)
 * @pad: must be zero
 *
 * Stops the ring at once: work still on it is dropped (a running command
 * is abandoned), the doorbell mapping is revoked (a later access raises
 * SIGBUS before driver 1.6; from 1.6 it reaches a page of the queue's own
 * that the card never sees) and waiters return -ECANCELED. Closing the file destroys its
 * queues the same way.
 */
struct drm_spyre_uq_destroy {
	__u32 queue_id;
	__u32 pad;
};

/**
 * struct drm_spyre_uq_wait - argument of DRM_IOCTL_SPYRE_UQ_WAIT
 * @queue_id: in, ID from DRM_IOCTL_SPYRE_UQ_CREATE (-ENOENT if unknown)
 * @flags: in, must be zero
 * @value: in, wait until the queue's completed_seqno >= @value
 * @timeout_ns: in, absolute CLOCK_MONOTONIC time to give up at; a time in
 *	the past only checks
 * @completed: out, the completed_seqno last seen
 * @fault_addr: out, with -EFAULT: the card VA of the fault that stopped
 *	the address space; from driver 1.8 on a card of interface 1.15 read
 *	from the queue's own ring record, so never another file's fault (0
 *	if the space was resumed meanwhile); before, from the card-wide latch
 *	(the first of a burst; 0 if it was not seen)
 *
 * Sleeps until the write-back record reaches @value; the queue's
 * interrupt (a FENCE with F_IRQ) or any card error wakes it, so a FENCE
 * that a sleeper waits for must have F_IRQ. Returns 0 once the value is
 * reached (a job that failed is retired too: its FENCE's completion record
 * says how), -ETIME when the timeout passed, -EFAULT when the value is not
 * reached and a translation fault stopped the file's address space (the
 * faulting job's completion record has the address; the next
 * DRM_IOCTL_SPYRE_VM_BIND restarts the queue where it stopped), -EIO when
 * the ring stopped on a ring error (a bad doorbell value, a ring or
 * write-back that does not translate at enable: destroy the queue),
 * -ETIMEDOUT (driver 1.6) when the driver found the queue hung (its ring
 * did not move for the job timeout, see Documentation/accel/spyre/vm.rst)
 * and ended it: the ring is reset and the queue is dead, as if destroyed,
 * -ECANCELED when the queue was destroyed or lost to a card reset,
 * -ENODEV after the card was removed, -EINTR/-ERESTARTSYS on a signal.
 */
struct drm_spyre_uq_wait {
	__u32 queue_id;
	__u32 flags;
	__u64 value;
	__s64 timeout_ns;
	__u64 completed;
	__u64 fault_addr;
};

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_SPYRE_ACCEL_H_ */
