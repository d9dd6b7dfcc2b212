// SPDX-License-Identifier: MIT
//
// Reduction device kernels: sum, mean, amax, amin (dim lists, keepdim,
// dtype), max/min (all elements, or one dim with indices), argmax, cumsum,
// softmax and log_softmax (any dim), over the op library's row reductions;
// rows longer than those take run in passes (ops_long_rows.cpp).
//
// The op library reduces one dim per call (any dim: it iterates the reduced
// dim last). A dim list is reduced one dim at a time, highest first, with
// keepdim, then viewed to the result shape; fp16/bf16 lists accumulate in
// fp32 between the steps so that only the final result is rounded. Indices
// come from the card as int32 and are widened to PyTorch's int64 on the
// card (they are never negative, so the high words are zero).
#include "kernels.h"
#include "ops_small_int.h"
#include "ops_long_rows.h"

#include <ATen/WrapDimUtils.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace torch_spyre {
namespace {

// The sorted, wrapped dims an op reduces (none or empty: every dim).
std::vector<int64_t> reduce_dims(const at::Tensor &x, at::OptionalIntArrayRef dims)
{
	std::vector<int64_t> r;
	if (!dims.has_value() || dims->empty()) {
		for (int64_t d = 0; d < x.dim(); d++)
			r.push_back(d);
		return r;
	}
	for (int64_t d : *dims)
		r.push_back(at::maybe_wrap_dim(d, x.dim()));
	std::sort(r.begin(), r.end());
	TORCH_CHECK(std::adjacent_find(r.begin(), r.end()) == r.end(), "dim ", r[0],
		    " appears multiple times in the list of dims");
	return r;
}

std::vector<int64_t> reduced_shape(const at::Tensor &x, const std::vector<int64_t> &dims,
				   bool keepdim)
{
	std::vector<int64_t> s;
	for (int64_t d = 0; d < x.dim(); d++) {
		bool red = std::find(dims.begin(), dims.end(), d) != dims.end();
		if (!red)
			s.push_back(x.size(d));
		else if (keepdim)
			s.push_back(1);
	}
	return s;
}

// @x, or a contiguous copy of it when it is expanded (a stride-0 dim of
// size > 1): the card's row kernels read a reduced row as real elements.
at::Tensor unexpanded(const at::Tensor &x)
{
	for (int64_t d = 0; d < x.dim(); d++) {
		if (x.stride(d) == 0 && x.size(d) > 1) {
			at::Tensor c = at::empty(x.sizes(), x.options());
			card_copy(x, c);
			return c;
		}
	}
	return x;
}

void reduce_one(spyre_reduce_op op, const at::Tensor &x, int64_t dim, bool keepdim,
		const at::Tensor &out, const char *name)
{
	if (long_row(x, dim)) { // in passes (ops_long_rows.cpp)
		card_copy(long_reduce(op, x, dim).reshape(out.sizes()), out);
		return;
	}
	spyre_tensor xd = describe(x), od = describe(out);
	check_op(spyre_op_reduce(ops_context(x.device().index()), launch_stream(x), op, &xd,
				 int(dim), keepdim, &od),
		 name);
}

// The reduction @op of @x over @dims in dtype @dt, into @out when given.
at::Tensor reduce_run(const char *name, spyre_reduce_op op, const at::Tensor &x_in,
		      at::OptionalIntArrayRef dims_in, bool keepdim, at::ScalarType dt,
		      at::Tensor out)
{
	c10::DeviceGuard guard(x_in.device());
	auto dims = reduce_dims(x_in, dims_in);
	auto shape = reduced_shape(x_in, dims, keepdim);
	if (out.defined())
		prepare_out(out, shape, dt, name);
	count_device_op(name);
	bool minmax = op == SPYRE_RED_MAX || op == SPYRE_RED_MIN;
	for (int64_t d : dims) // (a 0-dim tensor reduces over its one element)
		TORCH_CHECK(!minmax || x_in.dim() == 0 || x_in.size(d) > 0, name,
			    "(): Expected reduction dim ", d, " to have non-zero size.");
	at::Tensor dst = direct_out(out, shape, dt, {x_in});
	if (dst.numel() == 0) {
		// nothing to write
	} else if (x_in.dim() == 0) {
		card_copy(x_in, dst);
	} else if (x_in.numel() == 0) {
		// a sum of no elements is 0, a mean NaN
		spyre_tensor od = describe(dst);
		check_op(spyre_op_fill(ops_context(dst.device().index()), launch_stream(dst),
				       op == SPYRE_RED_MEAN ?
					       std::numeric_limits<double>::quiet_NaN() :
					       0.0,
				       &od),
			 name);
	} else if (dims.size() == 1) {
		reduce_one(op, unexpanded(card_cast(x_in, dt)), dims[0], keepdim, dst, name);
	} else {
		// floats accumulate in fp32; integers stay exact in their own dtype
		at::ScalarType acc = dims.size() > 1 && card_float(dt) ? at::kFloat : dt;
		at::Tensor cur = unexpanded(card_cast(x_in, acc));
		for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
			auto s = cur.sizes().vec();
			s[*it] = 1;
			at::Tensor next = at::empty(s, cur.options());
			reduce_one(op, cur, *it, true, next, name);
			cur = next;
		}
		card_copy(cur.view(shape), dst);
	}
	if (out.defined() && !dst.is_same(out))
		card_copy(dst, out);
	return out.defined() ? out : dst;
}

