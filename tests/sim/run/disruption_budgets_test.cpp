// PodDisruptionBudgets as the Eviction API applies them (sim/run/disruption_budgets.hpp): the
// disruption controller's counts (expected, healthy, desired; percentages rounded up), the
// eviction verdicts for healthy, unhealthy and non-running pods, a pod under two budgets, and
// a cordoned node as NodeUnschedulable and the quick copy see it.
#include "sim/run/disruption_budgets.hpp"

#include <doctest/doctest.h>

#include "sim/cluster.hpp"
#include "tests/fixtures/builders.hpp"

using namespace capsim;
using capsim::testing::TestWorld;

namespace {

// `n` pods labelled app=<app> in namespace ml, all running.
std::vector<PodId> replicas(TestWorld& tw, const std::string& app, int n) {
  std::vector<PodId> out;
  for (int i = 0; i < n; ++i)
    out.push_back(tw.pod(app + "-" + std::to_string(i)).cpu("1").ns("ml").label("app", app).add());
  return out;
}

DisruptionBudgetSpec budget(TestWorld& tw, const std::string& app) {
  DisruptionBudgetSpec b;
  b.name = app;
  b.namespace_ = "ml";
  b.selector.present = true;
  b.selector.requirements.push_back(LabelRequirement{tw.sym("app"), LabelOp::kIn, {tw.sym(app)}});
  return b;
}

void set_phase(Cluster& c, const std::vector<PodId>& pods, PodPhase ph) {
  for (PodId p : pods)
    c.pod(p).phase = ph;
}

}  // namespace

TEST_CASE("maxUnavailable 1 over 6 running replicas allows one disruption, then none") {
  TestWorld tw;
  const std::vector<PodId> pods = replicas(tw, "serving", 6);
  DisruptionBudgetSpec b = budget(tw, "serving");
  b.max_unavailable = IntOrPercent{1, false};
  tw.world().disruption_budgets.push_back(b);
  Cluster c(tw.world());
  set_phase(c, pods, PodPhase::kRunning);
  DisruptionBudgets budgets(tw.world());

  const auto counts = budgets.counts(c, 0);
  CHECK(counts.expected == 6);
  CHECK(counts.healthy == 6);
  CHECK(counts.desired == 5);
  CHECK(counts.allowed() == 1);
  CHECK(budgets.may_evict(c, pods[0]).allowed);
  // The evicted pod terminates: it is no longer healthy, and the next eviction is refused.
  c.pod(pods[0]).phase = PodPhase::kTerminating;
  const EvictionVerdict refused = budgets.may_evict(c, pods[1]);
  CHECK_FALSE(refused.allowed);
  CHECK(refused.reason.find("disruption budget ml/serving") != std::string::npos);
  CHECK(refused.reason.find("5 healthy, 5 needed") != std::string::npos);
  // The terminating pod itself may always be evicted again (it is not running).
  CHECK(budgets.may_evict(c, pods[0]).allowed);
  // Its replacement runs: one disruption is allowed again.
  c.pod(pods[0]).phase = PodPhase::kRunning;
  CHECK(budgets.may_evict(c, pods[1]).allowed);
}

TEST_CASE("percentages are rounded up for minAvailable and maxUnavailable alike") {
  // The disruption controller calls GetScaledValueFromIntOrPercent(..., roundUp=true) for both.
  TestWorld tw;
  const std::vector<PodId> pods = replicas(tw, "web", 5);
  DisruptionBudgetSpec min = budget(tw, "web");
  min.min_available = IntOrPercent{50, true};  // ceil(2.5) = 3 must stay
  tw.world().disruption_budgets.push_back(min);
  DisruptionBudgetSpec max = budget(tw, "web");
  max.name = "web-max";
  max.max_unavailable = IntOrPercent{30, true};  // ceil(1.5) = 2 may go: 3 must stay
  tw.world().disruption_budgets.push_back(max);
  Cluster c(tw.world());
  set_phase(c, pods, PodPhase::kRunning);
  DisruptionBudgets budgets(tw.world());
  CHECK(budgets.counts(c, 0).desired == 3);
  CHECK(budgets.counts(c, 1).desired == 3);
  CHECK(budgets.counts(c, 0).allowed() == 2);
  // Two budgets cover these pods: the API server refuses to evict any of them.
  const EvictionVerdict v = budgets.may_evict(c, pods[0]);
  CHECK_FALSE(v.allowed);
  CHECK(v.reason.find("more than one PodDisruptionBudget") != std::string::npos);
}

TEST_CASE("pods not arrived or ended are not expected; pending pods may always be evicted") {
  TestWorld tw;
  const std::vector<PodId> pods = replicas(tw, "api", 4);
  DisruptionBudgetSpec b = budget(tw, "api");
  b.min_available = IntOrPercent{2, false};
  tw.world().disruption_budgets.push_back(b);
  Cluster c(tw.world());
  c.pod(pods[0]).phase = PodPhase::kRunning;
  c.pod(pods[1]).phase = PodPhase::kRunning;
  c.pod(pods[2]).phase = PodPhase::kPending;
  c.pod(pods[3]).phase = PodPhase::kSucceeded;
  DisruptionBudgets budgets(tw.world());
  const auto counts = budgets.counts(c, 0);
  CHECK(counts.expected == 3);
  CHECK(counts.healthy == 2);
  CHECK(counts.allowed() == 0);
  CHECK_FALSE(budgets.may_evict(c, pods[0]).allowed);
  CHECK(budgets.may_evict(c, pods[2]).allowed);  // not running: a plain delete
}

