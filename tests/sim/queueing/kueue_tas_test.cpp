// Kueue's Topology Aware Scheduling end to end: a Topology, a ResourceFlavor naming it and the
// PodSet annotations, read from YAML; nodes labelled with block, rack and hostname; a paranoid
// run (so the TAS invariants, pods inside their assigned domains and domains' free capacity
// adding up, are checked after every event). Cases follow Kueue's concepts page
// (site/content/en/docs/concepts/topology_aware_scheduling.md, "User-facing APIs") and its
// troubleshooting notes for required placement.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <set>

#include "fixtures/kueue_rig.hpp"
#include "sim/topology.hpp"

using namespace capsim;
using capsim::testing::KueueRig;

namespace {

constexpr const char* kBlock = "cloud.provider.com/topology-block";
constexpr const char* kRack = "cloud.provider.com/topology-rack";

// Kueue's sample-queues.yaml, over GPUs: Topology "default" (block, rack, hostname), flavor
// tas-flavor selecting node-group tas-group, one ClusterQueue with ample quota.
std::string tas_queues(int gpu_quota = 100) {
  return fmt::format(R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {{name: default}}
spec:
  levels:
  - nodeLabel: cloud.provider.com/topology-block
  - nodeLabel: cloud.provider.com/topology-rack
  - nodeLabel: kubernetes.io/hostname
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: tas-flavor}}
spec:
  nodeLabels: {{cloud.provider.com/node-group: tas-group}}
  topologyName: default
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: tas-cluster-queue}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: tas-flavor
      resources:
      - {{name: nvidia.com/gpu, nominalQuota: {}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: tas-user-queue, namespace: default}}
spec: {{clusterQueue: tas-cluster-queue}}
)",
                     gpu_quota);
}

// Racks b1/r1 = {n1, n2, n3} and b1/r2 = {n4, n5}, b2/r1 = {n6}: 4 GPUs per node.
void tas_nodes(KueueRig& r) {
  const std::vector<std::tuple<std::string, std::string, std::string>> nodes = {
      {"n1", "b1", "r1"}, {"n2", "b1", "r1"}, {"n3", "b1", "r1"},
      {"n4", "b1", "r2"}, {"n5", "b1", "r2"}, {"n6", "b2", "r1"}};
  for (const auto& [name, block, rack] : nodes) {
    r.tw.node(name)
        .gpus(4)
        .label("kubernetes.io/hostname", name)  // as every node gets from the loader
        .label("cloud.provider.com/node-group", "tas-group")
        .label(kBlock, block)
        .label(kRack, rack)
        .add();
  }
}

void ask(KueueRig& r, PodId p, TopologyMode mode, const std::string& level = "") {
  r.tw.world().pods[p].topology.mut().mode = mode;
  r.tw.world().pods[p].topology.mut().level = level;
}

std::string rack_of(const std::string& node) {
  if (node == "n1" || node == "n2" || node == "n3") return "b1/r1";
  if (node == "n4" || node == "n5") return "b1/r2";
  return node == "n6" ? "b2/r1" : "?";
}

}  // namespace

TEST_CASE("A required rack goes to the rack that fits with the least free capacity") {
  // A pod outside Kueue holds 2 GPUs of n1: rack b1/r1 has room for 5 two-GPU pods (1 + 2 + 2),
  // b1/r2 for 4, b2/r1 for 2. A gang of 4 two-GPU pods requiring one rack fits b1/r1 and b1/r2;
  // BestFit takes b1/r2, the one it fills with the least left over, and pins the pods there.
  KueueRig r;
  r.kueue(tas_queues());
  tas_nodes(r);
  r.tw.pod("blocker").gpus(2).selector("kubernetes.io/hostname", "n1").duration(kHour).add();
  const GangId g = r.tw.gang("train", 4);
  for (int i = 0; i < 4; ++i) {
    const PodId p = r.tw.pod(fmt::format("train-{}", i))
                        .gpus(2)
                        .gang(g)
                        .queue("tas-user-queue")
                        .arrival(kSecond)
                        .duration(kHour)
                        .add();
    ask(r, p, TopologyMode::kRequired, kRack);
  }
  r.run();
  std::set<std::string> nodes;
  for (int i = 0; i < 4; ++i) {
    const std::string n = r.node_of(fmt::format("train-{}", i));
    INFO(n);
    CHECK(rack_of(n) == "b1/r2");
    CHECK(r.start_s(fmt::format("train-{}", i)) == 1.0);
    nodes.insert(n);
  }
  CHECK(nodes == std::set<std::string>{"n4", "n5"});
  const auto admitted = r.events("admitted");
  REQUIRE(admitted.size() == 1);
  CHECK(admitted[0].find("topology default (required cloud.provider.com/topology-rack): 4 pod(s) "
                         "in 2 domain(s) of kubernetes.io/hostname") != std::string::npos);
}

