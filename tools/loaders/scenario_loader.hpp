// Loads a scenario file into everything a run needs: the World (nodes from pools, single nodes
// and Node manifests; pods from traces, manifests and the synthetic generator; priority
// classes), the GPU catalog with the scenario's overrides, the simulation options and the
// scheduler profiles. `--set key=value` overrides are applied to the YAML before it is read, so
// they are validated exactly like the file. Relative paths resolve against the scenario's
// directory; `{data_dir}` in a path expands to the scenario's data_dir (or --data-dir).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/device_model.hpp"
#include "models/fill_experiment.hpp"
#include "models/gpu_catalog.hpp"
#include "models/plugin_registry.hpp"
#include "models/yaml_reader.hpp"
#include "sim/simulation.hpp"
#include "sim/world.hpp"
#include "tools/loaders/file_source.hpp"

namespace capsim {

struct LoadOptions {
  std::vector<std::string> overrides;   // --set key=value, in order
  std::optional<std::uint64_t> seed;    // --seed
  std::optional<std::string> data_dir;  // --data-dir
  bool force = false;                   // --force: lift the soft limits below
};

// Soft limits (docs/cli.md#limits), checked before memory is spent on what they count; a
// scenario above one is refused (exit 65, naming the limit and --force) unless --force is given.
inline constexpr std::int64_t kSoftMaxNodes = 100'000;          // nodes of all pools
inline constexpr std::int64_t kSoftMaxSampleRows = 20'000'000;  // horizon / interval x series

struct Scenario {
  std::string name;
  std::string description;
  std::string path;
  // scenario_digest(): of every file the load read (the scenario, what it extends, traces,
  // manifests, catalogs, device and Kueue configs) and the overrides.
  std::string sha256;
  std::uint64_t seed = 1;
  std::unique_ptr<World> world;
  GpuCatalog catalog;
  RunConfig sim;  // the `simulation:` section, the seed and the energy price
  std::string default_profile = "default-scheduler";
  // The scenario's profiles, then the built-in ones, checked at load (models/plugin_registry.hpp).
  ProfileSet profiles;
  std::vector<std::string> warnings;
  std::string overrides_text;
  // Set for a fill experiment (`experiment: {kind: fill}`): the workload was rewritten for it,
  // and the run is driven by a FillExperiment.
  std::optional<FillPlan> fill;
  // Device sharing: the performance/OOM model's parameters, and MIG re-layouts.
  DeviceModelParams device_params;
  bool mig_reconfiguration = false;
  SimDuration mig_reconfiguration_time = 2 * kMinute;
  SimDuration mig_reconfiguration_interval = kMinute;
};

// Reads every file through `files`; the first form reads the file system.
Scenario load_scenario(const std::string& path, const LoadOptions& options);
Scenario load_scenario(const std::string& path, const LoadOptions& options, FileSource& files);

// SHA-256 of the files' read_log (paths relative to `root`, sizes, each file's SHA-256, in read
// order) followed by one "--set KEY=VALUE" line per override: two loads get one digest exactly
// when they read the same bytes under the same relative names with the same overrides.
std::string scenario_digest(const FileSource& files, const std::string& root,
                            const std::vector<std::string>& overrides);

}  // namespace capsim
