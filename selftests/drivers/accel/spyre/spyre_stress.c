// SPDX-License-Identifier: GPL-2.0
/*
 * Spyre accel stress test: many processes, each with several queues on
 * both engines, submit thousands of jobs with dependencies across queues
 * and across processes, and check every result.
 *
 * A job on queue q copies a random-sized slice of random host data into
 * the queue's device BO, copies it back into a result slot, and writes a
 * device timestamp. Its fence is point j + 1 of the queue's timeline
 * syncobj. Jobs wait on points of the process's other queues and on points
 * of the previous process's shared timeline (a syncobj fd every process
 * imports into its own file), always for a point older than the waiter's,
 * so the dependency graph has no cycle. Checks: every fence signals, every
 * result's checksum matches its source, per-queue timestamps increase in
 * submission order, a job runs after the jobs it waits for, and BOs and
 * memory return to their start.
 *
 * With -f, the parent arms the card's one-shot faults (hang, DMA error,
 * corrupt completion, uncorrectable memory error) one after another while
 * the jobs run. A job may then fail, but only with its fault's error
 * (-ETIMEDOUT, -EIO, or -ECANCELED behind a hang); a queue banned after a
 * hang is replaced; every job that succeeds still has intact data; the
 * card recovers and nothing leaks. Counts per kind are printed.
 *
 * usage: spyre_stress [-p PROCS] [-q QUEUES] [-n JOBS_PER_QUEUE] [-s SEED] [-f]
 *   defaults: 8 processes, 4 queues, 256 jobs per queue; the environment's
 *   SPYRE_STRESS_JOBS sets -n, SPYRE_STRESS_FAULTS=1 sets -f.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest.h"
#include "spyre_state.h"
#include "spyre_util.h"

#define ST_MAX_PROCS	16
#define ST_MAX_QUEUES	8
#define ST_SLOTS	16		/* jobs in flight per queue */
#define ST_MAX_SIZE	(64 * 1024)	/* bytes a job moves */
#define ST_LAG		4		/* cross-process dependency: points this far back */
#define ST_KINDS	5		/* fault kinds 1..4 */

static const char *const kind_name[ST_KINDS] = {
	"none", "hang", "dma", "corrupt-completion", "memory-ue",
};

struct st_shared {
	atomic_ulong done;		/* jobs whose fence signalled without error */
	atomic_ulong failed[4];		/* ... with -ETIMEDOUT, -EIO, -ECANCELED, other */
	atomic_ulong bad_data;
	atomic_ulong bad_order;
	atomic_ulong lost;		/* fences that never signalled */
	atomic_ulong requeued;		/* queues replaced after a ban */
	atomic_int running;
};

static struct st_shared *shared;
static int nprocs = 8, nqueues = 4, njobs = 256;
static bool faults;
static int tl_fds[ST_MAX_PROCS];	/* each process's shared timeline, as syncobj fds */

struct st_queue {
	uint32_t id, engine;
	uint32_t timeline;		/* point j + 1 = job j */
	uint32_t bin[ST_SLOTS];		/* job j's own fence (a timeline point hides errors) */
	int8_t *ok;			/* per job: 1 succeeded, 0 failed, -1 not retired */
	/*
	 * Card resets seen when job j was submitted and retired: device time
	 * restarts at a card reset, so timestamps compare only within one.
	 */
	uint64_t *sub_epoch, *ret_epoch;
	uint32_t src, res, ts;		/* host BOs: source slots, result slots, timestamps */
	uint32_t dev;			/* device BO */
	uint8_t *src_map, *res_map;
	uint64_t *ts_map;
	uint64_t size[ST_SLOTS], sum[ST_SLOTS];
	int dep_q[ST_SLOTS];		/* a same-process dependency: queue, job */
	int dep_j[ST_SLOTS];
};

static uint64_t rng;

