#include "sim/framework/scheduler.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <deque>

#include "fixtures/builders.hpp"
#include "models/plugin_registry.hpp"
#include "tests/fixtures/bind.hpp"

using namespace capsim;
using capsim::testing::TestWorld;
using capsim::testing::units_of;

TEST_CASE("numFeasibleNodesToFind follows kube-scheduler's adaptive percentage") {
  struct Case {
    std::int32_t pct, nodes, want;
  };
  const Case cases[] = {
      {0, 50, 50},       // fewer than 100 nodes: all of them
      {0, 100, 100},     // 50 - 100/125 = 50% -> 50, raised to the minimum of 100
      {0, 1000, 420},    // 50 - 8 = 42%
      {0, 5000, 500},    // 50 - 40 = 10%
      {0, 20000, 1000},  // 50 - 160 < 5 -> 5%
      {30, 1000, 300},   // explicit percentage
      {1, 1000, 100},    // never below 100
      {100, 5000, 5000},
  };
  for (const auto& c : cases) {
    CAPTURE(c.nodes);
    CHECK(fw::num_feasible_nodes_to_find(c.pct, c.nodes) == c.want);
  }
}

namespace {
struct Rig {
  TestWorld tw;
  fw::ReasonTable reasons;
  std::unique_ptr<PluginContext> ctx;
  std::unique_ptr<fw::Framework> fw;
  std::unique_ptr<Cluster> cluster;
  std::unique_ptr<fw::Scheduler> sched;
  // `quick_checks` false: the scheduler evaluates every plugin on every node (the reference the
  // quick-path equality tests compare against).
  void start(const std::string& profile = "default-scheduler", bool quick_checks = true) {
    ctx = std::make_unique<PluginContext>(PluginContext{tw.world(), reasons, 1});
    auto cfg = build_builtin_profile(profile, *ctx).config;
    cfg.use_quick_checks = quick_checks;
    fw = std::make_unique<fw::Framework>(std::move(cfg));
    cluster = std::make_unique<Cluster>(tw.world());
    sched = std::make_unique<fw::Scheduler>(*fw, *cluster, reasons, RandomStream(1, "t"));
  }
};
}  // namespace

TEST_CASE("an unschedulable pod gets upstream's FitError message with a sorted histogram") {
  Rig r;
  r.tw.node("g1").cpu("8").memory("64Gi").gpus(2).add();
  r.tw.node("g2").cpu("8").memory("64Gi").gpus(2).add();
  r.tw.node("t").cpu("8").memory("64Gi").gpus(8).taint("dedicated", "infer", "NoSchedule").add();
  PodId p = r.tw.pod("p").cpu("1").memory("1Gi").gpus(4).add();
  r.start();
  auto res = r.sched->schedule_one(p);
  CHECK(res.outcome == fw::ScheduleResult::Outcome::kUnschedulable);
  CHECK(res.message ==
        "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: infer}, 2 "
        "Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 3 Preemption is not "
        "helpful for scheduling.");
  // Two GPUs on g1/g2 can never hold four (the request exceeds their allocatable, which
  // upstream marks unresolvable), and the taint rules out the third: preemption cannot help.
  CHECK(res.unresolvable_everywhere);
}

TEST_CASE("the default profile spreads by LeastAllocated and a packing profile packs") {
  Rig spread;
  spread.tw.node("n1").cpu("16").memory("128Gi").gpus(8).add();
  spread.tw.node("n2").cpu("16").memory("128Gi").gpus(8).add();
  PodId a = spread.tw.pod("a").cpu("4").memory("32Gi").gpus(4).add();
  PodId b = spread.tw.pod("b").cpu("4").memory("32Gi").gpus(4).add();
  spread.start();
  auto ra = spread.sched->schedule_one(a);
  REQUIRE(ra.outcome == fw::ScheduleResult::Outcome::kScheduled);
  spread.cluster->bind(a, ra.placement.node, ra.placement.holdings);
  auto rb = spread.sched->schedule_one(b);
  REQUIRE(rb.outcome == fw::ScheduleResult::Outcome::kScheduled);
  CHECK(rb.placement.node != ra.placement.node);  // least allocated: the empty node

  Rig pack;
  pack.tw.node("n1").cpu("16").memory("128Gi").gpus(8).add();
  pack.tw.node("n2").cpu("16").memory("128Gi").gpus(8).add();
  PodId c = pack.tw.pod("c").cpu("4").memory("32Gi").gpus(4).add();
  PodId d = pack.tw.pod("d").cpu("4").memory("32Gi").gpus(4).add();
  pack.start("gpu-binpack");
  auto rc = pack.sched->schedule_one(c);
  pack.cluster->bind(c, rc.placement.node, rc.placement.holdings);
  auto rd = pack.sched->schedule_one(d);
  CHECK(rd.placement.node == rc.placement.node);  // most allocated: the used node
  CHECK(units_of(rd.placement.holdings) == std::vector<std::uint16_t>{4, 5, 6, 7});
}

