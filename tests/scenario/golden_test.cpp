// The golden runs: each small scenario under scenarios/, run with seed 1, must report exactly
// what tests/scenario/golden/<name>.{events,summary,pods,samples} hold, byte for byte. A
// refactoring changes none of them; a commit that changes behaviour on purpose rewrites them in
// the same commit and names the change. To rewrite them:
//
//   tools/update-golden.sh        (runs this suite with CAPSIM_UPDATE_GOLDEN=1)
//
// On a mismatch the test names the first differing line, and writes what the run produced next
// to the test binary (golden-actual/<name>.<part>) so that `diff` shows the whole change.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fixtures/bundled_run.hpp"
#include "fixtures/golden_recorder.hpp"

using namespace capsim;
namespace fs = std::filesystem;

namespace {

struct GoldenCase {
  const char* name;      // file stem under tests/scenario/golden/
  const char* scenario;  // relative to the source tree
  const char* profile;   // empty: the scenario's own
};

// The scenarios small enough to run in a few seconds in all: the bundled examples, each
// mig-vs-timeslicing layout, the FGD slice under each of the six policies, a planning fleet and
// the regression suite.
constexpr GoldenCase kCases[] = {
    {"quickstart", "scenarios/quickstart.yaml", ""},
    {"mig-whole", "scenarios/mig-vs-timeslicing/whole.yaml", ""},
    {"mig-balanced", "scenarios/mig-vs-timeslicing/mig-balanced.yaml", ""},
    {"mig-1g", "scenarios/mig-vs-timeslicing/mig-1g.yaml", ""},
    {"mig-ts2", "scenarios/mig-vs-timeslicing/ts2.yaml", ""},
    {"mig-ts4", "scenarios/mig-vs-timeslicing/ts4.yaml", ""},
    {"mig-mps4", "scenarios/mig-vs-timeslicing/mps4.yaml", ""},
    {"team-quotas", "scenarios/team-quotas/team-quotas.yaml", ""},
    {"dra-heterogeneous", "scenarios/dra-heterogeneous/scenario.yaml", ""},
    {"fgd-slice-Random", "scenarios/tests/fgd-slice.yaml", "Random"},
    {"fgd-slice-DotProd", "scenarios/tests/fgd-slice.yaml", "DotProd"},
    {"fgd-slice-GpuClustering", "scenarios/tests/fgd-slice.yaml", "GpuClustering"},
    {"fgd-slice-GpuPacking", "scenarios/tests/fgd-slice.yaml", "GpuPacking"},
    {"fgd-slice-BestFit", "scenarios/tests/fgd-slice.yaml", "BestFit"},
    {"fgd-slice-FGD", "scenarios/tests/fgd-slice.yaml", "FGD"},
    {"planning-fleet", "scenarios/planning/fleet.yaml", ""},
    {"regression-mixed", "scenarios/regression/mixed.yaml", ""},
    {"regression-fragmentation", "scenarios/regression/fragmentation.yaml", ""},
    {"tests-small", "scenarios/tests/small.yaml", ""},
    {"tests-fragmentation-spread", "scenarios/tests/fragmentation.yaml", "gpu-spread"},
};

bool updating() {
  const char* u = std::getenv("CAPSIM_UPDATE_GOLDEN");
  return u != nullptr && std::string(u) == "1";
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << text;
  REQUIRE_MESSAGE(out.good(), "cannot write " << p.string());
}

// The first line where `got` and `want` differ, 1-based, with both lines; empty if equal.
std::string first_difference(const std::string& got, const std::string& want) {
  std::istringstream g(got), w(want);
  std::string gl, wl;
  for (int line = 1;; ++line) {
    const bool gm = static_cast<bool>(std::getline(g, gl));
    const bool wm = static_cast<bool>(std::getline(w, wl));
    if (!gm && !wm) return got == want ? "" : "line endings differ";
    if (gm != wm || gl != wl)
      return "line " + std::to_string(line) + ":\n  expected: " + (wm ? wl : "<end of file>") +
             "\n  actual:   " + (gm ? gl : "<end of file>");
  }
}

// CAPSIM_GOLDEN_DUMP=DIR also writes every run's parts to DIR/<name>.<part>, whether they match
// or not: tools/test-compilers.sh compares builds with it.
void dump_part(const GoldenCase& c, const char* part, const std::string& got) {
  const char* dir = std::getenv("CAPSIM_GOLDEN_DUMP");
  if (dir == nullptr || *dir == '\0') return;
  write_file(fs::path(dir) / (std::string(c.name) + "." + part), got);
}

void compare_part(const GoldenCase& c, const char* part, const std::string& got) {
  dump_part(c, part, got);
  const fs::path golden =
      fs::path(CAPSIM_SOURCE_DIR) / "tests/scenario/golden" / (std::string(c.name) + "." + part);
  if (updating()) {
    write_file(golden, got);
    return;
  }
  REQUIRE_MESSAGE(fs::exists(golden),
                  "missing " << golden.string() << " (tools/update-golden.sh writes it)");
  const std::string want = read_file(golden);
  if (got == want) return;
  const fs::path actual = fs::path("golden-actual") / (std::string(c.name) + "." + part);
  write_file(actual, got);
  FAIL_CHECK(c.name << "." << part << " differs from its golden file at "
                    << first_difference(got, want)
                    << "\n  (whole run: " << fs::absolute(actual).string() << ")");
}

}  // namespace

TEST_SUITE("scenario") {
  TEST_CASE("each golden run reports exactly what its golden files hold") {
    for (const GoldenCase& c : kCases) {
      CAPTURE(c.name);
      testing::GoldenRecorder rec;
      (void)testing::run_bundled(c.scenario, c.profile, rec);
      REQUIRE(!rec.events.empty());
      compare_part(c, "events", rec.events);
      compare_part(c, "summary", rec.summary);
      compare_part(c, "pods", rec.pods);
      compare_part(c, "samples", rec.samples);
    }
  }

  TEST_CASE("the golden comparison fails on a changed line and names it") {
    CHECK(first_difference("a\nb\nc\n", "a\nb\nc\n").empty());
    CHECK(first_difference("a\nB\nc\n", "a\nb\nc\n") == "line 2:\n  expected: b\n  actual:   B");
    CHECK(first_difference("a\n", "a\nb\n") == "line 2:\n  expected: b\n  actual:   <end of file>");
  }
}
