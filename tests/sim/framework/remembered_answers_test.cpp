// NodeScoreCache and QuickMeetsCache: answers remembered between cycles are the
// ones a fresh computation gives, and are read back only for nodes that have
// not changed since.
#include <doctest/doctest.h>

#include <vector>

#include "fixtures/builders.hpp"
#include "sim/cluster.hpp"
#include "sim/framework/node_score_cache.hpp"
#include "sim/framework/quick_meets_cache.hpp"

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

TEST_CASE(
    "remembered scores are recomputed for changed nodes only, and match "
    "a fresh score") {
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

  // More changes than the cluster's change log holds: every node is scored
  // anew.
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

  // Another cluster at the same generation is another state: nothing carries
  // over.
  Fleet g;
  Cluster d(g.tw.world());
  cache.score(d, key, nodes, out, free_cores);
  CHECK(out == std::vector<std::int64_t>{64, 64, 64, 64});
  CHECK(cache.computed() == 25);
}

TEST_CASE(
    "remembered quick answers are read again for changed nodes only, by "
    "requirement") {
  Fleet f;
  Cluster c(f.tw.world());
  fw::QuickMeetsCache cache;
  fw::QuickRequirement need, enough;
  need.cpu = 8000;     // 8 cores free: necessary
  enough.cpu = 32000;  // 32: sufficient
  using Answer = fw::QuickMeetsCache::Answer;
  auto fresh = [&](NodeId id, const fw::QuickRequirement* sufficient) {
    const QuickNode& q = c.quick()[id];
    if (!need.met_by(q)) return Answer::kRejected;
    return sufficient != nullptr && sufficient->met_by(q) ? Answer::kAccepted : Answer::kAskPlugins;
  };
  auto check_all = [&](fw::QuickMeetsCache::Entry& e, const fw::QuickRequirement* sufficient) {
    for (NodeId id = 0; id < 4; ++id) {
      CAPTURE(id);
      CHECK(e.answer(id, c.quick()[id], need, sufficient) == fresh(id, sufficient));
    }
  };
  fw::QuickMeetsCache::Entry& e = cache.entry(c, need, &enough);
  check_all(e, &enough);
  CHECK(e.reads == 4);
  CHECK(&cache.entry(c, need, &enough) == &e);  // the same requirements: the same answers
  check_all(e, &enough);
  CHECK(e.reads == 4);

  c.bind(f.big[0], 0, {});  // 4 cores left on node 0: rejected now
  REQUIRE(&cache.entry(c, need, &enough) == &e);
  CHECK(e.answer(0, c.quick()[0], need, &enough) == Answer::kRejected);
  check_all(e, &enough);
  CHECK(e.reads == 5);
  c.unbind(f.big[0]);
  c.bind(f.small[0], 0, {});  // 63.9 cores left: accepted again
  REQUIRE(&cache.entry(c, need, &enough) == &e);
  CHECK(e.answer(0, c.quick()[0], need, &enough) == Answer::kAccepted);
  CHECK(e.reads == 6);

  // Without a sufficient requirement the plugins are asked about every node
  // that is not rejected; it is another entry.
  fw::QuickMeetsCache::Entry& ask = cache.entry(c, need, nullptr);
  CHECK(&ask != &e);
  check_all(ask, nullptr);
  CHECK(ask.answer(1, c.quick()[1], need, nullptr) == Answer::kAskPlugins);
  fw::QuickRequirement more = enough;
  more.cpu = 48000;
  CHECK(&cache.entry(c, need, &more) != &e);

  // Model lists are compared by content, not by where they are.
  const std::vector<GpuModelId> list{0, 2}, same_list{0, 2}, another{1};
  fw::QuickRequirement by_model = need;
  by_model.models = &list;
  fw::QuickMeetsCache::Entry& m = cache.entry(c, by_model, &enough);
  CHECK(&m != &e);
  by_model.models = &same_list;
  CHECK(&cache.entry(c, by_model, &enough) == &m);
  by_model.models = &another;
  CHECK(&cache.entry(c, by_model, &enough) != &m);

  // More changes than the change log holds: every answer is read anew.
  for (PodId p : f.small) {
    if (p == f.small[0]) continue;
    c.bind(p, 1, {});
    c.unbind(p);
  }
  REQUIRE(&cache.entry(c, need, &enough) == &e);
  const std::uint64_t before = e.reads;
  check_all(e, &enough);
  CHECK(e.reads == before + 4);
}
