// SPDX-License-Identifier: MIT
// int8, uint8 and int16 arithmetic on the card, through int32
// (ops_small_int.cpp): exact, with PyTorch's wraparound.
#pragma once

#include "kernels.h"

#include <functional>
#include <optional>

namespace torch_spyre {

// int8, uint8 or int16: the dtypes computed by widening to int32.
bool small_int(at::ScalarType t);
// The card of spyre tensor @t computes int32 exactly (its integer mode).
bool small_int_card(const at::Tensor &t);
// The values of the small-integer spyre tensor @t as a new int32 tensor.
at::Tensor small_widen(const at::Tensor &t);
// The int32 values @x32 wrapped to @dst's small dtype (its low 8 or 16
// bits, as PyTorch's wraparound) written into @dst (same shape).
void small_narrow(const at::Tensor &x32, const at::Tensor &dst);
// small_narrow into a new tensor of dtype @dt.
at::Tensor small_result(const at::Tensor &x32, at::ScalarType dt);
// The result @r (any card dtype) written into @out: narrowed when @out is
// a small integer dtype, else cast by card_copy.
void small_assign(const at::Tensor &r, const at::Tensor &out);
// a op (alpha * b) of the op table's binary row when an operand is a small
// integer: in int32 on the card (@card_ok says the card takes the dtype it
// computes in), the result wrapped to PyTorch's result dtype; nullopt when
// the card cannot (the caller falls back). @out: the in-place or out= form's
// result tensor.
std::optional<at::Tensor> small_binary(const char *name, spyre_binary_op op, BinaryKind kind,
				       bool true_div, const at::Tensor &a, const at::Tensor &b,
				       double alpha, const at::Tensor &out, OpForm form,
				       const std::function<bool(at::ScalarType)> &card_ok);
// op(x) of the op table's unary row on a small-integer @x; nullopt when the
// card cannot.
std::optional<at::Tensor> small_unary(const char *name, spyre_unary_op op, const at::Tensor &x,
				      const at::Tensor &out, OpForm form);
// A reduction or scan @f (of a tensor and the dtype to compute in) of the
// small-integer @x, run on x widened to int32; the result in @dt (a small
// dtype: computed in int32 and wrapped, as PyTorch's sum(dtype=int8)).
at::Tensor small_reduce(const at::Tensor &x, at::ScalarType dt,
			const std::function<at::Tensor(const at::Tensor &, at::ScalarType)> &f);
// @r written into the out= tensor @out (checked, resized, narrowed or cast).
at::Tensor &small_into(const at::Tensor &r, at::Tensor &out, const char *name);
// The small-integer spyre tensor @x goes through small_reduce.
#define SPYRE_SMALL_INT(x) (small_int((x).scalar_type()) && small_int_card(x))

} // namespace torch_spyre
