// SPDX-License-Identifier: MIT
/*
 * libspyre benchmarks, all numbers from one run on one device:
 *
 *  1. launch cost: a prepared recipe (H2D on a DMA stream, event, compute
 *     and D2H on a compute stream) against building the same plan from
 *     scratch for every launch, and against issuing the same work with
 *     individual stream calls; host time per launch and submissions and
 *     ioctls per launch (counted by the library).
 *  2. H2D / D2H bandwidth (wall clock, copy + synchronize) as a ratio of
 *     host memcpy bandwidth measured in the same process, plus the
 *     bandwidth the card models (device time from timing events).
 *  3. On the drm backend, the prepared launch's host cost as a multiple of
 *     the cheapest ioctl there is (DRM_IOCTL_VERSION on the same node),
 *     timed in interleaved rounds with the launches.
 *
 * Every figure is also printed as an "@bench" record for bench/report.
 *
 *   libspyre-bench [launches] [copy MiB]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <drm.h>

#include "bench_record.h"
#include "kernels.h"
#include "spyre/spyre.h"

#define TRY(x) do { if ((x)) { fprintf(stderr, "%s: %s\n", #x, spyre_last_error()); \
			exit(2); } } while (0)

enum { N = 1024, BYTES = N * 4, ROUNDS = 5 };

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct ctx {
	spyre_device *dev;
	spyre_program *prog;
	spyre_stream *st[2];
	spyre_bo *hx, *hy, *ws;
	spyre_event *ev;
};

static spyre_recipe *build(struct ctx *c)
{
	struct spyre_operand a[2] = { spyre_op_ws(0, BYTES), spyre_op_ws(BYTES, BYTES) };
	spyre_recipe *r;

	TRY(spyre_recipe_create(c->dev, 2, 2, 2 * BYTES, &r));
	TRY(spyre_recipe_h2d(r, 0, spyre_op_ws(0, BYTES), spyre_op_arg(0), BYTES));
	TRY(spyre_recipe_signal(r, 0, 0));
	TRY(spyre_recipe_wait(r, 1, 0));
	TRY(spyre_recipe_compute(r, 1, c->prog, a, 2, spyre_op_ws(0, 0)));
	TRY(spyre_recipe_d2h(r, 1, spyre_op_arg(1), spyre_op_ws(BYTES, BYTES), BYTES));
	TRY(spyre_recipe_finalize(r));
	return r;
}

/* The same work with individual calls (what a runtime without recipes does). */
static void by_calls(struct ctx *c)
{
	struct spyre_buf x = spyre_bo_buf(c->hx), y = spyre_bo_buf(c->hy);
	struct spyre_buf w0 = { c->ws, 0, BYTES }, w1 = { c->ws, BYTES, BYTES };
	struct spyre_buf a[2] = { w0, w1 };

	TRY(spyre_memcpy_async(c->st[0], &w0, &x, BYTES));
	TRY(spyre_event_record(c->ev, c->st[0]));
	TRY(spyre_stream_wait_event(c->st[1], c->ev));
	TRY(spyre_launch_async(c->st[1], c->prog, a, 2, NULL));
	TRY(spyre_memcpy_async(c->st[1], &y, &w1, BYTES));
}

struct result {
	double us;
	double submits, ioctls;
};

static struct result measure(struct ctx *c, int mode, int launches, spyre_recipe *prepared)
{
	struct spyre_buf args[2] = { spyre_bo_buf(c->hx), spyre_bo_buf(c->hy) };
	struct spyre_device_stats s0, s1;
	struct result res = { 0, 0, 0 };
	double t = 0, t0;
	int i;

	for (i = 0; i < launches; i++) {
		spyre_recipe *r = prepared;

		TRY(spyre_device_get_stats(c->dev, &s0));
		t0 = now_s();
		if (mode == 1)
			r = build(c);
		if (mode == 2)
			by_calls(c);
		else
			TRY(spyre_recipe_launch(r, c->st, args, 2));
		t += now_s() - t0;
		TRY(spyre_device_get_stats(c->dev, &s1));
		res.submits += s1.submits - s0.submits;
		res.ioctls += s1.ioctls - s0.ioctls;
		/* keep the queues short and the comparison about the host side */
		TRY(spyre_stream_synchronize(c->st[1]));
		TRY(spyre_stream_synchronize(c->st[0]));
		if (mode == 1)
			TRY(spyre_recipe_destroy(r));
	}
	res.us = t / launches * 1e6;
	res.submits /= launches;
	res.ioctls /= launches;
	return res;
}

/*
 * Host time of one DRM_IOCTL_VERSION (no buffers: the driver only fills in
 * its version numbers), the floor of any ioctl's cost. Best of @rounds
 * rounds of @n calls each; negative when @path is not a device node.
 */
