// DefaultPreemption (PostFilter): when no node fits, look for a node where evicting
// lower-priority pods would make room, and pick the cheapest such node by kube-scheduler's
// ordering:
//   1. fewest PodDisruptionBudget violations (capsim models none, so all tie);
//   2. lowest highest-victim priority;
//   3. lowest sum of victim priorities (each offset by 2^31 so negatives order correctly);
//   4. fewest victims;
//   5. latest start time of the highest-priority victims (evict what has run least);
//   6. the first such node in candidate order.
// On each node the victims are minimal in upstream's sense: remove every lower-priority pod,
// then add back ("reprieve") pods from the most important down while the preemptor still fits.
// Candidate search starts at offset 0 (capsim) or a seeded random offset (upstream) and stops
// after max(10% of nodes, 100) candidates.
#pragma once

#include "models/plugins/plugin_context.hpp"
#include "sim/framework/framework.hpp"
#include "sim/random.hpp"

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
  fw::PostFilterResult post_filter(fw::CycleState& state, PodId pod, const PodSpec& spec,
                                   const fw::Diagnosis& diagnosis, const fw::Snapshot& snap,
                                   const fw::Framework& fw) override;

  struct Candidate {
    NodeId node = kNoNode;
    std::vector<PodId> victims;  // most important first
  };
  // Exposed for tests: the victims on one node, or nullopt if evicting every lower-priority pod
  // still would not make room.
  std::optional<Candidate> select_victims_on_node(fw::CycleState& state, const PodSpec& spec,
                                                  const NodeInfo& node, const fw::Snapshot& snap,
                                                  const fw::Framework& fw) const;
  // Exposed for tests: pickOneNodeForPreemption over the candidates.
  std::size_t pick_one(const std::vector<Candidate>& candidates, const fw::Snapshot& snap) const;

 private:
  DefaultPreemptionArgs args_;
  RandomStream rng_;
  fw::ReasonId no_victims_;
  fw::ReasonId not_helpful_;
  fw::ReasonId never_;
  PluginContext* ctx_;
};

}  // namespace capsim::plugins
