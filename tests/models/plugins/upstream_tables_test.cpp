// Cases from kube-scheduler's own test tables, with the same inputs and expected numbers, run
// through fw::evaluate_pod (the code path of `capsim score`): a profile built from YAML, a
// cluster with the existing pods bound, every plugin's verdict read per node. Each case names
// the upstream test function and case. Upstream's quantities are kept as written: "cpu": "4000"
// is 4000 cores for a node and a pod alike, so the ratios are upstream's.
//
// Cases left out, and why (docs/scheduling.md, "Which Kubernetes"):
//  - pods with no containers at all (st.MakePod().Obj()): capsim has no container-less pod; its
//    pod without requests is one container without requests, which the scoring strategies count
//    as 100m cpu and 200 MiB memory (upstream's NonMissingContainerRequests);
//  - existing pods with an explicit "memory": "0": upstream keeps an explicit zero as zero,
//    capsim applies the default to any pod whose total request is zero (per pod, not per
//    container);
//  - the validation cases (weights 0, -1, 101): tests/models/plugin_registry_test.cpp territory;
//  - TaintToleration's Gt/Lt operators (feature-gated upstream, not modelled).
#include <doctest/doctest.h>

#include "fixtures/evaluation_bench.hpp"

using namespace capsim;
using capsim::testing::EvaluationBench;
using capsim::testing::single_plugin_profile;

namespace {

constexpr const char* kFit = "NodeResourcesFit";
constexpr const char* kBalanced = "NodeResourcesBalancedAllocation";

std::string fit_args(const std::string& type, const std::string& resources,
                     const std::string& extra = "") {
  return "{scoringStrategy: {type: " + type + ", resources: " + resources + extra + "}}";
}
const std::string kCpuMem = "[{name: cpu, weight: 1}, {name: memory, weight: 1}]";
const std::string kCpuMemExt =
    "[{name: cpu, weight: 1}, {name: memory, weight: 1}, {name: abc.com/xyz, weight: 1}]";

struct Expect {
  std::int64_t node1, node2;
};

// Two nodes, the pod scored by NodeResourcesFit with `args`, filters off (upstream calls Score
// directly).
void check_fit(EvaluationBench& b, PodId pod, const std::string& args, Expect want) {
  b.start(single_plugin_profile(kFit, args, false));
  const fw::PodEvaluation ev = b.evaluate(pod);
  REQUIRE(ev.error.empty());
  CHECK(b.normalized(ev, 0, kFit) == want.node1);
  CHECK(b.normalized(ev, 1, kFit) == want.node2);
}

}  // namespace

TEST_CASE("LeastAllocated scores nodes as upstream's TestLeastAllocatedScoringStrategy") {
  SUBCASE("nothing scheduled, resources requested, differently sized nodes") {
    // cpu (4000-3000)*100/4000 = 25, memory 50 -> 37; node2 cpu 50, memory 50 -> 50.
    EvaluationBench b;
    b.tw.node("node1").cpu("4000").memory("10000").add();
    b.tw.node("node2").cpu("6000").memory("10000").add();
    const PodId p = b.tw.pod("p").cpu("3000").memory("5000").add();
    check_fit(b, p, fit_args("LeastAllocated", kCpuMem), {37, 50});
  }
  SUBCASE(
      "nothing scheduled, resources requested with different weight on CPU and memory, "
      "differently sized nodes") {
    // (25*1 + 50*2)/3 = 41; (50*1 + 50*2)/3 = 50.
    EvaluationBench b;
    b.tw.node("node1").cpu("4000").memory("10000").add();
    b.tw.node("node2").cpu("6000").memory("10000").add();
    const PodId p = b.tw.pod("p").cpu("3000").memory("5000").add();
    check_fit(b, p,
              fit_args("LeastAllocated", "[{name: memory, weight: 2}, {name: cpu, weight: 1}]"),
              {41, 50});
  }
  SUBCASE("bypass extended resource if the pod does not request") {
    EvaluationBench b;
    b.tw.node("node1").cpu("6000").memory("10000").add();
    b.tw.node("node2").cpu("6000").memory("10000").resource("abc.com/xyz", 4).add();
    const PodId p = b.tw.pod("p").cpu("3000").memory("5000").add();
    check_fit(b, p, fit_args("LeastAllocated", kCpuMemExt), {50, 50});
  }
  SUBCASE("honor extended resource if the pod requests") {
    // node1: (50 + 50 + (4-2)/4*100=50)/3 = 50; node2: (50 + 50 + 80)/3 = 60.
    EvaluationBench b;
    b.tw.node("node1").cpu("6000").memory("10000").resource("abc.com/xyz", 4).add();
    b.tw.node("node2").cpu("6000").memory("10000").resource("abc.com/xyz", 10).add();
    const PodId p = b.tw.pod("p").cpu("3000").memory("5000").resource("abc.com/xyz", 2).add();
    check_fit(b, p, fit_args("LeastAllocated", kCpuMemExt), {50, 60});
  }
  SUBCASE("if the node doesn't have a resource") {
    // A zero-capacity resource scores 0 with its weight counted: node2 has abc.com/xyz, the pod
    // does not ask for it, so it is skipped there; on node1 it is absent. Both (50+60)/2 = 55.
    EvaluationBench b;
    b.tw.node("node1").cpu("6000").memory("10000").add();
    b.tw.node("node2").cpu("6000").memory("10000").resource("abc.com/xyz", 4).add();
    const PodId p = b.tw.pod("p").cpu("3000").memory("4000").add();
    check_fit(b, p,
              fit_args("LeastAllocated",
                       "[{name: abc.com/xyz, weight: 2}, {name: cpu, weight: 1}, "
                       "{name: memory, weight: 1}]"),
              {55, 55});
  }
}

