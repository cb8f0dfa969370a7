// JSON numbers: the shortest text that reads back as the same double, and null where JSON has no
// number (json_quote's cases are in tests/models/gpu_catalog_test.cpp, beside its JSON checker).
#include "reports/text/json.hpp"

#include <doctest/doctest.h>

#include <limits>

using namespace capsim;

TEST_CASE("a JSON number reads back exactly, and NaN and infinities are null") {
  struct Case {
    const char* name;
    double v;
    const char* want;
  };
  const Case cases[] = {
      {"an integer", 2474, "2474"},
      {"a short fraction", 0.1, "0.1"},
      {"a long fraction", 1.0 / 3.0, "0.3333333333333333"},
      {"a large number", 1.5e300, "1.5e+300"},
      {"NaN", std::numeric_limits<double>::quiet_NaN(), "null"},
      {"infinity", -std::numeric_limits<double>::infinity(), "null"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(json_number(c.v) == c.want);
  }
  CHECK(json_quote("a\"b") == R"("a\"b")");
}
