// SPDX-License-Identifier: MIT
/*
 * Event semantics a framework relies on: a never-recorded event is
 * complete, and re-recording a timing event does not wait for its previous
 * record.
 */
#include <pthread.h>
#include <unistd.h>

#include "harness.h"

TEST(event_never_recorded_is_complete)
{
	spyre_event *ev, *t;
	spyre_stream *s;
	uint64_t ns;

	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &s));
	OK(spyre_event_create(dev, 0, &ev));
	OK(spyre_event_create(dev, SPYRE_EVENT_TIMING, &t));
	OK(spyre_event_query(ev));
	OK(spyre_event_synchronize(ev));
	OK(spyre_stream_wait_event(s, ev));
	OK(spyre_event_query(t));
	FAILS_WITH(spyre_event_timestamp_ns(t, &ns), -EINVAL, "never recorded");
	FAILS_WITH(spyre_event_elapsed_ns(t, t, &ns), -EINVAL, "never recorded");
	OK(spyre_stream_synchronize(s));
	OK(spyre_event_destroy(ev));
	OK(spyre_event_destroy(t));
	OK(spyre_stream_destroy(s));
}

/*
 * Record a timing event behind host work that holds its stream, then
 * re-record it on an idle stream: the second record must return at once
 * (the gate is still closed) and the event then reports the second
 * record's time.
 */
TEST(event_rerecord_timing_does_not_block)
{
	struct watchdog_gate g = { 0 };
	spyre_stream *busy, *idle;
	spyre_event *ev;
	pthread_t th;
	uint64_t t0, t1, ns;
	int i;

	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &busy));
	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &idle));
	OK(spyre_event_create(dev, SPYRE_EVENT_TIMING, &ev));
	pthread_create(&th, NULL, watchdog_gate_open_later, &g);
	OK(spyre_host_work_async(busy, watchdog_gate_wait, &g));
	OK(spyre_event_record(ev, busy));
	CHECK(spyre_event_query(ev) == -EBUSY, "event complete behind a closed gate");
	OK(spyre_device_time_ns(dev, &t0));
	/* More records than timestamp slots would wait; these must not. */
	for (i = 0; i < 8; i++)
		OK(spyre_event_record(ev, idle));
	CHECK(!__atomic_load_n(&g.open, __ATOMIC_ACQUIRE),
	      "re-recording waited for the previous record (the gate opened first)");
	OK(spyre_event_synchronize(ev));
	OK(spyre_event_timestamp_ns(ev, &ns));
	OK(spyre_device_time_ns(dev, &t1));
	CHECK(ns >= t0 && ns <= t1, "timestamp %llu outside [%llu, %llu]",
	      (unsigned long long)ns, (unsigned long long)t0, (unsigned long long)t1);
	__atomic_store_n(&g.open, 1, __ATOMIC_RELEASE);
	OK(spyre_stream_synchronize(busy));
	pthread_join(th, NULL);
	OK(spyre_event_destroy(ev));
	OK(spyre_stream_destroy(busy));
	OK(spyre_stream_destroy(idle));
}
