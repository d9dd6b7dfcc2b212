// SPDX-License-Identifier: MIT
// Integer and bool tensors on the card. From card interface 1.9 the vector
// unit computes int32 and int64 exactly in its integer mode, so integer ops
// are the op table's kernels (ops_table.cpp) and the dtype-aware kernels of
// ops_pointwise.cpp and ops_reduce.cpp, exact as PyTorch's CPU results.
// Nothing integer goes through fp32: an op or a card the integer mode does
// not cover takes the counted CPU fallback (an error in
// TORCH_SPYRE_FALLBACK=error mode). ops_integer.cpp composes any, all and
// isin from those kernels. int8, uint8 and int16 compute in int32 and wrap
// back (ops_small_int.h).
#pragma once
