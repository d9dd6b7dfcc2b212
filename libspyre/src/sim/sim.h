/* SPDX-License-Identifier: MIT */
/*
 * The "sim" backend: the card model (qemu-device/model) in-process, plus a
 * small stand-in for what the kernel driver does between the uAPI and the
 * card: handles to addresses, scatter lists, descriptors, rings,
 * completion records, fences and syncobjs. Same semantics as the driver.
 */
#ifndef SPYRE_SIM_H
#define SPYRE_SIM_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "../internal.h"
#include "spyre_desc.h"
#include "spyre_model.h"

#define SIM_MAX_CMDS 512
#define SIM_MAX_SYNCS 64
#define SIM_MAX_QUEUES 64
#define SIM_RING_LOG2 12
#define SIM_SG_SEG (64u << 10)	/* host BOs are described in 64 KiB segments */
#define SIM_MAX_HOST_BO (1ull << 30)

/* A dma_fence: signalled once, with an error or not. */
struct sim_fence {
	int refs;
	bool signaled;
	int error;
	uint64_t dev_end;	/* virtual clock: device time it signalled at */
};

struct sim_bo {
	int refs;			/* the handle + jobs using it */
	bool open;			/* the handle is still valid */
	uint64_t size;
	uint32_t placement;
	uint64_t dev_addr;		/* device placement; peer: the bus address */
	uint8_t *host;			/* host placement: the pages */
	void *peer_map;			/* peer of another process: its mapping */
	uint64_t peer_map_len;
	bool user;			/* @host is the caller's (BO_USERPTR) */
	struct spyre_hw_sg *sg;		/* host placement: scatter list */
	uint32_t sg_count;
};

struct sim_point {
	uint64_t point;
	struct sim_fence *fence;
};

struct sim_err_point {
	uint64_t point;
	int error;
};

struct sim_syncobj {
	bool open;
	struct sim_point *pts;		/* unsignalled-prefix points, ascending */
	unsigned int npts, cap;
	uint64_t last;			/* highest point ever added */
	uint64_t signaled_upto;		/* every point <= this signalled */
	uint64_t dev_upto;		/* latest dev_end of those points */
	struct sim_err_point errs[64];	/* recent failed points */
	unsigned int nerrs, errs_next;
};

struct sim_job;

struct sim_ring {
	unsigned int index;
	uint32_t engine;
	uint8_t *descs;			/* 1 << SIM_RING_LOG2 descriptors */
	struct spyre_hw_ring_wb *wb;
	uint32_t tail;
	uint64_t seqno;
	struct sim_job *inflight_head, *inflight_tail;
	uint32_t progress_head;
	uint64_t progress_seqno;
	uint64_t progress_ns;
};

struct sim_queue {
	uint32_t id;
	uint32_t engine;
	struct sim_ring *ring;
	bool banned;
	bool dead;			/* destroyed: drained, then freed */
	struct sim_job *head, *tail;	/* submitted, not yet on the ring */
	uint64_t jobs;			/* submitted so far */
	struct spy_queue_error failure;	/* first failed job (QUEUE_ERROR) */
};

struct sim_job {
	struct sim_job *next;
	uint64_t ready_dev;		/* virtual clock: earliest doorbell time */
	struct sim_queue *queue;	/* NULL once the queue is destroyed */
	struct sim_ring *ring;
	uint8_t *descs;
	uint32_t ndescs;
	struct sim_fence **deps;
	unsigned int ndeps;
	struct sim_fence *done;
	struct sim_bo **bos;
	unsigned int nbos;
	uint64_t seqno;
	struct spyre_hw_completion record;
	uint64_t queue_seq;		/* its number on its queue */
	struct spy_fault fault;		/* where its launch failed; insn -1: none */
	uint64_t out_point;		/* point of its first out-sync */
};

struct sim_range {
	uint64_t off, size;
	struct sim_range *next;
};

struct sim {
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* fence signalled */
	pthread_cond_t kick;		/* work for the card thread */
	pthread_t thread;
	bool stop, lost;
	uint64_t kicks;
	struct spyre_model *model;
	struct spyre_model_config cfg;
	uint8_t *devmem;
	int memfd;			/* devmem's file (shared with importers), or -1 */
	struct sim_range *free;		/* free device memory, sorted */
	uint64_t mem_used;

	struct sim_bo **bos;
	unsigned int nbos;
	struct sim_syncobj **syncs;
	unsigned int nsyncs;
	struct sim_queue *queues[SIM_MAX_QUEUES];
	struct sim_ring rings[SPYRE_MODEL_MAX_RINGS];
	unsigned int nrings, next_dma_ring;
	uint64_t reset_count;
	uint64_t timeout_ns;
	/*
	 * Virtual clock (the default): the card's notion of "now" advances only
	 * to the device time of the completions the host has seen, so the time
	 * the host takes to emulate the card never shows in the device
	 * timeline. SPYRE_SIM_CLOCK=real uses CLOCK_MONOTONIC instead.
	 */
	bool virtual_clock;
	uint64_t vclock;		/* what the model reads as now */
	uint64_t observed;		/* latest device time the host waited for */
	uint64_t vmax;			/* latest completion time so far */
};

/* sim_objects.c (all under sim->lock) */
struct sim_fence *sim_fence_new(void);
void sim_fence_put(struct sim_fence *f);
void sim_fence_signal(struct sim *sim, struct sim_fence *f, int error);
struct sim_bo *sim_bo_lookup(struct sim *sim, uint32_t handle);
void sim_bo_put(struct sim *sim, struct sim_bo *bo);
void sim_bo_discard(struct sim_bo *bo);
struct sim_syncobj *sim_syncobj_lookup(struct sim *sim, uint32_t handle);
int sim_syncobj_add(struct sim *sim, struct sim_syncobj *so, uint64_t point,
		    struct sim_fence *f);
/* NULL with *ret = 0: already signalled; *ret < 0: not submitted. */
struct sim_fence *sim_syncobj_find(struct sim_syncobj *so, uint64_t point, int *ret);
bool sim_syncobj_signaled(struct sim_syncobj *so, uint64_t point);
/* Device time at which a signalled point signalled (virtual clock). */
uint64_t sim_syncobj_point_dev(struct sim_syncobj *so, uint64_t point);
void sim_syncobj_collect(struct sim_syncobj *so);
int sim_mem_alloc(struct sim *sim, uint64_t size, uint64_t *addr);
void sim_mem_free(struct sim *sim, uint64_t addr, uint64_t size);

/* sim_submit.c: SUBMIT, checked and translated (spyre_submit.c) */
int sim_submit_ioctl(spyre_device *dev, struct sim *sim, const struct drm_spyre_submit *sub);

/* sim_driver.c: rings, scheduling, completion and recovery (the driver's job path) */
void sim_job_free(struct sim *sim, struct sim_job *job);
bool sim_run_jobs(struct sim *sim);
void sim_kick(struct sim *sim);
void sim_ring_hw_start(struct sim *sim, struct sim_ring *r);
void *sim_driver_thread(void *arg);
void sim_device_lost(struct sim *sim);
void sim_queue_reap_dead(struct sim *sim);

#endif /* SPYRE_SIM_H */
