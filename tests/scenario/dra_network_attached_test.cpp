// Network-attached DRA devices: ResourceSlices with spec.nodeSelector or spec.allNodes, whose
// devices every matching node reaches (resource.k8s.io/v1 ResourceSliceSpec). A device so
// published is one device: a claim allocated to it on one node holds it for all of them, its
// pool's shared counters and consumable capacity are drawn cluster-wide, and a ResourceClaim of
// such devices is usable from any node that reaches them all (upstream's allocation gets the
// slices' node selector, the structured allocator's createNodeSelector). Every run is paranoid.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "fixtures/dra_run.hpp"

using namespace capsim;
using capsim::testing::claim_pod;
using capsim::testing::load_error;
using capsim::testing::Run;
using capsim::testing::run_files;

namespace {

// Three nodes of 64 CPUs; n1 and n2 on fabric a, n3 on fabric b. Every pod asks for 40 CPUs, so
// two never share a node.
const char* kScenario = R"(name: network-attached
cluster:
  nodes:
    - {name: n1, cpu: 64, memory: 512Gi, labels: {fabric: a}}
    - {name: n2, cpu: 64, memory: 512Gi, labels: {fabric: a}}
    - {name: n3, cpu: 64, memory: 512Gi, labels: {fabric: b}}
manifests: [m.yaml]
)";

const char* kClass = R"(---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: pooled-gpu}
spec:
  selectors:
  - cel: {expression: device.driver == 'fabric.example.com'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one}
spec:
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: pooled-gpu}}
)";

// Two composable GPUs behind fabric a's switch.
const char* kFabricA = R"(---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: fabric-a}
spec:
  driver: fabric.example.com
  pool: {name: fabric-a, generation: 1, resourceSliceCount: 1}
  nodeSelector:
    nodeSelectorTerms:
    - matchExpressions:
      - {key: fabric, operator: In, values: [a]}
  devices:
  - {name: fgpu-0}
  - {name: fgpu-1}
)";

// A pod of 40 CPUs with the given claims, arriving at `arrival`, running an hour.
std::string big_pod(const std::string& name, const std::vector<std::string>& claims,
                    const std::string& arrival = "0s") {
  std::string p = claim_pod(name, claims, arrival);
  p.replace(p.find("requests: {cpu: 1}"), 18, "requests: {cpu: 40}");
  return p;
}

}  // namespace

