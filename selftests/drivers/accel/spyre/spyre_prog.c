// SPDX-License-Identifier: GPL-2.0
/*
 * Tiny programs for the virtual Spyre card (see spyre_prog.h).
 */
#include <string.h>

#include "spyre_prog.h"

/* Field offsets inside the header and an instruction. */
#define H_MAGIC		0
#define H_VERSION	4
#define H_HDR_SIZE	6
#define H_NUM_INSNS	8
#define H_NUM_SLOTS	12
#define H_WS_SIZE	16

#define I_OP		0
#define I_FLAGS		1
#define I_DTYPE		2
#define I_DTYPE_OUT	3
#define I_CORE_MASK	4
#define I_WAIT		8
#define I_SIGNAL	10
#define I_U		16
/* LOAD/STORE operands, from I_U */
#define M_SLOT		0
#define M_ROWS		4
#define M_MEM_OFF	8
#define M_ROW_STRIDE	32
#define M_ROW_BYTES	36
#define M_SP_OFF	40
#define M_SP_STRIDE	44
/* VEC operands, from I_U */
#define V_FUNC		0
#define V_ROWS		4
#define V_COLS		8
#define V_SRC0_OFF	12
#define V_SRC0_STRIDE	16
#define V_DST_OFF	28
#define V_DST_STRIDE	32
#define V_IMM0		36
#define V_IMM1		40

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v;
	p[1] = v >> 8;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v);
	put16(p + 2, v >> 16);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, v);
	put32(p + 4, v >> 32);
}

static uint8_t *header(void *buf, uint32_t ninsns, uint16_t nslots, uint64_t ws)
{
	uint8_t *p = buf;

	memset(p, 0, sp_prog_size(ninsns));
	put32(p + H_MAGIC, SP_PROG_MAGIC);
	put16(p + H_VERSION, SP_PROG_VERSION);
	put16(p + H_HDR_SIZE, SP_PROG_HDR_SIZE);
	put32(p + H_NUM_INSNS, ninsns);
	put16(p + H_NUM_SLOTS, nslots);
	put64(p + H_WS_SIZE, ws);
	return p + SP_PROG_HDR_SIZE;
}

static uint8_t *insn(uint8_t *first, uint32_t i, uint8_t op, uint16_t wait, uint16_t signal)
{
	uint8_t *in = first + (size_t)i * SP_INSN_SIZE;

	in[I_OP] = op;
	put32(in + I_CORE_MASK, 1);	/* core 0 */
	put16(in + I_WAIT, wait);
	put16(in + I_SIGNAL, signal);
	return in;
}

static void mem(uint8_t *in, uint8_t slot, uint64_t off, uint32_t rows, uint32_t row_bytes,
		uint32_t row_stride, uint32_t sp_off, uint32_t sp_stride)
{
	uint8_t *u = in + I_U;

	u[M_SLOT] = slot;
	put32(u + M_ROWS, rows);
	put64(u + M_MEM_OFF, off);
	put32(u + M_ROW_STRIDE, row_stride);
	put32(u + M_ROW_BYTES, row_bytes);
	put32(u + M_SP_OFF, sp_off);
	put32(u + M_SP_STRIDE, sp_stride);
}

static uint32_t fbits(float f)
{
	uint32_t v;

	memcpy(&v, &f, sizeof(v));
	return v;
}

size_t sp_prog_scale(void *buf, uint32_t n, float a, float b)
{
	uint8_t *first = header(buf, 3, 2, 0), *in, *u;
	uint32_t bytes = n * 4, out = 1024 * 1024;

	/* LOAD x -> sp[0]; signal token 0 */
	in = insn(first, 0, SP_I_LOAD, 0, 1 << 0);
	mem(in, 0, 0, 1, bytes, bytes, 0, bytes);
	/* VEC sp[out] = sp[0] * a + b; after token 0, signal token 1 */
	in = insn(first, 1, SP_I_VEC, 1 << 0, 1 << 1);
	in[I_DTYPE] = SP_DT_FP32;
	in[I_DTYPE_OUT] = SP_DT_FP32;
	u = in + I_U;
	u[V_FUNC] = SP_VF_SCALE;
	put32(u + V_ROWS, 1);
	put32(u + V_COLS, n);
	put32(u + V_SRC0_OFF, 0);
	put32(u + V_SRC0_STRIDE, n);
	put32(u + V_DST_OFF, out);
	put32(u + V_DST_STRIDE, n);
	put32(u + V_IMM0, fbits(a));
	put32(u + V_IMM1, fbits(b));
	/* STORE sp[out] -> y; after token 1 */
	in = insn(first, 2, SP_I_STORE, 1 << 1, 0);
	mem(in, 1, 0, 1, bytes, bytes, out, bytes);
	return sp_prog_size(3);
}

size_t sp_prog_load_at(void *buf, uint64_t off, uint32_t len)
{
	uint8_t *first = header(buf, 1, 1, 0), *in;

	in = insn(first, 0, SP_I_LOAD, 0, 0);
	mem(in, 0, off, 1, len, len, 0, len);
	return sp_prog_size(1);
}

size_t sp_prog_busy(void *buf, uint32_t ninsns)
{
	uint8_t *first = header(buf, ninsns, 1, 0), *in;
	uint32_t i;

	for (i = 0; i < ninsns; i++) {
		in = insn(first, i, SP_I_LOAD, 0, 0);
		mem(in, 0, 0, 2u << 20, 1, 0, 0, 0);
	}
	return sp_prog_size(ninsns);
}

size_t sp_prog_deadlock(void *buf)
{
	uint8_t *first = header(buf, 1, 0, 0), *in;

	in = insn(first, 0, SP_I_NOP, 1 << 5, 0);
	in[I_FLAGS] = SP_UNIT_SFU;
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
