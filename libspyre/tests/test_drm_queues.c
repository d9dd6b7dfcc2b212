// SPDX-License-Identifier: MIT
/*
 * The drm backend's two submission paths, each forced with
 * SPYRE_DRM_QUEUES: the kernel's queues (a SUBMIT ioctl per operation) and
 * user-mode queues (descriptors written into the process's own rings, a
 * doorbell write, no ioctl). The same work must give the same results and
 * the same errors on both; only the ioctl count differs.
 */
#include <stdlib.h>

#include "harness.h"
#include "kernels.h"
#include "spyre_hw.h"

/* Copy in, scale on a compute stream behind an event, copy out: y = 2x + 1. */
static void pipeline(spyre_device *d, const char *mode)
{
	spyre_stream *dma, *comp;
	spyre_event *in, *done;
	spyre_program *prog;
	spyre_bo *h, *x;
	struct spyre_buf a[2], hb, xb;
	float *m;
	void *img;
	size_t sz;
	int i, bad = -1;

	img = kern_scale_f32(1024, 2.0f, 1.0f, &sz);
	OK(spyre_program_load(d, img, sz, &prog));
	free(img);
	OK(spyre_stream_create(d, SPYRE_ENGINE_DMA, &dma));
	OK(spyre_stream_create(d, SPYRE_ENGINE_COMPUTE, &comp));
	OK(spyre_event_create(d, 0, &in));
	OK(spyre_event_create(d, 0, &done));
	OK(host_bo(d, 8192, &h, (void **)&m));
	OK(spyre_bo_create(d, 8192, SPYRE_MEM_DEVICE, &x));
	for (i = 0; i < 1024; i++)
		m[i] = (float)i - 100.0f;
	hb = buf_of(h, 0, 4096);
	xb = buf_of(x, 0, 4096);
	OK(spyre_memcpy_async(dma, &xb, &hb, 4096));
	OK(spyre_event_record(in, dma));
	OK(spyre_stream_wait_event(comp, in));
	a[0] = buf_of(x, 0, 4096);
	a[1] = buf_of(x, 4096, 4096);
	OK(spyre_launch_async(comp, prog, a, 2, NULL));
	OK(spyre_event_record(done, comp));
	OK(spyre_stream_wait_event(dma, done));
	hb = buf_of(h, 4096, 4096);
	xb = buf_of(x, 4096, 4096);
	OK(spyre_memcpy_async(dma, &hb, &xb, 4096));
	OK(spyre_stream_synchronize(dma));
	for (i = 0; i < 1024 && bad < 0; i++)
		if (m[1024 + i] != 2.0f * ((float)i - 100.0f) + 1.0f)
			bad = i;
	CHECK(bad < 0, "%s queues: y[%d] = %g", mode, bad, bad < 0 ? 0.0 : m[1024 + bad]);
	OK(spyre_event_destroy(in));
	OK(spyre_event_destroy(done));
	OK(spyre_stream_destroy(dma));
	OK(spyre_stream_destroy(comp));
	OK(spyre_program_destroy(prog));
	OK(spyre_bo_destroy(h));
	OK(spyre_bo_destroy(x));
}

/*
 * 64 fills and a synchronize: how many ioctls did they take? Each fill is
 * 32 MiB, about 170 us of modelled time (much longer than libspyre's 50 us
 * poll before it sleeps in the driver; the suite paces the card), so a wait
 * that slept once per job instead of once per ring shows here.
 */
#define FILL_BYTES (32u << 20)
static void ioctls_of_fills(spyre_device *d, uint64_t *n)
{
	struct spyre_device_stats st0, st1;
	spyre_stream *s;
	spyre_bo *x;
	struct spyre_buf b;
	int i;

	OK(spyre_stream_create(d, SPYRE_ENGINE_DMA, &s));
	OK(spyre_bo_create(d, FILL_BYTES, SPYRE_MEM_DEVICE, &x));
	b = spyre_bo_buf(x);
	OK(spyre_memset_async(s, &b, 0, 4, FILL_BYTES));
	OK(spyre_stream_synchronize(s));
	OK(spyre_device_get_stats(d, &st0));
	for (i = 0; i < 64; i++)
		OK(spyre_memset_async(s, &b, (uint32_t)i, 4, FILL_BYTES));
	OK(spyre_stream_synchronize(s));
	OK(spyre_device_get_stats(d, &st1));
	OK(spyre_stream_destroy(s));
	OK(spyre_bo_destroy(x));
	*n = st1.ioctls - st0.ioctls;
}

