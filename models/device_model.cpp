#include "models/device_model.hpp"

#include <algorithm>

namespace capsim {

bool is_computing(const PodState& s) {
  return s.phase == PodPhase::kRunning;
}

namespace {
// Whether `s` holds a replica of unit `unit` (a GPU share held through the unit does not count).
bool holds_replica(const PodState& s, std::uint16_t unit) {
  return std::any_of(s.holdings.begin(), s.holdings.end(),
                     [&](const Holding& h) { return h.unit == unit && !h.pooled(); });
}
}  // namespace

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
        if (!holds_replica(s, static_cast<std::uint16_t>(unit))) continue;
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
                                  const Holding& h) const {
  const PodSpec& s = c.spec(pod);
  // A multi-pod job spread over racks or blocks computes slower (sim/topology.hpp); 1 without
  // a cluster topology.
  const double locality = c.pod(pod).topology.factor;
  if (h.pooled()) return locality * speed_factor(s.gpu_util, h.milli / 1000.0, s.gpu_sm_fraction);
  const Access a = access(c, node, h.unit);
  return locality * speed_factor(s.gpu_util, a.capacity, s.gpu_sm_fraction, a.time_share);
}

double SharingDeviceModel::gpu_busy(const Cluster& c, const NodeInfo& node,
                                    std::uint16_t gpu) const {
  double busy = 0;
  for (PodId p : node.pods) {
    const PodState& st = c.pod(p);
    if (!is_computing(st)) continue;
    const PodSpec& s = c.spec(p);
    std::vector<std::uint16_t> seen;
    for (const Holding& h : st.holdings) {
      const std::uint16_t ui = h.unit;
      const DeviceUnit& u = node.units[ui];
      if (u.gpu != gpu) continue;
      if (h.pooled()) {  // a GPU share: busy for the work it gets done on its part
        busy += s.gpu_util * factor(c, node, p, h);
        continue;
      }
      if (std::find(seen.begin(), seen.end(), ui) != seen.end()) continue;
      seen.push_back(ui);
      // The GPU is busy for the work the pod gets done, u x R of a whole GPU's time; a MIG
      // instance occupies only its share of the GPU while busy.
      const double r = factor(c, node, p, h);
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
  for (const Holding& h : st.holdings) {
    const std::uint16_t ui = h.unit;
    const DeviceUnit& u = node.units[ui];
    const std::int64_t mine = c.pod_memory(pod, node, h);
    if (h.pooled()) {  // a GPU share: its part of the GPU's memory
      const GpuModelInfo* m = c.gpu_model(node);
      if (m != nullptr && mine > m->memory_bytes / 1000 * h.milli) return true;
      continue;
    }
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
      if (holds_replica(o, ui)) total += c.pod_memory(p, node, Holding{ui, 0, 0});
    }
    if (total > u.memory) return true;
  }
  return false;
}

}  // namespace capsim
