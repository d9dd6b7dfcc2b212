// SPDX-License-Identifier: MIT
// Eager ops without a spyre kernel, compiled through the Inductor path: the
// boxed fallback (fallback.cpp) first offers the op to a Python hook
// (torch_spyre/inductor/eager.py), which compiles it once per key into a
// recipe and launches it; only when the hook declines does the op go on to
// the CPU fallback (counted) or to the error of error mode.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <torch/extension.h>

#include <string>

namespace torch_spyre {

// True when the hook ran @op: its results replace its arguments on @stack.
// False when there is no hook, the op is not one it takes (@why left empty)
// or it declined (@why says why).
bool eager_compile_try(const c10::OperatorHandle &op, torch::jit::Stack *stack,
		       std::string *why);

void init_eager_compile_bindings(py::module &m);

} // namespace torch_spyre