TEST_CASE("an unready pod is evictable under AlwaysAllow, or under IfHealthyBudget when healthy") {
  TestWorld tw;
  const std::vector<PodId> pods = replicas(tw, "db", 3);
  DisruptionBudgetSpec b = budget(tw, "db");
  b.min_available = IntOrPercent{3, false};
  tw.world().disruption_budgets.push_back(b);
  Cluster c(tw.world());
  set_phase(c, pods, PodPhase::kRunning);
  c.pod(pods[2]).phase = PodPhase::kCrashBackoff;  // running, not ready
  DisruptionBudgets budgets(tw.world());
  // 2 healthy of 3 desired: the budget is not healthy, so IfHealthyBudget keeps the unready pod.
  CHECK_FALSE(budgets.may_evict(c, pods[2]).allowed);
  tw.world().disruption_budgets[0].unhealthy = UnhealthyPodEvictionPolicy::kAlwaysAllow;
  CHECK(budgets.may_evict(c, pods[2]).allowed);
  // With minAvailable 2 the budget is healthy, and IfHealthyBudget lets the unready pod go too,
  // while a healthy one still may not (2 - 2 = 0 disruptions allowed).
  tw.world().disruption_budgets[0].unhealthy = UnhealthyPodEvictionPolicy::kIfHealthyBudget;
  tw.world().disruption_budgets[0].min_available = IntOrPercent{2, false};
  CHECK(budgets.may_evict(c, pods[2]).allowed);
  CHECK_FALSE(budgets.may_evict(c, pods[0]).allowed);
}

TEST_CASE("a budget covers its namespace only, and `{}` covers every pod there") {
  TestWorld tw;
  const PodId other = tw.pod("other").cpu("1").ns("default").label("app", "x").add();
  const PodId mine = tw.pod("mine").cpu("1").ns("ml").add();
  DisruptionBudgetSpec b;
  b.name = "all";
  b.namespace_ = "ml";
  b.selector.present = true;  // {}
  b.min_available = IntOrPercent{1, false};
  tw.world().disruption_budgets.push_back(b);
  Cluster c(tw.world());
  c.pod(other).phase = PodPhase::kRunning;
  c.pod(mine).phase = PodPhase::kRunning;
  DisruptionBudgets budgets(tw.world());
  CHECK(budgets.counts(c, 0).expected == 1);
  CHECK(budgets.may_evict(c, other).allowed);
  CHECK_FALSE(budgets.may_evict(c, mine).allowed);
}

TEST_CASE("a cordoned node is unschedulable to the quick copy and keeps its pods") {
  TestWorld tw;
  const NodeId node = tw.node("n").cpu("32").memory("256Gi").gpus(8).add();
  Cluster c(tw.world());
  c.set_cordoned(node, true);
  CHECK(c.node(node).spec->unschedulable);
  CHECK(c.quick()[node].unschedulable);
  CHECK_FALSE(tw.world().nodes[node].unschedulable);  // the scenario's node is unchanged
  // Down while cordoned: both hold; up again, still cordoned; uncordoned, the World's spec.
  c.set_node_down(node, true);
  CHECK(c.node(node).spec->unschedulable);
  CHECK(c.node(node).spec->taints.size() == 1);
  c.set_node_down(node, false);
  CHECK(c.node(node).spec->unschedulable);
  CHECK(c.node(node).spec->taints.empty());
  c.set_cordoned(node, false);
  CHECK(c.node(node).spec == &tw.world().nodes[node]);
  CHECK_FALSE(c.quick()[node].unschedulable);
  c.check_invariants();
}

TEST_CASE("evicting several pods at once needs as many allowed disruptions in each budget") {
  // maxUnavailable 2 over 5 running replicas: 2 may go together, not 3; pods of no budget and
  // pods that are not running never count.
  TestWorld tw;
  const std::vector<PodId> pods = replicas(tw, "train", 5);
  const PodId loose = tw.pod("loose").cpu("1").ns("ml").add();
  DisruptionBudgetSpec b = budget(tw, "train");
  b.max_unavailable = IntOrPercent{2, false};
  tw.world().disruption_budgets.push_back(b);
  Cluster c(tw.world());
  set_phase(c, pods, PodPhase::kRunning);
  c.pod(loose).phase = PodPhase::kRunning;
  DisruptionBudgets budgets(tw.world());
  CHECK(budgets.covered(pods[0]));
  CHECK_FALSE(budgets.covered(loose));
  const std::vector<PodId> two{pods[0], pods[1], loose};
  CHECK(budgets.may_evict_all(c, two).allowed);
  const std::vector<PodId> three{pods[0], pods[1], pods[2]};
  const EvictionVerdict refused = budgets.may_evict_all(c, three);
  CHECK_FALSE(refused.allowed);
  CHECK(refused.reason.find("Cannot evict 3 pod(s)") != std::string::npos);
  CHECK(refused.reason.find("ml/train (5 healthy, 3 needed, 5 expected)") != std::string::npos);
  // One of the three already terminating: the other two are within the budget... of 4 healthy,
  // 3 needed, 1 allowed: still refused for two.
  c.pod(pods[2]).phase = PodPhase::kTerminating;
  CHECK_FALSE(budgets.may_evict_all(c, three).allowed);
  const std::vector<PodId> one{pods[0], pods[2]};
  CHECK(budgets.may_evict_all(c, one).allowed);
}
