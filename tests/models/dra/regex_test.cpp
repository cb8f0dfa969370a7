// The RE2-subset matcher behind CEL's matches(): partial-match semantics, the syntax DRA
// selectors use, and errors for what RE2 rejects or capsim does not model.
#include "models/dra/regex.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using capsim::cel::Regex;

TEST_CASE("regexes match anywhere unless anchored, as RE2's PartialMatch") {
  struct Case {
    const char* pattern;
    const char* text;
    bool want;
  };
  const std::vector<Case> cases = {
      {"^.*a100.*$", "nvidia a100-sxm4-80gb", true},
      {"^.*a100.*$", "nvidia h100 80gb hbm3", false},
      {"B200", "NVIDIA B200", true},
      {"^B200", "NVIDIA B200", false},
      {"B200$", "NVIDIA B200", true},
      {"^NVIDIA (A100|H100)", "NVIDIA H100 NVL", true},
      {"^NVIDIA (A100|H100)", "NVIDIA H200", false},
      {"(?i)^nvidia b200$", "NVIDIA B200", true},
      {"(?i:b)200", "NVIDIA B200", true},
      {"[0-9]{2,3}GB", "NVIDIA A100-SXM4-80GB", true},
      {"^[0-9]{4}GB", "NVIDIA A100-SXM4-80GB", false},
      {"\\d+g\\.\\d+gb", "3g.40gb", true},
      {"^\\w+$", "1g.10gb", false},
      {"[[:alpha:]]+[[:digit:]]", "mig1", true},
      {"[^a-z]", "abc", false},
      {"\\bH100\\b", "NVIDIA H100 NVL", true},
      {"\\bH10\\b", "NVIDIA H100 NVL", false},
      {"a*", "", true},
      {"(a*)*b", "aaaa", false},  // linear time: no catastrophic backtracking
      {"x{0}y", "y", true},
      {"\\Qa.b\\E", "a.b", true},
      {"\\Qa.b\\E", "axb", false},
      {"a.c", "a\nc", false},
      {"(?s)a.c", "a\nc", true},
      {"^b", "a\nb", false},
      {"(?m)^b", "a\nb", true},
      {"a{,2}", "a{,2}", true},  // not a repetition: literal text, as RE2
      {"\\x41", "A", true},
  };
  for (const Case& c : cases) {
    CAPTURE(c.pattern);
    CAPTURE(c.text);
    auto re = Regex::compile(c.pattern);
    REQUIRE_MESSAGE(re.ok(), (re.ok() ? "" : re.error()));
    CHECK(re->search(c.text) == c.want);
  }
}

TEST_CASE("regexes RE2 rejects, or capsim does not model, are errors naming the offset") {
  struct Case {
    const char* pattern;
    const char* want;
  };
  const std::vector<Case> cases = {
      {"(a", "offset 0: missing closing )"},
      {"a)", "offset 1: unexpected )"},
      {"[a-", "offset 0: missing closing ]"},
      {"a**", "offset 2: bad repetition operator"},
      {"*a", "offset 0: missing argument to repetition operator"},
      {"(a)\\1", "offset 3: backreferences"},
      {"a(?=b)", "offset 1: look-ahead assertions are not supported"},
      {"a(?<=b)", "offset 1: look-behind assertions are not supported"},
      {"\\pL", "offset 0: Unicode classes"},
      {"a{1001}", "offset 1: bad repetition operator: counts above 1000"},
      {"a{3,2}", "offset 1: bad repetition operator: {n,m} with m < n"},
      {"[z-a]", "invalid character class range"},
      {"(?x)a", "unknown flag 'x'"},
      {"\\", "trailing backslash"},
      {"((((a{1000}){1000}){1000}){1000})", "the pattern is too large"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.pattern);
    auto re = Regex::compile(c.pattern);
    REQUIRE_FALSE(re.ok());
    CHECK_MESSAGE(re.error().find(c.want) != std::string::npos, re.error());
  }
}

TEST_CASE("a regex search stops when its step budget runs out") {
  auto re = Regex::compile("(a|aa)*b");
  REQUIRE(re.ok());
  const std::string text(1000, 'a');
  std::uint64_t budget = 500;
  CHECK_FALSE(re->search(text, budget).has_value());
  CHECK(budget == 0);
  std::uint64_t plenty = 1000000;
  const auto r = re->search(text, plenty);
  REQUIRE(r.has_value());
  CHECK_FALSE(*r);
  CHECK(plenty < 1000000);
}