/*
 * A launch that reads past its slot fails with the place it stopped; a
 * copy on another stream that waits for it fails with its error (on user
 * queues it may have run if it was written while the launch ran); one
 * written after the failure is known does not run on either path.
 */
static void faults(spyre_device *d, const char *mode)
{
	struct spyre_error_info info;
	spyre_stream *comp, *dma;
	spyre_program *p;
	spyre_event *ev;
	spyre_bo *x, *h;
	struct spyre_buf arg, hb, xb;
	void *img, *m;
	size_t sz;
	int ret;

	img = kern_touch(4096 + 128, &sz);
	OK(spyre_program_load(d, img, sz, &p));
	free(img);
	OK(spyre_stream_create(d, SPYRE_ENGINE_COMPUTE, &comp));
	OK(spyre_stream_create(d, SPYRE_ENGINE_DMA, &dma));
	OK(spyre_event_create(d, 0, &ev));
	OK(spyre_bo_create(d, 8192, SPYRE_MEM_DEVICE, &x));
	OK(host_bo(d, 4096, &h, &m));
	arg = buf_of(x, 0, 4096);
	OK(spyre_launch_async(comp, p, &arg, 1, NULL));
	OK(spyre_event_record(ev, comp));
	OK(spyre_stream_wait_event(dma, ev));
	hb = spyre_bo_buf(h);
	xb = buf_of(x, 4096, 4096);
	OK(spyre_memcpy_async(dma, &hb, &xb, 4096));
	ret = spyre_stream_synchronize(dma);
	CHECK(ret == -EFAULT, "%s queues: the dependent copy returned %d", mode, ret);
	FAILS_WITH(spyre_stream_synchronize(comp), -EFAULT, "spyre_launch_async");
	OK(spyre_stream_get_error(comp, &info));
	CHECK(info.error == -EFAULT && info.insn >= 0 && info.core >= 0,
	      "%s queues: error %d at insn %lld core %d", mode, info.error,
	      (long long)info.insn, info.core);
	OK(spyre_stream_clear_error(dma));
	memset(m, 0x5a, 4096);
	OK(spyre_stream_wait_event(dma, ev));
	OK(spyre_memcpy_async(dma, &hb, &xb, 4096));
	ret = spyre_stream_synchronize(dma);
	CHECK(ret == -EFAULT, "%s queues: a copy after the failure returned %d", mode, ret);
	CHECK(((uint8_t *)m)[0] == 0x5a && ((uint8_t *)m)[4095] == 0x5a,
	      "%s queues: a copy after the failure ran", mode);
	OK(spyre_stream_clear_error(comp));
	OK(spyre_stream_clear_error(dma));
	/* the streams work again */
	OK(spyre_memcpy_async(dma, &hb, &xb, 4096));
	OK(spyre_stream_synchronize(dma));
	OK(spyre_event_destroy(ev));
	OK(spyre_stream_destroy(comp));
	OK(spyre_stream_destroy(dma));
	OK(spyre_program_destroy(p));
	OK(spyre_bo_destroy(x));
	OK(spyre_bo_destroy(h));
}

TEST(drm_queues_both_paths)
{
	static const char *const modes[] = { "kernel", "user" };
	unsigned int i;

	if (strcmp(test_backend, "drm"))
		return;	/* the sim has no such choice */
	for (i = 0; i < 2; i++) {
		spyre_device *d;
		uint64_t n = 0;

		setenv("SPYRE_DRM_QUEUES", modes[i], 1);
		OK(spyre_device_open(0, &d));
		pipeline(d, modes[i]);
		faults(d, modes[i]);
		ioctls_of_fills(d, &n);
		if (i == 0)
			CHECK(n >= 64, "kernel queues: 64 fills took %llu ioctls",
			      (unsigned long long)n);
		else
			CHECK(n <= 8, "user queues: 64 fills took %llu ioctls",
			      (unsigned long long)n);
		OK(spyre_device_close(d));
	}
	unsetenv("SPYRE_DRM_QUEUES");
}

TEST(drm_queues_env_checked)
{
	spyre_device *d = NULL;

	if (strcmp(test_backend, "drm"))
		return;
	setenv("SPYRE_DRM_QUEUES", "fast", 1);
	FAILS_WITH(spyre_device_open(0, &d), -EINVAL, "SPYRE_DRM_QUEUES=fast");
	unsetenv("SPYRE_DRM_QUEUES");
}

