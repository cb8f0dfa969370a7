#include "sim/cluster.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

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

Cluster::Cluster(World& world) : world_(&world) {
  nodes_.resize(world.nodes.size());
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    NodeInfo& n = nodes_[i];
    n.id = static_cast<NodeId>(i);
    n.spec = &world.nodes[i];
    n.gpus.resize(static_cast<std::size_t>(n.spec->gpu_count));
    n.free_whole_gpus = n.spec->gpu_count;
    totals_.gpus_total += n.spec->gpu_count;
    totals_.cost_per_hour += n.spec->price_per_hour;
    if (n.spec->gpu_model != kNoGpuModel) {
      const GpuModelInfo& m = world.gpu_models[n.spec->gpu_model];
      totals_.gpu_memory_total_mib +=
          static_cast<double>(m.memory_bytes) / kMiB * n.spec->gpu_count;
      totals_.power_w += m.idle_w * n.spec->gpu_count;
    }
  }
  quick_.resize(nodes_.size());
  for (const NodeInfo& n : nodes_)
    refresh_quick(n);
  sync_pod_table();
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

void Cluster::sync_pod_table() {
  pods_.resize(world_->pods.size());
}

std::int64_t Cluster::gpu_memory_used(PodId pod) const {
  const PodSpec& s = world_->pods[pod];
  if (s.gpu_memory_used > 0) return s.gpu_memory_used;
  const NodeInfo& n = nodes_[pods_[pod].node];
  if (n.spec->gpu_model == kNoGpuModel) return 0;
  const std::int64_t mem = world_->gpu_models[n.spec->gpu_model].memory_bytes;
  return mem / 1000 * pod_milli_per_gpu(s);
}

void Cluster::refresh_gpu_totals(const NodeInfo& n, std::uint16_t gpu, int sign) {
  const GpuDeviceState& g = n.gpus[gpu];
  const double busy = std::min(1.0, g.util_demand);
  totals_.gpus_allocated += sign * g.milli_used / 1000.0;
  totals_.gpus_busy += sign * busy;
  if (n.spec->gpu_model != kNoGpuModel) {
    const GpuModelInfo& m = world_->gpu_models[n.spec->gpu_model];
    totals_.power_w += sign * (m.tdp_w - m.idle_w) * busy;
    totals_.gpu_memory_allocated_mib +=
        sign * static_cast<double>(m.memory_bytes) / kMiB * g.milli_used / 1000.0;
  }
}

void Cluster::apply_device_delta(NodeInfo& n, PodId pod, std::span<const std::uint16_t> gpus,
                                 int sign) {
  const PodSpec& s = world_->pods[pod];
  const std::int32_t milli = pod_milli_per_gpu(s);
  const double demand = s.gpu_util * milli / 1000.0;
  const double mem_used_mib = static_cast<double>(gpu_memory_used(pod)) / kMiB;
  for (std::uint16_t g : gpus) {
    CAPSIM_CHECK(g < n.gpus.size(), fmt::format("pod {} holds GPU {} on node {}, which has {} GPUs",
                                                s.name, g, n.spec->name, n.gpus.size()));
    refresh_gpu_totals(n, g, -1);
    GpuDeviceState& d = n.gpus[g];
    if (d.milli_used == 0) --n.free_whole_gpus;
    d.milli_used += sign * milli;
    d.holders = static_cast<std::uint16_t>(d.holders + sign);
    d.util_demand += sign * demand;
    if (std::abs(d.util_demand) < 1e-12) d.util_demand = 0;
    if (d.milli_used == 0) ++n.free_whole_gpus;
    CAPSIM_CHECK(d.milli_used >= 0 && d.milli_used <= 1000,
                 fmt::format("GPU {} on node {} would be {} milli allocated", g, n.spec->name,
                             d.milli_used));
    refresh_gpu_totals(n, g, +1);
    totals_.gpu_memory_used_mib += sign * mem_used_mib;
  }
}

void Cluster::bind(PodId pod, NodeId node, std::span<const std::uint16_t> gpus) {
  PodState& ps = pods_[pod];
  const PodSpec& s = world_->pods[pod];
  CAPSIM_CHECK(ps.node == kNoNode, fmt::format("pod {} is bound twice", s.name));
  NodeInfo& n = nodes_[node];
  n.add_requests(s);
  for (ResourceId r = 0; r < world_->resources.size(); ++r) {
    CAPSIM_CHECK(n.requested[r] <= n.spec->allocatable[r],
                 fmt::format("node {} would have {} {} requested of {} allocatable", n.spec->name,
                             n.requested[r], world_->resources.name(r), n.spec->allocatable[r]));
  }
  n.pods.push_back(pod);
  ps.node = node;
  ps.gpus.assign(gpus.begin(), gpus.end());
  apply_device_delta(n, pod, gpus, +1);
  ++totals_.pods_running;
  ++generation_;
  refresh_quick(n);
}

