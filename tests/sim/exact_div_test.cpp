#include "sim/exact_div.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <random>

using namespace capsim;

TEST_CASE("exact_div gives the integer division's quotient") {
  // Exact multiples and their neighbours, the quotients nearest an integer: k * d - 1 over d is
  // k - 1/d, which would round up to k if 1/d were below half a unit in the last place of k
  // (it is not while k * d < 2^53, hence the bound), and the largest numerators.
  constexpr std::int64_t kTop = std::int64_t{1} << 53;
  std::int64_t checked = 0;
  for (std::int64_t d : {std::int64_t{1}, std::int64_t{3}, std::int64_t{7}, std::int64_t{128000},
                         std::int64_t{1} << 40, (std::int64_t{1} << 40) + 1,
                         std::int64_t{2199023255552} - 3, kTop / 5, kTop - 1}) {
    for (std::int64_t k = 1; k < kTop / d && k < (std::int64_t{1} << 20); k = k * 2 + 1) {
      for (std::int64_t delta : {-1, 0, 1}) {
        const std::int64_t n = k * d + delta;
        if (n < 0 || n >= kTop) continue;
        CHECK_MESSAGE(exact_div(n, d) == n / d, n, " / ", d);
        ++checked;
      }
    }
  }
  for (std::int64_t d : {std::int64_t{1}, std::int64_t{2}, std::int64_t{3}, std::int64_t{1} << 26,
                         (std::int64_t{1} << 26) + 1, kTop - 2, kTop - 1}) {
    for (std::int64_t n = kTop - 4; n < kTop; ++n) {
      CHECK_MESSAGE(exact_div(n, d) == n / d, n, " / ", d);
      ++checked;
    }
  }
  CHECK(checked > 300);
  // The numerators scoring divides: (capacity - requested) * 100 and requested * 100, with
  // capacities in millicores and bytes.
  std::mt19937_64 gen(7);
  for (int i = 0; i < 200000; ++i) {
    const std::int64_t d =
        1 + static_cast<std::int64_t>(gen() % (std::uint64_t{1} << (1 + i % 52)));
    const std::int64_t n = static_cast<std::int64_t>(gen() % static_cast<std::uint64_t>(kTop));
    REQUIRE_MESSAGE(exact_div(n, d) == n / d, n, " / ", d);
  }
  // Outside the exact range the integer division answers.
  // (a numerator from 2^53 on may not be a double: 2^53 + 1 would become 2^53).
  CHECK(exact_div(kTop + 1, 1) == kTop + 1);
  CHECK(exact_div(kTop * 16 + 3, 1) == kTop * 16 + 3);
  CHECK(exact_div(kTop, 3) == kTop / 3);
  CHECK(exact_div(INT64_MAX, 7) == INT64_MAX / 7);
  CHECK(exact_div(100, kTop + 1) == 0);
  CHECK(exact_div(0, 5) == 0);
}
