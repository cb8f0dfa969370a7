#include "sim/cluster.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <numeric>
#include <tuple>

#include "sim/check.hpp"

namespace capsim {

namespace {
constexpr double kMiB = 1024.0 * 1024.0;
}

void NodeInfo::add_requests(const PodSpec& pod) {
  pod.requests.add_to(requested, +1);
  requested[kPods] += 1;
  const std::int64_t cpu = pod.requests.get(kCpu);
  const std::int64_t mem = pod.requests.get(kMemory);
  nonzero_requested[kCpu] += cpu ? cpu : kDefaultMilliCpuRequest;
  nonzero_requested[kMemory] += mem ? mem : kDefaultMemoryRequest;
  ++generation;
}

void NodeInfo::remove_requests(const PodSpec& pod) {
  pod.requests.add_to(requested, -1);
  requested[kPods] -= 1;
  const std::int64_t cpu = pod.requests.get(kCpu);
  const std::int64_t mem = pod.requests.get(kMemory);
  nonzero_requested[kCpu] -= cpu ? cpu : kDefaultMilliCpuRequest;
  nonzero_requested[kMemory] -= mem ? mem : kDefaultMemoryRequest;
  ++generation;
}

std::string mig_resource_name(const std::string& profile) {
  std::string n = "nvidia.com/mig-" + profile;
  std::replace(n.begin(), n.end(), '+', '.');
  return n;
}

std::vector<DeviceUnit> make_units(const DeviceConfig& config, const GpuModelInfo& model,
                                   std::uint16_t gpu, const GpuLayout& layout,
                                   ResourceNames& names) {
  std::vector<DeviceUnit> out;
  auto intern = [&](const std::string& n) {
    auto id = names.intern(n);
    CAPSIM_CHECK(id.has_value(), "the resource table is full; the loader should have caught it");
    return *id;
  };
  const double total_sms = model.sms > 0 ? model.sms : 1;
  const double mem_slots = model.mig_memory_slots > 0 ? model.mig_memory_slots : 8;
  const double compute_slots = model.mig_compute_slots > 0 ? model.mig_compute_slots : 7;
  auto shared_name = [&](const std::string& base, std::int32_t replicas) {
    return replicas > 1 && config.rename_by_default ? base + ".shared" : base;
  };
  if (config.dra.enabled) {
    // Published through DRA: one exclusive unit per device a claim can hold (the whole GPU, or
    // each MIG instance of its layout); nothing is advertised as an extended resource.
    if (!layout.mig_enabled) {
      DeviceUnit u;
      u.resource = kNvidiaGpu;
      u.gpu = gpu;
      u.memory = model.memory_bytes;
      u.memory_limit = model.memory_bytes;
      u.dra = true;
      out.push_back(u);
    } else {
      for (std::size_t i = 0; i < layout.instances.size(); ++i) {
        out.push_back(make_dra_mig_unit(model, gpu, layout, i));
      }
    }
    return out;
  }
  if (!layout.mig_enabled) {
    const std::string base = "nvidia.com/gpu";
    const std::int32_t replicas =
        config.sharing == ShareMode::kExclusive ? 1 : config.replicas_for(base);
    DeviceUnit u;
    u.resource = intern(shared_name(base, replicas));
    u.gpu = gpu;
    u.instance = -1;
    u.mode = replicas > 1 ? config.sharing : ShareMode::kExclusive;
    u.replicas = static_cast<std::uint16_t>(replicas);
    u.capacity = 1.0;
    u.alloc_weight = 1.0;
    u.memory = model.memory_bytes;
    if (u.mode == ShareMode::kMps) {
      // The MPS control daemon: pinned memory floor(total / replicas / 2^20) MiB and
      // floor(100 / replicas) % of the threads per client.
      u.memory_limit = (model.memory_bytes / replicas >> 20) << 20;
      u.thread_cap = std::floor(100.0 / replicas) / 100.0;
    } else if (u.mode == ShareMode::kTimeSliced) {
      u.memory_limit = model.memory_bytes / replicas;  // the fair share; nothing enforces it
    } else {
      u.memory_limit = model.memory_bytes;
    }
    out.push_back(u);
    return out;
  }
  for (std::size_t i = 0; i < layout.instances.size(); ++i) {
    const MigInstance& inst = layout.instances[i];
    const MigProfileInfo& p = model.mig_profiles.at(inst.profile);
    const std::string base =
        config.mig_strategy == MigStrategy::kSingle ? "nvidia.com/gpu" : mig_resource_name(p.name);
    const std::int32_t replicas =
        config.sharing == ShareMode::kTimeSliced ? config.replicas_for(base) : 1;
    DeviceUnit u;
    u.resource = intern(shared_name(base, replicas));
    u.gpu = gpu;
    u.instance = static_cast<std::int16_t>(i);
    u.mode = replicas > 1 ? ShareMode::kTimeSliced : ShareMode::kExclusive;
    u.replicas = static_cast<std::uint16_t>(replicas);
    u.capacity = mig_instance_capacity(p.sms, total_sms, p.memory_slices, mem_slots);
    u.alloc_weight = p.compute_slices / compute_slots;
    u.memory = p.memory_bytes;
    u.memory_limit = replicas > 1 ? p.memory_bytes / replicas : p.memory_bytes;
    out.push_back(u);
  }
  return out;
}

DeviceUnit make_dra_mig_unit(const GpuModelInfo& model, std::uint16_t gpu, const GpuLayout& layout,
                             std::size_t instance) {
  const MigInstance& inst = layout.instances.at(instance);
  const MigProfileInfo& p = model.mig_profiles.at(inst.profile);
  const double total_sms = model.sms > 0 ? model.sms : 1;
  const double mem_slots = model.mig_memory_slots > 0 ? model.mig_memory_slots : 8;
  const double compute_slots = model.mig_compute_slots > 0 ? model.mig_compute_slots : 7;
  DeviceUnit u;
  u.resource = kNvidiaGpu;
  u.gpu = gpu;
  u.instance = static_cast<std::int16_t>(instance);
  u.capacity = mig_instance_capacity(p.sms, total_sms, p.memory_slices, mem_slots);
  u.alloc_weight = p.compute_slices / compute_slots;
  u.memory = p.memory_bytes;
  u.memory_limit = p.memory_bytes;
  u.dra = true;
  return u;
}

Cluster::Cluster(World& world) : world_(&world) {
  static std::atomic<std::uint64_t> instances{0};
  instance_ = ++instances;
  nodes_.resize(world.nodes.size());
  quick_.resize(nodes_.size());
  score_nodes_.resize(nodes_.size());
  node_generations_.resize(nodes_.size());
  quick_index_.resize(nodes_.size());
  // Nodes of autoscaled pools beyond their initial size start absent.
  for (const PoolAutoscaling& p : world.autoscaler.pools) {
    for (std::size_t k = static_cast<std::size_t>(p.initial); k < p.nodes.size(); ++k)
      nodes_.at(p.nodes[k]).absent = true;
  }
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    NodeInfo& n = nodes_[i];
    n.id = static_cast<NodeId>(i);
    n.spec = &world.nodes[i];
    if (const dra::NodeDevices* d = world.dra.node(n.id)) {
      n.dra_used.assign(d->devices.size(), 0);
      n.dra_consumed.assign(dra::capacity_offsets(*d).back(), 0);
    }
    populate(n);
    if (n.absent) {
      refresh_spec(n);
    } else {
      account_node(n, +1);
    }
  }
  // The extended resource the quick copy counts: the most plentiful one (an optimisation only:
  // which one it is changes no decision).
  std::vector<std::int64_t> offered(world.resources.size(), 0);
  for (const NodeInfo& n : nodes_) {
    for (ResourceId r = 0; r < world.resources.size(); ++r) {
      if (ResourceNames::is_scalar(r)) offered[r] += n.allocatable[r];
    }
  }
  std::int64_t most = 0;
  for (ResourceId r = 0; r < world.resources.size(); ++r) {
    if (offered[r] > most) {
      most = offered[r];
      quick_device_ = r;
    }
  }
  for (const NodeInfo& n : nodes_)
    refresh_quick(n);
  shared_claims_.resize(world.dra.claims.size());
  sync_pod_table();
}

