// SPDX-License-Identifier: MIT
/*
 * User-mode queues on the drm backend (driver 1.4, card interface 1.11):
 * launches, copies and fills are written as card descriptors into rings in
 * the process's own card address space and started with a doorbell write,
 * so the hot path makes no system call. Documentation/runtime.rst has the
 * rules, Documentation/accel/spyre/vm.rst the driver's side.
 *
 * The submission engine above (stream*.c) speaks the kernel's language:
 * queues, SUBMITs of typed commands with in- and out-syncs on timeline
 * syncobjs. This file keeps that interface and implements it in the
 * process:
 *
 * - A "queue" is a handle on one of a few hardware rings (one per stream
 *   up to UQ_MAX_RINGS, then shared round-robin). A ring runs its jobs in
 *   order, as a kernel queue does.
 * - A "timeline" is a list of (point, ring, seqno): point p is complete
 *   when every entry up to it is, i.e. when each ring's completed_seqno
 *   (the write-back record the card writes after every FENCE) passed the
 *   entry's seqno. Host work signals points with an entry on no ring.
 * - An in-sync on another ring's work becomes a WAIT_MEM on that ring's
 *   write-back: the card orders the rings itself, without the host.
 * - Every job ends with a FENCE whose completion record lands in the
 *   ring's BO; records are read in seqno order ("consumed") and a failed
 *   one becomes the error of its point and of its queue's record.
 * - Waiting polls completed_seqno for up to 50 us (a small job's round
 *   trip in the test VM), then sleeps in DRM_IOCTL_SPYRE_UQ_WAIT. A job's
 *   FENCE raises no interrupt: a waiter about to sleep for a ring's last
 *   job writes an interrupt job (a FENCE with F_IRQ alone) behind it
 *   unless one is there already (ring_arm_irq); every job leaves room on
 *   its ring for that one. A waiter for a job with others behind it
 *   sleeps in slices of 100 us to 1 ms instead (an interrupt job at the tail
 *   would wake it only when they are done too), except the wait for room
 *   on a full ring, which can wait for the ring to drain. An interrupt
 *   per job cost a fifth of a prepared recipe launch's instructions in
 *   the test VM whether anyone slept or not (the guest's interrupt entry
 *   and exit, each time).
 * - A ring the driver ended (its watchdog found it hung: -ETIMEDOUT; a
 *   card reset: -ECANCELED; a ring error: -EIO) is "dead": the job it
 *   stopped in fails with that error (a hang also bans that job's queue,
 *   as the kernel's recovery does), the later ones with -ECANCELED, and
 *   the process moves the write-back past them itself, so waits on them
 *   end and other rings' WAIT_MEMs on it go on. Its next job sets the
 *   ring up again on the same memory (driver 1.6).
 * - A translation fault stops the whole address space (every ring of the
 *   file) after the faulting job retired; the next VM_BIND restarts it,
 *   so the faulting job's record (or UQ_WAIT's -EFAULT) triggers one.
 * - The kernel does not see which BOs a ring's work uses, so a BO closed
 *   while work submitted before is unfinished stays mapped (and its
 *   handle open) until that work completed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "backend_drm.h"
#include "spyre_desc.h"

#define UQ_LOG2		12
#define UQ_ENTRIES	(1u << UQ_LOG2)
#define UQ_NREC		UQ_ENTRIES	/* completion records: one per job in flight */
#define UQ_MAX_RINGS	4
#define UQ_RING_BYTES	(UQ_ENTRIES * SPYRE_DESC_SIZE)
#define UQ_WB_OFF	UQ_RING_BYTES
#define UQ_REC_OFF	(UQ_WB_OFF + SPY_PAGE)
#define UQ_BO_BYTES	(UQ_REC_OFF + UQ_NREC * sizeof(struct spyre_hw_completion))
/* The backend's own VAs: the top 1 TiB of the space, which addr.c never hands out. */
#define UQ_VA_BASE	(DRM_SPYRE_VA_END - (1ull << 40))
#define UQ_VA_STRIDE	(1ull << 20)	/* per ring BO; slot 0 is the resume page */
#define UQ_SPIN_NS	50000		/* poll before sleeping in UQ_WAIT (runtime.rst) */
#define UQ_SLICE_NS	100000		/* a sleep no interrupt was promised for, */
#define UQ_SLICE_MAX_NS	1000000		/* doubling up to this while it lasts */
#define UQ_TL_ERRS	16		/* failed points a timeline remembers */

#define UQ_META_DEPS	4		/* in-syncs on other rings' unfinished work */
/*
 * The driver's doorbell mmap offsets are page 0x10000 + the card's ring
 * index (driver/spyre_uq.c). Only fault injection, a test hook through the
 * driver's debugfs, needs that index.
 */
#define UQ_DOORBELL_PGOFF	0x10000u

/* A job's input that was still running when it was written. */
struct uq_dep {
	uint32_t tl;			/* timeline index + 1 */
	int ring;
	uint64_t point, seqno;
};

/* What the job of a completion record slot belongs to. */
struct uq_meta {
	uint32_t tl, vq;		/* timeline and queue index + 1, 0: none */
	uint64_t point, job;
	uint32_t end;			/* ring index just past its FENCE */
	int err;			/* failed before it reached the card (an input had) */
	struct uq_dep dep[UQ_META_DEPS];
	unsigned int ndeps;
};

struct uq_ring {
	uint32_t qid, handle;
	uint32_t hw;			/* the card's ring index (from the doorbell offset) */
	int dead;			/* the driver ended the queue: why, else 0 */
	uint64_t dead_from;		/* the first job it did not finish */
	uint8_t *map;
	union spyre_hw_desc *desc;
	volatile uint64_t *completed;	/* write-back completed_seqno */
	volatile struct spyre_hw_completion *rec;
	volatile uint32_t *doorbell;
	uint64_t va;
	uint32_t tail, head;		/* head: past the last consumed FENCE */
	uint64_t seqno, consumed;	/* last FENCE written, last record read */
	uint64_t irq_seqno;		/* last interrupt job written (ring_arm_irq) */
	struct uq_meta meta[UQ_NREC];
};

struct uq_ent {
	uint64_t point, seqno;
	int ring;			/* -1: signalled by the host */
};

struct uq_tl {
	bool live;
	uint64_t done, last;		/* complete up to, highest point named */
	struct uq_ent *ent;		/* ring buffer of cap (a power of two) */
	size_t first, n, cap;
	struct { uint64_t point; int err; } err[UQ_TL_ERRS];
	unsigned int nerr;		/* written so far (the last UQ_TL_ERRS kept) */
};

struct uq_vq {
	bool live;
	bool banned;			/* one of its jobs hung: submits fail (-ECANCELED) */
	uint32_t engine;
	int ring;
	uint64_t jobs;
	struct spy_queue_error qe;
};

/* A closed BO kept mapped until the work submitted before its close is done. */
struct uq_zombie {
	struct uq_zombie *next;
	uint32_t handle;
	uint64_t va, size;
	uint64_t seqno[UQ_MAX_RINGS];
};

struct spy_uq {
	pthread_mutex_t lock;
	struct uq_ring *ring[UQ_MAX_RINGS];
	unsigned int nrings, max_rings;
	struct uq_tl *tl;
	uint32_t ntl, tl_cap;
	struct uq_vq *vq;
	uint32_t nvq, vq_cap;
	struct uq_zombie *zombies;
	uint32_t resume_handle;		/* a host page mapped and unmapped to resume */
	bool resume_mapped;
	uint64_t max_args;
	/* jobs no ring can run (a copy from a peer BO): a kernel queue and timeline */
	pthread_mutex_t klock;
	uint32_t kqueue, ktl;
	uint64_t kpoint;
};

