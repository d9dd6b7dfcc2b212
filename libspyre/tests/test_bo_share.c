// SPDX-License-Identifier: MIT
/*
 * Device memory shared by fd (spyre_bo_export / spyre_bo_import_peer), as
 * another process would receive it: here two open devices of one process
 * (two cards, or two sim instances of one card index), which is the same
 * path on both backends (a dma-buf on drm, the card's memfd on the sim).
 */
#include <string.h>
#include <unistd.h>

#include "harness.h"

TEST(bo_share_between_cards)
{
	enum { SZ = 3 << 20 };
	uint8_t *host = malloc(SZ), *out = malloc(SZ);
	struct spyre_device_props props;
	struct spyre_bo_export ex;
	struct spyre_buf ba, bb, bp;
	spyre_bo *a, *b, *h, *peer;
	void *hmap;
	spyre_stream *s1, *s2;
	spyre_device *d2;
	int cards = 1, ret;

	ASSERT(host && out, "malloc");
	spyre_device_count(SPYRE_BACKEND_DEFAULT, &cards);
	OK(spyre_device_get_props(dev, &props));
	OK(spyre_device_open(cards > 1 ? 1 : 0, &d2));
	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &s1));
	OK(spyre_stream_create(d2, SPYRE_ENGINE_DMA, &s2));
	OK(spyre_bo_create(dev, SZ, SPYRE_MEM_DEVICE, &a));
	OK(spyre_bo_create(d2, SZ, SPYRE_MEM_DEVICE, &b));
	OK(host_bo(dev, 4096, &h, &hmap));
	FAILS_WITH(spyre_bo_export(h, &ex), -EINVAL, "only device BOs");
	OK(spyre_bo_export(a, &ex));
	CHECK(ex.fd >= 0 && ex.size == SZ, "export: fd %d, size %llu", ex.fd,
	      (unsigned long long)ex.size);
	/* a card's own memory is no peer of it */
	FAILS_WITH(spyre_bo_import_peer(dev, &ex, &peer), -EXDEV, "spyre_bo_import_peer");
	ret = spyre_bo_import_peer(d2, &ex, &peer);
	if (ret == -EXDEV && !strcmp(props.backend, "drm") && cards < 2) {
		/* one drm card: the second open is the same card */
		close(ex.fd);
		goto out;
	}
	OK(ret);
	close(ex.fd); /* the peer BO does not need it */
	CHECK(spyre_bo_mem(peer) == SPYRE_MEM_PEER, "mem %d", (int)spyre_bo_mem(peer));
	ba = spyre_bo_buf(a);
	bb = spyre_bo_buf(b);
	bp = spyre_bo_buf(peer);

	/* P2D: card 2 reads card 1's bytes */
	fill_pat(host, SZ, 3, 0);
	OK(spyre_memcpy_from_host_async(s1, &ba, host, SZ));
	OK(spyre_stream_synchronize(s1));
	OK(spyre_memcpy_async(s2, &bb, &bp, SZ));
	OK(spyre_memcpy_to_host(s2, out, &bb, SZ));
	CHECK(diff_pat(out, SZ, 3, 0) < 0, "P2D: byte %lld differs",
	      (long long)diff_pat(out, SZ, 3, 0));

	/* D2P: card 2 writes into card 1's memory at an odd offset */
	fill_pat(host, SZ, 8, 0);
	OK(spyre_memcpy_from_host_async(s2, &bb, host, SZ));
	bp = (struct spyre_buf){ peer, 5, SZ - 9 };
	OK(spyre_memcpy_async(s2, &bp, &bb, SZ - 9));
	OK(spyre_stream_synchronize(s2));
	OK(spyre_memcpy_to_host(s1, out, &ba, SZ));
	CHECK(diff_pat(out + 5, SZ - 9, 8, 0) < 0, "D2P: byte %lld differs",
	      (long long)diff_pat(out + 5, SZ - 9, 8, 0));
	CHECK(diff_pat(out, 5, 3, 0) < 0 && diff_pat(out + SZ - 4, 4, 3, SZ - 4) < 0,
	      "D2P wrote outside its range");
	bp = (struct spyre_buf){ peer, 1, SZ };
	FAILS_WITH(spyre_memcpy_async(s2, &bp, &bb, SZ), -EINVAL, "");
	OK(spyre_bo_destroy(peer));

	ex.fd = -1;
	FAILS_WITH(spyre_bo_import_peer(d2, &ex, &peer), -EINVAL, "fd -1");
out:
	OK(spyre_stream_destroy(s1));
	OK(spyre_stream_destroy(s2));
	spyre_bo_destroy(a);
	spyre_bo_destroy(b);
	spyre_bo_destroy(h);
	OK(spyre_device_close(d2));
	free(host);
	free(out);
}
