// InterPodAffinity against kube-scheduler's own test tables (pkg/scheduler/framework/plugins/
// interpodaffinity/filtering_test.go TestRequiredAffinitySingleNode and scoring_test.go
// TestPreferredAffinity), with the same pods, node labels and expected codes and scores, run
// through fw::evaluate_pod (the code path of `capsim score`). Each case names the upstream case.
// Upstream's pods are in namespace ""; here in "default", the same for every pod.
//
// Left out, and why:
//  - the invalid-label cases: the manifest loader rejects such values before any plugin runs
//    (tests/tools/k8s_manifests_test.cpp).
#include <doctest/doctest.h>

#include "fixtures/evaluation_bench.hpp"

using namespace capsim;
using capsim::testing::EvaluationBench;
using capsim::testing::single_plugin_profile;

namespace {

constexpr const char* kIpa = "InterPodAffinity";

struct Req {
  std::string key;
  LabelOp op;
  std::vector<std::string> values;
};

PodAffinityTerm term(EvaluationBench& b, const std::vector<Req>& reqs, const std::string& key) {
  PodAffinityTerm t;
  t.selector.present = true;
  for (const Req& r : reqs) {
    LabelRequirement lr;
    lr.key = b.tw.sym(r.key);
    lr.op = r.op;
    for (const auto& v : r.values)
      lr.values.push_back(b.tw.sym(v));
    t.selector.requirements.push_back(lr);
  }
  t.topology_key = b.tw.sym(key);
  return t;
}

WeightedPodAffinityTerm weighted(std::int32_t w, PodAffinityTerm t) {
  return WeightedPodAffinityTerm{w, std::move(t)};
}

PodSpec& spec(EvaluationBench& b, PodId p) {
  return b.tw.world().pods[p];
}

constexpr auto kIn = LabelOp::kIn;
constexpr auto kNotIn = LabelOp::kNotIn;
constexpr auto kExists = LabelOp::kExists;
constexpr auto kAbsent = LabelOp::kDoesNotExist;

// TestRequiredAffinitySingleNode's world: node1 {region: r1, zone: z11}; `pod` is
// {service: securityscan} on node1.
struct SingleNode {
  EvaluationBench b;
  SingleNode() { b.tw.node("node1").label("region", "r1").label("zone", "z11").add(); }
  PodId existing(const std::string& name, const std::string& k, const std::string& v) {
    return b.tw.pod(name).label(k, v).add();
  }
  fw::PluginVerdict run(PodId incoming, const std::vector<PodId>& on_node1) {
    b.start(single_plugin_profile(kIpa, "", true));
    for (PodId p : on_node1)
      b.place(p, 0);
    const fw::PodEvaluation ev = b.evaluate(incoming);
    REQUIRE(ev.error.empty());
    return b.filter(ev, 0, kIpa);
  }
};

constexpr auto kOk = fw::Code::kSuccess;
constexpr auto kNo = fw::Code::kUnschedulable;
constexpr auto kNever = fw::Code::kUnschedulableAndUnresolvable;
const std::string kAffinityReason = "node(s) didn't match pod affinity rules";
const std::string kAntiReason = "node(s) didn't match pod anti-affinity rules";
const std::string kExistingReason = "node(s) didn't satisfy existing pods anti-affinity rules";

}  // namespace

