#include "models/mig_layout.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "models/gpu_catalog.hpp"

using namespace capsim;

namespace {

GpuModelInfo model(const char* name) {
  return to_model_info(*GpuCatalog::builtin().find(name));
}

ProfileMultiset profiles(const GpuModelInfo& m, std::vector<std::string> names) {
  ProfileMultiset out;
  for (const auto& n : names) {
    auto it = std::find_if(m.mig_profiles.begin(), m.mig_profiles.end(),
                           [&](const MigProfileInfo& p) { return p.name == n; });
    REQUIRE_MESSAGE(it != m.mig_profiles.end(), n);
    out.push_back(static_cast<std::uint16_t>(it - m.mig_profiles.begin()));
  }
  return out;
}

}  // namespace

TEST_CASE("MIG layouts are accepted or rejected by placement, with the reason") {
  struct Case {
    const char* name;
    const char* gpu;
    std::vector<std::string> layout;
    bool want_ok;
    const char* want_reason;  // part of the error message
  };
  const Case cases[] = {
      {"4g+3g fills the GPU (4g at 0, 3g at 4)", "A100-80GB", {"4g.40gb", "3g.40gb"}, true, ""},
      {"all-balanced: 2x1g + 2g + 3g",
       "A100-80GB",
       {"1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb"},
       true,
       ""},
      {"7 x 1g",
       "A100-80GB",
       {"1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"},
       true,
       ""},
      {"3g+3g+1g: the two 3g use all eight memory slices",
       "A100-80GB",
       {"3g.40gb", "3g.40gb", "1g.10gb"},
       false,
       "needs 9 memory slices"},
      {"4g+4g: there is one 4g slot",
       "A100-80GB",
       {"4g.40gb", "4g.40gb"},
       false,
       "at most 1 instance(s) of 4g.40gb"},
      {"8 x 1g: only 7 compute slices",
       "A100-80GB",
       {"1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"},
       false,
       "at most 7 instance(s) of 1g.10gb"},
      {"two +me instances",
       "A100-80GB",
       {"1g.10gb+me", "1g.10gb+me"},
       false,
       "at most 1 instance(s)"},
      {"B200 4g+3g", "B200", {"4g.90gb", "3g.90gb"}, true, ""},
      {"B200 all-balanced", "B200", {"1g.23gb", "1g.23gb", "2g.45gb", "3g.90gb"}, true, ""},
      {"B200 3g+3g+1g", "B200", {"3g.90gb", "3g.90gb", "1g.23gb"}, false, "needs 9 memory slices"},
      {"B200 4g+4g", "B200", {"4g.90gb", "4g.90gb"}, false, "at most 1 instance(s)"},
      // 7 compute slices, but 4 + 2 + 2 + 1 = 9 memory slices.
      {"B200 3g+2g+1g.45gb+1g: compute fits, memory does not",
       "B200",
       {"3g.90gb", "2g.45gb", "1g.45gb", "1g.23gb"},
       false,
       "needs 9 memory slices"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const GpuModelInfo m = model(c.gpu);
    auto r = place_profiles(m, profiles(m, c.layout));
    CHECK(r.ok() == c.want_ok);
    if (!c.want_ok) {
      REQUIRE_FALSE(r.ok());
      CAPTURE(r.error());
      CHECK(r.error().find(c.want_reason) != std::string::npos);
    }
  }
}

TEST_CASE("a layout that fits only in some creation order is found as mig-parted finds it") {
  // Created 3g first, the driver puts the 3g at slot 0 (its first free start) and no 4g fits;
  // 4g first puts 4g at 0 and the 3g at 4. The search tries the other order.
  const GpuModelInfo m = model("H100-80GB");
  auto r = place_profiles(m, profiles(m, {"3g.40gb", "4g.40gb"}));
  REQUIRE(r.ok());
  REQUIRE(r->instances.size() == 2);
  for (const auto& inst : r->instances) {
    if (m.mig_profiles[inst.profile].name == "4g.40gb") CHECK(inst.start == 0);
    if (m.mig_profiles[inst.profile].name == "3g.40gb") CHECK(inst.start == 4);
  }
}

TEST_CASE("the full layouts are exactly the fact sheet's seventeen") {
  const GpuModelInfo m = model("A100-80GB");
  std::set<std::string> got;
  std::size_t maximal = 0;
  for (const auto& l : maximal_layouts(m, false)) {
    ++maximal;
    if (compute_slices(m, l) == 7) got.insert(describe(m, l));
  }
  // hardware-facts 1.1, in our naming (1gD = 1g.20gb on A100-80GB).
  const std::set<std::string> want = {"7g.80gb",
                                      "4g.40gb + 3g.40gb",
                                      "4g.40gb + 2g.20gb + 1g.10gb",
                                      "4g.40gb + 2g.20gb + 1g.20gb",
                                      "4g.40gb + 3x 1g.10gb",
                                      "4g.40gb + 1g.20gb + 2x 1g.10gb",
                                      "3g.40gb + 2x 2g.20gb",
                                      "3g.40gb + 2g.20gb + 2x 1g.10gb",
                                      "3g.40gb + 4x 1g.10gb",
                                      "3x 2g.20gb + 1g.10gb",
                                      "3x 2g.20gb + 1g.20gb",
                                      "2x 2g.20gb + 3x 1g.10gb",
                                      "2x 2g.20gb + 1g.20gb + 2x 1g.10gb",
                                      "2g.20gb + 5x 1g.10gb",
                                      "2g.20gb + 1g.20gb + 4x 1g.10gb",
                                      "7x 1g.10gb",
                                      "1g.20gb + 6x 1g.10gb"};
  CHECK(got == want);
  // Maximal multisets in all (no further instance fits in any placement): 28 by an exhaustive
  // search here and by an independent brute force over slot assignments. (The fact sheet's
  // count of 38 does not survive either check; docs/sharing.md records the difference.)
  CHECK(maximal == 28);
}

TEST_CASE("place_into keeps busy instances where they are and fills the free slots") {
  const GpuModelInfo m = model("A100-80GB");
  auto base = place_profiles(m, profiles(m, {"3g.40gb"}));
  REQUIRE(base.ok());  // 3g at 0 (first free start)
  auto more = place_into(m, *base, profiles(m, {"3g.40gb"}));
  REQUIRE(more.ok());
  CHECK(more->instances.size() == 2);
  CHECK(more->instances[0] == base->instances[0]);
  CHECK(more->instances[1].start == 4);
  CHECK_FALSE(place_into(m, *more, profiles(m, {"1g.10gb"})).ok());
}