static struct spy_uq *uq_of(spyre_device *dev)
{
	return ((struct drm_priv *)dev->priv)->uq;
}

static uint64_t ring_done(const struct uq_ring *r)
{
	return __atomic_load_n(r->completed, __ATOMIC_ACQUIRE);
}

/* ---- rings ---- */

static void ring_free(spyre_device *dev, struct uq_ring *r)
{
	if (r->qid) {
		struct drm_spyre_uq_destroy d = { .queue_id = r->qid };

		spy_drm_ioctl(dev, DRM_IOCTL_SPYRE_UQ_DESTROY, &d);
	}
	if (r->doorbell)
		munmap((void *)r->doorbell, SPY_PAGE);
	if (r->map)
		munmap(r->map, UQ_BO_BYTES);
	if (r->handle) {
		spy_drm_vm_unmap(dev, r->va, UQ_BO_BYTES);
		spy_drm_gem_close(dev, r->handle);
	}
	free(r);
}

/* The driver's queue on @r's memory, and its doorbell; the card's head starts at 0. */
static int ring_start(spyre_device *dev, struct uq_ring *r)
{
	struct drm_spyre_uq_create c = { 0 };
	void *p;
	int ret;

	c.ring_addr = r->va;
	c.wb_addr = r->va + UQ_WB_OFF;
	c.ring_log2 = UQ_LOG2;
	ret = spy_drm_ioctl(dev, DRM_IOCTL_SPYRE_UQ_CREATE, &c);
	if (ret)
		return ret;
	r->qid = c.queue_id;
	r->hw = (uint32_t)(c.doorbell_offset / SPY_PAGE) - UQ_DOORBELL_PGOFF;
	r->tail = r->head = 0;
	p = mmap(NULL, SPY_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, dev->fd, c.doorbell_offset);
	if (p == MAP_FAILED)
		return -errno;
	r->doorbell = p;
	return 0;
}

/* A new hardware ring, its BO at the backend's VA slot @index + 1. */
static int ring_create(spyre_device *dev, unsigned int index, struct uq_ring **out)
{
	struct uq_ring *r = calloc(1, sizeof(*r));
	size_t off;
	void *p;
	int ret;

	if (!r)
		return -ENOMEM;
	/*
	 * The job records (meta, some 700 KiB) are fresh zero pages: touch
	 * them now, so that no submission takes the page faults (one every
	 * couple of dozen jobs until the ring wrapped: some 200 instructions
	 * per job on average in the test VM).
	 */
	for (off = 0; off < sizeof(*r); off += SPY_PAGE)
		((volatile uint8_t *)r)[off] = 0;
	r->va = UQ_VA_BASE + (index + 1) * UQ_VA_STRIDE;
	ret = spy_drm_bo_create(dev, UQ_BO_BYTES, 1, &r->handle);
	if (ret) {
		r->handle = 0;
		goto fail;
	}
	ret = spy_drm_bo_map(dev, r->handle, UQ_BO_BYTES, &p);
	if (ret)
		goto fail;
	r->map = p;
	memset(r->map, 0, UQ_BO_BYTES);
	ret = spy_drm_vm_map(dev, r->handle, r->va, UQ_BO_BYTES, 0);
	if (ret)
		goto fail;
	r->desc = (union spyre_hw_desc *)r->map;
	r->completed = (volatile uint64_t *)(r->map + UQ_WB_OFF);
	r->rec = (volatile struct spyre_hw_completion *)(r->map + UQ_REC_OFF);
	ret = ring_start(dev, r);
	if (ret)
		goto fail;
	*out = r;
	return 0;
fail:
	ring_free(dev, r);
	return ret;
}

/* ---- errors and the resume after a translation fault ---- */

/* Restart the address space after a fault (the driver resumes on any VM_BIND). */
static void uq_resume(spyre_device *dev, struct spy_uq *uq)
{
	int ret;

	if (uq->resume_mapped)
		ret = spy_drm_vm_unmap(dev, UQ_VA_BASE, SPY_PAGE);
	else
		ret = spy_drm_vm_map(dev, uq->resume_handle, UQ_VA_BASE, SPY_PAGE, 0);
	if (!ret)
		uq->resume_mapped = !uq->resume_mapped;
}

static void fault_of(volatile const struct spyre_hw_completion *c, struct spy_fault *f)
{
	uint32_t insn = le32toh(c->fault_insn);
	uint16_t space = le16toh(c->fault_space);

	*f = (struct spy_fault){ .core = -1, .insn = -1 };
	if (insn != SPYRE_FAULT_INSN_NONE) {
		f->core = le16toh(c->fault_core);
		f->insn = insn;
	}
	if (space == SPYRE_FAULT_SPACE_SCRATCHPAD)
		f->space = SPY_FAULT_SPACE_SP;
	else if (space == SPYRE_FAULT_SPACE_DEVMEM)
		f->space = SPY_FAULT_SPACE_DEV;
	else if (space >= SPYRE_FAULT_SPACE_VA_READ && space <= SPYRE_FAULT_SPACE_VA_EXEC)
		f->space = SPY_FAULT_SPACE_VA;
	if (f->space)
		f->addr = le64toh(c->fault_addr);
}

/* The error recorded for @point of timeline @tl (index + 1), 0 if none. */
static int tl_error(struct spy_uq *uq, uint32_t tl, uint64_t point)
{
	const struct uq_tl *t = tl && tl <= uq->ntl ? &uq->tl[tl - 1] : NULL;
	unsigned int i, n = t ? (t->nerr < UQ_TL_ERRS ? t->nerr : UQ_TL_ERRS) : 0;

	for (i = 0; i < n; i++)
		if (t->err[i].point == point)
			return t->err[i].err;
	return 0;
}

/*
 * Read the records of @r's retired jobs, in order; false when none was
 * read. A job whose input (another ring's job that was still running when
 * it was written) failed takes over that error, as the kernel's jobs do,
 * so it waits until that ring's record was read. Under uq->lock.
 */
static bool ring_consume(spyre_device *dev, struct spy_uq *uq, struct uq_ring *r)
{
	uint64_t done = ring_done(r);
	bool fault = false, progress = false;

	while (r->consumed < done && r->consumed < r->seqno) {
		uint64_t s = r->consumed + 1;
		struct uq_meta *m = &r->meta[s % UQ_NREC];
		volatile const struct spyre_hw_completion *c = &r->rec[s % UQ_NREC];
		bool lost = r->dead && s >= r->dead_from;	/* no record: the driver ended it */
		uint32_t status = lost ? 0 : le32toh(c->status);
		int err = le64toh(c->seqno) == s ? spyre_status_to_errno(status) : -EIO;
		unsigned int i;

		if (lost) {
			err = s == r->dead_from ? r->dead : -ECANCELED;
			/* the hung job's queue is banned, as the kernel's recovery does */
			if (s == r->dead_from && r->dead == -ETIMEDOUT && m->vq)
				uq->vq[m->vq - 1].banned = true;
		}
		for (i = 0; i < m->ndeps && !lost; i++)
			if (uq->ring[m->dep[i].ring]->consumed < m->dep[i].seqno)
				goto out;
		r->consumed = s;
		progress = true;
		r->head = m->end;
		if (m->err)
			err = m->err;
		for (i = 0; i < m->ndeps && !err; i++)
			err = tl_error(uq, m->dep[i].tl, m->dep[i].point);
		if (!err)
			continue;
		if (status == SPYRE_CMD_ERR_PAGE_FAULT)
			fault = true;
		if (m->tl) {
			struct uq_tl *t = &uq->tl[m->tl - 1];

			t->err[t->nerr % UQ_TL_ERRS].point = m->point;
			t->err[t->nerr % UQ_TL_ERRS].err = err;
			t->nerr++;
		}
		if (m->vq) {
			struct spy_queue_error *qe = &uq->vq[m->vq - 1].qe;

			if (!qe->error) {
				qe->error = err;
				qe->job = m->job;
				qe->point = m->point;
				if (lost)
					qe->fault = (struct spy_fault){ .core = -1, .insn = -1 };
				else
					fault_of(c, &qe->fault);
			}
			qe->failed++;
		}
	}
out:
	if (fault)
		uq_resume(dev, uq);
	return progress;
}

