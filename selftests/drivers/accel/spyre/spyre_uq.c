// SPDX-License-Identifier: GPL-2.0
/*
 * Spyre accel selftests: user-mode queues (DRM_IOCTL_SPYRE_UQ_*). A
 * process writes card descriptors into its own ring and rings its
 * doorbell page without a system call; DRM_IOCTL_SPYRE_UQ_WAIT sleeps
 * until the write-back reaches a seqno. Two files on one card whose ring
 * entries aim at each other's memory fault with the address in their own
 * completion record while the other's results stay right; a bad doorbell
 * value stops only that ring; bad arguments get their -errno; destroy,
 * close and a card reset end queues with work in flight.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "spyre_desc.h"
#include "spyre_prog.h"
#include "spyre_util.h"

#define RVA	0x200000ull	/* the ring (host BO) */
#define WVA	0x400000ull	/* write-back at +0, completion records from +4096 */
#define DVA	0x600000ull	/* a device BO */
#define LOG2	6		/* 64 descriptors */
#define ENTRIES	(1u << LOG2)
#define DSIZE	(64 * 1024ull)

/* One user queue and what it needs, in one open file. */
struct uq {
	struct sp_dev d;
	uint32_t ring_bo, wb_bo, dev_bo, dq, id;
	union spyre_hw_desc *ring;
	uint8_t *wb;			/* write-back page, then records */
	volatile uint32_t *doorbell;
	uint32_t tail;
	uint64_t seqno;
};

static int uq_wait(struct uq *q, uint64_t value, int64_t rel_ns, uint64_t *completed)
{
	struct drm_spyre_uq_wait w = {
		.queue_id = q->id, .value = value, .timeout_ns = sp_deadline(rel_ns),
	};
	int ret = sp_ioctl(q->d.fd, DRM_IOCTL_SPYRE_UQ_WAIT, &w);

	if (completed)
		*completed = w.completed;
	return ret;
}

static int uq_wait_fault(struct uq *q, uint64_t value, uint64_t *fault)
{
	struct drm_spyre_uq_wait w = {
		.queue_id = q->id, .value = value, .timeout_ns = sp_deadline(SP_WAIT_NS),
	};
	int ret = sp_ioctl(q->d.fd, DRM_IOCTL_SPYRE_UQ_WAIT, &w);

	*fault = w.fault_addr;
	return ret;
}

static int uq_create(struct uq *q, uint64_t ring, uint64_t wb, uint32_t log2)
{
	struct drm_spyre_uq_create c = { .ring_addr = ring, .wb_addr = wb, .ring_log2 = log2 };
	int ret = sp_ioctl(q->d.fd, DRM_IOCTL_SPYRE_UQ_CREATE, &c);

	if (!ret) {
		q->id = c.queue_id;
		q->doorbell = mmap(NULL, SP_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, q->d.fd,
				   c.doorbell_offset);
		if (q->doorbell == MAP_FAILED)
			return -errno;
	}
	return ret;
}

/* Opens a file with a ring, write-back and device BO mapped, and a queue. */
static int uq_open(struct uq *q, const struct sp_dev *first)
{
	int ret;

	memset(q, 0, sizeof(*q));
	ret = first ? sp_dev_reopen(first, &q->d) : sp_dev_open(&q->d, 0);
	if (ret)
		return ret;
	if (!q->d.p[DRM_SPYRE_PARAM_USER_QUEUES])
		return -EOPNOTSUPP;
	if (sp_bo_create(q->d.fd, SP_PAGE, DRM_SPYRE_PLACEMENT_HOST, &q->ring_bo) ||
	    sp_bo_create(q->d.fd, 2 * SP_PAGE, DRM_SPYRE_PLACEMENT_HOST, &q->wb_bo) ||
	    sp_bo_create(q->d.fd, DSIZE, DRM_SPYRE_PLACEMENT_DEVICE, &q->dev_bo) ||
	    sp_queue_create(q->d.fd, DRM_SPYRE_ENGINE_DMA, DRM_SPYRE_PRIORITY_NORMAL, &q->dq))
		return -ENOMEM;
	q->ring = sp_bo_mmap(q->d.fd, q->ring_bo, SP_PAGE);
	q->wb = sp_bo_mmap(q->d.fd, q->wb_bo, 2 * SP_PAGE);
	if (!q->ring || !q->wb)
		return -ENOMEM;
	memset(q->wb, 0, 2 * SP_PAGE);
	ret = sp_vm_bind(q->d.fd, DRM_SPYRE_VM_BIND_OP_MAP, DRM_SPYRE_VM_BIND_READ_ONLY,
			 q->ring_bo, 0, RVA, SP_PAGE);
	ret = ret ?: sp_vm_bind(q->d.fd, DRM_SPYRE_VM_BIND_OP_MAP, 0, q->wb_bo, 0, WVA,
				2 * SP_PAGE);
	ret = ret ?: sp_vm_bind(q->d.fd, DRM_SPYRE_VM_BIND_OP_MAP, 0, q->dev_bo, 0, DVA, DSIZE);
	return ret ?: uq_create(q, RVA, WVA, LOG2);
}

