// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * The modelled device timeline of a small overlap example on the Spyre
 * card model: uploads, two compute jobs and a download on four rings, all
 * doorbelled at t = 0. Shows DMA overlapping compute and the two LAUNCHes
 * serialising on the shared compute engine.
 *
 *   make -C qemu-device/tests BUILD=$PWD/build bench
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench_record.h"
#include "spyre_hw.h"
#include "spyre_isa.h"
#include "spyre_model.h"

#define HOST	0x10000ull
#define MEM	(64ull << 20)
static uint8_t host[6 << 20];

static int h_read(void *o, uint64_t a, void *b, uint64_t l)
{
	if (a < HOST || a - HOST + l > sizeof(host))
		return -1;
	memcpy(b, host + (a - HOST), l);
	return 0;
}

static int h_write(void *o, uint64_t a, const void *b, uint64_t l)
{
	if (a < HOST || a - HOST + l > sizeof(host))
		return -1;
	memcpy(host + (a - HOST), b, l);
	return 0;
}

static void h_irq(void *o, unsigned int v)
{
}

static uint64_t h_now(void *o)
{
	return 0;
}

static void *hp(uint64_t off)
{
	return host + off;
}

/* ring n: descriptors at 0x1000 * (n + 1), write-back at 0x8000 + 64 n */
static void desc(unsigned int n, unsigned int i, const void *d)
{
	memcpy(hp(0x1000 * (n + 1) + 64 * i), d, 64);
}

static void fence(unsigned int n, unsigned int i)
{
	struct spyre_hw_fence f = { .opcode = SPYRE_OP_FENCE, .seqno = n + 1,
				    .record_addr = HOST + 0x9000 + 64 * n };

	desc(n, i, &f);
}

int main(void)
{
	static const struct spyre_model_ops ops = { h_read, h_write, h_irq, h_now, NULL, NULL, NULL };
	static const char *what[4] = { "H2D 4 MiB upload", "LAUNCH 256x512x512 fp16, 32 cores",
				       "LAUNCH 256x512x512 fp16, 32 cores", "D2H 4 MiB download" };
	uint8_t *dev = mmap(NULL, MEM, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	struct spyre_model_config cfg;
	struct spyre_model *m;
	struct spyre_prog_header h = { SPYRE_PROG_MAGIC, SPYRE_PROG_VERSION,
				       SPYRE_PROG_HEADER_SIZE, 2, 0, 0, 0, 0 };
	struct spyre_insn in[2];
	struct spyre_hw_dma dma;
	struct spyre_hw_launch l;
	struct spyre_hw_sg sg = { HOST + 0x20000, 4 << 20 };
	uint64_t busy[3] = { 0, 0, 0 }, bound = 0, end = 0;
	unsigned int n;

	/* each core: an 8x512x512 fp16 matmul on its scratchpad, then a GELU */
	memset(in, 0, sizeof(in));
	in[0].op = SPYRE_I_MATMUL;
	in[0].dtype = SPYRE_DT_FP16;
	in[0].dtype_out = SPYRE_DT_FP32;
	in[0].core_mask = ~0u;
	in[0].signal = 1;
	in[0].u.mm = (struct spyre_insn_mm){ .m = 8, .n = 512, .k = 512, .b_off = 0x10000,
					     .c_off = 0x100000, .lda = 512, .ldb = 512,
					     .ldc = 512 };
	in[1].op = SPYRE_I_VEC;
	in[1].core_mask = ~0u;
	in[1].wait = 1;
	in[1].u.vec = (struct spyre_insn_vec){ .func = SPYRE_VF_GELU, .rows = 8, .cols = 512,
					       .src0_off = 0x100000, .src0_stride = 512,
					       .dst_off = 0x100000, .dst_stride = 512 };
	memcpy(dev, &h, sizeof(h));
	memcpy(dev + sizeof(h), in, sizeof(in));
	memcpy(hp(0x10000), &sg, sizeof(sg));

	spyre_model_config_defaults(&cfg);
	cfg.mem_size = MEM;
	cfg.mem_aperture = MEM;
	m = spyre_model_new(&cfg, &ops, NULL, dev, NULL);
	memset(&dma, 0, sizeof(dma));
	dma.opcode = SPYRE_OP_DMA;
	dma.len = 4 << 20;
	dma.dev_addr = 8 << 20;
	dma.sg_addr = HOST + 0x10000;
	dma.sg_count = 1;
	memset(&l, 0, sizeof(l));
	l.opcode = SPYRE_OP_LAUNCH;
	l.prog_len = sizeof(h) + sizeof(in);
	for (n = 0; n < 4; n++) {
		uint64_t base = HOST + 0x1000 * (n + 1), wb = HOST + 0x8000 + 64 * n;

		dma.dir = n == 3 ? SPYRE_DMA_D2H : SPYRE_DMA_H2D;
		desc(n, 0, n == 1 || n == 2 ? (void *)&l : (void *)&dma);
		fence(n, 1);
		spyre_model_write(m, SPYRE_RING_REG(n, SPYRE_RING_BASE_LO), (uint32_t)base);
		spyre_model_write(m, SPYRE_RING_REG(n, SPYRE_RING_SIZE_LOG2), 4);
		spyre_model_write(m, SPYRE_RING_REG(n, SPYRE_RING_WB_LO), (uint32_t)wb);
		spyre_model_write(m, SPYRE_RING_REG(n, SPYRE_RING_CTRL), SPYRE_RING_CTRL_ENABLE);
	}
	for (n = 0; n < 4; n++)
		spyre_model_write(m, SPYRE_RING_REG(n, SPYRE_RING_TAIL), 2);
	spyre_model_process(m);

	printf("model_timeline: four rings doorbelled at t = 0 (device time, ns)\n");
	for (n = 0; n < 4; n++) {
		struct spyre_hw_completion *r = hp(0x9000 + 64 * n);

		printf("  ring %u  %-36s [%7llu .. %7llu]  status %u\n", n, what[n],
		       (unsigned long long)r->start_ns, (unsigned long long)r->end_ns, r->status);
		busy[n == 1 || n == 2 ? 1 : n ? 2 : 0] += r->end_ns - r->start_ns;
		if (r->end_ns > end)
			end = r->end_ns;
	}
	/*
	 * No schedule can beat the busiest engine (H2D lane, compute, D2H
	 * lane), so (busiest engine's total) / (modelled end) is 1.0 for
	 * perfect overlap and 1/3 for three engines run back to back.
	 */
	for (n = 0; n < 3; n++)
		if (busy[n] > bound)
			bound = busy[n];
	bench_record("model_timeline_device_ns", (double)end, "ns",
		     "modelled device time: 4 MiB H2D, two 256x512x512 fp16 LAUNCHes, 4 MiB D2H on 4 rings",
		     "completion records, all rings doorbelled at t = 0 (deterministic)", "model");
	bench_record("model_timeline_overlap", end ? (double)bound / end : 0, "x",
		     "lower bound max(H2D, compute, D2H busy) / modelled device time",
		     "completion records (deterministic); 1.0 = perfect overlap", "model");
	spyre_model_free(m);
	return 0;
}
