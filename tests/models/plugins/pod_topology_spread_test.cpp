// PodTopologySpread against kube-scheduler's own test tables (pkg/scheduler/framework/plugins/
// podtopologyspread/filtering_test.go and scoring_test.go), with the same nodes, pods and
// expected codes and scores, run through fw::evaluate_pod (the code path of `capsim score`).
// Each case names the upstream test function and case. Upstream's score tests give some nodes as
// `failedNodes` (not candidates); here those nodes are cordoned and NodeUnschedulable filters
// them out, so they are in the cluster but not scored.
//
// Left out, and why:
//  - cases whose existing pods sit on nodes absent from the snapshot (upstream counts nothing
//    there; capsim cannot bind a pod to a node that does not exist);
//  - the system-defaulting cases that select through a Service: capsim reads no Service; the
//    owning ReplicaSet's or StatefulSet's selector stands in (PodTopologyRules::owner_selector),
//    and the case "system defaulting, nodes don't have zone, pods match service" is run with it.
#include <doctest/doctest.h>

#include "fixtures/evaluation_bench.hpp"

using namespace capsim;
using capsim::testing::EvaluationBench;
using capsim::testing::single_plugin_profile;

namespace {

constexpr const char* kSpread = "PodTopologySpread";

LabelSelector exists(EvaluationBench& b, const std::string& key) {
  LabelSelector s;
  s.present = true;
  s.requirements.push_back({b.tw.sym(key), LabelOp::kExists, {}});
  return s;
}

TopologySpreadConstraint constraint(EvaluationBench& b, std::int32_t skew, const std::string& key,
                                    WhenUnsatisfiable when, LabelSelector selector) {
  TopologySpreadConstraint c;
  c.max_skew = skew;
  c.topology_key = b.tw.sym(key);
  c.when_unsatisfiable = when;
  c.selector = std::move(selector);
  return c;
}

constexpr auto kHard = WhenUnsatisfiable::kDoNotSchedule;
constexpr auto kSoft = WhenUnsatisfiable::kScheduleAnyway;

// The four nodes most upstream cases use: node-a, node-b in zone1, node-x, node-y in zone2, each
// labelled node=<name>.
void four_nodes(EvaluationBench& b) {
  for (const char* n : {"node-a", "node-b", "node-x", "node-y"}) {
    const bool z1 = std::string(n) == "node-a" || std::string(n) == "node-b";
    b.tw.node(n)
        .cpu("100")
        .memory("100Gi")
        .label("zone", z1 ? "zone1" : "zone2")
        .label("node", n)
        .add();
  }
}

// Existing pods labelled foo="" on the given nodes, returned so the caller can bind them.
std::vector<std::pair<PodId, NodeId>> foo_pods(EvaluationBench& b,
                                               const std::vector<std::pair<NodeId, int>>& per_node,
                                               const std::string& ns = "default") {
  std::vector<std::pair<PodId, NodeId>> out;
  for (const auto& [node, n] : per_node) {
    for (int i = 0; i < n; ++i) {
      const PodId p = b.tw.pod("e" + std::to_string(node) + "-" + std::to_string(i))
                          .label("foo", "")
                          .ns(ns)
                          .add();
      out.emplace_back(p, node);
    }
  }
  return out;
}

void place_all(EvaluationBench& b, const std::vector<std::pair<PodId, NodeId>>& pods) {
  for (const auto& [p, n] : pods)
    b.place(p, n);
}

PodSpec& spec(EvaluationBench& b, PodId p) {
  return b.tw.world().pods[p];
}

// The filter codes of every node, in node order.
std::vector<fw::Code> codes(EvaluationBench& b, const fw::PodEvaluation& ev) {
  std::vector<fw::Code> out;
  for (std::size_t n = 0; n < ev.nodes.size(); ++n)
    out.push_back(b.filter(ev, static_cast<NodeId>(n), kSpread).code);
  return out;
}

constexpr auto kOk = fw::Code::kSuccess;
constexpr auto kNo = fw::Code::kUnschedulable;
constexpr auto kNever = fw::Code::kUnschedulableAndUnresolvable;

std::vector<fw::Code> filter_codes(EvaluationBench& b, PodId pod) {
  const fw::PodEvaluation ev = b.evaluate(pod);
  REQUIRE(ev.error.empty());
  return codes(b, ev);
}

// A profile with PodTopologySpread and NodeUnschedulable (which removes the cordoned
// "failedNodes" from the candidates).
const std::string kScoreProfile =
    "schedulerName: t\nplugins:\n  multiPoint:\n    disabled: [{name: \"*\"}]\n"
    "    enabled: [{name: PrioritySort}, {name: PodTopologySpread}, {name: NodeUnschedulable}]\n";

}  // namespace

