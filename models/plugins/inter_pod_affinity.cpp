#include "models/plugins/inter_pod_affinity.hpp"

#include <algorithm>
#include <limits>

namespace capsim::plugins {

namespace {

// A namespace symbol for a name the World never interned: equal to no label value.
constexpr Sym kUnknownNamespace = kNoSym - 1;

std::uint64_t pair_key(Sym key, Sym value) {
  return (std::uint64_t{key} << 32) | value;
}

struct AffinityState final : fw::StateData {
  // PreFilter -> Filter.
  InterPodAffinity::Counts counts;
  bool matches_own_terms = false;
  const fw::Snapshot* snap = nullptr;  // PreFilter's
  // PreScore -> Score.
  InterPodAffinity::PairCounts score;
};

void add_pair(InterPodAffinity::PairCounts& m, Sym key, const NodeInfo& node, std::int64_t by) {
  const Sym v = node.spec->labels.get(key);
  if (v != kNoSym) m[pair_key(key, v)] += by;
}

}  // namespace

InterPodAffinity::InterPodAffinity(PluginContext& ctx, InterPodAffinityArgs args)
    : world_(&ctx.world),
      pool_(&ctx.world.strings),
      args_(args),
      metadata_name_key_(ctx.world.strings.find("kubernetes.io/metadata.name")),
      affinity_not_match_(ctx.reasons.intern("node(s) didn't match pod affinity rules")),
      anti_affinity_not_match_(ctx.reasons.intern("node(s) didn't match pod anti-affinity rules")),
      existing_anti_affinity_not_match_(
          ctx.reasons.intern("node(s) didn't satisfy existing pods anti-affinity rules")) {}

bool InterPodAffinity::world_has_affinity() const {
  if (world_affinity_ < 0) {
    bool any = std::any_of(world_->pods.begin(), world_->pods.end(),
                           [](const PodSpec& p) { return p.pod_rules->has_pod_affinity(); });
    any = any || std::any_of(world_->jobs.begin(), world_->jobs.end(), [](const JobSpec& j) {
            return j.pod_template.pod_rules->has_pod_affinity();
          });
    world_affinity_ = any ? 1 : 0;
  }
  return world_affinity_ == 1;
}

Sym InterPodAffinity::namespace_sym(const PodSpec& pod) const {
  auto it = ns_syms_.find(pod.namespace_);
  if (it != ns_syms_.end()) return it->second;
  const Sym s = pool_->find(pod.namespace_);
  const Sym v = s == kNoSym ? kUnknownNamespace : s;
  ns_syms_.emplace(pod.namespace_, v);
  return v;
}

bool InterPodAffinity::term_matches(const PodAffinityTerm& term, const PodSpec& owner,
                                    const PodSpec& candidate) const {
  // AffinityTerm.Matches: the candidate's namespace is listed or the namespaceSelector selects
  // it; neither given: the owner's own namespace.
  bool ns_ok = false;
  if (term.namespaces.empty() && !term.namespace_selector.present) {
    ns_ok = owner.namespace_ == candidate.namespace_;
  } else {
    const Sym ns = namespace_sym(candidate);
    ns_ok = std::find(term.namespaces.begin(), term.namespaces.end(), ns) != term.namespaces.end();
    if (!ns_ok && term.namespace_selector.present) {
      // The namespace's labels: its Namespace object's, else only kubernetes.io/metadata.name.
      const Sym key = metadata_name_key_;
      const auto it = world_->namespace_labels.find(ns);
      const LabelSet* labels = it == world_->namespace_labels.end() ? nullptr : &it->second;
      ns_ok = selector_matches(term.namespace_selector, [&](Sym k) {
        if (k == key && key != kNoSym) return ns;
        return labels != nullptr ? labels->get(k) : kNoSym;
      });
    }
  }
  if (!ns_ok) return false;
  return selector_matches(term.selector, candidate.labels) &&
         label_keys_match(term.match_label_keys, term.mismatch_label_keys, owner.labels,
                          candidate.labels);
}

bool InterPodAffinity::matches_all(const std::vector<PodAffinityTerm>& terms, const PodSpec& owner,
                                   const PodSpec& candidate) const {
  if (terms.empty()) return false;
  return std::all_of(terms.begin(), terms.end(),
                     [&](const PodAffinityTerm& t) { return term_matches(t, owner, candidate); });
}

fw::Status InterPodAffinity::pre_filter(fw::CycleState& state, const PodSpec& pod,
                                        const fw::Snapshot& snap) {
  const auto& required = pod.pod_rules->affinity.required;
  const auto& anti_required = pod.pod_rules->anti_affinity.required;
  if (required.empty() && anti_required.empty() && !world_has_affinity()) {
    return fw::Status::skip();
  }
  auto& s = state.reuse<AffinityState>(slot());
  s.counts.existing_anti.clear();
  s.counts.affinity.clear();
  s.counts.anti.clear();
  s.snap = &snap;
  for (const NodeInfo& node : snap.nodes())
    count_node(s.counts, pod, node, snap, 1);
  if (s.counts.existing_anti.empty() && required.empty() && anti_required.empty()) {
    return fw::Status::skip();
  }
  s.matches_own_terms = matches_all(required, pod, pod);
  return fw::Status::success();
}

void InterPodAffinity::count_node(Counts& out, const PodSpec& pod, const NodeInfo& node,
                                  const fw::Snapshot& snap, std::int64_t by) const {
  const auto& required = pod.pod_rules->affinity.required;
  const auto& anti_required = pod.pod_rules->anti_affinity.required;
  for (PodId p : node.pods) {
    const PodSpec& existing = snap.pod(p);
    // getExistingAntiAffinityCounts: existing pods' required anti-affinity terms that select
    // the incoming pod, per the existing pod's node's topology pair.
    for (const PodAffinityTerm& t : existing.pod_rules->anti_affinity.required) {
      if (term_matches(t, existing, pod)) add_pair(out.existing_anti, t.topology_key, node, by);
    }
    // getIncomingAffinityAntiAffinityCounts: an existing pod counts for the affinity terms only
    // if it matches all of them; for each anti-affinity term it matches.
    if (matches_all(required, pod, existing)) {
      for (const PodAffinityTerm& t : required)
        add_pair(out.affinity, t.topology_key, node, by);
    }
    for (const PodAffinityTerm& t : anti_required) {
      if (term_matches(t, pod, existing)) add_pair(out.anti, t.topology_key, node, by);
    }
  }
}

fw::Status InterPodAffinity::filter(const fw::CycleState& state, const PodSpec& pod,
                                    const NodeInfo& node) const {
  const auto* s = state.read<AffinityState>(slot());
  const LabelSet& labels = node.spec->labels;
  // A node other than the snapshot's own (DefaultPreemption's copy without its victims, the
  // scheduler's with the nominated pods): upstream's PreFilterExtensions AddPod/RemovePod
  // update the counts by those pods; here the difference of the two nodes' pods is counted.
  Counts delta;
  const bool changed = s->snap != nullptr && &s->snap->node(node.id) != &node;
  if (changed) {
    count_node(delta, pod, node, *s->snap, 1);
    count_node(delta, pod, s->snap->node(node.id), *s->snap, -1);
  }
  auto count = [&](const PairCounts& base, const PairCounts& d, std::uint64_t key) {
    auto it = base.find(key);
    std::int64_t n = it == base.end() ? 0 : it->second;
    if (changed) {
      auto dt = d.find(key);
      if (dt != d.end()) n += dt->second;
    }
    return n;
  };
  // How many pairs have a non-zero count (upstream deletes a pair whose count drops to 0).
  auto nonzero = [&](const PairCounts& base, const PairCounts& d) {
    auto n = static_cast<std::int64_t>(base.size());
    for (const auto& [key, by] : d) {
      if (by == 0) continue;
      auto it = base.find(key);
      const std::int64_t before = it == base.end() ? 0 : it->second;
      n += (before + by != 0 ? 1 : 0) - (before != 0 ? 1 : 0);
    }
    return n;
  };
  // satisfyPodAffinity: every term's key on the node, and a matching pod in each domain.
  bool pods_exist = true;
  for (const PodAffinityTerm& t : pod.pod_rules->affinity.required) {
    const Sym v = labels.get(t.topology_key);
    if (v == kNoSym) return fw::Status::unresolvable(affinity_not_match_);
    if (count(s->counts.affinity, delta.affinity, pair_key(t.topology_key, v)) <= 0)
      pods_exist = false;
  }
  // The first pod of a group with affinity to itself: no pod matches anywhere yet, and the pod
  // matches its own terms.
  if (!pods_exist && !(nonzero(s->counts.affinity, delta.affinity) == 0 && s->matches_own_terms)) {
    return fw::Status::unresolvable(affinity_not_match_);
  }
  // satisfyPodAntiAffinity.
  for (const PodAffinityTerm& t : pod.pod_rules->anti_affinity.required) {
    const Sym v = labels.get(t.topology_key);
    if (v == kNoSym) continue;
    if (count(s->counts.anti, delta.anti, pair_key(t.topology_key, v)) > 0) {
      return fw::Status::unschedulable(anti_affinity_not_match_);
    }
  }
  // satisfyExistingPodsAntiAffinity: any of the node's pairs counted.
  if (!s->counts.existing_anti.empty() || !delta.existing_anti.empty()) {
    for (const auto& [k, v] : labels.items()) {
      if (count(s->counts.existing_anti, delta.existing_anti, pair_key(k, v)) > 0) {
        return fw::Status::unschedulable(existing_anti_affinity_not_match_);
      }
    }
  }
  return fw::Status::success();
}

fw::Status InterPodAffinity::pre_score(fw::CycleState& state, const PodSpec& pod,
                                       std::span<const NodeId> /*nodes*/,
                                       const fw::Snapshot& snap) {
  const auto& preferred = pod.pod_rules->affinity.preferred;
  const auto& anti_preferred = pod.pod_rules->anti_affinity.preferred;
  const bool has_constraints = !preferred.empty() || !anti_preferred.empty();
  if (args_.ignore_preferred_terms_of_existing_pods && !has_constraints) {
    return fw::Status::skip();
  }
  if (!has_constraints && !world_has_affinity()) return fw::Status::skip();
  auto& s = state.reuse<AffinityState>(slot());
  s.score.clear();
  const std::int64_t hard = args_.hard_pod_affinity_weight;
  for (const NodeInfo& node : snap.nodes()) {
    if (node.spec->labels.empty()) continue;
    for (PodId p : node.pods) {
      const PodSpec& existing = snap.pod(p);
      // Without preferred terms of its own, only existing pods with affinity can score.
      if (!has_constraints && !existing.pod_rules->has_pod_affinity()) continue;
      // processExistingPod. The incoming pod's preferred terms over the existing pod ...
      for (const WeightedPodAffinityTerm& w : preferred) {
        if (term_matches(w.term, pod, existing))
          add_pair(s.score, w.term.topology_key, node, w.weight);
      }
      for (const WeightedPodAffinityTerm& w : anti_preferred) {
        if (term_matches(w.term, pod, existing)) {
          add_pair(s.score, w.term.topology_key, node, -w.weight);
        }
      }
      // ... and the existing pod's terms over the incoming pod: required affinity at
      // hardPodAffinityWeight, preferred affinity and anti-affinity at their weights.
      if (hard > 0) {
        for (const PodAffinityTerm& t : existing.pod_rules->affinity.required) {
          if (term_matches(t, existing, pod)) add_pair(s.score, t.topology_key, node, hard);
        }
      }
      for (const WeightedPodAffinityTerm& w : existing.pod_rules->affinity.preferred) {
        if (term_matches(w.term, existing, pod)) {
          add_pair(s.score, w.term.topology_key, node, w.weight);
        }
      }
      for (const WeightedPodAffinityTerm& w : existing.pod_rules->anti_affinity.preferred) {
        if (term_matches(w.term, existing, pod)) {
          add_pair(s.score, w.term.topology_key, node, -w.weight);
        }
      }
    }
  }
  if (s.score.empty()) return fw::Status::skip();
  return fw::Status::success();
}

std::int64_t InterPodAffinity::score(const fw::CycleState& state, const PodSpec& /*pod*/,
                                     const NodeInfo& node) const {
  const auto* s = state.read<AffinityState>(slot());
  std::int64_t total = 0;
  for (const auto& [k, v] : node.spec->labels.items()) {
    auto it = s->score.find(pair_key(k, v));
    if (it != s->score.end()) total += it->second;
  }
  return total;
}

void InterPodAffinity::normalize(const fw::CycleState& /*state*/, const PodSpec& /*pod*/,
                                 std::span<std::int64_t> scores) const {
  std::int64_t min = std::numeric_limits<std::int64_t>::max();
  std::int64_t max = std::numeric_limits<std::int64_t>::min();
  for (std::int64_t v : scores) {
    min = std::min(min, v);
    max = std::max(max, v);
  }
  const std::int64_t diff = max - min;
  for (std::int64_t& v : scores) {
    // MaxNodeScore x (score - min) / (max - min), truncated; all equal: 0.
    double f = 0;
    if (diff > 0) {
      f = static_cast<double>(fw::kMaxNodeScore) *
          (static_cast<double>(v - min) / static_cast<double>(diff));
    }
    v = static_cast<std::int64_t>(f);
  }
}

}  // namespace capsim::plugins
