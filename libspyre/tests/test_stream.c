// SPDX-License-Identifier: MIT
/* Stream order, query, host work, events across streams, timing. */
#include <pthread.h>
#include <unistd.h>

#include "harness.h"

/*
 * Each round overwrites the same device buffer with a new pattern and
 * copies it out to that round's host buffer, without synchronising in
 * between: only stream order makes every round see its own pattern.
 */
TEST(stream_order)
{
	enum { ROUNDS = 16, SZ = 256 << 10 };
	spyre_bo *src[ROUNDS], *out[ROUNDS], *d;
	void *sm[ROUNDS], *om[ROUNDS];
	struct spyre_buf bd;
	spyre_stream *s;
	int i;

	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &s));
	OK(spyre_bo_create(dev, SZ, SPYRE_MEM_DEVICE, &d));
	bd = spyre_bo_buf(d);
	for (i = 0; i < ROUNDS; i++) {
		OK(host_bo(dev, SZ, &src[i], &sm[i]));
		OK(host_bo(dev, SZ, &out[i], &om[i]));
		fill_pat(sm[i], SZ, 100 + i, 0);
	}
	for (i = 0; i < ROUNDS; i++) {
		struct spyre_buf a = spyre_bo_buf(src[i]), b = spyre_bo_buf(out[i]);

		OK(spyre_memcpy_async(s, &bd, &a, SZ));
		OK(spyre_memcpy_async(s, &b, &bd, SZ));
	}
	OK(spyre_stream_synchronize(s));
	for (i = 0; i < ROUNDS; i++)
		CHECK(diff_pat(om[i], SZ, 100 + i, 0) < 0, "round %d saw another round's data", i);
	OK(spyre_stream_query(s));
	OK(spyre_stream_destroy(s));
	for (i = 0; i < ROUNDS; i++) {
		spyre_bo_destroy(src[i]);
		spyre_bo_destroy(out[i]);
	}
	spyre_bo_destroy(d);
}

struct gate {
	pthread_mutex_t m;
	pthread_cond_t c;
	int open;
	int ran;
};

static void wait_gate(void *arg)
{
	struct gate *g = arg;

	pthread_mutex_lock(&g->m);
	while (!g->open)
		pthread_cond_wait(&g->c, &g->m);
	g->ran++;
	pthread_mutex_unlock(&g->m);
}

static void open_gate(struct gate *g)
{
	pthread_mutex_lock(&g->m);
	g->open = 1;
	pthread_cond_broadcast(&g->c);
	pthread_mutex_unlock(&g->m);
}

/* While host work blocks, the stream (and work queued behind it) is busy. */
TEST(stream_query_and_blocked_host_work)
{
	struct gate g = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0 };
	spyre_stream *s;
	spyre_bo *h, *d;
	void *m;
	struct spyre_buf bh, bd;

	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &s));
	OK(spyre_stream_query(s));
	OK(host_bo(dev, 4096, &h, &m));
	OK(spyre_bo_create(dev, 4096, SPYRE_MEM_DEVICE, &d));
	bh = spyre_bo_buf(h);
	bd = spyre_bo_buf(d);
	OK(spyre_host_work_async(s, wait_gate, &g));
	OK(spyre_memcpy_async(s, &bd, &bh, 4096));	/* deferred behind the host work */
	usleep(50000);
	CHECK(spyre_stream_query(s) == -EBUSY, "stream idle while host work blocks");
	CHECK(g.ran == 0, "host work ran early");
	open_gate(&g);
	OK(spyre_stream_synchronize(s));
	CHECK(g.ran == 1, "host work ran %d times", g.ran);
	OK(spyre_stream_query(s));
	OK(spyre_stream_destroy(s));
	spyre_bo_destroy(h);
	spyre_bo_destroy(d);
}

struct hw_ctx {
	uint8_t *seen;		/* host buffer a D2H wrote before the callback */
	uint8_t *next;		/* host buffer the next H2D reads after it */
	int64_t bad;
	int calls;
};

static void host_step(void *arg)
{
	struct hw_ctx *c = arg;

	c->bad = diff_pat(c->seen, 1 << 20, 7, 0);	/* the earlier D2H is complete */
	fill_pat(c->next, 1 << 20, 8, 0);		/* the later H2D must see this */
	c->calls++;
}

