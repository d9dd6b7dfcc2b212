// SPDX-License-Identifier: MIT
#include "op_tensor.h"

#include "allocator.h"
#include "device.h"
#include "stream.h"

#include <c10/util/Exception.h>

#include <atomic>
#include <cerrno>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace torch_spyre {
namespace {

struct OpsContexts {
	std::mutex mutex;
	std::vector<spyre_ops *> per_device;
	// Each device's context once created, read without the mutex: every
	// device kernel asks for it, some more than once per op.
	std::atomic<spyre_ops *> created[kMaxDevices] = {};
};

OpsContexts &contexts()
{
	// Never destroyed: recipes in the caches may still be in flight when
	// static destructors run, and the devices are closed by the OS anyway.
	static auto *c = new OpsContexts();
	return *c;
}

} // namespace

spyre_ops *ops_context(c10::DeviceIndex index)
{
	check_device_index(index);
	auto &c = contexts();
	if (spyre_ops *ops = c.created[index].load(std::memory_order_acquire))
		return ops;
	std::lock_guard<std::mutex> lock(c.mutex);
	if (c.per_device.size() <= size_t(index))
		c.per_device.resize(index + 1, nullptr);
	if (!c.per_device[index])
		SPYRE_CHECK(spyre_ops_create(device_handle(index), 0, &c.per_device[index]));
	c.created[index].store(c.per_device[index], std::memory_order_release);
	return c.per_device[index];
}

std::optional<spyre_dtype> to_spyre_dtype(at::ScalarType t)
{
	switch (t) {
	case at::kFloat:
		return SPYRE_FLOAT32;
	case at::kHalf:
		return SPYRE_FLOAT16;
	case at::kBFloat16:
		return SPYRE_BFLOAT16;
	case at::kChar:
		return SPYRE_INT8;
	case at::kInt:
		return SPYRE_INT32;
	case at::kLong:
		return SPYRE_INT64;
	case at::kBool:
		return SPYRE_BOOL;
	default:
		return std::nullopt;
	}
}

spyre_tensor describe_as(const at::Tensor &t, spyre_dtype as)
{
	TORCH_CHECK(t.defined(), "spyre: an undefined tensor reached a device kernel");
	TORCH_CHECK(t.device().is_privateuseone(), "spyre: expected a spyre tensor, got one on ",
		    t.device());
	TORCH_CHECK(t.dim() <= SPYRE_MAX_DIMS, "spyre: tensors of at most ", SPYRE_MAX_DIMS,
		    " dimensions reach the card, got ", t.dim());
	spyre_tensor d{};
	d.dtype = as;
	d.layout = SPYRE_LAYOUT_STRIDED;
	d.ndim = unsigned(t.dim());
	uint64_t reach = 1;
	for (int64_t i = 0; i < t.dim(); i++) {
		TORCH_CHECK(t.stride(i) >= 0, "spyre: negative strides are not supported (dim ", i,
			    " of a tensor of shape ", t.sizes(), ")");
		d.shape[i] = t.size(i);
		d.strides[i] = t.stride(i);
		if (t.size(i) > 0)
			reach += uint64_t(t.size(i) - 1) * uint64_t(t.stride(i));
	}
	if (t.numel() == 0)
		return d; // no elements: nothing is read or written
	d.buf = resolve_device_ptr(t.data_ptr(), reach * t.element_size());
	return d;
}

// @t's description with every element split into @lanes lanes of dtype @as
// (a trailing dim of @lanes, stride 1).
spyre_tensor describe_lanes(const at::Tensor &t, spyre_dtype as, int64_t lanes)
{
	TORCH_CHECK_NOT_IMPLEMENTED(t.dim() < SPYRE_MAX_DIMS, "spyre: a ", t.scalar_type(),
				    " copy of a ", t.dim(), "-dim tensor (the card handles ",
				    SPYRE_MAX_DIMS - 1, " dims for this dtype)");
	spyre_tensor d = describe_as(t, as);
	for (unsigned i = 0; i < d.ndim; i++)
		d.strides[i] *= lanes;
	d.shape[d.ndim] = lanes;
	d.strides[d.ndim] = 1;
	d.ndim++;
	return d;
}

spyre_tensor describe(const at::Tensor &t)
{
	auto dt = to_spyre_dtype(t.scalar_type());
	TORCH_CHECK_NOT_IMPLEMENTED(dt.has_value(), "spyre: the card has no ", t.scalar_type(),
				    " type");
	return describe_as(t, *dt);
}

spyre_stream *launch_stream(const at::Tensor &t)
{
	return native_stream(current_stream(t.device().index()));
}

void check_op(int rc, const char *op)
{
	if (rc >= 0)
		return;
	TORCH_CHECK_NOT_IMPLEMENTED(rc != -EOPNOTSUPP, "spyre: ", op, ": ",
				    spyre_last_error());
	throw_spyre_error(rc, op);
}

void run_copy(const at::Tensor &like, const spyre_tensor &src, const spyre_tensor &dst)
{
	check_op(spyre_op_copy(ops_context(like.device().index()), launch_stream(like), &src, &dst),
		 "copy");
}

namespace {
std::mutex op_count_mutex;
// std::less<> finds a name seen before from its string_view: no string is
// built per op.
std::map<std::string, uint64_t, std::less<>> op_counts_map;
} // namespace

void count_device_op(const char *op)
{
	std::string_view name(op);
	std::lock_guard<std::mutex> lock(op_count_mutex);
	auto it = op_counts_map.find(name);
	if (it != op_counts_map.end())
		it->second++;
	else
		op_counts_map.emplace(name, 1);
}

std::map<std::string, uint64_t> device_op_counts()
{
	std::lock_guard<std::mutex> lock(op_count_mutex);
	return {op_counts_map.begin(), op_counts_map.end()};
}

} // namespace torch_spyre
