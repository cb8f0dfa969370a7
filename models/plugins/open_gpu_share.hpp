// OpenGpuShare: the GPU filter and device choice of the FGD study's simulator (its
// Open-Gpu-Share plugin, open_gpu_share.go and gpunodeinfo.go), for the fill experiments' profiles
// in place of GpuDevices. Filter: CPU-only pods pass; a node without GPUs, or whose GPU model the
// pod does not allow, is rejected; a pod on one GPU (a share, or one whole GPU) needs a GPU with at
// least its milli left; an n-GPU pod needs n fully free GPUs. Reserve: exclusive (whole-GPU) pods
// take the first fully free GPUs by index; a share pod's GPU is chosen by `gpuSelection`:
//   best   the GPU with the least milli left that fits (lowest index on ties; the peer's default)
//   worst  the one with the most left
//   random uniformly among those that fit (seeded stream "gpu-selection")
//   fgd    the one whose use gives the best FGD score (models/plugins/fgd_score.hpp)
#pragma once

#include <memory>

#include "models/fragmentation.hpp"
#include "models/plugins/plugin_context.hpp"
#include "sim/framework/plugin.hpp"
#include "sim/random.hpp"

namespace capsim::plugins {

enum class GpuSelection : std::uint8_t { kBest, kWorst, kRandom, kFgd };

class OpenGpuShare final : public fw::Plugin,
                           public fw::PreFilterPlugin,
                           public fw::FilterPlugin,
                           public fw::ReservePlugin {
 public:
  OpenGpuShare(PluginContext& ctx, GpuSelection selection);
  std::string_view name() const override { return "OpenGpuShare"; }
  RandomStream* random_stream() override { return &rng_; }
  fw::EventMask events_to_register() const override {
    return fw::kEvAssignedPodDeleted | fw::kEvNodeAdded | fw::kEvNodeChanged;
  }
  fw::Status pre_filter(fw::CycleState& state, const PodSpec& pod,
                        const fw::Snapshot& snap) override;
  fw::Status filter(const fw::CycleState& state, const PodSpec& pod,
                    const NodeInfo& node) const override;
  fw::Status reserve(fw::CycleState& state, const PodSpec& pod, const NodeInfo& node,
                     fw::Placement& placement) override;
  // Whole-GPU pods need that many fully free GPUs; a share needs one GPU with that much left;
  // with the node's GPU model allowed, that is also enough.
  void quick_necessary(const fw::CycleState& state, const PodSpec& pod,
                       fw::QuickRequirement& req) const override;
  bool quick_requirement(const fw::CycleState& state, const PodSpec& pod,
                         fw::QuickRequirement& req) const override;

  GpuSelection selection() const { return selection_; }

 private:
  GpuSelection selection_;
  RandomStream rng_;
  std::shared_ptr<const FragmentationModel> frag_;  // for kFgd
  fw::ReasonId wrong_model_;
  fw::ReasonId no_gpu_;
  fw::ReasonId insufficient_share_;
  fw::ReasonId insufficient_devices_;
};

}  // namespace capsim::plugins
