// SPDX-License-Identifier: MIT
// Helpers shared by the device kernels of ops_pointwise.cpp, ops_reduce.cpp,
// ops_convert.cpp and ops_table.cpp: dtype questions, copies and casts on
// the card, writing a result into out=,
// and the out kernels of the op table's unary and binary ops.
#pragma once

#include "fallback.h"
#include "op_tensor.h"

#include <ATen/ATen.h>
#include <ATen/Operators.h>
#include <ATen/native/CPUFallback.h>

#include <vector>

namespace torch_spyre {

// The counted CPU fallback for op @op (an ATen operator struct name such as
// add_Tensor) with the kernel's own arguments: for inputs the card cannot
// take. Error mode refuses it, naming the op.
#define SPYRE_FALLBACK(op, ...)                                                                  \
	at::native::call_fallback_fn<&torch_spyre::spyre_cpu_fallback, ATEN_OP(op)>::call(      \
		__VA_ARGS__)

// fp32, fp16, bf16: the dtypes the card's vector unit computes in.
bool card_float(at::ScalarType t);
// @t is an int32/int64 spyre tensor and its card computes them exactly
// (interface 1.9, the vector unit's integer mode).
bool card_int(const at::Tensor &t);
// Every value of the int32/int64 spyre tensor @x is an integer fp32 holds
// exactly (|x| <= 2^24): checked on the card, one byte read back. For
// kernels that move integers through fp32 (sort); others are exact.
bool ints_fit_fp32(const at::Tensor &x);

// A 0-dim CPU tensor operand (a wrapped Python number or torch.tensor(x)):
// PyTorch lets it meet device tensors, the kernels pass it as a scalar.
bool is_cpu_scalar(const at::Tensor &t);

// Copies @src (a spyre tensor of @dst's shape, or broadcastable to it) into
// @dst on the card, casting when the dtypes differ, exactly as PyTorch
// (same-dtype copies of integers move bytes). Nothing is launched for 0
// elements.
void card_copy(const at::Tensor &src, const at::Tensor &dst);

// @t in dtype @dt: @t itself, or a contiguous cast made on the card.
at::Tensor card_cast(const at::Tensor &t, at::ScalarType dt);

// The integer index tensors a bool mask index stands for in x[mask], one
// per dim of the mask (ops_select.cpp; synchronises once for the count).
std::vector<at::Tensor> mask_as_indices(const at::Tensor &mask);

// int32 values known to be >= 0 (indices) widened into the int64 @dst.
void widen_indices(const at::Tensor &idx32, const at::Tensor &dst);

// Where a kernel writes a result of @shape and dtype @dt that belongs in
// @out: @out itself when it has that shape and dtype, is contiguous, and
// does not partly overlap any of @inputs (an exact alias, as in x.add_(y),
// is fine for elementwise kernels); else a fresh contiguous tensor, which
// the caller then card_copy()s into @out.
at::Tensor direct_out(const at::Tensor &out, c10::IntArrayRef shape, at::ScalarType dt,
		      std::initializer_list<at::Tensor> inputs, bool alias_ok = true);

// Checks and resizes an out= tensor for a result of @shape and dtype @dt.
void prepare_out(const at::Tensor &out, c10::IntArrayRef shape, at::ScalarType dt,
		 const char *op);

// ---- ops of the op table (registered from it by ops_table.cpp) ----

enum class OpForm { Functional, InPlace, Out };

// The result dtype of unary op @op on a tensor of @in (its table row's).
at::ScalarType unary_result_dtype(spyre_unary_op op, at::ScalarType in);
// The card runs @op on @x: a spyre tensor of a dtype the op's table row
// takes, on a card of the interface the row needs.
bool card_runs(spyre_unary_op op, const at::Tensor &x);
// @out can take @op's result on the card.
bool unary_out_ok(spyre_unary_op op, const at::Tensor &out);
// The one kernel of a unary op: out = op(x), counted as @name. The
// functional form passes a fresh result, the in-place form @x itself;
// Out checks and resizes @out first.
void unary_out(const char *name, spyre_unary_op op, const at::Tensor &x, const at::Tensor &out,
	       OpForm form);

// Binary ops (ops_pointwise.cpp): arithmetic keeps the promoted dtype,
// comparisons and logical ops give bool.
enum class BinaryKind { Arith, Compare, Logical };
// The dtype @kind computes a op b in (PyTorch's promotion; @true_div:
// integers promote to the default float), or nullopt when the card cannot.
std::optional<at::ScalarType> binary_dtype(BinaryKind kind, const at::Tensor &a,
					   const at::Tensor &b, bool true_div);
// The one kernel of a binary op: a op (alpha * b) in dtype @dt, into @out
// when given (@inplace: out is a's storage and keeps its shape); a CPU
// scalar operand is the op library's scalar.
at::Tensor binary_run(const char *name, spyre_binary_op op, BinaryKind kind, at::ScalarType dt,
		      const at::Tensor &a, const at::Tensor &b, double alpha, at::Tensor out,
		      bool inplace);
// A Python number as PyTorch passes it on (it does not promote dtypes).
at::Tensor wrapped_number(const at::Scalar &v);
// self[idx] = values (accumulate: +=) for one int64/int32 index of the first
// dimension, on the card (ops_index_put.cpp); false when it cannot (the
// caller falls back).
bool index_put_rows(at::Tensor &self, const c10::List<std::optional<at::Tensor>> &indices,
		    const at::Tensor &values, bool accumulate);
// Every other self[indices] = values (accumulate: +=): integer index
// tensors on any dims, broadcast together, and bool masks among them, on
// the card (ops_index_put.cpp); false when it cannot (the caller falls back).
bool index_put_any(at::Tensor &self, const c10::List<std::optional<at::Tensor>> &indices,
		   const at::Tensor &values, bool accumulate);

} // namespace torch_spyre