TEST_CASE("whole GPUs are taken as aligned blocks when possible") {
  Rig r;
  r.tw.node("n").cpu("64").memory("512Gi").gpus(8).add();
  PodId one = r.tw.pod("one").gpus(1).add();
  PodId four = r.tw.pod("four").gpus(4).add();
  PodId two = r.tw.pod("two").gpus(2).add();
  r.start();
  auto r1 = r.sched->schedule_one(one);
  r.cluster->bind(one, 0, r1.placement.holdings);
  CHECK(units_of(r1.placement.holdings) == std::vector<std::uint16_t>{0});
  auto r4 = r.sched->schedule_one(four);
  r.cluster->bind(four, 0, r4.placement.holdings);
  CHECK(units_of(r4.placement.holdings) ==
        std::vector<std::uint16_t>{4, 5, 6, 7});  // 0-3 is broken
  auto r2 = r.sched->schedule_one(two);
  CHECK(units_of(r2.placement.holdings) ==
        std::vector<std::uint16_t>{2, 3});  // first free aligned pair
}

TEST_CASE("with many nodes the scheduler stops after enough feasible nodes and rotates") {
  Rig r;
  for (int i = 0; i < 1000; ++i)
    r.tw.node("n" + std::to_string(i)).cpu("8").memory("64Gi").add();
  PodId p = r.tw.pod("p").cpu("1").add();
  PodId q = r.tw.pod("q").cpu("1").add();
  r.start();
  auto a = r.sched->schedule_one(p);
  // 1000 nodes: 42% -> 420 feasible nodes are enough.
  CHECK(a.evaluated_nodes == 420);
  CHECK(a.feasible_nodes == 420);
  auto b = r.sched->schedule_one(q);
  CHECK(b.evaluated_nodes == 420);
  // All nodes score alike; the first in evaluation order wins, and the second cycle starts
  // where the first stopped (node 420).
  CHECK(a.placement.node == 0);
  CHECK(b.placement.node == 420);
}

namespace {
// Schedules pods 0..count-1 on both rigs, binding each where it lands; outcomes, placements,
// messages and feasible-node counts must agree, and with `same_evaluated` so must the nodes
// evaluated. Returns how many pods were placed and how many failed.
// One pod on both rigs, bound on both where it lands; true if it was placed.
bool expect_same_cycle(Rig& fast, Rig& slow, PodId p, bool same_evaluated) {
  auto a = fast.sched->schedule_one(p);
  auto b = slow.sched->schedule_one(p);
  REQUIRE(a.outcome == b.outcome);
  CHECK(a.placement.node == b.placement.node);
  CHECK(a.placement.holdings == b.placement.holdings);
  CHECK(a.message == b.message);
  CHECK(a.feasible_nodes == b.feasible_nodes);
  if (same_evaluated) CHECK(a.evaluated_nodes == b.evaluated_nodes);
  if (a.outcome != fw::ScheduleResult::Outcome::kScheduled) return false;
  fast.cluster->bind(p, a.placement.node, a.placement.holdings);
  slow.cluster->bind(p, b.placement.node, b.placement.holdings);
  return true;
}

std::pair<int, int> expect_same_decisions(Rig& fast, Rig& slow, PodId count, bool same_evaluated) {
  int placed = 0, failed = 0;
  for (PodId p = 0; p < count; ++p) {
    if (expect_same_cycle(fast, slow, p, same_evaluated)) {
      ++placed;
    } else {
      ++failed;
    }
  }
  return {placed, failed};
}

// expect_same_cycle for pods 0 to count - 1, releasing after each pod the oldest running pods
// (on both rigs), as many as release(pod, running) says.
struct Tally {
  int placed = 0, failed = 0, released = 0;
};
template <typename Release>
Tally expect_same_with_releases(Rig& fast, Rig& slow, PodId count, Release&& release) {
  Tally t;
  std::deque<PodId> running;
  for (PodId p = 0; p < count; ++p) {
    CAPTURE(p);
    if (expect_same_cycle(fast, slow, p, true)) {
      running.push_back(p);
      ++t.placed;
    } else {
      ++t.failed;
    }
    for (std::size_t k = release(p, running.size()); k > 0 && !running.empty(); --k) {
      fast.cluster->unbind(running.front());
      slow.cluster->unbind(running.front());
      running.pop_front();
      ++t.released;
    }
  }
  return t;
}
}  // namespace

