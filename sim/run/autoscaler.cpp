#include "sim/run/autoscaler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/check.hpp"

namespace capsim {

Autoscaler::Autoscaler(const Cluster& cluster, const fw::Framework& framework, std::uint64_t seed)
    : cluster_(&cluster),
      fw_(&framework),
      config_(&cluster.world().autoscaler),
      snap_(cluster),
      state_(framework.plugin_count()),
      expander_random_(seed, "autoscaler-expander") {
  const std::size_t n = cluster.nodes().size();
  group_of_.assign(n, -1);
  node_state_.assign(n, State::kReady);
  unneeded_since_.assign(n, -1);
  books.requested_at.assign(n, -1);
  books.waiting.resize(n);
  books.billed_since.assign(n, -1);
  books.billed_seconds.assign(n, 0.0);
  for (std::size_t id = 0; id < n; ++id) {
    if (!cluster.node(static_cast<NodeId>(id)).absent) books.billed_since[id] = 0;
  }
  for (const PoolAutoscaling& p : config_->pools) {
    const auto g = static_cast<std::int32_t>(groups_.size());
    groups_.push_back(Group{&p, 0});
    for (NodeId id : p.nodes) {
      group_of_.at(id) = g;
      node_state_[id] = cluster.node(id).absent ? State::kAbsent : State::kReady;
      if (node_state_[id] == State::kReady) ++groups_.back().size;
    }
  }
}

std::int32_t Autoscaler::total_nodes() const {
  // Every node outside the groups, and the groups' provisioning and Ready ones.
  std::int32_t total = 0;
  for (std::size_t id = 0; id < node_state_.size(); ++id)
    total += group_of_[id] < 0 || node_state_[id] != State::kAbsent ? 1 : 0;
  return total;
}

bool Autoscaler::pre_filter(PodId pod) {
  state_.begin_cycle(pod);
  return fw_->run_pre_filter(state_, cluster_->spec(pod), snap_).is_success();
}

bool Autoscaler::fits(PodId pod, const NodeInfo& node) const {
  return fw_->run_filters(state_, cluster_->spec(pod), node).is_success();
}

bool Autoscaler::fits_existing(PodId pod) const {
  const PodSpec& spec = cluster_->spec(pod);
  for (const NodeInfo& n : cluster_->nodes()) {
    if (n.absent || n.free(kPods) < 1) continue;
    bool room = true;  // requests first: most nodes are ruled out without a plugin
    for (const auto& [r, want] : spec.requests.items)
      room = room && (r == kPods || want <= n.free(r));
    if (room && fits(pod, n)) return true;
  }
  return false;
}

void Autoscaler::place(PodId pod, NodeInfo& node) {
  // Requests only (as the scheduler counts nominated pods): device resources count by number.
  node.add_requests(cluster_->spec(pod));
  node.pods.push_back(pod);
}

std::int32_t Autoscaler::binpack(const NodeInfo& tmpl, std::span<const PodId> pods,
                                 std::int32_t limit, std::vector<PodId>& placed,
                                 std::vector<NodeInfo>* bins_out) {
  std::vector<NodeInfo> local;
  std::vector<NodeInfo>& bins = bins_out != nullptr ? *bins_out : local;
  const std::size_t opened_before = bins.size();
  for (PodId p : pods) {
    if (!pre_filter(p)) continue;
    bool done = false;
    for (NodeInfo& b : bins) {
      if (fits(p, b)) {
        place(p, b);
        done = true;
        break;
      }
    }
    if (!done && static_cast<std::int32_t>(bins.size() - opened_before) < limit) {
      if (fits(p, tmpl)) {
        bins.push_back(tmpl);
        place(p, bins.back());
        done = true;
      }
    }
    if (done) placed.push_back(p);
  }
  return static_cast<std::int32_t>(bins.size() - opened_before);
}

std::optional<Autoscaler::Option> Autoscaler::plan_scale_up(std::span<const PodId> pending) {
  if (pending.empty()) return std::nullopt;
  // 1. Pods the nodes being provisioned will take are not a reason to scale up.
  std::vector<NodeInfo> upcoming;
  for (std::size_t id = 0; id < node_state_.size(); ++id) {
    if (group_of_[id] >= 0 && node_state_[id] == State::kProvisioning)
      upcoming.push_back(cluster_->template_node(static_cast<NodeId>(id)));
  }
  std::vector<PodId> rest;
  // Existing nodes with pending pods placed on them in this simulation (copies).
  std::vector<std::pair<NodeId, NodeInfo>> placed_on;
  for (PodId p : pending) {
    // A pod PreFilter rejects fits no template either.
    if (!pre_filter(p)) continue;
    // Pods that fit an existing node now (one that just became Ready, or freed room) are the
    // scheduler's, not a reason to scale up (upstream's filterOutSchedulable, which places them
    // one after the other).
    bool existing = false;
    for (auto& [id, copy] : placed_on) {
      if (fits(p, copy)) {
        place(p, copy);
        existing = true;
        break;
      }
    }
    if (!existing && fits_existing(p)) {
      // The first untouched node it fits takes it.
      const PodSpec& spec = cluster_->spec(p);
      for (const NodeInfo& n : cluster_->nodes()) {
        if (n.absent || n.free(kPods) < 1) continue;
        if (std::any_of(placed_on.begin(), placed_on.end(),
                        [&](const auto& e) { return e.first == n.id; })) {
          continue;
        }
        bool room = true;
        for (const auto& [r, want] : spec.requests.items)
          room = room && (r == kPods || want <= n.free(r));
        if (room && fits(p, n)) {
          placed_on.emplace_back(n.id, n);
          place(p, placed_on.back().second);
          existing = true;
          break;
        }
      }
    }
    if (existing) continue;
    bool taken = false;
    for (NodeInfo& u : upcoming) {
      if (fits(p, u)) {
        place(p, u);
        taken = true;
        break;
      }
    }
    if (!taken) rest.push_back(p);
  }
  if (rest.empty()) return std::nullopt;
  // 2. One option per group with room: the nodes its template needs for the pods that fit it.
  std::int32_t room_total = std::numeric_limits<std::int32_t>::max();
  if (config_->max_nodes_total > 0) room_total = config_->max_nodes_total - total_nodes();
  if (room_total <= 0) return std::nullopt;
  std::vector<Option> options;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const PoolAutoscaling& spec = *groups_[g].spec;
    const std::int32_t room = std::min(spec.max - groups_[g].size, room_total);
    if (room <= 0) continue;
    NodeId tmpl_id = kNoNode;
    for (NodeId id : spec.nodes) {
      if (node_state_[id] == State::kAbsent) {
        tmpl_id = id;
        break;
      }
    }
    if (tmpl_id == kNoNode) continue;
    const NodeInfo tmpl = cluster_->template_node(tmpl_id);
    Option o;
    o.group = g;
    std::vector<NodeInfo> bins;
    o.nodes = binpack(tmpl, rest, room, o.pods, &bins);
    if (o.nodes == 0) continue;
    // least-waste: the unrequested share of the new nodes' CPU, memory and GPUs.
    double waste = 0;
    for (ResourceId r : {kCpu, kMemory}) {
      const double offered = static_cast<double>(tmpl.allocatable[r]) * o.nodes;
      double used = 0;
      for (const NodeInfo& b : bins)
        used += static_cast<double>(b.requested[r]);
      if (offered > 0) waste += (offered - used) / offered;
    }
    const double gpus = static_cast<double>(tmpl.spec->gpu_count) * o.nodes;
    if (gpus > 0) {
      double used = 0;
      for (PodId p : o.pods) {
        const PodSpec& ps = cluster_->spec(p);
        used += ps.gpu_milli > 0 ? ps.gpu_milli / 1000.0 : ps.gpu_count;
      }
      waste += std::max(0.0, gpus - used) / gpus;
    }
    o.waste = waste;
    options.push_back(std::move(o));
  }
  if (options.empty()) return std::nullopt;
  // 3. The expander. Ties (and `random`) are broken by the expander's own stream, as upstream
  //    falls back to random among equally good options.
  std::vector<std::size_t> best;
  auto keep_best = [&](auto better, auto equal) {
    for (std::size_t i = 0; i < options.size(); ++i) {
      if (best.empty() || better(options[i], options[best.front()])) {
        best.assign(1, i);
      } else if (equal(options[i], options[best.front()])) {
        best.push_back(i);
      }
    }
  };
  switch (config_->expander) {
    case Expander::kLeastWaste:
      keep_best(
          [](const Option& a, const Option& b) { return a.waste < b.waste - 1e-12; },
          [](const Option& a, const Option& b) { return std::abs(a.waste - b.waste) <= 1e-12; });
      break;
    case Expander::kPriority:
      keep_best(
          [&](const Option& a, const Option& b) {
            return groups_[a.group].spec->priority > groups_[b.group].spec->priority;
          },
          [&](const Option& a, const Option& b) {
            return groups_[a.group].spec->priority == groups_[b.group].spec->priority;
          });
      break;
    case Expander::kRandom:
      for (std::size_t i = 0; i < options.size(); ++i)
        best.push_back(i);
      break;
  }
  const std::size_t pick =
      best.size() == 1 ? best.front() : best[expander_random_.below(best.size())];
  return std::move(options[pick]);
}

