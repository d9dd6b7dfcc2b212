// SPDX-License-Identifier: MIT
#include "eager_compile.h"

#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/csrc/jit/python/pybind_utils.h>

#include <mutex>
#include <set>
#include <vector>

namespace torch_spyre {
namespace {

struct Hook {
	std::mutex mutex;
	py::object fn; // None: no hook
	std::set<std::string> names;
	bool all = false;
};

// Never destroyed: the Python object must not be released after the
// interpreter is gone.
Hook &hook()
{
	static auto *h = new Hook();
	return *h;
}

// The fallback runs below autograd (the dispatcher excluded the autograd
// keys for this thread); the hook compiles and launches from the top of the
// dispatcher, as a user's call would, so it starts from the default local key
// set and gets the original back however it returns.
struct TopOfDispatcher : c10::impl::ForceDispatchKeyGuard {
	TopOfDispatcher()
		: c10::impl::ForceDispatchKeyGuard(c10::default_included_set,
						   c10::default_excluded_set)
	{
	}
};

} // namespace

bool eager_compile_try(const c10::OperatorHandle &op, torch::jit::Stack *stack,
		       std::string *why)
{
	const auto &schema = op.schema();
	std::string name = schema.operator_name().name;
	if (!schema.operator_name().overload_name.empty())
		name += "." + schema.operator_name().overload_name;
	auto &h = hook();
	{
		std::lock_guard<std::mutex> lock(h.mutex);
		if (!h.fn || h.fn.is_none() ||
		    !(h.all || h.names.count(schema.operator_name().name)))
			return false;
	}
	if (!Py_IsInitialized())
		return false;
	size_t nargs = schema.arguments().size();
	TopOfDispatcher top;
	py::gil_scoped_acquire gil;
	py::object fn;
	{
		std::lock_guard<std::mutex> lock(h.mutex);
		fn = h.fn;
	}
	py::list args;
	for (size_t i = stack->size() - nargs; i < stack->size(); i++)
		args.append(torch::jit::toPyObject((*stack)[i]));
	py::object res = fn(name, args);
	if (py::isinstance<py::str>(res)) {
		*why = res.cast<std::string>();
		return false;
	}
	auto outs = res.cast<py::list>();
	const auto &returns = schema.returns();
	TORCH_CHECK(outs.size() == returns.size(), "spyre: the compiled eager op ", name,
		    " returned ", outs.size(), " results, its schema has ", returns.size());
	torch::jit::drop(*stack, nargs);
	for (size_t i = 0; i < returns.size(); i++)
		stack->push_back(torch::jit::toIValue(outs[i], returns[i].type()));
	return true;
}

void init_eager_compile_bindings(py::module &m)
{
	// fn(name, args) -> [tensors] or a reason (str); @names: the ops offered
	// to it (without overload names), or every op without a kernel when @all
	m.def("_set_eager_compile_hook", [](py::object fn, std::vector<std::string> names,
					    bool all) {
		auto &h = hook();
		std::lock_guard<std::mutex> lock(h.mutex);
		h.fn = std::move(fn);
		h.names = std::set<std::string>(names.begin(), names.end());
		h.all = all;
	});
}

} // namespace torch_spyre
