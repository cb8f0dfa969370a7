#include "models/plugins/gpu_devices.hpp"

#include <algorithm>

namespace capsim::plugins {

GpuDevices::GpuDevices(PluginContext& ctx)
    : wrong_model_(ctx.reasons.intern("node(s) didn't have a GPU model the pod allows")),
      no_gpu_(ctx.reasons.intern("node(s) had no GPUs")),
      insufficient_share_(ctx.reasons.intern("node(s) had no GPU with enough free share")),
      insufficient_devices_(ctx.reasons.intern("node(s) didn't have enough free GPU devices")) {}

fw::Status GpuDevices::pre_filter(fw::CycleState& /*state*/, const PodSpec& pod,
                                  const fw::Snapshot& /*snap*/) {
  if (pod.gpu_count == 0 && pod.gpu_milli == 0) return fw::Status::skip();
  return fw::Status::success();
}

fw::Status GpuDevices::filter(const fw::CycleState& /*state*/, const PodSpec& pod,
                              const NodeInfo& node) const {
  if (node.gpus.empty()) return fw::Status::unresolvable(no_gpu_);
  if (!pod.gpu_models.empty() && std::find(pod.gpu_models.begin(), pod.gpu_models.end(),
                                           node.spec->gpu_model) == pod.gpu_models.end()) {
    return fw::Status::unresolvable(wrong_model_);
  }
  const std::int32_t milli = pod_milli_per_gpu(pod);
  if (milli < 1000) {
    for (const auto& g : node.gpus) {
      if (1000 - g.milli_used >= milli) return fw::Status::success();
    }
    return fw::Status::unschedulable(insufficient_share_);
  }
  if (node.free_whole_gpus < pod.gpu_count) {
    return pod.gpu_count > static_cast<std::int32_t>(node.gpus.size())
               ? fw::Status::unresolvable(insufficient_devices_)
               : fw::Status::unschedulable(insufficient_devices_);
  }
  return fw::Status::success();
}

bool pick_whole_gpus(const NodeInfo& node, std::int32_t count, std::vector<std::uint16_t>& out) {
  out.clear();
  if (count <= 0) return true;
  const auto n = static_cast<std::int32_t>(node.gpus.size());
  if (node.free_whole_gpus < count) return false;
  std::int32_t block = 1;
  while (block < count)
    block *= 2;
  if (block <= n) {
    for (std::int32_t start = 0; start + block <= n; start += block) {
      bool free = true;
      for (std::int32_t i = start; i < start + count && free; ++i) {
        free = node.gpus[static_cast<std::size_t>(i)].milli_used == 0;
      }
      if (free) {
        for (std::int32_t i = start; i < start + count; ++i)
          out.push_back(static_cast<std::uint16_t>(i));
        return true;
      }
    }
  }
  for (std::int32_t i = 0; i < n && static_cast<std::int32_t>(out.size()) < count; ++i) {
    if (node.gpus[static_cast<std::size_t>(i)].milli_used == 0)
      out.push_back(static_cast<std::uint16_t>(i));
  }
  return static_cast<std::int32_t>(out.size()) == count;
}

fw::Status GpuDevices::reserve(fw::CycleState& /*state*/, const PodSpec& pod, const NodeInfo& node,
                               fw::Placement& placement) {
  placement.gpus.clear();
  const std::int32_t milli = pod_milli_per_gpu(pod);
  if (pod.gpu_count == 0 && pod.gpu_milli == 0) return fw::Status::success();
  if (milli < 1000) {
    // Best fit: the GPU with the least room left that still fits; lowest index on ties.
    std::int32_t best = -1;
    std::int32_t best_left = 1001;
    for (std::size_t g = 0; g < node.gpus.size(); ++g) {
      const std::int32_t left = 1000 - node.gpus[g].milli_used;
      if (left >= milli && left < best_left) {
        best_left = left;
        best = static_cast<std::int32_t>(g);
      }
    }
    if (best < 0) return fw::Status::unschedulable(insufficient_share_);
    placement.gpus.push_back(static_cast<std::uint16_t>(best));
    return fw::Status::success();
  }
  if (!pick_whole_gpus(node, pod.gpu_count, placement.gpus)) {
    return fw::Status::unschedulable(insufficient_devices_);
  }
  return fw::Status::success();
}

}  // namespace capsim::plugins
