// SPDX-License-Identifier: MIT
// The visible CPU fallback: an op with no spyre kernel runs on the CPU, with
// a one-time warning per op and a counter, or raises when
// TORCH_SPYRE_FALLBACK=error (or set_fallback_mode("error")).
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <cstdint>
#include <map>
#include <string>

namespace torch_spyre {

std::map<std::string, uint64_t> fallback_counts();
void reset_fallback_counts();
// "warn" (the default) or "error"; the environment variable sets the start value.
void set_fallback_mode(const std::string &mode);
std::string fallback_mode();

// The boxed fallback itself: device kernels call it (through
// at::native::call_fallback_fn) for the inputs the card cannot take (integer
// arithmetic, float64, ops the card has no function for), so those runs are
// counted, warned about and refused in error mode like any other fallback.
void spyre_cpu_fallback(const c10::OperatorHandle &op, torch::jit::Stack *stack);

} // namespace torch_spyre
