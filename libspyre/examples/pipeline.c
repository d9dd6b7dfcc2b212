// SPDX-License-Identifier: MIT
/*
 * pipeline: streams chunks through H2D -> compute -> D2H on three streams
 * linked by events, double-buffered on the card, and prints the device
 * timeline of every step with the time transfers overlapped compute.
 * Exits 1 if the results are wrong or transfers did not overlap compute.
 *
 *   pipeline [chunks] [chunk_mib] [reps]
 *
 * Each chunk's work is one recipe (built once, launched per chunk with that
 * chunk's buffers bound): upload, compute and download on their streams,
 * ordered by recipe events, with device timestamps around each step riding
 * in the same submissions. A launch is one SUBMIT per stream; the events
 * that guard buffer reuse between chunks cost none (a plain event recorded
 * after work is the stream's last point). So a chunk costs the host three
 * submits, and in QEMU, where the card starts a job no earlier than the
 * guest rang its doorbell and a TCG guest needs 100-300 us per SUBMIT, the
 * defaults (32 MiB chunks) give the card far more work per chunk than the
 * guest needs to issue it: the card is the bottleneck and transfers overlap
 * compute on both backends (the sim backend runs on a virtual clock).
 */
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
static const char *backend_name = "";
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

/*
 * How close the schedule came to perfect overlap: no schedule finishes
 * before the busiest engine (H2D lane, compute, D2H lane) is done, so
 * (busiest engine's total) / (modelled device time) is 1.0 for perfect
 * overlap and about 1/3 when the three stages run back to back. With
 * SPYRE_BENCH_RECORDS=1 the figure is also an "@bench" record for
 * bench/report.
 */
static void report_overlap(struct span sp[NSTAGE][MAX_CHUNKS], int chunks, uint64_t total,
			   bool one_stream)
{
	uint64_t busy, bound = 0;
	const char *rec = getenv("SPYRE_BENCH_RECORDS");
	int s, i;

	for (s = 0; s < NSTAGE; s++) {
		for (busy = 0, i = 0; i < chunks; i++)
			busy += sp[s][i].t1 - sp[s][i].t0;
		if (busy > bound)
			bound = busy;
	}
	printf("busiest engine %.1f us = %.3f of the device time (1.0: perfect overlap)\n",
	       bound / 1e3, total ? (double)bound / total : 0);
	if (rec && !strcmp(rec, "1"))
		printf("@bench {\"name\": \"pipeline_overlap_%s\", \"value\": %.6g, "
		       "\"unit\": \"x\", \"ratio_of\": \"lower bound max(H2D, compute, D2H busy) / "
		       "modelled device time\", \"how\": \"examples/pipeline, %d chunks, %s, "
		       "device timestamps\", \"backend\": \"%s\"}\n",
		       one_stream ? "1stream" : "3streams", total ? (double)bound / total : 0,
		       chunks, one_stream ? "every stage on one stream (in order)" :
		       "three streams linked by events", backend_name);
}

#define PERIOD 4099	/* input value x[i] = i % PERIOD */

/*
 * The input and the check work a period at a time with memcpy/memcmp: a
 * TCG guest spends seconds on a per-element float loop over 512 MiB.
 */
static void fill_input(float *in, uint64_t n)
{
	uint64_t i, done;

	for (i = 0; i < PERIOD && i < n; i++)
		in[i] = (float)i;
	for (done = i; done < n; done += i) {
		i = done < n - done ? done : n - done;
		memcpy(in + done, in, i * sizeof(*in));
	}
}

/* Number of wrong outputs (y = x + reps); prints the first. */
static int check_output(const float *out, uint64_t n, unsigned int reps)
{
	float want[PERIOD];
	uint64_t i, j, len;
	int bad = 0;

	for (i = 0; i < PERIOD; i++)
		want[i] = (float)i + (float)reps;
	for (i = 0; i < n; i += len) {
		len = n - i < PERIOD ? n - i : PERIOD;
		if (!memcmp(out + i, want, len * sizeof(*out)))
			continue;
		for (j = 0; j < len; j++) {
			if (out[i + j] == want[j])
				continue;
			if (!bad++)
				fprintf(stderr, "out[%llu] = %g, want %g\n",
					(unsigned long long)(i + j), out[i + j], want[j]);
		}
	}
	return bad;
}

/* Argument slots of the chunk recipe. */
enum { A_HIN, A_DIN, A_DOUT, A_HOUT, A_TS, NARGS };

