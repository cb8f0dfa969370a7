// Kueue resources.deviceClassMappings end to end, through the real binary: GPUs a DRA driver
// publishes, claimed through ResourceClaimTemplates and charged to a ClusterQueue whose only
// quota is the mapping's resource (Kueue's pkg/dra/claims.go counts one unit per device).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

#include "fixtures/cli_run.hpp"
#include "reports/run_reader.hpp"

namespace capsim {

namespace {

// One H100 node whose 8 GPUs are published through DRA (so the node never limits), and a
// Configuration mapping the driver's DeviceClass gpu.nvidia.com to example.com/gpus.
constexpr const char* kScenario = R"(name: dra-quota
simulation: {horizon: 48h, sample_interval: 10m}
cluster:
  pools:
    - {name: h100, count: 1, gpu: {model: H100-80GB, count: 8}, cpu: 64, memory: 512Gi, dra: true}
manifests: [queues.yaml, jobs.yaml]
durations:
  - {match: {kind: Job}, duration: 1h}
kueue:
  config: config.yaml
)";

constexpr const char* kConfig = R"(apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
resources:
  deviceClassMappings:
  - name: example.com/gpus
    deviceClassNames: [gpu.nvidia.com]
)";

// A ClusterQueue of `quota` example.com/gpus, and the template each Job's pod claims: `request`
// is the body of its one request.
std::string queues(int quota, const std::string& request) {
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
  - coveredResources: [example.com/gpus]
    flavors:
    - name: gpu
      resources:
      - {{name: example.com/gpus, nominalQuota: {}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: q, namespace: default}}
spec: {{clusterQueue: q}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {{name: gpus}}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        {}
)",
                     quota, request);
}

// Five Jobs of one pod, each claiming the template `gpus`.
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
      resourceClaims: [{{name: gpu, resourceClaimTemplateName: gpus}}]
      containers:
      - name: c
        image: trainer
        resources:
          claims: [{{name: gpu}}]
)",
                       i);
  }
  return out;
}

struct Outcome {
  int exit_code = -1;
  std::string err;
  std::vector<std::pair<double, double>> runs;  // (start, end) of each pod, by start
};

Outcome run(int quota, const std::string& request) {
  testing::ScratchDir dir("kueue-dra-quota");
  testing::write_file(dir.file("scenario.yaml"), kScenario);
  testing::write_file(dir.file("config.yaml"), kConfig);
  testing::write_file(dir.file("queues.yaml"), queues(quota, request));
  testing::write_file(dir.file("jobs.yaml"), jobs());
  const auto r = testing::run_capsim(
      "run '" + dir.file("scenario.yaml") + "' -o '" + dir.file("out.db") + "'", dir);
  Outcome o{r.exit_code, r.err, {}};
  if (r.exit_code != 0) return o;
  RunReader reader(dir.file("out.db"));
  auto st = reader.db().prepare(
      "SELECT coalesce(start_s, -1), coalesce(end_s, -1), status FROM pod WHERE run_id = 1 "
      "ORDER BY start_s, pod");
  while (st.step()) {
    CHECK(st.column_text(2) == "completed");
    o.runs.emplace_back(st.column_double(0), st.column_double(1));
  }
  return o;
}

// The most pods running at any instant.
int most_at_once(const std::vector<std::pair<double, double>>& runs) {
  int most = 0;
  for (const auto& [start, end] : runs) {
    int n = 0;
    for (const auto& [s, e] : runs)
      n += s <= start && start < e ? 1 : 0;
    most = std::max(most, n);
  }
  return most;
}

}  // namespace

TEST_SUITE("scenario") {
  TEST_CASE("DRA devices mapped by deviceClassMappings are charged to quota") {
    SUBCASE("one GPU a pod, quota 2: two at a time although the node has 8") {
      const Outcome o = run(2, "exactly: {deviceClassName: gpu.nvidia.com}");
      CAPTURE(o.err);
      REQUIRE(o.exit_code == 0);
      REQUIRE(o.runs.size() == 5);
      CHECK(o.runs[0].first == 0.0);
      CHECK(o.runs[1].first == 0.0);
      CHECK(o.runs[2].first > 0.0);
      CHECK(most_at_once(o.runs) == 2);
    }
    SUBCASE("two GPUs a pod (count: 2), quota 4: two at a time") {
      const Outcome o = run(4, "exactly: {deviceClassName: gpu.nvidia.com, count: 2}");
      CAPTURE(o.err);
      REQUIRE(o.exit_code == 0);
      REQUIRE(o.runs.size() == 5);
      CHECK(most_at_once(o.runs) == 2);
    }
    SUBCASE("quota 8: the node limits, all five at once") {
      const Outcome o = run(8, "exactly: {deviceClassName: gpu.nvidia.com}");
      CAPTURE(o.err);
      REQUIRE(o.exit_code == 0);
      REQUIRE(o.runs.size() == 5);
      CHECK(most_at_once(o.runs) == 5);
    }
  }

  TEST_CASE("a claim Kueue cannot charge is refused at the pod that makes it") {
    // Kueue leaves such a workload inadmissible for good; capsim refuses the files instead.
    struct Case {
      const char* name;
      const char* request;
      const char* message;
    };
    const Case cases[] = {
        {"an unmapped DeviceClass", "exactly: {deviceClassName: mig.nvidia.com}",
         "DeviceClass mig.nvidia.com is not mapped in deviceClassMappings"},
        {"allocationMode All", "exactly: {deviceClassName: gpu.nvidia.com, allocationMode: All}",
         "allocationMode All is not supported"},
        {"firstAvailable", "firstAvailable: [{name: any, deviceClassName: gpu.nvidia.com}]",
         "firstAvailable device selection is not supported"},
    };
    for (const Case& c : cases) {
      CAPTURE(c.name);
      const Outcome o = run(2, c.request);
      CAPTURE(o.err);
      CHECK(o.exit_code == 65);
      CHECK(o.err.find("jobs.yaml:2:") != std::string::npos);  // the first Job, p0
      CHECK(o.err.find("ResourceClaimTemplate gpus whose request gpu") != std::string::npos);
      CHECK(o.err.find(c.message) != std::string::npos);
      CHECK(o.err.find("inadmissible") != std::string::npos);
    }
  }
}

}  // namespace capsim
