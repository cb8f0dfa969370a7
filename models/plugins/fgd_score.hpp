// FGDScore: fragmentation gradient descent (Weng et al., USENIX ATC'23; the peer simulator's
// fgd_score.go). A node scores by how much hosting the pod reduces its fragmentation F
// (models/fragmentation.hpp):
//     score = int(100 * sigmoid((F(node) - F(node with the pod)) / 1000))
// truncated to an integer as the peer does, so small changes tie at 50 and ties are broken at
// random by the scheduler. For a GPU-share pod every GPU with room is tried and the best is
// kept; whole-GPU and CPU-only pods change the node as NodeResource.Sub does. No normalisation.
//
// Scoring every feasible node costs several F evaluations per node per pod, so scores are
// memoised: per node for its current state (NodeInfo::generation) and pod shape, and across
// nodes by node state (GPU model, free CPU, sorted milli left per GPU) and pod shape, since
// identical states score identically. The memo never changes a score (a test checks this).
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "models/fragmentation.hpp"
#include "models/plugins/gpu_share.hpp"
#include "models/plugins/plugin_context.hpp"
#include "sim/framework/plugin.hpp"

namespace capsim::plugins {

// int64(sigmoid((before - after) / 1000) * 100).
std::int64_t fgd_score(double frag_before, double frag_after);

struct FgdChoice {
  std::int64_t score = 0;
  int gpu = -1;  // for a share pod: the GPU with the best score (lowest index on ties)
};

// The FGD score of placing `r` on a node state, and for a share pod the GPU it would take.
// Precondition: the request fits (the filters passed).
FgdChoice fgd_choose(const FragmentationModel& model, GpuModelId gpu_model, std::int64_t cpu_left,
                     const GpuLeft& gpus, const ShareRequest& r);

class FgdScore final : public fw::Plugin, public fw::PreScorePlugin, public fw::ScorePlugin {
 public:
  explicit FgdScore(PluginContext& ctx);
  FgdScore(std::shared_ptr<const FragmentationModel> model, bool memoise);
  std::string_view name() const override { return "FGDScore"; }
  fw::Status pre_score(fw::CycleState& state, const PodSpec& pod, std::span<const NodeId> nodes,
                       const fw::Snapshot& snap) override;
  std::int64_t score(const fw::CycleState& state, const PodSpec& pod,
                     const NodeInfo& node) const override;

  const FragmentationModel& model() const { return *model_; }
  std::uint64_t evaluations() const { return evaluations_; }

 private:
  struct StateKey {
    std::uint64_t cpu_and_model;  // cpu_left << 16 | model
    std::uint64_t left_lo;        // sorted milli left, 4 x 16 bits
    std::uint64_t left_hi;
    std::uint32_t shape;
    bool operator==(const StateKey&) const = default;
  };
  struct StateHash {
    std::size_t operator()(const StateKey& k) const;
  };
  struct NodeMemo {
    std::uint64_t generation = 0;     // generation + 1 the scores are for; 0: none
    std::vector<std::int8_t> scores;  // by shape id; -1: not yet computed
  };

  std::int64_t compute(const NodeInfo& node, const ShareRequest& r, std::uint32_t shape) const;

  std::shared_ptr<const FragmentationModel> model_;
  bool memoise_ = true;
  // The pod being scored (set in PreScore): its request and shape id.
  ShareRequest request_;
  std::uint32_t shape_ = 0;
  bool no_requests_ = false;
  const NodeInfo* nodes_base_ = nullptr;  // the cluster's own NodeInfos (scratch copies differ)
  std::size_t node_count_ = 0;
  std::unordered_map<std::uint64_t, std::uint32_t> shapes_;  // (cpu, milli, count) -> id
  mutable std::vector<NodeMemo> memo_;
  mutable std::unordered_map<StateKey, std::int8_t, StateHash> by_state_;
  mutable std::uint64_t evaluations_ = 0;
};

}  // namespace capsim::plugins
