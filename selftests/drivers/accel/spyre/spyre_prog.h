/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tiny programs for the virtual Spyre card's compute engine, so the launch
 * tests run real work. The format is hw/spyre_isa.h (the card's program
 * format, shared with the card model and libspyre; in a kernel tree it is
 * drivers/accel/spyre/hw/spyre_isa.h), specified in
 * Documentation/spyre-card.rst ("Programs").
 */
#ifndef SPYRE_PROG_H
#define SPYRE_PROG_H

#include <stddef.h>
#include <stdint.h>

#include "spyre_isa.h"
#include "spyre_util.h"

/* Bytes of a program of @ninsns instructions. */
static inline size_t sp_prog_size(uint32_t ninsns)
{
	return SPYRE_PROG_HEADER_SIZE + (size_t)ninsns * SPYRE_PROG_INSN_SIZE;
}

/* y = x * a + b over @n fp32 values: slot 0 -> slot 1, on core 0. */
size_t sp_prog_scale(void *buf, uint32_t n, float a, float b);
/* Loads from slot 0 at @off (@len bytes): out of range fails the job. */
size_t sp_prog_load_at(void *buf, uint64_t off, uint32_t len);
/* Stores core 0's scratchpad (from offset 0, @len bytes) to slot 0 at @off. */
/*
 * Two LOADs of @len bytes from slot 0: the first into scratchpad offset 0,
 * the second (instruction 1) into @sp_off, which may run past the end.
 */
size_t sp_prog_sp_overrun(void *buf, uint32_t sp_off, uint32_t len);
size_t sp_prog_store_at(void *buf, uint64_t off, uint32_t len);
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
