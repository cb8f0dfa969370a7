// Fill experiments: the workload rewrite (shuffle, inflation by resampling, arrivals) and the
// allocation/fragmentation curve per arrived percentage.
#include "models/fill_experiment.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "fixtures/builders.hpp"
#include "tests/fixtures/bind.hpp"

using namespace capsim;
using capsim::testing::bind_share;
using capsim::testing::bind_units;
using capsim::testing::TestWorld;

namespace {

// Two 2-GPU nodes (4000 milli) and four pods asking for 1750 milli in all.
void small_world(TestWorld& tw) {
  tw.node("n0").cpu("64").memory("256Gi").gpus(2, "T4").add();
  tw.node("n1").cpu("64").memory("256Gi").gpus(2, "G2").add();
  tw.pod("a-whole").cpu("4").gpus(1).add();
  tw.pod("b-half").cpu("2").gpu_milli(500).add();
  tw.pod("c-quarter").cpu("2").gpu_milli(250).add();
  tw.pod("d-cpu").cpu("1").add();
}

std::vector<std::string> names(const World& w) {
  std::vector<std::string> out;
  for (const PodSpec& p : w.pods)
    out.push_back(p.name);
  return out;
}

}  // namespace

TEST_CASE("arrived percentages round half to even, as the peer's analysis does") {
  struct Case {
    std::int64_t num, den, want;
  };
  const Case cases[] = {
      {0, 6212000, 0},
      {1, 200, 0},  // 0.5 -> 0
      {3, 200, 2},
      {5, 1000, 0},  // 1.5 -> 2; 0.5 -> 0
      {25, 1000, 2},
      {35, 1000, 4},  // 2.5 -> 2; 3.5 -> 4
      {6212000, 6212000, 100},
      {8075600, 6212000, 130},
      {6243060, 6212000, 100},  // 100.5 exactly -> 100
      {6243061, 6212000, 101},
  };
  for (const auto& c : cases) {
    CAPTURE(c.num);
    CHECK(rounded_percent(c.num, c.den) == c.want);
  }
}

TEST_CASE("a fill shuffles the pods, then appends resampled copies up to the GPU target") {
  TestWorld tw;
  small_world(tw);
  FillOptions o;
  o.inflate_to = 1.5;  // 6000 milli
  const FillPlan plan = prepare_fill(tw.world(), o, 42);
  const World& w = tw.world();
  CHECK(plan.original_pods == 4);
  CHECK(plan.gpu_capacity_milli == 4000);
  CHECK(plan.resampled_pods == w.pods.size() - 4);
  CHECK(plan.resampled_pods > 3);
  // The first four arrivals are the originals (in some order), the rest their copies.
  const std::vector<std::string> order = names(w);
  std::set<std::string> first(order.begin(), order.begin() + 4);
  CHECK(first == std::set<std::string>{"a-whole", "b-half", "c-quarter", "d-cpu"});
  std::int64_t requested = 0;
  for (std::size_t i = 0; i < w.pods.size(); ++i) {
    const PodSpec& p = w.pods[i];
    CAPTURE(p.name);
    CHECK(p.resampled == (i >= 4));
    if (i >= 4) CHECK(p.name.find("-tuned-") != std::string::npos);
    CHECK(p.arrival == static_cast<SimTime>(i) * kSecond);
    CHECK(p.duration == kEndOfTime);
    requested += pod_gpu_request_milli(p);
  }
  CHECK(requested == plan.requested_gpu_milli);
  // Inflation stops at the first draw that would pass the target, so the request is within one
  // pod's share of it.
  CHECK(requested <= 6000);
  CHECK(requested > 5000);

  TestWorld again;
  small_world(again);
  (void)prepare_fill(again.world(), o, 42);
  CHECK(names(again.world()) == names(w));  // same seed, same arrivals
  TestWorld other;
  small_world(other);
  (void)prepare_fill(other.world(), o, 43);
  CHECK(names(other.world()) != names(w));
}

TEST_CASE("a fill below the workload's request drops pods, and node order follows the seed") {
  TestWorld tw;
  small_world(tw);
  FillOptions o;
  o.inflate_to = 0.25;  // 1000 milli of the 1750 asked
  o.shuffle_nodes = false;
  const FillPlan plan = prepare_fill(tw.world(), o, 7);
  CHECK(plan.dropped_pods > 0);
  CHECK(plan.requested_gpu_milli <= 1000);
  CHECK(tw.world().nodes[0].name == "n0");

  std::set<std::vector<std::string>> orders;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    TestWorld t;
    for (int i = 0; i < 8; ++i)
      t.node("m" + std::to_string(i)).cpu("8").memory("8Gi").gpus(1, "T4").add();
    t.pod("p").gpus(1).add();
    (void)prepare_fill(t.world(), FillOptions{}, seed);
    std::vector<std::string> order;
    for (const NodeSpec& n : t.world().nodes)
      order.push_back(n.name);
    orders.insert(order);
  }
  CHECK(orders.size() == 4);  // each seed orders the eight nodes its own way
}

TEST_CASE("the fill curve averages the arrivals that round to each percentage") {
  // One GPU (1000 milli): four quarter shares fill it (25, 50, 75, 100 % arrived); a 300-milli
  // share then fails (130 %).
  TestWorld tw;
  tw.node("n").cpu("64").memory("64Gi").gpus(1, "T4").add();
  for (int i = 0; i < 4; ++i)
    tw.pod("q" + std::to_string(i)).cpu("1").gpu_milli(250).add();
  const PodId big = tw.pod("big").cpu("1").gpu_milli(300).add();
  const FragmentationModel frag(tw.world());
  FillCurve curve(tw.world(), frag);
  Cluster cluster(tw.world());
  for (PodId p = 0; p < 4; ++p) {
    cluster.pod(p).phase = PodPhase::kRunning;
    bind_share(cluster, p, 0, 0);  // a share of GPU 0
    curve.observe(p, true, cluster);
  }
  curve.observe(big, false, cluster);
  CHECK(curve.arrived_milli() == 1300);
  CHECK(curve.allocated_milli() == 1000);
  CHECK(curve.allocation_ratio_at(50) == doctest::Approx(0.5));
  CHECK(curve.allocation_ratio_at(100) == doctest::Approx(1.0));
  CHECK(curve.allocation_ratio_at(130) == doctest::Approx(1.0));
  CHECK(curve.allocation_ratio_at(51) == doctest::Approx(0.5));  // no arrival at 51: 50's
  CHECK(std::isnan(curve.allocation_ratio_at(40)));              // none within one point
  CHECK(std::isnan(curve.fragmentation_ratio_at(100)));          // nothing left unallocated
  const auto rows = curve.samples();
  std::vector<double> pct;
  for (const SampleRecord& r : rows)
    pct.push_back(std::round(r.arrived_gpu_ratio * 100));
  CHECK(pct == std::vector<double>{24, 25, 26, 49, 50, 51, 74, 75, 76, 99, 100, 101, 129, 130});
  CHECK(rows[1].gpus_allocated == doctest::Approx(0.25));
  CHECK(rows.back().gpus_allocated == doctest::Approx(1.0));
  CHECK(rows.back().time == 0);  // arrival times come from the pods (all 0 here)
}
