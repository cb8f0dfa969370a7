#include "tools/loaders/world_builder.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "models/yaml_reader.hpp"
#include "sim/cluster.hpp"
#include "sim/quantity.hpp"
#include "sim/random.hpp"

namespace capsim {

namespace {
[[noreturn]] void fail_at(const InputLocation& where, const std::string& msg) {
  throw InputError(InputErrorKind::kInvalid, where, msg);
}
}  // namespace

std::string short_location(const InputLocation& where) {
  if (where.line > 0) return fmt::format("{}:{}", where.file, where.line);
  return where.file;
}

WorldBuilder::WorldBuilder(World& world, const GpuCatalog& catalog)
    : world_(&world), catalog_(&catalog) {}

const GpuModel& WorldBuilder::gpu_model(const std::string& name, const InputLocation& where) const {
  const GpuModel* m = catalog_->find(name);
  if (m == nullptr) {
    auto s = catalog_->suggestions(name);
    std::string hint;
    if (!s.empty()) hint = fmt::format(" (did you mean {}?)", fmt::join(s, ", "));
    fail_at(where, fmt::format("unknown GPU model '{}'{}; `capsim catalog` lists the known models",
                               name, hint));
  }
  return *m;
}

GpuModelId WorldBuilder::use_gpu_model(const GpuModel& model) {
  if (auto it = model_ids_.find(model.name); it != model_ids_.end()) return it->second;
  world_->gpu_models.push_back(to_model_info(model));
  const auto id = static_cast<GpuModelId>(world_->gpu_models.size() - 1);
  model_ids_.emplace(model.name, id);
  return id;
}

std::string gpu_resource_typo(const std::string& name) {
  // A name close to nvidia.com/gpu.shared (the time-slicing rename) is a typo of it.
  if (name != "nvidia.com/gpu.shared" && name != "nvidia.com/gpu" &&
      name.rfind("nvidia.com/gpu", 0) == 0 &&
      !closest_names(name, {"nvidia.com/gpu.shared"}).empty()) {
    return fmt::format(
        "unknown sharing resource '{}' (did you mean 'nvidia.com/gpu.shared'? "
        "known: nvidia.com/gpu, nvidia.com/gpu.shared, nvidia.com/mig-<profile>)",
        name);
  }
  // A name a few edits from nvidia.com/gpu (nvidia.com/gpus, nvida.com/gpu, NVIDIA.com/GPU) is a
  // typo of it. Other names, in NVIDIA's domain too (the Network Operator's SR-IOV resources),
  // are extended resources as Kubernetes has them.
  const bool known_gpu = name == "nvidia.com/gpu" || name == "nvidia.com/gpu.shared" ||
                         name.rfind("nvidia.com/mig-", 0) == 0;
  if (!known_gpu && !closest_names(name, {"nvidia.com/gpu"}).empty()) {
    return fmt::format(
        "unknown GPU resource '{}'{}: NVIDIA's device plugin advertises "
        "nvidia.com/gpu, nvidia.com/gpu.shared (time-slicing and MPS with "
        "renameByDefault) and nvidia.com/mig-<profile>; a pod asking for a "
        "resource no node offers would wait forever",
        name, did_you_mean(name, {"nvidia.com/gpu", "nvidia.com/gpu.shared"}));
  }
  return {};
}

ResourceId WorldBuilder::resource(const std::string& name, const InputLocation& where) {
  if (name.empty()) fail_at(where, "empty resource name");
  // A MIG resource names a profile of some catalog model (docs/sharing.md: nvidia.com/mig-
  // <profile>, "+me" as ".me", as the NVIDIA device plugin's mixed strategy advertises them); a
  // name close to one of NVIDIA's GPU resources is a typo of it (gpu_resource_typo). Either would
  // otherwise be an extended resource no node has, and the pod would wait forever.
  if (name.rfind("nvidia.com/mig-", 0) == 0 && !world_->resources.find(name)) {
    std::vector<std::string> known;
    bool found = false;
    for (const GpuModel& m : catalog_->models()) {
      for (const MigProfile& p : m.mig_profiles) {
        std::vector<std::string> names{p.name};
        names.insert(names.end(), p.aliases.begin(), p.aliases.end());
        for (const std::string& n : names) {
          const std::string r = mig_resource_name(n);
          found = found || r == name;
          if (std::find(known.begin(), known.end(), r) == known.end()) known.push_back(r);
        }
      }
    }
    if (!found) {
      std::sort(known.begin(), known.end());
      fail_at(where, fmt::format("unknown MIG resource '{}'{}: no GPU model of the catalog has "
                                 "that profile (known: {})",
                                 name, did_you_mean(name, known), fmt::join(known, ", ")));
    }
  }
  if (!world_->resources.find(name)) {
    if (const std::string typo = gpu_resource_typo(name); !typo.empty()) fail_at(where, typo);
  }
  auto id = world_->resources.intern(name);
  if (!id) {
    fail_at(where,
            fmt::format("too many distinct resource names (at most {}); '{}' is one too many",
                        kMaxResources, name));
  }
  return *id;
}

NodeId WorldBuilder::add_node(NodeSpec node, const GpuModel* model, std::int32_t gpus,
                              std::optional<double> price_override, const InputLocation& where) {
  if (node.name.empty()) fail_at(where, "a node needs a name");
  if (auto it = node_names_.find(node.name); it != node_names_.end()) {
    fail_at(where, fmt::format("duplicate node name '{}' (first defined at {})", node.name,
                               short_location(it->second)));
  }
  if (gpus < 0) fail_at(where, "the GPU count must be 0 or more");
  if (gpus > 0 && model == nullptr) fail_at(where, "a node with GPUs needs a GPU model");
  if (gpus > 64)
    fail_at(where, fmt::format("{} GPUs on one node is more than capsim supports (64)", gpus));
  node_names_.emplace(node.name, where);
  node.name_sym = sym(node.name);
  node.gpu_count = gpus;
  if (model != nullptr && gpus > 0) {
    node.gpu_model = use_gpu_model(*model);
    const GpuModelInfo& info = world_->gpu_models[node.gpu_model];
    DeviceConfig& dc = node.devices;
    if (dc.layouts.empty()) dc.layouts.assign(static_cast<std::size_t>(gpus), GpuLayout{});
    if (dc.layouts.size() != static_cast<std::size_t>(gpus)) {
      fail_at(where, "the MIG layout does not cover every GPU of the node");
    }
    // Every resource name this node could ever advertise is interned now, so that a MIG
    // reconfiguration during the run never meets a new name.
    if (dc.mig_strategy == MigStrategy::kMixed) {
      for (const MigProfileInfo& p : info.mig_profiles) {
        (void)resource(p.resource_name, where);
        if (dc.rename_by_default) (void)resource(p.resource_name + ".shared", where);
      }
    }
    // Device resources come from the units the device plugin would advertise.
    std::map<std::string, std::int64_t> advertised;
    for (std::uint16_t g = 0; g < static_cast<std::uint16_t>(gpus); ++g) {
      for (const DeviceUnit& u : make_units(dc, info, g, dc.layouts[g], world_->resources)) {
        if (u.dra) continue;  // published through DRA, not advertised
        advertised[world_->resources.name(u.resource)] += u.replicas;
      }
    }
    const bool from_manifest = node.capacity[kNvidiaGpu] != 0;
    for (ResourceId r = 0; r < world_->resources.size(); ++r) {
      if (!is_device_resource(world_->resources.name(r))) continue;
      const auto it = advertised.find(world_->resources.name(r));
      const std::int64_t v = it == advertised.end() ? 0 : it->second;
      if (from_manifest && r == kNvidiaGpu && node.allocatable[r] != 0 &&
          node.allocatable[r] != v && dc.sharing == ShareMode::kExclusive &&
          dc.mig_strategy == MigStrategy::kNone) {
        // A manifest's allocatable may hold back GPUs (e.g. an unhealthy one); keep it.
        node.capacity[r] = v;
        continue;
      }
      node.capacity[r] = v;
      node.allocatable[r] = v;
    }
    bool any_mig = false;
    for (const auto& l : dc.layouts)
      any_mig = any_mig || l.mig_enabled;
    if (any_mig) {
      node.sharing = GpuSharing::kMig;
    } else if (dc.sharing == ShareMode::kTimeSliced) {
      node.sharing = GpuSharing::kTimeSlicing;
    } else if (dc.sharing == ShareMode::kMps) {
      node.sharing = GpuSharing::kMps;
    }
    // Labels GPU Feature Discovery publishes (only those not set explicitly).
    auto label_default = [&](const std::string& k, const std::string& v) {
      const Sym key = sym(k);
      if (!node.labels.has(key)) node.labels.set(key, sym(v));
    };
    std::string product = info.product_label;
    std::int64_t count = gpus;
    std::int64_t memory_mib = model->memory_mib;
    if (dc.mig_strategy == MigStrategy::kSingle && any_mig) {
      const MigProfileInfo& p = info.mig_profiles[dc.layouts.front().instances.front().profile];
      product += "-MIG-" + p.name;
      count = advertised["nvidia.com/gpu"];
      memory_mib = p.memory_bytes >> 20;
    }
    const std::int32_t replicas =
        dc.sharing == ShareMode::kExclusive ? 1 : dc.replicas_for("nvidia.com/gpu");
    if (replicas > 1 && !dc.rename_by_default) product += "-SHARED";
    label_default("nvidia.com/gpu.product", product);
    label_default("nvidia.com/gpu.count", std::to_string(count));
    label_default("nvidia.com/gpu.memory", std::to_string(memory_mib));
    label_default("nvidia.com/gpu.present", "true");
    label_default("capsim.io/gpu-model", model->name);
    if (model->mig_capable()) label_default("nvidia.com/mig.capable", "true");
    if (dc.mig_strategy != MigStrategy::kNone) {
      label_default("nvidia.com/mig.strategy",
                    dc.mig_strategy == MigStrategy::kSingle ? "single" : "mixed");
    }
    if (!dc.mig_config.empty()) label_default("nvidia.com/mig.config", dc.mig_config);
    if (!dc.plugin_config.empty())
      label_default("nvidia.com/device-plugin.config", dc.plugin_config);
    label_default("nvidia.com/gpu.sharing-strategy", dc.sharing == ShareMode::kTimeSliced
                                                         ? "time-slicing"
                                                     : dc.sharing == ShareMode::kMps ? "mps"
                                                                                     : "none");
    if (replicas > 1) label_default("nvidia.com/gpu.replicas", std::to_string(replicas));
    if (dc.sharing == ShareMode::kMps) label_default("nvidia.com/mps.capable", "true");
    if (dc.mig_strategy == MigStrategy::kMixed) {
      std::map<std::string, std::pair<std::int64_t, std::int64_t>> per_type;  // count, memory
      for (const auto& l : dc.layouts) {
        for (const MigInstance& inst : l.instances) {
          const MigProfileInfo& p = info.mig_profiles[inst.profile];
          auto& e = per_type[p.resource_name.substr(std::string("nvidia.com/").size())];
          e.first += 1;
          e.second = p.memory_bytes >> 20;
        }
      }
      for (const auto& [type, cm] : per_type) {
        label_default("nvidia.com/" + type + ".count", std::to_string(cm.first));
        label_default("nvidia.com/" + type + ".memory", std::to_string(cm.second));
      }
    }
  }
  node.labels.set(sym("kubernetes.io/hostname"), sym(node.name));
  if (!node.pool.empty() && !node.labels.has(sym("capsim.io/pool"))) {
    node.labels.set(sym("capsim.io/pool"), sym(node.pool));
  }
  if (node.allocatable[kPods] == 0)
    node.allocatable[kPods] = node.capacity[kPods] ? node.capacity[kPods] : 110;
  if (node.capacity[kPods] == 0) node.capacity[kPods] = node.allocatable[kPods];
  for (ResourceId r = 0; r < kMaxResources; ++r) {
    if (node.allocatable[r] < 0 || node.capacity[r] < 0)
      fail_at(where, "resources must not be negative");
    if (node.capacity[r] != 0 && node.allocatable[r] > node.capacity[r]) {
      fail_at(where, fmt::format("allocatable {} exceeds capacity", world_->resources.name(r)));
    }
  }
  if (price_override && *price_override < 0) {
    fail_at(where, "price_per_hour must not be negative");
  }
  if (pricer_) {
    node.price_per_hour = pricer_(node, model, gpus, price_override, where);
  } else if (price_override) {
    node.price_per_hour = *price_override;
  } else if (model != nullptr) {
    node.price_per_hour = gpus * model->price_per_hour;
  }
  node.source = short_location(where);
  world_->nodes.push_back(std::move(node));
  return static_cast<NodeId>(world_->nodes.size() - 1);
}

std::uint32_t WorldBuilder::PodNames::hash(const PodSpec& pod) {
  // Shifted so that a namespace and a name swapped are not always one slot.
  return static_cast<std::uint32_t>(text_hash(pod.name) ^ (text_hash(pod.namespace_) >> 1));
}

PodId WorldBuilder::PodNames::find(const std::deque<PodSpec>& pods, const PodSpec& pod) const {
  if (slots_.empty()) return kNoPod;
  const std::size_t mask = slots_.size() - 1;
  const std::uint32_t h = hash(pod);
  for (std::size_t i = h & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.id == kNoPod) return kNoPod;
    if (s.hash == h && pods[s.id].name == pod.name && pods[s.id].namespace_ == pod.namespace_) {
      return s.id;
    }
  }
}

