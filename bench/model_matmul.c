// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Emulation speed of the Spyre card model: a 1024^3 fp16 matmul (fp32
 * accumulate, fp16 result) run as one LAUNCH across all 32 cores, against
 * the host's BLAS computing the same product in fp32. Prints host wall
 * times, their ratio, the modelled device time and the numerical error.
 *
 *   make -C qemu-device/tests BUILD=$PWD/build bench
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "bench_record.h"
#include "spyre_float.h"
#include "spyre_hw.h"
#include "spyre_isa.h"
#include "spyre_model.h"

#ifdef SPYRE_HAVE_CBLAS
#include <cblas.h>
#endif

enum { N = 1024, BM = 128, BN = 256, BK = 256, KSTEPS = N / BK };
#define A_AT	0x000000ull
#define B_AT	0x200000ull
#define C_AT	0x400000ull
#define P_AT	0x600000ull
#define MEM	(16ull << 20)
/* scratchpad layout of every core */
#define SP_A(i)	((i) * 0x10000u)		/* 2 x 64 KiB */
#define SP_B(i)	(0x20000u + (i) * 0x20000u)	/* 2 x 128 KiB */
#define SP_C	0x60000u			/* fp32 128 x 256 */
#define SP_C16	0x80000u			/* fp16 128 x 256 */

static uint8_t host[4096];
static uint64_t now_ns;

static int h_read(void *o, uint64_t a, void *b, uint64_t l)
{
	if (a < 0x1000 || a + l > 0x1000 + sizeof(host))
		return -1;
	memcpy(b, host + a - 0x1000, l);
	return 0;
}

static int h_write(void *o, uint64_t a, const void *b, uint64_t l)
{
	if (a < 0x1000 || a + l > 0x1000 + sizeof(host))
		return -1;
	memcpy(host + a - 0x1000, b, l);
	return 0;
}

static void h_irq(void *o, unsigned int v)
{
}

static uint64_t h_now(void *o)
{
	return now_ns;
}

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static struct spyre_insn *add(struct spyre_insn *p, uint32_t *n, uint8_t op, uint16_t wait,
			      uint16_t signal)
{
	struct spyre_insn *in = &p[(*n)++];

	memset(in, 0, sizeof(*in));
	in->op = op;
	in->core_mask = 0xffffffffu;
	in->wait = wait;
	in->signal = signal;
	return in;
}

/*
 * Tokens: 0 A tile loaded, 1 B tile loaded, 2 matmul done (buffer free),
 * 3 last matmul done, 4 fp16 result ready. Cores form an 8 x 4 grid:
 * rank % 4 picks the 256-column block, rank / 4 the 128-row block.
 */
static uint32_t build(struct spyre_insn *p)
{
	struct spyre_insn *in;
	uint32_t n = 0, k;

	for (k = 0; k < KSTEPS; k++) {
		in = add(p, &n, SPYRE_I_LOAD, k >= 2 ? 1 << 2 : 0, 1 << 0);
		in->u.mem = (struct spyre_insn_mem){ .slot = 0, .core_div = 4, .rows = BM,
			.mem_off = k * BK * 2, .core_stride2 = (uint64_t)BM * N * 2,
			.mem_row_stride = N * 2, .row_bytes = BK * 2, .sp_off = SP_A(k % 2),
			.sp_row_stride = BK * 2 };
		in = add(p, &n, SPYRE_I_LOAD, 0, 1 << 1);
		in->u.mem = (struct spyre_insn_mem){ .slot = 1, .core_div = 4, .rows = BK,
			.mem_off = (uint64_t)k * BK * N * 2, .core_stride = BN * 2,
			.mem_row_stride = N * 2, .row_bytes = BN * 2, .sp_off = SP_B(k % 2),
			.sp_row_stride = BN * 2 };
		in = add(p, &n, SPYRE_I_MATMUL, 1 << 0 | 1 << 1,
			 k == KSTEPS - 1 ? 1 << 3 : 1 << 2);
		in->flags = k ? SPYRE_MM_ACC : 0;
		in->dtype = SPYRE_DT_FP16;
		in->dtype_out = SPYRE_DT_FP32;
		in->u.mm = (struct spyre_insn_mm){ .m = BM, .n = BN, .k = BK, .a_off = SP_A(k % 2),
			.b_off = SP_B(k % 2), .c_off = SP_C, .lda = BK, .ldb = BN, .ldc = BN };
	}
	in = add(p, &n, SPYRE_I_VEC, 1 << 3, 1 << 4);
	in->dtype = SPYRE_DT_FP32;
	in->dtype_out = SPYRE_DT_FP16;
	in->u.vec = (struct spyre_insn_vec){ .func = SPYRE_VF_COPY, .rows = BM, .cols = BN,
		.src0_off = SP_C, .src0_stride = BN, .dst_off = SP_C16, .dst_stride = BN };
	in = add(p, &n, SPYRE_I_STORE, 1 << 4, 0);
	in->u.mem = (struct spyre_insn_mem){ .slot = 2, .core_div = 4, .rows = BM,
		.core_stride = BN * 2, .core_stride2 = (uint64_t)BM * N * 2,
		.mem_row_stride = N * 2, .row_bytes = BN * 2, .sp_off = SP_C16,
		.sp_row_stride = BN * 2 };
	return n;
}

