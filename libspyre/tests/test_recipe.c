// SPDX-License-Identifier: MIT
/* Recipes: rebinding, host steps, events between streams, submits, errors. */
#include "harness.h"
#include "kernels.h"

enum { N = 1 << 16, BYTES = N * 4 };

struct prep {
	int calls;
	float add;	/* written into the input by the host step */
};

/* Host step: writes x[i] = i + add into argument 0 (a mapped host buffer). */
static void prep_input(void *user, const struct spyre_buf *args, unsigned int nargs)
{
	struct prep *p = user;
	void *m;
	float *x;
	int i;

	if (nargs < 1 || spyre_bo_map(args[0].bo, &m))
		return;
	x = (float *)((uint8_t *)m + args[0].offset);
	for (i = 0; i < N; i++)
		x[i] = (float)i + p->add;
	p->calls++;
}

/*
 * Stream 0 ("prep"): host step, H2D x -> ws[0], signal 0.
 * Stream 1 ("device"): wait 0, y_ws = 2 * x_ws + 1, D2H ws[1] -> y.
 * Arguments: 0 = host x, 1 = host y.
 */
static int build(spyre_device *dev, spyre_program *prog, struct prep *pp, spyre_recipe **out)
{
	struct spyre_operand cargs[2] = { spyre_op_ws(0, BYTES), spyre_op_ws(BYTES, BYTES) };
	spyre_recipe *r;
	int ret;

	ret = spyre_recipe_create(dev, 2, 2, 2 * BYTES, &r);
	if (ret)
		return ret;
	if ((ret = spyre_recipe_host(r, 0, prep_input, pp)) ||
	    (ret = spyre_recipe_h2d(r, 0, spyre_op_ws(0, BYTES), spyre_op_arg(0), BYTES)) ||
	    (ret = spyre_recipe_signal(r, 0, 0)) || (ret = spyre_recipe_wait(r, 1, 0)) ||
	    (ret = spyre_recipe_compute(r, 1, prog, cargs, 2, spyre_op_ws(0, 0))) ||
	    (ret = spyre_recipe_d2h(r, 1, spyre_op_arg(1), spyre_op_ws(BYTES, BYTES), BYTES)) ||
	    (ret = spyre_recipe_finalize(r))) {
		spyre_recipe_destroy(r);
		return ret;
	}
	*out = r;
	return 0;
}

TEST(recipe_rebind)
{
	enum { SETS = 3, LAUNCHES = 6 };
	struct prep pp = { 0, 0 };
	spyre_program *prog;
	spyre_recipe *r;
	spyre_stream *st[2];
	spyre_bo *x[SETS], *y[SETS];
	void *xm[SETS], *ym[SETS];
	struct spyre_device_stats s0, s1;
	unsigned int per = 0;
	size_t sz;
	void *img;
	int i, k, bad;

	img = kern_scale_f32(N, 2.0f, 1.0f, &sz);
	OK(spyre_program_load(dev, img, sz, &prog));
	free(img);
	OK(build(dev, prog, &pp, &r));
	OK(spyre_recipe_submits_per_launch(r, &per));
	CHECK(per == 2, "%u submits per launch, want one per stream", per);
	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &st[0]));
	OK(spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &st[1]));
	for (i = 0; i < SETS; i++) {
		OK(host_bo(dev, BYTES, &x[i], &xm[i]));
		OK(host_bo(dev, BYTES, &y[i], &ym[i]));
	}
	for (k = 0; k < LAUNCHES; k++) {
		struct spyre_buf args[2] = { spyre_bo_buf(x[k % SETS]), spyre_bo_buf(y[k % SETS]) };

		memset(ym[k % SETS], 0, BYTES);
		pp.add = (float)k;
		OK(spyre_device_get_stats(dev, &s0));
		OK(spyre_recipe_launch(r, st, args, 2));
		OK(spyre_device_get_stats(dev, &s1));
		OK(spyre_stream_synchronize(st[1]));
		/* The host step of this launch ran before the prep stream's submit. */
		CHECK(s1.submits - s0.submits <= 2, "launch %d issued %llu submits", k,
		      (unsigned long long)(s1.submits - s0.submits));
		bad = -1;
		for (i = 0; i < N && bad < 0; i++)
			if (((float *)ym[k % SETS])[i] != 2.0f * ((float)i + k) + 1.0f)
				bad = i;
		CHECK(bad < 0, "launch %d: y[%d] = %g", k, bad,
		      bad < 0 ? 0 : ((float *)ym[k % SETS])[bad]);
	}
	CHECK(pp.calls == LAUNCHES, "host step ran %d times", pp.calls);
	OK(spyre_stream_synchronize(st[0]));
	OK(spyre_device_get_stats(dev, &s1));
	/* Back-to-back launches without synchronising in between. */
	pp.calls = 0;
	for (k = 0; k < 12; k++) {
		struct spyre_buf args[2] = { spyre_bo_buf(x[k % SETS]), spyre_bo_buf(y[k % SETS]) };

		OK(spyre_recipe_launch(r, st, args, 2));
	}
	OK(spyre_stream_synchronize(st[1]));
	OK(spyre_stream_synchronize(st[0]));
	CHECK(pp.calls == 12, "host step ran %d times", pp.calls);
	OK(spyre_device_get_stats(dev, &s0));
	CHECK(s0.submits - s1.submits == 24, "12 launches issued %llu submits",
	      (unsigned long long)(s0.submits - s1.submits));
	OK(spyre_recipe_destroy(r));
	OK(spyre_stream_destroy(st[0]));
	OK(spyre_stream_destroy(st[1]));
	OK(spyre_program_destroy(prog));
	for (i = 0; i < SETS; i++) {
		spyre_bo_destroy(x[i]);
		spyre_bo_destroy(y[i]);
	}
}

