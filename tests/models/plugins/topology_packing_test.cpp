// TopologyPacking (models/plugins/topology_packing.hpp) through fw::evaluate_pod, the code path
// `capsim score` runs. Five 4-GPU nodes: a0, a1 in NVLink domain a and b0, b1 in domain b, both in
// block x; c0 alone in domain c of block y. One 4-GPU pod runs on a0. The worked numbers:
//   a1: domain a (4 + 4) / 8 = 1.0, block x (4 + 4) / 16 = 0.5 -> 100 x (1 + 0.8 x 0.5) / 1.8 = 78
//   b0: domain b (0 + 4) / 8 = 0.5, block x 0.5                 -> 100 x (0.5 + 0.4) / 1.8  = 50
//   c0: domain c (0 + 4) / 4 = 1.0, block y 4 / 4 = 1.0         -> 100
// With fading 0 only the NVLink domain counts (a1 and c0 100, b0 50); the pod's own GPUs count,
// so an empty domain that the pod would fill scores like a full one. A gang member's demand is
// its gang's GPUs not yet bound: a 2 x 4-GPU gang with nothing bound needs 8 GPUs, which domain
// a (4 free) and c (4 GPUs) cannot give: only b fits, at (0 + 8) / 8 = 1.0.
#include <doctest/doctest.h>

#include "fixtures/bind.hpp"
#include "fixtures/evaluation_bench.hpp"
#include "sim/topology.hpp"

using namespace capsim;
using capsim::testing::EvaluationBench;

namespace {

constexpr const char* kPlugin = "TopologyPacking";

std::string profile(const std::string& args) {
  std::string y =
      "schedulerName: t\nplugins:\n  multiPoint:\n    disabled: [{name: \"*\"}]\n"
      "    enabled: [{name: PrioritySort}, {name: TopologyPacking}]\n";
  if (!args.empty()) y += "pluginConfig:\n  - name: TopologyPacking\n    args: " + args + "\n";
  return y;
}

struct Bench {
  EvaluationBench b;
  PodId running = kNoPod;
  PodId incoming = kNoPod;
  Bench() {
    const std::pair<const char*, const char*> nodes[] = {
        {"a0", "a"}, {"a1", "a"}, {"b0", "b"}, {"b1", "b"}, {"c0", "c"}};
    for (const auto& [name, clique] : nodes) {
      b.tw.node(name)
          .cpu("64")
          .memory("512Gi")
          .gpus(4, "B200")
          .label("blk", clique[0] == 'c' ? "y" : "x")
          .label("nvidia.com/gpu.clique", clique)
          .label("kubernetes.io/hostname", name)
          .add();
    }
    World& w = b.tw.world();
    w.topology.levels = {
        {"block", "blk"}, {"nvlink", "nvidia.com/gpu.clique"}, {"host", "kubernetes.io/hostname"}};
    w.topology.slowdown = {1.0, 1.0, 1.0};
    index_topology(w);
    running = b.tw.pod("running").cpu("1").gpus(4).add();
    incoming = b.tw.pod("incoming").cpu("1").gpus(4).add();
  }
  std::vector<std::int64_t> scores(const std::string& args) {
    b.start(profile(args));
    const std::uint16_t units[] = {0, 1, 2, 3};
    capsim::testing::bind_units(*b.cluster, running, 0, units);
    const fw::PodEvaluation ev = b.evaluate(incoming);
    REQUIRE(ev.error.empty());
    std::vector<std::int64_t> out;
    for (NodeId n = 1; n < 5; ++n)
      out.push_back(b.normalized(ev, n, kPlugin));
    return out;
  }
};

}  // namespace

TEST_CASE("TopologyPacking scores the fullest domains highest, tighter levels weighing more") {
  Bench t;
  CHECK(t.scores("") == std::vector<std::int64_t>{78, 50, 50, 100});  // a1, b0, b1, c0
  CHECK(t.scores("{fading: 0}") == std::vector<std::int64_t>{100, 50, 50, 100});
  // fading 1: both levels alike: a1 (1 + 0.5) / 2 = 75, b0 (0.5 + 0.5) / 2 = 50, c0 100.
  CHECK(t.scores("{fading: 1}") == std::vector<std::int64_t>{75, 50, 50, 100});
}

TEST_CASE("TopologyPacking sends a gang's first pod to a domain that fits the whole gang") {
  Bench t;
  World& w = t.b.tw.world();
  w.gangs.push_back(GangSpec{"g", 2, "test"});
  w.pods[t.incoming].gang = 0;
  // b0: domain b (0 + 8) / 8 = 1.0, block x (4 + 8) / 16 = 0.75 -> 100 x (1 + 0.6) / 1.8 = 89;
  // a1: domain a 4 + 8 > 8 -> 0, block x 0.75 -> 100 x 0.6 / 1.8 = 33; c0: 8 > 4 in both -> 0.
  CHECK(t.scores("") == std::vector<std::int64_t>{33, 89, 89, 0});
}

TEST_CASE("TopologyPacking skips pods without whole GPUs") {
  Bench t;
  const PodId cpu = t.b.tw.pod("cpu-only").cpu("1").add();
  t.b.start(profile(""));
  const fw::PodEvaluation ev = t.b.evaluate(cpu);
  REQUIRE(ev.error.empty());
  bool skipped = false;
  for (const fw::PluginVerdict& v : ev.pre_score) {
    if (t.b.plugin_name(v.plugin) == kPlugin) skipped = v.code == fw::Code::kSkip;
  }
  CHECK(skipped);
}