void Cluster::populate(NodeInfo& n) const {
  // refresh_spec's copies add only NoSchedule taints, so the count holds for them too.
  n.prefer_no_schedule_taints = static_cast<std::int32_t>(
      std::count_if(n.spec->taints.begin(), n.spec->taints.end(),
                    [](const Taint& t) { return t.effect == TaintEffect::kPreferNoSchedule; }));
  n.gpus.assign(static_cast<std::size_t>(n.spec->gpu_count), GpuDeviceState{});
  n.units.clear();
  const GpuModelInfo* m = gpu_model(n);
  if (m != nullptr && !n.absent) {
    const auto& layouts = n.spec->devices.layouts;
    for (std::uint16_t g = 0; g < n.gpus.size(); ++g) {
      if (g < layouts.size()) n.gpus[g].layout = layouts[g];
      for (const DeviceUnit& u :
           make_units(n.spec->devices, *m, g, n.gpus[g].layout, world_->resources)) {
        n.units.push_back(u);
      }
    }
  }
  recompute_allocatable(n);
  n.free_whole_gpus = 0;
  if (!n.absent) {
    for (const auto& g : n.gpus) {
      if (!g.layout.mig_enabled && g.milli_used == 0) ++n.free_whole_gpus;
    }
  }
}

void Cluster::account_node(const NodeInfo& n, int sign) {
  const double gpus = n.spec->gpu_count;
  totals_.gpus_total += sign * gpus;
  totals_.mode_gpus[static_cast<std::size_t>(n.spec->sharing)] += sign * gpus;
  totals_.cost_per_hour += sign * n.spec->price_per_hour;
  if (const GpuModelInfo* m = gpu_model(n)) {
    totals_.gpu_memory_total_mib += sign * static_cast<double>(m->memory_bytes) / kMiB * gpus;
    totals_.power_w += sign * m->idle_w * gpus;
    for (std::uint16_t g = 0; g < n.gpus.size(); ++g)
      account_mig(n, g, sign);
  }
}

void Cluster::set_absent(NodeId node, bool absent) {
  NodeInfo& n = nodes_[node];
  CAPSIM_CHECK(n.absent != absent,
               fmt::format("node {}: a presence change that changes nothing", n.spec->name));
  CAPSIM_CHECK(n.pods.empty() && !n.down && !n.cordoned,
               fmt::format("node {} is added or removed while it holds pods, is down or cordoned",
                           n.spec->name));
  for (const GpuDeviceState& g : n.gpus) {
    CAPSIM_CHECK(!g.failed && !g.reconfiguring && g.holders == 0 && g.busy == 0,
                 fmt::format("node {} is added or removed with a GPU failed, being re-laid out "
                             "or in use",
                             n.spec->name));
  }
  if (absent) account_node(n, -1);
  n.absent = absent;
  populate(n);
  refresh_spec(n);
  if (!absent) account_node(n, +1);
  changed(n);
}

NodeInfo Cluster::template_node(NodeId node) const {
  NodeInfo t = nodes_.at(node);
  CAPSIM_CHECK(t.pods.empty(), fmt::format("node {} holds pods: no template", t.spec->name));
  t.absent = false;
  t.down = false;
  t.cordoned = false;
  t.spec = &world_->nodes[node];
  t.requested = ResourceVec{};
  t.nonzero_requested = ResourceVec{};
  // The node's own devices start free; network-attached ones stay as taken as they are.
  if (const dra::NodeDevices* nd = world_->dra.node(node); nd != nullptr && !t.dra_used.empty()) {
    const std::vector<std::uint32_t> off = dra::capacity_offsets(*nd);
    for (std::size_t d = 0; d < nd->devices.size(); ++d) {
      if (nd->devices[d].network != kNoClaim) continue;
      t.dra_used[d] = 0;
      std::fill(t.dra_consumed.begin() + off[d], t.dra_consumed.begin() + off[d + 1], 0);
    }
  }
  populate(t);
  return t;
}

void Cluster::sync_pod_table() {
  pods_.resize(world_->pods.size());
}

void Cluster::rebuild_units(NodeInfo& n, std::uint16_t gpu) {
  // Retire the GPU's current units (none may be in use), then append the new ones.
  for (DeviceUnit& u : n.units) {
    if (u.gpu != gpu || !u.alive()) continue;
    CAPSIM_CHECK(u.used == 0,
                 fmt::format("node {} GPU {}: a unit in use would be removed", n.spec->name, gpu));
    u.replicas = 0;
  }
  if (n.pods.empty()) {  // nobody holds unit indices: compact
    n.units.erase(std::remove_if(n.units.begin(), n.units.end(),
                                 [](const DeviceUnit& u) { return !u.alive(); }),
                  n.units.end());
  }
  const GpuModelInfo* m = gpu_model(n);
  if (m == nullptr || n.gpus[gpu].reconfiguring || n.gpus[gpu].failed) return;
  for (const DeviceUnit& u :
       make_units(n.spec->devices, *m, gpu, n.gpus[gpu].layout, world_->resources)) {
    n.units.push_back(u);
  }
}

void Cluster::recompute_allocatable(NodeInfo& n) const {
  // Device resources come from the live units; everything else from the spec (nothing while
  // absent).
  n.allocatable = n.absent ? ResourceVec{} : n.spec->allocatable;
  for (ResourceId r = 0; r < world_->resources.size(); ++r) {
    if (is_device_resource(world_->resources.name(r))) n.allocatable[r] = 0;
  }
  for (const DeviceUnit& u : n.units) {
    if (u.alive() && !u.dra) n.allocatable[u.resource] += u.replicas;
  }
  ++n.generation;
}

void Cluster::account_mig(const NodeInfo& n, std::uint16_t gpu, int sign) {
  const GpuDeviceState& g = n.gpus[gpu];
  const GpuModelInfo* m = gpu_model(n);
  if (m == nullptr || !g.layout.mig_enabled) return;
  const double slots = m->mig_compute_slots;
  double configured = 0;
  double idle = 0;
  for (std::size_t i = 0; i < g.layout.instances.size(); ++i) {
    const double c = m->mig_profiles[g.layout.instances[i].profile].compute_slices;
    configured += c;
    bool used = false;
    for (const DeviceUnit& u : n.units) {
      if (u.alive() && u.gpu == gpu && u.instance == static_cast<std::int16_t>(i) && u.used > 0)
        used = true;
    }
    if (!used) idle += c;
  }
  totals_.mig_slices_total += sign * slots;
  const bool off = g.reconfiguring || g.failed;  // no instances offered
  totals_.mig_slices_unconfigured += sign * (off ? slots : slots - configured);
  totals_.mig_slices_idle += sign * (off ? 0 : idle);
}

void Cluster::refresh_gpu(NodeInfo& n, std::uint16_t gpu) {
  GpuDeviceState& g = n.gpus[gpu];
  const GpuModelInfo* m = gpu_model(n);
  double alloc = g.milli_used / 1000.0;
  double mem_alloc = m ? static_cast<double>(m->memory_bytes) * g.milli_used / 1000.0 : 0;
  for (const DeviceUnit& u : n.units) {
    if (!u.alive() || u.gpu != gpu || u.used == 0) continue;
    if (u.mode == ShareMode::kExclusive && u.instance < 0) continue;  // counted in milli_used
    alloc += u.alloc_weight * u.used / u.replicas;
    mem_alloc += static_cast<double>(u.memory_limit) * u.used;
  }
  alloc = std::min(alloc, 1.0);
  totals_.gpus_allocated += alloc - g.alloc;
  totals_.mode_allocated[static_cast<std::size_t>(n.spec->sharing)] += alloc - g.alloc;
  totals_.gpu_memory_allocated_mib += (mem_alloc - g.memory_alloc) / kMiB;
  g.alloc = alloc;
  g.memory_alloc = mem_alloc;
}

