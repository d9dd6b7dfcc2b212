// SPDX-License-Identifier: MIT
/*
 * Device timeline traces (spyre_trace_start/stop, SPYRE_TRACE=path.json).
 *
 * While a trace runs, every submission is bracketed by two TIMESTAMP
 * commands into a host BO: the device writes its modelled clock when the
 * queue reaches the submission and when its last command is done, so the
 * span is the submission's modelled start and end on its engine. The host
 * submit time is kept too. spyre_trace_stop waits for the device and writes
 * Chrome trace / Perfetto JSON: one pid per device, one tid per engine
 * (tid 0 host submits, 1 compute, 2.. one per DMA queue, i.e. lane), ph "X"
 * spans, ts/dur in us. A span is named after the submitting thread's
 * spyre_trace_label (e.g. the framework op that launched it), else the
 * libspyre call; the call is kept in its args.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define TRACE_BO_SIZE (64u * 1024)	/* 4096 submissions of two stamps */
#define TRACE_LANES 14		/* DMA tracks; more queues share the last */
#define TRACE_MAX (TRACE_BO_SIZE / (2 * sizeof(uint64_t)))

struct spy_trace_ent {
	uint64_t host_ns;
	int engine;
	uint32_t queue_id;
	uint32_t ncmds;
	const char *what;
	const char *label;
};

struct spy_trace {
	pthread_mutex_t lock;
	char *path;
	spyre_bo *bo;
	volatile uint64_t *ts;
	struct spy_trace_ent ent[TRACE_MAX];
	unsigned int n;
	unsigned long dropped;		/* submissions past TRACE_MAX or too long */
	uint64_t host0;
};

static __thread const char *trace_label;

void spyre_trace_label(const char *label)
{
	trace_label = label && *label ? label : NULL;
}

const char *spy_trace_label(void)
{
	return trace_label;
}

int spyre_trace_start(spyre_device *dev, const char *path)
{
	struct spy_trace *t;
	void *map;
	int ret;

	if (!dev || (path && !*path))
		return spy_err(-EINVAL, "spyre_trace_start: device is NULL or path is empty");
	if (dev->trace)
		return spy_err(-EBUSY, "spyre_trace_start: %s: a trace is already running",
			       dev->name);
	t = calloc(1, sizeof(*t));
	if (!t)
		return spy_err(-ENOMEM, "spyre_trace_start: out of memory");
	t->path = path ? strdup(path) : NULL;
	ret = !path || t->path ? 0 : -ENOMEM;
	if (!ret)
		ret = spyre_bo_create(dev, TRACE_BO_SIZE, SPYRE_MEM_HOST, &t->bo);
	if (!ret)
		ret = spyre_bo_map(t->bo, &map);
	if (ret) {
		if (t->bo)
			spyre_bo_destroy(t->bo);
		free(t->path);
		free(t);
		return spy_err(ret, "spyre_trace_start: %s: cannot set up the trace buffer",
			       dev->name);
	}
	memset(map, 0xff, TRACE_BO_SIZE);	/* device time 0 is a real stamp */
	t->ts = map;
	t->host0 = spy_now_ns();
	pthread_mutex_init(&t->lock, NULL);
	__atomic_store_n(&dev->trace, t, __ATOMIC_RELEASE);
	return 0;
}

/* Room in @sub for the trace's two TIMESTAMPs (commands and ring space)? */
static bool trace_fits(const spyre_device *dev, const struct drm_spyre_submit *sub)
{
	const struct drm_spyre_cmd *c = (const struct drm_spyre_cmd *)(uintptr_t)sub->cmds;
	uint64_t i, descs = 0;

	if (sub->cmd_count + SPY_TRACE_CMDS > dev->max_cmds)
		return false;
	for (i = 0; i < sub->cmd_count; i++)
		descs += spy_cmd_descs(&c[i]);
	return descs + SPY_TRACE_CMDS <= dev->max_cmds * SPY_DESCS_PER_CMD;
}