TEST_CASE("PodTopologySpread filters nodes as upstream's TestSingleConstraint") {
  SUBCASE("no existing pods") {
    EvaluationBench b;
    four_nodes(b);
    const PodId p = b.tw.pod("p").label("foo", "").add();
    spec(b, p).pod_rules.mut().spread = {constraint(b, 1, "zone", kHard, exists(b, "foo"))};
    b.start(single_plugin_profile(kSpread, "", true));
    CHECK(filter_codes(b, p) == std::vector<fw::Code>{kOk, kOk, kOk, kOk});
  }
  SUBCASE("existing pods in a different namespace do not count") {
    // Counted: zone1 0 (both pods in ns1/ns2), zone2 2; min 0: zone2 gets 2 + 1 - 0 > 1.
    EvaluationBench b;
    four_nodes(b);
    auto others = foo_pods(b, {{0, 1}}, "ns1");
    auto more = foo_pods(b, {{0, 1}}, "ns2");
    auto same = foo_pods(b, {{2, 1}, {3, 1}});
    const PodId p = b.tw.pod("p").label("foo", "").add();
    spec(b, p).pod_rules.mut().spread = {constraint(b, 1, "zone", kHard, exists(b, "foo"))};
    b.start(single_plugin_profile(kSpread, "", true));
    place_all(b, others);
    place_all(b, more);
    place_all(b, same);
    CHECK(filter_codes(b, p) == std::vector<fw::Code>{kOk, kOk, kNo, kNo});
  }
  SUBCASE("pods spread across zones as 3/3, all nodes fit") {
    // 3 + 1 - 3 = 1 <= 1 everywhere.
    EvaluationBench b;
    four_nodes(b);
    auto e = foo_pods(b, {{0, 2}, {1, 1}, {3, 3}});
    const PodId p = b.tw.pod("p").label("foo", "").add();
    spec(b, p).pod_rules.mut().spread = {constraint(b, 1, "zone", kHard, exists(b, "foo"))};
    b.start(single_plugin_profile(kSpread, "", true));
    place_all(b, e);
    CHECK(filter_codes(b, p) == std::vector<fw::Code>{kOk, kOk, kOk, kOk});
  }
  SUBCASE("pods spread across zones as 1/2 due to absence of label 'zone' on node-b") {
    // node-b carries "zon": not a domain (its pod is not counted) and unresolvable itself.
    EvaluationBench b;
    b.tw.node("node-a").label("zone", "zone1").label("node", "node-a").add();
    b.tw.node("node-b").label("zon", "zone1").label("node", "node-b").add();
    b.tw.node("node-x").label("zone", "zone2").label("node", "node-x").add();
    b.tw.node("node-y").label("zone", "zone2").label("node", "node-y").add();
    auto e = foo_pods(b, {{0, 1}, {1, 1}, {2, 1}, {3, 1}});
    const PodId p = b.tw.pod("p").label("foo", "").add();
    spec(b, p).pod_rules.mut().spread = {constraint(b, 1, "zone", kHard, exists(b, "foo"))};
    b.start(single_plugin_profile(kSpread, "", true));
    place_all(b, e);
    CHECK(filter_codes(b, p) == std::vector<fw::Code>{kOk, kNever, kNo, kNo});
  }
  SUBCASE("pod cannot be scheduled as all nodes don't have label 'rack'") {
    EvaluationBench b;
    b.tw.node("node-a").label("zone", "zone1").label("node", "node-a").add();
    b.tw.node("node-x").label("zone", "zone2").label("node", "node-x").add();
    const PodId p = b.tw.pod("p").label("foo", "").add();
    spec(b, p).pod_rules.mut().spread = {constraint(b, 1, "rack", kHard, exists(b, "foo"))};
    b.start(single_plugin_profile(kSpread, "", true));
    const fw::PodEvaluation ev = b.evaluate(p);
    CHECK(codes(b, ev) == std::vector<fw::Code>{kNever, kNever});
    CHECK(b.filter(ev, 0, kSpread).reason ==
          "node(s) didn't match pod topology spread constraints (missing required label)");
  }
  SUBCASE("pods spread across nodes as 2/1/0/3, only node-x fits") {
    EvaluationBench b;
    four_nodes(b);
    auto e = foo_pods(b, {{0, 2}, {1, 1}, {3, 3}});
    const PodId p = b.tw.pod("p").label("foo", "").add();
    spec(b, p).pod_rules.mut().spread = {constraint(b, 1, "node", kHard, exists(b, "foo"))};
    b.start(single_plugin_profile(kSpread, "", true));
    place_all(b, e);
    const fw::PodEvaluation ev = b.evaluate(p);
    CHECK(codes(b, ev) == std::vector<fw::Code>{kNo, kNo, kOk, kNo});
    CHECK(b.filter(ev, 0, kSpread).reason ==
          "node(s) didn't match pod topology spread constraints");
  }
  SUBCASE("pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit") {
    EvaluationBench b;
    four_nodes(b);
    auto e = foo_pods(b, {{0, 2}, {1, 1}, {3, 3}});
    const PodId p = b.tw.pod("p").label("foo", "").add();
    spec(b, p).pod_rules.mut().spread = {constraint(b, 2, "node", kHard, exists(b, "foo"))};
    b.start(single_plugin_profile(kSpread, "", true));
    place_all(b, e);
    CHECK(filter_codes(b, p) == std::vector<fw::Code>{kNo, kOk, kOk, kNo});
  }
  SUBCASE("pods spread across nodes as 2/1/0/3, but pod doesn't match itself") {
    // No self-match: 2 + 0 - 0 > 1 on node-a, 1 <= 1 on node-b.
    EvaluationBench b;
    four_nodes(b);
    auto e = foo_pods(b, {{0, 2}, {1, 1}, {3, 3}});
    const PodId p = b.tw.pod("p").label("bar", "").add();
    spec(b, p).pod_rules.mut().spread = {constraint(b, 1, "node", kHard, exists(b, "foo"))};
    b.start(single_plugin_profile(kSpread, "", true));
    place_all(b, e);
    CHECK(filter_codes(b, p) == std::vector<fw::Code>{kNo, kOk, kOk, kNo});
  }
  SUBCASE("incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits") {
    // Only node-a and node-y are domains (nodeAffinityPolicy Honor): min 2, node-a 2 + 1 - 2 = 1.
    // NodeAffinity's own filter is not in the profile, as upstream runs only this plugin.
    EvaluationBench b;
    four_nodes(b);
    auto e = foo_pods(b, {{0, 2}, {1, 1}, {3, 3}});
    const PodId p = b.tw.pod("p").label("foo", "").add();
    spec(b, p).pod_rules.mut().spread = {constraint(b, 1, "node", kHard, exists(b, "foo"))};
    NodeSelectorTerm term;
    term.match_expressions.push_back(
        {b.tw.sym("node"), SelectorOp::kIn, {b.tw.sym("node-a"), b.tw.sym("node-y")}, 0});
    spec(b, p).affinity.mut().required = std::vector<NodeSelectorTerm>{term};
    b.start(single_plugin_profile(kSpread, "", true));
    place_all(b, e);
    CHECK(filter_codes(b, p) == std::vector<fw::Code>{kOk, kOk, kOk, kNo});
  }
  SUBCASE("terminating Pods should be excluded") {
    EvaluationBench b;
    b.tw.node("node-a").label("node", "node-a").add();
    b.tw.node("node-b").label("node", "node-b").add();
    auto e = foo_pods(b, {{0, 1}, {1, 1}});
    const PodId p = b.tw.pod("p").label("foo", "").add();
    spec(b, p).pod_rules.mut().spread = {constraint(b, 1, "node", kHard, exists(b, "foo"))};
    b.start(single_plugin_profile(kSpread, "", true));
    place_all(b, e);
    b.cluster->pod(e[0].first).phase = PodPhase::kTerminating;
    CHECK(filter_codes(b, p) == std::vector<fw::Code>{kOk, kNo});
  }
}