static void host_gemm(const float *a, const float *b, float *c)
{
#ifdef SPYRE_HAVE_CBLAS
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, a, N, b, N, 0.0f,
		    c, N);
#else
	size_t i, j, q;

	memset(c, 0, 4ull * N * N);
	for (i = 0; i < N; i++)
		for (j = 0; j < N; j++) {
			float av = a[i * N + j];

			for (q = 0; q < N; q++)
				c[i * N + q] += av * b[j * N + q];
		}
#endif
}

int main(void)
{
	static const struct spyre_model_ops ops = { h_read, h_write, h_irq, h_now, NULL, NULL, NULL };
	struct spyre_model_config cfg;
	struct spyre_model *m;
	struct spyre_prog_header h = { SPYRE_PROG_MAGIC, SPYRE_PROG_VERSION,
				       SPYRE_PROG_HEADER_SIZE, 0, 3, 0, 0, 0 };
	static struct spyre_insn prog[64];
	float *a = malloc(4ull * N * N), *b = malloc(4ull * N * N), *c = malloc(4ull * N * N);
	uint8_t *dev = mmap(NULL, MEM, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct spyre_hw_launch *l = (void *)host;
	struct spyre_hw_args *args = (void *)(host + 64);
	struct spyre_hw_fence *f = (void *)(host + 128);
	struct spyre_hw_completion *rec = (void *)(host + 2048);
	double t0, t_model, t_blas, t_blas_mt, err = 0, ref = 0;
	uint16_t *A = (uint16_t *)(dev + A_AT), *B = (uint16_t *)(dev + B_AT);
	uint16_t *C = (uint16_t *)(dev + C_AT);
	unsigned int s = 42;
	size_t i;
	int j;

	for (i = 0; i < (size_t)N * N; i++) {
		s = s * 1103515245u + 12345u;
		A[i] = spyre_f32_to_fp16(((s >> 8) & 0xffff) / 65536.0f - 0.5f);
		s = s * 1103515245u + 12345u;
		B[i] = spyre_f32_to_fp16(((s >> 8) & 0xffff) / 65536.0f - 0.5f);
		a[i] = spyre_fp16_to_f32(A[i]);
		b[i] = spyre_fp16_to_f32(B[i]);
	}
	h.num_insns = build(prog);
	memcpy(dev + P_AT, &h, sizeof(h));
	memcpy(dev + P_AT + sizeof(h), prog, h.num_insns * sizeof(prog[0]));

	spyre_model_config_defaults(&cfg);
	cfg.mem_size = MEM;
	cfg.mem_aperture = MEM;
	cfg.num_rings = 1;
	m = spyre_model_new(&cfg, &ops, NULL, dev, NULL);
	memset(host, 0, sizeof(host));
	l->opcode = SPYRE_OP_LAUNCH;
	l->nargs = 3;
	l->prog_addr = P_AT;
	l->prog_len = sizeof(h) + h.num_insns * sizeof(prog[0]);
	args->opcode = SPYRE_OP_ARGS;
	args->count = 3;
	args->slot[0].addr = A_AT;
	args->slot[0].len = 2ull * N * N;
	args->slot[1].addr = B_AT;
	args->slot[1].len = 2ull * N * N;
	args->slot[2].addr = C_AT;
	args->slot[2].len = 2ull * N * N;
	f->opcode = SPYRE_OP_FENCE;
	f->seqno = 1;
	f->record_addr = 0x1000 + 2048;
	/* best of three runs each: the machine may be shared */
	t_model = t_blas = 1e30;
	for (j = 0; j < 3; j++) {
		spyre_model_write(m, SPYRE_REG_CTRL, SPYRE_CTRL_RESET);
		spyre_model_write(m, SPYRE_RING_REG(0, SPYRE_RING_BASE_LO), 0x1000);
		spyre_model_write(m, SPYRE_RING_REG(0, SPYRE_RING_SIZE_LOG2), 4);
		spyre_model_write(m, SPYRE_RING_REG(0, SPYRE_RING_WB_LO), 0x1000 + 3072);
		spyre_model_write(m, SPYRE_RING_REG(0, SPYRE_RING_CTRL), SPYRE_RING_CTRL_ENABLE);
		memset(rec, 0, sizeof(*rec));
		t0 = wall();
		spyre_model_write(m, SPYRE_RING_REG(0, SPYRE_RING_TAIL), 3);
		spyre_model_process(m);
		t0 = wall() - t0;
		if (t0 < t_model)
			t_model = t0;
		if (rec->seqno != 1 || rec->status) {
			printf("launch failed: status %u\n", rec->status);
			return 1;
		}
	}

	/* one host thread, like the model's own emulation */
#if defined(SPYRE_HAVE_CBLAS) && defined(OPENBLAS_VERSION)
	openblas_set_num_threads(1);
#endif
	for (j = 0; j < 3; j++) {
		t0 = wall();
		host_gemm(a, b, c);
		t0 = wall() - t0;
		if (t0 < t_blas)
			t_blas = t0;
	}
	t_blas_mt = t_blas;
#if defined(SPYRE_HAVE_CBLAS) && defined(OPENBLAS_VERSION)
	openblas_set_num_threads(openblas_get_num_procs());
	for (j = 0; j < 3; j++) {
		t0 = wall();
		host_gemm(a, b, c);
		t0 = wall() - t0;
		if (t0 < t_blas_mt)
			t_blas_mt = t0;
	}
#endif


	for (i = 0; i < (size_t)N * N; i++) {
		err = fmax(err, fabs(spyre_fp16_to_f32(C[i]) - c[i]));
		ref = fmax(ref, fabs(c[i]));
	}
	printf("model_matmul: 1024^3 fp16 on 32 cores, %u instructions (best of 3)\n",
	       h.num_insns);
	printf("  model emulation : %.3f s (host wall)\n", t_model);
	printf("  host BLAS fp32  : %.3f s (host wall, 1 thread; all threads %.3f s)\n", t_blas,
	       t_blas_mt);
	printf("  ratio model/BLAS: %.1f (both on one host thread)\n", t_model / t_blas);
	printf("  modelled device time: %llu ns (compute %llu ns) = %.1f TFLOP/s\n",
	       (unsigned long long)(rec->end_ns - rec->start_ns),
	       (unsigned long long)rec->compute_ns, 2.0 * N * N * N / (rec->end_ns - rec->start_ns) / 1e3);
	printf("  max |model - BLAS| = %.3g (max |C| = %.3g, fp16 result rounding)\n", err, ref);
	bench_record("model_matmul_vs_blas", t_model / t_blas, "x",
		     "host time: card model emulating a 1024^3 fp16 matmul / host BLAS fp32 same shape",
		     "best of 3 each, one host thread each, same process", "model");
	bench_record("model_matmul_device_ns", (double)(rec->end_ns - rec->start_ns), "ns",
		     "modelled device time of the 1024^3 fp16 matmul LAUNCH on 32 cores",
		     "completion record end - start (deterministic)", "model");
	spyre_model_free(m);
	return err > ref * 1e-3 ? 1 : 0;
}