ScoreNode score_node(const NodeInfo& n) {
  ScoreNode s;
  for (ResourceId r : {kCpu, kMemory}) {
    s.allocatable[r] = n.allocatable[r];
    s.requested[r] = n.requested[r];
    s.nonzero_requested[r] = n.nonzero_requested[r];
  }
  s.prefer_no_schedule_taints = n.prefer_no_schedule_taints;
  return s;
}

void Cluster::refresh_quick(const NodeInfo& n) {
  QuickNode& q = quick_[n.id];
  q.cpu = n.free(kCpu);
  q.memory = n.free(kMemory);
  q.device = quick_device_ == kNoResource ? 0 : static_cast<std::int32_t>(n.free(quick_device_));
  q.units = quick_device_ == kNoResource ? 0 : free_units(n, quick_device_);
  q.pods = static_cast<std::int32_t>(n.free(kPods));
  q.whole_gpus = n.free_whole_gpus;
  q.max_share_left = 0;
  for (const GpuDeviceState& g : n.gpus) {
    if (!g.failed) q.max_share_left = std::max(q.max_share_left, 1000 - g.milli_used);
  }
  q.gpu_model = n.spec->gpu_model;
  q.unschedulable = n.spec->unschedulable;
  q.hard_taints = std::any_of(n.spec->taints.begin(), n.spec->taints.end(), [](const Taint& t) {
    return t.effect != TaintEffect::kPreferNoSchedule;
  });
  quick_index_.update(n.id, q.units, q.device, q.gpu_model);
  const ScoreNode fresh = score_node(n);
  prefer_no_schedule_nodes_ +=
      static_cast<std::int32_t>(fresh.prefer_no_schedule_taints > 0) -
      static_cast<std::int32_t>(score_nodes_[n.id].prefer_no_schedule_taints > 0);
  score_nodes_[n.id] = fresh;
  node_generations_[n.id] = n.generation;
}

std::int64_t Cluster::pod_memory(PodId pod, const NodeInfo& node, const Holding& h) const {
  const PodSpec& s = world_->pods[pod];
  if (s.gpu_memory_used > 0) return s.gpu_memory_used;
  if (!h.pooled()) return node.units[h.unit].memory_limit;
  const GpuModelInfo* m = gpu_model(node);
  return m ? m->memory_bytes / 1000 * h.milli : 0;
}

std::int32_t free_units(const NodeInfo& node, ResourceId resource) {
  std::int32_t n = 0;
  for (const DeviceUnit& u : node.units) {
    if (u.resource == resource && whole_unit_free(node, u)) n += u.replicas - u.used;
  }
  return n;
}

Holding replica_of(const NodeInfo& n, std::uint16_t unit) {
  const DeviceUnit& u = n.units.at(unit);
  return Holding{unit, 0, u.alloc_weight / std::max<std::uint16_t>(1, u.replicas)};
}

std::optional<Holding> share_of(const NodeInfo& n, std::uint16_t gpu, std::int32_t milli) {
  for (std::size_t i = 0; i < n.units.size(); ++i) {
    const DeviceUnit& u = n.units[i];
    if (u.alive() && u.gpu == gpu && u.instance < 0) {
      return Holding{static_cast<std::uint16_t>(i), milli, milli / 1000.0};
    }
  }
  return std::nullopt;
}

double gpu_fraction(std::span<const Holding> holdings) {
  double share = 0;
  for (const Holding& h : holdings)
    share += h.share;
  return share;
}

void Cluster::set_gpu_busy(NodeId node, std::uint16_t gpu, double busy) {
  NodeInfo& n = nodes_[node];
  GpuDeviceState& g = n.gpus[gpu];
  busy = std::clamp(busy, 0.0, 1.0);
  const GpuModelInfo* m = gpu_model(n);
  totals_.gpus_busy += busy - g.busy;
  totals_.mode_busy[static_cast<std::size_t>(n.spec->sharing)] += busy - g.busy;
  if (m) totals_.power_w += (m->tdp_w - m->idle_w) * (busy - g.busy);
  g.busy = busy;
}

void Cluster::hold_unit(NodeInfo& n, std::uint16_t ui, int sign) {
  DeviceUnit& u = n.units[ui];
  GpuDeviceState& g = n.gpus[u.gpu];
  account_mig(n, u.gpu, -1);
  if (sign > 0) {
    CAPSIM_CHECK(u.used < u.replicas, fmt::format("node {} GPU {}: unit over its {} replica(s)",
                                                  n.spec->name, u.gpu, u.replicas));
    ++u.used;
    ++g.holders;
    if (u.mode == ShareMode::kExclusive && u.instance < 0) {
      CAPSIM_CHECK(g.milli_used == 0,
                   fmt::format("node {} GPU {} is given whole while in use", n.spec->name, u.gpu));
      g.milli_used = 1000;
      --n.free_whole_gpus;
    } else if (g.holders == 1 && !g.layout.mig_enabled) {
      --n.free_whole_gpus;  // a shared GPU with a holder is no longer free as a whole
    }
  } else {
    --u.used;
    --g.holders;
    if (u.mode == ShareMode::kExclusive && u.instance < 0) {
      g.milli_used = 0;
      ++n.free_whole_gpus;
    } else if (g.holders == 0 && !g.layout.mig_enabled) {
      ++n.free_whole_gpus;
    }
  }
  account_mig(n, u.gpu, +1);
  refresh_gpu(n, u.gpu);
}

void Cluster::hold_share(NodeInfo& n, std::uint16_t gpu, std::int32_t milli, int sign) {
  GpuDeviceState& d = n.gpus.at(gpu);
  if (sign > 0) {
    if (d.milli_used == 0) --n.free_whole_gpus;
    d.milli_used += milli;
    ++d.holders;
    CAPSIM_CHECK(
        d.milli_used <= 1000 && !d.layout.mig_enabled,
        fmt::format("node {} GPU {} would be {} milli allocated", n.spec->name, gpu, d.milli_used));
  } else {
    d.milli_used -= milli;
    --d.holders;
    if (d.milli_used == 0) ++n.free_whole_gpus;
  }
  refresh_gpu(n, gpu);
}

std::uint16_t Cluster::add_unit(NodeInfo& n, const DeviceUnit& u) {
  // Reuse a retired slot (nobody holds a retired unit), so a long run of partitions created and
  // destroyed does not grow the table.
  for (std::size_t i = 0; i < n.units.size(); ++i) {
    if (!n.units[i].alive() && n.units[i].used == 0) {
      n.units[i] = u;
      return static_cast<std::uint16_t>(i);
    }
  }
  CAPSIM_CHECK(n.units.size() < 0xffff,
               fmt::format("node {} has too many device units", n.spec->name));
  n.units.push_back(u);
  return static_cast<std::uint16_t>(n.units.size() - 1);
}