/*
 * A recipe of device steps only (H2D on stream 0, event, compute and D2H on
 * stream 1) launched back to back without synchronising (on user queues:
 * two rings, no ioctl). Before every third launch the compute stream also
 * waits for an event of a third stream, so that launch's compute waits for
 * work outside the recipe; every launch's output is still its own.
 */
TEST(recipe_device_steps_back_to_back)
{
	enum { SETS = 6, LAUNCHES = 12 };
	struct spyre_operand cargs[2] = { spyre_op_ws(0, BYTES), spyre_op_ws(BYTES, BYTES) };
	struct spyre_device_stats s0, s1;
	spyre_program *prog;
	spyre_recipe *r;
	spyre_stream *st[3];
	spyre_event *ev;
	spyre_bo *x[SETS], *y[SETS], *scratch, *dscratch;
	void *xm[SETS], *ym[SETS], *sm;
	size_t sz;
	void *img;
	int i, k, bad;

	img = kern_scale_f32(N, 2.0f, 1.0f, &sz);
	OK(spyre_program_load(dev, img, sz, &prog));
	free(img);
	OK(spyre_recipe_create(dev, 2, 2, 2 * BYTES, &r));
	OK(spyre_recipe_h2d(r, 0, spyre_op_ws(0, BYTES), spyre_op_arg(0), BYTES));
	OK(spyre_recipe_signal(r, 0, 0));
	OK(spyre_recipe_wait(r, 1, 0));
	OK(spyre_recipe_compute(r, 1, prog, cargs, 2, spyre_op_ws(0, 0)));
	OK(spyre_recipe_d2h(r, 1, spyre_op_arg(1), spyre_op_ws(BYTES, BYTES), BYTES));
	OK(spyre_recipe_finalize(r));
	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &st[0]));
	OK(spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &st[1]));
	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &st[2]));
	OK(spyre_event_create(dev, 0, &ev));
	OK(host_bo(dev, BYTES, &scratch, &sm));
	OK(spyre_bo_create(dev, BYTES, SPYRE_MEM_DEVICE, &dscratch));
	for (i = 0; i < SETS; i++) {
		OK(host_bo(dev, BYTES, &x[i], &xm[i]));
		OK(host_bo(dev, BYTES, &y[i], &ym[i]));
		for (k = 0; k < N; k++)
			((float *)xm[i])[k] = (float)(k + i);
		memset(ym[i], 0, BYTES);
	}
	OK(spyre_device_get_stats(dev, &s0));
	for (k = 0; k < LAUNCHES; k++) {
		struct spyre_buf args[2] = { spyre_bo_buf(x[k % SETS]), spyre_bo_buf(y[k % SETS]) };

		if (k % 3 == 2) {
			struct spyre_buf hs = spyre_bo_buf(scratch), ds = spyre_bo_buf(dscratch);

			OK(spyre_memcpy_async(st[2], &ds, &hs, BYTES));
			OK(spyre_event_record(ev, st[2]));
			OK(spyre_stream_wait_event(st[1], ev));
		}
		OK(spyre_recipe_launch(r, st, args, 2));
	}
	OK(spyre_stream_synchronize(st[1]));
	OK(spyre_stream_synchronize(st[0]));
	OK(spyre_device_get_stats(dev, &s1));
	/* 2 per launch, and the third stream's 4 copies */
	CHECK(s1.submits - s0.submits == 2 * LAUNCHES + LAUNCHES / 3, "%llu submits",
	      (unsigned long long)(s1.submits - s0.submits));
	for (k = 0; k < SETS; k++) {
		bad = -1;
		for (i = 0; i < N && bad < 0; i++)
			if (((float *)ym[k])[i] != 2.0f * (float)(i + k) + 1.0f)
				bad = i;
		CHECK(bad < 0, "set %d: y[%d] = %g", k, bad, bad < 0 ? 0 : ((float *)ym[k])[bad]);
	}
	OK(spyre_event_destroy(ev));
	OK(spyre_recipe_destroy(r));
	for (i = 0; i < 3; i++)
		OK(spyre_stream_destroy(st[i]));
	OK(spyre_program_destroy(prog));
	for (i = 0; i < SETS; i++) {
		spyre_bo_destroy(x[i]);
		spyre_bo_destroy(y[i]);
	}
	spyre_bo_destroy(scratch);
	spyre_bo_destroy(dscratch);
}