static void uq_close(struct uq *q)
{
	if (q->doorbell && q->doorbell != MAP_FAILED)
		munmap((void *)q->doorbell, SP_PAGE);
	if (q->ring)
		munmap(q->ring, SP_PAGE);
	if (q->wb)
		munmap(q->wb, 2 * SP_PAGE);
	sp_dev_close(&q->d);
}

static union spyre_hw_desc *uq_slot(struct uq *q)
{
	return &q->ring[q->tail++ % ENTRIES];
}

/* Ends the job with a FENCE (interrupt on) whose record is slot seqno % 32. */
static uint64_t uq_fence(struct uq *q)
{
	union spyre_hw_desc *d = uq_slot(q);

	q->seqno++;
	spyre_desc_fence(d, SPYRE_DESC_F_IRQ);
	spyre_desc_fence_seal(d, q->seqno, WVA + SP_PAGE + (q->seqno % 32) * 64);
	return q->seqno;
}

static struct spyre_hw_completion *uq_record(struct uq *q, uint64_t seqno)
{
	return (struct spyre_hw_completion *)(q->wb + SP_PAGE + (seqno % 32) * 64);
}

static void uq_ring(struct uq *q)
{
	__sync_synchronize();
	*q->doorbell = q->tail;
}

/* One FILL job: @size bytes of @pattern at card VA @va. */
static uint64_t uq_fill(struct uq *q, uint64_t va, uint64_t size, uint32_t pattern)
{
	spyre_desc_dma_fill(uq_slot(q), size, va, pattern);
	return uq_fence(q);
}

static long first_not(const uint32_t *buf, size_t n, uint32_t v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (buf[i] != v)
			return i;
	return -1;
}

FIXTURE(uq) {
	struct uq a;
	uint32_t buf[DSIZE / 4];
};

FIXTURE_SETUP(uq)
{
	int ret = uq_open(&self->a, NULL);

	if (ret == -ENODEV)
		SKIP(return, "no Spyre card");
	if (ret == -EOPNOTSUPP)
		SKIP(return, "the card offers no user-mode queues");
	ASSERT_EQ(0, ret);
}

FIXTURE_TEARDOWN(uq)
{
	uq_close(&self->a);
}

/* Jobs written into the ring run; the wait sleeps until their seqno. */
TEST_F(uq, submit_and_wait)
{
	struct uq *q = &self->a;
	uint64_t s, done = 0;
	unsigned int i;

	s = uq_fill(q, DVA + 4096, 8192, 0xc0ffee00);
	uq_ring(q);
	ASSERT_EQ(0, uq_wait(q, s, SP_WAIT_NS, &done));
	EXPECT_EQ(s, done);
	EXPECT_EQ(s, *(uint64_t *)q->wb);
	EXPECT_EQ(0, uq_record(q, s)->status);
	ASSERT_EQ(0, sp_download(&q->d, q->dq, q->dev_bo, 0, self->buf, 16384));
	EXPECT_EQ(-1, first_not(self->buf, 1024, 0));
	EXPECT_EQ(-1, first_not(self->buf + 1024, 2048, 0xc0ffee00));
	EXPECT_EQ(-1, first_not(self->buf + 3072, 1024, 0));

	/* Past the ring's end many times: 300 jobs of two descriptors. */
	for (i = 0; i < 300; i++) {
		s = uq_fill(q, DVA + 4 * (i % 64), 4, i);
		uq_ring(q);
		if (i % 16 == 15)
			ASSERT_EQ(0, uq_wait(q, s, SP_WAIT_NS, NULL));
	}
	ASSERT_EQ(0, uq_wait(q, s, SP_WAIT_NS, &done));
	EXPECT_EQ(s, done);
	ASSERT_EQ(0, sp_download(&q->d, q->dq, q->dev_bo, 0, self->buf, 256));
	/* Word j holds the last i < 300 with i % 64 == j. */
	for (i = 0; i < 64; i++)
		EXPECT_EQ(i <= 299 % 64 ? 256 + i : 192 + i, self->buf[i]);
	/* A value not submitted yet times out. */
	EXPECT_EQ(-ETIME, uq_wait(q, s + 1, 50 * 1000 * 1000, &done));
	EXPECT_EQ(s, done);
}

