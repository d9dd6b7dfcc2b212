// SPDX-License-Identifier: MIT
//
// Batch normalisation on the card (aten::native_batch_norm and the
// no-training form torch.export and AOTAutograd use), composed of card ops:
// the per-channel statistics are reductions over every dimension but the
// channels, the normalisation one broadcast multiply-add. In evaluation the
// running statistics are used; in training the batch's mean and biased
// variance normalise, and the running statistics are updated in place with
// the unbiased variance, as PyTorch does.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <tuple>
#include <vector>

namespace torch_spyre {
namespace {

// [1, C, 1, ...] for a per-channel vector against an input of @ndim dims.
std::vector<int64_t> channel_shape(int64_t ndim)
{
	std::vector<int64_t> s(ndim, 1);
	s[1] = -1;
	return s;
}

void check_input(const at::Tensor &x)
{
	auto dt = x.scalar_type();
	TORCH_CHECK_NOT_IMPLEMENTED(dt == at::kFloat || dt == at::kHalf || dt == at::kBFloat16,
				    "spyre: native_batch_norm: the card normalises float32/"
				    "float16/bfloat16, not ",
				    dt, " (input of shape ", x.sizes(), ")");
	TORCH_CHECK(x.dim() >= 2, "spyre: native_batch_norm: expected an input with a channel "
				  "dimension, got shape ",
		    x.sizes());
}

// y = (x - mean) * invstd * weight + bias, per channel, in x's dtype.
at::Tensor normalise(const at::Tensor &x, const at::Tensor &mean, const at::Tensor &invstd,
		     const std::optional<at::Tensor> &weight, const std::optional<at::Tensor> &bias)
{
	auto cs = channel_shape(x.dim());
	at::Tensor scale = invstd;
	if (weight && weight->defined())
		scale = scale * weight->to(at::kFloat);
	at::Tensor shift = -mean * scale;
	if (bias && bias->defined())
		shift = shift + bias->to(at::kFloat);
	// in fp32, rounded once to x's dtype
	return (x.to(at::kFloat) * scale.view(cs) + shift.view(cs)).to(x.scalar_type());
}

std::tuple<at::Tensor, at::Tensor, at::Tensor>
batch_norm(const at::Tensor &input, const std::optional<at::Tensor> &weight,
	   const std::optional<at::Tensor> &bias, const std::optional<at::Tensor> &running_mean,
	   const std::optional<at::Tensor> &running_var, bool training, double momentum,
	   double eps)
{
	check_input(input);
	const bool have_running = running_mean && running_mean->defined() && running_var &&
				  running_var->defined();
	at::Tensor empty = at::empty({ 0 }, input.options().dtype(at::kFloat));
	if (!training) {
		TORCH_CHECK(have_running, "spyre: native_batch_norm: running_mean and running_var "
					  "must be defined in evaluation mode");
		at::Tensor invstd = at::rsqrt(running_var->to(at::kFloat) + eps);
		return { normalise(input, running_mean->to(at::kFloat), invstd, weight, bias),
			 empty, empty };
	}
	std::vector<int64_t> dims;
	for (int64_t d = 0; d < input.dim(); d++)
		if (d != 1)
			dims.push_back(d);
	const int64_t n = input.numel() / std::max<int64_t>(input.size(1), 1);
	TORCH_CHECK(n > 1, "Expected more than 1 value per channel when training, got input size ",
		    input.sizes());
	at::Tensor xf = input.to(at::kFloat);
	at::Tensor mean = xf.mean(dims);
	at::Tensor centred = xf - mean.view(channel_shape(input.dim()));
	at::Tensor var = (centred * centred).mean(dims);
	at::Tensor invstd = at::rsqrt(var + eps);
	if (have_running) {
		at::Tensor unbiased = var * (static_cast<double>(n) / static_cast<double>(n - 1));
		running_mean->mul_(1 - momentum).add_(mean.to(running_mean->scalar_type()),
						       momentum);
		running_var->mul_(1 - momentum).add_(unbiased.to(running_var->scalar_type()),
						      momentum);
	}
	return { normalise(input, mean, invstd, weight, bias), mean, invstd };
}

std::tuple<at::Tensor, at::Tensor, at::Tensor>
batch_norm_no_training(const at::Tensor &input, const std::optional<at::Tensor> &weight,
		       const std::optional<at::Tensor> &bias, const at::Tensor &running_mean,
		       const at::Tensor &running_var, double momentum, double eps)
{
	return batch_norm(input, weight, bias, running_mean, running_var, false, momentum, eps);
}

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	m.impl("native_batch_norm", TORCH_FN(batch_norm));
	m.impl("_native_batch_norm_legit_no_training", TORCH_FN(batch_norm_no_training));
}

} // namespace torch_spyre
