// SPDX-License-Identifier: MIT
// The visible CPU fallback: an op with no spyre kernel runs on the CPU, with
// a one-time warning per op and a counter, or raises when
// TORCH_SPYRE_FALLBACK=error (or set_fallback_mode("error")).
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace torch_spyre {

std::map<std::string, uint64_t> fallback_counts();
void reset_fallback_counts();
// "warn" (the default) or "error"; the environment variable sets the start value.
void set_fallback_mode(const std::string &mode);
std::string fallback_mode();

} // namespace torch_spyre
