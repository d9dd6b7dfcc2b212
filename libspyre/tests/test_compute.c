// SPDX-License-Identifier: MIT
/* Launching card programs: results, workspace, refused and failing launches. */
#include "harness.h"
#include "kernels.h"

/* @size is read after @img was built (it is the builder's output). */
static int load(spyre_device *dev, void *img, const size_t *size, spyre_program **p)
{
	int ret = spyre_program_load(dev, img, *size, p);

	free(img);
	return ret;
}

TEST(launch_scale_and_add)
{
	enum { N = 1 << 18 };	/* 1 MiB of fp32, 32 cores */
	spyre_program *scale, *add;
	spyre_stream *dma, *comp;
	spyre_bo *hx, *hy, *dx, *dy, *dz;
	float *x, *y;
	void *m;
	struct spyre_buf bhx, bhy, bdx, bdy, bdz, args[3];
	size_t sz;
	int i, bad = -1;

	OK(load(dev, kern_scale_f32(N, 3.0f, 0.5f, &sz), &sz, &scale));
	OK(load(dev, kern_add_f32(N, &sz), &sz, &add));
	CHECK(spyre_program_num_args(scale) == 2 && spyre_program_num_args(add) == 3, "slots");
	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &dma));
	OK(spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &comp));
	OK(host_bo(dev, N * 4, &hx, &m));
	x = m;
	OK(host_bo(dev, N * 4, &hy, &m));
	y = m;
	OK(spyre_bo_create(dev, N * 4, SPYRE_MEM_DEVICE, &dx));
	OK(spyre_bo_create(dev, N * 4, SPYRE_MEM_DEVICE, &dy));
	OK(spyre_bo_create(dev, N * 4, SPYRE_MEM_DEVICE, &dz));
	for (i = 0; i < N; i++)
		x[i] = (float)(i % 1000) - 500.0f;
	bhx = spyre_bo_buf(hx);
	bhy = spyre_bo_buf(hy);
	bdx = spyre_bo_buf(dx);
	bdy = spyre_bo_buf(dy);
	bdz = spyre_bo_buf(dz);
	OK(spyre_memcpy_async(comp, &bdx, &bhx, N * 4));
	args[0] = bdx;
	args[1] = bdy;
	OK(spyre_launch_async(comp, scale, args, 2, NULL));	/* y = 3x + 0.5 */
	args[0] = bdx;
	args[1] = bdy;
	args[2] = bdz;
	OK(spyre_launch_async(comp, add, args, 3, NULL));	/* z = x + y = 4x + 0.5 */
	OK(spyre_memcpy_async(comp, &bhy, &bdz, N * 4));
	OK(spyre_stream_synchronize(comp));
	for (i = 0; i < N && bad < 0; i++)
		if (y[i] != 4.0f * x[i] + 0.5f)
			bad = i;
	CHECK(bad < 0, "z[%d] = %g, want %g", bad, bad < 0 ? 0 : y[bad],
	      bad < 0 ? 0 : 4.0f * x[bad] + 0.5f);
	/* A stream takes any operation: a launch on a DMA stream runs on compute. */
	OK(spyre_launch_async(dma, scale, args, 2, NULL));
	OK(spyre_stream_synchronize(dma));
	/* Launches with missing arguments are refused. */
	FAILS_WITH(spyre_launch_async(comp, add, args, 2, NULL), -EINVAL,
		   "uses 3 argument slots, 2 bound");
	args[0] = bhx;
	FAILS_WITH(spyre_launch_async(comp, scale, args, 2, NULL), -EINVAL,
		   "compute operands must be device memory");
	OK(spyre_stream_destroy(dma));
	OK(spyre_stream_destroy(comp));
	OK(spyre_program_destroy(scale));
	OK(spyre_program_destroy(add));
	spyre_bo_destroy(hx);
	spyre_bo_destroy(hy);
	spyre_bo_destroy(dx);
	spyre_bo_destroy(dy);
	spyre_bo_destroy(dz);
}

TEST(launch_with_workspace)
{
	enum { N = 4096 };
	spyre_program *p;
	spyre_stream *s;
	spyre_bo *h, *dx, *dy, *ws;
	float *f;
	void *m;
	struct spyre_buf bh, bx, by, bws, small, args[2];
	size_t sz;
	int i, bad = -1;

	OK(load(dev, kern_scale_via_ws_f32(N, -2.0f, 1.0f, &sz), &sz, &p));
	CHECK(spyre_program_workspace_size(p) == N * 4, "ws %llu",
	      (unsigned long long)spyre_program_workspace_size(p));
	OK(spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &s));
	OK(host_bo(dev, N * 4, &h, &m));
	f = m;
	OK(spyre_bo_create(dev, N * 4, SPYRE_MEM_DEVICE, &dx));
	OK(spyre_bo_create(dev, N * 4, SPYRE_MEM_DEVICE, &dy));
	OK(spyre_bo_create(dev, N * 4, SPYRE_MEM_DEVICE, &ws));
	for (i = 0; i < N; i++)
		f[i] = (float)i;
	bh = spyre_bo_buf(h);
	bx = spyre_bo_buf(dx);
	by = spyre_bo_buf(dy);
	bws = spyre_bo_buf(ws);
	args[0] = bx;
	args[1] = by;
	small = buf_of(ws, 0, 64);
	FAILS_WITH(spyre_launch_async(s, p, args, 2, NULL), -EINVAL, "workspace");
	FAILS_WITH(spyre_launch_async(s, p, args, 2, &small), -EINVAL, "workspace");
	OK(spyre_memcpy_async(s, &bx, &bh, N * 4));
	OK(spyre_launch_async(s, p, args, 2, &bws));
	OK(spyre_memcpy_async(s, &bh, &by, N * 4));
	OK(spyre_stream_synchronize(s));
	for (i = 0; i < N && bad < 0; i++)
		if (f[i] != -2.0f * i + 1.0f)
			bad = i;
	CHECK(bad < 0, "y[%d] = %g", bad, bad < 0 ? 0 : f[bad]);
	OK(spyre_stream_destroy(s));
	OK(spyre_program_destroy(p));
	spyre_bo_destroy(h);
	spyre_bo_destroy(dx);
	spyre_bo_destroy(dy);
	spyre_bo_destroy(ws);
}

