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
