#include "sim/random.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

using namespace capsim;

TEST_CASE("the same seed and purpose give the same stream; another purpose does not") {
  RandomStream a(42, "arrivals"), b(42, "arrivals"), c(42, "durations"), d(43, "arrivals");
  bool differs_c = false, differs_d = false;
  for (int i = 0; i < 100; ++i) {
    const auto x = a.next_u64();
    CHECK(x == b.next_u64());
    differs_c = differs_c || x != c.next_u64();
    differs_d = differs_d || x != d.next_u64();
  }
  CHECK(differs_c);
  CHECK(differs_d);
}

TEST_CASE("distribution transforms have the right moments over many draws") {
  RandomStream r(7, "moments");
  const int n = 200000;
  double su = 0, se = 0, sn = 0, sn2 = 0, sb = 0, sg = 0;
  for (int i = 0; i < n; ++i) {
    su += r.uniform();
    se += r.exponential(2.0);
    const double z = r.normal();
    sn += z;
    sn2 += z * z;
    sb += r.beta(2, 6);
    sg += r.gamma(0.5);
  }
  CHECK(su / n == doctest::Approx(0.5).epsilon(0.01));
  CHECK(se / n == doctest::Approx(0.5).epsilon(0.02));  // mean 1/rate
  CHECK(sn / n == doctest::Approx(0.0).epsilon(0.01));
  CHECK(sn2 / n == doctest::Approx(1.0).epsilon(0.02));
  CHECK(sb / n == doctest::Approx(0.25).epsilon(0.02));  // a/(a+b)
  CHECK(sg / n == doctest::Approx(0.5).epsilon(0.03));   // shape
}

TEST_CASE("below(n) is uniform and stays in range; discrete follows its weights") {
  RandomStream r(1, "ints");
  std::vector<int> counts(6, 0);
  for (int i = 0; i < 60000; ++i) {
    const auto v = r.below(6);
    REQUIRE(v < 6);
    counts[v]++;
  }
  for (int c : counts)
    CHECK(c == doctest::Approx(10000).epsilon(0.05));
  const double w[] = {1, 0, 3};
  std::vector<int> dc(3, 0);
  for (int i = 0; i < 40000; ++i)
    dc[r.discrete(w)]++;
  CHECK(dc[1] == 0);
  CHECK(static_cast<double>(dc[2]) / dc[0] == doctest::Approx(3.0).epsilon(0.05));
}

TEST_CASE("a known seed produces a fixed first value, so streams are stable across builds") {
  RandomStream r(0, "golden");
  const auto first = r.next_u64();
  RandomStream again(0, "golden");
  CHECK(again.next_u64() == first);
  // Pinned so an accidental change of the generator or seeding shows up here.
  RandomStream raw(12345);
  // xoshiro256** seeded by SplitMix64(12345), computed independently.
  CHECK(raw.next_u64() == 13720838825685603483ULL);
}
