#include "sim/quantity.hpp"

#include <doctest/doctest.h>

#include "sim/time.hpp"

using namespace capsim;

TEST_CASE("quantities parse as the Kubernetes API does, rounding up") {
  struct Case {
    const char* text;
    std::int64_t want_value;
    std::int64_t want_milli;
  };
  const Case cases[] = {
      {"0", 0, 0},
      {"1", 1, 1000},
      {"500m", 1, 500},  // Value() rounds 0.5 up to 1
      {"1.5", 2, 1500},
      {"2k", 2000, 2000000},
      {"64Gi", 68719476736, 68719476736000},
      {"1Ti", 1099511627776, 1099511627776000},
      {"128974848", 128974848, 128974848000},
      {"129e6", 129000000, 129000000000},
      {"123Mi", 128974848, 128974848000},
      {"1e3", 1000, 1000000},
      {"1E-3", 1, 1},
      {".5", 1, 500},
      {"100u", 1, 1},  // 0.0001 rounds up
      {"2.5Gi", 2684354560, 2684354560000},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    auto v = parse_quantity(c.text);
    REQUIRE(v.ok());
    CHECK(*v == c.want_value);
    auto m = parse_milli_quantity(c.text);
    REQUIRE(m.ok());
    CHECK(*m == c.want_milli);
  }
}

TEST_CASE("malformed quantities are rejected with a reason") {
  struct Case {
    const char* text;
    const char* want_in_message;
  };
  const Case cases[] = {
      {"", "empty"},
      {"abc", "no digits"},
      {"1.2.3", "two decimal points"},
      {"10Gb", "unknown suffix 'Gb'"},
      {"-1", "negative"},
      {"1e", "unknown suffix"},
      {"99999999999999999999Ei", "too large"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    auto v = parse_quantity(c.text);
    REQUIRE_FALSE(v.ok());
    CHECK(v.error().find(c.want_in_message) != std::string::npos);
  }
}

TEST_CASE("formatting picks the largest exact binary suffix") {
  CHECK(format_bytes(80LL << 30) == "80Gi");
  CHECK(format_bytes(1536LL << 20) == "1536Mi");
  CHECK(format_bytes(1000) == "1000");
  CHECK(format_milli(500) == "500m");
  CHECK(format_milli(8000) == "8");
}

TEST_CASE("durations accept seconds and unit sequences") {
  CHECK(*parse_duration("90") == 90 * kSecond);
  CHECK(*parse_duration("1h30m") == 90 * kMinute);
  CHECK(*parse_duration("2d") == 2 * kDay);
  CHECK(*parse_duration("250ms") == 250 * kMillisecond);
  CHECK(*parse_duration("1.5h") == 90 * kMinute);
  CHECK_FALSE(parse_duration("-5s").ok());
  CHECK_FALSE(parse_duration("5 parsecs").ok());
  CHECK_FALSE(parse_duration("1h30").ok());
}

TEST_CASE("long decimals round up exactly, however many digits they carry") {
  // Kubernetes reads a quantity exactly (inf.Dec) and Value()/MilliValue() round up; capsim keeps
  // 30 significant digits and rounds up whatever it drops.
  struct Case {
    const char* text;
    std::int64_t want_value;
    std::int64_t want_milli;
  };
  const Case cases[] = {
      // 1e-10: a tiny value, not "too large" because of the trailing zeros.
      {"0.0000000001000000000000000000000000000000", 1, 1},
      // A divisor of 10^39: 2.5e-10 rounds up to one unit and one milli.
      {"0.000000000250000000000000000000000000001", 1, 1},
      // A digit beyond the 30 significant ones still rounds up.
      {"0.1000000000000000000000000000001", 1, 101},
      {"0.100000000000000000000000000000", 1, 100},
      {"123456789.123456789123456789000000", 123456790, 123456789124},
      {"1.00000000000000000000000000000Ei", 1LL << 60, 0},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    auto v = parse_quantity(c.text);
    REQUIRE(v.ok());
    CHECK(*v == c.want_value);
    if (c.want_milli != 0) {
      auto m = parse_milli_quantity(c.text);
      REQUIRE(m.ok());
      CHECK(*m == c.want_milli);
    }
  }
}
