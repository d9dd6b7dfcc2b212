// SPDX-License-Identifier: MIT
//
// Convolution on the card (aten::convolution_overrideable, the entry PyTorch
// offers PrivateUse1 for conv1d/conv2d and their transposed forms), as an
// im2col matrix product: the padded input is viewed as its sliding windows
// (as_strided, no data moves), the windows are gathered into a matrix by one
// strided copy on the card, and the card's matmul multiplies it by the
// weights. Every step is a card op, so no value leaves the device; the
// products sum in fp32 inside the matmul and round once, as the matmul
// family does (results match the CPU within the matmul's tolerance).
//
// A transposed convolution is the direct convolution of the input with
// zeros inserted between its elements (stride - 1 of them), padded by
// dilation * (kernel - 1) - padding on each side (plus output_padding at the
// end), with the weights' in/out channels swapped and the kernel flipped.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <vector>

namespace torch_spyre {
namespace {

struct Conv2d {
	int64_t stride[2], pad[2], dil[2], groups;
};

// The window matrix of padded input @xp [N, C, Hp, Wp] for a [O, C/g, KH, KW]
// kernel, and the direct convolution, [N, O, OH, OW].
at::Tensor direct_conv2d(const at::Tensor &x, const at::Tensor &w, const Conv2d &p)
{
	const int64_t N = x.size(0), C = x.size(1), O = w.size(0), Cg = w.size(1);
	const int64_t KH = w.size(2), KW = w.size(3), g = p.groups;
	at::Tensor xp = at::constant_pad_nd(x, { p.pad[1], p.pad[1], p.pad[0], p.pad[0] }, 0)
				.contiguous();
	const int64_t Hp = xp.size(2), Wp = xp.size(3);
	const int64_t OH = (Hp - p.dil[0] * (KH - 1) - 1) / p.stride[0] + 1;
	const int64_t OW = (Wp - p.dil[1] * (KW - 1) - 1) / p.stride[1] + 1;
	TORCH_CHECK(OH > 0 && OW > 0, "spyre: convolution: the kernel (", KH, "x", KW,
		    ", dilation ", p.dil[0], "x", p.dil[1], ") is larger than the padded input (",
		    Hp, "x", Wp, ")");
	const int64_t K = Cg * KH * KW;
	const int64_t sC = xp.stride(1), sH = xp.stride(2), sW = xp.stride(3);
	// [g, K, O/g]: each group's weights as the right-hand matrix
	at::Tensor wg = w.reshape({ g, O / g, K }).transpose(1, 2);
	if (N == 0 || C == 0)
		return at::zeros({ N, O, OH, OW }, x.options());

	if (g == 1) {
		at::Tensor win = xp.as_strided({ N, OH, OW, C, KH, KW },
					       { xp.stride(0), sH * p.stride[0], sW * p.stride[1], sC,
						 sH * p.dil[0], sW * p.dil[1] });
		at::Tensor y = at::mm(win.reshape({ N * OH * OW, K }), wg[0]);
		// The matmul gives channels last; the result is laid out as the
		// CPU's convolution lays it out (Inductor checks the strides).
		return y.view({ N, OH * OW, O })
			.permute({ 0, 2, 1 })
			.reshape({ N, O, OH, OW })
			.contiguous(x.suggest_memory_format());
	}
	// Grouped: the card's views have at most 6 dimensions, so one image at a
	// time, all groups in one batched matmul.
	at::Tensor out = at::empty({ N, O, OH, OW }, x.options());
	for (int64_t n = 0; n < N; n++) {
		at::Tensor img = xp.select(0, n);
		at::Tensor win = img.as_strided({ g, OH, OW, Cg, KH, KW },
						{ Cg * sC, sH * p.stride[0], sW * p.stride[1], sC,
						  sH * p.dil[0], sW * p.dil[1] },
						img.storage_offset());
		at::Tensor y = at::bmm(win.reshape({ g, OH * OW, K }), wg);
		out.select(0, n).copy_(y.permute({ 0, 2, 1 }).reshape({ O, OH, OW }));
	}
	return out.contiguous(x.suggest_memory_format());
}

// A transposed convolution's weights [Cin, O/g, KH, KW] as the direct
// convolution's [O, Cin/g, KH, KW], the kernel flipped in both dimensions.
at::Tensor transposed_weight(const at::Tensor &w, int64_t g)
{
	const int64_t Cin = w.size(0), Og = w.size(1), KH = w.size(2), KW = w.size(3);
	auto rev = [&](int64_t n) {
		return at::arange(n - 1, -1, -1, at::TensorOptions().dtype(at::kLong)).to(w.device());
	};
	at::Tensor f = w.index_select(2, rev(KH)).index_select(3, rev(KW));
	return f.reshape({ g, Cin / g, Og, KH, KW })
		.transpose(1, 2)
		.reshape({ g * Og, Cin / g, KH, KW });
}

at::Tensor transposed_conv2d(const at::Tensor &x, const at::Tensor &w, const Conv2d &p,
			     const int64_t out_pad[2])
{
	const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
	const int64_t KH = w.size(2), KW = w.size(3);
	const int64_t Hz = H ? (H - 1) * p.stride[0] + 1 : 0, Wz = W ? (W - 1) * p.stride[1] + 1 : 0;
	at::Tensor z = x;
	if (p.stride[0] > 1 || p.stride[1] > 1) {
		z = at::zeros({ N, C, Hz, Wz }, x.options());
		z.slice(2, 0, Hz, p.stride[0]).slice(3, 0, Wz, p.stride[1]).copy_(x);
	}
	// edges: dilation * (kernel - 1) - padding, negative ones crop
	const int64_t eh = p.dil[0] * (KH - 1) - p.pad[0], ew = p.dil[1] * (KW - 1) - p.pad[1];
	z = at::constant_pad_nd(z, { ew, ew + out_pad[1], eh, eh + out_pad[0] }, 0);
	Conv2d direct = { { 1, 1 }, { 0, 0 }, { p.dil[0], p.dil[1] }, p.groups };
	return direct_conv2d(z, transposed_weight(w, p.groups), direct);
}

int64_t at_or_last(at::IntArrayRef a, size_t i)
{
	return a.empty() ? 0 : a[std::min(i, a.size() - 1)];
}

at::Tensor convolution(const at::Tensor &input, const at::Tensor &weight,
		       const std::optional<at::Tensor> &bias, at::IntArrayRef stride,
		       at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
		       at::IntArrayRef output_padding, int64_t groups)
{
	const int64_t dims = input.dim() - 2;
	auto dt = input.scalar_type();
	TORCH_CHECK_NOT_IMPLEMENTED(dims == 1 || dims == 2, "spyre: convolution: ", dims,
				    "-d convolution of ", dt, " input of shape ", input.sizes(),
				    " has no kernel on the card (1-d and 2-d do)");
	TORCH_CHECK_NOT_IMPLEMENTED(dt == at::kFloat || dt == at::kHalf || dt == at::kBFloat16,
				    "spyre: convolution: the card convolves float32/float16/"
				    "bfloat16, not ",
				    dt, " (input of shape ", input.sizes(), ")");
	TORCH_CHECK(weight.scalar_type() == dt && (!bias || !bias->defined() ||
						   bias->scalar_type() == dt),
		    "spyre: convolution: input (", dt, "), weight (", weight.scalar_type(),
		    ") and bias must have the same dtype");
	TORCH_CHECK(weight.device() == input.device() &&
			    (!bias || !bias->defined() || bias->device() == input.device()),
		    "Expected all tensors to be on the same device, but found input on ",
		    input.device(), " and weight on ", weight.device(), " (convolution)");
	TORCH_CHECK(groups > 0 && input.size(1) % groups == 0,
		    "spyre: convolution: groups must divide the input channels");

	// a 1-d convolution is a 2-d one over a height of 1
	at::Tensor x = dims == 1 ? input.unsqueeze(2) : input;
	at::Tensor w = dims == 1 ? weight.unsqueeze(2) : weight;
	const size_t o = dims == 1 ? 1 : 0;	// which of the 2-d params the 1-d ones fill
	Conv2d p = { { 1, 1 }, { 0, 0 }, { 1, 1 }, groups };
	int64_t out_pad[2] = { 0, 0 };
	for (size_t d = o; d < 2; d++) {
		p.stride[d] = at_or_last(stride, d - o);
		p.pad[d] = at_or_last(padding, d - o);
		p.dil[d] = at_or_last(dilation, d - o);
		out_pad[d] = at_or_last(output_padding, d - o);
	}
	at::Tensor y = transposed ? transposed_conv2d(x, w, p, out_pad) : direct_conv2d(x, w, p);
	if (bias && bias->defined())
		y = y + bias->view({ 1, -1, 1, 1 });
	return dims == 1 ? y.squeeze(2) : y;
}

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	m.impl("convolution_overrideable", TORCH_FN(convolution));
}

} // namespace torch_spyre
