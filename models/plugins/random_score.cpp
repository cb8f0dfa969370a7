#include "models/plugins/random_score.hpp"

namespace capsim::plugins {

namespace {
struct RandomScoreState final : fw::StateData {
  NodeId chosen = kNoNode;
};
}  // namespace

RandomScore::RandomScore(PluginContext& ctx) : rng_(ctx.seed, "random-score") {}

fw::Status RandomScore::pre_score(fw::CycleState& state, const PodSpec& /*pod*/,
                                  std::span<const NodeId> nodes, const fw::Snapshot& /*snap*/) {
  auto& s = state.reuse<RandomScoreState>(slot());
  s.chosen = nodes.empty() ? kNoNode : nodes[rng_.below(nodes.size())];
  return fw::Status::success();
}

std::int64_t RandomScore::score(const fw::CycleState& state, const PodSpec& /*pod*/,
                                const NodeInfo& node) const {
  const auto* s = state.read<RandomScoreState>(slot());
  return s != nullptr && s->chosen == node.id ? fw::kMaxNodeScore : fw::kMinNodeScore;
}

}  // namespace capsim::plugins
