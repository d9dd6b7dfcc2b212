// SPDX-License-Identifier: MIT
/*
 * spyre-hold: opens card 0, allocates an 8 MiB device BO and a 4 MiB host
 * BO, runs one copy, prints "ready" and keeps everything until its standard
 * input closes. The VM test uses it to check what spyre-smi reports about
 * another process.
 */
#include <stdio.h>

#include "spyre/spyre.h"

int main(void)
{
	struct spyre_buf d, h;
	spyre_stream *s;
	spyre_bo *dbo, *hbo;
	spyre_device *dev;
	char buf[16];

	if (spyre_device_open(0, &dev) ||
	    spyre_bo_create(dev, 8 << 20, SPYRE_MEM_DEVICE, &dbo) ||
	    spyre_bo_create(dev, 4 << 20, SPYRE_MEM_HOST, &hbo) ||
	    spyre_stream_create(dev, SPYRE_ENGINE_DMA, &s)) {
		fprintf(stderr, "spyre-hold: %s\n", spyre_last_error());
		return 1;
	}
	d = spyre_bo_buf(dbo);
	h = spyre_bo_buf(hbo);
	if (spyre_memcpy_async(s, &d, &h, 4 << 20) || spyre_stream_synchronize(s)) {
		fprintf(stderr, "spyre-hold: %s\n", spyre_last_error());
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (fgets(buf, sizeof(buf), stdin))
		;
	spyre_stream_destroy(s);
	spyre_bo_destroy(dbo);
	spyre_bo_destroy(hbo);
	return spyre_device_close(dev) ? 1 : 0;
}