TEST_CASE("InterPodAffinity filters as upstream's TestRequiredAffinitySingleNode") {
  SUBCASE(
      "A pod that has no required pod affinity scheduling rules can schedule onto a node "
      "with no existing pods") {
    SingleNode s;
    const PodId p = s.b.tw.pod("p").add();
    CHECK(s.run(p, {}).code == fw::Code::kSkip);
  }
  SUBCASE(
      "satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In "
      "operator that matches the existing pod") {
    SingleNode s;
    const PodId e = s.existing("e", "service", "securityscan");
    const PodId p = s.b.tw.pod("p").label("security", "S1").add();
    spec(s.b, p).pod_rules.mut().affinity.required = {
        term(s.b, {{"service", kIn, {"securityscan", "value2"}}}, "region")};
    CHECK(s.run(p, {e}).code == kOk);
  }
  SUBCASE(
      "satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity "
      "using not in operator in labelSelector that matches the existing pod") {
    SingleNode s;
    const PodId e = s.existing("e", "service", "securityscan");
    const PodId p = s.b.tw.pod("p").label("security", "S1").add();
    spec(s.b, p).pod_rules.mut().affinity.required = {
        term(s.b, {{"service", kNotIn, {"securityscan3", "value3"}}}, "region")};
    CHECK(s.run(p, {e}).code == kOk);
  }
  SUBCASE("Does not satisfy the PodAffinity with labelSelector because of diff Namespace") {
    // The term names namespace DiffNameSpace and topologyKey "" (no node has it).
    SingleNode s;
    const PodId e = s.b.tw.pod("e").label("service", "securityscan").ns("ns").add();
    const PodId p = s.b.tw.pod("p").label("security", "S1").add();
    auto t = term(s.b, {{"service", kIn, {"securityscan", "value2"}}}, "");
    t.namespaces = {s.b.tw.sym("DiffNameSpace")};
    spec(s.b, p).pod_rules.mut().affinity.required = {t};
    const fw::PluginVerdict v = s.run(p, {e});
    CHECK(v.code == kNever);
    CHECK(v.reason == kAffinityReason);
  }
  SUBCASE(
      "Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing "
      "pod") {
    SingleNode s;
    const PodId e = s.existing("e", "service", "securityscan");
    const PodId p = s.b.tw.pod("p").label("service", "securityscan").add();
    spec(s.b, p).pod_rules.mut().affinity.required = {
        term(s.b, {{"service", kIn, {"antivirusscan", "value2"}}}, "")};
    CHECK(s.run(p, {e}).code == kNever);
  }
  SUBCASE(
      "satisfies the PodAffinity with different label Operators in multiple "
      "RequiredDuringSchedulingIgnoredDuringExecution") {
    SingleNode s;
    const PodId e = s.existing("e", "service", "securityscan");
    const PodId p = s.b.tw.pod("p").label("security", "S1").add();
    spec(s.b, p).pod_rules.mut().affinity.required = {
        term(s.b, {{"service", kExists, {}}, {"wrongkey", kAbsent, {}}}, "region"),
        term(s.b, {{"service", kIn, {"securityscan"}}, {"service", kNotIn, {"WrongValue"}}},
             "region")};
    CHECK(s.run(p, {e}).code == kOk);
  }
  SUBCASE(
      "The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot "
      "schedule onto the node because one of the matchExpression item don't match.") {
    SingleNode s;
    const PodId e = s.existing("e", "service", "securityscan");
    const PodId p = s.b.tw.pod("p").label("security", "S1").add();
    spec(s.b, p).pod_rules.mut().affinity.required = {
        term(s.b, {{"service", kExists, {}}, {"wrongkey", kAbsent, {}}}, "region"),
        term(s.b, {{"service", kIn, {"securityscan2"}}, {"service", kNotIn, {"WrongValue"}}},
             "region")};
    CHECK(s.run(p, {e}).code == kNever);
  }
  SUBCASE(
      "satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the "
      "existing pod") {
    SingleNode s;
    const PodId e = s.existing("e", "service", "securityscan");
    spec(s.b, e).pod_rules.mut().anti_affinity.required = {
        term(s.b, {{"service", kIn, {"antivirusscan", "value2"}}}, "node")};
    const PodId p = s.b.tw.pod("p").label("security", "S1").add();
    spec(s.b, p).pod_rules.mut().affinity.required = {
        term(s.b, {{"service", kIn, {"securityscan", "value2"}}}, "region")};
    spec(s.b, p).pod_rules.mut().anti_affinity.required = {
        term(s.b, {{"service", kIn, {"antivirusscan", "value2"}}}, "node")};
    CHECK(s.run(p, {e}).code == kOk);
  }
  SUBCASE(
      "satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing "
      "pod") {
    SingleNode s;
    const PodId e = s.existing("e", "service", "securityscan");
    const PodId p = s.b.tw.pod("p").label("security", "S1").add();
    spec(s.b, p).pod_rules.mut().affinity.required = {
        term(s.b, {{"service", kIn, {"securityscan", "value2"}}}, "region")};
    spec(s.b, p).pod_rules.mut().anti_affinity.required = {
        term(s.b, {{"service", kIn, {"securityscan", "value2"}}}, "zone")};
    const fw::PluginVerdict v = s.run(p, {e});
    CHECK(v.code == kNo);
    CHECK(v.reason == kAntiReason);
  }
  SUBCASE(
      "satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity "
      "symmetry with the existing pod") {
    SingleNode s;
    const PodId e = s.existing("e", "service", "securityscan");
    spec(s.b, e).pod_rules.mut().anti_affinity.required = {
        term(s.b, {{"service", kIn, {"securityscan", "value2"}}}, "zone")};
    const PodId p = s.b.tw.pod("p").label("service", "securityscan").add();
    spec(s.b, p).pod_rules.mut().affinity.required = {
        term(s.b, {{"service", kIn, {"securityscan", "value2"}}}, "region")};
    spec(s.b, p).pod_rules.mut().anti_affinity.required = {
        term(s.b, {{"service", kIn, {"antivirusscan", "value2"}}}, "node")};
    const fw::PluginVerdict v = s.run(p, {e});
    CHECK(v.code == kNo);
    CHECK(v.reason == kExistingReason);
  }
  SUBCASE("pod matches its own Label in PodAffinity and that matches the existing pod Labels") {
    // Upstream's existing pod sits on node2, which is not in the snapshot, so nothing is counted;
    // the pod does not match its own NotIn term: unresolvable.
    SingleNode s;
    const PodId p = s.b.tw.pod("p").label("service", "securityscan").add();
    spec(s.b, p).pod_rules.mut().affinity.required = {
        term(s.b, {{"service", kNotIn, {"securityscan", "value2"}}}, "region")};
    CHECK(s.run(p, {}).code == kNever);
  }
  SUBCASE(
      "verify that PodAntiAffinity from existing pod is respected when pod has no "
      "AntiAffinity constraints. doesn't satisfy PodAntiAffinity symmetry with the existing "
      "pod") {
    SingleNode s;
    const PodId e = s.existing("e", "service", "securityscan");
    spec(s.b, e).pod_rules.mut().anti_affinity.required = {
        term(s.b, {{"service", kIn, {"securityscan", "value2"}}}, "zone")};
    const PodId p = s.b.tw.pod("p").label("service", "securityscan").add();
    const fw::PluginVerdict v = s.run(p, {e});
    CHECK(v.code == kNo);
    CHECK(v.reason == kExistingReason);
  }
  SUBCASE(
      "verify that PodAntiAffinity from existing pod is respected when pod has no "
      "AntiAffinity constraints. satisfy PodAntiAffinity symmetry with the existing pod") {
    SingleNode s;
    const PodId e = s.existing("e", "service", "securityscan");
    spec(s.b, e).pod_rules.mut().anti_affinity.required = {
        term(s.b, {{"service", kNotIn, {"securityscan", "value2"}}}, "zone")};
    const PodId p = s.b.tw.pod("p").label("service", "securityscan").add();
    CHECK(s.run(p, {e}).code == fw::Code::kSkip);
  }
  SUBCASE(
      "satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity "
      "symmetry with incoming pod") {
    SingleNode s;
    const PodId e = s.existing("e", "security", "S1");
    spec(s.b, e).pod_rules.mut().anti_affinity.required = {
        term(s.b, {{"security", kExists, {}}}, "zone")};
    const PodId p = s.b.tw.pod("p").label("service", "securityscan").add();
    spec(s.b, p).pod_rules.mut().anti_affinity.required = {
        term(s.b, {{"service", kExists, {}}}, "region"),
        term(s.b, {{"security", kExists, {}}}, "region")};
    const fw::PluginVerdict v = s.run(p, {e});
    CHECK(v.code == kNo);
    CHECK(v.reason == kAntiReason);
  }
  SUBCASE(
      "PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each "
      "other on AffinityTerms") {
    SingleNode s;
    const PodId e = s.existing("e", "service", "securityscan");
    spec(s.b, e).pod_rules.mut().anti_affinity.required = {
        term(s.b, {{"service", kExists, {}}}, "zone"),
        term(s.b, {{"security", kExists, {}}}, "zone")};
    const PodId p = s.b.tw.pod("p").label("security", "S1").add();
    spec(s.b, p).pod_rules.mut().anti_affinity.required = {
        term(s.b, {{"security", kExists, {}}}, "zone")};
    const fw::PluginVerdict v = s.run(p, {e});
    CHECK(v.code == kNo);
    CHECK(v.reason == kExistingReason);
  }
}