/*
 * The default (unset, or "auto"): user-mode queues on a card of interface
 * 1.16 (with this tree's driver, 1.8: the VM runs it), where each queue's
 * fault is read from its own ring and host copies walk no slower than the
 * kernel's jobs; "submit" keeps every operation on the
 * kernel's SUBMIT path. Told apart by the ioctls 64 fills take.
 */
TEST(drm_queues_default)
{
	static const char *const modes[] = { NULL, "auto", "submit" };
	struct spyre_device_props p;
	unsigned int i;

	if (strcmp(test_backend, "drm"))
		return;
	for (i = 0; i < 3; i++) {
		spyre_device *d;
		uint64_t n = 0;
		bool user;

		if (modes[i])
			setenv("SPYRE_DRM_QUEUES", modes[i], 1);
		else
			unsetenv("SPYRE_DRM_QUEUES");
		OK(spyre_device_open(0, &d));
		OK(spyre_device_get_props(d, &p));
		user = modes[i] != modes[2] && p.hw_version >= SPYRE_HW_VERSION(1, 16);
		pipeline(d, modes[i] ? modes[i] : "default");
		ioctls_of_fills(d, &n);
		if (user)
			CHECK(n <= 8, "%s: 64 fills took %llu ioctls, not user queues",
			      modes[i] ? modes[i] : "default", (unsigned long long)n);
		else
			CHECK(n >= 64, "%s: 64 fills took %llu ioctls, not SUBMIT",
			      modes[i] ? modes[i] : "default", (unsigned long long)n);
		OK(spyre_device_close(d));
	}
	unsetenv("SPYRE_DRM_QUEUES");
}

/*
 * A hang on a user-mode queue (the card's debug fault, armed on the ring
 * of the newest compute stream): the driver's watchdog ends the queue,
 * the launch fails with -ETIMEDOUT instead of hanging, the stream is
 * banned (-ECANCELED), a DMA stream on another ring is unaffected, and a
 * new stream works on a ring set up again.
 */
TEST(drm_user_queue_hang_bans_stream)
{
	struct spyre_device_props p0, p1;
	spyre_stream *s, *s2, *dma;
	spyre_program *prog;
	spyre_device *d;
	spyre_bo *x, *h;
	struct spyre_buf a[2], hb, xb;
	void *img, *m;
	size_t sz;
	char saved[32];
	int ret;

	if (strcmp(test_backend, "drm"))
		return;
	if (!job_timeout_set("500", saved, sizeof(saved)))
		return;	/* not root: no debugfs faults either */
	setenv("SPYRE_DRM_QUEUES", "user", 1);
	ret = spyre_device_open(0, &d);
	unsetenv("SPYRE_DRM_QUEUES");
	if (ret == -EOPNOTSUPP) {
		job_timeout_restore(saved);
		return;	/* no user-mode queues on this card or driver */
	}
	OK(ret);
	OK(spyre_device_get_props(d, &p0));
	img = kern_scale_f32(1024, 1, 0, &sz);
	OK(spyre_program_load(d, img, sz, &prog));
	free(img);
	OK(spyre_stream_create(d, SPYRE_ENGINE_DMA, &dma));
	OK(spyre_stream_create(d, SPYRE_ENGINE_COMPUTE, &s));
	OK(spyre_bo_create(d, 8192, SPYRE_MEM_DEVICE, &x));
	OK(host_bo(d, 4096, &h, &m));
	a[0] = buf_of(x, 0, 4096);
	a[1] = buf_of(x, 4096, 4096);
	OK(spyre_sim_inject_fault(d, SPYRE_ENGINE_COMPUTE, 1));
	OK(spyre_launch_async(s, prog, a, 2, NULL));
	ret = spyre_stream_synchronize(s);
	CHECK(ret == -ETIMEDOUT, "hung launch: %d (%s)", ret, spyre_last_error());
	FAILS_WITH(spyre_launch_async(s, prog, a, 2, NULL), -ECANCELED, "banned");
	OK(spyre_device_get_props(d, &p1));
	CHECK(p1.reset_count > p0.reset_count, "reset count %llu -> %llu",
	      (unsigned long long)p0.reset_count, (unsigned long long)p1.reset_count);
	/* the DMA stream's ring was not touched */
	hb = spyre_bo_buf(h);
	xb = buf_of(x, 0, 4096);
	memset(m, 0x33, 4096);
	OK(spyre_memcpy_async(dma, &xb, &hb, 4096));
	OK(spyre_stream_synchronize(dma));
	/* a new stream works */
	OK(spyre_stream_create(d, SPYRE_ENGINE_COMPUTE, &s2));
	OK(spyre_launch_async(s2, prog, a, 2, NULL));
	OK(spyre_stream_synchronize(s2));
	OK(spyre_stream_destroy(s2));
	spyre_stream_destroy(s);
	OK(spyre_stream_destroy(dma));
	OK(spyre_program_destroy(prog));
	OK(spyre_bo_destroy(x));
	OK(spyre_bo_destroy(h));
	OK(spyre_device_close(d));
	job_timeout_restore(saved);
}