TEST_CASE("A Job no rack holds whole is partially admitted with the pods one rack takes") {
  // 5 pods of 4 GPUs (a node each) requiring one rack: the largest rack, b1/r1, has 3 nodes. With
  // job-min-parallelism 2, Kueue's reducer tries 5 - i pods for i in [0, 3]: i = 2 (3 pods)
  // places in b1/r1, i = 1 (4 pods) in no rack, so 3 pods, on n1-n3. The other two run there
  // after them, pinned to the domains their predecessors left.
  KueueRig r;
  r.kueue(tas_queues() + R"(---
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  labels: {kueue.x-k8s.io/queue-name: tas-user-queue}
  annotations: {kueue.x-k8s.io/job-min-parallelism: "2", capsim.io/duration: 1h}
spec:
  parallelism: 5
  template:
    metadata:
      annotations: {kueue.x-k8s.io/podset-required-topology: cloud.provider.com/topology-rack}
    spec:
      restartPolicy: Never
      containers:
      - {name: c, image: trainer, resources: {limits: {nvidia.com/gpu: 4}}}
)");
  tas_nodes(r);
  r.run();
  const auto admitted = r.events("admitted");
  REQUIRE(admitted.size() == 1);
  CHECK(admitted[0].find("partially admitted with 3 of 5 pods (job-min-parallelism 2)") !=
        std::string::npos);
  CHECK(admitted[0].find("topology default (required cloud.provider.com/topology-rack): 3 pod(s) "
                         "in 3 domain(s) of kubernetes.io/hostname") != std::string::npos);
  std::set<std::string> first;
  for (int i = 0; i < 5; ++i) {
    const std::string pod = fmt::format("train-{}", i);
    const std::string n = r.node_of(pod);
    INFO(pod, " on ", n);
    CHECK(rack_of(n) == "b1/r1");
    CHECK(r.start_s(pod) == (i < 3 ? 0.0 : 3600.0));
    if (i < 3) first.insert(n);
  }
  CHECK(first == std::set<std::string>{"n1", "n2", "n3"});
}

TEST_CASE("A required rack that no rack can hold leaves the workload unadmitted, quota unused") {
  // Kueue: TAS is part of flavor assignment, so a PodSet that fits no single domain of the
  // required level gets no quota reservation; it waits with the reason. 3 four-GPU pods need 12
  // GPUs in one rack; the largest rack has 12 GPUs but a pod outside Kueue holds 4 of them.
  // The quota (100) and the cluster (24 GPUs, 16 free) would hold them.
  KueueRig r;
  r.kueue(tas_queues());
  tas_nodes(r);
  r.tw.pod("blocker").gpus(4).selector("kubernetes.io/hostname", "n2").duration(kHour).add();
  const GangId g = r.tw.gang("big", 3);
  for (int i = 0; i < 3; ++i) {
    const PodId p = r.tw.pod(fmt::format("big-{}", i))
                        .gpus(4)
                        .gang(g)
                        .queue("tas-user-queue")
                        .arrival(kSecond)
                        .duration(kHour)
                        .add();
    ask(r, p, TopologyMode::kRequired, kRack);
  }
  r.run(30 * kMinute);
  for (int i = 0; i < 3; ++i)
    CHECK(r.start_s(fmt::format("big-{}", i)) == -1.0);
  CHECK(r.events("admitted").empty());
  bool reason = false;
  for (const std::string& e : r.events("admission-pending")) {
    reason = reason || e.find(
                           "couldn't assign flavors to pod set main: topology \"default\" "
                           "allows to fit only 2 out of 3 pod(s)") != std::string::npos;
  }
  CHECK(reason);
  CHECK(r.metric("kueue.workloads_pending_at_end") == 1);
  CHECK(r.metric("clusterqueue.tas-cluster-queue.gpu_quota_hours") == 0);
}

