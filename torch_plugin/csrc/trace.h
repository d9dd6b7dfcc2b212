// SPDX-License-Identifier: MIT
// Names of the device work in traces: while torch.spyre.trace runs, every
// submission is labelled with the innermost aten op (or the compiled graph)
// of the thread that issued it, so an eager forward shows one span per op.
#pragma once

namespace torch_spyre {

// Label the calling thread's submissions until the scope ends (nests).
// @name must be a literal: libspyre keeps the pointer until the trace stops.
class TraceLabelScope {
public:
	explicit TraceLabelScope(const char *name);
	~TraceLabelScope();
	TraceLabelScope(const TraceLabelScope &) = delete;
	TraceLabelScope &operator=(const TraceLabelScope &) = delete;
};

} // namespace torch_spyre
