// SPDX-License-Identifier: MIT
// The spyre random generator: Philox4x32-10 as CUDA's, a (seed, offset)
// pair per generator. Each random op takes the generator's offset and
// advances it by one; the op library computes the bits on the card
// (spyre_op_philox: counter j of the op is (j, offset), the key the seed).
// Documentation/random.rst.
#pragma once

#include <ATen/core/Generator.h>
#include <c10/core/GeneratorImpl.h>

#include <cstdint>
#include <optional>
#include <utility>

namespace torch_spyre {

class SpyreGenerator : public c10::GeneratorImpl {
public:
	explicit SpyreGenerator(c10::DeviceIndex index, uint64_t seed = c10::default_rng_seed_val);
	void set_current_seed(uint64_t seed) override;
	uint64_t current_seed() const override;
	uint64_t seed() override;
	void set_offset(uint64_t offset) override;
	uint64_t get_offset() const override;
	// 16 bytes (uint8 CPU tensor): the seed, then the offset, as CUDA's.
	void set_state(const c10::TensorImpl &state) override;
	c10::intrusive_ptr<c10::TensorImpl> get_state() const override;
	// (seed, offset) for one op; the offset moves on by one. Call with
	// the generator's mutex held.
	std::pair<uint64_t, uint64_t> next_philox();
	static c10::DeviceType device_type()
	{
		return c10::DeviceType::PrivateUse1;
	}

private:
	SpyreGenerator *clone_impl() const override;
	uint64_t seed_;
	uint64_t offset_ = 0;
};

// The generator a random op uses: @gen if given (a spyre one, else an
// error), otherwise the default generator of @device.
SpyreGenerator *spyre_generator(const std::optional<at::Generator> &gen, c10::Device device);

} // namespace torch_spyre