TEST(host_work_order)
{
	struct hw_ctx c = { 0 };
	spyre_bo *in, *seen, *next, *out, *d;
	void *mi, *ms, *mn, *mo;
	struct spyre_buf bi, bs, bn, bo, bd;
	spyre_stream *s;

	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &s));
	OK(host_bo(dev, 1 << 20, &in, &mi));
	OK(host_bo(dev, 1 << 20, &seen, &ms));
	OK(host_bo(dev, 1 << 20, &next, &mn));
	OK(host_bo(dev, 1 << 20, &out, &mo));
	OK(spyre_bo_create(dev, 1 << 20, SPYRE_MEM_DEVICE, &d));
	fill_pat(mi, 1 << 20, 7, 0);
	memset(mn, 0, 1 << 20);
	c.seen = ms;
	c.next = mn;
	bi = spyre_bo_buf(in);
	bs = spyre_bo_buf(seen);
	bn = spyre_bo_buf(next);
	bo = spyre_bo_buf(out);
	bd = spyre_bo_buf(d);
	OK(spyre_memcpy_async(s, &bd, &bi, 1 << 20));
	OK(spyre_memcpy_async(s, &bs, &bd, 1 << 20));
	OK(spyre_host_work_async(s, host_step, &c));
	OK(spyre_memcpy_async(s, &bd, &bn, 1 << 20));
	OK(spyre_memcpy_async(s, &bo, &bd, 1 << 20));
	OK(spyre_stream_synchronize(s));
	CHECK(c.calls == 1, "calls %d", c.calls);
	CHECK(c.bad < 0, "host work ran before the preceding D2H finished (byte %lld)",
	      (long long)c.bad);
	CHECK(diff_pat(mo, 1 << 20, 8, 0) < 0, "the following H2D ran before the host work");
	OK(spyre_stream_destroy(s));
	spyre_bo_destroy(in);
	spyre_bo_destroy(seen);
	spyre_bo_destroy(next);
	spyre_bo_destroy(out);
	spyre_bo_destroy(d);
}

/*
 * Stream A uploads, records an event; stream B waits for it and copies the
 * data on. With the wait, B always sees A's data; host work on A before
 * the record makes the event point appear only later (the deferred path).
 */
TEST(cross_stream_events)
{
	struct gate g = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0 };
	enum { SZ = 4 << 20 };
	spyre_stream *a, *b;
	spyre_event *ev;
	spyre_bo *h, *out, *d1, *d2;
	void *mh, *mo;
	struct spyre_buf bh, bo, b1, b2;
	int round;

	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &a));
	OK(spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &b));
	OK(spyre_event_create(dev, 0, &ev));
	/* A never-recorded event is complete (CUDA, Level Zero). */
	OK(spyre_stream_wait_event(b, ev));
	OK(spyre_event_query(ev));
	OK(spyre_event_synchronize(ev));
	OK(host_bo(dev, SZ, &h, &mh));
	OK(host_bo(dev, SZ, &out, &mo));
	OK(spyre_bo_create(dev, SZ, SPYRE_MEM_DEVICE, &d1));
	OK(spyre_bo_create(dev, SZ, SPYRE_MEM_DEVICE, &d2));
	bh = spyre_bo_buf(h);
	bo = spyre_bo_buf(out);
	b1 = spyre_bo_buf(d1);
	b2 = spyre_bo_buf(d2);
	for (round = 0; round < 2; round++) {
		fill_pat(mh, SZ, 20 + round, 0);
		memset(mo, 0, SZ);
		if (round == 1)
			OK(spyre_host_work_async(a, wait_gate, &g));
		OK(spyre_memcpy_async(a, &b1, &bh, SZ));
		OK(spyre_event_record(ev, a));
		OK(spyre_stream_wait_event(b, ev));
		OK(spyre_memcpy_async(b, &b2, &b1, SZ));
		OK(spyre_memcpy_async(b, &bo, &b2, SZ));
		if (round == 1) {
			usleep(30000);
			CHECK(spyre_event_query(ev) == -EBUSY, "event complete before host work");
			CHECK(spyre_stream_query(b) == -EBUSY, "B ran ahead of the event");
			open_gate(&g);
		}
		OK(spyre_stream_synchronize(b));
		OK(spyre_event_query(ev));
		OK(spyre_event_synchronize(ev));
		CHECK(diff_pat(mo, SZ, 20 + round, 0) < 0, "round %d: B did not see A's data",
		      round);
	}
	OK(spyre_stream_destroy(a));
	OK(spyre_stream_destroy(b));
	OK(spyre_event_destroy(ev));
	spyre_bo_destroy(h);
	spyre_bo_destroy(out);
	spyre_bo_destroy(d1);
	spyre_bo_destroy(d2);
}

/*
 * Elapsed device time of a copy follows the modelled PCIe bandwidth. A card
 * in QEMU starts a job no earlier than its doorbell, so the measured jobs
 * are queued behind blocked host work and 512 MiB of copies: the worker then
 * issues them back to back while those copies keep the ring busy (about
 * 11 ms of device time, longer than a loaded guest's ioctl latency), and
 * they run back to back in device time, whatever the guest's latency.
 */
