#include "models/plugins/default_preemption.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

namespace capsim::plugins {

DefaultPreemption::DefaultPreemption(PluginContext& ctx, DefaultPreemptionArgs args)
    : args_(args),
      rng_(ctx.seed, "preemption-offset"),
      no_victims_(ctx.reasons.intern("No preemption victims found for incoming pod")),
      not_helpful_(ctx.reasons.intern("Preemption is not helpful for scheduling")),
      never_(ctx.reasons.intern("preemption: not eligible due to preemptionPolicy=Never")),
      ctx_(&ctx),
      budgets_(ctx.world) {}

namespace {

// The node copy's resources and pod list without (with) pod `p`, as upstream's NodeInfo
// RemovePod/AddPod: the pod counting plugins (PodTopologySpread, InterPodAffinity) read the list.
void scratch_remove(NodeInfo& n, PodId p, const fw::Snapshot& snap) {
  apply_holdings(n, snap.pod(p), snap.state(p), -1);
  n.pods.erase(std::remove(n.pods.begin(), n.pods.end(), p), n.pods.end());
}
void scratch_add(NodeInfo& n, PodId p, const fw::Snapshot& snap) {
  apply_holdings(n, snap.pod(p), snap.state(p), +1);
  n.pods.push_back(p);
}

// MoreImportantPod: higher priority, then earlier start.
bool more_important(const fw::Snapshot& snap, PodId a, PodId b) {
  const std::int32_t pa = snap.pod(a).priority, pb = snap.pod(b).priority;
  if (pa != pb) return pa > pb;
  const SimTime sa = snap.state(a).start, sb = snap.state(b).start;
  if (sa != sb) return sa < sb;
  return a < b;
}

// filterPodsWithPDBViolation: walking the victims most important first, each budget covering
// a victim (same namespace, a non-empty selector that matches; a terminating victim is already
// being disrupted and is not counted) spends one of its allowed disruptions; a victim that takes
// any budget below zero is violating.
void split_by_budgets(const std::vector<PodId>& victims, const fw::Snapshot& snap,
                      std::span<const std::int32_t> allowed, std::vector<PodId>& violating,
                      std::vector<PodId>& other) {
  const auto& budgets = snap.world().disruption_budgets;
  std::vector<std::int32_t> left(allowed.begin(), allowed.end());
  for (PodId p : victims) {
    const PodSpec& s = snap.pod(p);
    bool violates = false;
    if (!s.labels.empty() && snap.state(p).phase != PodPhase::kTerminating) {
      for (std::size_t b = 0; b < budgets.size() && b < left.size(); ++b) {
        const LabelSelector& sel = budgets[b].selector;
        if (budgets[b].namespace_ != s.namespace_ || !sel.present || sel.empty()) continue;
        if (!selector_matches(sel, s.labels)) continue;
        if (--left[b] < 0) violates = true;
      }
    }
    (violates ? violating : other).push_back(p);
  }
}

}  // namespace

std::optional<DefaultPreemption::Candidate> DefaultPreemption::select_victims_on_node(
    fw::CycleState& state, const PodSpec& spec, const NodeInfo& node, const fw::Snapshot& snap,
    const fw::Framework& fw, std::span<const std::int32_t> allowed) const {
  std::vector<PodId> potential;
  for (PodId p : node.pods) {
    if (snap.pod(p).priority < spec.priority) potential.push_back(p);
  }
  if (potential.empty()) return std::nullopt;  // before copying the node: the common case
  NodeInfo scratch = node;
  for (PodId p : potential)
    scratch_remove(scratch, p, snap);
  if (!fw.run_filters(state, spec, scratch).is_success()) return std::nullopt;
  std::sort(potential.begin(), potential.end(),
            [&](PodId a, PodId b) { return more_important(snap, a, b); });
  Candidate c;
  c.node = node.id;
  // Reprieves `p` if the preemptor still fits with it back; else it is a victim.
  auto reprieve = [&](PodId p) {
    scratch_add(scratch, p, snap);
    if (fw.run_filters(state, spec, scratch).is_success()) return true;
    scratch_remove(scratch, p, snap);
    c.victims.push_back(p);
    return false;
  };
  if (allowed.empty()) {
    for (PodId p : potential)
      reprieve(p);
  } else {
    std::vector<PodId> violating, other;
    split_by_budgets(potential, snap, allowed, violating, other);
    for (PodId p : violating) {
      if (!reprieve(p)) ++c.pdb_violations;
    }
    for (PodId p : other)
      reprieve(p);
  }
  if (c.victims.empty()) return std::nullopt;
  return c;
}

namespace {

// What pickOneNodeForPreemption compares, per candidate (PDB violations: capsim models no
// PodDisruptionBudget, so every candidate has 0 and criterion 1 always ties).
struct Key {
  std::int32_t pdb_violations = 0;
  std::int32_t highest = 0;
  std::int64_t sum = 0;
  std::size_t count = 0;
  SimTime earliest_start_of_highest = 0;
};

Key key_of(const DefaultPreemption::Candidate& c, const fw::Snapshot& snap) {
  Key k;
  k.pdb_violations = c.pdb_violations;
  k.highest = std::numeric_limits<std::int32_t>::min();
  for (PodId v : c.victims)
    k.highest = std::max(k.highest, snap.pod(v).priority);
  for (PodId v : c.victims) {
    // int64(priority) + int64(MaxInt32 + 1), so that negative priorities still sum upward.
    k.sum += std::int64_t{snap.pod(v).priority} + (std::int64_t{1} << 31);
  }
  k.count = c.victims.size();
  k.earliest_start_of_highest = std::numeric_limits<SimTime>::max();
  for (PodId v : c.victims) {
    if (snap.pod(v).priority == k.highest) {
      k.earliest_start_of_highest = std::min(k.earliest_start_of_highest, snap.state(v).start);
    }
  }
  return k;
}

// The first criterion, in pick_one's order, on which `a` is better (negative) or worse
// (positive) than `b`, with its name; 0 and "order" when they tie on all.
std::pair<int, std::string_view> compare(const Key& a, const Key& b) {
  if (a.pdb_violations != b.pdb_violations) {
    return {a.pdb_violations < b.pdb_violations ? -1 : 1, "pdb_violations"};
  }
  if (a.highest != b.highest) return {a.highest < b.highest ? -1 : 1, "highest_priority"};
  if (a.sum != b.sum) return {a.sum < b.sum ? -1 : 1, "priority_sum"};
  if (a.count != b.count) return {a.count < b.count ? -1 : 1, "victims"};
  if (a.earliest_start_of_highest != b.earliest_start_of_highest) {
    return {a.earliest_start_of_highest > b.earliest_start_of_highest ? -1 : 1, "start_time"};
  }
  return {0, "order"};
}

}  // namespace

std::size_t DefaultPreemption::pick_one(const std::vector<Candidate>& candidates,
                                        const fw::Snapshot& snap) const {
  std::vector<Key> keys;
  keys.reserve(candidates.size());
  for (const auto& c : candidates)
    keys.push_back(key_of(c, snap));
  std::size_t best = 0;
  for (std::size_t i = 1; i < keys.size(); ++i) {
    if (compare(keys[i], keys[best]).first < 0) best = i;
  }
  return best;
}

fw::PostFilterResult DefaultPreemption::post_filter(fw::CycleState& state, PodId /*pod*/,
                                                    const PodSpec& spec,
                                                    const fw::Diagnosis& diagnosis,
                                                    const fw::Snapshot& snap,
                                                    const fw::Framework& fw) {
  fw::PostFilterResult result;
  const auto num_nodes = static_cast<std::int32_t>(snap.nodes().size());
  if (spec.preemption_policy == PreemptionPolicy::kNever) {
    result.message = ctx_->reasons.text(never_);
    return result;
  }
  // Nodes rejected with plain Unschedulable might take the pod after evictions; the others
  // ("unresolvable") cannot (nodesWherePreemptionMightHelp).
  const std::int32_t might_help = diagnosis.unschedulable_nodes;
  std::int32_t not_helpful = static_cast<std::int32_t>(diagnosis.node_statuses.size()) - might_help;
  if (diagnosis.prefilter_reason != 0) not_helpful = num_nodes;
  std::vector<Candidate> candidates;
  std::int32_t no_victims = 0;
  if (might_help > 0 && diagnosis.prefilter_reason == 0) {
    std::int32_t want = num_nodes * args_.min_candidate_nodes_percentage / 100;
    want = std::max(want, args_.min_candidate_nodes_absolute);
    want = std::min(want, num_nodes);
    const std::size_t offset =
        args_.random_offset ? rng_.below(static_cast<std::uint64_t>(might_help)) : 0;
    if (!snap.cluster().any_bound_below(spec.priority)) {
      // No bound pod has a lower priority than the preemptor: select_victims_on_node, which
      // looks only at those, finds none on any node, so the search below would end with every
      // node counted as having no victims. Said without visiting them.
      no_victims = might_help;
    } else {
      std::vector<NodeId> potential;
      potential.reserve(static_cast<std::size_t>(might_help));
      for (const auto& [node, st] : diagnosis.node_statuses) {
        if (st.code == fw::Code::kUnschedulable) potential.push_back(node);
      }
      // The budgets' disruptionsAllowed as the disruption controller's status has them now, read
      // once per preemption (upstream lists the PodDisruptionBudgets once).
      std::vector<std::int32_t> allowed;
      if (budgets_.any()) {
        for (std::size_t b = 0; b < snap.world().disruption_budgets.size(); ++b)
          allowed.push_back(budgets_.counts(snap.cluster(), b).allowed());
      }
      for (std::size_t k = 0; k < potential.size(); ++k) {
        const NodeId id = potential[(offset + k) % potential.size()];
        auto c = select_victims_on_node(state, spec, snap.node(id), snap, fw, allowed);
        if (c) {
          candidates.push_back(std::move(*c));
          if (static_cast<std::int32_t>(candidates.size()) >= want) break;
        } else {
          ++no_victims;
        }
      }
    }
  }
  if (candidates.empty()) {
    NoCandidate& nc = no_candidate_;
    if (nc.nodes != num_nodes || nc.no_victims != no_victims || nc.not_helpful != not_helpful) {
      std::vector<std::string> parts;
      if (no_victims > 0)
        parts.push_back(fmt::format("{} {}", no_victims, ctx_->reasons.text(no_victims_)));
      if (not_helpful > 0)
        parts.push_back(fmt::format("{} {}", not_helpful, ctx_->reasons.text(not_helpful_)));
      std::sort(parts.begin(), parts.end());
      nc = {num_nodes, no_victims, not_helpful,
            fmt::format("preemption: 0/{} nodes are available: {}", num_nodes,
                        fmt::join(parts, ", "))};
    }
    result.message = nc.message;
    return result;
  }
  const std::size_t pick = pick_one(candidates, snap);
  if (state.explain()) {
    // What an explained cycle reports: every candidate and where each other one lost.
    const Key chosen = key_of(candidates[pick], snap);
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const Key k = key_of(candidates[i], snap);
      fw::PreemptionCandidate& out = result.candidates.emplace_back();
      out.node = candidates[i].node;
      out.victims = candidates[i].victims;
      out.pdb_violations = k.pdb_violations;
      out.highest_priority = k.highest;
      out.priority_sum = k.sum;
      out.earliest_start_of_highest = k.earliest_start_of_highest;
      if (i != pick) out.lost_on = compare(k, chosen).second;
    }
    result.chosen = static_cast<std::int32_t>(pick);
  }
  result.status = fw::Status::success();
  result.nominated_node = candidates[pick].node;
  result.victims = std::move(candidates[pick].victims);
  return result;
}

}  // namespace capsim::plugins
