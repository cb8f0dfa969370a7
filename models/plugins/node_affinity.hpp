// NodeAffinity. Filter: the pod's nodeSelector (every pair) and its required node affinity (any
// term) must match the node ("node(s) didn't match Pod's node affinity/selector", unresolvable).
// Score: the sum of the weights of the preferred terms the node matches, normalised so the best
// node gets 100. PreFilter/PreScore skip pods that have nothing to check.
#pragma once

#include "models/plugins/plugin_context.hpp"
#include "sim/framework/plugin.hpp"

namespace capsim::plugins {

class NodeAffinityPlugin final : public fw::Plugin,
                                 public fw::PreFilterPlugin,
                                 public fw::FilterPlugin,
                                 public fw::PreScorePlugin,
                                 public fw::ScorePlugin {
 public:
  explicit NodeAffinityPlugin(PluginContext& ctx);
  std::string_view name() const override { return "NodeAffinity"; }
  fw::EventMask events_to_register() const override {
    return fw::kEvNodeAdded | fw::kEvNodeChanged;
  }
  fw::Status pre_filter(fw::CycleState& state, const PodSpec& pod,
                        const fw::Snapshot& snap) override;
  fw::Status filter(const fw::CycleState& state, const PodSpec& pod,
                    const NodeInfo& node) const override;
  // Reads the pod's nodeSelector and required node affinity and the node's labels and name;
  // pods with a required affinity are not compared (never alike).
  bool filters_alike(const PodSpec& a, const PodSpec& b) const override {
    return !a.affinity->required && !b.affinity->required &&
           a.node_selector.items() == b.node_selector.items();
  }
  fw::Status pre_score(fw::CycleState& state, const PodSpec& pod, std::span<const NodeId> nodes,
                       const fw::Snapshot& snap) override;
  std::int64_t score(const fw::CycleState& state, const PodSpec& pod,
                     const NodeInfo& node) const override;
  bool has_normalize() const override { return true; }
  void normalize(const fw::CycleState& state, const PodSpec& pod,
                 std::span<std::int64_t> scores) const override;

 private:
  const StringPool* pool_;
  fw::ReasonId mismatch_;
};

}  // namespace capsim::plugins
