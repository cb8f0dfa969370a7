#include "sim/run/autoscaler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/check.hpp"

namespace capsim {

Autoscaler::Autoscaler(const Cluster& cluster, const fw::Framework& framework, std::uint64_t seed,
                       ScaleDownConfig scale_down)
    : cluster_(&cluster),
      fw_(&framework),
      config_(&cluster.world().autoscaler),
      down_(scale_down),
      snap_(cluster),
      state_(framework.plugin_count()),
      expander_random_(seed, "autoscaler-expander") {
  const std::size_t n = cluster.nodes().size();
  group_of_.assign(n, -1);
  node_state_.assign(n, State::kReady);
  unneeded_since_.assign(n, -1);
  drain_started_.assign(n, -1);
  recheck_at_.assign(n, -1);
  replaces_.assign(n, kNoNode);
  pods_sig_.assign(n, 0);
  pods_changed_.assign(n, 0);
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
    const NodeId tmpl_id = first_absent(spec);
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

void Autoscaler::note_scale_up(SimTime now) {
  last_scale_up_ = now;
}

void Autoscaler::mark_ready(NodeId node) {
  CAPSIM_CHECK(node_state_.at(node) == State::kProvisioning,
               "a node became Ready that was not being provisioned");
  node_state_[node] = State::kReady;
  unneeded_since_[node] = -1;
  pods_sig_[node] = ~std::uint64_t{0};  // consolidate_after counts from the next scan
}

bool Autoscaler::empty(const NodeInfo& node) const {
  // Empty but for running DaemonSet pods, which upstream does not count (they stop with the
  // node).
  for (PodId p : node.pods) {
    if (*cluster_->spec(p).controller_kind != "DaemonSet") return false;
    if (cluster_->pod(p).phase != PodPhase::kRunning) return false;
  }
  return true;
}

NodeId Autoscaler::first_absent(const PoolAutoscaling& spec) const {
  for (NodeId id : spec.nodes) {
    if (node_state_[id] == State::kAbsent) return id;
  }
  return kNoNode;
}

double Autoscaler::utilization(const NodeInfo& n) {
  if (n.spec->gpu_count > 0 && !n.gpus.empty()) {
    // upstream's utilization.Calculate: a GPU node is judged by its GPUs alone.
    double alloc = 0;
    for (const GpuDeviceState& g : n.gpus)
      alloc += g.alloc;
    return alloc / static_cast<double>(n.gpus.size());
  }
  auto share = [&](ResourceId r) {
    return n.allocatable[r] > 0
               ? static_cast<double>(n.requested[r]) / static_cast<double>(n.allocatable[r])
               : 0.0;
  };
  return std::max(share(kCpu), share(kMemory));
}

const char* Autoscaler::unmovable(PodId pod, DisruptionBudgets& budgets) const {
  const PodSpec& spec = cluster_->spec(pod);
  if (!spec.requeue_on_preemption) return "a pod no controller recreates";
  if (!spec.node_name->empty()) return "a pod bound to its node by spec.nodeName";
  if (spec.gang != kNoGang) return "a gang member (its eviction would restart the whole gang)";
  if (!spec.claims.empty() || spec.compute_domain >= 0) return "a pod with DRA claims";
  if (spec.pod_rules->has_pod_affinity() || !spec.pod_rules->spread.empty())
    return "a pod with inter-pod affinity or topology spread constraints";
  if (spec.namespace_ == "kube-system" && !budgets.covered(pod))
    return "a kube-system pod without a PodDisruptionBudget";
  return nullptr;
}

std::vector<PodId> Autoscaler::movers(const NodeInfo& node) const {
  std::vector<PodId> out;
  for (PodId p : node.pods) {
    if (*cluster_->spec(p).controller_kind == "DaemonSet") continue;
    const PodPhase ph = cluster_->pod(p).phase;
    if (ph == PodPhase::kRunning || ph == PodPhase::kCrashBackoff) out.push_back(p);
  }
  return out;
}

const char* Autoscaler::blocker(const NodeInfo& node, DisruptionBudgets& budgets) const {
  for (PodId p : movers(node)) {
    if (const char* why = unmovable(p, budgets)) return why;
  }
  return nullptr;
}

bool Autoscaler::place_elsewhere(const NodeInfo& node, const std::vector<std::uint8_t>& excluded,
                                 Scratch& scratch, std::vector<PodId>* left) {
  std::vector<std::uint8_t> skip = excluded;
  skip[node.id] = 1;
  return place_pods(movers(node), skip, scratch, left);
}

bool Autoscaler::place_pods(std::span<const PodId> pods, const std::vector<std::uint8_t>& excluded,
                            Scratch& scratch, std::vector<PodId>* left) {
  bool all = true;
  for (PodId p : pods) {
    const PodSpec& spec = cluster_->spec(p);
    bool placed = false;
    if (pre_filter(p)) {
      for (const NodeInfo& real : cluster_->nodes()) {
        if (excluded[real.id] != 0 || real.absent || real.down || real.cordoned) {
          continue;
        }
        const NodeInfo& n = scratch.view(real);
        if (n.free(kPods) < 1) continue;
        bool room = true;  // requests first: most nodes are ruled out without a plugin
        for (const auto& [r, want] : spec.requests.items)
          room = room && (r == kPods || want <= n.free(r));
        if (!room || !fits(p, n)) continue;
        if (scratch.slot[real.id] < 0) {
          scratch.slot[real.id] = static_cast<std::int32_t>(scratch.copies.size());
          scratch.copies.push_back(real);
        }
        place(p, scratch.copies[static_cast<std::size_t>(scratch.slot[real.id])]);
        placed = true;
        break;
      }
    }
    if (placed) continue;
    all = false;
    if (left == nullptr) return false;
    left->push_back(p);
  }
  return all;
}

void Autoscaler::start_drain(NodeId node, SimTime now) {
  Group& g = groups_[static_cast<std::size_t>(group_of_[node])];
  CAPSIM_CHECK(node_state_[node] == State::kReady && g.size > g.spec->min,
               fmt::format("node {}: a drain of a node that is not Ready or at its group's min",
                           cluster_->node(node).spec->name));
  node_state_[node] = State::kDraining;
  unneeded_since_[node] = -1;
  drain_started_[node] = now;
  --g.size;
}

void Autoscaler::drained(NodeId node) {
  CAPSIM_CHECK(node_state_.at(node) == State::kDraining,
               "a node was removed that was not draining");
  node_state_[node] = State::kAbsent;
  drain_started_[node] = -1;
}

void Autoscaler::abort_drain(NodeId node) {
  CAPSIM_CHECK(node_state_.at(node) == State::kDraining, "a drain given up that was not running");
  node_state_[node] = State::kReady;
  drain_started_[node] = -1;
  ++groups_[static_cast<std::size_t>(group_of_[node])].size;
}

NodeId Autoscaler::take_replaced(NodeId fresh) {
  const NodeId old = replaces_.at(fresh);
  replaces_[fresh] = kNoNode;
  return old;
}

std::vector<NodeId> Autoscaler::draining() const {
  std::vector<NodeId> out;
  for (std::size_t id = 0; id < node_state_.size(); ++id) {
    if (node_state_[id] == State::kDraining) out.push_back(static_cast<NodeId>(id));
  }
  return out;
}

Autoscaler::ScaleDown Autoscaler::plan_scale_down(SimTime now, DisruptionBudgets& budgets,
                                                  std::span<const PodId> pending) {
  ScaleDown out;
  if (down_.consolidation.enabled) {
    plan_consolidation(now, budgets, pending, out);
  } else {
    plan_cluster_autoscaler(now, budgets, out);
  }
  return out;
}

void Autoscaler::plan_cluster_autoscaler(SimTime now, DisruptionBudgets& budgets, ScaleDown& out) {
  // 1. Which Ready nodes are unneeded now: empty ones, and (threshold > 0) those below the
  //    utilisation threshold whose pods all move. The simulation commits each unneeded node's
  //    pods to the copies of the nodes that take them, so a later candidate sees them there.
  const std::size_t n_nodes = node_state_.size();
  std::vector<std::uint8_t> excluded(n_nodes, 0);  // unneeded or draining: takes no pod
  std::vector<std::pair<double, NodeId>> candidates;
  std::vector<NodeId> empties;
  for (std::size_t id = 0; id < n_nodes; ++id) {
    if (node_state_[id] == State::kDraining) excluded[id] = 1;
  }
  // Per group, how many nodes it may still lose (upstream leaves a group at its min size out of
  // the candidates): the empty nodes within that count take no pod, the rest may.
  std::vector<std::int32_t> shrinkable(groups_.size());
  std::vector<std::size_t> group_index(n_nodes, 0);
  for (std::size_t gi = 0; gi < groups_.size(); ++gi) {
    Group& g = groups_[gi];
    shrinkable[gi] = g.size - g.spec->min;
    for (NodeId id : g.spec->nodes) {
      group_index[id] = gi;
      if (node_state_[id] != State::kReady) continue;
      const NodeInfo& n = cluster_->node(id);
      if (n.down || n.cordoned) {
        unneeded_since_[id] = -1;  // failures and maintenance own it meanwhile
        continue;
      }
      if (empty(n)) {
        empties.push_back(id);
        if (shrinkable[gi] > 0) {
          excluded[id] = 1;
          --shrinkable[gi];
        }
      }
    }
  }
  for (std::size_t gi = 0; gi < groups_.size(); ++gi) {
    for (NodeId id : groups_[gi].spec->nodes) {
      if (node_state_[id] != State::kReady) continue;
      const NodeInfo& n = cluster_->node(id);
      if (n.down || n.cordoned || empty(n)) continue;
      const double u = utilization(n);
      const double threshold = n.spec->gpu_count > 0 && !n.gpus.empty()
                                   ? down_.gpu_utilization_threshold
                                   : down_.utilization_threshold;
      if (u < threshold && blocker(n, budgets) == nullptr) {
        candidates.emplace_back(u, id);
      } else {
        unneeded_since_[id] = -1;
      }
    }
  }
  // Least utilised first (ties by node id): the likeliest to empty.
  std::sort(candidates.begin(), candidates.end());
  Scratch scratch;
  scratch.slot.assign(n_nodes, -1);
  std::vector<NodeId> unneeded_full;
  for (const auto& [u, id] : candidates) {
    (void)u;
    const std::size_t gi = group_index[id];
    if (scratch.slot[id] >= 0 || shrinkable[gi] <= 0) {
      // It took another candidate's pods in this simulation, or its group is at its min.
      unneeded_since_[id] = -1;
      continue;
    }
    Scratch trial = scratch;
    excluded[id] = 1;
    if (place_elsewhere(cluster_->node(id), excluded, trial, nullptr)) {
      scratch = std::move(trial);
      --shrinkable[gi];
      unneeded_full.push_back(id);
    } else {
      excluded[id] = 0;
      unneeded_since_[id] = -1;
    }
  }
  for (NodeId id : empties) {
    if (unneeded_since_[id] < 0) unneeded_since_[id] = now;
  }
  for (NodeId id : unneeded_full) {
    if (unneeded_since_[id] < 0) unneeded_since_[id] = now;
  }
  // 2. Removal: not within --scale-down-delay-after-add of the last scale-up (upstream's
  //    default applies it to all groups); unneeded long enough; never below min.
  // Upstream looks for unneeded nodes only "if no scale-up is needed": none in a scan that
  // scaled up, whatever the delay.
  if (last_scale_up_ >= 0 &&
      (now == last_scale_up_ || now - last_scale_up_ < down_.delay_after_add))
    return;
  for (Group& g : groups_) {
    for (NodeId id : g.spec->nodes) {
      if (node_state_[id] != State::kReady || unneeded_since_[id] < 0) continue;
      if (std::find(empties.begin(), empties.end(), id) == empties.end()) continue;
      if (now - unneeded_since_[id] < g.spec->unneeded_time || g.size <= g.spec->min) continue;
      node_state_[id] = State::kAbsent;
      unneeded_since_[id] = -1;
      --g.size;
      out.removed.push_back(id);
    }
  }
  // One non-empty node at a time, and not while another drains.
  for (std::size_t id = 0; id < n_nodes; ++id) {
    if (node_state_[id] == State::kDraining) return;
  }
  for (NodeId id : unneeded_full) {
    Group& g = groups_[static_cast<std::size_t>(group_of_[id])];
    if (now - unneeded_since_[id] < g.spec->unneeded_time || g.size <= g.spec->min) continue;
    if (recheck_at_[id] > now) continue;
    const EvictionVerdict v = budgets.may_evict_all(*cluster_, movers(cluster_->node(id)));
    if (!v.allowed) {
      // Upstream saves the node and looks again after --unremovable-node-recheck-timeout (5 min).
      recheck_at_[id] = now + 5 * kMinute;
      out.blocked.emplace_back(id, v.reason);
      continue;
    }
    out.drain = id;
    out.drain_why =
        fmt::format("utilisation {:.3f} below {} for {}; its pods fit elsewhere",
                    utilization(cluster_->node(id)),
                    cluster_->node(id).spec->gpu_count > 0 ? down_.gpu_utilization_threshold
                                                           : down_.utilization_threshold,
                    format_duration(now - unneeded_since_[id]));
    start_drain(id, now);
    return;
  }
}

void Autoscaler::plan_consolidation(SimTime now, DisruptionBudgets& budgets,
                                    std::span<const PodId> pending, ScaleDown& out) {
  const ConsolidationConfig& k = down_.consolidation;
  const std::size_t n_nodes = node_state_.size();
  // consolidateAfter counts from the last time a pod was bound to or left the node.
  for (const Group& g : groups_) {
    for (NodeId id : g.spec->nodes) {
      if (node_state_[id] != State::kReady) continue;
      std::uint64_t sig = 0x9e3779b97f4a7c15ULL * (cluster_->node(id).pods.size() + 1);
      for (PodId p : cluster_->node(id).pods)
        sig ^= (p + 0x9e3779b97f4a7c15ULL) * 0xbf58476d1ce4e5b9ULL;  // order-free
      if (sig != pods_sig_[id]) {
        pods_sig_[id] = sig;
        pods_changed_[id] = now;
      }
    }
  }
  auto settled = [&](NodeId id) { return now - pods_changed_[id] >= k.consolidate_after; };
  // 1. Empty nodes go at once (never below min).
  for (Group& g : groups_) {
    for (NodeId id : g.spec->nodes) {
      if (node_state_[id] != State::kReady) continue;
      const NodeInfo& n = cluster_->node(id);
      if (n.down || n.cordoned || !empty(n) || !settled(id) || g.size <= g.spec->min) continue;
      node_state_[id] = State::kAbsent;
      --g.size;
      out.removed.push_back(id);
    }
  }
  if (k.policy != ConsolidationPolicy::kWhenEmptyOrUnderutilized) return;
  // 2. One disruption at a time.
  for (std::size_t id = 0; id < n_nodes; ++id) {
    if (node_state_[id] == State::kDraining) return;
  }
  // Candidates: fewest pods first (Karpenter's disruption cost), then the dearer node, then id.
  struct Candidate {
    std::size_t pods;
    double price;
    NodeId id;
  };
  std::vector<Candidate> candidates;
  for (const Group& g : groups_) {
    for (NodeId id : g.spec->nodes) {
      if (node_state_[id] != State::kReady) continue;
      const NodeInfo& n = cluster_->node(id);
      if (n.down || n.cordoned || empty(n) || !settled(id) || recheck_at_[id] > now) continue;
      if (blocker(n, budgets) != nullptr) continue;
      candidates.push_back(Candidate{movers(n).size(), n.spec->price_per_hour, id});
    }
  }
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.pods != b.pods) return a.pods < b.pods;
    if (a.price != b.price) return a.price > b.price;
    return a.id < b.id;
  });
  std::vector<std::uint8_t> excluded(n_nodes, 0);
  for (const Candidate& c : candidates) {
    Group& g = groups_[static_cast<std::size_t>(group_of_[c.id])];
    const NodeInfo& n = cluster_->node(c.id);
    // The pending pods take their room first (those that fit nowhere stay pending).
    Scratch scratch;
    scratch.slot.assign(n_nodes, -1);
    excluded[c.id] = 1;
    std::vector<PodId> still_pending;
    place_pods(pending, excluded, scratch, &still_pending);
    excluded[c.id] = 0;
    std::vector<PodId> left;
    const bool all = place_elsewhere(n, excluded, scratch, &left);
    std::optional<std::size_t> replacement;
    double best = c.price;
    if (!all) {
      if (!k.replace) continue;
      // The cheapest group with room whose one new node takes the rest.
      std::int32_t room_total = std::numeric_limits<std::int32_t>::max();
      if (config_->max_nodes_total > 0) room_total = config_->max_nodes_total - total_nodes();
      for (std::size_t r = 0; r < groups_.size(); ++r) {
        const PoolAutoscaling& spec = *groups_[r].spec;
        if (spec.max - groups_[r].size <= 0 || room_total <= 0) continue;
        const NodeId tmpl_id = first_absent(spec);
        if (tmpl_id == kNoNode) continue;
        const double price = cluster_->world().nodes[tmpl_id].price_per_hour;
        if (price >= best) continue;  // only cheaper
        std::vector<PodId> placed;
        binpack(cluster_->template_node(tmpl_id), left, 1, placed, nullptr);
        if (placed.size() != left.size()) continue;
        best = price;
        replacement = r;
      }
      if (!replacement) continue;
    } else if (g.size <= g.spec->min) {
      continue;  // a deletion would take the group below its min
    }
    if (replacement && *replacement != static_cast<std::size_t>(group_of_[c.id]) &&
        g.size <= g.spec->min) {
      continue;
    }
    const EvictionVerdict v = budgets.may_evict_all(*cluster_, movers(n));
    if (!v.allowed) {
      recheck_at_[c.id] = now + 5 * kMinute;
      out.blocked.emplace_back(c.id, v.reason);
      continue;
    }
    if (!replacement) {
      out.drain = c.id;
      out.drain_why = fmt::format("consolidation: its {} pod(s) fit on the other nodes", c.pods);
      start_drain(c.id, now);
    } else {
      out.replace_old = c.id;
      out.replace_group = *replacement;
      out.replace_why = fmt::format(
          "consolidation: its {} pod(s) fit on the other nodes and one {} node ({:.2f}/h instead "
          "of {:.2f}/h)",
          c.pods, groups_[*replacement].spec->pool, best, c.price);
      start_drain(c.id, now);
      drain_started_[c.id] = -1;  // evictions wait for the replacement
    }
    return;
  }
}

bool Autoscaler::can_shrink() const {
  for (const Group& g : groups_) {
    if (g.size > g.spec->min) return true;
  }
  return false;
}

}  // namespace capsim