std::uint16_t Cluster::materialize(NodeInfo& n, std::uint16_t device) {
  const dra::Device& dev = world_->dra.nodes[n.id].devices[device];
  GpuDeviceState& g = n.gpus.at(dev.gpu);
  auto find_unit = [&](std::int16_t instance) -> std::int32_t {
    for (std::size_t i = 0; i < n.units.size(); ++i) {
      const DeviceUnit& u = n.units[i];
      if (u.alive() && u.dra && u.gpu == dev.gpu && u.instance == instance) {
        return static_cast<std::int32_t>(i);
      }
    }
    return -1;
  };
  if (dev.profile < 0) {
    const std::int32_t ui = find_unit(-1);
    CAPSIM_CHECK(ui >= 0, fmt::format("node {}: device {} is a whole GPU but GPU {} is partitioned",
                                      n.spec->name, dev.name, dev.gpu));
    return static_cast<std::uint16_t>(ui);
  }
  for (std::size_t i = 0; i < g.layout.instances.size(); ++i) {
    const MigInstance& inst = g.layout.instances[i];
    if (g.layout.mig_enabled && inst.profile == static_cast<std::uint16_t>(dev.profile) &&
        inst.start == dev.start) {
      const std::int32_t ui = find_unit(static_cast<std::int16_t>(i));
      CAPSIM_CHECK(ui >= 0,
                   fmt::format("node {}: MIG device {} has no unit", n.spec->name, dev.name));
      return static_cast<std::uint16_t>(ui);
    }
  }
  CAPSIM_CHECK(!dev.static_mig, fmt::format("node {}: MIG device {} is not in GPU {}'s layout",
                                            n.spec->name, dev.name, dev.gpu));
  // A partition of a partitionable GPU: the driver creates the MIG instance now.
  const GpuModelInfo* m = gpu_model(n);
  CAPSIM_CHECK(m != nullptr, "a MIG partition on a node without a GPU model");
  const MigProfileInfo& p = m->mig_profiles.at(static_cast<std::size_t>(dev.profile));
  const bool was_free = !g.layout.mig_enabled && g.holders == 0;
  account_mig(n, dev.gpu, -1);
  if (!g.layout.mig_enabled) {
    CAPSIM_CHECK(g.holders == 0, fmt::format("node {} GPU {}: a partition is created on a GPU "
                                             "held whole",
                                             n.spec->name, dev.gpu));
    for (DeviceUnit& u : n.units) {
      if (u.alive() && u.gpu == dev.gpu) u.replicas = 0;  // the whole GPU is no longer offered
    }
    g.layout.mig_enabled = true;
    g.layout.instances.clear();
  }
  MigInstance inst;
  inst.profile = static_cast<std::uint16_t>(dev.profile);
  inst.start = dev.start;
  inst.size = static_cast<std::uint8_t>(p.memory_slices);
  for (const MigInstance& o : g.layout.instances) {
    CAPSIM_CHECK(inst.start + inst.size <= o.start || o.start + o.size <= inst.start,
                 fmt::format("node {} GPU {}: partition {} overlaps an existing MIG instance",
                             n.spec->name, dev.gpu, dev.name));
  }
  g.layout.instances.push_back(inst);
  const std::uint16_t ui =
      add_unit(n, make_dra_mig_unit(*m, dev.gpu, g.layout, g.layout.instances.size() - 1));
  account_mig(n, dev.gpu, +1);
  n.free_whole_gpus += (was_free ? -1 : 0);
  refresh_gpu(n, dev.gpu);
  ++n.generation;
  return ui;
}

void Cluster::destroy_partition(NodeInfo& n, std::uint16_t ui) {
  DeviceUnit& u = n.units[ui];
  CAPSIM_CHECK(u.used == 0 && u.instance >= 0 && u.dra,
               "only an unused DRA partition can be destroyed");
  const std::uint16_t gpu = u.gpu;
  GpuDeviceState& g = n.gpus[gpu];
  account_mig(n, gpu, -1);
  const auto k = static_cast<std::size_t>(u.instance);
  g.layout.instances.erase(g.layout.instances.begin() + static_cast<std::ptrdiff_t>(k));
  u.replicas = 0;
  u.instance = -1;
  for (DeviceUnit& o : n.units) {  // units of later instances move down one place
    if (o.alive() && o.gpu == gpu && o.instance > static_cast<std::int16_t>(k)) --o.instance;
  }
  if (g.layout.instances.empty()) {
    g.layout.mig_enabled = false;
    const GpuModelInfo* m = gpu_model(n);
    for (const DeviceUnit& w : make_units(n.spec->devices, *m, gpu, g.layout, world_->resources)) {
      (void)add_unit(n, w);
    }
    if (g.holders == 0) ++n.free_whole_gpus;
  }
  account_mig(n, gpu, +1);
  refresh_gpu(n, gpu);
  ++n.generation;
}

bool claim_reaches(const DraWorld& dra, const SharedClaimState& c, NodeId node) {
  if (c.node == node) return true;
  const dra::NodeDevices* nd = dra.node(c.node);
  if (nd == nullptr || c.allocation.devices.empty()) return false;
  for (std::uint16_t d : c.allocation.devices) {
    const std::uint32_t net = nd->devices.at(d).network;
    if (net == kNoClaim || dra.network[net].on(node) == nullptr) return false;
  }
  return true;
}

namespace {

// The device whose capacities hold index `ci` of a node's flattened capacity list, given the
// list's offsets (dra::capacity_offsets).
std::size_t capacity_device(const std::vector<std::uint32_t>& off, std::uint32_t ci) {
  return static_cast<std::size_t>(std::upper_bound(off.begin(), off.end() - 1, ci) - off.begin() -
                                  1);
}

// A claim of network-attached devices allocated on node `from`, as node `to` sees it: the same
// devices under their indices on `to` (claim_reaches said it reaches them all).
ClaimAllocation seen_from(const DraWorld& dra, NodeId from, ClaimAllocation a, NodeId to) {
  const dra::NodeDevices& fd = *dra.node(from);
  const std::vector<std::uint32_t> off = dra::capacity_offsets(fd);
  for (auto& [ci, amount] : a.consumed) {
    const std::size_t d = capacity_device(off, ci);
    ci = dra.network[fd.devices[d].network].on(to)->capacity_at + (ci - off[d]);
  }
  for (std::uint16_t& d : a.devices)
    d = dra.network[fd.devices[d].network].on(to)->device;
  return a;
}

}  // namespace

void Cluster::hold_claim(NodeInfo& n, ClaimAllocation& a, int sign) {
  const dra::NodeDevices* nd = world_->dra.node(n.id);
  CAPSIM_CHECK(
      nd != nullptr || a.devices.empty(),
      fmt::format("node {} publishes no DRA devices but a claim holds some", n.spec->name));
  if (sign > 0) a.units.clear();
  std::size_t k = 0;
  for (std::uint16_t d : a.devices) {
    CAPSIM_CHECK(d < n.dra_used.size(),
                 fmt::format("node {} has no DRA device {}", n.spec->name, d));
    const dra::Device& dev = nd->devices[d];
    if (sign > 0) {
      CAPSIM_CHECK(n.dra_used[d] == 0 || dev.allow_multiple_allocations,
                   fmt::format("node {}: device {} is allocated twice", n.spec->name, dev.name));
      ++n.dra_used[d];
      if (dev.gpu != kNoGpu) {
        const std::uint16_t ui = materialize(n, d);
        hold_unit(n, ui, +1);
        a.units.push_back(ui);
      }
    } else {
      --n.dra_used[d];
      if (dev.gpu != kNoGpu) {
        const std::uint16_t ui = a.units.at(k++);
        hold_unit(n, ui, -1);
        if (dev.profile >= 0 && !dev.static_mig) destroy_partition(n, ui);
      }
    }
  }
  for (const auto& [ci, amount] : a.consumed) {
    CAPSIM_CHECK(ci < n.dra_consumed.size(),
                 fmt::format("node {} has no DRA capacity {}", n.spec->name, ci));
    n.dra_consumed[ci] += sign * amount;
  }
  if (sign < 0) a.units.clear();
  ++n.generation;
  // Network-attached devices: every other node that reaches them sees them taken or freed.
  bool network = false;
  for (std::uint16_t d : a.devices)
    network = network || nd->devices[d].network != kNoClaim;
  if (!network) return;
  std::vector<NodeId> touched;
  for (std::uint16_t d : a.devices) {
    const std::uint32_t net = nd->devices[d].network;
    if (net == kNoClaim) continue;
    for (const dra::Mirror& m : world_->dra.network[net].mirrors) {
      if (m.node == n.id) continue;
      NodeInfo& other = nodes_[m.node];
      other.dra_used[m.device] = static_cast<std::uint16_t>(other.dra_used[m.device] + sign);
      touched.push_back(m.node);
    }
  }
  if (!a.consumed.empty()) {
    const std::vector<std::uint32_t> off = dra::capacity_offsets(*nd);
    for (const auto& [ci, amount] : a.consumed) {
      const std::size_t d = capacity_device(off, ci);
      const std::uint32_t net = nd->devices[d].network;
      if (net == kNoClaim) continue;
      for (const dra::Mirror& m : world_->dra.network[net].mirrors) {
        if (m.node != n.id)
          nodes_[m.node].dra_consumed[m.capacity_at + (ci - off[d])] += sign * amount;
      }
    }
  }
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  for (NodeId t : touched) {
    ++nodes_[t].generation;
    changed(nodes_[t]);
  }
}

