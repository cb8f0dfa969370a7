// A pool's `spot:` field (discount, reclaim rate, notice, return_after) and the top-level `spot:`
// section (the spot seed, a reclaim trace), read into the run's SpotConfig. The discount is
// applied here: every node of a spot pool costs its on-demand price x (1 - discount). Every field
// is validated (unknown ones are errors with did-you-mean); trace nodes must be in a spot pool.
// The reclaim trace is a CSV file (docs/spot.md, "Reclaim traces"): time, node, notice,
// return_after (empty: the node does not come back).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/yaml_reader.hpp"
#include "sim/run/spot.hpp"
#include "sim/world.hpp"
#include "tools/loaders/csv_reader.hpp"
#include "tools/loaders/file_source.hpp"

namespace capsim {

// The spot pools (pool name, its `spot:` node, in scenario order) and the optional top-level
// section; `run_seed` derives the default seed ("spot" stream of the run seed). Changes the
// spot pools' node prices in `world`.
SpotConfig parse_spot(const std::vector<std::pair<std::string, YamlNode>>& pools,
                      const std::optional<YamlNode>& section, World& world, std::uint64_t run_seed,
                      FileSource& files,
                      const std::function<std::string(const YamlNode&)>& resolve);

// A reclaim trace, checked against `world`'s nodes and `config`'s spot pools; rows in time order.
std::vector<TracedReclaim> read_reclaim_trace(const CsvFile& csv, const World& world,
                                              const SpotConfig& config);

}  // namespace capsim
