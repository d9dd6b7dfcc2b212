// SPDX-License-Identifier: MIT
//
// Eager kernels made from libspyre's op table (spyre/op_table.h): every
// row flagged SPYRE_OPF_TORCH is registered as aten::<name> in the forms
// PyTorch defines: <name>, <name>_ and <name>.out for a unary row; for a
// binary row also the Tensor and Scalar overloads of each (add.Tensor,
// add_.Scalar, eq.Scalar_out, ...). As PyTorch's structured kernels, the
// forms of an op share one out kernel (unary_out, binary_run): the
// functional form allocates the result, the in-place form passes the
// input as the result. A new row needs nothing here.
//
// Inputs the card does not take (a dtype outside the row's, an older card
// interface, an out= dtype the result cannot become) go to the counted CPU
// fallback with the op's own arguments, like every other kernel's.
#include "kernels.h"
#include "ops_small_int.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <cstring>
#include <optional>
#include <string>
#include <unordered_map>

namespace torch_spyre {

at::ScalarType unary_result_dtype(spyre_unary_op op, at::ScalarType in)
{
	const spyre_op_info *row = spyre_op_find(SPYRE_OPK_UNARY, op);
	return row && row->result == SPYRE_RESULT_BOOL ? at::kBool : in;
}

bool card_runs(spyre_unary_op op, const at::Tensor &x)
{
	auto dt = to_spyre_dtype(x.scalar_type());
	return x.device().is_privateuseone() && dt &&
	       spyre_ops_supports(ops_context(x.device().index()),
				  spyre_op_find(SPYRE_OPK_UNARY, op), *dt);
}

void unary_out(const char *name, spyre_unary_op op, const at::Tensor &x, const at::Tensor &out,
	       OpForm form)
{
	c10::DeviceGuard guard(x.device());
	at::ScalarType rdt = unary_result_dtype(op, x.scalar_type());
	if (form == OpForm::Out)
		prepare_out(out, x.sizes(), rdt, name);
	at::Tensor dst = direct_out(out, x.sizes(), rdt, {x});
	if (x.numel()) {
		spyre_tensor xd = describe(x), od = describe(dst);
		check_op(spyre_op_unary(ops_context(x.device().index()), launch_stream(x), op, &xd,
					&od),
			 name);
		if (!dst.is_same(out))
			card_copy(dst, out);
	}
	count_device_op(name);
}

// A float result goes to a card float (or float64, cast on the card's copy
// path), an integer one to an integer of the card, a bool one to anything
// it casts to.
bool unary_out_ok(spyre_unary_op op, const at::Tensor &out)
{
	if (unary_result_dtype(op, at::kFloat) == at::kBool)
		return true;
	return card_float(out.scalar_type()) || out.scalar_type() == at::kDouble ||
	       card_int(out);
}

namespace {

// What one registered operator (say aten::sin_ or aten::add.out) is: its
// row, its form, and the name its runs are counted under ("sin_",
// "add.out").
struct TableKernel {
	const spyre_op_info *row;
	OpForm form;
	std::string label;
	bool alpha; // a binary op's third argument is alpha (add, sub)
};

std::unordered_map<c10::OperatorName, TableKernel> &table_kernels()
{
	static std::unordered_map<c10::OperatorName, TableKernel> kernels;
	return kernels;
}

void table_unary(const c10::OperatorHandle &handle, torch::jit::Stack *stack)
{
	const TableKernel &k = table_kernels().at(handle.operator_name());
	spyre_unary_op op = spyre_unary_op(k.row->op);
	size_t nargs = handle.schema().arguments().size();
	at::Tensor x = torch::jit::peek(*stack, 0, nargs).toTensor();
	at::Tensor out = k.form == OpForm::Out ? torch::jit::peek(*stack, 1, nargs).toTensor() :
						    at::Tensor();
	if (auto r = small_unary(k.label.c_str(), op, x, out, k.form)) {
		torch::jit::drop(*stack, nargs);
		torch::jit::push(*stack, k.form == OpForm::Functional ? *r : out);
		return;
	}
	if (!card_runs(op, x) || (out.defined() && !unary_out_ok(op, out))) {
		spyre_cpu_fallback(handle, stack);
		return;
	}
	if (k.form == OpForm::Functional)
		out = at::empty(x.sizes(), x.options().dtype(unary_result_dtype(op, x.scalar_type())));
	else if (k.form == OpForm::InPlace)
		out = x;
	unary_out(k.label.c_str(), op, x, out, k.form);
	torch::jit::drop(*stack, nargs);
	torch::jit::push(*stack, std::move(out));
}

// The card of @dev (a spyre tensor) runs @row in dtype @dt (its interface).
bool card_takes(const spyre_op_info &row, const at::Tensor &dev, at::ScalarType dt)
{
	auto sdt = to_spyre_dtype(dt);
	return sdt && spyre_ops_supports(ops_context(dev.device().index()), &row, *sdt);
}

BinaryKind binary_kind(const spyre_op_info &row)
{
	if (row.flags & SPYRE_OPF_TRUTH)
		return BinaryKind::Logical;
	return row.result == SPYRE_RESULT_BOOL ? BinaryKind::Compare : BinaryKind::Arith;
}

// Kernel @k on (a, b, alpha) into @out (the input for the in-place form,
// the out= tensor, undefined for the functional form): the result, or
// nullopt when the card cannot take the call (the CPU fallback then runs it).
std::optional<at::Tensor> binary_on_card(const TableKernel &k, const at::Tensor &a,
					 const at::Tensor &b, double alpha, const at::Tensor &out)
{
	BinaryKind kind = binary_kind(*k.row);
	// int8/uint8/int16 operands: computed in int32, wrapped back
	auto small = small_binary(k.label.c_str(), spyre_binary_op(k.row->op), kind,
				  k.row->flags & SPYRE_OPF_TRUE_DIV, a, b, alpha, out, k.form,
				  [&](at::ScalarType cdt) {
					  return card_takes(*k.row, is_cpu_scalar(a) ? b : a, cdt);
				  });
	if (small)
		return k.form == OpForm::Functional ? *small : out;
	auto dt = binary_dtype(kind, a, b, k.row->flags & SPYRE_OPF_TRUE_DIV);
	if (!dt || (k.form == OpForm::InPlace && is_cpu_scalar(a)) ||
	    !card_takes(*k.row, is_cpu_scalar(a) ? b : a, *dt))
		return std::nullopt;
	at::Tensor r = binary_run(k.label.c_str(), spyre_binary_op(k.row->op), kind, *dt, a, b,
				  alpha, out, k.form == OpForm::InPlace);
	return k.form == OpForm::Functional ? r : out;
}

// (self, other[, alpha][, out]): other a Tensor or a Scalar overload's number.
void table_binary(const c10::OperatorHandle &handle, torch::jit::Stack *stack)
{
	const TableKernel &k = table_kernels().at(handle.operator_name());
	size_t nargs = handle.schema().arguments().size();
	at::Tensor a = torch::jit::peek(*stack, 0, nargs).toTensor();
	const c10::IValue &other = torch::jit::peek(*stack, 1, nargs);
	at::Tensor b = other.isTensor() ? other.toTensor() : wrapped_number(other.toScalar());
	double alpha = k.alpha ? torch::jit::peek(*stack, 2, nargs).toScalar().toDouble() : 1.0;
	at::Tensor out = k.form == OpForm::Out ?
				 torch::jit::peek(*stack, nargs - 1, nargs).toTensor() :
				 k.form == OpForm::InPlace ? a : at::Tensor();
	auto r = binary_on_card(k, a, b, alpha, out);
	if (!r) {
		spyre_cpu_fallback(handle, stack);
		return;
	}
	torch::jit::drop(*stack, nargs);
	torch::jit::push(*stack, std::move(*r));
}

// The functional Tensor overloads of the hottest binary ops (an eager
// model's adds, muls and divides) as unboxed kernels: a boxed kernel gets
// its operands copied into IValues, and each copy of a tensor Python holds
// takes the GIL to keep its Python object alive (about 0.2 us an op).
// Same kernel, same fallback, found once at registration.
struct HotBinary {
	const char *name;
	const TableKernel *kernel = nullptr;
	c10::OperatorHandle *handle = nullptr;
};
HotBinary hot_binaries[] = { { "add" }, { "sub" }, { "mul" }, { "div" } };

template <size_t I>
at::Tensor hot_binary_alpha(const at::Tensor &a, const at::Tensor &b, const at::Scalar &alpha)
{
	const HotBinary &h = hot_binaries[I];
	if (auto r = binary_on_card(*h.kernel, a, b, alpha.toDouble(), at::Tensor()))
		return std::move(*r);
	torch::jit::Stack stack{ a, b, alpha };
	spyre_cpu_fallback(*h.handle, &stack);
	return stack[0].toTensor();
}

template <size_t I> at::Tensor hot_binary(const at::Tensor &a, const at::Tensor &b)
{
	const HotBinary &h = hot_binaries[I];
	if (auto r = binary_on_card(*h.kernel, a, b, 1.0, at::Tensor()))
		return std::move(*r);
	torch::jit::Stack stack{ a, b };
	spyre_cpu_fallback(*h.handle, &stack);
	return stack[0].toTensor();
}

// Registers @name.Tensor's functional form unboxed when it is a hot
// binary; false otherwise.
template <size_t I = 0>
bool register_hot(torch::Library &m, const std::string &name, const TableKernel &k,
		  const c10::OperatorHandle &handle)
{
	if constexpr (I == sizeof(hot_binaries) / sizeof(hot_binaries[0])) {
		return false;
	} else {
		HotBinary &h = hot_binaries[I];
		if (name != h.name)
			return register_hot<I + 1>(m, name, k, handle);
		h.kernel = &k;
		h.handle = new c10::OperatorHandle(handle); // lives as long as the registration
		std::string qualified = name + ".Tensor";
		if (k.alpha)
			m.impl(qualified.c_str(), TORCH_FN(hot_binary_alpha<I>));
		else
			m.impl(qualified.c_str(), TORCH_FN(hot_binary<I>));
		return true;
	}
}

// Registers aten::@name.@overload (when PyTorch defines it) as @form of
// row @row, counted as @label.
void register_one(torch::Library &m, const spyre_op_info &row, OpForm form,
		  const std::string &name, const char *overload, const std::string &label)
{
	c10::OperatorName opname("aten::" + name, overload);
	auto handle = c10::Dispatcher::singleton().findSchema(opname);
	if (!handle)
		return;
	const auto &args = handle->schema().arguments();
	bool alpha = row.kind == SPYRE_OPK_BINARY && args.size() > 2 && args[2].name() == "alpha";
	auto &k = table_kernels()
			  .emplace(opname, TableKernel{ &row, form, label, alpha })
			  .first->second;
	std::string qualified = *overload ? name + "." + overload : name;
	if (row.kind == SPYRE_OPK_BINARY && form == OpForm::Functional &&
	    !strcmp(overload, "Tensor") && register_hot(m, name, k, *handle))
		return;
	if (row.kind == SPYRE_OPK_UNARY)
		m.impl(qualified.c_str(), torch::CppFunction::makeFromBoxedFunction<&table_unary>());
	else
		m.impl(qualified.c_str(), torch::CppFunction::makeFromBoxedFunction<&table_binary>());
}

// relu has no out=, maximum no in-place form: each is registered where it
// exists.
void register_row(torch::Library &m, const spyre_op_info &row)
{
	std::string name = row.name, inplace = name + "_";
	if (row.kind == SPYRE_OPK_UNARY) {
		register_one(m, row, OpForm::Functional, name, "", name);
		register_one(m, row, OpForm::InPlace, inplace, "", inplace);
		register_one(m, row, OpForm::Out, name, "out", name + ".out");
		return;
	}
	// binary: the one-overload ops (maximum, logical_and) and the Tensor and
	// Scalar overloads of the others
	for (const char *ov : {"", "Tensor", "Scalar"}) {
		register_one(m, row, OpForm::Functional, name, ov, name);
		register_one(m, row, OpForm::InPlace, inplace, ov, inplace);
	}
	for (const char *ov : {"out", "Tensor_out", "Scalar_out"})
		register_one(m, row, OpForm::Out, name, ov, name + ".out");
}

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	unsigned int n = 0;
	const spyre_op_info *rows = spyre_op_table(&n);
	for (unsigned int i = 0; i < n; i++)
		if (rows[i].kind != SPYRE_OPK_REDUCE && (rows[i].flags & SPYRE_OPF_TORCH))
			register_row(m, rows[i]);
}

} // namespace torch_spyre
