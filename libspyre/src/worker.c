// SPDX-License-Identifier: MIT
/*
 * The host-work thread of a device: runs host work items in the order they
 * became ready, each after the points it depends on signalled, then
 * signals the item's own timeline point from the host and issues whatever
 * was deferred behind it.
 */
#include <stdlib.h>

#include "internal.h"

struct spy_worker {
	pthread_t thread;
	struct spy_op *head, *tail;	/* ready host ops, FIFO */
	bool stop;
	pthread_cond_t cond;		/* work arrived or stop (under dev->lock) */
};

static void run_one(spyre_device *dev, struct spy_op *op)
{
	uint32_t handles[SPY_MAX_DEPS];
	uint64_t points[SPY_MAX_DEPS];
	unsigned int i, n = 0;
	int ret;

	for (i = 0; i < op->ndeps; i++) {
		if (!op->deps[i].point)
			continue;
		handles[n] = op->deps[i].s->timeline;
		points[n++] = op->deps[i].point;
	}
	if (n)
		dev->ops->syncobj_wait(dev, handles, points, n, INT64_MAX);
	op->fn(op);
	spy_stat_add(&dev->stat_host_runs, 1);
	ret = dev->ops->syncobj_signal(dev, op->s->timeline, op->point);
	pthread_mutex_lock(&dev->lock);
	if (ret && !op->s->error)
		op->s->error = spy_dev_err(dev, ret, "host work", "signalling its completion");
	op->s->issued_point = op->point;
	op->s->running_host--;
	for (i = 0; i < op->ndeps; i++)
		spy_stream_put_locked(op->deps[i].s);
	if (op->done)
		op->done(op);
	if (op->owned)
		free(op);
	spy_flush_deferred_locked(dev);
	pthread_mutex_unlock(&dev->lock);
}

static void *worker_main(void *arg)
{
	spyre_device *dev = arg;
	struct spy_worker *w = dev->worker;

	pthread_mutex_lock(&dev->lock);
	for (;;) {
		struct spy_op *op = w->head;

		if (!op) {
			if (w->stop)
				break;
			pthread_cond_wait(&w->cond, &dev->lock);
			continue;
		}
		w->head = op->next;
		if (!w->head)
			w->tail = NULL;
		pthread_mutex_unlock(&dev->lock);
		run_one(dev, op);
		pthread_mutex_lock(&dev->lock);
	}
	pthread_mutex_unlock(&dev->lock);
	return NULL;
}

int spy_worker_start(spyre_device *dev)
{
	struct spy_worker *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	pthread_cond_init(&w->cond, NULL);
	dev->worker = w;
	if (pthread_create(&w->thread, NULL, worker_main, dev)) {
		dev->worker = NULL;
		pthread_cond_destroy(&w->cond);
		free(w);
		return -EAGAIN;
	}
	return 0;
}

/* Hand a ready host op to the worker. Under dev->lock. */
void spy_worker_push_locked(spyre_device *dev, struct spy_op *op)
{
	struct spy_worker *w = dev->worker;

	op->next = NULL;
	op->s->running_host++;
	if (w->tail)
		w->tail->next = op;
	else
		w->head = op;
	w->tail = op;
	pthread_cond_signal(&w->cond);
}

void spy_worker_stop(spyre_device *dev)
{
	struct spy_worker *w = dev->worker;

	if (!w)
		return;
	pthread_mutex_lock(&dev->lock);
	w->stop = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&dev->lock);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->cond);
	free(w);
	dev->worker = NULL;
}

bool spy_worker_is_self(spyre_device *dev)
{
	return dev->worker && pthread_equal(dev->worker->thread, pthread_self());
}