/*
 * Two files, each with its queue: each one's ring entries aim at the VA
 * where the other mapped its memory. The attacker's job faults with the
 * address in its own record, its wait says -EFAULT; the victim's data and
 * queue are untouched.
 */
TEST_F(uq, two_files_isolated)
{
	struct uq *a = &self->a, b;
	uint64_t sa, sb, fault = 0;
	struct spyre_hw_completion *r;

	ASSERT_EQ(0, uq_open(&b, &a->d));
	/* b maps a second BO at 0x800000, where a has nothing. */
	sb = uq_fill(&b, DVA, DSIZE, 0x11111111);
	uq_ring(&b);
	ASSERT_EQ(0, uq_wait(&b, sb, SP_WAIT_NS, NULL));
	ASSERT_EQ(0, sp_vm_bind(b.d.fd, DRM_SPYRE_VM_BIND_OP_MAP, 0, b.dev_bo, 0, 0x800000,
				DSIZE));

	sa = uq_fill(a, 0x800000 + 128, 256, 0xbad0bad0);
	uq_ring(a);
	/* The queue stops at once; the wait names the address. */
	EXPECT_EQ(-EFAULT, uq_wait_fault(a, sa, &fault));
	EXPECT_EQ(0x800000 + 128, fault);

	/* b keeps running, its memory as it wrote it. */
	sb = uq_fill(&b, 0x800000 + 4096, 4096, 0x22222222);
	uq_ring(&b);
	ASSERT_EQ(0, uq_wait(&b, sb, SP_WAIT_NS, NULL));
	ASSERT_EQ(0, sp_download(&b.d, b.dq, b.dev_bo, 0, self->buf, DSIZE));
	EXPECT_EQ(-1, first_not(self->buf, 1024, 0x11111111));
	EXPECT_EQ(-1, first_not(self->buf + 1024, 1024, 0x22222222));
	EXPECT_EQ(-1, first_not(self->buf + 2048, DSIZE / 4 - 2048, 0x11111111));
	/* a's own device BO got nothing either. */
	ASSERT_EQ(0, sp_download(&a->d, a->dq, a->dev_bo, 0, self->buf, DSIZE));
	EXPECT_EQ(-1, first_not(self->buf, DSIZE / 4, 0));

	/* A bind fixes a's space and restarts its queue where it stopped. */
	ASSERT_EQ(0, sp_vm_bind(a->d.fd, DRM_SPYRE_VM_BIND_OP_MAP, 0, a->dev_bo, 0, 0x800000,
				DSIZE));
	/* ...which finishes the failed job: its record has the fault. */
	EXPECT_EQ(0, uq_wait(a, sa, SP_WAIT_NS, NULL));
	r = uq_record(a, sa);
	EXPECT_EQ(sa, r->seqno);
	EXPECT_EQ(SPYRE_CMD_ERR_PAGE_FAULT, r->status);
	EXPECT_EQ(SPYRE_FAULT_SPACE_VA_WRITE, r->fault_space);
	EXPECT_EQ(0x800000 + 128, r->fault_addr);
	sa = uq_fill(a, DVA, 64, 0x33333333);
	uq_ring(a);
	EXPECT_EQ(0, uq_wait(a, sa, SP_WAIT_NS, NULL));
	uq_close(&b);
}

