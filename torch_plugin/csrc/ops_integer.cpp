// SPDX-License-Identifier: MIT
#include "ops_integer.h"

#include "kernels.h"
#include "op_tensor.h"

#include <ATen/ATen.h>

#include <string>
#include <unordered_set>
#include <vector>

namespace torch_spyre {
namespace {

// Ops whose integer result is their float result rounded back: arithmetic
// without division, comparisons, selections, sums and extrema.
const std::unordered_set<std::string> &integer_ops()
{
	static const std::unordered_set<std::string> ops = [] {
		std::unordered_set<std::string> s;
		for (const char *op : { "add", "sub", "mul" })
			for (const char *ov : { ".Tensor", ".Scalar", ".out", "_.Tensor", "_.Scalar" })
				s.insert(std::string("aten::") + op + ov);
		s.insert({ "aten::rsub.Tensor", "aten::rsub.Scalar" });
		for (const char *op : { "eq", "ne", "lt", "le", "gt", "ge" })
			for (const char *ov : { ".Tensor", ".Scalar", ".Tensor_out", ".Scalar_out" })
				s.insert(std::string("aten::") + op + ov);
		s.insert({ "aten::maximum", "aten::maximum.out", "aten::minimum", "aten::minimum.out",
			   "aten::neg", "aten::neg.out", "aten::abs", "aten::abs.out",
			   "aten::clamp", "aten::clamp.out", "aten::clamp_",
			   "aten::where.self", "aten::where.self_out",
			   "aten::masked_fill.Scalar", "aten::masked_fill_.Scalar",
			   "aten::masked_fill.Tensor", "aten::masked_fill_.Tensor",
			   "aten::sum", "aten::sum.dim_IntList", "aten::sum.IntList_out",
			   "aten::cumsum", "aten::cumsum.out", "aten::cumsum_",
			   "aten::max", "aten::min", "aten::max.dim", "aten::min.dim",
			   "aten::amax", "aten::amax.out", "aten::amin", "aten::amin.out",
			   "aten::argmax", "aten::argmax.out" });
		return s;
	}();
	return ops;
}

bool on_spyre(const at::Tensor &t)
{
	return t.defined() && t.device().type() == c10::DeviceType::PrivateUse1;
}

// int32, int64 and bool. Narrow integers (int8, uint8, int16) stay with the
// fallback: their arithmetic wraps around within the 2^24 range, which a
// rounding fp32 unit does not reproduce.
bool integer_like(const at::Tensor &t)
{
	auto dt = t.scalar_type();
	return on_spyre(t) && (dt == at::kInt || dt == at::kLong || dt == at::kBool);
}

// Arguments that are masks keep their bool dtype: the float kernels take them so.
bool is_mask_argument(const c10::Argument &a)
{
	return a.name() == "mask" || a.name() == "condition";
}

at::Tensor meta_like(const at::Tensor &t)
{
	return at::empty_strided(t.sizes(), t.strides(), t.options().device(c10::kMeta));
}

} // namespace

bool integer_op_on_card(const c10::OperatorHandle &op, torch::jit::Stack *stack)
{
	const auto &schema = op.schema();
	std::string name = schema.operator_name().name; // "aten::add"
	if (!schema.operator_name().overload_name.empty())
		name += "." + schema.operator_name().overload_name;
	if (!integer_ops().count(name))
		return false;

	const auto &args = schema.arguments();
	size_t nargs = args.size(), base = stack->size() - nargs;
	bool any_integer = false;
	for (size_t i = 0; i < nargs; i++) {
		const auto &v = (*stack)[base + i];
		if (!v.isTensor())
			continue;
		const at::Tensor &t = v.toTensor();
		if (t.defined() && !on_spyre(t) && !(t.device().is_cpu() && t.dim() == 0))
			return false; // mixed devices: the fallback reports them
		if (integer_like(t) && !is_mask_argument(args[i]))
			any_integer = true;
	}
	if (!any_integer)
		return false;

	// the dtypes PyTorch gives the results, from the op's meta kernel
	torch::jit::Stack meta(stack->begin() + static_cast<std::ptrdiff_t>(base), stack->end());
	for (auto &v : meta)
		if (v.isTensor() && on_spyre(v.toTensor()))
			v = meta_like(v.toTensor());
	try {
		op.callBoxed(&meta);
	} catch (const c10::Error &) {
		return false; // not expressible here: the fallback decides
	}

	// the same call on fp32 copies made on the card; written arguments
	// (in-place self, out=) get fp32 stand-ins copied back afterwards
	torch::jit::Stack call(stack->begin() + static_cast<std::ptrdiff_t>(base), stack->end());
	std::vector<std::pair<at::Tensor, at::Tensor>> written; // (original, stand-in)
	for (size_t i = 0; i < nargs; i++) {
		auto &v = call[i];
		if (!v.isTensor() || !integer_like(v.toTensor()) || is_mask_argument(args[i]))
			continue;
		const at::Tensor &t = v.toTensor();
		const auto *alias = args[i].alias_info();
		at::Tensor f = card_cast(t, at::kFloat);
		if (alias && alias->isWrite()) {
			if (f.is_same(t))
				f = f.clone();
			written.emplace_back(t, f);
		}
		v = f;
	}
	op.callBoxed(&call);
	count_device_op(name.c_str());

	for (auto &w : written) {
		if (!w.first.sizes().equals(w.second.sizes()))
			w.first.resize_(w.second.sizes());
		card_copy(w.second, w.first);
	}
	torch::jit::drop(*stack, nargs);
	const auto &rets = schema.returns();
	for (size_t j = 0; j < call.size(); j++) {
		auto &r = call[j];
		if (r.isTensor() && j < meta.size() && meta[j].isTensor()) {
			const auto *alias = j < rets.size() ? rets[j].alias_info() : nullptr;
			at::Tensor t = r.toTensor();
			if (alias && alias->isWrite()) {
				for (auto &w : written)
					if (w.second.is_same(t))
						t = w.first;
			} else if (t.scalar_type() != meta[j].toTensor().scalar_type()) {
				t = card_cast(t, meta[j].toTensor().scalar_type());
			}
			r = t;
		}
		stack->push_back(r);
	}
	return true;
}

// ---- any, all, isin and bool bitwise ops (composed from card kernels) -------

namespace {

// any/all over @dims (all dims when empty): the extreme of (x != 0).
at::Tensor truth_reduce(const at::Tensor &x, at::IntArrayRef dims, bool keepdim, bool all)
{
	if (x.numel() == 0) { // any() of nothing is false, all() true
		std::vector<bool> reduced(static_cast<size_t>(x.dim()), dims.empty());
		for (int64_t d : dims)
			reduced[static_cast<size_t>(c10::maybe_wrap_dim(d, x.dim()))] = true;
		std::vector<int64_t> shape;
		for (int64_t d = 0; d < x.dim(); d++)
			if (!reduced[static_cast<size_t>(d)])
				shape.push_back(x.size(d));
			else if (keepdim)
				shape.push_back(1);
		return at::full(shape, all, x.options().dtype(at::kBool));
	}
	at::Tensor t = at::ne(x, 0).to(at::kFloat);
	t = all ? at::amin(t, dims, keepdim) : at::amax(t, dims, keepdim);
	return t.to(at::kBool);
}

std::vector<int64_t> dims_of(at::OptionalIntArrayRef dims)
{
	return dims ? dims->vec() : std::vector<int64_t>{};
}

at::Tensor &into_out(const at::Tensor &r, at::Tensor &out)
{
	TORCH_CHECK(out.scalar_type() == r.scalar_type(), "spyre: out= has dtype ",
		    out.scalar_type(), ", the result is ", r.scalar_type());
	if (!out.sizes().equals(r.sizes()))
		out.resize_(r.sizes());
	out.copy_(r);
	return out;
}

#define TRUTH_REDUCTION(op, is_all)                                                          \
	at::Tensor op##_k(const at::Tensor &x)                                               \
	{                                                                                    \
		return truth_reduce(x, {}, false, is_all);                                   \
	}                                                                                    \
	at::Tensor op##_dim_k(const at::Tensor &x, int64_t dim, bool keepdim)                \
	{                                                                                    \
		return truth_reduce(x, dim, keepdim, is_all);                                \
	}                                                                                    \
	at::Tensor op##_dims_k(const at::Tensor &x, at::OptionalIntArrayRef dims, bool keepdim) \
	{                                                                                    \
		return truth_reduce(x, dims_of(dims), keepdim, is_all);                      \
	}                                                                                    \
	at::Tensor &op##_out_k(const at::Tensor &x, int64_t dim, bool keepdim, at::Tensor &out) \
	{                                                                                    \
		return into_out(truth_reduce(x, dim, keepdim, is_all), out);                 \
	}                                                                                    \
	at::Tensor &op##_dims_out_k(const at::Tensor &x, at::OptionalIntArrayRef dims,       \
				    bool keepdim, at::Tensor &out)                           \
	{                                                                                    \
		return into_out(truth_reduce(x, dims_of(dims), keepdim, is_all), out);       \
	}                                                                                    \
	at::Tensor &op##_all_out_k(const at::Tensor &x, at::Tensor &out)                    \
	{                                                                                    \
		return into_out(truth_reduce(x, {}, false, is_all), out);                    \
	}

TRUTH_REDUCTION(any, false)
TRUTH_REDUCTION(all, true)

// Each element compared with every test element, then any over the tests.
at::Tensor isin_k(const at::Tensor &elements, const at::Tensor &test, bool assume_unique,
		  bool invert)
{
	(void)assume_unique;
	at::Tensor hit = truth_reduce(at::eq(elements.reshape({-1, 1}), test.reshape({1, -1})),
				      -1, false, false)
				 .reshape(elements.sizes());
	return invert ? at::logical_not(hit) : hit;
}

at::Tensor &isin_out_k(const at::Tensor &elements, const at::Tensor &test, bool assume_unique,
		       bool invert, at::Tensor &out)
{
	return into_out(isin_k(elements, test, assume_unique, invert), out);
}

// On bool tensors the bitwise ops are the logical ones. An integer tensor
// with a bool one (HF generate's `unfinished & ~done`) needs only the
// integer's lowest bit: parity(x) = x - 2 floor(x / 2), with floor(y) for a
// half-integer y computed as round-to-nearest(y - 1/4) through fp32's
// 1.5 * 2^23 trick, exact for |x| < 2^22. Other integer pairs go to the
// fallback: the card has no bitwise integer function.
enum class BitOp { And, Or, Xor };

bool bool_and_integer(const at::Tensor &a, const at::Tensor &b)
{
	auto i = [](const at::Tensor &t) {
		return at::isIntegralType(t.scalar_type(), false) && t.dim() <= SPYRE_MAX_DIMS;
	};
	return (a.scalar_type() == at::kBool && i(b)) || (b.scalar_type() == at::kBool && i(a));
}

at::Tensor parity(const at::Tensor &xf)
{
	constexpr double magic = 12582912.0; // 1.5 * 2^23: adding it rounds to an integer
	at::Tensor half = xf.mul(0.5).sub(0.25);
	at::Tensor fl = half.add(magic).sub(magic);
	return xf.sub(fl.mul(2.0));
}

at::Tensor bitwise_run(BitOp op, const at::Tensor &a, const at::Tensor &b)
{
	if (a.scalar_type() == at::kBool && b.scalar_type() == at::kBool) {
		switch (op) {
		case BitOp::And:
			return at::logical_and(a, b);
		case BitOp::Or:
			return at::logical_or(a, b);
		default:
			return at::ne(a, b);
		}
	}
	const at::Tensor &x = a.scalar_type() == at::kBool ? b : a;
	const at::Tensor &m = a.scalar_type() == at::kBool ? a : b;
	at::Tensor xf = card_cast(x, at::kFloat), mf = card_cast(m, at::kFloat);
	at::Tensor r;
	switch (op) {
	case BitOp::And: // x & m = parity(x) m
		r = parity(xf).mul(mf);
		break;
	case BitOp::Or: // x | m = x + m (1 - parity(x))
		r = xf.add(mf.mul(parity(xf).neg().add(1.0)));
		break;
	default: // x ^ m = x + m (1 - 2 parity(x))
		r = xf.add(mf.mul(parity(xf).mul(-2.0).add(1.0)));
		break;
	}
	return card_cast(r, at::result_type(a, b));
}

bool bitwise_ok(const at::Tensor &a, const at::Tensor &b)
{
	return a.device() == b.device() &&
	       ((a.scalar_type() == at::kBool && b.scalar_type() == at::kBool) ||
		bool_and_integer(a, b));
}

#define BITWISE(op, kind)                                                                    \
	at::Tensor op##_k(const at::Tensor &a, const at::Tensor &b)                          \
	{                                                                                    \
		if (!bitwise_ok(a, b))                                                       \
			return SPYRE_FALLBACK(op##_Tensor, a, b);                           \
		count_device_op(#op);                                                        \
		return bitwise_run(kind, a, b);                                              \
	}                                                                                    \
	at::Tensor &op##_out_k(const at::Tensor &a, const at::Tensor &b, at::Tensor &out)    \
	{                                                                                    \
		if (!bitwise_ok(a, b) || out.scalar_type() != at::result_type(a, b))         \
			return SPYRE_FALLBACK(op##_Tensor_out, a, b, out);                  \
		count_device_op(#op);                                                        \
		return into_out(bitwise_run(kind, a, b), out);                               \
	}

BITWISE(bitwise_and, BitOp::And)
BITWISE(bitwise_or, BitOp::Or)
BITWISE(bitwise_xor, BitOp::Xor)

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	m.impl("any", any_k);
	m.impl("any.dim", any_dim_k);
	m.impl("any.dims", any_dims_k);
	m.impl("any.out", any_out_k);
	m.impl("any.dims_out", any_dims_out_k);
	m.impl("any.all_out", any_all_out_k);
	m.impl("all", all_k);
	m.impl("all.dim", all_dim_k);
	m.impl("all.dims", all_dims_k);
	m.impl("all.out", all_out_k);
	m.impl("all.dims_out", all_dims_out_k);
	m.impl("all.all_out", all_all_out_k);
	m.impl("isin.Tensor_Tensor", isin_k);
	m.impl("isin.Tensor_Tensor_out", isin_out_k);
	m.impl("bitwise_and.Tensor", bitwise_and_k);
	m.impl("bitwise_and.Tensor_out", bitwise_and_out_k);
	m.impl("bitwise_or.Tensor", bitwise_or_k);
	m.impl("bitwise_or.Tensor_out", bitwise_or_out_k);
	m.impl("bitwise_xor.Tensor", bitwise_xor_k);
	m.impl("bitwise_xor.Tensor_out", bitwise_xor_out_k);
}

} // namespace torch_spyre
