// The FGD study's baseline scores (Random, DotProduct, GpuClustering, GpuPacking, BestFit) and
// the GPU-share helpers, with the worked arithmetic of the peer's formulas in each case.
#include <doctest/doctest.h>

#include "fixtures/builders.hpp"
#include "models/plugins/best_fit_score.hpp"
#include "models/plugins/dot_product_score.hpp"
#include "models/plugins/gpu_clustering_score.hpp"
#include "models/plugins/gpu_packing_score.hpp"
#include "models/plugins/gpu_share.hpp"
#include "models/plugins/random_score.hpp"
#include "sim/cluster.hpp"

using namespace capsim;
using namespace capsim::plugins;
using capsim::testing::TestWorld;

namespace {

GpuLeft left_of(std::initializer_list<std::int32_t> l) {
  GpuLeft g;
  for (std::int32_t v : l) {
    g.left[g.n++] = v;
    g.total += v;
  }
  return g;
}

ShareRequest req(std::int64_t cpu, std::int32_t milli, std::int32_t count) {
  ShareRequest r;
  r.cpu = cpu;
  r.milli = milli;
  r.count = count;
  return r;
}

}  // namespace

TEST_CASE("a pod's share request follows the peer's PodResource") {
  TestWorld tw;
  const PodSpec share = tw.pod("s").cpu("2").gpu_milli(470).build();
  const PodSpec whole = tw.pod("w").cpu("8").gpus(4).build();
  const PodSpec cpu_only = tw.pod("c").build();
  CHECK(share_request(share).count == 1);
  CHECK(share_request(share).milli == 470);
  CHECK(share_request(share).is_share());
  CHECK(share_request(whole).milli == 1000);
  CHECK(share_request(whole).total_milli() == 4000);
  CHECK_FALSE(share_request(whole).is_share());
  // A pod asking for no CPU counts as 100m (GetNonzeroRequests) and for no GPU as 0 x 0.
  CHECK(share_request(cpu_only).cpu == 100);
  CHECK_FALSE(share_request(cpu_only).wants_gpu());
}

TEST_CASE("GPU choices inside a node: best fit, worst fit and first free GPUs") {
  const GpuLeft g = left_of({1000, 300, 600, 300, 1000});
  CHECK(best_fit_gpu(g.span(), 250) == 1);  // 300 is the tightest; the lower of the two 300s
  CHECK(best_fit_gpu(g.span(), 500) == 2);  // 600
  CHECK(best_fit_gpu(g.span(), 700) == 0);  // only the free GPUs fit; the first
  CHECK(best_fit_gpu(g.span(), 1000) == 0);
  CHECK(worst_fit_gpu(g.span(), 250) == 0);  // 1000, the first of the two
  CHECK(best_fit_gpu(left_of({200, 100}).span(), 300) == -1);
  std::vector<std::uint16_t> out;
  CHECK(first_free_gpus(g.span(), 2, out));
  CHECK(out == std::vector<std::uint16_t>{0, 4});
  CHECK_FALSE(first_free_gpus(g.span(), 3, out));
}

TEST_CASE("subtracting a request packs it onto the least sufficient GPUs, as NodeResource.Sub") {
  GpuLeft g = left_of({1000, 600, 1000, 500});
  std::int64_t cpu = 8000;
  REQUIRE(subtract_request(g, cpu, req(2000, 500, 1)));
  CHECK(cpu == 6000);
  // Ascending by milli left: 500 (index 3) is the least that fits 500.
  CHECK(g.left[3] == 0);
  CHECK(g.total == 2600);
  GpuLeft w = left_of({1000, 600, 1000});
  std::int64_t cpu2 = 8000;
  REQUIRE(subtract_request(w, cpu2, req(1000, 1000, 2)));
  CHECK(w.left[0] == 0);
  CHECK(w.left[2] == 0);
  CHECK(w.left[1] == 600);
  GpuLeft small = left_of({1000});
  std::int64_t cpu3 = 500;
  CHECK_FALSE(subtract_request(small, cpu3, req(1000, 1000, 1)));  // not enough CPU
}

TEST_CASE("DotProduct scores 1 - (free . request) / 2 over [cpu/128000, gpu/8000]") {
  struct Case {
    const char* name;
    std::int64_t cpu_left, gpu_left;
    ShareRequest r;
    std::int64_t want;
  };
  const Case cases[] = {
      // (96000/128000 * 8000/128000 + 8000/8000 * 1000/8000) / 2 = (0.046875 + 0.125) / 2
      // = 0.0859375 -> 100 * 0.9140625 = 91.4 -> 91
      {"empty 8-GPU node, 1 GPU + 8 CPUs", 96000, 8000, req(8000, 1000, 1), 91},
      // (16000/128000 * 8000/128000 + 500/8000 * 1000/8000) / 2 = (0.0078125 + 0.0078125) / 2
      // -> 100 * (1 - 0.0078125) = 99.2 -> 99
      {"nearly full node", 16000, 500, req(8000, 1000, 1), 99},
      // share: (32000/128000 * 4000/128000 + 2000/8000 * 470/8000) / 2 = (0.0078125 +
      // 0.0146875) / 2 = 0.01125 -> 98.875 -> 98
      {"share pod", 32000, 2000, req(4000, 470, 1), 98},
      {"not enough CPU scores the minimum", 1000, 8000, req(2000, 1000, 1), 0},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    CHECK(dot_product_score(c.cpu_left, c.gpu_left, c.r) == c.want);
  }
}

