/* SPDX-License-Identifier: MIT */
/*
 * Recipes, shared by building (recipe_build.c: steps, nodes, issue order)
 * and launching (recipe_launch.c: instances, binding, enqueueing).
 */
#ifndef SPYRE_RECIPE_H_LIB
#define SPYRE_RECIPE_H_LIB

#include "internal.h"
#include "stream_use.h"

#define MAX_EVENTS 16

enum step_kind { ST_HOST, ST_H2D, ST_D2H, ST_D2D, ST_COMPUTE, ST_SIGNAL, ST_WAIT, ST_TIMESTAMP };

struct rstep {
	enum step_kind kind;
	unsigned int stream;
	struct spyre_operand dst, src;	/* copies */
	uint64_t size;
	const spyre_program *prog;	/* compute */
	struct spyre_operand args[SPY_MAX_ARGS];
	unsigned int nargs;
	struct spyre_operand ws;
	spyre_recipe_host_fn fn;	/* host */
	void *user;
	unsigned int event;
	unsigned int node;		/* assigned at finalize */
	bool uses_scalars;		/* an operand is in the scalar block */
};

/* A field of a command that is filled in at launch. */
enum patch_field { PF_SRC, PF_DST, PF_RANGE, PF_TS, PF_LAUNCH_WS };

/*
 * Where a patched field points: an argument slot (op.arg), the launch's
 * workspace copy (op.offset), or the launch's profiling slot of step
 * op.arg.
 */
#define SPY_OPERAND_PROF 0x100
/* The launch's scalar bytes in host memory, the source of a node's scalar copy. */
#define SPY_OPERAND_SCAL_HOST 0x101

struct patch {
	unsigned int node, cmd, range;
	enum patch_field field;
	struct spyre_operand op;
	uint64_t need;			/* bytes the step uses */
	enum spyre_mem mem;		/* placement the step needs */
};

struct rnode {
	unsigned int stream;
	bool host;
	spyre_recipe_host_fn fn;
	void *user;
	unsigned int ncmds, cmd0;	/* into the template command array */
	unsigned int nranges, range0;
	unsigned int deps[SPY_MAX_DEPS - 4];
	unsigned int ndeps;
	bool first, last;		/* first / last node of its stream slot */
	bool scalars;			/* starts with a copy of the scalar block */
};

struct instance {
	spyre_recipe *r;
	struct spy_op *ops;
	struct drm_spyre_cmd *cmds;
	struct drm_spyre_bo_range *ranges;
	struct spyre_buf *args;
	unsigned int outstanding;	/* atomic: its ops not issued yet */
	unsigned int index;
	/*
	 * The workspace copy its internal fields (workspace, scalar blocks,
	 * profiling slots) point at, -1 before its first launch: they depend
	 * on the instance and that copy only, so a launch rebinds them only
	 * when the copy changes.
	 */
	int bound_ws;
	struct spy_dep *scal_dep;	/* per node: its last scalar copy (ref held) */
};

struct spyre_recipe {
	spyre_device *dev;
	unsigned int nstreams, nargs;
	spyre_bo **ws;			/* nws copies of the workspace */
	uint64_t ws_size;
	unsigned int depth, nws;	/* launches in flight, workspace copies */
	/*
	 * Per workspace copy and stream slot: the last point of the launch
	 * that used it last (stream reference held). The next launch on that
	 * copy waits for them on the device.
	 */
	struct spy_dep *ws_last;
	uint32_t scal_size, scal_stride;	/* scalar block, bytes */
	spyre_bo *scal_host, *scal_dev;	/* depth blocks; depth x nnodes blocks */
	uint8_t *scal_map;
	bool profile;			/* a TIMESTAMP after every device step */
	spyre_bo *prof_bo;		/* depth x nsteps timestamps */
	uint64_t *prof;
	struct rstep *steps;
	unsigned int nsteps, cap;
	bool final;
	pthread_mutex_t lock;		/* launches */
	uint64_t launches;

	struct rnode *nodes;
	unsigned int nnodes, nsubmits;
	unsigned int *order;
	struct drm_spyre_cmd *tmpl;
	unsigned int ncmds;
	unsigned int nranges;
	struct drm_spyre_bo_range *tmpl_ranges;
	struct patch *patches;
	unsigned int npatches;
	struct instance *inst;		/* depth of them */
	/* Per stream slot: the engines its nodes run on (SPY_ENGINE_BIT). */
	unsigned int *slot_engines;
	/*
	 * A launch's new ws_last and scal_dep entries, collected while it
	 * enqueues and stored with one spy_deps_hold at its end (2 x nnodes;
	 * under r->lock).
	 */
	struct spy_dep **hold_slots;
	struct spy_dep *hold_vals;
};

/* recipe_launch.c: the per-launch copies of the commands, made at finalize. */
int spy_recipe_make_instances(spyre_recipe *r);
/* Wait until no launch still needs the instances, then free them. */
void spy_recipe_free_instances(spyre_recipe *r);

#endif /* SPYRE_RECIPE_H_LIB */
