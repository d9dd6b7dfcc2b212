// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Spyre card model: memory accesses of commands whose ring has an MMU
 * context (interface 1.10): DMA between card virtual ranges, the rows of a
 * program's LOAD/STORE, and plain copies (program fetch, completion record,
 * timestamp). A DMA translates its whole source and destination before it
 * moves a byte, so a faulting DMA moves nothing.
 */
#include <stdlib.h>

#include "spyre_internal.h"
#include "spyre_mmu.h"

#define CHUNK		(1u << 20)

/* A run of one translated range: physically contiguous, one kind. */
struct extent {
	uint64_t pa;
	uint64_t len;
	bool sys;
};

struct extents {
	struct extent *e;
	size_t n, cap;
};

static bool ext_add(struct extents *x, uint64_t pa, uint64_t len, bool sys)
{
	struct extent *last = x->n ? &x->e[x->n - 1] : NULL;

	if (last && last->sys == sys && last->pa + last->len == pa) {
		last->len += len;	/* contiguous pages stay one extent */
		return true;
	}
	if (x->n == x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 16;
		struct extent *ne = realloc(x->e, cap * sizeof(*ne));

		if (!ne)
			return false;
		x->e = ne;
		x->cap = cap;
	}
	x->e[x->n].pa = pa;
	x->e[x->n].len = len;
	x->e[x->n].sys = sys;
	x->n++;
	return true;
}

/*
 * Translate [va, va + len) page by page, into @x when given (else only
 * check it); a fault stops it. A range can be as long as 2^48 bytes of
 * aliased pages, so this moves the ring's progress and honours an abort.
 */
static uint32_t map_range(struct card_va *v, uint64_t va, uint64_t len, unsigned int access,
			  unsigned int kinds, struct extents *x)
{
	uint64_t done = 0, pa, avail, n;
	bool sys;

	while (done < len) {
		card_progress_step(v->m);
		if (card_abort_pending(v->m))
			return CARD_CMD_ABORTED;
		if (!card_va_translate(v, va + done, access, kinds, &pa, &sys, &avail))
			return SPYRE_CMD_ERR_PAGE_FAULT;
		n = avail < len - done ? avail : len - done;
		if (x && !ext_add(x, pa, n, sys))
			return SPYRE_CMD_ERR_DMA;	/* out of host memory: fail, not abort */
		done += n;
	}
	return SPYRE_CMD_OK;
}

uint32_t card_va_copy(struct card_va *v, uint64_t va, void *buf, uint64_t len,
		      unsigned int access, unsigned int kinds)
{
	struct spyre_model *m = v->m;
	uint8_t *b = buf;
	uint64_t done = 0, pa, avail, n;
	bool sys;

	if (va + len < va)
		return SPYRE_CMD_ERR_BOUNDS;
	for (; access == SPYRE_MMU_ACCESS_WRITE && done < len; done += n) {
		if (!card_va_translate(v, va + done, access, kinds, &pa, &sys, &avail))
			return SPYRE_CMD_ERR_PAGE_FAULT;
		n = avail < len - done ? avail : len - done;
	}
	done = 0;
	while (done < len) {
		if (!card_va_translate(v, va + done, access, kinds, &pa, &sys, &avail))
			return SPYRE_CMD_ERR_PAGE_FAULT;
		n = avail < len - done ? avail : len - done;
		if (sys) {
			if (access == SPYRE_MMU_ACCESS_WRITE ?
				    m->ops.host_write(m->opaque, pa, b + done, n) :
				    m->ops.host_read(m->opaque, pa, b + done, n))
				return SPYRE_CMD_ERR_DMA;
		} else if (access == SPYRE_MMU_ACCESS_WRITE) {
			memcpy(m->devmem + pa, b + done, n);
		} else {
			memcpy(b + done, m->devmem + pa, n);
		}
		done += n;
	}
	return SPYRE_CMD_OK;
}

