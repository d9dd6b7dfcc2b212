// SPDX-License-Identifier: MIT
// Reductions and scans over rows longer than the card's row kernels take
// (ops_long_rows.cpp): ops_reduce.cpp's kernels hand such rows here.
#pragma once

#include <ATen/core/Tensor.h>

#include <spyre/ops.h>

namespace torch_spyre {

// @x's row along @dim is longer than one pass of a row kernel.
bool long_row(const at::Tensor &x, int64_t dim);

// @op (sum, mean, amax, amin) of @x along @dim, keepdim, in x's dtype.
at::Tensor long_reduce(spyre_reduce_op op, const at::Tensor &x, int64_t dim);
// int64 index of the first maximum (NaN wins) along @dim, keepdim.
at::Tensor long_argmax(const at::Tensor &x, int64_t dim);

enum class LongScan { Cumsum, Softmax, LogSoftmax };
// cumsum, softmax or log_softmax of @x along @dim, in x's dtype.
at::Tensor long_along(LongScan kind, const at::Tensor &x, int64_t dim);

} // namespace torch_spyre
