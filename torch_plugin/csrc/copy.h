// SPDX-License-Identifier: MIT
// Copies between the host and spyre devices and between spyre devices.
#pragma once

#include <ATen/core/Tensor.h>

namespace torch_spyre {

// aten::_copy_from: copies @src into @dst (same shape after broadcasting
// @src), any devices, dtypes and strides.
at::Tensor copy_from(const at::Tensor &src, const at::Tensor &dst, bool non_blocking);
// The bytes a device tensor's view spans, as a CPU tensor with the same
// sizes and strides (a synchronous download).
at::Tensor download_view(const at::Tensor &t);
// Writes @nbytes of host memory to device memory (staged through pinned
// memory unless @src already is pinned memory of that device).
void upload_bytes(const void *src, void *dst_dev, size_t nbytes, c10::DeviceIndex index,
		  bool non_blocking);

} // namespace torch_spyre
