// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Host unit tests of the Spyre card model: framework, test card, builders.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "harness.h"

#define MAX_TESTS 256

static struct {
	const char *name;
	test_fn fn;
} tests[MAX_TESTS];
static int ntests;
int test_cur_failed;
static const char *cur_name;

void test_register(const char *name, test_fn fn)
{
	if (ntests < MAX_TESTS) {
		tests[ntests].name = name;
		tests[ntests].fn = fn;
		ntests++;
	}
}

void test_fail(const char *file, int line, const char *expr)
{
	if (test_cur_failed < 5)
		printf("  FAIL %s: %s:%d: %s\n", cur_name, file, line, expr);
	test_cur_failed++;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int main(int argc, char **argv)
{
	int i, passed = 0, failed = 0;

	qsort(tests, ntests, sizeof(tests[0]), by_name);
	for (i = 0; i < ntests; i++) {
		if (argc > 1 && !strstr(tests[i].name, argv[1]))
			continue;
		cur_name = tests[i].name;
		test_cur_failed = 0;
		tests[i].fn();
		if (test_cur_failed) {
			printf("not ok %s (%d checks failed)\n", tests[i].name, test_cur_failed);
			failed++;
		} else {
			printf("ok %s\n", tests[i].name);
			passed++;
		}
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

/* --- test card callbacks ---------------------------------------------------- */
static int host_rw(struct tcard *t, uint64_t addr, void *buf, uint64_t len, bool wr)
{
	uint64_t psize = t->peer ? t->peer->cfg.mem_size : 0;

	if (psize && addr >= PEER_BASE && len <= psize && addr - PEER_BASE <= psize - len) {
		if (wr)
			memcpy(t->peer->dev + (addr - PEER_BASE), buf, len);
		else
			memcpy(buf, t->peer->dev + (addr - PEER_BASE), len);
		return 0;
	}
	if (addr < HOST_BASE || len > HOST_SIZE || addr - HOST_BASE > HOST_SIZE - len)
		return -1;
	if (wr)
		memcpy(t->host + (addr - HOST_BASE), buf, len);
	else
		memcpy(buf, t->host + (addr - HOST_BASE), len);
	return 0;
}

static int cb_read(void *o, uint64_t addr, void *buf, uint64_t len)
{
	((struct tcard *)o)->host_reads++;
	return host_rw(o, addr, buf, len, false);
}

static int cb_write(void *o, uint64_t addr, const void *buf, uint64_t len)
{
	((struct tcard *)o)->host_writes++;
	return host_rw(o, addr, (void *)buf, len, true);
}

static void cb_irq(void *o, unsigned int v)
{
	struct tcard *t = o;

	if (v <= SPYRE_MODEL_MAX_RINGS)
		t->irqs[v]++;
}

static uint64_t cb_now(void *o)
{
	return ((struct tcard *)o)->now;
}

static void cb_event(void *o, enum spyre_model_event ev, unsigned int ring, uint64_t a,
		     uint64_t b)
{
	struct tcard *t = o;

	if (ev < TC_EVENTS) {
		t->events[ev]++;
		t->last_event[ev].ring = ring;
		t->last_event[ev].a = a;
		t->last_event[ev].b = b;
	}
}

static const struct spyre_model_ops ops = {
	.host_read = cb_read,
	.host_write = cb_write,
	.raise_irq = cb_irq,
	.now_ns = cb_now,
	.event = cb_event,
};

struct tcard *tc_new(void (*tweak)(struct spyre_model_config *cfg))
{
	struct tcard *t = calloc(1, sizeof(*t));
	const char *err = NULL;

	spyre_model_config_defaults(&t->cfg);
	t->cfg.mem_size = 64ull << 20;
	t->cfg.mem_aperture = t->cfg.mem_size;
	if (tweak)
		tweak(&t->cfg);
	t->host = calloc(1, HOST_SIZE);
	t->dev = mmap(NULL, t->cfg.mem_size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	t->m = spyre_model_new(&t->cfg, &ops, t, t->dev, &err);
	if (!t->m) {
		printf("spyre_model_new: %s\n", err);
		abort();
	}
	return t;
}

void tc_free(struct tcard *t)
{
	spyre_model_free(t->m);
	munmap(t->dev, t->cfg.mem_size);
	free(t->host);
	free(t);
}

uint32_t tc_rd(struct tcard *t, uint32_t off)
{
	return spyre_model_read(t->m, off);
}

void tc_wr(struct tcard *t, uint32_t off, uint32_t val)
{
	spyre_model_write(t->m, off, val);
}

uint64_t tc_run(struct tcard *t)
{
	return spyre_model_process(t->m);
}

void *hptr(struct tcard *t, uint64_t off)
{
	return t->host + off;
}

/* --- rings ------------------------------------------------------------------ */
void ring_setup(struct tcard *t, unsigned int n, unsigned int log2)
{
	uint64_t base = HOST_BASE + H_RING(n), wb = HOST_BASE + H_WB(n);

	tc_wr(t, SPYRE_RING_REG(n, SPYRE_RING_BASE_LO), (uint32_t)base);
	tc_wr(t, SPYRE_RING_REG(n, SPYRE_RING_BASE_HI), (uint32_t)(base >> 32));
	tc_wr(t, SPYRE_RING_REG(n, SPYRE_RING_SIZE_LOG2), log2);
	tc_wr(t, SPYRE_RING_REG(n, SPYRE_RING_WB_LO), (uint32_t)wb);
	tc_wr(t, SPYRE_RING_REG(n, SPYRE_RING_WB_HI), (uint32_t)(wb >> 32));
	tc_wr(t, SPYRE_RING_REG(n, SPYRE_RING_CTRL), SPYRE_RING_CTRL_ENABLE);
	t->tail[n] = 0;
	t->log2[n] = log2;
}

void ring_push(struct tcard *t, unsigned int n, const void *desc)
{
	uint32_t slot = t->tail[n] & ((1u << t->log2[n]) - 1);

	memcpy(hptr(t, H_RING(n) + (uint64_t)slot * SPYRE_DESC_SIZE), desc, SPYRE_DESC_SIZE);
	t->tail[n]++;
}

void ring_doorbell(struct tcard *t, unsigned int n)
{
	tc_wr(t, SPYRE_RING_REG(n, SPYRE_RING_TAIL), t->tail[n]);
}

uint32_t ring_status(struct tcard *t, unsigned int n)
{
	return tc_rd(t, SPYRE_RING_REG(n, SPYRE_RING_STATUS));
}

uint64_t wb_seqno(struct tcard *t, unsigned int n)
{
	struct spyre_hw_ring_wb *wb = hptr(t, H_WB(n));

	return wb->completed_seqno;
}

uint32_t wb_head(struct tcard *t, unsigned int n)
{
	struct spyre_hw_ring_wb *wb = hptr(t, H_WB(n));

	return wb->head;
}

struct spyre_hw_completion *rec(struct tcard *t, unsigned int i)
{
	return hptr(t, H_REC(i));
}

/* --- descriptors -------------------------------------------------------------- */
void d_dma(void *d, unsigned int dir, uint64_t len, uint64_t dev, uint64_t src,
	   uint64_t sg, uint32_t sg_count, uint64_t host_off, uint32_t fill)
{
	union spyre_hw_desc *x = d;

	/* Any combination, so the tests can also build the ones the card refuses. */
	spyre_desc_dma_host(x, dir, len, dev, sg, sg_count, host_off);
	x->dma.dev_src = spyre_cpu_to_le64(src);
	x->dma.fill = spyre_cpu_to_le32(fill);
}

void d_fence(void *d, uint64_t seqno, unsigned int rec_index, bool irq)
{
	spyre_desc_fence(d, irq ? SPYRE_DESC_F_IRQ : 0);
	spyre_desc_fence_seal(d, seqno, HOST_BASE + H_REC(rec_index));
}

void d_sem(void *d, bool signal, uint16_t sem, uint64_t value)
{
	spyre_desc_sem(d, signal ? SPYRE_OP_SEM_SIGNAL : SPYRE_OP_SEM_WAIT, 0, sem, value);
}

void d_ts(void *d, bool devmem, uint64_t addr, uint32_t sg_count, uint64_t off)
{
	union spyre_hw_desc *x = d;

	spyre_desc_timestamp_host(x, addr, sg_count, off);
	if (devmem)
		x->ts.flags = SPYRE_DESC_F_DEVMEM;
}

void push_dma(struct tcard *t, unsigned int n, unsigned int dir, uint64_t len, uint64_t dev,
	      uint64_t src, uint64_t sg, uint32_t sg_count, uint64_t host_off, uint32_t fill)
{
	union spyre_hw_desc d;

	d_dma(&d, dir, len, dev, src, sg, sg_count, host_off, fill);
	ring_push(t, n, &d);
}

void push_fence(struct tcard *t, unsigned int n, uint64_t seqno, unsigned int rec_index,
		bool irq)
{
	union spyre_hw_desc d;

	d_fence(&d, seqno, rec_index, irq);
	ring_push(t, n, &d);
}

void push_sem(struct tcard *t, unsigned int n, bool signal, uint16_t sem, uint64_t value)
{
	union spyre_hw_desc d;

	d_sem(&d, signal, sem, value);
	ring_push(t, n, &d);
}

void push_ts(struct tcard *t, unsigned int n, bool devmem, uint64_t addr, uint32_t sg_count,
	     uint64_t off)
{
	union spyre_hw_desc d;

	d_ts(&d, devmem, addr, sg_count, off);
	ring_push(t, n, &d);
}

void ring_run(struct tcard *t, unsigned int n)
{
	ring_doorbell(t, n);
	tc_run(t);
}

void fence_and_run(struct tcard *t, unsigned int n, uint64_t seqno, unsigned int rec_index,
		   bool irq)
{
	push_fence(t, n, seqno, rec_index, irq);
	ring_run(t, n);
}

void push_launch(struct tcard *t, unsigned int n, uint64_t prog, uint64_t prog_len,
		 uint64_t ws, uint64_t ws_len, unsigned int nargs, const uint64_t *slots)
{
	push_launch_flags(t, n, 0, prog, prog_len, ws, ws_len, nargs, slots);
}

void push_launch_flags(struct tcard *t, unsigned int n, uint8_t flags, uint64_t prog,
		       uint64_t prog_len, uint64_t ws, uint64_t ws_len, unsigned int nargs,
		       const uint64_t *slots)
{
	union spyre_hw_desc d;
	unsigned int i;

	spyre_desc_launch(&d, nargs, prog, prog_len, ws, ws_len);
	d.launch.flags = flags;
	ring_push(t, n, &d);
	for (i = 0; i < nargs; i++) {
		spyre_desc_arg(&d, nargs, i, slots[2 * i], slots[2 * i + 1]);
		if (i % SPYRE_ARGS_PER_DESC == SPYRE_ARGS_PER_DESC - 1 || i + 1 == nargs)
			ring_push(t, n, &d);
	}
}

uint64_t sg_write(struct tcard *t, uint64_t sg_off, unsigned int count,
		  const uint64_t *addr_len)
{
	struct spyre_hw_sg *sg = hptr(t, H_SG + sg_off);
	unsigned int i;

	for (i = 0; i < count; i++) {
		sg[i].addr = spyre_cpu_to_le64(addr_len[2 * i]);
		sg[i].len = spyre_cpu_to_le64(addr_len[2 * i + 1]);
	}
	return HOST_BASE + H_SG + sg_off;
}

uint64_t sg_simple(struct tcard *t, unsigned int slot, uint64_t off, uint64_t len)
{
	uint64_t al[2] = { HOST_BASE + H_DATA + off, len };

	return sg_write(t, (uint64_t)slot * 1024, 1, al);
}

/* --- programs ------------------------------------------------------------------ */
void prog_init(struct prog *p, uint16_t slots, uint64_t ws)
{
	memset(p, 0, sizeof(*p));
	p->h.magic = SPYRE_PROG_MAGIC;
	p->h.version = SPYRE_PROG_VERSION;
	p->h.header_size = SPYRE_PROG_HEADER_SIZE;
	p->h.num_slots = slots;
	p->h.workspace_size = ws;
}

struct spyre_insn *prog_add(struct prog *p, uint8_t op, uint32_t mask, uint16_t wait,
			    uint16_t signal)
{
	struct spyre_insn *in = &p->in[p->n++];

	in->op = op;
	in->core_mask = mask;
	in->wait = wait;
	in->signal = signal;
	return in;
}

struct spyre_insn *p_load(struct prog *p, bool store, uint32_t mask, uint8_t slot,
			  uint64_t mem_off, uint32_t rows, uint32_t row_bytes,
			  uint32_t mem_stride, uint32_t sp_off, uint32_t sp_stride)
{
	struct spyre_insn *in = prog_add(p, store ? SPYRE_I_STORE : SPYRE_I_LOAD, mask, 0, 0);

	in->u.mem.slot = slot;
	in->u.mem.mem_off = mem_off;
	in->u.mem.rows = rows;
	in->u.mem.row_bytes = row_bytes;
	in->u.mem.mem_row_stride = mem_stride;
	in->u.mem.sp_off = sp_off;
	in->u.mem.sp_row_stride = sp_stride;
	return in;
}

struct spyre_insn *p_mm(struct prog *p, uint32_t mask, uint8_t dt, uint8_t dt_out,
			uint16_t m, uint16_t n, uint16_t k, uint32_t a, uint32_t b,
			uint32_t c, uint8_t flags)
{
	struct spyre_insn *in = prog_add(p, SPYRE_I_MATMUL, mask, 0, 0);

	in->flags = flags;
	in->dtype = dt;
	in->dtype_out = dt_out;
	in->u.mm.m = m;
	in->u.mm.n = n;
	in->u.mm.k = k;
	in->u.mm.a_off = a;
	in->u.mm.b_off = b;
	in->u.mm.c_off = c;
	in->u.mm.lda = k;
	in->u.mm.ldb = (flags & SPYRE_MM_TRANS_B) ? k : n;
	in->u.mm.ldc = n;
	return in;
}

struct spyre_insn *p_vec(struct prog *p, uint32_t mask, uint8_t func, uint8_t dt,
			 uint8_t dt_out, uint32_t rows, uint32_t cols, uint32_t s0,
			 uint32_t s1, uint32_t dst)
{
	struct spyre_insn *in = prog_add(p, SPYRE_I_VEC, mask, 0, 0);

	in->dtype = dt;
	in->dtype_out = dt_out;
	in->u.vec.func = func;
	in->u.vec.rows = rows;
	in->u.vec.cols = cols;
	in->u.vec.src0_off = s0;
	in->u.vec.src0_stride = cols;
	in->u.vec.src1_off = s1;
	in->u.vec.src1_stride = cols;
	in->u.vec.dst_off = dst;
	in->u.vec.dst_stride = (func == SPYRE_VF_SUM_ROW || func == SPYRE_VF_MAX_ROW) ? 1 : cols;
	return in;
}

uint64_t prog_store(struct tcard *t, const struct prog *p, uint64_t dev_off)
{
	struct spyre_prog_header h = p->h;

	h.num_insns = p->n;
	memcpy(t->dev + dev_off, &h, sizeof(h));
	memcpy(t->dev + dev_off + sizeof(h), p->in, p->n * sizeof(p->in[0]));
	return sizeof(h) + p->n * sizeof(p->in[0]);
}

struct spyre_hw_completion run_launch(struct tcard *t, uint64_t prog, uint64_t prog_len,
				      uint64_t ws, uint64_t ws_len, unsigned int nargs,
				      const uint64_t *slots)
{
	return run_launch_flags(t, 0, prog, prog_len, ws, ws_len, nargs, slots);
}

struct spyre_hw_completion run_launch_flags(struct tcard *t, uint8_t flags, uint64_t prog,
					    uint64_t prog_len, uint64_t ws, uint64_t ws_len,
					    unsigned int nargs, const uint64_t *slots)
{
	uint8_t d[SPYRE_DESC_SIZE];
	static uint64_t seq = 100;

	if (!(ring_status(t, 0) & SPYRE_RING_STATUS_ENABLED))
		ring_setup(t, 0, 6);
	push_launch_flags(t, 0, flags, prog, prog_len, ws, ws_len, nargs, slots);
	d_fence(d, ++seq, 0, true);
	ring_push(t, 0, d);
	ring_doorbell(t, 0);
	tc_run(t);
	return *rec(t, 0);
}
