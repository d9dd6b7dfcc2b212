// SPDX-License-Identifier: MIT
/*
 * libspyre stream benchmarks, all numbers from one run on one device:
 *
 *  1. submission rate: two threads each submitting to their own stream
 *     against one thread submitting the same work to both streams
 *     (submissions per second, host wall clock; the ratio is what matters:
 *     near 2 on 2 cores when nothing serialises the submitters).
 *  2. overlap: a launch (4 MiB in, 64 vector passes, 4 MiB out) on one
 *     stream and a host-to-device copy on another, measured alone and
 *     together in modelled device time (timing events); together / the
 *     longer alone is 1.0 for perfect overlap and together / the sum is 1.0
 *     for none. Both take their share of the card's one LPDDR5 budget.
 *
 *   libspyre-streams [submissions in all] [copy MiB]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "kernels.h"
#include "spyre/spyre.h"

#define TRY(x) do { if ((x)) { fprintf(stderr, "%s: %s\n", #x, spyre_last_error()); \
			exit(2); } } while (0)

enum { ROUNDS = 5 };

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- 1. submission rate ------------------------------------------------ */

struct submitter {
	spyre_stream *s[2];	/* one thread alternates over both; two use s[0] only */
	struct spyre_buf dst;
	int count;
	pthread_barrier_t *start;
	double t0, t1;		/* this thread's first and last submission */
};

static void *submit_loop(void *arg)
{
	struct submitter *w = arg;
	int i;

	pthread_barrier_wait(w->start);
	w->t0 = now_s();
	for (i = 0; i < w->count; i++)
		TRY(spyre_memset32_async(w->s[w->s[1] ? i & 1 : 0], &w->dst, (uint32_t)i, 128));
	w->t1 = now_s();
	return NULL;
}

