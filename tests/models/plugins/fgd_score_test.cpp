// FGDScore and the GPU choice by fragmentation gradient descent, with worked numbers, and the
// guarantee that memoising scores never changes them.
#include "models/plugins/fgd_score.hpp"

#include <doctest/doctest.h>

#include "fixtures/builders.hpp"
#include "sim/random.hpp"
#include "tests/fixtures/bind.hpp"

using namespace capsim;
using namespace capsim::plugins;
using capsim::testing::bind_share;
using capsim::testing::bind_units;
using capsim::testing::TestWorld;

namespace {

// Typical pods: a 500-milli share (p 0.5), one whole GPU (0.25), a CPU-only pod (0.25); each
// wants 1000 millicores.
std::vector<TypicalPod> three_typical() {
  return {TypicalPod{1000, 500, 1, {}, 0.5}, TypicalPod{1000, 1000, 1, {}, 0.25},
          TypicalPod{1000, 0, 0, {}, 0.25}};
}

GpuLeft left_of(std::initializer_list<std::int32_t> l) {
  GpuLeft g;
  for (std::int32_t v : l) {
    g.left[g.n++] = v;
    g.total += v;
  }
  return g;
}

}  // namespace

TEST_CASE("the FGD score is int(100 * sigmoid(dF / 1000))") {
  CHECK(fgd_score(700, 700) == 50);  // no change: sigmoid(0) = 0.5
  CHECK(fgd_score(1000, 0) == 73);   // sigmoid(1) = 0.731
  CHECK(fgd_score(0, 1000) == 26);   // sigmoid(-1) = 0.269
  CHECK(fgd_score(200, 0) == 54);    // sigmoid(0.2) = 0.5498
  CHECK(fgd_score(8000, 0) == 99);   // the best possible move still truncates below 100
}

TEST_CASE("a share pod takes the GPU whose use lowers the node's fragment most") {
  const FragmentationModel m(three_typical());
  const ShareRequest r{1000, 500, 1};
  // Before: left [1000, 600], idle 1600. CPU-only: 0.25 * 1600 = 400. Share 500 fits, no GPU
  // below 500: 0. Whole GPU fits (GPU 0); GPU 1's 600 is below 1000: 0.25 * 600 = 150. F = 550.
  const GpuLeft g = left_of({1000, 600});
  CHECK(m.fragment_milli(0, 8000, g.span()) == doctest::Approx(550));
  // GPU 0 -> [500, 600]: 0.25*1100 + 0 + 0.25*1100 (no free GPU) = 550: dF 0, score 50.
  // GPU 1 -> [1000, 100]: 0.25*1100 + 0.5*100 + 0.25*100 = 350: dF 200, score 54.
  const FgdChoice c = fgd_choose(m, 0, 8000, g, r);
  CHECK(c.gpu == 1);
  CHECK(c.score == 54);
  // With 1500 millicores free the node is as above (F 550); after the pod only 500 are left, so
  // every typical pod lacks CPU and all 1100 idle milli are fragment on either GPU: dF = -550
  // for both, and the first GPU wins the tie.
  const FgdChoice tight = fgd_choose(m, 0, 1500, g, r);
  CHECK(tight.gpu == 0);
  CHECK(tight.score == fgd_score(550, 1100));
}

TEST_CASE("whole-GPU and CPU-only pods change the node as NodeResource.Sub does") {
  const FragmentationModel m(three_typical());
  const GpuLeft g = left_of({1000, 1000, 300});
  // Before (cpu 8000): idle 2300: CPU-only 575; share fits, below 300 -> 150; whole fits, below
  // 300 -> 75. F = 800. After a whole GPU: [0, 1000, 300]: idle 1300: 325 + 150 + 75 = 550.
  CHECK(fgd_choose(m, 0, 8000, g, ShareRequest{1000, 1000, 1}).score == fgd_score(800, 550));
  CHECK(fgd_choose(m, 0, 8000, g, ShareRequest{1000, 1000, 1}).gpu == -1);
  // A CPU-only pod taking the last CPU (8000 -> 1000 left... 8000 - 7000): still enough for the
  // typical pods' 1000: F unchanged, score 50. Taking 7500 leaves 500: all idle is fragment.
  CHECK(fgd_choose(m, 0, 8000, g, ShareRequest{7000, 0, 0}).score == 50);
  CHECK(fgd_choose(m, 0, 8000, g, ShareRequest{7500, 0, 0}).score == fgd_score(800, 2300));
}