void WorldBuilder::PodNames::place(Slot s) {
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = s.hash & mask;
  while (slots_[i].id != kNoPod)
    i = (i + 1) & mask;
  slots_[i] = s;
  ++count_;
}

void WorldBuilder::PodNames::insert(const std::deque<PodSpec>& pods, PodId id) {
  if ((count_ + 1) * 2 > slots_.size()) {  // at most half full
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(std::max<std::size_t>(64, old.size() * 2), Slot{});
    count_ = 0;
    for (const Slot& s : old) {
      if (s.id != kNoPod) place(s);
    }
  }
  place(Slot{id, hash(pods[id])});
}

PodId WorldBuilder::add_pod(PodSpec pod, const InputLocation& where) {
  if (pod.name.empty()) fail_at(where, "a pod needs a name");
  derive_device_requests(pod, world_->resources);
  if (const PodId first = pod_names_.find(world_->pods, pod); first != kNoPod) {
    fail_at(where, fmt::format("duplicate pod '{}/{}' (first defined at {})", pod.namespace_,
                               pod.name, short_location(pod_where(first))));
  }
  for (const auto& [r, v] : pod.requests.items) {
    if (v < 0) fail_at(where, fmt::format("negative request for {}", world_->resources.name(r)));
  }
  const std::int64_t gpus = pod.requests.get(kNvidiaGpu);
  if (gpus > 0 && pod.gpu_milli > 0 && pod.gpu_milli < 1000) {
    fail_at(where, "a pod asks for both whole GPUs (nvidia.com/gpu) and a GPU share");
  }
  if (gpus > 64) fail_at(where, fmt::format("{} GPUs in one pod is more than any node has", gpus));
  pod.gpu_count = static_cast<std::int32_t>(gpus);
  if (pod.gpu_milli >= 1000) pod.gpu_milli = 0;  // a whole GPU is not a share
  if (pod.gpu_milli < 0) fail_at(where, "a GPU share must be between 1 and 999 milli");
  if (pod.duration < 0) fail_at(where, "a pod's duration must not be negative");
  if (pod.arrival < 0) fail_at(where, "a pod's arrival time must not be negative");
  if (!(pod.gpu_util >= 0 && pod.gpu_util <= 1)) fail_at(where, "gpu_util must be between 0 and 1");
  if (pod.source.empty()) pod.source = short_location(where);
  world_->pods.push_back(std::move(pod));
  pod_names_.insert(world_->pods, static_cast<PodId>(world_->pods.size() - 1));
  const auto same = [&](const InputLocation& l) {
    return l.line == where.line && l.column == where.column && l.file == where.file &&
           l.field == where.field;
  };
  if (pod_locations_.empty() || !same(pod_locations_.back())) pod_locations_.push_back(where);
  pod_where_.push_back(static_cast<std::uint32_t>(pod_locations_.size() - 1));
  return static_cast<PodId>(world_->pods.size() - 1);
}

