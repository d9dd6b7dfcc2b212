// SPDX-License-Identifier: MIT
// Names of the device work in traces: while torch.spyre.trace runs, every
// submission is labelled with the innermost aten op (or the compiled graph)
// of the thread that issued it, so an eager forward shows one span per op.
#pragma once

#include <torch/extension.h>

namespace torch_spyre {

// Name submissions after the aten op that issues them, on every thread,
// while at least one trace (torch.spyre.trace, a torch.profiler session)
// runs: calls nest, each on() needs one off().
void trace_labels_on();
void trace_labels_off();

// Label the calling thread's submissions until the scope ends (nests).
// @name must be a literal: libspyre keeps the pointer until the trace stops.
// torch_spyre._C._trace_start / _trace_stop (torch.spyre.trace)
void init_trace_bindings(pybind11::module &m);

class TraceLabelScope {
public:
	explicit TraceLabelScope(const char *name);
	~TraceLabelScope();
	TraceLabelScope(const TraceLabelScope &) = delete;
	TraceLabelScope &operator=(const TraceLabelScope &) = delete;
};

} // namespace torch_spyre
