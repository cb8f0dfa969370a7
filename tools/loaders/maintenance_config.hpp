// The scenario's `maintenance:` section: windows that cordon, drain and work on nodes
// (sim/run/maintenance.hpp says what a window does). Every field is validated; the pools and
// nodes named must exist in the finished World.
#pragma once

#include "models/yaml_reader.hpp"
#include "sim/run/maintenance.hpp"
#include "sim/world.hpp"

namespace capsim {

MaintenanceConfig parse_maintenance(const YamlNode& section, const World& world);

}  // namespace capsim
