#include "sim/run/node_health.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/check.hpp"
#include "sim/metric_catalog.hpp"

namespace capsim {

bool NodeHealth::gpu_down(NodeId node, std::uint16_t gpu) const {
  return cluster_->node(node).gpus.at(gpu).failed;
}

std::vector<PodId> NodeHealth::pods_on_gpu(NodeId node, std::uint16_t gpu) const {
  std::vector<PodId> out;
  for (PodId p : cluster_->node(node).pods) {
    const PodState& s = cluster_->pod(p);
    if (std::find(s.gpus.begin(), s.gpus.end(), gpu) != s.gpus.end()) out.push_back(p);
  }
  return out;
}

void NodeHealth::ensure_pools() {
  if (touched_) return;
  touched_ = true;
  const auto& nodes = cluster_->nodes();
  node_planned_.assign(nodes.size(), 0);
  gpu_planned_.resize(nodes.size());
  for (const NodeInfo& n : nodes) {
    gpu_planned_[n.id].assign(n.gpus.size(), 0);
    PoolState& p = pools_[n.spec->pool];
    p.capacity += n.gpus.empty() ? 1.0 : static_cast<double>(n.gpus.size());
  }
}

NodeHealth::PoolState& NodeHealth::pool_of(NodeId node) {
  return pools_.at(cluster_->world().nodes[node].pool);
}

void NodeHealth::advance(PoolState& p, SimTime now) {
  const double dt = to_seconds(now - p.last);
  p.down_seconds += p.down * dt;
  p.planned_seconds += p.planned * dt;
  p.last = now;
}

std::pair<double, double> NodeHealth::unavailable(NodeId node) const {
  const NodeInfo& n = cluster_->node(node);
  if (n.gpus.empty()) {
    const double d = n.down ? 1.0 : 0.0;
    return {d, n.down && node_planned_[node] ? 1.0 : 0.0};
  }
  double down = 0;
  double planned = 0;
  for (std::size_t g = 0; g < n.gpus.size(); ++g) {
    if (n.down) {
      down += 1;
      planned += node_planned_[node] ? 1 : 0;
    } else if (n.gpus[g].failed) {
      down += 1;
      planned += gpu_planned_[node][g] ? 1 : 0;
    }
  }
  return {down, planned};
}

void NodeHealth::change(NodeId node, SimTime now, auto&& mutate) {
  ensure_pools();
  PoolState& p = pool_of(node);
  advance(p, now);
  const auto before = unavailable(node);
  mutate();
  const auto after = unavailable(node);
  p.down += after.first - before.first;
  p.planned += after.second - before.second;
}

void NodeHealth::take_gpu_down(NodeId node, std::uint16_t gpu, SimTime now, Interruption why) {
  any_planned_ = any_planned_ || why == Interruption::kPlanned;
  change(node, now, [&] {
    gpu_planned_[node][gpu] = why == Interruption::kPlanned ? 1 : 0;
    cluster_->set_gpu_failed(node, gpu, true);
  });
}

void NodeHealth::bring_gpu_up(NodeId node, std::uint16_t gpu, SimTime now) {
  change(node, now, [&] {
    gpu_planned_[node][gpu] = 0;
    cluster_->set_gpu_failed(node, gpu, false);
  });
}

void NodeHealth::take_node_down(NodeId node, SimTime now, Interruption why) {
  any_planned_ = any_planned_ || why == Interruption::kPlanned;
  change(node, now, [&] {
    node_planned_[node] = why == Interruption::kPlanned ? 1 : 0;
    cluster_->set_node_down(node, true);
  });
}

void NodeHealth::bring_node_up(NodeId node, SimTime now) {
  change(node, now, [&] {
    node_planned_[node] = 0;
    cluster_->set_node_down(node, false);
  });
}

void NodeHealth::add_summary(Summary& summary, SimTime end) {
  if (!touched_) return;
  const double seconds = to_seconds(end);
  for (auto& [name, p] : pools_) {
    advance(p, end);
    const double total = p.capacity * seconds;
    const std::string pool = name.empty() ? "default" : name;
    put_metric(summary, fmt::format("pool.{}.availability", pool),
               total > 0 ? 1.0 - p.down_seconds / total : 1.0);
    if (any_planned_) {
      put_metric(summary, fmt::format("pool.{}.planned_downtime", pool),
                 total > 0 ? p.planned_seconds / total : 0.0);
    }
  }
}

void NodeHealth::check_invariants() const {
  for (const NodeInfo& n : cluster_->nodes()) {
    CAPSIM_CHECK(!n.down || n.pods.empty(),
                 fmt::format("node {} is down but holds {} pod(s)", n.spec->name, n.pods.size()));
    for (std::size_t g = 0; g < n.gpus.size(); ++g) {
      if (!n.gpus[g].failed) continue;
      CAPSIM_CHECK(n.gpus[g].holders == 0 && n.gpus[g].milli_used == 0,
                   fmt::format("node {} GPU {} has failed but holds a pod", n.spec->name, g));
      for (const DeviceUnit& u : n.units) {
        CAPSIM_CHECK(!(u.alive() && u.gpu == g),
                     fmt::format("node {} GPU {} has failed but offers a device", n.spec->name, g));
      }
    }
  }
}

}  // namespace capsim
