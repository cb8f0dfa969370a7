#include "sim/cluster.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <fmt/format.h>

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
  if (!layout.mig_enabled) {
    const std::string base = "nvidia.com/gpu";
    const std::int32_t replicas = config.sharing == ShareMode::kExclusive ? 1 : config.replicas_for(base);
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
    // Compute scales with the instance's SMs, bandwidth with its memory slices; like the
    // catalog's relative_speed, a job is taken to scale with their geometric mean.
    u.capacity = std::sqrt(p.sms / total_sms * p.memory_slices / mem_slots);
    u.alloc_weight = p.compute_slices / compute_slots;
    u.memory = p.memory_bytes;
    u.memory_limit = replicas > 1 ? p.memory_bytes / replicas : p.memory_bytes;
    out.push_back(u);
  }
  return out;
}

Cluster::Cluster(World& world) : world_(&world) {
  nodes_.resize(world.nodes.size());
  quick_.resize(nodes_.size());
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    NodeInfo& n = nodes_[i];
    n.id = static_cast<NodeId>(i);
    n.spec = &world.nodes[i];
    n.allocatable = n.spec->allocatable;
    n.gpus.resize(static_cast<std::size_t>(n.spec->gpu_count));
    totals_.gpus_total += n.spec->gpu_count;
    totals_.mode_gpus[static_cast<std::size_t>(n.spec->sharing)] += n.spec->gpu_count;
    totals_.cost_per_hour += n.spec->price_per_hour;
    if (const GpuModelInfo* m = gpu_model(n)) {
      totals_.gpu_memory_total_mib += static_cast<double>(m->memory_bytes) / kMiB * n.spec->gpu_count;
      totals_.power_w += m->idle_w * n.spec->gpu_count;
      const auto& layouts = n.spec->devices.layouts;
      for (std::uint16_t g = 0; g < n.gpus.size(); ++g) {
        if (g < layouts.size()) n.gpus[g].layout = layouts[g];
        rebuild_units(n, g);
        account_mig(n, g, +1);
      }
    }
    recompute_allocatable(n);
    n.free_whole_gpus = 0;
    for (const auto& g : n.gpus) {
      if (!g.layout.mig_enabled && g.milli_used == 0) ++n.free_whole_gpus;
    }
    refresh_quick(n);
  }
  sync_pod_table();
}

void Cluster::sync_pod_table() { pods_.resize(world_->pods.size()); }

void Cluster::rebuild_units(NodeInfo& n, std::uint16_t gpu) {
  // Retire the GPU's current units (none may be in use), then append the new ones.
  for (DeviceUnit& u : n.units) {
    if (u.gpu != gpu || !u.alive()) continue;
    CAPSIM_CHECK(u.used == 0, fmt::format("node {} GPU {}: a unit in use would be removed",
                                          n.spec->name, gpu));
    u.replicas = 0;
  }
  if (n.pods.empty()) {  // nobody holds unit indices: compact
    n.units.erase(std::remove_if(n.units.begin(), n.units.end(),
                                 [](const DeviceUnit& u) { return !u.alive(); }),
                  n.units.end());
  }
  const GpuModelInfo* m = gpu_model(n);
  if (m == nullptr || n.gpus[gpu].reconfiguring) return;
  for (const DeviceUnit& u : make_units(n.spec->devices, *m, gpu, n.gpus[gpu].layout, world_->resources)) {
    n.units.push_back(u);
  }
}

void Cluster::recompute_allocatable(NodeInfo& n) {
  // Device resources come from the live units; everything else from the spec.
  n.allocatable = n.spec->allocatable;
  for (ResourceId r = 0; r < world_->resources.size(); ++r) {
    if (is_device_resource(world_->resources.name(r))) n.allocatable[r] = 0;
  }
  for (const DeviceUnit& u : n.units) {
    if (u.alive()) n.allocatable[u.resource] += u.replicas;
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
      if (u.alive() && u.gpu == gpu && u.instance == static_cast<std::int16_t>(i) && u.used > 0) used = true;
    }
    if (!used) idle += c;
  }
  totals_.mig_slices_total += sign * slots;
  totals_.mig_slices_unconfigured += sign * (g.reconfiguring ? slots : slots - configured);
  totals_.mig_slices_idle += sign * (g.reconfiguring ? 0 : idle);
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

