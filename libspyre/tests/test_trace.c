// SPDX-License-Identifier: MIT
/*
 * Device timeline traces: the JSON holds one "X" span per submission on
 * its engine's track, spans of one stream follow each other on the device
 * clock, host submits are instants on tid 0, spans carry the submitting
 * thread's label, and tracing leaves the data intact.
 */
#include <stdio.h>
#include <unistd.h>

#include "harness.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, n + 1);
	if (buf && fread(buf, 1, n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

TEST(trace_copies_on_dma_track)
{
	char path[] = "/tmp/spyre-trace-XXXXXX";
	const uint64_t size = 256 * 1024;
	spyre_bo *src, *dst, *d1;
	struct spyre_buf bs, bd, b1;
	double prev_end = -1;
	int fd, nx = 0, ni = 0;
	spyre_stream *s;
	void *sm, *dm;
	char *json, *p;

	fd = mkstemp(path);
	ASSERT(fd >= 0, "mkstemp");
	close(fd);
	FAILS_WITH(spyre_trace_stop(dev), -EINVAL, "no trace is running");
	FAILS_WITH(spyre_trace_start(dev, ""), -EINVAL, "path");
	OK(spyre_trace_start(dev, path));
	FAILS_WITH(spyre_trace_start(dev, path), -EBUSY, "already running");
	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &s));
	OK(host_bo(dev, size, &src, &sm));
	OK(host_bo(dev, size, &dst, &dm));
	OK(spyre_bo_create(dev, size, SPYRE_MEM_DEVICE, &d1));
	fill_pat(sm, size, 7, 0);
	memset(dm, 0, size);
	bs = buf_of(src, 0, size);
	bd = buf_of(dst, 0, size);
	b1 = buf_of(d1, 0, size);
	spyre_trace_label("aten::\"up\"");	/* escaped in the JSON */
	OK(spyre_memcpy_async(s, &b1, &bs, size));
	spyre_trace_label(NULL);
	OK(spyre_memcpy_async(s, &bd, &b1, size));
	OK(spyre_stream_synchronize(s));
	OK(spyre_trace_stop(dev));
	CHECK(memcmp(sm, dm, size) == 0, "traced copies changed the data");

	json = slurp(path);
	ASSERT(json, "cannot read %s", path);
	CHECK(strstr(json, "\"traceEvents\":[") != NULL, "no traceEvents array");
	CHECK(strstr(json, "\"name\":\"dma 0\"") != NULL, "no dma track name");
	p = strstr(json, "\"ph\":\"X\",\"name\":\"aten::\\\"up\\\"\"");
	CHECK(p && strstr(p, "\"call\":\"spyre_memcpy_async\""), "no labelled copy span");
	CHECK(strstr(json, "\"ph\":\"X\",\"name\":\"spyre_memcpy_async\""),
	      "the unlabelled copy is not named after its call");
	for (p = strstr(json, "\"ph\":\"X\""); p; p = strstr(p + 1, "\"ph\":\"X\"")) {
		int tid = -1;
		double ts = -1, dur = -1;
		char *q = strstr(p, "\"tid\":");

		if (q)
			sscanf(q, "\"tid\":%d,\"ts\":%lf,\"dur\":%lf", &tid, &ts, &dur);
		CHECK(tid == 2, "copy span on tid %d, not the DMA track", tid);
		CHECK(ts >= 0 && dur > 0, "span ts %f dur %f", ts, dur);
		/* one stream: the next span starts after the previous one ends */
		CHECK(ts + 0.0015 >= prev_end, "span at %f overlaps one ending at %f", ts,
		      prev_end);
		prev_end = ts + dur;
		nx++;
	}
	for (p = strstr(json, "\"ph\":\"i\""); p; p = strstr(p + 1, "\"ph\":\"i\""))
		ni++;
	CHECK(nx >= 2, "%d device spans for two copies", nx);
	CHECK(ni == nx, "%d host submits for %d device spans", ni, nx);
	free(json);
	unlink(path);
	spyre_bo_destroy(src);
	spyre_bo_destroy(dst);
	spyre_bo_destroy(d1);
	OK(spyre_stream_destroy(s));
}

TEST(trace_spans_in_memory)
{
	const uint64_t size = 64 * 1024;
	struct spyre_trace_span *v = NULL;
	spyre_bo *src, *d1;
	struct spyre_buf bs, b1;
	spyre_stream *s;
	unsigned int n = 0, i;
	uint64_t t0 = 0;
	void *sm;

	FAILS_WITH(spyre_trace_stop_spans(dev, &v, &n), -EINVAL, "no trace is running");
	FAILS_WITH(spyre_trace_stop_spans(dev, NULL, &n), -EINVAL, "NULL");
	OK(spyre_trace_start(dev, NULL));	/* no file: spans only */
	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &s));
	OK(host_bo(dev, size, &src, &sm));
	OK(spyre_bo_create(dev, size, SPYRE_MEM_DEVICE, &d1));
	bs = buf_of(src, 0, size);
	b1 = buf_of(d1, 0, size);
	spyre_trace_label("first");
	OK(spyre_memcpy_async(s, &b1, &bs, size));
	spyre_trace_label(NULL);
	OK(spyre_memcpy_async(s, &bs, &b1, size));
	OK(spyre_trace_stop_spans(dev, &v, &n));
	ASSERT(v && n == 2, "%u spans for two copies", n);
	CHECK(!strcmp(v[0].name, "first") && !strcmp(v[0].call, "spyre_memcpy_async"),
	      "span 0 is %s (%s)", v[0].name, v[0].call);
	CHECK(!strcmp(v[1].name, "spyre_memcpy_async"), "span 1 is %s", v[1].name);
	for (i = 0; i < n; i++) {
		CHECK(v[i].engine == SPYRE_ENGINE_DMA && v[i].track == 2 && v[i].cmds == 1,
		      "span %u: engine %d track %u cmds %u", i, v[i].engine, v[i].track,
		      v[i].cmds);
		CHECK(v[i].end_ns > v[i].start_ns && v[i].start_ns >= t0,
		      "span %u: %llu..%llu after %llu", i, (unsigned long long)v[i].start_ns,
		      (unsigned long long)v[i].end_ns, (unsigned long long)t0);
		CHECK(v[i].host_ns > 0, "span %u: no host submit time", i);
		t0 = v[i].end_ns;
	}
	free(v);
	FAILS_WITH(spyre_trace_stop(dev), -EINVAL, "no trace is running");
	spyre_bo_destroy(src);
	spyre_bo_destroy(d1);
	OK(spyre_stream_destroy(s));
}
