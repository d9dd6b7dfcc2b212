// SPDX-License-Identifier: MIT
// The caching device allocator: device memory in libspyre BOs ("segments"),
// carved into blocks. Tensor data pointers are addresses in a per-device
// range of reserved (never accessible) host address space, so that PyTorch
// can do pointer arithmetic on them; resolve() turns one back into a BO
// range for libspyre.
#pragma once

#include <c10/core/CachingDeviceAllocator.h>

#include <spyre/spyre.h>

namespace torch_spyre {

// The spyre_buf covering [ptr, ptr + nbytes) of a device allocation.
// Throws if the range is not inside one live segment.
spyre_buf resolve_device_ptr(const void *ptr, size_t nbytes);
// The device a spyre data pointer belongs to (-1 if none).
c10::DeviceIndex device_of_ptr(const void *ptr);

c10::DeviceAllocator *device_allocator();

// Counters the tests read (hits = requests served from the cache).
struct AllocatorCounters {
	uint64_t requests = 0;
	uint64_t cache_hits = 0;
	uint64_t cross_stream_reuses = 0;
	uint64_t deferred_frees = 0; // frees held back by record_stream
};
AllocatorCounters allocator_counters(c10::DeviceIndex index);

} // namespace torch_spyre