std::vector<NodeId> Autoscaler::provision(std::size_t group, std::int32_t count) {
  std::vector<NodeId> out;
  Group& g = groups_.at(group);
  for (NodeId id : g.spec->nodes) {
    if (static_cast<std::int32_t>(out.size()) == count) break;
    if (node_state_[id] != State::kAbsent) continue;
    node_state_[id] = State::kProvisioning;
    out.push_back(id);
  }
  CAPSIM_CHECK(
      static_cast<std::int32_t>(out.size()) == count,
      fmt::format("pool {} has fewer absent nodes than a scale-up asked for", g.spec->pool));
  g.size += count;
  CAPSIM_CHECK(g.size <= g.spec->max, fmt::format("pool {} grew past its max", g.spec->pool));
  return out;
}

void Autoscaler::mark_ready(NodeId node) {
  CAPSIM_CHECK(node_state_.at(node) == State::kProvisioning,
               "a node became Ready that was not being provisioned");
  node_state_[node] = State::kReady;
  unneeded_since_[node] = -1;
}

bool Autoscaler::unneeded(const NodeInfo& node) const {
  if (node.down || node.cordoned) return false;  // failures and maintenance own it meanwhile
  // Empty but for running DaemonSet pods, which upstream does not count (they stop with the
  // node).
  for (PodId p : node.pods) {
    if (cluster_->spec(p).controller_kind != "DaemonSet") return false;
    if (cluster_->pod(p).phase != PodPhase::kRunning) return false;
  }
  return true;
}

std::vector<NodeId> Autoscaler::plan_scale_down(SimTime now) {
  std::vector<NodeId> out;
  for (Group& g : groups_) {
    for (NodeId id : g.spec->nodes) {
      if (node_state_[id] != State::kReady) continue;
      if (!unneeded(cluster_->node(id))) {
        unneeded_since_[id] = -1;
        continue;
      }
      if (unneeded_since_[id] < 0) unneeded_since_[id] = now;
      if (now - unneeded_since_[id] < g.spec->unneeded_time || g.size <= g.spec->min) continue;
      node_state_[id] = State::kAbsent;
      unneeded_since_[id] = -1;
      --g.size;
      out.push_back(id);
    }
  }
  return out;
}

bool Autoscaler::can_shrink() const {
  for (const Group& g : groups_) {
    if (g.size > g.spec->min) return true;
  }
  return false;
}

}  // namespace capsim
