// SPDX-License-Identifier: MIT
//
// Eager kernels made from libspyre's op table (spyre/op_table.h): every
// unary row flagged SPYRE_OPF_TORCH is registered as aten::<name> in the
// forms PyTorch defines of <name>, <name>_ and <name>.out. As PyTorch's
// structured kernels, the three forms share one out kernel (unary_out):
// the functional form allocates the result and calls it, the in-place form
// calls it with the input as the result. A new row needs nothing here.
//
// Inputs the card does not take (a dtype outside the row's, an older card
// interface, an out= dtype the result cannot become) go to the counted CPU
// fallback with the op's own arguments, like every other kernel's.
#include "kernels.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

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
	       UnaryForm form)
{
	c10::DeviceGuard guard(x.device());
	at::ScalarType rdt = unary_result_dtype(op, x.scalar_type());
	if (form == UnaryForm::Out)
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
// path), a bool one to anything it casts to.
bool unary_out_ok(spyre_unary_op op, const at::Tensor &out)
{
	if (unary_result_dtype(op, at::kFloat) == at::kBool)
		return true;
	return card_float(out.scalar_type()) || out.scalar_type() == at::kDouble;
}

namespace {

// What one registered operator (say aten::sin_) is: its row, its form, and
// the name its runs are counted under ("sin_").
struct TableKernel {
	spyre_unary_op op;
	UnaryForm form;
	std::string label;
};

std::unordered_map<c10::OperatorName, TableKernel> &table_kernels()
{
	static std::unordered_map<c10::OperatorName, TableKernel> kernels;
	return kernels;
}

void table_unary(const c10::OperatorHandle &handle, torch::jit::Stack *stack)
{
	const TableKernel &k = table_kernels().at(handle.operator_name());
	size_t nargs = handle.schema().arguments().size();
	at::Tensor x = torch::jit::peek(*stack, 0, nargs).toTensor();
	at::Tensor out = k.form == UnaryForm::Out ? torch::jit::peek(*stack, 1, nargs).toTensor() :
						    at::Tensor();
	if (!card_runs(k.op, x) || (out.defined() && !unary_out_ok(k.op, out))) {
		spyre_cpu_fallback(handle, stack);
		return;
	}
	if (k.form == UnaryForm::Functional)
		out = at::empty(x.sizes(), x.options().dtype(unary_result_dtype(k.op, x.scalar_type())));
	else if (k.form == UnaryForm::InPlace)
		out = x;
	unary_out(k.label.c_str(), k.op, x, out, k.form);
	torch::jit::drop(*stack, nargs);
	torch::jit::push(*stack, std::move(out));
}

// Registers @form of row @row when PyTorch defines it (relu has no out=).
void register_form(torch::Library &m, const spyre_op_info &row, UnaryForm form)
{
	std::string name = row.name, overload, label = row.name;
	if (form == UnaryForm::InPlace) {
		name += "_";
		label = name;
	} else if (form == UnaryForm::Out) {
		overload = "out";
		label += ".out";
	}
	c10::OperatorName opname("aten::" + name, overload);
	if (!c10::Dispatcher::singleton().findSchema(opname))
		return;
	table_kernels().emplace(opname, TableKernel{spyre_unary_op(row.op), form, label});
	std::string qualified = overload.empty() ? name : name + "." + overload;
	m.impl(qualified.c_str(), torch::CppFunction::makeFromBoxedFunction<&table_unary>());
}

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	unsigned int n = 0;
	const spyre_op_info *rows = spyre_op_table(&n);
	for (unsigned int i = 0; i < n; i++) {
		if (rows[i].kind != SPYRE_OPK_UNARY || !(rows[i].flags & SPYRE_OPF_TORCH))
			continue;
		for (UnaryForm form : {UnaryForm::Functional, UnaryForm::InPlace, UnaryForm::Out})
			register_form(m, rows[i], form);
	}
}

} // namespace torch_spyre