TEST_CASE("PodTopologySpread filters nodes as upstream's TestMultipleConstraints") {
  SUBCASE("two Constraints on zone and node, spreads = [3/3, 2/1/0/3]") {
    EvaluationBench b;
    four_nodes(b);
    auto e = foo_pods(b, {{0, 2}, {1, 1}, {3, 3}});
    const PodId p = b.tw.pod("p").label("foo", "").add();
    spec(b, p).pod_rules.mut().spread = {constraint(b, 1, "zone", kHard, exists(b, "foo")),
                                         constraint(b, 1, "node", kHard, exists(b, "foo"))};
    b.start(single_plugin_profile(kSpread, "", true));
    place_all(b, e);
    CHECK(filter_codes(b, p) == std::vector<fw::Code>{kNo, kNo, kOk, kNo});
  }
  SUBCASE("two Constraints on zone and node, spreads = [3/4, 2/1/0/4]") {
    EvaluationBench b;
    four_nodes(b);
    auto e = foo_pods(b, {{0, 2}, {1, 1}, {3, 4}});
    const PodId p = b.tw.pod("p").label("foo", "").add();
    spec(b, p).pod_rules.mut().spread = {constraint(b, 1, "zone", kHard, exists(b, "foo")),
                                         constraint(b, 1, "node", kHard, exists(b, "foo"))};
    b.start(single_plugin_profile(kSpread, "", true));
    place_all(b, e);
    CHECK(filter_codes(b, p) == std::vector<fw::Code>{kNo, kNo, kNo, kNo});
  }
}

