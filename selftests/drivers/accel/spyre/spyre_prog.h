/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tiny programs for the virtual Spyre card's compute engine, so the launch
 * tests run real work. The format (a 32-byte header, then 64-byte
 * instructions, little endian) is specified in Documentation/spyre-card.rst
 * ("Programs"); only the handful of fields these tests use is spelt out
 * here, so the selftests build in a kernel tree without the card's sources.
 */
#ifndef SPYRE_PROG_H
#define SPYRE_PROG_H

#include <stddef.h>
#include <stdint.h>

#include "spyre_util.h"

#define SP_PROG_MAGIC		0x47525053u	/* "SPRG" */
#define SP_PROG_VERSION		1
#define SP_PROG_HDR_SIZE	32
#define SP_INSN_SIZE		64

/* Opcodes, vector functions and element types used by the tests. */
#define SP_I_NOP		0
#define SP_I_LOAD		1
#define SP_I_STORE		2
#define SP_I_VEC		4
#define SP_VF_SCALE		2	/* dst = src0 * imm0 + imm1 */
#define SP_DT_FP32		0
#define SP_UNIT_SFU		2

/* Bytes of a program of @ninsns instructions. */
static inline size_t sp_prog_size(uint32_t ninsns)
{
	return SP_PROG_HDR_SIZE + (size_t)ninsns * SP_INSN_SIZE;
}

/* y = x * a + b over @n fp32 values: slot 0 -> slot 1, on core 0. */
size_t sp_prog_scale(void *buf, uint32_t n, float a, float b);
/* Loads from slot 0 at @off (@len bytes): out of range fails the job. */
size_t sp_prog_load_at(void *buf, uint64_t off, uint32_t len);
/*
 * Busy program: @ninsns LOADs of 2 Mi one-byte rows each from slot 0 (an
 * instruction may move at most a scratchpad). The card bills a whole
 * 128-byte stick per row, so each takes about 2 ms of device time while
 * costing the emulator little real work. @buf holds sp_prog_size(@ninsns).
 */
size_t sp_prog_busy(void *buf, uint32_t ninsns);
/* Waits on a data token nothing produces: the card reports a deadlock. */
size_t sp_prog_deadlock(void *buf);

/* Copy a program into a new device BO of @bo_size bytes (>= @size). */
int sp_prog_upload(struct sp_dev *d, uint32_t queue, const void *prog, size_t size,
		   uint64_t bo_size, uint32_t *bo);

#endif /* SPYRE_PROG_H */