TEST_CASE("GpuClustering bands nodes by the GPU tags of their pods") {
  struct Case {
    const char* name;
    int pod_tag;
    std::vector<int> node_tags;
    std::int64_t gpu_left, want;
  };
  const Case cases[] = {
      // base = 25 * (8000 - left) / 8000 (integer)
      {"only the same tag: 75 + 25*(8000-3000)/8000 = 75 + 15", 0, {0}, 3000, 90},
      {"same tag among others: 50 + 15", 0, {0, 1}, 3000, 65},
      {"no GPU pod yet, empty 8-GPU node: 25 + 0", 1, {}, 8000, 25},
      {"no GPU pod yet, 2-GPU node: 25 + 25*6000/8000 = 25 + 18", 1, {}, 2000, 43},
      {"other tags only: 0 + 25*7000/8000 = 21", 2, {0, 1}, 1000, 21},
      {"a CPU-only pod scores 0", -1, {0}, 0, 0},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    CHECK(gpu_clustering_score(c.pod_tag, c.node_tags, c.gpu_left) == c.want);
  }
}

TEST_CASE("GpuPacking prefers shared GPUs, then free GPUs on used nodes, then empty nodes") {
  struct Case {
    const char* name;
    GpuLeft g;
    ShareRequest r;
    std::int64_t want;
  };
  const Case cases[] = {
      {"empty 8-GPU node: max(33 - 8, 8)",
       left_of({1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000}), req(1000, 500, 1), 25},
      {"empty 2-GPU node: 33 - 2", left_of({1000, 1000}), req(1000, 500, 1), 31},
      // sorted ascending: 300 does not fit 500, 600 does: 100 - (600*100/1000)/10 = 100 - 6
      {"share onto a partly used GPU", left_of({1000, 300, 600}), req(1000, 500, 1), 94},
      {"a free GPU on a used node: 50 - 1", left_of({1000, 300}), req(1000, 500, 1), 49},
      {"two free GPUs on a used node: 50 - 2", left_of({1000, 1000, 0}), req(1000, 1000, 2), 48},
      {"a CPU-only pod scores 0", left_of({1000, 300}), req(1000, 0, 0), 0},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    CHECK(gpu_packing_score(c.g, c.r) == c.want);
  }
}

TEST_CASE("BestFit scores 100 * (1 - sum w * (free - req) / max), then normalises min-max") {
  struct Case {
    const char* name;
    std::int64_t cpu_left, gpu_left;
    ShareRequest r;
    std::int64_t want;
  };
  const Case cases[] = {
      // 0.5 * (96000-8000)/128000 + 0.5 * (8000-1000)/8000 = 0.34375 + 0.4375 = 0.78125 -> 21.875
      {"empty 8-GPU node", 96000, 8000, req(8000, 1000, 1), 21},
      // 0.5 * 0/128000 + 0.5 * 0/8000 = 0 -> 100
      {"exact fit", 8000, 1000, req(8000, 1000, 1), 100},
      {"request does not fit: minimum", 1000, 8000, req(8000, 1000, 1), 0},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    CHECK(best_fit_raw_score(c.cpu_left, c.gpu_left, c.r) == c.want);
  }
  std::vector<std::int64_t> s = {21, 100, 60};
  min_max_normalize(s);
  // (s - 21) * 100 / 79: 0, 100, 39*100/79 = 49
  CHECK(s == std::vector<std::int64_t>{0, 100, 49});
  std::vector<std::int64_t> same = {40, 40};
  min_max_normalize(same);
  CHECK(same == std::vector<std::int64_t>{0, 0});
}

TEST_CASE("Random gives 100 to one feasible node drawn uniformly, 0 to the others") {
  TestWorld tw;
  for (int i = 0; i < 4; ++i)
    tw.node("n" + std::to_string(i)).cpu("8").memory("8Gi").gpus(1, "T4").add();
  const PodId p = tw.pod("p").cpu("1").gpus(1).add();
  Cluster cluster(tw.world());
  fw::Snapshot snap(cluster);
  fw::ReasonTable reasons;
  PluginContext ctx{tw.world(), reasons, 7};
  RandomScore plugin(ctx);
  plugin.set_slot(0);
  fw::CycleState state(1);
  const std::vector<NodeId> feasible = {1, 2, 3};
  std::vector<int> wins(4, 0);
  for (int round = 0; round < 3000; ++round) {
    state.begin_cycle(p);
    REQUIRE(plugin.pre_score(state, tw.world().pods[p], feasible, snap).is_success());
    int hundreds = 0;
    for (NodeId n = 0; n < 4; ++n) {
      const std::int64_t s = plugin.score(state, tw.world().pods[p], cluster.node(n));
      CHECK((s == 0 || s == 100));
      if (s == 100) {
        ++hundreds;
        ++wins[n];
      }
    }
    CHECK(hundreds == (1));
  }
  CHECK(wins[0] == 0);  // not feasible, never drawn
  for (NodeId n = 1; n < 4; ++n)
    CHECK(std::abs(wins[n] - 1000) < 120);  // 1000 expected, sd ~26
}
