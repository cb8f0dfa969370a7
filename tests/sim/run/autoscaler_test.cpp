// Autoscaled node groups at the unit level: an absent node offers nothing and counts in no total,
// its template is the node as it would be Ready, the ledger bills a node only while it exists
// (node-hours included), and the Autoscaler's scale-up simulates pods on the template with the
// profile's Filter plugins, binpacks them, respects max and picks by the expander; scale-down
// removes nodes empty for the unneeded time, never below min, and drains a node below the
// utilisation threshold whose pods can be evicted and fit elsewhere (not within the delay after
// a scale-up, not against a PodDisruptionBudget); consolidation deletes or replaces by price.
#include "sim/run/autoscaler.hpp"

#include <doctest/doctest.h>

#include "fixtures/builders.hpp"
#include "models/plugin_registry.hpp"
#include "sim/check.hpp"
#include "sim/cost_ledger.hpp"
#include "tests/fixtures/bind.hpp"

using namespace capsim;
using capsim::testing::TestWorld;

namespace {

// A fixed node "fixed" (4 GPUs) and autoscaled pools of 8-GPU nodes.
struct Rig {
  TestWorld tw;
  fw::ReasonTable reasons;
  std::unique_ptr<PluginContext> ctx;
  std::unique_ptr<fw::Framework> fw;
  std::unique_ptr<Cluster> cluster;

  NodeId fixed = kNoNode;
  void add_group(const std::string& pool, std::int32_t min, std::int32_t max, std::int32_t initial,
                 std::int32_t priority = 0, bool label = false) {
    PoolAutoscaling a;
    a.pool = pool;
    a.min = min;
    a.max = max;
    a.initial = initial;
    a.priority = priority;
    a.unneeded_time = 10 * kMinute;
    for (std::int32_t i = 0; i < max; ++i) {
      auto b = tw.node(pool + "-" + std::to_string(i)).cpu("64").memory("512Gi").gpus(8).pool(pool);
      if (label) b.label("kind", pool);
      a.nodes.push_back(b.add());
    }
    tw.world().autoscaler.enabled = true;
    tw.world().autoscaler.pools.push_back(a);
  }
  void start() {
    ctx = std::make_unique<PluginContext>(PluginContext{tw.world(), reasons, 1});
    fw = std::make_unique<fw::Framework>(build_builtin_profile("default-scheduler", *ctx).config);
    cluster = std::make_unique<Cluster>(tw.world());
  }
  PodId pending(const std::string& name, std::int32_t gpus) {
    const PodId p = tw.pod(name).cpu("4").memory("16Gi").gpus(gpus).add();
    return p;
  }
};

}  // namespace

TEST_CASE("an absent node offers nothing, counts in no total, and its template is the Ready node") {
  Rig r;
  r.fixed = r.tw.node("fixed").cpu("32").memory("256Gi").gpus(4).add();
  r.add_group("g", 0, 2, 0);
  r.start();
  Cluster& c = *r.cluster;
  const NodeId g0 = r.tw.world().autoscaler.pools[0].nodes[0];
  const NodeInfo& n = c.node(g0);
  CHECK(n.absent);
  CHECK(n.allocatable[kNvidiaGpu] == 0);
  CHECK(n.allocatable[kCpu] == 0);
  CHECK(n.units.empty());
  CHECK(n.spec->unschedulable);
  CHECK(c.quick()[g0].pods == 0);  // the quick copy rejects it for every pod
  CHECK(c.totals().gpus_total == doctest::Approx(4));
  const double fixed_price = c.node(r.fixed).spec->price_per_hour;
  CHECK(c.totals().cost_per_hour == doctest::Approx(fixed_price));
  c.check_invariants();

  const NodeInfo t = c.template_node(g0);
  CHECK_FALSE(t.absent);
  CHECK(t.id == g0);
  CHECK(t.allocatable[kNvidiaGpu] == 8);
  CHECK(t.free_whole_gpus == 8);
  CHECK_FALSE(t.spec->unschedulable);

  c.set_absent(g0, false);
  CHECK(n.allocatable[kNvidiaGpu] == 8);
  CHECK(c.totals().gpus_total == doctest::Approx(12));
  CHECK(c.totals().cost_per_hour == doctest::Approx(fixed_price + n.spec->price_per_hour));
  c.check_invariants();
  c.set_absent(g0, true);
  CHECK(c.totals().gpus_total == doctest::Approx(4));
  c.check_invariants();
  CHECK_THROWS_AS(c.set_absent(g0, true), InvariantError);  // a change that changes nothing
}

