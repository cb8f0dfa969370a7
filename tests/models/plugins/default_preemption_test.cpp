#include "models/plugins/default_preemption.hpp"

#include <doctest/doctest.h>

#include "fixtures/builders.hpp"
#include "models/plugin_registry.hpp"
#include "sim/framework/scheduler.hpp"
#include "tests/fixtures/bind.hpp"

using namespace capsim;
using capsim::testing::bind_share;
using capsim::testing::bind_units;
using capsim::testing::TestWorld;

namespace {

struct Rig {
  TestWorld tw;
  fw::ReasonTable reasons;
  std::unique_ptr<PluginContext> ctx;
  std::unique_ptr<fw::Framework> fw;
  std::unique_ptr<Cluster> cluster;
  std::unique_ptr<fw::Scheduler> sched;

  void start() {
    ctx = std::make_unique<PluginContext>(PluginContext{tw.world(), reasons, 1});
    fw = std::make_unique<fw::Framework>(build_builtin_profile("default-scheduler", *ctx).config);
    cluster = std::make_unique<Cluster>(tw.world());
    sched = std::make_unique<fw::Scheduler>(*fw, *cluster, reasons, RandomStream(1, "t"));
  }
  void run(PodId p, NodeId n, std::vector<std::uint16_t> gpus, SimTime start) {
    bind_units(*cluster, p, n, gpus);
    cluster->pod(p).phase = PodPhase::kRunning;
    cluster->pod(p).start = start;
  }
};

}  // namespace

TEST_CASE("preemption evicts the fewest lower-priority pods, reprieving the most important") {
  Rig r;
  r.tw.node("n1").cpu("64").memory("512Gi").gpus(8).add();
  PodId p1 = r.tw.pod("prio1").cpu("1").memory("1Gi").gpus(2).priority(1).add();
  PodId p2 = r.tw.pod("prio2").cpu("1").memory("1Gi").gpus(2).priority(2).add();
  PodId p3 = r.tw.pod("prio3").cpu("1").memory("1Gi").gpus(2).priority(3).add();
  PodId hi = r.tw.pod("high").cpu("1").memory("1Gi").gpus(4).priority(10).add();
  r.start();
  r.run(p1, 0, {0, 1}, 0);
  r.run(p2, 0, {2, 3}, 0);
  r.run(p3, 0, {4, 5}, 0);
  // 2 GPUs free, 4 wanted. Removing all three frees 8; adding back prio3 (6 free) and prio2
  // (4 free) keeps the preemptor fitting; prio1 back would leave 2 free, so prio1 is the victim.
  auto res = r.sched->schedule_one(hi);
  CHECK(res.outcome == fw::ScheduleResult::Outcome::kUnschedulable);
  CHECK(res.nominated_node == 0);
  CHECK(res.victims == std::vector<PodId>{p1});
}

TEST_CASE("preemption never evicts pods of equal or higher priority") {
  Rig r;
  r.tw.node("n1").cpu("64").memory("512Gi").gpus(8).add();
  PodId a = r.tw.pod("a").gpus(8).priority(10).add();
  PodId p = r.tw.pod("p").gpus(1).priority(10).add();
  r.start();
  r.run(a, 0, {0, 1, 2, 3, 4, 5, 6, 7}, 0);
  auto res = r.sched->schedule_one(p);
  CHECK(res.victims.empty());
  CHECK(res.message ==
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are "
        "available: 1 No preemption victims found for incoming pod.");
}

TEST_CASE("preemptionPolicy Never does not preempt") {
  Rig r;
  r.tw.node("n1").cpu("64").memory("512Gi").gpus(1).add();
  PodId low = r.tw.pod("low").gpus(1).priority(0).add();
  PodId p = r.tw.pod("p").gpus(1).priority(100).never_preempt().add();
  r.start();
  r.run(low, 0, {0}, 0);
  auto res = r.sched->schedule_one(p);
  CHECK(res.victims.empty());
  CHECK(res.nominated_node == kNoNode);
}

