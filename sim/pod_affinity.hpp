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
