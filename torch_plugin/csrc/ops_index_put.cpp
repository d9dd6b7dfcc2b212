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
// tensors, an index on another dimension and integer accumulation go to
// index_put_any below.
//
// index_put_any takes every other index_put_: several integer index
// tensors (broadcast together), on any dims, with bool masks among them (a
// mask stands for its nonzero() columns, one synchronisation), accumulate
// or not. The indexed dims become one: each selected element's linear
// number over them, so the put is an index_copy_ / index_add_ along dim 0
// of self with those dims moved first and flattened (ops_scatter.cpp's
// kernels: any size they take, integers exact, duplicates as the CPU: the
// last write wins, accumulate adds them all). Whatever those kernels cannot
// take goes to their counted fallback, as PyTorch would compute it.
#include "kernels.h"

#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <algorithm>
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

namespace {

// The index tensors of @indices, one per dim of self (empty: ":"), masks
// replaced by the integer indices they stand for; false when the shapes do
// not fit (the fallback raises PyTorch's error).
bool per_dim_indices(const at::Tensor &self, const c10::List<std::optional<at::Tensor>> &indices,
		     std::vector<at::Tensor> &out)
{
	for (size_t i = 0; i < indices.size(); i++) {
		std::optional<at::Tensor> o = indices.get(i);
		if (!o || !o->defined()) {
			out.emplace_back();
			continue;
		}
		at::Tensor t = o->to(self.device());
		if (t.scalar_type() == at::kBool || t.scalar_type() == at::kByte) {
			const int64_t first = int64_t(out.size());
			if (first + t.dim() > self.dim())
				return false;
			for (int64_t d = 0; d < t.dim(); d++)
				if (t.size(d) != self.size(first + d))
					return false;
			for (auto &c : mask_as_indices(t.to(at::kBool)))
				out.push_back(c);
			continue;
		}
		if (t.scalar_type() != at::kLong && t.scalar_type() != at::kInt)
			return false;
		out.push_back(t.to(at::kLong));
	}
	return int64_t(out.size()) <= self.dim();
}

} // namespace

