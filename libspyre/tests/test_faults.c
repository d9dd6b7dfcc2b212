// SPDX-License-Identifier: MIT
/*
 * Work that fails on the card: DMA errors, hangs (the queue is banned, the
 * card recovers), fatal memory errors, and a lost device. Faults are armed
 * through spyre_sim_inject_fault (sim: in-process; drm: the driver's
 * debugfs, root only, which arms the kernel's rings: these tests open the
 * card with SPYRE_DRM_QUEUES=kernel).
 */
#include <unistd.h>

#include "harness.h"
#include "kernels.h"

static int copy_sync(spyre_stream *s, spyre_bo *dst, spyre_bo *src)
{
	struct spyre_buf a = spyre_bo_buf(dst), b = spyre_bo_buf(src);
	int ret = spyre_memcpy_async(s, &a, &b, spyre_bo_size(src));

	return ret ? ret : spyre_stream_synchronize(s);
}

TEST_KERNEL_QUEUES(fault_dma_error, 0)
{
	spyre_stream *s;
	spyre_bo *h, *d;
	void *m;

	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &s));
	OK(host_bo(dev, 65536, &h, &m));
	OK(spyre_bo_create(dev, 65536, SPYRE_MEM_DEVICE, &d));
	OK(copy_sync(s, d, h));
	OK(spyre_sim_inject_fault(dev, SPYRE_ENGINE_DMA, 2));
	FAILS_WITH(copy_sync(s, d, h), -EIO, "failed on the card");
	OK(spyre_sim_inject_fault(dev, SPYRE_ENGINE_DMA, 0));	/* disarm the other rings */
	/* The error is sticky and names the operation until cleared. */
	FAILS_WITH(copy_sync(s, d, h), -EIO, "operation 2 (spyre_memcpy_async)");
	OK(spyre_stream_clear_error(s));
	OK(copy_sync(s, d, h));
	OK(spyre_stream_destroy(s));
	spyre_bo_destroy(h);
	spyre_bo_destroy(d);
}

TEST_KERNEL_QUEUES(fault_hang_bans_queue, 0)
{
	struct spyre_device_props p0, p1;
	spyre_stream *s, *s2;
	spyre_program *prog;
	spyre_bo *d, *h;
	struct spyre_buf a[2];
	char saved[32] = "";
	void *m, *img;
	size_t sz;
	int ret;

	/* Keep the hang short on the drm backend (root in the VM). */
	if (!strcmp(test_backend, "drm"))
		job_timeout_set("500", saved, sizeof(saved));
	OK(spyre_device_get_props(dev, &p0));
	img = kern_scale_f32(1024, 1, 0, &sz);
	OK(spyre_program_load(dev, img, sz, &prog));
	free(img);
	OK(spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &s));
	OK(spyre_bo_create(dev, 8192, SPYRE_MEM_DEVICE, &d));
	OK(host_bo(dev, 8192, &h, &m));
	a[0] = buf_of(d, 0, 4096);
	a[1] = buf_of(d, 4096, 4096);
	OK(spyre_sim_inject_fault(dev, SPYRE_ENGINE_COMPUTE, 1));
	OK(spyre_launch_async(s, prog, a, 2, NULL));
	ret = spyre_stream_synchronize(s);
	CHECK(ret == -ETIMEDOUT || ret == -ECANCELED, "hung job: %d (%s)", ret,
	      spyre_last_error());
	FAILS_WITH(spyre_launch_async(s, prog, a, 2, NULL), -ECANCELED, "banned");
	OK(spyre_device_get_props(dev, &p1));
	CHECK(p1.reset_count > p0.reset_count, "reset count %llu -> %llu",
	      (unsigned long long)p0.reset_count, (unsigned long long)p1.reset_count);
	/* A new stream works: the card recovered. */
	OK(spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &s2));
	OK(spyre_launch_async(s2, prog, a, 2, NULL));
	OK(spyre_stream_synchronize(s2));
	OK(copy_sync(s2, d, h));
	OK(spyre_stream_destroy(s2));
	spyre_stream_destroy(s);
	OK(spyre_program_destroy(prog));
	spyre_bo_destroy(d);
	spyre_bo_destroy(h);
	job_timeout_restore(saved);
}

TEST_KERNEL_QUEUES(fault_memory_error_resets_card, 0)
{
	spyre_stream *s;
	spyre_bo *h, *d;
	void *m;
	int ret;

	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &s));
	OK(host_bo(dev, 65536, &h, &m));
	OK(spyre_bo_create(dev, 65536, SPYRE_MEM_DEVICE, &d));
	OK(spyre_sim_inject_fault(dev, SPYRE_ENGINE_DMA, 4));
	ret = copy_sync(s, d, h);
	CHECK(ret == -EIO || ret == -ECANCELED, "copy during a memory error: %d", ret);
	OK(spyre_sim_inject_fault(dev, SPYRE_ENGINE_DMA, 0));
	spyre_stream_destroy(s);
	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &s));
	OK(copy_sync(s, d, h));
	OK(spyre_stream_destroy(s));
	spyre_bo_destroy(h);
	spyre_bo_destroy(d);
}

