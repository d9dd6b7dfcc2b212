// SPDX-License-Identifier: MIT
// The c10d backend for spyre tensors (distributed.cpp).
#pragma once

#include <torch/extension.h>

namespace torch_spyre {

// torch_spyre._C._SpyreBackend: built over a gloo Backend by
// torch_spyre.distributed when a process group needs the spyre backend.
void init_distributed_bindings(pybind11::module &m);

} // namespace torch_spyre
