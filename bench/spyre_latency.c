// SPDX-License-Identifier: MIT
/*
 * Round-trip latency of the Spyre driver and card, measured in one run:
 *
 *   null ioctl     DRM_IOCTL_VERSION with empty buffers: the floor of any
 *                  ioctl on this machine (guest syscall + DRM dispatch)
 *   2 reg reads    GET_PARAM DEVICE_TIME_NS: the null ioctl plus two card
 *                  register reads, i.e. the price of MMIO exits (a doorbell
 *                  is one such exit)
 *   empty job      a submit without commands, then a syncobj wait
 *   nop            one NOP command: the card fetches it and runs the FENCE
 *   h2d 1MiB       copy 1 MiB host BO -> device BO
 *   d2h 1MiB       copy 1 MiB device BO -> host BO
 *   uq nop         (driver 1.4, when the card offers user-mode queues) a
 *                  NOP and a FENCE written into a user-mode queue's ring,
 *                  the doorbell written from user space, then
 *                  DRM_IOCTL_SPYRE_UQ_WAIT: the only system call is the
 *                  wait ("submit" is the ring write and doorbell)
 *   uq nop poll    the same, waiting by reading the write-back in a loop:
 *                  no system call at all
 *   uq nop spin    the same, waiting as libspyre does: polling the
 *                  write-back for up to UQ_SPIN_US, then UQ_WAIT
 *
 * The null ioctl is timed right after an untimed one: the first system
 * call of a round, after the previous round's waits, ran cold and took
 * longer than GET_PARAM with its two register reads ("null cold" in the
 * table, for comparison), which made every ratio look smaller than it is.
 *
 * Each submit+wait is split into its submit ioctl and the wait that
 * follows (which covers scheduler, doorbell, card, interrupt and wake-up).
 * The kinds are interleaved, one sample of each per round, so host load
 * hits all of them alike and the ratios to the null ioctl stay meaningful.
 *
 *   scripts/spyre-vm run -- build/bench/spyre_latency [-n ROUNDS] [-q]
 *
 * (-q: DMA queue for the empty and nop jobs instead of the compute queue.)
 *
 * Where the time goes (QEMU TCG, 2 vCPUs, guest ftrace plus timestamps in
 * the card's glue): the card's own work is small (a NOP job ~10-20 us, a
 * 1 MiB copy ~100 us); the rest is guest kernel code run by TCG (the submit
 * ioctl and run_job, ~80-130 us) and host thread wake-ups: the card's
 * worker after the doorbell (~50-60 us on average), the halted vCPU that
 * takes the MSI-X, and an IPI when the waiting thread sleeps on the other
 * vCPU (half the jobs). Each wake-up waits for a free host core, so on a
 * busy 2-core host any job, NOP or copy alike, can take milliseconds.
 * Hence a NOP costs about as much as a 1 MiB copy and both swing under
 * load. Two hops were removed: drm_sched's run_job used to run on an
 * unbound worker (often on the other vCPU, one more IPI), and the card
 * delivered MSI-X through a bottom half (one more host thread, the main
 * loop).
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bench_record.h"
#include "drm/spyre_accel.h"
#include "spyre_desc.h"

#define MIB (1024u * 1024u)

enum kind {
	K_NULL, K_NULL_COLD, K_MMIO, K_EMPTY, K_NOP, K_H2D, K_D2H, K_UQ, K_UQ_POLL, K_UQ_SPIN,
	K_COUNT
};

static const char *const kind_name[K_COUNT] = {
	"null ioctl", "null cold", "2 reg reads", "empty job", "nop", "h2d 1MiB", "d2h 1MiB",
	"uq nop", "uq nop poll", "uq nop spin",
};

/* libspyre's poll before it sleeps in UQ_WAIT (UQ_SPIN_NS, backend_drm_uq.c) */
#define UQ_SPIN_US	50

struct samples {
	double *total;	/* submit + wait, or the null ioctl, in us */
	double *submit; /* submit ioctl only */
	double *wait;	/* syncobj wait only */
};

static int fd;

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "spyre_latency: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int xioctl(unsigned long req, void *arg)
{
	int ret;

	do
		ret = ioctl(fd, req, arg);
	while (ret == -1 && (errno == EINTR || errno == EAGAIN));
	return ret;
}

static uint32_t bo_create(uint64_t size, uint32_t placement)
{
	struct drm_spyre_bo_create c = { .size = size, .placement = placement };

	if (xioctl(DRM_IOCTL_SPYRE_BO_CREATE, &c))
		die("BO_CREATE");
	return c.handle;
}

static uint32_t queue_create(uint32_t engine)
{
	struct drm_spyre_queue_create c = {
		.engine = engine,
		.priority = DRM_SPYRE_PRIORITY_NORMAL,
	};

	if (xioctl(DRM_IOCTL_SPYRE_QUEUE_CREATE, &c))
		die("QUEUE_CREATE");
	return c.queue_id;
}