void Cluster::bind(PodId pod, NodeId node, std::span<const Holding> holdings,
                   std::span<const ClaimAllocation> claims) {
  PodState& ps = pods_[pod];
  const PodSpec& s = world_->pods[pod];
  CAPSIM_CHECK(ps.node == kNoNode, fmt::format("pod {} is bound twice", s.name));
  // One allocation per claim of the pod, then possibly the claim for its extended resources
  // (KEP-5004).
  const bool ext_claim = claims.size() == s.claims.size() + 1 && claims.back().extended();
  CAPSIM_CHECK(
      claims.size() == s.claims.size() || ext_claim || (claims.empty() && s.claims.empty()),
      fmt::format("pod {} has {} resource claims but {} allocations", s.name, s.claims.size(),
                  claims.size()));
  NodeInfo& n = nodes_[node];
  n.add_requests(s);
  n.pods.push_back(pod);
  ++bound_priorities_[s.priority];
  ps.node = node;
  ps.holdings.assign(holdings.begin(), holdings.end());
  ps.gpus.clear();
  ps.claims.clear();
  ps.claim_units = 0;
  auto note_gpu = [&](std::uint16_t g) {
    if (std::find(ps.gpus.begin(), ps.gpus.end(), g) == ps.gpus.end()) ps.gpus.push_back(g);
  };
  double mem_used = 0;
  for (const Holding& h : holdings) {
    const std::uint16_t ui = h.unit;
    CAPSIM_CHECK(ui < n.units.size() && n.units[ui].alive(),
                 fmt::format("pod {} was given a device unit that does not exist", s.name));
    if (h.pooled()) {
      CAPSIM_CHECK(holdings.size() == 1 && is_share_pod(s) && h.milli == s.gpu_milli &&
                       n.units[ui].instance < 0,
                   fmt::format("pod {} holds part of a GPU but is not a GPU-share pod", s.name));
      hold_share(n, n.units[ui].gpu, h.milli, +1);
    } else {
      CAPSIM_CHECK(!n.units[ui].dra,
                   fmt::format("pod {} was given a DRA device without a claim", s.name));
      hold_unit(n, ui, +1);
    }
    note_gpu(n.units[ui].gpu);
    mem_used += static_cast<double>(pod_memory(pod, n, h));
  }
  // DRA: a shared claim is allocated by its first consumer and joined by the others; a claim made
  // from a template is the pod's own.
  std::vector<std::string> details;
  for (std::size_t i = 0; i < claims.size(); ++i) {
    ClaimAllocation a = claims[i];
    std::string_view label = "extended resources";
    if (i == s.claims.size()) {
      // The extended-resource claim: the pod's own, made and freed with it.
      CAPSIM_CHECK(!a.reuse, "the extended-resource claim is never shared");
      hold_claim(n, a, +1);
    } else {
      const PodClaimRef& ref = s.claims[i];
      label = ref.name;
      if (ref.shared()) {
        SharedClaimState& c = shared_claims_.at(ref.claim);
        if (a.reuse) {
          CAPSIM_CHECK(c.node != kNoNode && claim_reaches(world_->dra, c, node),
                       fmt::format("pod {} joins claim {} on node {}, but it is allocated to "
                                   "devices that node does not reach",
                                   s.name, ref.claim_name, n.spec->name));
          a = c.node == node ? c.allocation : seen_from(world_->dra, c.node, c.allocation, node);
        } else {
          CAPSIM_CHECK(c.node == kNoNode && c.reserved_for.empty(),
                       fmt::format("pod {} allocates claim {}, which is already allocated", s.name,
                                   ref.claim_name));
          hold_claim(n, a, +1);
          c.node = node;
          c.allocation = a;
        }
        CAPSIM_CHECK(c.reserved_for.size() < kMaxClaimConsumers,
                     fmt::format("claim {} would have more than {} consumers", ref.claim_name,
                                 kMaxClaimConsumers));
        c.reserved_for.push_back(pod);
      } else {
        CAPSIM_CHECK(!a.reuse, "a claim made from a template is never shared");
        hold_claim(n, a, +1);
      }
    }
    for (std::uint16_t ui : a.units) {
      ps.holdings.push_back(replica_of(n, ui));
      ++ps.claim_units;
      note_gpu(n.units[ui].gpu);
      mem_used += static_cast<double>(pod_memory(pod, n, ps.holdings.back()));
    }
    details.push_back(fmt::format("{}: {}", label, a.detail.empty() ? "-" : a.detail));
    ps.claims.push_back(std::move(a));
  }
  if (!details.empty()) {
    ps.claim_devices = fmt::format("{}", fmt::join(details, "; "));
    ps.last_claims = ps.claims;
    ps.last_claims_node = node;
  }
  for (ResourceId r = 0; r < world_->resources.size(); ++r) {
    // A resource DRA serves on this node is requested but not allocatable, as upstream's
    // NodeInfo counts it (KEP-5004).
    if (served_by_dra(n, r)) continue;
    CAPSIM_CHECK(n.requested[r] <= n.allocatable[r],
                 fmt::format("node {} would have {} {} requested of {} allocatable", n.spec->name,
                             n.requested[r], world_->resources.name(r), n.allocatable[r]));
  }
  totals_.gpu_memory_used_mib += mem_used / kMiB;
  ++totals_.pods_running;
  changed(n);
}

void Cluster::unbind(PodId pod) {
  PodState& ps = pods_[pod];
  const PodSpec& s = world_->pods[pod];
  CAPSIM_CHECK(ps.node != kNoNode, fmt::format("pod {} is released but holds no node", s.name));
  NodeInfo& n = nodes_[ps.node];
  double mem_used = 0;
  const std::size_t plugin_units = ps.holdings.size() - ps.claim_units;
  for (std::size_t k = 0; k < ps.holdings.size(); ++k) {
    const Holding& h = ps.holdings[k];
    mem_used += static_cast<double>(pod_memory(pod, n, h));
    if (k >= plugin_units) continue;  // the claim's: released with the claim below
    if (h.pooled()) {
      hold_share(n, n.units[h.unit].gpu, h.milli, -1);
    } else {
      hold_unit(n, h.unit, -1);
    }
  }
  // DRA: leave every claim; the last consumer of a shared claim deallocates it.
  for (std::size_t i = 0; i < ps.claims.size(); ++i) {
    if (i < s.claims.size() && s.claims[i].shared()) {
      const PodClaimRef& ref = s.claims[i];
      SharedClaimState& c = shared_claims_.at(ref.claim);
      auto it = std::find(c.reserved_for.begin(), c.reserved_for.end(), pod);
      CAPSIM_CHECK(it != c.reserved_for.end(), "a pod leaves a claim it does not use");
      c.reserved_for.erase(it);
      if (c.reserved_for.empty()) {
        // Released where it was allocated (a claim of network-attached devices may have been
        // joined from another node).
        NodeInfo& at = nodes_[c.node];
        hold_claim(at, c.allocation, -1);
        if (at.id != n.id) changed(at);
        c = SharedClaimState{};
      }
    } else {
      hold_claim(n, ps.claims[i], -1);
    }
  }
  n.remove_requests(s);
  auto it = std::find(n.pods.begin(), n.pods.end(), pod);
  CAPSIM_CHECK(it != n.pods.end(), "a bound pod is missing from its node's pod list");
  *it = n.pods.back();
  n.pods.pop_back();
  if (auto bp = bound_priorities_.find(s.priority); --bp->second == 0) bound_priorities_.erase(bp);
  ps.last_node = ps.node;
  ps.last_gpus = ps.gpus;
  ps.node = kNoNode;
  ps.gpus.clear();
  ps.holdings.clear();
  ps.claims.clear();
  ps.claim_units = 0;
  totals_.gpu_memory_used_mib -= mem_used / kMiB;
  --totals_.pods_running;
  changed(n);
}