/* The card confines a program to its slots: a stray read fails the job. */
TEST(launch_out_of_bounds_fails_job)
{
	spyre_program *p;
	spyre_stream *s;
	spyre_bo *d, *other;
	struct spyre_buf arg;
	size_t sz;

	OK(load(dev, kern_touch(4096 + 128, &sz), &sz, &p));
	OK(spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &s));
	OK(spyre_bo_create(dev, 8192, SPYRE_MEM_DEVICE, &d));
	OK(spyre_bo_create(dev, 8192, SPYRE_MEM_DEVICE, &other));
	arg = buf_of(d, 0, 4096);	/* the BO is bigger, the slot is not */
	OK(spyre_launch_async(s, p, &arg, 1, NULL));
	FAILS_WITH(spyre_stream_synchronize(s), -EFAULT, "failed on the card");
	/* The error is sticky and names the operation; later work still runs. */
	arg = buf_of(d, 0, 8192);
	OK(spyre_launch_async(s, p, &arg, 1, NULL));
	FAILS_WITH(spyre_stream_synchronize(s), -EFAULT, "operation 1 (spyre_launch_async)");
	{
		struct spyre_error_info info;

		OK(spyre_stream_get_error(s, &info));
		CHECK(info.error == -EFAULT && info.op == 1 &&
		      !strcmp(info.call, "spyre_launch_async"), "error %d, op %llu, call %s",
		      info.error, (unsigned long long)info.op, info.call);
		/* both backends report where the launch stopped (card 1.6) */
		CHECK(info.insn >= 0 && info.core >= 0, "insn %lld core %d",
		      (long long)info.insn, info.core);
		OK(spyre_device_get_error(dev, &info));
		CHECK(info.error == -EFAULT && info.op == 1, "device error %d, op %llu", info.error,
		      (unsigned long long)info.op);
		FAILS_WITH(spyre_device_synchronize(dev), -EFAULT, "operation 1");
		OK(spyre_stream_clear_error(s));
		OK(spyre_stream_get_error(s, &info));
		CHECK(info.error == 0, "error %d after clearing", info.error);
	}
	OK(spyre_launch_async(s, p, &arg, 1, NULL));
	OK(spyre_stream_synchronize(s));
	OK(spyre_device_synchronize(dev));
	OK(spyre_stream_destroy(s));
	OK(spyre_program_destroy(p));
	spyre_bo_destroy(d);
	spyre_bo_destroy(other);
}

/*
 * A failure is kept when later work on the stream completes before anyone
 * looks: the drm backend must not lose it when the kernel folds the
 * signalled points of the stream's timeline together.
 */
TEST(failure_followed_by_good_work_is_kept)
{
	struct spyre_error_info info;
	struct spyre_buf bad, good;
	spyre_program *p;
	spyre_stream *s;
	spyre_bo *d;
	size_t sz;
	int i;

	OK(load(dev, kern_touch(4096 + 128, &sz), &sz, &p));
	OK(spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &s));
	OK(spyre_bo_create(dev, 8192, SPYRE_MEM_DEVICE, &d));
	bad = buf_of(d, 0, 4096);
	good = buf_of(d, 0, 8192);
	OK(spyre_launch_async(s, p, &good, 1, NULL));
	OK(spyre_launch_async(s, p, &bad, 1, NULL));	/* operation 2 fails */
	for (i = 0; i < 4; i++)
		OK(spyre_launch_async(s, p, &good, 1, NULL));
	/* every launch ends before the library looks at a single point */
	FAILS_WITH(spyre_device_synchronize(dev), -EFAULT, "operation 2 (spyre_launch_async)");
	CHECK(strstr(spyre_last_error(), "at instruction") != NULL, "no location in \"%s\"",
	      spyre_last_error());
	OK(spyre_stream_get_error(s, &info));
	CHECK(info.error == -EFAULT && info.op == 2, "error %d, op %llu", info.error,
	      (unsigned long long)info.op);
	CHECK(info.insn >= 0 && info.core >= 0, "insn %lld core %d", (long long)info.insn,
	      info.core);
	/* cleared, it stays cleared: later good work brings nothing back */
	OK(spyre_stream_clear_error(s));
	OK(spyre_launch_async(s, p, &good, 1, NULL));
	OK(spyre_stream_synchronize(s));
	OK(spyre_stream_clear_error(s));
	OK(spyre_stream_destroy(s));
	OK(spyre_program_destroy(p));
	spyre_bo_destroy(d);
}

TEST(program_load_refused)
{
	spyre_program *p;
	uint8_t junk[256];
	size_t sz;
	void *img;

	memset(junk, 0x41, sizeof(junk));
	FAILS_WITH(spyre_program_load(dev, junk, sizeof(junk), &p), -EINVAL,
		   "not a version 1 Spyre program");
	FAILS_WITH(spyre_program_load(dev, junk, 8, &p), -EINVAL, "shorter than a program header");
	img = kern_scale_f32(1024, 1, 0, &sz);
	FAILS_WITH(spyre_program_load(dev, img, sz - 64, &p), -EINVAL, "instructions");
	free(img);
}
