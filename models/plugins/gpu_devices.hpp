// GpuDevices: capsim's device-level view of GPUs, the part the kubelet's device manager and the
// NVIDIA device plugin decide in a real cluster. Filter: the node has a GPU model the pod allows,
// and (for GPU-share pods) one GPU with enough of its capacity left. Reserve: picks the GPU
// indices. Whole-GPU pods take an aligned block when one is free (0-3 or 4-7 for a 4-GPU pod on an
// 8-GPU node, as NVLink-aware preferred allocation tends to), otherwise the lowest free indices;
// share pods take the fullest GPU that still fits (best fit).
#pragma once

#include "models/plugins/plugin_context.hpp"
#include "sim/framework/plugin.hpp"

namespace capsim::plugins {

class GpuDevices final : public fw::Plugin,
                         public fw::PreFilterPlugin,
                         public fw::FilterPlugin,
                         public fw::ReservePlugin {
 public:
  explicit GpuDevices(PluginContext& ctx);
  std::string_view name() const override { return "GpuDevices"; }
  fw::EventMask events_to_register() const override {
    return fw::kEvAssignedPodDeleted | fw::kEvNodeAdded | fw::kEvNodeChanged;
  }
  fw::Status pre_filter(fw::CycleState& state, const PodSpec& pod,
                        const fw::Snapshot& snap) override;
  fw::Status filter(const fw::CycleState& state, const PodSpec& pod,
                    const NodeInfo& node) const override;
  fw::Status reserve(fw::CycleState& state, const PodSpec& pod, const NodeInfo& node,
                     fw::Placement& placement) override;

  fw::QuickChecks quick_checks() const override { return {false, true}; }

 private:
  fw::ReasonId wrong_model_;
  fw::ReasonId no_gpu_;
  fw::ReasonId insufficient_share_;
  fw::ReasonId insufficient_devices_;
};

// Picks `count` free GPUs (milli_used == 0) on `node`: an aligned power-of-two block if one is
// free, else the lowest free indices. Returns false if fewer than `count` are free.
bool pick_whole_gpus(const NodeInfo& node, std::int32_t count, std::vector<std::uint16_t>& out);

}  // namespace capsim::plugins