TEST_CASE("MostAllocated scores nodes as upstream's TestMostAllocatedScoringStrategy") {
  SUBCASE("nothing scheduled, resources requested, differently sized nodes") {
    // cpu 3000*100/4000 = 75, memory 50 -> 62; node2 50, 50 -> 50.
    EvaluationBench b;
    b.tw.node("node1").cpu("4000").memory("10000").add();
    b.tw.node("node2").cpu("6000").memory("10000").add();
    const PodId p = b.tw.pod("p").cpu("3000").memory("5000").add();
    check_fit(b, p, fit_args("MostAllocated", kCpuMem), {62, 50});
  }
  SUBCASE("resources requested equal node capacity") {
    // node1 cpu 100, memory 90 -> 95; node2 cpu 50, memory 100 -> 75.
    EvaluationBench b;
    b.tw.node("node1").cpu("5000").memory("10000").add();
    b.tw.node("node2").cpu("10000").memory("9000").add();
    const PodId p = b.tw.pod("p").cpu("5000").memory("9000").add();
    check_fit(b, p, fit_args("MostAllocated", kCpuMem), {95, 75});
  }
  SUBCASE("nothing scheduled, resources requested, differently sized nodes (memory weight 2)") {
    // (75*1 + 50*2)/3 = 58; (50 + 100)/3 = 50.
    EvaluationBench b;
    b.tw.node("node1").cpu("4000").memory("10000").add();
    b.tw.node("node2").cpu("6000").memory("10000").add();
    const PodId p = b.tw.pod("p").cpu("3000").memory("5000").add();
    check_fit(b, p,
              fit_args("MostAllocated", "[{name: memory, weight: 2}, {name: cpu, weight: 1}]"),
              {58, 50});
  }
  SUBCASE("no resources requested, pods scheduled, nonzero request for resource") {
    // Containers without requests count 100m cpu and 200Mi memory. node1 holds two such pods:
    // cpu 300m of 250m -> capped at 100, memory 600Mi/1000Mi = 60 -> 80; node2: 40, 20 -> 30.
    EvaluationBench b;
    b.tw.node("node1").cpu("250m").memory("1000Mi").add();
    b.tw.node("node2").cpu("250m").memory("1000Mi").add();
    const PodId e1 = b.tw.pod("e1").add();
    const PodId e2 = b.tw.pod("e2").add();
    const PodId p = b.tw.pod("p").add();
    b.start(single_plugin_profile(kFit, fit_args("MostAllocated", kCpuMem), false));
    b.place(e1, 0);
    b.place(e2, 0);
    const fw::PodEvaluation ev = b.evaluate(p);
    CHECK(b.normalized(ev, 0, kFit) == 80);
    CHECK(b.normalized(ev, 1, kFit) == 30);
  }
  SUBCASE("honor extended resource if the pod request") {
    // node1 (50 + 50 + 2/4*100)/3 = 50; node2 (50 + 50 + 20)/3 = 40.
    EvaluationBench b;
    b.tw.node("node1").cpu("6000").memory("10000").resource("abc.com/xyz", 4).add();
    b.tw.node("node2").cpu("6000").memory("10000").resource("abc.com/xyz", 10).add();
    const PodId p = b.tw.pod("p").cpu("3000").memory("5000").resource("abc.com/xyz", 2).add();
    check_fit(b, p, fit_args("MostAllocated", kCpuMemExt), {50, 40});
  }
  SUBCASE("if the node doesn't have a resource") {
    // (50 + 40)/2 = 45 on both.
    EvaluationBench b;
    b.tw.node("node1").cpu("6000").memory("10000").add();
    b.tw.node("node2").cpu("6000").memory("10000").resource("abc.com/xyz", 4).add();
    const PodId p = b.tw.pod("p").cpu("3000").memory("4000").add();
    check_fit(b, p,
              fit_args("MostAllocated",
                       "[{name: abc.com/xyz, weight: 2}, {name: cpu, weight: 1}, "
                       "{name: memory, weight: 1}]"),
              {45, 45});
  }
}

