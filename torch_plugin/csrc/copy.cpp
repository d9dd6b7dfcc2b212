// SPDX-License-Identifier: MIT
//
// How a copy runs (all of it on the current stream of the device involved):
// - same dtype, both sides dense with the same strides: one DMA of the
//   bytes (host->device, device->host, device->device on one card);
// - strided views, broadcast sources and dtype conversions within one
//   card: a device kernel (card_copy in ops_convert.cpp, spyre_op_copy);
// - anything else (host <-> device with a strided or converting side, card
//   to card, dtypes the card has no type for): the spanned bytes of the
//   device side come to pinned host memory, PyTorch's CPU copy does the
//   strided/converting part, and the result goes back as one DMA.
// - Host memory that is pinned memory of the same device is used by the
//   DMA directly; pageable memory is staged through pinned memory.
// - Uploads return once the source was consumed (staged or DMA'd);
//   downloads into pageable memory wait for the DMA; non_blocking copies
//   to or from pinned memory return at once (the pinned block is kept
//   from reuse until the copy's event completed).
#include "copy.h"

#include "allocator.h"
#include "device.h"
#include "host_allocator.h"
#include "kernels.h"
#include "stream.h"

#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>
#include <c10/core/DeviceGuard.h>

#include <cstring>

namespace torch_spyre {
namespace {

bool is_spyre(const at::Tensor &t)
{
	return t.device().type() == c10::DeviceType::PrivateUse1;
}

spyre_stream *stream_of(c10::DeviceIndex index)
{
	return native_stream(current_stream(index));
}

// Elements a view spans from its data pointer (strides are never negative).
int64_t span_elems(const at::Tensor &t)
{
	if (t.numel() == 0)
		return 0;
	int64_t hi = 0;
	for (int64_t d = 0; d < t.dim(); d++)
		hi += (t.size(d) - 1) * t.stride(d);
	return hi + 1;
}

// A CPU tensor in pinned memory of device @index with @like's sizes and strides.
at::Tensor pinned_like(c10::DeviceIndex index, const at::Tensor &like, at::ScalarType dtype)
{
	size_t nbytes = span_elems(like) * c10::elementSize(dtype);
	c10::Storage storage(c10::Storage::use_byte_size_t(), nbytes,
			     host_alloc_for(index, nbytes), host_allocator(), false);
	auto t = at::empty({0}, at::TensorOptions().dtype(dtype));
	t.set_(storage, 0, like.sizes(), like.strides());
	return t;
}

void download_bytes(const void *src_dev, void *dst, size_t nbytes, c10::DeviceIndex index,
		    bool non_blocking)
{
	if (nbytes == 0)
		return;
	c10::Stream stream = current_stream(index);
	spyre_stream *s = native_stream(stream);
	spyre_buf src = resolve_device_ptr(src_dev, nbytes);
	spyre_buf d;
	if (resolve_host_ptr(dst, nbytes, index, &d)) {
		SPYRE_CHECK(spyre_memcpy_async(s, &d, &src, nbytes));
		if (non_blocking)
			record_host_use(dst, stream);
		else
			sync_stream(s);
		return;
	}
	c10::DataPtr staging = host_alloc_for(index, nbytes);
	SPYRE_CHECK(resolve_host_ptr(staging.get(), nbytes, index, &d) ? 0 : -EFAULT);
	SPYRE_CHECK(spyre_memcpy_async(s, &d, &src, nbytes));
	sync_stream(s);
	std::memcpy(dst, staging.get(), nbytes);
}

void copy_device_bytes(const void *src_dev, void *dst_dev, size_t nbytes, c10::DeviceIndex index)
{
	if (nbytes == 0)
		return;
	spyre_buf s = resolve_device_ptr(src_dev, nbytes);
	spyre_buf d = resolve_device_ptr(dst_dev, nbytes);
	SPYRE_CHECK(spyre_memcpy_async(stream_of(index), &d, &s, nbytes));
}

// Both dtypes have a card type, or the copy moves integer bytes unchanged.
bool card_copyable(at::ScalarType s, at::ScalarType d)
{
	auto exact = [](at::ScalarType t) {
		return t == at::kInt || t == at::kLong || t == at::kChar || t == at::kByte ||
		       t == at::kShort ||
		       t == at::kBool;
	};
	if (s == d && exact(s))
		return true;
	return to_spyre_dtype(s) && to_spyre_dtype(d);
}

// A copy within one card, on the card.
void device_copy(const at::Tensor &src, const at::Tensor &dst)
{
	c10::DeviceGuard guard(dst.device());
	auto overlap = src.storage().is_alias_of(dst.storage()) ? at::get_overlap_status(src, dst) :
								   at::MemOverlapStatus::No;
	if (overlap == at::MemOverlapStatus::Full && src.strides() == dst.strides() &&
	    src.scalar_type() == dst.scalar_type())
		return;
	count_device_op("copy_");
	if (overlap == at::MemOverlapStatus::No) {
		card_copy(src, dst);
		return;
	}
	// overlapping views (x[1:].copy_(x[:-1])): through a temporary
	at::Tensor tmp = at::empty(src.sizes(), src.options());
	card_copy(src, tmp);
	card_copy(tmp, dst);
}

} // namespace

void upload_bytes(const void *src, void *dst_dev, size_t nbytes, c10::DeviceIndex index,
		  bool non_blocking)
{
	if (nbytes == 0)
		return;
	c10::Stream stream = current_stream(index);
	spyre_stream *s = native_stream(stream);
	spyre_buf dst = resolve_device_ptr(dst_dev, nbytes);
	spyre_buf h;
	if (resolve_host_ptr(src, nbytes, index, &h)) {
		SPYRE_CHECK(spyre_memcpy_async(s, &dst, &h, nbytes));
		if (non_blocking)
			record_host_use(src, stream);
		else
			sync_stream(s);
		return;
	}
	c10::DataPtr staging = host_alloc_for(index, nbytes);
	std::memcpy(staging.get(), src, nbytes);
	SPYRE_CHECK(resolve_host_ptr(staging.get(), nbytes, index, &h) ? 0 : -EFAULT);
	SPYRE_CHECK(spyre_memcpy_async(s, &dst, &h, nbytes));
	// the staging block returns to the cache once the DMA has read it
	record_host_use(staging.get(), stream);
	if (!non_blocking)
		sync_stream(s);
}

at::Tensor download_view(const at::Tensor &t)
{
	auto index = t.device().index();
	c10::DeviceGuard guard(t.device());
	auto out = pinned_like(index, t, t.scalar_type());
	download_bytes(t.data_ptr(), out.data_ptr(), span_elems(t) * t.element_size(), index,
		       false);
	return out;
}

at::Tensor copy_from(const at::Tensor &src_in, const at::Tensor &dst, bool non_blocking)
{
	TORCH_CHECK(is_spyre(src_in) || src_in.device().is_cpu(), "spyre: cannot copy from ",
		    src_in.device(), " to ", dst.device());
	TORCH_CHECK(is_spyre(dst) || dst.device().is_cpu(), "spyre: cannot copy from ",
		    src_in.device(), " to ", dst.device());
	if (dst.numel() == 0)
		return dst;
	at::Tensor src = src_in.sizes() == dst.sizes() ? src_in : src_in.expand_as(dst);

	bool same_layout = src.scalar_type() == dst.scalar_type() &&
			   src.is_non_overlapping_and_dense() &&
			   dst.is_non_overlapping_and_dense() && src.strides() == dst.strides();
	size_t nbytes = dst.numel() * dst.element_size();
	if (same_layout) {
		if (is_spyre(src) && dst.device().is_cpu()) {
			c10::DeviceGuard guard(src.device());
			download_bytes(src.data_ptr(), dst.data_ptr(), nbytes, src.device().index(),
				       non_blocking);
			return dst;
		}
		if (src.device().is_cpu() && is_spyre(dst)) {
			c10::DeviceGuard guard(dst.device());
			upload_bytes(src.data_ptr(), dst.data_ptr(), nbytes, dst.device().index(),
				     non_blocking);
			return dst;
		}
		if (src.device() == dst.device()) {
			c10::DeviceGuard guard(dst.device());
			copy_device_bytes(src.data_ptr(), dst.data_ptr(), nbytes,
					  dst.device().index());
			return dst;
		}
	}

	if (is_spyre(src) && src.device() == dst.device() &&
	    card_copyable(src.scalar_type(), dst.scalar_type())) {
		device_copy(src, dst);
		return dst;
	}

	// General case through host memory.
	at::Tensor src_cpu = is_spyre(src) ? download_view(src) : src;
	if (dst.device().is_cpu()) {
		dst.copy_(src_cpu);
		return dst;
	}
	c10::DeviceGuard guard(dst.device());
	auto index = dst.device().index();
	if (dst.is_non_overlapping_and_dense()) {
		at::Tensor tmp = pinned_like(index, dst, dst.scalar_type());
		tmp.copy_(src_cpu);
		upload_bytes(tmp.data_ptr(), dst.data_ptr(), nbytes, index, non_blocking);
		return dst;
	}
	// A strided destination: read, modify and write back the span it covers.
	at::Tensor span = download_view(dst);
	span.copy_(src_cpu);
	upload_bytes(span.data_ptr(), dst.data_ptr(), span_elems(dst) * dst.element_size(), index,
		     non_blocking);
	return dst;
}

} // namespace torch_spyre