static bool va_range_ok(uint64_t va, uint64_t len)
{
	return card_range_ok(va, len, 1ull << SPYRE_MMU_VA_BITS);
}

/*
 * In a context the MMU replaces scatter lists: sg_addr is the card virtual
 * address of the host side (H2D source, D2H destination), sg_count and
 * host_off must be zero, and every range must lie below 2^48.
 */
uint32_t card_va_dma_check(struct spyre_model *m, const void *dma_desc)
{
	const struct spyre_hw_dma *d = dma_desc;
	unsigned int dir = spyre_le16_to_cpu(d->dir);
	uint64_t len = spyre_le64_to_cpu(d->len);
	bool host = dir == SPYRE_DMA_H2D || dir == SPYRE_DMA_D2H;

	(void)m;
	if (d->flags || dir > SPYRE_DMA_FILL || d->rsvd || d->rsvd2 || d->sg_count ||
	    d->host_off)
		return SPYRE_CMD_ERR_INVALID;
	if ((dir != SPYRE_DMA_D2D && d->dev_src) || (!host && d->sg_addr))
		return SPYRE_CMD_ERR_INVALID;
	if (dir == SPYRE_DMA_FILL && (len % 4))
		return SPYRE_CMD_ERR_INVALID;
	if (!va_range_ok(spyre_le64_to_cpu(d->dev_addr), len) ||
	    (dir == SPYRE_DMA_D2D && !va_range_ok(spyre_le64_to_cpu(d->dev_src), len)) ||
	    (host && !va_range_ok(spyre_le64_to_cpu(d->sg_addr), len)))
		return SPYRE_CMD_ERR_BOUNDS;
	return SPYRE_CMD_OK;
}

/* Fill @n bytes at @p with the pattern as seen from byte @phase of it. */
static void fill_piece(uint8_t *p, uint64_t n, uint32_t pattern, unsigned int phase)
{
	uint8_t pat[4];
	uint64_t seeded, k;
	unsigned int i;

	for (i = 0; i < 4; i++)
		pat[i] = (uint8_t)(pattern >> (8 * ((phase + i) % 4)));
	seeded = n < 4 ? n : 4;
	memcpy(p, pat, seeded);
	while (seeded < n) {	/* double the seeded prefix (a multiple of 4) */
		k = seeded < n - seeded ? seeded : n - seeded;
		memcpy(p + seeded, p, k);
		seeded += k;
	}
}

/* Move one piece: @src and @dst are extents' addresses of their kinds. */
static uint32_t move(struct spyre_model *m, const struct extent *s, uint64_t so,
		     const struct extent *d, uint64_t dof, uint64_t n)
{
	if (s->sys)	/* host -> device */
		return m->ops.host_read(m->opaque, s->pa + so, m->devmem + d->pa + dof, n) ?
		       SPYRE_CMD_ERR_DMA : SPYRE_CMD_OK;
	if (d->sys)	/* device -> host */
		return m->ops.host_write(m->opaque, d->pa + dof, m->devmem + s->pa + so, n) ?
		       SPYRE_CMD_ERR_DMA : SPYRE_CMD_OK;
	memmove(m->devmem + d->pa + dof, m->devmem + s->pa + so, n);
	return SPYRE_CMD_OK;
}

/*
 * Copy along two extent lists of the same total length. @backward walks
 * from the end, for a D2D whose destination overlaps its source from
 * above (memmove semantics in the virtual space).
 */
