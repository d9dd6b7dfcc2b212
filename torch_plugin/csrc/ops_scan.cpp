// SPDX-License-Identifier: MIT
//
// Scans the card has no row kernel for: cumprod and logcumsumexp, along any
// dim and rows of any length. Each is an inclusive scan by doubling
// (Hillis-Steele): for s = 1, 2, 4, .. every element from s on combines
// with the one s before it, so after log2(n) whole-tensor elementwise steps
// element i holds the combination of elements 0..i. No step depends on a
// scratchpad-sized row, so long rows need nothing special.
//
// cumprod: integers (and bool, as int64) multiply exactly with PyTorch's
// wraparound; floats in fp32, rounded once to float16/bfloat16. The
// products are associated differently from the CPU's left-to-right order:
// equal within float tolerance, except that an intermediate overflow the
// CPU meets (inf, then a small factor) may be finite here, or the reverse.
// logcumsumexp: in fp32 with logaddexp(a, b) = max + log1p(exp(min - max))
// (log1p by its series below 1e-4, where log(1 + u) would lose u), -inf
// and +inf as PyTorch gives them, NaN propagating.
#include "kernels.h"

#include <ATen/ATen.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <limits>

namespace torch_spyre {
namespace {

using Combine = at::Tensor (*)(const at::Tensor &later, const at::Tensor &earlier);

// Inclusive scan of @x along @dim (x in the dtype it computes in).
at::Tensor scan(const at::Tensor &x, int64_t dim, Combine op)
{
	if (x.dim() == 0 || x.numel() == 0)
		return x.clone();
	int64_t n = x.size(dim);
	at::Tensor y = x;
	for (int64_t s = 1; s < n; s *= 2)
		y = at::cat({ y.narrow(dim, 0, s), op(y.narrow(dim, s, n - s),
						     y.narrow(dim, 0, n - s)) },
			    dim);
	return y.is_same(x) ? x.clone() : y;
}

at::Tensor mul(const at::Tensor &a, const at::Tensor &b)
{
	return a * b;
}

at::Tensor logaddexp(const at::Tensor &a, const at::Tensor &b)
{
	const double inf = std::numeric_limits<double>::infinity();
	at::Tensor hi = at::maximum(a, b), lo = at::minimum(a, b);
	at::Tensor u = (lo - hi).exp(); // in [0, 1]
	at::Tensor l = at::where(u.lt(1e-4), u - u * u * 0.5, (u + 1.0).log());
	// -inf with anything is the other; inf - inf would give NaN
	return at::where(lo.eq(-inf).logical_or(hi.eq(inf)), hi, hi + l);
}

// cumprod's result dtype (integers and bool: int64 unless asked, as
// cumsum), or nullopt when the card cannot compute it.
std::optional<at::ScalarType> cumprod_dtype(const at::Tensor &x, std::optional<at::ScalarType> dt)
{
	bool integral = at::isIntegralType(x.scalar_type(), true);
	at::ScalarType r = dt.value_or(integral ? at::kLong : x.scalar_type());
	bool x_ok = card_float(x.scalar_type()) || x.scalar_type() == at::kBool ||
		    ((x.scalar_type() == at::kInt || x.scalar_type() == at::kLong) && card_int(x));
	if (!x_ok || !x.device().is_privateuseone())
		return std::nullopt;
	if (card_float(r))
		return r;
	if ((r == at::kInt || r == at::kLong) &&
	    card_int(at::empty({ 0 }, x.options().dtype(r))))
		return r;
	return std::nullopt;
}

at::Tensor cumprod_run(const at::Tensor &x, int64_t dim, at::ScalarType dt)
{
	c10::DeviceGuard guard(x.device());
	dim = at::maybe_wrap_dim(dim, x.dim());
	at::ScalarType cdt = card_float(dt) ? at::kFloat : dt;
	at::Tensor r = scan(card_cast(x, cdt), dim, mul);
	count_device_op("cumprod");
	return card_cast(r, dt);
}

at::Tensor cumprod_k(const at::Tensor &x, int64_t dim, std::optional<at::ScalarType> dtype)
{
	auto dt = cumprod_dtype(x, dtype);
	if (!dt)
		return SPYRE_FALLBACK(cumprod, x, dim, dtype);
	return cumprod_run(x, dim, *dt);
}

at::Tensor &cumprod_k_(at::Tensor &x, int64_t dim, std::optional<at::ScalarType> dtype)
{
	auto dt = cumprod_dtype(x, dtype);
	if (!dt || *dt != x.scalar_type())
		return SPYRE_FALLBACK(cumprod_, x, dim, dtype);
	x.copy_(cumprod_run(x, dim, *dt));
	return x;
}

at::Tensor &cumprod_k_out(const at::Tensor &x, int64_t dim, std::optional<at::ScalarType> dtype,
			  at::Tensor &out)
{
	auto dt = cumprod_dtype(x, dtype.has_value() ? dtype : out.scalar_type());
	if (!dt)
		return SPYRE_FALLBACK(cumprod_out, x, dim, dtype, out);
	at::Tensor r = cumprod_run(x, dim, *dt);
	prepare_out(out, r.sizes(), r.scalar_type(), "cumprod.out");
	out.copy_(r);
	return out;
}

at::Tensor logcumsumexp_k(const at::Tensor &x, int64_t dim)
{
	if (!card_float(x.scalar_type()) || !x.device().is_privateuseone())
		return SPYRE_FALLBACK(_logcumsumexp, x, dim);
	c10::DeviceGuard guard(x.device());
	dim = at::maybe_wrap_dim(dim, x.dim());
	count_device_op("logcumsumexp");
	return card_cast(scan(card_cast(x, at::kFloat), dim, logaddexp), x.scalar_type());
}

at::Tensor &logcumsumexp_k_out(const at::Tensor &x, int64_t dim, at::Tensor &out)
{
	if (!card_float(x.scalar_type()) || !x.device().is_privateuseone())
		return SPYRE_FALLBACK(_logcumsumexp_out, x, dim, out);
	at::Tensor r = logcumsumexp_k(x, dim);
	at::native::resize_output(out, r.sizes());
	out.copy_(r);
	return out;
}

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	m.impl("cumprod", cumprod_k);
	m.impl("cumprod_", cumprod_k_);
	m.impl("cumprod.out", cumprod_k_out);
	m.impl("_logcumsumexp", logcumsumexp_k);
	m.impl("_logcumsumexp.out", logcumsumexp_k_out);
}

} // namespace torch_spyre
