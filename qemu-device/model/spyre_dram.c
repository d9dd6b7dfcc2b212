// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Spyre card model: the LPDDR5 channel as one budget of device time shared
 * by programs' loads and stores and by every DMA command (PCIe transfers
 * read or write LPDDR5 too). A transfer needs a number of ns of the
 * channel at its full rate; it takes them from the channel's free time at
 * or after its start, filling gaps between earlier reservations (a
 * transfer is split into as many pieces as it needs), and ends when the
 * last piece ends. Whatever the split between engines, N bytes moved
 * concurrently take at least N / rate.
 */
#include <string.h>

#include "spyre_internal.h"

void card_dram_reset(struct card_dram *d)
{
	d->n = 0;
}

/* Insert busy [s, e) at index @i (sorted, non-overlapping), merging neighbours. */
static void add_busy(struct card_dram *d, unsigned int i, uint64_t s, uint64_t e)
{
	if (i > 0 && d->busy[i - 1].e == s) {
		d->busy[i - 1].e = e;
		if (i < d->n && d->busy[i].s == e) {
			d->busy[i - 1].e = d->busy[i].e;
			memmove(&d->busy[i], &d->busy[i + 1], (d->n - i - 1) * sizeof(d->busy[0]));
			d->n--;
		}
		return;
	}
	if (i < d->n && d->busy[i].s == e) {
		d->busy[i].s = s;
		return;
	}
	if (d->n == CARD_DRAM_SLOTS) {
		/* Forget the oldest reservation (its time is long past). */
		memmove(&d->busy[0], &d->busy[1], (d->n - 1) * sizeof(d->busy[0]));
		d->n--;
		if (i)
			i--;
	}
	memmove(&d->busy[i + 1], &d->busy[i], (d->n - i) * sizeof(d->busy[0]));
	d->busy[i].s = s;
	d->busy[i].e = e;
	d->n++;
}

uint64_t card_dram_reserve(struct card_dram *d, uint64_t start, uint64_t need)
{
	uint64_t t = start;
	unsigned int i = 0;

	if (!need)
		return start;
	while (need) {
		/* the first reservation that ends after t */
		while (i < d->n && d->busy[i].e <= t)
			i++;
		if (i < d->n && d->busy[i].s <= t) {
			t = d->busy[i].e;	/* busy now: go to its end */
			continue;
		}
		/* free from t until the next reservation (or forever) */
		{
			uint64_t gap = i < d->n ? d->busy[i].s - t : need;
			uint64_t take = gap < need ? gap : need;

			add_busy(d, i, t, t + take);
			need -= take;
			t += take;
			i = 0;	/* add_busy merged or shifted entries: look again */
		}
	}
	return t;
}