/*
 * A DMA fault on user-mode queues is armed where the process's copies run,
 * as the kernel path arms all its DMA rings: the next copy of a compute
 * stream (through a DMA queue of its own) fails although a newer DMA
 * stream sits on another ring. The error is reported at synchronize,
 * stays the stream's until cleared, and later copies run. The plugin's
 * test_errors.py relies on this on the default queues.
 */
TEST(drm_user_queue_dma_fault_fails_the_copy)
{
	spyre_stream *s, *dma;
	spyre_device *d;
	spyre_bo *x, *h;
	struct spyre_buf xb, hb;
	uint8_t *hm;
	void *m;
	int ret;

	if (strcmp(test_backend, "drm") || geteuid())
		return;	/* faults are armed through the driver's debugfs: root */
	setenv("SPYRE_DRM_QUEUES", "user", 1);
	ret = spyre_device_open(0, &d);
	unsetenv("SPYRE_DRM_QUEUES");
	if (ret == -EOPNOTSUPP)
		return;	/* no user-mode queues on this card or driver */
	OK(ret);
	OK(spyre_stream_create(d, SPYRE_ENGINE_COMPUTE, &s));
	OK(spyre_bo_create(d, 4096, SPYRE_MEM_DEVICE, &x));
	OK(host_bo(d, 4096, &h, &m));
	hm = m;
	xb = spyre_bo_buf(x);
	hb = spyre_bo_buf(h);
	memset(hm, 0x11, 4096);
	OK(spyre_memcpy_async(s, &xb, &hb, 4096));	/* makes s's DMA queue */
	OK(spyre_stream_synchronize(s));
	OK(spyre_stream_create(d, SPYRE_ENGINE_DMA, &dma));	/* the newest DMA queue */
	OK(spyre_sim_inject_fault(d, SPYRE_ENGINE_DMA, 2));
	memset(hm, 0, 4096);
	OK(spyre_memcpy_async(s, &hb, &xb, 4096));
	FAILS_WITH(spyre_stream_synchronize(s), -EIO, "failed on the card");
	OK(spyre_sim_inject_fault(d, SPYRE_ENGINE_DMA, 0));	/* the rings not used */
	FAILS_WITH(spyre_stream_synchronize(s), -EIO, "spyre_memcpy_async");
	OK(spyre_stream_clear_error(s));
	OK(spyre_memcpy_async(s, &hb, &xb, 4096));
	OK(spyre_stream_synchronize(s));
	CHECK(hm[0] == 0x11 && hm[4095] == 0x11, "the copy after the fault read %#x..%#x",
	      hm[0], hm[4095]);
	memset(hm, 0, 4096);
	OK(spyre_memcpy_async(dma, &hb, &xb, 4096));
	OK(spyre_stream_synchronize(dma));
	CHECK(hm[0] == 0x11 && hm[4095] == 0x11, "the DMA stream's copy read %#x..%#x",
	      hm[0], hm[4095]);
	OK(spyre_stream_destroy(dma));
	OK(spyre_stream_destroy(s));
	OK(spyre_bo_destroy(x));
	OK(spyre_bo_destroy(h));
	OK(spyre_device_close(d));
}

/* The device on user-mode queues, or false where the card or driver has none. */
static bool open_user_queues(spyre_device **d, int *ret)
{
	setenv("SPYRE_DRM_QUEUES", "user", 1);
	*ret = spyre_device_open(0, d);
	unsetenv("SPYRE_DRM_QUEUES");
	return *ret == 0;
}

/*
 * A wait for a job with more work queued behind it on its ring wakes when
 * that job is done, not when the ring drained. Jobs' FENCEs raise no
 * interrupt on user queues; a sleeper for a ring's last job writes an
 * interrupt job behind it, but one at the tail would wake this waiter only
 * after the later work too, so it sleeps in short slices instead. 32
 * fills of 32 MiB (about 5 ms of paced card time), an event, 32 more: the
 * event's synchronize returns while the later fills still run.
 */
