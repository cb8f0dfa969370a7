// NodeResourcesFit: the Filter that a node has room for the pod's requests (pods, cpu, memory,
// ephemeral-storage, every extended resource it asks for), and the Score strategies
// LeastAllocated, MostAllocated and RequestedToCapacityRatio with kube-scheduler's integer
// formulas. As upstream, scoring uses cpu/memory defaults (100m / 200Mi) for pods that request
// none, and skips an extended resource the pod does not request, so nvidia.com/gpu counts only
// when listed in the strategy's resources and requested by the pod.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "models/plugins/plugin_context.hpp"
#include "sim/framework/node_score_cache.hpp"
#include "sim/framework/plugin.hpp"

namespace capsim::plugins {

enum class ScoringStrategy : std::uint8_t {
  kLeastAllocated,
  kMostAllocated,
  kRequestedToCapacityRatio
};

struct ResourceWeight {
  ResourceId resource = kCpu;
  std::int64_t weight = 1;
};

struct UtilizationShapePoint {
  std::int64_t utilization = 0;  // 0..100
  std::int64_t score = 0;        // 0..10 (MaxCustomPriorityScore)
};

struct NodeResourcesFitArgs {
  ScoringStrategy strategy = ScoringStrategy::kLeastAllocated;
  std::vector<ResourceWeight> resources = {{kCpu, 1}, {kMemory, 1}};
  std::vector<UtilizationShapePoint> shape;  // RequestedToCapacityRatio only
  std::vector<ResourceId> ignored_resources;
};

// The per-resource formulas, exposed for tests. `requested` includes the pod.
std::int64_t least_requested_score(std::int64_t requested, std::int64_t capacity);
std::int64_t most_requested_score(std::int64_t requested, std::int64_t capacity);
// helper.BuildBrokenLinearFunction over a shape whose scores are already scaled to 0..100.
std::int64_t broken_linear(const std::vector<UtilizationShapePoint>& shape, std::int64_t p);

class NodeResourcesFit final : public fw::Plugin,
                               public fw::FilterPlugin,
                               public fw::PreScorePlugin,
                               public fw::ScorePlugin {
 public:
  NodeResourcesFit(PluginContext& ctx, NodeResourcesFitArgs args);
  std::string_view name() const override { return "NodeResourcesFit"; }
  fw::EventMask events_to_register() const override {
    return fw::kEvAssignedPodDeleted | fw::kEvNodeAdded | fw::kEvNodeChanged;
  }
  fw::Status filter(const fw::CycleState& state, const PodSpec& pod,
                    const NodeInfo& node) const override;
  // Reads the pod's requests and the node's allocatable and requested.
  bool filters_alike(const PodSpec& a, const PodSpec& b) const override {
    return a.requests.items == b.requests.items;
  }
  fw::Status pre_score(fw::CycleState& state, const PodSpec& pod, std::span<const NodeId> nodes,
                       const fw::Snapshot& snap) override;
  // From the nodes' score copies when it scores cpu and memory only (the default).
  void score_nodes(const fw::CycleState& state, const PodSpec& pod, std::span<const NodeId> nodes,
                   const fw::Snapshot& snap, std::span<std::int64_t> out) const override;
  std::int64_t score(const fw::CycleState& state, const PodSpec& pod,
                     const NodeInfo& node) const override;
  // A pod slot and the requests of the copy's resources (cpu, memory, its device) it checks.
  void quick_necessary(const fw::CycleState& state, const PodSpec& pod,
                       fw::QuickRequirement& req) const override;
  // Exact when the pod asks only for resources the copy has: those and a pod slot.
  bool quick_requirement(const fw::CycleState& state, const PodSpec& pod,
                         fw::QuickRequirement& req) const override;
  const NodeResourcesFitArgs& args() const { return args_; }

 private:
  // The strategy's weighted mean over args_.resources, `alloc_req(i)` giving entry i's
  // (allocatable, requested): score() from a NodeInfo, score_nodes() from a score copy.
  template <typename AllocReqOf>
  std::int64_t weighted_score(AllocReqOf alloc_req) const;
  // The strategy's mean of the weighted per-resource scores (weighted_score's last step).
  std::int64_t weighted_mean(std::int64_t node_score, std::int64_t weight_sum) const;

  NodeResourcesFitArgs args_;
  bool scores_cpu_memory_only_ = false;              // every args_.resources entry is cpu or memory
  std::vector<UtilizationShapePoint> scaled_shape_;  // scores x10
  std::vector<fw::ReasonId> insufficient_;           // "Insufficient <resource>" per id
  fw::ReasonId too_many_pods_ = 0;
  std::array<bool, kMaxResources> ignored_{};
  // Extended resources a DeviceClass serves through DRA (KEP-5004): not checked on a node that
  // does not advertise them (DynamicResources allocates them there).
  std::array<bool, kMaxResources> dra_backed_{};
  // score_nodes' scores by the pod's requests (a cache: what it returns is what it would compute).
  mutable fw::NodeScoreCache cache_;
};

// Shared by NodeResourcesFit and BalancedAllocation: the (allocatable, requested) pair a scorer
// sees for one resource, or (0, 0) when the resource is skipped.
struct AllocReq {
  std::int64_t allocatable = 0;
  std::int64_t requested = 0;
};
AllocReq allocatable_and_requested(const NodeInfo& node, ResourceId r, std::int64_t pod_request,
                                   bool use_requested);
// A pod's request for `r` as scoring sees it: with cpu/memory defaults unless use_requested.
std::int64_t pod_score_request(const PodSpec& pod, ResourceId r, bool use_requested);

}  // namespace capsim::plugins