static uint32_t copy_extents(struct spyre_model *m, const struct extents *src,
			     const struct extents *dst, uint64_t len, bool backward)
{
	size_t si = 0, di = 0;
	uint64_t so = 0, dof = 0, done = 0, n;
	uint32_t st;

	if (backward) {
		si = src->n - 1;
		di = dst->n - 1;
		so = src->e[si].len;
		dof = dst->e[di].len;
	}
	while (done < len) {
		const struct extent *s = &src->e[si], *d = &dst->e[di];
		uint64_t sl = backward ? so : s->len - so, dl = backward ? dof : d->len - dof;

		n = sl < dl ? sl : dl;
		if (n > CHUNK)
			n = CHUNK;
		card_progress_step(m);
		if (card_abort_pending(m))
			return CARD_CMD_ABORTED;
		if (backward) {
			so -= n;
			dof -= n;
			st = move(m, s, so, d, dof, n);
		} else {
			st = move(m, s, so, d, dof, n);
			so += n;
			dof += n;
		}
		if (st != SPYRE_CMD_OK)
			return st;
		done += n;
		if (backward) {
			if (!so && si)
				so = src->e[--si].len;
			if (!dof && di)
				dof = dst->e[--di].len;
		} else {
			if (so == s->len) {
				si++;
				so = 0;
			}
			if (dof == d->len) {
				di++;
				dof = 0;
			}
		}
	}
	return SPYRE_CMD_OK;
}

/* FILL the extents of the window that starts @at bytes into the FILL. */
static uint32_t fill_extents(struct spyre_model *m, const struct extents *dst, uint32_t pattern,
			     uint64_t at)
{
	uint64_t off, n;
	size_t i;

	for (i = 0; i < dst->n; i++) {
		for (off = 0; off < dst->e[i].len; off += n) {
			n = dst->e[i].len - off < CHUNK ? dst->e[i].len - off : CHUNK;
			card_progress_step(m);
			if (card_abort_pending(m))
				return CARD_CMD_ABORTED;
			fill_piece(m->devmem + dst->e[i].pa + off, n, pattern,
				   (unsigned int)((at + off) % 4));
		}
		at += dst->e[i].len;
	}
	return SPYRE_CMD_OK;
}

/* Bytes of a DMA moved per window of translated extents (bounds their memory). */
#define WINDOW		(64ull << 20)

/*
 * Runs with the lock dropped, like the physical DMA. The source range is
 * translated first, then the destination, each in address order (the
 * order in which the TLB sees them and the walks are timed); a fault there
 * fails the DMA before it moves a byte. Then it moves window by window,
 * translating each window again without the TLB (a replay: already timed).
 */
uint32_t card_va_dma_run(struct spyre_model *m, struct card_va *v, const void *dma_desc)
{
	const struct spyre_hw_dma *d = dma_desc;
	unsigned int dir = spyre_le16_to_cpu(d->dir);
	uint64_t len = spyre_le64_to_cpu(d->len);
	uint64_t dst = dir == SPYRE_DMA_D2H ? spyre_le64_to_cpu(d->sg_addr) :
		       spyre_le64_to_cpu(d->dev_addr);
	uint64_t src = dir == SPYRE_DMA_H2D ? spyre_le64_to_cpu(d->sg_addr) :
		       dir == SPYRE_DMA_D2H ? spyre_le64_to_cpu(d->dev_addr) :
		       spyre_le64_to_cpu(d->dev_src);
	unsigned int skind = dir == SPYRE_DMA_H2D ? CARD_VA_SYS : CARD_VA_DEV;
	unsigned int dkind = dir == SPYRE_DMA_D2H ? CARD_VA_SYS : CARD_VA_DEV;
	bool fill = dir == SPYRE_DMA_FILL;
	bool backward = dir == SPYRE_DMA_D2D && dst > src && dst < src + len;
	struct extents sx = { 0 }, dx = { 0 };
	uint64_t done = 0, off, n;
	uint32_t st = SPYRE_CMD_OK;

	if (!len)
		return SPYRE_CMD_OK;
	if (!fill)
		st = map_range(v, src, len, SPYRE_MMU_ACCESS_READ, skind, NULL);
	if (st == SPYRE_CMD_OK)
		st = map_range(v, dst, len, SPYRE_MMU_ACCESS_WRITE, dkind, NULL);
	v->replay = true;
	v->last_ok = false;
	while (st == SPYRE_CMD_OK && done < len) {
		n = len - done < WINDOW ? len - done : WINDOW;
		off = backward ? len - done - n : done;	/* memmove: from the end */
		sx.n = dx.n = 0;
		if (!fill)
			st = map_range(v, src + off, n, SPYRE_MMU_ACCESS_READ, skind, &sx);
		if (st == SPYRE_CMD_OK)
			st = map_range(v, dst + off, n, SPYRE_MMU_ACCESS_WRITE, dkind, &dx);
		if (st == SPYRE_CMD_OK)
			st = fill ? fill_extents(m, &dx, spyre_le32_to_cpu(d->fill), off) :
			     copy_extents(m, &sx, &dx, n, backward);
		done += n;
	}
	v->replay = false;
	free(sx.e);
	free(dx.e);
	return st;
}

