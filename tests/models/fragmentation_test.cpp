// The FGD fragmentation measure and the workload's typical pods, as the peer's frag.go defines
// them.
#include "models/fragmentation.hpp"

#include <doctest/doctest.h>

#include "fixtures/builders.hpp"
#include "sim/cluster.hpp"
#include "tests/fixtures/bind.hpp"

using namespace capsim;
using capsim::testing::bind_share;
using capsim::testing::bind_units;
using capsim::testing::TestWorld;

TEST_CASE("typical pods are the most popular shapes covering the threshold, renormalised") {
  TestWorld tw;
  // 4 x (2 cpu, 1 GPU); 2 x (8 cpu, share 500); 2 x (4 cpu, share 500); 1 x CPU-only with no
  // CPU request (counts as 100m); and a resampled copy that must not count.
  for (int i = 0; i < 4; ++i)
    tw.pod("a" + std::to_string(i)).cpu("2").gpus(1).add();
  for (int i = 0; i < 2; ++i)
    tw.pod("b" + std::to_string(i)).cpu("8").gpu_milli(500).add();
  for (int i = 0; i < 2; ++i)
    tw.pod("c" + std::to_string(i)).cpu("4").gpu_milli(500).add();
  tw.pod("d").add();
  PodSpec copy = tw.pod("copy").cpu("4").gpu_milli(500).build();
  copy.resampled = true;
  tw.world().pods.push_back(copy);

  // 9 pods; 60 % is 5.4: a (4) < 5.4 so the next shape is added. b and c tie at 2: the peer's
  // sort puts the larger CPU first, so b (8 cpu) is taken, giving 6 >= 5.4.
  auto t = typical_pods(tw.world(), 60);
  REQUIRE(t.size() == 2);
  CHECK(t[0].gpu_count == 1);
  CHECK(t[0].gpu_milli == 1000);
  CHECK(t[0].cpu_milli == 2000);
  CHECK(t[0].p == doctest::Approx(4.0 / 6));
  CHECK(t[1].cpu_milli == 8000);
  CHECK(t[1].gpu_milli == 500);
  CHECK(t[1].p == doctest::Approx(2.0 / 6));

  auto all = typical_pods(tw.world(), 100);
  REQUIRE(all.size() == 4);
  CHECK(all[3].cpu_milli == 100);  // GetNonzeroRequests: no CPU request counts as 100m
  CHECK(all[3].gpu_count == 0);
  CHECK(all[2].cpu_milli == 4000);
  CHECK(all[2].p == doctest::Approx(2.0 / 9));
}

TEST_CASE("a node's fragment is the idle GPU capacity the typical pods could not use") {
  // Typical pods: share 500 (p .4), 2 whole GPUs (p .2), CPU-only (p .2), a T4-only share 300
  // (p .2); every one wants 4000 millicores.
  TestWorld tw;
  const GpuModelId g2 = tw.gpu_model("G2");
  const GpuModelId t4 = tw.gpu_model("T4");
  std::vector<TypicalPod> typical = {{4000, 500, 1, {}, 0.4},
                                     {4000, 1000, 2, {}, 0.2},
                                     {4000, 0, 0, {}, 0.2},
                                     {4000, 300, 1, {t4}, 0.2}};
  const FragmentationModel m(typical, tw.world().gpu_models.size());
  struct Case {
    const char* name;
    GpuModelId model;
    std::int64_t cpu_left;
    std::vector<std::int32_t> left;
    double want;
  };
  const Case cases[] = {
      {"a full node has no fragment", g2, 8000, {0, 0}, 0},
      // idle 2000, all free: share and pair fit with nothing below: 0 + 0; CPU-only .2*2000;
      // T4-only on a G2 .2*2000. 800.
      {"empty 2-GPU G2", g2, 8000, {1000, 1000}, 800},
      // On a T4 the T4-only share fits too: only CPU-only counts: 400.
      {"empty 2-GPU T4", t4, 8000, {1000, 1000}, 400},
      // Too little CPU for anyone: all idle (2000) is fragment.
      {"CPU exhausted", t4, 3000, {1000, 1000}, 2000},
      // idle 600: share 500 fits GPU 0 (500 left), GPU 1's 100 below: .4*100 = 40; pair lacks
      // GPU: .2*600 = 120; CPU-only 120; T4 share 300 fits, below 100: .2*100 = 20. 300.
      {"T4 [500, 100]", t4, 8000, {500, 100}, 300},
      {"a node without GPUs has no fragment", kNoGpuModel, 8000, {}, 0},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    CHECK(m.fragment_milli(c.model, c.cpu_left, c.left) == doctest::Approx(c.want));
  }
  // Four GPUs on a G2 with 8000 millicores free.
  const std::vector<std::int32_t> left = {1000, 400, 1000, 0};
  // idle 2400: share fits (below: 400 + 0) .4*400 = 160; pair fits (two free; below 400) .2*400
  // = 80; CPU-only .2*2400 = 480; T4-only on a G2: 480. 1200.
  CHECK(m.fragment_milli(g2, 8000, left) == doctest::Approx(1200));
  const std::vector<std::int32_t> one_free = {1000, 400, 0, 0};
  // idle 1400: share .4*400 = 160; pair lacks GPU .2*1400 = 280; CPU-only 280; T4-only 280.
  CHECK(m.fragment_milli(g2, 8000, one_free) == doctest::Approx(1000));
}

TEST_CASE("the fragment of a NodeInfo uses its GPUs' milli left and its free CPU") {
  TestWorld tw;
  tw.node("n").cpu("16").memory("64Gi").gpus(2, "G2").add();
  const PodId p = tw.pod("p").cpu("10").gpu_milli(600).add();
  std::vector<TypicalPod> typical = {{4000, 500, 1, {}, 1.0}};
  const FragmentationModel m(typical, tw.world().gpu_models.size());
  Cluster cluster(tw.world());
  CHECK(m.node_fragment_milli(cluster.node(0)) == doctest::Approx(0));
  cluster.pod(p).phase = PodPhase::kRunning;
  bind_share(cluster, p, 0, 1);
  // GPU 1 has 400 left, below 500: fragment 400 (6000 millicores free >= 4000).
  CHECK(m.node_fragment_milli(cluster.node(0)) == doctest::Approx(400));
}
