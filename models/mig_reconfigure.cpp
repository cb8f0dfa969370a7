#include "models/mig_reconfigure.hpp"

#include <algorithm>
#include <map>

#include "models/mig_layout.hpp"

namespace capsim {

std::vector<Relayout> PendingDemandReconfigurer::plan(const Cluster& cluster,
                                                      const std::vector<PodId>& pending) {
  const World& w = cluster.world();
  // 1. Demand per MIG resource among waiting pods.
  std::map<ResourceId, std::int64_t> demand;
  for (PodId p : pending) {
    for (const auto& [r, c] : cluster.spec(p).device_requests) {
      if (w.resources.name(r).rfind("nvidia.com/mig-", 0) == 0) demand[r] += c;
    }
  }
  if (demand.empty()) return {};
  // 2. Minus what is free already, anywhere (and what re-layouts in progress will bring).
  for (const NodeInfo& n : cluster.nodes()) {
    for (const DeviceUnit& u : n.units) {
      if (u.alive() && !u.dra && demand.count(u.resource))
        demand[u.resource] -= u.replicas - u.used;
    }
  }
  for (auto it = demand.begin(); it != demand.end();)
    it = it->second > 0 ? std::next(it) : demand.erase(it);
  if (demand.empty()) return {};
  // 3. Idle GPUs on mixed-strategy MIG nodes, re-laid out toward the unmet demand.
  std::vector<Relayout> out;
  for (const NodeInfo& n : cluster.nodes()) {
    if (demand.empty()) break;
    if (n.spec->devices.mig_strategy != MigStrategy::kMixed || n.spec->gpu_model == kNoGpuModel)
      continue;
    const GpuModelInfo& m = w.gpu_models[n.spec->gpu_model];
    for (std::uint16_t g = 0; g < n.gpus.size() && !demand.empty(); ++g) {
      const GpuDeviceState& gs = n.gpus[g];
      if (gs.holders != 0 || gs.reconfiguring) continue;
      // The profiles wanted that this model offers, largest first.
      std::vector<std::pair<std::uint16_t, ResourceId>> wanted;
      for (std::uint16_t pi = 0; pi < m.mig_profiles.size(); ++pi) {
        const auto r = w.resources.find(m.mig_profiles[pi].resource_name);
        if (r && demand.count(*r)) wanted.emplace_back(pi, *r);
      }
      if (wanted.empty()) continue;
      std::stable_sort(wanted.begin(), wanted.end(), [&](const auto& a, const auto& b) {
        return m.mig_profiles[a.first].compute_slices > m.mig_profiles[b.first].compute_slices;
      });
      ProfileMultiset layout;
      std::map<ResourceId, std::int64_t> gave;
      for (const auto& [pi, r] : wanted) {
        while (gave[r] < demand[r]) {
          ProfileMultiset t = layout;
          t.push_back(pi);
          if (!place_profiles(m, t).ok()) break;
          layout = t;
          gave[r]++;
        }
      }
      if (layout.empty()) continue;
      // Fill what is left with the smallest ordinary profile.
      std::int32_t smallest = -1;
      for (std::uint16_t pi = 0; pi < m.mig_profiles.size(); ++pi) {
        const auto& p = m.mig_profiles[pi];
        if (p.media_extensions) continue;
        if (smallest < 0 ||
            p.memory_slices < m.mig_profiles[static_cast<std::size_t>(smallest)].memory_slices ||
            (p.memory_slices == m.mig_profiles[static_cast<std::size_t>(smallest)].memory_slices &&
             p.compute_slices >
                 m.mig_profiles[static_cast<std::size_t>(smallest)].compute_slices)) {
          smallest = pi;
        }
      }
      while (smallest >= 0) {
        ProfileMultiset t = layout;
        t.push_back(static_cast<std::uint16_t>(smallest));
        if (!place_profiles(m, t).ok()) break;
        layout = t;
      }
      auto placed = place_profiles(m, layout);
      if (!placed) continue;
      if (gs.layout == *placed) continue;  // already so
      for (const auto& [r, k] : gave)
        demand[r] -= k;
      for (auto it = demand.begin(); it != demand.end();)
        it = it->second > 0 ? std::next(it) : demand.erase(it);
      out.push_back(Relayout{n.id, g, *placed});
    }
  }
  return out;
}

}  // namespace capsim
