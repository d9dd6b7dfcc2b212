// SPDX-License-Identifier: MIT
//
// Ops whose result size depends on the data: nonzero, masked_select and
// indexing with a bool mask (x[mask], which print() of a float tensor uses
// through masked_select). As on CUDA they synchronise once, to read how
// many elements are selected; everything else runs on the card.
//
// The card has a gather but no scatter, so the k-th selected element is
// found rather than written: with pos the running count of selected
// elements (an fp32 cumsum), the flat index of the k-th (k from 1) is the
// number of elements whose running count is below k, which binary lifting
// over the index's bits finds with gathers of pos, compares and selects:
// log2(n) rounds over the [count] result, no [count, n] table. All values
// are integers below 2^24, exact in fp32: larger tensors are refused.
#include "kernels.h"
#include "op_tensor.h"

#include <ATen/ATen.h>
#include <ATen/native/Resize.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <vector>

namespace torch_spyre {
namespace {

constexpr int64_t kExact = int64_t(1) << 24; // fp32 holds integers exactly below this
constexpr int64_t kRow = 4096;		     // cumsum row length that fits the scratchpad

int bit_length(int64_t n)
{
	int b = 0;
	while (n >> b)
		b++;
	return b;
}

// Inclusive running sum of the 0/1 fp32 vector @keep: one cumsum when it
// fits a row, else rows of kRow plus each row's offset (the running sum of
// the rows' totals before it).
at::Tensor running_count(const at::Tensor &keep)
{
	int64_t n = keep.numel();
	if (n <= kRow)
		return keep.cumsum(0);
	int64_t rows = (n + kRow - 1) / kRow;
	at::Tensor padded = keep;
	if (rows * kRow != n)
		padded = at::cat({ keep, at::zeros({ rows * kRow - n }, keep.options()) });
	at::Tensor part = padded.view({ rows, kRow }).cumsum(1);
	at::Tensor total = part.select(1, kRow - 1);
	at::Tensor before = total.cumsum(0).sub(total);
	return part.add(before.unsqueeze(1)).view({ -1 }).narrow(0, 0, n);
}

// Row-major flat indices (fp32, exact) of the nonzero elements of @x, in
// order; reads the count from the card (the one synchronisation).
at::Tensor nonzero_flat(const char *op, const at::Tensor &x)
{
	int64_t n = x.numel();
	TORCH_CHECK_NOT_IMPLEMENTED(n < kExact, "spyre: ", op, " of ", x.scalar_type(), " ",
				    x.sizes(), ": at most 2^24 elements (its indices are found in "
				    "fp32 on the card)");
	auto f32 = x.options().dtype(at::kFloat);
	if (n == 0)
		return at::empty({ 0 }, f32);
	at::Tensor keep = x.reshape({ -1 }).ne(0).to(at::kFloat); // NaN counts, as on the CPU
	at::Tensor pos = running_count(keep);
	int64_t count = int64_t(pos.select(0, n - 1).item<float>());
	if (count == 0)
		return at::empty({ 0 }, f32);
	at::Tensor want = at::arange(1, count + 1, f32); // k, from 1
	at::Tensor acc = at::zeros({ count }, f32);
	at::Tensor table = pos.reshape({ n, 1 });
	for (int b = bit_length(n) - 1; b >= 0; b--) {
		double step = double(int64_t(1) << b);
		at::Tensor cand = acc.add(step);
		at::Tensor at_ = at::clamp(cand, std::nullopt, double(n)).sub(1).to(at::kLong);
		at::Tensor seen = at::embedding(table, at_).view({ count });
		at::Tensor ok = seen.lt(want).logical_and(cand.le(double(n)));
		acc = at::where(ok, cand, acc);
	}
	return acc;
}

// [count, ndim] int64 coordinates of the flat indices @flat in @shape: each
// coordinate is floor(rest / stride), found by binary lifting as well.
at::Tensor coordinates(const at::Tensor &flat, c10::IntArrayRef shape)
{
	int64_t count = flat.numel(), nd = int64_t(shape.size());
	at::Tensor out = at::empty({ count, nd }, flat.options().dtype(at::kLong));
	if (count == 0 || nd == 0)
		return out;
	at::Tensor rest = flat;
	int64_t stride = 1;
	std::vector<int64_t> strides(size_t(nd), 1);
	for (int64_t d = nd - 1; d >= 0; d--) {
		strides[size_t(d)] = stride;
		stride *= shape[size_t(d)];
	}
	for (int64_t d = 0; d < nd; d++) {
		double s = double(strides[size_t(d)]);
		at::Tensor q = at::zeros_like(rest);
		if (d == nd - 1) {
			q = rest;
		} else {
			for (int b = bit_length(shape[size_t(d)]) - 1; b >= 0; b--) {
				at::Tensor cand = q.add(double(int64_t(1) << b));
				q = at::where(cand.mul(s).le(rest), cand, q);
			}
			rest = rest.sub(q.mul(s));
		}
		card_copy(q, out.select(1, d));
	}
	return out;
}

at::Tensor spyre_nonzero(const at::Tensor &self)
{
	c10::DeviceGuard guard(self.device());
	at::Tensor out = coordinates(nonzero_flat("nonzero", self), self.sizes());
	count_device_op("nonzero");
	return out;
}

at::Tensor &nonzero_out(const at::Tensor &self, at::Tensor &out)
{
	at::Tensor r = spyre_nonzero(self);
	TORCH_CHECK(out.scalar_type() == at::kLong, "nonzero: out= must be int64, got ",
		    out.scalar_type());
	at::native::resize_output(out, r.sizes());
	return out.copy_(r);
}

// The elements of @src (broadcast with @mask) where @mask is true, in
// row-major order. int32/int64 rows move exactly (card interface 1.9),
// bools through fp32 (0 and 1 are exact).
at::Tensor spyre_masked_select(const at::Tensor &src, const at::Tensor &mask)
{
	TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_select: expected BoolTensor for mask");
	TORCH_CHECK(src.device() == mask.device(), "Expected all tensors to be on the same "
		    "device, but found ", src.device(), " and ", mask.device());
	auto dt = src.scalar_type();
	bool integer = dt == at::kInt || dt == at::kLong || dt == at::kBool;
	TORCH_CHECK_NOT_IMPLEMENTED(integer || dt == at::kFloat || dt == at::kHalf ||
					    dt == at::kBFloat16,
				    "spyre: masked_select of ", dt, " is not supported");
	c10::DeviceGuard guard(src.device());
	auto both = at::broadcast_tensors({ src, mask });
	at::Tensor flat = nonzero_flat("masked_select", both[1]);
	// int32/int64 rows move exactly (the integer mode's gather); bools through fp32
	bool exact = card_int(both[0]);
	TORCH_CHECK_NOT_IMPLEMENTED(dt == at::kBool || !integer || exact, "spyre: masked_select "
				    "of ", dt, " needs card interface 1.9 (exact integers)");
	integer = integer && !exact;
	at::Tensor data = integer ? card_cast(both[0], at::kFloat) : both[0];
	count_device_op("masked_select");
	if (flat.numel() == 0)
		return at::empty({ 0 }, src.options());
	at::Tensor r = at::embedding(data.reshape({ -1, 1 }), flat.to(at::kLong)).view({ -1 });
	return integer ? card_cast(r, dt) : r;
}

at::Tensor &masked_select_out(const at::Tensor &src, const at::Tensor &mask, at::Tensor &out)
{
	at::Tensor r = spyre_masked_select(src, mask);
	TORCH_CHECK(out.scalar_type() == r.scalar_type(), "masked_select: out= has dtype ",
		    out.scalar_type(), ", the result is ", r.scalar_type());
	at::native::resize_output(out, r.sizes());
	return out.copy_(r);
}

// x[mask] = value with one bool mask index (after leading ":"s) and one
// value: a masked_fill_ on the card, with no synchronisation. One integer
// index of the first dimension goes to index_put_rows (ops_index_put.cpp);
// other index puts (several index tensors, a value per selected element of
// a mask) need a scatter the card does not have: the counted fallback.
at::Tensor &index_put_impl(at::Tensor &self, const c10::List<std::optional<at::Tensor>> &indices,
			   const at::Tensor &values, bool accumulate, bool unsafe)
{
	int64_t lead = 0, found = -1; // ":"s before the mask, the mask's position
	bool other = false;	      // another index, or one not bool
	for (size_t i = 0; i < indices.size(); i++) {
		std::optional<at::Tensor> o = indices.get(i);
		if (!o || !o->defined()) {
			lead += found < 0;
			continue;
		}
		if (found >= 0 || o->scalar_type() != at::kBool)
			other = true;
		else
			found = int64_t(i);
	}
	at::Tensor mask;
	if (found >= 0)
		mask = *indices.get(size_t(found));
	bool ok = found >= 0 && !other && !accumulate && values.numel() == 1 && mask.dim() > 0 &&
		  lead + mask.dim() <= self.dim() && !mask.device().is_cpu() &&
		  mask.device() == self.device() &&
		  (values.device() == self.device() || values.device().is_cpu());
	for (int64_t d = 0; ok && d < mask.dim(); d++)
		ok = mask.size(d) == self.size(lead + d);
	if (!ok) {
		if (index_put_rows(self, indices, values, accumulate) ||
		    index_put_any(self, indices, values, accumulate))
			return self;
		return SPYRE_FALLBACK(_index_put_impl_, self, indices, values, accumulate, unsafe);
	}
	c10::DeviceGuard guard(self.device());
	std::vector<int64_t> shape(size_t(lead), 1);
	shape.insert(shape.end(), mask.sizes().begin(), mask.sizes().end());
	shape.resize(size_t(self.dim()), 1);
	at::Tensor v = values.reshape({});
	if (v.device().is_cpu())
		self.masked_fill_(mask.view(shape), v.item());
	else
		self.masked_fill_(mask.view(shape), v);
	return self;
}

} // namespace

// A bool (or uint8) index of x[..] as the integer index tensors it stands
// for, one per dim it covers (ATen's rule: mask.nonzero() split by column).
std::vector<at::Tensor> mask_as_indices(const at::Tensor &mask)
{
	at::Tensor nz = spyre_nonzero(mask);
	std::vector<at::Tensor> r;
	for (int64_t d = 0; d < mask.dim(); d++)
		r.push_back(nz.select(1, d));
	return r;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	m.impl("nonzero", spyre_nonzero);
	m.impl("nonzero.out", nonzero_out);
	m.impl("masked_select", spyre_masked_select);
	m.impl("masked_select.out", masked_select_out);
	m.impl("_index_put_impl_", index_put_impl);
}

} // namespace torch_spyre
