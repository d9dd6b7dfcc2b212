// SPDX-License-Identifier: MIT
/*
 * Streams are not tied to an engine: any stream takes copies and launches
 * in order, a copy does not wait behind another stream's launch,
 * priorities, and freeing a BO does not wait for unrelated deferred work.
 */
#include <pthread.h>
#include <unistd.h>

#include "harness.h"
#include "kernels.h"

enum { N = 1 << 18, BYTES = N * 4 };

/* Copy in, launch, copy out, all on one stream of either engine. */
TEST(stream_mixed_ops_in_order)
{
	spyre_program *prog;
	spyre_bo *h, *o, *x, *y;
	void *hm, *om;
	size_t sz;
	void *img;
	int e, i, bad;

	img = kern_scale_f32(N, 3.0f, -1.0f, &sz);
	OK(spyre_program_load(dev, img, sz, &prog));
	free(img);
	OK(host_bo(dev, BYTES, &h, &hm));
	OK(host_bo(dev, BYTES, &o, &om));
	OK(spyre_bo_create(dev, BYTES, SPYRE_MEM_DEVICE, &x));
	OK(spyre_bo_create(dev, BYTES, SPYRE_MEM_DEVICE, &y));
	for (e = 0; e < 2; e++) {
		spyre_stream *s;
		struct spyre_buf bx = spyre_bo_buf(x), by = spyre_bo_buf(y);
		struct spyre_buf bh = spyre_bo_buf(h), bo = spyre_bo_buf(o);
		struct spyre_buf args[2] = { bx, by };

		OK(spyre_stream_create(dev, e ? SPYRE_ENGINE_DMA : SPYRE_ENGINE_COMPUTE, &s));
		for (i = 0; i < N; i++)
			((float *)hm)[i] = (float)(i + e);
		memset(om, 0, BYTES);
		OK(spyre_memset32_async(s, &by, 0x7fc00000, BYTES));
		OK(spyre_memcpy_async(s, &bx, &bh, BYTES));
		OK(spyre_launch_async(s, prog, args, 2, NULL));
		OK(spyre_memcpy_async(s, &bo, &by, BYTES));
		OK(spyre_stream_synchronize(s));
		bad = -1;
		for (i = 0; i < N && bad < 0; i++)
			if (((float *)om)[i] != 3.0f * (float)(i + e) - 1.0f)
				bad = i;
		CHECK(bad < 0, "%s stream: y[%d] = %g", e ? "DMA" : "compute", bad,
		      bad < 0 ? 0 : ((float *)om)[bad]);
		OK(spyre_stream_destroy(s));
	}
	OK(spyre_program_destroy(prog));
	spyre_bo_destroy(h);
	spyre_bo_destroy(o);
	spyre_bo_destroy(x);
	spyre_bo_destroy(y);
}

/*
 * A long launch on compute stream A, then a copy on compute stream B,
 * submitted right after it: the copy completes (device time) before the
 * launch does. Before streams sent copies to a DMA ring, the copy queued
 * behind the launch on the shared compute ring.
 */
