// Extended resources served through DRA (KEP-5004, DRAExtendedResource) end to end, through the
// real binary: a plain `nvidia.com/gpu` Job on a `dra: true` pool runs on the devices the
// modelled gpu.nvidia.com driver publishes, because the driver's DeviceClass gpu.nvidia.com has
// `extendedResourceName: nvidia.com/gpu`; next to a device-plugin node, the pod takes whichever
// node can serve it, and the pending message says which way each node was tried.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>
#include <vector>

#include "fixtures/cli_run.hpp"
#include "reports/run_reader.hpp"

namespace capsim {

namespace {

struct PodRow {
  std::string pod, status, node, devices;
  double start = -1, end = -1;
};

struct Outcome {
  int exit_code = -1;
  std::string err;
  std::vector<PodRow> pods;                      // by start, then name
  std::vector<std::vector<std::string>> claims;  // pod_claim: pod, claim, request, device, gpu
  std::vector<std::pair<std::string, std::string>> pending;  // (pod, detail) of pending events
};

Outcome run(const std::string& scenario, const std::string& manifests) {
  testing::ScratchDir dir("dra-extended");
  testing::write_file(dir.file("scenario.yaml"), scenario);
  testing::write_file(dir.file("m.yaml"), manifests);
  const auto r = testing::run_capsim(
      "run '" + dir.file("scenario.yaml") + "' -o '" + dir.file("out.db") + "'", dir);
  Outcome o{r.exit_code, r.err, {}, {}, {}};
  if (r.exit_code != 0) return o;
  RunReader reader(dir.file("out.db"));
  auto st = reader.db().prepare(
      "SELECT pod, status, coalesce(node, ''), coalesce(devices, ''), coalesce(start_s, -1), "
      "coalesce(end_s, -1) FROM pod WHERE run_id = 1 ORDER BY start_s, pod");
  while (st.step()) {
    o.pods.push_back({st.column_text(0), st.column_text(1), st.column_text(2), st.column_text(3),
                      st.column_double(4), st.column_double(5)});
  }
  auto cl = reader.db().prepare(
      "SELECT pod, claim, coalesce(request, ''), coalesce(device, ''), coalesce(gpu, -1) "
      "FROM pod_claim WHERE run_id = 1 ORDER BY pod, device");
  while (cl.step()) {
    o.claims.push_back({cl.column_text(0), cl.column_text(1), cl.column_text(2), cl.column_text(3),
                        std::to_string(cl.column_int64(4))});
  }
  auto ev = reader.db().prepare(
      "SELECT pod, detail FROM event WHERE run_id = 1 AND kind = 'pending' ORDER BY seq");
  while (ev.step())
    o.pending.emplace_back(ev.column_text(0), ev.column_text(1));
  return o;
}

std::string pending_of(const Outcome& o, const std::string& pod) {
  for (const auto& [p, d] : o.pending)
    if (p == pod) return d;
  return "";
}

// A Job of `pods` pods, all at once, each asking for `gpus` of `resource` in its limits.
std::string job(const std::string& name, int pods, int gpus,
                const std::string& resource = "nvidia.com/gpu") {
  return fmt::format(R"(---
apiVersion: batch/v1
kind: Job
metadata: {{name: {0}}}
spec:
  parallelism: {1}
  completions: {1}
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: trainer
        resources:
          limits: {{{3}: {2}}}
)",
                     name, pods, gpus, resource);
}

}  // namespace