uint32_t card_va_rows(struct card_va *v, bool load, uint64_t va, uint64_t mem_stride,
		      uint8_t *sp, uint64_t sp_stride, uint64_t rows, uint64_t row_bytes,
		      uint16_t *fault_space, uint64_t *fault_addr)
{
	unsigned int access = load ? SPYRE_MMU_ACCESS_READ : SPYRE_MMU_ACCESS_WRITE;
	uint64_t r, done, pa, avail, n, a;
	bool sys;

	for (r = 0; r < rows; r++) {
		uint8_t *s = sp + r * sp_stride;

		for (done = 0; done < row_bytes; done += n) {
			a = va + r * mem_stride + done;
			if (!card_va_translate(v, a, access, CARD_VA_DEV, &pa, &sys, &avail)) {
				*fault_space = card_va_fault_space(access);
				*fault_addr = a;
				return SPYRE_CMD_ERR_PAGE_FAULT;
			}
			n = avail < row_bytes - done ? avail : row_bytes - done;
			if (load)
				memmove(s + done, v->devmem + pa, n);
			else
				memmove(v->devmem + pa, s + done, n);
		}
	}
	return SPYRE_CMD_OK;
}

uint32_t card_va_timestamp(struct spyre_model *m, const struct card_cmd *c, const uint64_t *val)
{
	const struct spyre_hw_timestamp *d = &c->desc.ts;
	struct card_va v;

	if (d->sg_count || d->host_off)	/* the MMU replaces the scatter list */
		return SPYRE_CMD_ERR_INVALID;
	card_va_init(&v, m, c->ctx);
	return card_va_copy(&v, spyre_le64_to_cpu(d->addr), (void *)val, sizeof(*val),
			    SPYRE_MMU_ACCESS_WRITE, CARD_VA_DEV | CARD_VA_SYS);
}

bool card_va_record(struct spyre_model *m, uint32_t ctx, uint64_t *addr, bool *dev)
{
	struct card_va v;
	uint64_t pa, avail;
	bool sys;

	card_va_init(&v, m, ctx);
	if (!card_va_translate(&v, *addr, SPYRE_MMU_ACCESS_WRITE, CARD_VA_DEV | CARD_VA_SYS, &pa,
			       &sys, &avail))
		return false;
	*addr = pa;
	*dev = !sys;
	return true;
}

uint32_t card_va_ring_read(struct spyre_model *m, uint32_t ctx, uint64_t va, void *buf,
			   uint64_t len)
{
	struct card_va v;

	card_va_init(&v, m, ctx);
	return card_va_copy(&v, va, buf, len, SPYRE_MMU_ACCESS_READ, CARD_VA_DEV | CARD_VA_SYS);
}

uint32_t card_va_ring_write(struct spyre_model *m, uint32_t ctx, uint64_t va, const void *buf,
			    uint64_t len)
{
	struct card_va v;

	card_va_init(&v, m, ctx);
	return card_va_copy(&v, va, (void *)buf, len, SPYRE_MMU_ACCESS_WRITE,
			    CARD_VA_DEV | CARD_VA_SYS);
}