static uint64_t rnd(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* FNV-1a: the checksum of a result. */
static uint64_t checksum(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (n--)
		h = (h ^ *p++) * 0x100000001b3ull;
	return h;
}

/* Wait until @point of @tl has a fence (it was submitted), bounded. */
static int wait_submitted(int fd, uint32_t tl, uint64_t point)
{
	struct drm_syncobj_timeline_wait w = {
		.handles = (uintptr_t)&tl,
		.points = (uintptr_t)&point,
		.timeout_nsec = sp_deadline(SP_WAIT_NS),
		.count_handles = 1,
		.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT |
			 DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE,
	};

	return sp_ioctl(fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &w);
}

static int queue_setup(struct sp_dev *d, struct st_queue *q, int idx)
{
	size_t slots = (size_t)ST_SLOTS * ST_MAX_SIZE;
	int ret, i;

	memset(q, 0, sizeof(*q));
	q->engine = idx % 2 ? DRM_SPYRE_ENGINE_DMA : DRM_SPYRE_ENGINE_COMPUTE;
	ret = sp_queue_create(d->fd, q->engine, DRM_SPYRE_PRIORITY_NORMAL, &q->id);
	if (!ret)
		ret = sp_syncobj_create(d->fd, &q->timeline, false);
	for (i = 0; i < ST_SLOTS && !ret; i++)
		ret = sp_syncobj_create(d->fd, &q->bin[i], false);
	q->ok = malloc(njobs);
	q->sub_epoch = calloc(njobs, sizeof(uint64_t));
	q->ret_epoch = calloc(njobs, sizeof(uint64_t));
	if (!q->ok || !q->sub_epoch || !q->ret_epoch)
		return -ENOMEM;
	memset(q->ok, -1, njobs);
	if (!ret)
		ret = sp_bo_create(d->fd, slots, DRM_SPYRE_PLACEMENT_HOST, &q->src);
	if (!ret)
		ret = sp_bo_create(d->fd, slots, DRM_SPYRE_PLACEMENT_HOST, &q->res);
	if (!ret)
		ret = sp_bo_create(d->fd, (size_t)njobs * 8 + SP_PAGE, DRM_SPYRE_PLACEMENT_HOST,
				   &q->ts);
	if (!ret)
		ret = sp_bo_create(d->fd, ST_MAX_SIZE, DRM_SPYRE_PLACEMENT_DEVICE, &q->dev);
	if (ret)
		return ret;
	q->src_map = sp_bo_mmap(d->fd, q->src, slots);
	q->res_map = sp_bo_mmap(d->fd, q->res, slots);
	q->ts_map = sp_bo_mmap(d->fd, q->ts, (size_t)njobs * 8 + SP_PAGE);
	if (!q->src_map || !q->res_map || !q->ts_map)
		return -errno;
	memset(q->ts_map, 0, (size_t)njobs * 8);
	return 0;
}

/* Sort a fence's outcome into the shared counters; true if it succeeded. */
static bool account(int status)
{
	switch (status) {
	case 1:
		atomic_fetch_add(&shared->done, 1);
		return true;
	case -ETIMEDOUT:
		atomic_fetch_add(&shared->failed[0], 1);
		break;
	case -EIO:
		atomic_fetch_add(&shared->failed[1], 1);
		break;
	case -ECANCELED:
		atomic_fetch_add(&shared->failed[2], 1);
		break;
	default:
		atomic_fetch_add(&shared->failed[3], 1);
		printf("# job failed with %d (%s)\n", status, strerror(-status));
		break;
	}
	return false;
}

/* Wait for job @j of @q, then check its data, its order and its dependency. */
static void retire(struct sp_dev *d, struct st_queue *qs, int qi, int j)
{
	struct st_queue *q = &qs[qi];
	int slot = j % ST_SLOTS, st;

	if (sp_syncobj_wait(d->fd, q->timeline, j + 1, SP_WAIT_NS)) {
		atomic_fetch_add(&shared->lost, 1);
		printf("# queue %d job %d: fence never signalled\n", qi, j);
		return;
	}
	st = sp_fence_status(d->fd, q->bin[slot], 0);
	sp_get_param(d->fd, DRM_SPYRE_PARAM_RESET_COUNT, &q->ret_epoch[j]);
	q->ok[j] = account(st);
	if (!q->ok[j]) {
		printf("# queue %d (ring %d) job %d failed: %s\n", qi, sp_queue_ring(d, q->id), j,
		       strerror(-st));
		return;
	}
	if (checksum(q->res_map + (size_t)slot * ST_MAX_SIZE, q->size[slot]) != q->sum[slot]) {
		atomic_fetch_add(&shared->bad_data, 1);
		printf("# queue %d job %d: checksum mismatch (%llu bytes)\n", qi, j,
		       (unsigned long long)q->size[slot]);
	}
	if (j && q->ok[j - 1] == 1 && q->sub_epoch[j - 1] == q->ret_epoch[j] &&
	    q->ts_map[j] <= q->ts_map[j - 1]) {
		atomic_fetch_add(&shared->bad_order, 1);
		printf("# queue %d job %d ran before job %d\n", qi, j, j - 1);
	}
	/* (a failed job's timestamp may be missing or stale) */
	if (q->dep_q[slot] >= 0 && qs[q->dep_q[slot]].ok[q->dep_j[slot]] == 1 &&
	    qs[q->dep_q[slot]].sub_epoch[q->dep_j[slot]] == q->ret_epoch[j] &&
	    q->ts_map[j] <= qs[q->dep_q[slot]].ts_map[q->dep_j[slot]]) {
		atomic_fetch_add(&shared->bad_order, 1);
		printf("# queue %d job %d ran before queue %d job %d it waits for\n", qi, j,
		       q->dep_q[slot], q->dep_j[slot]);
	}
}

/* Submit job @j on queue @qi: random data, dependencies, timeline point j + 1. */
static int submit(struct sp_dev *d, struct st_queue *qs, int qi, int j, uint32_t shared_in,
		  uint32_t shared_out, int me)
{
	struct st_queue *q = &qs[qi];
	struct drm_spyre_sync in[2], out[3];
	struct drm_spyre_cmd c[3];
	int slot = j % ST_SLOTS, nin = 0, nout = 1, r, i, ret;
	uint64_t size = 8 * (1 + rnd() % (ST_MAX_SIZE / 8));
	uint8_t *src = q->src_map + (size_t)slot * ST_MAX_SIZE;

	for (i = 0; i < (int)size; i += 8)
		*(uint64_t *)(src + i) = rnd();
	memset(q->res_map + (size_t)slot * ST_MAX_SIZE, 0, size);
	q->size[slot] = size;
	q->sum[slot] = checksum(src, size);
	c[0] = sp_cmd_copy(q->src, (size_t)slot * ST_MAX_SIZE, q->dev, 0, size);
	c[1] = sp_cmd_copy(q->dev, 0, q->res, (size_t)slot * ST_MAX_SIZE, size);
	c[2] = sp_cmd_ts(q->ts, (uint64_t)j * 8);
	sp_get_param(d->fd, DRM_SPYRE_PARAM_RESET_COUNT, &q->sub_epoch[j]);

	/* a same-process dependency on an already submitted job of another queue */
	q->dep_q[slot] = -1;
	r = rnd() % nqueues;
	if (nqueues > 1 && r != qi && j > 0 && rnd() % 2) {
		int dj = rnd() % j;

		in[nin++] = (struct drm_spyre_sync) { .handle = qs[r].timeline, .point = dj + 1 };
		q->dep_q[slot] = r;
		q->dep_j[slot] = dj;
	}
	/* the previous process's timeline, ST_LAG points behind this job's index */
	if (shared_in && qi == 0 && j >= ST_LAG && rnd() % 2) {
		ret = wait_submitted(d->fd, shared_in, j - ST_LAG + 1);
		if (ret)
			return ret;
		in[nin++] = (struct drm_spyre_sync) { .handle = shared_in,
						      .point = j - ST_LAG + 1 };
	}
	out[0] = (struct drm_spyre_sync) { .handle = q->timeline, .point = j + 1 };
	out[nout++] = (struct drm_spyre_sync) { .handle = q->bin[slot] };
	if (qi == 0 && shared_out)
		out[nout++] = (struct drm_spyre_sync) { .handle = shared_out, .point = j + 1 };
	return sp_submit(d->fd, q->id, c, 3, in, nin, out, nout);
}

static int import_timeline(struct sp_dev *d, int fd, uint32_t *handle)
{
	struct drm_syncobj_handle h = { .fd = fd };
	int ret = sp_ioctl(d->fd, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &h);

	*handle = h.handle;
	return ret;
}

/* A queue banned after a hang: a new queue takes over its timeline. */
static int replace_queue(struct sp_dev *d, struct st_queue *q)
{
	sp_queue_destroy(d->fd, q->id);
	atomic_fetch_add(&shared->requeued, 1);
	return sp_queue_create(d->fd, q->engine, DRM_SPYRE_PRIORITY_NORMAL, &q->id);
}

static void worker(int me, uint64_t seed)
{
	struct st_queue qs[ST_MAX_QUEUES];
	uint32_t shared_in = 0, shared_out = 0;
	int qi, j, ret, prev = (me + nprocs - 1) % nprocs;
	struct sp_dev d;

	rng = seed ^ ((uint64_t)me << 40);
	if (sp_dev_open(&d, 0))
		_exit(2);
	for (qi = 0; qi < nqueues; qi++)
		if (queue_setup(&d, &qs[qi], qi))
			_exit(3);
	if (import_timeline(&d, tl_fds[me], &shared_out) ||
	    (nprocs > 1 && import_timeline(&d, tl_fds[prev], &shared_in)))
		_exit(4);
	if (prev == me)
		shared_in = 0;
	atomic_fetch_add(&shared->running, 1);
	for (j = 0; j < njobs; j++) {
		for (qi = 0; qi < nqueues; qi++) {
			if (j >= ST_SLOTS)
				retire(&d, qs, qi, j - ST_SLOTS);
			ret = submit(&d, qs, qi, j, shared_in, shared_out, me);
			if (ret == -ECANCELED && faults) {
				if (replace_queue(&d, &qs[qi]))
					_exit(5);
				ret = submit(&d, qs, qi, j, shared_in, shared_out, me);
			}
			if (ret) {
				printf("# process %d queue %d job %d: submit failed: %s\n", me, qi,
				       j, strerror(-ret));
				_exit(6);
			}
		}
	}
	for (j = njobs > ST_SLOTS ? njobs - ST_SLOTS : 0; j < njobs; j++)
		for (qi = 0; qi < nqueues; qi++)
			retire(&d, qs, qi, j);
	atomic_fetch_sub(&shared->running, 1);
	_exit(0);
}

/* Arm the faults one after another while the workers run; count them. */
static void inject(struct sp_dev *d, unsigned long *armed, unsigned long *fired)
{
	uint64_t nrings = d->p[DRM_SPYRE_PARAM_NUM_RINGS], deadline, v;
	int kind = 1;

	while (atomic_load(&shared->running) > 0) {
		int ring = rnd() % nrings;

		if (sp_arm_fault(d, kind, ring))
			break;
		armed[kind]++;
		/* the fault register reads 0 once the fault fired */
		deadline = sp_now_ns() + SP_WAIT_NS;
		do {
			usleep(10000);
			if (sp_debugfs_u64(d, "fault", NULL, &v))
				v = 0;
		} while (v && sp_now_ns() < deadline && atomic_load(&shared->running) > 0);
		if (!v)
			fired[kind]++;
		else
			sp_debugfs_write(d, "fault", "0");
		usleep(200000);
		kind = kind % (ST_KINDS - 1) + 1;
	}
}

int main(int argc, char **argv)
{
	unsigned long armed[ST_KINDS] = { 0 }, fired[ST_KINDS] = { 0 }, bad = 0, total;
	char timeout_saved[32] = "";
	uint64_t seed = 0, t0;
	struct sp_state base;
	struct sp_dev d;
	pid_t pids[ST_MAX_PROCS];
	int opt, i, st, fd;

	if (getenv("SPYRE_STRESS_JOBS"))
		njobs = atoi(getenv("SPYRE_STRESS_JOBS"));
	faults = getenv("SPYRE_STRESS_FAULTS") && atoi(getenv("SPYRE_STRESS_FAULTS"));
	while ((opt = getopt(argc, argv, "p:q:n:s:f")) != -1) {
		switch (opt) {
		case 'p':
			nprocs = atoi(optarg);
			break;
		case 'q':
			nqueues = atoi(optarg);
			break;
		case 'n':
			njobs = atoi(optarg);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'f':
			faults = true;
			break;
		default:
			fprintf(stderr, "usage: %s %s\n", argv[0],
				"[-p PROCS] [-q QUEUES] [-n JOBS] [-s SEED] [-f]");
			return KSFT_FAIL;
		}
	}
	if (nprocs < 1 || nprocs > ST_MAX_PROCS || nqueues < 1 || nqueues > ST_MAX_QUEUES ||
	    njobs < 1) {
		fprintf(stderr, "spyre_stress: 1..%d processes, 1..%d queues, jobs > 0\n",
			ST_MAX_PROCS, ST_MAX_QUEUES);
		return KSFT_FAIL;
	}
	if (!seed)
		seed = (uint64_t)time(NULL) * 2654435761u ^ getpid();
	rng = seed;

	ksft_print_header();
	if (sp_dev_open(&d, 0))
		ksft_exit_skip("no Spyre card\n");
	if (geteuid())
		ksft_exit_skip("needs root (debugfs counters, fault knobs)\n");
	ksft_set_plan(faults ? 6 : 5);
	ksft_print_msg("seed %#llx: %d processes x %d queues x %d jobs%s\n",
		       (unsigned long long)seed, nprocs, nqueues, njobs,
		       faults ? ", faults injected" : "");
	if (sp_state_take(&base))
		ksft_exit_fail_msg("cannot read the driver's debugfs counters\n");
	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		      -1, 0);
	if (shared == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	memset(shared, 0, sizeof(*shared));
	if (faults) {
		/* hangs are detected quickly; restored at the end */
		fd = open("/sys/module/spyre/parameters/job_timeout_ms", O_RDWR);
		if (fd >= 0) {
			i = read(fd, timeout_saved, sizeof(timeout_saved) - 1);
			timeout_saved[i > 0 ? i : 0] = '\0';
			if (pwrite(fd, "2000", 4, 0) != 4)
				timeout_saved[0] = '\0';
			close(fd);
		}
	}

	/* every process's timeline, shared as syncobj fds through fork */
	for (i = 0; i < nprocs; i++) {
		struct drm_syncobj_handle h = { .fd = -1 };
		uint32_t tl;

		if (sp_syncobj_create(d.fd, &tl, false))
			ksft_exit_fail_msg("syncobj create\n");
		h.handle = tl;
		if (sp_ioctl(d.fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h))
			ksft_exit_fail_msg("syncobj export\n");
		tl_fds[i] = h.fd;
		sp_syncobj_destroy(d.fd, tl);
	}
	fflush(stdout);
	t0 = sp_now_ns();
	for (i = 0; i < nprocs; i++) {
		pids[i] = fork();
		if (!pids[i])
			worker(i, seed);
	}
	if (faults) {
		/* let the workers start before the first fault */
		while (atomic_load(&shared->running) < nprocs && sp_now_ns() - t0 < SP_WAIT_NS)
			usleep(10000);
		inject(&d, armed, fired);
	}
	for (i = 0; i < nprocs; i++) {
		waitpid(pids[i], &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			bad++;
			ksft_print_msg("process %d: status %#x\n", i, st);
		}
	}
	for (i = 0; i < nprocs; i++)
		close(tl_fds[i]);
	total = atomic_load(&shared->done);
	ksft_print_msg("%lu of %lu jobs succeeded in %.1f s\n", total,
		       (unsigned long)nprocs * nqueues * njobs, (sp_now_ns() - t0) / 1e9);
	ksft_print_msg("failed: %lu timed out, %lu -EIO, %lu cancelled, %lu other\n",
		       atomic_load(&shared->failed[0]), atomic_load(&shared->failed[1]),
		       atomic_load(&shared->failed[2]), atomic_load(&shared->failed[3]));
	if (faults) {
		for (i = 1; i < ST_KINDS; i++)
			ksft_print_msg("fault %s: %lu armed, %lu fired\n", kind_name[i], armed[i],
				       fired[i]);
		ksft_print_msg("%lu queues replaced after a ban\n",
			       atomic_load(&shared->requeued));
	}

	if (bad)
		ksft_test_result_fail("every process finished (%lu did not)\n", bad);
	else
		ksft_test_result_pass("every process finished\n");
	if (atomic_load(&shared->lost))
		ksft_test_result_fail("every fence signalled (%lu did not)\n",
				      atomic_load(&shared->lost));
	else
		ksft_test_result_pass("every fence signalled\n");
	if (atomic_load(&shared->bad_data) || atomic_load(&shared->bad_order))
		ksft_test_result_fail("data and order intact (%lu bad, %lu out of order)\n",
				      atomic_load(&shared->bad_data),
				      atomic_load(&shared->bad_order));
	else
		ksft_test_result_pass("data and order intact\n");
	if (faults) {
		unsigned long f = 0;

		for (i = 1; i < ST_KINDS; i++)
			f += fired[i];
		/*
		 * Only the faults' errors, and no fault without a failed job.
		 * A job times out only for a hang: its own, or that of a job
		 * it waited for (a dependent fails with its input's error, so
		 * one hang can time out several jobs of other queues); a DMA
		 * error, a corrupt completion or a memory error fails jobs
		 * with -EIO (a card reset fails every job on the card).
		 */
		if (atomic_load(&shared->failed[3]) || !f ||
		    (atomic_load(&shared->failed[0]) && !fired[1]) ||
		    (fired[1] && !atomic_load(&shared->failed[0])) ||
		    (!atomic_load(&shared->failed[1]) && (fired[2] || fired[3] || fired[4])))
			ksft_test_result_fail("faults fail only their jobs, with their errors\n");
		else
			ksft_test_result_pass("faults fail only their jobs, with their errors\n");
	} else if (total != (unsigned long)nprocs * nqueues * njobs) {
		ksft_print_msg("only %lu jobs succeeded\n", total);
		bad++;
	}
	if (!faults && total != (unsigned long)nprocs * nqueues * njobs)
		ksft_test_result_fail("every job succeeded and memory is back to its start\n");
	else if (sp_state_settle(&base))
		ksft_test_result_fail("every job succeeded and memory is back to its start\n");
	else
		ksft_test_result_pass("every job succeeded and memory is back to its start\n");
	if (timeout_saved[0]) {
		fd = open("/sys/module/spyre/parameters/job_timeout_ms", O_WRONLY);
		if (fd >= 0) {
			if (write(fd, timeout_saved, strlen(timeout_saved)) < 0)
				ksft_print_msg("cannot restore job_timeout_ms\n");
			close(fd);
		}
	}
	i = sp_smoke(&d);
	if (i)
		ksft_test_result_fail("the card passes a smoke test afterwards (%s)\n",
				      strerror(-i));
	else
		ksft_test_result_pass("the card passes a smoke test afterwards\n");
	sp_dev_close(&d);
	ksft_finished();
}
