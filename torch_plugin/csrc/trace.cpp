// SPDX-License-Identifier: MIT
/*
 * Device timeline traces from Python (torch.spyre.trace): bindings over
 * spyre_trace_start/stop (the JSON format is libspyre's), and the span
 * names. While a trace runs, a RecordFunction callback keeps a per-thread
 * stack of the aten ops being dispatched and hands the innermost one to
 * spyre_trace_label, so the work an op submits is named after it
 * ("aten::addmm") instead of the libspyre call ("spyre_launch_async").
 */
#include "trace.h"
#include "device.h"

#include <ATen/record_function.h>
#include <pybind11/pybind11.h>
#include <spyre/spyre.h>

#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

namespace torch_spyre {

namespace {

thread_local std::vector<const char *> label_stack;

void push_label(const char *name)
{
	label_stack.push_back(name);
	spyre_trace_label(name);
}

void pop_label()
{
	if (!label_stack.empty())
		label_stack.pop_back();
	spyre_trace_label(label_stack.empty() ? nullptr : label_stack.back());
}

// libspyre keeps label pointers until the trace is written: op names are
// copied once into a set that lives as long as the process.
const char *intern(const char *name)
{
	static std::mutex lock;
	static auto *names = new std::unordered_set<std::string>();
	std::lock_guard<std::mutex> g(lock);
	return names->insert(name).first->c_str();
}

std::unique_ptr<at::ObserverContext> op_enter(const at::RecordFunction &fn)
{
	push_label(intern(fn.name()));
	return nullptr;
}

void op_exit(const at::RecordFunction &, at::ObserverContext *)
{
	pop_label();
}

std::mutex callback_lock;
int tracing;	/* traces running on any device */
at::CallbackHandle callback;

} // namespace

void trace_labels_on()
{
	std::lock_guard<std::mutex> g(callback_lock);
	if (tracing++ == 0)
		callback = at::addGlobalCallback(
			at::RecordFunctionCallback(op_enter, op_exit)
				.scopes({at::RecordScope::FUNCTION}));
}

void trace_labels_off()
{
	std::lock_guard<std::mutex> g(callback_lock);
	if (tracing > 0 && --tracing == 0)
		at::removeCallback(callback);
}

TraceLabelScope::TraceLabelScope(const char *name)
{
	push_label(name);
}

TraceLabelScope::~TraceLabelScope()
{
	pop_label();
}

void init_trace_bindings(pybind11::module &m)
{
	m.def("_trace_start", [](int i, const std::string &path) {
		SPYRE_CHECK(spyre_trace_start(device_handle(c10::DeviceIndex(i)), path.c_str()));
		trace_labels_on();
	});
	m.def("_trace_stop", [](int i) {
		trace_labels_off();
		SPYRE_CHECK(spyre_trace_stop(device_handle(c10::DeviceIndex(i))));
	});
}

} // namespace torch_spyre
