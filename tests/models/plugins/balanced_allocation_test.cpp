#include "models/plugins/balanced_allocation.hpp"

#include <doctest/doctest.h>

#include "fixtures/builders.hpp"

using namespace capsim;
using namespace capsim::plugins;

TEST_CASE("BalancedAllocation scores 100 * (1 - std) of the resource fractions") {
  struct Case {
    const char* name;
    std::vector<std::int64_t> requested, allocatable;
    std::int64_t want;
  };
  const Case cases[] = {
      // fractions 0.25 and 0.2: std = |0.25-0.2|/2 = 0.025 -> (1-0.025)*100 = 97.5 -> 97
      {"two resources", {1000, 2000}, {4000, 10000}, 97},
      // fractions 1.0 (capped from 1.5) and 0.0: std 0.5 -> 50
      {"over-allocated fraction is capped at 1", {6000, 0}, {4000, 10000}, 50},
      // fractions 0.2, 0.5, 0.8: mean 0.5, std = sqrt((0.09+0+0.09)/3) = 0.2449 -> 75.5 -> 75
      {"three resources use the population std", {2, 5, 8}, {10, 10, 10}, 75},
      // a resource with zero allocatable is skipped: one fraction left, std 0 -> 100
      {"zero allocatable skipped", {3, 7}, {10, 0}, 100},
      {"equal fractions", {5, 50}, {10, 100}, 100},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    CHECK(balanced_resource_score(c.requested, c.allocatable) == c.want);
  }
}

TEST_CASE("BalancedAllocation skips best-effort pods and counts the pod's own requests") {
  capsim::testing::TestWorld tw;
  tw.node("n1").cpu("4").memory("10000").add();
  PodId be = tw.pod("be").add();
  PodId p = tw.pod("p").cpu("1").memory("2000").add();
  Cluster cluster(tw.world());
  fw::Snapshot snap(cluster);
  BalancedAllocation ba;
  ba.set_slot(0);
  fw::CycleState state(1);
  std::vector<NodeId> ids{0};
  CHECK(ba.pre_score(state, tw.world().pods[be], ids, snap).code == fw::Code::kSkip);
  REQUIRE(ba.pre_score(state, tw.world().pods[p], ids, snap).is_success());
  // Actual requests, no 100m/200Mi defaults: 1000/4000 = 0.25 and 2000/10000 = 0.2 -> 97
  CHECK(ba.score(state, tw.world().pods[p], cluster.node(0)) == 97);
}
