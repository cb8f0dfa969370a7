// Dynamic Resource Allocation end to end, with the DeviceClass and claim examples of the
// Kubernetes and NVIDIA documentation: a B200 class matching productName by regex, "at least
// 80Gi of memory", matchAttribute on the same PCIe root, firstAvailable falling back from B200 to
// A100, allocationMode All, a claim shared by two pods, MIG partitions that exclude their GPU,
// and classic and DRA pods in one cluster. Every run is paranoid: the cluster's invariants
// (devices held by claims, shared counters never overdrawn, MIG instances never overlapping) are
// checked after every event.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "fixtures/dra_run.hpp"
#include "fixtures/memory_recorder.hpp"
#include "reports/run_reader.hpp"
#include "tools/capsim/runner.hpp"

using namespace capsim;
using capsim::testing::claim_pod;
using capsim::testing::gpu_template;
using capsim::testing::load_error;
using capsim::testing::MemoryRecorder;
using capsim::testing::Run;
using capsim::testing::run_files;
namespace fs = std::filesystem;

namespace {

const char* kB200Class = R"(---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: b200.nvidia.com
spec:
  selectors:
  - cel:
      expression: device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'
  - cel:
      expression: device.attributes['gpu.nvidia.com'].productName.matches('(?i)^nvidia b200$')
)";

}  // namespace

TEST_SUITE("scenario") {
  TEST_CASE("a B200 DeviceClass matching productName by regex places claims only on B200 GPUs") {
    const std::string scenario = R"(name: b200-class
cluster:
  pools:
    - {name: a100, count: 1, gpu: {model: A100-80GB, count: 8}, cpu: 64, memory: 512Gi, dra: true}
    - {name: b200, count: 1, gpu: {model: B200, count: 8}, cpu: 64, memory: 512Gi, dra: true}
manifests: [m.yaml]
)";
    std::string m = kB200Class;
    m += gpu_template("eight-b200",
                      "          deviceClassName: b200.nvidia.com\n          count: 8\n");
    m += claim_pod("first", {"{name: gpu, resourceClaimTemplateName: eight-b200}"});
    m += claim_pod("second", {"{name: gpu, resourceClaimTemplateName: eight-b200}"}, "1m");
    Run r = run_files(scenario, {{"m.yaml", m}});
    CHECK(r.node_of("first") == "b200-0");
    // All eight of the node's GPUs, in device order.
    CHECK(r.event("first", "start").find("claims gpu: gpu-0 (gpu), gpu-1 (gpu), gpu-2 (gpu)") !=
          std::string::npos);
    CHECK(r.event("first", "start").find("gpu-7 (gpu)") != std::string::npos);
    // The second waits for the first: the A100 node has nothing the class matches, the B200 node
    // nothing free. Both reasons name the claim and the request.
    const std::string pending = r.event("second", "pending");
    CHECK(pending.find("1 cannot allocate all claims (claim gpu, request gpu: all matching devices "
                       "are in use)") != std::string::npos);
    CHECK(pending.find("1 cannot allocate all claims (claim gpu, request gpu: no device on the "
                       "node matches its selectors)") != std::string::npos);
    CHECK(r.node_of("second") == "b200-0");
    CHECK(r.pod("second").start == r.pod("first").end);
  }

  TEST_CASE("'at least 80Gi of memory' takes A100-80GB and B200 GPUs but not H100 80GB ones") {
    // NVML reports 81559 MiB for an H100 80GB, which is less than 80 GiB (81920 MiB); an
    // A100-80GB's 81920 MiB is exactly 80 GiB.
    const std::string scenario = R"(name: at-least-80gi
cluster:
  pools:
    - {name: a40, count: 1, gpu: {model: A100-40GB, count: 2}, cpu: 64, memory: 512Gi, dra: true}
    - {name: h100, count: 1, gpu: {model: H100-80GB, count: 2}, cpu: 64, memory: 512Gi, dra: true}
    - {name: a80, count: 1, gpu: {model: A100-80GB, count: 1}, cpu: 64, memory: 512Gi, dra: true}
manifests: [m.yaml]
)";
    std::string m = gpu_template("big", R"(          deviceClassName: gpu.nvidia.com
          selectors:
          - cel:
              expression: device.capacity['gpu.nvidia.com'].memory.compareTo(quantity("80Gi")) >= 0
)");
    m += claim_pod("p1", {"{name: gpu, resourceClaimTemplateName: big}"});
    m += claim_pod("p2", {"{name: gpu, resourceClaimTemplateName: big}"});
    Run r = run_files(scenario, {{"m.yaml", m}});
    CHECK(r.node_of("p1") == "a80-0");
    CHECK(r.pod("p2").start == r.pod("p1").end);  // waits for the only qualifying GPU
    const std::string pending = r.event("p2", "pending");
    CHECK(
        pending.find("2 cannot allocate all claims (claim gpu, request gpu: no device on the node "
                     "matches its selectors)") != std::string::npos);
    CHECK(pending.rfind("0/3 nodes are available", 0) == 0);
  }

  TEST_CASE("matchAttribute on the PCIe root backtracks past a GPU whose root partner is taken") {
    // Two GPUs per PCIe root: {0,1}, {2,3}, ... The first pod takes gpu-0. First fit for two GPUs
    // would start with gpu-1, whose root partner is gone; the allocator backtracks to gpu-2/3.
    const std::string scenario = R"(name: pcie-root
cluster:
  pools:
    - {name: n, count: 1, gpu: {model: H100-80GB, count: 8}, cpu: 64, memory: 512Gi, dra: {gpus_per_pcie_root: 2}}
manifests: [m.yaml]
)";
    std::string m = gpu_template("one", "          deviceClassName: gpu.nvidia.com\n");
    m += R"(---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: pair-on-one-root
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly:
          deviceClassName: gpu.nvidia.com
          count: 2
      constraints:
      - requests: [gpus]
        matchAttribute: resource.kubernetes.io/pcieRoot
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: four-on-one-root
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly:
          deviceClassName: gpu.nvidia.com
          count: 4
      constraints:
      - matchAttribute: resource.kubernetes.io/pcieRoot
)";
    m += claim_pod("single", {"{name: gpu, resourceClaimTemplateName: one}"});
    m += claim_pod("pair", {"{name: gpus, resourceClaimTemplateName: pair-on-one-root}"}, "1m");
    m += claim_pod("four", {"{name: gpus, resourceClaimTemplateName: four-on-one-root}"}, "2m");
    Run r = run_files(scenario, {{"m.yaml", m}});
    CHECK(r.event("single", "start").find("gpu-0 (gpu)") != std::string::npos);
    CHECK(r.event("pair", "start").find("claims gpus: gpu-2 (gpus), gpu-3 (gpus)") !=
          std::string::npos);
    // No root has four GPUs: the claim can never be met, and the message says why.
    CHECK(r.pod("four").status == "unschedulable");
    CHECK(r.event("four", "pending")
              .find("cannot allocate all claims (claim gpus: its requests cannot be satisfied "
                    "together (no devices of the node meet its constraints))") !=
          std::string::npos);
  }

  TEST_CASE("firstAvailable falls back from B200 to A100 when no B200 is free") {
    const std::string scenario = R"(name: first-available
cluster:
  pools:
    - {name: b200, count: 1, gpu: {model: B200, count: 1}, cpu: 64, memory: 512Gi, dra: true}
    - {name: a100, count: 1, gpu: {model: A100-80GB, count: 2}, cpu: 64, memory: 512Gi, dra: true}
manifests: [m.yaml]
)";
    std::string m = R"(---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: b200-else-a100
