/* SPDX-License-Identifier: MIT */
/*
 * A minimal test harness: each TEST runs in its own process (a crash or a
 * hang fails that test only) on a freshly opened device of the backend
 * SPYRE_BACKEND names. CHECK records a failure and goes on; ASSERT ends the
 * test.
 */
#ifndef SPYRE_TEST_HARNESS_H
#define SPYRE_TEST_HARNESS_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spyre/spyre.h"

struct test {
	const char *name;
	void (*fn)(spyre_device *dev);
	int order;		/* tests run by ascending order, then name */
	struct test *next;
	/*
	 * drm: open the card with SPYRE_DRM_QUEUES=kernel (tests of the
	 * kernel's recovery, armed through its debugfs on its own rings).
	 */
	bool kernel_queues;
};

void test_register(struct test *t);
extern int test_failures;
extern const char *test_backend;	/* "sim" or "drm" */
extern _Thread_local unsigned long test_allocs;	/* heap allocations of this thread */

#define TEST_REG(fname, ord, kq)                                                  \
	static void fname(spyre_device *dev);                                      \
	__attribute__((constructor)) static void reg_##fname(void)                 \
	{                                                                           \
		static struct test t = { #fname, fname, ord, NULL, kq };           \
		test_register(&t);                                                  \
	}                                                                           \
	static void fname(spyre_device *dev)
#define TEST_ORDER(fname, ord) TEST_REG(fname, ord, false)
#define TEST(fname) TEST_ORDER(fname, 0)
#define TEST_KERNEL_QUEUES(fname, ord) TEST_REG(fname, ord, true)

#define CHECK(cond, ...)                                                              \
	do {                                                                           \
		if (!(cond)) {                                                         \
			test_failures++;                                               \
			fprintf(stderr, "  %s:%d: CHECK(%s) failed: ", __FILE__, __LINE__,  \
				#cond);                                                \
			fprintf(stderr, __VA_ARGS__);                                  \
			fprintf(stderr, " [last error: %s]\n", spyre_last_error());   \
		}                                                                      \
	} while (0)

/* @cond is evaluated once: it may be a call with effects (a destroy). */
#define ASSERT(cond, ...)                                                             \
	do {                                                                           \
		if (!(cond)) {                                                         \
			test_failures++;                                               \
			fprintf(stderr, "  %s:%d: ASSERT(%s) failed: ", __FILE__, __LINE__, \
				#cond);                                                \
			fprintf(stderr, __VA_ARGS__);                                  \
			fprintf(stderr, " [last error: %s]\n", spyre_last_error());  \
			return;                                                        \
		}                                                                      \
	} while (0)

/* ret must be 0. */
#define OK(expr) ASSERT((expr) == 0, "%s", #expr)
/* The call fails with @err and its message contains @needle. */
#define FAILS_WITH(expr, err, needle)                                                 \
	do {                                                                           \
		int r_ = (expr);                                                       \
		CHECK(r_ == (err), "%s returned %d, expected %d", #expr, r_, (err));   \
		CHECK(strstr(spyre_last_error(), (needle)) != NULL,                    \
		      "message of %s lacks \"%s\"", #expr, (needle));                  \
	} while (0)

/* Deterministic bytes for buffer contents. */
static inline uint8_t pat(uint64_t i, unsigned int seed)
{
	uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ull ^ (seed * 0xbf58476d1ce4e5b9ull);

	return (uint8_t)(x >> 29);
}

static inline void fill_pat(void *p, uint64_t n, unsigned int seed, uint64_t base)
{
	uint8_t *b = p;
	uint64_t i;

	for (i = 0; i < n; i++)
		b[i] = pat(base + i, seed);
}

/* Index of the first mismatch, or -1. */
static inline int64_t diff_pat(const void *p, uint64_t n, unsigned int seed, uint64_t base)
{
	const uint8_t *b = p;
	uint64_t i;

	for (i = 0; i < n; i++)
		if (b[i] != pat(base + i, seed))
			return (int64_t)i;
	return -1;
}

/* Host BO of @size, mapped. */
static inline int host_bo(spyre_device *dev, uint64_t size, spyre_bo **bo, void **map)
{
	int ret = spyre_bo_create(dev, size, SPYRE_MEM_HOST, bo);

	if (!ret)
		ret = spyre_bo_map(*bo, map);
	return ret;
}

static inline struct spyre_buf buf_of(spyre_bo *bo, uint64_t off, uint64_t size)
{
	struct spyre_buf b = { bo, off, size };

	return b;
}

/*
 * A gate for host work that holds a stream: watchdog_gate_wait (a host
 * work function) returns once the gate is open; a thread running
 * watchdog_gate_open_later opens it after 3 s whatever the test does, so a
 * bug that waits for the gate cannot hang the test (it sees the gate open).
 */
struct watchdog_gate {
	int open;
};

static inline void watchdog_gate_wait(void *user)
{
	struct watchdog_gate *g = user;

	while (!__atomic_load_n(&g->open, __ATOMIC_ACQUIRE))
		usleep(1000);
}

static inline void *watchdog_gate_open_later(void *user)
{
	sleep(3);
	__atomic_store_n(&((struct watchdog_gate *)user)->open, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * The drm driver's job timeout (root in the VM): a hang test shortens it,
 * and must put it back, or every later test and example in the same VM
 * boot runs with a 1 s hang limit that a loaded host can trip (a queue
 * ended with -ETIMEDOUT while it was only slow).
 */
#define JOB_TIMEOUT_PARAM	"/sys/module/spyre/parameters/job_timeout_ms"

/* Sets it to @ms, *saved the old value; false when it cannot be written. */
static inline bool job_timeout_set(const char *ms, char *saved, size_t len)
{
	FILE *f = fopen(JOB_TIMEOUT_PARAM, "r");

	saved[0] = 0;
	if (f) {
		if (!fgets(saved, (int)len, f))
			saved[0] = 0;
		fclose(f);
	}
	f = fopen(JOB_TIMEOUT_PARAM, "w");
	if (!f)
		return false;
	fputs(ms, f);
	fclose(f);
	return true;
}

static inline void job_timeout_restore(const char *saved)
{
	FILE *f = saved[0] ? fopen(JOB_TIMEOUT_PARAM, "w") : NULL;

	if (f) {
		fputs(saved, f);
		fclose(f);
	}
}

#endif
