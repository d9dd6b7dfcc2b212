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

// Layer norm rows [m, n] longer than the card's layer norm kernel takes
// (which keeps more per element than a reduction): composed of the passes
// above. Writes the normalised rows into @out [m, n] and each row's mean and
// 1/sqrt(var + eps) into @mean and @rstd [m, 1]; @w, @b undefined or [n].
bool long_norm_row(int64_t n);
void long_layer_norm(const at::Tensor &x, const at::Tensor &w, const at::Tensor &b, double eps,
		     const at::Tensor &out, const at::Tensor &mean, const at::Tensor &rstd);

} // namespace torch_spyre
