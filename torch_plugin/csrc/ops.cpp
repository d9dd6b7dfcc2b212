// SPDX-License-Identifier: MIT
//
// The operators every backend must provide itself (tensor creation, views,
// resizing, copies, scalar reads, fills). Everything else reaches the boxed
// fallback in fallback.cpp until the op library provides a device kernel.
#include "allocator.h"
#include "copy.h"
#include "device.h"
#include "kernels.h"
#include "stream.h"

#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/view_native.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <cmath>
#include <cstring>

namespace torch_spyre {
namespace {

constexpr auto kKeys = c10::DispatchKeySet(c10::DispatchKey::PrivateUse1);

c10::Device target_device(std::optional<c10::Device> device)
{
	c10::Device d = device.value_or(c10::Device(c10::DeviceType::PrivateUse1));
	TORCH_CHECK(d.type() == c10::DeviceType::PrivateUse1, "spyre: expected a spyre device, got ",
		    d);
	if (!d.has_index())
		d = c10::Device(c10::DeviceType::PrivateUse1, current_device());
	check_device_index(d.index());
	return d;
}

// The card has no complex arithmetic, and a complex tensor on it would
// reach the conjugate fallback's copies, which recurse through _copy_from
// without end: refuse complex dtypes where a spyre tensor is made.
void check_dtype(at::ScalarType dt, c10::IntArrayRef size)
{
	TORCH_CHECK_NOT_IMPLEMENTED(!c10::isComplexType(dt), "spyre: ", dt,
				    " tensors are not supported (the card has no complex arithmetic); "
				    "shape ",
				    size);
}

at::Tensor empty_memory_format(c10::IntArrayRef size, std::optional<at::ScalarType> dtype,
			       std::optional<at::Layout> layout, std::optional<at::Device> device,
			       std::optional<bool> pin_memory,
			       std::optional<at::MemoryFormat> memory_format)
{
	TORCH_CHECK(layout.value_or(at::kStrided) == at::kStrided,
		    "spyre: only strided tensors are supported");
	check_dtype(c10::dtype_or_default(dtype), size);
	c10::DeviceGuard guard(target_device(device));
	return at::detail::empty_generic(size, device_allocator(), kKeys,
					 c10::dtype_or_default(dtype), memory_format);
}

at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride,
			 std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
			 std::optional<at::Device> device, std::optional<bool> pin_memory)
{
	TORCH_CHECK(layout.value_or(at::kStrided) == at::kStrided,
		    "spyre: only strided tensors are supported");
	check_dtype(c10::dtype_or_default(dtype), size);
	c10::DeviceGuard guard(target_device(device));
	return at::detail::empty_strided_generic(size, stride, device_allocator(), kKeys,
						 c10::dtype_or_default(dtype));
}

at::Tensor as_strided(const at::Tensor &self, c10::IntArrayRef size, c10::IntArrayRef stride,
		      std::optional<int64_t> storage_offset)
{
	return at::native::as_strided_tensorimpl(self, size, stride, storage_offset);
}

at::Tensor view(const at::Tensor &self, c10::IntArrayRef size)
{
	return at::native::view(self, size);
}

at::Tensor reshape_alias(const at::Tensor &self, c10::IntArrayRef size, c10::IntArrayRef stride)
{
	return at::native::_reshape_alias(self, size, stride);
}

// Grows (never shrinks) the storage so that it holds @nbytes.
void ensure_storage(const at::Tensor &self, size_t nbytes)
{
	const c10::Storage &storage = self.storage();
	if (nbytes > storage.nbytes())
		at::native::resize_bytes_nocuda(storage, c10::SymInt(int64_t(nbytes)));
}

const at::Tensor &resize_(const at::Tensor &self, c10::IntArrayRef size,
			  std::optional<at::MemoryFormat> memory_format)
{
	c10::DeviceGuard guard(self.device());
	auto *impl = self.unsafeGetTensorImpl();
	impl->set_sizes_contiguous(size);
	auto fmt = memory_format.value_or(at::MemoryFormat::Contiguous);
	if (fmt != at::MemoryFormat::Preserve)
		impl->empty_tensor_restride(fmt);
	if (self.numel() > 0) {
		size_t nbytes = at::detail::computeStorageNbytes(self.sizes(), self.strides(),
								  self.element_size(),
								  self.storage_offset());
		ensure_storage(self, nbytes);
	}
	return self;
}

at::Tensor &set_storage(at::Tensor &self, c10::Storage source, int64_t offset,
			c10::IntArrayRef size, c10::IntArrayRef stride)
{
	at::native::checkSetStorage(self, source, offset, size, stride);
	auto *impl = self.unsafeGetTensorImpl();
	impl->set_storage_offset(offset);
	if (stride.data())
		impl->set_sizes_and_strides(size, stride);
	else
		impl->set_sizes_contiguous(size);
	if (self.numel() > 0) {
		size_t nbytes = at::detail::computeStorageNbytes(self.sizes(), self.strides(),
								  self.element_size(), offset);
		c10::DeviceGuard guard(self.device());
		ensure_storage(self, nbytes);
	}
	return self;
}

at::Tensor &set_source_storage(at::Tensor &self, c10::Storage source)
{
	int64_t n = source.nbytes() / self.element_size();
	return set_storage(self, source, 0, {n}, {});
}

at::Tensor &set_source_tensor(at::Tensor &self, const at::Tensor &source)
{
	if (self.is_same(source))
		return self;
	return set_storage(self, source.storage(), source.storage_offset(), source.sizes(),
			   source.strides());
}

at::Tensor &set_empty(at::Tensor &self)
{
	c10::Storage storage(c10::Storage::use_byte_size_t(), 0, device_allocator(), true);
	return set_storage(self, storage, 0, {0}, {});
}

at::Tensor copy_from_op(const at::Tensor &self, const at::Tensor &dst, bool non_blocking)
{
	return torch_spyre::copy_from(self, dst, non_blocking);
}

at::Tensor copy_from_and_resize(const at::Tensor &self, const at::Tensor &dst)
{
	if (dst.sizes() != self.sizes())
		at::native::resize_output(dst, self.sizes());
	return torch_spyre::copy_from(self, dst, false);
}

at::Scalar local_scalar_dense(const at::Tensor &self)
{
	TORCH_CHECK(self.numel() == 1, "spyre: a Tensor with ", self.numel(),
		    " elements cannot be converted to Scalar");
	auto cpu = at::empty({}, self.options().device(c10::kCPU));
	// as a 0-dim view: copy_from takes equal shapes ([1].item() failed)
	torch_spyre::copy_from(self.reshape({}), cpu, false);
	return cpu.item();
}

// The 32-bit pattern that fills a tensor of @t's dtype with @value, if one exists.
bool fill_pattern(const at::Tensor &t, const at::Scalar &value, uint32_t *pattern)
{
	auto one = at::empty({1}, t.options().device(c10::kCPU)).fill_(value);
	uint8_t bytes[8];
	size_t n = t.element_size();
	std::memcpy(bytes, one.data_ptr(), n);
	switch (n) {
	case 1:
		*pattern = bytes[0] * 0x01010101u;
		return true;
	case 2:
		*pattern = uint32_t(bytes[0] | bytes[1] << 8) * 0x00010001u;
		return true;
	case 4:
		std::memcpy(pattern, bytes, 4);
		return true;
	case 8:
		if (std::memcmp(bytes, bytes + 4, 4))
			return false;
		std::memcpy(pattern, bytes, 4);
		return true;
	}
	return false;
}

// Fills @self with spyre_op_fill (int64 as two int32 word fills, which every
// card runs); false when the value or dtype does not fit the card's fp32
// constant.
bool card_fill(const at::Tensor &self, const at::Scalar &value)
{
	auto dt = self.scalar_type();
	double v = value.toDouble();
	bool exact_int = std::fabs(v) <= double(1 << 24) && v == std::floor(v);
	if (!(card_float(dt) || ((dt == at::kInt || dt == at::kLong || dt == at::kChar ||
				  dt == at::kBool) &&
				 exact_int)))
		return false;
	auto *ops = ops_context(self.device().index());
	auto *s = launch_stream(self);
	count_device_op("fill_");
	if (dt != at::kLong) {
		spyre_tensor d = describe(self);
		check_op(spyre_op_fill(ops, s, dt == at::kBool ? double(v != 0) : v, &d), "fill_");
		return true;
	}
	// int64: low word v, high word its sign (-1 or 0)
	spyre_tensor lo = describe_as(self, SPYRE_INT32);
	for (unsigned i = 0; i < lo.ndim; i++)
		lo.strides[i] *= 2;
	spyre_tensor hi = lo;
	hi.buf.offset += 4;
	check_op(spyre_op_fill(ops, s, v, &lo), "fill_");
	check_op(spyre_op_fill(ops, s, v < 0 ? -1.0 : 0.0, &hi), "fill_");
	return true;
}

at::Tensor &fill_scalar(at::Tensor &self, const at::Scalar &value)
{
	if (self.numel() == 0)
		return self;
	c10::DeviceGuard guard(self.device());
	size_t nbytes = self.numel() * self.element_size();
	uint32_t pattern;
	auto addr = reinterpret_cast<uintptr_t>(self.data_ptr());
	if (self.is_non_overlapping_and_dense() && nbytes % 4 == 0 && addr % 4 == 0 &&
	    fill_pattern(self, value, &pattern)) {
		spyre_buf dst = resolve_device_ptr(self.data_ptr(), nbytes);
		SPYRE_CHECK(spyre_memset32_async(native_stream(current_stream(self.device().index())),
						 &dst, pattern, nbytes));
		return self;
	}
	// Strided destinations and patterns the 32-bit fill cannot express: a
	// fill kernel when the card's fp32 constant holds the value exactly.
	if (card_fill(self, value))
		return self;
	// Else (large integers, dtypes the card lacks) fill on the host and
	// upload (a strided destination is read, filled and written back).
	auto cpu = at::empty_like(self, self.options().device(c10::kCPU)).fill_(value);
	torch_spyre::copy_from(cpu, self, false);
	return self;
}

at::Tensor &fill_tensor(at::Tensor &self, const at::Tensor &value)
{
	TORCH_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor "
				      "with ",
		    value.dim(), " dimensions.");
	return fill_scalar(self, value.item());
}