TEST(drm_user_queue_wait_wakes_before_later_jobs)
{
	struct spyre_device_stats st0, st1;
	spyre_device *d;
	spyre_stream *s;
	spyre_event *ev;
	spyre_bo *x;
	struct spyre_buf b;
	int i, ret, busy;

	if (strcmp(test_backend, "drm"))
		return;
	if (!open_user_queues(&d, &ret)) {
		CHECK(ret == -EOPNOTSUPP, "open on user queues: %d", ret);
		return;	/* no user-mode queues on this card or driver */
	}
	OK(spyre_stream_create(d, SPYRE_ENGINE_DMA, &s));
	OK(spyre_event_create(d, 0, &ev));
	OK(spyre_bo_create(d, FILL_BYTES, SPYRE_MEM_DEVICE, &x));
	b = spyre_bo_buf(x);
	for (i = 0; i < 32; i++)
		OK(spyre_memset_async(s, &b, (uint32_t)i, 4, FILL_BYTES));
	OK(spyre_event_record(ev, s));
	for (i = 0; i < 32; i++)
		OK(spyre_memset_async(s, &b, (uint32_t)i, 4, FILL_BYTES));
	OK(spyre_device_get_stats(d, &st0));
	OK(spyre_event_synchronize(ev));
	busy = spyre_stream_query(s);
	OK(spyre_device_get_stats(d, &st1));
	CHECK(busy == -EBUSY, "the event's wait returned after the later fills (query %d, "
	      "%llu ioctls)", busy, (unsigned long long)(st1.ioctls - st0.ioctls));
	OK(spyre_stream_synchronize(s));
	OK(spyre_event_destroy(ev));
	OK(spyre_stream_destroy(s));
	OK(spyre_bo_destroy(x));
	OK(spyre_device_close(d));
}

/*
 * A stream that fills its ring (2200 fills of 32 MiB: two descriptors
 * each, some 370 ms of paced card time, written far faster) waits for
 * room in the driver, woken by the interrupt job it writes, of which every
 * job left room for one: a handful of ioctls, not one per slice, and
 * every fill ran (the last one's pattern is in memory).
 */
TEST(drm_user_queue_full_ring_sleeps_on_an_interrupt)
{
	enum { FILLS = 2200 };
	struct spyre_device_stats st0, st1;
	spyre_device *d;
	spyre_stream *s;
	spyre_bo *x, *h;
	struct spyre_buf b, hb, xb;
	uint32_t *hm;
	void *m;
	int i, ret;

	if (strcmp(test_backend, "drm"))
		return;
	if (!open_user_queues(&d, &ret)) {
		CHECK(ret == -EOPNOTSUPP, "open on user queues: %d", ret);
		return;
	}
	OK(spyre_stream_create(d, SPYRE_ENGINE_DMA, &s));
	OK(spyre_bo_create(d, FILL_BYTES, SPYRE_MEM_DEVICE, &x));
	OK(host_bo(d, 4096, &h, &m));
	hm = m;
	b = spyre_bo_buf(x);
	OK(spyre_device_get_stats(d, &st0));
	for (i = 0; i < FILLS; i++)
		OK(spyre_memset_async(s, &b, (uint32_t)i, 4, FILL_BYTES));
	OK(spyre_stream_synchronize(s));
	OK(spyre_device_get_stats(d, &st1));
	CHECK(st1.ioctls - st0.ioctls <= 16, "%d fills took %llu ioctls", FILLS,
	      (unsigned long long)(st1.ioctls - st0.ioctls));
	xb = buf_of(x, FILL_BYTES - 4096, 4096);
	hb = spyre_bo_buf(h);
	OK(spyre_memcpy_async(s, &hb, &xb, 4096));
	OK(spyre_stream_synchronize(s));
	CHECK(hm[0] == FILLS - 1 && hm[1023] == FILLS - 1, "the last fill left %u..%u", hm[0],
	      hm[1023]);
	OK(spyre_stream_destroy(s));
	OK(spyre_bo_destroy(x));
	OK(spyre_bo_destroy(h));
	OK(spyre_device_close(d));
}

/*
 * A prepared recipe on user queues whose compute stream's ring hangs: the
 * launch that hung fails with -ETIMEDOUT at synchronize, the next launch
 * on that stream is refused (-ECANCELED: the stream is banned, as on
 * kernel queues) with a message naming the submission, an argument too
 * small is still refused before anything is written, and the same recipe
 * on new streams runs and gives its result (y = 2x + 1, read back).
 */
