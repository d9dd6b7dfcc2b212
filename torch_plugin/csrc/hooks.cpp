// SPDX-License-Identifier: MIT
//
// PrivateUse1 hooks: availability, device selection, pinned memory,
// storage resizing and random generators for the spyre device.
#include "allocator.h"
#include "copy.h"
#include "device.h"
#include "generator.h"
#include "host_allocator.h"
#include "stream.h"

#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/DeviceGuard.h>

#include <mutex>
#include <vector>

namespace torch_spyre {
namespace {

class SpyreHooks final : public at::PrivateUse1HooksInterface {
public:
	bool isBuilt() const override
	{
		return true;
	}
	bool isAvailable() const override
	{
		return device_count() > 0;
	}
	bool hasPrimaryContext(c10::DeviceIndex) const override
	{
		return true;
	}
	c10::DeviceIndex deviceCount() const override
	{
		return device_count();
	}
	void setCurrentDevice(c10::DeviceIndex index) const override
	{
		set_current_device(index);
	}
	c10::DeviceIndex getCurrentDevice() const override
	{
		return current_device();
	}
	c10::DeviceIndex exchangeDevice(c10::DeviceIndex index) const override
	{
		auto old = current_device();
		set_current_device(index);
		return old;
	}
	c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex index) const override
	{
		return exchangeDevice(index);
	}
	bool isPinnedPtr(const void *data) const override
	{
		return is_pinned_ptr(data);
	}
	c10::Allocator *getPinnedMemoryAllocator() const override
	{
		return host_allocator();
	}
	at::Device getDeviceFromPtr(void *data) const override
	{
		auto index = device_of_ptr(data);
		TORCH_CHECK(index >= 0, "spyre: ", data, " is not spyre device memory");
		return at::Device(c10::DeviceType::PrivateUse1, index);
	}
	const at::Generator &getDefaultGenerator(c10::DeviceIndex index) const override
	{
		if (index < 0)
			index = current_device();
		check_device_index(index);
		std::call_once(generators_once_, [] {
			for (c10::DeviceIndex i = 0; i < device_count(); i++)
				generators_.push_back(at::make_generator<SpyreGenerator>(i));
		});
		return generators_[index];
	}
	at::Generator getNewGenerator(c10::DeviceIndex index) const override
	{
		if (index < 0)
			index = current_device();
		check_device_index(index);
		return at::make_generator<SpyreGenerator>(index);
	}
	void resizePrivateUse1Bytes(const c10::Storage &storage, size_t newsize) const override
	{
		TORCH_CHECK(storage.resizable(), "spyre: trying to resize a storage that is not "
						 "resizable");
		c10::DeviceGuard guard(storage.device());
		auto *allocator = device_allocator();
		c10::DataPtr fresh = allocator->allocate(newsize);
		size_t keep = std::min(newsize, storage.nbytes());
		if (keep) {
			allocator->copy_data(fresh.get(), storage.data(), keep);
		}
		auto *impl = storage.unsafeGetStorageImpl();
		impl->set_data_ptr_noswap(std::move(fresh));
		impl->set_nbytes(newsize);
	}

private:
	static std::once_flag generators_once_;
	static std::vector<at::Generator> generators_;
};

std::once_flag SpyreHooks::generators_once_;
std::vector<at::Generator> SpyreHooks::generators_;

struct RegisterHooks {
	RegisterHooks()
	{
		at::RegisterPrivateUse1HooksInterface(new SpyreHooks());
	}
};
RegisterHooks register_hooks;

} // namespace
} // namespace torch_spyre
