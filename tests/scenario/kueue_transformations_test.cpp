// Kueue resources.transformations end to end, through the real binary: MIG slices on a MIG
// node, charged to a ClusterQueue whose only quota is GPU credits. The Configuration file is the
// one the loader tests read (tests/data/manifests/kueue-config-transformations*.yaml): a
// 1g.10gb slice costs half a credit and is replaced by it.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

#include "fixtures/cli_run.hpp"
#include "reports/run_reader.hpp"

namespace capsim {

namespace {

// One A100-80GB node in all-1g.10gb (14 slices, so the node never limits), a ClusterQueue `q`
// with `credits` GPU credits, and five Jobs of one pod asking for 2 slices (1 credit) for 1h of
// work on a whole GPU (longer on two 1g slices: docs/sharing.md).
std::string scenario(const std::string& config, int credits) {
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
                     config, credits);
}

std::string queues(int credits) {
  return fmt::format(R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: gpu}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: q}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [credits.capsim.io/gpu]
    flavors:
    - name: gpu
      resources:
      - {{name: credits.capsim.io/gpu, nominalQuota: {}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: q, namespace: default}}
spec: {{clusterQueue: q}}
)",
                     credits);
}

std::string jobs() {
  std::string out;
  for (int i = 0; i < 5; ++i) {
    out += fmt::format(R"(---
apiVersion: batch/v1
kind: Job
metadata:
  name: p{}
  labels: {{kueue.x-k8s.io/queue-name: q}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: trainer
        resources:
          limits: {{nvidia.com/mig-1g.10gb: 2}}
)",
                       i);
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
      testing::write_file(dir.file("scenario.yaml"), scenario(config, 2));
      testing::write_file(dir.file("queues.yaml"), queues(2));
      testing::write_file(dir.file("jobs.yaml"), jobs());
      const auto r = testing::run_capsim(
          "run '" + dir.file("scenario.yaml") + "' -o '" + dir.file("out.db") + "'", dir);
      CAPTURE(r.err);
      REQUIRE(r.exit_code == 0);
      RunReader reader(dir.file("out.db"));
      auto st = reader.db().prepare(
          "SELECT coalesce(start_s, -1), coalesce(end_s, -1), status FROM pod WHERE run_id = 1 "
          "ORDER BY start_s, pod");
      std::vector<std::pair<double, double>>& run = runs[i++];
      while (st.step()) {
        CHECK(st.column_text(2) == "completed");
        run.emplace_back(st.column_double(0), st.column_double(1));
      }
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