TEST_CASE("PodTopologySpread applies minDomains and the node inclusion policies") {
  // capsim's own cases (upstream's tables cover them in TestPreFilterState, which checks the
  // internal state rather than Filter); the arithmetic is in each comment.
  SUBCASE("fewer domains than minDomains make the global minimum 0") {
    // zone1 2, zone2 2: min 2, so 2 + 1 - 2 = 1 <= 1 fits everywhere; with minDomains 3 the
    // minimum is 0 and 2 + 1 - 0 = 3 > 1 rejects every node.
    for (const std::int32_t min_domains : {1, 3}) {
      EvaluationBench b;
      four_nodes(b);
      auto e = foo_pods(b, {{0, 1}, {1, 1}, {2, 1}, {3, 1}});
      const PodId p = b.tw.pod("p").label("foo", "").add();
      auto c = constraint(b, 1, "zone", kHard, exists(b, "foo"));
      c.min_domains = min_domains;
      spec(b, p).pod_rules.mut().spread = {c};
      b.start(single_plugin_profile(kSpread, "", true));
      place_all(b, e);
      const fw::Code want = min_domains == 1 ? kOk : kNo;
      CHECK(filter_codes(b, p) == std::vector<fw::Code>{want, want, want, want});
    }
  }
  SUBCASE("nodeTaintsPolicy Honor leaves a tainted node's domain out") {
    // zone1's nodes are tainted NoSchedule (the pod has no toleration); one matching pod on
    // node-x. TaintToleration's own filter is not in the profile.
    for (const bool honor : {false, true}) {
      EvaluationBench b;
      b.tw.node("node-a").label("zone", "zone1").taint("t", "", "NoSchedule").add();
      b.tw.node("node-b").label("zone", "zone1").taint("t", "", "NoSchedule").add();
      b.tw.node("node-x").label("zone", "zone2").add();
      b.tw.node("node-y").label("zone", "zone2").add();
      auto e = foo_pods(b, {{2, 1}});
      const PodId p = b.tw.pod("p").label("foo", "").add();
      auto c = constraint(b, 1, "zone", kHard, exists(b, "foo"));
      if (honor) c.node_taints_policy = NodeInclusionPolicy::kHonor;
      spec(b, p).pod_rules.mut().spread = {c};
      b.start(single_plugin_profile(kSpread, "", true));
      place_all(b, e);
      // Ignore: zone1 0, zone2 1, min 0: zone2 1 + 1 - 0 = 2 > 1. Honor: only zone2 (1), so
      // min 1 and 1 + 1 - 1 = 1 fits; zone1's nodes have no counted domain: 0 + 1 - 1 = 0.
      const fw::Code z2 = honor ? kOk : kNo;
      CHECK(filter_codes(b, p) == std::vector<fw::Code>{kOk, kOk, z2, z2});
    }
  }
}