static uint32_t syncobj_create(void)
{
	struct drm_syncobj_create c = { 0 };

	if (xioctl(DRM_IOCTL_SYNCOBJ_CREATE, &c))
		die("SYNCOBJ_CREATE");
	return c.handle;
}

static void null_ioctl(void)
{
	struct drm_version v = { 0 };

	if (xioctl(DRM_IOCTL_VERSION, &v))
		die("DRM_IOCTL_VERSION");
}

static void time_ioctl(void)
{
	struct drm_spyre_get_param p = { .param = DRM_SPYRE_PARAM_DEVICE_TIME_NS };

	if (xioctl(DRM_IOCTL_SPYRE_GET_PARAM, &p))
		die("GET_PARAM");
}

/* Submits @cmd (or nothing) on @queue and waits; times both halves. */
static void submit_wait(uint32_t queue, const struct drm_spyre_cmd *cmd, uint32_t syncobj,
			double *submit_us, double *wait_us)
{
	struct drm_spyre_sync out = { .handle = syncobj };
	struct drm_spyre_submit s = {
		.queue_id = queue,
		.cmds = (uintptr_t)cmd,
		.cmd_count = cmd ? 1 : 0,
		.cmd_stride = sizeof(*cmd),
		.out_syncs = (uintptr_t)&out,
		.out_sync_count = 1,
		.sync_stride = sizeof(out),
	};
	struct drm_syncobj_wait w = {
		.handles = (uintptr_t)&syncobj,
		.count_handles = 1,
	};
	double t0, t1, t2;

	t0 = now_us();
	if (xioctl(DRM_IOCTL_SPYRE_SUBMIT, &s))
		die("SUBMIT");
	t1 = now_us();
	w.timeout_nsec = now_ns() + 10 * 1000000000LL;
	if (xioctl(DRM_IOCTL_SYNCOBJ_WAIT, &w))
		die("SYNCOBJ_WAIT");
	t2 = now_us();
	*submit_us = t1 - t0;
	*wait_us = t2 - t1;
}

/* A user-mode queue: ring, write-back and doorbell, all in this process. */
#define UQ_LOG2		6
#define UQ_RING_VA	0x200000ull
#define UQ_WB_VA	0x400000ull	/* write-back at +0, completion records at +4096 */

struct uq {
	uint32_t id;
	union spyre_hw_desc *ring;
	volatile uint64_t *wb;
	volatile uint32_t *doorbell;
	uint32_t tail;
	uint64_t seqno;
};

static void vm_map(uint32_t handle, uint64_t addr, uint64_t size)
{
	struct drm_spyre_vm_bind b = {
		.op = DRM_SPYRE_VM_BIND_OP_MAP, .handle = handle, .addr = addr, .range = size,
	};

	if (xioctl(DRM_IOCTL_SPYRE_VM_BIND, &b))
		die("VM_BIND");
}

static void *bo_mmap(uint32_t handle, size_t size)
{
	struct drm_spyre_bo_info info = { .handle = handle };
	void *p;

	if (xioctl(DRM_IOCTL_SPYRE_BO_INFO, &info))
		die("BO_INFO");
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, info.mmap_offset);
	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

/* false when the driver or card offers no user-mode queues */
static bool uq_setup(struct uq *q)
{
	struct drm_spyre_get_param p = { .param = DRM_SPYRE_PARAM_USER_QUEUES };
	struct drm_spyre_uq_create c = {
		.ring_addr = UQ_RING_VA, .wb_addr = UQ_WB_VA, .ring_log2 = UQ_LOG2,
	};
	uint32_t ring_bo, wb_bo;
	void *db;

	if (xioctl(DRM_IOCTL_SPYRE_GET_PARAM, &p) || !p.value)
		return false;
	ring_bo = bo_create(4096, DRM_SPYRE_PLACEMENT_HOST);
	wb_bo = bo_create(8192, DRM_SPYRE_PLACEMENT_HOST);
	q->ring = bo_mmap(ring_bo, 4096);
	q->wb = bo_mmap(wb_bo, 8192);
	vm_map(ring_bo, UQ_RING_VA, 4096);
	vm_map(wb_bo, UQ_WB_VA, 8192);
	if (xioctl(DRM_IOCTL_SPYRE_UQ_CREATE, &c))
		die("UQ_CREATE");
	db = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, c.doorbell_offset);
	if (db == MAP_FAILED)
		die("mmap doorbell");
	q->id = c.queue_id;
	q->doorbell = db;
	return true;
}

