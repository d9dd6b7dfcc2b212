// SPDX-License-Identifier: MIT
// What every device kernel needs to call the op library (libspyre's
// spyre/ops.h): the device's op context (its program and recipe cache),
// the compute stream to launch on, and a spyre_tensor describing an
// at::Tensor's view of device memory. A kernel is then: check inputs,
// allocate the output, describe the tensors, call spyre_op_*().
#pragma once

#include <ATen/core/Tensor.h>

#include <spyre/ops.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace torch_spyre {

// The op context of device @index (created on first use, lives as long as
// the process: its cached recipes belong to that device).
spyre_ops *ops_context(c10::DeviceIndex index);

// The op library's dtype for @t, or nullopt when it has none.
std::optional<spyre_dtype> to_spyre_dtype(at::ScalarType t);

// Describes @t (a spyre tensor, at most SPYRE_MAX_DIMS dims, non-negative
// strides) for the op library; throws a clear error otherwise. A tensor
// with no elements gets an empty buffer.
spyre_tensor describe(const at::Tensor &t);
// The same, for a dtype the op library does not list but whose bytes the
// kernel treats as @as (e.g. int64 indices below 2^31 are described as
// SPYRE_INT64; bool as SPYRE_BOOL).
spyre_tensor describe_as(const at::Tensor &t, spyre_dtype as);
// @t described with every element split into @lanes lanes of dtype @as (a
// trailing dim of @lanes, stride 1): exact moves of bytes the card has no
// element type for.
spyre_tensor describe_lanes(const at::Tensor &t, spyre_dtype as, int64_t lanes);

// The libspyre stream of the calling thread's current stream on @t's
// device: where a kernel launches.
spyre_stream *launch_stream(const at::Tensor &t);

// Runs one op library call: throws a c10::Error naming @op and libspyre's
// message when it fails (for -EOPNOTSUPP, a NotImplementedError, so the
// caller can see that the card, not the input, is the limit).
void check_op(int rc, const char *op);
// spyre_op_copy from @src to @dst on @like's card and current stream.
void run_copy(const at::Tensor &like, const spyre_tensor &src, const spyre_tensor &dst);

// Counts device kernels run per op name (torch.spyre.op_counts()).
void count_device_op(const char *op);
std::map<std::string, uint64_t> device_op_counts();

} // namespace torch_spyre
