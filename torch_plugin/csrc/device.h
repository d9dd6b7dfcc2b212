// SPDX-License-Identifier: MIT
// Spyre devices as PyTorch sees them: count, lazily opened libspyre
// handles, properties, the calling thread's current device, and the helper
// that turns a libspyre error into a Python exception.
#pragma once

#include <c10/core/Device.h>
#include <c10/util/Exception.h>

#include <spyre/spyre.h>

#include <string>

namespace torch_spyre {

// The most devices the plugin opens (device_count() is at most this).
constexpr int kMaxDevices = 16;

// Number of cards (0 when no card and no sim backend: never throws).
c10::DeviceIndex device_count() noexcept;
// Why device_count() is 0 ("" otherwise).
const std::string &unavailable_reason();
// Throws a clear error for an index outside [0, device_count()) and in a
// child forked after the parent opened a device.
void check_device_index(c10::DeviceIndex index);
// True once a device has been opened in this process.
bool any_device_open() noexcept;
// torch.spyre.is_initialized(), as CUDA's: true once a device was opened or
// chosen (setting the current device initialises CUDA too). DeviceMesh
// chooses the device from LOCAL_RANK only before that, and fake tensors take
// the current device for a bare "spyre" only after it (else spyre:0).
bool device_initialized() noexcept;
// True in a child forked after this process opened a device: such a child
// cannot use the devices (torch.spyre._is_in_bad_fork(), as CUDA's).
bool is_in_bad_fork() noexcept;
// The open libspyre device for @index (opened on first use).
spyre_device *device_handle(c10::DeviceIndex index);
const spyre_device_props &device_props(c10::DeviceIndex index);

c10::DeviceIndex current_device();
void set_current_device(c10::DeviceIndex index);
// For the device guard's noexcept path: no index check.
void set_current_device_unchecked(c10::DeviceIndex index) noexcept;

// Throws c10::Error naming @what and libspyre's message when rc < 0.
void throw_spyre_error(int rc, const char *what);

} // namespace torch_spyre

#define SPYRE_CHECK(call)                                      \
	do {                                                   \
		int spyre_rc_ = (call);                        \
		if (spyre_rc_ < 0)                             \
			::torch_spyre::throw_spyre_error(spyre_rc_, #call); \
	} while (0)