spec:
  spec:
    devices:
      requests:
      - name: gpu
        firstAvailable:
        - name: b200
          deviceClassName: gpu.nvidia.com
          selectors:
          - cel:
              expression: device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('^.*b200.*$')
        - name: a100
          deviceClassName: gpu.nvidia.com
          selectors:
          - cel:
              expression: device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('^.*a100.*$')
)";
    m += claim_pod("p1", {"{name: gpu, resourceClaimTemplateName: b200-else-a100}"});
    m += claim_pod("p2", {"{name: gpu, resourceClaimTemplateName: b200-else-a100}"}, "1m");
    m += claim_pod("p3", {"{name: gpu, resourceClaimTemplateName: b200-else-a100}"}, "2m");
    m += claim_pod("p4", {"{name: gpu, resourceClaimTemplateName: b200-else-a100}"}, "3m");
    Run r = run_files(scenario, {{"m.yaml", m}});
    CHECK(r.node_of("p1") == "b200-0");
    CHECK(r.event("p1", "start").find("gpu-0 (gpu/b200)") != std::string::npos);
    CHECK(r.node_of("p2") == "a100-0");
    CHECK(r.event("p2", "start").find("gpu-0 (gpu/a100)") != std::string::npos);
    CHECK(r.event("p3", "start").find("gpu-1 (gpu/a100)") != std::string::npos);
    // Nothing left: both alternatives are named in the reason.
    CHECK(r.event("p4", "pending")
              .find("no subrequest can be satisfied (b200: all matching devices "
                    "are in use; a100: no device on the node matches its "
                    "selectors)") != std::string::npos);
  }

  TEST_CASE("the Kubernetes docs' allocationMode All claim is shared by two pods on one node") {
    // content/en/examples/dra/resourceclaim.yaml and deviceclass.yaml, with a ResourceSlice of the
    // example driver: two 64Gi GPUs and a 32Gi one on n1, one 64Gi GPU on n2.
    const std::string scenario = R"(name: all-shared
cluster:
  nodes:
    - {name: n1, cpu: 64, memory: 512Gi}
    - {name: n2, cpu: 64, memory: 512Gi}
manifests: [m.yaml]
)";
    std::string m = R"(---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: example-device-class
spec:
  selectors:
  - cel:
      expression: |-
        device.driver == "driver.example.com"
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: example-resource-claim
spec:
  devices:
    requests:
    - name: single-gpu-claim
      exactly:
        deviceClassName: example-device-class
        allocationMode: All
        selectors:
        - cel:
            expression: |-
                device.attributes["driver.example.com"].type == "gpu" &&
                device.capacity["driver.example.com"].memory == quantity("64Gi")
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: n1-driver.example.com
spec:
  driver: driver.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: gpu-0, attributes: {type: {string: gpu}}, capacity: {memory: {value: 64Gi}}}
  - {name: gpu-1, attributes: {type: {string: gpu}}, capacity: {memory: {value: 32Gi}}}
  - {name: gpu-2, attributes: {type: {string: gpu}}, capacity: {memory: {value: 64Gi}}}
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata:
  name: n2-driver.example.com
