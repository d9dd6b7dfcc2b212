// SPDX-License-Identifier: MIT
/*
 * Roofline report of the op library's matrix kernels: for each kernel and
 * shape, the modelled device time of one warm eager call (timing events
 * around it) against its roofline, the larger of
 *
 *   bytes / 200 GB/s   every operand byte read and every result byte
 *                      written once through LPDDR5 (int8 weights: one
 *                      byte each, plus their per-channel scales)
 *   FLOPs / peak       2 per multiply-accumulate at the PE arrays' rate
 *                      (32 cores x 1 GHz x 1024 fp16 / 4096 int8 MAC)
 *
 * plus the 2 us LAUNCH latency of the one launch the kernel needs. Prints
 * time, bytes, FLOPs, the roofline, modelled / roofline and the fraction
 * of peak reached; each row is an @bench record for bench/report.
 *
 *   SPYRE_BACKEND=sim build/libspyre/bench/ops-roofline [filter]
 *
 * @filter (optional): run only the rows whose name contains it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_record.h"
#include "spyre/ops.h"
#include "spyre/spyre.h"

/* Documentation/spyre-card.rst, "Timing parameters". */
#define DRAM_BYTES_PER_NS 200.0
#define LAUNCH_NS 2000.0
#define CORES 32.0
#define GHZ 1.0

