#include "sim/topology.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "sim/check.hpp"
#include "sim/cluster.hpp"
#include "sim/metric_catalog.hpp"
#include "sim/world.hpp"

namespace capsim {

std::string_view topology_mode_name(TopologyMode m) {
  switch (m) {
    case TopologyMode::kNone:
      return "none";
    case TopologyMode::kRequired:
      return "required";
    case TopologyMode::kPreferred:
      return "preferred";
    case TopologyMode::kUnconstrained:
      return "unconstrained";
  }
  return "?";
}

std::int32_t ClusterTopology::level_index(std::string_view name) const {
  for (std::size_t i = 0; i < levels.size(); ++i) {
    if (levels[i].name == name) return static_cast<std::int32_t>(i);
  }
  return -1;
}

std::string ClusterTopology::span_name(std::int32_t s) const {
  if (s == kSpanNone) return "";
  if (s == kSpanCluster) return "cluster";
  return levels.at(static_cast<std::size_t>(s)).name;
}

double ClusterTopology::factor(std::int32_t s) const {
  if (s == kSpanNone) return 1.0;
  if (s == kSpanCluster) return cluster_slowdown;
  return slowdown.at(static_cast<std::size_t>(s));
}

std::int32_t ClusterTopology::span(const std::vector<NodeId>& nodes) const {
  if (nodes.empty() || levels.empty()) return kSpanNone;
  // From the finest level up: the first whose domain is the same for every node.
  for (auto l = static_cast<std::int32_t>(levels.size()) - 1; l >= 0; --l) {
    const auto lu = static_cast<std::size_t>(l);
    const std::int32_t d = node_domain.at(nodes.front()).at(lu);
    bool same = d >= 0;
    for (std::size_t i = 1; same && i < nodes.size(); ++i)
      same = node_domain.at(nodes[i]).at(lu) == d;
    if (same) return l;
  }
  return kSpanCluster;
}

void index_topology(World& world) {
  ClusterTopology& t = world.topology;
  t.node_domain.clear();
  t.domains_per_level.assign(t.levels.size(), 0);
  if (!t.enabled()) return;
  std::vector<Sym> keys;
  for (const TopologyLevel& l : t.levels)
    keys.push_back(world.strings.intern(l.node_label));
  // A domain is the path of values from the top level down to it. A node without a level's label
  // is in no domain of that level (-1: it shares it with nobody); the levels below still group
  // it by the labels it has (an 8-GPU node without a clique label is still in its rack).
  std::vector<std::map<std::vector<Sym>, std::int32_t>> ids(t.levels.size());
  for (const NodeSpec& n : world.nodes) {
    std::vector<std::int32_t> row(t.levels.size(), -1);
    std::vector<Sym> path;
    for (std::size_t l = 0; l < t.levels.size(); ++l) {
      const Sym v = n.labels.get(keys[l]);
      path.push_back(v);
      if (v == kNoSym) continue;
      auto [it, fresh] = ids[l].try_emplace(path, static_cast<std::int32_t>(ids[l].size()));
      row[l] = it->second;
    }
    t.node_domain.push_back(std::move(row));
  }
  for (std::size_t l = 0; l < t.levels.size(); ++l)
    t.domains_per_level[l] = static_cast<std::int32_t>(ids[l].size());
}

TopologyMeter::TopologyMeter(const World& world) : world_(&world) {
  const ClusterTopology& t = world.topology;
  enabled_ = t.enabled();
  if (!enabled_) return;
  spread_level_ = t.level_index("nvlink");
  if (spread_level_ < 0) spread_level_ = static_cast<std::int32_t>(t.levels.size()) - 1;
  gang_span_.assign(world.gangs.size(), kSpanNone);
  gang_factor_.assign(world.gangs.size(), 1.0);
  frag_sum_.assign(t.levels.size(), 0.0);
}

void TopologyMeter::on_gang_start(std::uint32_t gang, std::int32_t span, double factor) {
  if (!enabled_) return;
  if (gang >= gang_span_.size()) {
    gang_span_.resize(gang + 1, kSpanNone);
    gang_factor_.resize(gang + 1, 1.0);
  }
  gang_span_[gang] = span;
  gang_factor_[gang] = factor;
}

void TopologyMeter::sample(const Cluster& cluster) {
  if (!enabled_) return;
  // Per level: free GPUs of domains that are partly in use. A job that needs a whole domain of
  // that level cannot use them; a domain with nothing allocated is not fragmented.
  const ClusterTopology& t = world_->topology;
  for (std::size_t l = 0; l < t.levels.size(); ++l) {
    std::vector<double> total(static_cast<std::size_t>(t.domains_per_level[l]), 0.0);
    std::vector<double> used(total.size(), 0.0);
    std::vector<double> lone;  // nodes outside every domain of the level: each its own
    for (NodeId n = 0; n < world_->nodes.size(); ++n) {
      const NodeInfo& info = cluster.node(n);
      double cap = 0, alloc = 0;
      for (const GpuDeviceState& g : info.gpus) {
        if (g.failed) continue;
        cap += 1.0;
        alloc += g.alloc;
      }
      if (info.down) cap = alloc = 0;
      const std::int32_t d = t.node_domain[n][l];
      if (d < 0) {
        if (alloc > 0) lone.push_back(cap - alloc);
        continue;
      }
      total[static_cast<std::size_t>(d)] += cap;
      used[static_cast<std::size_t>(d)] += alloc;
    }
    double frag = 0;
    for (std::size_t d = 0; d < total.size(); ++d) {
      if (used[d] > 1e-9) frag += std::max(0.0, total[d] - used[d]);
    }
    for (double f : lone)
      frag += std::max(0.0, f);
    frag_sum_[l] += frag;
  }
  ++samples_;
}

void TopologyMeter::add_summary(Summary& s) const {
  if (!enabled_) return;
  const ClusterTopology& t = world_->topology;
  std::int64_t started = 0, spanning = 0;
  double factor_sum = 0;
  for (std::size_t g = 0; g < gang_span_.size(); ++g) {
    if (gang_span_[g] == kSpanNone) continue;
    ++started;
    factor_sum += gang_factor_[g];
    if (gang_span_[g] < spread_level_) ++spanning;  // wider than one NVLink domain
  }
  put_metric(s, "jobs_spanning_domains", static_cast<double>(spanning));
  put_metric(s, "topology_slowdown_mean",
             started > 0 ? factor_sum / static_cast<double>(started) : 1.0);
  for (std::size_t l = 0; l < t.levels.size(); ++l) {
    put_metric(s, fmt::format("topology.{}.fragmented_gpus_mean", t.levels[l].name),
               samples_ > 0 ? frag_sum_[l] / static_cast<double>(samples_) : 0.0);
  }
}

}  // namespace capsim
