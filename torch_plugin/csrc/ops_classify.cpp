// SPDX-License-Identifier: MIT
//
// isnan, isneginf, isposinf: compares on the card (x != x, x == -inf,
// x == +inf) for float data; integers and bool are never NaN or infinite.
// PyTorch's math attention path (_safe_softmax) asks for isneginf.
#include "kernels.h"

#include <ATen/ATen.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <limits>

namespace torch_spyre {
namespace {

bool is_float(const at::Tensor &t)
{
	auto dt = t.scalar_type();
	return dt == at::kFloat || dt == at::kHalf || dt == at::kBFloat16;
}

at::Tensor never(const at::Tensor &self)
{
	return at::zeros(self.sizes(), self.options().dtype(at::kBool));
}

at::Tensor spyre_isnan(const at::Tensor &self)
{
	return is_float(self) ? self.ne(self) : never(self);
}

at::Tensor infinite(const at::Tensor &self, double sign)
{
	return is_float(self) ? self.eq(sign * std::numeric_limits<double>::infinity()) :
				never(self);
}

at::Tensor &into(const at::Tensor &r, at::Tensor &out)
{
	TORCH_CHECK(out.scalar_type() == at::kBool, "out= must be bool, got ", out.scalar_type());
	at::native::resize_output(out, r.sizes());
	return out.copy_(r);
}

at::Tensor &isneginf_out(const at::Tensor &self, at::Tensor &out)
{
	return into(infinite(self, -1), out);
}

at::Tensor &isposinf_out(const at::Tensor &self, at::Tensor &out)
{
	return into(infinite(self, 1), out);
}

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	m.impl("isnan", spyre_isnan);
	m.impl("isneginf.out", isneginf_out);
	m.impl("isposinf.out", isposinf_out);
}

} // namespace torch_spyre