TEST_CASE("the ledger bills an autoscaled node only while it exists, node-hours included") {
  Rig r;
  r.fixed = r.tw.node("fixed").cpu("32").memory("256Gi").gpus(4).pool("f").add();
  r.add_group("g", 0, 2, 0);
  r.start();
  Cluster& c = *r.cluster;
  const NodeId g0 = r.tw.world().autoscaler.pools[0].nodes[0];
  const double fixed_price = c.node(r.fixed).spec->price_per_hour;
  const double g_price = c.node(g0).spec->price_per_hour;
  REQUIRE(g_price > 0);
  CostLedger l(c, EnergyPricing{});
  CHECK_FALSE(l.billed(g0));
  CHECK(l.billed(r.fixed));
  CHECK(l.cost_per_hour() == doctest::Approx(fixed_price));
  l.advance(kHour);
  l.set_billed(g0, true);  // requested at 1 h: billed while it provisions
  l.check_rates();
  l.advance(3 * kHour);
  CHECK(l.totals().hardware == doctest::Approx(3 * fixed_price + 2 * g_price));
  c.set_absent(g0, false);
  l.node_changed(g0);
  l.advance(4 * kHour);
  c.set_absent(g0, true);
  l.set_billed(g0, false);  // removed at 4 h
  l.advance(6 * kHour);
  l.check_rates();
  CHECK(l.totals().hardware == doctest::Approx(6 * fixed_price + 3 * g_price));
  const auto hours = l.pool_node_hours();
  const auto& pools = l.pools();
  REQUIRE(pools.size() == 2);
  for (std::size_t p = 0; p < pools.size(); ++p) {
    CHECK(hours[p] == doctest::Approx(pools[p] == "f" ? 6.0 : 3.0));
  }
  CHECK_THROWS_AS(l.set_billed(g0, false), InvariantError);
}

TEST_CASE("scale-up binpacks the pending pods on the template and stops at max") {
  Rig r;
  r.add_group("g", 0, 3, 0);
  std::vector<PodId> pods;
  for (int i = 0; i < 5; ++i)
    pods.push_back(r.pending("p" + std::to_string(i), 4));  // two per 8-GPU node
  r.start();
  Autoscaler a(*r.cluster, *r.fw, 1);
  auto o = a.plan_scale_up(pods);
  REQUIRE(o.has_value());
  CHECK(o->nodes == 3);  // five 4-GPU pods need three nodes
  CHECK(o->pods.size() == 5);
  const std::vector<NodeId> nodes = a.provision(o->group, o->nodes);
  CHECK(nodes.size() == 3);
  CHECK(a.size(0) == 3);
  // The provisioning nodes will take them: no further scale-up.
  CHECK_FALSE(a.plan_scale_up(pods).has_value());

  // Nine pods on a group of max 3: the estimate stops at the room left.
  Rig r2;
  r2.add_group("g", 0, 3, 1);
  std::vector<PodId> many;
  for (int i = 0; i < 9; ++i)
    many.push_back(r2.pending("q" + std::to_string(i), 8));
  r2.start();
  Autoscaler a2(*r2.cluster, *r2.fw, 1);
  auto o2 = a2.plan_scale_up(many);
  REQUIRE(o2.has_value());
  CHECK(o2->nodes == 2);
  CHECK(o2->pods.size() == 2);
}

TEST_CASE("scale-up only considers groups whose template passes the pod's filters") {
  Rig r;
  r.add_group("big", 0, 2, 0, /*priority=*/10, /*label=*/true);
  r.add_group("small", 0, 2, 0, /*priority=*/1, /*label=*/true);
  r.tw.world().autoscaler.expander = Expander::kPriority;
  const PodId p = r.tw.pod("sel").cpu("1").memory("1Gi").gpus(1).selector("kind", "small").add();
  const PodId huge = r.tw.pod("huge").cpu("1").memory("1Gi").gpus(16).add();  // fits no node
  r.start();
  Autoscaler a(*r.cluster, *r.fw, 1);
  auto o = a.plan_scale_up(std::vector<PodId>{p, huge});
  REQUIRE(o.has_value());
  CHECK(a.group(o->group).pool == "small");  // the node selector rules out the priority pick
  const std::vector<PodId> only{p};
  CHECK(o->pods == only);
  CHECK_FALSE(a.plan_scale_up(std::vector<PodId>{huge}).has_value());
}