/*
 * Timestamps around a copy ride in the copy's submission, and a plain event
 * recorded after it submits nothing. @h (mapped at @m) is a host BO of
 * BYTES, @d a device BO.
 */
static void recipe_timestamps(spyre_device *dev, spyre_stream *s, spyre_bo *h, void *m,
			      spyre_bo *d)
{
	struct spyre_operand t0 = spyre_op_arg(0), t1 = spyre_op_arg(0), src = spyre_op_arg(0);
	struct spyre_buf arg = spyre_bo_buf(h);
	struct spyre_device_stats a, b;
	uint64_t *ts = m;
	unsigned int per = 0;
	spyre_recipe *r;
	spyre_event *ev;

	t0.size = t1.size = 8;
	t1.offset = 8;
	src.offset = 4096;
	src.size = 4096;
	OK(spyre_recipe_create(dev, 1, 1, 0, &r));
	OK(spyre_recipe_timestamp(r, 0, t0));
	OK(spyre_recipe_h2d(r, 0, spyre_op_buf(spyre_bo_buf(d)), src, 4096));
	OK(spyre_recipe_timestamp(r, 0, t1));
	OK(spyre_recipe_finalize(r));
	OK(spyre_recipe_submits_per_launch(r, &per));
	CHECK(per == 1, "timestamps and a copy on one stream: %u submits", per);
	OK(spyre_event_create(dev, 0, &ev));
	ts[0] = ts[1] = 0;
	OK(spyre_device_get_stats(dev, &a));
	OK(spyre_recipe_launch(r, &s, &arg, 1));
	OK(spyre_event_record(ev, s));
	OK(spyre_device_get_stats(dev, &b));
	CHECK(b.submits - a.submits == 1, "launch + plain event record: %llu submits",
	      (unsigned long long)(b.submits - a.submits));
	OK(spyre_event_synchronize(ev));
	CHECK(ts[0] && ts[1] >= ts[0], "timestamps %llu, %llu", (unsigned long long)ts[0],
	      (unsigned long long)ts[1]);
	OK(spyre_event_destroy(ev));
	OK(spyre_recipe_destroy(r));
}

