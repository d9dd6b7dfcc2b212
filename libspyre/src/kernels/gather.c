// SPDX-License-Identifier: MIT
/*
 * Gather kernel: rows of a table picked by indices (embedding,
 * index_select) with LOAD GATHER. Tiles of tokens x row chunks go
 * round-robin to the cores; per tile one LOAD of the indices, one GATHER
 * LOAD of the rows, one STORE (all on the load/store unit, so the next
 * tile's loads queue right behind this tile's store).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ew_plan.h"
#include "tile.h"

int kern_ga(const struct ga_spec *s, unsigned int ncores, struct kprogs *out, char *why,
	    size_t whylen)
{
	uint32_t es = pb_dtype_size(s->dtype), tt, dc, idx_off[2], row_off[2], per_tile = 3;
	int64_t T = s->nidx, D = s->d, ntt, ndc, tiles, ti;
	struct pb *p;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	out->nslots = 1u + (s->w.slot > s->idx.slot ? (s->w.slot > s->out.slot ? s->w.slot :
						       s->out.slot) :
					(s->idx.slot > s->out.slot ? s->idx.slot : s->out.slot));
	if (!T || !D)
		return 0;
	if (!es || s->w.strides[0] * es > UINT32_MAX / 2 ||
	    s->out.strides[0] * es > UINT32_MAX / 2 || s->idx.strides[0] * 4 > UINT32_MAX / 2) {
		snprintf(why, whylen, "unsupported dtype or strides for a gather");
		return -EOPNOTSUPP;
	}
	/* two tile buffers of tt indices and tt rows of dc elements in 1.9 MiB */
	dc = (uint32_t)(D * es > 256 * 1024 ? 256 * 1024 / es : D);
	tt = (uint32_t)(T < 4096 ? T : 4096);
	while (2ull * tt * (dc * es + 4) > 1900 * 1024 && tt > 1)
		tt = (tt + 1) / 2;
	if ((T + tt - 1) / tt * ((D + dc - 1) / dc) < ncores && T > 1)
		tt = (uint32_t)((T + ncores - 1) / ncores);
	ntt = (T + tt - 1) / tt;
	ndc = (D + dc - 1) / dc;
	tiles = ntt * ndc;
	idx_off[0] = 0;
	idx_off[1] = align_up(tt * 4, SP_ALIGN);
	row_off[0] = 2 * idx_off[1];
	row_off[1] = row_off[0] + align_up(tt * dc * es, SP_ALIGN);
	p = pb_new(ncores);
	if (!p)
		return -ENOMEM;
	for (ti = 0; ti < tiles && !ret; ti++) {
		unsigned int c = (unsigned int)(ti % ncores);
		unsigned int par = (unsigned int)((ti / ncores) & 1);
		int64_t t0 = (ti / ndc) * tt, d0 = (ti % ndc) * dc;
		uint32_t ttt = (uint32_t)(T - t0 < tt ? T - t0 : tt);
		uint32_t dcc = (uint32_t)(D - d0 < dc ? D - d0 : dc);

		xfer(p, c, 0, s->idx.slot, (uint64_t)(s->idx.off + t0 * s->idx.strides[0]) * 4, ttt,
		     1, s->idx.strides[0], 0, 4, idx_off[par], 1);
		pb_gather(p, c, s->w.slot, (uint64_t)(s->w.off + d0) * es, ttt, dcc * es,
			  (uint32_t)(s->w.strides[0] * es), idx_off[par], row_off[par], dc * es);
		pb_store(p, c, s->out.slot,
			 (uint64_t)(s->out.off + t0 * s->out.strides[0] + d0) * es, ttt, dcc * es,
			 (uint32_t)(s->out.strides[0] * es), row_off[par], dc * es);
		if (ti + 1 == tiles || pb_count(p) + per_tile * ncores > PB_MAX_INSNS)
			ret = kprogs_add(out, p);
	}
	pb_free(p);
	if (ret)
		kprogs_free(out);
	return ret;
}
