// SPDX-License-Identifier: MIT
/*
 * pipeline: streams chunks through H2D -> compute -> D2H on three streams
 * linked by events, double-buffered on the card, and prints the device
 * timeline of every step (from timing events) with the time transfers
 * overlapped compute. Exits 1 if the results are wrong or nothing
 * overlapped.
 *
 *   pipeline [chunks] [chunk_mib] [reps]
 *
 * The sim backend runs the card on a virtual clock, so its device timeline
 * is causal and independent of host speed: there the overlap is required.
 * A card in QEMU timestamps each job from the moment the guest rings its
 * doorbell; the guest (TCG) reacts to a completion in milliseconds while
 * the modelled card needs microseconds per chunk, so the QEMU timeline is
 * dominated by guest latency and overlap there is incidental: on the drm
 * backend the overlap is reported, and only required with
 * SPYRE_PIPELINE_REQUIRE_OVERLAP=1.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "spyre/spyre.h"

#define MAX_CHUNKS 64
#define DIE(...) do { fprintf(stderr, __VA_ARGS__); fprintf(stderr, ": %s\n", \
			spyre_last_error()); exit(2); } while (0)
#define TRY(x) do { if ((x)) DIE("%s", #x); } while (0)

enum { H2D, COMP, D2H, NSTAGE };
static const char *stage_name[NSTAGE] = { "H2D", "compute", "D2H" };

struct span {
	uint64_t t0, t1;
};

/* Length of the union of intervals in @a intersected with the union in @b. */
static uint64_t overlap(const struct span *a, int na, const struct span *b, int nb)
{
	uint64_t sum = 0;
	int i, j;

	/* Intervals within one stage never overlap each other (one stream). */
	for (i = 0; i < na; i++)
		for (j = 0; j < nb; j++) {
			uint64_t lo = a[i].t0 > b[j].t0 ? a[i].t0 : b[j].t0;
			uint64_t hi = a[i].t1 < b[j].t1 ? a[i].t1 : b[j].t1;

			if (hi > lo)
				sum += hi - lo;
		}
	return sum;
}

