#include "models/plugins/taint_toleration.hpp"

#include <doctest/doctest.h>

#include "fixtures/builders.hpp"

using namespace capsim;
using namespace capsim::plugins;

TEST_CASE("DefaultNormalizeScore scales to 100 and reverses when asked") {
  std::vector<std::int64_t> s{2, 0, 1};
  default_normalize_score(100, true, s);
  // max 2: 100 - 100*2/2 = 0, 100 - 0 = 100, 100 - 100*1/2 = 50
  CHECK(s == std::vector<std::int64_t>{0, 100, 50});
  std::vector<std::int64_t> z{0, 0};
  default_normalize_score(100, true, z);
  CHECK(z == std::vector<std::int64_t>{100, 100});
  std::vector<std::int64_t> f{7, 2, 0};
  default_normalize_score(100, false, f);
  // 100*7/7 = 100, 100*2/7 = 28, 0
  CHECK(f == std::vector<std::int64_t>{100, 28, 0});
}

TEST_CASE("TaintToleration filters untolerated NoSchedule taints with upstream's message") {
  capsim::testing::TestWorld tw;
  tw.node("gpu").cpu("8").memory("8Gi").taint("nvidia.com/gpu", "present", "NoSchedule").add();
  tw.node("soft").cpu("8").memory("8Gi").taint("spot", "true", "PreferNoSchedule").add();
  PodId plain = tw.pod("plain").add();
  PodId tolerant = tw.pod("tolerant").toleration("nvidia.com/gpu", "", "NoSchedule", true).add();
  PodId wrong_value = tw.pod("wrong").toleration("nvidia.com/gpu", "absent", "NoSchedule").add();
  fw::ReasonTable reasons;
  PluginContext ctx{tw.world(), reasons, 0};
  TaintToleration tt(ctx);
  Cluster cluster(tw.world());
  fw::CycleState state(1);
  auto st = tt.filter(state, tw.world().pods[plain], cluster.node(0));
  CHECK(st.code == fw::Code::kUnschedulableAndUnresolvable);
  CHECK(reasons.text(st.reasons[0]) == "node(s) had untolerated taint {nvidia.com/gpu: present}");
  CHECK(tt.filter(state, tw.world().pods[tolerant], cluster.node(0)).is_success());
  CHECK_FALSE(tt.filter(state, tw.world().pods[wrong_value], cluster.node(0)).is_success());
  // PreferNoSchedule never filters.
  CHECK(tt.filter(state, tw.world().pods[plain], cluster.node(1)).is_success());
}

TEST_CASE("TaintToleration scores by intolerable PreferNoSchedule taints, fewest best") {
  capsim::testing::TestWorld tw;
  tw.node("two").taint("a", "1", "PreferNoSchedule").taint("b", "1", "PreferNoSchedule").add();
  tw.node("none").add();
  tw.node("one").taint("a", "1", "PreferNoSchedule").taint("c", "1", "NoSchedule").add();
  PodId p = tw.pod("p").toleration("b", "1", "").add();  // empty effect tolerates b on "two"
  fw::ReasonTable reasons;
  PluginContext ctx{tw.world(), reasons, 0};
  TaintToleration tt(ctx);
  tt.set_slot(0);
  Cluster cluster(tw.world());
  fw::Snapshot snap(cluster);
  fw::CycleState state(1);
  std::vector<NodeId> ids{0, 1, 2};
  REQUIRE(tt.pre_score(state, tw.world().pods[p], ids, snap).is_success());
  std::vector<std::int64_t> raw;
  for (NodeId n : ids)
    raw.push_back(tt.score(state, tw.world().pods[p], cluster.node(n)));
  // "two": a untolerated, b tolerated -> 1; "none": 0; "one": a -> 1 (NoSchedule not counted)
  CHECK(raw == std::vector<std::int64_t>{1, 0, 1});
  // Cluster counts each node's PreferNoSchedule taints for scoring; a NodeInfo it did not make
  // (count unknown) is scored from its spec's taints alike.
  CHECK(cluster.node(0).prefer_no_schedule_taints == 2);
  CHECK(cluster.node(1).prefer_no_schedule_taints == 0);
  CHECK(cluster.node(2).prefer_no_schedule_taints == 1);
  for (NodeId n : ids) {
    NodeInfo uncounted;
    uncounted.spec = cluster.node(n).spec;
    CHECK(tt.score(state, tw.world().pods[p], uncounted) == raw[n]);
  }
  tt.normalize(state, tw.world().pods[p], raw);
  CHECK(raw == std::vector<std::int64_t>{0, 100, 0});
}
