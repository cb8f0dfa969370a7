#include "models/fragmentation.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace capsim {

std::vector<TypicalPod> typical_pods(const World& world, double coverage) {
  using Key =
      std::tuple<std::int64_t, std::int32_t, std::int32_t, ResourceId, std::vector<GpuModelId>>;
  std::map<Key, double> counts;
  double total = 0;
  auto add = [&](const PodSpec& p, double weight) {
    std::int32_t milli = 0;
    std::int32_t count = 0;
    ResourceId resource = kNvidiaGpu;
    if (!p.device_requests.empty()) {
      milli = 1000;
      resource = p.device_requests.front().first;
      count = p.device_requests.front().second;
    } else if (p.gpu_count > 0) {
      milli = 1000;
      count = p.gpu_count;
    } else if (p.gpu_milli > 0) {
      milli = p.gpu_milli;
      count = 1;
    }
    std::vector<GpuModelId> models = p.gpu_models;
    std::sort(models.begin(), models.end());
    counts[Key{p.requests.get(kCpu), milli, count, resource, models}] += weight;
    total += weight;
  };
  for (const PodSpec& p : world.pods)
    add(p, 1.0);
  for (const JobSpec& j : world.jobs)
    add(j.pod_template, j.completions);
  std::vector<TypicalPod> all;
  for (const auto& [k, c] : counts) {
    TypicalPod t;
    std::tie(t.cpu_milli, t.gpu_milli, t.gpu_count, t.resource, t.models) = k;
    t.p = c;
    all.push_back(std::move(t));
  }
  // Most popular first; ties by shape (the map order) for determinism.
  std::stable_sort(all.begin(), all.end(),
                   [](const TypicalPod& a, const TypicalPod& b) { return a.p > b.p; });
  std::vector<TypicalPod> out;
  double covered = 0;
  for (auto& t : all) {
    if (total > 0 && covered / total >= coverage) break;
    covered += t.p;
    out.push_back(std::move(t));
  }
  for (auto& t : out)
    t.p /= covered;
  return out;
}

double FragmentationModel::node_fragment_milli(const NodeInfo& node) const {
  if (node.gpus.empty()) return 0;
  bool plain = node.spec->devices.sharing == ShareMode::kExclusive;
  for (const auto& g : node.gpus)
    plain = plain && !g.layout.mig_enabled && !g.reconfiguring;
  return plain ? plain_fragment(node) : unit_fragment(node);
}

double FragmentationModel::plain_fragment(const NodeInfo& node) const {
  double idle = 0;
  for (const auto& g : node.gpus)
    idle += 1000 - g.milli_used;
  if (idle <= 0) return 0;
  const std::int64_t free_cpu = node.free(kCpu);
  double frag = 0;
  for (const TypicalPod& k : typical_) {
    if (k.gpu_count == 0 || k.resource != kNvidiaGpu) {
      // A CPU-only pod, or one asking for a device these whole GPUs do not offer (a MIG
      // instance), can use none of the idle GPU capacity.
      frag += k.p * idle;
      continue;
    }
    if (!k.models.empty() &&
        std::find(k.models.begin(), k.models.end(), node.spec->gpu_model) == k.models.end()) {
      frag += k.p * idle;
      continue;
    }
    std::int32_t fitting = 0;
    double unusable = 0;
    for (const auto& g : node.gpus) {
      const std::int32_t left = 1000 - g.milli_used;
      if (left >= k.gpu_milli) {
        ++fitting;
      } else {
        unusable += left;
      }
    }
    const bool enough_gpu = fitting >= k.gpu_count;
    const bool enough_cpu = free_cpu >= k.cpu_milli;
    frag += k.p * ((enough_gpu && enough_cpu) ? unusable : idle);
  }
  return frag;
}

double FragmentationModel::unit_fragment(const NodeInfo& node) const {
  // Idle capacity: free shares of live units, plus compute slices no MIG instance covers.
  double idle = 0;
  for (const DeviceUnit& u : node.units) {
    if (u.alive()) idle += 1000.0 * u.alloc_weight * (u.replicas - u.used) / u.replicas;
  }
  for (std::size_t g = 0; g < node.gpus.size(); ++g) {
    if (!node.gpus[g].layout.mig_enabled) continue;
    double configured = 0;
    for (const DeviceUnit& u : node.units) {
      if (u.alive() && u.instance >= 0 && u.gpu == g) configured += u.alloc_weight;
    }
    idle += 1000.0 * std::max(0.0, 1.0 - configured);
  }
  if (idle <= 0) return 0;
  const std::int64_t free_cpu = node.free(kCpu);
  double frag = 0;
  for (const TypicalPod& k : typical_) {
    const bool allowed = k.models.empty() || std::find(k.models.begin(), k.models.end(),
                                                       node.spec->gpu_model) != k.models.end();
    if (k.gpu_count == 0 || k.gpu_milli < 1000 || !allowed) {
      frag += k.p * idle;  // CPU-only, GPU-share (not offered here) or a model it may not use
      continue;
    }
    double usable = 0;
    std::int32_t free_units = 0;
    for (const DeviceUnit& u : node.units) {
      if (!u.alive() || u.resource != k.resource) continue;
      free_units += u.replicas - u.used;
      usable += 1000.0 * u.alloc_weight * (u.replicas - u.used) / u.replicas;
    }
    const bool fits = free_units >= k.gpu_count && free_cpu >= k.cpu_milli;
    frag += k.p * (fits ? std::max(0.0, idle - usable) : idle);
  }
  return frag;
}
}  // namespace capsim