/* A NOP job written into the ring and the doorbell rung: no system call. */
static uint64_t uq_nop(struct uq *q)
{
	union spyre_hw_desc *d;

	spyre_desc_nop(&q->ring[q->tail++ % (1u << UQ_LOG2)]);
	d = &q->ring[q->tail++ % (1u << UQ_LOG2)];
	q->seqno++;
	spyre_desc_fence(d, SPYRE_DESC_F_IRQ);
	spyre_desc_fence_seal(d, q->seqno, UQ_WB_VA + 4096 + (q->seqno % 64) * 64);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	*q->doorbell = q->tail;
	return q->seqno;
}

static void uq_sleep_wait(struct uq *q, uint64_t seqno)
{
	struct drm_spyre_uq_wait w = {
		.queue_id = q->id, .value = seqno, .timeout_ns = now_ns() + 10 * 1000000000LL,
	};

	if (xioctl(DRM_IOCTL_SPYRE_UQ_WAIT, &w))
		die("UQ_WAIT");
}

static void uq_poll_wait(struct uq *q, uint64_t seqno)
{
	int64_t deadline = now_ns() + 10 * 1000000000LL;

	while (*q->wb < seqno)
		if (now_ns() > deadline) {
			errno = ETIMEDOUT;
			die("polling the write-back");
		}
}

/* Poll for up to UQ_SPIN_US, then sleep: libspyre's wait. */
static void uq_spin_wait(struct uq *q, uint64_t seqno)
{
	int64_t t0 = now_ns();

	while (*q->wb < seqno) {
		if (now_ns() - t0 > UQ_SPIN_US * 1000) {
			uq_sleep_wait(q, seqno);
			return;
		}
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	}
}

enum uq_wait_kind { UQ_SLEEP, UQ_POLL, UQ_SPIN };