/* Each process's data and program VAs; the other process maps nothing there. */
#define PP_DATA(role)	(0x10000000ull * ((role) + 1))
#define PP_PROG(role)	(PP_DATA(role) + 0x4000000ull)
#define PP_JUNK		0x40000000ull	/* binds that resume a stopped space */
#define PP_ROUNDS	6
#define PP_PATTERN(role) (0xa0a0a0a0u + (role))

/* LAUNCH of the program at @prog with one slot (@slot, 4 KiB), then a FENCE. */
static uint64_t uq_launch1(struct uq *q, uint64_t prog, uint64_t plen, uint64_t slot)
{
	spyre_desc_launch(uq_slot(q), 1, prog, plen, 0, 0);
	spyre_desc_arg(uq_slot(q), 1, 0, slot, SP_PAGE);
	return uq_fence(q);
}

/*
 * One of the two processes of uq.two_processes_isolated: its own file and
 * queue, its data at PP_DATA(role) and a program at PP_PROG(role). In each
 * round, lined up with the other process so both faults reach the card at
 * about the same time, it aims a job at the other's VAs (a FILL, a program
 * storing there, a program fetched from the other's program VA): the wait
 * must say -EFAULT with exactly that address, never the other's.
 */
static int uq_pair_child(int role, struct sp_pair *pair, void *arg)
{
	uint64_t other = PP_DATA(!role), s, fault = 0, target = 0;
	uint32_t prog, junk, *buf = malloc(DSIZE);
	uint8_t pbuf[SP_PAGE] = { 0 };
	struct spyre_hw_completion *r;
	int bad = 0, k, ret;
	struct uq q;
	size_t plen;

	ret = uq_open(&q, NULL);
	SP_CHILD_CHECK(role, bad, !ret && buf, "open: %d", ret);
	if (bad)
		return bad;
	plen = sp_prog_store_at(pbuf, 0, 256);
	ret = sp_prog_upload(&q.d, q.dq, pbuf, plen, SP_PAGE, &prog);
	ret = ret ?: sp_bo_create(q.d.fd, SP_PAGE, DRM_SPYRE_PLACEMENT_DEVICE, &junk);
	ret = ret ?: sp_vm_bind(q.d.fd, DRM_SPYRE_VM_BIND_OP_MAP, 0, q.dev_bo, 0,
				PP_DATA(role), DSIZE);
	ret = ret ?: sp_vm_bind(q.d.fd, DRM_SPYRE_VM_BIND_OP_MAP,
				DRM_SPYRE_VM_BIND_EXEC | DRM_SPYRE_VM_BIND_READ_ONLY, prog, 0,
				PP_PROG(role), SP_PAGE);
	SP_CHILD_CHECK(role, bad, !ret, "set-up: %d", ret);
	if (bad)
		goto out;
	s = uq_fill(&q, PP_DATA(role), DSIZE, PP_PATTERN(role));
	uq_ring(&q);
	ret = uq_wait(&q, s, SP_WAIT_NS, NULL);
	SP_CHILD_CHECK(role, bad, !ret, "own fill: %d", ret);

	for (k = 0; k < PP_ROUNDS; k++) {
		if (!sp_pair_barrier(pair, k + 1)) {
			SP_CHILD_CHECK(role, bad, false, "round %d: the other process never came (gone or stuck)", k);
			break;
		}
		switch (k % 3) {
		case 0:		/* DMA into the other's data */
			target = other + k * SP_PAGE + 64 * (role + 1);
			s = uq_fill(&q, target, 256, 0xbad00000u | k);
			break;
		case 1:		/* a program storing into it */
			target = other + k * SP_PAGE + 128;
			s = uq_launch1(&q, PP_PROG(role), plen, target);
			break;
		default:	/* a program fetched from the other's program VA */
			target = PP_PROG(!role);
			s = uq_launch1(&q, target, plen, PP_DATA(role) + DSIZE - SP_PAGE);
			break;
		}
		uq_ring(&q);
		ret = uq_wait_fault(&q, s, &fault);
		SP_CHILD_CHECK(role, bad, ret == -EFAULT, "round %d: wait %d, not -EFAULT", k, ret);
		SP_CHILD_CHECK(role, bad, fault == target,
			       "round %d: fault_addr %#" PRIx64 ", aimed at %#" PRIx64, k, fault,
			       target);
		/* A bind elsewhere resumes the space; the failed job retires. */
		ret = sp_vm_bind(q.d.fd, DRM_SPYRE_VM_BIND_OP_MAP, 0, junk, 0,
				 PP_JUNK + k * SP_PAGE, SP_PAGE);
		ret = ret ?: uq_wait(&q, s, SP_WAIT_NS, NULL);
		SP_CHILD_CHECK(role, bad, !ret, "round %d: resume: %d", k, ret);
		r = uq_record(&q, s);
		SP_CHILD_CHECK(role, bad, r->status == SPYRE_CMD_ERR_PAGE_FAULT &&
			       r->fault_addr == target,
			       "round %d: record status %u addr %#" PRIx64, k, r->status,
			       (uint64_t)r->fault_addr);
	}
	/* Both are done attacking: each one's data is as it wrote it. */
	SP_CHILD_CHECK(role, bad, sp_pair_barrier(pair, PP_ROUNDS + 1), "final barrier");
	ret = sp_download(&q.d, q.dq, q.dev_bo, 0, buf, DSIZE);
	SP_CHILD_CHECK(role, bad, !ret, "download: %d", ret);
	SP_CHILD_CHECK(role, bad, first_not(buf, DSIZE / 4, PP_PATTERN(role)) == -1,
		       "own data changed at word %ld",
		       first_not(buf, DSIZE / 4, PP_PATTERN(role)));
	/* ...and its queue still runs its own jobs. */
	s = uq_launch1(&q, PP_PROG(role), plen, PP_DATA(role));
	uq_ring(&q);
	ret = uq_wait(&q, s, SP_WAIT_NS, NULL);
	SP_CHILD_CHECK(role, bad, !ret && uq_record(&q, s)->status == SPYRE_CMD_OK,
		       "own launch: %d status %u", ret, uq_record(&q, s)->status);
out:
	free(buf);
	uq_close(&q);
	return bad;
}

