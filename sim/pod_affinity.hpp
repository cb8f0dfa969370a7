// What a pod says about the pods it is placed among, as kube-scheduler's PodTopologySpread and
// InterPodAffinity read it: spec.topologySpreadConstraints and spec.affinity.podAffinity /
// podAntiAffinity, plus the selector of the controller that owns it (the system default spread
// constraints select with it). Loaders fill it; it is static for the pod's life. Selectors follow
// metav1.LabelSelectorAsSelector: an absent selector selects nothing, an empty one everything.
// Namespaces carry one label in capsim, kubernetes.io/metadata.name (the one every Namespace
// has); a namespaceSelector is matched against it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/labels.hpp"

namespace capsim {

enum class LabelOp : std::uint8_t { kIn, kNotIn, kExists, kDoesNotExist };

struct LabelRequirement {
  Sym key = kNoSym;
  LabelOp op = LabelOp::kIn;
  std::vector<Sym> values;  // In / NotIn
};

// metav1.LabelSelector, parsed: matchLabels become In requirements with one value.
struct LabelSelector {
  bool present = false;  // false: the field was absent (labels.Nothing(): selects nothing)
  std::vector<LabelRequirement> requirements;
  // An empty selector ({}) selects everything; upstream's Selector.Empty().
  bool empty() const { return present && requirements.empty(); }
};

// `get(key)` returns the label's value symbol or kNoSym when absent.
template <typename Get>
bool selector_matches(const LabelSelector& s, Get get) {
  if (!s.present) return false;
  for (const LabelRequirement& r : s.requirements) {
    const Sym v = get(r.key);
    bool has_value = false;
    for (Sym x : r.values)
      has_value = has_value || x == v;
    switch (r.op) {
      case LabelOp::kIn:
        if (v == kNoSym || !has_value) return false;
        break;
      case LabelOp::kNotIn:  // an absent label is not in any set
        if (v != kNoSym && has_value) return false;
        break;
      case LabelOp::kExists:
        if (v == kNoSym) return false;
        break;
      case LabelOp::kDoesNotExist:
        if (v != kNoSym) return false;
        break;
    }
  }
  return true;
}
inline bool selector_matches(const LabelSelector& s, const LabelSet& labels) {
  return selector_matches(s, [&](Sym k) { return labels.get(k); });
}

// matchLabelKeys (key=value of the owning pod's label, when it has the key, ANDed to the
// selector) and mismatchLabelKeys (key notin (value)): true when `candidate` passes them.
inline bool label_keys_match(const std::vector<Sym>& match_keys,
                             const std::vector<Sym>& mismatch_keys, const LabelSet& owner,
                             const LabelSet& candidate) {
  for (Sym k : match_keys) {
    const Sym v = owner.get(k);
    if (v != kNoSym && candidate.get(k) != v) return false;
  }
  for (Sym k : mismatch_keys) {
    const Sym v = owner.get(k);
    if (v != kNoSym && candidate.get(k) == v) return false;
  }
  return true;
}

enum class WhenUnsatisfiable : std::uint8_t { kDoNotSchedule, kScheduleAnyway };
enum class NodeInclusionPolicy : std::uint8_t { kHonor, kIgnore };

// One entry of spec.topologySpreadConstraints, with upstream's defaults for absent fields.
struct TopologySpreadConstraint {
  std::int32_t max_skew = 1;
  Sym topology_key = kNoSym;
  WhenUnsatisfiable when_unsatisfiable = WhenUnsatisfiable::kDoNotSchedule;
  LabelSelector selector;
  std::int32_t min_domains = 1;  // absent: 1
  NodeInclusionPolicy node_affinity_policy = NodeInclusionPolicy::kHonor;
  NodeInclusionPolicy node_taints_policy = NodeInclusionPolicy::kIgnore;
  std::vector<Sym> match_label_keys;
};

// A PodAffinityTerm. With neither `namespaces` nor a namespaceSelector it selects pods of the
// owning pod's own namespace (upstream's GetNamespacesFromPodAffinityTerm).
struct PodAffinityTerm {
  LabelSelector selector;
  std::vector<Sym> namespaces;
  LabelSelector namespace_selector;  // absent: selects no namespace
  Sym topology_key = kNoSym;
  std::vector<Sym> match_label_keys;
  std::vector<Sym> mismatch_label_keys;
};

struct WeightedPodAffinityTerm {
  std::int32_t weight = 0;  // 1..100
  PodAffinityTerm term;
};

struct PodAffinityRules {
  std::vector<PodAffinityTerm> required;
  std::vector<WeightedPodAffinityTerm> preferred;
  bool empty() const { return required.empty() && preferred.empty(); }
};

struct PodTopologyRules {
  std::vector<TopologySpreadConstraint> spread;  // spec.topologySpreadConstraints
  PodAffinityRules affinity;                     // spec.affinity.podAffinity
  PodAffinityRules anti_affinity;                // spec.affinity.podAntiAffinity
  // spec.selector of the ReplicaSet (Deployment) or StatefulSet that owns the pod: what the
  // system default spread constraints select (upstream's helper.DefaultSelector); absent for
  // other pods.
  LabelSelector owner_selector;
  bool has_pod_affinity() const { return !affinity.empty() || !anti_affinity.empty(); }
};

}  // namespace capsim