/* Submissions per second of @threads threads (1 or 2) sending @total / @threads each. */
static double submit_rate(spyre_stream *s[2], spyre_bo *bo, int total, int threads)
{
	struct submitter w[2];
	pthread_barrier_t start;
	pthread_t th[2];
	double t0, t1;
	int i;

	pthread_barrier_init(&start, NULL, threads + 1);
	for (i = 0; i < threads; i++) {
		w[i].s[0] = s[i];
		w[i].s[1] = threads == 1 ? s[1] : NULL;
		w[i].dst = (struct spyre_buf){ bo, (uint64_t)i * 4096, 128 };
		w[i].count = total / threads;
		w[i].start = &start;
		pthread_create(&th[i], NULL, submit_loop, &w[i]);
	}
	pthread_barrier_wait(&start);
	for (i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	/* From the first thread's start to the last one's end. */
	t0 = w[0].t0;
	t1 = w[0].t1;
	for (i = 1; i < threads; i++) {
		t0 = w[i].t0 < t0 ? w[i].t0 : t0;
		t1 = w[i].t1 > t1 ? w[i].t1 : t1;
	}
	TRY(spyre_stream_synchronize(s[0]));
	TRY(spyre_stream_synchronize(s[1]));
	pthread_barrier_destroy(&start);
	return total / (t1 - t0);
}

/* ---- 2. overlap ---------------------------------------------------------- */

struct overlap {
	spyre_device *dev;
	spyre_stream *a, *b;
	spyre_program *prog;
	struct spyre_buf args[2], host, dev_buf;
	spyre_event *ev[4];
};

/* Device time from the first start to the last end of what ran (ns). */
static uint64_t run_overlap(struct overlap *o, int launch, int copy)
{
	uint64_t t[4] = { 0 }, start = UINT64_MAX, end = 0;
	int i;

	/* Submitted back to back; nothing links the two streams. */
	if (launch) {
		TRY(spyre_event_record(o->ev[0], o->a));
		TRY(spyre_launch_async(o->a, o->prog, o->args, 2, NULL));
		TRY(spyre_event_record(o->ev[1], o->a));
	}
	if (copy) {
		TRY(spyre_event_record(o->ev[2], o->b));
		TRY(spyre_memcpy_async(o->b, &o->dev_buf, &o->host, o->host.size));
		TRY(spyre_event_record(o->ev[3], o->b));
	}
	TRY(spyre_device_synchronize(o->dev));
	for (i = 0; i < 4; i++) {
		if ((i < 2 && !launch) || (i >= 2 && !copy))
			continue;
		TRY(spyre_event_timestamp_ns(o->ev[i], &t[i]));
		if (i % 2 == 0 && t[i] < start)
			start = t[i];
		if (i % 2 == 1 && t[i] > end)
			end = t[i];
	}
	return end - start;
}

int main(int argc, char **argv)
{
	int total = argc > 1 ? atoi(argv[1]) : 4000;
	uint64_t mib = argc > 2 ? strtoull(argv[2], NULL, 0) : 8;
	enum { VN = 1 << 20 };
	struct spyre_device_props props;
	struct overlap o = { 0 };
	spyre_device *dev;
	spyre_stream *s[2];
	spyre_bo *bo, *hb, *db, *x, *y;
	double one = 0, two = 0, r1, r2;
	uint64_t tl = UINT64_MAX, tc = UINT64_MAX, tb = UINT64_MAX, v;
	size_t sz;
	void *img;
	int i;

	TRY(spyre_device_open(0, &dev));
	TRY(spyre_device_get_props(dev, &props));
	printf("libspyre-streams on %s (%s backend)\n", props.name, props.backend);
	TRY(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &s[0]));
	TRY(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &s[1]));
	TRY(spyre_bo_create(dev, 8192, SPYRE_MEM_DEVICE, &bo));
	/* Interleaved rounds, best of each, so both see the same machine load. */
	for (i = 0; i < ROUNDS; i++) {
		r1 = submit_rate(s, bo, total, 1);
		r2 = submit_rate(s, bo, total, 2);
		one = r1 > one ? r1 : one;
		two = r2 > two ? r2 : two;
	}
	printf("\nsubmission rate (%d fills of 128 bytes over two streams, best of %d rounds, "
	       "%ld online CPUs)\n", total, ROUNDS, sysconf(_SC_NPROCESSORS_ONLN));
	printf("  one thread, both streams     %10.0f submits/s\n", one);
	printf("  two threads, a stream each   %10.0f submits/s\n", two);
	printf("  two threads / one thread     %10.2f x\n", two / one);

	o.dev = dev;
	TRY(spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &o.a));
	TRY(spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &o.b));
	img = kern_scale_rep_f32(VN, 1.0f, 1.0f, 64, &sz);
	TRY(spyre_program_load(dev, img, sz, &o.prog));
	free(img);
	TRY(spyre_bo_create(dev, VN * 4, SPYRE_MEM_DEVICE, &x));
	TRY(spyre_bo_create(dev, VN * 4, SPYRE_MEM_DEVICE, &y));
	TRY(spyre_bo_create(dev, mib << 20, SPYRE_MEM_HOST, &hb));
	TRY(spyre_bo_create(dev, mib << 20, SPYRE_MEM_DEVICE, &db));
	o.args[0] = spyre_bo_buf(x);
	o.args[1] = spyre_bo_buf(y);
	o.host = spyre_bo_buf(hb);
	o.dev_buf = spyre_bo_buf(db);
	for (i = 0; i < 4; i++)
		TRY(spyre_event_create(dev, SPYRE_EVENT_TIMING, &o.ev[i]));
	for (i = 0; i < 3; i++) {
		v = run_overlap(&o, 1, 0);
		tl = v < tl ? v : tl;
		v = run_overlap(&o, 0, 1);
		tc = v < tc ? v : tc;
		v = run_overlap(&o, 1, 1);
		tb = v < tb ? v : tb;
	}
	printf("\noverlap (modelled device time, best of 3): launch (4 MiB in and out) on stream A, "
	       "%llu MiB H2D on stream B\n", (unsigned long long)mib);
	printf("  launch alone                 %10.1f us\n", tl / 1e3);
	printf("  copy alone                   %10.1f us\n", tc / 1e3);
	printf("  both                         %10.1f us\n", tb / 1e3);
	printf("  both / longer alone          %10.2f x   (1.00 = full overlap)\n",
	       (double)tb / (tl > tc ? tl : tc));
	printf("  both / sum                   %10.2f x   (1.00 = no overlap)\n",
	       (double)tb / (tl + tc));
	for (i = 0; i < 4; i++)
		TRY(spyre_event_destroy(o.ev[i]));
	TRY(spyre_stream_destroy(o.a));
	TRY(spyre_stream_destroy(o.b));
	TRY(spyre_program_destroy(o.prog));
	TRY(spyre_stream_destroy(s[0]));
	TRY(spyre_stream_destroy(s[1]));
	spyre_bo_destroy(bo);
	spyre_bo_destroy(hb);
	spyre_bo_destroy(db);
	spyre_bo_destroy(x);
	spyre_bo_destroy(y);
	TRY(spyre_device_close(dev));
	return 0;
}
