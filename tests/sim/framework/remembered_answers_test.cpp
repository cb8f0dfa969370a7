// NodeScoreCache: scores remembered between cycles are the ones a fresh computation gives, and
// are read back only for nodes that have not changed since.
#include <doctest/doctest.h>

#include <vector>

#include "fixtures/builders.hpp"
#include "sim/cluster.hpp"
#include "sim/framework/node_score_cache.hpp"

using namespace capsim;
using capsim::testing::TestWorld;

namespace {
struct Fleet {
  TestWorld tw;
  std::vector<PodId> small, big;
  Fleet() {
    for (int i = 0; i < 4; ++i)
      tw.node("n" + std::to_string(i)).cpu("64").memory("256Gi").add();
    for (int i = 0; i < 200; ++i)
      small.push_back(tw.pod("s" + std::to_string(i)).cpu("100m").memory("1Gi").add());
    big.push_back(tw.pod("big").cpu("60").memory("1Gi").add());
  }
};

// Free cores: a score that moves with every bind.
std::int64_t free_cores(const ScoreNode& c) {
  return (c.allocatable[kCpu] - c.requested[kCpu]) / 1000;
}
}  // namespace

TEST_CASE("remembered scores are recomputed for changed nodes only, and match a fresh score") {
  Fleet f;
  Cluster c(f.tw.world());
  fw::NodeScoreCache cache;
  const std::vector<NodeId> nodes{0, 1, 2, 3};
  const std::vector<std::int64_t> key{1}, other{2};
  std::vector<std::int64_t> out(4);
  cache.score(c, key, nodes, out, free_cores);
  CHECK(out == std::vector<std::int64_t>{64, 64, 64, 64});
  CHECK(cache.computed() == 4);
  cache.score(c, key, nodes, out, free_cores);  // nothing changed: all read back
  CHECK(out == std::vector<std::int64_t>{64, 64, 64, 64});
  CHECK(cache.computed() == 4);

  c.bind(f.big[0], 2, {});
  cache.score(c, key, nodes, out, free_cores);
  CHECK(out == std::vector<std::int64_t>{64, 64, 4, 64});
  CHECK(cache.computed() == 5);                   // only node 2
  cache.score(c, other, nodes, out, free_cores);  // another key: its own scores
  CHECK(cache.computed() == 9);

  // Scores that do not fit a byte are computed every time.
  auto large = [](const ScoreNode& n) { return free_cores(n) * 100; };
  cache.score(c, std::vector<std::int64_t>{3}, nodes, out, large);
  cache.score(c, std::vector<std::int64_t>{3}, nodes, out, large);
  CHECK(out == std::vector<std::int64_t>{6400, 6400, 400, 6400});
  CHECK(cache.computed() == 17);

  // More changes than the cluster's change log holds: every node is scored anew.
  for (PodId p : f.small) {
    c.bind(p, 1, {});
    c.unbind(p);
  }
  REQUIRE(c.generation() > Cluster::kChangeLog);
  c.bind(f.small[0], 3, {});
  c.bind(f.small[1], 3, {});
  cache.score(c, key, nodes, out, free_cores);
  CHECK(out == std::vector<std::int64_t>{64, 64, 4, 63});  // 64 - 0.2 cores, truncated
  CHECK(cache.computed() == 21);

  // Another cluster at the same generation is another state: nothing carries over.
  Fleet g;
  Cluster d(g.tw.world());
  cache.score(d, key, nodes, out, free_cores);
  CHECK(out == std::vector<std::int64_t>{64, 64, 64, 64});
  CHECK(cache.computed() == 25);
}