static double null_ioctl_us(const char *path, int rounds, int n)
{
	double best = -1, t0;
	int fd, i, j;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	for (i = 0; i < rounds; i++) {
		t0 = now_s();
		for (j = 0; j < n; j++) {
			struct drm_version v;

			memset(&v, 0, sizeof(v));
			if (ioctl(fd, DRM_IOCTL_VERSION, &v)) {
				close(fd);
				return -1;
			}
		}
		t0 = (now_s() - t0) / n * 1e6;
		if (best < 0 || t0 < best)
			best = t0;
	}
	close(fd);
	return best;
}

static double memcpy_gbs(void *dst, const void *src, size_t bytes, int reps)
{
	double t0, best = 1e9;
	int i;

	for (i = 0; i < reps; i++) {
		t0 = now_s();
		memcpy(dst, src, bytes);
		t0 = now_s() - t0;
		if (t0 < best)
			best = t0;
	}
	return bytes / best / 1e9;
}

int main(int argc, char **argv)
{
	int launches = argc > 1 ? atoi(argv[1]) : 200;
	uint64_t mib = argc > 2 ? strtoull(argv[2], NULL, 0) : 64;
	uint64_t bytes = mib << 20, dev_ns;
	struct spyre_device_props props;
	struct result prep, scratch, calls;
	double null_us = -1;
	spyre_event *e0, *e1;
	spyre_bo *hb, *hb2, *db;
	spyre_recipe *r;
	struct ctx c;
	double t0, mc, h2d = 1e9, d2h = 1e9, h2d_dev = 0, d2h_dev = 0;
	unsigned int per;
	void *m, *m2, *img;
	size_t sz;
	int i, dir;

	memset(&c, 0, sizeof(c));
	TRY(spyre_device_open(0, &c.dev));
	TRY(spyre_device_get_props(c.dev, &props));
	printf("libspyre-bench on %s (%s backend)\n", props.name, props.backend);
	img = kern_scale_f32(N, 2.0f, 1.0f, &sz);
	TRY(spyre_program_load(c.dev, img, sz, &c.prog));
	free(img);
	TRY(spyre_stream_create(c.dev, SPYRE_ENGINE_DMA, &c.st[0]));
	TRY(spyre_stream_create(c.dev, SPYRE_ENGINE_COMPUTE, &c.st[1]));
	TRY(spyre_bo_create(c.dev, BYTES, SPYRE_MEM_HOST, &c.hx));
	TRY(spyre_bo_create(c.dev, BYTES, SPYRE_MEM_HOST, &c.hy));
	TRY(spyre_bo_create(c.dev, 2 * BYTES, SPYRE_MEM_DEVICE, &c.ws));
	TRY(spyre_event_create(c.dev, 0, &c.ev));

	r = build(&c);
	TRY(spyre_recipe_submits_per_launch(r, &per));
	measure(&c, 0, 10, r);	/* warm up */
	/* Interleaved rounds, best round per mode: background noise hits all alike. */
	for (i = 0; i < ROUNDS; i++) {
		struct result a = measure(&c, 0, launches / ROUNDS + 1, r);
		struct result b = measure(&c, 1, launches / ROUNDS / 4 + 1, NULL);
		struct result d = measure(&c, 2, launches / ROUNDS + 1, NULL);

		if (!i || a.us < prep.us)
			prep = a;
		if (!i || b.us < scratch.us)
			scratch = b;
		if (!i || d.us < calls.us)
			calls = d;
		if (!strcmp(props.backend, "drm")) {
			double nu = null_ioctl_us(props.path, 1, launches / ROUNDS + 1);

			if (nu > 0 && (null_us < 0 || nu < null_us))
				null_us = nu;
		}
	}
	printf("\nlaunch cost (host time per launch, best of %d interleaved rounds, %d launches; "
	       "2 streams: H2D, event, compute, D2H)\n", ROUNDS, launches);
	printf("  %-34s %9s %9s %9s\n", "", "us", "submits", "ioctls");
	printf("  %-34s %9.2f %9.2f %9.2f\n", "prepared recipe", prep.us, prep.submits,
	       prep.ioctls);
	printf("  %-34s %9.2f %9.2f %9.2f\n", "recipe built from scratch each time", scratch.us,
	       scratch.submits, scratch.ioctls);
	printf("  %-34s %9.2f %9.2f %9.2f\n", "individual stream calls", calls.us,
	       calls.submits, calls.ioctls);
	printf("  recipe: %u submits per launch (streams touched: 2); from scratch / prepared "
	       "= %.1fx, calls / prepared = %.1fx\n", per, scratch.us / prep.us, calls.us / prep.us);
	bench_record("recipe_ioctls_per_launch", prep.ioctls, "count",
		     "ioctls per prepared recipe launch (H2D, event, compute, D2H on 2 streams)",
		     "counted by libspyre's device stats", props.backend);
	bench_record("recipe_submits_per_launch", prep.submits, "count",
		     "SUBMITs per prepared recipe launch (2 streams touched)",
		     "counted by libspyre's device stats", props.backend);
	bench_record("recipe_scratch_vs_prepared", scratch.us / prep.us, "x",
		     "host time: recipe built for every launch / prepared recipe launch",
		     "best of 5 interleaved rounds", props.backend);
	bench_record("recipe_calls_vs_prepared", calls.us / prep.us, "x",
		     "host time: same work as individual stream calls / prepared recipe launch",
		     "best of 5 interleaved rounds", props.backend);
	if (null_us > 0) {
		printf("  null ioctl (DRM_IOCTL_VERSION) %.2f us: prepared launch = %.1f null ioctls\n",
		       null_us, prep.us / null_us);
		bench_record("recipe_launch_vs_null_ioctl", prep.us / null_us, "x",
			     "host time: prepared recipe launch / DRM_IOCTL_VERSION",
			     "best of 5 rounds, interleaved with the launches", props.backend);
	}

	/* Bandwidth. */
	TRY(spyre_bo_create(c.dev, bytes, SPYRE_MEM_HOST, &hb));
	TRY(spyre_bo_create(c.dev, bytes, SPYRE_MEM_HOST, &hb2));
	TRY(spyre_bo_create(c.dev, bytes, SPYRE_MEM_DEVICE, &db));
	TRY(spyre_bo_map(hb, &m));
	TRY(spyre_bo_map(hb2, &m2));
	memset(m, 1, bytes);
	memset(m2, 2, bytes);
	mc = memcpy_gbs(m2, m, bytes, 5);
	TRY(spyre_event_create(c.dev, SPYRE_EVENT_TIMING, &e0));
	TRY(spyre_event_create(c.dev, SPYRE_EVENT_TIMING, &e1));
	for (dir = 0; dir < 2; dir++) {
		for (i = 0; i < 5; i++) {
			struct spyre_buf h = spyre_bo_buf(hb), d = spyre_bo_buf(db);

			TRY(spyre_event_record(e0, c.st[0]));
			t0 = now_s();
			if (dir == 0)
				TRY(spyre_memcpy_async(c.st[0], &d, &h, bytes));
			else
				TRY(spyre_memcpy_async(c.st[0], &h, &d, bytes));
			TRY(spyre_event_record(e1, c.st[0]));
			TRY(spyre_stream_synchronize(c.st[0]));
			t0 = now_s() - t0;
			TRY(spyre_event_elapsed_ns(e0, e1, &dev_ns));
			if (dir == 0 && t0 < h2d) {
				h2d = t0;
				h2d_dev = bytes / (double)dev_ns;
			}
			if (dir == 1 && t0 < d2h) {
				d2h = t0;
				d2h_dev = bytes / (double)dev_ns;
			}
		}
	}
	printf("\nbandwidth (%llu MiB, best of 5, wall clock incl. synchronize)\n",
	       (unsigned long long)mib);
	printf("  host memcpy          %8.2f GB/s\n", mc);
	printf("  H2D                  %8.2f GB/s  = %.3f x memcpy   (modelled on the card: %.1f GB/s)\n",
	       bytes / h2d / 1e9, bytes / h2d / 1e9 / mc, h2d_dev);
	printf("  D2H                  %8.2f GB/s  = %.3f x memcpy   (modelled on the card: %.1f GB/s)\n",
	       bytes / d2h / 1e9, bytes / d2h / 1e9 / mc, d2h_dev);
	bench_record("h2d_vs_memcpy", bytes / h2d / 1e9 / mc, "x",
		     "H2D bandwidth (copy + synchronize) / host memcpy bandwidth",
		     "64 MiB, best of 5, same process", props.backend);
	bench_record("d2h_vs_memcpy", bytes / d2h / 1e9 / mc, "x",
		     "D2H bandwidth (copy + synchronize) / host memcpy bandwidth",
		     "64 MiB, best of 5, same process", props.backend);
	bench_record("h2d_modelled_gbs", h2d_dev, "GB/s",
		     "modelled device-time bandwidth of an H2D copy",
		     "bytes / (timing event elapsed ns)", props.backend);
	bench_record("d2h_modelled_gbs", d2h_dev, "GB/s",
		     "modelled device-time bandwidth of a D2H copy",
		     "bytes / (timing event elapsed ns)", props.backend);

	spyre_event_destroy(e0);
	spyre_event_destroy(e1);
	spyre_event_destroy(c.ev);
	spyre_bo_destroy(hb);
	spyre_bo_destroy(hb2);
	spyre_bo_destroy(db);
	TRY(spyre_recipe_destroy(r));
	spyre_stream_destroy(c.st[0]);
	spyre_stream_destroy(c.st[1]);
	spyre_bo_destroy(c.hx);
	spyre_bo_destroy(c.hy);
	spyre_bo_destroy(c.ws);
	spyre_program_destroy(c.prog);
	TRY(spyre_device_close(c.dev));
	return 0;
}