TEST_CASE("the priority expander prefers the higher priority; least-waste the tighter fit") {
  {
    Rig r;
    r.add_group("low", 0, 2, 0, 1);
    r.add_group("high", 0, 2, 0, 5);
    r.tw.world().autoscaler.expander = Expander::kPriority;
    const PodId p = r.pending("p", 1);
    r.start();
    Autoscaler a(*r.cluster, *r.fw, 1);
    auto o = a.plan_scale_up(std::vector<PodId>{p});
    REQUIRE(o.has_value());
    CHECK(a.group(o->group).pool == "high");
  }
  {
    // A 4-GPU group and an 8-GPU group: a 4-GPU pod wastes nothing on the first.
    Rig r;
    PoolAutoscaling big;
    big.pool = "eight";
    big.max = 1;
    big.nodes.push_back(r.tw.node("eight-0").cpu("64").memory("512Gi").gpus(8).pool("eight").add());
    PoolAutoscaling small;
    small.pool = "four";
    small.max = 1;
    small.nodes.push_back(r.tw.node("four-0").cpu("32").memory("256Gi").gpus(4).pool("four").add());
    r.tw.world().autoscaler.enabled = true;
    r.tw.world().autoscaler.pools = {big, small};
    const PodId p = r.pending("p", 4);
    r.start();
    Autoscaler a(*r.cluster, *r.fw, 1);
    auto o = a.plan_scale_up(std::vector<PodId>{p});
    REQUIRE(o.has_value());
    CHECK(a.group(o->group).pool == "four");
  }
}

TEST_CASE("scale-down removes nodes empty for the unneeded time, never below min") {
  Rig r;
  r.add_group("g", 1, 3, 3);
  r.start();
  Autoscaler a(*r.cluster, *r.fw, 1);
  DisruptionBudgets budgets(r.tw.world());
  CHECK(a.size(0) == 3);
  CHECK(a.plan_scale_down(0, budgets).removed.empty());  // empty from now on
  CHECK(a.plan_scale_down(9 * kMinute, budgets).removed.empty());
  const std::vector<NodeId> gone = a.plan_scale_down(10 * kMinute, budgets).removed;
  CHECK(gone.size() == 2);  // the third stays: min 1
  CHECK(a.size(0) == 1);
  CHECK_FALSE(a.can_shrink());
}

TEST_CASE("a node holding only DaemonSet pods is unneeded; one with a workload pod is not") {
  Rig r;
  r.add_group("g", 1, 3, 3);
  const PodId ds = r.tw.pod("dcgm-exporter").cpu("100m").memory("128Mi").add();
  r.tw.world().pods[ds].controller_kind = "DaemonSet";
  const PodId work = r.tw.pod("work").cpu("1").memory("1Gi").add();
  r.start();
  const auto& nodes = r.tw.world().autoscaler.pools[0].nodes;
  capsim::testing::bind_units(*r.cluster, ds, nodes[0], {});
  r.cluster->pod(ds).phase = PodPhase::kRunning;
  capsim::testing::bind_units(*r.cluster, work, nodes[1], {});
  r.cluster->pod(work).phase = PodPhase::kRunning;
  Autoscaler a(*r.cluster, *r.fw, 1);
  DisruptionBudgets budgets(r.tw.world());
  CHECK(a.plan_scale_down(0, budgets).removed.empty());
  const Autoscaler::ScaleDown d = a.plan_scale_down(10 * kMinute, budgets);
  const std::vector<NodeId> expected{nodes[0], nodes[2]};
  CHECK(d.removed == expected);
  // The workload pod's node is below the GPU threshold (0 of 8 GPUs), but the only other node
  // left is leaving: its pod has nowhere to go, so it is not drained.
  CHECK(d.drain == kNoNode);
  CHECK(a.size(0) == 1);
}

namespace {

// Binds `pod` to `node` on its first `gpus` GPUs (units 0..gpus-1), running.
void run_on(Rig& r, PodId pod, NodeId node, std::uint16_t first_gpu = 0) {
  std::vector<std::uint16_t> units;
  for (std::int32_t g = 0; g < r.tw.world().pods[pod].gpu_count; ++g)
    units.push_back(static_cast<std::uint16_t>(first_gpu + g));
  capsim::testing::bind_units(*r.cluster, pod, node, units);
  r.cluster->pod(pod).phase = PodPhase::kRunning;
}

}  // namespace

