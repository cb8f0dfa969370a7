// Kueue's partial admission end to end, through the real binary: a Job annotated
// kueue.x-k8s.io/job-min-parallelism that does not fit its ClusterQueue whole is admitted with
// the most pods that fit, down to that minimum (Kueue's getInitialAssignments and PodSetReducer,
// pkg/scheduler/scheduler.go and pkg/scheduler/flavorassigner/podset_reducer.go), and then runs
// with its parallelism lowered to that count (the Job integration's RunWithPodSetsInfo). The node
// (8 A100s, the speed durations are given at) never limits: only the quota does. Every pod works
// 1h.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

#include "fixtures/kueue_jobs.hpp"
#include "fixtures/kueue_objects.hpp"

namespace capsim {

namespace {

constexpr const char* kScenario = R"(name: partial
simulation: {horizon: 48h, sample_interval: 10m}
cluster:
  pools:
    - {name: a100, count: 1, gpu: {model: A100-80GB, count: 8}, cpu: 64, memory: 512Gi}
manifests: [queues.yaml, jobs.yaml]
durations:
  - {match: {kind: Job}, duration: 1h}
)";

// A Job of `parallelism` one-GPU pods (and `completions`, when above 0), with `annotations`.
testing::QueuedJob gpu_job(const std::string& name, int parallelism, int completions,
                           const std::string& annotations) {
  std::string spec = fmt::format("  parallelism: {}\n", parallelism);
  if (completions > 0) spec += fmt::format("  completions: {}\n", completions);
  return {name, "", annotations, spec, testing::container_with_limits("nvidia.com/gpu: 1")};
}

// `queues`: more documents for queues.yaml; `cq_spec`: more lines of the ClusterQueue's spec;
// `config`: Kueue's Configuration (none when empty).
testing::PodRuns run(int quota, const std::vector<testing::QueuedJob>& jobs,
                     const std::string& cq_spec = "", const std::string& queues = "",
                     const std::string& config = "") {
  testing::ScratchDir dir("kueue-partial");
  if (config.empty()) {
    testing::write_file(dir.file("scenario.yaml"), kScenario);
  } else {
    testing::write_file(dir.file("scenario.yaml"),
                        std::string(kScenario) + "kueue: {config: config.yaml}\n");
    testing::write_file(dir.file("config.yaml"), config);
  }
  testing::write_file(
      dir.file("queues.yaml"),
      testing::single_queue("nvidia.com/gpu", std::to_string(quota), cq_spec) + queues);
  std::string text;
  for (const testing::QueuedJob& j : jobs)
    text += testing::queued_job(j);
  testing::write_file(dir.file("jobs.yaml"), text);
  return testing::run_pods(dir);
}

int count_status(const testing::PodRuns& r, const std::string& status) {
  return static_cast<int>(std::count(r.statuses.begin(), r.statuses.end(), status));
}

constexpr const char* kMin2 = "kueue.x-k8s.io/job-min-parallelism: '2'";

}  // namespace