TEST(recipe_errors)
{
	struct prep pp = { 0, 0 };
	spyre_program *prog;
	spyre_recipe *r, *c;
	spyre_stream *st[2];
	spyre_bo *h, *d;
	void *m;
	struct spyre_buf args[2];
	size_t sz;
	void *img;

	img = kern_scale_f32(N, 2.0f, 1.0f, &sz);
	OK(spyre_program_load(dev, img, sz, &prog));
	free(img);
	OK(build(dev, prog, &pp, &r));
	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &st[0]));
	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &st[1]));
	OK(host_bo(dev, BYTES, &h, &m));
	OK(spyre_bo_create(dev, BYTES, SPYRE_MEM_DEVICE, &d));
	args[0] = spyre_bo_buf(h);
	args[1] = spyre_bo_buf(h);
	OK(spyre_stream_destroy(st[1]));
	OK(spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &st[1]));
	FAILS_WITH(spyre_recipe_launch(r, st, args, 1), -EINVAL, "1 arguments bound");
	args[1] = spyre_bo_buf(d);
	FAILS_WITH(spyre_recipe_launch(r, st, args, 2), -EINVAL,
		   "argument 1 is device memory, a step needs host memory");
	args[1] = buf_of(h, 0, 64);
	FAILS_WITH(spyre_recipe_launch(r, st, args, 2), -EINVAL, "argument 1 has 64 bytes");
	FAILS_WITH(spyre_recipe_h2d(r, 0, spyre_op_arg(0), spyre_op_arg(1), 4), -EBUSY,
		   "finalized");
	CHECK(pp.calls == 0, "refused launches ran host work");
	/* A cycle between two streams cannot be one submit per stream. */
	OK(spyre_recipe_create(dev, 2, 0, 8192, &c));
	OK(spyre_recipe_signal(c, 0, 1));
	OK(spyre_recipe_signal(c, 1, 2));
	OK(spyre_recipe_wait(c, 0, 2));
	OK(spyre_recipe_wait(c, 1, 1));
	FAILS_WITH(spyre_recipe_finalize(c), -EDEADLK, "cycle");
	FAILS_WITH(spyre_recipe_wait(c, 0, 9), -EINVAL, "no signal of event 9");
	FAILS_WITH(spyre_recipe_d2d(c, 0, spyre_op_ws(8000, 400), spyre_op_ws(0, 400), 400),
		   -EINVAL, "outside the 8192-byte workspace");
	FAILS_WITH(spyre_recipe_d2d(c, 5, spyre_op_ws(0, 4), spyre_op_ws(0, 4), 4), -EINVAL,
		   "stream slot 5");
	FAILS_WITH(spyre_recipe_timestamp(c, 0, spyre_op_ws(0, 8)), -EINVAL,
		   "must be host memory");
	OK(spyre_recipe_destroy(c));
	recipe_timestamps(dev, st[0], h, m, d);
	OK(spyre_recipe_destroy(r));
	OK(spyre_stream_destroy(st[0]));
	OK(spyre_stream_destroy(st[1]));
	OK(spyre_program_destroy(prog));
	spyre_bo_destroy(h);
	spyre_bo_destroy(d);
}

/* A launch binds and submits from preallocated state: no heap allocation. */
TEST(recipe_launch_allocates_nothing)
{
	struct prep pp = { 0, 0 };
	spyre_program *prog;
	spyre_recipe *r;
	spyre_stream *st[2];
	spyre_bo *x, *y;
	void *xm, *ym;
	unsigned long before, during = 0;
	size_t sz;
	void *img;
	int k;

	img = kern_scale_f32(N, 2.0f, 1.0f, &sz);
	OK(spyre_program_load(dev, img, sz, &prog));
	free(img);
	OK(build(dev, prog, &pp, &r));
	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &st[0]));
	OK(spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &st[1]));
	OK(host_bo(dev, BYTES, &x, &xm));
	OK(host_bo(dev, BYTES, &y, &ym));
	for (k = 0; k < 24; k++) {
		struct spyre_buf args[2] = { spyre_bo_buf(x), spyre_bo_buf(y) };

		before = test_allocs;
		OK(spyre_recipe_launch(r, st, args, 2));
		if (k >= 4)	/* after warm-up (first-use lazy state of libc) */
			during += test_allocs - before;
		if (k % 3 == 0) {
			OK(spyre_stream_synchronize(st[1]));
			OK(spyre_stream_synchronize(st[0]));
		}
	}
	OK(spyre_stream_synchronize(st[1]));
	OK(spyre_stream_synchronize(st[0]));
	CHECK(during == 0, "20 launches allocated %lu times", during);
	/* The counter does count: building a recipe allocates. */
	before = test_allocs;
	{
		spyre_recipe *r2;

		OK(spyre_recipe_create(dev, 1, 0, 0, &r2));
		OK(spyre_recipe_destroy(r2));
	}
	CHECK(test_allocs > before, "allocation counter is not counting");
	CHECK(pp.calls == 24, "host step ran %d times", pp.calls);
	OK(spyre_recipe_destroy(r));
	OK(spyre_stream_destroy(st[0]));
	OK(spyre_stream_destroy(st[1]));
	OK(spyre_program_destroy(prog));
	spyre_bo_destroy(x);
	spyre_bo_destroy(y);
}