TEST_CASE(
    "a node below the GPU threshold whose pods fit elsewhere is drained after the unneeded "
    "time") {
  // Three 8-GPU nodes: n0 runs a 1-GPU pod (utilisation 1/8 = 0.125 < 0.5), n1 a 6-GPU pod
  // (0.75: needed), n2 nothing. The 1-GPU pod fits n1's 2 free GPUs.
  Rig r;
  r.add_group("g", 0, 3, 3);
  const PodId small = r.pending("small", 1);
  const PodId big = r.pending("big", 6);
  r.start();
  const auto& nodes = r.tw.world().autoscaler.pools[0].nodes;
  run_on(r, small, nodes[0]);
  run_on(r, big, nodes[1]);
  CHECK(Autoscaler::utilization(r.cluster->node(nodes[0])) == doctest::Approx(0.125));
  CHECK(Autoscaler::utilization(r.cluster->node(nodes[1])) == doctest::Approx(0.75));
  Autoscaler a(*r.cluster, *r.fw, 1);
  DisruptionBudgets budgets(r.tw.world());
  const Autoscaler::ScaleDown first = a.plan_scale_down(0, budgets);
  CHECK(first.removed.empty());
  CHECK(first.drain == kNoNode);
  CHECK(a.plan_scale_down(9 * kMinute, budgets).drain == kNoNode);
  const Autoscaler::ScaleDown d = a.plan_scale_down(10 * kMinute, budgets);
  CHECK(d.removed == std::vector<NodeId>{nodes[2]});  // the empty one goes as before
  CHECK(d.drain == nodes[0]);
  CHECK(d.drain_why.find("utilisation 0.125 below 0.5") != std::string::npos);
  CHECK(a.state(nodes[0]) == Autoscaler::State::kDraining);
  CHECK(a.size(0) == 1);  // n1 alone stays Ready
  // One drain at a time: a second scan starts none while n0 drains.
  CHECK(a.plan_scale_down(10 * kMinute + 10 * kSecond, budgets).drain == kNoNode);
  a.drained(nodes[0]);
  CHECK(a.state(nodes[0]) == Autoscaler::State::kAbsent);
}

TEST_CASE("a node whose pods fit nowhere else, or at the threshold, is not drained") {
  struct Row {
    const char* name;
    std::int32_t other_gpus;  // the 8-GPU node n1's pod
    std::int32_t pod_gpus;    // n0's pod
    bool drained;
  };
  const Row rows[] = {
      {"fits beside the 6-GPU pod", 6, 2, true},
      {"does not fit beside the 7-GPU pod", 7, 2, false},
      {"n0 at 4 of 8 GPUs is at the threshold, not below it", 2, 4, false},
  };
  for (const Row& row : rows) {
    CAPTURE(row.name);
    Rig r;
    r.add_group("g", 0, 2, 2);
    const PodId mine = r.pending("mine", row.pod_gpus);
    const PodId other = r.pending("other", row.other_gpus);
    r.start();
    const auto& nodes = r.tw.world().autoscaler.pools[0].nodes;
    run_on(r, mine, nodes[0]);
    run_on(r, other, nodes[1]);
    Autoscaler a(*r.cluster, *r.fw, 1);
    DisruptionBudgets budgets(r.tw.world());
    (void)a.plan_scale_down(0, budgets);
    CHECK((a.plan_scale_down(10 * kMinute, budgets).drain == nodes[0]) == row.drained);
  }
}

TEST_CASE("pods the FAQ says prevent removal keep their node; a controller's pod does not") {
  struct Row {
    const char* kind;
    const char* reason;  // nullptr: movable
  };
  const Row rows[] = {
      {"controller", nullptr},
      {"bare", "a pod no controller recreates"},
      {"gang", "a gang member"},
      {"kube-system", "a kube-system pod without a PodDisruptionBudget"},
      {"nodeName", "spec.nodeName"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.kind);
    Rig r;
    r.add_group("g", 0, 2, 2);
    auto b = r.tw.pod("mine").cpu("1").memory("1Gi").gpus(1);
    const std::string kind = row.kind;
    if (kind == "bare") b.bare();
    if (kind == "kube-system") b.ns("kube-system");
    if (kind == "gang") {
      GangSpec g;
      g.name = "gang";
      r.tw.world().gangs.push_back(g);
      b.gang(0);
    }
    const PodId mine = b.add();
    if (kind == "nodeName") r.tw.world().pods[mine].node_name = "g-0";
    const PodId other = r.pending("other", 4);
    r.start();
    const auto& nodes = r.tw.world().autoscaler.pools[0].nodes;
    run_on(r, mine, nodes[0]);
    run_on(r, other, nodes[1]);
    Autoscaler a(*r.cluster, *r.fw, 1);
    DisruptionBudgets budgets(r.tw.world());
    const char* why = a.unmovable(mine, budgets);
    if (row.reason == nullptr) {
      CHECK(why == nullptr);
    } else {
      REQUIRE(why != nullptr);
      CHECK(std::string(why).find(row.reason) != std::string::npos);
    }
    (void)a.plan_scale_down(0, budgets);
    CHECK((a.plan_scale_down(10 * kMinute, budgets).drain == nodes[0]) == (row.reason == nullptr));
  }
}

