// SPDX-License-Identifier: MIT
//
// The device guard: current device, current stream and events of the spyre
// device, as c10 expects them. torch.Stream / torch.Event /
// torch.accelerator and DeviceGuard all come through here. An event is a
// libspyre event (timing events record the card's device time, so
// elapsed_time is modelled device time, not host time).
#include "allocator.h"
#include "device.h"
#include "stream.h"

#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <cerrno>

namespace torch_spyre {
namespace {

struct SpyreEvent {
	spyre_event *ev;
	c10::DeviceIndex device;
	bool timing;
};

class SpyreGuardImpl final : public c10::impl::DeviceGuardImplInterface {
public:
	static constexpr c10::DeviceType kType = c10::DeviceType::PrivateUse1;

	c10::DeviceType type() const override
	{
		return kType;
	}

	c10::Device exchangeDevice(c10::Device d) const override
	{
		auto old = getDevice();
		if (d.index() >= 0 && d.index() != old.index())
			setDevice(d);
		return old;
	}

	c10::Device getDevice() const override
	{
		return c10::Device(kType, current_device());
	}

	void setDevice(c10::Device d) const override
	{
		TORCH_CHECK(d.type() == kType, "spyre: expected a spyre device, got ", d);
		if (d.index() >= 0)
			set_current_device(d.index());
	}

	void uncheckedSetDevice(c10::Device d) const noexcept override
	{
		set_current_device_unchecked(d.index());
	}

	c10::Stream getStream(c10::Device d) const override
	{
		return current_stream(d.index());
	}

	c10::Stream getDefaultStream(c10::Device d) const override
	{
		return default_stream(d.index());
	}

	c10::Stream getNewStream(c10::Device d, int priority) const override
	{
		return new_stream(d.index());
	}

	c10::Stream getStreamFromGlobalPool(c10::Device d, bool high_priority) const override
	{
		return new_stream(d.index());
	}

	c10::Stream exchangeStream(c10::Stream s) const override
	{
		return exchange_stream(s);
	}

	c10::DeviceIndex deviceCount() const noexcept override
	{
		return device_count();
	}

	void destroyEvent(void *event, const c10::DeviceIndex) const noexcept override
	{
		auto *e = static_cast<SpyreEvent *>(event);
		if (!e)
			return;
		spyre_event_destroy(e->ev);
		delete e;
	}

	void record(void **event, const c10::Stream &stream, const c10::DeviceIndex device_index,
		    const c10::EventFlag flag) const override
	{
		TORCH_CHECK(device_index < 0 || device_index == stream.device_index(),
			    "spyre: event device index ", int(device_index),
			    " does not match the recording stream's device ",
			    int(stream.device_index()));
		auto *e = static_cast<SpyreEvent *>(*event);
		if (!e) {
			bool timing = flag == c10::EventFlag::BACKEND_DEFAULT;
			spyre_event *ev = nullptr;
			SPYRE_CHECK(spyre_event_create(device_handle(stream.device_index()),
						       timing ? SPYRE_EVENT_TIMING : 0, &ev));
			e = new SpyreEvent{ev, stream.device_index(), timing};
			*event = e;
		}
		TORCH_CHECK(e->device == stream.device_index(), "spyre: event of spyre:",
			    int(e->device), " recorded on a stream of spyre:",
			    int(stream.device_index()));
		SPYRE_CHECK(spyre_event_record(e->ev, native_stream(stream)));
	}

	void block(void *event, const c10::Stream &stream) const override
	{
		auto *e = static_cast<SpyreEvent *>(event);
		if (!e)
			return;
		TORCH_CHECK(e->device == stream.device_index(), "spyre: a stream of spyre:",
			    int(stream.device_index()), " cannot wait for an event of spyre:",
			    int(e->device));
		SPYRE_CHECK(spyre_stream_wait_event(native_stream(stream), e->ev));
	}

	bool queryEvent(void *event) const override
	{
		auto *e = static_cast<SpyreEvent *>(event);
		if (!e)
			return true;
		int rc = spyre_event_query(e->ev);
		if (rc == -EBUSY)
			return false;
		if (rc == -EINVAL) // never recorded
			return true;
		SPYRE_CHECK(rc);
		return true;
	}

	void synchronizeEvent(void *event) const override
	{
		auto *e = static_cast<SpyreEvent *>(event);
		if (!e || spyre_event_query(e->ev) == -EINVAL)
			return;
		SPYRE_CHECK(spyre_event_synchronize(e->ev));
	}

	double elapsedTime(void *event1, void *event2, const c10::DeviceIndex) const override
	{
		auto *a = static_cast<SpyreEvent *>(event1);
		auto *b = static_cast<SpyreEvent *>(event2);
		TORCH_CHECK(a && b, "spyre: both events must be recorded before elapsed_time");
		TORCH_CHECK(a->timing && b->timing,
			    "spyre: elapsed_time needs events created with enable_timing=True");
		SPYRE_CHECK(spyre_event_synchronize(a->ev));
		SPYRE_CHECK(spyre_event_synchronize(b->ev));
		uint64_t ns = 0;
		SPYRE_CHECK(spyre_event_elapsed_ns(a->ev, b->ev, &ns));
		return double(ns) / 1e6;
	}

	bool queryStream(const c10::Stream &stream) const override
	{
		int rc = spyre_stream_query(native_stream(stream));
		if (rc == -EBUSY)
			return false;
		SPYRE_CHECK(rc);
		return true;
	}

	void synchronizeStream(const c10::Stream &stream) const override
	{
		sync_stream(native_stream(stream));
	}

	void synchronizeDevice(const c10::DeviceIndex index) const override
	{
		synchronize_device(index);
	}

	void recordDataPtrOnStream(const c10::DataPtr &ptr, const c10::Stream &stream) const override
	{
		device_allocator()->recordStream(ptr, stream);
	}
};

} // namespace

C10_REGISTER_GUARD_IMPL(PrivateUse1, SpyreGuardImpl);

} // namespace torch_spyre
