// Scenario-level properties of whole runs: determinism, seeds, invariants.
#include <doctest/doctest.h>

#include "fixtures/memory_recorder.hpp"
#include "tools/capsim/runner.hpp"
#include "tools/loaders/scenario_loader.hpp"

using namespace capsim;
using capsim::testing::MemoryRecorder;

namespace {
const std::string kSmall = std::string(CAPSIM_SOURCE_DIR) + "/scenarios/tests/small.yaml";

MemoryRecorder run(const std::string& path, LoadOptions lo = {}, bool paranoid = false,
                   const std::string& profile = "") {
  Scenario s = load_scenario(path, lo);
  MemoryRecorder rec;
  RunRequest req;
  req.paranoid = paranoid;
  req.profile = profile;
  (void)run_scenario(s, req, rec);
  return rec;
}
}  // namespace

TEST_SUITE("scenario") {
  TEST_CASE("the same scenario and seed give identical summaries and event logs") {
    MemoryRecorder a = run(kSmall);
    MemoryRecorder b = run(kSmall);
    REQUIRE(a.events.size() > 100);
    CHECK(a.summary == b.summary);
    CHECK(a.events == b.events);
    CHECK(a.ended.status == "complete");
  }

  TEST_CASE("another seed changes the synthetic workload") {
    LoadOptions other;
    other.seed = 8;
    MemoryRecorder a = run(kSmall);
    MemoryRecorder b = run(kSmall, other);
    CHECK(a.events != b.events);
    CHECK(a.metric("pods_total") != b.metric("pods_total"));
  }

  TEST_CASE("every invariant holds after every event of a contended run") {
    // Paranoid mode checks capacity and bookkeeping after each event and conservation at the
    // end; any violation throws InvariantError and fails the test.
    MemoryRecorder r = run(kSmall, {}, true);
    const double total = r.metric("pods_total");
    const double accounted = r.metric("pods_completed") + r.metric("pods_failed") +
                             r.metric("pods_oom_killed") + r.metric("pods_preempted") +
                             r.metric("pods_unschedulable") + r.metric("pods_pending_at_end") +
                             r.metric("pods_running_at_end");
    CHECK(total > 0);
    CHECK(accounted == total);
    CHECK(r.metric("preemptions") > 0);  // the high-priority tenant preempts training
  }

  TEST_CASE("samples never report more GPUs allocated than exist or busy than allocated") {
    MemoryRecorder r = run(kSmall);
    REQUIRE(!r.samples.empty());
    for (const SampleRecord& s : r.samples) {
      CHECK(s.gpus_allocated <= s.gpus_total + 1e-9);
      CHECK(s.gpus_busy <= s.gpus_allocated + 1e-9);
      CHECK(s.fragmented_gpus <= s.gpus_total - s.gpus_allocated + 1e-9);
    }
    for (std::size_t i = 1; i < r.samples.size(); ++i)
      CHECK(r.samples[i].time >= r.samples[i - 1].time);
  }

  TEST_CASE("packing keeps whole nodes free for 8-GPU pods where spreading strands them") {
    const std::string frag = std::string(CAPSIM_SOURCE_DIR) + "/scenarios/tests/fragmentation.yaml";
    MemoryRecorder spread = run(frag, {}, true, "gpu-spread");
    MemoryRecorder pack = run(frag, {}, true, "gpu-binpack");
    // Spread: 4 small pods per node, so no node has 8 free GPUs until a node's last small pod
    // ends. Small pod i arrives at i s and runs 10h; the first node empties at 10h + 12s at the
    // earliest, the last small pod ends at 10h + 15s. The big pods arrived at 60s and retry
    // within the 10s maximum backoff of a node emptying, so each waits between
    // 36000 + 12 - 60 = 35952s and 36000 + 15 - 60 + 10 = 35965s.
    const double w = spread.metric("queue.training.wait_seconds_mean");
    CHECK(w >= 35952);
    CHECK(w <= 35965);
    // Pack: the small pods fill two nodes; the big pods start on arrival.
    CHECK(pack.metric("queue.training.wait_seconds_mean") == 0);
    CHECK(pack.metric("fragmented_gpu_share_mean") < spread.metric("fragmented_gpu_share_mean"));
  }
}