TEST_CASE("no scale-down within scale_down_delay_after_add of a scale-up") {
  Rig r;
  r.add_group("g", 0, 2, 2);
  const PodId mine = r.pending("mine", 1);
  const PodId other = r.pending("other", 4);
  r.start();
  const auto& nodes = r.tw.world().autoscaler.pools[0].nodes;
  run_on(r, mine, nodes[0]);
  run_on(r, other, nodes[1]);
  Autoscaler a(*r.cluster, *r.fw, 1);
  DisruptionBudgets budgets(r.tw.world());
  a.note_scale_up(5 * kMinute);  // the default delay: 10 min, so nothing before 15 min
  (void)a.plan_scale_down(0, budgets);
  CHECK(a.plan_scale_down(10 * kMinute, budgets).drain == kNoNode);
  CHECK(a.plan_scale_down(14 * kMinute + 50 * kSecond, budgets).drain == kNoNode);
  // The unneeded time ran on meanwhile (since 0): the node goes as soon as the delay is over.
  CHECK(a.plan_scale_down(15 * kMinute, budgets).drain == nodes[0]);
}

TEST_CASE("a PodDisruptionBudget that allows no eviction blocks the drain, retried after 5 min") {
  Rig r;
  r.add_group("g", 0, 2, 2);
  const PodId mine =
      r.tw.pod("mine").cpu("1").memory("1Gi").gpus(1).ns("ml").label("app", "x").add();
  const PodId other = r.pending("other", 4);
  DisruptionBudgetSpec pdb;
  pdb.name = "x";
  pdb.namespace_ = "ml";
  pdb.selector.present = true;
  pdb.selector.requirements.push_back(
      LabelRequirement{r.tw.sym("app"), LabelOp::kIn, {r.tw.sym("x")}});
  pdb.min_available = IntOrPercent{1, false};  // one running replica: no disruption allowed
  r.tw.world().disruption_budgets.push_back(pdb);
  r.start();
  const auto& nodes = r.tw.world().autoscaler.pools[0].nodes;
  run_on(r, mine, nodes[0]);
  run_on(r, other, nodes[1]);
  Autoscaler a(*r.cluster, *r.fw, 1);
  DisruptionBudgets budgets(r.tw.world());
  (void)a.plan_scale_down(0, budgets);
  const Autoscaler::ScaleDown d = a.plan_scale_down(10 * kMinute, budgets);
  CHECK(d.drain == kNoNode);
  REQUIRE(d.blocked.size() == 1);
  CHECK(d.blocked[0].first == nodes[0]);
  CHECK(d.blocked[0].second.find("disruption budget ml/x (1 healthy, 1 needed") !=
        std::string::npos);
  CHECK(a.state(nodes[0]) == Autoscaler::State::kReady);
  CHECK(a.plan_scale_down(14 * kMinute, budgets).blocked.empty());  // not asked again yet
  CHECK(a.plan_scale_down(15 * kMinute, budgets).blocked.size() == 1);
}

