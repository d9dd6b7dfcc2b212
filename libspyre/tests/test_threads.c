// SPDX-License-Identifier: MIT
/* Several threads on one device: private streams, and one shared stream. */
#include <pthread.h>

#include "harness.h"

enum { THREADS = 4, ITER = 20, SZ = 128 << 10 };

struct worker {
	spyre_device *dev;
	spyre_stream *shared;	/* NULL: make a private stream */
	int id;
	int errors;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	spyre_stream *s = w->shared;
	spyre_bo *h, *o, *d;
	void *hm, *om;
	struct spyre_buf bh, bo, bd;
	int i;

	if (!s && spyre_stream_create(w->dev, w->id % 2 ? SPYRE_ENGINE_DMA : SPYRE_ENGINE_COMPUTE,
				      &s)) {
		w->errors++;
		return NULL;
	}
	if (host_bo(w->dev, SZ, &h, &hm) || host_bo(w->dev, SZ, &o, &om) ||
	    spyre_bo_create(w->dev, SZ, SPYRE_MEM_DEVICE, &d)) {
		w->errors++;
		return NULL;
	}
	bh = spyre_bo_buf(h);
	bo = spyre_bo_buf(o);
	bd = spyre_bo_buf(d);
	for (i = 0; i < ITER; i++) {
		fill_pat(hm, SZ, w->id * 1000 + i, 0);
		if (spyre_memcpy_async(s, &bd, &bh, SZ) || spyre_memcpy_async(s, &bo, &bd, SZ) ||
		    spyre_stream_synchronize(s)) {
			w->errors++;
			break;
		}
		if (diff_pat(om, SZ, w->id * 1000 + i, 0) >= 0)
			w->errors++;
	}
	if (!w->shared)
		spyre_stream_destroy(s);
	spyre_bo_destroy(h);
	spyre_bo_destroy(o);
	spyre_bo_destroy(d);
	return NULL;
}

static void run(spyre_device *dev, spyre_stream *shared)
{
	struct worker w[THREADS];
	pthread_t t[THREADS];
	int i;

	for (i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ dev, shared, i, 0 };
		pthread_create(&t[i], NULL, work, &w[i]);
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		CHECK(w[i].errors == 0, "thread %d: %d errors", i, w[i].errors);
	}
}

TEST(threads_private_streams)
{
	run(dev, NULL);
}

TEST(threads_shared_stream)
{
	spyre_stream *s;

	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &s));
	run(dev, s);
	OK(spyre_stream_destroy(s));
}