static void consume_all(spyre_device *dev, struct spy_uq *uq)
{
	bool progress = false;
	unsigned int i;

	/* the common case on the submission path: no record to read */
	for (i = 0; i < uq->nrings && !progress; i++)
		progress = uq->ring[i]->consumed < uq->ring[i]->seqno &&
			   uq->ring[i]->consumed < ring_done(uq->ring[i]);
	while (progress)
		for (progress = false, i = 0; i < uq->nrings; i++)
			progress |= ring_consume(dev, uq, uq->ring[i]);
}

/*
 * The driver ended @r's queue with @err. What the card finished is read as
 * usual; the rest is retired here (ring_consume() above), and the
 * write-back, which the card no longer writes, is moved past it by the
 * process so that waits on those jobs end and other rings' WAIT_MEMs on it
 * go on (any register write makes the card look at them again: a live
 * ring's doorbell, with the tail it has). Under uq->lock.
 */
static void ring_kill(spyre_device *dev, struct spy_uq *uq, struct uq_ring *r, int err)
{
	unsigned int i;

	if (r->dead)
		return;
	r->dead_from = ring_done(r) + 1;
	r->dead = err;
	__atomic_store_n(r->completed, r->seqno, __ATOMIC_RELEASE);
	consume_all(dev, uq);
	for (i = 0; i < uq->nrings; i++) {
		struct uq_ring *o = uq->ring[i];

		if (!o->dead && o->doorbell) {
			*o->doorbell = o->tail;
			break;
		}
	}
}

/* Set a dead ring up again on the same memory; its seqnos go on. Under uq->lock. */
static int ring_restart(spyre_device *dev, struct spy_uq *uq, struct uq_ring *r)
{
	struct drm_spyre_uq_destroy d = { .queue_id = r->qid };
	int ret;

	consume_all(dev, uq);
	if (r->doorbell)
		munmap((void *)r->doorbell, SPY_PAGE);
	r->doorbell = NULL;
	if (r->qid)
		spy_drm_ioctl(dev, DRM_IOCTL_SPYRE_UQ_DESTROY, &d);
	r->qid = 0;
	ret = ring_start(dev, r);
	if (ret)
		return spy_err(ret, "libspyre: setting up a user-mode queue again after its "
			       "failure");
	r->dead = 0;
	r->dead_from = 0;
	return 0;
}

/* ---- waiting for a ring ---- */

/*
 * Before a sleep until @r retired @seqno: an interrupt job behind it, so
 * that the ring's interrupt wakes the sleeper (jobs' own FENCEs raise
 * none). One interrupt job serves every wait up to it. Room for it is
 * left by every job (uq_submit), and after it none is needed until the
 * next job. With jobs after @seqno on the ring, only if @drain (the
 * caller may wake when they are done too). False when no interrupt is
 * promised: the caller sleeps in slices. Under uq->lock.
 */
static bool ring_arm_irq(struct uq_ring *r, uint64_t seqno, bool drain)
{
	struct uq_meta *m;
	union spyre_hw_desc *f;

	if (r->irq_seqno >= seqno || r->dead || !r->doorbell || ring_done(r) >= seqno)
		return true;
	if ((seqno < r->seqno && !drain) ||
	    r->tail + 1 - r->head > UQ_ENTRIES || r->seqno + 1 - r->consumed > UQ_NREC)
		return false;
	r->seqno++;
	m = &r->meta[r->seqno % UQ_NREC];
	memset(m, 0, sizeof(*m));	/* no queue, no timeline: nothing to report */
	f = &r->desc[r->tail++ % UQ_ENTRIES];
	spyre_desc_fence(f, SPYRE_DESC_F_IRQ);
	spyre_desc_fence_seal(f, r->seqno, r->va + UQ_REC_OFF + (r->seqno % UQ_NREC) *
			      sizeof(struct spyre_hw_completion));
	m->end = r->tail;
	r->irq_seqno = r->seqno;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	*r->doorbell = r->tail;
	return true;
}

/*
 * Until @r retired @seqno: poll briefly, then sleep in the driver. A
 * translation fault that stopped the space is answered with a resume.
 * @drain: the caller may wake only once the ring's later jobs are done
 * too (ring_arm_irq).
 */
