// Kueue resources.deviceClassMappings end to end, through the real binary: GPUs a DRA driver
// publishes, claimed through ResourceClaimTemplates and charged to a ClusterQueue whose only
// quota is the mapping's resource (Kueue's pkg/dra/claims.go counts one unit per device).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

#include "fixtures/kueue_jobs.hpp"

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
  return testing::single_queue("example.com/gpus", std::to_string(quota)) + fmt::format(R"(---
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
                                                                                        request);
}

// Five Jobs of one pod, each claiming the template `gpus`.
std::string jobs() {
  std::string out;
  for (int i = 0; i < 5; ++i) {
    out +=
        testing::queued_job({fmt::format("p{}", i), "", "", "",
                             R"(      resourceClaims: [{name: gpu, resourceClaimTemplateName: gpus}]
      containers:
      - name: c
        image: trainer
        resources:
          claims: [{name: gpu}]
)"});
  }
  return out;
}

testing::PodRuns run(int quota, const std::string& request) {
  testing::ScratchDir dir("kueue-dra-quota");
  testing::write_file(dir.file("scenario.yaml"), kScenario);
  testing::write_file(dir.file("config.yaml"), kConfig);
  testing::write_file(dir.file("queues.yaml"), queues(quota, request));
  testing::write_file(dir.file("jobs.yaml"), jobs());
  testing::PodRuns r = testing::run_pods(dir);
  for (const std::string& status : r.statuses)
    CHECK(status == "completed");
  return r;
}

}  // namespace

TEST_SUITE("scenario") {
  TEST_CASE("DRA devices mapped by deviceClassMappings are charged to quota") {
    SUBCASE("one GPU a pod, quota 2: two at a time although the node has 8") {
      const testing::PodRuns o = run(2, "exactly: {deviceClassName: gpu.nvidia.com}");
      CAPTURE(o.err);
      REQUIRE(o.exit_code == 0);
      REQUIRE(o.runs.size() == 5);
      CHECK(o.runs[0].first == 0.0);
      CHECK(o.runs[1].first == 0.0);
      CHECK(o.runs[2].first > 0.0);
      CHECK(testing::most_at_once(o.runs) == 2);
    }
    SUBCASE("two GPUs a pod (count: 2), quota 4: two at a time") {
      const testing::PodRuns o = run(4, "exactly: {deviceClassName: gpu.nvidia.com, count: 2}");
      CAPTURE(o.err);
      REQUIRE(o.exit_code == 0);
      REQUIRE(o.runs.size() == 5);
      CHECK(testing::most_at_once(o.runs) == 2);
    }
    SUBCASE("quota 8: the node limits, all five at once") {
      const testing::PodRuns o = run(8, "exactly: {deviceClassName: gpu.nvidia.com}");
      CAPTURE(o.err);
      REQUIRE(o.exit_code == 0);
      REQUIRE(o.runs.size() == 5);
      CHECK(testing::most_at_once(o.runs) == 5);
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
      const testing::PodRuns o = run(2, c.request);
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
