#include "models/plugins/pod_topology_spread.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace capsim::plugins {

namespace {

struct SpreadState final : fw::StateData {
  std::vector<PodTopologySpread::Constraint> hard;  // PreFilter -> Filter
  std::vector<PodTopologySpread::Constraint> soft;  // PreScore -> Score
  std::vector<NodeId> scored;                       // PreScore's node list, in order
  std::vector<std::uint8_t> ignored;                // per NodeId: lacks a topology key
  const fw::Snapshot* snap = nullptr;               // PreScore's, for Score's per-node counts
  const fw::Snapshot* filter_snap = nullptr;        // PreFilter's
};

// The label a constraint reads on a node; kNoSym when the node lacks it.
Sym domain_of(const PodTopologySpread::Constraint& c, const NodeInfo& node) {
  return node.spec->labels.get(c.spec->topology_key);
}

// nodeLabelsMatchSpreadConstraints: the node carries every constraint's topology key.
bool has_all_keys(const std::vector<PodTopologySpread::Constraint>& cs, const NodeInfo& node) {
  return std::all_of(cs.begin(), cs.end(),
                     [&](const auto& c) { return domain_of(c, node) != kNoSym; });
}

}  // namespace

PodTopologySpread::PodTopologySpread(PluginContext& ctx, PodTopologySpreadArgs args)
    : pool_(&ctx.world.strings),
      args_(std::move(args)),
      hostname_key_(ctx.world.strings.find("kubernetes.io/hostname")),
      not_match_(ctx.reasons.intern("node(s) didn't match pod topology spread constraints")),
      missing_label_(ctx.reasons.intern(
          "node(s) didn't match pod topology spread constraints (missing required label)")) {
  if (args_.defaulting == SpreadDefaulting::kSystem) {
    // pkg/scheduler/apis/config/v1 systemDefaultConstraints: hostname maxSkew 3, zone maxSkew 5,
    // both ScheduleAnyway. A key no node or pod names is kNoSym: no node carries it.
    TopologySpreadConstraint host;
    host.max_skew = 3;
    host.topology_key = hostname_key_;
    host.when_unsatisfiable = WhenUnsatisfiable::kScheduleAnyway;
    TopologySpreadConstraint zone;
    zone.max_skew = 5;
    zone.topology_key = ctx.world.strings.find("topology.kubernetes.io/zone");
    zone.when_unsatisfiable = WhenUnsatisfiable::kScheduleAnyway;
    defaults_ = {host, zone};
  } else {
    defaults_ = args_.default_constraints;
  }
}

bool PodTopologySpread::collect(const PodSpec& pod, WhenUnsatisfiable action,
                                std::vector<Constraint>& out) const {
  out.clear();
  const bool own = !pod.pod_rules->spread.empty();
  if (!own && !pod.pod_rules->owner_selector.present) return false;
  const auto& source = own ? pod.pod_rules->spread : defaults_;
  for (const TopologySpreadConstraint& t : source) {
    if (t.when_unsatisfiable != action) continue;
    Constraint c;
    c.spec = &t;
    c.selector = own ? &t.selector : &pod.pod_rules->owner_selector;
    c.hostname = t.topology_key == hostname_key_ && hostname_key_ != kNoSym;
    // countPodsMatchSelector returns 0 for an empty selector ({}), unless matchLabelKeys found
    // one of its keys on the pod and so made the merged selector non-empty.
    bool keys_added = false;
    for (Sym k : t.match_label_keys)
      keys_added = keys_added || pod.labels.has(k);
    c.counts_none = c.selector->empty() && !keys_added;
    out.push_back(std::move(c));
  }
  return !out.empty();
}

bool PodTopologySpread::included(const Constraint& c, const PodSpec& pod,
                                 const NodeInfo& node) const {
  if (c.spec->node_affinity_policy == NodeInclusionPolicy::kHonor) {
    // The pod's required node affinity: nodeSelector and required terms.
    if (!node.spec->labels.contains_all(pod.node_selector)) return false;
    if (pod.affinity->required &&
        !matches_any_term(*pod.affinity->required,
                          NodeView{&node.spec->labels, node.spec->name_sym}, *pool_)) {
      return false;
    }
  }
  if (c.spec->node_taints_policy == NodeInclusionPolicy::kHonor) {
    for (const Taint& t : node.spec->taints) {
      if (t.effect == TaintEffect::kPreferNoSchedule) continue;
      if (!tolerates_any(pod.tolerations, t)) return false;
    }
  }
  return true;
}

