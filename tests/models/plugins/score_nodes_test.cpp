// ScorePlugin::score_nodes scores a list of nodes at once; the resource plugins read compact
// per-node copies (Cluster::score_nodes) instead of each NodeInfo. Whatever path a plugin takes,
// each node must get what score() gives it.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "fixtures/builders.hpp"
#include "models/plugins/balanced_allocation.hpp"
#include "models/plugins/node_resources_fit.hpp"
#include "models/plugins/taint_toleration.hpp"
#include "sim/cluster.hpp"

using namespace capsim;
using namespace capsim::plugins;
using capsim::testing::TestWorld;

namespace {

// score_nodes over `nodes` against score() node by node, after pre_score.
template <typename P>
void check_alike(P& plugin, const Cluster& cluster, const PodSpec& pod,
                 const std::vector<NodeId>& nodes) {
  fw::Snapshot snap(cluster);
  fw::CycleState state(1);
  plugin.set_slot(0);
  REQUIRE(plugin.pre_score(state, pod, nodes, snap).is_success());
  std::vector<std::int64_t> batch(nodes.size(), -1);
  plugin.score_nodes(state, pod, nodes, snap, batch);
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    CAPTURE(k);
    CHECK(batch[k] == plugin.score(state, pod, cluster.node(nodes[k])));
  }
}

}  // namespace

TEST_CASE("score_nodes gives each node what score() gives it, from the score copies") {
  TestWorld tw;
  // Nodes of different sizes, some with PreferNoSchedule taints (TaintToleration's slow path),
  // one with GPUs (NodeResourcesFit scoring nvidia.com/gpu takes the NodeInfo path).
  for (int i = 0; i < 12; ++i) {
    auto b = tw.node("n" + std::to_string(i));
    b.cpu(std::to_string(4 + 4 * (i % 3))).memory(std::to_string(16 + 8 * (i % 4)) + "Gi");
    if (i % 5 == 1) b.taint("spot", "true", "PreferNoSchedule");
    if (i % 7 == 2) b.taint("team", "a", "PreferNoSchedule").taint("zone", "b", "PreferNoSchedule");
    if (i == 6) b.gpus(8);
    b.add();
  }
  // Pods to bind: some best-effort, so that requested and the non-zero requested differ.
  std::vector<PodId> placed;
  for (int i = 0; i < 30; ++i) {
    auto b = tw.pod("p" + std::to_string(i));
    if (i % 4 != 3) b.cpu(std::to_string(100 * (1 + i % 7)) + "m");
    if (i % 5 != 4) b.memory(std::to_string(256 * (1 + i % 3)) + "Mi");
    placed.push_back(b.add());
  }
  const PodId pod = tw.pod("incoming").cpu("1500m").memory("3Gi").add();
  const PodId best_effort = tw.pod("besteffort").add();
  const PodId gpu_pod = tw.pod("gpu").cpu("2").memory("8Gi").gpus(2).add();
  const PodId tolerant = tw.pod("tolerant")
                             .cpu("1")
                             .memory("1Gi")
                             .toleration("spot", "true", "PreferNoSchedule")
                             .add();

  Cluster cluster(tw.world());
  // Bound in two rounds: the copies must follow every bind and release.
  for (std::size_t i = 0; i < placed.size() / 2; ++i)
    cluster.bind(placed[i], static_cast<NodeId>((i * 5) % 12), {});
  // A scored list out of node order, as a rotating start index gives it.
  std::vector<NodeId> nodes;
  for (NodeId n = 12; n-- > 0;)
    nodes.push_back((n * 7) % 12);

  fw::ReasonTable reasons;
  PluginContext ctx{tw.world(), reasons, 0};
  // LeastAllocated on cpu and memory (the default), MostAllocated weighted, one that scores the
  // GPU too and RequestedToCapacityRatio (the last two score from NodeInfo).
  std::vector<NodeResourcesFitArgs> fit_args(4);
  fit_args[1].strategy = ScoringStrategy::kMostAllocated;
  fit_args[1].resources = {{kMemory, 3}, {kCpu, 2}};
  fit_args[2].resources.push_back({kNvidiaGpu, 3});
  fit_args[3].strategy = ScoringStrategy::kRequestedToCapacityRatio;
  fit_args[3].shape = {{0, 0}, {100, 10}};
  const std::vector<std::vector<ResourceWeight>> balanced_args = {
      {{kCpu, 1}, {kMemory, 1}}, {{kMemory, 1}}, {{kCpu, 1}, {kMemory, 1}, {kNvidiaGpu, 1}}};
  auto check_all = [&] {
    const auto& w = tw.world().pods;
    for (PodId p : {pod, best_effort, gpu_pod, tolerant}) {
      CAPTURE(w[p].name);
      for (const NodeResourcesFitArgs& a : fit_args) {
        NodeResourcesFit fit(ctx, a);
        check_alike(fit, cluster, w[p], nodes);
      }
      TaintToleration taints(ctx);
      check_alike(taints, cluster, w[p], nodes);
      if (p == best_effort) continue;  // BalancedAllocation skips it at PreScore
      for (const std::vector<ResourceWeight>& r : balanced_args) {
        BalancedAllocation balanced(r);
        check_alike(balanced, cluster, w[p], nodes);
      }
    }
  };
  check_all();
  for (std::size_t i = placed.size() / 2; i < placed.size(); ++i)
    cluster.bind(placed[i], static_cast<NodeId>((i * 3) % 12), {});
  for (std::size_t i = 0; i < placed.size(); i += 3)
    cluster.unbind(placed[i]);
  check_all();
  // The copies are what Cluster's invariant check compares them with.
  for (const NodeInfo& n : cluster.nodes()) {
    const ScoreNode fresh = score_node(n);
    const ScoreNode& kept = cluster.score_nodes()[n.id];
    CHECK(kept.requested == fresh.requested);
    CHECK(kept.nonzero_requested == fresh.nonzero_requested);
    CHECK(kept.allocatable == fresh.allocatable);
    CHECK(kept.prefer_no_schedule_taints == fresh.prefer_no_schedule_taints);
  }
}