/*
 * Two processes (fork), each with its own file and user queue, aim crafted
 * programs and DMA at each other's card VAs at the same moment, round
 * after round. Each sees -EFAULT with exactly its own fault address (card
 * 1.15's per-ring record: the card-wide latch holds only one of the two),
 * each one's data stays intact, both queues run on. About 10 s under TCG.
 */
TEST_F_TIMEOUT(uq, two_processes_isolated, 120)
{
	EXPECT_EQ(0, sp_pair_run(uq_pair_child, NULL));
}

/* A doorbell past a full ring stops that ring only (-EIO); others run. */
TEST_F(uq, bad_doorbell)
{
	struct uq *q = &self->a, b;
	uint64_t s;

	ASSERT_EQ(0, uq_open(&b, &q->d));
	q->tail = ENTRIES + 5;
	uq_ring(q);
	EXPECT_EQ(-EIO, uq_wait(q, 1, SP_WAIT_NS, NULL));
	s = uq_fill(&b, DVA, 4096, 7);
	uq_ring(&b);
	EXPECT_EQ(0, uq_wait(&b, s, SP_WAIT_NS, NULL));
	uq_close(&b);
	/* Other offsets of the page read 0 and ignore writes. */
	EXPECT_EQ(0, q->doorbell[1]);
	q->doorbell[2] = 0xffffffff;
}