spec:
  driver: driver.example.com
  nodeName: n2
  pool: {name: n2, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    basic:
      attributes: {type: {string: gpu}}
      capacity: {memory: {value: 64Gi}}
)";
    m += claim_pod("a", {"{name: shared, resourceClaimName: example-resource-claim}"}, "0s", "1h");
    m += claim_pod("b", {"{name: shared, resourceClaimName: example-resource-claim}"}, "10m", "1h");
    m += claim_pod("c", {"{name: shared, resourceClaimName: example-resource-claim}"}, "3h", "1h");
    Run r = run_files(scenario, {{"m.yaml", m}});
    // Node order is the tie-break: n1 first. All takes both 64Gi devices there, not the 32Gi one.
    CHECK(r.node_of("a") == "n1");
    CHECK(r.event("a", "start")
              .find("claims shared: gpu-0 (single-gpu-claim), gpu-2 "
                    "(single-gpu-claim)") != std::string::npos);
    CHECK(r.event("a", "allocate").find("claim default/example-resource-claim") !=
          std::string::npos);
    // b joins the allocated claim, on its node, without a new allocation.
    CHECK(r.node_of("b") == "n1");
    CHECK(r.event("b", "allocate").empty());
    CHECK(r.event("b", "start").find("gpu-0 (single-gpu-claim), gpu-2") != std::string::npos);
    // The last consumer leaving deallocates it; c allocates it afresh.
    CHECK(r.event("a", "deallocate").empty());
    CHECK(r.event("b", "deallocate") == "claim default/example-resource-claim");
    CHECK_FALSE(r.event("c", "allocate").empty());
  }

  TEST_CASE("a slice without pool.generation is generation 0 and loses to a newer one") {
    // ResourcePool.generation is an int64 the API server decodes as 0 when left out. Pool n1 has
    // a generation-less slice (devices old-0, old-1) and a generation-2 slice (dev-0): only the
    // generation-2 device is used, so of two one-device pods one runs (on dev-0) and the other
    // waits for it. Pool n2 has only generation-less slices, two of a resourceSliceCount of 2:
    // both are used, so its two devices serve two pods at once.
    const std::string scenario = R"(name: generations
cluster:
  nodes:
    - {name: n1, cpu: 64, memory: 512Gi, labels: {pool: n1}}
    - {name: n2, cpu: 64, memory: 512Gi, labels: {pool: n2}}
manifests: [m.yaml]
)";
    std::string m = R"(---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: example}
spec:
  selectors:
  - cel: {expression: device.driver == "driver.example.com"}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-old}
spec:
  driver: driver.example.com
  nodeName: n1
  pool: {name: n1, resourceSliceCount: 1}
  devices: [{name: old-0}, {name: old-1}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-new}
spec:
  driver: driver.example.com
  nodeName: n1
  pool: {name: n1, generation: 2, resourceSliceCount: 1}
  devices: [{name: dev-0}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n2-a}
spec:
  driver: driver.example.com
  nodeName: n2
  pool: {name: n2, resourceSliceCount: 2}
  devices: [{name: a-0}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n2-b}
spec:
  driver: driver.example.com
  nodeName: n2
  pool: {name: n2, resourceSliceCount: 2}
  devices: [{name: b-0}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one}
spec:
  spec:
    devices:
      requests:
      - {name: dev, exactly: {deviceClassName: example}}
)";
    // p1, p2 pinned to n1, q1, q2 to n2 (by label); one device each, 1h.
    auto pinned = [](const std::string& name, const std::string& selector) {
      std::string pod = claim_pod(name, {"{name: d, resourceClaimTemplateName: one}"});
      pod.replace(pod.find("spec:\n  containers:"), 5, "spec:\n  nodeSelector: " + selector);
      return pod;
    };
    m += pinned("p1", "{pool: n1}");
    m += pinned("p2", "{pool: n1}");
    m += pinned("q1", "{pool: n2}");
    m += pinned("q2", "{pool: n2}");
    Run r = run_files(scenario, {{"m.yaml", m}});
    CHECK(r.event("p1", "start").find("claims d: dev-0 (dev)") != std::string::npos);
    CHECK(r.node_of("p2") == "n1");
    CHECK(r.event("p2", "start").find("claims d: dev-0 (dev)") != std::string::npos);
    // p2 waits the full hour p1 holds dev-0: old-0 and old-1 are of the ignored generation 0.
    CHECK(r.pod("p2").start - r.pod("p1").start == from_seconds(3600));
    CHECK(r.event("q1", "start").find("claims d: a-0 (dev)") != std::string::npos);
    CHECK(r.event("q2", "start").find("claims d: b-0 (dev)") != std::string::npos);
    CHECK(r.pod("q2").start == r.pod("q1").start);
    bool warned = false;
    for (const std::string& w : r.warnings) {
      if (w.find("m.yaml:9:1: pool driver.example.com/n1 has a newer generation (2); this slice "
                 "is ignored") != std::string::npos) {
        warned = true;
      }
    }
    CAPTURE(r.warnings);
    CHECK(warned);
  }

  TEST_CASE("a device with allowMultipleAllocations and no capacity serves two claims at once") {
    // A shareable device without capacities: every claim may have it (KEP-5075). Node n1 has one
    // such device; two pods with claims of their own, both arriving at 0s for 1h, start
    // together on it (an exclusive device would make one wait 1h).
    const std::string scenario = R"(name: shareable
cluster:
  nodes:
    - {name: n1, cpu: 64, memory: 512Gi}
manifests: [m.yaml]
)";
    std::string m = R"(---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: example}
