// SPDX-License-Identifier: MIT
// Streams: a c10::Stream of the spyre device names one libspyre stream.
// Id 0 is the device's default stream; torch.Stream(device="spyre") makes
// new ones (up to a per-device pool size, then they are handed out again
// round-robin, as CUDA does with its stream pool).
#pragma once

#include <c10/core/Stream.h>

#include <spyre/spyre.h>

namespace torch_spyre {

c10::Stream default_stream(c10::DeviceIndex index);
c10::Stream new_stream(c10::DeviceIndex index);
// A stream on the card's DMA engine (copies and fills only; launches on it
// fail): transfers on it overlap compute on the compute streams. Ids
// from kTransferStreamBase up.
constexpr c10::StreamId kTransferStreamBase = 1 << 16;
c10::Stream new_transfer_stream(c10::DeviceIndex index);
// The calling thread's current stream of @index (the default stream first).
c10::Stream current_stream(c10::DeviceIndex index);
// Makes @s current for its device; returns the previous current stream.
c10::Stream exchange_stream(c10::Stream s);
// The libspyre stream behind @s (created on first use).
spyre_stream *native_stream(c10::Stream s);
// Waits for the work on @s. A failure on the card is raised once, as a
// Python exception naming the failed operation, and then forgotten
// (libspyre keeps it sticky until cleared): later work on the stream runs
// and reports only its own errors, as the plugin documents.
void sync_stream(spyre_stream *s);
// Waits for every stream of the device (torch.spyre.synchronize()).
void synchronize_device(c10::DeviceIndex index);

} // namespace torch_spyre
