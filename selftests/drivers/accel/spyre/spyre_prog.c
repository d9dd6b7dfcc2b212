// SPDX-License-Identifier: GPL-2.0
/*
 * Tiny programs for the virtual Spyre card (see spyre_prog.h).
 */
#include <string.h>

#include "spyre_prog.h"

/*
 * Programs are built in struct spyre_prog_header / struct spyre_insn and
 * copied into the caller's buffer, which need not be aligned for them.
 */
static void put_header(void *buf, uint32_t ninsns, uint16_t nslots, uint64_t ws)
{
	struct spyre_prog_header h = {
		.magic = SPYRE_PROG_MAGIC,
		.version = SPYRE_PROG_VERSION,
		.header_size = SPYRE_PROG_HEADER_SIZE,
		.num_insns = ninsns,
		.num_slots = nslots,
		.workspace_size = ws,
	};

	memset(buf, 0, sp_prog_size(ninsns));
	memcpy(buf, &h, sizeof(h));
}

static void put_insn(void *buf, uint32_t i, const struct spyre_insn *in)
{
	memcpy((uint8_t *)buf + SPYRE_PROG_HEADER_SIZE + (size_t)i * SPYRE_PROG_INSN_SIZE,
	       in, sizeof(*in));
}

/* An instruction for core 0. */
static struct spyre_insn insn(uint8_t op, uint16_t wait, uint16_t signal)
{
	struct spyre_insn in = {
		.op = op,
		.core_mask = 1,
		.wait = wait,
		.signal = signal,
	};

	return in;
}

/* A LOAD or STORE of @rows rows of @row_bytes between @slot and the scratchpad. */
static struct spyre_insn mem(uint8_t op, uint16_t wait, uint16_t signal, uint8_t slot,
			     uint64_t off, uint32_t rows, uint32_t row_bytes,
			     uint32_t row_stride, uint32_t sp_off, uint32_t sp_stride)
{
	struct spyre_insn in = insn(op, wait, signal);

	in.u.mem.slot = slot;
	in.u.mem.rows = rows;
	in.u.mem.mem_off = off;
	in.u.mem.mem_row_stride = row_stride;
	in.u.mem.row_bytes = row_bytes;
	in.u.mem.sp_off = sp_off;
	in.u.mem.sp_row_stride = sp_stride;
	return in;
}

static uint32_t fbits(float f)
{
	uint32_t v;

	memcpy(&v, &f, sizeof(v));
	return v;
}

size_t sp_prog_scale(void *buf, uint32_t n, float a, float b)
{
	uint32_t bytes = n * 4, out = 1024 * 1024;
	struct spyre_insn in;

	put_header(buf, 3, 2, 0);
	/* LOAD x -> sp[0]; signal token 0 */
	in = mem(SPYRE_I_LOAD, 0, 1 << 0, 0, 0, 1, bytes, bytes, 0, bytes);
	put_insn(buf, 0, &in);
	/* VEC sp[out] = sp[0] * a + b; after token 0, signal token 1 */
	in = insn(SPYRE_I_VEC, 1 << 0, 1 << 1);
	in.dtype = SPYRE_DT_FP32;
	in.dtype_out = SPYRE_DT_FP32;
	in.u.vec.func = SPYRE_VF_SCALE;
	in.u.vec.rows = 1;
	in.u.vec.cols = n;
	in.u.vec.src0_off = 0;
	in.u.vec.src0_stride = n;
	in.u.vec.dst_off = out;
	in.u.vec.dst_stride = n;
	in.u.vec.imm0 = fbits(a);
	in.u.vec.imm1 = fbits(b);
	put_insn(buf, 1, &in);
	/* STORE sp[out] -> y; after token 1 */
	in = mem(SPYRE_I_STORE, 1 << 1, 0, 1, 0, 1, bytes, bytes, out, bytes);
	put_insn(buf, 2, &in);
	return sp_prog_size(3);
}

size_t sp_prog_load_at(void *buf, uint64_t off, uint32_t len)
{
	struct spyre_insn in = mem(SPYRE_I_LOAD, 0, 0, 0, off, 1, len, len, 0, len);

	put_header(buf, 1, 1, 0);
	put_insn(buf, 0, &in);
	return sp_prog_size(1);
}

size_t sp_prog_sp_overrun(void *buf, uint32_t sp_off, uint32_t len)
{
	struct spyre_insn ok = mem(SPYRE_I_LOAD, 0, 0, 0, 0, 1, len, len, 0, len);
	struct spyre_insn bad = mem(SPYRE_I_LOAD, 0, 0, 0, 0, 1, len, len, sp_off, len);

	put_header(buf, 2, 1, 0);
	put_insn(buf, 0, &ok);
	put_insn(buf, 1, &bad);
	return sp_prog_size(2);
}

size_t sp_prog_store_at(void *buf, uint64_t off, uint32_t len)
{
	struct spyre_insn in = mem(SPYRE_I_STORE, 0, 0, 0, off, 1, len, len, 0, len);

	put_header(buf, 1, 1, 0);
	put_insn(buf, 0, &in);
	return sp_prog_size(1);
}

size_t sp_prog_busy(void *buf, uint32_t ninsns)
{
	struct spyre_insn in = mem(SPYRE_I_LOAD, 0, 0, 0, 0, 2u << 20, 1, 0, 0, 0);
	uint32_t i;

	put_header(buf, ninsns, 1, 0);
	for (i = 0; i < ninsns; i++)
		put_insn(buf, i, &in);
	return sp_prog_size(ninsns);
}

size_t sp_prog_deadlock(void *buf)
{
	struct spyre_insn in = insn(SPYRE_I_NOP, 1 << 5, 0);

	in.flags = SPYRE_UNIT_SFU;
	put_header(buf, 1, 0, 0);
	put_insn(buf, 0, &in);
	return sp_prog_size(1);
}

int sp_prog_upload(struct sp_dev *d, uint32_t queue, const void *prog, size_t size,
		   uint64_t bo_size, uint32_t *bo)
{
	int ret = sp_bo_create(d->fd, bo_size, DRM_SPYRE_PLACEMENT_DEVICE, bo);

	if (ret)
		return ret;
	ret = sp_upload(d, queue, *bo, 0, prog, size);
	if (ret)
		sp_bo_close(d->fd, *bo);
	return ret;
}
