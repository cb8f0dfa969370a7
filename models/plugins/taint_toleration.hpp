// TaintToleration. Filter: a NoSchedule or NoExecute taint the pod does not tolerate rejects the
// node ("node(s) had untolerated taint {key: value}", unresolvable by preemption). Score: the
// number of PreferNoSchedule taints the pod does not tolerate, normalised in reverse so that the
// node with fewest gets 100.
#pragma once

#include <unordered_map>

#include "models/plugins/plugin_context.hpp"
#include "sim/framework/plugin.hpp"

namespace capsim::plugins {

// DefaultNormalizeScore: scales so the maximum becomes `max_priority` (reversed if asked); all
// zeros stay zero (or become max_priority when reversed).
void default_normalize_score(std::int64_t max_priority, bool reverse,
                             std::span<std::int64_t> scores);

// The same tolerations, in the same order (what two pods' filters by taint compare).
bool same_tolerations(const std::vector<Toleration>& a, const std::vector<Toleration>& b);

class TaintToleration final : public fw::Plugin,
                              public fw::FilterPlugin,
                              public fw::PreScorePlugin,
                              public fw::ScorePlugin {
 public:
  explicit TaintToleration(PluginContext& ctx) : ctx_(&ctx) {}
  std::string_view name() const override { return "TaintToleration"; }
  fw::EventMask events_to_register() const override {
    return fw::kEvNodeAdded | fw::kEvNodeChanged;
  }
  fw::Status filter(const fw::CycleState& state, const PodSpec& pod,
                    const NodeInfo& node) const override;
  // A node without NoSchedule/NoExecute taints passes whatever the pod tolerates.
  bool quick_requirement(const fw::CycleState& /*state*/, const PodSpec& /*pod*/,
                         fw::QuickRequirement& req) const override {
    req.untainted = true;
    return true;
  }
  // Reads the pod's tolerations and the node's taints.
  bool filters_alike(const PodSpec& a, const PodSpec& b) const override {
    return same_tolerations(a.tolerations, b.tolerations);
  }
  fw::Status pre_score(fw::CycleState& state, const PodSpec& pod, std::span<const NodeId> nodes,
                       const fw::Snapshot& snap) override;
  // Nodes without PreferNoSchedule taints score 0 from their score copies; the rest by score().
  void score_nodes(const fw::CycleState& state, const PodSpec& pod, std::span<const NodeId> nodes,
                   const fw::Snapshot& snap, std::span<std::int64_t> out) const override;
  std::int64_t score(const fw::CycleState& state, const PodSpec& pod,
                     const NodeInfo& node) const override;
  // Without PreferNoSchedule taints in the fleet every node scores 0, which the reversed
  // normalization makes kMaxNodeScore for all.
  std::optional<std::int64_t> uniform_score(const fw::CycleState& state, const PodSpec& pod,
                                            const fw::Snapshot& snap) const override;
  bool has_normalize() const override { return true; }
  void normalize(const fw::CycleState& state, const PodSpec& pod,
                 std::span<std::int64_t> scores) const override;

 private:
  fw::ReasonId untolerated_reason(const Taint& t) const;
  PluginContext* ctx_;
  mutable std::unordered_map<std::uint64_t, fw::ReasonId> reason_cache_;
};

}  // namespace capsim::plugins
