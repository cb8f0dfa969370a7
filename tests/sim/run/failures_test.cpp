// Node and GPU health and checkpoints: a failed GPU stops being offered (allocatable drops, no
// free GPU, no share pool) until repaired; a down node carries the unreachable taint; the
// checkpoint timeline's closed forms; the failure process draws only from its own seed.
#include <doctest/doctest.h>

#include "sim/check.hpp"
#include "sim/cluster.hpp"
#include "sim/run/checkpoint.hpp"
#include "sim/run/failure_process.hpp"
#include "sim/run/node_health.hpp"
#include "tests/fixtures/bind.hpp"
#include "tests/fixtures/builders.hpp"

using namespace capsim;
using capsim::testing::TestWorld;

TEST_CASE("a failed GPU offers no unit, is no free GPU and comes back whole when repaired") {
  TestWorld tw;
  const NodeId node = tw.node("n").cpu("32").memory("256Gi").gpus(4).add();
  Cluster c(tw.world());
  NodeHealth health(c);
  const NodeInfo& n = c.node(node);
  REQUIRE(n.allocatable[kNvidiaGpu] == 4);
  REQUIRE(n.free_whole_gpus == 4);

  health.take_gpu_down(node, 2, 0, Interruption::kUnplanned);
  CHECK(n.allocatable[kNvidiaGpu] == 3);
  CHECK(n.free_whole_gpus == 3);
  CHECK(c.quick()[node].whole_gpus == 3);
  CHECK(c.quick()[node].device == 3);
  CHECK_FALSE(share_of(n, 2, 100).has_value());  // no share pool on it either
  c.check_invariants();
  health.check_invariants();

  health.bring_gpu_up(node, 2, kHour);
  CHECK(n.allocatable[kNvidiaGpu] == 4);
  CHECK(n.free_whole_gpus == 4);
  CHECK(share_of(n, 2, 100).has_value());
  c.check_invariants();
  health.check_invariants();
}

TEST_CASE("a GPU that a pod holds cannot fail before the pod is taken down") {
  TestWorld tw;
  const NodeId node = tw.node("n").cpu("32").memory("256Gi").gpus(2).add();
  const PodId p = tw.pod("p").cpu("1").memory("1Gi").gpus(1).add();
  Cluster c(tw.world());
  NodeHealth health(c);
  const std::vector<std::uint16_t> unit0 = {0};
  testing::bind_units(c, p, node, unit0);
  CHECK(health.pods_on_gpu(node, 0) == std::vector<PodId>{p});
  CHECK(health.pods_on_gpu(node, 1).empty());
  CHECK_THROWS_AS(health.take_gpu_down(node, 0, 0, Interruption::kUnplanned), InvariantError);
}

TEST_CASE("a down node carries node.kubernetes.io/unreachable:NoSchedule until it is back") {
  TestWorld tw;
  const NodeId node = tw.node("n").cpu("32").memory("256Gi").gpus(8).add();
  Cluster c(tw.world());
  NodeHealth health(c);
  const Sym key = tw.world().strings.intern("node.kubernetes.io/unreachable");
  health.take_node_down(node, 0, Interruption::kUnplanned);
  const NodeInfo& n = c.node(node);
  REQUIRE(n.spec->taints.size() == 1);
  CHECK(n.spec->taints[0].key == key);
  CHECK(n.spec->taints[0].effect == TaintEffect::kNoSchedule);
  CHECK(c.quick()[node].hard_taints);
  CHECK(tw.world().nodes[node].taints.empty());  // the scenario's node is unchanged
  c.check_invariants();
  health.bring_node_up(node, 6 * kHour);
  CHECK(c.node(node).spec->taints.empty());
  CHECK_FALSE(c.quick()[node].hard_taints);

  // Down for 6 h of a 24 h run: the pool's GPUs were available 75 % of the time.
  Summary s;
  health.add_summary(s, kDay);
  REQUIRE(s.size() == 1);
  CHECK(s[0].second == doctest::Approx(0.75));
}

TEST_CASE("a checkpointing run computes for the interval, writes, and keeps what it wrote") {
  CheckpointPolicy c;
  c.interval = 60 * kMinute;
  c.cost = 5 * kMinute;
  const SimDuration resume = 10 * kMinute;
  // Loading first: nothing computed in the first 10 min.
  CHECK(checkpoint::computing(c, resume, 10 * kMinute) == 0);
  // 10 min load + 60 compute + 5 write + 30 compute = 105 min elapsed, 90 min computed.
  CHECK(checkpoint::computing(c, resume, 105 * kMinute) == 90 * kMinute);
  // During a write nothing is computed.
  CHECK(checkpoint::computing(c, resume, 72 * kMinute) == 60 * kMinute);
  CHECK(checkpoint::completed(c, resume, 74 * kMinute) == 0);
  CHECK(checkpoint::completed(c, resume, 75 * kMinute) == 1);
  CHECK(checkpoint::completed_at(c, resume, 1) == 75 * kMinute);
  // The inverse: 2 h of computing ends after one write, with no write at the end.
  CHECK(checkpoint::elapsed_for(c, resume, 120 * kMinute) == 135 * kMinute);
  CHECK(checkpoint::elapsed_for(c, resume, 90 * kMinute) == 105 * kMinute);
  for (SimDuration w : {kMinute, 59 * kMinute, 61 * kMinute, 7 * kHour + 3}) {
    CAPTURE(w);
    CHECK(checkpoint::computing(c, resume, checkpoint::elapsed_for(c, resume, w)) == w);
  }
}

TEST_CASE("failures draw from the failure seed alone and never pick a device twice by rule") {
  TestWorld tw;
  for (int i = 0; i < 4; ++i)
    (void)tw.node("n" + std::to_string(i)).cpu("32").memory("256Gi").gpus(8).add();
  FailureConfig cfg;
  cfg.seed = 42;
  FailureRate gpu;
  gpu.cause = FailureCause::kGpu;
  gpu.per_day = 0.5;
  gpu.repair = [](RandomStream&) { return 3600.0; };
  FailureRate host;
  host.cause = FailureCause::kHost;
  host.per_day = 1.0;
  host.repair = [](RandomStream& r) { return r.uniform(60, 120); };
  cfg.rates = {gpu, host};
  // 32 GPUs at 0.5 a day and 4 nodes at 1 a day: 20 failures a day in all.
  auto draws = [&](const FailureConfig& c) {
    FailureProcess f(tw.world(), c);
    std::vector<std::tuple<SimTime, NodeId, std::int32_t, SimDuration>> out;
    SimTime t = 0;
    for (int i = 0; i < 2000; ++i) {
      t = f.next_time(t);
      const FailureProcess::Failure x = f.draw();
      out.emplace_back(t, x.node, x.gpu, x.repair);
    }
    return out;
  };
  const auto a = draws(cfg);
  CHECK(a == draws(cfg));
  const double per_day = 2000.0 / to_seconds(std::get<0>(a.back())) * 86400.0;
  CHECK(per_day == doctest::Approx(20.0).epsilon(0.1));
  std::int64_t node_failures = 0;
  for (const auto& [t, node, g, repair] : a) {
    if (g < 0) {
      ++node_failures;
      CHECK(repair >= 60 * kSecond);
      CHECK(repair <= 120 * kSecond);
    } else {
      CHECK(repair == kHour);
    }
  }
  // A fifth of the rate is the nodes'.
  CHECK(static_cast<double>(node_failures) / 2000.0 == doctest::Approx(0.2).epsilon(0.15));
  FailureConfig other = cfg;
  other.seed = 43;
  CHECK(draws(other) != a);
}