/* Bad arguments: their -errno, no warning, nothing created. */
TEST_F(uq, bad_args)
{
	struct drm_spyre_uq_create c = { .ring_addr = RVA, .wb_addr = WVA, .ring_log2 = LOG2 };
	struct drm_spyre_uq_destroy d = { .queue_id = 9999 };
	struct drm_spyre_uq_wait w = { .queue_id = self->a.id };
	int fd = self->a.d.fd;
	struct sp_dev other;
	void *p;

	c.flags = 1;
	EXPECT_EQ(-EINVAL, sp_ioctl(fd, DRM_IOCTL_SPYRE_UQ_CREATE, &c));
	c.flags = 0;
	c.pad = 1;
	EXPECT_EQ(-EINVAL, sp_ioctl(fd, DRM_IOCTL_SPYRE_UQ_CREATE, &c));
	c.pad = 0;
	c.ring_log2 = 3;
	EXPECT_EQ(-EINVAL, sp_ioctl(fd, DRM_IOCTL_SPYRE_UQ_CREATE, &c));
	c.ring_log2 = 17;
	EXPECT_EQ(-EINVAL, sp_ioctl(fd, DRM_IOCTL_SPYRE_UQ_CREATE, &c));
	c.ring_log2 = LOG2;
	c.ring_addr = RVA + 64;
	EXPECT_EQ(-EINVAL, sp_ioctl(fd, DRM_IOCTL_SPYRE_UQ_CREATE, &c));
	c.ring_addr = DRM_SPYRE_VA_END - 4096;		/* 8 KiB past 2^48 - 4 KiB */
	c.ring_log2 = LOG2 + 1;
	EXPECT_EQ(-EINVAL, sp_ioctl(fd, DRM_IOCTL_SPYRE_UQ_CREATE, &c));
	c.ring_log2 = LOG2;
	c.ring_addr = RVA;
	c.wb_addr = WVA + 8;
	EXPECT_EQ(-EINVAL, sp_ioctl(fd, DRM_IOCTL_SPYRE_UQ_CREATE, &c));
	c.wb_addr = 0x900000;				/* not mapped */
	EXPECT_EQ(-ENOENT, sp_ioctl(fd, DRM_IOCTL_SPYRE_UQ_CREATE, &c));
	c.wb_addr = DVA;				/* a device BO */
	EXPECT_EQ(-EINVAL, sp_ioctl(fd, DRM_IOCTL_SPYRE_UQ_CREATE, &c));
	c.wb_addr = WVA;
	/* A file without an address space. */
	ASSERT_EQ(0, sp_dev_reopen(&self->a.d, &other));
	EXPECT_EQ(-EINVAL, sp_ioctl(other.fd, DRM_IOCTL_SPYRE_UQ_CREATE, &c));
	/* Another file's queue is not ours. */
	w.timeout_ns = sp_deadline(0);
	EXPECT_EQ(-ENOENT, sp_ioctl(other.fd, DRM_IOCTL_SPYRE_UQ_WAIT, &w));
	sp_dev_close(&other);

	EXPECT_EQ(-ENOENT, sp_ioctl(fd, DRM_IOCTL_SPYRE_UQ_DESTROY, &d));
	d.queue_id = self->a.id;
	d.pad = 1;
	EXPECT_EQ(-EINVAL, sp_ioctl(fd, DRM_IOCTL_SPYRE_UQ_DESTROY, &d));
	w.flags = 1;
	EXPECT_EQ(-EINVAL, sp_ioctl(fd, DRM_IOCTL_SPYRE_UQ_WAIT, &w));
	w.flags = 0;
	w.queue_id = 9999;
	EXPECT_EQ(-ENOENT, sp_ioctl(fd, DRM_IOCTL_SPYRE_UQ_WAIT, &w));
	/* Doorbell mappings: one page, shared, of a queue of this file. */
	p = mmap(NULL, 2 * SP_PAGE, PROT_WRITE, MAP_SHARED, fd, 0x10000ull * SP_PAGE);
	EXPECT_EQ(MAP_FAILED, p);
	p = mmap(NULL, SP_PAGE, PROT_WRITE, MAP_SHARED, fd, 0x10000ull * SP_PAGE + 63 * SP_PAGE);
	EXPECT_EQ(MAP_FAILED, p);
	p = mmap(NULL, SP_PAGE, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0x10000ull * SP_PAGE);
	EXPECT_EQ(MAP_FAILED, p);
}

/*
 * Destroying a queue with work in flight, closing a file with a live
 * queue and a card reset all end the queue cleanly; the ring serves a new
 * queue afterwards.
 */
