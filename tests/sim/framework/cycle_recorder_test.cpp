// The CycleRecorder a recorded run installs: --explain's glob patterns; every unschedulable
// cycle's (plugin, reason, nodes) counts, which add up to the FitError message the cycle
// returned; an explained cycle's record of every plugin on every node; and a cycle that is
// neither failed nor explained tells the recorder nothing.
#include "sim/framework/cycle_recorder.hpp"

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "fixtures/evaluation_bench.hpp"
#include "sim/engine.hpp"
#include "sim/random.hpp"

using namespace capsim;

namespace {

struct MemoryRecorder final : Recorder {
  std::vector<PendingReasonRecord> reasons;
  std::vector<std::string> reason_texts;
  std::vector<ExplainRecord> explained;
  void begin_run(const RunInfo&, const World&) override {}
  void record_event(const EventRecord&) override {}
  void record_sample(const SampleRecord&) override {}
  void end_run(const RunInfo&, const std::vector<PodRecord>&, const Summary&) override {}
  void record_pending_reason(const PendingReasonRecord& r) override {
    reasons.push_back(r);
    reason_texts.push_back(std::string(r.plugin) + ": " + std::string(r.reason));
  }
  void record_explain(const ExplainRecord& e) override { explained.push_back(e); }
};

struct NoEvents final : EventHandler {
  void handle(const Event&, Engine&) override {}
};

}  // namespace

TEST_CASE("--explain patterns are shell globs on the pod's name, or on namespace/name") {
  CHECK(fw::glob_match("train-*", "train-0"));
  CHECK(fw::glob_match("*", ""));
  CHECK(fw::glob_match("t?ain", "train"));
  CHECK(fw::glob_match("*-*-7", "a-b-c-7"));
  CHECK_FALSE(fw::glob_match("train-*", "serve-0"));
  CHECK_FALSE(fw::glob_match("t?ain", "tain"));
  CHECK_FALSE(fw::glob_match("a*b", "a-b-c"));

  capsim::testing::EvaluationBench b;
  b.tw.node("n").cpu("8").memory("8Gi").add();
  const PodId p = b.tw.pod("train-1").cpu("1").add();
  b.start("schedulerName: default-scheduler\n");
  MemoryRecorder rec;
  const fw::CycleRecorder by_name(rec, *b.framework, b.reasons, {"train-*"});
  const fw::CycleRecorder by_ns(rec, *b.framework, b.reasons, {"default/train-?"});
  const fw::CycleRecorder other_ns(rec, *b.framework, b.reasons, {"prod/*"});
  const fw::CycleRecorder none(rec, *b.framework, b.reasons, {});
  CHECK(by_name.explains(b.cluster->spec(p)));
  CHECK(by_ns.explains(b.cluster->spec(p)));
  CHECK_FALSE(other_ns.explains(b.cluster->spec(p)));
  CHECK_FALSE(none.explains_any());
}