static void measure_copy(spyre_device *dev, spyre_stream *s, spyre_event *e0, spyre_event *e1,
			 struct spyre_buf *bd, struct spyre_buf *bh, uint64_t size, uint64_t *ns)
{
	struct gate g = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0 };
	int i;

	OK(spyre_host_work_async(s, wait_gate, &g));
	for (i = 0; i < 4; i++)
		OK(spyre_memcpy_async(s, bd, bh, 128 << 20));	/* keep the ring busy */
	OK(spyre_event_record(e0, s));
	OK(spyre_memcpy_async(s, bd, bh, size));
	OK(spyre_event_record(e1, s));
	open_gate(&g);
	OK(spyre_event_synchronize(e1));
	OK(spyre_event_elapsed_ns(e0, e1, ns));
}

TEST(event_timing)
{
	spyre_stream *s;
	spyre_event *e0, *e1, *plain;
	spyre_bo *h, *d;
	void *m;
	struct spyre_buf bh, bd;
	uint64_t small = 0, big = 0, ts0, ts1;

	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &s));
	OK(spyre_event_create(dev, SPYRE_EVENT_TIMING, &e0));
	OK(spyre_event_create(dev, SPYRE_EVENT_TIMING, &e1));
	OK(spyre_event_create(dev, 0, &plain));
	OK(host_bo(dev, 128 << 20, &h, &m));
	OK(spyre_bo_create(dev, 128 << 20, SPYRE_MEM_DEVICE, &d));
	bh = spyre_bo_buf(h);
	bd = spyre_bo_buf(d);
	measure_copy(dev, s, e0, e1, &bd, &bh, 1 << 20, &small);
	measure_copy(dev, s, e0, e1, &bd, &bh, 16 << 20, &big);
	OK(spyre_event_timestamp_ns(e0, &ts0));
	OK(spyre_event_timestamp_ns(e1, &ts1));
	CHECK(ts1 - ts0 == big, "timestamps and elapsed agree");
	CHECK(small > 0 && big > small, "elapsed: 1 MiB %llu ns, 16 MiB %llu ns",
	      (unsigned long long)small, (unsigned long long)big);
	/* 16 MiB at the card's PCIe rate (tens of GB/s): far above 100 us. */
	CHECK(big > 100000 && big < 100000000, "16 MiB took %llu device ns",
	      (unsigned long long)big);
	printf("  device time: 1 MiB H2D %llu ns, 16 MiB H2D %llu ns (%.1f GB/s)\n",
	       (unsigned long long)small, (unsigned long long)big, (16 << 20) / (double)big);
	OK(spyre_event_record(plain, s));
	FAILS_WITH(spyre_event_elapsed_ns(e0, plain, &big), -EINVAL, "SPYRE_EVENT_TIMING");
	OK(spyre_stream_destroy(s));
	OK(spyre_event_destroy(e0));
	OK(spyre_event_destroy(e1));
	OK(spyre_event_destroy(plain));
	spyre_bo_destroy(h);
	spyre_bo_destroy(d);
}

struct destroyer {
	spyre_bo *bo;
	int done;
	int ret;
};

static void *destroy_bo(void *arg)
{
	struct destroyer *d = arg;

	d->ret = spyre_bo_destroy(d->bo);
	__atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Destroying a BO that deferred work still names loses nothing. */
TEST(bo_destroy_waits_for_deferred_work)
{
	struct gate g = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0 };
	struct destroyer d = { 0 };
	spyre_stream *s;
	spyre_bo *h, *out, *dev_bo;
	void *mh, *mo;
	struct spyre_buf bh, bo, bd;
	pthread_t t;

	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &s));
	OK(host_bo(dev, 65536, &h, &mh));
	OK(host_bo(dev, 65536, &out, &mo));
	OK(spyre_bo_create(dev, 65536, SPYRE_MEM_DEVICE, &dev_bo));
	fill_pat(mh, 65536, 55, 0);
	bh = spyre_bo_buf(h);
	bo = spyre_bo_buf(out);
	bd = spyre_bo_buf(dev_bo);
	OK(spyre_host_work_async(s, wait_gate, &g));
	OK(spyre_memcpy_async(s, &bd, &bh, 65536));	/* deferred: names h by handle */
	OK(spyre_memcpy_async(s, &bo, &bd, 65536));
	d.bo = h;
	pthread_create(&t, NULL, destroy_bo, &d);
	usleep(50000);
	CHECK(!__atomic_load_n(&d.done, __ATOMIC_ACQUIRE), "destroy returned while work was deferred");
	open_gate(&g);
	pthread_join(t, NULL);
	CHECK(d.ret == 0, "destroy: %d", d.ret);
	OK(spyre_stream_synchronize(s));
	CHECK(diff_pat(mo, 65536, 55, 0) < 0, "the deferred copy lost its source");
	OK(spyre_stream_destroy(s));
	spyre_bo_destroy(out);
	spyre_bo_destroy(dev_bo);
}
