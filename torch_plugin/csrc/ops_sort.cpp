// SPDX-License-Identifier: MIT
//
// sort, argsort and topk on the card, in PyTorch's order: NaN above +inf,
// -0.0 equal to 0.0, equal elements in their original order (stable, for
// descending too), indices int64.
//
// The card has compares, sums and a gather but no scatter. sort ranks each
// element of a row of n against the others in one [.., n, n] comparison
// (rank i = the elements before it in the result order), and the element
// at result position r is the one whose rank is r: a second [.., n, n]
// compare against r, summed with the column index. Rows up to kMaxRow;
// large batches go in chunks of rows to bound the scratch memory. topk of
// k <= 256 largest elements from a longer row takes k rounds of argmax
// (first maximum, NaN wins: PyTorch's order) instead. Longer rows otherwise
// go to the counted CPU fallback. Bool data ranks through fp32 (exact);
// int32/int64 data too when every value is within 2^24 (checked on the
// card), else it takes the exact CPU fallback.
#include "kernels.h"
#include "op_tensor.h"

#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <limits>
#include <tuple>

namespace torch_spyre {
namespace {

constexpr int64_t kMaxRow = 4096;		 // longest row sort takes
constexpr int64_t kScratch = int64_t(1) << 24; // elements of one [.., n, n] step

bool sortable(at::ScalarType dt)
{
	return dt == at::kFloat || dt == at::kHalf || dt == at::kBFloat16 || dt == at::kInt ||
	       dt == at::kLong || dt == at::kBool;
}

// Result-order ranks of the rows of @x [rows, n] (fp32): rank i counts the
// j that come before i (greater when @descending, else smaller; NaN the
// greatest; ties by index).
at::Tensor ranks(const at::Tensor &x, bool descending, const at::Tensor &earlier)
{
	at::Tensor nan = x.ne(x);
	at::Tensor key = at::where(nan, std::numeric_limits<double>::infinity(), x);
	at::Tensor kj = key.unsqueeze(-2), ki = key.unsqueeze(-1); // [.., i, j]
	at::Tensor nj = nan.unsqueeze(-2).to(at::kFloat), ni = nan.unsqueeze(-1).to(at::kFloat);
	at::Tensor same = kj.eq(ki).logical_and(nj.eq(ni));
	at::Tensor ahead = descending ? kj.gt(ki).logical_or(kj.eq(ki).logical_and(nj.gt(ni))) :
					kj.lt(ki).logical_or(kj.eq(ki).logical_and(nj.lt(ni)));
	return ahead.logical_or(same.logical_and(earlier)).to(at::kFloat).sum(-1);
}

// Sorted values and int64 indices of @x's rows [rows, n], in fp32 (@x as is
// for float data).
std::tuple<at::Tensor, at::Tensor> sort_rows(const at::Tensor &x, bool descending)
{
	int64_t rows = x.size(0), n = x.size(1);
	auto f32 = x.options().dtype(at::kFloat);
	at::Tensor earlier = at::ones({ n, n }, x.options().dtype(at::kBool)).tril(-1); // j < i
	at::Tensor col = at::arange(n, f32);
	at::Tensor pos = col.unsqueeze(-1); // result position r, [r, 1]
	at::Tensor idx = at::empty({ rows, n }, f32);
	int64_t chunk = std::max<int64_t>(1, kScratch / (n * n));
	for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
		int64_t m = std::min(chunk, rows - r0);
		at::Tensor part = x.narrow(0, r0, m);
		at::Tensor rank = ranks(part, descending, earlier); // [m, n] by element
		at::Tensor at_r = rank.unsqueeze(-2).eq(pos);	    // [m, r, i]
		at::Tensor which = at::where(at_r, col, 0.0).sum(-1);  // [m, r]: i of rank r
		card_copy(which, idx.narrow(0, r0, m));
	}
	at::Tensor li = idx.to(at::kLong);
	return { x.gather(1, li), li };
}

// @x with @dim last, as [rows, n] (a contiguous copy when needed).
at::Tensor rows_of(const at::Tensor &x, int64_t dim)
{
	at::Tensor t = x.dim() == 0 ? x.reshape({ 1 }) : x.movedim(dim, -1);
	return t.reshape({ -1, t.size(-1) });
}

// [rows, n] results back into @like's shape with @dim of size @n.
at::Tensor unrows(const at::Tensor &r, const at::Tensor &like, int64_t dim, int64_t n)
{
	if (like.dim() == 0)
		return r.reshape({});
	auto shape = like.movedim(dim, -1).sizes().vec();
	shape.back() = n;
	return r.reshape(shape).movedim(-1, dim).contiguous();
}

std::tuple<at::Tensor, at::Tensor> sort_any(const char *op, const at::Tensor &self, int64_t dim,
					    bool descending)
{
	auto dt = self.scalar_type();
	dim = c10::maybe_wrap_dim(dim, self.dim());
	int64_t n = self.dim() ? self.size(dim) : 1;
	c10::DeviceGuard guard(self.device());
	if (self.numel() == 0)
		return { at::empty_like(self),
			 at::empty(self.sizes(), self.options().dtype(at::kLong)) };
	bool integer = dt == at::kInt || dt == at::kLong || dt == at::kBool;
	at::Tensor x = rows_of(integer ? card_cast(self, at::kFloat) : self, dim);
	auto [v, i] = sort_rows(x, descending);
	v = unrows(v, self, dim, n);
	i = unrows(i, self, dim, n);
	count_device_op(op);
	return { integer ? card_cast(v, dt) : v, i };
}

// int32/int64 data ranks through fp32: only when every value is exact there
// (|x| <= 2^24, checked on the card); else the exact CPU fallback.
bool sortable(const at::Tensor &self)
{
	auto dt = self.scalar_type();
	return sortable(dt) && ((dt != at::kInt && dt != at::kLong) || ints_fit_fp32(self));
}

// Rows sort takes: others go to the (counted) fallback.
bool sort_fits(const at::Tensor &self, int64_t dim)
{
	return sortable(self) &&
	       (self.dim() == 0 || self.size(c10::maybe_wrap_dim(dim, self.dim())) <= kMaxRow);
}

std::tuple<at::Tensor, at::Tensor> spyre_sort_stable(const at::Tensor &self,
						     std::optional<bool> stable, int64_t dim,
						     bool descending)
{
	if (!sort_fits(self, dim))
		return SPYRE_FALLBACK(sort_stable, self, stable, dim, descending);
	return sort_any("sort", self, dim, descending); // always stable
}

std::tuple<at::Tensor &, at::Tensor &> sort_values_stable(const at::Tensor &self,
							  std::optional<bool> stable, int64_t dim,
							  bool descending, at::Tensor &values,
							  at::Tensor &indices)
{
	if (!sort_fits(self, dim))
		return SPYRE_FALLBACK(sort_values_stable, self, stable, dim, descending, values,
				      indices);
	auto [v, i] = sort_any("sort", self, dim, descending);
	values.resize_(v.sizes());
	indices.resize_(i.sizes());
	values.copy_(v);
	indices.copy_(i);
	return { values, indices };
}

// The k largest of rows [rows, n] by rounds of argmax: each round takes the
// first maximum (NaN wins) among the elements not taken yet; once only
// -inf (or nothing) is left among them it takes the first element not taken.
std::tuple<at::Tensor, at::Tensor> top_rounds(const at::Tensor &x, int64_t k)
{
	int64_t rows = x.size(0);
	auto f32 = x.options().dtype(at::kFloat);
	const double inf = std::numeric_limits<double>::infinity();
	at::Tensor left = at::ones_like(x, f32); // 1: not taken
	at::Tensor idx = at::empty({ rows, k }, x.options().dtype(at::kLong));
	for (int64_t r = 0; r < k; r++) {
		at::Tensor cur = at::where(left.eq(0), -inf, x);
		at::Tensor best = cur.argmax(1, true);
		at::Tensor low = cur.gather(1, best).eq(-inf);
		at::Tensor first = left.argmax(1, true);
		at::Tensor pick = at::where(low, first, best);
		card_copy(pick, idx.narrow(1, r, 1));
		left = at::where(at::arange(x.size(1), pick.options()).unsqueeze(0).eq(pick), 0.0,
				 left);
	}
	return { x.gather(1, idx), idx };
}

std::tuple<at::Tensor, at::Tensor> spyre_topk(const at::Tensor &self, c10::SymInt k_sym,
					      int64_t dim, bool largest, bool sorted)
{
	int64_t k = k_sym.guard_int(__FILE__, __LINE__); // results always sorted
	auto dt = self.scalar_type();
	dim = c10::maybe_wrap_dim(dim, self.dim());
	int64_t n = self.dim() ? self.size(dim) : 1;
	TORCH_CHECK(k >= 0 && k <= n, "selected index k out of range");
	TORCH_CHECK(dt != at::kBool, "topk does not support bool dtypes on spyre"); // as the CPU
	bool rounds = n > kMaxRow;
	// the smallest of long rows, or many rounds: the (counted) fallback
	if (!sortable(self) || (rounds && (!largest || k > 256)))
		return SPYRE_FALLBACK(topk, self, k, dim, largest, sorted);
	c10::DeviceGuard guard(self.device());
	count_device_op("topk");
	if (self.numel() == 0 || k == 0) {
		auto shape = self.sizes().vec();
		if (self.dim())
			shape[size_t(dim)] = k;
		return { at::empty(shape, self.options()),
			 at::empty(shape, self.options().dtype(at::kLong)) };
	}
	bool integer = dt == at::kInt || dt == at::kLong || dt == at::kBool;
	at::Tensor x = rows_of(integer ? card_cast(self, at::kFloat) : self, dim);
	at::Tensor v, i;
	if (rounds) {
		std::tie(v, i) = top_rounds(x, k);
	} else {
		std::tie(v, i) = sort_rows(x, largest);
		v = v.narrow(1, 0, k);
		i = i.narrow(1, 0, k);
	}
	v = unrows(v, self, dim, k);
	i = unrows(i, self, dim, k);
	return { integer ? card_cast(v, dt) : v, i };
}

std::tuple<at::Tensor &, at::Tensor &> topk_values(const at::Tensor &self, c10::SymInt k,
						   int64_t dim, bool largest, bool sorted,
						   at::Tensor &values, at::Tensor &indices)
{
	auto [v, i] = spyre_topk(self, k, dim, largest, sorted);
	values.resize_(v.sizes());
	indices.resize_(i.sizes());
	values.copy_(v);
	indices.copy_(i);
	return { values, indices };
}

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	m.impl("sort.stable", spyre_sort_stable);
	m.impl("sort.values_stable", sort_values_stable);
	m.impl("topk", spyre_topk);
	m.impl("topk.values", topk_values);
}

} // namespace torch_spyre