// An int32/int64 result the card computes exactly (its integer mode).
bool exact_int_result(const at::Tensor &x, at::ScalarType dt)
{
	return (dt == at::kInt || dt == at::kLong) &&
	       card_int(at::empty({}, x.options().dtype(dt)));
}

// The dtype a sum/mean computes in, or nullopt for the fallback. A sum of
// integers or bools is int64 unless asked otherwise (PyTorch's rule), and
// exact: the card wraps in the result dtype as PyTorch does.
std::optional<at::ScalarType> reduce_dtype(const at::Tensor &x,
					   std::optional<at::ScalarType> dtype, bool ints = false)
{
	bool integral = at::isIntegralType(x.scalar_type(), true);
	at::ScalarType dt = dtype.value_or(integral && ints ? at::kLong : x.scalar_type());
	if (!to_spyre_dtype(x.scalar_type()) || x.dim() > SPYRE_MAX_DIMS)
		return std::nullopt;
	if (ints && exact_int_result(x, dt) && (integral || card_float(x.scalar_type())))
		return dt;
	if (!card_float(dt) || (x.scalar_type() == at::kLong && !card_int(x)))
		return std::nullopt;
	return dt;
}

at::Tensor sum_k(const at::Tensor &x, at::OptionalIntArrayRef dims, bool keepdim,
		 std::optional<at::ScalarType> dtype)
{
	if (SPYRE_SMALL_INT(x))
		return small_reduce(x, dtype.value_or(at::kLong), [&](const at::Tensor &w, auto cdt) {
			return at::sum(w, dims, keepdim, cdt);
		});
	auto dt = reduce_dtype(x, dtype, true);
	if (!dt)
		return SPYRE_FALLBACK(sum_dim_IntList, x, dims, keepdim, dtype);
	return reduce_run("sum", SPYRE_RED_SUM, x, dims, keepdim, *dt, {});
}

at::Tensor sum_all_k(const at::Tensor &x, std::optional<at::ScalarType> dtype)
{
	if (SPYRE_SMALL_INT(x))
		return small_reduce(x, dtype.value_or(at::kLong),
				    [&](const at::Tensor &w, auto cdt) { return at::sum(w, cdt); });
	auto dt = reduce_dtype(x, dtype, true);
	if (!dt)
		return SPYRE_FALLBACK(sum, x, dtype);
	return reduce_run("sum", SPYRE_RED_SUM, x, std::nullopt, false, *dt, {});
}

at::Tensor &sum_k_out(const at::Tensor &x, at::OptionalIntArrayRef dims, bool keepdim,
		      std::optional<at::ScalarType> dtype, at::Tensor &out)
{
	if (SPYRE_SMALL_INT(x))
		return small_into(small_reduce(x, dtype.value_or(out.scalar_type()),
					       [&](const at::Tensor &w, auto cdt) {
						       return at::sum(w, dims, keepdim, cdt);
					       }),
				  out, "sum.out");
	auto dt = reduce_dtype(x, dtype.has_value() ? dtype : out.scalar_type(), true);
	if (!dt)
		return SPYRE_FALLBACK(sum_IntList_out, x, dims, keepdim, dtype, out);
	reduce_run("sum.out", SPYRE_RED_SUM, x, dims, keepdim, *dt, out);
	return out;
}

