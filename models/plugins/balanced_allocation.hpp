// NodeResourcesBalancedAllocation: favours nodes whose resource fractions stay close to each
// other after placing the pod. score = (1 - std) * 100 over the listed resources' fractions
// requested/allocatable (each capped at 1); for two resources std = |f1 - f2| / 2. It uses actual
// requests (no cpu/memory defaults) and skips best-effort pods that request nothing, as upstream.
#pragma once

#include <algorithm>
#include <span>
#include <vector>

#include "models/plugins/node_resources_fit.hpp"
#include "sim/framework/node_score_cache.hpp"

namespace capsim::plugins {

class BalancedAllocation final : public fw::Plugin,
                                 public fw::PreScorePlugin,
                                 public fw::ScorePlugin {
 public:
  explicit BalancedAllocation(std::vector<ResourceWeight> resources = {{kCpu, 1}, {kMemory, 1}})
      : resources_(std::move(resources)),
        balances_cpu_memory_only_(
            resources_.size() <= 2 &&
            std::all_of(resources_.begin(), resources_.end(), [](const ResourceWeight& w) {
              return w.resource == kCpu || w.resource == kMemory;
            })) {}
  std::string_view name() const override { return "NodeResourcesBalancedAllocation"; }
  fw::Status pre_score(fw::CycleState& state, const PodSpec& pod, std::span<const NodeId> nodes,
                       const fw::Snapshot& snap) override;
  std::int64_t score(const fw::CycleState& state, const PodSpec& pod,
                     const NodeInfo& node) const override;
  // From the nodes' score copies when it balances cpu and memory only (the default).
  void score_nodes(const fw::CycleState& state, const PodSpec& pod, std::span<const NodeId> nodes,
                   const fw::Snapshot& snap, std::span<std::int64_t> out) const override;

 private:
  std::vector<ResourceWeight> resources_;
  bool balances_cpu_memory_only_;  // at most two entries, each cpu or memory: the score copies do
  // score_nodes' scores by the pod's requests (a cache: what it returns is what it would compute).
  mutable fw::NodeScoreCache cache_;
};

// The scorer on raw vectors, exposed for tests: fractions of requested/allocatable, skipping
// entries with allocatable 0.
std::int64_t balanced_resource_score(std::span<const std::int64_t> requested,
                                     std::span<const std::int64_t> allocatable);

}  // namespace capsim::plugins