TEST_CASE("TaintToleration's uniform score is what scoring and normalizing every node gives") {
  // With PreferNoSchedule taints nowhere, every node scores 0 and the reversed normalization
  // makes that kMaxNodeScore for all; with one such taint anywhere, nodes must be scored.
  for (const bool tainted : {false, true}) {
    CAPTURE(tainted);
    TestWorld tw;
    for (int i = 0; i < 6; ++i) {
      auto b = tw.node("n" + std::to_string(i));
      b.cpu("8").memory("32Gi");
      if (i == 4) b.taint("hard", "x", "NoSchedule");  // not one that scoring counts
      if (tainted && i == 3) b.taint("spot", "true", "PreferNoSchedule");
      b.add();
    }
    const PodId pod = tw.pod("p").cpu("1").memory("1Gi").add();
    Cluster cluster(tw.world());
    CHECK(cluster.prefer_no_schedule_nodes() == (tainted ? 1 : 0));
    fw::ReasonTable reasons;
    PluginContext ctx{tw.world(), reasons, 0};
    TaintToleration taints(ctx);
    fw::Snapshot snap(cluster);
    fw::CycleState state(1);
    taints.set_slot(0);
    const std::vector<NodeId> nodes = {5, 1, 3, 0, 2};
    REQUIRE(taints.pre_score(state, tw.world().pods[pod], nodes, snap).is_success());
    std::vector<std::int64_t> scores(nodes.size(), -1);
    taints.score_nodes(state, tw.world().pods[pod], nodes, snap, scores);
    taints.normalize(state, tw.world().pods[pod], scores);
    const std::optional<std::int64_t> same =
        taints.uniform_score(state, tw.world().pods[pod], snap);
    if (tainted) {
      CHECK_FALSE(same.has_value());
      CHECK(scores[2] < fw::kMaxNodeScore);  // n3, the tainted one
    } else {
      REQUIRE(same.has_value());
      for (std::int64_t s : scores)
        CHECK(s == *same);
    }
  }
}
