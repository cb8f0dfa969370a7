#include "models/plugins/gpu_devices.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace capsim::plugins {

GpuDevices::GpuDevices(PluginContext& ctx)
    : wrong_model_(ctx.reasons.intern("node(s) didn't have a GPU model the pod allows")),
      no_gpu_(ctx.reasons.intern("node(s) had no GPUs")),
      insufficient_share_(ctx.reasons.intern("node(s) had no GPU with enough free share")) {
  insufficient_devices_.resize(kMaxResources);
  for (ResourceId r = 0; r < ctx.world.resources.size(); ++r) {
    insufficient_devices_[r] = ctx.reasons.intern(
        fmt::format("node(s) didn't have enough free {} devices", ctx.world.resources.name(r)));
    dra_backed_[r] = ctx.world.dra.extended_class(r) != kNoClaim;
  }
}

fw::Status GpuDevices::pre_filter(fw::CycleState& /*state*/, const PodSpec& pod,
                                  const fw::Snapshot& /*snap*/) {
  if (pod.device_requests.empty() && !is_share_pod(pod)) return fw::Status::skip();
  return fw::Status::success();
}

void GpuDevices::quick_necessary(const fw::CycleState& /*state*/, const PodSpec& pod,
                                 fw::QuickRequirement& req) const {
  // filter() refuses a node of a model the pod does not allow (or without GPUs), and one with
  // fewer free units of a requested resource.
  if (!pod.gpu_models.empty()) req.models = &pod.gpu_models;
  if (is_share_pod(pod)) return;
  for (const auto& [r, count] : pod.device_requests) {
    // A resource a DeviceClass serves may come through DRA, where no unit is counted.
    if (r == req.device_resource && !dra_backed_[r]) req.units = std::max(req.units, count);
  }
}

bool GpuDevices::quick_requirement(const fw::CycleState& /*state*/, const PodSpec& pod,
                                   fw::QuickRequirement& req) const {
  // A pod asking for at least one unit of the one device resource the copy counts, and nothing
  // else: filter() accepts a node with that many free units (so it has GPUs) of a model the pod
  // allows.
  if (is_share_pod(pod) || pod.device_requests.size() != 1) return false;
  const auto& [r, count] = pod.device_requests.front();
  if (r != req.device_resource || count < 1 || dra_backed_[r]) return false;
  req.units = count;
  if (!pod.gpu_models.empty()) req.models = &pod.gpu_models;
  return true;
}

namespace {
// free_units(node, resource) >= count, stopping as soon as enough are counted (a node with room
// usually shows it in its first units).
bool has_free_units(const NodeInfo& node, ResourceId resource, std::int32_t count) {
  if (count <= 0) return true;
  std::int32_t n = 0;
  for (const DeviceUnit& u : node.units) {
    if (u.resource == resource && whole_unit_free(node, u)) {
      n += u.replicas - u.used;
      if (n >= count) return true;
    }
  }
  return false;
}
}  // namespace

fw::Status GpuDevices::filter(const fw::CycleState& /*state*/, const PodSpec& pod,
                              const NodeInfo& node) const {
  if (node.gpus.empty()) return fw::Status::unresolvable(no_gpu_);
  if (!pod.gpu_models.empty() && std::find(pod.gpu_models.begin(), pod.gpu_models.end(),
                                           node.spec->gpu_model) == pod.gpu_models.end()) {
    return fw::Status::unresolvable(wrong_model_);
  }
  if (is_share_pod(pod)) {
    if (node.spec->devices.sharing != ShareMode::kExclusive) {
      return fw::Status::unresolvable(insufficient_share_);
    }
    for (const auto& g : node.gpus) {
      if (!g.layout.mig_enabled && !g.reconfiguring && 1000 - g.milli_used >= pod.gpu_milli) {
        return fw::Status::success();
      }
    }
    return fw::Status::unschedulable(insufficient_share_);
  }
  for (const auto& [r, count] : pod.device_requests) {
    if (via_dra(r, node)) continue;  // DynamicResources allocates it
    if (!has_free_units(node, r, count)) {
      // More than the node advertises at all: only a reconfiguration could help.
      return count > node.allocatable[r] ? fw::Status::unresolvable(insufficient_devices_[r])
                                         : fw::Status::unschedulable(insufficient_devices_[r]);
    }
  }
  return fw::Status::success();
}