#define DIE(x)                                                                              \
	do {                                                                                \
		int r_ = (x);                                                               \
		if (r_) {                                                                   \
			fprintf(stderr, "ops-roofline: %s: %s\n", #x, spyre_last_error()); \
			exit(1);                                                            \
		}                                                                           \
	} while (0)

/* K_LINEAR_W8: spyre_op_linear_w8, int8 weight + per-channel scale */
enum kind { K_MM, K_LINEAR, K_LINEAR_BIAS_GELU, K_LINEAR_W8, K_SDPA };

struct row {
	const char *name;
	enum kind kind;
	enum spyre_dtype dt;	/* operands (A; B too unless @wdt) */
	enum spyre_dtype wdt;	/* B / weight dtype when it differs (0: same) */
	int64_t batch, m, n, k;	/* sdpa: heads, Lq, Lk, D */
	int causal;
};

static const struct row rows[] = {
	{ "mm fp16 512x512x512", K_MM, SPYRE_FLOAT16, 0, 1, 512, 512, 512, 0 },
	{ "mm fp16 1024x1024x1024", K_MM, SPYRE_FLOAT16, 0, 1, 1024, 1024, 1024, 0 },
	{ "mm fp16 2048x2048x2048", K_MM, SPYRE_FLOAT16, 0, 1, 2048, 2048, 2048, 0 },
	{ "mm fp16 1x768 @ 768x3072 (decode)", K_MM, SPYRE_FLOAT16, 0, 1, 1, 3072, 768, 0 },
	{ "mm fp16 1000x1000x1000 (odd)", K_MM, SPYRE_FLOAT16, 0, 1, 1000, 1000, 1000, 0 },
	{ "mm int8 2048x2048x2048 (int32 out)", K_MM, SPYRE_INT8, 0, 1, 2048, 2048, 2048, 0 },
	{ "mm int8 2048x2048x8192 (int32 out)", K_MM, SPYRE_INT8, 0, 1, 2048, 2048, 8192, 0 },
	{ "mm fp32 1024x1024x1024", K_MM, SPYRE_FLOAT32, 0, 1, 1024, 1024, 1024, 0 },
	{ "linear fp16 1x768 -> 3072 (decode)", K_LINEAR, SPYRE_FLOAT16, 0, 1, 1, 3072, 768, 0 },
	{ "linear fp16 1x3072 -> 768 (decode)", K_LINEAR, SPYRE_FLOAT16, 0, 1, 1, 768, 3072, 0 },
	{ "linear w8 fp16 1x768 -> int8 3072 (decode)", K_LINEAR_W8, SPYRE_FLOAT16, SPYRE_INT8,
	  1, 1, 3072, 768, 0 },
	{ "linear w8 fp16 1x3072 -> int8 768 (decode)", K_LINEAR_W8, SPYRE_FLOAT16, SPYRE_INT8,
	  1, 1, 768, 3072, 0 },
	{ "linear w8 fp16 1x768 -> int8 32000 (decode llama lm_head)", K_LINEAR_W8, SPYRE_FLOAT16,
	  SPYRE_INT8, 1, 1, 32000, 768, 0 },
	{ "linear w8 fp16 512x768 -> int8 3072 (prefill)", K_LINEAR_W8, SPYRE_FLOAT16,
	  SPYRE_INT8, 1, 512, 3072, 768, 0 },
	{ "linear fp16 512x768 -> 3072 +bias+gelu (prefill)", K_LINEAR_BIAS_GELU, SPYRE_FLOAT16,
	  0, 1, 512, 3072, 768, 0 },
	{ "linear fp16 512x768 -> 768 (prefill)", K_LINEAR, SPYRE_FLOAT16, 0, 1, 512, 768, 768,
	  0 },
	{ "linear fp16 512x768 -> 2304 (prefill qkv)", K_LINEAR, SPYRE_FLOAT16, 0, 1, 512, 2304,
	  768, 0 },
	{ "linear fp16 512x3072 -> 768 (prefill mlp down)", K_LINEAR, SPYRE_FLOAT16, 0, 1, 512,
	  768, 3072, 0 },
	{ "linear fp16 512x768 -> 32000 (prefill llama lm_head)", K_LINEAR, SPYRE_FLOAT16, 0, 1,
	  512, 32000, 768, 0 },
	{ "linear fp16 512x768 -> 50257 (prefill lm_head)", K_LINEAR, SPYRE_FLOAT16, 0, 1, 512,
	  50257, 768, 0 },
	{ "bmm fp16 12 x 512x64 @ 64x512 (scores)", K_MM, SPYRE_FLOAT16, 0, 12, 512, 512, 64, 0 },
	{ "bmm fp16 12 x 512x512 @ 512x64 (p @ v)", K_MM, SPYRE_FLOAT16, 0, 12, 512, 64, 512, 0 },
	{ "bmm fp16 8 x 1024^3", K_MM, SPYRE_FLOAT16, 0, 8, 1024, 1024, 1024, 0 },
	{ "attention fp16 12 heads 512 tokens d64 causal (prefill)", K_SDPA, SPYRE_FLOAT16, 0,
	  12, 512, 512, 64, 1 },
	{ "attention fp16 12 heads 1 query, 512 keys d64 (decode)", K_SDPA, SPYRE_FLOAT16, 0, 12,
	  1, 512, 64, 0 },
};

static double peak_flops_per_ns(enum spyre_dtype dt)
{
	double macs = dt == SPYRE_INT8 ? 4096 : dt == SPYRE_FLOAT32 ? 256 : 1024;

	return 2.0 * macs * CORES * GHZ;
}

struct bufs {
	spyre_bo *bo[5];
	unsigned int n;
};

static struct spyre_tensor mk(spyre_device *dev, spyre_stream *s, struct bufs *b,
			      enum spyre_dtype dt, unsigned int nd, const int64_t *shape)
{
	struct spyre_tensor t;
	uint64_t bytes = spyre_dtype_bytes(dt);
	unsigned int i;

	for (i = 0; i < nd; i++)
		bytes *= (uint64_t)shape[i];
	DIE(spyre_bo_create(dev, bytes, SPYRE_MEM_DEVICE, &b->bo[b->n]));
	/* small finite values in every float type, 0x3c00 = 1.0 in fp16 */
	DIE(spyre_memset32_async(s, &(struct spyre_buf){ b->bo[b->n], 0, (bytes + 3) & ~3ull },
				 dt == SPYRE_INT8 ? 0x01020304u : 0x2c002c00u,
				 (bytes + 3) & ~3ull));
	t = spyre_tensor_make(dt, nd, shape, spyre_bo_buf(b->bo[b->n]));
	b->n++;
	return t;
}

static int call(spyre_ops *ops, spyre_stream *s, const struct row *r, struct spyre_tensor *t)
{
	switch (r->kind) {
	case K_MM:
		return spyre_op_matmul(ops, s, &t[0], &t[1], &t[2]);
	case K_LINEAR:
		return spyre_op_linear(ops, s, &t[0], &t[1], NULL, &t[2]);
	case K_LINEAR_BIAS_GELU:
		return spyre_op_linear(ops, s, &t[0], &t[1], &t[3], &t[2]) ?:
		       spyre_op_unary(ops, s, SPYRE_UN_GELU, &t[2], &t[2]);
	case K_LINEAR_W8:
		return spyre_op_linear_w8(ops, s, &t[0], &t[1], &t[3], NULL, &t[2]);
	case K_SDPA:
		return spyre_op_sdpa(ops, s, &t[0], &t[1], &t[3], NULL, r->causal, 0, &t[2]);
	}
	return -1;
}

static void run_row(spyre_device *dev, spyre_stream *s, spyre_ops *ops, const struct row *r)
{
	enum spyre_dtype wdt = r->wdt ? r->wdt : r->dt;
	enum spyre_dtype odt = r->dt == SPYRE_INT8 ? SPYRE_INT32 : r->dt;
	struct spyre_tensor t[4];
	struct bufs b = { 0 };
	spyre_event *e0, *e1;
	double bytes, flops, roof, ns_d;
	uint64_t ns;
	char how[256], ratio[160], nm[200];
	unsigned int i, es = spyre_dtype_bytes(r->dt), ws = spyre_dtype_bytes(wdt);
	unsigned int os = spyre_dtype_bytes(odt);

	if (r->kind == K_SDPA) {
		int64_t q[3] = { r->batch, r->m, r->k }, kv[3] = { r->batch, r->n, r->k };

		t[0] = mk(dev, s, &b, r->dt, 3, q);
		t[1] = mk(dev, s, &b, r->dt, 3, kv);
		t[3] = mk(dev, s, &b, r->dt, 3, kv);
		t[2] = mk(dev, s, &b, r->dt, 3, q);
		bytes = (double)r->batch * (2.0 * r->m * r->k + 2.0 * r->n * r->k) * es;
		flops = 4.0 * r->batch * r->m * r->n * r->k;
	} else {
		int64_t a[3] = { r->batch, r->m, r->k }, o[3] = { r->batch, r->m, r->n };
		int64_t w[3] = { r->batch, r->k, r->n }, wl[2] = { r->n, r->k }, bias[1] = { r->n };
		unsigned int nd = r->batch > 1 ? 3 : 2, off = 3 - nd;

		t[0] = mk(dev, s, &b, r->dt, nd, a + off);
		if (r->kind == K_MM)
			t[1] = mk(dev, s, &b, wdt, nd, w + off);
		else
			t[1] = mk(dev, s, &b, wdt, 2, wl);
		t[2] = mk(dev, s, &b, odt, nd, o + off);
		bytes = (double)r->batch * ((double)r->m * r->k * es + (double)r->m * r->n * os) +
			(double)(r->kind == K_MM ? r->batch : 1) * r->k * r->n * ws;
		if (r->kind == K_LINEAR_BIAS_GELU || r->kind == K_LINEAR_W8) {
			t[3] = mk(dev, s, &b, r->dt, 1, bias);
			bytes += (double)r->n * es;
		}
		flops = 2.0 * r->batch * r->m * r->n * r->k;
	}
	DIE(spyre_event_create(dev, SPYRE_EVENT_TIMING, &e0));
	DIE(spyre_event_create(dev, SPYRE_EVENT_TIMING, &e1));
	DIE(call(ops, s, r, t));	/* warm: the program is built and cached */
	DIE(spyre_stream_synchronize(s));
	DIE(spyre_event_record(e0, s));
	DIE(call(ops, s, r, t));
	DIE(spyre_event_record(e1, s));
	DIE(spyre_event_synchronize(e1));
	DIE(spyre_event_elapsed_ns(e0, e1, &ns));
	ns_d = (double)ns;
	roof = bytes / DRAM_BYTES_PER_NS;
	if (flops / peak_flops_per_ns(r->dt) > roof)
		roof = flops / peak_flops_per_ns(r->dt);
	roof += LAUNCH_NS;
	printf("%-58s %10.1f us %9.2f MB %9.3f GFLOP roofline %9.1f us  %5.2fx  %5.1f%% of "
	       "peak\n", r->name, ns_d / 1e3, bytes / 1e6, flops / 1e9, roof / 1e3, ns_d / roof,
	       100.0 * flops / peak_flops_per_ns(r->dt) / ns_d);
	snprintf(how, sizeof(how),
		 "timing events around one warm eager call; %.0f bytes, %.0f FLOPs; roofline "
		 "max(bytes / 200 GB/s, FLOPs / peak) + 2 us launch = %.1f us", bytes, flops,
		 roof / 1e3);
	snprintf(nm, sizeof(nm), "roofline: %s, modelled device time", r->name);
	bench_record(nm, ns_d, "ns", "modelled device time", how, "sim");
	snprintf(nm, sizeof(nm), "roofline: %s, modelled / roofline", r->name);
	snprintf(ratio, sizeof(ratio), "modelled (%.1f us) / roofline (%.1f us)", ns_d / 1e3,
		 roof / 1e3);
	bench_record(nm, ns_d / roof, "x", ratio, how, "sim");
	snprintf(nm, sizeof(nm), "roofline: %s, fraction of peak", r->name);
	snprintf(ratio, sizeof(ratio), "FLOPs / peak (%.1f us) / modelled (%.1f us)",
		 flops / peak_flops_per_ns(r->dt) / 1e3, ns_d / 1e3);
	bench_record(nm, flops / peak_flops_per_ns(r->dt) / ns_d, "x", ratio, how, "sim");
	spyre_event_destroy(e0);
	spyre_event_destroy(e1);
	for (i = 0; i < b.n; i++)
		spyre_bo_destroy(b.bo[i]);
}

int main(int argc, char **argv)
{
	const char *filter = argc > 1 ? argv[1] : NULL;
	spyre_device *dev;
	spyre_stream *s;
	spyre_ops *ops;
	unsigned int i;

	DIE(spyre_device_open(0, &dev));
	DIE(spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &s));
	DIE(spyre_ops_create(dev, 0, &ops));
	printf("op library roofline (modelled device time, one warm eager call; peak fp16 "
	       "65.5 TFLOP/s, int8 262 TOP/s, LPDDR5 200 GB/s, +2 us launch)\n");
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (!filter || strstr(rows[i].name, filter))
			run_row(dev, s, ops, &rows[i]);
	spyre_ops_destroy(ops);
	spyre_stream_destroy(s);
	return spyre_device_close(dev) ? 1 : 0;
}
