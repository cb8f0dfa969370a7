// Tests for Kueue's topology-aware placement (sim/queueing/topology_assigner.cpp). The cases are
// those of Kueue's TestFindTopologyAssignments (pkg/cache/scheduler/tas_cache_test.go), named by
// the Kueue test case they reproduce, on the same node sets: which domain is chosen, and why
// another is not.
#include "sim/queueing/topology_assigner.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/check.hpp"

namespace capsim::queueing {
namespace {

constexpr const char* kBlock = "cloud.com/topology-block";
constexpr const char* kRack = "cloud.com/topology-rack";
constexpr const char* kHost = "kubernetes.io/hostname";

struct TestNode {
  std::vector<std::string> values;
  std::int64_t cpu_milli;
  std::int64_t pods;
};

TopologySnapshot snapshot(const std::vector<std::string>& levels,
                          const std::vector<TestNode>& nodes) {
  TopologySnapshot s("default", levels);
  for (const TestNode& n : nodes) {
    ResourceVec free;
    free[kCpu] = n.cpu_milli;
    free[kPods] = n.pods;
    // The node's values for the snapshot's levels: the last `levels.size()` of block/rack/host.
    std::vector<std::string> v(n.values.end() - static_cast<std::ptrdiff_t>(levels.size()),
                               n.values.end());
    if (levels.size() < n.values.size() && levels.back() != kHost) {
      v.assign(n.values.begin(), n.values.begin() + static_cast<std::ptrdiff_t>(levels.size()));
    }
    s.add_node(v, free);
  }
  return s;
}

// Kueue's defaultNodes: block b1 holds rack r1 (host x3) and rack r2 (x5, x1, x6); block b2
// holds rack r1 (x2) and rack r2 (x4). x4 has 2 cpus, the others 1.
const std::vector<TestNode> kDefaultNodes = {
    {{"b1", "r1", "x3"}, 1000, 10}, {{"b1", "r2", "x5"}, 1000, 10}, {{"b1", "r2", "x1"}, 1000, 10},
    {{"b1", "r2", "x6"}, 1000, 10}, {{"b2", "r1", "x2"}, 1000, 10}, {{"b2", "r2", "x4"}, 2000, 40},
};
const std::vector<std::string> kTwoLevels = {kBlock, kRack};
const std::vector<std::string> kThreeLevels = {kBlock, kRack, kHost};

TasRequest one_cpu(TopologyMode mode, std::int32_t level, std::int32_t count) {
  TasRequest r;
  r.mode = mode;
  r.level = level;
  r.count = count;
  r.per_pod[kCpu] = 1000;
  r.per_pod[kPods] = 1;
  return r;
}

// "b1/r2:3 b2/r2:2" for comparison in one line.
std::string text(const TasResult& r) {
  if (!r.failure.empty()) return "failure: " + r.failure;
  std::string out;
  for (const TopologyDomainCount& d : r.assignment.domains) {
    if (!out.empty()) out += ' ';
    for (std::size_t i = 0; i < d.values.size(); ++i)
      out += (i ? "/" : "") + d.values[i];
    out += ":" + std::to_string(d.count);
  }
  return out;
}

}  // namespace

TEST_CASE("A required rack goes to the rack that fits with the least free capacity") {
  // Kueue "rack required; multiple Pods fit in some racks; BestFit": b1/r2 (3 free) and b2/r2
  // (2 free) both fit 2 pods; BestFit takes the tighter b2/r2.
  TopologySnapshot s = snapshot(kTwoLevels, kDefaultNodes);
  CHECK(text(s.assign(one_cpu(TopologyMode::kRequired, 1, 2))) == "b2/r2:2");
  // "rack required; multiple Pods fit in a rack; BestFit": only b1/r2 fits 3.
  TopologySnapshot s3 = snapshot(kTwoLevels, kDefaultNodes);
  CHECK(text(s3.assign(one_cpu(TopologyMode::kRequired, 1, 3))) == "b1/r2:3");
  // "rack required; single Pod fits in a rack; BestFit": the tightest racks (1 free) tie; the
  // label values decide: b1/r1 before b2/r1.
  TopologySnapshot s1 = snapshot(kTwoLevels, kDefaultNodes);
  CHECK(text(s1.assign(one_cpu(TopologyMode::kRequired, 1, 1))) == "b1/r1:1");
}

TEST_CASE("A required rack that no rack can hold is refused with Kueue's message") {
  // Kueue "rack required; too many pods to fit in any rack; BestFit": the largest rack has 3.
  TopologySnapshot s = snapshot(kTwoLevels, kDefaultNodes);
  const TasResult r = s.assign(one_cpu(TopologyMode::kRequired, 1, 4));
  CHECK(r.assignment.empty());
  CHECK(r.failure == "topology \"default\" allows to fit only 3 out of 4 pod(s)");
  // Even though the whole topology has room for 7: required does not spread.
}

TEST_CASE("A preferred rack falls back to a block, then to several blocks") {
  // Kueue "rack preferred; but only block can accommodate the workload; BestFit": no rack holds
  // 4, block b1 does (1 + 3).
  TopologySnapshot s4 = snapshot(kTwoLevels, kDefaultNodes);
  CHECK(text(s4.assign(one_cpu(TopologyMode::kPreferred, 1, 4))) == "b1/r1:1 b1/r2:3");
  // "rack preferred; but only multiple blocks can accommodate the workload; BestFit": 6 pods
  // need b1 (4) and b2, where the tighter rack b2/r2 takes the last 2.
  TopologySnapshot s6 = snapshot(kTwoLevels, kDefaultNodes);
  CHECK(text(s6.assign(one_cpu(TopologyMode::kPreferred, 1, 6))) == "b1/r1:1 b1/r2:3 b2/r2:2");
  // "block preferred; but the workload cannot be accommodate in entire topology; BestFit".
  TopologySnapshot s10 = snapshot(kTwoLevels, kDefaultNodes);
  CHECK(s10.assign(one_cpu(TopologyMode::kPreferred, 0, 10)).failure ==
        "topology \"default\" allows to fit only 7 out of 10 pod(s)");
}

TEST_CASE("A preferred block spreads greedily, the last block fitting most tightly") {
  // Kueue "block preferred; Pods fit in 2 blocks; BestFit": blocks of 2, 1 and 4 free; 5 pods
  // go 4 to b3 and the last 1 to b2 (the tightest that fits 1), not to b1.
  const std::vector<TestNode> nodes = {{{"b1"}, 2000, 20}, {{"b2"}, 1000, 10}, {{"b3"}, 4000, 40}};
  TopologySnapshot s = snapshot({kBlock}, nodes);
  CHECK(text(s.assign(one_cpu(TopologyMode::kPreferred, 0, 5))) == "b2:1 b3:4");
}

TEST_CASE("A required block fills its rack with the most room before optimising nodes") {
  // Kueue "minimize the number of used racks before optimizing the number of nodes; BestFit":
  // r3 (four 1-cpu hosts) takes all 4 pods rather than r1 + r2 (two 2-cpu hosts, fewer nodes).
  const std::vector<TestNode> nodes = {
      {{"b1", "r1", "x3"}, 2000, 10}, {{"b1", "r2", "x5"}, 2000, 20},
      {{"b1", "r3", "x1"}, 1000, 10}, {{"b1", "r3", "x6"}, 1000, 10},
      {{"b1", "r3", "x2"}, 1000, 10}, {{"b1", "r3", "x4"}, 1000, 10},
  };
  TopologySnapshot s = snapshot(kThreeLevels, nodes);
  CHECK(text(s.assign(one_cpu(TopologyMode::kRequired, 0, 4))) ==
        "b1/r3/x1:1 b1/r3/x2:1 b1/r3/x4:1 b1/r3/x6:1");
}

TEST_CASE("Unconstrained pods go to the least free host first") {
  // Kueue "unconstrained; a single pod fits into each host; LeastFreeCapacity; TASProfileMixed":
  // every 1-cpu host ties; the first by label values is b1/r1/x3.
  TopologySnapshot s = snapshot(kThreeLevels, kDefaultNodes);
  CHECK(text(s.assign(one_cpu(TopologyMode::kUnconstrained, 2, 1))) == "b1/r1/x3:1");
  // Two pods: x4 is the only host with room for both, so LeastFreeCapacity takes it whole.
  TopologySnapshot s2 = snapshot(kThreeLevels, kDefaultNodes);
  CHECK(text(s2.assign(one_cpu(TopologyMode::kUnconstrained, 2, 2))) == "b2/r2/x4:2");
  // Three pods: no host holds them, so they fill the least free hosts first (1-cpu ones).
  TopologySnapshot s3 = snapshot(kThreeLevels, kDefaultNodes);
  CHECK(text(s3.assign(one_cpu(TopologyMode::kUnconstrained, 2, 3))) ==
        "b1/r1/x3:1 b1/r2/x1:1 b1/r2/x5:1");
}

TEST_CASE("Slices of two pods each land whole on hosts of the required block") {
  // Kueue "block required for podset; host required for slices; BestFit": three hosts of 3 free
  // hold one 2-pod slice each (3 + 3 + 3 = 9 pods, but only 3 slices).
  const std::vector<TestNode> nodes = {{{"b1", "r1", "x3"}, 3000, 10},
                                       {{"b1", "r1", "x5"}, 3000, 10},
                                       {{"b1", "r1", "x1"}, 3000, 10}};
  TopologySnapshot s = snapshot(kThreeLevels, nodes);
  TasRequest r = one_cpu(TopologyMode::kRequired, 0, 6);
  r.slice_level = 2;
  r.slice_size = 2;
  CHECK(text(s.assign(r)) == "b1/r1/x1:2 b1/r1/x3:2 b1/r1/x5:2");
  // Four slices do not fit although 9 pods would: "allows to fit only 3 out of 4 slice(s)".
  TopologySnapshot s8 = snapshot(kThreeLevels, nodes);
  r.count = 8;
  CHECK(s8.assign(r).failure == "topology \"default\" allows to fit only 3 out of 4 slice(s)");
}

TEST_CASE("Every resource a pod requests limits how many pods a domain takes") {
  // Two hosts with 8 free GPUs each: one has room for 110 more pods, the other for 2. Three 1-GPU
  // pods required on one host fit only the first, though both have the GPUs.
  TopologySnapshot s("gpu", {kHost});
  ResourceVec a, b;
  a[kNvidiaGpu] = 8;
  a[kPods] = 110;
  b[kNvidiaGpu] = 8;
  b[kPods] = 2;
  s.add_node({"a"}, a);
  s.add_node({"b"}, b);
  TasRequest r;
  r.mode = TopologyMode::kRequired;
  r.level = 0;
  r.count = 3;
  r.per_pod[kNvidiaGpu] = 1;
  r.per_pod[kPods] = 1;
  CHECK(text(s.assign(r)) == "a:3");
  s.check_invariants();
  CHECK(s.free_gpus() == 16);
}

TEST_CASE("Reserved capacity of pinned pods is not offered again") {
  TopologySnapshot s("gpu", {kRack, kHost});
  ResourceVec g;
  g[kNvidiaGpu] = 4;
  g[kPods] = 110;
  s.add_node({"r1", "n1"}, g);
  s.add_node({"r1", "n2"}, g);
  s.add_node({"r2", "n3"}, g);
  ResourceVec taken;
  taken[kNvidiaGpu] = 4;
  taken[kPods] = 1;
  s.reserve({"r1", "n1"}, taken);
  TasRequest r;
  r.mode = TopologyMode::kRequired;
  r.level = 0;
  r.count = 2;
  r.per_pod[kNvidiaGpu] = 4;
  r.per_pod[kPods] = 1;
  // r1 has one free host left: the 2 four-GPU pods need a rack with 8 free, and none has it.
  CHECK(s.assign(r).failure == "topology \"gpu\" allows to fit only 1 out of 2 pod(s)");
  s.check_invariants();
  CHECK(s.free_gpus() == 8);
}

}  // namespace capsim::queueing
