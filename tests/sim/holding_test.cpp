// What a pod holds: each Holding's share of its physical GPU, and a GPU share as part of the
// GPU's share pool rather than a replica of its unit.
#include <doctest/doctest.h>

#include "sim/check.hpp"
#include "sim/cluster.hpp"
#include "tests/fixtures/bind.hpp"
#include "tests/fixtures/builders.hpp"

using namespace capsim;
using capsim::testing::TestWorld;
using capsim::testing::units_of;

TEST_CASE("a holding's share is the part of its physical GPU the unit stands for") {
  NodeInfo n;
  DeviceUnit whole;  // a whole GPU, exclusive
  whole.gpu = 0;
  DeviceUnit mig;  // a 3g instance on GPU 1: 3 of 7 compute slices
  mig.gpu = 1;
  mig.instance = 0;
  mig.alloc_weight = 3.0 / 7.0;
  DeviceUnit sliced;  // GPU 2 time-sliced into 4 replicas
  sliced.gpu = 2;
  sliced.mode = ShareMode::kTimeSliced;
  sliced.replicas = 4;
  n.units = {whole, mig, sliced};

  CHECK(replica_of(n, 0).share == 1.0);
  CHECK(replica_of(n, 1).share == doctest::Approx(3.0 / 7.0));
  CHECK(replica_of(n, 2).share == 0.25);
  CHECK_FALSE(replica_of(n, 2).pooled());

  // A 250m share of GPU 0 is held through its whole-GPU unit; a MIG-only GPU has no pool.
  const std::optional<Holding> share = share_of(n, 0, 250);
  REQUIRE(share.has_value());
  CHECK(share->unit == 0);
  CHECK(share->pooled());
  CHECK(share->share == 0.25);
  CHECK_FALSE(share_of(n, 1, 250).has_value());

  // "How much GPU": the sum, the same answer lost GPU time uses.
  const std::vector<Holding> held = {replica_of(n, 0), replica_of(n, 1), replica_of(n, 2)};
  CHECK(gpu_fraction(held) == doctest::Approx(1.0 + 3.0 / 7.0 + 0.25));
  CHECK(units_of(held) == std::vector<std::uint16_t>{0, 1, 2});
}

TEST_CASE("GPU shares fill a GPU's pool without taking its unit") {
  TestWorld tw;
  const NodeId node = tw.node("n").cpu("8").memory("64Gi").gpus(1).add();
  const PodId a = tw.pod("a").cpu("1").memory("1Gi").gpu_milli(600).add();
  const PodId b = tw.pod("b").cpu("1").memory("1Gi").gpu_milli(400).add();
  Cluster c(tw.world());
  testing::bind_share(c, a, node, 0);
  testing::bind_share(c, b, node, 0);
  const NodeInfo& n = c.node(node);
  CHECK(n.gpus[0].milli_used == 1000);
  CHECK(n.gpus[0].holders == 2);
  CHECK(n.units[0].used == 0);  // the pool, not the unit's one replica
  CHECK(n.free_whole_gpus == 0);
  CHECK(gpu_fraction(c.pod(a).holdings) == doctest::Approx(0.6));
  CHECK(c.pod(a).gpus == std::vector<std::uint16_t>{0});
  c.pod(a).phase = PodPhase::kRunning;
  c.pod(b).phase = PodPhase::kRunning;
  c.check_invariants();

  c.unbind(a);
  c.unbind(b);
  CHECK(c.node(node).gpus[0].milli_used == 0);
  CHECK(c.node(node).free_whole_gpus == 1);
  c.check_invariants();
}

TEST_CASE("a pooled holding is refused for a pod that is not a GPU-share pod") {
  TestWorld tw;
  const NodeId node = tw.node("n").cpu("8").memory("64Gi").gpus(1).add();
  const PodId whole = tw.pod("w").cpu("1").memory("1Gi").gpus(1).add();
  Cluster c(tw.world());
  const std::optional<Holding> share = share_of(c.node(node), 0, 500);
  REQUIRE(share.has_value());
  CHECK_THROWS_AS(c.bind(whole, node, std::span<const Holding>(&*share, 1)), InvariantError);
}