TEST_CASE("InterPodAffinity matches namespaces by list and by the metadata.name label") {
  // capsim's own case: namespaceSelector {kubernetes.io/metadata.name In [ml]} selects the pods of
  // namespace ml, as the label every Namespace carries would upstream.
  SingleNode s;
  const PodId e = s.b.tw.pod("e").label("app", "trainer").ns("ml").add();
  const PodId p = s.b.tw.pod("p").label("app", "trainer").add();
  auto t = term(s.b, {{"app", kIn, {"trainer"}}}, "zone");
  t.namespace_selector.present = true;
  t.namespace_selector.requirements.push_back(
      {s.b.tw.sym("kubernetes.io/metadata.name"), kIn, {s.b.tw.sym("ml")}});
  // Anti-affinity to trainers of namespace ml: the pod in ml on node1 rejects it; with the
  // selector naming another namespace it does not.
  SUBCASE("selected namespace") {
    spec(s.b, p).pod_rules.mut().anti_affinity.required = {t};
    CHECK(s.run(p, {e}).code == kNo);
  }
  SUBCASE("other namespace") {
    t.namespace_selector.requirements[0].values = {s.b.tw.sym("prod")};
    spec(s.b, p).pod_rules.mut().anti_affinity.required = {t};
    CHECK(s.run(p, {e}).code == kOk);
  }
  SUBCASE("own namespace by default") {
    spec(s.b, p).pod_rules.mut().anti_affinity.required = {
        term(s.b, {{"app", kIn, {"trainer"}}}, "zone")};
    CHECK(s.run(p, {e}).code == kOk);  // e is in ml, p in default
  }
}