TEST_CASE("quick checks skip work without changing any decision or message") {
  // Two schedulers over identical random clusters, one with quick checks and one without,
  // must agree on every placement, every failure message and every rotation of the start index.
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    CAPTURE(seed);
    auto build = [&](bool quick) {
      auto r = std::make_unique<Rig>();
      RandomStream rng(seed, "quick-check-test");
      for (int i = 0; i < 300; ++i) {
        auto nb = r->tw.node("n" + std::to_string(i))
                      .cpu(std::to_string(16 + 16 * rng.below(4)))
                      .memory("256Gi");
        if (rng.below(4) != 0) nb.gpus(static_cast<std::int32_t>(1u << rng.below(4)));
        if (rng.below(10) == 0) nb.taint("dedicated", "x", "NoSchedule");
        nb.add();
      }
      for (int i = 0; i < 600; ++i) {
        auto pb = r->tw.pod("p" + std::to_string(i))
                      .cpu(std::to_string(1 + rng.below(16)))
                      .memory(std::to_string(1 + rng.below(64)) + "Gi");
        // GPU-share pods make whole GPUs unavailable that the scheduler's accounting still counts
        // as free, which GpuDevices' quick requirement (free units) must see.
        if (rng.below(6) == 0) {
          pb.gpu_milli(static_cast<std::int32_t>(100 + 100 * rng.below(9)));
        } else {
          pb.gpus(static_cast<std::int32_t>(rng.below(3) == 0 ? 0 : 1u << rng.below(4)));
        }
        pb.add();
      }
      r->start("default-scheduler", quick);
      return r;
    };
    auto fast = build(true);
    auto slow = build(false);
    const auto [placed, failed] = expect_same_decisions(*fast, *slow, 600, true);
    CHECK(placed > 100);  // the comparison covered both outcomes
    CHECK(failed > 10);
  }
}

TEST_CASE("the quick index changes no decision, message or rotation as nodes fill and drain") {
  // Enough nodes for the index's bitsets to span many words, three GPU models, pods limited to
  // some of them and asking up to 16 GPUs (past the index's levels), and pods released as others
  // arrive, so that nodes' levels go both ways. Without quick checks the scheduler reads every
  // node; with them it visits only the index's candidates. Everything must agree, including the
  // nodes evaluated (which moves the next cycle's start).
  auto build = [&](bool quick) {
    auto r = std::make_unique<Rig>();
    RandomStream rng(23, "quick-index-test");
    const char* models[] = {"A100-80GB", "H100-80GB", "B200"};
    for (int i = 0; i < 700; ++i) {
      auto nb = r->tw.node("n" + std::to_string(i)).cpu("256").memory("2Ti");
      if (rng.below(10) != 0) {
        nb.gpus(rng.below(8) == 0 ? 16 : 8, models[rng.below(3)]);
      }
      if (rng.below(25) == 0) nb.taint("dedicated", "x", "NoSchedule");
      nb.add();
    }
    for (int i = 0; i < 1500; ++i) {
      auto pb = r->tw.pod("p" + std::to_string(i)).cpu("4").memory("16Gi");
      const auto kind = rng.below(10);
      if (kind < 8) pb.gpus(kind == 0 ? 16 : static_cast<std::int32_t>(1u << rng.below(4)));
      if (kind < 8 && rng.below(3) == 0) pb.gpu_models({models[rng.below(3)]});
      if (kind < 8 && rng.below(5) == 0)
        pb.gpu_models({models[rng.below(3)], models[rng.below(3)]});
      pb.add();
    }
    r->start("default-scheduler", quick);
    return r;
  };
  auto fast = build(true);
  auto slow = build(false);
  RandomStream rng(29, "quick-index-releases");
  // Once the cluster is busy, release an older pod now and then (oldest first).
  const Tally t = expect_same_with_releases(*fast, *slow, 1500, [&](PodId p, std::size_t running) {
    return p > 700 && running > 0 && rng.below(3) != 0 ? std::size_t{1} : std::size_t{0};
  });
  CHECK(t.placed > 500);
  CHECK(t.failed > 50);
  CHECK(t.released > 300);
  for (const NodeInfo& n : fast->cluster->nodes()) {  // the index kept in step with the copies
    const QuickNode& q = fast->cluster->quick()[n.id];
    CHECK(fast->cluster->quick_index().agrees(n.id, q.units, q.device, q.gpu_model));
  }
}