TEST_F(uq, teardown_with_work)
{
	struct drm_spyre_uq_destroy d = { .queue_id = self->a.id };
	struct uq *q = &self->a, b;
	unsigned int i;
	uint64_t s = 0;

	for (i = 0; i < 30; i++)
		s = uq_fill(q, DVA, DSIZE, i);
	uq_ring(q);
	ASSERT_EQ(0, sp_ioctl(q->d.fd, DRM_IOCTL_SPYRE_UQ_DESTROY, &d));
	EXPECT_EQ(-ENOENT, uq_wait(q, s, 0, NULL));
	/* A new queue on the same ring memory starts over at head 0. */
	q->tail = 0;
	q->seqno = 0;
	memset(q->wb, 0, 64);
	munmap((void *)q->doorbell, SP_PAGE);
	ASSERT_EQ(0, uq_create(q, RVA, WVA, LOG2));
	s = uq_fill(q, DVA, 64, 0x44444444);
	uq_ring(q);
	ASSERT_EQ(0, uq_wait(q, s, SP_WAIT_NS, NULL));

	/* Close with a queue that is busy and a doorbell still mapped. */
	ASSERT_EQ(0, uq_open(&b, &q->d));
	for (i = 0; i < 30; i++)
		uq_fill(&b, DVA, DSIZE, i);
	uq_ring(&b);
	sp_dev_close(&b.d);
	munmap((void *)b.doorbell, SP_PAGE);
	munmap(b.ring, SP_PAGE);
	munmap(b.wb, 2 * SP_PAGE);

	/* A card reset loses the queue: its waiter hears -ECANCELED. */
	if (sp_debugfs_write(&q->d, "reset", "1"))
		SKIP(return, "no debugfs reset");
	EXPECT_EQ(-ECANCELED, uq_wait(q, s + 1, SP_WAIT_NS, NULL));
}

#define TIMEOUT_PARAM	"/sys/module/spyre/parameters/job_timeout_ms"

/*
 * A ring that never moves (a WAIT_MEM on a counter nobody raises) is
 * found by the driver's watchdog (driver 1.6): the waiter hears -ETIMEDOUT
 * within the hang limit, the queue is dead (its doorbell page is a sink:
 * writing it raises no signal) and another file's queue is unaffected.
 */
TEST_F_TIMEOUT(uq, hang_ends_queue, 60)
{
	struct uq *q = &self->a, b;
	union spyre_hw_desc *d;
	char saved[32] = "", line[256];
	uint64_t s, s2, r0 = 0, r1 = 0;
	int ret;

	if (sp_read_file(TIMEOUT_PARAM, saved, sizeof(saved)) ||
	    sp_write_file(TIMEOUT_PARAM, "500"))
		SKIP(return, "cannot set the job timeout (not root?)");
	ASSERT_EQ(0, sp_get_param(q->d.fd, DRM_SPYRE_PARAM_RESET_COUNT, &r0));
	ASSERT_EQ(0, uq_open(&b, &q->d));
	d = uq_slot(q);
	memset(d, 0, sizeof(*d));
	d->wait_mem.opcode = SPYRE_OP_WAIT_MEM;
	d->wait_mem.addr = spyre_cpu_to_le64(WVA + 2048);	/* 0, nobody writes it */
	d->wait_mem.value = spyre_cpu_to_le64(1);
	s = uq_fence(q);
	uq_ring(q);
	/* the other file's queue runs meanwhile */
	s2 = uq_fill(&b, DVA, 4096, 9);
	uq_ring(&b);
	EXPECT_EQ(0, uq_wait(&b, s2, SP_WAIT_NS, NULL));
	ret = uq_wait(q, s, 30ll * 1000000000, NULL);
	EXPECT_EQ(-ETIMEDOUT, ret);
	ASSERT_EQ(0, sp_get_param(q->d.fd, DRM_SPYRE_PARAM_RESET_COUNT, &r1));
	EXPECT_LT(r0, r1);
	/* debugfs says so, as for a banned kernel queue */
	if (!sp_user_queue_line(&q->d, q->id, line, sizeof(line)))
		EXPECT_NE(NULL, strstr(line, " BANNED"));
	/* ringing a dead queue is harmless, and it stays dead */
	uq_ring(q);
	EXPECT_EQ(-ETIMEDOUT, uq_wait(q, s, 0, NULL));
	/* the other file's queue still works */
	s = uq_fill(&b, DVA, 4096, 10);
	uq_ring(&b);
	EXPECT_EQ(0, uq_wait(&b, s, SP_WAIT_NS, NULL));
	uq_close(&b);
	if (saved[0])
		sp_write_file(TIMEOUT_PARAM, saved);
}