TEST_CASE("InterPodAffinity matches a namespaceSelector against Namespace objects' labels") {
  // KEP-2249 (namespace selector for pod affinity): the selector is matched against the labels of
  // the Namespace objects, as upstream's cases with namespaces labelled team: team1. Namespace
  // "subteam" carries team=team1; "other" team=team2; "plain" has no Namespace object. The
  // existing pod (service=securityscan, in `ns`) is on node1; the incoming pod's term selects it
  // by that label and by namespaceSelector team `op` [team1].
  struct Case {
    const char* name;
    const char* ns;
    bool anti;      // the term is a required anti-affinity term (else affinity)
    LabelOp op;     // of the namespaceSelector's requirement
    fw::Code code;  // the plugin's Filter verdict on node1
    std::string reason;
  };
  const Case cases[] = {
      {"affinity, namespace labels match", "subteam", false, kIn, kOk, ""},
      {"affinity, namespace labels do not match", "other", false, kIn, kNever, kAffinityReason},
      {"affinity, a namespace with no Namespace object lacks the label", "plain", false, kIn,
       kNever, kAffinityReason},
      {"anti-affinity NotIn: the team1 namespace is not selected", "subteam", true, kNotIn, kOk,
       ""},
      {"anti-affinity NotIn selects a namespace without the label", "plain", true, kNotIn, kNo,
       kAntiReason},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    SingleNode s;
    World& w = s.b.tw.world();
    auto add_ns = [&](const std::string& name, const std::string& team) {
      LabelSet l;
      l.set(w.strings.intern("kubernetes.io/metadata.name"), w.strings.intern(name));
      l.set(w.strings.intern("team"), w.strings.intern(team));
      w.namespace_labels[w.strings.intern(name)] = l;
    };
    add_ns("subteam", "team1");
    add_ns("other", "team2");
    auto t = term(s.b, {{"service", kIn, {"securityscan"}}}, "region");
    t.namespace_selector.present = true;
    t.namespace_selector.requirements.push_back({s.b.tw.sym("team"), c.op, {s.b.tw.sym("team1")}});
    const PodId e = s.b.tw.pod("e").label("service", "securityscan").ns(c.ns).add();
    const PodId p = s.b.tw.pod("p").label("service", "securityscan").add();
    auto& rules = spec(s.b, p).pod_rules.mut();
    (c.anti ? rules.anti_affinity : rules.affinity).required = {t};
    const fw::PluginVerdict v = s.run(p, {e});
    CHECK(v.code == c.code);
    CHECK(v.reason == c.reason);
  }
}

