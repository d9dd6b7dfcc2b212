// SPDX-License-Identifier: MIT
//
// int8, uint8 and int16 tensors in arithmetic. The card's integer mode
// computes int32 and int64 only, so a small-integer op widens its operands
// to int32 (exact), computes there, and narrows the result back to its
// dtype by keeping the low 8 or 16 bits. Two's-complement arithmetic is
// the same modulo 2^8 or 2^16 whatever the width it runs in, so the narrowed
// result is PyTorch's wraparound bit for bit: add, sub, mul (alpha too),
// neg, abs (abs(-128) is -128 in int8), bitwise ops and shifts (a shift by 8
// or more gives 0, or the sign, in both widths), floor division and
// remainder (-128 // -1 wraps to -128 as on the CPU), sums and scans
// asked for in the small dtype. Comparisons and true division use the
// widened values as they are.
//
// The card has no uint8 or int16 element. Their bytes are read and written
// as int8 lanes: uint8 widens as int8 then keeps the low byte (x & 255);
// int16 as two lanes, low byte unsigned plus high byte shifted (little
// endian), and narrows as its two low bytes written back as lanes.
#include "kernels.h"
#include "ops_small_int.h"

#include <ATen/native/Resize.h>
#include <c10/core/DeviceGuard.h>

namespace torch_spyre {
namespace {

// @t with no stride-0 dims (a casting copy reads each element once).
at::Tensor unexpanded_bytes(const at::Tensor &t)
{
	for (int64_t d = 0; d < t.dim(); d++)
		if (t.stride(d) == 0 && t.size(d) > 1)
			return t.contiguous();
	return t;
}

} // namespace

bool small_int(at::ScalarType t)
{
	return t == at::kChar || t == at::kByte || t == at::kShort;
}

bool small_int_card(const at::Tensor &t)
{
	return t.device().is_privateuseone() && card_int(at::empty({}, t.options().dtype(at::kInt)));
}

at::Tensor small_widen(const at::Tensor &t_in)
{
	const auto dt = t_in.scalar_type();
	TORCH_INTERNAL_ASSERT(small_int(dt));
	c10::DeviceGuard guard(t_in.device());
	at::Tensor t = unexpanded_bytes(t_in);
	if (t.numel() == 0)
		return at::empty(t.sizes(), t.options().dtype(at::kInt));
	if (dt == at::kChar)
		return card_cast(t, at::kInt); // sign-extends
	const int64_t lanes = dt == at::kShort ? 2 : 1;
	std::vector<int64_t> shape(t.sizes().begin(), t.sizes().end());
	if (lanes > 1)
		shape.push_back(lanes);
	at::Tensor w = at::empty(shape, t.options().dtype(at::kInt));
	spyre_tensor bytes = lanes > 1 ? describe_lanes(t, SPYRE_INT8, lanes) : describe_as(t, SPYRE_INT8);
	run_copy(t, bytes, describe(w)); // each byte sign-extended
	if (dt == at::kByte)
		return at::bitwise_and(w, 255);
	// the low byte unsigned, the high byte keeps the sign
	return at::bitwise_or(at::bitwise_left_shift(w.select(-1, 1), 8),
			      at::bitwise_and(w.select(-1, 0), 255));
}

void small_narrow(const at::Tensor &x32, const at::Tensor &dst)
{
	const auto dt = dst.scalar_type();
	TORCH_INTERNAL_ASSERT(small_int(dt) && x32.scalar_type() == at::kInt);
	TORCH_INTERNAL_ASSERT(x32.sizes() == dst.sizes());
	if (dst.numel() == 0)
		return;
	c10::DeviceGuard guard(dst.device());
	at::Tensor lo = card_cast(x32, at::kChar); // the low byte (int32 -> int8 wraps)
	if (dt == at::kChar) {
		card_copy(lo, dst);
		return;
	}
	if (dt == at::kByte) {
		run_copy(dst, describe_as(lo, SPYRE_INT8), describe_as(dst, SPYRE_INT8));
		return;
	}
	at::Tensor hi = card_cast(at::bitwise_right_shift(x32, 8), at::kChar);
	at::Tensor both = at::stack({ lo, hi }, -1); // contiguous [..., 2]: little endian
	run_copy(dst, describe_as(both, SPYRE_INT8), describe_lanes(dst, SPYRE_INT8, 2));
}

at::Tensor small_result(const at::Tensor &x32, at::ScalarType dt)
{
	at::Tensor r = at::empty(x32.sizes(), x32.options().dtype(dt));
	small_narrow(x32, r);
	return r;
}

void small_assign(const at::Tensor &r, const at::Tensor &out)
{
	if (!small_int(out.scalar_type()))
		card_copy(small_int(r.scalar_type()) ? small_widen(r) : r, out);
	else if (small_int(r.scalar_type()))
		small_narrow(small_widen(r), out);
	else
		small_narrow(card_cast(r, at::kInt), out);
}

namespace {

// A Python number (or 0-dim CPU tensor) meeting a small-integer result
// dtype @rt: PyTorch wraps it to @rt first (int8: 300 is 44, also in a
// comparison), so it is wrapped here and passed on as an int64 number.
at::Tensor small_scalar(const at::Tensor &t, at::ScalarType rt)
{
	if (!small_int(rt) || t.is_floating_point() || t.is_complex())
		return t;
	return wrapped_number(t.to(at::kLong).to(rt).to(at::kLong).item());
}

} // namespace

std::optional<at::Tensor> small_binary(const char *name, spyre_binary_op op, BinaryKind kind,
				       bool true_div, const at::Tensor &a, const at::Tensor &b,
				       double alpha, const at::Tensor &out, OpForm form,
				       const std::function<bool(at::ScalarType)> &card_ok)
{
	const bool ca = is_cpu_scalar(a), cb = is_cpu_scalar(b);
	if ((ca && cb) || !((!ca && small_int(a.scalar_type())) || (!cb && small_int(b.scalar_type()))))
		return std::nullopt;
	const at::Tensor &dev = ca ? b : a;
	for (const at::Tensor *t : {&a, &b})
		if (!is_cpu_scalar(*t) && t->device() != dev.device())
			return std::nullopt; // the fallback reports the device mismatch
	if (!small_int_card(dev) || (form == OpForm::InPlace && ca))
		return std::nullopt;
	auto rt = at::result_type(a, b);
	if (true_div && at::isIntegralType(rt, true))
		rt = c10::typeMetaToScalarType(at::get_default_dtype());
	// the dtype the card computes in: int32 for small integers and bools
	at::ScalarType dt = small_int(rt) || rt == at::kBool ? at::kInt : rt;
	if (kind == BinaryKind::Arith && rt == at::kBool)
		return std::nullopt;
	if ((!card_float(dt) && dt != at::kInt && dt != at::kLong) || !card_ok(dt))
		return std::nullopt;
	if (small_int(rt) && alpha != 1.0) {
		// PyTorch converts alpha to the dtype checked (the same message)
		at::Scalar al{ static_cast<int64_t>(alpha) };
		if (rt == at::kChar)
			(void)al.toChar();
		else if (rt == at::kByte)
			(void)al.toByte();
		else
			(void)al.toShort();
	}
	c10::DeviceGuard guard(dev.device());
	auto operand = [&](const at::Tensor &t) {
		if (is_cpu_scalar(t))
			return small_scalar(t, rt);
		return small_int(t.scalar_type()) ? small_widen(t) : t;
	};
	at::Tensor r = binary_run(name, op, kind, dt, operand(a), operand(b), alpha, {}, false);
	const at::ScalarType rdt = kind == BinaryKind::Arith ? rt : at::kBool;
	if (small_int(rdt))
		r = small_result(r, rdt);
	if (form == OpForm::Functional)
		return r;
	if (form == OpForm::InPlace) {
		TORCH_CHECK(out.sizes() == r.sizes(), "output with shape ", out.sizes(),
			    " doesn't match the broadcast shape ", r.sizes());
		TORCH_CHECK(at::canCast(rdt, out.scalar_type()), "result type ", rdt,
			    " can't be cast to the desired output type ", out.scalar_type());
	} else {
		prepare_out(out, r.sizes(), rdt, name);
	}
	small_assign(r, out);
	return out;
}

std::optional<at::Tensor> small_unary(const char *name, spyre_unary_op op, const at::Tensor &x,
				      const at::Tensor &out, OpForm form)
{
	if (!small_int(x.scalar_type()) || !small_int_card(x))
		return std::nullopt;
	const spyre_op_info *row = spyre_op_find(SPYRE_OPK_UNARY, op);
	if (!row || !spyre_ops_supports(ops_context(x.device().index()), row, SPYRE_INT32))
		return std::nullopt;
	const at::ScalarType rdt = row->result == SPYRE_RESULT_BOOL ? at::kBool : x.scalar_type();
	c10::DeviceGuard guard(x.device());
	at::Tensor w = small_widen(x);
	at::Tensor r = at::empty(w.sizes(), w.options().dtype(rdt == at::kBool ? at::kBool : at::kInt));
	unary_out(name, op, w, r, OpForm::Functional);
	if (small_int(rdt))
		r = small_result(r, rdt);
	if (form == OpForm::Functional)
		return r;
	if (form == OpForm::Out)
		prepare_out(out, r.sizes(), rdt, name);
	small_assign(r, out);
	return out;
}

at::Tensor small_reduce(const at::Tensor &x, at::ScalarType dt,
			const std::function<at::Tensor(const at::Tensor &, at::ScalarType)> &f)
{
	c10::DeviceGuard guard(x.device());
	at::Tensor w = small_widen(x);
	if (small_int(dt))
		return small_result(f(w, at::kInt), dt);
	return f(w, dt);
}

at::Tensor &small_into(const at::Tensor &r, at::Tensor &out, const char *name)
{
	prepare_out(out, r.sizes(), r.scalar_type(), name);
	small_assign(r, out);
	return out;
}

} // namespace torch_spyre
