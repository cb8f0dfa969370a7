// figure() is the one way report, compare and check print a number; the report test parses it.
#include "reports/text/number.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

using namespace capsim;

TEST_CASE("figures show four significant digits with thousands separators") {
  struct Case {
    double v;
    const char* want;
  };
  const Case cases[] = {
      {0, "0"},
      {12345, "12,345"},
      {-1234567, "-1,234,567"},
      {1234.567, "1,235"},
      {12.345, "12.35"},
      {0.72341, "0.7234"},
      {0.000123, "0.000123"},
      {1e-9, "0"},
      {-1e-9, "0"},
      {999.96, "1,000"},
      {100.04, "100.0"},
      {std::nan(""), "n/a"},
      {std::numeric_limits<double>::infinity(), "inf"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.v);
    CHECK(figure(c.v) == c.want);
  }
}

TEST_CASE("changes carry a sign and percentages a base") {
  CHECK(signed_figure(3.5) == "+3.500");
  CHECK(signed_figure(-3.5) == "-3.500");
  CHECK(signed_figure(0) == "0");
  CHECK(percent_change(5, 100) == "+5.00%");
  CHECK(percent_change(-50, 200) == "-25.0%");
  CHECK(percent_change(8368, 1) == "+836,800%");
  CHECK(percent_change(1, 0) == "n/a");
}

TEST_CASE("exact numbers read back as the same double") {
  for (double v : {0.1, 1.0 / 3.0, 18785.6123456789, 1e-300, -2.5}) {
    CHECK(std::stod(exact_number(v)) == v);
  }
}

TEST_CASE("durations read like a person would say them") {
  CHECK(human_seconds(45) == "45s");
  CHECK(human_seconds(750) == "12m 30s");
  CHECK(human_seconds(11100) == "3h 05m");
  CHECK(human_seconds(187200) == "2d 04h");
}

TEST_CASE("run and plan figures: integers whole, others to six significant digits") {
  CHECK(compact_number(2474) == "2474");
  CHECK(compact_number(-3) == "-3");
  CHECK(compact_number(0.72341234) == "0.723412");
  CHECK(compact_number(1234567.5) == "1.23457e+06");
  CHECK(compact_number(std::numeric_limits<double>::quiet_NaN()) == "null");
  CHECK(compact_number(std::numeric_limits<double>::infinity()) == "null");
}