TEST_CASE("RequestedToCapacityRatio scores nodes as upstream's tests of it") {
  const std::string least_shape =
      ", requestedToCapacityRatio: {shape: [{utilization: 0, score: 10}, "
      "{utilization: 100, score: 0}]}";
  SUBCASE(
      "TestRequestedToCapacityRatioScoringStrategy: nothing scheduled, resources requested, "
      "differently sized nodes (default - least requested nodes have priority)") {
    // node1: cpu 75% -> 25, memory 50% -> 50, (25+50)/2 = 37.5 rounded to 38; node2 50.
    // (Upstream also places two container-less pods on node1, which request nothing.)
    EvaluationBench b;
    b.tw.node("node1").cpu("4000").memory("10000").add();
    b.tw.node("node2").cpu("6000").memory("10000").add();
    const PodId p = b.tw.pod("p").cpu("3000").memory("5000").add();
    check_fit(b, p, fit_args("RequestedToCapacityRatio", kCpuMem, least_shape), {38, 50});
  }
  const std::string foo_shape =
      ", requestedToCapacityRatio: {shape: [{utilization: 0, score: 0}, "
      "{utilization: 100, score: 1}]}";
  SUBCASE(
      "TestResourceBinPackingSingleExtended: resources requested, pods scheduled with "
      "resources, on node with existing pod running") {
    // node1: 2/8 -> 25% of a 0..10 shape scaled x10 = 2; node2: (2+2)/4 = 100% -> 10.
    EvaluationBench b;
    b.tw.node("node1").cpu("4").memory("10000Mi").resource("intel.com/foo", 8).add();
    b.tw.node("node2").cpu("4").memory("10000Mi").resource("intel.com/foo", 4).add();
    const PodId e = b.tw.pod("e").resource("intel.com/foo", 2).add();
    const PodId p = b.tw.pod("p").resource("intel.com/foo", 2).add();
    b.start(single_plugin_profile(
        kFit, fit_args("RequestedToCapacityRatio", "[{name: intel.com/foo, weight: 1}]", foo_shape),
        false));
    b.place(e, 1);
    const fw::PodEvaluation ev = b.evaluate(p);
    CHECK(b.normalized(ev, 0, kFit) == 2);
    CHECK(b.normalized(ev, 1, kFit) == 10);
  }
  SUBCASE(
      "TestResourceBinPackingSingleExtended: resources requested, pods scheduled with more "
      "resources") {
    EvaluationBench b;
    b.tw.node("node1").cpu("4").memory("10000Mi").resource("intel.com/foo", 8).add();
    b.tw.node("node2").cpu("4").memory("10000Mi").resource("intel.com/foo", 4).add();
    const PodId p = b.tw.pod("p").resource("intel.com/foo", 4).add();
    check_fit(b, p,
              fit_args("RequestedToCapacityRatio", "[{name: intel.com/foo, weight: 1}]", foo_shape),
              {5, 10});
  }
  const std::string two = "[{name: intel.com/foo, weight: 3}, {name: intel.com/bar, weight: 5}]";
  SUBCASE(
      "TestResourceBinPackingMultipleExtended: resources requested, pods scheduled with less "
      "resources") {
    // node1: foo 2/8 -> 2, bar 2/4 -> 5: (2*3 + 5*5)/8 = 3.875 -> 4; node2: (5*3 + 2*5)/8 -> 3.
    EvaluationBench b;
    b.tw.node("node1")
        .cpu("4")
        .memory("10000Mi")
        .resource("intel.com/foo", 8)
        .resource("intel.com/bar", 4)
        .add();
    b.tw.node("node2")
        .cpu("4")
        .memory("10000Mi")
        .resource("intel.com/foo", 4)
        .resource("intel.com/bar", 8)
        .add();
    const PodId p = b.tw.pod("p").resource("intel.com/foo", 2).resource("intel.com/bar", 2).add();
    check_fit(b, p, fit_args("RequestedToCapacityRatio", two, foo_shape), {4, 3});
  }
  SUBCASE(
      "TestResourceBinPackingMultipleExtended: resources requested, pods scheduled with "
      "resources, on node with existing pod running") {
    // node2 already holds foo 4, bar 2: foo (4+2)/4 capped 10, bar 4/8 -> 5: (30 + 25)/8 -> 7.
    EvaluationBench b;
    b.tw.node("node1")
        .cpu("4")
        .memory("10000Mi")
        .resource("intel.com/foo", 8)
        .resource("intel.com/bar", 4)
        .add();
    b.tw.node("node2")
        .cpu("4")
        .memory("10000Mi")
        .resource("intel.com/foo", 4)
        .resource("intel.com/bar", 8)
        .add();
    const PodId e = b.tw.pod("e").resource("intel.com/foo", 4).resource("intel.com/bar", 2).add();
    const PodId p = b.tw.pod("p").resource("intel.com/foo", 2).resource("intel.com/bar", 2).add();
    b.start(
        single_plugin_profile(kFit, fit_args("RequestedToCapacityRatio", two, foo_shape), false));
    b.place(e, 1);
    const fw::PodEvaluation ev = b.evaluate(p);
    CHECK(b.normalized(ev, 0, kFit) == 4);
    CHECK(b.normalized(ev, 1, kFit) == 7);
  }
}