spec:
  selectors:
  - cel: {expression: device.driver == "driver.example.com" && device.allowMultipleAllocations}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1}
spec:
  driver: driver.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: shared-0, allowMultipleAllocations: true}
  - {name: exclusive-0}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one}
spec:
  spec:
    devices:
      requests:
      - {name: dev, exactly: {deviceClassName: example}}
)";
    m += claim_pod("a", {"{name: d, resourceClaimTemplateName: one}"});
    m += claim_pod("b", {"{name: d, resourceClaimTemplateName: one}"});
    // c's claim asks for a capacity the device does not have: no device can serve it (upstream:
    // capacity.requests is a filter as well as what an allocation consumes).
    m += R"(---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: with-capacity}
spec:
  spec:
    devices:
      requests:
      - name: dev
        exactly:
          deviceClassName: example
          capacity: {requests: {bandwidth: 1G}}
)";
    m += claim_pod("c", {"{name: d, resourceClaimTemplateName: with-capacity}"});
    Run r = run_files(scenario, {{"m.yaml", m}});
    CHECK(r.event("a", "start").find("claims d: shared-0 (dev)") != std::string::npos);
    CHECK(r.event("b", "start").find("claims d: shared-0 (dev)") != std::string::npos);
    CHECK(r.pod("a").start == 0);
    CHECK(r.pod("b").start == 0);
    CHECK(r.event("c", "pending").find("no matching device can serve the capacity it requests") !=
          std::string::npos);
  }

  TEST_CASE("two pods sharing a one-GPU claim time-share the GPU") {
    // NVIDIA's gpu-test2 pattern: one ResourceClaim, two pods. Alone, a pod with util 1 takes its
    // duration; together each gets half the GPU minus the 10 % context-switch overhead:
    // t = 1/2 x 0.9 = 0.45, so 1h of work at rate 0.45 while both run.
    const std::string scenario = R"(name: shared-gpu
cluster:
  pools:
    - {name: n, count: 1, gpu: {model: A100-80GB, count: 2}, cpu: 64, memory: 512Gi, dra: true}
manifests: [m.yaml]
)";
    std::string m = R"(---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: single-gpu
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.nvidia.com
)";
    m += claim_pod("alone", {"{name: gpu, resourceClaimTemplateName: single}"}, "0s", "1h");
    m += gpu_template("single", "          deviceClassName: gpu.nvidia.com\n");
    // Each states its memory use, so the two fit on the 80 GB GPU together (without a stated use
    // a pod is taken to use all the memory it can see, and the second would be OOM-killed).
    m += claim_pod("x", {"{name: gpu, resourceClaimName: single-gpu}"}, "0s", "1h", "1", "30Gi");
    m += claim_pod("y", {"{name: gpu, resourceClaimName: single-gpu}"}, "0s", "1h", "1", "30Gi");
    Run r = run_files(scenario, {{"m.yaml", m}});
    CHECK(r.seconds("alone") == doctest::Approx(3600));
    // Both share gpu-1 (gpu-0 went to `alone`), on the same node.
    CHECK(r.event("x", "start").find("gpu-1 (gpu)") != std::string::npos);
    CHECK(r.event("y", "start").find("gpu-1 (gpu)") != std::string::npos);
    CHECK(r.seconds("x") == doctest::Approx(3600 / 0.45).epsilon(0.001));
    CHECK(r.seconds("y") == doctest::Approx(3600 / 0.45).epsilon(0.001));
  }

  TEST_CASE("MIG partitions of a partitionable GPU exclude the whole GPU and each other") {
    const std::string scenario = R"(name: partitions
cluster:
  pools:
    - {name: n, count: 1, gpu: {model: A100-80GB, count: 2}, cpu: 64, memory: 512Gi, dra: {partitionable: true}}
manifests: [m.yaml]
)";
    std::string m = gpu_template("mig-3g", R"(          deviceClassName: mig.nvidia.com
          selectors:
          - cel:
              expression: device.attributes['gpu.nvidia.com'].profile == '3g.40gb'
)");
    m += gpu_template("whole", "          deviceClassName: gpu.nvidia.com\n");
    m += claim_pod("m1", {"{name: mig, resourceClaimTemplateName: mig-3g}"}, "0s", "2h");
    m += claim_pod("m2", {"{name: mig, resourceClaimTemplateName: mig-3g}"}, "1m", "2h");
    m += claim_pod("w1", {"{name: gpu, resourceClaimTemplateName: whole}"}, "2m", "2h");
    m += claim_pod("w2", {"{name: gpu, resourceClaimTemplateName: whole}"}, "3m", "1h");
    m += claim_pod("m3", {"{name: mig, resourceClaimTemplateName: mig-3g}"}, "4m", "1h");
    Run r = run_files(scenario, {{"m.yaml", m}});
    // Both 3g.40gb partitions of GPU 0 (memory slices 0-3 and 4-7), created on allocation.
    CHECK(r.event("m1", "start") == "gpu0/mig-3g.40gb@0 [claims mig: gpu-0-mig-3g40gb-9-0 (gpu)]");
    CHECK(r.event("m2", "start") == "gpu0/mig-3g.40gb@4 [claims mig: gpu-0-mig-3g40gb-9-4 (gpu)]");
    // GPU 0 is partitioned, so the whole-GPU claim gets GPU 1 ...
    CHECK(r.event("w1", "start") == "gpu1 [claims gpu: gpu-1 (gpu)]");
    // ... and the next one waits for GPU 1 rather than take GPU 0, whose slices m1 and m2 hold.
    CHECK(r.event("w2", "start") == "gpu1 [claims gpu: gpu-1 (gpu)]");
    CHECK(r.pod("w2").start == r.pod("w1").end);
    // A third 3g finds every placement's slices taken (by m1 and m2 on GPU 0, by the whole-GPU
    // claims on GPU 1) until w2 leaves GPU 1; its partition is then created there.
    CHECK(r.event("m3", "pending").find("all matching devices are in use") != std::string::npos);
    CHECK(r.event("m3", "start") == "gpu1/mig-3g.40gb@0 [claims mig: gpu-1-mig-3g40gb-9-0 (gpu)]");
    CHECK(r.pod("m3").start == r.pod("w2").end);
  }

  TEST_CASE("classic and DRA pods share one cluster, each on the nodes that offer their devices") {
    const std::string scenario = R"(name: mixed
cluster:
  pools:
    - {name: plugin, count: 1, gpu: {model: A100-80GB, count: 1}, cpu: 64, memory: 512Gi}
    - {name: dra, count: 1, gpu: {model: A100-80GB, count: 1}, cpu: 64, memory: 512Gi, dra: true}
manifests: [m.yaml]
)";
    std::string m = gpu_template("one", "          deviceClassName: gpu.nvidia.com\n");
    m += claim_pod("claimer", {"{name: gpu, resourceClaimTemplateName: one}"});
    m += R"(---