TEST_CASE("the quick copy counts whichever extended resource is most plentiful, not only GPUs") {
  // Nodes offer more of an FPGA resource than GPUs, so the copy tracks FPGAs; pods asking for
  // FPGAs, GPUs or both must still get the same decisions and messages with and without it.
  auto build = [&](bool quick) {
    auto r = std::make_unique<Rig>();
    RandomStream rng(5, "quick-device-test");
    for (int i = 0; i < 200; ++i) {
      auto nb = r->tw.node("n" + std::to_string(i)).cpu("64").memory("256Gi");
      nb.resource("example.com/fpga", static_cast<std::int64_t>(8 + rng.below(8)));
      if (rng.below(2) != 0) nb.gpus(static_cast<std::int32_t>(1u << rng.below(4)));
      nb.add();
    }
    for (int i = 0; i < 700; ++i) {
      auto pb = r->tw.pod("p" + std::to_string(i)).cpu(std::to_string(1 + rng.below(8)));
      pb.memory("1Gi");
      if (rng.below(3) != 0)
        pb.resource("example.com/fpga", static_cast<std::int64_t>(1 + rng.below(8)));
      if (rng.below(3) == 0) pb.gpus(static_cast<std::int32_t>(1u << rng.below(3)));
      pb.add();
    }
    r->start("default-scheduler", quick);
    return r;
  };
  auto fast = build(true);
  auto slow = build(false);
  REQUIRE(fast->cluster->quick_device() == *fast->tw.world().resources.find("example.com/fpga"));
  const auto [placed, failed] = expect_same_decisions(*fast, *slow, 700, true);
  const ResourceId fpga = fast->cluster->quick_device();
  for (const NodeInfo& n : fast->cluster->nodes())  // the copy's FPGA count kept in step
    CHECK(fast->cluster->quick()[n.id].device == n.free(fpga));
  CHECK(placed > 100);
  CHECK(failed > 10);
}

TEST_CASE("quick checks and quick accepts change no decision or message under the FGD profiles") {
  // The FGD study's profiles let every filter accept nodes from the QuickNode copy; with and
  // without the quick paths, placements, GPUs and failure messages must be identical, on nodes
  // with taints, cordons, several GPU models and pods asking for shares, whole GPUs or no GPU.
  for (const char* profile : {"FGD", "GpuPacking", "BestFit"}) {
    CAPTURE(profile);
    auto build = [&](bool quick) {
      auto r = std::make_unique<Rig>();
      RandomStream rng(11, "quick-accept-test");
      const char* models[] = {"G2", "T4", "P100"};
      for (int i = 0; i < 150; ++i) {
        auto nb = r->tw.node("n" + std::to_string(i))
                      .cpu(std::to_string(8 + 8 * rng.below(8)))
                      .memory("256Gi");
        if (rng.below(8) != 0) {
          nb.gpus(static_cast<std::int32_t>(1u << rng.below(4)), models[rng.below(3)]);
        }
        if (rng.below(10) == 0) nb.taint("dedicated", "x", "NoSchedule");
        if (rng.below(20) == 0) nb.unschedulable();
        nb.add();
      }
      const std::int32_t shares[] = {810, 470, 320, 650, 250};
      for (int i = 0; i < 700; ++i) {
        auto pb = r->tw.pod("p" + std::to_string(i))
                      .cpu(std::to_string(1 + rng.below(12)))
                      .memory(std::to_string(1 + rng.below(32)) + "Gi");
        const auto kind = rng.below(10);
        if (kind < 4) {
          pb.gpu_milli(shares[rng.below(5)]);
        } else if (kind < 8) {
          pb.gpus(static_cast<std::int32_t>(1u << rng.below(3)));
        }
        if (kind < 8 && rng.below(6) == 0) pb.gpu_models({models[rng.below(3)]});
        if (rng.below(15) == 0) pb.toleration("dedicated", "x", "NoSchedule");
        pb.add();
      }
      r->start(profile, quick);
      return r;
    };
    auto fast = build(true);
    auto slow = build(false);
    const auto [placed, failed] = expect_same_decisions(*fast, *slow, 700, false);
    CHECK(placed > 100);
    CHECK(failed > 10);
  }
}