at::Tensor mean_k(const at::Tensor &x, at::OptionalIntArrayRef dims, bool keepdim,
		  std::optional<at::ScalarType> dtype)
{
	auto dt = reduce_dtype(x, dtype);
	if (!dt)
		return SPYRE_FALLBACK(mean_dim, x, dims, keepdim, dtype);
	return reduce_run("mean", SPYRE_RED_MEAN, x, dims, keepdim, *dt, {});
}

at::Tensor mean_all_k(const at::Tensor &x, std::optional<at::ScalarType> dtype)
{
	auto dt = reduce_dtype(x, dtype);
	if (!dt)
		return SPYRE_FALLBACK(mean, x, dtype);
	return reduce_run("mean", SPYRE_RED_MEAN, x, std::nullopt, false, *dt, {});
}

at::Tensor &mean_k_out(const at::Tensor &x, at::OptionalIntArrayRef dims, bool keepdim,
		       std::optional<at::ScalarType> dtype, at::Tensor &out)
{
	auto dt = reduce_dtype(x, dtype.has_value() ? dtype : out.scalar_type());
	if (!dt)
		return SPYRE_FALLBACK(mean_out, x, dims, keepdim, dtype, out);
	reduce_run("mean.out", SPYRE_RED_MEAN, x, dims, keepdim, *dt, out);
	return out;
}

bool minmax_ok(const at::Tensor &x)
{
	return (card_float(x.scalar_type()) || card_int(x)) && x.dim() <= SPYRE_MAX_DIMS;
}

