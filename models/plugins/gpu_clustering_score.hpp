// GpuClusteringScore: the FGD study's GpuClustering baseline (gpu_clustering_score.go). Pods are
// tagged by their GPU request ("share-gpu", "1-gpu", "2-gpu", ...); a node's tags are those of
// the GPU pods on it. With left = the node's GPU milli left and base = 25 * (8000 - left) / 8000
// (integer division, so fuller and smaller nodes score higher within a band):
//     node has only the pod's tag          75 + base
//     node has the pod's tag among others  50 + base
//     node has no GPU pod                  25 + base
//     node has only other tags              0 + base
// A CPU-only pod scores 0 everywhere (ties broken at random). Share pods take the best-fit GPU.
#pragma once

#include <vector>

#include "models/plugins/plugin_context.hpp"
#include "sim/framework/plugin.hpp"

namespace capsim::plugins {

// The pod's tag: -1 no GPU, 0 a GPU share, n > 0 whole GPUs.
int gpu_affinity_tag(const PodSpec& pod);
// `node_tags`: the distinct tags of the node's GPU pods.
std::int64_t gpu_clustering_score(int pod_tag, const std::vector<int>& node_tags,
                                  std::int64_t gpu_left_milli);

class GpuClusteringScore final : public fw::Plugin, public fw::ScorePlugin {
 public:
  explicit GpuClusteringScore(PluginContext& ctx) : world_(&ctx.world) {}
  std::string_view name() const override { return "GpuClusteringScore"; }
  std::int64_t score(const fw::CycleState& state, const PodSpec& pod,
                     const NodeInfo& node) const override;

 private:
  const World* world_;
  mutable std::vector<int> tags_;
};

}  // namespace capsim::plugins