TEST_CASE("answers remembered between cycles change no decision, message or rotation") {
  // Pods of a few request shapes come in runs, so that a shape returns after fewer changes than
  // the cluster's change log holds (its remembered feasibility and scores are brought up to
  // date) and after more (they are forgotten); pods are released as others arrive. Without quick
  // checks nothing is remembered: every cycle must agree with that reference.
  auto build = [&](bool quick) {
    auto r = std::make_unique<Rig>();
    RandomStream rng(31, "remembered-answers-test");
    const char* models[] = {"A100-80GB", "H100-80GB"};
    for (int i = 0; i < 300; ++i) {
      // Some nodes run out of cpu before GPUs: their copies then reject pods the index offers.
      r->tw.node("n" + std::to_string(i))
          .cpu(std::to_string(32 << rng.below(3)))
          .memory(rng.below(2) == 0 ? "512Gi" : "1Ti")
          .gpus(8, models[rng.below(2)])
          .add();
    }
    struct Shape {
      const char *cpu, *memory;
      std::int32_t gpus;
      bool h100_only;
    };
    const Shape shapes[] = {{"8", "64Gi", 1, false},
                            {"32", "256Gi", 4, false},
                            {"16", "96Gi", 2, true},
                            {"64", "512Gi", 8, false}};
    for (int i = 0; i < 2400; ++i) {
      // Runs of 20 to 400 pods of one shape.
      const Shape& sh = shapes[(i / 20 + (i / 400)) % 4];
      auto pb = r->tw.pod("p" + std::to_string(i)).cpu(sh.cpu).memory(sh.memory).gpus(sh.gpus);
      if (sh.h100_only) pb.gpu_models({"H100-80GB"});
      pb.add();
    }
    r->start("default-scheduler", quick);
    return r;
  };
  auto fast = build(true);
  auto slow = build(false);
  RandomStream rng(37, "remembered-answers-releases");
  // Past the first fill, release pods (oldest first), now and then in bursts of 300 changes.
  const Tally t = expect_same_with_releases(*fast, *slow, 2400, [&](PodId p, std::size_t) {
    const std::size_t burst = p % 400 == 399 ? 300 : (rng.below(4) == 0 ? 1 : 0);
    return p > 600 ? burst : 0;
  });
  CHECK(t.placed > 1500);
  CHECK(t.failed > 20);
  CHECK(t.released > 500);
}

