#include "models/device_model.hpp"

#include <algorithm>

namespace capsim {

bool is_computing(const PodState& s) {
  return s.phase == PodPhase::kRunning;
}

double SharingDeviceModel::speed_factor(double util, double capacity, double sm_fraction,
                                        double time_share) {
  if (util <= 0) return 1.0;
  if (capacity <= 0 || time_share <= 0) return 0.0;
  // GPU phases stretch by max(1, s / c) for the device's width and by 1 / share for the time
  // they get on it.
  const double stretch = std::max(1.0, sm_fraction / capacity) / time_share;
  return 1.0 / ((1.0 - util) + util * stretch);
}

SharingDeviceModel::Access SharingDeviceModel::access(const Cluster& c, const NodeInfo& node,
                                                      std::int32_t unit) const {
  const DeviceUnit& u = node.units[static_cast<std::size_t>(unit)];
  // Pods sharing one DRA resource claim share its devices with no isolation, as time-slicing
  // (CUDA time-slices between the processes of all of them); alone, a pod has the device.
  switch (u.dra ? ShareMode::kTimeSliced : u.mode) {
    case ShareMode::kExclusive:
      return {u.capacity, 1.0};
    case ShareMode::kMps:
      // Clients run side by side, each on at most its thread cap of the SMs.
      return {u.capacity * u.thread_cap, 1.0};
    case ShareMode::kTimeSliced: {
      // CUDA time-slices evenly between the processes that want the device; switching between
      // them costs the context-switch overhead once there are two or more.
      double sum_util = 0;
      int k = 0;
      for (PodId p : node.pods) {
        const PodState& s = c.pod(p);
        if (!is_computing(s)) continue;
        if (std::find(s.units.begin(), s.units.end(), static_cast<std::uint16_t>(unit)) ==
            s.units.end())
          continue;
        sum_util += c.spec(p).gpu_util;
        ++k;
      }
      double share = sum_util > 1.0 ? 1.0 / sum_util : 1.0;
      if (k >= 2) share *= 1.0 - p_.context_switch_overhead;
      return {u.capacity, share};
    }
  }
  return {u.capacity, 1.0};
}

double SharingDeviceModel::factor(const Cluster& c, const NodeInfo& node, PodId pod,
                                  std::int32_t unit) const {
  const PodSpec& s = c.spec(pod);
  if (unit < 0) return speed_factor(s.gpu_util, s.gpu_milli / 1000.0, s.gpu_sm_fraction);
  const Access a = access(c, node, unit);
  return speed_factor(s.gpu_util, a.capacity, s.gpu_sm_fraction, a.time_share);
}

double SharingDeviceModel::gpu_busy(const Cluster& c, const NodeInfo& node,
                                    std::uint16_t gpu) const {
  double busy = 0;
  for (PodId p : node.pods) {
    const PodState& st = c.pod(p);
    if (!is_computing(st)) continue;
    const PodSpec& s = c.spec(p);
    if (st.units.empty()) {
      if (!st.gpus.empty() && st.gpus.front() == gpu) busy += s.gpu_util * factor(c, node, p, -1);
      continue;
    }
    std::vector<std::uint16_t> seen;
    for (std::uint16_t ui : st.units) {
      const DeviceUnit& u = node.units[ui];
      if (u.gpu != gpu || std::find(seen.begin(), seen.end(), ui) != seen.end()) continue;
      seen.push_back(ui);
      // The GPU is busy for the work the pod gets done, u x R of a whole GPU's time; a MIG
      // instance occupies only its share of the GPU while busy.
      const double r = factor(c, node, p, ui);
      const double scale = u.instance >= 0 && u.capacity > 0 ? u.alloc_weight / u.capacity : 1.0;
      busy += s.gpu_util * r * scale;
    }
  }
  return std::min(1.0, busy);
}

bool SharingDeviceModel::out_of_memory(const Cluster& c, PodId pod) const {
  const PodState& st = c.pod(pod);
  if (st.node == kNoNode) return false;
  const NodeInfo& node = c.node(st.node);
  if (st.units.empty()) {  // a GPU share: its part of the GPU's memory
    const GpuModelInfo* m = c.gpu_model(node);
    const PodSpec& s = c.spec(pod);
    return m != nullptr && c.pod_memory(pod, nullptr) > m->memory_bytes / 1000 * s.gpu_milli;
  }
  for (std::uint16_t ui : st.units) {
    const DeviceUnit& u = node.units[ui];
    const std::int64_t mine = c.pod_memory(pod, &u);
    if (u.mode != ShareMode::kTimeSliced && !u.dra) {
      if (mine > u.memory_limit) return true;
      continue;
    }
    // No isolation: everyone already at peak on this device, plus this pod.
    std::int64_t total = mine;
    for (PodId p : node.pods) {
      if (p == pod) continue;
      const PodState& o = c.pod(p);
      if (!is_computing(o) || !o.memory_peaked) continue;
      if (std::find(o.units.begin(), o.units.end(), ui) != o.units.end())
        total += c.pod_memory(p, &u);
    }
    if (total > u.memory) return true;
  }
  return false;
}

}  // namespace capsim
