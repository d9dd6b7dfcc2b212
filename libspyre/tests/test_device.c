// SPDX-License-Identifier: MIT
/* Devices: enumeration, properties, open errors and their messages. */
#include <stdlib.h>

#include "harness.h"
#include "spyre_hw.h"

TEST(device_props)
{
	struct spyre_device_props p;
	uint64_t t0, t1;
	int count = 0;

	OK(spyre_device_count(SPYRE_BACKEND_DEFAULT, &count));
	CHECK(count >= 1, "count %d", count);
	OK(spyre_device_get_props(dev, &p));
	CHECK(!strcmp(p.backend, test_backend), "backend %s", p.backend);
	CHECK(p.num_cores == 32, "cores %u", p.num_cores);
	CHECK(p.scratchpad_size == 2u << 20, "scratchpad %llu",
	      (unsigned long long)p.scratchpad_size);
	CHECK(p.mem_total >= (64u << 20) && p.mem_free <= p.mem_total, "mem %llu/%llu",
	      (unsigned long long)p.mem_free, (unsigned long long)p.mem_total);
	CHECK(p.compute_rings >= 1 && p.dma_rings >= 1, "rings %u/%u", p.compute_rings,
	      p.dma_rings);
	CHECK(p.pci_vendor == 0x1234 && p.pci_device == 0x5350, "pci %x:%x", p.pci_vendor,
	      p.pci_device);
	CHECK(p.max_args >= 3 && p.max_cmds >= 16 && p.max_queues >= 8, "limits");
	CHECK(SPYRE_HW_VERSION_MAJOR_OF(p.hw_version) == 1, "hw version %#x", p.hw_version);
	OK(spyre_device_time_ns(dev, &t0));
	OK(spyre_device_time_ns(dev, &t1));
	CHECK(t1 >= t0, "device time went backwards");
}

TEST(device_open_errors)
{
	spyre_device *d2 = NULL;
	spyre_bo *bo;
	char *old;

	FAILS_WITH(spyre_device_open(99, &d2), -ENODEV, "out of range");
	FAILS_WITH(spyre_device_open(0, NULL), -EINVAL, "NULL");
	FAILS_WITH(spyre_device_open_path("/dev/accel/nonexistent", &d2), -ENOENT,
		   "/dev/accel/nonexistent");
	FAILS_WITH(spyre_device_open_path("/dev/null", &d2), -ENODEV, "not a Spyre device");
	old = getenv("SPYRE_BACKEND") ? strdup(getenv("SPYRE_BACKEND")) : NULL;
	setenv("SPYRE_BACKEND", "cuda", 1);
	FAILS_WITH(spyre_device_open(0, &d2), -EINVAL, "SPYRE_BACKEND=\"cuda\"");
	if (old) {
		setenv("SPYRE_BACKEND", old, 1);
		free(old);
	} else {
		unsetenv("SPYRE_BACKEND");
	}
	/* Closing with live objects is refused and loses nothing. */
	OK(spyre_bo_create(dev, 4096, SPYRE_MEM_DEVICE, &bo));
	FAILS_WITH(spyre_device_close(dev), -EBUSY, "1 live object");
	OK(spyre_bo_destroy(bo));
	/* A second open of the same card works independently. */
	OK(spyre_device_open(0, &d2));
	OK(spyre_device_close(d2));
}

TEST(device_no_card_message)
{
	/* The message a user sees when the drm backend finds nothing. */
	spyre_device *d2 = NULL;
	int count = -1, ret;

	OK(spyre_device_count(SPYRE_BACKEND_DRM, &count));
	if (count > 0) {
		ret = spyre_device_open_backend(SPYRE_BACKEND_DRM, count, &d2);
		CHECK(ret == -ENODEV, "ret %d", ret);
		CHECK(strstr(spyre_last_error(), "out of range"), "message");
	} else {
		FAILS_WITH(spyre_device_open_backend(SPYRE_BACKEND_DRM, 0, &d2), -ENODEV,
			   "no Spyre card found: /sys/class/accel has no spyre devices; is the "
			   "module loaded?");
	}
}

/* Objects of one open device are refused by another (handles are per open file). */
TEST(objects_of_another_device_refused)
{
	spyre_device *d2;
	spyre_stream *s2;
	spyre_event *ev;
	spyre_bo *h, *d;
	void *m;
	struct spyre_buf bh, bd;

	OK(spyre_device_open(0, &d2));
	OK(spyre_stream_create(d2, SPYRE_ENGINE_DMA, &s2));
	OK(spyre_event_create(dev, 0, &ev));
	OK(host_bo(dev, 4096, &h, &m));
	OK(spyre_bo_create(dev, 4096, SPYRE_MEM_DEVICE, &d));
	bh = spyre_bo_buf(h);
	bd = spyre_bo_buf(d);
	FAILS_WITH(spyre_memcpy_async(s2, &bd, &bh, 4096), -EXDEV, "on a stream of");
	FAILS_WITH(spyre_event_record(ev, s2), -EXDEV, "event of");
	FAILS_WITH(spyre_stream_wait_event(s2, ev), -EXDEV, "event of");
	OK(spyre_stream_destroy(s2));
	OK(spyre_device_close(d2));
	OK(spyre_event_destroy(ev));
	spyre_bo_destroy(h);
	spyre_bo_destroy(d);
}