TEST_CASE("consolidation deletes the node with the fewest pods, or replaces it by a cheaper one") {
  ScaleDownConfig down;
  down.consolidation.enabled = true;
  // "eight": 8-GPU nodes at 8 x 2 = 16 per hour; "four": 4-GPU nodes at 8 per hour.
  auto rig = [](Rig& r, std::int32_t eight) {
    PoolAutoscaling big;
    big.pool = "eight";
    big.max = 2;
    big.initial = eight;
    for (int i = 0; i < 2; ++i)
      big.nodes.push_back(r.tw.node("eight-" + std::to_string(i))
                              .cpu("64")
                              .memory("512Gi")
                              .gpus(8)
                              .pool("eight")
                              .add());
    PoolAutoscaling small;
    small.pool = "four";
    small.max = 1;
    small.nodes.push_back(r.tw.node("four-0").cpu("64").memory("512Gi").gpus(4).pool("four").add());
    r.tw.world().autoscaler.enabled = true;
    r.tw.world().autoscaler.pools = {big, small};
  };
  {
    // Deletion: eight-0 runs two 1-GPU pods, eight-1 one 2-GPU pod: eight-1 has fewer pods,
    // and its pod fits eight-0's 6 free GPUs.
    Rig r;
    rig(r, 2);
    const PodId a1 = r.pending("a1", 1);
    const PodId a2 = r.pending("a2", 1);
    const PodId b = r.pending("b", 2);
    r.start();
    const auto& nodes = r.tw.world().autoscaler.pools[0].nodes;
    run_on(r, a1, nodes[0], 0);
    run_on(r, a2, nodes[0], 1);
    run_on(r, b, nodes[1]);
    Autoscaler a(*r.cluster, *r.fw, 1, down);
    DisruptionBudgets budgets(r.tw.world());
    const Autoscaler::ScaleDown d = a.plan_scale_down(0, budgets);  // consolidate_after 0
    CHECK(d.drain == nodes[1]);
    CHECK(d.replace_old == kNoNode);
    CHECK(d.drain_why.find("its 1 pod(s) fit on the other nodes") != std::string::npos);
  }
  {
    // Replacement: eight-0 alone runs a 3-GPU pod; no other node, but one "four" node at half
    // the price takes it.
    Rig r;
    rig(r, 1);
    const PodId p = r.pending("p", 3);
    r.start();
    const auto& nodes = r.tw.world().autoscaler.pools[0].nodes;
    run_on(r, p, nodes[0]);
    REQUIRE(r.cluster->node(nodes[0]).spec->price_per_hour == doctest::Approx(16));
    {
      Autoscaler a(*r.cluster, *r.fw, 1, down);
      DisruptionBudgets budgets(r.tw.world());
      const Autoscaler::ScaleDown d = a.plan_scale_down(0, budgets);
      CHECK(d.drain == kNoNode);
      CHECK(d.replace_old == nodes[0]);
      CHECK(a.group(d.replace_group).pool == "four");
      CHECK(d.replace_why.find("8.00/h instead of 16.00/h") != std::string::npos);
      CHECK(a.state(nodes[0]) == Autoscaler::State::kDraining);
      CHECK(a.drain_started(nodes[0]) < 0);  // evictions wait for the replacement
    }
    // Without replace, or under when-empty, the node stays.
    down.consolidation.replace = false;
    {
      Autoscaler a(*r.cluster, *r.fw, 1, down);
      DisruptionBudgets budgets(r.tw.world());
      const Autoscaler::ScaleDown d = a.plan_scale_down(0, budgets);
      CHECK(d.drain == kNoNode);
      CHECK(d.replace_old == kNoNode);
    }
    down.consolidation.replace = true;
    down.consolidation.policy = ConsolidationPolicy::kWhenEmpty;
    {
      Autoscaler a(*r.cluster, *r.fw, 1, down);
      DisruptionBudgets budgets(r.tw.world());
      CHECK(a.plan_scale_down(0, budgets).replace_old == kNoNode);
    }
  }
}

TEST_CASE("consolidation waits consolidate_after since the node's pods last changed") {
  Rig r;
  r.add_group("g", 0, 2, 2);
  ScaleDownConfig down;
  down.consolidation.enabled = true;
  down.consolidation.consolidate_after = 5 * kMinute;
  const PodId mine = r.pending("mine", 1);
  const PodId other = r.pending("other", 1);
  r.start();
  const auto& nodes = r.tw.world().autoscaler.pools[0].nodes;
  run_on(r, mine, nodes[0]);
  Autoscaler a(*r.cluster, *r.fw, 1, down);
  DisruptionBudgets budgets(r.tw.world());
  // n1 is empty: removed once settled; n0 keeps its pod (nowhere else to go).
  CHECK(a.plan_scale_down(0, budgets).removed.empty());
  run_on(r, other, nodes[1]);  // a pod lands on n1 at 2 min: its clock starts again
  CHECK(a.plan_scale_down(2 * kMinute, budgets).drain == kNoNode);
  // At 5 min n0 is settled: its pod fits n1; n1 (changed at 2 min) is not a candidate yet.
  const Autoscaler::ScaleDown d = a.plan_scale_down(5 * kMinute, budgets);
  CHECK(d.drain == nodes[0]);
}
