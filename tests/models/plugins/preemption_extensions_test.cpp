// Preemption and nominated pods seen by PodTopologySpread and InterPodAffinity: upstream's
// PreFilterExtensions (AddPod / RemovePod) update the counts PreFilter made when DefaultPreemption
// removes victims from a node, and when the scheduler counts pods nominated to a node. The cases
// are kube-scheduler's own (pkg/scheduler/framework/plugins/defaultpreemption/
// default_preemption_test.go, TestDryRunPreemption), run through a whole scheduling cycle with the
// default profile and read back as an explained cycle (the PostFilter candidates `capsim explain`
// shows). Upstream's priorities: low 0, mid 100, high 1000.
#include <doctest/doctest.h>

#include <set>

#include "fixtures/evaluation_bench.hpp"
#include "sim/engine.hpp"
#include "sim/framework/cycle_recorder.hpp"
#include "sim/random.hpp"

using namespace capsim;
using capsim::testing::EvaluationBench;

namespace {

constexpr std::int32_t kLow = 0, kMid = 100, kHigh = 1000;

struct ExplainedCycles final : Recorder {
  std::vector<ExplainRecord> cycles;
  void begin_run(const RunInfo&, const World&) override {}
  void record_event(const EventRecord&) override {}
  void record_sample(const SampleRecord&) override {}
  void end_run(const RunInfo&, const std::vector<PodRecord>&, const Summary&) override {}
  void record_explain(const ExplainRecord& e) override { cycles.push_back(e); }
};

struct NoEvents final : EventHandler {
  void handle(const Event&, Engine&) override {}
};

// One scheduling cycle of `pod` under the default profile, explained.
struct Cycle {
  ExplainedCycles rec;
  NoEvents none;
  Engine clock{none};
  std::unique_ptr<fw::CycleRecorder> observer;
  std::unique_ptr<fw::Scheduler> sched;

  explicit Cycle(EvaluationBench& b) {
    observer = std::make_unique<fw::CycleRecorder>(rec, *b.framework, b.reasons,
                                                   std::vector<std::string>{"*"});
    sched = std::make_unique<fw::Scheduler>(*b.framework, *b.cluster, b.reasons, RandomStream(1));
    sched->set_observer(observer.get(), &clock);
  }
  const ExplainRecord& last() const {
    REQUIRE(!rec.cycles.empty());
    return rec.cycles.back();
  }
};

// An existing pod, running on `node` since time 0.
void run_on(EvaluationBench& b, PodId p, NodeId node) {
  b.place(p, node);
  b.cluster->pod(p).phase = PodPhase::kRunning;
  b.cluster->pod(p).start = 0;
}

LabelSelector exists(EvaluationBench& b, const std::string& key) {
  LabelSelector s;
  s.present = true;
  s.requirements.push_back({b.tw.sym(key), LabelOp::kExists, {}});
  return s;
}

PodSpec& spec(EvaluationBench& b, PodId p) {
  return b.tw.world().pods[p];
}

void spread(EvaluationBench& b, PodId p, const std::string& key) {
  TopologySpreadConstraint c;
  c.max_skew = 1;
  c.topology_key = b.tw.sym(key);
  c.when_unsatisfiable = WhenUnsatisfiable::kDoNotSchedule;
  c.selector = exists(b, "foo");
  spec(b, p).pod_rules.mut().spread.push_back(std::move(c));
}

// The candidates' nodes and victims, by name.
std::set<std::pair<std::string, std::vector<std::string>>> candidates(EvaluationBench& b,
                                                                      const ExplainRecord& e) {
  std::set<std::pair<std::string, std::vector<std::string>>> out;
  for (const auto& c : e.candidates) {
    std::vector<std::string> victims;
    for (PodId v : c.victims)
      victims.push_back(b.tw.world().pods[v].name);
    out.insert({b.tw.world().nodes[c.node].name, victims});
  }
  return out;
}

}  // namespace

