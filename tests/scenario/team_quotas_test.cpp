// The team-quotas scenario (three teams, A100 and B200 flavors, one Kueue cohort) run the three
// ways its README compares, with every invariant checked after every event: quota never above
// nominal + borrowing limit, lending limits kept, no gang running partly, pods conserved.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "fixtures/memory_recorder.hpp"
#include "reports/sqlite_db.hpp"
#include "reports/sqlite_recorder.hpp"
#include "tools/capsim/runner.hpp"
#include "tools/loaders/scenario_loader.hpp"

using namespace capsim;
using capsim::testing::MemoryRecorder;

namespace {

const std::string kScenario =
    std::string(CAPSIM_SOURCE_DIR) + "/scenarios/team-quotas/team-quotas.yaml";

MemoryRecorder run(const std::vector<std::string>& overrides, bool paranoid = true) {
  LoadOptions lo;
  lo.overrides = overrides;
  Scenario s = load_scenario(kScenario, lo);
  MemoryRecorder rec;
  RunRequest req;
  req.paranoid = paranoid;
  (void)run_scenario(s, req, rec);
  return rec;
}

const std::vector<std::string> kNoBorrowing = {"manifests=[queues-no-borrowing.yaml]"};
const std::vector<std::string> kFairSharing = {"kueue.fairSharing.enable=true"};

}  // namespace

TEST_SUITE("scenario") {
  TEST_CASE("team-quotas: borrowing shortens the bursty team's waits; no borrowing never borrows") {
    const MemoryRecorder alone = run(kNoBorrowing);
    const MemoryRecorder shared = run({});
    const MemoryRecorder fair = run(kFairSharing);
    for (const MemoryRecorder* r : {&alone, &shared, &fair}) {
      CHECK(r->ended.status == "complete");
      CHECK(r->metric("pods_pending_at_end") == 0);
      CHECK(r->metric("kueue.workloads_pending_at_end") == 0);
      REQUIRE(!r->queue_samples.empty());
    }
    // Without borrowing nothing is ever borrowed, preempted for reclaim, or above nominal.
    for (const QueueSampleRecord& q : alone.queue_samples) {
      CHECK(q.borrowed == 0);
      CHECK(q.usage <= q.nominal);
    }
    CHECK(alone.metric("kueue.preemptions") == 0);
    // With it, research (bursts of multi-node training) borrows the others' idle quota...
    CHECK(shared.metric("clusterqueue.research.borrowed_gpu_hours") > 0);
    bool borrowed = false;
    for (const QueueSampleRecord& q : shared.queue_samples)
      borrowed = borrowed || (q.queue == "research" && q.borrowed > 0);
    CHECK(borrowed);
    // ...and waits less, on average and in the tail; the others keep their quota by reclaiming
    // it (preemption), so their waits stay in minutes, not hours.
    CHECK(shared.metric("queue.research.wait_seconds_mean") <
          0.75 * alone.metric("queue.research.wait_seconds_mean"));
    CHECK(shared.metric("queue.research.wait_seconds_p95") <
          alone.metric("queue.research.wait_seconds_p95"));
    CHECK(fair.metric("queue.research.wait_seconds_mean") <
          0.75 * alone.metric("queue.research.wait_seconds_mean"));
    for (const char* team : {"product", "evals"}) {
      CAPTURE(std::string(team));
      CHECK(shared.metric(std::string("queue.") + team + ".wait_seconds_p95") < 600);
      CHECK(fair.metric(std::string("queue.") + team + ".wait_seconds_p95") < 600);
    }
    // The GPU-hour shares add up to the whole.
    double share = 0;
    for (const char* team : {"research", "product", "evals"})
      share += shared.metric(std::string("clusterqueue.") + team + ".gpu_hour_share");
    CHECK(share == doctest::Approx(1.0));
  }

  TEST_CASE("team-quotas: the same seed gives the same run, event by event") {
    const MemoryRecorder a = run(kFairSharing, false);
    const MemoryRecorder b = run(kFairSharing, false);
    REQUIRE(a.events.size() > 1000);
    CHECK(a.events == b.events);
    CHECK(a.summary == b.summary);
    REQUIRE(a.queue_samples.size() == b.queue_samples.size());
    for (std::size_t i = 0; i < a.queue_samples.size(); ++i) {
      CHECK(a.queue_samples[i].usage == b.queue_samples[i].usage);
      CHECK(a.queue_samples[i].pending == b.queue_samples[i].pending);
    }
  }

  TEST_CASE("team-quotas: queue samples and per-queue metrics reach the SQLite report") {
    namespace fs = std::filesystem;
    const fs::path db = fs::temp_directory_path() / ("capsim-tq-" + std::to_string(::getpid()));
    {
      LoadOptions lo;
      Scenario s = load_scenario(kScenario, lo);
      SqliteRecorder rec(db);
      RunRequest req;
      (void)run_scenario(s, req, rec);
    }
    SqliteDb sql(db.string(), OpenMode::kReadOnly);
    auto st = sql.prepare(
        "SELECT count(*), count(DISTINCT queue), sum(flavor IS NULL), max(pending) FROM "
        "queue_sample");
    REQUIRE(st.step());
    CHECK(st.column_int64(0) > 100);
    CHECK(st.column_int64(1) == 3);  // research, product, evals
    CHECK(st.column_int64(2) > 0);   // the per-resource total rows
    CHECK(st.column_double(3) > 0);  // someone waited
    auto m = sql.prepare(
        "SELECT count(*) FROM summary WHERE metric LIKE 'clusterqueue.%.admission_wait_seconds_p95'"
        " OR metric LIKE 'queue.%.gpu_hour_share'");
    REQUIRE(m.step());
    CHECK(m.column_int64(0) == 6);
    fs::remove(db);
  }
}