TEST_CASE("A preferred rack that no rack holds is admitted across racks of one block") {
  // The same 3 four-GPU pods with podset-preferred-topology: no rack has 12 free GPUs, so Kueue
  // tries the block: b1 has 16 free (n1, n3, n4, n5), and the pods spread over its two racks.
  KueueRig r;
  r.kueue(tas_queues());
  tas_nodes(r);
  r.tw.pod("blocker").gpus(4).selector("kubernetes.io/hostname", "n2").duration(kHour).add();
  const GangId g = r.tw.gang("big", 3);
  for (int i = 0; i < 3; ++i) {
    const PodId p = r.tw.pod(fmt::format("big-{}", i))
                        .gpus(4)
                        .gang(g)
                        .queue("tas-user-queue")
                        .arrival(kSecond)
                        .duration(kHour)
                        .add();
    ask(r, p, TopologyMode::kPreferred, kRack);
  }
  r.run();
  std::set<std::string> racks;
  for (int i = 0; i < 3; ++i) {
    CHECK(r.start_s(fmt::format("big-{}", i)) == 1.0);
    racks.insert(rack_of(r.node_of(fmt::format("big-{}", i))));
  }
  // BestFit at the block level, then racks by free room: b1/r1 (n1, n3: 2 pods) and b1/r2 (2).
  CHECK(racks == std::set<std::string>{"b1/r1", "b1/r2"});
}

TEST_CASE("Without an annotation a TAS-only ClusterQueue places pods unconstrained, least free") {
  // Kueue: a PodSet without TAS annotations in a ClusterQueue whose every flavor has a Topology
  // gets TAS implied, unconstrained, placed by LeastFreeCapacity (TASProfileMixed, beta and on
  // since v0.15): the 2-GPU pod is pinned to n1, the node with the least room that holds it (2
  // free), where the default scheduler alone would spread to an empty node.
  KueueRig r;
  r.kueue(tas_queues());
  tas_nodes(r);
  r.tw.pod("blocker").gpus(2).selector("kubernetes.io/hostname", "n1").duration(kHour).add();
  r.tw.pod("small").gpus(2).queue("tas-user-queue").arrival(kSecond).duration(kHour).add();
  r.run();
  CHECK(r.node_of("small") == "n1");
  CHECK(r.metric("tas_wait_seconds_p95") == 0);
}

TEST_CASE("A required topology in a ClusterQueue without a TAS flavor cannot be admitted") {
  // Kueue's flavor check for TAS: "Flavor \"gpu\" does not support TopologyAwareScheduling".
  KueueRig r;
  r.kueue(R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: gpu}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: plain}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: gpu
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 8}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: plain, namespace: default}
spec: {clusterQueue: plain}
)");
  r.tw.node("n1").gpus(8).add();
  const PodId p = r.tw.pod("p").gpus(1).queue("plain").duration(kHour).add();
  ask(r, p, TopologyMode::kRequired, kRack);
  r.run(kHour);
  CHECK(r.start_s("p") == -1.0);
  bool reason = false;
  for (const std::string& e : r.events("admission-pending")) {
    reason = reason ||
             e.find("Flavor \"gpu\" does not support TopologyAwareScheduling") != std::string::npos;
  }
  CHECK(reason);
}

TEST_CASE("A gang spread over two racks computes at the block's factor, one rack at the rack's") {
  // Locality slowdown (sim/topology.hpp): levels block, rack, host; factors rack 0.9, block 0.8.
  // Two 4-GPU pods of a 1-hour gang pinned to n1 and n4 (different racks of block b1) run
  // 3600 / 0.8 = 4500 s; the same gang on n1 and n2 (rack b1/r1) runs 3600 / 0.9 = 4000 s.
  for (const bool same_rack : {false, true}) {
    KueueRig r;
    tas_nodes(r);
    ClusterTopology& t = r.tw.world().topology;
    t.levels = {{"block", kBlock}, {"rack", kRack}, {"host", "kubernetes.io/hostname"}};
    t.slowdown = {0.8, 0.9, 1.0};
    t.cluster_slowdown = 0.7;
    index_topology(r.tw.world());
    const GangId g = r.tw.gang("train", 2);
    r.tw.pod("train-0")
        .gpus(4)
        .gang(g)
        .selector("kubernetes.io/hostname", "n1")
        .duration(kHour)
        .add();
    r.tw.pod("train-1")
        .gpus(4)
        .gang(g)
        .selector("kubernetes.io/hostname", same_rack ? "n2" : "n4")
        .duration(kHour)
        .add();
    r.run();
    const double expect = same_rack ? 4000.0 : 4500.0;
    for (const PodRecord& p : r.result.pods) {
      INFO(r.tw.world().pods[p.pod].name);
      CHECK(to_seconds(p.end - p.start) == doctest::Approx(expect));
    }
    CHECK(r.metric("topology_slowdown_mean") == doctest::Approx(same_rack ? 0.9 : 0.8));
    // Without an nvlink level a node is its own NVLink domain: both gangs span two.
    CHECK(r.metric("jobs_spanning_domains") == 1);
  }
}
