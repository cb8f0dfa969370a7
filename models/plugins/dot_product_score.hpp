// DotProductScore: the FGD study's DotProd baseline, Tetris's alignment heuristic
// (dot_product_score.go with dimExtMethod merge and normMethod max, as the study runs it). The
// node's free [cpu, GPU milli summed over its GPUs] and the pod's request [cpu, GPU milli in
// total] are each divided by the largest node in the trace [128000 millicores, 8000 milli]:
//     score = int(100 * (1 - (free_cpu * req_cpu + free_gpu * req_gpu) / 2))
// so the node whose free resources align least with the request (the fullest) wins. A node with
// less free CPU than the (non-zero) request scores 0. Share pods then take the best-fit GPU.
#pragma once

#include "models/plugins/gpu_share.hpp"
#include "models/plugins/plugin_context.hpp"
#include "sim/framework/plugin.hpp"

namespace capsim::plugins {

std::int64_t dot_product_score(std::int64_t cpu_left, std::int64_t gpu_left_milli,
                               const ShareRequest& r);

class DotProductScore final : public fw::Plugin, public fw::ScorePlugin {
 public:
  explicit DotProductScore(PluginContext& /*ctx*/) {}
  std::string_view name() const override { return "DotProductScore"; }
  std::int64_t score(const fw::CycleState& state, const PodSpec& pod,
                     const NodeInfo& node) const override;
};

}  // namespace capsim::plugins
