// SPDX-License-Identifier: MIT
/*
 * How much one SUBMIT may carry. The kernel takes at most
 * DRM_SPYRE_PARAM_MAX_CMDS commands per submission and budgets the ring for
 * that many launches of 16 argument slots (1 + ceil(16 / 3) descriptors
 * each); a launch with more slots uses the ring space of several commands
 * (uAPI, DRM_SPYRE_PARAM_MAX_CMDS). The sim backend enforces the same
 * budget. Long command runs (a large compiled graph, a long eager batch)
 * are cut into several submissions against it, in order, and two commands
 * are left over so that a running trace can wrap any submission in its two
 * TIMESTAMPs (trace.c) without going over.
 */
#include "internal.h"
#include "spyre_hw.h"

_Static_assert(SPY_DESCS_PER_CMD == 1 + (SPYRE_MAX_ARGS_V1_6 + SPYRE_ARGS_PER_DESC - 1) /
					     SPYRE_ARGS_PER_DESC,
	       "the kernel budgets each command as a launch of 16 slots");

unsigned int spy_cmd_descs(const struct drm_spyre_cmd *c)
{
	if (c->type == DRM_SPYRE_CMD_LAUNCH)
		return 1 + (c->launch.nargs + SPYRE_ARGS_PER_DESC - 1) / SPYRE_ARGS_PER_DESC;
	return 1;
}

struct spy_budget spy_submit_budget(const spyre_device *dev)
{
	/* a tiny MAX_CMDS (small rings) still fits one launch and its extras */
	uint64_t cmds = dev->max_cmds > 8 ? dev->max_cmds : 8;
	struct spy_budget b;

	b.cmds = (unsigned int)cmds - SPY_TRACE_CMDS;
	b.descs = (unsigned int)cmds * SPY_DESCS_PER_CMD - SPY_TRACE_CMDS;
	return b;
}

unsigned int spy_cmds_fit(const spyre_device *dev, const struct drm_spyre_cmd *cmds,
			  unsigned int n)
{
	struct spy_budget b = spy_submit_budget(dev);
	unsigned int i, descs = 0;

	for (i = 0; i < n && i < b.cmds; i++) {
		descs += spy_cmd_descs(&cmds[i]);
		if (descs > b.descs)
			break;
	}
	return i ? i : 1;	/* one command always goes: a single one always fits */
}
