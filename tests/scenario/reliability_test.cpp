// The reliability scenario's small variant (scenarios/reliability/small.yaml): a 128-GPU gang
// that checkpoints, on a fleet with failures, checked after every event (a failed GPU holds no
// pod, a down node holds none, lost work fits in the run). What the model implies: a run loses
// at most the time since its last checkpoint, so shorter intervals lose less; the same seed gives
// the same run; the failure seed changes the failures and never the arrivals.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "fixtures/memory_recorder.hpp"
#include "tools/capsim/runner.hpp"
#include "tools/loaders/scenario_loader.hpp"

using namespace capsim;
using capsim::testing::MemoryRecorder;

namespace {

const std::string kSmall = std::string(CAPSIM_SOURCE_DIR) + "/scenarios/reliability/small.yaml";

MemoryRecorder run(const std::vector<std::string>& overrides, bool paranoid = true) {
  LoadOptions lo;
  lo.overrides = overrides;
  Scenario s = load_scenario(kSmall, lo);
  MemoryRecorder rec;
  RunRequest req;
  req.paranoid = paranoid;
  (void)run_scenario(s, req, rec);
  return rec;
}

std::vector<MemoryRecorder::Row> of_kind(const MemoryRecorder& r, const std::string& kind) {
  std::vector<MemoryRecorder::Row> out;
  for (const auto& e : r.events) {
    if (e.kind == kind) out.push_back(e);
  }
  return out;
}

}  // namespace

TEST_SUITE("scenario") {
  TEST_CASE("reliability: shorter checkpoint intervals lose less work to the same failures") {
    // A horizon keeps the failure process going to the same end in every variant (without
    // checkpoints the 3-day job would hardly ever finish), so all three see the same failures.
    const std::string horizon = "simulation.horizon=4d";
    const MemoryRecorder none = run({horizon, "checkpoints=[]"});
    const MemoryRecorder h3 = run({horizon, "checkpoints[0].interval=3h"});
    const MemoryRecorder m30 = run({horizon, "checkpoints[0].interval=30m"});
    REQUIRE(!of_kind(none, "failure").empty());
    CHECK(of_kind(none, "failure") == of_kind(h3, "failure"));
    CHECK(of_kind(h3, "failure") == of_kind(m30, "failure"));
    for (const MemoryRecorder* r : {&none, &h3, &m30}) {
      CHECK(r->ended.status == "complete");
      CHECK(r->metric("pods_interrupted") > 0);
      CHECK(r->metric("gpu_failures") + r->metric("node_failures") ==
            r->metric("failures.gpu") + r->metric("failures.hbm") + r->metric("failures.nvlink") +
                r->metric("failures.nic") + r->metric("failures.host"));
      CHECK(r->metric("goodput_ratio") > 0);
      CHECK(r->metric("goodput_ratio") <= 1);
      CHECK(r->metric("pool.training.availability") < 1);
      CHECK(r->metric("pool.training.availability") > 0.5);
      CHECK(r->metric("pool.shared.availability") == 1);  // no rate covers the shared pool
    }
    CHECK(none.metric("gpu_hours_lost_to_failures") > h3.metric("gpu_hours_lost_to_failures"));
    CHECK(h3.metric("gpu_hours_lost_to_failures") > m30.metric("gpu_hours_lost_to_failures"));
    CHECK(none.metric("gpu_hours_lost_to_checkpoints") == 0);
    CHECK(m30.metric("gpu_hours_lost_to_checkpoints") > h3.metric("gpu_hours_lost_to_checkpoints"));
    // A gang member's run loses at most interval + write + load since its last checkpoint:
    // 8 GPUs x (30 + 3 + 10) min for each run a failure (or its gang's) stopped.
    const double bound =
        static_cast<double>(of_kind(m30, "interrupt").size()) * 8 * (30.0 + 3.0 + 10.0) / 60.0;
    CHECK(m30.metric("gpu_hours_lost_to_failures") <= bound);
    // Both checkpointing variants finish the job; neither loses more than it computes.
    CHECK(h3.metric("queue.training.effective_time_ratio") > 0.5);
    CHECK(m30.metric("queue.training.effective_time_ratio") > 0.5);
    CHECK(m30.metric("queue.training.effective_time_ratio") <= 1);
  }

  TEST_CASE("reliability: the same seed gives the same run; the failure seed only the failures") {
    const MemoryRecorder a = run({}, false);
    const MemoryRecorder b = run({}, false);
    CHECK(a.events == b.events);
    CHECK(a.summary == b.summary);
    const MemoryRecorder other = run({"failures.seed=12345"}, false);
    const MemoryRecorder quiet = run({"failures={}"}, false);
    CHECK(of_kind(a, "failure") != of_kind(other, "failure"));
    CHECK(of_kind(quiet, "failure").empty());
    // The workload's arrivals (pods arriving for the first time) are the same in all three.
    auto arrivals = [](const MemoryRecorder& r) {
      std::set<std::pair<SimTime, PodId>> out;
      for (const auto& e : r.events) {
        if (e.kind == "arrive") out.insert({e.time, e.pod});
      }
      return out;
    };
    CHECK(arrivals(a) == arrivals(other));
    CHECK(arrivals(a) == arrivals(quiet));
    CHECK(quiet.metric("node_failures") == -1e300);  // no failure metrics without failures
  }
}