/* Offset in a chunk's timestamp slice of stage @s's start (@end = 0) or end. */
static struct spyre_operand ts_slot(int s, int end)
{
	struct spyre_operand o = spyre_op_arg(A_TS);

	o.offset = (uint64_t)(2 * s + end) * sizeof(uint64_t);
	o.size = sizeof(uint64_t);
	return o;
}

/* One chunk: upload, compute, download, with timestamps around each step. */
static spyre_recipe *chunk_recipe(spyre_device *dev, const spyre_program *prog, uint64_t bytes)
{
	struct spyre_operand kargs[2] = { spyre_op_arg(A_DIN), spyre_op_arg(A_DOUT) };
	struct spyre_operand none = { SPYRE_OPERAND_BUF, 0, { 0, 0, 0 }, 0, 0 };
	spyre_recipe *r;

	TRY(spyre_recipe_create(dev, NSTAGE, NARGS, 0, &r));
	TRY(spyre_recipe_timestamp(r, H2D, ts_slot(H2D, 0)));
	TRY(spyre_recipe_h2d(r, H2D, spyre_op_arg(A_DIN), spyre_op_arg(A_HIN), bytes));
	TRY(spyre_recipe_timestamp(r, H2D, ts_slot(H2D, 1)));
	TRY(spyre_recipe_signal(r, H2D, 0));
	TRY(spyre_recipe_wait(r, COMP, 0));
	TRY(spyre_recipe_timestamp(r, COMP, ts_slot(COMP, 0)));
	TRY(spyre_recipe_compute(r, COMP, prog, kargs, 2, none));
	TRY(spyre_recipe_timestamp(r, COMP, ts_slot(COMP, 1)));
	TRY(spyre_recipe_signal(r, COMP, 1));
	TRY(spyre_recipe_wait(r, D2H, 1));
	TRY(spyre_recipe_timestamp(r, D2H, ts_slot(D2H, 0)));
	TRY(spyre_recipe_d2h(r, D2H, spyre_op_arg(A_HOUT), spyre_op_arg(A_DOUT), bytes));
	TRY(spyre_recipe_timestamp(r, D2H, ts_slot(D2H, 1)));
	TRY(spyre_recipe_finalize(r));
	return r;
}

