// The spot reclaim process: a pool's reclaims depend on its seed and nodes alone (the same seed
// gives the same times and nodes, another pool's presence changes nothing), draws land only on the
// pool's own nodes, and a pool without a rate draws nothing.
#include "sim/run/spot.hpp"

#include <doctest/doctest.h>

#include <vector>

#include "tests/fixtures/builders.hpp"

using namespace capsim;
using capsim::testing::TestWorld;

namespace {

SpotPool spot_pool(const std::string& name, double per_node_day) {
  SpotPool p;
  p.pool = name;
  p.per_node_day = per_node_day;
  p.notice = 2 * kMinute;
  p.return_after = [](RandomStream&) { return 3600.0; };
  return p;
}

struct Draw {
  SimTime time;
  NodeId node;
  bool operator==(const Draw&) const = default;
};

std::vector<Draw> draws(SpotProcess& sp, std::size_t pool, int n) {
  std::vector<Draw> out;
  SimTime t = 0;
  for (int i = 0; i < n; ++i) {
    t = sp.next_time(pool, t);
    out.push_back({t, sp.draw(pool).node});
  }
  return out;
}

}  // namespace

TEST_CASE("a spot pool's reclaims depend on its seed and its nodes only") {
  TestWorld tw;
  for (int i = 0; i < 4; ++i)
    tw.node("od-" + std::to_string(i)).cpu("8").memory("64Gi").gpus(8).pool("od").add();
  for (int i = 0; i < 4; ++i)
    tw.node("sp-" + std::to_string(i)).cpu("8").memory("64Gi").gpus(8).pool("sp").add();
  for (int i = 0; i < 2; ++i)
    tw.node("other-" + std::to_string(i)).cpu("8").memory("64Gi").gpus(8).pool("other").add();
  const std::vector<NodeSpec>& nodes = tw.world().nodes;

  SpotConfig one;
  one.seed = 5;
  one.pools = {spot_pool("sp", 2.0)};
  SpotConfig two = one;
  two.pools.push_back(spot_pool("other", 10.0));  // listed after: a second pool, own streams
  SpotConfig reseeded = one;
  reseeded.seed = 6;

  SpotProcess a(nodes, one);
  SpotProcess b(nodes, one);
  SpotProcess c(nodes, two);
  SpotProcess d(nodes, reseeded);
  const std::vector<Draw> first = draws(a, 0, 50);
  CHECK(first == draws(b, 0, 50));
  CHECK(first == draws(c, 0, 50));  // the other pool changes nothing
  CHECK(first != draws(d, 0, 50));
  for (const Draw& r : first) {
    CHECK(nodes[r.node].pool == "sp");
    CHECK(a.pool_of(r.node) == 0);
  }
  CHECK(a.pool_of(0) == -1);  // od-0 is on demand
  CHECK(c.pool_of(8) == 1);   // other-0

  // 4 nodes x 2 per node-day: 8 a day, a mean gap of 3 h (50 gaps: within 40 %).
  const double mean_gap = to_seconds(first.back().time) / 50.0;
  CHECK(mean_gap == doctest::Approx(3 * 3600.0).epsilon(0.4));
  // The return time comes from the pool's draw.
  CHECK(a.draw(0).return_after == kHour);
}

TEST_CASE("a spot pool without a rate draws no reclaim") {
  TestWorld tw;
  tw.node("sp-0").cpu("8").memory("64Gi").gpus(8).pool("sp").add();
  SpotConfig cfg;
  cfg.pools = {spot_pool("sp", 0.0)};
  SpotProcess p(tw.world().nodes, cfg);
  CHECK_FALSE(p.modelled(0));
  CHECK(p.next_time(0, 0) == kEndOfTime);
}
