#include "sim/framework/evaluation.hpp"

#include <doctest/doctest.h>

#include "fixtures/evaluation_bench.hpp"
#include "sim/framework/scheduler.hpp"
#include "sim/random.hpp"

using namespace capsim;
using capsim::testing::EvaluationBench;

namespace {

constexpr const char* kDefault = "schedulerName: default-scheduler\n";

}  // namespace

TEST_CASE("every filter runs on every node and the first rejection is the one a cycle reports") {
  EvaluationBench b;
  b.tw.node("small").cpu("1").memory("1Gi").taint("k", "v", "NoSchedule").add();
  b.tw.node("tainted").cpu("8").memory("8Gi").taint("k", "v", "NoSchedule").add();
  b.tw.node("ok").cpu("8").memory("8Gi").add();
  const PodId p = b.tw.pod("p").cpu("2").memory("1Gi").add();
  b.start(kDefault);
  const fw::PodEvaluation ev = b.evaluate(p);
  REQUIRE(ev.nodes.size() == 3);
  // "small" fails two filters; both are listed, TaintToleration (earlier in the profile) first.
  const fw::NodeEvaluation& small = ev.nodes[0];
  CHECK_FALSE(small.feasible);
  CHECK(b.filter(ev, 0, "TaintToleration").code == fw::Code::kUnschedulableAndUnresolvable);
  // 2 cpu asked of a 1-cpu node: more than its allocatable, so unresolvable (as upstream).
  CHECK(b.filter(ev, 0, "NodeResourcesFit").code == fw::Code::kUnschedulableAndUnresolvable);
  CHECK(b.filter(ev, 0, "NodeResourcesFit").reason == "Insufficient cpu");
  REQUIRE(small.first_rejection >= 0);
  CHECK(b.plugin_name(small.filter[static_cast<std::size_t>(small.first_rejection)].plugin) ==
        "TaintToleration");
  CHECK(small.score.empty());
  CHECK_FALSE(ev.nodes[1].feasible);
  CHECK(b.filter(ev, 1, "NodeResourcesFit").code == fw::Code::kSuccess);
  CHECK(ev.nodes[2].feasible);
  CHECK(ev.selected == 2);
  // A single feasible node is still scored, as the scheduler would not bother to.
  CHECK_FALSE(ev.nodes[2].score.empty());
}

TEST_CASE("the evaluation picks the node a scheduling cycle binds, totals and ties included") {
  // Three nodes, two of them equal: the default profile's first-in-order tie-break, from the
  // scheduler's rotating start index.
  EvaluationBench b;
  b.tw.node("a").cpu("8").memory("16Gi").add();
  b.tw.node("b").cpu("16").memory("32Gi").add();
  b.tw.node("c").cpu("16").memory("32Gi").add();
  const PodId filler = b.tw.pod("filler").cpu("4").memory("4Gi").add();
  const PodId p = b.tw.pod("p").cpu("2").memory("2Gi").add();
  const PodId q = b.tw.pod("q").cpu("2").memory("2Gi").add();
  b.start(kDefault);
  b.place(filler, 0);
  fw::Scheduler sched(*b.framework, *b.cluster, b.reasons, RandomStream(1));
  std::size_t round = 0;
  for (PodId pod : {p, q}) {
    CAPTURE(pod);
    fw::EvaluationContext ctx{&sched.nominations(), sched.next_start_node_index()};
    const fw::PodEvaluation ev = b.evaluate(pod, ctx);
    const fw::ScheduleResult r = sched.schedule_one(pod);
    REQUIRE(r.outcome == fw::ScheduleResult::Outcome::kScheduled);
    CHECK(ev.selected == r.placement.node);
    // First b and c tie (the first in order wins); once p is on b, c wins alone.
    CHECK(ev.top.size() == (round == 0 ? 2U : 1U));
    // Totals are the weighted sums of the normalized scores.
    for (const fw::NodeEvaluation& ne : ev.nodes) {
      std::int64_t sum = 0;
      for (const fw::ScoreVerdict& v : ne.score)
        sum += v.skipped ? 0 : v.normalized * v.weight;
      CHECK(sum == ne.total);
    }
    b.cluster->bind(pod, r.placement.node, r.placement.holdings);
    ++round;
  }
  CHECK(b.cluster->pod(p).node == 1);
  CHECK(b.cluster->pod(q).node == 2);
}