int main(int argc, char **argv)
{
	int chunks = argc > 1 ? atoi(argv[1]) : 8;
	uint64_t mib = argc > 2 ? strtoull(argv[2], NULL, 0) : 2;
	unsigned int reps = argc > 3 ? atoi(argv[3]) : 40;
	uint64_t n = mib << 18, bytes = mib << 20;	/* fp32 values per chunk */
	spyre_event *ev[NSTAGE][MAX_CHUNKS], *ts[NSTAGE][MAX_CHUNKS][2];
	struct span sp[NSTAGE][MAX_CHUNKS];
	spyre_stream *st[NSTAGE];
	spyre_bo *hin, *hout, *din[2], *dout[2];
	struct spyre_device_props props;
	spyre_program *prog;
	spyre_device *dev;
	uint64_t t0 = UINT64_MAX, tend = 0, ov_in, ov_out, busy_c = 0;
	float *in, *out;
	void *img, *m;
	size_t sz;
	int i, s, bad = 0;

	if (chunks < 2 || chunks > MAX_CHUNKS || !mib || mib > 64)
		DIE("usage: pipeline [chunks 2..64] [chunk MiB 1..64] [reps]");
	TRY(spyre_device_open(0, &dev));
	TRY(spyre_device_get_props(dev, &props));
	printf("pipeline on %s (%s backend): %d chunks of %llu MiB, %u vector passes each\n",
	       props.name, props.backend, chunks, (unsigned long long)mib, reps);

	img = kern_scale_rep_f32(n, 1.0f, 1.0f, reps, &sz);	/* y = x + reps */
	TRY(spyre_program_load(dev, img, sz, &prog));
	free(img);
	TRY(spyre_bo_create(dev, bytes * chunks, SPYRE_MEM_HOST, &hin));
	TRY(spyre_bo_create(dev, bytes * chunks, SPYRE_MEM_HOST, &hout));
	TRY(spyre_bo_map(hin, &m));
	in = m;
	TRY(spyre_bo_map(hout, &m));
	out = m;
	for (i = 0; i < 2; i++) {
		TRY(spyre_bo_create(dev, bytes, SPYRE_MEM_DEVICE, &din[i]));
		TRY(spyre_bo_create(dev, bytes, SPYRE_MEM_DEVICE, &dout[i]));
	}
	for (i = 0; i < (int)(n * chunks); i++)
		in[i] = (float)(i % 4099);
	memset(out, 0, bytes * chunks);
	TRY(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &st[H2D]));
	TRY(spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &st[COMP]));
	TRY(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &st[D2H]));
	for (s = 0; s < NSTAGE; s++)
		for (i = 0; i < chunks; i++) {
			TRY(spyre_event_create(dev, 0, &ev[s][i]));
			TRY(spyre_event_create(dev, SPYRE_EVENT_TIMING, &ts[s][i][0]));
			TRY(spyre_event_create(dev, SPYRE_EVENT_TIMING, &ts[s][i][1]));
		}

	for (i = 0; i < chunks; i++) {
		int b = i % 2;
		struct spyre_buf hi = { hin, i * bytes, bytes }, ho = { hout, i * bytes, bytes };
		struct spyre_buf di = spyre_bo_buf(din[b]), dq = spyre_bo_buf(dout[b]);
		struct spyre_buf args[2] = { di, dq };

		/* H2D: the input buffer is free once compute of chunk i-2 read it. */
		if (i >= 2)
			TRY(spyre_stream_wait_event(st[H2D], ev[COMP][i - 2]));
		TRY(spyre_event_record(ts[H2D][i][0], st[H2D]));
		TRY(spyre_memcpy_async(st[H2D], &di, &hi, bytes));
		TRY(spyre_event_record(ts[H2D][i][1], st[H2D]));
		TRY(spyre_event_record(ev[H2D][i], st[H2D]));
		/* compute: after its upload, and after D2H of chunk i-2 freed the output. */
		TRY(spyre_stream_wait_event(st[COMP], ev[H2D][i]));
		if (i >= 2)
			TRY(spyre_stream_wait_event(st[COMP], ev[D2H][i - 2]));
		TRY(spyre_event_record(ts[COMP][i][0], st[COMP]));
		TRY(spyre_launch_async(st[COMP], prog, args, 2, NULL));
		TRY(spyre_event_record(ts[COMP][i][1], st[COMP]));
		TRY(spyre_event_record(ev[COMP][i], st[COMP]));
		/* D2H: after compute. */
		TRY(spyre_stream_wait_event(st[D2H], ev[COMP][i]));
		TRY(spyre_event_record(ts[D2H][i][0], st[D2H]));
		TRY(spyre_memcpy_async(st[D2H], &ho, &dq, bytes));
		TRY(spyre_event_record(ts[D2H][i][1], st[D2H]));
		TRY(spyre_event_record(ev[D2H][i], st[D2H]));
	}
	for (s = 0; s < NSTAGE; s++)
		TRY(spyre_stream_synchronize(st[s]));

	for (i = 0; i < (int)(n * chunks); i++)
		if (out[i] != (float)(i % 4099) + (float)reps) {
			if (!bad++)
				fprintf(stderr, "out[%d] = %g, want %g\n", i, out[i],
					(float)(i % 4099) + (float)reps);
		}
	for (s = 0; s < NSTAGE; s++)
		for (i = 0; i < chunks; i++) {
			TRY(spyre_event_timestamp_ns(ts[s][i][0], &sp[s][i].t0));
			TRY(spyre_event_timestamp_ns(ts[s][i][1], &sp[s][i].t1));
			if (sp[s][i].t0 < t0)
				t0 = sp[s][i].t0;
			if (sp[s][i].t1 > tend)
				tend = sp[s][i].t1;
			if (s == COMP)
				busy_c += sp[s][i].t1 - sp[s][i].t0;
		}

	printf("\ndevice timeline (us from the first transfer):\n");
	printf("chunk  %-19s %-19s %-19s\n", stage_name[0], stage_name[1], stage_name[2]);
	for (i = 0; i < chunks; i++) {
		printf("%5d", i);
		for (s = 0; s < NSTAGE; s++)
			printf("  %8.1f-%8.1f", (sp[s][i].t0 - t0) / 1e3, (sp[s][i].t1 - t0) / 1e3);
		printf("\n");
	}
	printf("\n");
	for (s = 0; s < NSTAGE; s++) {
		char line[81];
		int c;

		memset(line, '.', 80);
		line[80] = 0;
		for (i = 0; i < chunks; i++) {
			int a = (int)((sp[s][i].t0 - t0) * 80 / (tend - t0 + 1));
			int e = (int)((sp[s][i].t1 - t0) * 80 / (tend - t0 + 1));

			for (c = a; c <= e && c < 80; c++)
				line[c] = '0' + i % 10;
		}
		printf("%-8s|%s|\n", stage_name[s], line);
	}
	ov_in = overlap(sp[H2D], chunks, sp[COMP], chunks);
	ov_out = overlap(sp[D2H], chunks, sp[COMP], chunks);
	printf("\ntotal %.1f us; compute busy %.1f us; H2D overlapped compute %.1f us, "
	       "D2H overlapped compute %.1f us\n", (tend - t0) / 1e3, busy_c / 1e3, ov_in / 1e3,
	       ov_out / 1e3);
	printf("results: %s\n", bad ? "WRONG" : "correct");

	for (s = 0; s < NSTAGE; s++) {
		for (i = 0; i < chunks; i++) {
			spyre_event_destroy(ev[s][i]);
			spyre_event_destroy(ts[s][i][0]);
			spyre_event_destroy(ts[s][i][1]);
		}
		spyre_stream_destroy(st[s]);
	}
	for (i = 0; i < 2; i++) {
		spyre_bo_destroy(din[i]);
		spyre_bo_destroy(dout[i]);
	}
	spyre_bo_destroy(hin);
	spyre_bo_destroy(hout);
	spyre_program_destroy(prog);
	TRY(spyre_device_close(dev));
	if (bad) {
		printf("FAIL: wrong results\n");
		return 1;
	}
	if (ov_in && ov_out) {
		printf("OK: transfers overlapped compute\n");
		return 0;
	}
	if (!strcmp(props.backend, "sim") ||
	    (getenv("SPYRE_PIPELINE_REQUIRE_OVERLAP") &&
	     atoi(getenv("SPYRE_PIPELINE_REQUIRE_OVERLAP")))) {
		printf("FAIL: transfers did not overlap compute\n");
		return 1;
	}
	printf("NOTE: no overlap in this timeline: on a QEMU card the device timestamps follow "
	       "the guest's doorbells, and guest latency dominates (see the comment in "
	       "pipeline.c)\n");
	return 0;
}
