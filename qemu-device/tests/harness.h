/* SPDX-License-Identifier: GPL-2.0-or-later OR MIT */
/*
 * Host unit tests of the Spyre card model: a tiny test framework and a
 * "test card": the model wired to a fake host memory, a fake clock and an
 * interrupt counter, plus builders for descriptors and programs.
 */
#ifndef SPYRE_TEST_HARNESS_H
#define SPYRE_TEST_HARNESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "spyre_desc.h"
#include "spyre_isa.h"
#include "spyre_model.h"

/* --- framework ---------------------------------------------------------- */
typedef void (*test_fn)(void);
void test_register(const char *name, test_fn fn);
void test_fail(const char *file, int line, const char *expr);
extern int test_cur_failed;

#define TEST(name) \
	static void name(void); \
	__attribute__((constructor)) static void reg_##name(void) { test_register(#name, name); } \
	static void name(void)

#define CHECK(cond) do { if (!(cond)) test_fail(__FILE__, __LINE__, #cond); } while (0)
#define CHECK_EQ(a, b) do { \
	unsigned long long _a = (unsigned long long)(a), _b = (unsigned long long)(b); \
	if (_a != _b) { \
		char _m[256]; \
		snprintf(_m, sizeof(_m), "%s == %s (%llu != %llu, 0x%llx != 0x%llx)", #a, #b, \
			 _a, _b, _a, _b); \
		test_fail(__FILE__, __LINE__, _m); \
	} \
} while (0)

/* --- test card ------------------------------------------------------------ */
#define HOST_BASE	0x10000000ull
#define HOST_SIZE	(64ull << 20)
/* Host layout used by the helpers (offsets from HOST_BASE). */
#define H_RING(n)	(0x000000ull + (uint64_t)(n) * 0x20000)	/* up to 2048 entries */
#define H_WB(n)		(0x200000ull + (uint64_t)(n) * 64)
#define H_REC(i)	(0x210000ull + (uint64_t)(i) * 64)	/* completion records */
#define H_SG		0x300000ull				/* scatter lists */
#define H_DATA		0x400000ull				/* data buffers */

/* Bus address of the peer card's memory (struct tcard.peer), like a BAR2. */
#define PEER_BASE	0x4000000000ull

#define TC_EVENTS	(SPYRE_MODEL_EV_CARD_ERROR + 1)

struct tcard {
	struct spyre_model *m;
	struct spyre_model_config cfg;
	uint8_t *host;
	uint8_t *dev;
	uint64_t now;
	unsigned int irqs[SPYRE_MODEL_MAX_RINGS + 1];
	uint32_t tail[SPYRE_MODEL_MAX_RINGS];
	uint32_t log2[SPYRE_MODEL_MAX_RINGS];
	uint64_t host_reads, host_writes;
	/* a peer card whose memory the bus shows at PEER_BASE (peer DMA tests) */
	struct tcard *peer;
	/* spyre_model_ops.event calls, per enum spyre_model_event, and the last one */
	unsigned int events[TC_EVENTS];
	struct {
		unsigned int ring;
		uint64_t a, b;
	} last_event[TC_EVENTS];
};

/* Create with defaults (mem 64 MiB); @tweak may edit cfg first (NULL: none). */
struct tcard *tc_new(void (*tweak)(struct spyre_model_config *cfg));
void tc_free(struct tcard *t);
uint32_t tc_rd(struct tcard *t, uint32_t off);
void tc_wr(struct tcard *t, uint32_t off, uint32_t val);
uint64_t tc_run(struct tcard *t);
void *hptr(struct tcard *t, uint64_t off);	/* host memory at HOST_BASE + off */

/* Configure and enable ring @n with 1 << log2 entries. */
void ring_setup(struct tcard *t, unsigned int n, unsigned int log2);
void ring_push(struct tcard *t, unsigned int n, const void *desc);
void ring_doorbell(struct tcard *t, unsigned int n);
uint32_t ring_status(struct tcard *t, unsigned int n);
uint64_t wb_seqno(struct tcard *t, unsigned int n);
uint32_t wb_head(struct tcard *t, unsigned int n);
struct spyre_hw_completion *rec(struct tcard *t, unsigned int i);

