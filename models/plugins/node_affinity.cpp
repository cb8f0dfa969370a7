#include "models/plugins/node_affinity.hpp"

#include "models/plugins/taint_toleration.hpp"

namespace capsim::plugins {

NodeAffinityPlugin::NodeAffinityPlugin(PluginContext& ctx)
    : pool_(&ctx.world.strings),
      mismatch_(ctx.reasons.intern("node(s) didn't match Pod's node affinity/selector")) {}

fw::Status NodeAffinityPlugin::pre_filter(fw::CycleState& /*state*/, const PodSpec& pod,
                                          const fw::Snapshot& /*snap*/) {
  if (pod.node_selector.empty() && !pod.affinity->required) return fw::Status::skip();
  return fw::Status::success();
}

fw::Status NodeAffinityPlugin::filter(const fw::CycleState& /*state*/, const PodSpec& pod,
                                      const NodeInfo& node) const {
  if (!node.spec->labels.contains_all(pod.node_selector))
    return fw::Status::unresolvable(mismatch_);
  if (pod.affinity->required &&
      !matches_any_term(*pod.affinity->required, NodeView{&node.spec->labels, node.spec->name_sym},
                        *pool_)) {
    return fw::Status::unresolvable(mismatch_);
  }
  return fw::Status::success();
}

fw::Status NodeAffinityPlugin::pre_score(fw::CycleState& /*state*/, const PodSpec& pod,
                                         std::span<const NodeId> /*nodes*/,
                                         const fw::Snapshot& /*snap*/) {
  if (pod.affinity->preferred.empty()) return fw::Status::skip();
  return fw::Status::success();
}

std::int64_t NodeAffinityPlugin::score(const fw::CycleState& /*state*/, const PodSpec& pod,
                                       const NodeInfo& node) const {
  std::int64_t count = 0;
  const NodeView view{&node.spec->labels, node.spec->name_sym};
  for (const auto& term : pod.affinity->preferred) {
    if (term.weight == 0) continue;
    if (matches_term(term.preference, view, *pool_)) count += term.weight;
  }
  return count;
}

void NodeAffinityPlugin::normalize(const fw::CycleState& /*state*/, const PodSpec& /*pod*/,
                                   std::span<std::int64_t> scores) const {
  default_normalize_score(fw::kMaxNodeScore, false, scores);
}

}  // namespace capsim::plugins
