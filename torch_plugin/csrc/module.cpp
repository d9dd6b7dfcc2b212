// SPDX-License-Identifier: MIT
// torch_spyre._C: the Python side's entry into the runtime.
#include "allocator.h"
#include "device.h"
#include "distributed.h"
#include "eager_compile.h"
#include "fallback.h"
#include "graph.h"
#include "host_allocator.h"
#include "op_tensor.h"
#include "stream.h"
#include "trace.h"

#include "spyre_hw.h" // SPYRE_HW_VERSION_{MAJOR,MINOR}_OF

#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <torch/csrc/Generator.h>
#include <torch/extension.h>

namespace py = pybind11;
using namespace torch_spyre;

namespace {

py::dict device_properties(c10::DeviceIndex index)
{
	spyre_device_props p;
	SPYRE_CHECK(spyre_device_get_props(device_handle(index), &p));
	py::dict d;
	d["name"] = std::string("Spyre (") + p.name + ")";
	d["node"] = std::string(p.name);
	d["path"] = std::string(p.path);
	d["backend"] = std::string(p.backend);
	d["pci_slot"] = std::string(p.pci_slot);
	d["hw_version"] = std::to_string(SPYRE_HW_VERSION_MAJOR_OF(p.hw_version)) + "." +
			  std::to_string(SPYRE_HW_VERSION_MINOR_OF(p.hw_version));
	d["cores"] = p.num_cores;
	d["scratchpad_size"] = p.scratchpad_size;
	d["total_memory"] = p.mem_total;
	d["free_memory"] = p.mem_free;
	d["clock_mhz"] = p.clock_mhz;
	d["compute_rings"] = p.compute_rings;
	d["dma_rings"] = p.dma_rings;
	return d;
}

py::dict device_counters(c10::DeviceIndex index)
{
	spyre_device_stats s;
	SPYRE_CHECK(spyre_device_get_stats(device_handle(index), &s));
	auto a = allocator_counters(index);
	py::dict d;
	d["submits"] = s.submits;
	d["ioctls"] = s.ioctls;
	d["alloc_requests"] = a.requests;
	d["alloc_cache_hits"] = a.cache_hits;
	d["alloc_cross_stream_reuses"] = a.cross_stream_reuses;
	d["alloc_deferred_frees"] = a.deferred_frees;
	return d;
}

uint64_t device_time_ns(c10::DeviceIndex index)
{
	uint64_t ns = 0;
	SPYRE_CHECK(spyre_device_time_ns(device_handle(index), &ns));
	return ns;
}

} // namespace

PYBIND11_MODULE(_C, m)
{
	init_graph_bindings(m);
	init_trace_bindings(m);
	init_distributed_bindings(m);
	init_eager_compile_bindings(m);
	m.doc() = "Spyre runtime for PyTorch (libspyre underneath)";
	m.def("_device_count", [] { return int(device_count()); });
	m.def("_unavailable_reason", [] { return unavailable_reason(); });
	m.def("_current_device", [] { return int(current_device()); });
	m.def("_is_in_bad_fork", [] { return is_in_bad_fork(); });
	m.def("_any_device_open", [] { return any_device_open(); });
	m.def("_is_initialized", [] { return device_initialized(); });
	m.def("_set_device", [](int i) { set_current_device(c10::DeviceIndex(i)); });
	m.def("_check_device", [](int i) { check_device_index(c10::DeviceIndex(i)); });
	m.def("_device_properties", [](int i) { return device_properties(c10::DeviceIndex(i)); });
	m.def("_device_counters", [](int i) { return device_counters(c10::DeviceIndex(i)); });
	m.def("_device_time_ns", [](int i) { return device_time_ns(c10::DeviceIndex(i)); });
	m.def("_synchronize", [](int i) {
		py::gil_scoped_release nogil;
		synchronize_device(c10::DeviceIndex(i));
	});
	m.def("_new_transfer_stream", [](int i) {
		c10::Stream s = new_transfer_stream(c10::DeviceIndex(i));
		return py::make_tuple(s.id(), int(s.device_index()));
	});
	m.def("_fallback_counts", [] { return fallback_counts(); });
	m.def("_reset_fallback_counts", [] { reset_fallback_counts(); });
	m.def("_set_fallback_mode", [](const std::string &s) { set_fallback_mode(s); });
	m.def("_fallback_mode", [] { return fallback_mode(); });
	m.def("_op_counts", [] { return device_op_counts(); });
	m.def("_is_pinned_ptr", [](uintptr_t p) { return is_pinned_ptr(reinterpret_cast<void *>(p)); });
	// Test hook: a one-shot card fault on the next command of the compute
	// (0) or DMA (1) engine (libspyre's spyre_sim_inject_fault kinds).
	m.def("_inject_fault", [](int i, int engine, unsigned kind) {
		SPYRE_CHECK(spyre_sim_inject_fault(device_handle(c10::DeviceIndex(i)),
						   static_cast<spyre_engine>(engine), kind));
	});
	m.def("_default_generator", [](int i) {
		const at::Generator &g =
			at::detail::getPrivateUse1Hooks().getDefaultGenerator(c10::DeviceIndex(i));
		return py::reinterpret_steal<py::object>(THPGenerator_initDefaultGenerator(g));
	});
}
