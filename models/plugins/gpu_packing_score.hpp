// GpuPackingScore: the FGD study's GpuPacking baseline (gpu_packing_score.go). The GPUs the pod
// would use are taken from the least milli left up; then, from high to low:
//     only partly used GPUs:        100 - sum(left * 100 / 1000) / 10, at least 50
//     some fully free GPU on a node already in use:  50 - free GPUs used, at least 33
//     a node with every GPU free:   33 - its GPUs, at least its GPU count
// so filling shared GPUs beats opening free GPUs on a used node, which beats opening an empty
// node (smaller first). A CPU-only pod scores 0 everywhere. Share pods take the best-fit GPU.
#pragma once

#include "models/plugins/gpu_share.hpp"
#include "models/plugins/plugin_context.hpp"
#include "sim/framework/plugin.hpp"

namespace capsim::plugins {

std::int64_t gpu_packing_score(const GpuLeft& gpus, const ShareRequest& r);

class GpuPackingScore final : public fw::Plugin, public fw::ScorePlugin {
 public:
  explicit GpuPackingScore(PluginContext& /*ctx*/) {}
  std::string_view name() const override { return "GpuPackingScore"; }
  std::int64_t score(const fw::CycleState& state, const PodSpec& pod,
                     const NodeInfo& node) const override;
};

}  // namespace capsim::plugins