TEST_CASE("pods nominated to a node count there for pods of lower or equal priority") {
  EvaluationBench b;
  b.tw.node("n").cpu("4").memory("8Gi").add();
  const PodId nominated = b.tw.pod("nominated").cpu("3").priority(100).add();
  const PodId low = b.tw.pod("low").cpu("2").priority(10).add();
  const PodId high = b.tw.pod("high").cpu("2").priority(1000).add();
  b.start(kDefault);
  const std::unordered_map<PodId, NodeId> nominations{{nominated, 0}};
  const fw::EvaluationContext ctx{&nominations, 0};
  const fw::PodEvaluation for_low = b.evaluate(low, ctx);
  CHECK_FALSE(for_low.nodes[0].feasible);
  CHECK(b.filter(for_low, 0, "NodeResourcesFit").reason == "Insufficient cpu");
  const fw::PodEvaluation for_high = b.evaluate(high, ctx);
  CHECK(for_high.nodes[0].feasible);
  // Without the nomination the low pod fits.
  CHECK(b.evaluate(low).nodes[0].feasible);
}

TEST_CASE("a PreFilter Skip shows as Skip at PreFilter and on the plugin's Filter on every node") {
  // NodeAffinity's PreFilter skips pods with neither nodeSelector nor required affinity; a pod
  // with a selector is filtered by it.
  EvaluationBench b;
  b.tw.node("a").cpu("4").memory("8Gi").label("zone", "a").add();
  b.tw.node("b").cpu("4").memory("8Gi").label("zone", "b").add();
  const PodId plain = b.tw.pod("plain").cpu("1").add();
  const PodId zoned = b.tw.pod("zoned").cpu("1").selector("zone", "b").add();
  b.start(kDefault);
  auto pre = [&](const fw::PodEvaluation& ev, std::string_view plugin) {
    for (const fw::PluginVerdict& v : ev.pre_filter) {
      if (b.plugin_name(v.plugin) == plugin) return v.code;
    }
    FAIL("no PreFilter verdict of " << plugin);
    return fw::Code::kError;
  };
  const fw::PodEvaluation p1 = b.evaluate(plain);
  CHECK(pre(p1, "NodeAffinity") == fw::Code::kSkip);
  CHECK(b.filter(p1, 0, "NodeAffinity").code == fw::Code::kSkip);
  CHECK(b.filter(p1, 1, "NodeAffinity").code == fw::Code::kSkip);
  CHECK(p1.nodes[0].feasible);
  const fw::PodEvaluation p2 = b.evaluate(zoned);
  CHECK(pre(p2, "NodeAffinity") == fw::Code::kSuccess);
  CHECK(b.filter(p2, 0, "NodeAffinity").code == fw::Code::kUnschedulableAndUnresolvable);
  CHECK(b.filter(p2, 1, "NodeAffinity").code == fw::Code::kSuccess);
  CHECK(p2.selected == 1);
}

TEST_CASE("disabled: [{name: \"*\"}] empties one extension point or, under multiPoint, all") {
  EvaluationBench b;
  b.tw.node("n").cpu("1").memory("1Gi").add();
  const PodId p = b.tw.pod("p").cpu("4").add();
  SUBCASE("at filter only: no filter runs, scoring stays") {
    b.start("schedulerName: t\nplugins:\n  filter:\n    disabled: [{name: \"*\"}]\n");
    CHECK(b.framework->config().filter.empty());
    CHECK_FALSE(b.framework->config().score.empty());
    CHECK_FALSE(b.framework->config().pre_filter.empty());
    const fw::PodEvaluation ev = b.evaluate(p);
    CHECK(ev.nodes[0].filter.empty());
    CHECK(ev.nodes[0].feasible);  // nothing checks that 4 cpu do not fit in 1
  }
  SUBCASE("under multiPoint: only what is enabled again") {
    b.start(
        "schedulerName: t\nplugins:\n  multiPoint:\n    disabled: [{name: \"*\"}]\n"
        "    enabled: [{name: PrioritySort}, {name: NodeResourcesFit}]\n");
    const fw::ProfileConfig& cfg = b.framework->config();
    REQUIRE(cfg.filter.size() == 1);
    CHECK(b.plugin_name(cfg.filter[0]) == "NodeResourcesFit");
    REQUIRE(cfg.score.size() == 1);
    CHECK(b.plugin_name(cfg.score[0].first) == "NodeResourcesFit");
    CHECK(cfg.post_filter.empty());
    CHECK(cfg.reserve.empty());
    const fw::PodEvaluation ev = b.evaluate(p);
    CHECK_FALSE(ev.nodes[0].feasible);
    CHECK(ev.nodes[0].filter.size() == 1);
  }
}

TEST_CASE("code names are upstream's") {
  CHECK(fw::code_name(fw::Code::kSuccess) == "Success");
  CHECK(fw::code_name(fw::Code::kSkip) == "Skip");
  CHECK(fw::code_name(fw::Code::kUnschedulable) == "Unschedulable");
  CHECK(fw::code_name(fw::Code::kUnschedulableAndUnresolvable) == "UnschedulableAndUnresolvable");
  CHECK(fw::code_name(fw::Code::kError) == "Error");
}