TEST_CASE("failures remembered from alike pods change no decision or message") {
  // A full cluster and a backlog of pods of a few shapes, retried in rounds as a congested run
  // retries them (memos outlive binds and releases: they are refreshed from the changed nodes):
  // every round tries each waiting pod in order, binds those that fit, carries out
  // any preemption (nomination, victims released and waiting again) and then releases the ten
  // longest-running pods. With the failure memo (fast) and with every node filtered every time
  // (slow), every outcome, message, victim and count must agree.
  struct Shape {
    std::int32_t gpus;
    const char* model;      // "" any
    bool tolerates;         // tolerates the dedicated taint
    std::int32_t priority;  // 100: may preempt the others
  };
  const Shape shapes[] = {{1, "", false, 0}, {2, "", false, 0},      {4, "", false, 0},
                          {8, "", false, 0}, {1, "H100", false, 0},  {2, "B200", true, 0},
                          {4, "", true, 0},  {8, "B200", false, 100}};
  auto build = [&](bool quick) {
    auto r = std::make_unique<Rig>();
    for (int i = 0; i < 60; ++i) {
      auto nb = r->tw.node("n" + std::to_string(i))
                    .cpu("64")
                    .memory("512Gi")
                    .gpus(8, i % 3 == 0 ? "H100" : "B200");
      if (i % 10 == 0) nb.taint("dedicated", "x", "NoSchedule");
      nb.add();
    }
    RandomStream rng(3, "memo-test");
    for (int i = 0; i < 400; ++i) {
      const Shape& s = shapes[rng.below(8)];
      auto pb = r->tw.pod("p" + std::to_string(i))
                    .cpu(std::to_string(4 * s.gpus))
                    .memory(std::to_string(32 * s.gpus) + "Gi")
                    .gpus(s.gpus)
                    .priority(s.priority);
      if (*s.model != '\0') pb.gpu_models({s.model});
      if (s.tolerates) pb.toleration("dedicated", "x", "NoSchedule");
      pb.add();
    }
    r->start("default-scheduler", quick);
    return r;
  };
  auto fast = build(true);
  auto slow = build(false);
  std::vector<PodId> waiting(400);
  for (PodId p = 0; p < 400; ++p)
    waiting[p] = p;
  std::deque<PodId> running;
  int placed = 0, failed = 0, preempted = 0;
  for (int round = 0; round < 40 && !waiting.empty(); ++round) {
    CAPTURE(round);
    std::vector<PodId> still;
    for (std::size_t k = 0; k < waiting.size(); ++k) {
      const PodId p = waiting[k];
      if (fast->cluster->pod(p).node != kNoNode) continue;  // bound meanwhile: not waiting
      auto a = fast->sched->schedule_one(p);
      auto b = slow->sched->schedule_one(p);
      REQUIRE(a.outcome == b.outcome);
      CHECK(a.placement.node == b.placement.node);
      CHECK(a.placement.holdings == b.placement.holdings);
      CHECK(a.message == b.message);
      CHECK(a.rejector_plugins == b.rejector_plugins);
      CHECK(a.unresolvable_everywhere == b.unresolvable_everywhere);
      CHECK(a.evaluated_nodes == b.evaluated_nodes);
      CHECK(a.feasible_nodes == b.feasible_nodes);
      REQUIRE(a.nominated_node == b.nominated_node);
      REQUIRE(a.victims == b.victims);
      CHECK(fast->sched->next_start_node_index() == slow->sched->next_start_node_index());
      if (a.outcome == fw::ScheduleResult::Outcome::kScheduled) {
        for (Rig* rig : {fast.get(), slow.get()}) {
          rig->cluster->bind(p, a.placement.node, a.placement.holdings);
          rig->sched->clear_nomination(p);
        }
        running.push_back(p);
        ++placed;
        continue;
      }
      ++failed;
      still.push_back(p);
      if (a.nominated_node != kNoNode) {
        ++preempted;
        for (Rig* rig : {fast.get(), slow.get()}) {
          rig->sched->nominate(p, a.nominated_node);
          for (PodId v : a.victims)
            rig->cluster->unbind(v);
        }
        for (PodId v : a.victims) {
          running.erase(std::find(running.begin(), running.end(), v));
          still.push_back(v);
        }
      }
    }
    waiting = std::move(still);
    for (int k = 0; k < 10 && !running.empty(); ++k) {
      fast->cluster->unbind(running.front());
      slow->cluster->unbind(running.front());
      running.pop_front();
    }
  }
  CHECK(placed > 150);  // both outcomes and preemption were covered
  CHECK(failed > 1000);
  CHECK(preempted > 0);
  // Most failures were answered from the memo; the reference path never uses it.
  CHECK(fast->sched->remembered_failures() > static_cast<std::uint64_t>(failed) / 2);
  CHECK(slow->sched->remembered_failures() == 0);
  // Some were memos made before a bind or release, brought up to date with the changed nodes.
  CHECK(fast->sched->refreshed_failures() > 0);
  CHECK(fast->sched->refreshed_failures() < fast->sched->remembered_failures());
}
