// SPDX-License-Identifier: MIT
/*
 * Programs: a card program image checked for a sane header and uploaded
 * into a device BO through a host staging BO and one DMA copy.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "spyre_isa.h"

/* Copy @size bytes of @data into device BO @dst through a staging host BO. */
int spy_upload(spyre_device *dev, spyre_bo *dst, const void *data, uint64_t size,
	       const char *call)
{
	spyre_bo *staging = NULL;
	spyre_stream *s = NULL;
	struct spyre_buf sb, db;
	void *map;
	int ret;

	ret = spyre_bo_create(dev, size, SPYRE_MEM_HOST, &staging);
	if (!ret)
		ret = spyre_bo_map(staging, &map);
	if (!ret) {
		memcpy(map, data, size);
		ret = spyre_stream_create(dev, SPYRE_ENGINE_DMA, &s);
	}
	if (!ret) {
		sb = spyre_bo_buf(staging);
		db = spyre_bo_buf(dst);
		ret = spyre_memcpy_async(s, &db, &sb, size);
	}
	if (!ret)
		ret = spyre_stream_synchronize(s);
	if (s) {
		int r2 = spyre_stream_destroy(s);

		if (!ret)
			ret = r2;
	}
	if (staging)
		spyre_bo_destroy(staging);
	if (ret)
		return spy_dev_err(dev, ret, call, "uploading %llu bytes failed: %s",
				   (unsigned long long)size, spyre_last_error());
	return 0;
}

int spyre_program_load(spyre_device *dev, const void *image, size_t size, spyre_program **out)
{
	struct spyre_prog_header h;
	spyre_program *p;
	int ret;

	if (!dev || !image || !out)
		return spy_err(-EINVAL, "spyre_program_load: device, image or out is NULL");
	if (size < sizeof(h))
		return spy_err(-EINVAL, "spyre_program_load: %s: %zu bytes is shorter than a "
			       "program header", dev->name, size);
	memcpy(&h, image, sizeof(h));
	if (h.magic != SPYRE_PROG_MAGIC || h.version != SPYRE_PROG_VERSION ||
	    h.header_size != SPYRE_PROG_HEADER_SIZE)
		return spy_err(-EINVAL, "spyre_program_load: %s: not a version %d Spyre program "
			       "(magic 0x%08x, version %u)", dev->name, SPYRE_PROG_VERSION, h.magic,
			       h.version);
	if (!h.num_insns || h.num_insns > SPYRE_PROG_MAX_INSNS ||
	    size < SPYRE_PROG_HEADER_SIZE + (uint64_t)h.num_insns * SPYRE_PROG_INSN_SIZE)
		return spy_err(-EINVAL, "spyre_program_load: %s: the header announces %u "
			       "instructions, the image holds %zu bytes", dev->name, h.num_insns,
			       size);
	p = calloc(1, sizeof(*p));
	if (!p)
		return spy_err(-ENOMEM, "spyre_program_load: out of memory");
	ret = spyre_bo_create(dev, size, SPYRE_MEM_DEVICE, &p->bo);
	if (!ret)
		ret = spy_upload(dev, p->bo, image, size, "spyre_program_load");
	if (ret) {
		if (p->bo)
			spyre_bo_destroy(p->bo);
		free(p);
		return ret;
	}
	p->dev = dev;
	p->size = size;
	p->num_args = h.num_slots;
	p->ws_size = h.workspace_size;
	spy_dev_get(dev);
	*out = p;
	return 0;
}

int spyre_program_destroy(spyre_program *p)
{
	if (!p)
		return spy_err(-EINVAL, "spyre_program_destroy: program is NULL");
	spyre_bo_destroy(p->bo);
	spy_dev_put(p->dev);
	free(p);
	return 0;
}

unsigned int spyre_program_num_args(const spyre_program *p)
{
	return p ? p->num_args : 0;
}

uint64_t spyre_program_workspace_size(const spyre_program *p)
{
	return p ? p->ws_size : 0;
}
