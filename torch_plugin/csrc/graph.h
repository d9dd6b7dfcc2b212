// SPDX-License-Identifier: MIT
// The op library's graph compiler for Python: torch_spyre._C._Graph records
// ops on symbolic values (libspyre's spyre_graph_*), compiles them into one
// recipe, and _Compiled runs it on the current stream with at::Tensor
// inputs and outputs. torch.compile's "spyre" backend
// (torch_spyre/compile/) lowers FX graphs through it.
#pragma once

#include <torch/extension.h>

namespace torch_spyre {

void init_graph_bindings(pybind11::module &m);

} // namespace torch_spyre