bool pick_whole_gpu_units(const NodeInfo& node, ResourceId resource, std::int32_t count,
                          std::vector<Holding>& out) {
  // The free whole-GPU unit of each GPU, if any.
  const auto ngpus = static_cast<std::int32_t>(node.gpus.size());
  std::vector<std::int32_t> unit_of(static_cast<std::size_t>(ngpus), -1);
  for (std::size_t i = 0; i < node.units.size(); ++i) {
    const DeviceUnit& u = node.units[i];
    if (u.resource == resource && u.instance < 0 && whole_unit_free(node, u)) {
      unit_of[u.gpu] = static_cast<std::int32_t>(i);
    }
  }
  std::int32_t block = 1;
  while (block < count)
    block *= 2;
  if (block <= ngpus) {
    for (std::int32_t start = 0; start + block <= ngpus; start += block) {
      bool free = true;
      for (std::int32_t g = start; g < start + count && free; ++g)
        free = unit_of[static_cast<std::size_t>(g)] >= 0;
      if (free) {
        for (std::int32_t g = start; g < start + count; ++g) {
          out.push_back(
              replica_of(node, static_cast<std::uint16_t>(unit_of[static_cast<std::size_t>(g)])));
        }
        return true;
      }
    }
  }
  std::int32_t got = 0;
  for (std::int32_t g = 0; g < ngpus && got < count; ++g) {
    if (unit_of[static_cast<std::size_t>(g)] >= 0) {
      out.push_back(
          replica_of(node, static_cast<std::uint16_t>(unit_of[static_cast<std::size_t>(g)])));
      ++got;
    }
  }
  return got == count;
}

fw::Status GpuDevices::reserve(fw::CycleState& /*state*/, const PodSpec& pod, const NodeInfo& node,
                               fw::Placement& placement) {
  placement.holdings.clear();
  placement.admission_error.clear();
  if (is_share_pod(pod)) {
    // Best fit: the GPU with the least room left that still fits; lowest index on ties.
    std::int32_t best = -1;
    std::int32_t best_left = 1001;
    for (std::size_t g = 0; g < node.gpus.size(); ++g) {
      const auto& d = node.gpus[g];
      if (d.layout.mig_enabled || d.reconfiguring) continue;
      const std::int32_t left = 1000 - d.milli_used;
      if (left >= pod.gpu_milli && left < best_left) {
        best_left = left;
        best = static_cast<std::int32_t>(g);
      }
    }
    const std::optional<Holding> share =
        best < 0 ? std::nullopt : share_of(node, static_cast<std::uint16_t>(best), pod.gpu_milli);
    if (!share) return fw::Status::unschedulable(insufficient_share_);
    placement.holdings.push_back(*share);
    return fw::Status::success();
  }
  for (const auto& [r, count] : pod.device_requests) {
    if (via_dra(r, node)) continue;  // the extended-resource claim's (DynamicResources)
    // Which kind of unit backs this resource on this node?
    const DeviceUnit* sample = nullptr;
    for (const DeviceUnit& u : node.units) {
      if (u.alive() && !u.dra && u.resource == r) {
        sample = &u;
        break;
      }
    }
    if (sample == nullptr) return fw::Status::unschedulable(insufficient_devices_[r]);
    const bool shared = sample->mode != ShareMode::kExclusive;
    if (shared && count > 1) {
      const auto& dc = node.spec->devices;
      if (sample->mode == ShareMode::kMps || dc.fail_requests_greater_than_one) {
        placement.admission_error =
            "UnexpectedAdmissionError: maximum request size for shared resources is 1";
      }
    }
    if (!shared && sample->instance < 0) {
      if (!pick_whole_gpu_units(node, r, count, placement.holdings)) {
        return fw::Status::unschedulable(insufficient_devices_[r]);
      }
      continue;
    }
    // MIG instances (pack) or shared replicas (spread): rank the candidate units.
    std::vector<std::uint16_t> cand;
    std::vector<std::int32_t> used(node.units.size(), 0);
    for (std::size_t i = 0; i < node.units.size(); ++i) {
      const DeviceUnit& u = node.units[i];
      if (u.resource == r && u.alive() && !u.dra && u.used < u.replicas)
        cand.push_back(static_cast<std::uint16_t>(i));
    }
    std::vector<std::int32_t> gpu_free(node.gpus.size(), 0);  // free MIG instances per GPU
    for (const DeviceUnit& u : node.units) {
      if (u.alive() && u.instance >= 0 && u.used == 0) gpu_free[u.gpu]++;
    }
    std::int32_t got = 0;
    while (got < count) {
      std::int32_t best = -1;
      for (std::uint16_t i : cand) {
        const DeviceUnit& u = node.units[i];
        if (u.used + used[i] >= u.replicas) continue;
        if (best < 0) {
          best = i;
          continue;
        }
        const DeviceUnit& b = node.units[static_cast<std::size_t>(best)];
        bool better = false;
        if (shared) {
          // Least used first.
          const double fu = static_cast<double>(u.used + used[i]) / u.replicas;
          const double fb =
              static_cast<double>(b.used + used[static_cast<std::size_t>(best)]) / b.replicas;
          better = fu < fb;
        } else {
          // The GPU with the fewest free instances first.
          better = gpu_free[u.gpu] < gpu_free[b.gpu];
        }
        if (better) best = i;
      }
      if (best < 0) return fw::Status::unschedulable(insufficient_devices_[r]);
      used[static_cast<std::size_t>(best)]++;
      if (!shared) gpu_free[node.units[static_cast<std::size_t>(best)].gpu]--;
      placement.holdings.push_back(replica_of(node, static_cast<std::uint16_t>(best)));
      ++got;
    }
  }
  return fw::Status::success();
}

}  // namespace capsim::plugins
