// SPDX-License-Identifier: MIT
//
// Random ops on the card. The bits are Philox4x32-10 words computed by
// card programs (spyre_op_philox, one launch per 2^22 words) from the
// generator's (seed, offset); every op takes one offset. The distributions
// are elementwise card ops on those words:
//
//   uniform   u = (w >> 8) * 2^-24 in [0, 1) (24 bits, every fp32 step),
//             from + u * (to - from), a result rounded up to `to` gives
//             `from` (as CUDA's uniform_);
//   normal    Box-Muller on two words: sqrt(-2 log u1) (cos, sin)(2 pi u2)
//             with u1 in (0, 1] (so |z| <= 5.8);
//   exponential  -log(1 - u) / lambda;  bernoulli  u < p;
//   random_   from + w % range (w 32 bits, or 64 from two words when the
//             range is 2^32 or more; the modulo's bias as CUDA's);
//   multinomial  with replacement: the first category whose running sum
//             of p passes u * sum; without: top-k of p / Exp(1) (PyTorch's
//             own method);
//   randperm  a stable argsort of 24-bit random keys.
//
// The values differ from the CPU generator's for the same seed, as CUDA's
// do; they are the same for the same seed and device (Documentation/random.rst).
// Argument checks are PyTorch's own (DistributionTemplates.h).
#include "generator.h"
#include "kernels.h"
#include "op_tensor.h"

#include <ATen/ATen.h>
#include <ATen/native/DistributionTemplates.h>
#include <ATen/native/Resize.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <mutex>