void Cluster::refresh_quick(const NodeInfo& n) {
  QuickNode& q = quick_[n.id];
  q.cpu = n.free(kCpu);
  q.memory = n.free(kMemory);
  q.gpus = static_cast<std::int32_t>(n.free(kNvidiaGpu));
  q.pods = static_cast<std::int32_t>(n.free(kPods));
  q.whole_gpus = n.free_whole_gpus;
  q.max_gpu_left = 0;
  for (const GpuDeviceState& g : n.gpus)
    q.max_gpu_left = std::max(q.max_gpu_left, 1000 - g.milli_used);
  q.gpu_model = n.spec->gpu_model;
  q.unschedulable = n.spec->unschedulable;
  q.hard_taints = std::any_of(n.spec->taints.begin(), n.spec->taints.end(), [](const Taint& t) {
    return t.effect != TaintEffect::kPreferNoSchedule;
  });
}

std::int64_t Cluster::pod_memory(PodId pod, const DeviceUnit* unit) const {
  const PodSpec& s = world_->pods[pod];
  if (s.gpu_memory_used > 0) return s.gpu_memory_used;
  if (unit != nullptr) return unit->memory_limit;
  const PodState& ps = pods_[pod];
  if (ps.node == kNoNode) return 0;
  const GpuModelInfo* m = gpu_model(nodes_[ps.node]);
  return m ? m->memory_bytes / 1000 * s.gpu_milli : 0;
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

void Cluster::bind(PodId pod, NodeId node, std::span<const std::uint16_t> units,
                   std::int32_t share_gpu) {
  PodState& ps = pods_[pod];
  const PodSpec& s = world_->pods[pod];
  CAPSIM_CHECK(ps.node == kNoNode, fmt::format("pod {} is bound twice", s.name));
  NodeInfo& n = nodes_[node];
  n.add_requests(s);
  n.pods.push_back(pod);
  ps.node = node;
  ps.units.assign(units.begin(), units.end());
  ps.gpus.clear();
  auto note_gpu = [&](std::uint16_t g) {
    if (std::find(ps.gpus.begin(), ps.gpus.end(), g) == ps.gpus.end()) ps.gpus.push_back(g);
  };
  double mem_used = 0;
  for (std::uint16_t ui : units) {
    CAPSIM_CHECK(ui < n.units.size() && n.units[ui].alive(),
                 fmt::format("pod {} was given a device unit that does not exist", s.name));
    DeviceUnit& u = n.units[ui];
    CAPSIM_CHECK(u.used < u.replicas, fmt::format("node {} GPU {}: unit over its {} replica(s)",
                                                  n.spec->name, u.gpu, u.replicas));
    account_mig(n, u.gpu, -1);
    ++u.used;
    GpuDeviceState& g = n.gpus[u.gpu];
    ++g.holders;
    if (u.mode == ShareMode::kExclusive && u.instance < 0) {
      CAPSIM_CHECK(g.milli_used == 0, fmt::format("node {} GPU {} is given whole while in use",
                                                  n.spec->name, u.gpu));
      g.milli_used = 1000;
      --n.free_whole_gpus;
    } else if (g.holders == 1 && !g.layout.mig_enabled) {
      --n.free_whole_gpus;  // a shared GPU with a holder is no longer free as a whole
    }
    account_mig(n, u.gpu, +1);
    refresh_gpu(n, u.gpu);
    note_gpu(u.gpu);
    mem_used += static_cast<double>(pod_memory(pod, &u));
  }
  if (share_gpu >= 0) {
    CAPSIM_CHECK(units.empty() && is_share_pod(s), "only GPU-share pods hold part of a GPU");
    const auto g = static_cast<std::uint16_t>(share_gpu);
    GpuDeviceState& d = n.gpus.at(g);
    if (d.milli_used == 0) --n.free_whole_gpus;
    d.milli_used += s.gpu_milli;
    ++d.holders;
    CAPSIM_CHECK(d.milli_used <= 1000 && !d.layout.mig_enabled,
                 fmt::format("node {} GPU {} would be {} milli allocated", n.spec->name, g, d.milli_used));
    refresh_gpu(n, g);
    note_gpu(g);
    mem_used += static_cast<double>(pod_memory(pod, nullptr));
  }
  for (ResourceId r = 0; r < world_->resources.size(); ++r) {
    CAPSIM_CHECK(n.requested[r] <= n.allocatable[r],
                 fmt::format("node {} would have {} {} requested of {} allocatable", n.spec->name,
                             n.requested[r], world_->resources.name(r), n.allocatable[r]));
  }
  totals_.gpu_memory_used_mib += mem_used / kMiB;
  ++totals_.pods_running;
  ++generation_;
  refresh_quick(n);
}

void Cluster::unbind(PodId pod) {
  PodState& ps = pods_[pod];
  const PodSpec& s = world_->pods[pod];
  CAPSIM_CHECK(ps.node != kNoNode, fmt::format("pod {} is released but holds no node", s.name));
  NodeInfo& n = nodes_[ps.node];
  double mem_used = 0;
  for (std::uint16_t ui : ps.units) {
    DeviceUnit& u = n.units[ui];
    mem_used += static_cast<double>(pod_memory(pod, &u));
    account_mig(n, u.gpu, -1);
    --u.used;
    GpuDeviceState& g = n.gpus[u.gpu];
    --g.holders;
    if (u.mode == ShareMode::kExclusive && u.instance < 0) {
      g.milli_used = 0;
      ++n.free_whole_gpus;
    } else if (g.holders == 0 && !g.layout.mig_enabled) {
      ++n.free_whole_gpus;
    }
    account_mig(n, u.gpu, +1);
    refresh_gpu(n, u.gpu);
  }
  if (ps.units.empty() && !ps.gpus.empty()) {  // a GPU-share pod
    mem_used += static_cast<double>(pod_memory(pod, nullptr));
    const std::uint16_t g = ps.gpus.front();
    GpuDeviceState& d = n.gpus[g];
    d.milli_used -= s.gpu_milli;
    --d.holders;
    if (d.milli_used == 0) ++n.free_whole_gpus;
    refresh_gpu(n, g);
  }
  n.remove_requests(s);
  auto it = std::find(n.pods.begin(), n.pods.end(), pod);
  CAPSIM_CHECK(it != n.pods.end(), "a bound pod is missing from its node's pod list");
  *it = n.pods.back();
  n.pods.pop_back();
  ps.node = kNoNode;
  ps.gpus.clear();
  ps.units.clear();
  totals_.gpu_memory_used_mib -= mem_used / kMiB;
  --totals_.pods_running;
  ++generation_;
  refresh_quick(n);
}

void Cluster::begin_reconfigure(NodeId node, std::uint16_t gpu) {
  NodeInfo& n = nodes_[node];
  GpuDeviceState& g = n.gpus.at(gpu);
  CAPSIM_CHECK(!g.reconfiguring, "a GPU is reconfigured twice at once");
  CAPSIM_CHECK(g.holders == 0, fmt::format("node {} GPU {} is reconfigured while in use",
                                           n.spec->name, gpu));
  account_mig(n, gpu, -1);
  if (!g.layout.mig_enabled) --n.free_whole_gpus;
  g.reconfiguring = true;
  rebuild_units(n, gpu);  // retires the units; none come back while reconfiguring
  account_mig(n, gpu, +1);
  recompute_allocatable(n);
  refresh_gpu(n, gpu);
  ++generation_;
  refresh_quick(n);
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
  ++generation_;
  refresh_quick(n);
}

void Cluster::check_invariants() const {
  double allocated = 0;
  for (const NodeInfo& n : nodes_) {
    ResourceVec req;
    std::vector<std::int32_t> milli(n.gpus.size(), 0);
    std::vector<std::int32_t> holders(n.gpus.size(), 0);
    std::vector<std::int32_t> unit_used(n.units.size(), 0);
    for (PodId p : n.pods) {
      const PodSpec& s = world_->pods[p];
      const PodState& ps = pods_[p];
      CAPSIM_CHECK(ps.node == n.id, fmt::format("pod {} is listed on node {} but records node {}",
                                                s.name, n.spec->name, ps.node));
      CAPSIM_CHECK(ps.phase == PodPhase::kRunning || ps.phase == PodPhase::kTerminating ||
                       ps.phase == PodPhase::kCrashBackoff,
                   fmt::format("pod {} holds node {} but is not running", s.name, n.spec->name));
      s.requests.add_to(req);
      req[kPods] += 1;
      std::int32_t want_units = 0;
      for (const auto& [r, c] : s.device_requests) want_units += c;
      CAPSIM_CHECK(static_cast<std::int32_t>(ps.units.size()) == want_units,
                   fmt::format("pod {} holds {} device units but asked for {}", s.name,
                               ps.units.size(), want_units));
      for (std::uint16_t ui : ps.units) {
        CAPSIM_CHECK(ui < n.units.size() && n.units[ui].alive(),
                     fmt::format("pod {} holds a retired device unit", s.name));
        unit_used[ui]++;
        holders[n.units[ui].gpu]++;
        if (n.units[ui].mode == ShareMode::kExclusive && n.units[ui].instance < 0) {
          milli[n.units[ui].gpu] += 1000;
        }
      }
      for (const auto& [r, c] : s.device_requests) {
        std::int32_t got = 0;
        for (std::uint16_t ui : ps.units) got += n.units[ui].resource == r ? 1 : 0;
        CAPSIM_CHECK(got == c, fmt::format("pod {} holds {} units of {} but asked for {}", s.name,
                                           got, world_->resources.name(r), c));
      }
      if (is_share_pod(s)) {
        CAPSIM_CHECK(ps.gpus.size() == 1, fmt::format("GPU-share pod {} must hold one GPU", s.name));
        milli[ps.gpus.front()] += s.gpu_milli;
        holders[ps.gpus.front()]++;
      }
    }
    for (ResourceId r = 0; r < world_->resources.size(); ++r) {
      CAPSIM_CHECK(req[r] == n.requested[r],
                   fmt::format("node {}: {} requested is {} but its pods sum to {}", n.spec->name,
                               world_->resources.name(r), n.requested[r], req[r]));
      CAPSIM_CHECK(req[r] <= n.allocatable[r],
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
                   fmt::format("node {} GPU {}: {} holders exceed {} replicas", n.spec->name,
                               u.gpu, u.used, u.replicas));
      if (u.alive()) device_alloc[u.resource] += u.replicas;
    }
    for (ResourceId r = 0; r < world_->resources.size(); ++r) {
      if (!is_device_resource(world_->resources.name(r))) continue;
      CAPSIM_CHECK(device_alloc[r] == n.allocatable[r],
                   fmt::format("node {}: allocatable {} is {} but its devices offer {}",
                               n.spec->name, world_->resources.name(r), n.allocatable[r],
                               device_alloc[r]));
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
      if (!d.layout.mig_enabled && !d.reconfiguring && d.holders == 0) ++free_whole;
      allocated += d.alloc;
      if (d.layout.mig_enabled && m != nullptr) {
        // MIG instances stay within the slots and never overlap.
        std::vector<int> slot(static_cast<std::size_t>(m->mig_memory_slots), 0);
        for (const MigInstance& inst : d.layout.instances) {
          CAPSIM_CHECK(inst.profile < m->mig_profiles.size() &&
                           inst.start + inst.size <= m->mig_memory_slots,
                       fmt::format("node {} GPU {}: a MIG instance leaves the slot range",
                                   n.spec->name, g));
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
                     q.gpus == n.free(kNvidiaGpu) && q.pods == n.free(kPods) &&
                     q.whole_gpus == n.free_whole_gpus &&
                     q.max_gpu_left == std::accumulate(n.gpus.begin(), n.gpus.end(), 0,
                                                       [](std::int32_t most, const GpuDeviceState& g) {
                                                         return std::max(most, 1000 - g.milli_used);
                                                       }),
                 fmt::format("node {}: the quick free-capacity copy is out of date", n.spec->name));
    CAPSIM_CHECK(free_whole == n.free_whole_gpus,
                 fmt::format("node {}: free GPU count {} but {} GPUs are free", n.spec->name,
                             n.free_whole_gpus, free_whole));
  }
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
  for (std::uint16_t ui : state.units) {
    DeviceUnit& u = n.units[ui];
    GpuDeviceState& g = n.gpus[u.gpu];
    const bool was_free = !g.layout.mig_enabled && g.holders == 0;
    u.used = static_cast<std::uint16_t>(u.used + sign);
    g.holders = static_cast<std::uint16_t>(g.holders + sign);
    if (u.mode == ShareMode::kExclusive && u.instance < 0) g.milli_used += sign * 1000;
    const bool now_free = !g.layout.mig_enabled && g.holders == 0;
    n.free_whole_gpus += (now_free ? 1 : 0) - (was_free ? 1 : 0);
  }
  if (state.units.empty() && !state.gpus.empty() && is_share_pod(spec)) {
    GpuDeviceState& g = n.gpus[state.gpus.front()];
    const bool was_free = g.holders == 0;
    g.milli_used += sign * spec.gpu_milli;
    g.holders = static_cast<std::uint16_t>(g.holders + sign);
    const bool now_free = g.holders == 0;
    n.free_whole_gpus += (now_free ? 1 : 0) - (was_free ? 1 : 0);
  }
}

}  // namespace capsim