int main(int argc, char **argv)
{
	int chunks = argc > 1 ? atoi(argv[1]) : 8;
	uint64_t mib = argc > 2 ? strtoull(argv[2], NULL, 0) : 32;
	unsigned int reps = argc > 3 ? atoi(argv[3]) : 8;
	/* "1": every stage on one stream, the in-order baseline (no overlap) */
	bool one_stream = argc > 4 && !strcmp(argv[4], "1");
	uint64_t n = mib << 18, bytes = mib << 20;	/* fp32 values per chunk */
	spyre_event *freed_in[MAX_CHUNKS], *freed_out[MAX_CHUNKS];
	struct span sp[NSTAGE][MAX_CHUNKS];
	spyre_stream *st[NSTAGE];
	spyre_bo *hin, *hout, *hts, *din[2], *dout[2];
	struct spyre_device_props props;
	spyre_program *prog;
	spyre_recipe *rcp;
	spyre_device *dev;
	uint64_t t0 = UINT64_MAX, tend = 0, ov_in, ov_out, busy_c = 0, *ts;
	unsigned int submits;
	float *in, *out;
	void *img, *m;
	size_t sz;
	int i, s, bad = 0;

	if (chunks < 2 || chunks > MAX_CHUNKS || !mib || mib > 64)
		DIE("usage: pipeline [chunks 2..64] [chunk MiB 1..64] [reps] [1: one stream]");
	TRY(spyre_device_open(0, &dev));
	TRY(spyre_device_get_props(dev, &props));
	backend_name = props.backend;
	/* the bench report shows user-mode queue figures as their own backend */
	if (!strcmp(backend_name, "drm") && getenv("SPYRE_DRM_QUEUES") &&
	    !strcmp(getenv("SPYRE_DRM_QUEUES"), "user"))
		backend_name = "drm-uq";
	printf("pipeline on %s (%s backend): %d chunks of %llu MiB, %u vector passes each\n",
	       props.name, props.backend, chunks, (unsigned long long)mib, reps);

	img = kern_scale_rep_f32(n, 1.0f, 1.0f, reps, &sz);	/* y = x + reps */
	TRY(spyre_program_load(dev, img, sz, &prog));
	free(img);
	TRY(spyre_bo_create(dev, bytes * chunks, SPYRE_MEM_HOST, &hin));
	TRY(spyre_bo_create(dev, bytes * chunks, SPYRE_MEM_HOST, &hout));
	TRY(spyre_bo_create(dev, sizeof(uint64_t) * 2 * NSTAGE * chunks, SPYRE_MEM_HOST, &hts));
	TRY(spyre_bo_map(hin, &m));
	in = m;
	TRY(spyre_bo_map(hout, &m));
	out = m;
	TRY(spyre_bo_map(hts, &m));
	ts = m;
	for (i = 0; i < 2; i++) {
		TRY(spyre_bo_create(dev, bytes, SPYRE_MEM_DEVICE, &din[i]));
		TRY(spyre_bo_create(dev, bytes, SPYRE_MEM_DEVICE, &dout[i]));
	}
	fill_input(in, n * chunks);
	memset(out, 0, bytes * chunks);
	TRY(spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &st[COMP]));
	if (one_stream) {
		st[H2D] = st[D2H] = st[COMP];	/* a stream takes copies and launches */
	} else {
		TRY(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &st[H2D]));
		TRY(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &st[D2H]));
	}
	for (i = 0; i < chunks; i++) {
		TRY(spyre_event_create(dev, 0, &freed_in[i]));
		TRY(spyre_event_create(dev, 0, &freed_out[i]));
	}
	rcp = chunk_recipe(dev, prog, bytes);
	TRY(spyre_recipe_submits_per_launch(rcp, &submits));
	printf("%u submits per chunk\n", submits);

	for (i = 0; i < chunks; i++) {
		int b = i % 2;
		struct spyre_buf args[NARGS] = {
			[A_HIN] = { hin, i * bytes, bytes },
			[A_DIN] = spyre_bo_buf(din[b]),
			[A_DOUT] = spyre_bo_buf(dout[b]),
			[A_HOUT] = { hout, i * bytes, bytes },
			[A_TS] = { hts, i * 2 * NSTAGE * sizeof(uint64_t),
				   2 * NSTAGE * sizeof(uint64_t) },
		};

		/*
		 * Buffer reuse: the upload into din[b] waits until compute of
		 * chunk i-2 read it, the compute into dout[b] until the download
		 * of chunk i-2 emptied it. Both waits ride in this launch's
		 * submissions on those streams.
		 */
		if (i >= 2) {
			TRY(spyre_stream_wait_event(st[H2D], freed_in[i - 2]));
			TRY(spyre_stream_wait_event(st[COMP], freed_out[i - 2]));
		}
		TRY(spyre_recipe_launch(rcp, st, args, NARGS));
		TRY(spyre_event_record(freed_in[i], st[COMP]));
		TRY(spyre_event_record(freed_out[i], st[D2H]));
	}
	if (spyre_device_synchronize(dev)) {
		struct spyre_error_info e;

		/* Which operation of which stream failed, as a framework would report it. */
		if (!spyre_device_get_error(dev, &e) && e.error)
			fprintf(stderr, "operation %llu (%s) failed: %d\n",
				(unsigned long long)e.op, e.call, e.error);
		DIE("spyre_device_synchronize");
	}

	bad = check_output(out, n * chunks, reps);
	for (s = 0; s < NSTAGE; s++)
		for (i = 0; i < chunks; i++) {
			sp[s][i].t0 = ts[(i * NSTAGE + s) * 2];
			sp[s][i].t1 = ts[(i * NSTAGE + s) * 2 + 1];
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
	report_overlap(sp, chunks, tend - t0, one_stream);
	printf("results: %s\n", bad ? "WRONG" : "correct");

	TRY(spyre_recipe_destroy(rcp));
	for (i = 0; i < chunks; i++) {
		spyre_event_destroy(freed_in[i]);
		spyre_event_destroy(freed_out[i]);
	}
	spyre_stream_destroy(st[COMP]);
	if (!one_stream) {
		spyre_stream_destroy(st[H2D]);
		spyre_stream_destroy(st[D2H]);
	}
	for (i = 0; i < 2; i++) {
		spyre_bo_destroy(din[i]);
		spyre_bo_destroy(dout[i]);
	}
	spyre_bo_destroy(hin);
	spyre_bo_destroy(hout);
	spyre_bo_destroy(hts);
	spyre_program_destroy(prog);
	TRY(spyre_device_close(dev));
	if (bad) {
		printf("FAIL: wrong results\n");
		return 1;
	}
	if (one_stream) {
		printf("OK: one stream ran the stages in order\n");
		return 0;
	}
	if (ov_in && ov_out) {
		printf("OK: transfers overlapped compute\n");
		return 0;
	}
	printf("FAIL: transfers did not overlap compute\n");
	return 1;
}
