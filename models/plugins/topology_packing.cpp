#include "models/plugins/topology_packing.hpp"

#include <algorithm>
#include <cmath>

#include "sim/topology.hpp"

namespace capsim::plugins {

namespace {

struct PackingState final : fw::StateData {
  // Per level above the host, per domain: GPUs allocated and GPUs that work.
  std::vector<std::vector<double>> used;
  std::vector<std::vector<double>> total;
  double demand = 0;  // GPUs still to place: the pod's, or its gang's members not yet bound
};

}  // namespace

TopologyPacking::TopologyPacking(PluginContext& ctx, TopologyPackingArgs args)
    : world_(&ctx.world), args_(args) {}

fw::Status TopologyPacking::pre_score(fw::CycleState& state, const PodSpec& pod,
                                      std::span<const NodeId> /*nodes*/, const fw::Snapshot& snap) {
  const ClusterTopology& t = world_->topology;
  if (pod.gpu_count <= 0 || t.levels.size() < 2 || t.node_domain.empty()) {
    return fw::Status::skip();
  }
  auto& s = state.reuse<PackingState>(slot());
  const std::size_t levels = t.levels.size() - 1;  // the last is the host
  s.used.resize(levels);
  s.total.resize(levels);
  for (std::size_t l = 0; l < levels; ++l) {
    s.used[l].assign(static_cast<std::size_t>(t.domains_per_level[l]), 0.0);
    s.total[l].assign(s.used[l].size(), 0.0);
  }
  std::int32_t gang_bound = 0;
  for (const NodeInfo& info : snap.nodes()) {
    if (pod.gang != kNoGang) {
      for (PodId p : info.pods)
        gang_bound += snap.pod(p).gang == pod.gang ? 1 : 0;
    }
    if (info.down || info.id >= t.node_domain.size()) continue;
    double cap = 0, alloc = 0;
    for (const GpuDeviceState& g : info.gpus) {
      if (g.failed) continue;
      cap += 1.0;
      alloc += g.alloc;
    }
    for (std::size_t l = 0; l < levels; ++l) {
      const std::int32_t d = t.node_domain[info.id][l];
      if (d < 0) continue;
      s.used[l][static_cast<std::size_t>(d)] += alloc;
      s.total[l][static_cast<std::size_t>(d)] += cap;
    }
  }
  std::int32_t members = 1;
  if (pod.gang != kNoGang && pod.gang < world_->gangs.size()) {
    members = std::max(1, world_->gangs[pod.gang].min_member - gang_bound);
  }
  s.demand = static_cast<double>(members) * pod.gpu_count;
  return fw::Status::success();
}

std::int64_t TopologyPacking::score(const fw::CycleState& state, const PodSpec& /*pod*/,
                                    const NodeInfo& node) const {
  const auto* s = state.read<PackingState>(slot());
  const ClusterTopology& t = world_->topology;
  const std::size_t levels = s->used.size();
  double sum = 0, weights = 0;
  for (std::size_t l = 0; l < levels; ++l) {
    const std::int32_t d = t.node_domain[node.id][l];
    if (d < 0) continue;
    const auto k = static_cast<double>(levels - 1 - l);  // 0 for the lowest level
    const double w = std::pow(args_.fading, k);
    const double total = s->total[l][static_cast<std::size_t>(d)];
    if (total <= 0) continue;
    const double used = s->used[l][static_cast<std::size_t>(d)] + s->demand;
    // A domain that cannot take what is still to place adds nothing: the gang would span it.
    if (used <= total + 1e-9) sum += w * used / total;
    weights += w;
  }
  if (weights <= 0) return fw::kMinNodeScore;
  return static_cast<std::int64_t>(
      std::lround(static_cast<double>(fw::kMaxNodeScore) * sum / weights));
}

}  // namespace capsim::plugins
