// What the scenario's `maintenance:` section says, and the progress of its windows during a run.
// A window takes its nodes in order, at most `max_parallel` at a time, as the GPU Operator's
// upgrade controller takes nodes for a driver upgrade (maxParallelUpgrades, 1 by default). Each
// node is cordoned and drained the way `kubectl drain` does it (k8s.io/kubectl/pkg/drain): every
// pod but a DaemonSet's is evicted through the Eviction API, which PodDisruptionBudgets may
// refuse (sim/run/disruption_budgets.hpp); refused evictions are retried every 5 s, as kubectl
// retries a 429. Evicted pods terminate with their grace period and are recreated by their
// controller (a Job's, a trace's), as after a preemption. Once the node holds only DaemonSet pods
// it goes down (planned) for `duration`, then comes back and is uncordoned. A node not drained
// within `drain_timeout` is given up and reported as blocked: uncordoned (or, with
// `keep_cordoned_on_timeout`, left cordoned, as the GPU Operator leaves a node it marks
// upgrade-failed); the pods already evicted stay evicted. The Simulation carries the steps
// out (sim/simulation_maintenance.cpp); this file is the bookkeeping.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/node.hpp"
#include "sim/time.hpp"

namespace capsim {

struct MaintenanceWindow {
  std::string name;
  SimTime start = 0;
  std::vector<NodeId> nodes;  // in the order they are taken
  std::int32_t max_parallel = 1;
  SimDuration duration = 0;                   // per node, once drained
  SimDuration drain_timeout = 300 * kSecond;  // 0: wait for ever
  // A drain that times out leaves the node cordoned (the GPU Operator's upgrade-failed state,
  // until someone steps in) instead of returning it to service.
  bool keep_cordoned_on_timeout = false;
  std::string source;  // "file:line"
};

struct MaintenanceConfig {
  std::vector<MaintenanceWindow> windows;
  bool enabled() const { return !windows.empty(); }
};

// kubectl drain's wait between eviction attempts that the API refused (429).
inline constexpr SimDuration kDrainRetry = 5 * kSecond;

class MaintenanceProgress {
 public:
  enum class Step : std::uint8_t { kIdle, kDraining, kWorking };

  explicit MaintenanceProgress(const MaintenanceConfig& config)
      : config_(&config), windows_(config.windows.size()) {}

  const MaintenanceWindow& window(std::size_t w) const { return config_->windows.at(w); }
  // The next node window `w` may take now (max_parallel not reached), or kNoNode.
  NodeId take_next(std::size_t w);
  // Node `node` of window `w` is done (maintained, skipped or given up): its slot frees.
  void release(std::size_t w);
  bool finished(std::size_t w) const;

  struct NodeProgress {
    Step step = Step::kIdle;
    SimTime drain_started = 0;
    std::vector<std::uint32_t> refused;  // pods whose eviction was refused in this drain
  };
  NodeProgress& node(NodeId n);

  // The counts the summary reports.
  std::int64_t drained = 0;     // nodes drained and maintained
  std::int64_t blocked = 0;     // drains given up at their timeout
  std::int64_t skipped = 0;     // nodes down (failed) when their turn came
  std::int64_t evictions = 0;   // pods evicted by drains
  std::int64_t refusals = 0;    // distinct (drain, pod) evictions a budget refused
  double drain_seconds = 0;     // time from cordon to drained, summed over drained nodes
  double gpu_seconds_lost = 0;  // work thrown away by drain evictions (since checkpoints)

 private:
  struct WindowState {
    std::size_t next = 0;
    std::int32_t in_progress = 0;
  };
  const MaintenanceConfig* config_;
  std::vector<WindowState> windows_;
  std::vector<NodeProgress> nodes_;
};

inline NodeId MaintenanceProgress::take_next(std::size_t w) {
  WindowState& s = windows_.at(w);
  const MaintenanceWindow& win = window(w);
  if (s.in_progress >= win.max_parallel || s.next >= win.nodes.size()) return kNoNode;
  ++s.in_progress;
  return win.nodes[s.next++];
}

inline void MaintenanceProgress::release(std::size_t w) {
  --windows_.at(w).in_progress;
}

inline bool MaintenanceProgress::finished(std::size_t w) const {
  const WindowState& s = windows_.at(w);
  return s.in_progress == 0 && s.next >= config_->windows.at(w).nodes.size();
}

inline MaintenanceProgress::NodeProgress& MaintenanceProgress::node(NodeId n) {
  if (nodes_.size() <= n) nodes_.resize(n + 1u);
  return nodes_[n];
}

}  // namespace capsim