TEST_CASE("memoised FGD scores equal scores computed afresh on every node state") {
  TestWorld tw;
  const char* models[] = {"G2", "T4", "P100"};
  for (int i = 0; i < 18; ++i) {
    tw.node("n" + std::to_string(i))
        .cpu(i % 3 == 2 ? "16" : "96")
        .memory("512Gi")
        .gpus(i % 3 == 0 ? 8 : 2, models[i % 3])
        .add();
  }
  RandomStream rng(99, "test");
  const std::int32_t shares[] = {810, 470, 320, 650, 250};
  for (int i = 0; i < 300; ++i) {
    auto b = tw.pod("p" + std::to_string(i)).cpu(std::to_string(1 + rng.below(12)));
    const auto kind = rng.below(10);
    if (kind < 5) {
      b.gpu_milli(shares[rng.below(5)]);
    } else if (kind < 8) {
      b.gpus(1);
    } else if (kind < 9) {
      b.gpus(2);
    }
    if (rng.below(8) == 0) b.gpu_models({"T4"});
    b.add();
  }
  World& w = tw.world();
  auto model = std::make_shared<FragmentationModel>(w);
  FgdScore memo(model, true);
  FgdScore fresh(model, false);
  memo.set_slot(0);
  fresh.set_slot(1);
  Cluster cluster(w);
  fw::Snapshot snap(cluster);
  fw::CycleState state(2);
  std::vector<NodeId> all;
  for (NodeId n = 0; n < cluster.nodes().size(); ++n)
    all.push_back(n);
  int compared = 0, placed = 0;
  for (PodId p = 0; p < w.pods.size(); ++p) {
    const PodSpec& pod = w.pods[p];
    state.begin_cycle(p);
    REQUIRE(memo.pre_score(state, pod, all, snap).is_success());
    REQUIRE(fresh.pre_score(state, pod, all, snap).is_success());
    const ShareRequest r = share_request(pod);
    NodeId best = kNoNode;
    std::int64_t best_score = -1;
    for (NodeId n : all) {
      const NodeInfo& node = cluster.node(n);
      const GpuLeft g = gpu_left(node);
      std::int32_t fitting = 0;
      for (std::size_t k = 0; k < g.n; ++k)
        fitting += g.left[k] >= r.milli ? 1 : 0;
      const bool fits = node.free(kCpu) >= pod.requests.get(kCpu) &&
                        gpu_model_allowed(pod, *node.spec) &&
                        (!r.wants_gpu() || fitting >= r.count);
      if (!fits) continue;
      const std::int64_t a = memo.score(state, pod, node);
      const std::int64_t b = fresh.score(state, pod, node);
      CHECK(a == b);
      ++compared;
      if (a > best_score) {
        best_score = a;
        best = n;
      }
    }
    if (best == kNoNode) continue;
    // Place the pod where FGD says, on the GPU FGD picks, so node states diverge.
    const NodeInfo& node = cluster.node(best);
    std::vector<std::uint16_t> gpus, units;
    std::int32_t share_gpu = -1;
    if (r.is_share()) {
      share_gpu = fgd_choose(*model, node.spec->gpu_model, node.free(kCpu), gpu_left(node), r).gpu;
    } else if (r.wants_gpu()) {
      REQUIRE(first_free_gpus(gpu_left(node).span(), r.count, gpus));
      for (std::uint16_t gi : gpus) {  // whole GPUs are held through their device units
        for (std::size_t u = 0; u < node.units.size(); ++u) {
          if (node.units[u].gpu == gi) units.push_back(static_cast<std::uint16_t>(u));
        }
      }
      REQUIRE(units.size() == gpus.size());
    }
    cluster.pod(p).phase = PodPhase::kRunning;
    if (share_gpu >= 0) {
      bind_share(cluster, p, best, static_cast<std::uint16_t>(share_gpu));
    } else {
      bind_units(cluster, p, best, units);
    }
    ++placed;
  }
  CHECK(compared > 1000);
  CHECK(placed > 100);
  CHECK(memo.evaluations() < fresh.evaluations());  // the memo saved work
}