TEST_SUITE("scenario") {
  TEST_CASE("a Job that does not fit whole is admitted with as many pods as the quota allows") {
    SUBCASE("6 pods, quota 4, min 2: admitted with 4, the last 2 when the first end") {
      // Counts tried (sort.Search over i in [0, 4], count 6 - i): i = 2 -> 4 fits, i = 1 -> 5
      // does not, so 4. Pods 0-3 run [0, 1h), pods 4 and 5 [1h, 2h).
      const testing::PodRuns r = run(4, {gpu_job("train", 6, 0, kMin2)});
      CAPTURE(r.err);
      REQUIRE(r.exit_code == 0);
      REQUIRE(r.runs.size() == 6);
      CHECK(count_status(r, "completed") == 6);
      CHECK(testing::most_at_once(r.runs) == 4);
      for (int i = 0; i < 4; ++i)
        CHECK(r.runs[static_cast<std::size_t>(i)] == std::pair{0.0, 3600.0});
      for (int i = 4; i < 6; ++i)
        CHECK(r.runs[static_cast<std::size_t>(i)] == std::pair{3600.0, 7200.0});
    }
    SUBCASE("waitForPodsReady counts the admitted pods, not the Job's parallelism") {
      // Admitted with 4, all 4 run within the 10m timeout: ready, never evicted, so the runs
      // are those above (counting 6 would evict the Job at 10m and restart it).
      const testing::PodRuns r = run(4, {gpu_job("train", 6, 0, kMin2)}, "", "",
                                     "apiVersion: config.kueue.x-k8s.io/v1beta2\n"
                                     "kind: Configuration\n"
                                     "waitForPodsReady: {timeout: 10m}\n");
      CAPTURE(r.err);
      REQUIRE(r.exit_code == 0);
      REQUIRE(r.runs.size() == 6);
      CHECK(count_status(r, "completed") == 6);
      for (int i = 0; i < 4; ++i)
        CHECK(r.runs[static_cast<std::size_t>(i)] == std::pair{0.0, 3600.0});
      for (int i = 4; i < 6; ++i)
        CHECK(r.runs[static_cast<std::size_t>(i)] == std::pair{3600.0, 7200.0});
    }
    SUBCASE("without the annotation the same Job is never admitted") {
      const testing::PodRuns r = run(4, {gpu_job("train", 6, 0, "")});
      CAPTURE(r.err);
      REQUIRE(r.exit_code == 0);
      CHECK(count_status(r, "pending") == 6);
    }
    SUBCASE("below the minimum nothing is admitted: quota 1, min 2") {
      const testing::PodRuns r = run(1, {gpu_job("train", 6, 0, kMin2)});
      CAPTURE(r.err);
      REQUIRE(r.exit_code == 0);
      CHECK(count_status(r, "pending") == 6);
    }
    SUBCASE("10 completions at parallelism 6, quota 4: 4 at a time, done in three waves") {
      // The Job keeps its completions (job-completions-equal-parallelism is not set): 4 + 4 + 2.
      const testing::PodRuns r =
          run(4, {gpu_job("train", 6, 10, "kueue.x-k8s.io/job-min-parallelism: '3'")});
      CAPTURE(r.err);
      REQUIRE(r.exit_code == 0);
      CHECK(count_status(r, "completed") == 10);
      CHECK(testing::most_at_once(r.runs) == 4);
      double last = 0;
      for (const auto& [start, end] : r.runs)
        last = std::max(last, end);
      CHECK(last == 3 * 3600.0);
    }
    SUBCASE("the admitted count holds: quota freed later does not grow the Job") {
      // `first` (3 pods) takes 3 of 4; `second` (4 pods, min 1) gets the 1 left and keeps
      // running one pod at a time after `first` ends at 1h: 4 pods in series, done at 4h.
      const testing::PodRuns r =
          run(4, {gpu_job("first", 3, 0, ""),
                  gpu_job("second", 4, 0, "kueue.x-k8s.io/job-min-parallelism: '1'")});
      CAPTURE(r.err);
      REQUIRE(r.exit_code == 0);
      CHECK(count_status(r, "completed") == 7);
      CHECK(testing::most_at_once(r.runs) == 4);
      double last = 0;
      for (const auto& [start, end] : r.runs)
        last = std::max(last, end);
      CHECK(last == 4 * 3600.0);
    }
  }

  TEST_CASE("a Job that can get all its pods by preemption preempts rather than shrinks") {
    // Quota 4. t=0: `low` (WorkloadPriorityClass 10) takes 2 GPUs for 10h. t=10m: `high`
    // (1000; 4 pods, min 2) could be admitted with 2 at once, but Kueue tries the full count
    // first, and 4 fit by preempting `low` (withinClusterQueue: LowerPriority). So all 4 of
    // `high` start together once `low`'s pods have gone, and `low` runs after `high`.
    testing::QueuedJob low = gpu_job("low", 2, 0, "capsim.io/duration: 10h");
    low.labels = "kueue.x-k8s.io/priority-class: low";
    testing::QueuedJob high =
        gpu_job("high", 4, 0, std::string(kMin2) + ", capsim.io/arrival: 10m");
    high.labels = "kueue.x-k8s.io/priority-class: high";
    const testing::PodRuns r =
        run(4, {low, high}, "  preemption: {withinClusterQueue: LowerPriority}\n",
            testing::kLowHighPriorityClasses);
    CAPTURE(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(count_status(r, "completed") == 6);
    // By start: low-0 and low-1 (first started at 0), then high-0 to high-3. Shrunk to 2 without
    // preemption, `high` would have started 2 pods at 600 and `low` would have run on.
    REQUIRE(r.runs.size() == 6);
    const double high_start = r.runs[2].first;
    CHECK(high_start > 600.0);  // after low's grace period
    for (std::size_t i = 2; i < 6; ++i)
      CHECK(r.runs[i] == std::pair{high_start, high_start + 3600.0});
    // `low` was requeued, and ran its 10h again after `high`.
    CHECK(r.runs[0].second == high_start + 3600.0 + 36000.0);
  }

  TEST_CASE("job-min-parallelism is checked as Kueue's Job webhook checks it") {
    struct Case {
      const char* name;
      std::string annotations;
      const char* message;
    };
    const Case cases[] = {
        {"not below the pod count", "kueue.x-k8s.io/job-min-parallelism: '6'",
         "must be between 1 and 5, below the 6 pod(s) the Job runs at once"},
        {"zero", "kueue.x-k8s.io/job-min-parallelism: '0'", "must be between 1 and 5"},
        {"not a number", "kueue.x-k8s.io/job-min-parallelism: two", "two"},
        {"with a gang", std::string(kMin2) + ", capsim.io/gang: 'true'",
         "capsim.io/gang cannot be combined with kueue.x-k8s.io/job-min-parallelism"},
        {"completions-equal-parallelism not a bool",
         std::string(kMin2) + ", kueue.x-k8s.io/job-completions-equal-parallelism: maybe",
         "must be true or false"},
    };
    for (const Case& c : cases) {
      CAPTURE(c.name);
      const testing::PodRuns r = run(4, {gpu_job("train", 6, 0, c.annotations)});
      CAPTURE(r.err);
      CHECK(r.exit_code == 65);
      CHECK(r.err.find("jobs.yaml:7:") != std::string::npos);  // metadata.annotations
      CHECK(r.err.find(c.message) != std::string::npos);
    }
  }

  TEST_CASE("job-completions-equal-parallelism is warned about by name, and the run goes on") {
    const testing::PodRuns r =
        run(4, {gpu_job("train", 6, 0,
                        std::string(kMin2) + ", kueue.x-k8s.io/job-completions-equal-parallelism: "
                                             "'true'")});
    CAPTURE(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.find("kueue.x-k8s.io/job-completions-equal-parallelism is not modelled") !=
          std::string::npos);
    CHECK(count_status(r, "completed") == 6);
  }
}

}  // namespace capsim