TEST_CASE("BalancedAllocation scores nodes as upstream's TestNodeResourcesBalancedAllocation") {
  // BalancedAllocation scores actual requests (useRequested): no defaults for missing requests.
  const std::string profile = single_plugin_profile(kBalanced, "", false);
  SUBCASE("nothing scheduled, nothing requested, skip in PreScore") {
    EvaluationBench b;
    b.tw.node("node1").cpu("4").memory("10000").add();
    b.tw.node("node2").cpu("4").memory("10000").add();
    const PodId p = b.tw.pod("p").add();
    b.start(profile);
    const fw::PodEvaluation ev = b.evaluate(p);
    CHECK(b.score(ev, 0, kBalanced).skipped);
    CHECK(b.score(ev, 1, kBalanced).skipped);
    CHECK(ev.nodes[0].total == 0);
  }
  SUBCASE("nothing scheduled, resources requested, differently sized nodes") {
    // node1: cpu 75 %, memory 50 %, std 0.125 -> 87; node2: 50 %, 50 % -> 100.
    EvaluationBench b;
    b.tw.node("node1").cpu("4").memory("10000").add();
    b.tw.node("node2").cpu("6").memory("10000").add();
    const PodId p = b.tw.pod("p").cpu("3").memory("5000").add();
    b.start(profile);
    const fw::PodEvaluation ev = b.evaluate(p);
    CHECK(b.normalized(ev, 0, kBalanced) == 87);
    CHECK(b.normalized(ev, 1, kBalanced) == 100);
  }
  // cpuOnly (3 cpu, memory 0) runs on node1, cpuAndMemory (3 cpu, 5000) on node2.
  auto scheduled = [&](const std::string& node2_memory, Expect want) {
    EvaluationBench b;
    b.tw.node("node1").cpu("10").memory("20000").add();
    b.tw.node("node2").cpu("10").memory(node2_memory).add();
    const PodId cpu_only = b.tw.pod("cpu-only").cpu("3").add();
    const PodId cpu_mem = b.tw.pod("cpu-and-memory").cpu("3").memory("5000").add();
    const PodId p = b.tw.pod("p").cpu("3").memory("5000").add();
    b.start(profile);
    b.place(cpu_only, 0);
    b.place(cpu_mem, 1);
    const fw::PodEvaluation ev = b.evaluate(p);
    CHECK(b.normalized(ev, 0, kBalanced) == want.node1);
    CHECK(b.normalized(ev, 1, kBalanced) == want.node2);
  };
  SUBCASE("resources requested, pods scheduled with resources") {
    // node1: cpu 60 %, memory 25 % -> 82; node2: 60 %, 50 % -> 95.
    scheduled("20000", {82, 95});
  }
  SUBCASE("resources requested, pods scheduled with resources, differently sized nodes") {
    // node2: cpu 60 %, memory 20 % -> 80.
    scheduled("50000", {82, 80});
  }
  SUBCASE("requested resources at node capacity") {
    // The pod is cpuOnly; node1 holds cpuOnly, node2 cpuAndMemory: node1 cpu 100 %, memory 0 ->
    // 50; node2 cpu 100 %, memory 50 % -> 75.
    EvaluationBench b;
    b.tw.node("node1").cpu("6").memory("10000").add();
    b.tw.node("node2").cpu("6").memory("10000").add();
    const PodId cpu_only = b.tw.pod("cpu-only").cpu("3").add();
    const PodId cpu_mem = b.tw.pod("cpu-and-memory").cpu("3").memory("5000").add();
    const PodId p = b.tw.pod("p").cpu("3").add();
    b.start(profile);
    b.place(cpu_only, 0);
    b.place(cpu_mem, 1);
    const fw::PodEvaluation ev = b.evaluate(p);
    CHECK(b.normalized(ev, 0, kBalanced) == 50);
    CHECK(b.normalized(ev, 1, kBalanced) == 75);
  }
  const std::string with_scalar =
      single_plugin_profile(kBalanced,
                            "{resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}, "
                            "{name: example.com/accel, weight: 1}]}",
                            false);
  SUBCASE("include scalar resource on a node for balanced resource allocation") {
    // Upstream's scalar resource is nvidia.com/gpu, a plain extended resource there; capsim
    // allocates nvidia.com/gpu by device unit, so a device-less extended resource of the same
    // amounts stands in. node1: cpu 3/3.5, memory 5000/40000, 4/8 -> 70; node2: 1/8 -> 65.
    EvaluationBench b;
    b.tw.node("node1").cpu("3500m").memory("40000").resource("example.com/accel", 8).add();
    b.tw.node("node2").cpu("3500m").memory("40000").resource("example.com/accel", 8).add();
    const PodId cpu_mem = b.tw.pod("cpu-and-memory").cpu("3").memory("5000").add();
    const PodId cpu_mem_acc =
        b.tw.pod("cpu-memory-accel").cpu("3").memory("5000").resource("example.com/accel", 3).add();
    const PodId p = b.tw.pod("p").resource("example.com/accel", 1).add();
    b.start(with_scalar);
    b.place(cpu_mem_acc, 0);
    b.place(cpu_mem, 1);
    const fw::PodEvaluation ev = b.evaluate(p);
    CHECK(b.normalized(ev, 0, kBalanced) == 70);
    CHECK(b.normalized(ev, 1, kBalanced) == 65);
  }
  SUBCASE("node without the scalar resource should skip the scalar resource") {
    // cpu 3/3.5, memory 5000/40000 on both -> 63.
    EvaluationBench b;
    b.tw.node("node1").cpu("3500m").memory("40000").resource("example.com/accel", 8).add();
    b.tw.node("node2").cpu("3500m").memory("40000").add();
    const PodId p = b.tw.pod("p").cpu("3").memory("5000").add();
    b.start(with_scalar);
    const fw::PodEvaluation ev = b.evaluate(p);
    CHECK(b.normalized(ev, 0, kBalanced) == 63);
    CHECK(b.normalized(ev, 1, kBalanced) == 63);
  }
}