#define AMINMAX(fn, aten, op)                                                                    \
	at::Tensor fn(const at::Tensor &x, at::IntArrayRef dims, bool keepdim)                   \
	{                                                                                        \
		if (SPYRE_SMALL_INT(x))                                                          \
			return small_reduce(x, x.scalar_type(), [&](const at::Tensor &w, auto) { \
				return at::aten(w, dims, keepdim);                               \
			});                                                                      \
		if (!minmax_ok(x))                                                               \
			return SPYRE_FALLBACK(aten, x, dims, keepdim);                           \
		return reduce_run(#aten, op, x, dims, keepdim, x.scalar_type(), {});             \
	}                                                                                        \
	at::Tensor &fn##_out(const at::Tensor &x, at::IntArrayRef dims, bool keepdim,            \
			     at::Tensor &out)                                                    \
	{                                                                                        \
		if (SPYRE_SMALL_INT(x))                                                          \
			return small_into(fn(x, dims, keepdim), out, #aten ".out");              \
		if (!minmax_ok(x))                                                               \
			return SPYRE_FALLBACK(aten##_out, x, dims, keepdim, out);                \
		reduce_run(#aten ".out", op, x, dims, keepdim, x.scalar_type(), out);            \
		return out;                                                                      \
	}

AMINMAX(amax_k, amax, SPYRE_RED_MAX)
AMINMAX(amin_k, amin, SPYRE_RED_MIN)

at::Tensor max_all_k(const at::Tensor &x)
{
	if (SPYRE_SMALL_INT(x) && x.numel())
		return small_reduce(x, x.scalar_type(),
				    [&](const at::Tensor &w, auto) { return at::max(w); });
	if (!minmax_ok(x))
		return SPYRE_FALLBACK(max, x);
	TORCH_CHECK(x.numel() > 0, "max(): Expected reduction dim to be specified for input.numel() "
				   "== 0. Specify the reduction dim with the 'dim' argument.");
	return reduce_run("max", SPYRE_RED_MAX, x.reshape({-1}), std::nullopt, false,
			  x.scalar_type(), {});
}

at::Tensor min_all_k(const at::Tensor &x)
{
	if (SPYRE_SMALL_INT(x) && x.numel())
		return small_reduce(x, x.scalar_type(),
				    [&](const at::Tensor &w, auto) { return at::min(w); });
	if (!minmax_ok(x))
		return SPYRE_FALLBACK(min, x);
	TORCH_CHECK(x.numel() > 0, "min(): Expected reduction dim to be specified for input.numel() "
				   "== 0. Specify the reduction dim with the 'dim' argument.");
	return reduce_run("min", SPYRE_RED_MIN, x.reshape({-1}), std::nullopt, false,
			  x.scalar_type(), {});
}

// int64 indices of the first maximum of @x over @dim (of -x for @negate).
at::Tensor argmax_run(const char *name, const at::Tensor &x_in, int64_t dim, bool keepdim,
		      bool negate, at::Tensor out)
{
	c10::DeviceGuard guard(x_in.device());
	dim = at::maybe_wrap_dim(dim, x_in.dim());
	auto shape = reduced_shape(x_in, {dim}, keepdim);
	TORCH_CHECK(x_in.dim() == 0 || x_in.size(dim) > 0, name,
		    "(): Expected reduction dim ", dim, " to have non-zero size.");
	if (out.defined())
		prepare_out(out, shape, at::kLong, name);
	at::Tensor dst = out.defined() ? direct_out(out, shape, at::kLong, {x_in}, false) :
					 at::empty(shape, x_in.options().dtype(at::kLong));
	if (dst.numel() == 0)
		return dst;
	auto ops = ops_context(x_in.device().index());
	auto *s = launch_stream(x_in);
	at::Tensor x = unexpanded(x_in);
	if (negate) {
		// argmin is argmax of an order-reversing map: -x, or for integers ~x
		// (-x of the minimum wraps to itself)
		x = at::empty(x_in.sizes(), x_in.options());
		spyre_tensor a = describe(x_in), b = describe(x);
		check_op(spyre_op_unary(ops, s, card_float(x.scalar_type()) ? SPYRE_UN_NEG :
									    SPYRE_UN_BITWISE_NOT,
					&a, &b),
			 name);
	}
	if (long_row(x, dim)) { // in passes (ops_long_rows.cpp)
		card_copy(long_argmax(x, dim).reshape(shape), dst);
	} else {
		at::Tensor idx = at::empty(shape, x.options().dtype(at::kInt));
		spyre_tensor xd = describe(x), id = describe(idx);
		check_op(spyre_op_argmax(ops, s, &xd, int(dim), keepdim, &id), name);
		widen_indices(idx, dst);
	}
	if (out.defined() && !dst.is_same(out))
		card_copy(dst, out);
	return out.defined() ? out : dst;
}

std::tuple<at::Tensor, at::Tensor> max_dim_k(const at::Tensor &x, int64_t dim, bool keepdim)
{
	if (!minmax_ok(x) || x.dim() == 0)
		return SPYRE_FALLBACK(max_dim, x, dim, keepdim);
	at::Tensor v = reduce_run("max.dim", SPYRE_RED_MAX, x, at::IntArrayRef{dim}, keepdim,
				  x.scalar_type(), {});
	return {v, argmax_run("max.dim", x, dim, keepdim, false, {})};
}

std::tuple<at::Tensor, at::Tensor> min_dim_k(const at::Tensor &x, int64_t dim, bool keepdim)
{
	if (!minmax_ok(x) || x.dim() == 0)
		return SPYRE_FALLBACK(min_dim, x, dim, keepdim);
	at::Tensor v = reduce_run("min.dim", SPYRE_RED_MIN, x, at::IntArrayRef{dim}, keepdim,
				  x.scalar_type(), {});
	return {v, argmax_run("min.dim", x, dim, keepdim, true, {})};
}

// argmax, or argmin (@negate: the first maximum of an order-reversing map).
at::Tensor arg_run(const char *name, const at::Tensor &x, std::optional<int64_t> dim,
		   bool keepdim, bool negate)
{
	if (x.dim() == 0) { // one element: index 0 (dim 0 or -1 is allowed)
		if (dim.has_value())
			at::maybe_wrap_dim(*dim, int64_t(0));
		return at::zeros({}, x.options().dtype(at::kLong));
	}
	count_device_op(name);
	if (dim.has_value())
		return argmax_run(name, x, *dim, keepdim, negate, {});
	at::Tensor r = argmax_run(name, x.reshape({-1}), 0, false, negate, {});
	if (keepdim)
		r = r.view(std::vector<int64_t>(x.dim(), 1));
	return r;
}

#define ARGMAX(fn, aten, negate)                                                                 \
	at::Tensor fn(const at::Tensor &x, std::optional<int64_t> dim, bool keepdim)             \
	{                                                                                        \
		if (!minmax_ok(x))                                                               \
			return SPYRE_FALLBACK(aten, x, dim, keepdim);                            \
		return arg_run(#aten, x, dim, keepdim, negate);                                  \
	}                                                                                        \
	at::Tensor &fn##_out(const at::Tensor &x, std::optional<int64_t> dim, bool keepdim,      \
			     at::Tensor &out)                                                    \
	{                                                                                        \
		if (!minmax_ok(x) || x.dim() == 0 || !dim.has_value())                           \
			return SPYRE_FALLBACK(aten##_out, x, dim, keepdim, out);                 \
		count_device_op(#aten ".out");                                                   \
		argmax_run(#aten ".out", x, *dim, keepdim, negate, out);                         \
		return out;                                                                      \
	}

ARGMAX(argmax_k, argmax, false)
ARGMAX(argmin_k, argmin, true)

// ---- cumsum, softmax ----------------------------------------------------

// A kernel that maps @x to a same-shaped result of dtype @dt along @dim.
using AlongFn = int (*)(spyre_ops *, spyre_stream *, const spyre_tensor *, int,
			const spyre_tensor *);

at::Tensor along_run(const char *name, AlongFn fn, const at::Tensor &x_in, int64_t dim,
		     at::ScalarType dt, at::Tensor out, bool inplace)
{
	c10::DeviceGuard guard(x_in.device());
	dim = at::maybe_wrap_dim(dim, x_in.dim());
	if (out.defined() && !inplace)
		prepare_out(out, x_in.sizes(), dt, name);
	at::Tensor dst = out.defined() ? direct_out(out, x_in.sizes(), dt, {x_in}, false) :
					 at::empty(x_in.sizes(), x_in.options().dtype(dt));
	count_device_op(name);
	if (x_in.numel()) {
		at::Tensor x = unexpanded(card_cast(x_in, dt)), o = dst;
		if (x.dim() == 0) { // a 0-dim tensor is a row of one element
			x = x.reshape({1});
			o = dst.view({1});
		}
		if (long_row(x, dim)) { // in passes (ops_long_rows.cpp)
			LongScan kind = fn == spyre_op_cumsum  ? LongScan::Cumsum :
					fn == spyre_op_softmax ? LongScan::Softmax :
								 LongScan::LogSoftmax;
			card_copy(long_along(kind, x, dim), o);
		} else {
			spyre_tensor xd = describe(x), od = describe(o);
			check_op(fn(ops_context(x.device().index()), launch_stream(x), &xd,
				    int(dim), &od),
				 name);
		}
		if (out.defined() && !dst.is_same(out))
			card_copy(dst, out);
	}
	return out.defined() ? out : dst;
}

// cumsum's dtype: integers and bools sum in int64 unless asked (PyTorch's
// rule), exactly.
std::optional<at::ScalarType> along_dtype(const at::Tensor &x, std::optional<at::ScalarType> dt)
{
	bool integral = at::isIntegralType(x.scalar_type(), true);
	auto r = dt.value_or(integral ? at::kLong : x.scalar_type());
	if (!to_spyre_dtype(x.scalar_type()))
		return std::nullopt;
	if (exact_int_result(x, r))
		return r;
	if (!card_float(r) || (x.scalar_type() == at::kLong && !card_int(x)))
		return std::nullopt;
	return r;
}

at::Tensor cumsum_k(const at::Tensor &x, int64_t dim, std::optional<at::ScalarType> dtype)
{
	if (SPYRE_SMALL_INT(x))
		return small_reduce(x, dtype.value_or(at::kLong), [&](const at::Tensor &w, auto cdt) {
			return at::cumsum(w, dim, cdt);
		});
	auto dt = along_dtype(x, dtype);
	if (!dt)
		return SPYRE_FALLBACK(cumsum, x, dim, dtype);
	return along_run("cumsum", spyre_op_cumsum, x, dim, *dt, {}, false);
}

at::Tensor &cumsum_k_(at::Tensor &x, int64_t dim, std::optional<at::ScalarType> dtype)
{
	if (SPYRE_SMALL_INT(x) && dtype.value_or(x.scalar_type()) == x.scalar_type()) {
		small_assign(cumsum_k(x, dim, x.scalar_type()), x);
		return x;
	}
	auto dt = along_dtype(x, dtype);
	if (!dt || *dt != x.scalar_type())
		return SPYRE_FALLBACK(cumsum_, x, dim, dtype);
	along_run("cumsum_", spyre_op_cumsum, x, dim, *dt, x, true);
	return x;
}

at::Tensor &cumsum_k_out(const at::Tensor &x, int64_t dim, std::optional<at::ScalarType> dtype,
			 at::Tensor &out)
{
	if (SPYRE_SMALL_INT(x))
		return small_into(cumsum_k(x, dim, dtype.value_or(out.scalar_type())), out,
				  "cumsum.out");
	auto dt = along_dtype(x, dtype.has_value() ? dtype : out.scalar_type());
	if (!dt)
		return SPYRE_FALLBACK(cumsum_out, x, dim, dtype, out);
	along_run("cumsum.out", spyre_op_cumsum, x, dim, *dt, out, false);
	return out;
}

// half_to_float: a half input gives a float result (computed in float).
std::optional<at::ScalarType> softmax_dtype(const at::Tensor &x, bool half_to_float)
{
	if (!card_float(x.scalar_type()))
		return std::nullopt;
	if (half_to_float) {
		TORCH_CHECK(x.scalar_type() == at::kHalf || x.scalar_type() == at::kBFloat16,
			    "conversion is supported for Half type only");
		return at::kFloat;
	}
	return x.scalar_type();
}

#define SOFTMAX(fn, aten, opfn)                                                                  \
	at::Tensor fn(const at::Tensor &x, int64_t dim, bool half_to_float)                      \
	{                                                                                        \
		auto dt = softmax_dtype(x, half_to_float);                                       \
		if (!dt)                                                                         \
			return SPYRE_FALLBACK(aten, x, dim, half_to_float);                      \
		return along_run(#aten, opfn, x, x.dim() ? dim : 0, *dt, {}, false);             \
	}                                                                                        \
	at::Tensor &fn##_out(const at::Tensor &x, int64_t dim, bool half_to_float,               \
			     at::Tensor &out)                                                    \
	{                                                                                        \
		auto dt = softmax_dtype(x, half_to_float);                                       \
		if (!dt)                                                                         \
			return SPYRE_FALLBACK(aten##_out, x, dim, half_to_float, out);           \
		along_run(#aten ".out", opfn, x, x.dim() ? dim : 0, *dt, out, false);            \
		return out;                                                                      \
	}

SOFTMAX(softmax_k, _softmax, spyre_op_softmax)
SOFTMAX(log_softmax_k, _log_softmax, spyre_op_log_softmax)

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	m.impl("sum", sum_all_k);
	m.impl("sum.dim_IntList", sum_k);
	m.impl("sum.IntList_out", sum_k_out);
	m.impl("mean", mean_all_k);
	m.impl("mean.dim", mean_k);
	m.impl("mean.out", mean_k_out);
	m.impl("amax", amax_k);
	m.impl("amax.out", amax_k_out);
	m.impl("amin", amin_k);
	m.impl("amin.out", amin_k_out);
	m.impl("max", max_all_k);
	m.impl("min", min_all_k);
	m.impl("max.dim", max_dim_k);
	m.impl("min.dim", min_dim_k);
	m.impl("argmax", argmax_k);
	m.impl("argmax.out", argmax_k_out);
	m.impl("argmin", argmin_k);
	m.impl("argmin.out", argmin_k_out);
	m.impl("cumsum", cumsum_k);
	m.impl("cumsum_", cumsum_k_);
	m.impl("cumsum.out", cumsum_k_out);
	m.impl("_softmax", softmax_k);
	m.impl("_softmax.out", softmax_k_out);
	m.impl("_log_softmax", log_softmax_k);
	m.impl("_log_softmax.out", log_softmax_k_out);
}

} // namespace torch_spyre