std::int64_t PodTopologySpread::count_on(const Constraint& c, const PodSpec& pod,
                                         const NodeInfo& node, const fw::Snapshot& snap) const {
  if (c.counts_none) return 0;
  std::int64_t n = 0;
  for (PodId p : node.pods) {
    const PodSpec& other = snap.pod(p);
    // Terminating pods are not counted (upstream: DeletionTimestamp set), nor other namespaces.
    if (snap.state(p).phase == PodPhase::kTerminating) continue;
    if (other.namespace_ != pod.namespace_) continue;
    if (!selector_matches(*c.selector, other.labels)) continue;
    if (!label_keys_match(c.spec->match_label_keys, {}, pod.labels, other.labels)) continue;
    ++n;
  }
  return n;
}

fw::Status PodTopologySpread::pre_filter(fw::CycleState& state, const PodSpec& pod,
                                         const fw::Snapshot& snap) {
  if (pod.pod_rules->spread.empty() && !pod.pod_rules->owner_selector.present) {
    return fw::Status::skip();
  }
  auto& s = state.reuse<SpreadState>(slot());
  if (!collect(pod, WhenUnsatisfiable::kDoNotSchedule, s.hard)) return fw::Status::skip();
  // calPreFilterState: every node carrying all the keys and passing the inclusion policies is a
  // domain of each constraint, counted even with no matching pod.
  for (const NodeInfo& node : snap.nodes()) {
    if (!has_all_keys(s.hard, node)) continue;
    for (Constraint& c : s.hard) {
      if (!included(c, pod, node)) continue;
      c.counts[domain_of(c, node)] += count_on(c, pod, node, snap);
    }
  }
  constexpr std::int64_t kNone = std::numeric_limits<std::int32_t>::max();
  for (Constraint& c : s.hard) {
    std::int64_t min = kNone, second = kNone;
    Sym at = kNoSym;
    for (const auto& [domain, n] : c.counts) {
      // The lowest domain symbol on ties, so the pair does not depend on the map's order.
      if (n < min || (n == min && domain < at)) {
        second = min;
        min = n;
        at = domain;
      } else {
        second = std::min(second, n);
      }
    }
    c.min_domain = at;
    c.second_min = second;
    // minDomains: with fewer eligible domains than minDomains the global minimum is 0.
    if (static_cast<std::int64_t>(c.counts.size()) < c.spec->min_domains) min = 0;
    c.min_match = min;
  }
  s.filter_snap = &snap;
  return fw::Status::success();
}

fw::Status PodTopologySpread::filter(const fw::CycleState& state, const PodSpec& pod,
                                     const NodeInfo& node) const {
  const auto* s = state.read<SpreadState>(slot());
  // A node other than the snapshot's own (DefaultPreemption's copy without its victims, the
  // scheduler's with the nominated pods): upstream's PreFilterExtensions AddPod/RemovePod
  // update the domain's count and the critical paths by those pods; here the difference of the
  // two nodes' matching pods is counted.
  const NodeInfo* base = s->filter_snap != nullptr && &s->filter_snap->node(node.id) != &node
                             ? &s->filter_snap->node(node.id)
                             : nullptr;
  const bool counted = base != nullptr && has_all_keys(s->hard, node);
  for (const Constraint& c : s->hard) {
    const Sym domain = domain_of(c, node);
    if (domain == kNoSym) return fw::Status::unresolvable(missing_label_);
    // 'existing matching num' + 'self-match (1 or 0)' - 'global minimum' <= maxSkew
    const std::int64_t self = selector_matches(*c.selector, pod.labels) ? 1 : 0;
    auto it = c.counts.find(domain);
    std::int64_t matching = it == c.counts.end() ? 0 : it->second;
    std::int64_t min = c.min_match;
    if (counted && included(c, pod, node)) {
      const std::int64_t delta =
          count_on(c, pod, node, *s->filter_snap) - count_on(c, pod, *base, *s->filter_snap);
      if (delta != 0) {
        matching += delta;
        if (static_cast<std::int64_t>(c.counts.size()) >= c.spec->min_domains) {
          min = std::min(domain == c.min_domain ? c.second_min : c.min_match, matching);
        }
      }
    }
    if (matching + self - min > c.spec->max_skew) {
      return fw::Status::unschedulable(not_match_);
    }
  }
  return fw::Status::success();
}

