// SPDX-License-Identifier: MIT
#include "fallback.h"
#include "eager_compile.h"
#include "generator.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/DistributionsHelper.h>
#include <ATen/native/CPUFallback.h>
#include <torch/library.h>

#include <cstdlib>
#include <mutex>
#include <set>
#include <vector>

namespace torch_spyre {
namespace {

struct FallbackState {
	std::mutex mutex;
	std::map<std::string, uint64_t> counts;
	std::set<std::string> warned;
	bool error_mode;
	FallbackState()
	{
		const char *env = std::getenv("TORCH_SPYRE_FALLBACK");
		error_mode = env && std::string(env) == "error";
	}
};

FallbackState &state()
{
	static auto *s = new FallbackState();
	return *s;
}

// Mixing devices is an error on spyre as on CUDA: every tensor argument of
// an op must be on the same spyre device, except 0-dim CPU tensors.
void check_devices(const c10::OperatorHandle &op, const torch::jit::Stack &stack, size_t nargs)
{
	std::optional<c10::Device> dev;
	auto check = [&](const at::Tensor &t) {
		if (!t.defined())
			return;
		if (t.device().is_cpu() && t.dim() == 0)
			return;
		if (!dev) {
			dev = t.device();
			return;
		}
		TORCH_CHECK(*dev == t.device(),
			    "Expected all tensors to be on the same device, but found at least two "
			    "devices, ",
			    *dev, " and ", t.device(), "! (when checking arguments for ",
			    op.schema().operator_name(), ")");
	};
	for (size_t i = stack.size() - nargs; i < stack.size(); i++) {
		const auto &v = stack[i];
		if (v.isTensor())
			check(v.toTensor());
		else if (v.isTensorList())
			for (const at::Tensor &t : v.toTensorList().vec())
				check(t);
		else if (v.isOptionalTensorList())
			for (const auto &t : v.toOptionalTensorList().vec())
				if (t.has_value())
					check(*t);
	}
}

// The spyre device of the first spyre tensor argument (-1 if none).
c10::DeviceIndex first_spyre_device(const torch::jit::Stack &stack, size_t nargs)
{
	for (size_t i = stack.size() - nargs; i < stack.size(); i++)
		if (stack[i].isTensor() && stack[i].toTensor().defined() &&
		    stack[i].toTensor().device().type() == c10::DeviceType::PrivateUse1)
			return stack[i].toTensor().device().index();
	return -1;
}

// Random ops on the CPU: the CPU kernel gets a CPU generator seeded from
// the spyre generator's (seed, offset) (the default one of the device when
// the op was given none), whose offset moves on by one as for a card op, so
// torch.spyre.manual_seed makes them reproducible too.
struct GeneratorSwap {
	at::Generator spyre;
	at::Generator cpu;
};

std::vector<GeneratorSwap> swap_generators(const c10::FunctionSchema &schema,
					   torch::jit::Stack &stack)
{
	std::vector<GeneratorSwap> swaps;
	size_t nargs = schema.arguments().size();
	for (size_t i = 0; i < nargs; i++) {
		if (schema.arguments()[i].type()->str() != "Generator?")
			continue;
		auto &v = stack[stack.size() - nargs + i];
		at::Generator g;
		if (v.isNone()) {
			auto index = first_spyre_device(stack, nargs);
			if (index < 0)
				continue;
			g = at::globalContext().defaultGenerator(
				c10::Device(c10::DeviceType::PrivateUse1, index));
		} else if (v.isGenerator() &&
			   v.toGenerator().device().type() == c10::DeviceType::PrivateUse1) {
			g = v.toGenerator();
		} else {
			continue;
		}
		at::Generator cpu = at::make_generator<at::CPUGeneratorImpl>();
		{
			std::lock_guard<std::mutex> lock(g.mutex());
			auto so = at::check_generator<SpyreGenerator>(g)->next_philox();
			cpu.set_current_seed(so.first ^ (so.second * 0x9E3779B97F4A7C15ull));
		}
		v = c10::IValue(cpu);
		swaps.push_back({g, cpu});
	}
	return swaps;
}

} // namespace

void spyre_cpu_fallback(const c10::OperatorHandle &op, torch::jit::Stack *stack)
{
	const auto &schema = op.schema();
	std::string name = schema.operator_name().name;
	if (!schema.operator_name().overload_name.empty())
		name += "." + schema.operator_name().overload_name;
	// mixed devices are the caller's error, not a missing kernel: say so
	// before counting, warning about or refusing a fallback
	check_devices(op, *stack, schema.arguments().size());
	// an op the Inductor path can compile runs on the card after all
	std::string refused;
	if (eager_compile_try(op, stack, &refused))
		return;
	auto &st = state();
	bool warn = false, error;
	{
		std::lock_guard<std::mutex> lock(st.mutex);
		error = st.error_mode;
		if (!error) {
			st.counts[name]++;
			warn = st.warned.insert(name).second;
		}
	}
	TORCH_CHECK_NOT_IMPLEMENTED(!error, "spyre: the operator '", name,
				    "' has no spyre kernel and TORCH_SPYRE_FALLBACK=error forbids "
				    "running it on the CPU",
				    refused.empty() ? "" : " (compiling it through Inductor: ",
				    refused, refused.empty() ? "" : ")");
	if (warn)
		TORCH_WARN("spyre: the operator '", name,
			   "' has no spyre kernel; it runs on the CPU (copies to and from the "
			   "device). torch.spyre.fallback_counts() counts such calls; "
			   "TORCH_SPYRE_FALLBACK=error makes them errors.");
	auto swaps = swap_generators(schema, *stack);
	at::native::cpu_fallback(op, stack);
}

std::map<std::string, uint64_t> fallback_counts()
{
	auto &st = state();
	std::lock_guard<std::mutex> lock(st.mutex);
	return st.counts;
}

void reset_fallback_counts()
{
	auto &st = state();
	std::lock_guard<std::mutex> lock(st.mutex);
	st.counts.clear();
	st.warned.clear();
}

void set_fallback_mode(const std::string &mode)
{
	TORCH_CHECK(mode == "warn" || mode == "error", "spyre: fallback mode must be 'warn' or "
						      "'error', not '",
		    mode, "'");
	auto &st = state();
	std::lock_guard<std::mutex> lock(st.mutex);
	st.error_mode = mode == "error";
}

std::string fallback_mode()
{
	auto &st = state();
	std::lock_guard<std::mutex> lock(st.mutex);
	return st.error_mode ? "error" : "warn";
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m)
{
	m.fallback(torch::CppFunction::makeFromBoxedFunction<&spyre_cpu_fallback>());
}

} // namespace torch_spyre