/* Descriptor builders (fill a 64-byte buffer). */
void d_dma(void *d, unsigned int dir, uint64_t len, uint64_t dev, uint64_t src,
	   uint64_t sg, uint32_t sg_count, uint64_t host_off, uint32_t fill);
void d_fence(void *d, uint64_t seqno, unsigned int rec_index, bool irq);
void d_sem(void *d, bool signal, uint16_t sem, uint64_t value);
void d_ts(void *d, bool devmem, uint64_t addr, uint32_t sg_count, uint64_t off);
/* Build one descriptor and push it on ring @n (the arguments as d_*()). */
void push_dma(struct tcard *t, unsigned int n, unsigned int dir, uint64_t len, uint64_t dev,
	      uint64_t src, uint64_t sg, uint32_t sg_count, uint64_t host_off, uint32_t fill);
void push_fence(struct tcard *t, unsigned int n, uint64_t seqno, unsigned int rec_index,
		bool irq);
void push_sem(struct tcard *t, unsigned int n, bool signal, uint16_t sem, uint64_t value);
void push_ts(struct tcard *t, unsigned int n, bool devmem, uint64_t addr, uint32_t sg_count,
	     uint64_t off);
/* Ring ring @n's doorbell and run the card until it has nothing left to do. */
void ring_run(struct tcard *t, unsigned int n);
/* End the job on ring @n: push its FENCE, then ring_run(). */
void fence_and_run(struct tcard *t, unsigned int n, uint64_t seqno, unsigned int rec_index,
		   bool irq);
/* Push a LAUNCH and its ARGS; slots are (addr, len) pairs. */
void push_launch(struct tcard *t, unsigned int n, uint64_t prog, uint64_t prog_len,
		 uint64_t ws, uint64_t ws_len, unsigned int nargs, const uint64_t *slots);
/* The same with LAUNCH descriptor @flags (SPYRE_DESC_F_SCRUB). */
void push_launch_flags(struct tcard *t, unsigned int n, uint8_t flags, uint64_t prog,
		       uint64_t prog_len, uint64_t ws, uint64_t ws_len, unsigned int nargs,
		       const uint64_t *slots);
/* One scatter entry list at H_SG + @sg_off describing host buffer segments. */
uint64_t sg_write(struct tcard *t, uint64_t sg_off, unsigned int count,
		  const uint64_t *addr_len);
/* A one-segment scatter list over host [H_DATA + off, + len) at sg slot @slot. */
uint64_t sg_simple(struct tcard *t, unsigned int slot, uint64_t off, uint64_t len);

/* Program builder: writes header + instructions into device memory. */
struct prog {
	struct spyre_prog_header h;
	struct spyre_insn in[256];
	uint32_t n;
};
void prog_init(struct prog *p, uint16_t slots, uint64_t ws);
struct spyre_insn *prog_add(struct prog *p, uint8_t op, uint32_t mask, uint16_t wait,
			    uint16_t signal);
struct spyre_insn *p_load(struct prog *p, bool store, uint32_t mask, uint8_t slot,
			  uint64_t mem_off, uint32_t rows, uint32_t row_bytes,
			  uint32_t mem_stride, uint32_t sp_off, uint32_t sp_stride);
struct spyre_insn *p_mm(struct prog *p, uint32_t mask, uint8_t dt, uint8_t dt_out,
			uint16_t m, uint16_t n, uint16_t k, uint32_t a, uint32_t b,
			uint32_t c, uint8_t flags);
struct spyre_insn *p_vec(struct prog *p, uint32_t mask, uint8_t func, uint8_t dt,
			 uint8_t dt_out, uint32_t rows, uint32_t cols, uint32_t s0,
			 uint32_t s1, uint32_t dst);
uint64_t prog_store(struct tcard *t, const struct prog *p, uint64_t dev_off);

/* Run a single LAUNCH job on ring 0 and return the completion record. */
struct spyre_hw_completion run_launch(struct tcard *t, uint64_t prog, uint64_t prog_len,
				      uint64_t ws, uint64_t ws_len, unsigned int nargs,
				      const uint64_t *slots);
struct spyre_hw_completion run_launch_flags(struct tcard *t, uint8_t flags, uint64_t prog,
					    uint64_t prog_len, uint64_t ws, uint64_t ws_len,
					    unsigned int nargs, const uint64_t *slots);

#endif /* SPYRE_TEST_HARNESS_H */
