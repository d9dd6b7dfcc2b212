// SPDX-License-Identifier: MIT
/*
 * Copies and fills beyond one BO range to another: pageable host memory
 * (through staging blocks), strided 2-D/3-D copies (one COPY command per
 * row, as few submissions as the command limit allows), fills of 1-, 2-
 * and 4-byte patterns at any alignment (a 4-byte FILL for the aligned
 * middle, staged copies for the ragged ends). Copies between cards are
 * in peer.c.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int spy_check_stream_buf(struct spyre_stream *s, const struct spyre_buf *b, const char *call)
{
	if (!s || !b || !b->bo)
		return spy_err(-EINVAL, "%s: stream or buffer is NULL", call);
	if (b->bo->dev != s->dev)
		return spy_err(-EXDEV, "%s: buffer of %s on a stream of %s", call, b->bo->dev->name,
			       s->dev->name);
	return 0;
}

int spyre_memcpy_from_host_async(spyre_stream *s, const struct spyre_buf *dst, const void *src,
				 uint64_t size)
{
	static const char *call = "spyre_memcpy_from_host_async";
	struct spyre_buf stage;
	struct drm_spyre_cmd c;
	uint64_t point;
	void *p;
	int ret = spy_check_stream_buf(s, dst, call);

	if (ret)
		return ret;
	if (size && !src)
		return spy_err(-EINVAL, "%s: src is NULL", call);
	if (!size)
		return 0;
	ret = spy_staging_alloc(s->dev, size, &stage, &p);
	if (ret)
		return spy_dev_err(s->dev, ret, call, "staging %llu bytes", (unsigned long long)size);
	memcpy(p, src, size);	/* the caller may reuse @src when we return */
	ret = spy_cmd_copy(call, &c, dst, &stage, size);
	if (!ret)
		ret = spy_submit_cmds(s, &c, 1, call, &point);
	if (ret) {
		spy_staging_free(s->dev, &stage);
		return ret;
	}
	spy_staging_release_after(s->dev, &stage, s, point);
	return 0;
}

int spyre_memcpy_to_host(spyre_stream *s, void *dst, const struct spyre_buf *src, uint64_t size)
{
	static const char *call = "spyre_memcpy_to_host";
	struct spyre_buf stage;
	struct drm_spyre_cmd c;
	uint64_t point;
	void *p;
	int ret = spy_check_stream_buf(s, src, call);

	if (ret)
		return ret;
	if (size && !dst)
		return spy_err(-EINVAL, "%s: dst is NULL", call);
	if (!size)
		return 0;
	ret = spy_staging_alloc(s->dev, size, &stage, &p);
	if (ret)
		return spy_dev_err(s->dev, ret, call, "staging %llu bytes", (unsigned long long)size);
	ret = spy_cmd_copy(call, &c, &stage, src, size);
	if (!ret)
		ret = spy_submit_cmds(s, &c, 1, call, &point);
	if (!ret) {
		ret = spy_stream_wait_point(s, point);
		if (!ret)
			ret = s->dev->ops->fence_error(s->dev, s->timeline, point);
		if (ret)
			spy_dev_err(s->dev, ret, call, "the copy failed on the card");
	}
	if (!ret)
		memcpy(dst, p, size);
	spy_staging_free(s->dev, &stage);
	return ret;
}

/* Does [off, off + span) fit in @b? */
static bool fits(const struct spyre_buf *b, uint64_t off, uint64_t span)
{
	return off <= b->size && span <= b->size - off && b->offset <= b->bo->size &&
	       b->size <= b->bo->size - b->offset;
}

/* Bytes from the first to one past the last byte a strided walk touches. */
static bool span_of(const struct spyre_copy3d *c, uint64_t pitch, uint64_t slice, uint64_t *span)
{
	uint64_t a, b;

	if (c->height > 1 && pitch > (UINT64_MAX - c->width) / (c->height - 1))
		return false;
	a = (c->height - 1) * pitch + c->width;
	if (c->depth > 1 && slice > (UINT64_MAX - a) / (c->depth - 1))
		return false;
	b = (c->depth - 1) * slice;
	*span = a + b;
	return true;
}

int spyre_memcpy3d_async(spyre_stream *s, const struct spyre_copy3d *c)
{
	static const char *call = "spyre_memcpy3d_async";
	struct drm_spyre_cmd *cmds, proto;
	uint64_t dspan, sspan, y, z, n, rows;
	int ret;

	if (!c)
		return spy_err(-EINVAL, "%s: copy is NULL", call);
	ret = spy_check_stream_buf(s, &c->dst, call);
	if (!ret)
		ret = spy_check_stream_buf(s, &c->src, call);
	if (ret)
		return ret;
	if (!c->width || !c->height || !c->depth)
		return 0;
	if (c->dst_pitch < c->width || c->src_pitch < c->width ||
	    (c->depth > 1 && (c->dst_slice < c->height * c->dst_pitch ||
			      c->src_slice < c->height * c->src_pitch)))
		return spy_err(-EINVAL, "%s: %s: pitches shorter than a row (or slices than a "
			       "plane) would overlap rows", call, s->dev->name);
	if (!span_of(c, c->dst_pitch, c->dst_slice, &dspan) ||
	    !span_of(c, c->src_pitch, c->src_slice, &sspan) || !fits(&c->dst, 0, dspan) ||
	    !fits(&c->src, 0, sspan))
		return spy_err(-EINVAL, "%s: %s: the strided region does not fit its buffer", call,
			       s->dev->name);
	/* Checks of kinds and devices, on the first row. */
	ret = spy_cmd_copy(call, &proto, &c->dst, &c->src, c->width);
	if (ret)
		return ret;
	/* Rows that are contiguous on both sides merge into one command. */
	if (c->dst_pitch == c->width && c->src_pitch == c->width) {
		rows = 1;
		if (c->depth == 1 || (c->dst_slice == c->height * c->width &&
				      c->src_slice == c->height * c->width)) {
			proto.copy.size = c->width * c->height * c->depth;
			return spy_submit_cmds(s, &proto, 1, call, NULL);
		}
		proto.copy.size = c->width * c->height;
	} else {
		rows = c->height;
	}
	if (rows * c->depth > 1u << 20)
		return spy_err(-E2BIG, "%s: %s: %llu rows in one copy (at most %u)", call,
			       s->dev->name, (unsigned long long)(rows * c->depth), 1u << 20);
	cmds = malloc(rows * c->depth * sizeof(*cmds));
	if (!cmds)
		return spy_err(-ENOMEM, "%s: out of memory", call);
	n = 0;
	for (z = 0; z < c->depth; z++) {
		for (y = 0; y < rows; y++) {
			cmds[n] = proto;
			cmds[n].copy.dst_offset = c->dst.offset + z * c->dst_slice + y * c->dst_pitch;
			cmds[n].copy.src_offset = c->src.offset + z * c->src_slice + y * c->src_pitch;
			n++;
		}
	}
	ret = spy_submit_cmds(s, cmds, n, call, NULL);
	free(cmds);
	return ret;
}

