// SPDX-License-Identifier: MIT
#include "ops_integer.h"

#include "kernels.h"
#include "op_tensor.h"

#include <ATen/ATen.h>

#include <cmath>
#include <string>
#include <unordered_set>
#include <vector>

namespace torch_spyre {

// ---- any, all and isin (composed from card kernels) --------------------------

namespace {

// any/all over @dims (all dims when empty): the extreme of (x != 0).
at::Tensor truth_reduce(const at::Tensor &x, at::IntArrayRef dims, bool keepdim, bool all)
{
	if (x.numel() == 0) { // any() of nothing is false, all() true
		std::vector<bool> reduced(static_cast<size_t>(x.dim()), dims.empty());
		for (int64_t d : dims)
			reduced[static_cast<size_t>(c10::maybe_wrap_dim(d, x.dim()))] = true;
		std::vector<int64_t> shape;
		for (int64_t d = 0; d < x.dim(); d++)
			if (!reduced[static_cast<size_t>(d)])
				shape.push_back(x.size(d));
			else if (keepdim)
				shape.push_back(1);
		return at::full(shape, all, x.options().dtype(at::kBool));
	}
	at::Tensor t = at::ne(x, 0).to(at::kFloat);
	t = all ? at::amin(t, dims, keepdim) : at::amax(t, dims, keepdim);
	return t.to(at::kBool);
}

std::vector<int64_t> dims_of(at::OptionalIntArrayRef dims)
{
	return dims ? dims->vec() : std::vector<int64_t>{};
}

at::Tensor &into_out(const at::Tensor &r, at::Tensor &out)
{
	TORCH_CHECK(out.scalar_type() == r.scalar_type(), "spyre: out= has dtype ",
		    out.scalar_type(), ", the result is ", r.scalar_type());
	if (!out.sizes().equals(r.sizes()))
		out.resize_(r.sizes());
	out.copy_(r);
	return out;
}

#define TRUTH_REDUCTION(op, is_all)                                                          \
	at::Tensor op##_k(const at::Tensor &x)                                               \
	{                                                                                    \
		return truth_reduce(x, {}, false, is_all);                                   \
	}                                                                                    \
	at::Tensor op##_dim_k(const at::Tensor &x, int64_t dim, bool keepdim)                \
	{                                                                                    \
		return truth_reduce(x, dim, keepdim, is_all);                                \
	}                                                                                    \
	at::Tensor op##_dims_k(const at::Tensor &x, at::OptionalIntArrayRef dims, bool keepdim) \
	{                                                                                    \
		return truth_reduce(x, dims_of(dims), keepdim, is_all);                      \
	}                                                                                    \
	at::Tensor &op##_out_k(const at::Tensor &x, int64_t dim, bool keepdim, at::Tensor &out) \
	{                                                                                    \
		return into_out(truth_reduce(x, dim, keepdim, is_all), out);                 \
	}                                                                                    \
	at::Tensor &op##_dims_out_k(const at::Tensor &x, at::OptionalIntArrayRef dims,       \
				    bool keepdim, at::Tensor &out)                           \
	{                                                                                    \
		return into_out(truth_reduce(x, dims_of(dims), keepdim, is_all), out);       \
	}                                                                                    \
	at::Tensor &op##_all_out_k(const at::Tensor &x, at::Tensor &out)                    \
	{                                                                                    \
		return into_out(truth_reduce(x, {}, false, is_all), out);                    \
	}

TRUTH_REDUCTION(any, false)
TRUTH_REDUCTION(all, true)

// Each element compared with every test element, then any over the tests.
at::Tensor isin_k(const at::Tensor &elements, const at::Tensor &test, bool assume_unique,
		  bool invert)
{
	(void)assume_unique;
	at::Tensor hit = truth_reduce(at::eq(elements.reshape({-1, 1}), test.reshape({1, -1})),
				      -1, false, false)
				 .reshape(elements.sizes());
	return invert ? at::logical_not(hit) : hit;
}

at::Tensor &isin_out_k(const at::Tensor &elements, const at::Tensor &test, bool assume_unique,
		       bool invert, at::Tensor &out)
{
	return into_out(isin_k(elements, test, assume_unique, invert), out);
}

// histc of an integer tensor (CUDA's semantics: the result has x's dtype;
// the CPU takes floats only), exactly: bin = (x - min) * bins / (max - min)
// in int64 (x == max in the last bin, values outside [min, max] in none),
// then one compare per bin and a sum. Float data and a min == max range
// (the data's own) take the fallback.
at::Tensor histc_k(const at::Tensor &x, int64_t bins, const at::Scalar &min,
		   const at::Scalar &max)
{
	double lo = min.toDouble(), hi = max.toDouble();
	if (card_int(x) && lo == hi && x.numel() > 0) { // the data's range, as CUDA takes it
		lo = double(x.min().item<int64_t>());
		hi = double(x.max().item<int64_t>());
	}
	if (lo == hi) {
		lo -= 1;
		hi += 1;
	}
	bool ok = card_int(x) && bins > 0 && bins <= 4096 && lo < hi && lo == std::floor(lo) &&
		  hi == std::floor(hi) && std::fabs(lo) < 1e15 && std::fabs(hi) < 1e15;
	if (!ok)
		return SPYRE_FALLBACK(histc, x, bins, min, max);
	count_device_op("histc");
	int64_t a = int64_t(lo), b = int64_t(hi);
	at::Tensor v = x.reshape({ -1 }).to(at::kLong);
	at::Tensor in = at::logical_and(at::ge(v, a), at::le(v, b));
	at::Tensor bin = at::floor_divide(at::mul(at::sub(v, a), bins), b - a);
	bin = at::where(at::ge(bin, bins), at::scalar_tensor(bins - 1, v.options()), bin);
	bin = at::where(in, bin, at::scalar_tensor(-1, v.options()));
	at::Tensor ids = at::arange(bins, v.options());
	at::Tensor hits = at::eq(bin.unsqueeze(1), ids.unsqueeze(0)).sum(0);
	return hits.to(x.scalar_type());
}

// x << y and x >> y (Python's operators) are the shift ops of the table.
at::Tensor lshift_t(const at::Tensor &a, const at::Tensor &b)
{
	return at::bitwise_left_shift(a, b);
}

at::Tensor lshift_s(const at::Tensor &a, const at::Scalar &b)
{
	return at::bitwise_left_shift(a, wrapped_number(b));
}

at::Tensor rshift_t(const at::Tensor &a, const at::Tensor &b)
{
	return at::bitwise_right_shift(a, b);
}

at::Tensor rshift_s(const at::Tensor &a, const at::Scalar &b)
{
	return at::bitwise_right_shift(a, wrapped_number(b));
}

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	m.impl("any", any_k);
	m.impl("any.dim", any_dim_k);
	m.impl("any.dims", any_dims_k);
	m.impl("any.out", any_out_k);
	m.impl("any.dims_out", any_dims_out_k);
	m.impl("any.all_out", any_all_out_k);
	m.impl("all", all_k);
	m.impl("all.dim", all_dim_k);
	m.impl("all.dims", all_dims_k);
	m.impl("all.out", all_out_k);
	m.impl("all.dims_out", all_dims_out_k);
	m.impl("all.all_out", all_all_out_k);
	m.impl("isin.Tensor_Tensor", isin_k);
	m.impl("isin.Tensor_Tensor_out", isin_out_k);
	m.impl("histc", histc_k);
	m.impl("__lshift__.Tensor", lshift_t);
	m.impl("__lshift__.Scalar", lshift_s);
	m.impl("__rshift__.Tensor", rshift_t);
	m.impl("__rshift__.Scalar", rshift_s);
	m.impl("bitwise_left_shift.Tensor_Scalar", lshift_s);
	m.impl("bitwise_right_shift.Tensor_Scalar", rshift_s);
}

} // namespace torch_spyre
