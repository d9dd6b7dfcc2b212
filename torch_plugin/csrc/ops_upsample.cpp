// SPDX-License-Identifier: MIT
//
// torch.nn.functional.interpolate's kernels: upsample_nearest{1,2,3}d,
// _upsample_nearest_exact{1,2,3}d, upsample_linear1d, upsample_bilinear2d
// and upsample_trilinear3d (align_corners either way, explicit scales).
//
// Which input element (or pair of elements and weights) each output
// position reads depends only on the sizes and scales: the host computes
// those small per-dim tables exactly as PyTorch's CPU kernels do (in
// float, the same formulas, so the same rounding of the source positions),
// and the card does the data work: a row gather (index_select) per spatial
// dim for nearest, two gathers and a weighted sum per dim for linear modes,
// innermost dim first as the CPU nests them. Linear modes compute in fp32
// and round once (float16/bfloat16); nearest moves values as they are.
// The CPU interpolates floats and uint8 only; uint8 (and float64) take the
// counted CPU fallback.
#include "kernels.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <ATen/native/Resize.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace torch_spyre {
namespace {

enum class Mode { Nearest, NearestExact, Linear };

// PyTorch's compute_scales_value: 1 / the given scale, else in / out.
float scale_value(std::optional<double> scale, int64_t in, int64_t out)
{
	return scale && *scale > 0. ? float(1.0 / *scale) : float(in) / float(out);
}

// Source index of output @o along a dim of @in -> @out (nearest modes).
int64_t nearest_src(Mode mode, int64_t o, int64_t in, int64_t out, std::optional<double> scale)
{
	if (mode == Mode::Nearest) {
		if (out == in)
			return o;
		if (out == 2 * in)
			return o >> 1;
		float s = scale_value(scale, in, out);
		return std::min(int64_t(std::floor(float(o) * s)), in - 1);
	}
	float s = scale_value(scale, in, out);
	return std::min(int64_t(std::floor((float(o) + 0.5f) * s)), in - 1);
}

at::Tensor upload(const std::vector<int64_t> &v, const at::Tensor &like)
{
	return at::tensor(v, at::TensorOptions().dtype(at::kLong)).to(like.device());
}

at::Tensor upload(const std::vector<float> &v, const at::Tensor &like)
{
	return at::tensor(v, at::TensorOptions().dtype(at::kFloat)).to(like.device());
}

// @w [n] shaped to broadcast along dim @d of a tensor of @nd dims.
at::Tensor along(const at::Tensor &w, int64_t d, int64_t nd)
{
	std::vector<int64_t> s(size_t(nd), 1);
	s[size_t(d)] = w.size(0);
	return w.view(s);
}

// One linear dim: out = x[i0] * l0 + x[i1] * l1 along @d.
at::Tensor linear_dim(const at::Tensor &x, int64_t d, int64_t out, bool align,
		      std::optional<double> scale)
{
	int64_t in = x.size(d);
	if (in == out) // the CPU's weights are 1 and 0 on the same element: a copy
		return x;
	float ratio = align ? (out > 1 ? float(in - 1) / float(out - 1) : 0.f) :
			      scale_value(scale, in, out);
	std::vector<int64_t> i0(static_cast<size_t>(out)), i1(static_cast<size_t>(out));
	std::vector<float> l0(static_cast<size_t>(out)), l1(static_cast<size_t>(out));
	for (int64_t o = 0; o < out; o++) {
		float real = align ? ratio * float(o) : ratio * (float(o) + 0.5f) - 0.5f;
		if (!align && real < 0)
			real = 0;
		int64_t a = int64_t(real);
		i0[size_t(o)] = a;
		i1[size_t(o)] = a + (a < in - 1 ? 1 : 0);
		float lam = std::min(std::max(real - float(a), 0.f), 1.f);
		l1[size_t(o)] = lam;
		l0[size_t(o)] = 1.f - lam;
	}
	int64_t nd = x.dim();
	return x.index_select(d, upload(i0, x)) * along(upload(l0, x), d, nd) +
	       x.index_select(d, upload(i1, x)) * along(upload(l1, x), d, nd);
}

void interpolate_boxed(const c10::OperatorHandle &handle, torch::jit::Stack *stack)
{
	const auto &schema = handle.schema();
	const std::string name = schema.name().substr(6);
	const bool out_form = schema.overload_name() == "out";
	const Mode mode = name.find("nearest_exact") != std::string::npos ? Mode::NearestExact :
			  name.find("nearest") != std::string::npos	 ? Mode::Nearest :
									   Mode::Linear;
	const auto &args = schema.arguments();
	const size_t n = args.size();
	at::Tensor self, out;
	std::vector<int64_t> size;
	std::vector<std::optional<double>> scales;
	bool align = false;
	for (size_t a = 0; a < n; a++) {
		const c10::IValue &v = torch::jit::peek(*stack, a, n);
		const std::string &arg = args[a].name();
		if (arg == "self")
			self = v.toTensor();
		else if (arg == "out")
			out = v.toTensor();
		else if (arg == "align_corners")
			align = v.toBool();
		else if (arg == "output_size")
			for (const auto &s : v.toListRef())
				size.push_back(s.isInt() ? s.toInt() :
						s.toSymInt().guard_int(__FILE__, __LINE__));
		else if (arg.rfind("scales", 0) == 0)
			scales.push_back(v.isNone() ? std::nullopt :
						      std::optional<double>(v.toDouble()));
	}
	const int64_t k = int64_t(size.size());
	const auto dt = self.scalar_type();
	bool ok = self.device().is_privateuseone() && card_float(dt) &&
		  (!out_form || out.scalar_type() == dt);
	if (!ok) {
		spyre_cpu_fallback(handle, stack);
		return;
	}
	TORCH_CHECK(self.dim() == k + 2, name, ": expected a ", k + 2, "-D input, got ",
		    self.dim(), "-D ", self.sizes());
	std::vector<int64_t> shape(self.sizes().begin(), self.sizes().begin() + 2);
	for (int64_t d = 0; d < k; d++) {
		TORCH_CHECK(self.size(d + 2) > 0 && size[size_t(d)] > 0, name,
			    ": input and output sizes should be greater than 0, but got input ",
			    self.sizes(), " and output ", c10::IntArrayRef(size));
		shape.push_back(size[size_t(d)]);
	}
	c10::DeviceGuard guard(self.device());
	at::Tensor r;
	if (self.numel() == 0) {
		r = at::empty(shape, self.options());
	} else if (mode == Mode::Linear) {
		r = card_cast(self, at::kFloat);
		for (int64_t d = k - 1; d >= 0; d--) // innermost first, as the CPU nests them
			r = linear_dim(r, d + 2, size[size_t(d)], align, scales[size_t(d)]);
		r = card_cast(r.contiguous(), dt);
	} else {
		r = self;
		for (int64_t d = 0; d < k; d++) {
			int64_t in = self.size(d + 2), o = size[size_t(d)];
			if (in == o)
				continue;
			std::vector<int64_t> idx(static_cast<size_t>(o));
			for (int64_t i = 0; i < o; i++)
				idx[size_t(i)] = nearest_src(mode, i, in, o, scales[size_t(d)]);
			r = r.index_select(d + 2, upload(idx, r));
		}
		if (r.is_same(self))
			r = self.clone();
	}
	if (out_form) {
		at::native::resize_output(out, shape);
		out.copy_(r);
		r = out;
	}
	count_device_op(name.c_str());
	torch::jit::drop(*stack, n);
	torch::jit::push(*stack, r);
}

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	static const char *const ops[] = {
		"upsample_nearest1d",	      "upsample_nearest1d.out",
		"upsample_nearest2d",	      "upsample_nearest2d.out",
		"upsample_nearest3d",	      "upsample_nearest3d.out",
		"_upsample_nearest_exact1d",  "_upsample_nearest_exact1d.out",
		"_upsample_nearest_exact2d",  "_upsample_nearest_exact2d.out",
		"_upsample_nearest_exact3d",  "_upsample_nearest_exact3d.out",
		"upsample_linear1d",	      "upsample_linear1d.out",
		"upsample_bilinear2d",	      "upsample_bilinear2d.out",
		"upsample_trilinear3d",	      "upsample_trilinear3d.out",
	};
	for (const char *op : ops)
		m.impl(op, torch::CppFunction::makeFromBoxedFunction<&interpolate_boxed>());
}

} // namespace torch_spyre