apiVersion: v1
kind: Pod
metadata:
  name: classic
  annotations: {capsim.io/duration: 1h}
spec:
  containers:
  - name: c
    resources:
      limits: {nvidia.com/gpu: 1}
---
apiVersion: v1
kind: Pod
metadata:
  name: classic2
  annotations: {capsim.io/duration: 1h}
spec:
  containers:
  - name: c
    resources:
      limits: {nvidia.com/gpu: 1}
)";
    Run r = run_files(scenario, {{"m.yaml", m}});
    CHECK(r.node_of("claimer") == "dra-0");
    CHECK(r.node_of("classic") == "plugin-0");
    // The DRA node advertises no nvidia.com/gpu but serves it through gpu.nvidia.com's
    // extendedResourceName (KEP-5004); its one GPU is the claimer's, so the second classic pod
    // waits for a GPU, and the message says how each node was tried.
    CAPTURE(r.event("classic2", "pending"));
    CHECK(r.event("classic2", "pending")
              .find("0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 cannot allocate "
                    "all claims (extended resource nvidia.com/gpu (device class gpu.nvidia.com): "
                    "all matching devices are in use)") != std::string::npos);
    CHECK(r.pod("classic2").start == r.pod("classic").end);
    // After the run: the GPU it held and the claim's device, as while it ran.
    CHECK(r.pod("claimer").devices == "gpu:0 claims gpu: gpu-0 (gpu)");
  }

  TEST_CASE("static MIG instances of a DRA node are published as mig devices") {
    const std::string scenario = R"(name: static-mig
cluster:
  pools:
    - {name: n, count: 1, gpu: {model: H100-80GB, count: 1}, cpu: 64, memory: 512Gi, mig: all-balanced, dra: true}
manifests: [m.yaml]
)";
    std::string m = gpu_template("small", R"(          deviceClassName: mig.nvidia.com
          selectors:
          - cel:
              expression: device.capacity['gpu.nvidia.com'].memory.isLessThan(quantity('15Gi'))
)");
    m += gpu_template("whole", "          deviceClassName: gpu.nvidia.com\n");
    for (int k = 0; k < 3; ++k) {
      m += claim_pod("s" + std::to_string(k), {"{name: mig, resourceClaimTemplateName: small}"});
    }
    m += claim_pod("w", {"{name: gpu, resourceClaimTemplateName: whole}"});
    Run r = run_files(scenario, {{"m.yaml", m}});
    // all-balanced on an H100: 2x 1g.10gb + 2g.20gb + 3g.40gb; two instances are small enough.
    CHECK(r.event("s0", "start").find("gpu-0-mig-1g10gb-19-0 (gpu)") != std::string::npos);
    CHECK(r.event("s1", "start").find("gpu-0-mig-1g10gb-19-1 (gpu)") != std::string::npos);
    CHECK(r.pod("s2").start >= r.pod("s0").end);
    CHECK(r.pod("w").status == "unschedulable");  // a MIG-enabled GPU has no whole-GPU device
  }
}