void Cluster::begin_reconfigure(NodeId node, std::uint16_t gpu) {
  NodeInfo& n = nodes_[node];
  GpuDeviceState& g = n.gpus.at(gpu);
  CAPSIM_CHECK(!g.reconfiguring, "a GPU is reconfigured twice at once");
  CAPSIM_CHECK(g.holders == 0,
               fmt::format("node {} GPU {} is reconfigured while in use", n.spec->name, gpu));
  account_mig(n, gpu, -1);
  if (!g.layout.mig_enabled) --n.free_whole_gpus;
  g.reconfiguring = true;
  rebuild_units(n, gpu);  // retires the units; none come back while reconfiguring
  account_mig(n, gpu, +1);
  recompute_allocatable(n);
  refresh_gpu(n, gpu);
  changed(n);
}

void Cluster::end_reconfigure(NodeId node, std::uint16_t gpu, const GpuLayout& layout) {
  NodeInfo& n = nodes_[node];
  GpuDeviceState& g = n.gpus.at(gpu);
  CAPSIM_CHECK(g.reconfiguring, "a reconfiguration ended that never began");
  account_mig(n, gpu, -1);
  g.reconfiguring = false;
  g.layout = layout;
  rebuild_units(n, gpu);
  if (!g.layout.mig_enabled) ++n.free_whole_gpus;
  account_mig(n, gpu, +1);
  recompute_allocatable(n);
  refresh_gpu(n, gpu);
  changed(n);
}

void Cluster::set_gpu_failed(NodeId node, std::uint16_t gpu, bool failed) {
  NodeInfo& n = nodes_[node];
  GpuDeviceState& g = n.gpus.at(gpu);
  CAPSIM_CHECK(
      g.failed != failed && !g.reconfiguring,
      fmt::format("node {} GPU {}: a health change that changes nothing", n.spec->name, gpu));
  CAPSIM_CHECK(!failed || (g.holders == 0 && g.milli_used == 0),
               fmt::format("node {} GPU {} fails while a pod holds it", n.spec->name, gpu));
  account_mig(n, gpu, -1);
  const bool whole = !g.layout.mig_enabled;
  if (failed && whole) --n.free_whole_gpus;
  g.failed = failed;
  rebuild_units(n, gpu);  // failed: retires its units; repaired: offers them again
  if (!failed && whole) ++n.free_whole_gpus;
  account_mig(n, gpu, +1);
  recompute_allocatable(n);
  refresh_gpu(n, gpu);
  changed(n);
}

void Cluster::refresh_spec(NodeInfo& n) {
  const NodeSpec& base = world_->nodes[n.id];
  if (!n.down && !n.cordoned && !n.absent) {
    n.spec = &base;
    return;
  }
  if (down_specs_.size() < nodes_.size()) down_specs_.resize(nodes_.size());
  std::unique_ptr<NodeSpec>& copy = down_specs_[n.id];
  if (!copy) {
    copy = std::make_unique<NodeSpec>(base);
  } else {
    *copy = base;
  }
  if (n.down) {
    Taint t;
    t.key = world_->strings.intern("node.kubernetes.io/unreachable");
    t.value = world_->strings.intern("");
    t.effect = TaintEffect::kNoSchedule;
    copy->taints.push_back(t);
  }
  if (n.cordoned || n.absent) copy->unschedulable = true;
  n.spec = copy.get();
}

void Cluster::set_node_down(NodeId node, bool down) {
  NodeInfo& n = nodes_[node];
  CAPSIM_CHECK(n.down != down,
               fmt::format("node {}: a health change that changes nothing", n.spec->name));
  CAPSIM_CHECK(!down || n.pods.empty(),
               fmt::format("node {} goes down while it holds pods", n.spec->name));
  // A down node's GPUs draw no power (no pod: they were idle): power = idle x GPUs leaves.
  if (const GpuModelInfo* m = gpu_model(n); m != nullptr && !n.absent)
    totals_.power_w += (down ? -1.0 : 1.0) * m->idle_w * n.spec->gpu_count;
  n.down = down;
  refresh_spec(n);
  ++n.generation;
  changed(n);
}

void Cluster::set_cordoned(NodeId node, bool cordoned) {
  NodeInfo& n = nodes_[node];
  CAPSIM_CHECK(n.cordoned != cordoned,
               fmt::format("node {}: a cordon change that changes nothing", n.spec->name));
  n.cordoned = cordoned;
  refresh_spec(n);
  ++n.generation;
  changed(n);
}

