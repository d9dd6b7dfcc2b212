// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Spyre card model: cross-ring semaphores. A semaphore only grows
 * (SIGNAL sets max(current, value)); each raise is remembered with its
 * device time so a WAIT resumes at the time the awaited value was reached,
 * whichever ring the card happened to process first.
 */
#include "spyre_internal.h"

void card_sem_reset(struct spyre_model *m)
{
	memset(m->sems, 0, sizeof(m->sems));
}

void card_sem_signal(struct spyre_model *m, uint32_t sem, uint64_t value, uint64_t ns,
		      bool failed)
{
	struct card_sem *s = &m->sems[sem];

	if (value <= s->value)
		return;
	s->value = value;
	if (s->nhist == CARD_SEM_HISTORY) {
		memmove(s->hist, s->hist + 1, sizeof(s->hist) - sizeof(s->hist[0]));
		s->nhist--;
	}
	s->hist[s->nhist].value = value;
	s->hist[s->nhist].ns = ns;
	s->hist[s->nhist].failed = failed;
	s->nhist++;
}

/*
 * Has @sem reached @value? If so, *ns is the device time it did and *failed
 * whether the raise that reached it came from a failed job (or software).
 */
bool card_sem_reached(struct spyre_model *m, uint32_t sem, uint64_t value, uint64_t *ns,
		       bool *failed)
{
	struct card_sem *s = &m->sems[sem];
	unsigned int i;

	*ns = 0;
	*failed = false;
	if (s->value < value)
		return false;
	for (i = 0; i < s->nhist; i++) {
		if (s->hist[i].value >= value) {
			/* older raises were forgotten: the first kept is a bound */
			*ns = s->hist[i].ns;
			*failed = s->hist[i].failed;
			if (i == 0 && value == 0) {
				*ns = 0;
				*failed = false;
			}
			break;
		}
	}
	return true;
}

/* Raise @sem as a SEM_SIGNAL would and let every blocked ring look again. */
void card_sem_signal_wake(struct spyre_model *m, uint32_t sem, uint64_t value, uint64_t ns,
			   bool failed)
{
	unsigned int i;

	card_sem_signal(m, sem, value, ns, failed);
	for (i = 0; i < m->cfg.num_rings; i++)
		m->rings[i].sem_blocked = false;
}

/*
 * Software signal through SEM_VALUE_HI, at the current device time. It
 * stands for jobs that will never complete, so it counts as a failure.
 */
void card_sem_signal_now(struct spyre_model *m, uint32_t sem, uint64_t value)
{
	card_sem_signal_wake(m, sem, value, card_now(m), true);
}