/*
 * fdinfo counts the engine time of user-queue work (driver 1.7, from the
 * ring's counters of card interface 1.14): exactly what the jobs'
 * completion records say, and it stays counted after the queue is
 * destroyed. debugfs "queues" lists the queue with its completed seqno.
 */
TEST_F(uq, usage_in_fdinfo_and_debugfs)
{
	struct drm_spyre_uq_destroy d = { .queue_id = self->a.id };
	struct uq *q = &self->a;
	uint64_t c0, d0, c1, d1, s, dma, done = 0;
	unsigned int ring, ctx;
	char line[256];

	if (q->d.p[DRM_SPYRE_PARAM_HW_VERSION] < SPYRE_HW_VERSION(1, SPYRE_HW_RING_BUSY_MINOR))
		SKIP(return, "card interface older than 1.14: no ring engine-time counters");
	ASSERT_EQ(0, sp_fdinfo_u64(q->d.fd, "drm-engine-compute", &c0));
	ASSERT_EQ(0, sp_fdinfo_u64(q->d.fd, "drm-engine-dma", &d0));
	uq_fill(q, DVA, DSIZE, 0x77);
	s = uq_fill(q, DVA, 4096, 0x78);
	uq_ring(q);
	ASSERT_EQ(0, uq_wait(q, s, SP_WAIT_NS, NULL));
	dma = uq_record(q, s - 1)->dma_ns + uq_record(q, s)->dma_ns;
	EXPECT_LT(0, uq_record(q, s - 1)->dma_ns);
	ASSERT_EQ(0, sp_fdinfo_u64(q->d.fd, "drm-engine-dma", &d1));
	EXPECT_EQ(d0 + dma, d1);
	ASSERT_EQ(0, sp_fdinfo_u64(q->d.fd, "drm-engine-compute", &c1));
	EXPECT_EQ(c0, c1);

	if (!sp_user_queue_line(&q->d, q->id, line, sizeof(line))) {
		ASSERT_EQ(3, sscanf(line, " user queue %*u: ring %u ctx %u completed %" SCNu64,
				    &ring, &ctx, &done));
		EXPECT_GT(64u, ring);		/* a card has at most 64 rings */
		EXPECT_LT(0, ctx);
		EXPECT_EQ(s, done);
		EXPECT_EQ(NULL, strstr(line, "BANNED"));
	}

	ASSERT_EQ(0, sp_ioctl(q->d.fd, DRM_IOCTL_SPYRE_UQ_DESTROY, &d));
	ASSERT_EQ(0, sp_fdinfo_u64(q->d.fd, "drm-engine-dma", &d1));
	EXPECT_EQ(d0 + dma, d1);
	EXPECT_EQ(-ENOENT, sp_user_queue_line(&q->d, q->id, line, sizeof(line)));
}

/*
 * Binding and unbinding BOs at ever new addresses: the page tables an
 * unmap empties are freed (driver 1.6), so device memory comes back.
 */
TEST_F(uq, unmap_frees_tables)
{
	struct uq *q = &self->a;
	uint64_t free0, free1, va, s;
	int i;

	ASSERT_EQ(0, sp_get_param(q->d.fd, DRM_SPYRE_PARAM_MEM_FREE, &free0));
	for (i = 0; i < 8; i++) {
		va = 0x100000000ull + (uint64_t)i * 0x40000000ull;	/* a new table each */
		ASSERT_EQ(0, sp_vm_bind(q->d.fd, DRM_SPYRE_VM_BIND_OP_MAP, 0, q->dev_bo, 0, va,
					DSIZE));
		ASSERT_EQ(0, sp_vm_bind(q->d.fd, DRM_SPYRE_VM_BIND_OP_UNMAP, 0, 0, 0, va, DSIZE));
	}
	ASSERT_EQ(0, sp_get_param(q->d.fd, DRM_SPYRE_PARAM_MEM_FREE, &free1));
	EXPECT_EQ(free0, free1);
	/* the queue's own mappings are untouched */
	s = uq_fill(q, DVA, 4096, 3);
	uq_ring(q);
	EXPECT_EQ(0, uq_wait(q, s, SP_WAIT_NS, NULL));
}

TEST_HARNESS_MAIN
