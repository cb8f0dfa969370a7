// What a plugin may use when it is built: the World (names, GPU models), the reason table to
// intern its messages into, and the run's seed for plugins that draw random numbers.
#pragma once

#include <cstdint>

#include "sim/framework/status.hpp"
#include "sim/world.hpp"

namespace capsim {

struct PluginContext {
  const World& world;
  fw::ReasonTable& reasons;
  std::uint64_t seed = 0;
};

}  // namespace capsim
