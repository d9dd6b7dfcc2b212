/* SPDX-License-Identifier: MIT */
/*
 * Recipes, shared by building (recipe_build.c: steps, nodes, issue order)
 * and launching (recipe_launch.c: instances, binding, enqueueing).
 */
#ifndef SPYRE_RECIPE_H_LIB
#define SPYRE_RECIPE_H_LIB

#include "internal.h"

#define MAX_EVENTS 16

enum step_kind { ST_HOST, ST_H2D, ST_D2H, ST_D2D, ST_COMPUTE, ST_SIGNAL, ST_WAIT, ST_TIMESTAMP };

struct rstep {
	enum step_kind kind;
	unsigned int stream;
	struct spyre_operand dst, src;	/* copies */
	uint64_t size;
	const spyre_program *prog;	/* compute */
	struct spyre_operand args[16];
	unsigned int nargs;
	struct spyre_operand ws;
	spyre_recipe_host_fn fn;	/* host */
	void *user;
	unsigned int event;
	unsigned int node;		/* assigned at finalize */
};

/* A field of a command that takes an argument slot at launch. */
enum patch_field { PF_SRC, PF_DST, PF_RANGE, PF_TS };

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
};

struct instance {
	spyre_recipe *r;
	struct spy_op *ops;
	struct drm_spyre_cmd *cmds;
	struct drm_spyre_bo_range *ranges;
	struct spyre_buf *args;
	unsigned int outstanding;
};

struct spyre_recipe {
	spyre_device *dev;
	unsigned int nstreams, nargs;
	spyre_bo *ws;
	uint64_t ws_size;
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
	struct instance inst[SPYRE_RECIPE_INFLIGHT];
};

/* recipe_launch.c: the per-launch copies of the commands, made at finalize. */
int spy_recipe_make_instances(spyre_recipe *r);
/* Wait until no launch still needs the instances, then free them. */
void spy_recipe_free_instances(spyre_recipe *r);

#endif /* SPYRE_RECIPE_H_LIB */
