// SPDX-License-Identifier: MIT
/*
 * Program merging (card interface 1.8). A compiled graph's kernels become
 * programs that run one after the other on the compute stream; each
 * LAUNCH pays the card's setup cost (2 us on the model), which for small
 * kernels is most of their time. A BARRIER lets one program hold several
 * kernels that depend on each other across cores, so runs of consecutive
 * programs are concatenated into one: their workspace operands (the
 * planned intermediates) are addressed through the LAUNCH's workspace,
 * their other operands (inputs, outputs, library constants) share the
 * slots of one LAUNCH, equal operands one slot.
 */
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "../prog/pbuild.h"
#include "graph.h"

static bool same_operand(const struct spyre_operand *a, const struct spyre_operand *b)
{
	return a->kind == b->kind && a->arg == b->arg && a->offset == b->offset &&
	       a->size == b->size && a->buf.bo == b->buf.bo && a->buf.offset == b->buf.offset &&
	       a->buf.size == b->buf.size;
}

/* Slot of @o in @u, or -1. */
static int find_operand(const struct cstep *u, const struct spyre_operand *o)
{
	unsigned int i;

	for (i = 0; i < u->nops; i++)
		if (same_operand(&u->ops[i], o))
			return (int)i;
	return -1;
}

/* Slots @st would add to @u (workspace operands need none). */
static unsigned int new_slots(const struct cstep *u, const struct cstep *st)
{
	unsigned int i, j, n = 0;

	for (i = 0; i < st->nops; i++) {
		const struct spyre_operand *o = &st->ops[i];
		bool dup = false;

		if (o->kind == SPYRE_OPERAND_WS || find_operand(u, o) >= 0)
			continue;
		for (j = 0; j < i && !dup; j++)
			dup = same_operand(&st->ops[j], o);
		n += !dup;
	}
	return n;
}

/* Add @st's operands to @u and fill its renaming @m; the workspace reach in @ws. */
static void add_operands(struct cstep *u, const struct cstep *st, struct pb_remap *m,
			 uint64_t *ws)
{
	unsigned int i;

	for (i = 0; i < st->nops; i++) {
		const struct spyre_operand *o = &st->ops[i];
		int k;

		if (o->kind == SPYRE_OPERAND_WS) {
			m->slot[i] = SPYRE_ISA_SLOT_WS;
			m->ws_off[i] = o->offset;
			if (o->offset + o->size > *ws)
				*ws = o->offset + o->size;
			continue;
		}
		k = find_operand(u, o);
		if (k < 0) {
			k = (int)u->nops;
			u->ops[u->nops++] = *o;
		}
		m->slot[i] = (uint8_t)k;
		m->ws_off[i] = 0;
	}
}

static uint32_t insns(const struct gprog *p)
{
	struct spyre_prog_header h;

	memcpy(&h, p->img, sizeof(h));
	return h.num_insns;
}

/*
 * Concatenate @p[0..n) (n >= 2) into @out, whose operands @u and the
 * renaming of each part @maps were gathered while grouping them.
 */
static int concat(spyre_compiled *c, const struct gprog *p, unsigned int n,
		  const struct cstep *u, const struct pb_remap *maps, uint64_t ws,
		  struct gprog *out)
{
	const void **img = calloc(n, sizeof(*img));
	size_t *size = calloc(n, sizeof(*size));
	unsigned int i;
	int ret = -ENOMEM;

	if (img && size) {
		for (i = 0; i < n; i++) {
			img[i] = p[i].img;
			size[i] = p[i].size;
		}
		out->st = *u;
		ret = pb_concat(img, size, maps, n, u->nops, ws, c->ops->ncores, &out->img,
				&out->size);
	}
	free(img);
	free(size);
	return ret;
}

void g_merge_programs(spyre_compiled *c, struct gprog *p, unsigned int *n)
{
	struct pb_remap *maps = calloc(*n, sizeof(*maps));
	unsigned int i = 0, w = 0, j;

	if (!maps)
		return;	/* only an optimisation: the programs run one by one */
	while (i < *n) {
		struct cstep u = { 0 };
		uint64_t count = 0, ws = 0;
		struct gprog merged;

		for (j = i; j < *n && pb_can_concat(p[j].img, p[j].size); j++) {
			if (u.nops + new_slots(&u, &p[j].st) > SPY_MAX_ARGS ||
			    count + insns(&p[j]) + (j > i) > PB_MAX_INSNS)
				break;
			count += insns(&p[j]) + (j > i);
			add_operands(&u, &p[j].st, &maps[j - i], &ws);
		}
		if (j - i < 2 || concat(c, &p[i], j - i, &u, maps, ws, &merged)) {
			/* nothing to merge with, or no memory to: keep it as it is */
			p[w++] = p[i++];
			continue;
		}
		for (; i < j; i++) {
			free(p[i].img);
			p[i].img = NULL;
		}
		p[w++] = merged;
	}
	free(maps);
	for (j = w; j < *n; j++)
		p[j].img = NULL;	/* moved or freed above */
	*n = w;
}
