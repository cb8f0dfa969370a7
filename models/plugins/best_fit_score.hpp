// BestFitScore: the FGD study's BestFit baseline (best_fit_score.go). With the node's free
// [cpu, GPU milli summed over its GPUs], the pod's request [cpu, GPU milli in total], weights
// 0.5/0.5 and the largest node in the trace [128000 millicores, 8000 milli]:
//     raw = int(100 * (1 - sum_i w_i * (free_i - req_i) / max_i))
// then NormalizeScore maps the raw scores of the feasible nodes linearly onto 0..100 (all 0 when
// they are equal), so the node left with the least free resources wins. Share pods take the
// best-fit GPU.
#pragma once

#include <span>

#include "models/plugins/gpu_share.hpp"
#include "models/plugins/plugin_context.hpp"
#include "sim/framework/plugin.hpp"

namespace capsim::plugins {

std::int64_t best_fit_raw_score(std::int64_t cpu_left, std::int64_t gpu_left_milli,
                                const ShareRequest& r);
// The peer's NormalizeScore: (s - lowest) * 100 / (highest - lowest), integer; all 0 if equal.
void min_max_normalize(std::span<std::int64_t> scores);

class BestFitScore final : public fw::Plugin, public fw::ScorePlugin {
 public:
  explicit BestFitScore(PluginContext& /*ctx*/) {}
  std::string_view name() const override { return "BestFitScore"; }
  std::int64_t score(const fw::CycleState& state, const PodSpec& pod,
                     const NodeInfo& node) const override;
  bool has_normalize() const override { return true; }
  void normalize(const fw::CycleState& state, const PodSpec& pod,
                 std::span<std::int64_t> scores) const override;
};

}  // namespace capsim::plugins
