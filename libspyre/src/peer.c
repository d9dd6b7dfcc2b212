// SPDX-License-Identifier: MIT
/*
 * Copies between two cards. Device memory to device memory goes card to
 * card when the cards can reach each other (peer DMA, card interface
 * 1.13): the destination card's DMA engine reads the source card's BAR2
 * through a peer BO (the driver's PRIME import of the source BO), one
 * COPY on the destination stream. Otherwise (host buffers, cards of
 * different backends, an older card or driver, cards under different PCI
 * host bridges, SPYRE_PEER_DMA=0) the bytes go through host memory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/*
 * Importing the same BO twice into one file gives the same handle, and
 * closing it ends both: one peer copy at a time imports, submits and
 * closes.
 */
static pthread_mutex_t peer_lock = PTHREAD_MUTEX_INITIALIZER;

static bool spyre_peer_dma_enabled(void)
{
	const char *v = getenv("SPYRE_PEER_DMA");

	return !v || strcmp(v, "0");
}

/* Why the cards cannot do peer DMA: the caller falls back to the host. */
static bool peer_unreachable(int ret)
{
	return ret == -EOPNOTSUPP || ret == -EXDEV || ret == -ERANGE;
}

/*
 * @size bytes card to card on @dst_stream, after @src_stream's earlier
 * work; 1 when the cards cannot reach each other, else 0 or -errno.
 */
static int copy_peer_dma(spyre_stream *dst_stream, const struct spyre_buf *dst,
			 spyre_stream *src_stream, const struct spyre_buf *src, uint64_t size,
			 const char *call)
{
	spyre_device *dev = dst->bo->dev, *owner = src->bo->dev;
	struct drm_spyre_cmd c = { .type = DRM_SPYRE_CMD_COPY };
	uint64_t point = 0;
	uint32_t handle;
	int ret;

	if (!dev->ops->bo_peer_import || dev == owner)
		return 1;
	/* The source card's writes of the bytes must be done: the card does not see them. */
	ret = spyre_stream_synchronize(src_stream);
	if (ret)
		return ret;
	pthread_mutex_lock(&peer_lock);
	ret = dev->ops->bo_peer_import(dev, owner, src->bo->handle, &handle);
	if (ret) {
		pthread_mutex_unlock(&peer_lock);
		if (peer_unreachable(ret))
			return 1;
		return spy_dev_err(dev, ret, call, "importing a BO of %s", owner->name);
	}
	c.copy.src_handle = handle;
	c.copy.src_offset = src->offset;
	c.copy.dst_handle = dst->bo->handle;
	c.copy.dst_offset = dst->offset;
	c.copy.size = size;
	ret = spy_submit_cmds(dst_stream, &c, 1, call, &point);
	/* the job holds the peer BO: the handle may go now */
	dev->ops->bo_close(dev, handle);
	pthread_mutex_unlock(&peer_lock);
	if (ret)
		return ret;
	/* "returns once everything was read from the source" */
	return spy_stream_wait_point(dst_stream, point);
}

static int copy_through_host(spyre_stream *dst_stream, const struct spyre_buf *dst,
			     spyre_stream *src_stream, const struct spyre_buf *src, uint64_t size,
			     const char *call)
{
	enum { CHUNK = 4 << 20 };
	uint64_t done;
	void *tmp;
	int ret = 0;

	tmp = malloc(size < CHUNK ? size : CHUNK);
	if (!tmp)
		return spy_err(-ENOMEM, "%s: out of memory", call);
	/* In chunks: each read waits for the source stream's work. */
	for (done = 0; done < size && !ret; done += CHUNK) {
		uint64_t n = size - done < CHUNK ? size - done : CHUNK;
		struct spyre_buf s = { src->bo, src->offset + done, n };
		struct spyre_buf d = { dst->bo, dst->offset + done, n };

		ret = spyre_memcpy_to_host(src_stream, tmp, &s, n);
		if (!ret)
			ret = spyre_memcpy_from_host_async(dst_stream, &d, tmp, n);
	}
	free(tmp);
	return ret;
}

int spyre_memcpy_peer(spyre_stream *dst_stream, const struct spyre_buf *dst,
		      spyre_stream *src_stream, const struct spyre_buf *src, uint64_t size)
{
	static const char *call = "spyre_memcpy_peer";
	int ret;

	ret = spy_check_stream_buf(dst_stream, dst, call);
	if (!ret)
		ret = spy_check_stream_buf(src_stream, src, call);
	if (ret)
		return ret;
	if (size > dst->size || size > src->size)
		return spy_err(-EINVAL, "%s: %llu bytes do not fit the buffers", call,
			       (unsigned long long)size);
	if (!size)
		return 0;
	if (dst->bo->mem == SPYRE_MEM_DEVICE && src->bo->mem == SPYRE_MEM_DEVICE &&
	    spyre_peer_dma_enabled()) {
		ret = copy_peer_dma(dst_stream, dst, src_stream, src, size, call);
		if (ret <= 0)
			return ret;
	}
	return copy_through_host(dst_stream, dst, src_stream, src, size, call);
}

int spyre_device_can_peer(spyre_device *dev, spyre_device *peer)
{
	uint32_t owner_handle, handle;
	int ret;

	if (!dev || !peer)
		return spy_err(-EINVAL, "spyre_device_can_peer: NULL device");
	if (dev == peer || !dev->ops->bo_peer_import || !spyre_peer_dma_enabled())
		return 0;
	/* A probe: import a page of @peer's memory, as a copy would. */
	ret = peer->ops->bo_create(peer, 4096, DRM_SPYRE_PLACEMENT_DEVICE, &owner_handle);
	if (ret)
		return spy_dev_err(peer, ret, "spyre_device_can_peer", "probe BO");
	pthread_mutex_lock(&peer_lock);
	ret = dev->ops->bo_peer_import(dev, peer, owner_handle, &handle);
	if (!ret)
		dev->ops->bo_close(dev, handle);
	pthread_mutex_unlock(&peer_lock);
	peer->ops->bo_close(peer, owner_handle);
	if (!ret)
		return 1;
	if (peer_unreachable(ret))
		return 0;
	return spy_dev_err(dev, ret, "spyre_device_can_peer", "importing a BO of %s",
			   peer->name);
}