int spy_trace_submit(spyre_device *dev, const struct drm_spyre_submit *sub, int engine,
		     const char *what, const char *label)
{
	struct spy_trace *t = __atomic_load_n(&dev->trace, __ATOMIC_ACQUIRE);
	struct drm_spyre_submit s2;
	struct drm_spyre_cmd *cmds;
	unsigned int slot;
	int ret;

	if (!t)
		return dev->ops->submit(dev, sub);
	pthread_mutex_lock(&t->lock);
	if (t->n >= TRACE_MAX || !trace_fits(dev, sub)) {
		t->dropped++;
		pthread_mutex_unlock(&t->lock);
		return dev->ops->submit(dev, sub);
	}
	slot = t->n;
	cmds = calloc(sub->cmd_count + 2, sizeof(*cmds));
	if (!cmds) {
		t->dropped++;
		pthread_mutex_unlock(&t->lock);
		return dev->ops->submit(dev, sub);
	}
	spy_cmd_timestamp(&cmds[0], t->bo, 2 * slot * sizeof(uint64_t));
	if (sub->cmd_count)
		memcpy(&cmds[1], (const void *)(uintptr_t)sub->cmds,
		       sub->cmd_count * sizeof(*cmds));
	spy_cmd_timestamp(&cmds[sub->cmd_count + 1], t->bo, (2 * slot + 1) * sizeof(uint64_t));
	s2 = *sub;
	s2.cmds = (uintptr_t)cmds;
	s2.cmd_count = sub->cmd_count + 2;
	s2.cmd_stride = sizeof(*cmds);
	t->ent[slot].host_ns = spy_now_ns();
	ret = dev->ops->submit(dev, &s2);
	if (!ret) {
		t->ent[slot].engine = engine;
		t->ent[slot].queue_id = sub->queue_id;
		t->ent[slot].ncmds = sub->cmd_count;
		t->ent[slot].what = what;
		t->ent[slot].label = label;
		t->n++;
	}
	pthread_mutex_unlock(&t->lock);
	free(cmds);
	return ret;
}

/* A JSON string: labels come from callers, so quotes and controls are escaped. */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static const char *engine_name(int engine)
{
	return engine == SPYRE_ENGINE_COMPUTE ? "compute" : "dma";
}

/* DMA lanes: one track per DMA queue, in order of first use. */
static unsigned int trace_lanes(const struct spy_trace *t, uint32_t *lanes)
{
	unsigned int i, j, n = 0;

	for (i = 0; i < t->n; i++) {
		if (t->ent[i].engine == SPYRE_ENGINE_COMPUTE)
			continue;
		for (j = 0; j < n && lanes[j] != t->ent[i].queue_id; j++)
			;
		if (j == n && n < TRACE_LANES)
			lanes[n++] = t->ent[i].queue_id;
	}
	return n;
}

static int trace_tid(const struct spy_trace_ent *e, const uint32_t *lanes, unsigned int n)
{
	unsigned int j;

	if (e->engine == SPYRE_ENGINE_COMPUTE)
		return 1;
	for (j = 0; j < n && lanes[j] != e->queue_id; j++)
		;
	return 2 + (j < n ? j : n - 1);
}

/*
 * Submission @i as a span; false when it has no device stamps (it failed
 * on the device). Host instants exist for every submission either way.
 */
static bool trace_span(const struct spy_trace *t, unsigned int i, const uint32_t *lanes,
		       unsigned int nlanes, struct spyre_trace_span *sp)
{
	const struct spy_trace_ent *e = &t->ent[i];
	uint64_t a = t->ts[2 * i], b = t->ts[2 * i + 1];

	sp->call = e->what ? e->what : "submit";
	sp->name = e->label ? e->label : sp->call;
	sp->engine = e->engine;
	sp->track = (uint32_t)trace_tid(e, lanes, nlanes);
	sp->cmds = e->ncmds;
	sp->host_ns = e->host_ns;
	sp->start_ns = a;
	sp->end_ns = b;
	return a != UINT64_MAX && b != UINT64_MAX && b >= a;
}

