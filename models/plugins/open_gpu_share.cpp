#include "models/plugins/open_gpu_share.hpp"

#include <algorithm>

#include "models/plugins/fgd_score.hpp"
#include "models/plugins/gpu_share.hpp"

namespace capsim::plugins {

OpenGpuShare::OpenGpuShare(PluginContext& ctx, GpuSelection selection)
    : selection_(selection),
      rng_(ctx.seed, "gpu-selection"),
      wrong_model_(ctx.reasons.intern("node(s) didn't have a GPU model the pod allows")),
      no_gpu_(ctx.reasons.intern("node(s) had no GPUs")),
      insufficient_share_(ctx.reasons.intern("node(s) had no GPU with enough free share")),
      insufficient_devices_(ctx.reasons.intern("node(s) didn't have enough free GPU devices")) {
  if (selection_ == GpuSelection::kFgd) frag_ = std::make_shared<FragmentationModel>(ctx.world);
}

fw::Status OpenGpuShare::pre_filter(fw::CycleState& /*state*/, const PodSpec& pod,
                                    const fw::Snapshot& /*snap*/) {
  // Pods that ask for no GPU pass the filter on every node.
  if (pod.gpu_count == 0 && pod.gpu_milli == 0) return fw::Status::skip();
  return fw::Status::success();
}

fw::Status OpenGpuShare::filter(const fw::CycleState& /*state*/, const PodSpec& pod,
                                const NodeInfo& node) const {
  if (node.gpus.empty()) return fw::Status::unresolvable(no_gpu_);
  if (!gpu_model_allowed(pod, *node.spec)) return fw::Status::unresolvable(wrong_model_);
  const ShareRequest r = share_request(pod);
  if (r.count == 1) {
    // AllocateGpuId for a one-GPU pod: any GPU with at least its milli left.
    for (const GpuDeviceState& g : node.gpus) {
      if (1000 - g.milli_used >= r.milli) return fw::Status::success();
    }
    return r.is_share() ? fw::Status::unschedulable(insufficient_share_)
                        : fw::Status::unschedulable(insufficient_devices_);
  }
  if (node.free_whole_gpus < r.count) {
    return r.count > static_cast<std::int32_t>(node.gpus.size())
               ? fw::Status::unresolvable(insufficient_devices_)
               : fw::Status::unschedulable(insufficient_devices_);
  }
  return fw::Status::success();
}

void OpenGpuShare::quick_necessary(const fw::CycleState& /*state*/, const PodSpec& pod,
                                   fw::QuickRequirement& req) const {
  if (pod.gpu_count > 0 && pod.gpu_milli == 0) req.whole_gpus = pod.gpu_count;
  if (pod.gpu_count == 0 && pod.gpu_milli > 0) req.share_left = pod.gpu_milli;
}

bool OpenGpuShare::quick_requirement(const fw::CycleState& /*state*/, const PodSpec& pod,
                                     fw::QuickRequirement& req) const {
  if (pod.gpu_count == 0 && pod.gpu_milli == 0) return true;  // passes everywhere
  req.has_gpus = true;
  if (!pod.gpu_models.empty()) req.models = &pod.gpu_models;
  if (pod.gpu_count > 0) {
    req.whole_gpus = pod.gpu_count;
  } else {
    req.share_left = pod.gpu_milli;
  }
  return true;
}

fw::Status OpenGpuShare::reserve(fw::CycleState& /*state*/, const PodSpec& pod,
                                 const NodeInfo& node, fw::Placement& placement) {
  placement.holdings.clear();
  const ShareRequest r = share_request(pod);
  if (!r.wants_gpu()) return fw::Status::success();
  const GpuLeft g = gpu_left(node);
  if (!r.is_share()) {
    std::vector<std::uint16_t> gpus;
    if (!first_free_gpus(g.span(), r.count, gpus)) {
      return fw::Status::unschedulable(insufficient_devices_);
    }
    // Whole GPUs are held through their nvidia.com/gpu device units (one per unshared GPU).
    for (std::uint16_t gi : gpus) {
      const auto it = std::find_if(node.units.begin(), node.units.end(), [&](const DeviceUnit& u) {
        return u.alive() && u.gpu == gi && u.instance < 0 && u.resource == kNvidiaGpu &&
               u.used < u.replicas;
      });
      if (it == node.units.end()) return fw::Status::unschedulable(insufficient_devices_);
      placement.holdings.push_back(
          replica_of(node, static_cast<std::uint16_t>(it - node.units.begin())));
    }
    return fw::Status::success();
  }
  int gpu = -1;
  switch (selection_) {
    case GpuSelection::kBest:
      gpu = best_fit_gpu(g.span(), r.milli);
      break;
    case GpuSelection::kWorst:
      gpu = worst_fit_gpu(g.span(), r.milli);
      break;
    case GpuSelection::kRandom: {
      // Reservoir sampling over the GPUs that fit, in index order, as the peer draws.
      std::uint64_t fitting = 0;
      for (std::size_t i = 0; i < g.n; ++i) {
        if (g.left[i] < r.milli) continue;
        ++fitting;
        if (rng_.below(fitting) == 0) gpu = static_cast<int>(i);
      }
      break;
    }
    case GpuSelection::kFgd:
      gpu = fgd_choose(*frag_, node.spec->gpu_model, node.free(kCpu), g, r).gpu;
      break;
  }
  const std::optional<Holding> share =
      gpu < 0 ? std::nullopt : share_of(node, static_cast<std::uint16_t>(gpu), r.milli);
  if (!share) return fw::Status::unschedulable(insufficient_share_);
  placement.holdings.push_back(*share);
  return fw::Status::success();
}

}  // namespace capsim::plugins