TEST_CASE("InterPodAffinity lets the first pod of a self-affine group schedule") {
  // satisfyPodAffinity: no pod matches anywhere and the pod matches its own term.
  SingleNode s;
  const PodId p = s.b.tw.pod("p").label("job", "train").add();
  spec(s.b, p).pod_rules.mut().affinity.required = {term(s.b, {{"job", kIn, {"train"}}}, "zone")};
  CHECK(s.run(p, {}).code == kOk);
}

namespace {

// TestPreferredAffinity's terms.
struct Preferred {
  EvaluationBench b;
  WeightedPodAffinityTerm s1_region() {
    return weighted(5, term(b, {{"security", kIn, {"S1"}}}, "region"));
  }
  WeightedPodAffinityTerm s2_region() {
    return weighted(6, term(b, {{"security", kIn, {"S2"}}}, "region"));
  }
  WeightedPodAffinityTerm s1_az() {
    return weighted(5, term(b, {{"security", kIn, {"S1"}}}, "az"));
  }
  WeightedPodAffinityTerm s2_az() {
    return weighted(5, term(b, {{"security", kIn, {"S2"}}}, "az"));
  }
  // stayWithS1InRegionAwayFromS2InAz
  void stay_s1_away_s2(PodId p) {
    spec(b, p).pod_rules.mut().affinity.preferred = {
        weighted(8, term(b, {{"security", kIn, {"S1"}}}, "region"))};
    spec(b, p).pod_rules.mut().anti_affinity.preferred = {s2_az()};
  }
  NodeId node(const std::string& name, const std::vector<std::pair<std::string, std::string>>& ls) {
    auto nb = b.tw.node(name);
    for (const auto& [k, v] : ls)
      nb.label(k, v);
    return nb.add();
  }
  PodId pod(const std::string& name, const std::string& security) {
    auto pb = b.tw.pod(name);
    if (!security.empty()) pb.label("security", security);
    return pb.add();
  }
  std::vector<std::int64_t> scores(PodId incoming, const std::vector<std::pair<PodId, NodeId>>& on,
                                   const std::string& args = "") {
    b.start(single_plugin_profile(kIpa, args, false));
    for (const auto& [p, n] : on)
      b.place(p, n);
    const fw::PodEvaluation ev = b.evaluate(incoming);
    REQUIRE(ev.error.empty());
    std::vector<std::int64_t> out;
    for (std::size_t n = 0; n < ev.nodes.size(); ++n)
      out.push_back(b.normalized(ev, static_cast<NodeId>(n), kIpa));
    return out;
  }
};

const std::vector<std::pair<std::string, std::string>> kChina = {{"region", "China"}};
const std::vector<std::pair<std::string, std::string>> kIndia = {{"region", "India"}};
const std::vector<std::pair<std::string, std::string>> kAz1 = {{"az", "az1"}};
const std::vector<std::pair<std::string, std::string>> kAz2 = {{"az", "az2"}};
const std::vector<std::pair<std::string, std::string>> kChinaAz1 = {{"region", "China"},
                                                                    {"az", "az1"}};

}  // namespace

