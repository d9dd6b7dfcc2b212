// SPDX-License-Identifier: MIT
//
// Device kernels of the indexing and shaping ops: embedding and
// index_select (the op library's row gather; bool rows as fp32), cat, tril/triu (float and
// bool; int32/int64 exactly as a where), and arange
// (the op library has no iota: a fill of ones and a running sum).
#include "kernels.h"
#include "op_tensor.h"

#include <ATen/ATen.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TypeProperties.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <cmath>
#include <cstdlib>

namespace torch_spyre {
namespace {

bool is_float(at::ScalarType t)
{
	return t == at::kFloat || t == at::kHalf || t == at::kBFloat16;
}

void check_index(const char *op, const at::Tensor &self, const at::Tensor &index)
{
	TORCH_CHECK(self.device() == index.device(),
		    "Expected all tensors to be on the same device, but found at least two "
		    "devices, ",
		    self.device(), " and ", index.device(), "! (when checking arguments for ", op,
		    ")");
	TORCH_CHECK_INDEX(index.scalar_type() == at::kLong || index.scalar_type() == at::kInt, op,
			  "(): Expected dtype int32 or int64 for index");
	TORCH_CHECK_NOT_IMPLEMENTED(is_float(self.scalar_type()) || card_int(self), "spyre: ", op,
				    " gathers float32/float16/bfloat16 rows on the card (int32/int64 "
				    "from card interface 1.9), not ",
				    self.scalar_type());
}

// out[idx..., :] = weight[idx[...], :] for a [V, D] weight. An index outside
// [0, V) fails the launch on the card (reported by the next synchronize).
void gather_rows(const char *op, const at::Tensor &weight, const at::Tensor &idx,
		 const at::Tensor &out)
{
	if (out.numel() == 0)
		return;
	spyre_tensor dw = describe(weight), di = describe(idx), dout = describe(out);
	check_op(spyre_op_embedding(ops_context(out.device().index()), launch_stream(out), &dw, &di,
				    &dout),
		 op);
	count_device_op(op);
}

at::Tensor spyre_embedding(const at::Tensor &weight, const at::Tensor &indices, c10::SymInt padding_idx,
		     bool scale_grad_by_freq, bool sparse)
{
	TORCH_CHECK(weight.dim() == 2, "'weight' must be 2-D");
	check_index("embedding", weight, indices);
	c10::DeviceGuard guard(weight.device());
	std::vector<int64_t> shape(indices.sizes().begin(), indices.sizes().end());
	shape.push_back(weight.size(1));
	auto out = at::empty(shape, weight.options());
	// the op library takes up to SPYRE_MAX_DIMS - 1 index dims: flatten more
	auto idx = indices.dim() < SPYRE_MAX_DIMS ? indices : indices.reshape({-1});
	gather_rows("embedding", weight, idx,
		    indices.dim() < SPYRE_MAX_DIMS ? out : out.view({-1, weight.size(1)}));
	return out;
}

at::Tensor spyre_index_select(const at::Tensor &self, int64_t dim, const at::Tensor &index)
{
	TORCH_CHECK_INDEX(index.dim() <= 1, "index_select(): Index is supposed to be a vector");
	if (self.scalar_type() == at::kBool) { // rows of 0 and 1 move exactly as fp32
		c10::DeviceGuard guard(self.device());
		return card_cast(spyre_index_select(card_cast(self, at::kFloat), dim, index),
				 at::kBool);
	}
	check_index("index_select", self, index);
	c10::DeviceGuard guard(self.device());
	if (self.dim() == 0) {
		TORCH_CHECK_INDEX(index.numel() == 1,
				  "index_select(): Index to scalar can have only 1 value, got ",
				  index.numel(), " value(s)");
		return self.unsqueeze(0).index_select(0, index.reshape({1})).squeeze(0);
	}
	dim = c10::maybe_wrap_dim(dim, self.dim());
	int64_t n = index.numel();
	TORCH_CHECK_INDEX(self.size(dim) > 0 || n == 0,
			  "index_select(): self indexing axis dim should be positive");
	// rows along @dim: move it first and view the rest as one row
	auto moved = self.movedim(dim, 0);
	std::vector<int64_t> rest(moved.sizes().begin() + 1, moved.sizes().end());
	int64_t row = c10::multiply_integers(rest);
	auto weight = moved.reshape({moved.size(0), row});
	auto rows = at::empty({n, row}, self.options());
	gather_rows("index_select", weight, index.reshape({n}), rows);
	std::vector<int64_t> shape{n};
	shape.insert(shape.end(), rest.begin(), rest.end());
	auto r = rows.view(shape).movedim(0, dim);
	return dim == 0 ? r : r.contiguous();
}

at::Tensor &index_select_out(const at::Tensor &self, int64_t dim, const at::Tensor &index,
			     at::Tensor &out)
{
	auto r = spyre_index_select(self, dim, index);
	TORCH_CHECK(out.scalar_type() == r.scalar_type(), "index_select(): out has dtype ",
		    out.scalar_type(), ", expected ", r.scalar_type());
	at::native::resize_output(out, r.sizes());
	return out.copy_(r);
}

// Concatenation: float tensors in one op library call; other dtypes (the
// card has no int64 vector arithmetic) by device copies into slices.
at::Tensor &cat_out(const at::ITensorListRef &tensors, int64_t dim, at::Tensor &out)
{
	std::vector<at::Tensor> all(tensors.begin(), tensors.end());
	TORCH_CHECK(!all.empty(), "torch.cat(): expected a non-empty list of Tensors");
	// legacy: 1-D empty tensors are skipped whatever the other shapes
	std::vector<at::Tensor> xs;
	const at::Tensor *ref = nullptr;
	for (auto &t : all) {
		TORCH_CHECK(t.device() == all[0].device(),
			    "Expected all tensors to be on the same device, but found at least two "
			    "devices, ",
			    all[0].device(), " and ", t.device(), "! (when checking arguments for cat)");
		if (t.dim() == 1 && t.size(0) == 0)
			continue;
		xs.push_back(t);
		if (!ref)
			ref = &xs.back();
	}
	auto dt = at::native::result_type(tensors);
	TORCH_CHECK(at::canCast(dt, out.scalar_type()), "torch.cat(): result type ", dt,
		    " can't be cast to the desired output type ", out.scalar_type());
	if (xs.empty()) {
		at::native::resize_output(out, {0});
		return out;
	}
	const at::Tensor first = xs[0];
	TORCH_CHECK(first.dim() > 0, "zero-dimensional tensor (at position 0) cannot be concatenated");
	dim = c10::maybe_wrap_dim(dim, first.dim());
	std::vector<int64_t> shape(first.sizes().begin(), first.sizes().end());
	shape[dim] = 0;
	for (size_t i = 0; i < xs.size(); i++) {
		TORCH_CHECK(xs[i].dim() == first.dim(), "Tensors must have same number of dimensions: "
							"got ",
			    first.dim(), " and ", xs[i].dim());
		for (int64_t d = 0; d < first.dim(); d++)
			TORCH_CHECK(d == dim || xs[i].size(d) == first.size(d),
				    "Sizes of tensors must match except in dimension ", dim,
				    ". Expected size ", first.size(d), " but got size ", xs[i].size(d),
				    " for tensor number ", i, " in the list.");
		shape[dim] += xs[i].size(dim);
	}
	c10::DeviceGuard guard(first.device());
	at::native::resize_output(out, shape);
	if (out.numel() == 0)
		return out;
	bool one_call = is_float(out.scalar_type()) && out.is_contiguous() &&
			xs.size() <= 64;
	if (one_call) {
		std::vector<spyre_tensor> ds;
		std::vector<at::Tensor> keep;
		for (auto &x : xs) {
			at::Tensor t = x;
			if (t.scalar_type() != out.scalar_type())
				t = t.to(out.scalar_type());
			keep.push_back(t);
			if (t.numel())
				ds.push_back(describe(t));
		}
		spyre_tensor dout = describe(out);
		check_op(spyre_op_cat(ops_context(out.device().index()), launch_stream(out), ds.data(),
				      unsigned(ds.size()), int(dim), &dout),
			 "cat");
		count_device_op("cat");
		return out;
	}
	int64_t at = 0;
	for (auto &x : xs) {
		if (x.size(dim))
			out.narrow(dim, at, x.size(dim)).copy_(x);
		at += x.size(dim);
	}
	count_device_op("cat");
	return out;
}

at::Tensor spyre_cat(const at::ITensorListRef &tensors, int64_t dim)
{
	std::vector<at::Tensor> all(tensors.begin(), tensors.end());
	TORCH_CHECK(!all.empty(), "torch.cat(): expected a non-empty list of Tensors");
	auto out = at::empty({0}, all[0].options().dtype(at::native::result_type(tensors)));
	cat_out(tensors, dim, out);
	return out;
}

at::Tensor tri(const char *op, const at::Tensor &self, int64_t k, bool upper)
{
	TORCH_CHECK(self.dim() >= 2, op, ": input tensor must have at least 2 dimensions");
	auto dt = self.scalar_type();
	c10::DeviceGuard guard(self.device());
	if (dt == at::kInt || dt == at::kLong) {
		// exact: the kept triangle of a bool tensor of ones selects the integers
		TORCH_CHECK_NOT_IMPLEMENTED(card_int(self), "spyre: ", op, " of ", dt,
					    " needs card interface 1.9 (exact integers)");
		at::Tensor keep = tri(op, at::ones(self.sizes(), self.options().dtype(at::kBool)), k,
				      upper);
		return at::where(keep, self, at::zeros({}, self.options()));
	}
	TORCH_CHECK_NOT_IMPLEMENTED(is_float(dt) || dt == at::kBool, "spyre: ", op,
				    " of float32/float16/bfloat16, bool, int32 and int64 only, ",
				    "not ", dt);
	auto out = at::empty(self.sizes(), self.options());
	if (out.numel() == 0)
		return out;
	// beyond the matrix the result is all kept or all zero: no float limit
	int64_t rows = self.size(-2), cols = self.size(-1);
	k = std::max<int64_t>(std::min<int64_t>(k, cols + 1), -rows - 1);
	spyre_tensor dx = describe(self), dout = describe(out);
	check_op(spyre_op_tril(ops_context(self.device().index()), launch_stream(self), &dx, k,
			       upper, &dout),
		 op);
	count_device_op(op);
	return out;
}

at::Tensor spyre_tril(const at::Tensor &self, int64_t k)
{
	return tri("tril", self, k, false);
}

at::Tensor spyre_triu(const at::Tensor &self, int64_t k)
{
	return tri("triu", self, k, true);
}

at::Tensor &tril_out(const at::Tensor &self, int64_t k, at::Tensor &out)
{
	auto r = spyre_tril(self, k);
	at::native::resize_output(out, r.sizes());
	return out.copy_(r);
}

at::Tensor &triu_out(const at::Tensor &self, int64_t k, at::Tensor &out)
{
	auto r = spyre_triu(self, k);
	at::native::resize_output(out, r.sizes());
	return out.copy_(r);
}

// arange: float results on the card (ones, a running sum, then start + i *
// step); int32/int64 ones with integer start and step by the op library's
// exact arange (card interface 1.9); others are written on the host and
// uploaded.
at::Tensor &arange_out(const at::Scalar &start, const at::Scalar &end, const at::Scalar &step,
		       at::Tensor &out)
{
	// PyTorch converts the bounds and step to the result's accumulate type
	// first (int64 for integer results: 2.9 -> 2), and sizes an int64
	// result in integers, any other one as ceil((end - start) / step) of
	// the given values.
	TORCH_CHECK(std::isfinite(start.toDouble()) && std::isfinite(end.toDouble()),
		    "unsupported range: ", start.toDouble(), " -> ", end.toDouble());
	const bool integral = at::isIntegralType(out.scalar_type(), true);
	double s = integral ? double(start.toLong()) : start.toDouble();
	double e = integral ? double(end.toLong()) : end.toDouble();
	double st = integral ? double(step.toLong()) : step.toDouble();
	TORCH_CHECK(st != 0, "step must be nonzero");
	TORCH_CHECK((st > 0 && e >= s) || (st < 0 && e <= s),
		    "upper bound and larger bound inconsistent with step sign");
	int64_t n;
	if (out.scalar_type() == at::kLong) {
		int64_t a = start.toLong(), b = end.toLong(), c = step.toLong();
		n = (b - a + c - (c > 0 ? 1 : -1)) / c;
	} else {
		n = int64_t(std::ceil((end.toDouble() - start.toDouble()) / step.toDouble()));
	}
	c10::DeviceGuard guard(out.device());
	at::native::resize_output(out, {n});
	if (n == 0)
		return out;
	auto dt = out.scalar_type();
	constexpr int64_t exact = int64_t(1) << 53; // the op library takes doubles
	bool int_ok = card_int(out) && start.isIntegral(true) && step.isIntegral(true) &&
		      std::llabs(start.toLong()) <= exact && std::llabs(step.toLong()) <= exact;
	if (int_ok && n <= (int64_t(1) << 24) && out.is_contiguous()) {
		spyre_tensor dout = describe(out);
		check_op(spyre_op_arange(ops_context(out.device().index()), launch_stream(out), s, st,
					 &dout),
			 "arange");
		count_device_op("arange");
		return out;
	}
	if (!is_float(dt) || n > (int64_t(1) << 24) || !out.is_contiguous()) {
		auto host = at::arange(start, end, step, out.options().device(c10::kCPU));
		out.copy_(host);
		count_device_op("arange");
		return out;
	}
	auto *ops = ops_context(out.device().index());
	auto *str = launch_stream(out);
	auto ones = at::empty({n}, out.options().dtype(at::kFloat));
	auto idx = at::empty({n}, out.options().dtype(at::kFloat));
	spyre_tensor d1 = describe(ones), di = describe(idx);
	check_op(spyre_op_fill(ops, str, 1.0, &d1), "arange");
	check_op(spyre_op_cumsum(ops, str, &d1, 0, &di), "arange");
	// idx holds 1..n exactly (below 2^24): value = (idx - 1) * step + start
	check_op(spyre_op_binary_scalar(ops, str, SPYRE_BIN_SUB, &di, 1.0, 0, &di), "arange");
	check_op(spyre_op_binary_scalar(ops, str, SPYRE_BIN_MUL, &di, st, 0, &di), "arange");
	auto dout = describe(out);
	if (dt == at::kFloat) {
		check_op(spyre_op_binary_scalar(ops, str, SPYRE_BIN_ADD, &di, s, 0, &dout),
			 "arange");
	} else {
		check_op(spyre_op_binary_scalar(ops, str, SPYRE_BIN_ADD, &di, s, 0, &di), "arange");
		check_op(spyre_op_copy(ops, str, &di, &dout), "arange");	/* fp16/bf16 */
	}
	count_device_op("arange");
	return out;
}

// torch.gather through the op library (spyre_op_gather): float data, and
// int32/int64 data moved as rows (exact, card interface 1.9), bool as fp32;
// x of at most 2^24 elements.
at::Tensor spyre_gather(const at::Tensor &self, int64_t dim, const at::Tensor &index,
			bool sparse_grad)
{
	(void)sparse_grad;
	auto dt = self.scalar_type();
	bool long_idx = index.scalar_type() == at::kLong || index.scalar_type() == at::kInt;
	if (long_idx && index.device() == self.device() && index.numel() == 0) {
		count_device_op("gather"); // nothing to read: the CPU skips the shape checks too
		return at::empty(index.sizes(), self.options());
	}
	if (long_idx && (self.dim() == 0 || index.dim() == 0) && self.dim() <= 1 &&
	    index.dim() <= 1) // a 0-dim tensor gathers as one of one element
		return spyre_gather(self.reshape({ -1 }), 0, index.reshape({ -1 }), sparse_grad)
			.reshape(index.sizes());
	if (dt == at::kBool && long_idx && index.device() == self.device()) {
		c10::DeviceGuard guard(self.device()); // 0 and 1 move exactly as fp32
		return card_cast(spyre_gather(card_cast(self, at::kFloat), dim, index, sparse_grad),
				 at::kBool);
	}
	bool ok = (is_float(dt) || card_int(self)) &&
		  (index.scalar_type() == at::kLong || index.scalar_type() == at::kInt) &&
		  index.device() == self.device() && self.dim() > 0 &&
		  index.dim() == self.dim() && self.numel() <= (int64_t(1) << 24);
	if (!ok)
		return SPYRE_FALLBACK(gather, self, dim, index, sparse_grad);
	dim = c10::maybe_wrap_dim(dim, self.dim());
	for (int64_t d = 0; d < self.dim(); d++)
		TORCH_CHECK_INDEX(d == dim || index.size(d) <= self.size(d), "gather(): Size does not "
				  "match at dimension ", d, " expected index ", index.sizes(),
				  " to be no larger than self ", self.sizes(), " apart from dimension ",
				  dim);
	c10::DeviceGuard guard(self.device());
	at::Tensor out = at::empty(index.sizes(), self.options());
	count_device_op("gather");
	if (out.numel() == 0)
		return out;
	spyre_tensor dx = describe(self), di = describe(index), dout = describe(out);
	check_op(spyre_op_gather(ops_context(self.device().index()), launch_stream(self), &dx,
				 int(dim), &di, &dout),
		 "gather");
	return out;
}

// x[i0, i1, ..] with integer index tensors at adjacent positions (the others
// ":"): the index tensors broadcast together, become one linear index over
// the indexed dims (row-major, negative indices wrapped), and that is an
// index_select of the tensor with those dims merged. int32/int64 rows move
// as they are (exact, card interface 1.9), bool data through fp32 (0 and 1
// are exact). A bool mask stands for the integer indices of its true
// elements (found on the card, one synchronisation for their count). Index
// tensors that are not adjacent go to the fallback.
at::Tensor spyre_index(const at::Tensor &self, const c10::List<std::optional<at::Tensor>> &indices)
{
	std::vector<at::Tensor> idx;
	int64_t first = -1, last = -1, dim = 0;
	bool ok = self.dim() > 0 && int64_t(indices.size()) <= self.dim();
	for (size_t i = 0; i < indices.size() && ok; i++) {
		std::optional<at::Tensor> o = indices.get(i);
		if (!o || !o->defined()) {
			dim++;
			continue;
		}
		at::Tensor t = *o;
		if (t.device().is_cpu()) // as on CUDA, host indices are uploaded
			t = t.to(self.device());
		ok = t.device() == self.device() && (last < 0 || last == dim - 1);
		if (ok && t.dim() > 0 &&
		    (t.scalar_type() == at::kBool || t.scalar_type() == at::kByte)) {
			// a mask: the integer indices of its true elements (ops_select.cpp)
			TORCH_CHECK_INDEX(dim + t.dim() <= self.dim(),
					  "too many indices for tensor of dimension ", self.dim());
			for (int64_t d = 0; d < t.dim(); d++)
				TORCH_CHECK_INDEX(t.size(d) == self.size(dim + d),
						  "The shape of the mask ", t.sizes(), " at index ",
						  d, " does not match the shape of the indexed ",
						  "tensor ", self.sizes(), " at index ", dim + d);
			at::Tensor mask = t.scalar_type() == at::kBool ? t : t.ne(0);
			for (auto &p : mask_as_indices(mask)) {
				first = first < 0 ? dim : first;
				last = dim++;
				idx.push_back(p);
			}
			continue;
		}
		ok = ok && (t.scalar_type() == at::kLong || t.scalar_type() == at::kInt);
		first = first < 0 ? dim : first;
		last = dim++;
		idx.push_back(t);
	}
	auto dt = self.scalar_type();
	bool integer = dt == at::kBool;
	if (!ok || idx.empty() || (!is_float(dt) && !integer && !card_int(self)))
		return SPYRE_FALLBACK(index_Tensor, self, indices);
	c10::DeviceGuard guard(self.device());
	idx = at::broadcast_tensors(idx);
	at::Tensor linear;
	for (size_t j = 0; j < idx.size(); j++) {
		int64_t size = self.size(first + int64_t(j));
		at::Tensor t = idx[j].to(at::kLong);
		t = at::where(t.lt(0), t.add(size), t);
		linear = j ? linear.mul(size).add(t) : t;
	}
	std::vector<int64_t> merged(self.sizes().begin(), self.sizes().begin() + first);
	std::vector<int64_t> shape = merged;
	// the indexed dims merged, by their size (not -1: an empty tensor's
	// other dims would leave -1 ambiguous)
	int64_t rows = 1;
	for (int64_t d = first; d <= last; d++)
		rows *= self.size(d);
	merged.push_back(rows);
	merged.insert(merged.end(), self.sizes().begin() + last + 1, self.sizes().end());
	shape.insert(shape.end(), idx[0].sizes().begin(), idx[0].sizes().end());
	shape.insert(shape.end(), self.sizes().begin() + last + 1, self.sizes().end());
	at::Tensor src = integer ? card_cast(self, at::kFloat) : self;
	at::Tensor r = at::index_select(src.reshape(merged), first, linear.reshape({-1}));
	r = r.reshape(shape);
	return integer ? card_cast(r, dt) : r;
}

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	m.impl("index.Tensor", spyre_index);
	m.impl("gather", spyre_gather);
	m.impl("embedding", spyre_embedding);
	m.impl("index_select", spyre_index_select);
	m.impl("index_select.out", index_select_out);
	m.impl("cat", spyre_cat);
	m.impl("cat.out", cat_out);
	m.impl("tril", spyre_tril);
	m.impl("tril.out", tril_out);
	m.impl("triu", spyre_triu);
	m.impl("triu.out", triu_out);
	m.impl("arange.start_out", arange_out);
}

} // namespace torch_spyre
