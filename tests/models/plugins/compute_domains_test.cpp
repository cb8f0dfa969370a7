// ComputeDomains (models/plugins/compute_domains.hpp) through fw::evaluate_pod, the code path
// `capsim score` runs: which nodes a pod of a ComputeDomain may use. Two NVLink domains of two
// nodes each (nvidia.com/gpu.clique a and b, as GFD labels MNNVL nodes) and one node without the
// label. The rules are those of NVIDIA's DRA driver (docs/dra.md#computedomains): channels only
// on MNNVL nodes, one ComputeDomain per node's IMEX daemon, and memory shared over NVLink only
// inside one clique.
#include <doctest/doctest.h>

#include "fixtures/evaluation_bench.hpp"
#include "sim/input_error.hpp"

using namespace capsim;
using capsim::testing::EvaluationBench;
using capsim::testing::single_plugin_profile;

namespace {

constexpr const char* kPlugin = "ComputeDomains";
constexpr auto kOk = fw::Code::kSuccess;
constexpr auto kNo = fw::Code::kUnschedulable;
constexpr auto kNever = fw::Code::kUnschedulableAndUnresolvable;

struct Bench {
  EvaluationBench b;
  Bench() {
    b.tw.node("a0").label("nvidia.com/gpu.clique", "a").add();
    b.tw.node("a1").label("nvidia.com/gpu.clique", "a").add();
    b.tw.node("b0").label("nvidia.com/gpu.clique", "b").add();
    b.tw.node("b1").label("nvidia.com/gpu.clique", "b").add();
    b.tw.node("plain").add();
    for (const char* name : {"train", "other"}) {
      ComputeDomain cd;
      cd.name = name;
      cd.channel_template = std::string(name) + "-channel";
      b.tw.world().dra.compute_domains.push_back(cd);
    }
  }
  PodId pod(const std::string& name, std::int32_t domain) {
    const PodId p = b.tw.pod(name).add();
    b.tw.world().pods[p].compute_domain = domain;
    return p;
  }
  // The plugin's code per node (a0, a1, b0, b1, plain) for `incoming`.
  std::vector<fw::Code> codes(PodId incoming, const std::string& args = "") {
    b.start(single_plugin_profile(kPlugin, args, true));
    for (const auto& [p, n] : placed)
      b.place(p, n);
    const fw::PodEvaluation ev = b.evaluate(incoming);
    REQUIRE(ev.error.empty());
    std::vector<fw::Code> out;
    for (NodeId n = 0; n < 5; ++n)
      out.push_back(b.filter(ev, n, kPlugin).code);
    return out;
  }
  std::string reason(PodId incoming, NodeId node) {
    const fw::PodEvaluation ev = b.evaluate(incoming);
    return b.filter(ev, node, kPlugin).reason;
  }
  std::vector<std::pair<PodId, NodeId>> placed;
};

}  // namespace

TEST_CASE("ComputeDomains: the first pod of a domain may use any node of an NVLink domain") {
  Bench t;
  const PodId p = t.pod("train-0", 0);
  CHECK(t.codes(p) == std::vector<fw::Code>{kOk, kOk, kOk, kOk, kNever});
  CHECK(t.reason(p, 4) ==
        "node(s) were in no NVLink domain (no nvidia.com/gpu.clique label: no IMEX channels)");
}

TEST_CASE("ComputeDomains: later pods stay in the first pod's NVLink domain") {
  Bench t;
  t.placed = {{t.pod("train-0", 0), 2}};  // on b0
  const PodId p = t.pod("train-1", 0);
  SUBCASE("span OneDomain (default): clique b only, b0 included (one IMEX daemon serves both)") {
    CHECK(t.codes(p) == std::vector<fw::Code>{kNever, kNever, kOk, kOk, kNever});
    CHECK(t.reason(p, 0) == "node(s) were outside the ComputeDomain's NVLink domain");
  }
  SUBCASE("span Any: every MNNVL node") {
    CHECK(t.codes(p, "{span: Any}") == std::vector<fw::Code>{kOk, kOk, kOk, kOk, kNever});
  }
}

TEST_CASE("ComputeDomains: a node running another domain's pod is refused, others are not") {
  Bench t;
  t.placed = {{t.pod("other-0", 1), 0}};  // domain "other" on a0
  const PodId p = t.pod("train-0", 0);
  // a0 is held by "other" (Unschedulable: evicting its pod would free it); a1 is free.
  CHECK(t.codes(p) == std::vector<fw::Code>{kNo, kOk, kOk, kOk, kNever});
  CHECK(t.reason(p, 0) == "node(s) were in another ComputeDomain");
}

TEST_CASE("ComputeDomains: pods without a domain are skipped at PreFilter and share nodes") {
  Bench t;
  t.placed = {{t.pod("train-0", 0), 0}};
  const PodId plain = t.b.tw.pod("web").add();
  t.b.start(single_plugin_profile(kPlugin, "", true));
  for (const auto& [p, n] : t.placed)
    t.b.place(p, n);
  const fw::PodEvaluation ev = t.b.evaluate(plain);
  REQUIRE(ev.error.empty());
  bool skipped = false;
  for (const fw::PluginVerdict& v : ev.pre_filter) {
    if (t.b.plugin_name(v.plugin) == kPlugin) skipped = v.code == fw::Code::kSkip;
  }
  CHECK(skipped);
  for (const auto& node : ev.nodes)
    CHECK(node.feasible);
}

TEST_CASE("ComputeDomains: bad args are refused") {
  Bench t;
  const PodId p = t.pod("train-0", 0);
  (void)p;
  std::string error;
  try {
    t.b.start(single_plugin_profile(kPlugin, "{span: Anywhere}", true));
  } catch (const InputError& e) {
    error = e.what();
  }
  CHECK(error.find("unknown span 'Anywhere'; use OneDomain or Any") != std::string::npos);
}