/*
 * A step binds 64 argument slots (card interface 1.7): the program gathers
 * 63 ranges, each bound at launch to its own place, into slot 0; a step or
 * a launch of 65 is refused.
 */
TEST(recipe_step_binds_64_slots)
{
	enum { SLOTS = 64, PIECE = 256 };
	struct spyre_device_props props;
	struct spyre_operand cargs[SLOTS + 1];
	struct spyre_buf args[SLOTS + 1];
	spyre_bo *src, *dst, *hin, *hout;
	uint8_t *in, *out;
	spyre_program *p;
	spyre_recipe *r;
	spyre_stream *s;
	void *img;
	size_t sz;
	int64_t bad = -1;
	unsigned int k;

	OK(spyre_device_get_props(dev, &props));
	CHECK(props.max_args == SLOTS, "max_args %u", props.max_args);
	img = kern_collect(SLOTS, PIECE, &sz);
	OK(spyre_program_load(dev, img, sz, &p));
	free(img);
	OK(spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &s));
	OK(host_bo(dev, SLOTS * PIECE * 2, &hin, (void **)&in));
	OK(host_bo(dev, SLOTS * PIECE, &hout, (void **)&out));
	OK(spyre_bo_create(dev, SLOTS * PIECE * 2, SPYRE_MEM_DEVICE, &src));
	OK(spyre_bo_create(dev, SLOTS * PIECE, SPYRE_MEM_DEVICE, &dst));
	fill_pat(in, SLOTS * PIECE * 2, 7, 0);
	memset(out, 0, SLOTS * PIECE);
	{
		struct spyre_buf a = spyre_bo_buf(src), b = spyre_bo_buf(hin);

		OK(spyre_memcpy_async(s, &a, &b, SLOTS * PIECE * 2));
	}
	for (k = 0; k < SLOTS; k++)
		cargs[k] = spyre_op_arg(k);
	cargs[SLOTS] = spyre_op_arg(0);
	OK(spyre_recipe_create(dev, 1, SLOTS, 0, &r));
	FAILS_WITH(spyre_recipe_compute(r, 0, p, cargs, SLOTS + 1, spyre_op_ws(0, 0)), -E2BIG,
		   "at most 64");
	OK(spyre_recipe_compute(r, 0, p, cargs, SLOTS, spyre_op_ws(0, 0)));
	OK(spyre_recipe_finalize(r));
	/* slot k (k >= 1) is bound to the odd piece 2k - 1 of src, in reverse */
	args[0] = spyre_bo_buf(dst);
	for (k = 1; k < SLOTS; k++)
		args[k] = buf_of(src, (uint64_t)(2 * (SLOTS - k) - 1) * PIECE, PIECE);
	args[SLOTS] = args[1];
	OK(spyre_recipe_launch(r, &s, args, SLOTS));
	{
		struct spyre_buf a = spyre_bo_buf(hout), b = spyre_bo_buf(dst);

		OK(spyre_memcpy_async(s, &a, &b, SLOTS * PIECE));
	}
	OK(spyre_stream_synchronize(s));
	for (k = 1; k < SLOTS && bad < 0; k++) {
		uint64_t from = (uint64_t)(2 * (SLOTS - k) - 1) * PIECE;

		if (memcmp(out + k * PIECE, in + from, PIECE))
			bad = k;
	}
	CHECK(bad < 0, "slot %lld's piece differs", (long long)bad);
	/* a direct launch takes the same 64, not 65 */
	FAILS_WITH(spyre_launch_async(s, p, args, SLOTS + 1, NULL), -E2BIG, "at most 64");
	OK(spyre_launch_async(s, p, args, SLOTS, NULL));
	OK(spyre_stream_synchronize(s));
	OK(spyre_recipe_destroy(r));
	OK(spyre_stream_destroy(s));
	OK(spyre_program_destroy(p));
	spyre_bo_destroy(src);
	spyre_bo_destroy(dst);
	spyre_bo_destroy(hin);
	spyre_bo_destroy(hout);
}
