#include "models/fragmentation.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <tuple>

#include "sim/check.hpp"

namespace capsim {

namespace {

// The peer's grouping key (simontype.PodResource): cpu, share per GPU, GPU count, model list.
struct ShapeKey {
  std::int64_t cpu;
  std::int32_t milli;
  std::int32_t count;
  ResourceId resource;
  std::vector<GpuModelId> models;
  auto operator<=>(const ShapeKey&) const = default;
};

ShapeKey shape_of(const PodSpec& p) {
  ShapeKey k;
  const std::int64_t cpu = p.requests.get(kCpu);
  k.cpu = cpu != 0 ? cpu : kDefaultMilliCpuRequest;  // schedulerutil.GetNonzeroRequests
  k.resource = kNvidiaGpu;
  if (!p.device_requests.empty()) {
    // nvidia.com/gpu, a MIG resource, or a time-sliced/MPS replica: whole devices of it.
    k.milli = 1000;
    k.resource = p.device_requests.front().first;
    k.count = static_cast<std::int32_t>(p.device_requests.front().second);
  } else if (p.gpu_count > 0) {
    k.milli = 1000;
    k.count = p.gpu_count;
  } else if (p.gpu_milli > 0) {
    k.milli = p.gpu_milli;
    k.count = 1;
  } else {
    k.milli = 0;
    k.count = 0;
  }
  k.models = p.gpu_models;
  return k;
}

std::string models_text(const World& w, const std::vector<GpuModelId>& models) {
  std::string s;
  for (std::size_t i = 0; i < models.size(); ++i) {
    if (i) s += '|';
    s += models[i] < w.gpu_models.size() ? w.gpu_models[models[i]].name : std::to_string(models[i]);
  }
  return s;
}

}  // namespace

std::vector<TypicalPod> typical_pods(const World& world, int coverage_percent) {
  std::map<ShapeKey, double> counts;
  double total = 0;
  auto add = [&](const PodSpec& p, double weight) {
    counts[shape_of(p)] += weight;
    total += weight;
  };
  for (const PodSpec& p : world.pods) {
    if (!p.resampled) add(p, 1.0);
  }
  for (const JobSpec& j : world.jobs)
    add(j.pod_template, j.completions);

  struct Entry {
    TypicalPod t;
    std::string models;
  };
  std::vector<Entry> all;
  all.reserve(counts.size());
  for (const auto& [k, c] : counts) {
    Entry e;
    e.t.cpu_milli = k.cpu;
    e.t.gpu_milli = k.milli;
    e.t.gpu_count = k.count;
    e.t.resource = k.resource;
    e.t.models = k.models;
    e.t.p = c;
    e.models = models_text(world, k.models);
    all.push_back(std::move(e));
  }
  // sort.Sort(sort.Reverse(TargetPodList)): most popular first; equal counts by the pod shape,
  // larger first (cpu, then share, count, model list as text).
  std::sort(all.begin(), all.end(), [](const Entry& a, const Entry& b) {
    if (a.t.p != b.t.p) return a.t.p > b.t.p;
    return std::tie(a.t.cpu_milli, a.t.gpu_milli, a.t.gpu_count, a.models, a.t.resource) >
           std::tie(b.t.cpu_milli, b.t.gpu_milli, b.t.gpu_count, b.models, b.t.resource);
  });
  // Take shapes until they cover the threshold: `cum < threshold * total / 100` keeps adding.
  const double expected = static_cast<double>(coverage_percent) * total / 100.0;
  std::vector<TypicalPod> out;
  double covered = 0;
  for (auto& e : all) {
    if (covered >= expected) break;
    covered += e.t.p;
    out.push_back(std::move(e.t));
  }
  for (auto& t : out)
    t.p /= covered;
  return out;
}

FragmentationModel::FragmentationModel(const World& world, int coverage_percent)
    : FragmentationModel(typical_pods(world, coverage_percent), world.gpu_models.size()) {}

FragmentationModel::FragmentationModel(std::vector<TypicalPod> typical, std::size_t model_count)
    : typical_(std::move(typical)) {
  for (const TypicalPod& t : typical_) {
    for (GpuModelId m : t.models)
      model_count = std::max<std::size_t>(model_count, std::size_t{m} + 1);
  }
  views_.reserve(model_count);
  for (std::size_t m = 0; m < model_count; ++m)
    views_.push_back(make_view(static_cast<GpuModelId>(m)));
}

FragmentationModel::ModelView FragmentationModel::make_view(GpuModelId model) const {
  ModelView v;
  std::map<std::tuple<std::int32_t, std::int32_t, std::int64_t>, double> needs;
  for (const TypicalPod& t : typical_) {
    const bool allowed =
        t.models.empty() || std::find(t.models.begin(), t.models.end(), model) != t.models.end();
    // GetNodePodFrag: a CPU-only pod (xl_satisfied / xr_lack_cpu) or one the node's model
    // excludes (no_access) can use none of the idle GPU capacity.
    // A pod asking for a device whole GPUs do not offer (a MIG instance, a renamed replica)
    // cannot use them either.
    if (t.gpu_milli == 0 || !allowed || t.resource != kNvidiaGpu) {
      v.unusable_p += t.p;
    } else {
      needs[{t.gpu_milli, t.gpu_count, t.cpu_milli}] += t.p;
    }
  }
  for (const auto& [k, p] : needs)
    v.needs.push_back(Need{std::get<0>(k), std::get<1>(k), std::get<2>(k), p});
  return v;
}

double FragmentationModel::fragment_milli(GpuModelId model, std::int64_t cpu_left,
                                          std::span<const std::int32_t> left) const {
  std::int64_t idle = 0;
  for (std::int32_t l : left)
    idle += l;
  if (idle <= 0) return 0;
  ModelView fallback;
  const ModelView* v = nullptr;
  if (model < views_.size()) {
    v = &views_[model];
  } else {
    fallback = make_view(model);
    v = &fallback;
  }
  const auto idle_d = static_cast<double>(idle);
  double frag = v->unusable_p * idle_d;
  for (const Need& k : v->needs) {
    // CanNodeHostPodOnGpuMemory: `count` GPUs with at least `milli` left each.
    std::int32_t fitting = 0;
    std::int64_t below = 0;
    for (std::int32_t l : left) {
      if (l >= k.milli) {
        ++fitting;
      } else {
        below += l;
      }
    }
    // q3_satisfied: only the GPUs too small for k are fragment; q1/q2/q4: all idle capacity.
    const bool satisfied = fitting >= k.count && cpu_left >= k.cpu;
    frag += k.p * (satisfied ? static_cast<double>(below) : idle_d);
  }
  return frag;
}

double FragmentationModel::node_fragment_milli(const NodeInfo& node) const {
  if (node.gpus.empty()) return 0;
  bool plain = node.spec->devices.sharing == ShareMode::kExclusive;
  for (const auto& g : node.gpus)
    plain = plain && !g.layout.mig_enabled && !g.reconfiguring;
  if (!plain) return unit_fragment(node);
  std::array<std::int32_t, 64> left{};
  CAPSIM_CHECK(node.gpus.size() <= left.size(), "a node has more GPUs than capsim supports");
  for (std::size_t g = 0; g < node.gpus.size(); ++g)
    left[g] = 1000 - node.gpus[g].milli_used;
  return fragment_milli(node.spec->gpu_model, node.free(kCpu),
                        std::span<const std::int32_t>(left.data(), node.gpus.size()));
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
