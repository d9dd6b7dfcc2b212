// SPDX-License-Identifier: MIT
//
// 2-d pooling on the card (max_pool2d_with_indices, avg_pool2d,
// _adaptive_avg_pool2d; PyTorch's 1-d forms and max_pool2d reach these),
// composed of card ops. The padded input is viewed as its windows
// ([N, C, OH, OW, KH, KW], an as_strided view), gathered once into rows of
// KH * KW and reduced along the row. What depends on the shapes alone (the
// input position each window element reads, each window's divisor) is
// computed on the host and uploaded; no value leaves the card.
//
// PyTorch's choices kept: max pooling propagates NaN and reports the index
// of the last NaN in the window, else of the first maximum; a window over
// -inf values alone reports its first element inside the input; average
// pooling divides by the window's size clipped to the padded input, or to
// the input (count_include_pad=False), or by divisor_override; adaptive
// average pooling averages floor(i * H / OH) .. ceil((i + 1) * H / OH).
#include <ATen/ATen.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

namespace torch_spyre {
namespace {

struct Pool {
	int64_t k[2], s[2], p[2], d[2];
	bool ceil;
	int64_t in[2], out[2];
};

// PyTorch's pooling_output_shape.
int64_t out_size(int64_t in, int64_t k, int64_t pad, int64_t s, int64_t dil, bool ceil)
{
	int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil ? s - 1 : 0);
	int64_t o = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
	if (ceil && (o - 1) * s >= in + pad)
		o--;
	return o;
}

int64_t pick(at::IntArrayRef a, size_t i, int64_t dflt)
{
	return a.empty() ? dflt : a[std::min(i, a.size() - 1)];
}

Pool make_pool(const char *op, const at::Tensor &x, at::IntArrayRef k, at::IntArrayRef s,
	       at::IntArrayRef p, at::IntArrayRef d, bool ceil)
{
	auto dt = x.scalar_type();
	TORCH_CHECK_NOT_IMPLEMENTED(dt == at::kFloat || dt == at::kHalf || dt == at::kBFloat16,
				    "spyre: ", op, ": the card pools float32/float16/bfloat16, not ",
				    dt, " (input of shape ", x.sizes(), ")");
	TORCH_CHECK(x.dim() == 3 || x.dim() == 4, "spyre: ", op,
		    ": expected a 3-d or 4-d input, got shape ", x.sizes());
	TORCH_CHECK(!k.empty() && k.size() <= 2, op, ": kernel_size must be one int or two");
	Pool q;
	for (size_t i = 0; i < 2; i++) {
		q.k[i] = pick(k, i, 1);
		q.s[i] = pick(s, i, q.k[i]);
		q.p[i] = pick(p, i, 0);
		q.d[i] = pick(d, i, 1);
		q.in[i] = x.size(x.dim() - 2 + i);
		TORCH_CHECK(q.k[i] > 0 && q.s[i] > 0 && q.d[i] > 0 && q.p[i] >= 0, op,
			    ": kernel, stride and dilation must be positive, padding non-negative");
		TORCH_CHECK(q.p[i] <= q.k[i] / 2, op,
			    ": pad should be at most half of effective kernel size, but got pad=",
			    q.p[i], ", kernel_size=", q.k[i]);
		q.out[i] = out_size(q.in[i], q.k[i], q.p[i], q.s[i], q.d[i], ceil);
		TORCH_CHECK(q.out[i] > 0, op, ": output size is too small (input ", x.sizes(), ")");
	}
	q.ceil = ceil;
	return q;
}

// x [B, H, W] padded with @fill so every window lies inside, viewed as
// [B, OH, OW, KH * KW] rows (one strided copy on the card).
at::Tensor windows(const at::Tensor &x, const Pool &q, double fill)
{
	int64_t need[2];
	for (int i = 0; i < 2; i++)
		need[i] = (q.out[i] - 1) * q.s[i] + q.d[i] * (q.k[i] - 1) + 1;
	at::Tensor xp = at::constant_pad_nd(x,
					    { q.p[1], std::max<int64_t>(need[1] - q.in[1] - q.p[1], 0),
					      q.p[0],
					      std::max<int64_t>(need[0] - q.in[0] - q.p[0], 0) },
					    fill)
				.contiguous();
	const int64_t sH = xp.stride(1), sW = xp.stride(2);
	at::Tensor w = xp.as_strided({ xp.size(0), q.out[0], q.out[1], q.k[0], q.k[1] },
				     { xp.stride(0), sH * q.s[0], sW * q.s[1], sH * q.d[0],
				       sW * q.d[1] });
	return w.reshape({ xp.size(0), q.out[0], q.out[1], q.k[0] * q.k[1] });
}

// Flattens the leading dims to one batch dim; @restore puts them back.
at::Tensor as_batch(const at::Tensor &x)
{
	return x.reshape({ -1, x.size(-2), x.size(-1) });
}

at::Tensor restore(const at::Tensor &y, const at::Tensor &x, const Pool &q)
{
	std::vector<int64_t> s(x.sizes().begin(), x.sizes().end() - 2);
	s.push_back(q.out[0]);
	s.push_back(q.out[1]);
	return y.reshape(s);
}

// [OH, OW, K] int64: the flat input index (h * W + w) each window element
// reads; padding reads the window's first element inside the input.
at::Tensor input_index_map(const Pool &q)
{
	const int64_t K = q.k[0] * q.k[1];
	at::Tensor m = at::empty({ q.out[0], q.out[1], K }, at::kLong);
	int64_t *v = m.data_ptr<int64_t>();
	for (int64_t oh = 0; oh < q.out[0]; oh++)
		for (int64_t ow = 0; ow < q.out[1]; ow++) {
			int64_t *row = v + (oh * q.out[1] + ow) * K, first = -1;
			for (int64_t i = 0; i < K; i++) {
				int64_t h = oh * q.s[0] - q.p[0] + (i / q.k[1]) * q.d[0];
				int64_t w = ow * q.s[1] - q.p[1] + (i % q.k[1]) * q.d[1];
				bool in = h >= 0 && h < q.in[0] && w >= 0 && w < q.in[1];
				row[i] = in ? h * q.in[1] + w : -1;
				if (in && first < 0)
					first = row[i];
			}
			for (int64_t i = 0; i < K; i++)
				if (row[i] < 0)
					row[i] = first;
		}
	return m;
}

std::tuple<at::Tensor, at::Tensor> max_pool2d_with_indices(const at::Tensor &self,
							   at::IntArrayRef kernel_size,
							   at::IntArrayRef stride,
							   at::IntArrayRef padding,
							   at::IntArrayRef dilation, bool ceil_mode)
{
	Pool q = make_pool("max_pool2d", self, kernel_size, stride, padding, dilation, ceil_mode);
	const int64_t K = q.k[0] * q.k[1];
	at::Tensor x = as_batch(self);
	if (x.size(0) == 0) {
		auto o = restore(at::empty({ 0, q.out[0], q.out[1] }, self.options()), self, q);
		return { o, o.to(at::kLong) };
	}
	at::Tensor win = windows(x, q, -std::numeric_limits<double>::infinity());
	at::Tensor values = win.amax(-1);
	// first maximum; where the window holds a NaN, PyTorch reports its last
	// one: the first of the reversed window
	at::Tensor first = win.argmax(-1);
	auto rev = at::arange(K - 1, -1, -1, at::TensorOptions().dtype(at::kLong)).to(self.device());
	at::Tensor last_nan = (K - 1) - win.index_select(-1, rev).argmax(-1);
	at::Tensor k = at::where(values != values, last_nan, first);	// NaN: x != x
	at::Tensor map = input_index_map(q).to(self.device());
	at::Tensor idx =
		map.expand({ x.size(0), q.out[0], q.out[1], K }).gather(-1, k.unsqueeze(-1)).squeeze(-1);
	return { restore(values, self, q), restore(idx, self, q) };
}

// [OH, OW] float: each window's divisor.
at::Tensor divisors(const Pool &q, bool count_include_pad)
{
	at::Tensor m = at::empty({ q.out[0], q.out[1] }, at::kFloat);
	float *v = m.data_ptr<float>();
	for (int64_t oh = 0; oh < q.out[0]; oh++)
		for (int64_t ow = 0; ow < q.out[1]; ow++) {
			int64_t h0 = oh * q.s[0] - q.p[0], w0 = ow * q.s[1] - q.p[1];
			int64_t h1 = std::min(h0 + q.k[0], q.in[0] + q.p[0]);
			int64_t w1 = std::min(w0 + q.k[1], q.in[1] + q.p[1]);
			int64_t n = (h1 - h0) * (w1 - w0);
			if (!count_include_pad) {
				h0 = std::max<int64_t>(h0, 0);
				w0 = std::max<int64_t>(w0, 0);
				h1 = std::min(h1, q.in[0]);
				w1 = std::min(w1, q.in[1]);
				n = (h1 - h0) * (w1 - w0);
			}
			v[oh * q.out[1] + ow] = static_cast<float>(n);
		}
	return m;
}

at::Tensor avg_pool2d(const at::Tensor &self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
		      at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
		      std::optional<int64_t> divisor_override)
{
	Pool q = make_pool("avg_pool2d", self, kernel_size, stride, padding, {}, ceil_mode);
	TORCH_CHECK(!divisor_override || *divisor_override != 0, "divisor must be not zero");
	at::Tensor x = as_batch(self);
	if (x.size(0) == 0)
		return restore(at::empty({ 0, q.out[0], q.out[1] }, self.options()), self, q);
	// summed in fp32 and divided there, rounded once to the input's dtype
	at::Tensor sums = windows(x.to(at::kFloat), q, 0).sum(-1);
	at::Tensor y = divisor_override ?
			       sums / static_cast<double>(*divisor_override) :
			       sums / divisors(q, count_include_pad).to(self.device());
	return restore(y.to(self.scalar_type()), self, q);
}

// [O, I] float: row i averages input positions floor(i*I/O) .. ceil((i+1)*I/O).
at::Tensor adaptive_matrix(int64_t out, int64_t in)
{
	at::Tensor m = at::zeros({ out, in }, at::kFloat);
	float *v = m.data_ptr<float>();
	for (int64_t i = 0; i < out; i++) {
		int64_t a = (i * in) / out, b = ((i + 1) * in + out - 1) / out;
		for (int64_t j = a; j < b; j++)
			v[i * in + j] = 1.0f / static_cast<float>(b - a);
	}
	return m;
}

at::Tensor adaptive_avg_pool2d(const at::Tensor &self, at::IntArrayRef output_size)
{
	auto dt = self.scalar_type();
	TORCH_CHECK_NOT_IMPLEMENTED(dt == at::kFloat || dt == at::kHalf || dt == at::kBFloat16,
				    "spyre: adaptive_avg_pool2d: the card pools float32/float16/"
				    "bfloat16, not ",
				    dt, " (input of shape ", self.sizes(), ")");
	TORCH_CHECK((self.dim() == 3 || self.dim() == 4) && output_size.size() == 2,
		    "spyre: adaptive_avg_pool2d: expected a 3-d or 4-d input and two output "
		    "sizes, got shape ",
		    self.sizes());
	const int64_t H = self.size(-2), W = self.size(-1);
	TORCH_CHECK(H > 0 && W > 0, "adaptive_avg_pool2d(): Expected input to have non-zero size "
				    "for non-batch dimensions, but input has sizes ",
		    self.sizes());
	// a weighted sum along each axis: two matmuls with fp32 accumulation
	at::Tensor ph = adaptive_matrix(output_size[0], H).to(self.device());
	at::Tensor pw = adaptive_matrix(output_size[1], W).to(self.device());
	at::Tensor y = at::matmul(at::matmul(ph, self.to(at::kFloat)), pw.t());
	return y.to(dt);
}

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	m.impl("max_pool2d_with_indices", TORCH_FN(max_pool2d_with_indices));
	m.impl("avg_pool2d", TORCH_FN(avg_pool2d));
	m.impl("_adaptive_avg_pool2d", TORCH_FN(adaptive_avg_pool2d));
}

} // namespace torch_spyre