static int trace_write(spyre_device *dev, struct spy_trace *t, FILE *f)
{
	uint64_t dev0 = UINT64_MAX;
	unsigned int i, nlanes = 0, written = 0;
	uint32_t lanes[TRACE_LANES];

	for (i = 0; i < t->n; i++)
		if (t->ts[2 * i] < dev0)
			dev0 = t->ts[2 * i];
	fprintf(f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"device\":\"%s\",\"dropped\":%lu},"
		"\n\"traceEvents\":[\n", dev->name, t->dropped);
	fprintf(f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"tid\":0,"
		"\"args\":{\"name\":\"%s\"}},\n", dev->name);
	fprintf(f, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":0,"
		"\"args\":{\"name\":\"host submit\"}},\n");
	fprintf(f, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":1,"
		"\"args\":{\"name\":\"compute\"}}");
	nlanes = trace_lanes(t, lanes);
	for (i = 0; i < nlanes; i++)
		fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,"
			"\"tid\":%u,\"args\":{\"name\":\"dma %u\"}}", 2 + i, i);
	for (i = 0; i < t->n; i++) {
		struct spyre_trace_span sp;
		bool ran = trace_span(t, i, lanes, nlanes, &sp);

		fprintf(f, ",\n{\"ph\":\"i\",\"s\":\"t\",\"name\":");
		json_str(f, sp.name);
		fprintf(f, ",\"pid\":1,\"tid\":0,\"ts\":%.3f,\"args\":{\"engine\":\"%s\","
			"\"call\":\"%s\",\"seq\":%u}}", (double)(sp.host_ns - t->host0) / 1000.0,
			engine_name(sp.engine), sp.call, i);
		if (!ran)
			continue;	/* the submission failed on the device */
		fprintf(f, ",\n{\"ph\":\"X\",\"name\":");
		json_str(f, sp.name);
		fprintf(f, ",\"cat\":\"%s\",\"pid\":1,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,"
			"\"args\":{\"call\":\"%s\",\"cmds\":%u,\"seq\":%u}}",
			engine_name(sp.engine), sp.track, (double)(sp.start_ns - dev0) / 1000.0,
			(double)(sp.end_ns - sp.start_ns) / 1000.0, sp.call, sp.cmds, i);
		written++;
	}
	fprintf(f, "\n]}\n");
	return written;
}

/* The recorded spans with device stamps, for spyre_trace_stop_spans. */
static int trace_spans(struct spy_trace *t, struct spyre_trace_span **out, unsigned int *n)
{
	struct spyre_trace_span *v = calloc(t->n ? t->n : 1, sizeof(*v));
	unsigned int i, k = 0, nlanes;
	uint32_t lanes[TRACE_LANES];

	if (!v)
		return -ENOMEM;
	nlanes = trace_lanes(t, lanes);
	for (i = 0; i < t->n; i++)
		if (trace_span(t, i, lanes, nlanes, &v[k]))
			k++;
	*out = v;
	*n = k;
	return 0;
}

static int trace_finish(spyre_device *dev, const char *call, struct spyre_trace_span **spans,
			unsigned int *nspans)
{
	struct spy_trace *t;
	FILE *f;
	int ret;

	if (!dev)
		return spy_err(-EINVAL, "%s: device is NULL", call);
	t = __atomic_load_n(&dev->trace, __ATOMIC_ACQUIRE);
	if (!t)
		return spy_err(-EINVAL, "%s: %s: no trace is running", call, dev->name);
	/* Errors of the traced work stay with its streams; the stamps are read anyway. */
	spyre_device_synchronize(dev);
	__atomic_store_n(&dev->trace, NULL, __ATOMIC_RELEASE);
	pthread_mutex_lock(&t->lock);	/* a submit still inside spy_trace_submit */
	pthread_mutex_unlock(&t->lock);
	ret = 0;
	if (spans && trace_spans(t, spans, nspans))
		ret = spy_err(-ENOMEM, "%s: %s: out of memory", call, dev->name);
	f = t->path ? fopen(t->path, "w") : NULL;
	if (t->path && !f) {
		ret = spy_err(-errno, "%s: %s: cannot write %s", call, dev->name, t->path);
	} else if (f) {
		trace_write(dev, t, f);
		if (fclose(f))
			ret = spy_err(-EIO, "%s: %s: writing %s failed", call, dev->name, t->path);
	}
	if (ret && spans && *spans) {
		free(*spans);
		*spans = NULL;
		*nspans = 0;
	}
	spyre_bo_unmap(t->bo);
	spyre_bo_destroy(t->bo);
	pthread_mutex_destroy(&t->lock);
	free(t->path);
	free(t);
	return ret;
}

int spyre_trace_stop(spyre_device *dev)
{
	return trace_finish(dev, "spyre_trace_stop", NULL, NULL);
}

int spyre_trace_stop_spans(spyre_device *dev, struct spyre_trace_span **spans, unsigned int *n)
{
	if (!spans || !n)
		return spy_err(-EINVAL, "spyre_trace_stop_spans: spans or n is NULL");
	*spans = NULL;
	*n = 0;
	return trace_finish(dev, "spyre_trace_stop_spans", spans, n);
}