TEST(drm_user_queue_recipe_after_hang)
{
	struct spyre_operand cargs[2] = { spyre_op_arg(0), spyre_op_arg(1) };
	struct spyre_buf args[3], small;
	spyre_stream *st[2], *st2[2];
	spyre_program *prog;
	spyre_recipe *r;
	spyre_device *d;
	spyre_bo *x, *y, *h;
	float *m;
	void *img, *mv;
	size_t sz;
	char saved[32];
	int i, ret, bad = -1;

	if (strcmp(test_backend, "drm"))
		return;
	if (!job_timeout_set("500", saved, sizeof(saved)))
		return;	/* not root: no debugfs faults either */
	if (!open_user_queues(&d, &ret)) {
		job_timeout_restore(saved);
		CHECK(ret == -EOPNOTSUPP, "open on user queues: %d", ret);
		return;
	}
	img = kern_scale_f32(1024, 2.0f, 1.0f, &sz);
	OK(spyre_program_load(d, img, sz, &prog));
	free(img);
	OK(spyre_recipe_create(d, 2, 3, 0, &r));
	OK(spyre_recipe_compute(r, 0, prog, cargs, 2, spyre_op_ws(0, 0)));
	OK(spyre_recipe_signal(r, 0, 0));
	OK(spyre_recipe_wait(r, 1, 0));
	OK(spyre_recipe_d2h(r, 1, spyre_op_arg(2), spyre_op_arg(1), 4096));
	OK(spyre_recipe_finalize(r));
	OK(spyre_bo_create(d, 4096, SPYRE_MEM_DEVICE, &x));
	OK(spyre_bo_create(d, 4096, SPYRE_MEM_DEVICE, &y));
	OK(host_bo(d, 4096, &h, &mv));
	m = mv;
	for (i = 0; i < 1024; i++)
		m[i] = (float)i;
	args[0] = spyre_bo_buf(x);
	args[1] = spyre_bo_buf(y);
	args[2] = spyre_bo_buf(h);
	OK(spyre_stream_create(d, SPYRE_ENGINE_DMA, &st[1]));
	OK(spyre_stream_create(d, SPYRE_ENGINE_COMPUTE, &st[0]));	/* the newest compute */
	{
		struct spyre_buf xb = spyre_bo_buf(x), hb = spyre_bo_buf(h);

		OK(spyre_memcpy_async(st[1], &xb, &hb, 4096));
		OK(spyre_stream_synchronize(st[1]));
	}
	OK(spyre_sim_inject_fault(d, SPYRE_ENGINE_COMPUTE, 1));
	OK(spyre_recipe_launch(r, st, args, 3));
	ret = spyre_stream_synchronize(st[0]);
	CHECK(ret == -ETIMEDOUT, "hung recipe launch: %d (%s)", ret, spyre_last_error());
	FAILS_WITH(spyre_recipe_launch(r, st, args, 3), -ECANCELED, "submission 1 of");
	small = buf_of(h, 0, 2048);
	args[2] = small;
	FAILS_WITH(spyre_recipe_launch(r, st, args, 3), -EINVAL, "argument 2 has 2048 bytes");
	args[2] = spyre_bo_buf(h);
	/* new streams: a compute ring set up again, the DMA one as it was */
	OK(spyre_stream_create(d, SPYRE_ENGINE_COMPUTE, &st2[0]));
	OK(spyre_stream_create(d, SPYRE_ENGINE_DMA, &st2[1]));
	memset(m, 0, 4096);
	OK(spyre_recipe_launch(r, st2, args, 3));
	OK(spyre_stream_synchronize(st2[1]));
	for (i = 0; i < 1024 && bad < 0; i++)
		if (m[i] != 2.0f * (float)i + 1.0f)
			bad = i;
	CHECK(bad < 0, "after the hang: y[%d] = %g", bad, bad < 0 ? 0.0 : m[bad]);
	OK(spyre_recipe_destroy(r));
	spyre_stream_destroy(st[0]);
	spyre_stream_destroy(st[1]);
	OK(spyre_stream_destroy(st2[0]));
	OK(spyre_stream_destroy(st2[1]));
	OK(spyre_program_destroy(prog));
	OK(spyre_bo_destroy(x));
	OK(spyre_bo_destroy(y));
	OK(spyre_bo_destroy(h));
	OK(spyre_device_close(d));
	job_timeout_restore(saved);
}
