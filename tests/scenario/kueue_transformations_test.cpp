// Kueue resources.transformations end to end, through the real binary: MIG slices on a MIG
// node, charged to a ClusterQueue whose only quota is GPU credits. The Configuration file is the
// one the loader tests read (tests/data/manifests/kueue-config-transformations*.yaml): a
// 1g.10gb slice costs half a credit and is replaced by it.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

#include "fixtures/kueue_jobs.hpp"

namespace capsim {

namespace {

// One A100-80GB node in all-1g.10gb (14 slices, so the node never limits), and Jobs that run 1h
// of work on a whole GPU (longer on two 1g slices: docs/sharing.md).
std::string scenario(const std::string& config) {
  return fmt::format(R"(name: credits
simulation: {{horizon: 48h, sample_interval: 10m}}
cluster:
  pools:
    - name: a100
      count: 1
      gpu: {{model: A100-80GB, count: 2}}
      cpu: 64
      memory: 512Gi
      mig: {{config: all-1g.10gb, strategy: mixed}}
manifests: [queues.yaml, jobs.yaml]
durations:
  - {{match: {{kind: Job}}, duration: 1h}}
kueue:
  config: '{}'
)",
                     config);
}

// Five Jobs of one pod asking for 2 slices (1 credit).
std::string jobs() {
  std::string out;
  for (int i = 0; i < 5; ++i) {
    out += testing::queued_job({fmt::format("p{}", i), "", "", "",
                                testing::container_with_limits("nvidia.com/mig-1g.10gb: 2")});
  }
  return out;
}

}  // namespace

TEST_SUITE("scenario") {
  TEST_CASE("MIG slices charged as GPU credits admit as many pods as the credits allow") {
    // Quota 2 credits, 1 credit a pod: 2 pods start at 0 and each of the others when one before
    // it ends, never more than 2 at once, although the node has room for all five. The v1beta1
    // and v1beta2 forms of the Configuration give the same run.
    std::vector<std::pair<double, double>> runs[2];
    int i = 0;
    for (const char* file :
         {"kueue-config-transformations.yaml", "kueue-config-transformations-v1beta2.yaml"}) {
      CAPTURE(file);
      testing::ScratchDir dir("kueue-transformations");
      const std::string config = testing::source_path(std::string("tests/data/manifests/") + file);
      testing::write_file(dir.file("scenario.yaml"), scenario(config));
      testing::write_file(dir.file("queues.yaml"),
                          testing::single_queue("credits.capsim.io/gpu", "2"));
      testing::write_file(dir.file("jobs.yaml"), jobs());
      const testing::PodRuns r = testing::run_pods(dir);
      CAPTURE(r.err);
      REQUIRE(r.exit_code == 0);
      for (const std::string& status : r.statuses)
        CHECK(status == "completed");
      const std::vector<std::pair<double, double>>& run = runs[i++] = r.runs;
      REQUIRE(run.size() == 5);
      CHECK(run[0].first == 0.0);
      CHECK(run[1].first == 0.0);
      CHECK(run[2].first > 0.0);
      for (std::size_t k = 2; k < run.size(); ++k) {
        CAPTURE(k);
        int running = 0;     // pods started before k and still running when k starts
        bool freed = false;  // k starts when an earlier pod ends
        for (std::size_t j = 0; j < k; ++j) {
          running += run[j].second > run[k].first ? 1 : 0;
          freed = freed || run[j].second == run[k].first;
        }
        CHECK(running <= 1);
        CHECK(freed);
      }
    }
    CHECK(runs[0] == runs[1]);
  }
}

}  // namespace capsim