TEST_CASE(
    "an unschedulable cycle's reason counts add up to its message; a cycle that binds records "
    "nothing unless explained") {
  capsim::testing::EvaluationBench b;
  b.tw.node("small-1").cpu("1").memory("8Gi").add();
  b.tw.node("small-2").cpu("1").memory("8Gi").add();
  b.tw.node("tainted").cpu("8").memory("8Gi").taint("k", "v", "NoSchedule").add();
  b.tw.node("big").cpu("8").memory("8Gi").add();
  const PodId big = b.tw.pod("big").cpu("6").add();
  const PodId fits = b.tw.pod("fits").cpu("1").add();
  const PodId waits = b.tw.pod("waits").cpu("4").add();
  b.start("schedulerName: default-scheduler\n");
  b.place(big, 3);
  MemoryRecorder rec;
  fw::CycleRecorder observer(rec, *b.framework, b.reasons, {"waits"});
  NoEvents none;
  Engine clock(none);
  fw::Scheduler sched(*b.framework, *b.cluster, b.reasons, RandomStream(1));
  sched.set_observer(&observer, &clock);

  const fw::ScheduleResult ok = sched.schedule_one(fits);
  REQUIRE(ok.outcome == fw::ScheduleResult::Outcome::kScheduled);
  CHECK(rec.reasons.empty());
  CHECK(rec.explained.empty());

  const fw::ScheduleResult r = sched.schedule_one(waits);
  REQUIRE(r.outcome == fw::ScheduleResult::Outcome::kUnschedulable);
  CHECK(rec.reasons.empty());  // held open until a cycle differs, or the run ends
  observer.finish();
  CAPTURE(r.message);
  // 0/4 nodes are available: 3 Insufficient cpu, 1 node(s) had untolerated taint {k: v}.
  std::int32_t total = 0;
  for (const PendingReasonRecord& c : rec.reasons) {
    CHECK(c.pod == waits);
    CHECK(r.message.find(std::to_string(c.nodes) + " " + std::string(c.reason)) !=
          std::string::npos);
    total += c.nodes;
  }
  CHECK(total == 4);
  CHECK(rec.reason_texts.front() == "NodeResourcesFit: Insufficient cpu");  // most nodes first
  CHECK(rec.reasons.front().nodes == 3);

  // The explained cycle: every node, every Filter plugin; nothing feasible.
  REQUIRE(rec.explained.size() == 1);
  const ExplainRecord& e = rec.explained.front();
  CHECK(e.pod == waits);
  CHECK(e.result == "unschedulable");
  CHECK(e.message == r.message);
  CHECK(e.nodes.size() == 4);
  CHECK(e.selected == kNoNode);
  std::map<std::string, int> rejected_by;
  for (const auto& n : e.nodes) {
    CHECK_FALSE(n.feasible);
    rejected_by[std::string(n.rejected_by)]++;
  }
  CHECK(rejected_by["NodeResourcesFit"] == 3);
  CHECK(rejected_by["TaintToleration"] == 1);
  std::size_t filter_rows = 0;
  for (const auto& v : e.verdicts)
    filter_rows += v.point == "filter" ? 1u : 0u;
  CHECK(filter_rows == 4 * b.framework->config().filter.size());
}

TEST_CASE(
    "consecutive failed cycles with the same counts are one record per reason; a cycle with "
    "other counts, or a successful cycle between, starts another") {
  capsim::testing::EvaluationBench b;
  b.tw.node("a").cpu("2").memory("8Gi").add();
  b.tw.node("b").cpu("2").memory("8Gi").add();
  const PodId first = b.tw.pod("first").cpu("2").add();
  const PodId second = b.tw.pod("second").cpu("2").add();
  const PodId waits = b.tw.pod("waits").cpu("2").add();
  b.start("schedulerName: default-scheduler\n");
  b.place(first, 0);
  b.place(second, 1);
  MemoryRecorder rec;
  fw::CycleRecorder observer(rec, *b.framework, b.reasons, {});
  NoEvents none;
  Engine clock(none);
  fw::Scheduler sched(*b.framework, *b.cluster, b.reasons, RandomStream(1));
  sched.set_observer(&observer, &clock);
  auto fails = [&] {
    ++b.cluster->pod(waits).attempts;  // as the Simulation counts each cycle
    return sched.schedule_one(waits).outcome == fw::ScheduleResult::Outcome::kUnschedulable;
  };

  // Attempts 1-3: both nodes full, "2 Insufficient cpu" each time: held open.
  for (int i = 0; i < 3; ++i)
    REQUIRE(fails());
  CHECK(rec.reasons.empty());
  // Attempt 4 has other counts (node b cordoned): attempts 1-3 are written as one record.
  b.cluster->set_cordoned(1, true);
  REQUIRE(fails());
  REQUIRE(rec.reasons.size() == 1);
  CHECK(rec.reasons[0].pod == waits);
  CHECK(rec.reasons[0].attempt == 1);
  CHECK(rec.reasons[0].attempts == 3);
  CHECK(rec.reasons[0].nodes == 2);
  CHECK(rec.reason_texts[0] == "NodeResourcesFit: Insufficient cpu");
  // Attempt 5 is not reported (as a cycle that bound the pod would not be): attempt 6, with
  // attempt 4's counts, still starts a new run, and attempt 4 is written alone.
  ++b.cluster->pod(waits).attempts;
  REQUIRE(fails());
  REQUIRE(rec.reasons.size() == 3);  // 1 Insufficient cpu, 1 node(s) were unschedulable
  for (std::size_t i = 1; i < 3; ++i) {
    CHECK(rec.reasons[i].attempt == 4);
    CHECK(rec.reasons[i].attempts == 1);
    CHECK(rec.reasons[i].nodes == 1);
  }
  REQUIRE(fails());  // attempt 7, as attempt 6
  observer.finish();
  REQUIRE(rec.reasons.size() == 5);
  for (std::size_t i = 3; i < 5; ++i) {
    CHECK(rec.reasons[i].attempt == 6);
    CHECK(rec.reasons[i].attempts == 2);
  }
}
