#include "sim/quick_index.hpp"

#include <doctest/doctest.h>

#include <vector>

using namespace capsim;

namespace {
std::vector<std::uint32_t> set_bits(const std::vector<std::uint64_t>& mask, std::size_t n) {
  std::vector<std::uint32_t> out;
  for (std::size_t at = QuickIndex::next(mask, 0, n); at < n;
       at = QuickIndex::next(mask, at + 1, n))
    out.push_back(static_cast<std::uint32_t>(at));
  return out;
}
}  // namespace

TEST_CASE("the quick index names the nodes at a level and of a model, as they change") {
  QuickIndex idx;
  idx.resize(130);  // three words
  for (std::uint32_t id = 0; id < 130; ++id)
    idx.update(id, 0, 0, kNoGpuModel);
  idx.update(3, 8, 8, 1);      // level 8, model 1
  idx.update(64, 2, 5, 0);     // level min(2, 5) = 2, model 0
  idx.update(129, 20, 20, 1);  // capped at kLevels
  std::vector<std::uint64_t> mask;
  CHECK_FALSE(idx.candidates(0, nullptr, mask));  // nothing to narrow by
  REQUIRE(idx.candidates(1, nullptr, mask));
  CHECK(set_bits(mask, 130) == std::vector<std::uint32_t>{3, 64, 129});
  REQUIRE(idx.candidates(3, nullptr, mask));
  CHECK(set_bits(mask, 130) == std::vector<std::uint32_t>{3, 129});
  REQUIRE(idx.candidates(40, nullptr, mask));  // past the levels: those at the top level
  CHECK(set_bits(mask, 130) == std::vector<std::uint32_t>{129});
  const std::vector<GpuModelId> model0{0}, model1{1}, both{1, 0}, absent{7};
  REQUIRE(idx.candidates(0, &model0, mask));
  CHECK(set_bits(mask, 130) == std::vector<std::uint32_t>{64});
  REQUIRE(idx.candidates(4, &both, mask));
  CHECK(set_bits(mask, 130) == std::vector<std::uint32_t>{3, 129});
  REQUIRE(idx.candidates(1, &absent, mask));
  CHECK(set_bits(mask, 130).empty());

  // Levels go down and up; a node changes model (a reconfigured or replaced node).
  idx.update(3, 1, 8, 1);
  idx.update(129, 4, 4, 0);
  REQUIRE(idx.candidates(2, &model1, mask));
  CHECK(set_bits(mask, 130).empty());
  REQUIRE(idx.candidates(2, &model0, mask));
  CHECK(set_bits(mask, 130) == std::vector<std::uint32_t>{64, 129});
  CHECK(idx.agrees(3, 1, 8, 1));
  CHECK(idx.agrees(129, 4, 4, 0));
  CHECK_FALSE(idx.agrees(129, 5, 5, 0));
  CHECK_FALSE(idx.agrees(129, 4, 4, 1));
}

TEST_CASE("QuickIndex::next finds the first set bit in a range, across words") {
  const std::vector<std::uint64_t> mask{std::uint64_t{1} << 63, 0, 0b101};
  CHECK(QuickIndex::next(mask, 0, 192) == 63);
  CHECK(QuickIndex::next(mask, 63, 192) == 63);
  CHECK(QuickIndex::next(mask, 64, 192) == 128);
  CHECK(QuickIndex::next(mask, 129, 192) == 130);
  CHECK(QuickIndex::next(mask, 131, 192) == 192);
  CHECK(QuickIndex::next(mask, 0, 50) == 50);  // none before the end of the range
  CHECK(QuickIndex::next(mask, 64, 129) == 128);
  CHECK(QuickIndex::next(mask, 64, 128) == 128);  // the end itself is not looked at
}
