// SPDX-License-Identifier: MIT
/*
 * The card's arithmetic is part of its definition, so results do not
 * depend on the backend: a float matmul sums, for each output, the fp32
 * products in ascending k onto the start value (+0, or C with ACC), each
 * step rounded to fp32 (no fused multiply-add); SUM_ROW sums pairwise
 * (a row of n splits into its first n/2 and the rest, recursively). Both
 * are checked bit for bit against host references.
 */
#include "harness.h"
#include <math.h>

#include "kernels.h"

/* IEEE binary16 to float (normal and subnormal values; no inf/NaN here). */
static float half_to_float(uint16_t h)
{
	int e = (h >> 10) & 0x1f;
	float m = (float)(h & 0x3ff);
	float v = e ? (1.0f + m / 1024.0f) * ldexpf(1.0f, e - 15) : m / 1024.0f * ldexpf(1.0f, -14);

	return h & 0x8000 ? -v : v;
}

static float sum_pairwise(const float *x, uint32_t n)
{
	if (n == 1)
		return x[0];
	return sum_pairwise(x, n / 2) + sum_pairwise(x + n / 2, n - n / 2);
}

static int run(spyre_device *dev, const void *img, size_t sz, struct spyre_buf *args,
	       unsigned int nargs)
{
	spyre_program *p;
	spyre_stream *s;
	int ret = spyre_program_load(dev, img, sz, &p);

	if (ret)
		return ret;
	ret = spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &s);
	if (!ret) {
		ret = spyre_launch_async(s, p, args, nargs, NULL);
		if (!ret)
			ret = spyre_stream_synchronize(s);
		spyre_stream_destroy(s);
	}
	spyre_program_destroy(p);
	return ret;
}

TEST(matmul_fp16_summation_order)
{
	enum { M = 16, N = 64, K = 256 };
	uint16_t *a = malloc(M * K * 2), *b = malloc(K * N * 2);
	float *c = malloc(M * N * 4);
	spyre_bo *da, *db, *dc;
	spyre_stream *s;
	struct spyre_buf args[3];
	unsigned int i, j, p, differ = 0, inexact = 0;
	size_t sz;
	void *img;

	ASSERT(a && b && c, "malloc");
	/* fp16 values in [-4, 4) with full mantissas: sums lose bits in any order */
	for (i = 0; i < M * K; i++)
		a[i] = (uint16_t)((pat(i, 1) & 0x80 ? 0x8000 : 0) | (0x3400 + (pat(i, 2) << 4 | (i & 15)) % 0x1000));
	for (i = 0; i < K * N; i++)
		b[i] = (uint16_t)((pat(i, 3) & 0x80 ? 0x8000 : 0) | (0x3400 + (pat(i, 4) << 4 | (i & 15)) % 0x1000));
	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &s));
	OK(spyre_bo_create(dev, M * K * 2, SPYRE_MEM_DEVICE, &da));
	OK(spyre_bo_create(dev, K * N * 2, SPYRE_MEM_DEVICE, &db));
	OK(spyre_bo_create(dev, M * N * 4, SPYRE_MEM_DEVICE, &dc));
	args[0] = buf_of(da, 0, M * K * 2);
	args[1] = buf_of(db, 0, K * N * 2);
	args[2] = buf_of(dc, 0, M * N * 4);
	OK(spyre_memcpy_from_host_async(s, &args[0], a, M * K * 2));
	OK(spyre_memcpy_from_host_async(s, &args[1], b, K * N * 2));
	OK(spyre_stream_synchronize(s));
	img = kern_matmul_f16(M, N, K, &sz);
	OK(run(dev, img, sz, args, 3));
	free(img);
	OK(spyre_memcpy_to_host(s, c, &args[2], M * N * 4));
	for (i = 0; i < M; i++) {
		for (j = 0; j < N; j++) {
			volatile float acc = 0.0f, prod;
			double exact = 0;

			for (p = 0; p < K; p++) {
				prod = half_to_float(a[i * K + p]) * half_to_float(b[p * N + j]);
				acc = acc + prod;
				exact += (double)half_to_float(a[i * K + p]) *
					 half_to_float(b[p * N + j]);
			}
			if (memcmp((const void *)&acc, &c[i * N + j], 4))
				differ++;
			if ((float)exact != acc)
				inexact++;	/* rounding happened: the order matters */
		}
	}
	CHECK(inexact > M * N / 4, "test data too tame: %u of %u sums exact", M * N - inexact,
	      M * N);
	CHECK(differ == 0, "%u of %u outputs differ from ascending-k fp32 summation", differ,
	      M * N);
	OK(spyre_stream_destroy(s));
	spyre_bo_destroy(da);
	spyre_bo_destroy(db);
	spyre_bo_destroy(dc);
	free(a);
	free(b);
	free(c);
}