TEST_CASE("the candidate node follows upstream's ordering of victim sets") {
  // Each case: two 2-GPU nodes A and B, each full with victims (priority, GPUs, start time);
  // the preemptor (priority 100) needs `want` GPUs.
  struct Victim {
    std::int32_t prio;
    std::int32_t gpus;
    SimTime start;
  };
  struct Case {
    const char* name;
    std::vector<Victim> a, b;
    std::int32_t want;
    const char* node;
  };
  const Case cases[] = {
      // A must evict its prio-5 pod; on B evicting the prio-1 pod is enough (prio 2 reprieved).
      {"lowest highest-priority victim wins", {{5, 2, 0}}, {{1, 1, 0}, {2, 1, 0}}, 1, "B"},
      // Both evict everything; highest 3 on both; sums 3+3 vs 3+1 (each + 2^31).
      {"then the lowest priority sum", {{3, 1, 0}, {3, 1, 0}}, {{3, 1, 0}, {1, 1, 0}}, 2, "B"},
      // Highest 1 on both; two victims add two 2^31 offsets, so one victim is cheaper.
      {"the sum's offset makes fewer victims cheaper", {{1, 1, 0}, {1, 1, 0}}, {{1, 2, 0}}, 2, "B"},
      {"then the latest start of the highest-priority victims",
       {{4, 2, 100}},
       {{4, 2, 50}},
       2,
       "A"},
      {"then the first candidate", {{4, 2, 50}}, {{4, 2, 50}}, 2, "A"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    Rig r;
    r.tw.node("A").cpu("64").memory("64Gi").gpus(2).add();
    r.tw.node("B").cpu("64").memory("64Gi").gpus(2).add();
    std::vector<std::pair<PodId, Victim>> va, vb;
    int k = 0;
    for (const auto& v : c.a)
      va.emplace_back(r.tw.pod("a" + std::to_string(k++)).gpus(v.gpus).priority(v.prio).add(), v);
    for (const auto& v : c.b)
      vb.emplace_back(r.tw.pod("b" + std::to_string(k++)).gpus(v.gpus).priority(v.prio).add(), v);
    PodId pre = r.tw.pod("pre").gpus(c.want).priority(100).add();
    r.start();
    auto place = [&](const std::vector<std::pair<PodId, Victim>>& vs, NodeId node) {
      std::uint16_t next = 0;
      for (const auto& [id, v] : vs) {
        std::vector<std::uint16_t> g;
        for (int i = 0; i < v.gpus; ++i)
          g.push_back(next++);
        r.run(id, node, g, v.start);
      }
    };
    place(va, 0);
    place(vb, 1);
    auto res = r.sched->schedule_one(pre);
    REQUIRE(res.nominated_node != kNoNode);
    CHECK(r.tw.world().nodes[res.nominated_node].name == c.node);
  }
}

namespace {

// A policy/v1 PodDisruptionBudget over app=<app> in "default" with minAvailable `min`.
void budget(TestWorld& tw, const std::string& app, std::int32_t min) {
  DisruptionBudgetSpec b;
  b.name = app + "-pdb";
  b.selector.present = true;
  b.selector.requirements.push_back({tw.sym("app"), LabelOp::kIn, {tw.sym(app)}});
  b.min_available = IntOrPercent{min, false};
  tw.world().disruption_budgets.push_back(std::move(b));
}

}  // namespace

TEST_CASE(
    "preemption counts PodDisruptionBudget violations and reprieves violating victims first "
    "(upstream TestDryRunPreemption: preemption with violation of same pdb)") {
  Rig r;
  r.tw.node("node1").cpu("4").memory("64Gi").add();
  const PodId p11 = r.tw.pod("p1.1").cpu("2").label("app", "foo").priority(100).add();
  const PodId p12 = r.tw.pod("p1.2").cpu("2").label("app", "foo").priority(100).add();
  const PodId p = r.tw.pod("p").cpu("4").priority(1000).add();
  budget(r.tw, "foo", 1);  // two healthy pods, one disruption allowed
  r.start();
  r.run(p11, 0, {}, 0);
  r.run(p12, 0, {}, 0);
  auto res = r.sched->schedule_one(p);
  CHECK(res.nominated_node == 0);
  // Both must go for the preemptor's 4 cpu. Walking them most important first (equal priority
  // and start: p1.1 first), p1.1 spends the one allowed disruption and p1.2 takes the budget
  // below zero: p1.2 violates it and is tried for reprieve, and so listed, first.
  CHECK(res.victims == std::vector<PodId>{p12, p11});
}

TEST_CASE(
    "a candidate node whose victims violate no PodDisruptionBudget wins over one with lower "
    "victim priorities that would (pickOneNodeForPreemption's first criterion)") {
  for (const bool with_budget : {false, true}) {
    CAPTURE(with_budget);
    Rig r;
    r.tw.node("node1").cpu("4").memory("64Gi").add();
    r.tw.node("node2").cpu("4").memory("64Gi").add();
    const PodId low = r.tw.pod("low").cpu("4").label("app", "guarded").priority(10).add();
    const PodId mid = r.tw.pod("mid").cpu("4").priority(50).add();
    const PodId p = r.tw.pod("p").cpu("4").priority(1000).add();
    if (with_budget) budget(r.tw, "guarded", 1);  // one healthy pod, none may go
    r.start();
    r.run(low, 0, {}, 0);
    r.run(mid, 1, {}, 0);
    auto res = r.sched->schedule_one(p);
    // Without the budget the lower-priority victim wins; with it, node2's unguarded one.
    CHECK(res.nominated_node == (with_budget ? 1 : 0));
    CHECK(res.victims == std::vector<PodId>{with_budget ? mid : low});
  }
}

TEST_CASE("a preemptor that no bound pod is below finds no victims, counted on every node") {
  // Three full 8-GPU nodes (two pods of priority 5, one of 10) and an empty 2-GPU node that can
  // never hold a 4-GPU pod. The search for victims is skipped when no bound pod has a lower
  // priority than the preemptor (Cluster::any_bound_below); the message still counts every
  // node it would have visited.
  struct Case {
    std::int32_t priority;
    bool below;  // some bound pod has a lower priority
    NodeId nominated;
    const char* message;
  };
  const char* none =
      "0/4 nodes are available: 4 Insufficient nvidia.com/gpu. preemption: 0/4 nodes are "
      "available: 1 Preemption is not helpful for scheduling, 3 No preemption victims found for "
      "incoming pod.";
  const Case cases[] = {
      {3, false, kNoNode, none},
      {5, false, kNoNode, none},
      {10, true, 0,
       "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."},  // n1's pod is the victim
  };
  for (const Case& c : cases) {
    CAPTURE(c.priority);
    Rig r;
    r.tw.node("n1").cpu("64").memory("512Gi").gpus(8).add();
    r.tw.node("n2").cpu("64").memory("512Gi").gpus(8).add();
    r.tw.node("n3").cpu("64").memory("512Gi").gpus(8).add();
    r.tw.node("small").cpu("64").memory("512Gi").gpus(2).add();
    PodId a = r.tw.pod("a").gpus(8).priority(5).add();
    PodId b = r.tw.pod("b").gpus(8).priority(5).add();
    PodId d = r.tw.pod("d").gpus(8).priority(10).add();
    PodId p = r.tw.pod("p").gpus(4).priority(c.priority).add();
    r.start();
    r.run(a, 0, {0, 1, 2, 3, 4, 5, 6, 7}, 0);
    r.run(b, 1, {0, 1, 2, 3, 4, 5, 6, 7}, 0);
    r.run(d, 2, {0, 1, 2, 3, 4, 5, 6, 7}, 0);
    CHECK(r.cluster->any_bound_below(c.priority) == c.below);
    auto res = r.sched->schedule_one(p);
    CHECK(res.outcome == fw::ScheduleResult::Outcome::kUnschedulable);
    CHECK(res.message == c.message);
    CHECK(res.nominated_node == c.nominated);
    CHECK(res.victims == (c.below ? std::vector<PodId>{a} : std::vector<PodId>{}));
    // The count follows bind and unbind.
    r.cluster->unbind(a);
    r.cluster->unbind(b);
    CHECK(!r.cluster->any_bound_below(10));
    CHECK(r.cluster->any_bound_below(11));
    r.cluster->check_invariants();
  }
}