TEST_CASE("InterPodAffinity scores as upstream's TestPreferredAffinity") {
  SUBCASE("all nodes are same priority as Affinity is nil") {
    Preferred t;
    t.node("node1", kChina);
    t.node("node2", kIndia);
    t.node("node3", kAz1);
    const PodId p = t.pod("p", "S1");
    t.b.start(single_plugin_profile(kIpa, "", false));
    const fw::PodEvaluation ev = t.b.evaluate(p);
    CHECK(t.b.score(ev, 0, kIpa).skipped);
  }
  SUBCASE(
      "Affinity: pod that matches topology key & pods in nodes will get high score comparing "
      "to otherswhich doesn't match either pods in nodes or in topology key") {
    Preferred t;
    const NodeId n1 = t.node("node1", kChina), n2 = t.node("node2", kIndia),
                 n3 = t.node("node3", kAz1);
    const PodId a = t.pod("a", "S1"), c = t.pod("c", "S2"), d = t.pod("d", "S1");
    const PodId p = t.pod("p", "S1");
    spec(t.b, p).pod_rules.mut().affinity.preferred = {t.s1_region()};
    CHECK(t.scores(p, {{a, n1}, {c, n2}, {d, n3}}) == std::vector<std::int64_t>{100, 0, 0});
  }
  SUBCASE(
      "All the nodes that have the same topology key & label value with one of them has an "
      "existing pod that match the affinity rules, have the same score") {
    Preferred t;
    const NodeId n1 = t.node("node1", kChina);
    t.node("node2", kChinaAz1);
    t.node("node3", kIndia);
    const PodId a = t.pod("a", "S1");
    const PodId p = t.pod("p", "");
    spec(t.b, p).pod_rules.mut().affinity.preferred = {t.s1_region()};
    CHECK(t.scores(p, {{a, n1}}) == std::vector<std::int64_t>{100, 100, 0});
  }
  SUBCASE(
      "Affinity: nodes in one region has more matching pods comparing to other region, so the "
      "region which has more matches will get high score") {
    // China 4 x 6 = 24, India 2 x 6 = 12: min-max normalisation puts India at 0.
    Preferred t;
    const NodeId n1 = t.node("node1", kChina), n2 = t.node("node2", kIndia),
                 n3 = t.node("node3", kChina), n4 = t.node("node4", kChina),
                 n5 = t.node("node5", kIndia);
    std::vector<std::pair<PodId, NodeId>> on;
    for (NodeId n : {n1, n1, n2, n3, n4, n5})
      on.emplace_back(t.pod("e" + std::to_string(on.size()), "S2"), n);
    const PodId p = t.pod("p", "S1");
    spec(t.b, p).pod_rules.mut().affinity.preferred = {t.s2_region()};
    CHECK(t.scores(p, on) == std::vector<std::int64_t>{100, 0, 100, 100, 0});
  }
  SUBCASE(
      "Affinity: different Label operators and values for pod affinity scheduling preference, "
      "including some match failures ") {
    // China: the S1 pod matches the weight-2 term only (2); India: the S2 pod both (8 + 2 = 10).
    Preferred t;
    const NodeId n1 = t.node("node1", kChina), n2 = t.node("node2", kIndia),
                 n3 = t.node("node3", kAz1);
    const PodId a = t.pod("a", "S1"), c = t.pod("c", "S2"), d = t.pod("d", "S1");
    const PodId p = t.pod("p", "S1");
    spec(t.b, p).pod_rules.mut().affinity.preferred = {
        weighted(8, term(t.b, {{"security", kNotIn, {"S1"}}, {"security", kIn, {"S2"}}}, "region")),
        weighted(2, term(t.b, {{"security", kExists, {}}, {"wrongkey", kAbsent, {}}}, "region"))};
    CHECK(t.scores(p, {{a, n1}, {c, n2}, {d, n3}}) == std::vector<std::int64_t>{20, 100, 0});
  }
  SUBCASE(
      "Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution "
      "in pod affinity symmetry") {
    Preferred t;
    const NodeId n1 = t.node("node1", kChina), n2 = t.node("node2", kIndia);
    t.node("node3", kAz1);
    const PodId a = t.pod("a", "S1"), c = t.pod("c", "S2");
    spec(t.b, a).pod_rules.mut().affinity.preferred = {t.s1_region()};
    spec(t.b, c).pod_rules.mut().affinity.preferred = {t.s2_region()};
    const PodId p = t.pod("p", "S2");
    CHECK(t.scores(p, {{a, n1}, {c, n2}}) == std::vector<std::int64_t>{0, 100, 0});
  }
  SUBCASE(
      "Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod "
      "affinity symmetry") {
    // hardAffinity on both existing pods; the S1 pod matches both terms at hardPodAffinityWeight
    // 1 each: China 2, India 2, az1 0.
    Preferred t;
    const NodeId n1 = t.node("node1", kChina), n2 = t.node("node2", kIndia);
    t.node("node3", kAz1);
    const PodId a = t.pod("a", "S1"), c = t.pod("c", "S2");
    for (PodId e : {a, c}) {
      spec(t.b, e).pod_rules.mut().affinity.required = {
          term(t.b, {{"security", kIn, {"S1", "value2"}}}, "region"),
          term(t.b, {{"security", kExists, {}}, {"wrongkey", kAbsent, {}}}, "region")};
    }
    const PodId p = t.pod("p", "S1");
    CHECK(t.scores(p, {{a, n1}, {c, n2}}) == std::vector<std::int64_t>{100, 100, 0});
    SUBCASE("hardPodAffinityWeight 0 ignores the existing pods' required terms") {
      // Nothing else scores, so PreScore skips.
      Preferred u;
      const NodeId m1 = u.node("node1", kChina);
      u.node("node2", kIndia);
      const PodId x = u.pod("a", "S1");
      spec(u.b, x).pod_rules.mut().affinity.required = {
          term(u.b, {{"security", kIn, {"S1"}}}, "region")};
      const PodId q = u.pod("p", "S1");
      u.b.start(single_plugin_profile(kIpa, "{hardPodAffinityWeight: 0}", false));
      u.b.place(x, m1);
      const fw::PodEvaluation ev = u.b.evaluate(q);
      CHECK(u.b.score(ev, 0, kIpa).skipped);
    }
  }
  SUBCASE("Anti Affinity: pod that does not match existing pods in node will get high score ") {
    Preferred t;
    const NodeId n1 = t.node("node1", kAz1), n2 = t.node("node2", kChina);
    const PodId a = t.pod("a", "S1"), c = t.pod("c", "S2");
    const PodId p = t.pod("p", "S1");
    spec(t.b, p).pod_rules.mut().anti_affinity.preferred = {t.s1_az()};
    CHECK(t.scores(p, {{a, n1}, {c, n2}}) == std::vector<std::int64_t>{0, 100});
  }
  SUBCASE(
      "Anti Affinity: one node has more matching pods comparing to other node, so the node "
      "which has more unmatches will get high score") {
    Preferred t;
    const NodeId n1 = t.node("node1", kAz1), n2 = t.node("node2", kIndia);
    const PodId a = t.pod("a", "S1"), a2 = t.pod("a2", "S1"), c = t.pod("c", "S2");
    const PodId p = t.pod("p", "S1");
    spec(t.b, p).pod_rules.mut().anti_affinity.preferred = {t.s1_az()};
    CHECK(t.scores(p, {{a, n1}, {a2, n1}, {c, n2}}) == std::vector<std::int64_t>{0, 100});
  }
  SUBCASE(
      "Anti Affinity symmetry: the existing pods in node which has anti affinity match will "
      "get high score") {
    Preferred t;
    const NodeId n1 = t.node("node1", kAz1), n2 = t.node("node2", kAz2);
    const PodId a = t.pod("a", "S1"), c = t.pod("c", "S2");
    spec(t.b, a).pod_rules.mut().anti_affinity.preferred = {t.s2_az()};
    spec(t.b, c).pod_rules.mut().anti_affinity.preferred = {t.s1_az()};
    const PodId p = t.pod("p", "S2");
    CHECK(t.scores(p, {{a, n1}, {c, n2}}) == std::vector<std::int64_t>{0, 100});
  }
  SUBCASE(
      "Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to "
      "schedule and existing pods have the same labels") {
    Preferred t;
    const NodeId n1 = t.node("node1", kChinaAz1), n2 = t.node("node2", kIndia),
                 n3 = t.node("node3", kChina), n4 = t.node("node4", kChina),
                 n5 = t.node("node5", kIndia);
    std::vector<std::pair<PodId, NodeId>> on;
    for (NodeId n : {n1, n1, n2, n3, n3, n4, n5})
      on.emplace_back(t.pod("e" + std::to_string(on.size()), "S1"), n);
    const PodId p = t.pod("p", "S1");
    t.stay_s1_away_s2(p);
    CHECK(t.scores(p, on) == std::vector<std::int64_t>{100, 0, 100, 100, 0});
  }
  SUBCASE(
      "Affinity and Anti Affinity and symmetry: considered only "
      "preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity & "
      "symmetry") {
    // Weights per node: affinity 8, 0, 0, 0; anti-affinity 0, -5, 0, 0; affinity symmetry
    // 0, 0, 8, 0; anti-affinity symmetry 0, 0, 0, -5.
    Preferred t;
    const NodeId n1 = t.node("node1", kChina), n2 = t.node("node2", kAz1),
                 n3 = t.node("node3", kIndia), n4 = t.node("node4", kAz2);
    const PodId a = t.pod("a", "S1"), c = t.pod("c", "S2"), d = t.pod("d", ""), f = t.pod("f", "");
    t.stay_s1_away_s2(d);
    spec(t.b, f).pod_rules.mut().anti_affinity.preferred = {t.s1_az()};
    const PodId p = t.pod("p", "S1");
    t.stay_s1_away_s2(p);
    CHECK(t.scores(p, {{a, n1}, {c, n2}, {d, n3}, {f, n4}}) ==
          std::vector<std::int64_t>{100, 0, 100, 0});
  }
  SUBCASE("Avoid panic when partial nodes in a topology don't have pods with affinity") {
    // Both nodes in China score 8 (the existing pod's preferred term selects the incoming pod):
    // all equal, so all 0.
    Preferred t;
    const NodeId n1 = t.node("node1", kChina), n2 = t.node("node2", kChina);
    const PodId a = t.pod("a", "S1"), d = t.pod("d", "");
    t.stay_s1_away_s2(d);
    const PodId p = t.pod("p", "S1");
    CHECK(t.scores(p, {{a, n1}, {d, n2}}) == std::vector<std::int64_t>{0, 0});
  }
}