at::Tensor &zero_(at::Tensor &self)
{
	return fill_scalar(self, 0);
}

// The block stays reserved until the work queued on @stream so far completed.
void record_stream(at::Tensor &self, c10::Stream stream)
{
	TORCH_CHECK(stream.device() == self.device(), "spyre: record_stream: the stream is on ",
		    stream.device(), " but the tensor on ", self.device());
	device_allocator()->recordStream(self.storage().data_ptr(), stream);
}

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	m.impl("empty.memory_format", empty_memory_format);
	m.impl("empty_strided", empty_strided);
	m.impl("as_strided", as_strided);
	m.impl("view", view);
	m.impl("_reshape_alias", reshape_alias);
	m.impl("resize_", resize_);
	m.impl("set_.source_Storage_storage_offset", set_storage);
	m.impl("set_.source_Storage", set_source_storage);
	m.impl("set_.source_Tensor", set_source_tensor);
	m.impl("set_", set_empty);
	m.impl("_copy_from", copy_from_op);
	m.impl("_copy_from_and_resize", copy_from_and_resize);
	m.impl("_local_scalar_dense", local_scalar_dense);
	m.impl("fill_.Scalar", fill_scalar);
	m.impl("fill_.Tensor", fill_tensor);
	m.impl("zero_", zero_);
	m.impl("record_stream", record_stream);
}

} // namespace torch_spyre