TEST(sum_row_pairwise)
{
	enum { R = 4, C = 1000 };
	float *x = malloc(R * C * 4), y[R];
	spyre_bo *dx, *dy;
	spyre_stream *s;
	struct spyre_buf args[2];
	unsigned int r, i, seq_differs = 0;
	size_t sz;
	void *img;

	ASSERT(x, "malloc");
	for (i = 0; i < R * C; i++)
		x[i] = (float)(pat(i, 7) + 1) * (pat(i, 8) & 1 ? 1.001f : -0.999f) * (i % 7 + 1);
	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &s));
	OK(spyre_bo_create(dev, R * C * 4, SPYRE_MEM_DEVICE, &dx));
	OK(spyre_bo_create(dev, 4096, SPYRE_MEM_DEVICE, &dy));
	args[0] = buf_of(dx, 0, R * C * 4);
	args[1] = buf_of(dy, 0, R * 4);
	OK(spyre_memcpy_from_host_async(s, &args[0], x, R * C * 4));
	OK(spyre_stream_synchronize(s));
	img = kern_sum_rows_f32(R, C, &sz);
	OK(run(dev, img, sz, args, 2));
	free(img);
	OK(spyre_memcpy_to_host(s, y, &args[1], R * 4));
	for (r = 0; r < R; r++) {
		volatile float seq = 0.0f;
		float want = sum_pairwise(x + r * C, C);

		for (i = 0; i < C; i++)
			seq = seq + x[r * C + i];
		if (seq != want)
			seq_differs++;
		CHECK(!memcmp(&want, &y[r], 4), "row %u: %.9g, pairwise %.9g (sequential %.9g)", r,
		      y[r], want, (float)seq);
	}
	CHECK(seq_differs > 0, "test data too tame: pairwise equals sequential on every row");
	OK(spyre_stream_destroy(s));
	spyre_bo_destroy(dx);
	spyre_bo_destroy(dy);
	free(x);
}

/*
 * Scratchpad contents are undefined at launch start: with the poison
 * property (on in tests) a program that stores bytes it never wrote gets
 * 0xff, not the previous launch's data.
 */
TEST(scratchpad_poisoned_between_launches)
{
	spyre_bo *d;
	spyre_stream *s;
	struct spyre_buf a = { 0 }, b = { 0 };
	uint8_t out[256], in[256];
	size_t sz;
	void *img;
	int i, bad = 0;

	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &s));
	OK(spyre_bo_create(dev, 8192, SPYRE_MEM_DEVICE, &d));
	a = buf_of(d, 0, 4096);
	b = buf_of(d, 4096, 4096);
	for (i = 0; i < 256; i++)
		in[i] = (uint8_t)i;
	OK(spyre_memcpy_from_host_async(s, &a, in, 256));
	OK(spyre_stream_synchronize(s));
	/* Launch 1 leaves a's bytes in core 0's scratchpad. */
	img = kern_touch(0, &sz);
	OK(run(dev, img, sz, &a, 1));
	free(img);
	img = kern_store_scratchpad(256, &sz);
	OK(run(dev, img, sz, &b, 1));
	free(img);
	OK(spyre_memcpy_to_host(s, out, &b, 256));
	for (i = 0; i < 256; i++)
		if (out[i] != 0xff)
			bad++;
	CHECK(!bad, "%d of 256 bytes are not poison (first: 0x%02x, the previous launch left "
	      "0x%02x)", bad, out[0], in[0]);
	OK(spyre_stream_destroy(s));
	spyre_bo_destroy(d);
}

/*
 * The card's hazard check (on in tests): a program whose SFU reads the
 * scratchpad a LOAD writes, with no token between them, fails the launch
 * (-ENOEXEC, a malformed program) instead of giving results that depend on
 * timing; the same program with the token runs.
 */
TEST(hazard_check_refuses_racy_program)
{
	enum { V = 256 };
	float x[V], y[V];
	spyre_stream *s;
	spyre_bo *d;
	struct spyre_buf args[2];
	size_t sz;
	void *img;
	int i, ret;

	OK(spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &s));
	OK(spyre_bo_create(dev, 8192, SPYRE_MEM_DEVICE, &d));
	args[0] = buf_of(d, 0, V * 4);
	args[1] = buf_of(d, 4096, V * 4);
	for (i = 0; i < V; i++)
		x[i] = (float)i;
	OK(spyre_memcpy_from_host_async(s, &args[0], x, sizeof(x)));
	OK(spyre_stream_synchronize(s));
	img = kern_scale_racy_f32(V, true, &sz);
	OK(run(dev, img, sz, args, 2));
	free(img);
	OK(spyre_memcpy_to_host(s, y, &args[1], sizeof(y)));
	CHECK(y[0] == 1.0f && y[V - 1] == 2.0f * (V - 1) + 1.0f, "y = %g ... %g", y[0],
	      y[V - 1]);
	img = kern_scale_racy_f32(V, false, &sz);
	ret = run(dev, img, sz, args, 2);
	free(img);
	CHECK(ret == -ENOEXEC, "the racy program's launch returned %d, want -ENOEXEC", ret);
	OK(spyre_stream_destroy(s));
	spyre_bo_destroy(d);
}
