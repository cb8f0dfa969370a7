// PodTopologySpread, as kube-scheduler v1.35's plugin. PreFilter counts, per hard
// (DoNotSchedule) constraint, the pods the constraint selects in each eligible domain (nodes
// that carry every constraint's topology key and pass the node inclusion policies); Filter
// rejects a node where `matching + (1 if the pod selects itself) - global minimum > maxSkew`,
// the global minimum being 0 while fewer than minDomains domains exist. PreScore counts the soft
// (ScheduleAnyway) constraints over the domains of the feasible nodes; Score is
// sum(count x log(domains + 2) + maxSkew - 1), NormalizeScore maps the fewest to 100. A pod
// without constraints that a ReplicaSet (Deployment) or StatefulSet owns gets the default
// constraints (the system defaults: hostname maxSkew 3, zone maxSkew 5, ScheduleAnyway). Both
// PreFilter and PreScore return Skip when no constraint applies, so other pods cost nothing.
// Counts are recomputed every cycle from the cluster, as upstream does from its NodeInfos.
#pragma once

#include <unordered_map>
#include <vector>

#include "models/plugins/plugin_context.hpp"
#include "sim/framework/plugin.hpp"

namespace capsim::plugins {

enum class SpreadDefaulting : std::uint8_t { kSystem, kList };

struct PodTopologySpreadArgs {
  SpreadDefaulting defaulting = SpreadDefaulting::kSystem;
  // Used with kList; their selectors are ignored (the owner's selector is used).
  std::vector<TopologySpreadConstraint> default_constraints;
};

class PodTopologySpread final : public fw::Plugin,
                                public fw::PreFilterPlugin,
                                public fw::FilterPlugin,
                                public fw::PreScorePlugin,
                                public fw::ScorePlugin {
 public:
  PodTopologySpread(PluginContext& ctx, PodTopologySpreadArgs args);
  std::string_view name() const override { return "PodTopologySpread"; }
  fw::EventMask events_to_register() const override {
    return fw::kEvAssignedPodDeleted | fw::kEvAssignedPodAdded | fw::kEvNodeAdded |
           fw::kEvNodeChanged;
  }
  fw::Status pre_filter(fw::CycleState& state, const PodSpec& pod,
                        const fw::Snapshot& snap) override;
  fw::Status filter(const fw::CycleState& state, const PodSpec& pod,
                    const NodeInfo& node) const override;
  fw::Status pre_score(fw::CycleState& state, const PodSpec& pod, std::span<const NodeId> nodes,
                       const fw::Snapshot& snap) override;
  std::int64_t score(const fw::CycleState& state, const PodSpec& pod,
                     const NodeInfo& node) const override;
  bool has_normalize() const override { return true; }
  void normalize(const fw::CycleState& state, const PodSpec& pod,
                 std::span<std::int64_t> scores) const override;

  // One constraint as a cycle uses it: the pod's own, or a default with the owner's selector.
  struct Constraint {
    const TopologySpreadConstraint* spec = nullptr;
    const LabelSelector* selector = nullptr;
    bool hostname = false;                         // topology key kubernetes.io/hostname
    bool counts_none = false;                      // upstream counts no pod for an empty selector
    std::unordered_map<Sym, std::int64_t> counts;  // domain value -> matching pods
    std::int64_t min_match = 0;                    // PreFilter: the global minimum
    // PreFilter: a domain holding the minimum, and the smallest count among the other domains
    // (upstream's two critical paths), so a Filter on a changed node can recompute the minimum.
    Sym min_domain = kNoSym;
    std::int64_t second_min = 0;
    double weight = 0;  // PreScore: log(domains + 2)
  };

 private:
  // The constraints with `action` that apply to `pod` (its own, or the defaults); false if none.
  bool collect(const PodSpec& pod, WhenUnsatisfiable action, std::vector<Constraint>& out) const;
  // Whether `node` counts for `c` under its nodeAffinityPolicy / nodeTaintsPolicy.
  bool included(const Constraint& c, const PodSpec& pod, const NodeInfo& node) const;
  std::int64_t count_on(const Constraint& c, const PodSpec& pod, const NodeInfo& node,
                        const fw::Snapshot& snap) const;

  const StringPool* pool_;
  PodTopologySpreadArgs args_;
  std::vector<TopologySpreadConstraint> defaults_;  // with ScheduleAnyway/DoNotSchedule as given
  Sym hostname_key_;
  fw::ReasonId not_match_;
  fw::ReasonId missing_label_;
};

}  // namespace capsim::plugins