TEST_SUITE("scenario") {
  TEST_CASE(
      "dra-heterogeneous: each claim lands on a GPU its selectors allow, as pod_claim shows") {
    const fs::path dir =
        fs::temp_directory_path() / ("capsim-dra-het-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path db = dir / "dra.db";
    const std::string cmd = std::string("'") + CAPSIM_BINARY + "' run '" + CAPSIM_SOURCE_DIR +
                            "/scenarios/dra-heterogeneous/scenario.yaml' -o '" + db.string() +
                            "' --quiet > /dev/null";
    const int status = std::system(cmd.c_str());
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    RunReader reader(db);
    REQUIRE(reader.runs().size() == 1);
    CHECK(reader.runs()[0].status == "complete");
    // Per Job (or bare pod) and GPU model, with the firstAvailable subrequest where there is one:
    // how many claim devices, from pod_claim joined with node and pod.
    std::map<std::string, std::map<std::string, int>> where;
    std::map<std::string, std::string> eval_device;
    std::vector<std::int64_t> nccl_gpus;
    auto st = reader.db().prepare(
        "SELECT c.pod, coalesce(p.job, c.pod), c.request, n.gpu_model, c.node || '/' || c.device, "
        "c.gpu, c.resource_claim, c.template "
        "FROM pod_claim c JOIN pod p ON p.run_id = c.run_id AND p.pod = c.pod "
        "LEFT JOIN node n ON n.run_id = c.run_id AND n.node = c.node "
        "WHERE c.run_id = 1 ORDER BY c.pod, c.gpu");
    int rows = 0;
    while (st.step()) {
      ++rows;
      const std::string pod = st.column_text(0);
      const std::string request = st.column_text(2);
      CAPTURE(pod);
      REQUIRE_FALSE(st.column_is_null(3));  // every claim was allocated
      const bool first_available = request.find('/') != std::string::npos;
      where[st.column_text(1)][st.column_text(3) + (first_available ? " " + request : "")]++;
      if (pod.rfind("eval-", 0) == 0) {
        eval_device[pod] = st.column_text(4);
        CHECK(st.column_text(6) == "default/eval-h100");
        CHECK(st.column_is_null(7));  // a shared ResourceClaim, not one from a template
      } else {
        CHECK(st.column_text(6) ==
              "default/" + pod + "-" +
                  (pod == "nccl-test" || pod.rfind("pretrain", 0) == 0 ? "gpus" : "gpu"));
      }
      if (pod == "nccl-test") nccl_gpus.push_back(st.column_int64(5));
    }
    CHECK(rows > 0);
    // B200 by product-name regex: both pretraining pods, eight B200 GPUs each.
    CHECK(where["pretrain"] == std::map<std::string, int>{{"B200", 16}});
    // Hopper by architecture.
    CHECK(where["infer"] == std::map<std::string, int>{{"H100-80GB", 10}});
    // At least 80Gi: never an H100 80GB (81559 MiB).
    CHECK(where["finetune"].count("H100-80GB") == 0);
    int finetune = 0;
    for (const auto& [model, n] : where["finetune"])
      finetune += n;
    CHECK(finetune == 12);
    // firstAvailable: B200 when one is free, else H100, and the subrequest says which.
    int burst = 0;
    for (const auto& [model, n] : where["burst"]) {
      CHECK((model == "B200 gpu/b200" || model == "H100-80GB gpu/h100"));
      burst += n;
    }
    CHECK(burst == 6);
    // More than 150Gi: only a B200.
    CHECK(where["big-kv-cache"] == std::map<std::string, int>{{"B200", 1}});
    // Two A100s behind one PCIe root (two GPUs per root: 2k and 2k+1).
    CHECK(where["nccl-test"] == std::map<std::string, int>{{"A100-80GB", 2}});
    REQUIRE(nccl_gpus.size() == 2);
    CHECK(nccl_gpus[0] / 2 == nccl_gpus[1] / 2);
    // The shared claim: both evaluation pods on the same H100.
    REQUIRE(eval_device.size() == 2);
    CHECK(eval_device["eval-a"] == eval_device["eval-b"]);
    CHECK(where["eval-a"] == std::map<std::string, int>{{"H100-80GB", 1}});
    fs::remove_all(dir);
  }
}

namespace {

// Two NVLink domains of two 4-GPU nodes (nvidia.com/gpu.clique a and b, as GFD labels MNNVL
// nodes) and one node outside any: the cluster of the ComputeDomain cases.
constexpr const char* kCliqueCluster = R"(name: compute-domains
cluster:
  pools:
    - {name: a, count: 2, gpu: {model: GB200, count: 4}, cpu: 64, memory: 512Gi,
       labels: {nvidia.com/gpu.clique: a}}
    - {name: b, count: 2, gpu: {model: GB200, count: 4}, cpu: 64, memory: 512Gi,
       labels: {nvidia.com/gpu.clique: b}}
    - {name: plain, count: 1, gpu: {model: GB200, count: 4}, cpu: 64, memory: 512Gi}
manifests: [m.yaml]
)";

// A ComputeDomain `name` and a Job of `pods` pods of `gpus` GPUs each claiming its channel, as
// NVIDIA's examples write them (the channel template made by the domain's controller).
std::string domain_job(const std::string& name, int pods, int gpus,
                       const std::string& arrival = "0s") {
  return fmt::format(R"(---
apiVersion: resource.nvidia.com/v1beta1
kind: ComputeDomain
metadata: {{name: {0}-domain}}
spec:
  numNodes: 0
  channel:
    resourceClaimTemplate: {{name: {0}-channel}}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: {0}
  annotations: {{capsim.io/arrival: {3}, capsim.io/duration: 1h}}
spec:
  parallelism: {1}
  completions: {1}
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: worker
        resources:
          limits: {{nvidia.com/gpu: {2}}}
          claims: [{{name: channel}}]
      resourceClaims:
      - {{name: channel, resourceClaimTemplateName: {0}-channel}}
)",
                     name, pods, gpus, arrival);
}

// The nodes the pods of Job `job` started on (each pod's last start).
std::map<std::string, std::string> job_nodes(const Run& r, const std::string& job) {
  std::map<std::string, std::string> out;
  for (const auto& e : r.rec.events) {
    if (e.pod == kNoPod || e.kind != "start" || r.world->pods[e.pod].job_name != job) continue;
    out[r.world->pods[e.pod].name] = r.world->nodes[e.node].name;
  }
  return out;
}

}  // namespace

