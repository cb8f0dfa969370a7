#include "sim/run/kubelet_admission.hpp"

#include <fmt/format.h>

namespace capsim {

namespace {

// InsufficientResourceError: reason "OutOf<name>", its Error() text as the message.
KubeletAdmission shortfall(const std::string& name, std::int64_t requested, std::int64_t used,
                           std::int64_t capacity) {
  KubeletAdmission a;
  a.reason = "OutOf" + name;
  a.message = fmt::format(
      "Node didn't have enough resource: {}, requested: {}, used: {}, "
      "capacity: {}",
      name, requested, used, capacity);
  return a;
}

}  // namespace

KubeletAdmission kubelet_admit(const Cluster& cluster, PodId pod, NodeId node) {
  const PodSpec& spec = cluster.spec(pod);
  const NodeInfo& n = cluster.node(node);
  const ResourceNames& names = cluster.world().resources;
  if (n.requested[kPods] + 1 > n.allocatable[kPods]) {
    return shortfall(names.name(kPods), 1, n.requested[kPods], n.allocatable[kPods]);
  }
  // Fits' order: cpu, memory, ephemeral-storage, then the scalar resources; requests are
  // sorted by id, and those three have the lowest ids.
  for (const auto& [r, want] : spec.requests.items) {
    if (want <= 0 || r == kPods) continue;
    if (want > n.allocatable[r] - n.requested[r]) {
      return shortfall(names.name(r), want, n.requested[r], n.allocatable[r]);
    }
  }
  KubeletAdmission a;
  a.admitted = true;
  // The device manager: the first free replicas of the resource, in unit order.
  for (const auto& [r, count] : spec.device_requests) {
    std::int32_t left = count;
    for (std::size_t u = 0; u < n.units.size() && left > 0; ++u) {
      const DeviceUnit& unit = n.units[u];
      if (!unit.alive() || unit.dra || unit.resource != r) continue;
      for (std::int32_t free = unit.replicas - unit.used; free > 0 && left > 0; --free, --left)
        a.holdings.push_back(replica_of(n, static_cast<std::uint16_t>(u)));
    }
    if (left > 0) {  // allocatable counted replicas the units do not have free
      return shortfall(names.name(r), count, count - left, count - left);
    }
  }
  return a;
}

}  // namespace capsim
