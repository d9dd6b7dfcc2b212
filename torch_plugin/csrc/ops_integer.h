// SPDX-License-Identifier: MIT
// int32, int64 and bool tensors on the card. The card's vector unit computes in
// fp32, so an integer op runs as its float kernel on fp32 copies made on the
// card, and the result is cast back on the card to the dtype PyTorch gives
// it. That is exact while every operand and result is an integer of
// magnitude <= 2^24 (token ids, positions, lengths and masks are); beyond,
// results round as fp32 does (Documentation/torch-plugin.rst).
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

namespace torch_spyre {

// Runs @op on the card through fp32 when it is one of the integer ops this
// path knows and an input is an integer or bool spyre tensor; returns false
// (the stack untouched) otherwise. Called by the fallback before it sends
// an op to the CPU.
bool integer_op_on_card(const c10::OperatorHandle &op, torch::jit::Stack *stack);

} // namespace torch_spyre