JobId WorldBuilder::add_job(JobSpec job, const InputLocation& where) {
  if (job.name.empty()) fail_at(where, "a job needs a name");
  if (auto it = job_names_.find(job.name); it != job_names_.end()) {
    fail_at(where, fmt::format("duplicate job '{}' (first defined at {})", job.name,
                               short_location(it->second)));
  }
  if (job.parallelism < 1 || job.completions < 1) {
    fail_at(where, "a job needs parallelism and completions of at least 1");
  }
  job_names_.emplace(job.name, where);
  job.pod_template.gpu_count = static_cast<std::int32_t>(job.pod_template.requests.get(kNvidiaGpu));
  derive_device_requests(job.pod_template, world_->resources);
  if (job.source.empty()) job.source = short_location(where);
  world_->jobs.push_back(std::move(job));
  job_where_.push_back(where);
  return static_cast<JobId>(world_->jobs.size() - 1);
}

void WorldBuilder::add_priority_class(PriorityClassInfo pc, const InputLocation& where) {
  if (auto it = pc_names_.find(pc.name); it != pc_names_.end()) {
    fail_at(where, fmt::format("duplicate PriorityClass '{}' (first defined at {})", pc.name,
                               short_location(it->second)));
  }
  if (pc.value > 1000000000) {
    fail_at(where, "PriorityClass values above 1000000000 are reserved for system classes");
  }
  if (pc.global_default) {
    for (const auto& other : world_->priority_classes) {
      if (other.global_default) {
        fail_at(where, fmt::format("two PriorityClasses are globalDefault ('{}' and '{}')",
                                   other.name, pc.name));
      }
    }
  }
  pc_names_.emplace(pc.name, where);
  world_->priority_classes.push_back(std::move(pc));
}