void Cluster::unbind(PodId pod) {
  PodState& ps = pods_[pod];
  const PodSpec& s = world_->pods[pod];
  CAPSIM_CHECK(ps.node != kNoNode, fmt::format("pod {} is released but holds no node", s.name));
  NodeInfo& n = nodes_[ps.node];
  apply_device_delta(n, pod, ps.gpus, -1);
  n.remove_requests(s);
  auto it = std::find(n.pods.begin(), n.pods.end(), pod);
  CAPSIM_CHECK(it != n.pods.end(), "a bound pod is missing from its node's pod list");
  *it = n.pods.back();
  n.pods.pop_back();
  ps.node = kNoNode;
  ps.gpus.clear();
  --totals_.pods_running;
  ++generation_;
  refresh_quick(n);
}

void Cluster::check_invariants() const {
  ClusterTotals recount;
  for (const NodeInfo& n : nodes_) {
    ResourceVec req;
    std::vector<std::int32_t> milli(n.gpus.size(), 0);
    for (PodId p : n.pods) {
      const PodSpec& s = world_->pods[p];
      const PodState& ps = pods_[p];
      CAPSIM_CHECK(ps.node == n.id, fmt::format("pod {} is listed on node {} but records node {}",
                                                s.name, n.spec->name, ps.node));
      CAPSIM_CHECK(ps.phase == PodPhase::kRunning || ps.phase == PodPhase::kTerminating,
                   fmt::format("pod {} holds node {} but is not running", s.name, n.spec->name));
      s.requests.add_to(req);
      req[kPods] += 1;
      CAPSIM_CHECK(static_cast<std::int32_t>(ps.gpus.size()) == pod_gpu_devices(s),
                   fmt::format("pod {} holds {} GPUs but asked for {}", s.name, ps.gpus.size(),
                               pod_gpu_devices(s)));
      for (std::uint16_t g : ps.gpus)
        milli[g] += pod_milli_per_gpu(s);
    }
    for (ResourceId r = 0; r < world_->resources.size(); ++r) {
      CAPSIM_CHECK(req[r] == n.requested[r],
                   fmt::format("node {}: {} requested is {} but its pods sum to {}", n.spec->name,
                               world_->resources.name(r), n.requested[r], req[r]));
      CAPSIM_CHECK(req[r] <= n.spec->allocatable[r],
                   fmt::format("node {}: {} requested {} exceeds allocatable {}", n.spec->name,
                               world_->resources.name(r), req[r], n.spec->allocatable[r]));
    }
    std::int32_t free_whole = 0;
    for (std::size_t g = 0; g < n.gpus.size(); ++g) {
      CAPSIM_CHECK(milli[g] == n.gpus[g].milli_used && milli[g] <= 1000,
                   fmt::format("node {} GPU {}: {} milli recorded, {} held by pods", n.spec->name,
                               g, n.gpus[g].milli_used, milli[g]));
      if (milli[g] == 0) ++free_whole;
      recount.gpus_allocated += milli[g] / 1000.0;
    }
    const QuickNode& q = quick_[n.id];
    CAPSIM_CHECK(q.cpu == n.free(kCpu) && q.memory == n.free(kMemory) &&
                     q.gpus == n.free(kNvidiaGpu) && q.pods == n.free(kPods) &&
                     q.whole_gpus == n.free_whole_gpus &&
                     q.max_gpu_left == std::accumulate(n.gpus.begin(), n.gpus.end(), 0,
                                                       [](std::int32_t m, const GpuDeviceState& g) {
                                                         return std::max(m, 1000 - g.milli_used);
                                                       }),
                 fmt::format("node {}: the quick free-capacity copy is out of date", n.spec->name));
    CAPSIM_CHECK(free_whole == n.free_whole_gpus,
                 fmt::format("node {}: free GPU count {} but {} GPUs are free", n.spec->name,
                             n.free_whole_gpus, free_whole));
  }
  CAPSIM_CHECK(std::abs(recount.gpus_allocated - totals_.gpus_allocated) < 1e-6,
               fmt::format("allocated GPUs total {} drifted from the recount {}",
                           totals_.gpus_allocated, recount.gpus_allocated));
}

}  // namespace capsim
