// SPDX-License-Identifier: MIT
// Pinned host memory: libspyre host BOs mapped into the process, cached.
// A block that a copy still uses (recorded with record_use) is reused only
// when that copy's event has completed, so non_blocking copies from or to
// pinned memory can return before the DMA ran.
#pragma once

#include <ATen/core/CachingHostAllocator.h>
#include <c10/core/Stream.h>

#include <spyre/spyre.h>

namespace torch_spyre {

at::HostAllocator *host_allocator();
// A pinned allocation of @nbytes for staging copies of device @index.
c10::DataPtr host_alloc_for(c10::DeviceIndex index, size_t nbytes);

// The host BO range behind [ptr, ptr + nbytes) if it is pinned memory of
// device @index; false otherwise (other memory, or another device's BO).
bool resolve_host_ptr(const void *ptr, size_t nbytes, c10::DeviceIndex index, spyre_buf *out);
bool is_pinned_ptr(const void *ptr);
// Keeps the block holding @ptr from being reused before the work queued on
// @stream so far has completed.
void record_host_use(const void *ptr, c10::Stream stream);

} // namespace torch_spyre