void WorldBuilder::add_namespace(const std::string& name, LabelSet labels,
                                 const InputLocation& where) {
  if (auto it = namespace_names_.find(name); it != namespace_names_.end()) {
    fail_at(where, fmt::format("duplicate Namespace '{}' (first defined at {})", name,
                               short_location(it->second)));
  }
  namespace_names_.emplace(name, where);
  StringPool& pool = world_->strings;
  const Sym name_key = pool.intern("kubernetes.io/metadata.name");
  const Sym name_sym = pool.intern(name);
  const Sym given = labels.get(name_key);
  if (given != kNoSym && given != name_sym) {
    // The API server sets this label to the name and refuses any other value.
    fail_at(where, fmt::format("label kubernetes.io/metadata.name is '{}'; a Namespace's must be "
                               "its name '{}'",
                               pool.str(given), name));
  }
  labels.set(name_key, name_sym);
  world_->namespace_labels[name_sym] = std::move(labels);
}

void WorldBuilder::resolve_priority(PodSpec& p, const InputLocation& where) const {
  const auto& pcs = world_->priority_classes;
  if (p.priority_class->empty()) {
    if (p.explicit_priority) return;
    for (const auto& pc : pcs) {
      if (pc.global_default) {
        p.priority = pc.value;
        // A pod's own preemptionPolicy: Never wins; otherwise the class's policy applies.
        if (p.preemption_policy != PreemptionPolicy::kNever)
          p.preemption_policy = pc.preemption_policy;
      }
    }
    return;
  }
  for (const auto& pc : pcs) {
    if (pc.name == *p.priority_class) {
      p.priority = pc.value;
      if (p.preemption_policy != PreemptionPolicy::kNever)
        p.preemption_policy = pc.preemption_policy;
      return;
    }
  }
  // The two classes every cluster has.
  if (*p.priority_class == "system-cluster-critical") {
    p.priority = 2000000000;
    return;
  }
  if (*p.priority_class == "system-node-critical") {
    p.priority = 2000001000;
    return;
  }
  std::vector<std::string> names;
  for (const auto& pc : pcs)
    names.push_back(pc.name);
  fail_at(where, fmt::format("unknown priorityClassName '{}'{}", *p.priority_class,
                             did_you_mean(*p.priority_class, names)));
}