void Cluster::check_invariants() const {
  double allocated = 0;
  std::map<std::int32_t, std::int64_t> priorities;
  // Network-attached devices a claim holds count on every other node that reaches them.
  std::vector<std::vector<std::int32_t>> remote_used(nodes_.size());
  std::vector<std::vector<std::int64_t>> remote_consumed(nodes_.size());
  for (const NodeInfo& n : nodes_) {
    remote_used[n.id].assign(n.dra_used.size(), 0);
    remote_consumed[n.id].assign(n.dra_consumed.size(), 0);
  }
  if (!world_->dra.network.empty()) {
    auto count_remote = [&](NodeId at, const ClaimAllocation& a) {
      const dra::NodeDevices* nd = world_->dra.node(at);
      if (nd == nullptr) return;
      const std::vector<std::uint32_t> off = dra::capacity_offsets(*nd);
      for (std::uint16_t d : a.devices) {
        CAPSIM_CHECK(d < nd->devices.size(), "a claim holds a device its node does not publish");
        const std::uint32_t net = nd->devices[d].network;
        if (net == kNoClaim) continue;
        for (const dra::Mirror& m : world_->dra.network[net].mirrors) {
          if (m.node != at) remote_used[m.node].at(m.device)++;
        }
      }
      for (const auto& [ci, amount] : a.consumed) {
        const std::size_t d = capacity_device(off, ci);
        const std::uint32_t net = nd->devices.at(d).network;
        if (net == kNoClaim) continue;
        for (const dra::Mirror& m : world_->dra.network[net].mirrors) {
          if (m.node != at) remote_consumed[m.node].at(m.capacity_at + (ci - off[d])) += amount;
        }
      }
    };
    for (const SharedClaimState& c : shared_claims_) {
      if (c.node != kNoNode) count_remote(c.node, c.allocation);
    }
    for (const NodeInfo& n : nodes_) {
      for (PodId p : n.pods) {
        const PodSpec& s = world_->pods[p];
        const PodState& ps = pods_[p];
        for (std::size_t i = 0; i < ps.claims.size(); ++i) {
          if (i < s.claims.size() && s.claims[i].shared()) continue;
          count_remote(n.id, ps.claims[i]);
        }
      }
    }
  }
  for (const NodeInfo& n : nodes_) {
    ResourceVec req;
    std::vector<std::int32_t> milli(n.gpus.size(), 0);
    std::vector<std::int32_t> holders(n.gpus.size(), 0);
    std::vector<std::int32_t> unit_used(n.units.size(), 0);
    std::vector<std::int32_t> dra_used = remote_used[n.id];
    std::vector<std::int64_t> dra_consumed = remote_consumed[n.id];
    // A claim's devices count once, however many pods use it.
    auto count_claim = [&](const ClaimAllocation& a) {
      for (const auto& [ci, amount] : a.consumed) {
        CAPSIM_CHECK(ci < dra_consumed.size(), fmt::format("node {}: a claim consumes capacity {}, "
                                                           "which the node does not publish",
                                                           n.spec->name, ci));
        dra_consumed[ci] += amount;
      }
      for (std::uint16_t d : a.devices) {
        CAPSIM_CHECK(d < dra_used.size(), fmt::format("node {}: a claim holds device {}, which the "
                                                      "node does not publish",
                                                      n.spec->name, d));
        dra_used[d]++;
      }
      for (std::uint16_t ui : a.units) {
        CAPSIM_CHECK(
            ui < n.units.size() && n.units[ui].alive() && n.units[ui].dra,
            fmt::format("node {}: a claim holds a unit that is not a live DRA unit", n.spec->name));
        unit_used[ui]++;
        holders[n.units[ui].gpu]++;
        if (n.units[ui].instance < 0) milli[n.units[ui].gpu] += 1000;
      }
    };
    for (const SharedClaimState& c : shared_claims_) {
      if (c.node != n.id) continue;
      CAPSIM_CHECK(!c.reserved_for.empty(), fmt::format("node {}: a shared claim is allocated "
                                                        "with no consumer",
                                                        n.spec->name));
      count_claim(c.allocation);
    }
    for (PodId p : n.pods) {
      const PodSpec& s = world_->pods[p];
      const PodState& ps = pods_[p];
      ++priorities[s.priority];
      CAPSIM_CHECK(ps.node == n.id, fmt::format("pod {} is listed on node {} but records node {}",
                                                s.name, n.spec->name, ps.node));
      CAPSIM_CHECK(ps.phase == PodPhase::kRunning || ps.phase == PodPhase::kTerminating ||
                       ps.phase == PodPhase::kCrashBackoff,
                   fmt::format("pod {} holds node {} but is not running", s.name, n.spec->name));
      s.requests.add_to(req);
      req[kPods] += 1;
      // Resources the pod's extended-resource claim holds (KEP-5004) come as claim units.
      const std::vector<ResourceId> no_ext;
      const std::vector<ResourceId>& via_dra =
          ps.claims.size() > s.claims.size() ? ps.claims.back().extended_resources : no_ext;
      auto through_dra = [&](ResourceId r) {
        return std::find(via_dra.begin(), via_dra.end(), r) != via_dra.end();
      };
      std::int32_t want_units = 0;
      for (const auto& [r, c] : s.device_requests)
        want_units += through_dra(r) ? 0 : c;
      const std::size_t plugin_units = ps.holdings.size() - ps.claim_units;
      std::int32_t pooled = 0;
      for (std::size_t k = 0; k < plugin_units; ++k)
        pooled += ps.holdings[k].pooled() ? 1 : 0;
      CAPSIM_CHECK(pooled == (is_share_pod(s) ? 1 : 0),
                   fmt::format("pod {} holds {} GPU shares but asked for {}", s.name, pooled,
                               is_share_pod(s) ? 1 : 0));
      CAPSIM_CHECK(static_cast<std::int32_t>(plugin_units) - pooled == want_units,
                   fmt::format("pod {} holds {} device units but asked for {}", s.name,
                               static_cast<std::int32_t>(plugin_units) - pooled, want_units));
      std::size_t claim_units = 0;
      for (const ClaimAllocation& a : ps.claims)
        claim_units += a.units.size();
      CAPSIM_CHECK(claim_units == ps.claim_units &&
                       (ps.claims.size() == s.claims.size() ||
                        (ps.claims.size() == s.claims.size() + 1 && ps.claims.back().extended())),
                   fmt::format("pod {} holds {} units for its {} claim(s), recorded {}", s.name,
                               claim_units, ps.claims.size(), ps.claim_units));
      for (std::size_t k = 0; k < ps.holdings.size(); ++k) {
        const Holding& h = ps.holdings[k];
        const std::uint16_t ui = h.unit;
        CAPSIM_CHECK(ui < n.units.size() && n.units[ui].alive(),
                     fmt::format("pod {} holds a retired device unit", s.name));
        if (h.pooled()) {  // part of the GPU's share pool, not a replica of the unit
          milli[n.units[ui].gpu] += h.milli;
          holders[n.units[ui].gpu]++;
          continue;
        }
        CAPSIM_CHECK(
            n.units[ui].dra == (k >= plugin_units),
            fmt::format("pod {} holds a DRA unit without a claim, or the reverse", s.name));
        if (k >= plugin_units) continue;  // held by the claim, counted below
        unit_used[ui]++;
        holders[n.units[ui].gpu]++;
        if (n.units[ui].mode == ShareMode::kExclusive && n.units[ui].instance < 0) {
          milli[n.units[ui].gpu] += 1000;
        }
      }
      for (std::size_t i = 0; i < ps.claims.size(); ++i) {
        if (i < s.claims.size() && s.claims[i].shared()) {
          const SharedClaimState& c = shared_claims_.at(s.claims[i].claim);
          CAPSIM_CHECK(
              claim_reaches(world_->dra, c, n.id) &&
                  std::find(c.reserved_for.begin(), c.reserved_for.end(), p) !=
                      c.reserved_for.end(),
              fmt::format("pod {} uses claim {} but is not among its consumers on its node", s.name,
                          s.claims[i].claim_name));
          continue;
        }
        count_claim(ps.claims[i]);
      }
      for (const auto& [r, c] : s.device_requests) {
        if (through_dra(r)) continue;
        std::int32_t got = 0;
        for (std::size_t k = 0; k < plugin_units; ++k) {
          const Holding& h = ps.holdings[k];
          got += !h.pooled() && n.units[h.unit].resource == r ? 1 : 0;
        }
        CAPSIM_CHECK(got == c, fmt::format("pod {} holds {} units of {} but asked for {}", s.name,
                                           got, world_->resources.name(r), c));
      }
      if (is_share_pod(s)) {
        CAPSIM_CHECK(ps.gpus.size() == 1,
                     fmt::format("GPU-share pod {} must hold one GPU", s.name));
      }
    }
    for (ResourceId r = 0; r < world_->resources.size(); ++r) {
      CAPSIM_CHECK(req[r] == n.requested[r],
                   fmt::format("node {}: {} requested is {} but its pods sum to {}", n.spec->name,
                               world_->resources.name(r), n.requested[r], req[r]));
      CAPSIM_CHECK(req[r] <= n.allocatable[r] || served_by_dra(n, r),
                   fmt::format("node {}: {} requested {} exceeds allocatable {}", n.spec->name,
                               world_->resources.name(r), req[r], n.allocatable[r]));
    }
    ResourceVec device_alloc;
    for (std::size_t ui = 0; ui < n.units.size(); ++ui) {
      const DeviceUnit& u = n.units[ui];
      CAPSIM_CHECK(unit_used[ui] == u.used,
                   fmt::format("node {} GPU {}: unit use {} recorded, {} held by pods",
                               n.spec->name, u.gpu, u.used, unit_used[ui]));
      CAPSIM_CHECK(u.used <= u.replicas,
                   fmt::format("node {} GPU {}: {} holders exceed {} replicas", n.spec->name, u.gpu,
                               u.used, u.replicas));
      if (u.alive() && !u.dra) device_alloc[u.resource] += u.replicas;
    }
    // DRA: the claims' devices are the ones marked used, and no shared counter is overdrawn.
    for (std::size_t d = 0; d < dra_used.size(); ++d) {
      CAPSIM_CHECK(dra_used[d] == n.dra_used[d],
                   fmt::format("node {}: DRA device {} is held by {} claim(s) but recorded {}",
                               n.spec->name, d, dra_used[d], n.dra_used[d]));
    }
    CAPSIM_CHECK(dra_consumed == n.dra_consumed,
                 fmt::format("node {}: the consumed DRA capacity recorded differs from what its "
                             "claims consume",
                             n.spec->name));
    if (const dra::NodeDevices* nd = world_->dra.node(n.id); nd != nullptr && !n.dra_used.empty()) {
      // Consumable capacity: the allocations of a device never take more than it has.
      const std::vector<std::uint32_t> off = dra::capacity_offsets(*nd);
      for (std::size_t d = 0; d < nd->devices.size(); ++d) {
        const dra::Device& dev = nd->devices[d];
        for (std::size_t c = 0; c < dev.capacity.size(); ++c) {
          CAPSIM_CHECK(n.dra_consumed[off[d] + c] <= dev.capacity[c].milli,
                       fmt::format("node {}: device {}'s capacity {} is over-committed",
                                   n.spec->name, dev.name, dev.capacity[c].name));
        }
      }
      std::map<std::tuple<std::uint16_t, std::uint16_t, std::uint16_t>, std::int64_t> drawn;
      for (std::size_t d = 0; d < nd->devices.size(); ++d) {
        const dra::Device& dev = nd->devices[d];
        CAPSIM_CHECK(n.dra_used[d] <= 1 || dev.allow_multiple_allocations,
                     fmt::format("node {}: device {} is allocated {} times", n.spec->name, dev.name,
                                 n.dra_used[d]));
        if (n.dra_used[d] == 0) continue;
        const dra::Pool& pool = nd->pools[dev.pool];
        for (const dra::CounterConsumption& cc : dev.consumes) {
          const dra::CounterSet& set = pool.counter_sets.at(cc.counter_set);
          for (const auto& [ci, amount] : cc.counters) {
            std::int64_t& used = drawn[{dev.pool, cc.counter_set, ci}];
            used += amount * n.dra_used[d];
            CAPSIM_CHECK(used <= set.counters.at(ci).second,
                         fmt::format("node {}: counter {}/{} is overdrawn", n.spec->name, set.name,
                                     set.counters.at(ci).first));
          }
        }
      }
    }
    for (ResourceId r = 0; r < world_->resources.size(); ++r) {
      if (!is_device_resource(world_->resources.name(r))) continue;
      CAPSIM_CHECK(
          device_alloc[r] == n.allocatable[r],
          fmt::format("node {}: allocatable {} is {} but its devices offer {}", n.spec->name,
                      world_->resources.name(r), n.allocatable[r], device_alloc[r]));
    }
    std::int32_t free_whole = 0;
    const GpuModelInfo* m = gpu_model(n);
    for (std::size_t g = 0; g < n.gpus.size(); ++g) {
      const GpuDeviceState& d = n.gpus[g];
      CAPSIM_CHECK(milli[g] == d.milli_used && milli[g] <= 1000,
                   fmt::format("node {} GPU {}: {} milli recorded, {} held by pods", n.spec->name,
                               g, d.milli_used, milli[g]));
      CAPSIM_CHECK(holders[g] == d.holders,
                   fmt::format("node {} GPU {}: {} holders recorded, {} counted", n.spec->name, g,
                               d.holders, holders[g]));
      if (!n.absent && !d.layout.mig_enabled && !d.reconfiguring && !d.failed && d.holders == 0)
        ++free_whole;
      allocated += d.alloc;
      if (d.layout.mig_enabled && m != nullptr) {
        // MIG instances stay within the slots and never overlap.
        std::vector<int> slot(static_cast<std::size_t>(m->mig_memory_slots), 0);
        for (const MigInstance& inst : d.layout.instances) {
          CAPSIM_CHECK(
              inst.profile < m->mig_profiles.size() &&
                  inst.start + inst.size <= m->mig_memory_slots,
              fmt::format("node {} GPU {}: a MIG instance leaves the slot range", n.spec->name, g));
          for (int k = inst.start; k < inst.start + inst.size; ++k) {
            CAPSIM_CHECK(++slot[static_cast<std::size_t>(k)] == 1,
                         fmt::format("node {} GPU {}: MIG instances overlap at slot {}",
                                     n.spec->name, g, k));
          }
        }
      }
    }
    const QuickNode& q = quick_[n.id];
    CAPSIM_CHECK(q.cpu == n.free(kCpu) && q.memory == n.free(kMemory) &&
                     q.device == (quick_device_ == kNoResource ? 0 : n.free(quick_device_)) &&
                     q.pods == n.free(kPods) && q.whole_gpus == n.free_whole_gpus &&
                     q.max_share_left ==
                         std::accumulate(n.gpus.begin(), n.gpus.end(), 0,
                                         [](std::int32_t most, const GpuDeviceState& g) {
                                           return g.failed ? most
                                                           : std::max(most, 1000 - g.milli_used);
                                         }),
                 fmt::format("node {}: the quick free-capacity copy is out of date", n.spec->name));
    const ScoreNode fresh = score_node(n);
    const ScoreNode& kept = score_nodes_[n.id];
    CAPSIM_CHECK(kept.allocatable == fresh.allocatable && kept.requested == fresh.requested &&
                     kept.nonzero_requested == fresh.nonzero_requested &&
                     kept.prefer_no_schedule_taints == fresh.prefer_no_schedule_taints,
                 fmt::format("node {}: the score copy is out of date", n.spec->name));
    CAPSIM_CHECK(quick_index_.agrees(n.id, q.units, q.device, q.gpu_model),
                 fmt::format("node {}: the quick index is out of date", n.spec->name));
    CAPSIM_CHECK(node_generations_[n.id] == n.generation,
                 fmt::format("node {}: changed (generation {}) without a refresh (at {})",
                             n.spec->name, n.generation, node_generations_[n.id]));
    // An absent node holds nothing and offers nothing.
    CAPSIM_CHECK(!n.absent || (n.pods.empty() && n.units.empty() && n.spec->unschedulable &&
                               std::all_of(n.allocatable.v.begin(), n.allocatable.v.end(),
                                           [](std::int64_t v) { return v == 0; })),
                 fmt::format("absent node {} holds pods or offers capacity", n.spec->name));
    CAPSIM_CHECK(free_whole == n.free_whole_gpus,
                 fmt::format("node {}: free GPU count {} but {} GPUs are free", n.spec->name,
                             n.free_whole_gpus, free_whole));
  }
  CAPSIM_CHECK(priorities == bound_priorities_,
               "the count of bound pods by priority drifted from the recount");
  CAPSIM_CHECK(std::count_if(score_nodes_.begin(), score_nodes_.end(),
                             [](const ScoreNode& c) { return c.prefer_no_schedule_taints > 0; }) ==
                   prefer_no_schedule_nodes_,
               "the count of nodes with a PreferNoSchedule taint drifted from the recount");
  CAPSIM_CHECK(std::abs(allocated - totals_.gpus_allocated) < 1e-6,
               fmt::format("allocated GPUs total {} drifted from the recount {}",
                           totals_.gpus_allocated, allocated));
}