/* Runs last: on drm it removes the card from the VM. */
TEST_KERNEL_QUEUES(fault_device_lost, 100)
{
	spyre_stream *s;
	spyre_bo *h, *d, *bo;
	void *m;
	struct spyre_buf a, b;
	int ret;

	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &s));
	OK(host_bo(dev, 65536, &h, &m));
	OK(spyre_bo_create(dev, 65536, SPYRE_MEM_DEVICE, &d));
	OK(copy_sync(s, d, h));
	OK(spyre_sim_inject_fault(dev, SPYRE_ENGINE_DMA, 100));
	a = spyre_bo_buf(d);
	b = spyre_bo_buf(h);
	ret = spyre_memcpy_async(s, &a, &b, 65536);
	if (!ret)
		ret = spyre_stream_synchronize(s);
	CHECK(ret == -ENODEV, "work on a lost device: %d", ret);
	CHECK(strstr(spyre_last_error(), "device lost"), "message: %s", spyre_last_error());
	FAILS_WITH(spyre_bo_create(dev, 4096, SPYRE_MEM_DEVICE, &bo), -ENODEV, "device lost");
	/* Everything can still be released. */
	spyre_stream_destroy(s);
	spyre_bo_destroy(h);
	spyre_bo_destroy(d);
}

/*
 * A DMA stream that waits for a failed launch's event does not run: its
 * copy fails with the launch's error (the driver's rule, mirrored by the
 * sim), and the destination keeps its old contents. On user-mode queues
 * a copy written while the launch still ran cannot be held back (the
 * card's WAIT_MEM has no error form): test_drm_queues.c has their rule.
 */
TEST_KERNEL_QUEUES(fault_error_travels_through_events, 0)
{
	spyre_program *p;
	spyre_stream *comp, *dma;
	spyre_event *ev;
	spyre_bo *d, *out;
	struct spyre_buf arg, bh, bo;
	struct spyre_error_info info;
	uint8_t *om;
	void *m;
	size_t sz;
	int ret;

	p = NULL;
	{
		void *img = kern_touch(4096 + 128, &sz);

		OK(spyre_program_load(dev, img, sz, &p));
		free(img);
	}
	OK(spyre_stream_create(dev, SPYRE_ENGINE_COMPUTE, &comp));
	OK(spyre_stream_create(dev, SPYRE_ENGINE_DMA, &dma));
	OK(spyre_event_create(dev, 0, &ev));
	OK(spyre_bo_create(dev, 8192, SPYRE_MEM_DEVICE, &d));
	OK(host_bo(dev, 4096, &out, &m));
	om = m;
	memset(om, 0x5a, 4096);
	arg = buf_of(d, 0, 4096);	/* the program reads past the slot: -EFAULT */
	OK(spyre_launch_async(comp, p, &arg, 1, NULL));
	OK(spyre_event_record(ev, comp));
	OK(spyre_stream_wait_event(dma, ev));
	bh = buf_of(d, 4096, 4096);
	bo = spyre_bo_buf(out);
	OK(spyre_memcpy_async(dma, &bo, &bh, 4096));
	ret = spyre_stream_synchronize(dma);
	CHECK(ret == -EFAULT, "the dependent copy returned %d, want the launch's -EFAULT", ret);
	CHECK(om[0] == 0x5a && om[4095] == 0x5a, "the dependent copy ran");
	OK(spyre_stream_get_error(dma, &info));
	CHECK(info.error == -EFAULT && !strcmp(info.call, "spyre_memcpy_async"),
	      "dma stream error %d (%s)", info.error, info.call);
	FAILS_WITH(spyre_stream_synchronize(comp), -EFAULT, "spyre_launch_async");
	OK(spyre_stream_clear_error(dma));
	/* The same when the launch had already failed before the copy was submitted. */
	OK(spyre_stream_wait_event(dma, ev));
	OK(spyre_memcpy_async(dma, &bo, &bh, 4096));
	ret = spyre_stream_synchronize(dma);
	CHECK(ret == -EFAULT, "a copy after the failed launch ended returned %d", ret);
	CHECK(om[0] == 0x5a && om[4095] == 0x5a, "the late dependent copy ran");
	OK(spyre_stream_clear_error(dma));
	OK(spyre_stream_clear_error(comp));
	OK(spyre_event_destroy(ev));
	OK(spyre_stream_destroy(comp));
	OK(spyre_stream_destroy(dma));
	OK(spyre_program_destroy(p));
	spyre_bo_destroy(d);
	spyre_bo_destroy(out);
}
