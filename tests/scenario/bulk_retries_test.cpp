// Bulk retries (docs/scheduling.md, "A backlog") change no result: runs of a backlog with them
// and without them record the same summary, samples and pod rows, under several seeds,
// profiles and backoff settings; and they are off where a run records every attempt.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>

#include "fixtures/memory_recorder.hpp"
#include "tools/capsim/runner.hpp"
#include "tools/loaders/scenario_loader.hpp"

using namespace capsim;
using capsim::testing::MemoryRecorder;

namespace {
const std::string kBacklog = std::string(CAPSIM_SOURCE_DIR) + "/scenarios/tests/backlog.yaml";

struct Run {
  MemoryRecorder rec;
  RunOutcome out;
};

Run run(const std::vector<std::string>& overrides, const std::string& profile, bool bulk,
        RecordLevel level = RecordLevel::kPodRows) {
  LoadOptions lo;
  lo.overrides = overrides;
  Scenario s = load_scenario(kBacklog, lo);
  Run r{MemoryRecorder(level), {}};
  RunRequest req;
  req.profile = profile;
  req.bulk_retries = bulk;
  req.paranoid = true;  // every invariant checked after every event
  r.out = run_scenario(s, req, r.rec);
  return r;
}

std::vector<std::string> pod_rows(const MemoryRecorder& m) {
  std::vector<std::string> out;
  for (const PodRecord& p : m.pods) {
    out.push_back(fmt::format("{} {} {} {} {} {} {} {} {} {}", p.pod, p.status, p.submit, p.start,
                              p.end, p.node, p.devices, p.gpu_request, p.attempts, p.wait_s));
  }
  return out;
}

std::vector<std::string> sample_rows(const MemoryRecorder& m) {
  std::vector<std::string> out;
  for (const SampleRecord& s : m.samples) {
    out.push_back(fmt::format("{} {} {} {} {} {} {} {} {} {} {}", s.time, s.gpus_total,
                              s.gpus_allocated, s.gpus_busy, s.gpu_memory_allocated_mib,
                              s.gpu_memory_used_mib, s.pods_running, s.pods_pending,
                              s.fragmented_gpus, s.power_w, s.cost_per_hour));
  }
  for (const PoolSampleRecord& s : m.pool_samples) {
    out.push_back(fmt::format("{} {} {} {} {} {} {}", s.time, s.pool, s.gpus_allocated, s.gpus_busy,
                              s.pods_running, s.fragmented_gpus, s.cost_per_hour));
  }
  return out;
}
}  // namespace

TEST_SUITE("scenario") {
  TEST_CASE("bulk retries record what attempting every pod one by one records") {
    struct Variant {
      std::vector<std::string> overrides;
      std::string profile;
    };
    const Variant variants[] = {
        {{}, ""},
        {{"seed=11"}, ""},
        {{"seed=12"}, "gpu-binpack"},
        // Other backoffs: the cap is reached after a different number of attempts, and
        // unschedulable pods are flushed after a minute.
        {{"seed=13", "scheduler.podInitialBackoffSeconds=3", "scheduler.podMaxBackoffSeconds=40",
          "scheduler.podMaxInUnschedulablePodsDuration=1m"},
         ""},
        {{"seed=14", "scheduler.podInitialBackoffSeconds=10", "scheduler.podMaxBackoffSeconds=10"},
         ""},
    };
    for (const Variant& v : variants) {
      CAPTURE(fmt::format("{} {}", fmt::join(v.overrides, " "), v.profile));
      const Run with = run(v.overrides, v.profile, true);
      const Run without = run(v.overrides, v.profile, false);
      // The backlog is real: most attempts were made by groups, none without them.
      REQUIRE(without.out.result.bulk_cycles == 0);
      REQUIRE(with.out.result.cycles > 5000);
      CHECK(with.out.result.bulk_cycles * 2 > with.out.result.cycles);
      std::int64_t most_pending = 0;
      for (const SampleRecord& s : with.rec.samples)
        most_pending = std::max(most_pending, s.pods_pending);
      CHECK(most_pending >= 20);  // tens of pods wait at once
      CHECK(with.rec.summary == without.rec.summary);
      CHECK(with.out.result.events == without.out.result.events);
      CHECK(pod_rows(with.rec) == pod_rows(without.rec));
      CHECK(sample_rows(with.rec) == sample_rows(without.rec));
    }
  }

  TEST_CASE("bulk retries are off where every attempt is recorded") {
    const Run full = run({}, "", true, RecordLevel::kFull);
    CHECK(full.out.result.cycles > 5000);
    CHECK(full.out.result.bulk_cycles == 0);
    const Run pods = run({}, "", true, RecordLevel::kPodRows);
    CHECK(pods.out.result.bulk_cycles > 0);
    CHECK(full.rec.summary == pods.rec.summary);
  }
}
