// SPDX-License-Identifier: MIT
//
// index_put_ with one integer index tensor on the first dimension
// (x[idx] = v, x.index_put_((idx,), v, accumulate)), composed of card ops.
// The card has no scatter, so the writes are turned into reads: a match
// matrix M[n, k] = (idx[k] == n) says which of the K values land on row n;
// a row takes the value of the last k that names it (the CPU's order: later
// writes win), or keeps its own; with accumulate=True, rows add M @ values
// (fp32 accumulation, one rounding). Indices are checked on the host first
// (two synchronisations), as PyTorch raises for one out of range.
//
// The match matrix costs N * K elements; larger problems, several index
// tensors, an index on another dimension and integer accumulation are left
// to the caller (ops_select.cpp's index_put_, which also writes through
// boolean masks), which takes the counted CPU fallback for them.
#include "kernels.h"

#include <ATen/ATen.h>

#include <vector>

namespace torch_spyre {
namespace {

constexpr int64_t kMaxMatch = int64_t(1) << 24;

} // namespace

bool index_put_rows(at::Tensor &self, const c10::List<std::optional<at::Tensor>> &indices,
		    const at::Tensor &values, bool accumulate)
{
	const auto dt = self.scalar_type();
	std::optional<at::Tensor> idx;
	bool other = false;
	for (size_t i = 0; i < indices.size(); i++) {
		std::optional<at::Tensor> t = indices.get(i);
		if (!t || !t->defined())
			continue;
		if (i == 0 && !idx)
			idx = t;
		else
			other = true;
	}
	if (!idx || other || idx->dim() != 1 || self.dim() < 1 ||
	    (idx->scalar_type() != at::kLong && idx->scalar_type() != at::kInt))
		return false;
	const int64_t N = self.size(0), K = idx->size(0);
	if (N * K > kMaxMatch || (accumulate && !at::isFloatingType(dt)))
		return false;
	if (K == 0 || self.numel() == 0)
		return true;
	if (dt == at::kBool) { // the card gathers int32 rows, not bool ones
		at::Tensor wide = self.to(at::kInt);
		if (!index_put_rows(wide, indices, values.to(at::kInt), false))
			return false;
		self.copy_(wide.to(at::kBool));
		return true;
	}
	at::Tensor ix = idx->to(self.device()).to(at::kLong);
	const int64_t lo = ix.min().item<int64_t>(), hi = ix.max().item<int64_t>();
	TORCH_CHECK_INDEX(lo >= -N && hi < N, "index ", lo < -N ? lo : hi,
			  " is out of bounds for dimension 0 with size ", N);
	ix = at::where(ix.lt(0), ix + N, ix);

	std::vector<int64_t> vshape(self.sizes().begin(), self.sizes().end());
	vshape[0] = K;
	at::Tensor v = values.to(self.device()).to(dt).expand(vshape);
	at::Tensor rows = at::arange(N, at::TensorOptions().dtype(at::kLong)).to(self.device());
	at::Tensor match = rows.unsqueeze(1).eq(ix.unsqueeze(0)); // [N, K]
	if (accumulate) {
		at::Tensor flat = v.reshape({ K, -1 }).to(at::kFloat);
		at::Tensor add = at::mm(match.to(at::kFloat), flat).view(self.sizes());
		self.copy_((self.to(at::kFloat) + add).to(dt));
		return true;
	}
	// the last k naming each row, plus one (0: no k names it): the row
	// maximum of M[n, k] * (k + 1)
	at::Tensor order = at::arange(1, K + 1, at::TensorOptions().dtype(at::kLong))
				   .to(self.device());
	at::Tensor which = at::amax(match.to(at::kLong) * order.unsqueeze(0), { 1 });
	at::Tensor last = at::clamp_min(which - 1, 0);
	at::Tensor hit = which.gt(0);
	std::vector<int64_t> bshape(self.dim(), 1);
	bshape[0] = N;
	self.copy_(at::where(hit.view(bshape), v.index_select(0, last), self));
	return true;
}

} // namespace torch_spyre