void WorldBuilder::check_node_name(const PodSpec& p, const InputLocation& where) const {
  if (p.node_name->empty()) return;
  std::vector<std::string> names;
  for (const NodeSpec& n : world_->nodes) {
    if (n.name == *p.node_name) {
      // The kubelet's device manager hands out whole device-plugin units; GPU shares and DRA
      // claims are allocated by scheduler plugins, which a bound pod never meets.
      if (p.gpu_milli > 0 && p.gpu_milli < 1000) {
        fail_at(where, "spec.nodeName with a GPU share request is not modelled");
      }
      if (!p.claims.empty()) {
        fail_at(where, "spec.nodeName with resource claims is not modelled");
      }
      return;
    }
    names.push_back(n.name);
  }
  fail_at(where, fmt::format("spec.nodeName '{}' names no node{}", *p.node_name,
                             did_you_mean(*p.node_name, names)));
}

std::string WorldBuilder::generate_name(const std::string& prefix) {
  // k8s.io/apimachinery's rand.String alphabet; the API server appends 5 of them.
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  for (;;) {
    const std::uint64_t n = generated_count_[prefix]++;
    // FNV-1a over prefix, a separator and the counter: stable across runs and platforms.
    std::uint64_t h = 14695981039346656037ULL;
    auto mix = [&h](unsigned char c) {
      h ^= c;
      h *= 1099511628211ULL;
    };
    for (const char c : prefix)
      mix(static_cast<unsigned char>(c));
    mix(0);
    for (int i = 0; i < 8; ++i)
      mix(static_cast<unsigned char>((n >> (8 * i)) & 0xff));
    std::string name = prefix;
    for (int i = 0; i < 5; ++i) {
      name += kAlphabet[h % kAlphabet.size()];
      h /= kAlphabet.size();
    }
    if (generated_.insert(name).second) return name;
  }
}

void WorldBuilder::finalize() {
  // Expanders may register more (none do today); run until the list is drained.
  for (std::size_t i = 0; i < expanders_.size(); ++i) {
    auto expand = expanders_[i];
    expand();
  }
  for (std::size_t i = 0; i < world_->pods.size(); ++i) {
    resolve_priority(world_->pods[i], pod_where(static_cast<PodId>(i)));
    check_node_name(world_->pods[i], pod_where(static_cast<PodId>(i)));
  }
  for (std::size_t j = 0; j < world_->jobs.size(); ++j) {
    resolve_priority(world_->jobs[j].pod_template, job_where_[j]);
    check_node_name(world_->jobs[j].pod_template, job_where_[j]);
  }
  for (auto& [key, check] : finalizers_)
    check();
}

void WorldBuilder::on_finalize(const std::string& key, std::function<void()> check) {
  for (const auto& f : finalizers_) {
    if (f.first == key) return;
  }
  finalizers_.emplace_back(key, std::move(check));
}

}  // namespace capsim