TEST_SUITE("scenario") {
  TEST_CASE("a plain nvidia.com/gpu Job runs on a DRA pool through gpu.nvidia.com") {
    // One H100 node with 2 GPUs published through DRA; 3 pods of 1 GPU (1h of work on the
    // reference GPU, less on an H100): two run at once (gpu-0, gpu-1), the third when the first
    // ends, on the GPU it frees.
    const std::string scenario = R"(name: dra-extended
simulation: {horizon: 24h, paranoid: true}
cluster:
  pools:
    - {name: dra, count: 1, gpu: {model: H100-80GB, count: 2}, cpu: 64, memory: 512Gi, dra: true}
manifests: [m.yaml]
durations:
  - {match: {kind: Job}, duration: 1h}
)";
    const Outcome o = run(scenario, job("train", 3, 1));
    CAPTURE(o.err);
    REQUIRE(o.exit_code == 0);
    REQUIRE(o.pods.size() == 3);
    for (const PodRow& p : o.pods) {
      CAPTURE(p.pod);
      CHECK(p.status == "completed");
      CHECK(p.node == "dra-0");
      CHECK(p.devices.find("claims extended resources: gpu-") != std::string::npos);
    }
    CHECK(o.pods[0].start == 0.0);
    CHECK(o.pods[1].start == 0.0);
    CHECK(o.pods[2].start > 0.0);
    CHECK(o.pods[2].start == o.pods[0].end);
    // The first two hold one GPU each; the third gets the one freed first (gpu-0).
    CHECK(o.pods[0].devices == "gpu:0 claims extended resources: gpu-0 (nvidia.com/gpu)");
    CHECK(o.pods[1].devices == "gpu:1 claims extended resources: gpu-1 (nvidia.com/gpu)");
    CHECK(o.pods[2].devices == "gpu:0 claims extended resources: gpu-0 (nvidia.com/gpu)");
    // pod_claim: one row per device of the scheduler's claim, named after the resource.
    REQUIRE(o.claims.size() == 3);
    for (const auto& row : o.claims) {
      CHECK(row[1] == "(extended resources)");
      CHECK(row[2] == "nvidia.com/gpu");
    }
    // The third pod waited because both devices were in use, and says so.
    CHECK(pending_of(o, o.pods[2].pod) ==
          "0/1 nodes are available: 1 cannot allocate all claims (extended resource "
          "nvidia.com/gpu (device class gpu.nvidia.com): all matching devices are in use). "
          "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming "
          "pod.");
  }

  TEST_CASE("next to a device-plugin node, each node is tried its own way") {
    // plugin-0 advertises 1 nvidia.com/gpu (device plugin); dra-0 publishes 2 GPUs through DRA.
    // A 2-GPU pod fits only on dra-0 (through DRA); a 4-GPU pod fits nowhere, and its message
    // gives each node's reason: Insufficient nvidia.com/gpu on the plugin node, too few
    // matching devices on the DRA node.
    const std::string scenario = R"(name: dra-extended-mixed
simulation: {horizon: 24h, paranoid: true}
cluster:
  pools:
    - {name: plugin, count: 1, gpu: {model: H100-80GB, count: 1}, cpu: 128, memory: 1Ti}
    - {name: dra, count: 1, gpu: {model: H100-80GB, count: 2}, cpu: 64, memory: 512Gi, dra: true}
manifests: [m.yaml]
durations:
  - {match: {kind: Job}, duration: 1h}
)";
    const Outcome o = run(scenario, job("one", 1, 1) + job("two", 1, 2) + job("four", 1, 4));
    CAPTURE(o.err);
    REQUIRE(o.exit_code == 0);
    REQUIRE(o.pods.size() == 3);
    std::string one, two, four;
    for (const PodRow& p : o.pods) {
      if (p.pod.starts_with("one")) one = p.node + " " + p.devices;
      if (p.pod.starts_with("two")) two = p.node + " " + p.devices;
      if (p.pod.starts_with("four")) four = p.status + " " + p.node;
    }
    // "one" fits both nodes; LeastAllocated prefers the plugin node (twice the cpu and memory
    // free), where it takes the classic way: a device-plugin unit, no claim.
    CHECK(one == "plugin-0 gpu:0");
    CHECK(two ==
          "dra-0 gpu:0,1 claims extended resources: gpu-0 (nvidia.com/gpu), gpu-1 "
          "(nvidia.com/gpu)");
    CHECK(four == "unschedulable ");
    std::string four_pod;
    for (const PodRow& p : o.pods)
      if (p.pod.starts_with("four")) four_pod = p.pod;
    const std::string msg = pending_of(o, four_pod);
    CAPTURE(msg);
    CHECK(msg.find("0/2 nodes are available: ") == 0);
    CHECK(msg.find("1 Insufficient nvidia.com/gpu") != std::string::npos);
    CHECK(msg.find("1 cannot allocate all claims (extended resource nvidia.com/gpu (device class "
                   "gpu.nvidia.com): the node has fewer matching devices than the 4 it asks "
                   "for)") != std::string::npos);
  }

  TEST_CASE("a DeviceClass is an extended resource by its implicit name, and a named one wins") {
    // Two manifest classes name example.com/h100: the one read last (h100-last) serves it, as
    // upstream takes the class created last. deviceclass.resource.kubernetes.io/h100-first
    // reaches the other by its implicit name.
    const std::string scenario = R"(name: dra-extended-classes
simulation: {horizon: 24h, paranoid: true}
cluster:
  pools:
    - {name: dra, count: 1, gpu: {model: H100-80GB, count: 2}, cpu: 64, memory: 512Gi, dra: true}
manifests: [m.yaml]
durations:
  - {match: {kind: Job}, duration: 1h}
)";
    const std::string classes = R"(---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: h100-first}
