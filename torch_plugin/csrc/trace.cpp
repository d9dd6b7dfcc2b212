// SPDX-License-Identifier: MIT
/*
 * Device timeline traces from Python (torch.spyre.trace): thin bindings
 * over spyre_trace_start/stop; the JSON format is libspyre's.
 */
#include "device.h"

#include <pybind11/pybind11.h>
#include <spyre/spyre.h>
#include <string>

namespace torch_spyre {

void init_trace_bindings(pybind11::module &m)
{
	m.def("_trace_start", [](int i, const std::string &path) {
		SPYRE_CHECK(spyre_trace_start(device_handle(c10::DeviceIndex(i)), path.c_str()));
	});
	m.def("_trace_stop", [](int i) {
		SPYRE_CHECK(spyre_trace_stop(device_handle(c10::DeviceIndex(i))));
	});
}

} // namespace torch_spyre