TEST_CASE("PodTopologySpread scores nodes as upstream's TestPodTopologySpreadScore") {
  auto hostname_nodes = [](EvaluationBench& b, const std::vector<std::string>& names) {
    for (const auto& n : names)
      b.tw.node(n).label("kubernetes.io/hostname", n).add();
  };
  auto score_of = [](EvaluationBench& b, PodId p) {
    const fw::PodEvaluation ev = b.evaluate(p);
    REQUIRE(ev.error.empty());
    std::vector<std::int64_t> out;
    for (std::size_t n = 0; n < ev.nodes.size(); ++n) {
      if (ev.nodes[n].feasible) out.push_back(b.normalized(ev, static_cast<NodeId>(n), kSpread));
    }
    return out;
  };
  SUBCASE("one constraint on node, no existing pods") {
    EvaluationBench b;
    hostname_nodes(b, {"node-a", "node-b"});
    const PodId p = b.tw.pod("p").label("foo", "").add();
    spec(b, p).pod_rules.mut().spread = {
        constraint(b, 1, "kubernetes.io/hostname", kSoft, exists(b, "foo"))};
    b.start(kScoreProfile);
    CHECK(score_of(b, p) == std::vector<std::int64_t>{100, 100});
  }
  SUBCASE("one constraint on node, only one node is candidate") {
    EvaluationBench b;
    b.tw.node("node-a").label("kubernetes.io/hostname", "node-a").add();
    b.tw.node("node-b").label("kubernetes.io/hostname", "node-b").unschedulable().add();
    auto e = foo_pods(b, {{0, 2}, {1, 1}});
    const PodId p = b.tw.pod("p").label("foo", "").add();
    spec(b, p).pod_rules.mut().spread = {
        constraint(b, 1, "kubernetes.io/hostname", kSoft, exists(b, "foo"))};
    b.start(kScoreProfile);
    place_all(b, e);
    CHECK(score_of(b, p) == std::vector<std::int64_t>{100});
  }
  SUBCASE("one constraint on node, all nodes have the same number of matching pods") {
    EvaluationBench b;
    hostname_nodes(b, {"node-a", "node-b"});
    auto e = foo_pods(b, {{0, 1}, {1, 1}});
    const PodId p = b.tw.pod("p").label("foo", "").add();
    spec(b, p).pod_rules.mut().spread = {
        constraint(b, 1, "kubernetes.io/hostname", kSoft, exists(b, "foo"))};
    b.start(kScoreProfile);
    place_all(b, e);
    CHECK(score_of(b, p) == std::vector<std::int64_t>{100, 100});
  }
  SUBCASE("one constraint on node, all 4 nodes are candidates") {
    // weight log(4 + 2) = 1.79; raw round(2w)=4, 2, 0, round(3w)=5; 100 x (5 + 0 - s) / 5.
    EvaluationBench b;
    hostname_nodes(b, {"node-a", "node-b", "node-c", "node-d"});
    auto e = foo_pods(b, {{0, 2}, {1, 1}, {3, 3}});
    const PodId p = b.tw.pod("p").label("foo", "").add();
    spec(b, p).pod_rules.mut().spread = {
        constraint(b, 1, "kubernetes.io/hostname", kSoft, exists(b, "foo"))};
    b.start(kScoreProfile);
    place_all(b, e);
    CHECK(score_of(b, p) == std::vector<std::int64_t>{20, 60, 100, 0});
  }
  SUBCASE("one constraint on node, null selector") {
    EvaluationBench b;
    hostname_nodes(b, {"node-a", "node-b", "node-c", "node-d"});
    auto e = foo_pods(b, {{0, 2}, {1, 1}, {3, 3}});
    const PodId p = b.tw.pod("p").label("foo", "").add();
    spec(b, p).pod_rules.mut().spread = {
        constraint(b, 1, "kubernetes.io/hostname", kSoft, LabelSelector{})};
    b.start(kScoreProfile);
    place_all(b, e);
    CHECK(score_of(b, p) == std::vector<std::int64_t>{100, 100, 100, 100});
  }
  SUBCASE("one constraint on node, all 4 nodes are candidates, maxSkew=2") {
    // raw + (maxSkew - 1) = 5, 3, 1, 6: 100 x (6 + 1 - s) / 6 = 33, 66, 100, 16.
    EvaluationBench b;
    hostname_nodes(b, {"node-a", "node-b", "node-c", "node-d"});
    auto e = foo_pods(b, {{0, 2}, {1, 1}, {3, 3}});
    const PodId p = b.tw.pod("p").label("foo", "").add();
    spec(b, p).pod_rules.mut().spread = {
        constraint(b, 2, "kubernetes.io/hostname", kSoft, exists(b, "foo"))};
    b.start(kScoreProfile);
    place_all(b, e);
    CHECK(score_of(b, p) == std::vector<std::int64_t>{33, 66, 100, 16});
  }
  SUBCASE("one constraint on node, all 4 nodes are candidates, maxSkew=3") {
    EvaluationBench b;
    hostname_nodes(b, {"node-a", "node-b", "node-c", "node-d"});
    auto e = foo_pods(b, {{0, 4}, {1, 3}, {2, 2}, {3, 1}});
    const PodId p = b.tw.pod("p").label("foo", "").add();
    spec(b, p).pod_rules.mut().spread = {
        constraint(b, 3, "kubernetes.io/hostname", kSoft, exists(b, "foo"))};
    b.start(kScoreProfile);
    place_all(b, e);
    CHECK(score_of(b, p) == std::vector<std::int64_t>{44, 66, 77, 100});
  }
  SUBCASE("system defaulting, nodes don't have zone, pods match service") {
    // Upstream selects through a Service {foo: ""}; here the owner's selector is the same. The
    // system defaults (hostname maxSkew 3; zone, which no node has) score as the case above.
    EvaluationBench b;
    hostname_nodes(b, {"node-a", "node-b", "node-c", "node-d"});
    auto e = foo_pods(b, {{0, 4}, {1, 3}, {2, 2}, {3, 1}});
    const PodId p = b.tw.pod("p").label("foo", "").add();
    LabelSelector owner;
    owner.present = true;
    owner.requirements.push_back({b.tw.sym("foo"), LabelOp::kIn, {b.tw.sym("")}});
    spec(b, p).pod_rules.mut().owner_selector = owner;
    b.start(kScoreProfile);
    place_all(b, e);
    CHECK(score_of(b, p) == std::vector<std::int64_t>{44, 66, 77, 100});
  }
  SUBCASE("one constraint on node, 3 out of 4 nodes are candidates") {
    // Hostname domains = the 3 candidates: weight log 5 = 1.61; raw 6, 3, 2: 100 x (8 - s) / 6.
    EvaluationBench b;
    b.tw.node("node-a").label("kubernetes.io/hostname", "node-a").add();
    b.tw.node("node-b").label("kubernetes.io/hostname", "node-b").add();
    b.tw.node("node-x").label("kubernetes.io/hostname", "node-x").add();
    b.tw.node("node-y").label("kubernetes.io/hostname", "node-y").unschedulable().add();
    auto e = foo_pods(b, {{0, 4}, {1, 2}, {2, 1}, {3, 3}});
    const PodId p = b.tw.pod("p").label("foo", "").add();
    spec(b, p).pod_rules.mut().spread = {
        constraint(b, 1, "kubernetes.io/hostname", kSoft, exists(b, "foo"))};
    b.start(kScoreProfile);
    place_all(b, e);
    CHECK(score_of(b, p) == std::vector<std::int64_t>{33, 83, 100});
  }
  SUBCASE(
      "one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology "
      "key") {
    // node-b lacks the key: ignored (0); weight log(2 + 2); raw 6 and 1: 100 x (7 - s) / 6.
    EvaluationBench b;
    b.tw.node("node-a").label("kubernetes.io/hostname", "node-a").add();
    b.tw.node("node-b").label("n", "node-b").add();
    b.tw.node("node-x").label("kubernetes.io/hostname", "node-x").add();
    b.tw.node("node-y").label("kubernetes.io/hostname", "node-y").unschedulable().add();
    auto e = foo_pods(b, {{0, 4}, {1, 2}, {2, 1}, {3, 3}});
    const PodId p = b.tw.pod("p").label("foo", "").add();
    spec(b, p).pod_rules.mut().spread = {
        constraint(b, 1, "kubernetes.io/hostname", kSoft, exists(b, "foo"))};
    b.start(kScoreProfile);
    place_all(b, e);
    CHECK(score_of(b, p) == std::vector<std::int64_t>{16, 0, 100});
  }
  SUBCASE("one constraint on zone, 3 out of 4 nodes are candidates") {
    // zone1 6 pods, zone2 4 (node-y counts, though no candidate); weight log 4 = 1.39: raw 8, 8,
    // 6: 100 x (14 - s) / 8 = 75, 75, 100.
    EvaluationBench b;
    b.tw.node("node-a").label("zone", "zone1").label("kubernetes.io/hostname", "node-a").add();
    b.tw.node("node-b").label("zone", "zone1").label("kubernetes.io/hostname", "node-b").add();
    b.tw.node("node-x").label("zone", "zone2").label("kubernetes.io/hostname", "node-x").add();
    b.tw.node("node-y")
        .label("zone", "zone2")
        .label("kubernetes.io/hostname", "node-y")
        .unschedulable()
        .add();
    auto e = foo_pods(b, {{0, 4}, {1, 2}, {2, 1}, {3, 3}});
    const PodId p = b.tw.pod("p").label("foo", "").add();
    spec(b, p).pod_rules.mut().spread = {constraint(b, 1, "zone", kSoft, exists(b, "foo"))};
    b.start(kScoreProfile);
    place_all(b, e);
    CHECK(score_of(b, p) == std::vector<std::int64_t>{75, 75, 100});
  }
}

TEST_CASE("PodTopologySpread skips pods without constraints or an owner") {
  // Upstream returns Skip from PreFilter and PreScore when no constraint applies; so does capsim,
  // which is what keeps pods that use neither plugin at no cost.
  EvaluationBench b;
  b.tw.node("n1").label("kubernetes.io/hostname", "n1").add();
  b.tw.node("n2").label("kubernetes.io/hostname", "n2").add();
  const PodId p = b.tw.pod("p").label("foo", "").add();
  b.start(kScoreProfile);
  const fw::PodEvaluation ev = b.evaluate(p);
  REQUIRE(ev.error.empty());
  REQUIRE(!ev.pre_filter.empty());
  for (const auto& v : ev.pre_filter) {
    if (b.plugin_name(v.plugin) == kSpread) CHECK(v.code == fw::Code::kSkip);
  }
  CHECK(b.score(ev, 0, kSpread).skipped);
}