static int ring_wait(spyre_device *dev, struct spy_uq *uq, struct uq_ring *r, uint64_t seqno,
		     int64_t abs_timeout_ns, bool drain)
{
	uint64_t t0 = spy_now_ns(), slice = UQ_SLICE_NS;
	struct drm_spyre_uq_wait w;
	bool irq;
	int ret;

	while (ring_done(r) < seqno && !r->dead) {
		if (spy_now_ns() - t0 < UQ_SPIN_NS) {
#if defined(__x86_64__) || defined(__i386__)
			__builtin_ia32_pause();
#endif
			continue;
		}
		pthread_mutex_lock(&uq->lock);
		irq = ring_arm_irq(r, seqno, drain);
		pthread_mutex_unlock(&uq->lock);
		memset(&w, 0, sizeof(w));
		w.queue_id = r->qid;
		w.value = seqno;
		w.timeout_ns = abs_timeout_ns;
		if (!irq && (int64_t)(spy_now_ns() + slice) < abs_timeout_ns)
			w.timeout_ns = (int64_t)(spy_now_ns() + slice);
		ret = spy_drm_ioctl(dev, DRM_IOCTL_SPYRE_UQ_WAIT, &w);
		if (ret == -ETIME && w.timeout_ns != abs_timeout_ns) {
			/* a slice without an interrupt ended; a long wait takes longer ones */
			slice = slice * 2 < UQ_SLICE_MAX_NS ? slice * 2 : UQ_SLICE_MAX_NS;
			continue;
		}
		if (ret == -EFAULT) {
			pthread_mutex_lock(&uq->lock);
			consume_all(dev, uq);
			uq_resume(dev, uq);
			pthread_mutex_unlock(&uq->lock);
			continue;
		}
		if (ret == -EINTR)
			continue;
		if (ret == -ENOENT && __atomic_load_n(&r->qid, __ATOMIC_RELAXED) != w.queue_id)
			continue;	/* set up again by another thread meanwhile */
		if (ret == -ETIMEDOUT || ret == -ECANCELED || ret == -EIO) {
			/* the queue was ended: its jobs' records say so from now on */
			pthread_mutex_lock(&uq->lock);
			if (r->qid == w.queue_id)
				ring_kill(dev, uq, r, ret);
			pthread_mutex_unlock(&uq->lock);
			continue;
		}
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- closed BOs ---- */

/* Unmap and close the zombies whose work is done. Under uq->lock. */
static void reap_zombies(spyre_device *dev, struct spy_uq *uq, bool all)
{
	struct uq_zombie **pp = &uq->zombies, *z;
	unsigned int i;

	while ((z = *pp)) {
		bool busy = false;

		for (i = 0; i < uq->nrings && !busy; i++)
			busy = ring_done(uq->ring[i]) < z->seqno[i];
		if (busy && !all) {
			pp = &z->next;
			continue;
		}
		*pp = z->next;
		spy_drm_vm_unmap(dev, z->va, z->size);
		spy_drm_gem_close(dev, z->handle);
		free(z);
	}
}

static int uq_bo_close(spyre_device *dev, uint32_t handle)
{
	struct drm_priv *priv = dev->priv;
	struct spy_uq *uq = priv->uq;
	struct uq_zombie *z;
	struct drm_va_ent e = { 0 };
	unsigned int i;
	bool busy = false;

	pthread_mutex_lock(&priv->lock);
	if (spy_drm_va_of(priv, handle)) {
		e = priv->va[handle];
		priv->va[handle].va = 0;
	}
	pthread_mutex_unlock(&priv->lock);
	pthread_mutex_lock(&uq->lock);
	for (i = 0; i < uq->nrings; i++)
		busy |= ring_done(uq->ring[i]) < uq->ring[i]->seqno;
	z = busy && e.va ? calloc(1, sizeof(*z)) : NULL;
	if (z) {
		z->handle = handle;
		z->va = e.va;
		z->size = e.size;
		for (i = 0; i < uq->nrings; i++)
			z->seqno[i] = uq->ring[i]->seqno;
		z->next = uq->zombies;
		uq->zombies = z;
	}
	reap_zombies(dev, uq, false);
	pthread_mutex_unlock(&uq->lock);
	if (z)
		return 0;
	if (busy && e.va) {
		/* no memory for the record: wait for the work instead */
		for (i = 0; i < UQ_MAX_RINGS && i < uq->nrings; i++)
			ring_wait(dev, uq, uq->ring[i], uq->ring[i]->seqno, INT64_MAX, true);
	}
	if (e.va)
		spy_drm_vm_unmap(dev, e.va, e.size);
	return spy_drm_gem_close(dev, handle);
}

/* ---- queues ---- */

/* Live queues on ring @ring. Under uq->lock. */
static unsigned int users_of(struct spy_uq *uq, int ring)
{
	unsigned int i, n = 0;

	for (i = 0; i < uq->nvq; i++)
		n += uq->vq[i].live && uq->vq[i].ring == ring;
	return n;
}

static int least_used_ring(struct spy_uq *uq)
{
	unsigned int i, n, best_n = ~0u;
	int best = 0;

	for (i = 0; i < uq->nrings; i++) {
		n = users_of(uq, (int)i);
		if (n < best_n) {
			best_n = n;
			best = (int)i;
		}
	}
	return best;
}

static int uq_queue_create(spyre_device *dev, struct drm_spyre_queue_create *qc)
{
	struct spy_uq *uq = uq_of(dev);
	struct uq_ring *r = NULL;
	int ring, ret = 0;

	if (qc->engine > DRM_SPYRE_ENGINE_DMA || qc->flags)
		return -EINVAL;
	pthread_mutex_lock(&uq->lock);
	if (uq->nvq == uq->vq_cap) {
		uint32_t cap = uq->vq_cap ? 2 * uq->vq_cap : 16;
		struct uq_vq *v = realloc(uq->vq, cap * sizeof(*v));

		if (!v) {
			pthread_mutex_unlock(&uq->lock);
			return -ENOMEM;
		}
		uq->vq = v;
		uq->vq_cap = cap;
	}
	/*
	 * A ring of its own while there are idle ones (the one made at open
	 * first) or the card has more, then the least shared one: queues on
	 * one ring run one after the other.
	 */
	ring = least_used_ring(uq);
	if (users_of(uq, ring) && uq->nrings < uq->max_rings) {
		if (!ring_create(dev, uq->nrings, &r)) {
			uq->ring[uq->nrings] = r;
			ring = (int)uq->nrings++;
		} else {
			uq->max_rings = uq->nrings;	/* the card has no more: share */
		}
	}
	memset(&uq->vq[uq->nvq], 0, sizeof(uq->vq[0]));
	uq->vq[uq->nvq].live = true;
	uq->vq[uq->nvq].engine = qc->engine;
	uq->vq[uq->nvq].ring = ring;
	qc->queue_id = ++uq->nvq;
	pthread_mutex_unlock(&uq->lock);
	return ret;
}

static struct uq_vq *vq_get(struct spy_uq *uq, uint32_t id)
{
	return id && id <= uq->nvq && uq->vq[id - 1].live ? &uq->vq[id - 1] : NULL;
}

static int uq_queue_destroy(spyre_device *dev, uint32_t id)
{
	struct spy_uq *uq = uq_of(dev);
	struct uq_vq *q;

	pthread_mutex_lock(&uq->lock);
	q = vq_get(uq, id);
	if (q)
		q->live = false;	/* its ring's work runs on; the slot is not reused */
	pthread_mutex_unlock(&uq->lock);
	return q ? 0 : -ENOENT;
}

static int uq_queue_error(spyre_device *dev, uint32_t id, bool clear, struct spy_queue_error *out)
{
	struct spy_uq *uq = uq_of(dev);
	struct uq_vq *q;

	pthread_mutex_lock(&uq->lock);
	consume_all(dev, uq);
	q = vq_get(uq, id);
	if (q) {
		*out = q->qe;
		if (!out->error)
			out->fault = (struct spy_fault){ .core = -1, .insn = -1 };
		if (clear)
			memset(&q->qe, 0, sizeof(q->qe));
	}
	pthread_mutex_unlock(&uq->lock);
	return q ? 0 : -ENOENT;
}

/* ---- timelines ---- */

static int uq_syncobj_create(spyre_device *dev, uint32_t *handle)
{
	struct spy_uq *uq = uq_of(dev);
	int ret = 0;

	pthread_mutex_lock(&uq->lock);
	if (uq->ntl == uq->tl_cap) {
		uint32_t cap = uq->tl_cap ? 2 * uq->tl_cap : 16;
		struct uq_tl *t = realloc(uq->tl, cap * sizeof(*t));

		if (!t) {
			ret = -ENOMEM;
			goto out;
		}
		uq->tl = t;
		uq->tl_cap = cap;
	}
	memset(&uq->tl[uq->ntl], 0, sizeof(uq->tl[0]));
	uq->tl[uq->ntl].live = true;
	*handle = ++uq->ntl;
out:
	pthread_mutex_unlock(&uq->lock);
	return ret;
}

static struct uq_tl *tl_get(struct spy_uq *uq, uint32_t h)
{
	return h && h <= uq->ntl && uq->tl[h - 1].live ? &uq->tl[h - 1] : NULL;
}

static int uq_syncobj_destroy(spyre_device *dev, uint32_t handle)
{
	struct spy_uq *uq = uq_of(dev);
	struct uq_tl *t;

	pthread_mutex_lock(&uq->lock);
	t = tl_get(uq, handle);
	if (t) {
		t->live = false;
		free(t->ent);
		t->ent = NULL;
		t->n = t->cap = 0;
	}
	pthread_mutex_unlock(&uq->lock);
	return t ? 0 : -ENOENT;
}

static struct uq_ent *tl_at(struct uq_tl *t, size_t i)
{
	return &t->ent[(t->first + i) & (t->cap - 1)];
}

static int tl_push(struct uq_tl *t, uint64_t point, int ring, uint64_t seqno)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16, i;
		struct uq_ent *e = malloc(cap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		for (i = 0; i < t->n; i++)
			e[i] = *tl_at(t, i);
		free(t->ent);
		t->ent = e;
		t->first = 0;
		t->cap = cap;
	}
	*tl_at(t, t->n++) = (struct uq_ent){ point, seqno, ring };
	if (point > t->last)
		t->last = point;
	return 0;
}

/* Drop the completed entries at the front; t->done follows them. */
static void tl_prune(struct spy_uq *uq, struct uq_tl *t)
{
	while (t->n) {
		struct uq_ent *e = tl_at(t, 0);

		if (e->ring >= 0 && ring_done(uq->ring[e->ring]) < e->seqno)
			break;
		if (e->point > t->done)
			t->done = e->point;
		t->first = (t->first + 1) & (t->cap - 1);
		t->n--;
	}
}

/*
 * The ring of the first unfinished job @point of @t needs (t was pruned:
 * its front entry is unfinished), and in @seqno the last job on that ring
 * the point needs: a ring retires in order, so one wait covers all of them.
 * Waiting for the front entry instead takes a sleep in the driver per job
 * when the jobs are slower than the poll (64 queued fills: up to 64 ioctls).
 */
static struct uq_ring *tl_last_job(struct spy_uq *uq, struct uq_tl *t, uint64_t point,
				   uint64_t *seqno)
{
	int ring = tl_at(t, 0)->ring;
	size_t i;

	*seqno = tl_at(t, 0)->seqno;
	for (i = 1; i < t->n && tl_at(t, i)->point <= point; i++)
		if (tl_at(t, i)->ring == ring && tl_at(t, i)->seqno > *seqno)
			*seqno = tl_at(t, i)->seqno;
	return uq->ring[ring];
}

static int uq_syncobj_query(spyre_device *dev, uint32_t handle, uint64_t *point)
{
	struct spy_uq *uq = uq_of(dev);
	struct uq_tl *t;

	pthread_mutex_lock(&uq->lock);
	t = tl_get(uq, handle);
	if (t) {
		tl_prune(uq, t);
		*point = t->done;
	}
	pthread_mutex_unlock(&uq->lock);
	return t ? 0 : -ENOENT;
}

static int uq_syncobj_signal(spyre_device *dev, uint32_t handle, uint64_t point)
{
	struct spy_uq *uq = uq_of(dev);
	struct uq_tl *t;
	int ret = -ENOENT;

	pthread_mutex_lock(&uq->lock);
	t = tl_get(uq, handle);
	if (t)
		ret = tl_push(t, point, -1, 0);
	pthread_mutex_unlock(&uq->lock);
	return ret;
}

static int uq_syncobj_wait(spyre_device *dev, const uint32_t *handles, const uint64_t *points,
			   unsigned int count, int64_t abs_timeout_ns)
{
	struct spy_uq *uq = uq_of(dev);

	for (;;) {
		struct uq_ring *r = NULL;
		uint64_t seqno = 0;
		unsigned int i;
		int ret = 0;

		pthread_mutex_lock(&uq->lock);
		for (i = 0; i < count && !r && !ret; i++) {
			struct uq_tl *t = tl_get(uq, handles[i]);

			if (!t) {
				ret = -ENOENT;
				break;
			}
			tl_prune(uq, t);
			if (points[i] <= t->done)
				continue;
			if (points[i] > t->last || !t->n) {
				ret = -EINVAL;	/* as the kernel: the point has no fence yet */
				break;
			}
			r = tl_last_job(uq, t, points[i], &seqno);
		}
		if (!r && !ret && uq->zombies)
			reap_zombies(dev, uq, false);
		pthread_mutex_unlock(&uq->lock);
		if (ret || !r)
			return ret;
		ret = ring_wait(dev, uq, r, seqno, abs_timeout_ns, false);
		if (ret)
			return ret;
	}
}

static int uq_fence_error(spyre_device *dev, uint32_t handle, uint64_t point)
{
	struct spy_uq *uq = uq_of(dev);
	struct uq_tl *t;
	unsigned int i, n;
	int err = 0;

	pthread_mutex_lock(&uq->lock);
	consume_all(dev, uq);
	t = tl_get(uq, handle);
	n = t ? (t->nerr < UQ_TL_ERRS ? t->nerr : UQ_TL_ERRS) : 0;
	for (i = 0; i < n && !err; i++)
		if (t->err[i].point == point)
			err = t->err[i].err;
	pthread_mutex_unlock(&uq->lock);
	return t ? err : -ENOENT;
}

/* ---- submission ---- */

/* Descriptors command @c takes on a ring (0 for an empty copy or fill). */
static unsigned int cmd_descs(const struct drm_spyre_cmd *c)
{
	switch (c->type) {
	case DRM_SPYRE_CMD_COPY:
		return c->copy.size ? 1 : 0;
	case DRM_SPYRE_CMD_FILL:
		return c->fill.size ? 1 : 0;
	case DRM_SPYRE_CMD_LAUNCH:
		return 1 + SPYRE_DESC_ARGS(c->launch.nargs);
	default:
		return 1;
	}
}

/* The card VA of @handle + @offset; 0 when @handle is not bound. */
static uint64_t va_of(struct drm_priv *priv, uint32_t handle, uint64_t offset, bool *host)
{
	const struct drm_va_ent *e = spy_drm_va_of(priv, handle);

	if (!e || offset > e->size)
		return 0;
	if (host)
		*host = e->host;
	return e->va + offset;
}

/* write_cmd(): a COPY names a BO outside the address space (uq_submit_kernel). */
#define UQ_PEER 1

/*
 * Write command @c at @r's tail (room checked). Under uq->lock and
 * priv->lock. UQ_PEER: a COPY names a BO that has no VA (needs_kernel).
 */
static int write_cmd(struct drm_priv *priv, struct spy_uq *uq, struct uq_ring *r,
		     const struct drm_spyre_cmd *c)
{
	union spyre_hw_desc *d = &r->desc[r->tail % UQ_ENTRIES];
	bool src_host = false, dst_host = false;
	uint64_t a, b, ws = 0;
	unsigned int i;

	switch (c->type) {
	case DRM_SPYRE_CMD_NOP:
		spyre_desc_nop(d);
		break;
	case DRM_SPYRE_CMD_COPY:
		if (!c->copy.size)
			return 0;
		a = va_of(priv, c->copy.dst_handle, c->copy.dst_offset, &dst_host);
		b = va_of(priv, c->copy.src_handle, c->copy.src_offset, &src_host);
		if (!a || !b)
			return !spy_drm_va_of(priv, c->copy.dst_handle) ||
			       !spy_drm_va_of(priv, c->copy.src_handle) ? UQ_PEER : -ENOENT;
		if (src_host && dst_host)
			return -EINVAL;
		if (src_host)
			spyre_desc_dma_host(d, SPYRE_DMA_H2D, c->copy.size, a, b, 0, 0);
		else if (dst_host)
			spyre_desc_dma_host(d, SPYRE_DMA_D2H, c->copy.size, b, a, 0, 0);
		else
			spyre_desc_dma_d2d(d, c->copy.size, a, b);
		break;
	case DRM_SPYRE_CMD_FILL:
		if (!c->fill.size)
			return 0;
		a = va_of(priv, c->fill.handle, c->fill.offset, NULL);
		if (!a)
			return -ENOENT;
		spyre_desc_dma_fill(d, c->fill.size, a, c->fill.pattern);
		break;
	case DRM_SPYRE_CMD_TIMESTAMP:
		a = va_of(priv, c->timestamp.handle, c->timestamp.offset, NULL);
		if (!a)
			return -ENOENT;
		/* In a context the page says where; F_DEVMEM changes nothing. */
		spyre_desc_timestamp_dev(d, a);
		break;
	case DRM_SPYRE_CMD_LAUNCH: {
		const struct drm_spyre_bo_range *ar =
			(const struct drm_spyre_bo_range *)(uintptr_t)c->launch.args;

		if (c->launch.nargs > uq->max_args)
			return -E2BIG;
		a = va_of(priv, c->launch.prog_handle, c->launch.prog_offset, NULL);
		if (c->launch.ws_handle)
			ws = va_of(priv, c->launch.ws_handle, c->launch.ws_offset, NULL);
		if (!a || (c->launch.ws_handle && !ws))
			return -ENOENT;
		spyre_desc_launch(d, c->launch.nargs, a, c->launch.prog_size, ws,
				  ws ? c->launch.ws_size : 0);
		for (i = 0; i < c->launch.nargs; i++) {
			const struct drm_spyre_bo_range *g =
				(const void *)((const char *)ar + (size_t)i * c->launch.args_stride);

			b = va_of(priv, g->handle, g->offset, NULL);
			if (!b)
				return -ENOENT;
			if (i % SPYRE_ARGS_PER_DESC == 0)
				d = &r->desc[(r->tail + 1 + i / SPYRE_ARGS_PER_DESC) % UQ_ENTRIES];
			spyre_desc_arg(d, c->launch.nargs, i, b, g->size);
		}
		break;
	}
	default:
		return -EINVAL;
	}
	r->tail += cmd_descs(c);
	return 0;
}

static void desc_wait_mem(union spyre_hw_desc *d, uint64_t addr, uint64_t value)
{
	memset(d, 0, sizeof(*d));
	d->wait_mem.opcode = SPYRE_OP_WAIT_MEM;
	d->wait_mem.addr = htole64(addr);
	d->wait_mem.value = htole64(value);
}

/*
 * A COPY naming a BO that is not in the address space: a peer BO (another
 * card's memory, PRIME-imported), which VM_BIND refuses, so no ring entry
 * can reach it. Under priv->lock. (write_cmd() finds the same while it
 * writes; this is for a job that writes nothing.)
 */
static bool needs_kernel_locked(struct drm_priv *priv, const struct drm_spyre_submit *sub)
{
	const struct drm_spyre_cmd *cmds = (const void *)(uintptr_t)sub->cmds;
	bool ret = false;
	unsigned int i;

	for (i = 0; i < sub->cmd_count && !ret; i++)
		ret = cmds[i].type == DRM_SPYRE_CMD_COPY && cmds[i].copy.size &&
		      (!spy_drm_va_of(priv, cmds[i].copy.src_handle) ||
		       !spy_drm_va_of(priv, cmds[i].copy.dst_handle));
	return ret;
}

/*
 * Such a job goes through the kernel's SUBMIT on a queue of its own, in
 * order with the stream by waiting on the host: first for its inputs and
 * the stream's earlier work, then for the job itself, whose point is then
 * signalled from the host (with its error, if any). Peer copies wait for
 * their end anyway (peer.c), so nothing is lost by waiting here.
 */
static int uq_submit_kernel(spyre_device *dev, const struct drm_spyre_submit *sub)
{
	const struct drm_spyre_sync *in = (const void *)(uintptr_t)sub->in_syncs;
	const struct drm_spyre_sync *out = (const void *)(uintptr_t)sub->out_syncs;
	struct spy_uq *uq = uq_of(dev);
	struct drm_spyre_submit ks = *sub;
	struct drm_spyre_sync ko;
	uint32_t kh;
	uint64_t kp;
	struct uq_ring *r = NULL;
	struct uq_vq *q;
	uint64_t seqno = 0;
	unsigned int i;
	int ret = 0, err;

	pthread_mutex_lock(&uq->lock);
	q = vq_get(uq, sub->queue_id);
	if (q && !q->banned) {
		r = uq->ring[q->ring];
		seqno = r->seqno;
	}
	pthread_mutex_unlock(&uq->lock);
	if (!r)
		return q ? -ECANCELED : -ENOENT;
	for (i = 0; i < sub->in_sync_count && !ret; i++) {
		uint32_t h = in[i].handle;
		uint64_t pt = in[i].point;

		ret = uq_syncobj_wait(dev, &h, &pt, 1, INT64_MAX);
	}
	if (!ret)
		ret = ring_wait(dev, uq, r, seqno, INT64_MAX, false);
	if (ret)
		return ret;

	pthread_mutex_lock(&uq->klock);
	if (!uq->kqueue) {
		struct drm_spyre_queue_create qc = { .engine = DRM_SPYRE_ENGINE_DMA };

		ret = spy_drm_ops.syncobj_create(dev, &uq->ktl);
		if (!ret)
			ret = spy_drm_ops.queue_create(dev, &qc);
		if (!ret)
			__atomic_store_n(&uq->kqueue, qc.queue_id, __ATOMIC_RELEASE);
	}
	kh = uq->ktl;
	kp = uq->kpoint + 1;
	ko = (struct drm_spyre_sync){ .handle = kh, .point = kp };
	ks.queue_id = uq->kqueue;
	ks.in_sync_count = 0;
	ks.in_syncs = 0;
	ks.out_sync_count = 1;
	ks.out_syncs = (uintptr_t)&ko;
	ks.sync_stride = sizeof(ko);
	if (!ret)
		ret = spy_drm_ops.submit(dev, &ks);
	if (!ret) {
		uq->kpoint++;
		ret = spy_drm_ops.syncobj_wait(dev, &kh, &kp, 1, INT64_MAX);
	}
	err = ret ? 0 : spy_drm_ops.fence_error(dev, kh, kp);
	pthread_mutex_unlock(&uq->klock);
	if (ret)
		return ret;

	pthread_mutex_lock(&uq->lock);
	q = vq_get(uq, sub->queue_id);
	if (q) {
		q->jobs++;
		if (err && !q->qe.error) {
			q->qe.error = err;
			q->qe.job = q->jobs;
			q->qe.point = sub->out_sync_count ? out->point : 0;
			q->qe.fault = (struct spy_fault){ .core = -1, .insn = -1 };
		}
		if (err)
			q->qe.failed++;
	}
	if (sub->out_sync_count) {
		struct uq_tl *t = tl_get(uq, out->handle);

		ret = t ? tl_push(t, out->point, -1, 0) : -ENOENT;
		if (t && err) {
			t->err[t->nerr % UQ_TL_ERRS].point = out->point;
			t->err[t->nerr % UQ_TL_ERRS].err = err;
			t->nerr++;
		}
	}
	pthread_mutex_unlock(&uq->lock);
	return ret;
}

static int uq_submit(spyre_device *dev, const struct drm_spyre_submit *sub)
{
	struct drm_priv *priv = dev->priv;
	struct spy_uq *uq = priv->uq;
	const struct drm_spyre_sync *in = (const void *)(uintptr_t)sub->in_syncs;
	const struct drm_spyre_sync *out = (const void *)(uintptr_t)sub->out_syncs;
	const struct drm_spyre_cmd *cmds = (const void *)(uintptr_t)sub->cmds;
	uint64_t need_seq[UQ_MAX_RINGS] = { 0 };
	struct uq_dep deps[UQ_META_DEPS];
	unsigned int ndeps = 0;
	int dep_err = 0;
	struct uq_tl *otl = NULL;
	struct uq_ring *r;
	struct uq_vq *q;
	struct uq_meta *m;
	uint32_t tail0, ndesc = 1;
	unsigned int i, j;
	int ri, ret = 0;

	if (sub->flags || (sub->cmd_count && sub->cmd_stride != sizeof(*cmds)) ||
	    ((sub->in_sync_count || sub->out_sync_count) &&
	     sub->sync_stride != sizeof(struct drm_spyre_sync)) || sub->out_sync_count > 1)
		return -EINVAL;
	for (i = 0; i < sub->cmd_count; i++)
		ndesc += cmd_descs(&cmds[i]);
	pthread_mutex_lock(&uq->lock);
	q = vq_get(uq, sub->queue_id);
	if (!q) {
		ret = -ENOENT;
		goto out;
	}
	consume_all(dev, uq);	/* a hang found by a waiter bans the queue */
	if (q->banned) {
		ret = -ECANCELED;
		goto out;
	}
	ri = q->ring;
	r = uq->ring[ri];
	if (r->dead) {
		ret = ring_restart(dev, uq, r);
		if (ret)
			goto out;
	}
	if (sub->out_sync_count) {
		otl = tl_get(uq, out->handle);
		if (!otl || out->point <= otl->last) {
			ret = otl ? -EINVAL : -ENOENT;
			goto out;
		}
	}
	/* In-syncs: the last unfinished entry up to the point, per other ring. */
	for (i = 0; i < sub->in_sync_count; i++) {
		struct uq_tl *t = tl_get(uq, in[i].handle);

		if (!t) {
			ret = -ENOENT;
			goto out;
		}
		tl_prune(uq, t);
		if (in[i].point <= t->done) {
			/* finished: a failure of it is known once its record was read */
			consume_all(dev, uq);
			if (!dep_err)
				dep_err = tl_error(uq, in[i].handle, in[i].point);
			continue;
		}
		if (in[i].point > t->last) {
			ret = -EINVAL;
			goto out;
		}
		for (j = 0; j < t->n && tl_at(t, j)->point <= in[i].point; j++) {
			const struct uq_ent *e = tl_at(t, j);

			if (e->ring >= 0 && e->ring != ri && e->seqno > need_seq[e->ring])
				need_seq[e->ring] = e->seqno;
			if (e->point == in[i].point && e->ring >= 0 && ndeps < UQ_META_DEPS)
				deps[ndeps++] = (struct uq_dep){ in[i].handle, e->ring, e->point,
								 e->seqno };
		}
	}
	for (i = 0; i < uq->nrings; i++)
		if (need_seq[i] && ring_done(uq->ring[i]) < need_seq[i])
			ndesc++;
		else
			need_seq[i] = 0;
	if (ndesc + 1 > UQ_ENTRIES) {
		ret = -E2BIG;
		goto out;
	}
	/*
	 * Room on the ring and a free completion record (the records were read
	 * above), and one more of each for an interrupt job (ring_arm_irq).
	 */
	while (r->tail + ndesc + 1 - r->head > UQ_ENTRIES ||
	       r->seqno + 2 - r->consumed > UQ_NREC) {
		pthread_mutex_unlock(&uq->lock);
		/* a full ring: waking once it drained costs the card no time */
		ret = ring_wait(dev, uq, r, r->consumed + 1, INT64_MAX, true);
		pthread_mutex_lock(&uq->lock);
		if (ret)
			goto out;
		consume_all(dev, uq);
	}
	tail0 = r->tail;
	for (i = 0; i < uq->nrings; i++)
		if (need_seq[i])
			desc_wait_mem(&r->desc[r->tail++ % UQ_ENTRIES], uq->ring[i]->va + UQ_WB_OFF,
				      need_seq[i]);
	pthread_mutex_lock(&priv->lock);	/* the handle table */
	/* An input that failed already: the job does not run, its FENCE says so. */
	for (i = 0; i < sub->cmd_count && !ret && !dep_err; i++)
		ret = write_cmd(priv, uq, r, &cmds[i]);
	if (dep_err && needs_kernel_locked(priv, sub))
		ret = UQ_PEER;
	pthread_mutex_unlock(&priv->lock);
	if (ret == UQ_PEER) {
		/* a peer copy: nothing was published, the kernel runs the job */
		r->tail = tail0;
		pthread_mutex_unlock(&uq->lock);
		return uq_submit_kernel(dev, sub);
	}
	if (ret) {
		r->tail = tail0;	/* nothing was published */
		goto out;
	}
	if (otl) {
		ret = tl_push(otl, out->point, ri, r->seqno + 1);
		if (ret) {
			r->tail = tail0;
			goto out;
		}
	}
	r->seqno++;
	m = &r->meta[r->seqno % UQ_NREC];
	m->tl = otl ? out->handle : 0;
	m->point = otl ? out->point : 0;
	m->vq = sub->queue_id;
	m->job = ++q->jobs;
	m->err = dep_err;
	m->ndeps = ndeps;
	memcpy(m->dep, deps, ndeps * sizeof(deps[0]));
	{
		union spyre_hw_desc *f = &r->desc[r->tail++ % UQ_ENTRIES];

		spyre_desc_fence(f, 0);	/* a sleeper asks for the interrupt */
		spyre_desc_fence_seal(f, r->seqno,
				      r->va + UQ_REC_OFF + (r->seqno % UQ_NREC) *
				      sizeof(struct spyre_hw_completion));
	}
	m->end = r->tail;
	/* The descriptors are in memory before the card can see the tail. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	*r->doorbell = r->tail;
out:
	pthread_mutex_unlock(&uq->lock);
	return ret;
}

/*
 * Card faults for tests (root, the driver's debugfs), armed where the
 * process's work of @engine runs, as the kernel path arms every ring of
 * the engine (spy_drm_inject_fault):
 * - a DMA fault on every ring that carries a live DMA queue, and on the
 *   kernel's DMA rings once jobs no ring can run (peer copies) went there:
 *   a stream's copies may ride any of them (a compute stream's copies go
 *   through a DMA queue of its own), so arming one ring, the newest
 *   stream's, misses the copy a caller expects to fail;
 * - a compute fault (a hang) on the ring of the newest live compute queue
 *   only (the stream a test created last): a hang stops its whole ring,
 *   DMA queues sharing it included, so it is aimed;
 * - kind 0 disarms every ring of the file and the kernel's of @engine.
 * Kind 100 removes the card.
 */
static int uq_inject_fault(spyre_device *dev, enum spyre_engine engine, unsigned int kind)
{
	uint32_t want = engine == SPYRE_ENGINE_COMPUTE ? DRM_SPYRE_ENGINE_COMPUTE :
							 DRM_SPYRE_ENGINE_DMA;
	struct spy_uq *uq = uq_of(dev);
	bool on[UQ_MAX_RINGS] = { false };
	uint64_t irq_seq[UQ_MAX_RINGS] = { 0 };
	bool kernel = false;
	unsigned int i, n = 0;
	int ret = 0;

	if (kind == 100)
		return spy_drm_inject_fault(dev, engine, kind);
	pthread_mutex_lock(&uq->lock);
	if (!kind) {
		for (i = 0; i < uq->nrings; i++)
			on[i] = true;
		kernel = true;
	} else if (want == DRM_SPYRE_ENGINE_DMA) {
		for (i = 0; i < uq->nvq; i++)
			if (uq->vq[i].live && uq->vq[i].engine == want)
				on[uq->vq[i].ring] = true;
		/* set once under klock, which a kernel job's wait holds */
		kernel = __atomic_load_n(&uq->kqueue, __ATOMIC_ACQUIRE) != 0;
	} else {
		for (i = uq->nvq; i > 0; i--)
			if (uq->vq[i - 1].live && uq->vq[i - 1].engine == want) {
				on[uq->vq[i - 1].ring] = true;
				break;
			}
	}
	for (i = 0; i < uq->nrings; i++) {
		n += on[i];
		irq_seq[i] = uq->ring[i]->irq_seqno;
	}
	pthread_mutex_unlock(&uq->lock);
	if (!n && !kernel)
		return -ENOENT;
	/*
	 * The fault hits a ring's next command: let an interrupt job written
	 * for an earlier wait run first, so that the fault meets the caller's
	 * next work, as on a ring without interrupt jobs.
	 */
	for (i = 0; i < UQ_MAX_RINGS && kind; i++)
		if (on[i] && ring_done(uq->ring[i]) < irq_seq[i])
			ring_wait(dev, uq, uq->ring[i], irq_seq[i], INT64_MAX, true);
	/* rings are never freed while the file is open: their index stays valid */
	for (i = 0; i < UQ_MAX_RINGS && !ret; i++)
		if (on[i])
			ret = spy_drm_debugfs_fault(dev, kind | uq->ring[i]->hw << 8);
	if (!ret && kernel)
		ret = spy_drm_inject_fault(dev, engine, kind);
	return ret;
}

/* ---- open and close ---- */

/*
 * User-mode queues are the default from the driver that answers each
 * queue's waiter from its own ring's fault record (driver 1.8, card
 * interface 1.15: before, a fault of another process at about the same
 * time could be reported as this one's) on a card whose MMU caches its
 * walks (1.16: before, copies of host memory, mapped in 4 KiB pages, took
 * several times their SUBMIT device time).
 */
#define UQ_DEFAULT_DRIVER_MINOR	8
#define UQ_DEFAULT_HW_MINOR	16

/*
 * "user", "kernel" (also spelled "submit") or NULL (unset or "auto": user
 * queues when the driver and card are recent enough, else the kernel's)
 * from SPYRE_DRM_QUEUES.
 */
static int queues_wanted(const char **want)
{
	const char *e = getenv("SPYRE_DRM_QUEUES");

	*want = NULL;
	if (!e || !*e || !strcmp(e, "auto"))
		return 0;
	if (!strcmp(e, "submit")) {
		*want = "kernel";
		return 0;
	}
	if (strcmp(e, "user") && strcmp(e, "kernel"))
		return spy_err(-EINVAL, "spyre_device_open: SPYRE_DRM_QUEUES=%s: expected user, "
			       "submit (or kernel) or auto", e);
	*want = e;
	return 0;
}

int spy_uq_open(spyre_device *dev, unsigned int driver_minor)
{
	struct drm_priv *priv = dev->priv;
	const char *want;
	uint64_t slots = 0, max_args = 0, hw = 0;
	struct spy_uq *uq;
	const char *why = NULL;
	int ret = queues_wanted(&want);

	if (ret)
		return ret;
	if (want && !strcmp(want, "kernel"))
		return 0;
	if (driver_minor < 6)
		why = "the driver does not watch user-mode queues for hangs (needs spyre "
		      "driver 1.6)";
	else if (spy_drm_get_param(dev, DRM_SPYRE_PARAM_USER_QUEUES, &slots) || !slots)
		why = "the card offers no user-mode queue";
	else if (spy_drm_get_param(dev, DRM_SPYRE_PARAM_MAX_ARGS, &max_args))
		why = "cannot read the argument limit";
	else if (!want && (driver_minor < UQ_DEFAULT_DRIVER_MINOR ||
			   spy_drm_get_param(dev, DRM_SPYRE_PARAM_HW_VERSION, &hw) ||
			   hw < SPYRE_HW_VERSION(1, UQ_DEFAULT_HW_MINOR)))
		why = "not by default before driver 1.8 on card interface 1.16";
	if (why) {
		if (want)
			return spy_err(-EOPNOTSUPP, "spyre_device_open: SPYRE_DRM_QUEUES=user: %s",
				       why);
		return 0;
	}
	uq = calloc(1, sizeof(*uq));
	if (!uq)
		return spy_err(-ENOMEM, "spyre_device_open: out of memory");
	pthread_mutex_init(&uq->lock, NULL);
	pthread_mutex_init(&uq->klock, NULL);
	uq->max_rings = slots < UQ_MAX_RINGS ? (unsigned int)slots : UQ_MAX_RINGS;
	uq->max_args = max_args;
	/* The first ring decides: none to be had means the kernel's queues. */
	ret = spy_drm_bo_create(dev, SPY_PAGE, 1, &uq->resume_handle);
	if (!ret)
		ret = ring_create(dev, 0, &uq->ring[0]);
	if (ret) {
		if (uq->resume_handle)
			spy_drm_gem_close(dev, uq->resume_handle);
		pthread_mutex_destroy(&uq->klock);
		pthread_mutex_destroy(&uq->lock);
		free(uq);
		if (want)
			return spy_err(ret, "spyre_device_open: SPYRE_DRM_QUEUES=user: cannot "
				       "create a user-mode queue");
		return 0;
	}
	uq->nrings = 1;
	priv->uq = uq;
	dev->ops = &spy_drm_uq_ops;
	return 0;
}

void spy_uq_close(spyre_device *dev)
{
	struct drm_priv *priv = dev->priv;
	struct spy_uq *uq = priv ? priv->uq : NULL;
	unsigned int i;

	if (!uq)
		return;
	reap_zombies(dev, uq, true);
	for (i = 0; i < uq->nrings; i++)
		ring_free(dev, uq->ring[i]);
	for (i = 0; i < uq->ntl; i++)
		free(uq->tl[i].ent);
	free(uq->tl);
	free(uq->vq);
	pthread_mutex_destroy(&uq->klock);
	pthread_mutex_destroy(&uq->lock);
	free(uq);
	priv->uq = NULL;
}

const struct spy_backend_ops spy_drm_uq_ops = {
	.name = "drm",
	.close = spy_drm_close,
	.get_param = spy_drm_get_param,
	.bo_create = spy_drm_bo_create,
	.bo_userptr = spy_drm_bo_userptr,
	.bo_info = spy_drm_bo_info,
	.bo_map = spy_drm_bo_map,
	.bo_unmap = spy_drm_bo_unmap,
	.bo_bind = spy_drm_bo_bind,
	.bo_close = uq_bo_close,
	.queue_create = uq_queue_create,
	.queue_destroy = uq_queue_destroy,
	.submit = uq_submit,
	.syncobj_create = uq_syncobj_create,
	.syncobj_destroy = uq_syncobj_destroy,
	.syncobj_wait = uq_syncobj_wait,
	.syncobj_query = uq_syncobj_query,
	.syncobj_signal = uq_syncobj_signal,
	.fence_error = uq_fence_error,
	.queue_error = uq_queue_error,
	.inject_fault = uq_inject_fault,
	.bo_peer_import = spy_drm_bo_peer_import,
	.bo_export = spy_drm_bo_export,
	.bo_import = spy_drm_bo_import,
};