TEST_CASE(
    "preemption removes the victim whose anti-affinity rejects the preemptor (upstream: pod "
    "with anti-affinity is preempted)") {
  EvaluationBench b;
  // Upstream's node2 is no candidate because none of its pods has a lower priority; here it is
  // also full (p2 takes all its cpu), or the preemptor would simply be scheduled there.
  b.tw.node("node1").cpu("4").memory("8Gi").label("hostname", "node1").add();
  b.tw.node("node2").cpu("4").memory("8Gi").label("hostname", "node2").add();
  const PodId p11 = b.tw.pod("p1.1").cpu("1").label("foo", "").priority(kLow).add();
  const PodId p12 = b.tw.pod("p1.2").cpu("1").priority(kMid).add();
  const PodId p13 = b.tw.pod("p1.3").cpu("1").priority(kHigh).add();
  const PodId p2 = b.tw.pod("p2").cpu("4").priority(kHigh).add();
  const PodId p = b.tw.pod("p").cpu("1").label("foo", "").priority(kHigh).add();
  PodAffinityTerm anti;
  anti.selector = exists(b, "foo");
  anti.topology_key = b.tw.sym("hostname");
  spec(b, p11).pod_rules.mut().anti_affinity.required.push_back(anti);
  b.start("schedulerName: default-scheduler\n");
  run_on(b, p11, 0);
  run_on(b, p12, 0);
  run_on(b, p13, 0);
  run_on(b, p2, 1);

  Cycle cycle(b);
  const fw::ScheduleResult r = cycle.sched->schedule_one(p);
  CAPTURE(r.message);
  REQUIRE(r.outcome == fw::ScheduleResult::Outcome::kUnschedulable);
  CHECK(r.nominated_node == 0);
  CHECK(r.victims == std::vector<PodId>{p11});
  using C = std::set<std::pair<std::string, std::vector<std::string>>>;
  CHECK(candidates(b, cycle.last()) == C{{"node1", {"p1.1"}}});
}

TEST_CASE(
    "preemption lowers a topology domain's count to make room under maxSkew (upstream: "
    "preemption to resolve pod topology spread filter failure)") {
  EvaluationBench b;
  for (const auto& [name, zone] :
       {std::pair{"node-a", "zone1"}, std::pair{"node-b", "zone1"}, std::pair{"node-x", "zone2"}}) {
    b.tw.node(name).cpu("100").memory("100Gi").label("zone", zone).label("hostname", name).add();
  }
  const PodId a1 = b.tw.pod("pod-a1").label("foo", "").priority(kMid).add();
  const PodId a2 = b.tw.pod("pod-a2").label("foo", "").priority(kLow).add();
  const PodId b1 = b.tw.pod("pod-b1").label("foo", "").priority(kLow).add();
  const PodId x1 = b.tw.pod("pod-x1").label("foo", "").priority(kHigh).add();
  const PodId x2 = b.tw.pod("pod-x2").label("foo", "").priority(kHigh).add();
  const PodId p = b.tw.pod("p").label("foo", "").priority(kHigh).add();
  spread(b, p, "zone");
  spread(b, p, "hostname");
  b.start("schedulerName: default-scheduler\n");
  run_on(b, a1, 0);
  run_on(b, a2, 0);
  run_on(b, b1, 1);
  run_on(b, x1, 2);
  run_on(b, x2, 2);

  // zone1 holds 3 matching pods, zone2 2; hosts 2, 1, 2: every node breaks a maxSkew of 1.
  Cycle cycle(b);
  const fw::ScheduleResult r = cycle.sched->schedule_one(p);
  CAPTURE(r.message);
  REQUIRE(r.outcome == fw::ScheduleResult::Outcome::kUnschedulable);
  // Removing pod-a2 (zone1 2, node-a 1) or pod-b1 (zone1 2, node-b 0) makes room; node-x's pods
  // outrank the preemptor.
  using C = std::set<std::pair<std::string, std::vector<std::string>>>;
  CHECK(candidates(b, cycle.last()) == C{{"node-a", {"pod-a2"}}, {"node-b", {"pod-b1"}}});
  REQUIRE(r.nominated_node != kNoNode);
  CHECK(r.victims == std::vector<PodId>{r.nominated_node == 0 ? a2 : b1});
}

TEST_CASE(
    "a pod nominated to a node counts in that node's topology domain for pods of no higher "
    "priority (upstream: addNominatedPods runs AddPod)") {
  EvaluationBench b;
  b.tw.node("node-a").cpu("100").memory("100Gi").label("zone", "zone1").add();
  b.tw.node("node-x").cpu("100").memory("100Gi").label("zone", "zone2").add();
  const PodId nominated = b.tw.pod("nominated").label("foo", "").priority(kHigh).add();
  const PodId p = b.tw.pod("p").label("foo", "").priority(kLow).add();
  spread(b, p, "zone");
  b.start("schedulerName: default-scheduler\n");

  Cycle cycle(b);
  cycle.sched->nominate(nominated, 1);
  const fw::ScheduleResult r = cycle.sched->schedule_one(p);
  REQUIRE(r.outcome == fw::ScheduleResult::Outcome::kScheduled);
  // zone2 counts the nominated pod: 1 + 1 - 0 > 1 on node-x.
  CHECK(r.placement.node == 0);
  const ExplainRecord& e = cycle.last();
  REQUIRE(e.nodes.size() == 2);
  CHECK(e.nodes[0].feasible);
  CHECK_FALSE(e.nodes[1].feasible);
  CHECK(e.nodes[1].rejected_by == "PodTopologySpread");
}
