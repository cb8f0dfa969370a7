// TopologyPacking: a Score plugin that packs GPU pods into the fullest domains of the cluster's
// topology levels (NVLink domain, rack, block; docs/scenario-format.md#topology) that can still
// take them, so that whole domains stay free for the jobs that need one. It follows the hypernode
// binpacking of Volcano's network-topology-aware plugin (volcano.sh, "Network Topology Aware
// Scheduling"): a node scores the GPU allocation of the domain it is in at each level, counting
// what is still to place, with the weight fading^k for the k-th level above the lowest
// (`fading`, default 0.8 as Volcano's: below 1 the tighter domains weigh more, 1 weighs all
// levels alike, above 1 the wider ones more):
//     score = 100 x sum_k fading^k x fit_k / sum_k fading^k  (levels where the node has a domain)
//     fit_k = (allocated + demand) / GPUs of the domain, or 0 when that exceeds 1
// where demand is the pod's GPUs, or for a gang member its gang's GPUs not yet bound (members
// still to place x the pod's GPUs): the first pod of a 72-GPU gang goes to a domain that can hold
// all of it, the fullest such; the next follow it. The host level is left to the node-level
// scorers. PreScore skips pods without whole GPUs and runs without a topology. Not in the default
// profile: enable it (multiPoint) with a weight.
#pragma once

#include <vector>

#include "models/plugins/plugin_context.hpp"
#include "sim/framework/plugin.hpp"

namespace capsim::plugins {

struct TopologyPackingArgs {
  double fading = 0.8;
};

class TopologyPacking final : public fw::Plugin, public fw::PreScorePlugin, public fw::ScorePlugin {
 public:
  TopologyPacking(PluginContext& ctx, TopologyPackingArgs args);
  std::string_view name() const override { return "TopologyPacking"; }
  fw::Status pre_score(fw::CycleState& state, const PodSpec& pod, std::span<const NodeId> nodes,
                       const fw::Snapshot& snap) override;
  std::int64_t score(const fw::CycleState& state, const PodSpec& pod,
                     const NodeInfo& node) const override;

 private:
  const World* world_;
  TopologyPackingArgs args_;
};

}  // namespace capsim::plugins
