// SPDX-License-Identifier: MIT
//
// Rows longer than a row kernel takes (a row must fit a core's scratchpad:
// about 2^17 fp32 elements, fewer for kernels that keep more per element),
// reduced and scanned in passes instead of refused. The row is padded with
// the op's identity to whole pieces of kPass elements, viewed [rows,
// pieces, kPass], and reduced over the pieces and then over their results;
// both passes are the ordinary kernels on rows that fit, so each pass runs
// on the card. Floats accumulate in fp32 between the passes and round once.
//
//   sum/mean/amax/amin: the reduction of the pieces' reductions (NaN
//     propagates through both); mean is the fp32 sum over n.
//   argmax: each piece's first maximum, then the first piece whose maximum
//     is the largest (NaN wins in both passes, as PyTorch's argmax): the
//     first maximum of the row.
//   cumsum: each piece's running sum plus the sum of the pieces before it
//     (an exclusive running sum of the pieces' totals, no subtraction).
//   softmax/log_softmax: the row's maximum and sum of exponentials by the
//     passes above, then elementwise.
//   layer norm (rows past kNormRow): mean, then the mean of the squared
//     deviations (two passes over the data, no cancellation), in fp32.
#include "ops_long_rows.h"

#include "kernels.h"

#include <ATen/ATen.h>

#include <limits>

namespace torch_spyre {
namespace {

// elements of one piece: fits every row kernel (int64 amin refuses 65536)
constexpr int64_t kPass = 32768;

// @x with @dim last, padded with @pad to whole pieces: [rows, pieces, kPass].
at::Tensor pieces(const at::Tensor &x, int64_t dim, const at::Scalar &pad)
{
	at::Tensor t = x.movedim(dim, -1);
	t = t.reshape({ -1, t.size(-1) });
	int64_t n = t.size(1), p = (n + kPass - 1) / kPass;
	if (p * kPass != n)
		t = at::cat({ t, at::full({ t.size(0), p * kPass - n }, pad, t.options()) }, 1);
	return t.reshape({ t.size(0), p, kPass });
}

// Per-row results [rows, n] (or [rows]: n 1) back in @x's layout along @dim.
at::Tensor unpieces(const at::Tensor &r, const at::Tensor &x, int64_t dim, int64_t n)
{
	auto s = x.movedim(dim, -1).sizes().vec();
	s.back() = n;
	return r.reshape(s).movedim(-1, dim);
}

at::Scalar lowest(at::ScalarType dt)
{
	if (dt == at::kInt)
		return std::numeric_limits<int32_t>::min();
	if (dt == at::kLong)
		return std::numeric_limits<int64_t>::min();
	return -std::numeric_limits<double>::infinity();
}

at::Scalar highest(at::ScalarType dt)
{
	if (dt == at::kInt)
		return std::numeric_limits<int32_t>::max();
	if (dt == at::kLong)
		return std::numeric_limits<int64_t>::max();
	return std::numeric_limits<double>::infinity();
}

// The dtype the passes accumulate in.
at::ScalarType acc_dtype(at::ScalarType dt)
{
	return card_float(dt) ? at::kFloat : dt;
}

// Longest layer norm row handed to the card's kernel (it refuses 32768).
constexpr int64_t kNormRow = 16384;

} // namespace

bool long_norm_row(int64_t n)
{
	return n > kNormRow;
}

void long_layer_norm(const at::Tensor &x, const at::Tensor &w, const at::Tensor &b, double eps,
		     const at::Tensor &out, const at::Tensor &mean, const at::Tensor &rstd)
{
	at::Tensor xf = card_cast(x, at::kFloat);
	at::Tensor mu = xf.mean(-1, true);
	at::Tensor d = xf - mu;
	at::Tensor r = ((d * d).mean(-1, true) + eps).rsqrt();
	at::Tensor y = d * r;
	if (w.defined())
		y = y * card_cast(w, at::kFloat);
	if (b.defined())
		y = y + card_cast(b, at::kFloat);
	out.copy_(y);
	mean.copy_(mu);
	rstd.copy_(r);
}

bool long_row(const at::Tensor &x, int64_t dim)
{
	return x.dim() > 0 && x.size(dim) > kPass;
}

at::Tensor long_reduce(spyre_reduce_op op, const at::Tensor &x, int64_t dim)
{
	const auto dt = x.scalar_type();
	at::Tensor r;
	if (op == SPYRE_RED_MAX) {
		r = pieces(x, dim, lowest(dt)).amax(-1).amax(-1);
	} else if (op == SPYRE_RED_MIN) {
		r = pieces(x, dim, highest(dt)).amin(-1).amin(-1);
	} else {
		at::ScalarType acc = acc_dtype(dt);
		at::Tensor p = pieces(card_cast(x, acc), dim, 0);
		r = p.sum(-1, false, acc).sum(-1, false, acc);
		if (op == SPYRE_RED_MEAN)
			r = r / double(x.size(dim));
		r = card_cast(r, dt);
	}
	return unpieces(r, x, dim, 1);
}

at::Tensor long_argmax(const at::Tensor &x, int64_t dim)
{
	at::Tensor p = pieces(x, dim, lowest(x.scalar_type())); // padding comes last: never first
	at::Tensor a = p.argmax(-1);				  // [rows, pieces]
	at::Tensor best = p.gather(-1, a.unsqueeze(-1)).squeeze(-1);
	at::Tensor c = best.argmax(-1, true);			  // [rows, 1]
	at::Tensor idx = c * kPass + a.gather(-1, c);
	return unpieces(idx, x, dim, 1);
}

at::Tensor long_along(LongScan kind, const at::Tensor &x, int64_t dim)
{
	const auto dt = x.scalar_type();
	const int64_t n = x.size(dim);
	at::ScalarType acc = acc_dtype(dt);
	at::Tensor xa = card_cast(x, acc);
	if (kind == LongScan::Cumsum) {
		at::Tensor c = pieces(xa, dim, 0).cumsum(-1, acc); // [rows, p, kPass]
		int64_t rows = c.size(0), p = c.size(1);
		at::Tensor total = c.select(-1, kPass - 1).cumsum(-1, acc); // [rows, p]
		at::Tensor before = at::cat({ at::zeros({ rows, 1 }, total.options()),
					      total.narrow(1, 0, p - 1) },
					    1);
		at::Tensor r = (c + before.unsqueeze(-1)).reshape({ rows, p * kPass });
		r = r.narrow(1, 0, n);
		return card_cast(unpieces(r.contiguous(), x, dim, n).contiguous(), dt);
	}
	at::Tensor m = xa.amax(dim, true); // long rows: the passes above
	at::Tensor sh = xa - m;
	at::Tensor s = sh.exp().sum(dim, true);
	at::Tensor r = kind == LongScan::Softmax ? sh.exp() / s : sh - s.log();
	return card_cast(r, dt);
}

} // namespace torch_spyre
