#include "models/plugins/node_affinity.hpp"

#include <doctest/doctest.h>

#include "fixtures/builders.hpp"

using namespace capsim;
using namespace capsim::plugins;

namespace {
NodeSelectorRequirement req(capsim::testing::TestWorld& tw, const std::string& key, SelectorOp op,
                            std::vector<std::string> values, std::int64_t number = 0) {
  NodeSelectorRequirement r;
  r.key = tw.sym(key);
  r.op = op;
  for (auto& v : values)
    r.values.push_back(tw.sym(v));
  r.number = number;
  return r;
}
}  // namespace

TEST_CASE("NodeAffinity filters on nodeSelector and required terms") {
  capsim::testing::TestWorld tw;
  tw.node("a100").label("gpu", "a100").label("zone", "z1").label("gen", "3").add();
  tw.node("b200").label("gpu", "b200").label("zone", "z2").label("gen", "5").add();
  fw::ReasonTable reasons;
  PluginContext ctx{tw.world(), reasons, 0};
  NodeAffinityPlugin na(ctx);
  Cluster cluster(tw.world());
  fw::CycleState state(1);

  struct Case {
    const char* name;
    std::vector<NodeSelectorTerm> terms;
    bool want_a100, want_b200;
  };
  NodeSelectorTerm in_b200{{req(tw, "gpu", SelectorOp::kIn, {"b200", "h200"})}, {}};
  NodeSelectorTerm notin_z1{{req(tw, "zone", SelectorOp::kNotIn, {"z1"})}, {}};
  NodeSelectorTerm gt4{{req(tw, "gen", SelectorOp::kGt, {}, 4)}, {}};
  NodeSelectorTerm missing_label{{req(tw, "rack", SelectorOp::kDoesNotExist, {})}, {}};
  NodeSelectorTerm exists_and_lt{
      {req(tw, "gpu", SelectorOp::kExists, {}), req(tw, "gen", SelectorOp::kLt, {}, 4)}, {}};
  NodeSelectorTerm empty{};
  const Case cases[] = {
      {"In", {in_b200}, false, true},
      {"NotIn", {notin_z1}, false, true},
      {"Gt compares integers", {gt4}, false, true},
      {"DoesNotExist matches an absent label", {missing_label}, true, true},
      {"requirements in a term are ANDed", {exists_and_lt}, true, false},
      {"terms are ORed", {exists_and_lt, in_b200}, true, true},
      {"an empty term matches nothing", {empty}, false, false},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    PodSpec p;
    p.affinity.mut().required = c.terms;
    CHECK(na.filter(state, p, cluster.node(0)).is_success() == c.want_a100);
    CHECK(na.filter(state, p, cluster.node(1)).is_success() == c.want_b200);
  }
  PodSpec sel;
  sel.node_selector.set(tw.sym("gpu"), tw.sym("a100"));
  CHECK(na.filter(state, sel, cluster.node(0)).is_success());
  auto st = na.filter(state, sel, cluster.node(1));
  CHECK(st.code == fw::Code::kUnschedulableAndUnresolvable);
  CHECK(reasons.text(st.reasons[0]) == "node(s) didn't match Pod's node affinity/selector");
}

TEST_CASE("NodeAffinity scores preferred terms by weight and normalises to 100") {
  capsim::testing::TestWorld tw;
  tw.node("both").label("gpu", "b200").label("zone", "z1").add();
  tw.node("gpu-only").label("gpu", "b200").label("zone", "z2").add();
  tw.node("neither").label("gpu", "a100").add();
  fw::ReasonTable reasons;
  PluginContext ctx{tw.world(), reasons, 0};
  NodeAffinityPlugin na(ctx);
  Cluster cluster(tw.world());
  fw::CycleState state(1);
  PodSpec p;
  p.affinity.mut().preferred.push_back(
      {2, NodeSelectorTerm{{req(tw, "gpu", SelectorOp::kIn, {"b200"})}, {}}});
  p.affinity.mut().preferred.push_back(
      {5, NodeSelectorTerm{{req(tw, "zone", SelectorOp::kIn, {"z1"})}, {}}});
  std::vector<std::int64_t> raw;
  for (NodeId n = 0; n < 3; ++n)
    raw.push_back(na.score(state, p, cluster.node(n)));
  CHECK(raw == std::vector<std::int64_t>{7, 2, 0});
  na.normalize(state, p, raw);
  // 100*7/7 = 100, 100*2/7 = 28, 0
  CHECK(raw == std::vector<std::int64_t>{100, 28, 0});
}
