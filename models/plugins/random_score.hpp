// RandomScore: the FGD study's Random baseline (random_score.go). PreScore picks one feasible
// node uniformly at random (seeded stream "random-score"); Score gives it 100 and every other
// node 0. With one feasible node the scheduler takes it without scoring, as upstream.
#pragma once

#include "models/plugins/plugin_context.hpp"
#include "sim/framework/plugin.hpp"
#include "sim/random.hpp"

namespace capsim::plugins {

class RandomScore final : public fw::Plugin, public fw::PreScorePlugin, public fw::ScorePlugin {
 public:
  explicit RandomScore(PluginContext& ctx);
  std::string_view name() const override { return "RandomScore"; }
  RandomStream* random_stream() override { return &rng_; }
  fw::Status pre_score(fw::CycleState& state, const PodSpec& pod, std::span<const NodeId> nodes,
                       const fw::Snapshot& snap) override;
  std::int64_t score(const fw::CycleState& state, const PodSpec& pod,
                     const NodeInfo& node) const override;

 private:
  RandomStream rng_;
};

}  // namespace capsim::plugins