TEST_SUITE("scenario") {
  TEST_CASE(
      "a nodeSelector slice's devices are reached from its nodes only, and held cluster-wide") {
    std::string m = std::string(kClass) + kFabricA;
    for (const char* p : {"a", "b", "c", "d"})
      m += big_pod(p, {"{name: g, resourceClaimTemplateName: one}"});
    Run r = run_files(kScenario, {{"m.yaml", m}});
    // Two devices for four pods: two run at once, on the two fabric-a nodes (n3 has CPUs to spare
    // but does not reach the devices), and the other two wait for one to end.
    std::multiset<double> starts;
    std::set<std::string> nodes;
    std::set<std::string> devices_at_zero;  // the devices of the two pods starting at 0s
    for (const char* p : {"a", "b", "c", "d"}) {
      const std::string node = r.node_of(p);
      CAPTURE(p);
      CHECK((node == "n1" || node == "n2"));
      nodes.insert(node);
      starts.insert(to_seconds(r.pod(p).start));
      const std::string start = r.event(p, "start");
      for (const char* d : {"fgpu-0", "fgpu-1"}) {
        if (r.pod(p).start == 0 &&
            start.find(std::string("claims g: ") + d + " (gpu)") != std::string::npos) {
          devices_at_zero.insert(d);
        }
      }
    }
    CHECK(starts == std::multiset<double>{0, 0, 3600, 3600});
    CHECK(nodes == std::set<std::string>{"n1", "n2"});
    // The two running at once hold different devices: one claim on n1 took fgpu-0 from n2 too.
    CHECK(devices_at_zero == std::set<std::string>{"fgpu-0", "fgpu-1"});
    // n3 does not reach the fabric: to the waiting pods it has no devices at all.
    CHECK(r.event("c", "pending")
              .find("0/3 nodes are available: 1 cannot allocate all claims "
                    "(claim g, request gpu: the node publishes no devices), 2 "
                    "Insufficient cpu") != std::string::npos);
  }

  TEST_CASE("a ResourceClaim of an allNodes device is shared by pods on different nodes") {
    std::string m = std::string(kClass) + R"(---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: everywhere}
spec:
  driver: fabric.example.com
  pool: {name: shared-store, generation: 1, resourceSliceCount: 1}
  allNodes: true
  devices:
  - {name: store-0}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: dataset}
spec:
  devices:
    requests:
    - {name: gpu, exactly: {deviceClassName: pooled-gpu}}
)";
    for (const char* p : {"a", "b", "c"})
      m += big_pod(p, {"{name: d, resourceClaimName: dataset}"});
    // A pod with a claim of its own finds the one device taken by the shared claim.
    m += claim_pod("own", {"{name: g, resourceClaimTemplateName: one}"}, "10m");
    Run r = run_files(kScenario, {{"m.yaml", m}});
    // The three consumers run together, one per node: the allocation reaches every node.
    std::set<std::string> nodes;
    for (const char* p : {"a", "b", "c"}) {
      CAPTURE(p);
      CHECK(r.pod(p).start == 0);
      CHECK(r.event(p, "start").find("claims d: store-0 (gpu)") != std::string::npos);
      nodes.insert(r.node_of(p));
    }
    CHECK(nodes == std::set<std::string>{"n1", "n2", "n3"});
    // The device is free again only when the last consumer leaves and the claim is deallocated.
    CHECK(to_seconds(r.pod("own").start) == 3600.0);
    CHECK(r.event("own", "pending")
              .find("0/3 nodes are available: 3 cannot allocate all claims "
                    "(claim g, request gpu: all matching devices are in "
                    "use)") != std::string::npos);
  }

  TEST_CASE("a claim mixing a node's own device with a network device stays on that node") {
    // The allocation's node selector is the node's once one device is local: a second consumer
    // of the claim can only join on that node, and there is no room for it there.
    std::string m = std::string(kClass) + kFabricA + R"(---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: nic}
spec:
  selectors:
  - cel: {expression: device.driver == 'nic.example.com'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n2-nic}
spec:
  driver: nic.example.com
  nodeName: n2
  pool: {name: n2, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: nic-0}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: both}
