// SPDX-License-Identifier: MIT
//
// Device kernels of the network ops: mm, bmm, addmm, baddbmm (what Linear
// and matmul decompose into), native_layer_norm, scaled dot-product
// attention (the "overrideable" fused backend PyTorch offers PrivateUse1)
// and nn.TransformerEncoderLayer's fast path, each a few op library calls
// (libspyre's spyre/ops.h) on the current stream.
#include "op_tensor.h"
#include "ops_long_rows.h"

#include <ATen/ATen.h>
#include <ATen/native/Resize.h>
#include <ATen/native/transformers/attention.h>
#include <ATen/native/transformers/sdp_utils_cpp.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace torch_spyre {
namespace {

bool is_float(at::ScalarType t)
{
	return t == at::kFloat || t == at::kHalf || t == at::kBFloat16;
}

void check_same_device(const char *op, const at::Tensor &a, const at::Tensor &b)
{
	TORCH_CHECK(a.device() == b.device(),
		    "Expected all tensors to be on the same device, but found at least two "
		    "devices, ",
		    a.device(), " and ", b.device(), "! (when checking arguments for ", op, ")");
}

void check_mm_operands(const char *op, const at::Tensor &a, const at::Tensor &b)
{
	check_same_device(op, a, b);
	TORCH_CHECK(a.scalar_type() == b.scalar_type(), "expected m1 and m2 to have the same dtype, "
							"but got: ",
		    a.scalar_type(), " != ", b.scalar_type());
	TORCH_CHECK_NOT_IMPLEMENTED(is_float(a.scalar_type()), "spyre: ", op,
				    ": the card multiplies float32/float16/bfloat16 matrices, not ",
				    a.scalar_type());
}

// @t with its last two dimensions swapped (a view: no data moves).
spyre_tensor transposed(spyre_tensor t)
{
	unsigned int i = t.ndim - 2, j = t.ndim - 1;
	std::swap(t.shape[i], t.shape[j]);
	std::swap(t.strides[i], t.strides[j]);
	return t;
}

// out = a @ b (batch dims broadcast); an empty inner dimension gives zeros.
void matmul_into(const char *op, const at::Tensor &a, const at::Tensor &b, const at::Tensor &out)
{
	if (out.numel() == 0)
		return;
	if (a.size(-1) == 0) {
		out.zero_();
		return;
	}
	spyre_tensor da = describe(a), db = describe(b), dout = describe(out);
	check_op(spyre_op_matmul(ops_context(out.device().index()), launch_stream(out), &da, &db,
				 &dout),
		 op);
	count_device_op(op);
}

at::Tensor scalar_op(const char *op, spyre_binary_op kind, const at::Tensor &x, double s)
{
	auto out = at::empty_like(x, at::MemoryFormat::Contiguous);
	if (x.numel() == 0)
		return out;
	spyre_tensor dx = describe(x), dout = describe(out);
	check_op(spyre_op_binary_scalar(ops_context(x.device().index()), launch_stream(x), kind, &dx,
					s, 0, &dout),
		 op);
	return out;
}

// out = a + b, b broadcast to a's shape and cast to a's dtype.
at::Tensor add_into_new(const char *op, const at::Tensor &a, at::Tensor b)
{
	if (b.scalar_type() != a.scalar_type()) {
		auto cast = at::empty(b.sizes(), b.options().dtype(a.scalar_type()));
		if (b.numel()) {
			spyre_tensor ds = describe(b), dc = describe(cast);
			check_op(spyre_op_copy(ops_context(b.device().index()), launch_stream(b), &ds,
					       &dc),
				 op);
		}
		b = cast;
	}
	auto out = at::empty(a.sizes(), a.options());
	if (a.numel() == 0)
		return out;
	b = b.expand(a.sizes());
	spyre_tensor da = describe(a), db = describe(b), dout = describe(out);
	check_op(spyre_op_binary(ops_context(a.device().index()), launch_stream(a), SPYRE_BIN_ADD,
				 &da, &db, &dout),
		 op);
	return out;
}

void check_scalar_add(const char *op, const at::Tensor &self, const at::Tensor &m1)
{
	check_same_device(op, self, m1);
	TORCH_CHECK(is_float(self.scalar_type()) || self.scalar_type() == m1.scalar_type(),
		    op, ": self has dtype ", self.scalar_type(), " but the matrices ",
		    m1.scalar_type());
}

// beta * self + alpha * prod, where prod is the matrix product just computed.
at::Tensor scale_and_add(const char *op, const at::Tensor &prod, const at::Tensor &self,
			 const at::Scalar &beta, const at::Scalar &alpha)
{
	at::Tensor r = prod;
	double a = alpha.toDouble(), b = beta.toDouble();
	if (a != 1)
		r = scalar_op(op, SPYRE_BIN_MUL, r, a);
	if (b == 0) // PyTorch ignores self then (NaN in it does not propagate)
		return r;
	at::Tensor s = self;
	if (b != 1)
		s = scalar_op(op, SPYRE_BIN_MUL, self.expand(prod.sizes()), b);
	return add_into_new(op, r, s);
}

at::Tensor spyre_mm(const at::Tensor &self, const at::Tensor &mat2)
{
	TORCH_CHECK(self.dim() == 2, "self must be a matrix");
	TORCH_CHECK(mat2.dim() == 2, "mat2 must be a matrix");
	TORCH_CHECK(self.size(1) == mat2.size(0), "mat1 and mat2 shapes cannot be multiplied (",
		    self.size(0), "x", self.size(1), " and ", mat2.size(0), "x", mat2.size(1), ")");
	check_mm_operands("mm", self, mat2);
	c10::DeviceGuard guard(self.device());
	auto out = at::empty({self.size(0), mat2.size(1)}, self.options());
	matmul_into("mm", self, mat2, out);
	return out;
}

// torch._int_mm: int8 [M, K] @ int8 [K, N] -> int32, exact (the PE array's
// int8 mode accumulates into int32; K * 128 * 128 stays below 2^31 for any
// K under 2^17, past that it wraps modulo 2^32 as CUDA's).
void int_mm_into(const at::Tensor &self, const at::Tensor &mat2, const at::Tensor &out)
{
	TORCH_CHECK(self.dim() == 2, "Expected self to be 2D, but got ", self.dim(), "D");
	TORCH_CHECK(mat2.dim() == 2, "Expected mat2 to be 2D, but got ", mat2.dim(), "D");
	TORCH_CHECK(self.size(1) == mat2.size(0), "self.size(1) needs to match mat2.size(0) but got ",
		    self.size(1), " and ", mat2.size(0));
	TORCH_CHECK(self.scalar_type() == at::kChar, "Expected self dtype int8 but got ",
		    self.scalar_type());
	TORCH_CHECK(mat2.scalar_type() == at::kChar, "Expected mat2 dtype int8 but got ",
		    mat2.scalar_type());
	TORCH_CHECK(out.scalar_type() == at::kInt, "Expected result dtype int32 but got ",
		    out.scalar_type());
	check_same_device("_int_mm", self, mat2);
	if (out.numel() == 0)
		return;
	if (self.size(1) == 0) {
		out.zero_();
		return;
	}
	spyre_tensor da = describe(self), db = describe(mat2), dout = describe(out);
	check_op(spyre_op_matmul(ops_context(out.device().index()), launch_stream(out), &da, &db,
				 &dout),
		 "_int_mm");
	count_device_op("_int_mm");
}

at::Tensor spyre_int_mm(const at::Tensor &self, const at::Tensor &mat2)
{
	c10::DeviceGuard guard(self.device());
	auto out = at::empty({self.size(0), mat2.dim() == 2 ? mat2.size(1) : 0},
			     self.options().dtype(at::kInt));
	int_mm_into(self, mat2, out);
	return out;
}

at::Tensor &spyre_int_mm_out(const at::Tensor &self, const at::Tensor &mat2, at::Tensor &out)
{
	c10::DeviceGuard guard(self.device());
	at::native::resize_output(out, {self.size(0), mat2.dim() == 2 ? mat2.size(1) : 0});
	int_mm_into(self, mat2, out);
	return out;
}

at::Tensor spyre_bmm(const at::Tensor &self, const at::Tensor &mat2)
{
	TORCH_CHECK(self.dim() == 3, "batch1 must be a 3D tensor");
	TORCH_CHECK(mat2.dim() == 3, "batch2 must be a 3D tensor");
	TORCH_CHECK(self.size(0) == mat2.size(0) && self.size(2) == mat2.size(1),
		    "Expected size for first two dimensions of batch2 tensor to be: [",
		    self.size(0), ", ", self.size(2), "] but got: [", mat2.size(0), ", ",
		    mat2.size(1), "].");
	check_mm_operands("bmm", self, mat2);
	c10::DeviceGuard guard(self.device());
	auto out = at::empty({self.size(0), self.size(1), mat2.size(2)}, self.options());
	matmul_into("bmm", self, mat2, out);
	return out;
}

// Matrix-vector and vector-vector products (torch.matmul's 1-D cases) as
// matmuls over [K, 1] / [1, K] views of the vectors.
at::Tensor spyre_mv(const at::Tensor &self, const at::Tensor &vec)
{
	TORCH_CHECK(self.dim() == 2 && vec.dim() == 1,
		    "vector + matrix @ vector expected, got ", self.dim(), ", ", vec.dim());
	TORCH_CHECK(self.size(1) == vec.size(0), "size mismatch, got input (", self.size(0),
		    "), mat (", self.size(0), "x", self.size(1), "), vec (", vec.size(0), ")");
	check_mm_operands("mv", self, vec);
	c10::DeviceGuard guard(self.device());
	auto out = at::empty({self.size(0)}, self.options());
	matmul_into("mv", self, vec.unsqueeze(1), out.unsqueeze(1));
	return out;
}

at::Tensor spyre_dot(const at::Tensor &self, const at::Tensor &other)
{
	TORCH_CHECK(self.dim() == 1 && other.dim() == 1,
		    "1D tensors expected, but got ", self.dim(), "D and ", other.dim(),
		    "D tensors");
	TORCH_CHECK(self.size(0) == other.size(0),
		    "inconsistent tensor size, expected tensor [", self.size(0),
		    "] and src [", other.size(0),
		    "] to have the same number of elements, but got ", self.size(0), " and ",
		    other.size(0), " elements respectively");
	TORCH_CHECK(self.scalar_type() == other.scalar_type(),
		    "dot : expected both vectors to have same dtype, but found ",
		    self.scalar_type(), " and ", other.scalar_type());
	check_mm_operands("dot", self, other);
	c10::DeviceGuard guard(self.device());
	auto out = at::empty({}, self.options());
	matmul_into("dot", self.unsqueeze(0), other.unsqueeze(1), out.view({1, 1}));
	return out;
}

at::Tensor spyre_addmm(const at::Tensor &self, const at::Tensor &mat1, const at::Tensor &mat2,
		 const at::Scalar &beta, const at::Scalar &alpha)
{
	TORCH_CHECK(mat1.dim() == 2 && mat2.dim() == 2, "addmm: matrices expected, got ",
		    mat1.dim(), "D, ", mat2.dim(), "D tensors");
	check_scalar_add("addmm", self, mat1);
	int64_t m = mat1.size(0), n = mat2.size(1);
	TORCH_CHECK(self.dim() <= 2 && at::is_expandable_to(self.sizes(), {m, n}),
		    "The expanded size of self ", self.sizes(), " must match the product [", m,
		    ", ", n, "]");
	c10::DeviceGuard guard(mat1.device());
	// Linear's case: one op library call, the weight read through its
	// transposed view (mat2 is weight.t(), so mat2^T is the weight as stored).
	if (beta.toDouble() == 1 && alpha.toDouble() == 1 && self.dim() == 1 &&
	    self.size(0) == n && self.scalar_type() == mat1.scalar_type() &&
	    mat1.size(1) == mat2.size(0) && mat1.size(1) > 0) {
		check_mm_operands("addmm", mat1, mat2);
		auto out = at::empty({m, n}, mat1.options());
		if (out.numel() == 0)
			return out;
		spyre_tensor dx = describe(mat1), dw = transposed(describe(mat2)),
			     db = describe(self), dout = describe(out);
		check_op(spyre_op_linear(ops_context(out.device().index()), launch_stream(out), &dx,
					 &dw, &db, &dout),
			 "addmm");
		count_device_op("addmm");
		return out;
	}
	return scale_and_add("addmm", spyre_mm(mat1, mat2), self, beta, alpha);
}

at::Tensor spyre_baddbmm(const at::Tensor &self, const at::Tensor &b1, const at::Tensor &b2,
		   const at::Scalar &beta, const at::Scalar &alpha)
{
	check_scalar_add("baddbmm", self, b1);
	auto prod = spyre_bmm(b1, b2);
	TORCH_CHECK(at::is_expandable_to(self.sizes(), prod.sizes()), "The expanded size of self ",
		    self.sizes(), " must match the product ", prod.sizes());
	c10::DeviceGuard guard(b1.device());
	return scale_and_add("baddbmm", prod, self, beta, alpha);
}

// The out= variants: compute, then resize and copy into @out (a device copy).
at::Tensor &into(at::Tensor &out, const at::Tensor &r)
{
	TORCH_CHECK(out.scalar_type() == r.scalar_type(), "Expected out tensor to have dtype ",
		    r.scalar_type(), ", but got ", out.scalar_type(), " instead");
	at::native::resize_output(out, r.sizes());
	out.copy_(r);
	return out;
}

at::Tensor &mm_out(const at::Tensor &self, const at::Tensor &mat2, at::Tensor &out)
{
	return into(out, spyre_mm(self, mat2));
}

at::Tensor &bmm_out(const at::Tensor &self, const at::Tensor &mat2, at::Tensor &out)
{
	return into(out, spyre_bmm(self, mat2));
}

at::Tensor &addmm_out(const at::Tensor &self, const at::Tensor &mat1, const at::Tensor &mat2,
		      const at::Scalar &beta, const at::Scalar &alpha, at::Tensor &out)
{
	return into(out, spyre_addmm(self, mat1, mat2, beta, alpha));
}

at::Tensor &baddbmm_out(const at::Tensor &self, const at::Tensor &b1, const at::Tensor &b2,
			const at::Scalar &beta, const at::Scalar &alpha, at::Tensor &out)
{
	return into(out, spyre_baddbmm(self, b1, b2, beta, alpha));
}

at::Tensor param_as(const at::Tensor &p, int64_t n, at::ScalarType dt)
{
	TORCH_CHECK(p.numel() == n, "native_layer_norm: weight/bias has ", p.numel(),
		    " elements, expected ", n);
	at::Tensor flat = p.reshape({n});
	if (flat.scalar_type() == dt)
		return flat;
	auto cast = at::empty({n}, p.options().dtype(dt));
	spyre_tensor ds = describe(flat), dc = describe(cast);
	check_op(spyre_op_copy(ops_context(p.device().index()), launch_stream(p), &ds, &dc),
		 "native_layer_norm");
	return cast;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor>
native_layer_norm(const at::Tensor &input, c10::IntArrayRef normalized_shape,
		  const std::optional<at::Tensor> &weight_opt,
		  const std::optional<at::Tensor> &bias_opt, double eps)
{
	int64_t nd = normalized_shape.size(), axis = input.dim() - nd;
	TORCH_CHECK(nd >= 1 && axis >= 0 &&
			    input.sizes().slice(axis).equals(normalized_shape),
		    "Given normalized_shape=", normalized_shape,
		    ", expected input with shape [*, ...] ending in it, but got input of size",
		    input.sizes());
	TORCH_CHECK_NOT_IMPLEMENTED(is_float(input.scalar_type()),
				    "spyre: native_layer_norm of ", input.scalar_type());
	c10::DeviceGuard guard(input.device());
	int64_t m = c10::multiply_integers(input.sizes().slice(0, axis));
	int64_t n = c10::multiply_integers(normalized_shape);
	std::vector<int64_t> stat_shape(input.sizes().slice(0, axis).begin(),
					input.sizes().slice(0, axis).end());
	stat_shape.resize(input.dim(), 1);
	auto out = at::empty(input.sizes(), input.options());
	if (m == 0 || n == 0) {
		auto mean = at::empty(stat_shape, input.options());
		auto rstd = at::empty(stat_shape, input.options());
		if (m)
			mean.fill_(std::numeric_limits<double>::quiet_NaN()),
				rstd.fill_(std::numeric_limits<double>::quiet_NaN());
		return {out, mean, rstd};
	}
	auto x = input.reshape({m, n});
	auto dt = input.scalar_type();
	at::Tensor w, b;
	if (weight_opt && weight_opt->defined()) {
		check_same_device("native_layer_norm", input, *weight_opt);
		w = param_as(*weight_opt, n, dt);
	}
	if (bias_opt && bias_opt->defined()) {
		check_same_device("native_layer_norm", input, *bias_opt);
		b = param_as(*bias_opt, n, dt);
	}
	if (long_norm_row(n)) { // composed, in passes (ops_long_rows.cpp)
		auto mean = at::empty({m, 1}, input.options());
		auto rstd = at::empty({m, 1}, input.options());
		long_layer_norm(x, w, b, eps, out.view({m, n}), mean, rstd);
		count_device_op("native_layer_norm");
		return {out, mean.view(stat_shape), rstd.view(stat_shape)};
	}
	spyre_tensor dx = describe(x), dout = describe(out.view({m, n}));
	spyre_tensor dw, db;
	if (w.defined())
		dw = describe(w);
	if (b.defined())
		db = describe(b);
	// with each row's mean and 1/sqrt(var + eps) (biased variance), as
	// autograd expects them: one launch for the three
	auto mean = at::empty({m, 1}, input.options());
	auto rstd = at::empty({m, 1}, input.options());
	spyre_tensor dm = describe(mean), drs = describe(rstd);
	check_op(spyre_op_layer_norm_stats(ops_context(input.device().index()),
					   launch_stream(input), &dx,
					   w.defined() ? &dw : nullptr, b.defined() ? &db : nullptr,
					   eps, &dout, &dm, &drs),
		 "native_layer_norm");
	count_device_op("native_layer_norm");
	return {out, mean.view(stat_shape), rstd.view(stat_shape)};
}

// ---- scaled dot-product attention ------------------------------------------

} // namespace

namespace {

// Grouped-query heads: q [.., H, Lq, D] with k and v [.., Hkv, Lk, D], H a
// multiple of Hkv (what enable_gqa allows). Symbolic sizes: under
// torch.compile the tensors are fake, and size() would specialise every
// dim (the KV cache's length too), sym_size() only the heads.
bool grouped_heads(const at::Tensor &q, const at::Tensor &k, const at::Tensor &v)
{
	if (q.dim() < 3 || k.dim() < 3 || v.dim() < 3)
		return false;
	auto h = q.sym_size(-3), hkv = k.sym_size(-3);
	return hkv > 0 && v.sym_size(-3) == hkv && h != hkv && h % hkv == 0;
}

} // namespace

// PyTorch asks each backend which fused kernel to use. Ours composes the op
// library's matmul, softmax and masking, grouped-query heads included;
// dropout stays on the math path (which decomposes into ops of their own).
int64_t sdp_choice(const at::Tensor &q, const at::Tensor &k, const at::Tensor &v,
		   const std::optional<at::Tensor> &mask, double dropout_p, bool is_causal,
		   std::optional<double> scale, bool enable_gqa)
{
	bool fits = dropout_p == 0 && q.dim() >= 2 && k.dim() >= 2 && v.dim() >= 2 &&
		    q.dim() <= 4 && k.dim() <= 4 && v.dim() <= 4 && is_float(q.scalar_type()) &&
		    k.scalar_type() == q.scalar_type() && v.scalar_type() == q.scalar_type() &&
		    (q.dim() < 3 || k.dim() < 3 || q.sym_size(-3) == k.sym_size(-3) ||
		     // grouped heads only with enable_gqa (else the math path
		     // raises PyTorch's error); one key head broadcasts anyway
		     (enable_gqa ? grouped_heads(q, k, v) :
				   !grouped_heads(q, k, v) || k.sym_size(-3) == 1));
	return int64_t(fits ? sdp::SDPBackend::overrideable : sdp::SDPBackend::math);
}

namespace {

using SdpaResult = std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, c10::SymInt,
			      c10::SymInt, at::Tensor, at::Tensor, at::Tensor>;

SdpaResult sdpa_compute(const at::Tensor &q_in, const at::Tensor &k_in, const at::Tensor &v_in,
			const std::optional<at::Tensor> &bias, double dropout_p, bool is_causal,
			bool return_debug_mask, std::optional<double> scale);

// The output laid out as PyTorch's meta function says (query's dim order,
// alloc_with_matching_layout in torch/_meta_registrations.py): compiled
// graphs that call this kernel (an Inductor fallback) assert those strides.
at::Tensor sdpa_layout(const at::Tensor &q, const at::Tensor &out)
{
	if (q.dim() != 4 || out.dim() != 4)
		return out;
	at::Tensor res;
	if (q.sizes() == out.sizes()) {
		res = at::empty_like(q);
	} else {
		std::array<int64_t, 4> order{ 0, 1, 2, 3 }, strides{};
		std::stable_sort(order.begin(), order.end(),
				 [&](int64_t a, int64_t b) { return q.stride(a) > q.stride(b); });
		int64_t st = 1;
		for (int i = 3; i >= 0; i--) {
			strides[order[i]] = st;
			st *= out.size(order[i]);
		}
		res = at::empty_strided(out.sizes(), strides, out.options());
	}
	if (res.strides() == out.strides())
		return out;
	return res.copy_(out);
}

SdpaResult sdpa_overrideable(const at::Tensor &q_in, const at::Tensor &k_in,
			     const at::Tensor &v_in, const std::optional<at::Tensor> &bias,
			     double dropout_p, bool is_causal, bool return_debug_mask,
			     std::optional<double> scale)
{
	auto r = sdpa_compute(q_in, k_in, v_in, bias, dropout_p, is_causal, return_debug_mask,
			      scale);
	std::get<0>(r) = sdpa_layout(q_in, std::get<0>(r));
	return r;
}

SdpaResult sdpa_compute(const at::Tensor &q_in, const at::Tensor &k_in, const at::Tensor &v_in,
			const std::optional<at::Tensor> &bias, double dropout_p, bool is_causal,
			bool return_debug_mask, std::optional<double> scale)
{
	static const char *op = "scaled_dot_product_attention";
	TORCH_CHECK_NOT_IMPLEMENTED(dropout_p == 0, "spyre: ", op, " with dropout");
	TORCH_CHECK(q_in.dim() >= 2 && k_in.dim() >= 2 && v_in.dim() >= 2, op,
		    ": query, key and value need 2+ dims");
	if (grouped_heads(q_in, k_in, v_in) && k_in.size(-3) > 1) {
		// enable_gqa (sdp_choice sends only it here): query head h reads
		// key/value head h / G, as PyTorch's repeat_interleave. q as
		// [.., Hkv, G, Lq, D], k and v as [.., Hkv, 1, Lk, D] broadcast
		// over G, the mask's heads split alike: views, no copies.
		int64_t hkv = k_in.size(-3), grp = q_in.size(-3) / hkv;
		std::optional<at::Tensor> mask;
		if (bias && bias->defined())
			mask = bias->dim() >= 3 && bias->size(-3) == q_in.size(-3) ?
				       bias->unflatten(-3, { hkv, grp }) :
				       bias->unsqueeze(-3);
		auto r = sdpa_compute(q_in.unflatten(-3, { hkv, grp }), k_in.unsqueeze(-3),
				      v_in.unsqueeze(-3), mask, dropout_p, is_causal,
				      return_debug_mask, scale);
		std::get<0>(r) = std::get<0>(r).flatten(-4, -3);
		return r;
	}
	// batch dims broadcast (as on the math path): expanded views, no copies
	auto batch = at::infer_size(q_in.sizes().slice(0, q_in.dim() - 2),
				    k_in.sizes().slice(0, k_in.dim() - 2));
	batch = at::infer_size(batch, v_in.sizes().slice(0, v_in.dim() - 2));
	auto expanded = [&](const at::Tensor &t) {
		std::vector<int64_t> shape(batch);
		shape.push_back(t.size(-2));
		shape.push_back(t.size(-1));
		return t.expand(shape);
	};
	auto q = expanded(q_in), k = expanded(k_in), v = expanded(v_in);
	TORCH_CHECK(q.size(-1) == k.size(-1) && k.size(-2) == v.size(-2), op,
		    ": query ", q.sizes(), ", key ", k.sizes(), " and value ", v.sizes(),
		    " do not fit");
	check_same_device(op, q, k);
	check_same_device(op, q, v);
	c10::DeviceGuard guard(q.device());
	auto *ops = ops_context(q.device().index());
	auto *s = launch_stream(q);
	int64_t lq = q.size(-2), lk = k.size(-2);
	std::vector<int64_t> sshape(q.sizes().begin(), q.sizes().end());
	sshape.back() = lk;
	std::vector<int64_t> oshape(sshape);
	oshape.back() = v.size(-1);
	auto out = at::empty(oshape, q.options());
	auto empty = at::empty({0}, q.options());
	auto result = [&]() {
		return std::make_tuple(out, empty, empty, empty, c10::SymInt(lq), c10::SymInt(lk),
				       empty, empty, empty);
	};
	if (out.numel() == 0)
		return result();
	if (lk == 0) {
		out.fill_(std::numeric_limits<double>::quiet_NaN());
		return result();
	}
	// one launch: scores and softmax in fp32 (half-precision scores of a
	// few hundred would lose whole units before the exponentials), the
	// probabilities rounded once to v's dtype; a bool mask keeps scores
	double sc = scale.has_value() ? *scale : 1.0 / std::sqrt(double(q.size(-1)));
	at::Tensor m;
	if (bias && bias->defined()) {
		check_same_device(op, q, *bias);
		m = bias->expand(sshape);
	}
	spyre_tensor dq = describe(q), dk = describe(k), dv = describe(v), dout = describe(out);
	spyre_tensor dm;
	if (m.defined())
		dm = describe(m);
	check_op(spyre_op_sdpa(ops, s, &dq, &dk, &dv, m.defined() ? &dm : nullptr, is_causal, sc,
			       &dout),
		 op);
	count_device_op(op);
	return result();
}

// ---- nn.TransformerEncoderLayer's inference fast path ------------------------

// The fused layer PyTorch calls for TransformerEncoderLayer in eval mode,
// composed from ops that have spyre kernels (linear, attention, layer norm,
// the activation, add).
at::Tensor transformer_encoder_layer_fwd(
	const at::Tensor &src, int64_t embed_dim, int64_t num_heads, const at::Tensor &qkv_weight,
	const at::Tensor &qkv_bias, const at::Tensor &proj_weight, const at::Tensor &proj_bias,
	bool use_gelu, bool norm_first, double eps, const at::Tensor &norm_weight_1,
	const at::Tensor &norm_bias_1, const at::Tensor &norm_weight_2,
	const at::Tensor &norm_bias_2, const at::Tensor &ffn_weight_1, const at::Tensor &ffn_bias_1,
	const at::Tensor &ffn_weight_2, const at::Tensor &ffn_bias_2,
	const std::optional<at::Tensor> &mask, std::optional<int64_t> mask_type)
{
	TORCH_CHECK(src.dim() == 3 && src.size(2) == embed_dim && embed_dim % num_heads == 0,
		    "_transformer_encoder_layer_fwd: src must be [batch, seq, ", embed_dim,
		    "], got ", src.sizes());
	int64_t bsz = src.size(0), len = src.size(1), hd = embed_dim / num_heads;
	std::optional<at::Tensor> attn_mask;
	if (mask && mask->defined()) {
		at::Tensor m = *mask;
		if (mask_type == 1) // key padding: [batch, seq]
			m = m.view({bsz, 1, 1, len});
		// nn.MultiheadAttention masks with True, sdpa keeps with True
		attn_mask = m.scalar_type() == at::kBool ? m.logical_not() : m;
	}
	auto self_attn = [&](const at::Tensor &x) {
		auto qkv = at::linear(x, qkv_weight, qkv_bias).view({bsz, len, 3, num_heads, hd});
		auto q = qkv.select(2, 0).transpose(1, 2);
		auto k = qkv.select(2, 1).transpose(1, 2);
		auto v = qkv.select(2, 2).transpose(1, 2);
		auto a = at::scaled_dot_product_attention(q, k, v, attn_mask);
		a = a.transpose(1, 2).reshape({bsz, len, embed_dim});
		return at::linear(a, proj_weight, proj_bias);
	};
	auto ffn = [&](const at::Tensor &x) {
		auto h = at::linear(x, ffn_weight_1, ffn_bias_1);
		h = use_gelu ? at::gelu(h) : at::relu(h);
		return at::linear(h, ffn_weight_2, ffn_bias_2);
	};
	auto ln = [&](const at::Tensor &x, const at::Tensor &w, const at::Tensor &b) {
		return at::layer_norm(x, {embed_dim}, w, b, eps);
	};
	at::Tensor x = src;
	if (norm_first) {
		x = x + self_attn(ln(x, norm_weight_1, norm_bias_1));
		return x + ffn(ln(x, norm_weight_2, norm_bias_2));
	}
	x = ln(x + self_attn(x), norm_weight_1, norm_bias_1);
	return ln(x + ffn(x), norm_weight_2, norm_bias_2);
}

} // namespace
} // namespace torch_spyre

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub, &torch_spyre::sdp_choice);
} // namespace at::native

namespace torch_spyre {

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	m.impl("mm", spyre_mm);
	m.impl("mm.out", mm_out);
	m.impl("_int_mm", spyre_int_mm);
	m.impl("_int_mm.out", spyre_int_mm_out);
	m.impl("bmm", spyre_bmm);
	m.impl("bmm.out", bmm_out);
	m.impl("mv", spyre_mv);
	m.impl("dot", spyre_dot);
	m.impl("addmm", spyre_addmm);
	m.impl("addmm.out", addmm_out);
	m.impl("baddbmm", spyre_baddbmm);
	m.impl("baddbmm.out", baddbmm_out);
	m.impl("native_layer_norm", native_layer_norm);
	m.impl("_fused_sdp_choice", sdp_choice);
	m.impl("_scaled_dot_product_fused_attention_overrideable", sdpa_overrideable);
	m.impl("_transformer_encoder_layer_fwd", transformer_encoder_layer_fwd);
}

} // namespace torch_spyre