TEST_SUITE("scenario") {
  TEST_CASE("a ComputeDomain's pods run inside one NVLink domain, one domain per node") {
    // Job x (2 pods x 4 GPUs) fills clique a or b; job y, arriving later, takes the other: the
    // node outside every clique publishes no IMEX channel and is never used.
    const Run r = run_files(kCliqueCluster,
                            {{"m.yaml", domain_job("x", 2, 4) + domain_job("y", 2, 4, "60s")}});
    const auto x = job_nodes(r, "x");
    const auto y = job_nodes(r, "y");
    REQUIRE(x.size() == 2);
    REQUIRE(y.size() == 2);
    std::set<char> x_cliques, y_cliques;
    for (const auto& [pod, node] : x)
      x_cliques.insert(node[0]);
    for (const auto& [pod, node] : y)
      y_cliques.insert(node[0]);
    CHECK(x_cliques.size() == 1);
    CHECK(y_cliques.size() == 1);
    CHECK(x_cliques != y_cliques);
    CHECK(x_cliques.count('p') == 0);
    CHECK(y_cliques.count('p') == 0);
  }

  TEST_CASE("a node serving one ComputeDomain takes no pod of another, though GPUs are free") {
    // x's two 1-GPU pods land on two nodes (LeastAllocated spreads); y's must avoid those nodes.
    const Run r = run_files(kCliqueCluster,
                            {{"m.yaml", domain_job("x", 2, 1) + domain_job("y", 2, 1, "60s")}});
    const auto x = job_nodes(r, "x");
    const auto y = job_nodes(r, "y");
    REQUIRE(x.size() == 2);
    REQUIRE(y.size() == 2);
    for (const auto& [xp, xn] : x) {
      for (const auto& [yp, yn] : y) {
        const auto& x_node = xn;  // CAPTURE copies no structured binding (clang++ 14)
        CAPTURE(x_node);
        CHECK(xn != yn);
      }
    }
  }

  TEST_CASE("a ComputeDomain job larger than one NVLink domain waits, or spans with span: Any") {
    // Three 4-GPU pods; a clique has two 4-GPU nodes.
    SUBCASE("span OneDomain (default): the third pod waits until the domain is empty") {
      const Run r = run_files(kCliqueCluster, {{"m.yaml", domain_job("big", 3, 4)}});
      std::vector<std::pair<double, double>> runs;  // (start, end)
      for (const PodRecord& p : r.rec.pods) {
        if (r.world->pods[p.pod].job_name == "big") {
          runs.emplace_back(to_seconds(p.start), to_seconds(p.end));
        }
      }
      std::sort(runs.begin(), runs.end());
      REQUIRE(runs.size() == 3);
      CHECK(runs[0].first == 0);
      CHECK(runs[1].first == 0);
      CHECK(runs[2].first == std::min(runs[0].second, runs[1].second));  // when one ended
      bool said = false;
      for (const auto& e : r.rec.events) {
        said = said || e.detail.find(
                           "2 node(s) were outside the ComputeDomain's NVLink "
                           "domain") != std::string::npos;
      }
      CHECK(said);
    }
    SUBCASE("span: Any: all three run, across both cliques") {
      const Run r = run_files(
          std::string(kCliqueCluster) +
              "scheduler:\n  profiles:\n    - schedulerName: default-scheduler\n"
              "      pluginConfig:\n        - {name: ComputeDomains, args: {span: Any}}\n",
          {{"m.yaml", domain_job("big", 3, 4)}});
      const auto nodes = job_nodes(r, "big");
      REQUIRE(nodes.size() == 3);
      std::set<char> cliques;
      for (const auto& [pod, node] : nodes)
        cliques.insert(node[0]);
      CHECK(cliques == std::set<char>{'a', 'b'});
    }
  }

  TEST_CASE("ComputeDomain errors and warnings name the file, line and field") {
    std::string e =
        load_error(kCliqueCluster, {{"m.yaml", R"(apiVersion: resource.nvidia.com/v1beta1
kind: ComputeDomain
metadata: {name: d}
spec:
  channel:
    resourceClaimTemplate: {name: c}
    allocationMode: Some
)"}});
    CHECK(e.find("m.yaml:7:21: spec.channel.allocationMode: unknown allocationMode 'Some'; use "
                 "Single or All") != std::string::npos);
    e = load_error(kCliqueCluster, {{"m.yaml", R"(apiVersion: resource.nvidia.com/v1beta1
kind: ComputeDomain
metadata: {name: d}
spec: {numNodes: 2}
)"}});
    CHECK(e.find("m.yaml:4:7: spec: missing required field 'channel'") != std::string::npos);
    // The controller makes the channel template: a manifest of the same name is refused.
    e = load_error(kCliqueCluster,
                   {{"m.yaml", domain_job("x", 1, 1) + gpu_template("x-channel",
                                                                    "          deviceClassName: "
                                                                    "gpu.nvidia.com\n")}});
    CHECK(e.find("ResourceClaimTemplate default/x-channel is the channel template of "
                 "ComputeDomain x-domain") != std::string::npos);
    const Run r = run_files(kCliqueCluster, {{"m.yaml", R"(apiVersion: resource.nvidia.com/v1beta1
kind: ComputeDomain
metadata: {name: idle}
spec:
  channel: {resourceClaimTemplate: {name: idle-channel}}
)"}});
    bool warned = false;
    for (const std::string& w : r.warnings)
      warned =
          warned || w.find("no pod claims the channel of ComputeDomain idle") != std::string::npos;
    CHECK(warned);
  }
}

TEST_CASE("DRA manifest errors name the file, line and field") {
  const std::string scenario = R"(name: errors
cluster:
  pools:
    - {name: n, count: 1, gpu: {model: A100-80GB, count: 1}, cpu: 8, memory: 64Gi, dra: true}
manifests: [m.yaml]
)";
  // A CEL error: the position inside the expression follows the field.
  std::string e = load_error(scenario, {{"m.yaml", R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: bad}
spec:
  selectors:
  - cel:
      expression: device.attributes['gpu.nvidia.com'].productName.size() > 1.0
)"}});
  CHECK(e.find("m.yaml:7:19: spec.selectors[0].cel.expression: invalid CEL expression: 1:58: "
               "floating-point literals are not supported") != std::string::npos);

  e = load_error(scenario,
                 {{"m.yaml", gpu_template("t", "          deviceClassName: gpu.nvidia.co\n")}});
  CHECK(e.find("m.yaml:12:28: spec.spec.devices.requests[0].exactly.deviceClassName: device class "
               "'gpu.nvidia.co' does not exist (did you mean 'gpu.nvidia.com' or "
               "'mig.nvidia.com'?)") != std::string::npos);

  e = load_error(scenario,
                 {{"m.yaml", claim_pod("p", {"{name: gpu, resourceClaimTemplateName: nope}"})}});
  CHECK(e.find("spec.resourceClaims[0].resourceClaimTemplateName") != std::string::npos);
  CHECK(e.find("no ResourceClaimTemplate 'nope' in namespace default") != std::string::npos);

  e = load_error(scenario,
                 {{"m.yaml", gpu_template("t", R"(          deviceClassName: gpu.nvidia.com
          allocationMode: All
          count: 2
)")}});
  CHECK(e.find("spec.spec.devices.requests[0].exactly.count: count must not be set with "
               "allocationMode All") != std::string::npos);

  e = load_error(scenario, {{"m.yaml", R"(apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.nvidia.com
  nodeName: n-1
  pool: {name: n-1, generation: 1, resourceSliceCount: 1}
)"}});
  CHECK(e.find("m.yaml:6:13: spec.nodeName: the ResourceSlice is for node 'n-1', which is not in "
               "the scenario (did you mean 'n-0'?)") != std::string::npos);

  // Consumable capacity (KEP-5075): requestPolicy is only valid on a shareable device and must
  // be consistent (the API server's rules), and a pool generation is never negative.
  const std::string slice_head = R"(apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: driver.example.com
  nodeName: n-0
)";
  e = load_error(scenario, {{"m.yaml", slice_head + R"(  pool: {name: n-0, resourceSliceCount: 1}
  devices:
  - name: nic-0
    allowMultipleAllocations: true
    capacity:
      bandwidth:
        value: 10G
        requestPolicy: {default: 500M, validRange: {min: 1G, step: 1G}}
)"}});
  CHECK(e.find("m.yaml:14:34: spec.devices[0].capacity.bandwidth.requestPolicy.default: the "
               "default must lie within validRange") != std::string::npos);
  e = load_error(scenario, {{"m.yaml", slice_head + R"(  pool: {name: n-0, resourceSliceCount: 1}
  devices:
  - name: nic-0
    allowMultipleAllocations: true
    capacity:
      bandwidth:
        value: 10G
        requestPolicy: {default: 1G, validValues: [1G, 4G, 2G]}
)"}});
  CHECK(e.find("spec.devices[0].capacity.bandwidth.requestPolicy.validValues[2]: validValues "
               "must be in ascending order") != std::string::npos);
  e = load_error(scenario, {{"m.yaml", slice_head + R"(  pool: {name: n-0, resourceSliceCount: 1}
  devices:
  - name: nic-0
    capacity:
      bandwidth:
        value: 10G
        requestPolicy: {default: 1G}
)"}});
  CHECK(e.find("m.yaml:13:24: spec.devices[0].capacity.bandwidth.requestPolicy: requestPolicy "
               "needs allowMultipleAllocations: true on the device") != std::string::npos);
  e = load_error(
      scenario,
      {{"m.yaml", slice_head + R"(  pool: {name: n-0, generation: -1, resourceSliceCount: 1}
)"}});
  CHECK(e.find("m.yaml:7:33: spec.pool.generation") != std::string::npos);

  // A container may only name the pod's own claims.
  std::string pod = claim_pod("p", {"{name: gpu, resourceClaimTemplateName: t}"});
  pod.replace(pod.find("      - name: gpu"), 17, "      - name: gpv");
  e = load_error(scenario, {{"m.yaml", pod}});
  CHECK(e.find("'gpv' must be the name of one entry in the pod's spec.resourceClaims (did you mean "
               "'gpu'?)") != std::string::npos);

  e = load_error(scenario, {{"m.yaml", R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c}
spec:
  devices:
    requests:
    - name: a
      exactly: {deviceClassName: gpu.nvidia.com}
    constraints:
    - requests: [b]
      matchAttribute: resource.kubernetes.io/pcieRoot
)"}});
  CHECK(e.find("spec.devices.constraints[0].requests[0]: 'b' is not a request of this claim") !=
        std::string::npos);
}
