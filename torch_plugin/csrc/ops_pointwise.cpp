// SPDX-License-Identifier: MIT
//
// Elementwise device kernels: arithmetic, comparisons, logical ops, where,
// masked_fill, clamp, pow and gelu, each in its functional,
// in-place and out= form, over the op library (spyre_op_binary/...). The
// unary functions PyTorch names as the op table does are ops_table.cpp's.
//
// Type promotion is PyTorch's (at::result_type); operands of another dtype
// are cast on the card first. A 0-dim CPU tensor operand (a Python number)
// becomes the op library's scalar (for integers: a 0-dim device tensor,
// whose bytes are exact where a double is not). The card's vector unit
// computes floats (fp32 inside, rounded once to the result dtype) and, from
// interface 1.9, int32/int64 exactly in its integer mode; float64, older
// cards' integers and ops the card has no function for take the counted
// CPU fallback, which TORCH_SPYRE_FALLBACK=error refuses naming the op.
#include "kernels.h"

#include <ATen/ExpandUtils.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <cerrno>
#include <cmath>
#include <limits>

namespace torch_spyre {
namespace {

double scalar_of(const at::Tensor &t)
{
	return t.item().toDouble();
}

// @v as the dtype @dt holds it (PyTorch compares in the common dtype).
double round_to(double v, at::ScalarType dt)
{
	switch (dt) {
	case at::kHalf:
		return float(c10::Half(float(v)));
	case at::kBFloat16:
		return float(c10::BFloat16(float(v)));
	default:
		return float(v);
	}
}

const at::Tensor &device_operand(const at::Tensor &a, const at::Tensor &b)
{
	return is_cpu_scalar(a) ? b : a;
}

} // namespace

// The dtype the op computes in, or nullopt when the card cannot.
std::optional<at::ScalarType> binary_dtype(BinaryKind kind, const at::Tensor &a,
					   const at::Tensor &b, bool true_div)
{
	if (is_cpu_scalar(a) && is_cpu_scalar(b))
		return std::nullopt;
	const at::Tensor &d = device_operand(a, b);
	for (const at::Tensor *t : {&a, &b})
		if (!is_cpu_scalar(*t) && t->device() != d.device())
			return std::nullopt; // the fallback reports the device mismatch
	auto dt = at::result_type(a, b);
	if (true_div && at::isIntegralType(dt, true))
		dt = c10::typeMetaToScalarType(at::get_default_dtype());
	if (kind == BinaryKind::Logical) {
		if (is_cpu_scalar(a) || is_cpu_scalar(b) || !to_spyre_dtype(dt))
			return std::nullopt;
		return dt;
	}
	// bools compare as int32 (exact; the result is bool either way)
	if (kind == BinaryKind::Compare && dt == at::kBool)
		dt = at::kInt;
	// integers: exact on the card's integer mode (the caller checks the card)
	if (!card_float(dt) && dt != at::kInt && dt != at::kLong &&
	    !(dt == at::kBool && kind == BinaryKind::Arith))
		return std::nullopt;
	return dt;
}

// An integer operand given as a CPU scalar, as a 0-dim spyre tensor of
// @dt: PyTorch wraps it to @dt's width, and its bytes stay exact where a
// double would round beyond 2^53.
static at::Tensor int_operand(const at::Tensor &t, at::ScalarType dt, const at::Tensor &dev)
{
	at::Tensor v = t.is_floating_point() ? t.to(at::kDouble).to(at::kLong) : t.to(at::kLong);
	return v.to(dt).to(dev.device());
}

static bool integral(at::ScalarType dt)
{
	return dt == at::kInt || dt == at::kLong || dt == at::kBool;
}

// Integer division by zero: PyTorch raises ZeroDivisionError, so the
// divisor is checked on the card first (a compare and an any, one byte
// read back). The card would fail the division's job with an arithmetic
// error (-EDOM) anyway, but a failed job's error travels on to every job
// that waits for it (reused memory included), so it is not left to happen.
static void check_divisor(const at::Tensor &b)
{
	TORCH_CHECK(!at::eq(b, 0).any().item<bool>(), "ZeroDivisionError");
}

// out = a op (alpha * b), into @out when given (@inplace: out is a's
// storage and keeps its shape).
at::Tensor binary_run(const char *name, spyre_binary_op op, BinaryKind kind, at::ScalarType dt,
		      const at::Tensor &a, const at::Tensor &b, double alpha, at::Tensor out,
		      bool inplace)
{
	const at::Tensor &dev = device_operand(a, b);
	c10::DeviceGuard guard(dev.device());
	auto shape = at::infer_size(is_cpu_scalar(a) ? c10::IntArrayRef{} : a.sizes(),
				    is_cpu_scalar(b) ? c10::IntArrayRef{} : b.sizes());
	at::ScalarType rdt = kind == BinaryKind::Arith ? dt : at::kBool;
	if (inplace) {
		TORCH_CHECK(out.sizes() == c10::IntArrayRef(shape), "output with shape ",
			    out.sizes(), " doesn't match the broadcast shape ", shape);
		TORCH_CHECK(at::canCast(rdt, out.scalar_type()), "result type ", rdt,
			    " can't be cast to the desired output type ", out.scalar_type());
	} else if (out.defined()) {
		prepare_out(out, shape, rdt, name);
	}
	at::Tensor dst = out.defined() ? direct_out(out, shape, rdt, {a, b}) :
					 at::empty(shape, dev.options().dtype(rdt));
	count_device_op(name);
	if (dst.numel() == 0)
		return out.defined() ? out : dst;
	auto ops = ops_context(dev.device().index());
	auto *s = launch_stream(dev);
	spyre_tensor od = describe(dst);
	if (integral(dt)) {
		// exact integers: scalars as device tensors, alpha as an integer multiply
		at::Tensor aa = is_cpu_scalar(a) ? int_operand(a, dt, dev) : card_cast(a, dt);
		at::Tensor bb = is_cpu_scalar(b) ? int_operand(b, dt, dev) : card_cast(b, dt);
		if (alpha != 1.0) {
			at::Tensor scaled = at::empty(bb.sizes(), bb.options());
			spyre_tensor bd = describe(bb), sd = describe(scaled);
			check_op(spyre_op_binary_scalar(ops, s, SPYRE_BIN_MUL, &bd, alpha, 0, &sd),
				 name);
			bb = scaled;
		}
		if (op == SPYRE_BIN_FLOOR_DIVIDE || op == SPYRE_BIN_REMAINDER)
			check_divisor(bb);
		spyre_tensor ad = describe(aa), bd = describe(bb);
		check_op(spyre_op_binary(ops, s, op, &ad, &bd, &od), name);
		if (out.defined() && !dst.is_same(out))
			card_copy(dst, out);
		return out.defined() ? out : dst;
	}
	at::Tensor bb = b;
	double bval = 0;
	if (is_cpu_scalar(b)) {
		bval = scalar_of(b) * alpha;
		if (kind == BinaryKind::Compare)
			bval = round_to(bval, dt);
	} else {
		bb = card_cast(b, dt);
		if (alpha != 1.0) {
			at::Tensor scaled = at::empty(bb.sizes(), bb.options());
			spyre_tensor bd = describe(bb), sd = describe(scaled);
			check_op(spyre_op_binary_scalar(ops, s, SPYRE_BIN_MUL, &bd, alpha, 0, &sd),
				 name);
			bb = scaled;
		}
	}
	if (is_cpu_scalar(a)) {
		double aval = scalar_of(a);
		if (kind == BinaryKind::Compare)
			aval = round_to(aval, dt);
		spyre_tensor bd = describe(bb);
		check_op(spyre_op_binary_scalar(ops, s, op, &bd, aval, 1, &od), name);
	} else if (is_cpu_scalar(b)) {
		at::Tensor aa = card_cast(a, dt);
		spyre_tensor ad = describe(aa);
		check_op(spyre_op_binary_scalar(ops, s, op, &ad, bval, 0, &od), name);
	} else {
		at::Tensor aa = card_cast(a, dt);
		spyre_tensor ad = describe(aa), bd = describe(bb);
		check_op(spyre_op_binary(ops, s, op, &ad, &bd, &od), name);
	}
	if (out.defined() && !dst.is_same(out))
		card_copy(dst, out);
	return out.defined() ? out : dst;
}

at::Tensor wrapped_number(const at::Scalar &v)
{
	at::Tensor t = at::scalar_to_tensor(v);
	t.unsafeGetTensorImpl()->set_wrapped_number(true);
	return t;
}

namespace {

double alpha_of(const at::Scalar &alpha)
{
	return alpha.toDouble();
}

// ---- binary ops ---------------------------------------------------------------
//
// The op table's binary ops are registered from the table (ops_table.cpp)
// over binary_run; rsub and div's rounding modes are written here.

// rsub(a, b, alpha) = b - alpha * a
at::Tensor rsub_k(const at::Tensor &a, const at::Tensor &b, const at::Scalar &alpha)
{
	auto dt = binary_dtype(BinaryKind::Arith, b, a, false);
	if (!dt)
		return SPYRE_FALLBACK(rsub_Tensor, a, b, alpha);
	return binary_run("rsub", SPYRE_BIN_SUB, BinaryKind::Arith, *dt, b, a, alpha_of(alpha), {},
			  false);
}

at::Tensor rsub_scalar_k(const at::Tensor &a, const at::Scalar &b, const at::Scalar &alpha)
{
	return rsub_k(a, wrapped_number(b), alpha);
}

// div with rounding_mode: None is true division; trunc/floor have no card
// function.
at::Tensor div_mode_k(const at::Tensor &a, const at::Tensor &b,
		      std::optional<c10::string_view> mode)
{
	// floor division of integers is floor_divide (exact on the integer mode)
	if (mode.has_value() && *mode == "floor" && integral(at::result_type(a, b)) &&
	    at::result_type(a, b) != at::kBool)
		return at::floor_divide(a, b);
	if (mode.has_value())
		return SPYRE_FALLBACK(div_Tensor_mode, a, b, mode);
	return at::div(a, b);
}

at::Tensor &div_mode_k_(at::Tensor &a, const at::Tensor &b, std::optional<c10::string_view> mode)
{
	if (mode.has_value())
		return SPYRE_FALLBACK(div__Tensor_mode, a, b, mode);
	return a.div_(b);
}

at::Tensor &div_mode_k_out(const at::Tensor &a, const at::Tensor &b,
			   std::optional<c10::string_view> mode, at::Tensor &out)
{
	if (mode.has_value())
		return SPYRE_FALLBACK(div_out_mode, a, b, mode, out);
	return at::div_out(out, a, b);
}

// ---- unary ops --------------------------------------------------------------
//
// The op table's unary ops with a plain aten::<name> are registered from the
// table (ops_table.cpp, bitwise_not included); gelu picks its row from an
// argument, so it calls the same out kernel by hand.

spyre_unary_op gelu_op(c10::string_view approximate)
{
	TORCH_CHECK(approximate == "none" || approximate == "tanh",
		    "approximate argument must be either none or tanh.");
	return approximate == "tanh" ? SPYRE_UN_GELU_TANH : SPYRE_UN_GELU;
}

at::Tensor gelu_k(const at::Tensor &x, c10::string_view approximate)
{
	spyre_unary_op op = gelu_op(approximate);
	if (!card_runs(op, x))
		return SPYRE_FALLBACK(gelu, x, approximate);
	at::Tensor out = at::empty(x.sizes(), x.options());
	unary_out("gelu", op, x, out, OpForm::Functional);
	return out;
}

at::Tensor &gelu_k_(at::Tensor &x, c10::string_view approximate)
{
	spyre_unary_op op = gelu_op(approximate);
	if (!card_runs(op, x))
		return SPYRE_FALLBACK(gelu_, x, approximate);
	unary_out("gelu_", op, x, x, OpForm::InPlace);
	return x;
}

at::Tensor &gelu_k_out(const at::Tensor &x, c10::string_view approximate, at::Tensor &out)
{
	spyre_unary_op op = gelu_op(approximate);
	if (!card_runs(op, x) || !unary_out_ok(op, out))
		return SPYRE_FALLBACK(gelu_out, x, approximate, out);
	unary_out("gelu.out", op, x, out, OpForm::Out);
	return out;
}

// ---- clamp, pow -------------------------------------------------------------

at::Tensor clamp_run(const char *name, const at::Tensor &x, double lo, double hi, at::Tensor out,
		     bool inplace)
{
	c10::DeviceGuard guard(x.device());
	if (out.defined() && !inplace)
		prepare_out(out, x.sizes(), x.scalar_type(), name);
	at::Tensor dst = out.defined() ? direct_out(out, x.sizes(), x.scalar_type(), {x}) :
					 at::empty(x.sizes(), x.options());
	count_device_op(name);
	if (x.numel()) {
		spyre_tensor xd = describe(x), od = describe(dst);
		check_op(spyre_op_clamp(ops_context(x.device().index()), launch_stream(x), &xd, lo,
					hi, &od),
			 name);
		if (out.defined() && !dst.is_same(out))
			card_copy(dst, out);
	}
	return out.defined() ? out : dst;
}

constexpr double kInf = std::numeric_limits<double>::infinity();

double bound(const std::optional<at::Scalar> &s, double dflt)
{
	return s.has_value() ? s->toDouble() : dflt;
}

// An integer clamp bound the card takes exactly: none, or an integer of
// @dt's range (a double holds it: |v| <= 2^53). Others (a float bound
// promotes the result to float) take the fallback.
bool int_bound(const std::optional<at::Scalar> &s, at::ScalarType dt)
{
	if (!s.has_value())
		return true;
	if (!s->isIntegral(false))
		return false;
	int64_t v = s->toLong();
	if (dt == at::kInt)
		return v >= INT32_MIN && v <= INT32_MAX;
	return v >= -(int64_t(1) << 53) && v <= (int64_t(1) << 53);
}

bool clamp_ok(const at::Tensor &x, const std::optional<at::Scalar> &lo,
	      const std::optional<at::Scalar> &hi)
{
	return card_float(x.scalar_type()) ||
	       (card_int(x) && int_bound(lo, x.scalar_type()) && int_bound(hi, x.scalar_type()));
}

at::Tensor clamp_k(const at::Tensor &x, const std::optional<at::Scalar> &lo,
		   const std::optional<at::Scalar> &hi)
{
	TORCH_CHECK(lo.has_value() || hi.has_value(),
		    "torch.clamp: At least one of 'min' or 'max' must not be None");
	if (!clamp_ok(x, lo, hi))
		return SPYRE_FALLBACK(clamp, x, lo, hi);
	return clamp_run("clamp", x, bound(lo, -kInf), bound(hi, kInf), {}, false);
}

at::Tensor &clamp_k_(at::Tensor &x, const std::optional<at::Scalar> &lo,
		     const std::optional<at::Scalar> &hi)
{
	TORCH_CHECK(lo.has_value() || hi.has_value(),
		    "torch.clamp: At least one of 'min' or 'max' must not be None");
	if (!clamp_ok(x, lo, hi))
		return SPYRE_FALLBACK(clamp_, x, lo, hi);
	clamp_run("clamp_", x, bound(lo, -kInf), bound(hi, kInf), x, true);
	return x;
}

at::Tensor &clamp_k_out(const at::Tensor &x, const std::optional<at::Scalar> &lo,
			const std::optional<at::Scalar> &hi, at::Tensor &out)
{
	TORCH_CHECK(lo.has_value() || hi.has_value(),
		    "torch.clamp: At least one of 'min' or 'max' must not be None");
	if (!clamp_ok(x, lo, hi) || out.scalar_type() != x.scalar_type())
		return SPYRE_FALLBACK(clamp_out, x, lo, hi, out);
	clamp_run("clamp.out", x, bound(lo, -kInf), bound(hi, kInf), out, false);
	return out;
}

#define CLAMP_SIDE(fn, aten, lo, hi)                                                             \
	at::Tensor fn(const at::Tensor &x, const at::Scalar &v)                                  \
	{                                                                                        \
		if (!clamp_ok(x, v, std::nullopt))                                               \
			return SPYRE_FALLBACK(aten, x, v);                                       \
		return clamp_run(#aten, x, lo, hi, {}, false);                                   \
	}                                                                                        \
	at::Tensor &fn##_(at::Tensor &x, const at::Scalar &v)                                    \
	{                                                                                        \
		if (!clamp_ok(x, v, std::nullopt))                                               \
			return SPYRE_FALLBACK(aten##_, x, v);                                    \
		clamp_run(#aten "_", x, lo, hi, x, true);                                        \
		return x;                                                                        \
	}                                                                                        \
	at::Tensor &fn##_out(const at::Tensor &x, const at::Scalar &v, at::Tensor &out)          \
	{                                                                                        \
		if (!clamp_ok(x, v, std::nullopt) || out.scalar_type() != x.scalar_type())       \
			return SPYRE_FALLBACK(aten##_out, x, v, out);                            \
		clamp_run(#aten ".out", x, lo, hi, out, false);                                  \
		return out;                                                                      \
	}

CLAMP_SIDE(clamp_min_k, clamp_min, v.toDouble(), kInf)
CLAMP_SIDE(clamp_max_k, clamp_max, -kInf, v.toDouble())

// clamp with tensor bounds: the card's maximum and minimum kernels (with
// their broadcasting, promotion and NaN propagation; min > max gives max).
at::Tensor clamp_tensor_k(const at::Tensor &x, const std::optional<at::Tensor> &lo,
			  const std::optional<at::Tensor> &hi)
{
	bool has_lo = lo && lo->defined(), has_hi = hi && hi->defined();
	TORCH_CHECK(has_lo || has_hi, "torch.clamp: At least one of 'min' or 'max' must not be None");
	at::Tensor r = has_lo ? at::maximum(x, *lo) : x;
	return has_hi ? at::minimum(r, *hi) : r;
}

at::Tensor &clamp_tensor_k_(at::Tensor &x, const std::optional<at::Tensor> &lo,
			    const std::optional<at::Tensor> &hi)
{
	at::Tensor r = clamp_tensor_k(x, lo, hi);
	TORCH_CHECK(r.sizes() == x.sizes(), "output with shape ", x.sizes(),
		    " doesn't match the broadcast shape ", r.sizes());
	x.copy_(r);
	return x;
}

at::Tensor &clamp_tensor_k_out(const at::Tensor &x, const std::optional<at::Tensor> &lo,
			       const std::optional<at::Tensor> &hi, at::Tensor &out)
{
	at::Tensor r = clamp_tensor_k(x, lo, hi);
	if (!out.sizes().equals(r.sizes()))
		out.resize_(r.sizes());
	out.copy_(r);
	return out;
}

at::Tensor pow_run(const char *name, const at::Tensor &x, double p, at::Tensor out, bool inplace)
{
	c10::DeviceGuard guard(x.device());
	if (out.defined() && !inplace)
		prepare_out(out, x.sizes(), x.scalar_type(), name);
	at::Tensor dst = out.defined() ? direct_out(out, x.sizes(), x.scalar_type(), {x}) :
					 at::empty(x.sizes(), x.options());
	count_device_op(name);
	if (x.numel()) {
		spyre_tensor xd = describe(x), od = describe(dst);
		check_op(spyre_op_pow_scalar(ops_context(x.device().index()), launch_stream(x), &xd,
					     p, &od),
			 name);
		if (out.defined() && !dst.is_same(out))
			card_copy(dst, out);
	}
	return out.defined() ? out : dst;
}

// pow(x, p) of a float x and a real p keeps x's dtype.
bool pow_ok(const at::Tensor &x, const at::Scalar &p)
{
	return card_float(x.scalar_type()) && !p.isComplex();
}

at::Tensor pow_k(const at::Tensor &x, const at::Scalar &p)
{
	if (!pow_ok(x, p))
		return SPYRE_FALLBACK(pow_Tensor_Scalar, x, p);
	return pow_run("pow", x, p.toDouble(), {}, false);
}

at::Tensor &pow_k_(at::Tensor &x, const at::Scalar &p)
{
	if (!pow_ok(x, p))
		return SPYRE_FALLBACK(pow__Scalar, x, p);
	pow_run("pow_", x, p.toDouble(), x, true);
	return x;
}

at::Tensor &pow_k_out(const at::Tensor &x, const at::Scalar &p, at::Tensor &out)
{
	if (!pow_ok(x, p))
		return SPYRE_FALLBACK(pow_Tensor_Scalar_out, x, p, out);
	pow_run("pow.out", x, p.toDouble(), out, false);
	return out;
}

// ---- where, masked_fill -----------------------------------------------------

// A device tensor for operand @t of dtype @dt: a CPU scalar becomes a 0-dim
// tensor on @device filled on the card.
at::Tensor on_card(const at::Tensor &t, at::ScalarType dt, const at::Device &device)
{
	if (!is_cpu_scalar(t))
		return card_cast(t, dt);
	if (dt == at::kInt || dt == at::kLong)
		return t.to(dt).to(device);	/* exact bytes */
	at::Tensor v = at::empty({}, at::TensorOptions().device(device).dtype(dt));
	spyre_tensor d = describe(v);
	check_op(spyre_op_fill(ops_context(device.index()), launch_stream(v), scalar_of(t), &d),
		 "where");
	return v;
}

std::optional<at::ScalarType> where_dtype(const at::Tensor &cond, const at::Tensor &a,
					  const at::Tensor &b)
{
	if (!cond.device().is_privateuseone() || cond.scalar_type() == at::kLong ||
	    !to_spyre_dtype(cond.scalar_type()))
		return std::nullopt;
	for (const at::Tensor *t : {&a, &b})
		if (!is_cpu_scalar(*t) && t->device() != cond.device())
			return std::nullopt;
	auto dt = at::result_type(a, b);
	if (!card_float(dt) && !((dt == at::kInt || dt == at::kLong) &&
				 card_int(at::empty({}, cond.options().dtype(dt)))))
		return std::nullopt;
	return dt;
}

at::Tensor where_run(const at::Tensor &cond, const at::Tensor &a, const at::Tensor &b,
		     at::ScalarType dt, at::Tensor out, const char *name)
{
	c10::DeviceGuard guard(cond.device());
	auto shape = at::infer_size(cond.sizes(), at::infer_size(is_cpu_scalar(a) ? c10::IntArrayRef{} :
											a.sizes(),
								  is_cpu_scalar(b) ? c10::IntArrayRef{} :
										      b.sizes()));
	if (out.defined())
		prepare_out(out, shape, dt, name);
	at::Tensor dst = out.defined() ? direct_out(out, shape, dt, {cond, a, b}, false) :
					 at::empty(shape, cond.options().dtype(dt));
	count_device_op(name);
	if (dst.numel()) {
		at::Tensor aa = on_card(a, dt, cond.device()), bb = on_card(b, dt, cond.device());
		spyre_tensor cd = describe(cond), ad = describe(aa), bd = describe(bb),
			     od = describe(dst);
		check_op(spyre_op_where(ops_context(cond.device().index()), launch_stream(cond), &cd,
					&ad, &bd, &od),
			 name);
		if (out.defined() && !dst.is_same(out))
			card_copy(dst, out);
	}
	return out.defined() ? out : dst;
}

at::Tensor where_k(const at::Tensor &cond, const at::Tensor &a, const at::Tensor &b)
{
	auto dt = where_dtype(cond, a, b);
	if (!dt)
		return SPYRE_FALLBACK(where_self, cond, a, b);
	return where_run(cond, a, b, *dt, {}, "where");
}

at::Tensor &where_k_out(const at::Tensor &cond, const at::Tensor &a, const at::Tensor &b,
			at::Tensor &out)
{
	auto dt = where_dtype(cond, a, b);
	if (!dt)
		return SPYRE_FALLBACK(where_self_out, cond, a, b, out);
	where_run(cond, a, b, *dt, out, "where.out");
	return out;
}

// An integer x takes an integer fill value of its range exactly; a bool x
// a bool (or 0/1) value, filled on an fp32 copy (0 and 1 are exact).
bool masked_fill_ok(const at::Tensor &x, const at::Tensor &mask, const at::Scalar &v)
{
	bool bool_ok = x.scalar_type() == at::kBool && (v.isBoolean() || (v.isIntegral(false) &&
							(v.toLong() == 0 || v.toLong() == 1)));
	return (card_float(x.scalar_type()) || bool_ok ||
		(card_int(x) && int_bound(v, x.scalar_type()))) &&
	       mask.device() == x.device() && mask.scalar_type() == at::kBool;
}

at::Tensor masked_fill_run(const char *name, const at::Tensor &x, const at::Tensor &mask,
			   double value, at::Tensor out, bool inplace)
{
	c10::DeviceGuard guard(x.device());
	auto shape = at::infer_size(x.sizes(), mask.sizes());
	if (inplace)
		TORCH_CHECK(c10::IntArrayRef(shape) == x.sizes(), "masked_fill_: mask of shape ",
			    mask.sizes(), " does not broadcast to ", x.sizes());
	at::Tensor dst = out.defined() ? direct_out(out, shape, x.scalar_type(), {x, mask}) :
					 at::empty(shape, x.options());
	count_device_op(name);
	if (dst.numel() && x.scalar_type() == at::kBool) {
		at::Tensor f = card_cast(x, at::kFloat), r = at::empty(shape, f.options());
		spyre_tensor xd = describe(f), md = describe(mask), od = describe(r);
		check_op(spyre_op_masked_fill(ops_context(x.device().index()), launch_stream(x), &xd,
					      &md, value, &od),
			 name);
		card_copy(r, dst);	/* x != 0 */
		if (out.defined() && !dst.is_same(out))
			card_copy(dst, out);
	} else if (dst.numel()) {
		spyre_tensor xd = describe(x), md = describe(mask), od = describe(dst);
		check_op(spyre_op_masked_fill(ops_context(x.device().index()), launch_stream(x), &xd,
					      &md, value, &od),
			 name);
		if (out.defined() && !dst.is_same(out))
			card_copy(dst, out);
	}
	return out.defined() ? out : dst;
}

double fill_value(const at::Tensor &v)
{
	TORCH_CHECK(v.dim() == 0,
		    "masked_fill_ only supports a 0-dimensional value tensor, but got tensor "
		    "with ",
		    v.dim(), " dimension(s).");
	return scalar_of(v);
}

at::Tensor masked_fill_s(const at::Tensor &x, const at::Tensor &mask, const at::Scalar &v)
{
	if (!masked_fill_ok(x, mask, v))
		return SPYRE_FALLBACK(masked_fill_Scalar, x, mask, v);
	return masked_fill_run("masked_fill", x, mask, v.toDouble(), {}, false);
}

at::Tensor &masked_fill_s_(at::Tensor &x, const at::Tensor &mask, const at::Scalar &v)
{
	if (!masked_fill_ok(x, mask, v))
		return SPYRE_FALLBACK(masked_fill__Scalar, x, mask, v);
	masked_fill_run("masked_fill_", x, mask, v.toDouble(), x, true);
	return x;
}

at::Tensor masked_fill_t(const at::Tensor &x, const at::Tensor &mask, const at::Tensor &v)
{
	if (v.dim() != 0 || !masked_fill_ok(x, mask, v.item()))
		return SPYRE_FALLBACK(masked_fill_Tensor, x, mask, v);
	return masked_fill_run("masked_fill", x, mask, fill_value(v), {}, false);
}

at::Tensor &masked_fill_t_(at::Tensor &x, const at::Tensor &mask, const at::Tensor &v)
{
	if (v.dim() != 0 || !masked_fill_ok(x, mask, v.item()))
		return SPYRE_FALLBACK(masked_fill__Tensor, x, mask, v);
	masked_fill_run("masked_fill_", x, mask, fill_value(v), x, true);
	return x;
}

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	m.impl("rsub.Tensor", rsub_k);
	m.impl("rsub.Scalar", rsub_scalar_k);
	m.impl("div.Tensor_mode", div_mode_k);
	m.impl("div_.Tensor_mode", div_mode_k_);
	m.impl("div.out_mode", div_mode_k_out);
#define REG_UNARY(name)                                                                          \
	m.impl(#name, name##_k);                                                                 \
	m.impl(#name "_", name##_k_);                                                            \
	m.impl(#name ".out", name##_k_out);
	REG_UNARY(gelu)
	REG_UNARY(clamp)
	m.impl("clamp.Tensor", clamp_tensor_k);
	m.impl("clamp_.Tensor", clamp_tensor_k_);
	m.impl("clamp.Tensor_out", clamp_tensor_k_out);
	REG_UNARY(clamp_min)
	REG_UNARY(clamp_max)
	m.impl("pow.Tensor_Scalar", pow_k);
	m.impl("pow_.Scalar", pow_k_);
	m.impl("pow.Tensor_Scalar_out", pow_k_out);
	m.impl("where.self", where_k);
	m.impl("where.self_out", where_k_out);
	m.impl("masked_fill.Scalar", masked_fill_s);
	m.impl("masked_fill_.Scalar", masked_fill_s_);
	m.impl("masked_fill.Tensor", masked_fill_t);
	m.impl("masked_fill_.Tensor", masked_fill_t_);
}

} // namespace torch_spyre
