// What the scenario's `failures:` section says, as plain data: failure rates by cause for the
// nodes of a pool and/or a GPU model, with a repair-time draw each, and a failure trace to
// replay. The process that turns it into failures during a run is FailureProcess
// (sim/run/failure_process.hpp); what a failure does is NodeHealth's and the Simulation's. Empty
// (the default): no failures, and a run is exactly what it was without this section.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/node.hpp"
#include "sim/random.hpp"
#include "sim/time.hpp"

namespace capsim {

// What failed. GPU-scoped causes take one GPU down; node-scoped ones (nic, host) the node.
enum class FailureCause : std::uint8_t { kGpu, kHbm, kNvlink, kNic, kHost };
inline constexpr std::size_t kFailureCauses = 5;
inline bool node_scoped(FailureCause c) {
  return c == FailureCause::kNic || c == FailureCause::kHost;
}
// "gpu", "hbm", "nvlink", "nic", "host": the names the scenario, traces and metrics use.
std::string_view cause_name(FailureCause c);

// A repair time in seconds, drawn from the failure process's own stream.
using RepairDraw = std::function<double(RandomStream&)>;

// Failures of one cause on the matching nodes: each GPU (GPU-scoped causes) or node (node-scoped
// ones) fails at `per_day` events per day of being up, a Poisson process (exponential times
// between failures), and is repaired after a drawn time.
struct FailureRate {
  std::string pool;                    // "": any pool
  GpuModelId gpu_model = kNoGpuModel;  // kNoGpuModel: any model
  FailureCause cause = FailureCause::kGpu;
  double per_day = 0;  // events per GPU-day or node-day
  RepairDraw repair;
  std::string source;  // "file:line"
};

// One row of a failure trace: at `time`, `node` (its GPU `gpu`, or the whole node for -1) fails
// for `repair`.
struct TracedFailure {
  SimTime time = 0;
  NodeId node = kNoNode;
  std::int32_t gpu = -1;
  FailureCause cause = FailureCause::kHost;
  SimDuration repair = 0;
  std::string source;
};

struct FailureConfig {
  std::uint64_t seed = 0;  // the failure streams' master seed (the loader derives a default)
  std::vector<FailureRate> rates;
  std::vector<TracedFailure> trace;  // in time order
  bool enabled() const { return !rates.empty() || !trace.empty(); }
};

}  // namespace capsim