spec:
  extendedResourceName: example.com/h100
  selectors:
  - cel: {expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: h100-last}
spec:
  extendedResourceName: example.com/h100
  selectors:
  - cel: {expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}
)";
    const Outcome o =
        run(scenario, classes + job("named", 1, 1, "example.com/h100") +
                          job("implicit", 1, 1, "deviceclass.resource.kubernetes.io/h100-first"));
    CAPTURE(o.err);
    REQUIRE(o.exit_code == 0);
    REQUIRE(o.pods.size() == 2);
    for (const PodRow& p : o.pods) {
      CAPTURE(p.pod);
      CHECK(p.status == "completed");
      CHECK(p.node == "dra-0");
      CHECK(p.start == 0.0);
    }
    // Both ran at once, one device each.
    CHECK(o.pods[0].devices != o.pods[1].devices);
  }

  TEST_CASE("a pod with a claim and an extended resource gets both, the claim's first") {
    // Each pod claims one GPU through a template and asks for nvidia.com/gpu: 1 besides. On a
    // 2-GPU DRA node the first pod's claim takes gpu-0 and the extended-resource claim, allocated
    // after it, gpu-1; the second pod needs two more GPUs and waits for the first to end.
    const std::string scenario = R"(name: dra-extended-both
simulation: {horizon: 24h, paranoid: true}
cluster:
  pools:
    - {name: dra, count: 1, gpu: {model: H100-80GB, count: 2}, cpu: 64, memory: 512Gi, dra: true}
manifests: [m.yaml]
durations:
  - {match: {kind: Job}, duration: 1h}
)";
    const std::string m = R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one}
spec:
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: both}
spec:
  parallelism: 2
  completions: 2
  template:
    spec:
      restartPolicy: Never
      resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]
      containers:
      - name: c
        image: trainer
        resources:
          limits: {nvidia.com/gpu: 1}
          claims: [{name: gpu}]
)";
    const Outcome o = run(scenario, m);
    CAPTURE(o.err);
    REQUIRE(o.exit_code == 0);
    REQUIRE(o.pods.size() == 2);
    CHECK(o.pods[0].start == 0.0);
    CHECK(o.pods[0].devices ==
          "gpu:0,1 claims gpu: gpu-0 (gpu); extended resources: gpu-1 (nvidia.com/gpu)");
    CHECK(o.pods[1].start == o.pods[0].end);
    CHECK(o.pods[1].devices == o.pods[0].devices);
  }

  TEST_CASE("a bad extendedResourceName is refused at its line, exit 65") {
    testing::ScratchDir dir("dra-extended-bad");
    testing::write_file(dir.file("scenario.yaml"), R"(name: bad
cluster:
  pools:
    - {name: dra, count: 1, gpu: {model: H100-80GB, count: 2}, cpu: 64, memory: 512Gi, dra: true}
manifests: [m.yaml]
)");
    testing::write_file(dir.file("m.yaml"), R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpus}
spec:
  extendedResourceName: kubernetes.io/gpu
)");
    const auto r = testing::run_capsim("validate '" + dir.file("scenario.yaml") + "'", dir);
    CHECK(r.exit_code == 65);
    CHECK(r.err.find("m.yaml:5:25: spec.extendedResourceName: 'kubernetes.io/gpu' is not an "
                     "extended resource name") != std::string::npos);
    CHECK(r.err.find("deviceclass.resource.kubernetes.io/gpus") != std::string::npos);
  }
}

}  // namespace capsim
