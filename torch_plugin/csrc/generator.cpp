// SPDX-License-Identifier: MIT
#include "generator.h"

#include <ATen/Context.h>
#include <ATen/core/DistributionsHelper.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/core/DeviceType.h>

#include <cstring>

namespace torch_spyre {

SpyreGenerator::SpyreGenerator(c10::DeviceIndex index, uint64_t seed)
	: c10::GeneratorImpl(c10::Device(c10::DeviceType::PrivateUse1, index),
			     c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)),
	  seed_(seed)
{
}

void SpyreGenerator::set_current_seed(uint64_t seed)
{
	seed_ = seed;
	offset_ = 0;
}

uint64_t SpyreGenerator::current_seed() const
{
	return seed_;
}

uint64_t SpyreGenerator::seed()
{
	uint64_t s = c10::detail::getNonDeterministicRandom();
	set_current_seed(s);
	return s;
}

void SpyreGenerator::set_offset(uint64_t offset)
{
	offset_ = offset;
}

uint64_t SpyreGenerator::get_offset() const
{
	return offset_;
}

void SpyreGenerator::set_state(const c10::TensorImpl &state)
{
	TORCH_CHECK(state.dtype() == caffe2::TypeMeta::Make<uint8_t>() &&
			    state.device().is_cpu() && state.numel() == 16 &&
			    state.is_contiguous(),
		    "spyre: the RNG state is a CPU uint8 tensor of 16 bytes (the Philox seed, "
		    "then the offset), got ",
		    state.numel(), " elements of ", state.dtype().name(), " on ", state.device());
	const auto *p = static_cast<const uint8_t *>(state.data());
	std::memcpy(&seed_, p, 8);
	std::memcpy(&offset_, p + 8, 8);
}

c10::intrusive_ptr<c10::TensorImpl> SpyreGenerator::get_state() const
{
	at::Tensor t = at::empty({ 16 }, at::TensorOptions().dtype(at::kByte));
	auto *p = t.data_ptr<uint8_t>();
	std::memcpy(p, &seed_, 8);
	std::memcpy(p + 8, &offset_, 8);
	return t.getIntrusivePtr();
}

std::pair<uint64_t, uint64_t> SpyreGenerator::next_philox()
{
	return { seed_, offset_++ };
}

SpyreGenerator *SpyreGenerator::clone_impl() const
{
	auto *g = new SpyreGenerator(device_.index(), seed_);
	g->offset_ = offset_;
	return g;
}

SpyreGenerator *spyre_generator(const std::optional<at::Generator> &gen, c10::Device device)
{
	if (gen.has_value() && gen->defined()) {
		TORCH_CHECK(gen->device().type() == c10::DeviceType::PrivateUse1,
			    "spyre: a random op on a spyre tensor needs a spyre generator, got one "
			    "for ",
			    gen->device());
		return at::check_generator<SpyreGenerator>(gen);
	}
	return at::check_generator<SpyreGenerator>(
		at::globalContext().defaultGenerator(device));
}

} // namespace torch_spyre