fw::Status PodTopologySpread::pre_score(fw::CycleState& state, const PodSpec& pod,
                                        std::span<const NodeId> nodes, const fw::Snapshot& snap) {
  if (pod.pod_rules->spread.empty() && !pod.pod_rules->owner_selector.present) {
    return fw::Status::skip();
  }
  auto& s = state.reuse<SpreadState>(slot());
  if (!collect(pod, WhenUnsatisfiable::kScheduleAnyway, s.soft)) return fw::Status::skip();
  // Nodes need every topology key only under the pod's own constraints or listed defaults; the
  // system defaults let a node without a zone label still be spread by hostname.
  const bool require_all =
      !pod.pod_rules->spread.empty() || args_.defaulting != SpreadDefaulting::kSystem;
  s.scored.assign(nodes.begin(), nodes.end());
  s.ignored.assign(snap.nodes().size(), 0);
  std::int64_t ignored = 0;
  std::vector<std::int64_t> domains(s.soft.size(), 0);
  for (NodeId id : nodes) {
    const NodeInfo& node = snap.node(id);
    if (require_all && !has_all_keys(s.soft, node)) {
      s.ignored[id] = 1;
      ++ignored;
      continue;
    }
    for (std::size_t i = 0; i < s.soft.size(); ++i) {
      Constraint& c = s.soft[i];
      if (c.hostname) continue;  // counted per node in Score
      if (c.counts.emplace(domain_of(c, node), 0).second) ++domains[i];
    }
  }
  for (std::size_t i = 0; i < s.soft.size(); ++i) {
    Constraint& c = s.soft[i];
    const std::int64_t size =
        c.hostname ? static_cast<std::int64_t>(nodes.size()) - ignored : domains[i];
    // topologyNormalizingWeight: log(size + 2), so small topologies are not watered down.
    c.weight = std::log(static_cast<double>(size + 2));
  }
  // Count the matching pods of every node (not only the feasible ones) in those domains.
  for (const NodeInfo& node : snap.nodes()) {
    if (require_all && !has_all_keys(s.soft, node)) continue;
    for (Constraint& c : s.soft) {
      if (c.hostname || !included(c, pod, node)) continue;
      auto it = c.counts.find(domain_of(c, node));
      if (it == c.counts.end()) continue;
      it->second += count_on(c, pod, node, snap);
    }
  }
  s.snap = &snap;
  return fw::Status::success();
}

std::int64_t PodTopologySpread::score(const fw::CycleState& state, const PodSpec& pod,
                                      const NodeInfo& node) const {
  const auto* s = state.read<SpreadState>(slot());
  if (s->ignored[node.id]) return 0;
  double score = 0;
  for (const Constraint& c : s->soft) {
    const Sym domain = domain_of(c, node);
    if (domain == kNoSym) continue;
    const std::int64_t count = c.hostname ? count_on(c, pod, node, *s->snap) : c.counts.at(domain);
    // scoreForCount: count x weight + (maxSkew - 1), the skew tolerance watering down the
    // differences between domains.
    score += static_cast<double>(count) * c.weight + static_cast<double>(c.spec->max_skew - 1);
  }
  return static_cast<std::int64_t>(std::round(score));
}

void PodTopologySpread::normalize(const fw::CycleState& state, const PodSpec& /*pod*/,
                                  std::span<std::int64_t> scores) const {
  const auto* s = state.read<SpreadState>(slot());
  std::int64_t min = std::numeric_limits<std::int64_t>::max();
  std::int64_t max = 0;
  for (std::size_t k = 0; k < scores.size(); ++k) {
    if (s->ignored[s->scored[k]]) continue;
    min = std::min(min, scores[k]);
    max = std::max(max, scores[k]);
  }
  for (std::size_t k = 0; k < scores.size(); ++k) {
    if (s->ignored[s->scored[k]]) {
      scores[k] = 0;
    } else if (max == 0) {
      scores[k] = fw::kMaxNodeScore;
    } else {
      // MaxNodeScore x (max + min - score) / max: the fewest matching pods score highest.
      scores[k] = fw::kMaxNodeScore * (max + min - scores[k]) / max;
    }
  }
}

}  // namespace capsim::plugins