int spyre_memcpy2d_async(spyre_stream *s, const struct spyre_buf *dst, uint64_t dst_pitch,
			 const struct spyre_buf *src, uint64_t src_pitch, uint64_t width,
			 uint64_t height)
{
	struct spyre_copy3d c;

	if (!dst || !src)
		return spy_err(-EINVAL, "spyre_memcpy2d_async: dst or src is NULL");
	memset(&c, 0, sizeof(c));
	c.dst = *dst;
	c.src = *src;
	c.dst_pitch = dst_pitch;
	c.src_pitch = src_pitch;
	c.width = width;
	c.height = height;
	c.depth = 1;
	return spyre_memcpy3d_async(s, &c);
}

/* Byte @i of the repeated @psize-byte @pattern (little endian). */
static uint8_t pattern_byte(uint32_t pattern, unsigned int psize, uint64_t i)
{
	return (uint8_t)(pattern >> (8 * (i % psize)));
}

int spyre_memset_async(spyre_stream *s, const struct spyre_buf *dst, uint32_t pattern,
		       unsigned int pattern_size, uint64_t size)
{
	static const char *call = "spyre_memset_async";
	uint64_t start, head, mid, tail, k;
	struct drm_spyre_cmd cmds[3];
	struct spyre_buf stage, part;
	unsigned int n = 0;
	uint8_t *p = NULL;
	uint32_t word = 0;
	uint64_t point;
	int ret = spy_check_stream_buf(s, dst, call);

	if (ret)
		return ret;
	if (pattern_size != 1 && pattern_size != 2 && pattern_size != 4)
		return spy_err(-EINVAL, "%s: %s: pattern size %u (1, 2 or 4)", call, s->dev->name,
			       pattern_size);
	if (size % pattern_size)
		return spy_err(-EINVAL, "%s: %s: %llu bytes is not a whole number of %u-byte "
			       "patterns", call, s->dev->name, (unsigned long long)size,
			       pattern_size);
	if (!fits(dst, 0, size))
		return spy_err(-EINVAL, "%s: %s: %llu bytes do not fit the buffer", call,
			       s->dev->name, (unsigned long long)size);
	if (dst->bo->mem != SPYRE_MEM_DEVICE)
		return spy_err(-EINVAL, "%s: %s: fill needs device memory; fill host memory with "
			       "the CPU", call, s->dev->name);
	if (!size)
		return 0;
	start = dst->offset;
	head = (4 - (start & 3)) & 3;
	if (head > size)
		head = size;
	mid = (size - head) & ~3ull;
	tail = size - head - mid;
	/* The 4-byte word at each aligned address, in the pattern's phase there. */
	for (k = 0; k < 4; k++)
		word |= (uint32_t)pattern_byte(pattern, pattern_size, head + k) << (8 * k);
	if (head || tail) {
		ret = spy_staging_alloc(s->dev, 8, &stage, (void **)&p);
		if (ret)
			return spy_dev_err(s->dev, ret, call, "staging the unaligned ends");
		for (k = 0; k < head; k++)
			p[k] = pattern_byte(pattern, pattern_size, k);
		for (k = 0; k < tail; k++)
			p[4 + k] = pattern_byte(pattern, pattern_size, head + mid + k);
	}
	if (head) {
		part = (struct spyre_buf){ dst->bo, dst->offset, head };
		ret = spy_cmd_copy(call, &cmds[n++], &part,
				   &(struct spyre_buf){ stage.bo, stage.offset, head }, head);
	}
	if (!ret && mid) {
		part = (struct spyre_buf){ dst->bo, dst->offset + head, mid };
		ret = spy_cmd_fill(call, &cmds[n++], &part, word, mid);
	}
	if (!ret && tail) {
		part = (struct spyre_buf){ dst->bo, dst->offset + head + mid, tail };
		ret = spy_cmd_copy(call, &cmds[n++], &part,
				   &(struct spyre_buf){ stage.bo, stage.offset + 4, tail }, tail);
	}
	if (!ret)
		ret = spy_submit_cmds(s, cmds, n, call, &point);
	if (p) {
		if (ret)
			spy_staging_free(s->dev, &stage);
		else
			spy_staging_release_after(s->dev, &stage, s, point);
	}
	return ret;
}