void apply_holdings(NodeInfo& n, const PodSpec& spec, const PodState& state, int sign) {
  if (sign > 0) {
    n.add_requests(spec);
  } else {
    n.remove_requests(spec);
  }
  const std::size_t plugin_units = state.holdings.size() - state.claim_units;
  for (std::size_t k = 0; k < plugin_units; ++k) {
    const Holding& h = state.holdings[k];
    DeviceUnit& u = n.units[h.unit];
    GpuDeviceState& g = n.gpus[u.gpu];
    if (h.pooled()) {
      const bool was_free = g.holders == 0;
      g.milli_used += sign * h.milli;
      g.holders = static_cast<std::uint16_t>(g.holders + sign);
      const bool now_free = g.holders == 0;
      n.free_whole_gpus += (now_free ? 1 : 0) - (was_free ? 1 : 0);
      continue;
    }
    const bool was_free = !g.layout.mig_enabled && g.holders == 0;
    u.used = static_cast<std::uint16_t>(u.used + sign);
    g.holders = static_cast<std::uint16_t>(g.holders + sign);
    if (u.mode == ShareMode::kExclusive && u.instance < 0) g.milli_used += sign * 1000;
    const bool now_free = !g.layout.mig_enabled && g.holders == 0;
    n.free_whole_gpus += (now_free ? 1 : 0) - (was_free ? 1 : 0);
  }
  // The DRA view of the pod's own claims (what the DynamicResources filter reads).
  for (std::size_t i = 0; i < state.claims.size(); ++i) {
    if (i < spec.claims.size() && spec.claims[i].shared()) continue;
    for (std::uint16_t d : state.claims[i].devices) {
      n.dra_used.at(d) = static_cast<std::uint16_t>(n.dra_used.at(d) + sign);
    }
    for (const auto& [ci, amount] : state.claims[i].consumed)
      n.dra_consumed.at(ci) += sign * amount;
  }
}

}  // namespace capsim
