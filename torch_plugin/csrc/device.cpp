// SPDX-License-Identifier: MIT
#include "device.h"

#include <pthread.h>

#include <array>
#include <atomic>
#include <cstring>
#include <mutex>

namespace torch_spyre {
namespace {

struct DeviceTable {
	std::once_flag count_once;
	int count = 0;
	std::string reason;
	std::mutex open_mutex;
	std::array<spyre_device *, kMaxDevices> handles{};
	std::array<spyre_device_props, kMaxDevices> props{};
};

// Set in a child forked after the parent opened a device: the handles are
// copies whose worker threads and pending work stayed in the parent.
std::atomic<bool> forked_with_open_device{false};

void mark_bad_fork_in_child();

// Leaked on purpose: tensors freed during interpreter shutdown still need it.
DeviceTable &table()
{
	static auto *t = [] {
		pthread_atfork(nullptr, nullptr, mark_bad_fork_in_child);
		return new DeviceTable();
	}();
	return *t;
}

void mark_bad_fork_in_child()
{
	for (spyre_device *h : table().handles)
		if (h)
			forked_with_open_device.store(true);
}

thread_local c10::DeviceIndex tls_current_device = 0;

// Set by the first explicit choice of a device (torch.spyre.set_device,
// torch.accelerator.set_device_index, a device guard): see device_initialized().
std::atomic<bool> device_chosen{false};

// Device guards switch devices around ops: read first, so that the common
// case does not write a cache line every thread shares.
void mark_device_chosen() noexcept
{
	if (!device_chosen.load(std::memory_order_relaxed))
		device_chosen.store(true, std::memory_order_relaxed);
}

} // namespace

void throw_spyre_error(int rc, const char *what)
{
	const char *msg = spyre_last_error();
	if (msg && *msg)
		TORCH_CHECK(false, "spyre: ", what, " failed: ", msg);
	TORCH_CHECK(false, "spyre: ", what, " failed: ", std::strerror(-rc));
}

c10::DeviceIndex device_count() noexcept
{
	auto &t = table();
	std::call_once(t.count_once, [&t] {
		int n = 0;
		int rc = spyre_device_count(SPYRE_BACKEND_DEFAULT, &n);
		if (rc < 0) {
			const char *msg = spyre_last_error();
			t.reason = (msg && *msg) ? msg : std::strerror(-rc);
			n = 0;
		} else if (n == 0) {
			t.reason = "no Spyre card is present and the sim backend is not selected";
		}
		t.count = n > kMaxDevices ? kMaxDevices : n;
	});
	return static_cast<c10::DeviceIndex>(t.count);
}

const std::string &unavailable_reason()
{
	device_count();
	return table().reason;
}

bool any_device_open() noexcept
{
	auto &t = table();
	std::lock_guard<std::mutex> lock(t.open_mutex);
	for (spyre_device *h : t.handles)
		if (h)
			return true;
	return false;
}

bool device_initialized() noexcept
{
	return device_chosen.load() || any_device_open();
}

bool is_in_bad_fork() noexcept
{
	return forked_with_open_device.load();
}

void check_device_index(c10::DeviceIndex index)
{
	TORCH_CHECK(!is_in_bad_fork(),
		    "spyre: cannot use a Spyre device in a process forked after its parent "
		    "opened one (the parent's streams and worker threads do not exist here); "
		    "start subprocesses with the 'spawn' method");
	auto n = device_count();
	TORCH_CHECK(n > 0, "spyre: no Spyre device is available: ", unavailable_reason());
	TORCH_CHECK_INDEX(index >= 0 && index < n, "spyre: invalid device index ", int(index),
			  ": there ", n == 1 ? "is " : "are ", int(n), " Spyre device",
			  n == 1 ? "" : "s", " (valid indices 0..", int(n) - 1, ")");
}

spyre_device *device_handle(c10::DeviceIndex index)
{
	check_device_index(index);
	auto &t = table();
	std::lock_guard<std::mutex> lock(t.open_mutex);
	if (!t.handles[index]) {
		spyre_device *dev = nullptr;
		SPYRE_CHECK(spyre_device_open(index, &dev));
		SPYRE_CHECK(spyre_device_get_props(dev, &t.props[index]));
		t.handles[index] = dev;
	}
	return t.handles[index];
}

const spyre_device_props &device_props(c10::DeviceIndex index)
{
	device_handle(index);
	return table().props[index];
}

c10::DeviceIndex current_device()
{
	return tls_current_device;
}

void set_current_device(c10::DeviceIndex index)
{
	check_device_index(index);
	tls_current_device = index;
	mark_device_chosen();
}

void set_current_device_unchecked(c10::DeviceIndex index) noexcept
{
	tls_current_device = index;
	mark_device_chosen();
}

} // namespace torch_spyre