namespace torch_spyre {
namespace {

constexpr int64_t kRow = 4096;		      // counters per row of a long launch
constexpr int64_t kChunk = int64_t(1) << 20; // counters per launch (2^22 words)

// @n random 32-bit words (int64 [n], values in [0, 2^32)) on @device.
at::Tensor philox_words(int64_t n, c10::Device device, const std::optional<at::Generator> &gen)
{
	c10::DeviceGuard guard(device);
	auto opts = at::TensorOptions().dtype(at::kLong).device(device);
	if (n <= 0)
		return at::empty({ 0 }, opts);
	uint64_t seed, offset;
	{
		SpyreGenerator *g = spyre_generator(gen, device);
		std::lock_guard<std::mutex> lock(g->mutex_);
		std::tie(seed, offset) = g->next_philox();
	}
	int64_t m = (n + 3) / 4;
	if (m > kRow)
		m = (m + kRow - 1) / kRow * kRow;
	at::Tensor out = at::empty({ m, 4 }, opts);
	for (int64_t start = 0; start < m; start += kChunk) {
		int64_t cnt = std::min(kChunk, m - start);
		at::Tensor key = at::empty({ SPYRE_PHILOX_KEY_LEN }, at::TensorOptions().dtype(at::kLong));
		spyre_philox_key(seed, offset, (uint64_t)start, key.data_ptr<int64_t>());
		at::Tensor dkey = key.to(device);
		at::Tensor part = out.narrow(0, start, cnt);
		spyre_tensor dk = describe(dkey), dp = describe(part);
		check_op(spyre_op_philox(ops_context(device.index()), launch_stream(dkey), &dk, &dp),
			 "philox");
	}
	count_device_op("philox");
	return out.view({ -1 }).narrow(0, 0, n);
}

// Uniform fp32 in [0, 1) with 24 random bits, shaped like @shape.
at::Tensor uniform01(at::IntArrayRef shape, c10::Device device,
		     const std::optional<at::Generator> &gen)
{
	int64_t n = c10::multiply_integers(shape);
	at::Tensor w = philox_words(n, device, gen);
	return (at::bitwise_right_shift(w, 8).to(at::kFloat) * (1.0 / 16777216.0)).view(shape);
}

bool card_dtype(const at::Tensor &t)
{
	auto dt = t.scalar_type();
	return card_float(dt) || dt == at::kBool || card_int(t);
}

// Writes @r (computed contiguous) into @self.
at::Tensor &store(at::Tensor &self, const at::Tensor &r)
{
	self.copy_(r.view(self.sizes()));
	return self;
}

// ---- kernels for PyTorch's templates (they check the arguments) ----

template <typename RNG> struct UniformKernel {
	void operator()(at::TensorIteratorBase &iter, double from, double to,
			std::optional<at::Generator> gen)
	{
		at::Tensor self = iter.tensor(0);
		at::Tensor u = uniform01(self.sizes(), self.device(), gen);
		at::Tensor x = (u * (to - from) + from).to(self.scalar_type());
		store(self, x.masked_fill(x.ge(to), from));
	}
};

// Standard normals (fp32) shaped like @shape: Box-Muller on word pairs.
at::Tensor std_normal(at::IntArrayRef shape, c10::Device device,
		      const std::optional<at::Generator> &gen)
{
	int64_t n = c10::multiply_integers(shape), h = (n + 1) / 2;
	at::Tensor w = at::bitwise_right_shift(philox_words(2 * h, device, gen), 8).to(at::kFloat);
	at::Tensor u1 = (w.narrow(0, 0, h) + 1.0) * (1.0 / 16777216.0);
	at::Tensor a = w.narrow(0, h, h) * (2.0 * M_PI / 16777216.0);
	at::Tensor r = (u1.log() * -2.0).sqrt();
	return at::cat({ r * a.cos(), r * a.sin() }).narrow(0, 0, n).view(shape);
}

template <typename RNG> struct NormalKernel {
	void operator()(const at::TensorBase &base, double mean, double std,
			std::optional<at::Generator> gen)
	{
		at::Tensor self(base);
		at::Tensor z = std_normal(self.sizes(), self.device(), gen) * std + mean;
		store(self, z.to(self.scalar_type()));
	}
};

template <typename RNG> struct ExponentialKernel {
	void operator()(at::TensorIteratorBase &iter, double lambda,
			std::optional<at::Generator> gen)
	{
		at::Tensor self = iter.tensor(0);
		at::Tensor u = uniform01(self.sizes(), self.device(), gen);
		store(self, ((1.0 - u).log() * (-1.0 / lambda)).to(self.scalar_type()));
	}
};

template <typename RNG> struct BernoulliScalarKernel {
	void operator()(const at::TensorBase &base, double p, std::optional<at::Generator> gen)
	{
		at::Tensor self(base);
		at::Tensor u = uniform01(self.sizes(), self.device(), gen);
		store(self, u.lt(p).to(self.scalar_type()));
	}
};

template <typename RNG> struct BernoulliTensorKernel {
	void operator()(const at::TensorBase &base, const at::TensorBase &p_,
			std::optional<at::Generator> gen)
	{
		at::Tensor self(base), p(p_);
		TORCH_CHECK(p.device() == self.device(), "spyre: bernoulli_: p is on ", p.device(),
			    ", self on ", self.device());
		at::Tensor u = uniform01(self.sizes(), self.device(), gen);
		at::Tensor pf = p.to(at::kFloat).expand(self.sizes());
		TORCH_CHECK(!pf.lt(0).logical_or(pf.gt(1)).logical_or(pf.isnan()).any().item<bool>(),
			    "bernoulli_: p must be in [0, 1] (the probabilities)");
		store(self, u.lt(pf).to(self.scalar_type()));
	}
};

// from + w % range for a range below 2^64 (as uint64), as int64 values.
at::Tensor random_ints(const at::Tensor &self, uint64_t range, int64_t from,
		       const std::optional<at::Generator> &gen)
{
	int64_t n = self.numel();
	at::Tensor v;
	if (range < (uint64_t(1) << 32)) {
		v = at::remainder(philox_words(n, self.device(), gen), (int64_t)range);
	} else {
		at::Tensor w = philox_words(2 * n, self.device(), gen).view({ 2, n });
		at::Tensor w64 = at::bitwise_or(at::bitwise_left_shift(w[0], 32), w[1]);
		if (range < (uint64_t(1) << 63)) {
			// the low 63 bits, non-negative: the card's floor modulo is the modulo
			v = at::remainder(at::bitwise_and(w64, std::numeric_limits<int64_t>::max()),
					  (int64_t)range);
		} else {
			// unsigned w64 % range = w64 (if below range) or w64 - range
			int64_t flip = std::numeric_limits<int64_t>::min();
			at::Tensor below = at::bitwise_xor(w64, flip).lt((int64_t)(range ^ (uint64_t)flip));
			v = at::where(below, w64, w64 - (int64_t)range);
		}
	}
	return v + from;
}

template <typename RNG> struct RandomFromToKernel {
	void operator()(at::TensorIteratorBase &iter, uint64_t range, int64_t from,
			std::optional<at::Generator> gen)
	{
		at::Tensor self = iter.tensor(0);
		store(self, random_ints(self, range, from, gen).to(self.scalar_type()));
	}
	// the whole int64 range
	void operator()(at::TensorIteratorBase &iter, std::optional<at::Generator> gen)
	{
		at::Tensor self = iter.tensor(0);
		int64_t n = self.numel();
		at::Tensor w = philox_words(2 * n, self.device(), gen).view({ 2, n });
		store(self, at::bitwise_or(at::bitwise_left_shift(w[0], 32), w[1]));
	}
};

// random_() without bounds: [0, 2^digits] for floats, [0, max] for integers.
template <typename RNG> struct RandomKernel {
	void operator()(at::TensorIteratorBase &iter, std::optional<at::Generator> gen)
	{
		at::Tensor self = iter.tensor(0);
		uint64_t range;
		switch (self.scalar_type()) {
		case at::kFloat: range = (uint64_t(1) << 24) + 1; break;
		case at::kHalf: range = (uint64_t(1) << 11) + 1; break;
		case at::kBFloat16: range = (uint64_t(1) << 8) + 1; break;
		case at::kBool: range = 2; break;
		case at::kInt: range = uint64_t(std::numeric_limits<int32_t>::max()) + 1; break;
		default: range = uint64_t(std::numeric_limits<int64_t>::max()) + 1; break;
		}
		store(self, random_ints(self, range, 0, gen).to(self.scalar_type()));
	}
};

struct RNG {};

// ---- the registered ops ----

at::Tensor &uniform_k(at::Tensor &self, double from, double to, std::optional<at::Generator> gen)
{
	if (!card_float(self.scalar_type()))
		return SPYRE_FALLBACK(uniform_, self, from, to, gen);
	return at::native::templates::uniform_impl_<UniformKernel, RNG>(self, from, to, gen);
}

at::Tensor &normal_k(at::Tensor &self, double mean, double std, std::optional<at::Generator> gen)
{
	if (!card_float(self.scalar_type()))
		return SPYRE_FALLBACK(normal_, self, mean, std, gen);
	return at::native::templates::normal_impl_<NormalKernel, RNG>(self, mean, std, gen);
}

at::Tensor normal_tf(const at::Tensor &mean, double std, std::optional<at::Generator> gen)
{
	return at::native::templates::normal_impl<NormalKernel, RNG>(mean, std, gen);
}

at::Tensor normal_ft(double mean, const at::Tensor &std, std::optional<at::Generator> gen)
{
	return at::native::templates::normal_impl<NormalKernel, RNG>(mean, std, gen);
}

at::Tensor normal_tt(const at::Tensor &mean, const at::Tensor &std,
		     std::optional<at::Generator> gen)
{
	return at::native::templates::normal_impl<NormalKernel, RNG>(mean, std, gen);
}

at::Tensor &exponential_k(at::Tensor &self, double lambda, std::optional<at::Generator> gen)
{
	if (!card_float(self.scalar_type()))
		return SPYRE_FALLBACK(exponential_, self, lambda, gen);
	return at::native::templates::exponential_impl_<ExponentialKernel, RNG>(self, lambda, gen);
}

at::Tensor &bernoulli_scalar_k(at::Tensor &self, double p, std::optional<at::Generator> gen)
{
	if (!card_dtype(self))
		return SPYRE_FALLBACK(bernoulli__float, self, p, gen);
	return at::native::templates::bernoulli_impl_<BernoulliScalarKernel, RNG>(self, p, gen);
}

at::Tensor &bernoulli_tensor_k(at::Tensor &self, const at::Tensor &p,
			       std::optional<at::Generator> gen)
{
	if (!card_dtype(self) || !card_float(p.scalar_type()))
		return SPYRE_FALLBACK(bernoulli__Tensor, self, p, gen);
	return at::native::templates::bernoulli_impl_<BernoulliTensorKernel, RNG>(self, p, gen);
}

at::Tensor bernoulli_k(const at::Tensor &p, std::optional<at::Generator> gen)
{
	at::Tensor r = at::empty_like(p, at::MemoryFormat::Contiguous);
	return bernoulli_tensor_k(r, p, gen);
}

at::Tensor bernoulli_p_k(const at::Tensor &self, double p, std::optional<at::Generator> gen)
{
	at::Tensor r = at::empty_like(self, at::MemoryFormat::Contiguous);
	return bernoulli_scalar_k(r, p, gen);
}

at::Tensor &random_k(at::Tensor &self, std::optional<at::Generator> gen)
{
	if (!card_dtype(self))
		return SPYRE_FALLBACK(random_, self, gen);
	return at::native::templates::random_impl<RandomKernel, RNG>(self, gen);
}

at::Tensor &random_from_k(at::Tensor &self, int64_t from, std::optional<int64_t> to,
			  std::optional<at::Generator> gen)
{
	if (!card_dtype(self))
		return SPYRE_FALLBACK(random__from, self, from, to, gen);
	return at::native::templates::random_from_to_impl<RandomFromToKernel, RNG>(self, from, to,
										    gen);
}

at::Tensor &random_to_k(at::Tensor &self, int64_t to, std::optional<at::Generator> gen)
{
	return random_from_k(self, 0, to, gen);
}

// Exp(1) samples shaped like @p: -log(1 - u), in [0, 16.7].
at::Tensor std_exponential_like(const at::Tensor &p, const std::optional<at::Generator> &gen)
{
	return (1.0 - uniform01(p.sizes(), p.device(), gen)).log() * -1.0;
}

// The first category whose running sum of p passes u * sum, per sample.
at::Tensor multinomial_repl(const at::Tensor &p, int64_t n, const std::optional<at::Generator> &gen)
{
	int64_t rows = p.size(0), k = p.size(1);
	at::Tensor cdf = at::cumsum(p, 1);
	at::Tensor total = cdf.narrow(1, k - 1, 1);
	at::Tensor u = uniform01({ rows, n }, p.device(), gen) * total;
	// [rows, n, k]: categories whose running sum is at most u come before it
	at::Tensor idx = cdf.unsqueeze(1).le(u.unsqueeze(2)).to(at::kLong).sum(2);
	// u * total rounded up to the total: the last category with p > 0
	at::Tensor ar = at::arange(k, p.options().dtype(at::kLong));
	at::Tensor last = at::where(p.gt(0), ar.unsqueeze(0), -1).amax(1, true);
	return at::minimum(idx, last);
}

at::Tensor multinomial_k(const at::Tensor &self, int64_t n, bool replacement,
			 std::optional<at::Generator> gen)
{
	if (!card_float(self.scalar_type()))
		return SPYRE_FALLBACK(multinomial, self, n, replacement, gen);
	TORCH_CHECK(self.dim() == 1 || self.dim() == 2,
		    "prob_dist must be 1 or 2 dim");
	int64_t k = self.size(-1);
	TORCH_CHECK(k > 0, "cannot sample from an empty distribution (0 categories)");
	TORCH_CHECK(n > 0, "cannot sample n_sample <= 0 samples");
	TORCH_CHECK(replacement || n <= k,
		    "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
	c10::DeviceGuard guard(self.device());
	at::Tensor p = self.to(at::kFloat).reshape({ -1, k });
	// one read back for the checks, as the CPU makes them
	at::Tensor bad = at::stack({ p.lt(0).any(), p.isinf().any().logical_or(p.isnan().any()),
				     p.sum(1).le(0).any() })
				 .cpu();
	TORCH_CHECK(!bad[0].item<bool>(), "probability tensor contains either `inf`, `nan` or element < 0");
	TORCH_CHECK(!bad[1].item<bool>(), "probability tensor contains either `inf`, `nan` or element < 0");
	TORCH_CHECK(!bad[2].item<bool>(), "invalid multinomial distribution (sum of probabilities <= 0)");
	at::Tensor r;
	if (replacement) {
		r = multinomial_repl(p, n, gen);
	} else {
		at::Tensor e = std_exponential_like(p, gen);
		// a category of probability 0 comes after all others (0 / 0 would be NaN)
		at::Tensor keys = at::where(p.gt(0), p / e, -1.0);
		TORCH_CHECK(!p.gt(0).sum(1).lt(n).any().item<bool>(),
			    "invalid multinomial distribution (with replacement=False, not enough "
			    "non-negative category to sample)");
		r = std::get<1>(at::topk(keys, n, 1));
	}
	count_device_op("multinomial");
	return self.dim() == 1 ? r.view({ n }) : r;
}

at::Tensor &multinomial_out_k(const at::Tensor &self, int64_t n, bool replacement,
			      std::optional<at::Generator> gen, at::Tensor &out)
{
	at::Tensor r = multinomial_k(self, n, replacement, gen);
	at::native::resize_output(out, r.sizes());
	out.copy_(r);
	return out;
}

at::Tensor &randperm_out_k(int64_t n, std::optional<at::Generator> gen, at::Tensor &out)
{
	TORCH_CHECK(n >= 0, "n must be non-negative, got", n);
	at::native::resize_output(out, { n });
	if (n == 0)
		return out;
	c10::DeviceGuard guard(out.device());
	at::Tensor keys = at::bitwise_right_shift(philox_words(n, out.device(), gen), 8)
				  .to(at::kFloat);
	at::Tensor idx = std::get<1>(at::sort(keys, true, 0, false));
	count_device_op("randperm");
	out.copy_(idx);
	return out;
}

std::tuple<at::Tensor, at::Tensor> native_dropout_k(const at::Tensor &x, double p,
						     std::optional<bool> train)
{
	if (!card_float(x.scalar_type()))
		return SPYRE_FALLBACK(native_dropout, x, p, train);
	TORCH_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
	if (train.has_value() && !*train)
		return { x.clone(), at::ones_like(x, x.options().dtype(at::kBool)) };
	if (p == 1)
		return { at::zeros_like(x), at::zeros_like(x, x.options().dtype(at::kBool)) };
	at::Tensor keep = uniform01(x.sizes(), x.device(), std::nullopt).lt(1.0 - p);
	at::Tensor y = (x.to(at::kFloat) * keep.to(at::kFloat) * (1.0 / (1.0 - p)))
			       .to(x.scalar_type());
	count_device_op("native_dropout");
	return { y, keep };
}

at::Tensor native_dropout_backward_k(const at::Tensor &grad, const at::Tensor &mask, double scale)
{
	if (!card_float(grad.scalar_type()))
		return SPYRE_FALLBACK(native_dropout_backward, grad, mask, scale);
	return (grad.to(at::kFloat) * mask.to(at::kFloat) * scale).to(grad.scalar_type());
}

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	m.impl("uniform_", uniform_k);
	m.impl("normal_", normal_k);
	m.impl("normal.Tensor_float", normal_tf);
	m.impl("normal.float_Tensor", normal_ft);
	m.impl("normal.Tensor_Tensor", normal_tt);
	m.impl("exponential_", exponential_k);
	m.impl("bernoulli_.float", bernoulli_scalar_k);
	m.impl("bernoulli_.Tensor", bernoulli_tensor_k);
	m.impl("bernoulli", bernoulli_k);
	m.impl("bernoulli.p", bernoulli_p_k);
	m.impl("random_", random_k);
	m.impl("random_.from", random_from_k);
	m.impl("random_.to", random_to_k);
	m.impl("multinomial", multinomial_k);
	m.impl("multinomial.out", multinomial_out_k);
	m.impl("randperm.generator_out", randperm_out_k);
	m.impl("native_dropout", native_dropout_k);
	m.impl("native_dropout_backward", native_dropout_backward_k);
}

} // namespace torch_spyre