TEST_CASE("TaintToleration scores and filters as upstream's TestTaintTolerationScore and Filter") {
  const std::string profile = single_plugin_profile("TaintToleration", "", true);
  SUBCASE(
      "Score: node with taints tolerated by the pod, gets a higher score than those node "
      "with intolerable taints") {
    EvaluationBench b;
    b.tw.node("nodeA").cpu("4").taint("foo", "bar", "PreferNoSchedule").add();
    b.tw.node("nodeB").cpu("4").taint("foo", "blah", "PreferNoSchedule").add();
    const PodId p = b.tw.pod("p").toleration("foo", "bar", "PreferNoSchedule").add();
    b.start(profile);
    const fw::PodEvaluation ev = b.evaluate(p);
    CHECK(b.normalized(ev, 0, "TaintToleration") == 100);
    CHECK(b.normalized(ev, 1, "TaintToleration") == 0);
  }
  SUBCASE("Score: the more intolerable taints a node has, the lower score it gets.") {
    EvaluationBench b;
    b.tw.node("nodeA").cpu("4").add();
    b.tw.node("nodeB").cpu("4").taint("cpu-type", "arm64", "PreferNoSchedule").add();
    b.tw.node("nodeC")
        .cpu("4")
        .taint("cpu-type", "arm64", "PreferNoSchedule")
        .taint("disk-type", "ssd", "PreferNoSchedule")
        .add();
    const PodId p = b.tw.pod("p").toleration("foo", "bar", "PreferNoSchedule").add();
    b.start(profile);
    const fw::PodEvaluation ev = b.evaluate(p);
    CHECK(b.normalized(ev, 0, "TaintToleration") == 100);
    CHECK(b.normalized(ev, 1, "TaintToleration") == 50);
    CHECK(b.normalized(ev, 2, "TaintToleration") == 0);
    CHECK(b.score(ev, 2, "TaintToleration").raw == 2);  // intolerable taints, before Normalize
  }
  SUBCASE("Score: only taints and tolerations that have effect PreferNoSchedule are checked") {
    // nodeB's NoSchedule taint is tolerated (so the node passes Filter) and not counted.
    EvaluationBench b;
    b.tw.node("nodeA").cpu("4").add();
    b.tw.node("nodeB").cpu("4").taint("cpu-type", "arm64", "NoSchedule").add();
    b.tw.node("nodeC")
        .cpu("4")
        .taint("cpu-type", "arm64", "PreferNoSchedule")
        .taint("disk-type", "ssd", "PreferNoSchedule")
        .add();
    const PodId p = b.tw.pod("p")
                        .toleration("cpu-type", "arm64", "NoSchedule")
                        .toleration("disk-type", "ssd", "NoSchedule")
                        .add();
    b.start(profile);
    const fw::PodEvaluation ev = b.evaluate(p);
    CHECK(b.normalized(ev, 0, "TaintToleration") == 100);
    CHECK(b.normalized(ev, 1, "TaintToleration") == 100);
    CHECK(b.normalized(ev, 2, "TaintToleration") == 0);
  }
  SUBCASE("Filter: the TestTaintTolerationFilter cases, one node each") {
    struct Case {
      const char* name;
      const char* tol_key;
      const char* tol_value;
      const char* tol_effect;
      bool exists;
      const char* taint_value;
      const char* taint_effect;
      bool feasible;
    };
    const Case cases[] = {
        {"A pod having no tolerations can't be scheduled onto a node with nonempty taints", "", "",
         "", false, "user1", "NoSchedule", false},
        {"A pod which can be scheduled on a dedicated node assigned to user1 with effect "
         "NoSchedule",
         "dedicated", "user1", "NoSchedule", false, "user1", "NoSchedule", true},
        {"A pod which can't be scheduled on a dedicated node assigned to user2 with effect "
         "NoSchedule",
         "dedicated", "user2", "NoSchedule", false, "user1", "NoSchedule", false},
        {"A pod has a toleration that keys and values match the taint on the node, but "
         "(non-empty) effect doesn't match, can't be scheduled onto the node",
         "dedicated", "user1", "PreferNoSchedule", false, "user1", "NoSchedule", false},
        {"The pod has a toleration that keys and values match the taint on the node, the effect "
         "of toleration is empty, and the effect of taint is NoSchedule",
         "dedicated", "user1", "", false, "user1", "NoSchedule", true},
        {"The pod has no toleration, but the effect of taint on node is PreferNoSchedule", "", "",
         "", false, "user1", "PreferNoSchedule", true},
    };
    for (const Case& c : cases) {
      CAPTURE(c.name);
      EvaluationBench b;
      b.tw.node("nodeA").cpu("4").taint("dedicated", c.taint_value, c.taint_effect).add();
      auto pb = b.tw.pod("p");
      if (*c.tol_key != 0) pb.toleration(c.tol_key, c.tol_value, c.tol_effect, c.exists);
      const PodId p = pb.add();
      b.start(profile);
      const fw::PodEvaluation ev = b.evaluate(p);
      CHECK(ev.nodes[0].feasible == c.feasible);
      const fw::PluginVerdict v = b.filter(ev, 0, "TaintToleration");
      if (c.feasible) {
        CHECK(v.code == fw::Code::kSuccess);
      } else {
        // Upstream: UnschedulableAndUnresolvable, "node(s) had untolerated taint(s)"; capsim's
        // message names the taint, as kube-scheduler's does since v1.28 ({key: value}).
        CHECK(v.code == fw::Code::kUnschedulableAndUnresolvable);
        CHECK(v.reason.find("untolerated taint") != std::string::npos);
      }
    }
  }
}

