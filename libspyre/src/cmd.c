// SPDX-License-Identifier: MIT
/*
 * Building the uAPI's typed commands from library operands, with the checks
 * the driver would do, so a bad argument gets a precise message here
 * instead of a bare -EINVAL from the ioctl.
 */
#include <string.h>

#include "internal.h"

/* @b must name a BO and [offset, offset + size) must lie inside it and inside b->size. */
static int check_range(const char *call, const char *what, const struct spyre_buf *b,
		       uint64_t size)
{
	if (!b || !b->bo)
		return spy_err(-EINVAL, "%s: %s buffer is NULL", call, what);
	if (size > b->size)
		return spy_err(-EINVAL, "%s: %s: %llu bytes do not fit the %llu-byte buffer",
			       call, b->bo->dev->name, (unsigned long long)size,
			       (unsigned long long)b->size);
	if (b->offset > b->bo->size || b->size > b->bo->size - b->offset)
		return spy_err(-EINVAL, "%s: %s: %s range [%llu, +%llu) lies outside its "
			       "%llu-byte BO", call, b->bo->dev->name, what,
			       (unsigned long long)b->offset, (unsigned long long)b->size,
			       (unsigned long long)b->bo->size);
	return 0;
}

int spy_cmd_copy(const char *call, struct drm_spyre_cmd *c, const struct spyre_buf *dst,
		 const struct spyre_buf *src, uint64_t size)
{
	int ret = check_range(call, "destination", dst, size);

	if (!ret)
		ret = check_range(call, "source", src, size);
	if (ret)
		return ret;
	if (dst->bo->dev != src->bo->dev)
		return spy_err(-EXDEV, "%s: source and destination belong to different devices "
			       "(%s, %s)", call, src->bo->dev->name, dst->bo->dev->name);
	if (dst->bo->mem == SPYRE_MEM_HOST && src->bo->mem == SPYRE_MEM_HOST)
		return spy_err(-EINVAL, "%s: %s: host-to-host copy; use memcpy on the mappings",
			       call, dst->bo->dev->name);
	memset(c, 0, sizeof(*c));
	c->type = DRM_SPYRE_CMD_COPY;
	c->copy.src_handle = src->bo->handle;
	c->copy.dst_handle = dst->bo->handle;
	c->copy.src_offset = src->offset;
	c->copy.dst_offset = dst->offset;
	c->copy.size = size;
	return 0;
}

int spy_cmd_fill(const char *call, struct drm_spyre_cmd *c, const struct spyre_buf *dst,
		 uint32_t pattern, uint64_t size)
{
	int ret = check_range(call, "destination", dst, size);

	if (ret)
		return ret;
	if (dst->bo->mem != SPYRE_MEM_DEVICE)
		return spy_err(-EINVAL, "%s: %s: fill needs device memory; fill host memory with "
			       "the CPU", call, dst->bo->dev->name);
	if ((dst->offset | size) & 3)
		return spy_err(-EINVAL, "%s: %s: offset %llu and size %llu must be multiples of 4",
			       call, dst->bo->dev->name, (unsigned long long)dst->offset,
			       (unsigned long long)size);
	memset(c, 0, sizeof(*c));
	c->type = DRM_SPYRE_CMD_FILL;
	c->fill.handle = dst->bo->handle;
	c->fill.pattern = pattern;
	c->fill.offset = dst->offset;
	c->fill.size = size;
	return 0;
}

int spy_cmd_launch(const char *call, struct drm_spyre_cmd *c, struct drm_spyre_bo_range *ranges,
		   const spyre_program *prog, const struct spyre_buf *args, unsigned int nargs,
		   const struct spyre_buf *ws)
{
	spyre_device *dev;
	unsigned int i;
	int ret;

	if (!prog)
		return spy_err(-EINVAL, "%s: program is NULL", call);
	dev = prog->dev;
	if (nargs && !args)
		return spy_err(-EINVAL, "%s: %s: %u arguments but args is NULL", call, dev->name,
			       nargs);
	if (nargs > dev->max_args || nargs > SPY_MAX_ARGS)
		return spy_err(-E2BIG, "%s: %s: %u arguments, the device takes at most %llu", call,
			       dev->name, nargs, (unsigned long long)dev->max_args);
	if (nargs < prog->num_args)
		return spy_err(-EINVAL, "%s: %s: the program uses %u argument slots, %u bound",
			       call, dev->name, prog->num_args, nargs);
	for (i = 0; i < nargs; i++) {
		ret = check_range(call, "argument", &args[i], args[i].size);
		if (ret)
			return ret;
		if (args[i].bo->dev != dev)
			return spy_err(-EXDEV, "%s: argument %u belongs to %s, not %s", call, i,
				       args[i].bo->dev->name, dev->name);
		if (args[i].bo->mem != SPYRE_MEM_DEVICE)
			return spy_err(-EINVAL, "%s: %s: argument %u is host memory; compute "
				       "operands must be device memory", call, dev->name, i);
		ranges[i].handle = args[i].bo->handle;
		ranges[i].pad = 0;
		ranges[i].offset = args[i].offset;
		ranges[i].size = args[i].size;
	}
	if (ws && ws->bo) {
		ret = check_range(call, "workspace", ws, ws->size);
		if (ret)
			return ret;
		if (ws->bo->mem != SPYRE_MEM_DEVICE)
			return spy_err(-EINVAL, "%s: %s: the workspace must be device memory",
				       call, dev->name);
	}
	if (prog->ws_size && (!ws || !ws->bo || ws->size < prog->ws_size))
		return spy_err(-EINVAL, "%s: %s: the program needs a %llu-byte workspace, %llu "
			       "bound", call, dev->name, (unsigned long long)prog->ws_size,
			       (unsigned long long)(ws && ws->bo ? ws->size : 0));
	memset(c, 0, sizeof(*c));
	c->type = DRM_SPYRE_CMD_LAUNCH;
	c->launch.prog_handle = prog->bo->handle;
	c->launch.prog_offset = 0;
	c->launch.prog_size = prog->size;
	if (ws && ws->bo) {
		c->launch.ws_handle = ws->bo->handle;
		c->launch.ws_offset = ws->offset;
		c->launch.ws_size = ws->size;
	}
	c->launch.args = (uintptr_t)ranges;
	c->launch.nargs = nargs;
	c->launch.args_stride = sizeof(struct drm_spyre_bo_range);
	return 0;
}

void spy_cmd_timestamp(struct drm_spyre_cmd *c, spyre_bo *bo, uint64_t offset)
{
	memset(c, 0, sizeof(*c));
	c->type = DRM_SPYRE_CMD_TIMESTAMP;
	c->timestamp.handle = bo->handle;
	c->timestamp.offset = offset;
}