spec:
  devices:
    requests:
    - {name: gpu, exactly: {deviceClassName: pooled-gpu}}
    - {name: net, exactly: {deviceClassName: nic}}
)";
    m += big_pod("first", {"{name: c, resourceClaimName: both}"});
    m += big_pod("second", {"{name: c, resourceClaimName: both}"}, "1m");
    Run r = run_files(kScenario, {{"m.yaml", m}});
    CHECK(r.node_of("first") == "n2");
    CHECK(r.pod("first").start == 0);
    CHECK(to_seconds(r.pod("second").start) == 3600.0);
    CHECK(r.event("second", "pending").find("resourceclaim not available on the node") !=
          std::string::npos);
  }

  TEST_CASE("shared counters of a network-attached pool are drawn cluster-wide") {
    // One 80-unit memory counter behind the fabric; each partition takes 40 of it. Two pods on
    // two nodes use it up, a third waits though its node has a free partition device.
    std::string m = std::string(kClass) + R"(---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: fabric-a}
spec:
  driver: fabric.example.com
  pool: {name: fabric-a, generation: 1, resourceSliceCount: 1}
  allNodes: true
  sharedCounters:
  - name: chassis
    counters: {memory: {value: "80"}}
  devices:
  - {name: part-0, consumesCounters: [{counterSet: chassis, counters: {memory: {value: "40"}}}]}
  - {name: part-1, consumesCounters: [{counterSet: chassis, counters: {memory: {value: "40"}}}]}
  - {name: part-2, consumesCounters: [{counterSet: chassis, counters: {memory: {value: "40"}}}]}
)";
    for (const char* p : {"a", "b", "c"})
      m += big_pod(p, {"{name: g, resourceClaimTemplateName: one}"});
    Run r = run_files(kScenario, {{"m.yaml", m}});
    std::multiset<double> starts;
    for (const char* p : {"a", "b", "c"})
      starts.insert(to_seconds(r.pod(p).start));
    CHECK(starts == std::multiset<double>{0, 0, 3600});
  }

  TEST_CASE("network-attached slices: warnings, and errors naming file, line and field") {
    // A selector that matches no node is a warning, not an error.
    Run r = run_files(kScenario, {{"m.yaml", std::string(kClass) + R"(---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: nowhere}
spec:
  driver: fabric.example.com
  pool: {name: nowhere, generation: 1, resourceSliceCount: 1}
  nodeSelector: {nodeSelectorTerms: [{matchExpressions: [{key: fabric, operator: In, values: [z]}]}]}
  devices: [{name: x-0}]
)"}});
    bool warned = false;
    for (const std::string& w : r.warnings)
      warned =
          warned ||
          w.find(
              "m.yaml:24:17: spec.nodeSelector: the slice's nodeSelector matches no node of the "
              "scenario: its devices are never allocated") != std::string::npos;
    CHECK(warned);

    const std::string head = R"(apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: fabric.example.com
  pool: {name: net, generation: 1, resourceSliceCount: 1}
)";
    std::string e =
        load_error(kScenario, {{"m.yaml", head + "  allNodes: true\n  nodeName: n1\n"}});
    CHECK(e.find("m.yaml:5:3: spec: exactly one of nodeName, nodeSelector, allNodes and "
                 "perDeviceNodeSelection may be set; this slice sets nodeName and allNodes") !=
          std::string::npos);
    e = load_error(kScenario, {{"m.yaml", head}});
    CHECK(e.find("m.yaml:5:3: spec: a ResourceSlice needs one of spec.nodeName") !=
          std::string::npos);
    e = load_error(kScenario,
                   {{"m.yaml", head + "  nodeSelector:\n    nodeSelectorTerms:\n"
                                      "    - matchExpressions: [{key: fabric, operator: In, "
                                      "values: [a]}]\n"
                                      "    - matchExpressions: [{key: fabric, operator: In, "
                                      "values: [b]}]\n"}});
    CHECK(e.find("m.yaml:9:5: spec.nodeSelector.nodeSelectorTerms: a ResourceSlice's "
                 "nodeSelector must have exactly one term, not 2") != std::string::npos);
    e = load_error(kScenario, {{"m.yaml", head + "  perDeviceNodeSelection: true\n"}});
    CHECK(e.find("m.yaml:7:27: spec.perDeviceNodeSelection: perDeviceNodeSelection is not "
                 "modelled: give each group of devices its own slice") != std::string::npos);
    // One pool, two slices reaching different nodes.
    std::string head2 = head;
    head2.replace(head2.find("name: s}"), 8, "name: t}");
    e = load_error(kScenario, {{"m.yaml", head + "  allNodes: true\n---\n" + head2 +
                                              "  nodeSelector: {nodeSelectorTerms: "
                                              "[{matchFields: [{key: metadata.name, operator: "
                                              "In, values: [n1]}]}]}\n"}});
    CAPTURE(e);
    CHECK(e.find("m.yaml:15:17: spec.nodeSelector: pool fabric.example.com/net also has a slice "
                 "that reaches other nodes (at ") != std::string::npos);
    CHECK(e.find("m.yaml:7); capsim needs every slice of a network-attached pool to have the "
                 "same nodeSelector") != std::string::npos);
  }
}