bool index_put_any(at::Tensor &self, const c10::List<std::optional<at::Tensor>> &indices,
		   const at::Tensor &values, bool accumulate)
{
	if (values.scalar_type() != self.scalar_type() || self.dim() == 0 ||
	    (!values.device().is_privateuseone() && !is_cpu_scalar(values)))
		return false;
	std::vector<at::Tensor> idx;
	if (!per_dim_indices(self, indices, idx))
		return false;
	std::vector<int64_t> dims; // the indexed dims
	std::vector<at::Tensor> used;
	for (size_t d = 0; d < idx.size(); d++)
		if (idx[d].defined()) {
			dims.push_back(int64_t(d));
			used.push_back(idx[d]);
		}
	if (dims.empty())
		return false;
	std::vector<at::Tensor> bcast;
	try {
		bcast = at::broadcast_tensors(used);
	} catch (const c10::Error &) {
		return false; // the fallback raises PyTorch's shape error
	}
	const std::vector<int64_t> B(bcast[0].sizes().begin(), bcast[0].sizes().end());
	bool adjacent = true;
	for (size_t i = 1; i < dims.size(); i++)
		adjacent = adjacent && dims[i] == dims[i - 1] + 1;
	// self[indices]'s shape: B in place of adjacent indexed dims, else first
	std::vector<int64_t> rest, rest_dims, sel;
	for (int64_t d = 0; d < self.dim(); d++)
		if (std::find(dims.begin(), dims.end(), d) == dims.end()) {
			rest.push_back(self.size(d));
			rest_dims.push_back(d);
		}
	const int64_t at_pos = adjacent ? dims[0] : 0;
	sel.assign(rest.begin(), rest.begin() + at_pos);
	sel.insert(sel.end(), B.begin(), B.end());
	sel.insert(sel.end(), rest.begin() + at_pos, rest.end());
	at::Tensor v = values.to(self.device());
	if (!at::is_expandable_to(v.sizes(), sel))
		return false;
	c10::DeviceGuard guard(self.device());
	int64_t K = 1, N = 1;
	for (int64_t b : B)
		K *= b;
	for (int64_t d : dims)
		N *= self.size(d);
	// each selected element's number over the indexed dims, row-major
	at::Tensor lin;
	int64_t scale = 1;
	for (size_t i = dims.size(); i-- > 0;) {
		const int64_t n = self.size(dims[i]);
		at::Tensor ix = bcast[i].reshape({ -1 });
		if (ix.numel()) {
			const int64_t lo = ix.min().item<int64_t>(), hi = ix.max().item<int64_t>();
			TORCH_CHECK_INDEX(lo >= -n && hi < n, "index ", lo < -n ? lo : hi,
					  " is out of bounds for dimension ", dims[i], " with size ", n);
		}
		ix = at::where(ix.lt(0), ix + n, ix);
		lin = lin.defined() ? lin + ix * scale : ix * scale;
		scale *= n;
	}
	if (K == 0 || self.numel() == 0)
		return true;
	// values as [K, rest...]: B's dims first
	at::Tensor vv = v.expand(sel);
	if (at_pos > 0) {
		std::vector<int64_t> perm;
		for (int64_t i = 0; i < int64_t(B.size()); i++)
			perm.push_back(at_pos + i);
		for (int64_t i = 0; i < at_pos; i++)
			perm.push_back(i);
		for (int64_t i = at_pos + int64_t(B.size()); i < int64_t(sel.size()); i++)
			perm.push_back(i);
		vv = vv.permute(perm);
	}
	std::vector<int64_t> flat_shape{ K };
	flat_shape.insert(flat_shape.end(), rest.begin(), rest.end());
	vv = vv.reshape(flat_shape);
	// self with the indexed dims first, flattened into one of N rows
	std::vector<int64_t> perm(dims.begin(), dims.end());
	perm.insert(perm.end(), rest_dims.begin(), rest_dims.end());
	at::Tensor moved = self.permute(perm);
	flat_shape[0] = N;
	at::Tensor work = moved.contiguous().view(flat_shape);
	if (accumulate)
		work.index_add_(0, lin, vv);
	else
		work.index_copy_(0, lin, vv);
	moved.copy_(work.view(moved.sizes()));
	return true;
}

namespace {

// self.masked_scatter_(mask, source): the k-th true element of mask (in
// row-major order) takes source's k-th element. As a read: each element's
// rank among the true ones (a cumsum of the mask) picks its source
// element, a where keeps the others. One synchronisation, for the count.
at::Tensor &masked_scatter_k_(at::Tensor &self, const at::Tensor &mask, const at::Tensor &source)
{
	const bool ok = mask.scalar_type() == at::kBool && mask.device() == self.device() &&
			source.device() == self.device() &&
			source.scalar_type() == self.scalar_type() &&
			at::is_expandable_to(mask.sizes(), self.sizes());
	if (!ok)
		return SPYRE_FALLBACK(masked_scatter_, self, mask, source);
	c10::DeviceGuard guard(self.device());
	count_device_op("masked_scatter_");
	if (self.numel() == 0)
		return self;
	at::Tensor m = mask.expand(self.sizes()).reshape({ -1 });
	at::Tensor rank = at::cumsum(m, 0); // int64: 1 for the first true element
	const int64_t ones = rank[-1].item<int64_t>();
	TORCH_CHECK(source.numel() >= ones, "Number of elements of source < number of ones in mask");
	if (ones == 0)
		return self;
	at::Tensor pick = at::clamp_min(rank - 1, 0);
	at::Tensor from = source.reshape({ -1 }).index_select(0, pick);
	self.copy_(at::where(m, from, self.reshape({ -1 })).view(self.sizes()));
	return self;
}

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	m.impl("masked_scatter_", masked_scatter_k_);
}

} // namespace torch_spyre