static void uq_round(struct uq *q, enum uq_wait_kind how, double *submit_us, double *wait_us)
{
	double t0 = now_us(), t1;
	uint64_t s = uq_nop(q);

	t1 = now_us();
	if (how == UQ_POLL)
		uq_poll_wait(q, s);
	else if (how == UQ_SPIN)
		uq_spin_wait(q, s);
	else
		uq_sleep_wait(q, s);
	*submit_us = t1 - t0;
	*wait_us = now_us() - t1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sorts @v in place and returns its @p quantile (nearest rank). */
static double quantile(double *v, int n, double p)
{
	int i;

	qsort(v, n, sizeof(*v), cmp_double);
	i = (int)(p * n + 0.5) - 1;
	if (i < 0)
		i = 0;
	if (i >= n)
		i = n - 1;
	return v[i];
}

static void usage(void)
{
	fprintf(stderr, "usage: spyre_latency [-n ROUNDS] [-w WARMUP] [-q] [-d /dev/accel/accelN]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *dev = "/dev/accel/accel0";
	int rounds = 300, warmup = 20, opt, i, k;
	uint32_t dma_q, nop_q, host, devbo, sync;
	struct drm_spyre_cmd nop = { .type = DRM_SPYRE_CMD_NOP };
	struct drm_spyre_cmd h2d = { .type = DRM_SPYRE_CMD_COPY };
	struct drm_spyre_cmd d2h = { .type = DRM_SPYRE_CMD_COPY };
	struct samples s[K_COUNT];
	bool nop_on_dma = false, have_uq;
	double null_med;
	struct uq uq = { 0 };

	while ((opt = getopt(argc, argv, "n:w:qd:")) != -1) {
		switch (opt) {
		case 'n':
			rounds = atoi(optarg);
			break;
		case 'w':
			warmup = atoi(optarg);
			break;
		case 'q':
			nop_on_dma = true;
			break;
		case 'd':
			dev = optarg;
			break;
		default:
			usage();
		}
	}
	if (rounds < 1 || warmup < 0)
		usage();

	fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die(dev);
	dma_q = queue_create(DRM_SPYRE_ENGINE_DMA);
	nop_q = nop_on_dma ? dma_q : queue_create(DRM_SPYRE_ENGINE_COMPUTE);
	host = bo_create(MIB, DRM_SPYRE_PLACEMENT_HOST);
	devbo = bo_create(MIB, DRM_SPYRE_PLACEMENT_DEVICE);
	sync = syncobj_create();
	have_uq = uq_setup(&uq);
	h2d.copy = (struct drm_spyre_cmd_copy){ .src_handle = host, .dst_handle = devbo, .size = MIB };
	d2h.copy = (struct drm_spyre_cmd_copy){ .src_handle = devbo, .dst_handle = host, .size = MIB };

	for (k = 0; k < K_COUNT; k++) {
		s[k].total = calloc(rounds, sizeof(double));
		s[k].submit = calloc(rounds, sizeof(double));
		s[k].wait = calloc(rounds, sizeof(double));
		if (!s[k].total || !s[k].submit || !s[k].wait)
			die("calloc");
	}

	for (i = -warmup; i < rounds; i++) {
		double t0, sub[K_COUNT] = { 0 }, wt[K_COUNT] = { 0 };

		t0 = now_us();
		null_ioctl();
		sub[K_NULL_COLD] = now_us() - t0;
		t0 = now_us();
		null_ioctl();
		sub[K_NULL] = now_us() - t0;
		t0 = now_us();
		time_ioctl();
		sub[K_MMIO] = now_us() - t0;
		submit_wait(nop_q, NULL, sync, &sub[K_EMPTY], &wt[K_EMPTY]);
		submit_wait(nop_q, &nop, sync, &sub[K_NOP], &wt[K_NOP]);
		submit_wait(dma_q, &h2d, sync, &sub[K_H2D], &wt[K_H2D]);
		submit_wait(dma_q, &d2h, sync, &sub[K_D2H], &wt[K_D2H]);
		if (have_uq) {
			uq_round(&uq, UQ_SLEEP, &sub[K_UQ], &wt[K_UQ]);
			uq_round(&uq, UQ_POLL, &sub[K_UQ_POLL], &wt[K_UQ_POLL]);
			uq_round(&uq, UQ_SPIN, &sub[K_UQ_SPIN], &wt[K_UQ_SPIN]);
		}
		if (i < 0)
			continue;
		for (k = 0; k < K_COUNT; k++) {
			s[k].submit[i] = sub[k];
			s[k].wait[i] = wt[k];
			s[k].total[i] = sub[k] + wt[k];
		}
	}

	printf("spyre_latency: %d rounds (+%d warm-up), %s, nop/empty on the %s queue\n",
	       rounds, warmup, dev, nop_on_dma ? "DMA" : "compute");
	printf("%-11s %10s %10s %8s %12s %12s\n", "", "median us", "p90 us", "x null",
	       "submit med", "wait med");
	null_med = quantile(s[K_NULL].total, rounds, 0.5);
	for (k = 0; k < (have_uq ? K_COUNT : K_UQ); k++) {
		double med = quantile(s[k].total, rounds, 0.5);
		double p90 = quantile(s[k].total, rounds, 0.9);

		printf("%-11s %10.1f %10.1f %8.1f", kind_name[k], med, p90, med / null_med);
		if (k <= K_MMIO)
			printf("\n");
		else
			printf(" %12.1f %12.1f\n", quantile(s[k].submit, rounds, 0.5),
			       quantile(s[k].wait, rounds, 0.5));
	}
	bench_record("nop_submit_wait_vs_null_ioctl", quantile(s[K_NOP].total, rounds, 0.5) / null_med,
		     "x", "host time: SUBMIT of one NOP + wait for its syncobj / DRM_IOCTL_VERSION",
		     "medians of interleaved rounds", "drm");
	bench_record("empty_submit_wait_vs_null_ioctl",
		     quantile(s[K_EMPTY].total, rounds, 0.5) / null_med, "x",
		     "host time: SUBMIT of no commands + wait / DRM_IOCTL_VERSION",
		     "medians of interleaved rounds", "drm");
	bench_record("h2d_1mib_submit_wait_vs_null_ioctl",
		     quantile(s[K_H2D].total, rounds, 0.5) / null_med, "x",
		     "host time: SUBMIT of a 1 MiB H2D copy + wait / DRM_IOCTL_VERSION",
		     "medians of interleaved rounds", "drm");
	if (have_uq) {
		bench_record("uq_nop_wait_vs_null_ioctl",
			     quantile(s[K_UQ].total, rounds, 0.5) / null_med, "x",
			     "host time: a NOP job written into a user-mode queue + doorbell + "
			     "DRM_IOCTL_SPYRE_UQ_WAIT / DRM_IOCTL_VERSION",
			     "medians of interleaved rounds", "drm");
		bench_record("uq_nop_poll_vs_null_ioctl",
			     quantile(s[K_UQ_POLL].total, rounds, 0.5) / null_med, "x",
			     "host time: the same, waiting by polling the write-back / "
			     "DRM_IOCTL_VERSION", "medians of interleaved rounds", "drm");
		bench_record("uq_nop_spin_wait_vs_null_ioctl",
			     quantile(s[K_UQ_SPIN].total, rounds, 0.5) / null_med, "x",
			     "host time: the same, waiting as libspyre does (poll up to 50 us, "
			     "then DRM_IOCTL_SPYRE_UQ_WAIT) / DRM_IOCTL_VERSION",
			     "medians of interleaved rounds", "drm");
		bench_record("uq_launch_cost_vs_null_ioctl",
			     quantile(s[K_UQ].submit, rounds, 0.5) / null_med, "x",
			     "host time: writing a job into a user-mode queue + doorbell / "
			     "DRM_IOCTL_VERSION", "medians of interleaved rounds", "drm");
	}
	close(fd);
	return 0;
}