TEST_CASE("NodeAffinity scores as upstream's TestNodeAffinityPriority") {
  SUBCASE(
      "all nodes matches the preferred scheduling requirements of pod but with different "
      "priorities") {
    // Preferred terms: weight 2 foo=bar; weight 4 key=value; weight 5 foo=bar, key=value,
    // az=az1. node1 (foo=bar) 2, node5 (all three) 11, node2 (key=value) 4; NormalizeScore
    // scales to the maximum: 2*100/11 = 18, 100, 4*100/11 = 36.
    EvaluationBench b;
    b.tw.node("node1").cpu("4").label("foo", "bar").add();
    b.tw.node("node5").cpu("4").label("foo", "bar").label("key", "value").label("az", "az1").add();
    b.tw.node("node2").cpu("4").label("key", "value").add();
    const PodId p = b.tw.pod("p").add();
    auto req = [&](const char* k, const char* v) {
      NodeSelectorRequirement r;
      r.key = b.tw.sym(k);
      r.op = SelectorOp::kIn;
      r.values = {b.tw.sym(v)};
      return r;
    };
    auto& pref = b.tw.world().pods[p].affinity.mut().preferred;
    pref.push_back({2, NodeSelectorTerm{{req("foo", "bar")}, {}}});
    pref.push_back({4, NodeSelectorTerm{{req("key", "value")}, {}}});
    pref.push_back(
        {5, NodeSelectorTerm{{req("foo", "bar"), req("key", "value"), req("az", "az1")}, {}}});
    b.start(single_plugin_profile("NodeAffinity", "", true));
    const fw::PodEvaluation ev = b.evaluate(p);
    CHECK(b.score(ev, 0, "NodeAffinity").raw == 2);
    CHECK(b.normalized(ev, 0, "NodeAffinity") == 18);
    CHECK(b.normalized(ev, 1, "NodeAffinity") == 100);
    CHECK(b.normalized(ev, 2, "NodeAffinity") == 36);
    CHECK(ev.selected == 1);
  }
  SUBCASE("no node matches the preferred scheduling requirements of pod") {
    EvaluationBench b;
    b.tw.node("node1").cpu("4").label("foo", "bar").add();
    b.tw.node("node2").cpu("4").label("key", "value").add();
    const PodId p = b.tw.pod("p").add();
    NodeSelectorRequirement r;
    r.key = b.tw.sym("az");
    r.values = {b.tw.sym("az9")};
    b.tw.world().pods[p].affinity.mut().preferred.push_back({2, NodeSelectorTerm{{r}, {}}});
    b.start(single_plugin_profile("NodeAffinity", "", true));
    const fw::PodEvaluation ev = b.evaluate(p);
    CHECK(b.normalized(ev, 0, "NodeAffinity") == 0);
    CHECK(b.normalized(ev, 1, "NodeAffinity") == 0);
  }
}
