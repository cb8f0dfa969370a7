// DefaultPreemption (PostFilter): when no node fits, look for a node where evicting
// lower-priority pods would make room, and pick the cheapest such node by kube-scheduler's
// ordering:
//   1. fewest PodDisruptionBudget violations: victims whose eviction would take a budget below
//      its disruptionsAllowed (upstream's filterPodsWithPDBViolation, where a budget with an
//      empty selector matches nothing and a pod already terminating is not counted);
//   2. lowest highest-victim priority;
//   3. lowest sum of victim priorities (each offset by 2^31 so negatives order correctly);
//   4. fewest victims;
//   5. latest start time of the highest-priority victims (evict what has run least);
//   6. the first such node in candidate order.
// On each node the victims are minimal in upstream's sense: remove every lower-priority pod,
// then add back ("reprieve") pods while the preemptor still fits: first those whose eviction
// would violate a budget, then the others, each group from the most important down.
// Candidate search starts at offset 0 (capsim) or a seeded random offset (upstream) and stops
// after max(10% of nodes, 100) candidates.
#pragma once

#include "models/plugins/plugin_context.hpp"
#include "sim/framework/framework.hpp"
#include "sim/random.hpp"
#include "sim/run/disruption_budgets.hpp"

namespace capsim::plugins {

struct DefaultPreemptionArgs {
  std::int32_t min_candidate_nodes_percentage = 10;
  std::int32_t min_candidate_nodes_absolute = 100;
  bool random_offset = false;
};

class DefaultPreemption final : public fw::Plugin, public fw::PostFilterPlugin {
 public:
  DefaultPreemption(PluginContext& ctx, DefaultPreemptionArgs args);
  std::string_view name() const override { return "DefaultPreemption"; }
  RandomStream* random_stream() override { return &rng_; }
  fw::PostFilterResult post_filter(fw::CycleState& state, PodId pod, const PodSpec& spec,
                                   const fw::Diagnosis& diagnosis, const fw::Snapshot& snap,
                                   const fw::Framework& fw) override;
  // Its candidate search walks the statuses in order only when some bound pod could be a
  // victim (a lower priority; post_filter says so without walking them otherwise).
  bool reads_node_order(const PodSpec& spec, const fw::Snapshot& snap) const override {
    return spec.preemption_policy != PreemptionPolicy::kNever &&
           snap.cluster().any_bound_below(spec.priority);
  }

  struct Candidate {
    NodeId node = kNoNode;
    std::vector<PodId> victims;  // the budget-violating ones first, each group most important first
    std::int32_t pdb_violations = 0;
  };
  // Exposed for tests: the victims on one node, or nullopt if evicting every lower-priority pod
  // still would not make room. `allowed`: each PodDisruptionBudget's disruptionsAllowed.
  std::optional<Candidate> select_victims_on_node(fw::CycleState& state, const PodSpec& spec,
                                                  const NodeInfo& node, const fw::Snapshot& snap,
                                                  const fw::Framework& fw,
                                                  std::span<const std::int32_t> allowed = {}) const;
  // Exposed for tests: pickOneNodeForPreemption over the candidates.
  std::size_t pick_one(const std::vector<Candidate>& candidates, const fw::Snapshot& snap) const;

 private:
  DefaultPreemptionArgs args_;
  RandomStream rng_;
  fw::ReasonId no_victims_;
  fw::ReasonId not_helpful_;
  fw::ReasonId never_;
  PluginContext* ctx_;
  DisruptionBudgets budgets_;
  // The message of the last preemption that found no candidate, and the counts it was made
  // from: a backlog asks for the same one on most attempts.
  struct NoCandidate {
    std::int32_t nodes = -1, no_victims = -1, not_helpful = -1;
    std::string message;
  } no_candidate_;
};

}  // namespace capsim::plugins
