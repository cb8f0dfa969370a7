// GpuDevices: the device-level decisions NVIDIA's device plugin and the kubelet's device manager
// make in a real cluster, as a Filter and a Reserve plugin.
// Filter: the node has a GPU model the pod allows; it has enough free device units of every
// device resource the pod asks for (nvidia.com/gpu, nvidia.com/gpu.shared, nvidia.com/mig-*),
// counting a whole GPU only if no GPU-share pod sits on it; a GPU-share pod (gpu_milli) needs one
// whole, non-MIG, non-shared GPU with enough of its capacity left.
// Reserve: picks the units.
//   - whole GPUs: an aligned free block when there is one (0-3 or 4-7 for a 4-GPU pod on an
//     8-GPU node, as NVLink-aware preferred allocation tends to), else the lowest free indices;
//   - MIG instances: on the GPU with the fewest free instances first (packing keeps other GPUs
//     empty, so they can be re-laid out), then by GPU and start slot;
//   - time-sliced or MPS replicas: the least-used device first (spreading load), lowest index on
//     ties; a pod asking for two replicas may get two of one device, as the plugin allows;
//   - GPU shares: the fullest GPU that still fits (best fit).
// A request the device plugin would refuse at admission (more than one shared replica with
// failRequestsGreaterThanOne, more than one MPS replica) is marked in the Placement; the pod then
// fails as with UnexpectedAdmissionError.
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
  void quick_necessary(const fw::CycleState& state, const PodSpec& pod,
                       fw::QuickRequirement& req) const override;
  bool quick_requirement(const fw::CycleState& state, const PodSpec& pod,
                         fw::QuickRequirement& req) const override;
  // Reads the pod's device requests, allowed models and GPU share, and the node's devices.
  bool filters_alike(const PodSpec& a, const PodSpec& b) const override {
    return a.device_requests == b.device_requests && a.gpu_models == b.gpu_models &&
           a.gpu_milli == b.gpu_milli;
  }
  fw::Status reserve(fw::CycleState& state, const PodSpec& pod, const NodeInfo& node,
                     fw::Placement& placement) override;

 private:
  // Whether the pod takes `r` through DRA on `node` (KEP-5004): a DeviceClass serves it and the
  // node does not advertise it; DynamicResources allocates it then.
  bool via_dra(ResourceId r, const NodeInfo& node) const {
    return dra_backed_[r] && node.allocatable[r] == 0 && node.spec->allocatable[r] == 0;
  }
  std::array<bool, kMaxResources> dra_backed_{};
  fw::ReasonId wrong_model_;
  fw::ReasonId no_gpu_;
  fw::ReasonId insufficient_share_;
  std::vector<fw::ReasonId> insufficient_devices_;  // per resource id
};

// Picks `count` free whole-GPU units on `node`: an aligned power-of-two block of GPUs if one is
// free, else the lowest free indices. Appends one replica of each; false if fewer are free.
bool pick_whole_gpu_units(const NodeInfo& node, ResourceId resource, std::int32_t count,
                          std::vector<Holding>& out);
}  // namespace capsim::plugins
