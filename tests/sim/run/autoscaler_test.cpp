// Autoscaled node groups at the unit level: an absent node offers nothing and counts in no total,
// its template is the node as it would be Ready, the ledger bills a node only while it exists
// (node-hours included), and the Autoscaler's scale-up simulates pods on the template with the
// profile's Filter plugins, binpacks them, respects max and picks by the expander; scale-down
// removes only nodes empty for the unneeded time, never below min.
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
  CHECK(a.size(0) == 3);
  CHECK(a.plan_scale_down(0).empty());  // empty from now on
  CHECK(a.plan_scale_down(9 * kMinute).empty());
  const std::vector<NodeId> gone = a.plan_scale_down(10 * kMinute);
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
  CHECK(a.plan_scale_down(0).empty());
  const std::vector<NodeId> gone = a.plan_scale_down(10 * kMinute);
  const std::vector<NodeId> expected{nodes[0], nodes[2]};
  CHECK(gone == expected);
  CHECK(a.size(0) == 1);
}
