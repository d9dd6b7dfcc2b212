// SPDX-License-Identifier: MIT
/*
 * The public asynchronous calls: each checks its arguments, builds one
 * command (cmd.c) or a host work item, and enqueues it on the stream.
 */
#include <string.h>

#include "stream.h"

/* Issue (or defer) a one-command op: the body of every async call. */
static int submit_one(struct spyre_stream *s, struct drm_spyre_cmd *cmd, const char *call)
{
	return spy_submit_cmds(s, cmd, 1, call, NULL);
}

int spyre_memcpy_async(spyre_stream *s, const struct spyre_buf *dst, const struct spyre_buf *src,
		       uint64_t size)
{
	struct drm_spyre_cmd c;
	int ret;

	if (!s)
		return spy_err(-EINVAL, "spyre_memcpy_async: stream is NULL");
	ret = spy_cmd_copy("spyre_memcpy_async", &c, dst, src, size);
	if (ret)
		return ret;
	if (dst->bo->dev != s->dev)
		return spy_err(-EXDEV, "spyre_memcpy_async: buffers of %s on a stream of %s",
			       dst->bo->dev->name, s->dev->name);
	return submit_one(s, &c, "spyre_memcpy_async");
}

int spyre_memset32_async(spyre_stream *s, const struct spyre_buf *dst, uint32_t pattern,
			 uint64_t size)
{
	struct drm_spyre_cmd c;
	int ret;

	if (!s)
		return spy_err(-EINVAL, "spyre_memset32_async: stream is NULL");
	ret = spy_cmd_fill("spyre_memset32_async", &c, dst, pattern, size);
	if (ret)
		return ret;
	if (dst->bo->dev != s->dev)
		return spy_err(-EXDEV, "spyre_memset32_async: buffer of %s on a stream of %s",
			       dst->bo->dev->name, s->dev->name);
	return submit_one(s, &c, "spyre_memset32_async");
}

int spyre_launch_async(spyre_stream *s, const spyre_program *prog, const struct spyre_buf *args,
		       unsigned int nargs, const struct spyre_buf *workspace)
{
	struct drm_spyre_bo_range ranges[SPY_MAX_ARGS];
	struct drm_spyre_cmd c;
	int ret;

	if (!s)
		return spy_err(-EINVAL, "spyre_launch_async: stream is NULL");
	ret = spy_cmd_launch("spyre_launch_async", &c, ranges, prog, args, nargs, workspace);
	if (ret)
		return ret;
	if (prog->dev != s->dev)
		return spy_err(-EXDEV, "spyre_launch_async: program of %s on a stream of %s",
			       prog->dev->name, s->dev->name);
	return submit_one(s, &c, "spyre_launch_async");
}

static void host_body(struct spy_op *op)
{
	op->host_fn(op->user);
}

int spyre_host_work_async(spyre_stream *s, spyre_host_fn fn, void *user)
{
	struct spy_op op;
	int ret;

	if (!s || !fn)
		return spy_err(-EINVAL, "spyre_host_work_async: stream or function is NULL");
	memset(&op, 0, sizeof(op));
	op.kind = SPY_OP_HOST;
	op.fn = host_body;
	op.host_fn = fn;
	op.user = user;
	op.what = "spyre_host_work_async";
	ret = spy_op_enqueue(s, &op);
	if (ret)
		return spy_dev_err(s->dev, ret, "spyre_host_work_async", "queueing host work");
	return 0;
}