TEST(stream_copy_not_behind_other_launch)
{
	enum { PER_CORE = 64 << 10, LBYTES = 32 * PER_CORE };
	spyre_program *prog;
	spyre_stream *a, *b;
	spyre_event *e0, *ea, *eb;
	spyre_bo *h, *d, *x;
	void *hm;
	uint64_t t0, ta, tb;
	size_t sz;
	void *img;

	/* About 10 ms on the load unit, LPDDR5 not saturated (the copy needs a share). */
	img = kern_lsu_busy(5, &sz);
	OK(spyre_program_load(dev, img, sz, &prog));
	free(img);
	OK(spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &a));
	OK(spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &b));
	OK(spyre_event_create(dev, SPYRE_EVENT_TIMING, &e0));
	OK(spyre_event_create(dev, SPYRE_EVENT_TIMING, &ea));
	OK(spyre_event_create(dev, SPYRE_EVENT_TIMING, &eb));
	OK(host_bo(dev, 65536, &h, &hm));
	OK(spyre_bo_create(dev, 65536, SPYRE_MEM_DEVICE, &d));
	OK(spyre_bo_create(dev, LBYTES, SPYRE_MEM_DEVICE, &x));
	{
		struct spyre_buf args[1] = { spyre_bo_buf(x) };
		struct spyre_buf bd = spyre_bo_buf(d), bh = spyre_bo_buf(h);

		/* B's queue exists before the clock starts. */
		OK(spyre_memcpy_async(b, &bd, &bh, 4096));
		OK(spyre_stream_synchronize(b));
		OK(spyre_event_record(e0, a));
		OK(spyre_launch_async(a, prog, args, 1, NULL));
		OK(spyre_event_record(ea, a));
		OK(spyre_memcpy_async(b, &bd, &bh, 65536));
		OK(spyre_event_record(eb, b));
	}
	OK(spyre_event_synchronize(ea));
	OK(spyre_event_synchronize(eb));
	OK(spyre_event_timestamp_ns(e0, &t0));
	OK(spyre_event_timestamp_ns(ea, &ta));
	OK(spyre_event_timestamp_ns(eb, &tb));
	CHECK(tb < ta, "the copy on stream B finished %lld ns after A's launch (launch took %llu ns)",
	      (long long)(tb - ta), (unsigned long long)(ta - t0));
	OK(spyre_event_destroy(e0));
	OK(spyre_event_destroy(ea));
	OK(spyre_event_destroy(eb));
	OK(spyre_stream_destroy(a));
	OK(spyre_stream_destroy(b));
	OK(spyre_program_destroy(prog));
	spyre_bo_destroy(h);
	spyre_bo_destroy(d);
	spyre_bo_destroy(x);
}

TEST(stream_priorities)
{
	spyre_stream *lo, *hi;
	spyre_bo *h, *d;
	void *hm;
	struct spyre_buf bh, bd;

	OK(host_bo(dev, 4096, &h, &hm));
	OK(spyre_bo_create(dev, 4096, SPYRE_MEM_DEVICE, &d));
	bh = spyre_bo_buf(h);
	bd = spyre_bo_buf(d);
	FAILS_WITH(spyre_stream_create_with_priority(dev, SPYRE_ENGINE_DMA, 7, &lo), -EINVAL,
		   "unknown priority 7");
	OK(spyre_stream_create_with_priority(dev, SPYRE_ENGINE_DMA, SPYRE_PRIORITY_LOW, &lo));
	OK(spyre_stream_create_with_priority(dev, SPYRE_ENGINE_COMPUTE, SPYRE_PRIORITY_HIGH,
					     &hi));
	OK(spyre_memcpy_async(lo, &bd, &bh, 4096));
	OK(spyre_memcpy_async(hi, &bh, &bd, 4096));
	OK(spyre_device_synchronize(dev));
	OK(spyre_stream_destroy(lo));
	OK(spyre_stream_destroy(hi));
	spyre_bo_destroy(h);
	spyre_bo_destroy(d);
}

/*
 * A copy deferred behind host work that holds its stream: destroying a BO
 * the copy does not use returns at once; the copy's own BOs stay valid.
 */
TEST(bo_destroy_ignores_unrelated_deferred_work)
{
	struct watchdog_gate g = { 0 };
	spyre_stream *s;
	spyre_bo *h, *d, *other;
	void *hm;
	struct spyre_buf bh, bd;
	pthread_t th;

	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &s));
	OK(host_bo(dev, 65536, &h, &hm));
	OK(spyre_bo_create(dev, 65536, SPYRE_MEM_DEVICE, &d));
	OK(spyre_bo_create(dev, 65536, SPYRE_MEM_DEVICE, &other));
	bh = spyre_bo_buf(h);
	bd = spyre_bo_buf(d);
	pthread_create(&th, NULL, watchdog_gate_open_later, &g);
	OK(spyre_host_work_async(s, watchdog_gate_wait, &g));
	OK(spyre_memcpy_async(s, &bd, &bh, 65536));
	OK(spyre_bo_destroy(other));
	CHECK(!__atomic_load_n(&g.open, __ATOMIC_ACQUIRE),
	      "spyre_bo_destroy waited for deferred work that does not use the BO");
	__atomic_store_n(&g.open, 1, __ATOMIC_RELEASE);
	OK(spyre_stream_synchronize(s));
	pthread_join(th, NULL);
	OK(spyre_stream_destroy(s));
	spyre_bo_destroy(h);
	spyre_bo_destroy(d);
}
