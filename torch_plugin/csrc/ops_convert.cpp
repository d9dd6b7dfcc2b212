// SPDX-License-Identifier: MIT
//
// Copies and casts on the card (spyre_op_copy), and the helpers every
// device kernel shares (kernels.h).
//
// Casts are one spyre_op_copy: the op library converts exactly as PyTorch
// (card interface 1.9: int32/int64 in the vector unit's integer mode,
// float -> integer truncating toward zero). A same-dtype copy of an
// integer tensor moves its bytes as int8 lanes (shape [..., element size]),
// exact on every card. A card before 1.9 refuses integer conversions that
// fp32 would get wrong (NotImplementedError naming the op).
#include "kernels.h"

#include <ATen/MemoryOverlap.h>
#include <ATen/native/Resize.h>

namespace torch_spyre {
namespace {

bool exact_integer(at::ScalarType t)
{
	return t == at::kInt || t == at::kLong || t == at::kChar || t == at::kByte ||
	       t == at::kShort ||
	       t == at::kBool;
}

} // namespace

bool card_float(at::ScalarType t)
{
	return t == at::kFloat || t == at::kHalf || t == at::kBFloat16;
}

bool ints_fit_fp32(const at::Tensor &x)
{
	constexpr double kExact = double(int64_t(1) << 24);
	if (x.numel() == 0)
		return true;
	return !at::logical_or(at::gt(x, kExact), at::lt(x, -kExact)).any().item<bool>();
}

bool card_int(const at::Tensor &t)
{
	auto dt = t.scalar_type();
	if ((dt != at::kInt && dt != at::kLong) || !t.device().is_privateuseone())
		return false;
	return spyre_ops_supports(ops_context(t.device().index()),
				  spyre_op_find(SPYRE_OPK_BINARY, SPYRE_BIN_ADD),
				  dt == at::kInt ? SPYRE_INT32 : SPYRE_INT64);
}

bool is_cpu_scalar(const at::Tensor &t)
{
	return t.defined() && t.device().is_cpu() && t.dim() == 0;
}

void card_copy(const at::Tensor &src_in, const at::Tensor &dst)
{
	if (dst.numel() == 0)
		return;
	TORCH_CHECK(src_in.device() == dst.device(), "spyre: card copy between ", src_in.device(),
		    " and ", dst.device());
	if (src_in.sizes() != dst.sizes() && src_in.scalar_type() != dst.scalar_type()) {
		// a broadcast source: cast its own elements, then expand (a casting
		// copy does not take stride-0 sources correctly)
		card_copy(card_cast(src_in, dst.scalar_type()), dst);
		return;
	}
	at::Tensor src = src_in.sizes() == dst.sizes() ? src_in : src_in.expand_as(dst);
	auto sdt = src.scalar_type(), ddt = dst.scalar_type();
	if (sdt == ddt && exact_integer(sdt)) {
		int64_t es = dst.element_size();
		spyre_tensor s = describe_as(src, SPYRE_INT8), d = describe_as(dst, SPYRE_INT8);
		if (es == 1)
			run_copy(dst, s, d);
		else
			run_copy(dst, describe_lanes(src, SPYRE_INT8, es),
				 describe_lanes(dst, SPYRE_INT8, es));
		return;
	}
	run_copy(dst, describe(src), describe(dst));
}

at::Tensor card_cast(const at::Tensor &t, at::ScalarType dt)
{
	if (t.scalar_type() == dt)
		return t;
	at::Tensor out = at::empty(t.sizes(), t.options().dtype(dt));
	card_copy(t, out);
	return out;
}

void widen_indices(const at::Tensor &idx32, const at::Tensor &dst)
{
	if (dst.numel() == 0)
		return;
	run_copy(dst, describe(idx32), describe(dst));
}

at::Tensor direct_out(const at::Tensor &out, c10::IntArrayRef shape, at::ScalarType dt,
		      std::initializer_list<at::Tensor> inputs, bool alias_ok)
{
	bool ok = out.defined() && out.sizes() == shape && out.scalar_type() == dt &&
		  out.is_contiguous() && at::has_internal_overlap(out) == at::MemOverlap::No;
	for (const auto &in : inputs) {
		if (!ok)
			break;
		if (!in.defined() || !in.device().is_privateuseone() ||
		    !in.storage().is_alias_of(out.storage()))
			continue;
		auto st = at::get_overlap_status(out, in);
		ok = st == at::MemOverlapStatus::No || (alias_ok && st == at::MemOverlapStatus::Full &&
							in.sizes() == out.sizes() &&
							in.strides() == out.strides());
	}
	if (ok)
		return out;
	return at::empty(shape, (out.defined() ? out.options() :
						at::TensorOptions().device(c10::kPrivateUse1))
					.dtype(dt)
					.memory_format(at::MemoryFormat::Contiguous));
}

void prepare_out(const at::Tensor &out, c10::IntArrayRef shape, at::ScalarType dt, const char *op)
{
	TORCH_CHECK(out.device().is_privateuseone(), "spyre: ", op, ": out= is on ", out.device(),
		    ", expected a spyre tensor");
	TORCH_CHECK(at::canCast(dt, out.scalar_type()), "result type ", dt,
		    " can't be cast to the desired output type ", out.scalar_type());
	at::native::resize_output(out, shape);
}

} // namespace torch_spyre
