// Sweep files: expansion of axes into variants, errors located in the sweep file, shard
// arithmetic from the command line and from Kubernetes/Slurm environments.
#include "tools/capsim/sweep.hpp"

#include <doctest/doctest.h>

#include <map>

#include "fixtures/cli_run.hpp"
#include "tools/capsim/cli.hpp"

using namespace capsim;
using capsim::testing::ScratchDir;
using capsim::testing::write_file;

namespace {

const std::string kSmall = std::string(CAPSIM_SOURCE_DIR) + "/scenarios/tests/small.yaml";

std::string sweep_text(const std::string& body) {
  return "name: t\nscenario: " + kSmall + "\n" + body;
}

std::string error_of(const std::string& path) {
  try {
    (void)load_sweep(path, std::nullopt);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a sweep's axes expand to their cartesian product, the first axis slowest") {
  ScratchDir dir("sweep-spec");
  write_file(dir.file("s.yaml"), sweep_text(R"(
axes:
  - {name: a100, key: cluster.pools.a100.count, values: [1, 2, 3]}
  - name: policy
    choices:
      spread: {}
      pack: {profile: gpu-binpack}
seeds: [1, 2]
)"));
  const SweepSpec s = load_sweep(dir.file("s.yaml"), std::nullopt);
  REQUIRE(s.variants.size() == 12);  // 3 counts x 2 policies x 2 seeds
  CHECK(s.axis_names == std::vector<std::string>{"a100", "policy", "seed"});
  CHECK(s.variants[0].describe() == "a100=1, policy=spread, seed=1");
  CHECK(s.variants[1].describe() == "a100=1, policy=spread, seed=2");
  CHECK(s.variants[3].describe() == "a100=1, policy=pack, seed=2");
  CHECK(s.variants[3].profile == "gpu-binpack");
  CHECK(s.variants[11].describe() == "a100=3, policy=pack, seed=2");
  REQUIRE(s.variants[11].sets.size() == 1);
  CHECK(s.variants[11].sets[0].text == "cluster.pools.a100.count=3");
  CHECK(s.variants[11].seed == 2u);
  CHECK(s.variants[11].index == 11);
  CHECK(s.sweep_id.size() == 64);
}

TEST_CASE("listed variants run as given, and the sweep id follows the definition") {
  ScratchDir dir("sweep-list");
  write_file(dir.file("a.yaml"), sweep_text(R"(
variants:
  - {cluster.pools.a100.count: 2}
  - {cluster.pools.a100.count: 4, simulation.sample_interval: 5m}
)"));
  write_file(dir.file("b.yaml"), sweep_text(R"(
variants:
  - {cluster.pools.a100.count: 2}
  - {cluster.pools.a100.count: 5, simulation.sample_interval: 5m}
)"));
  const SweepSpec a = load_sweep(dir.file("a.yaml"), std::nullopt);
  const SweepSpec b = load_sweep(dir.file("b.yaml"), std::nullopt);
  REQUIRE(a.variants.size() == 2);
  CHECK(a.variants[1].describe() == "cluster.pools.a100.count=4, simulation.sample_interval=5m");
  CHECK(a.variants[1].sets.size() == 2);
  CHECK(a.sweep_id != b.sweep_id);
  CHECK(a.sweep_id == load_sweep(dir.file("a.yaml"), std::nullopt).sweep_id);
}

TEST_CASE("bad sweep files are reported at the file, line and field") {
  ScratchDir dir("sweep-bad");
  struct Case {
    std::string name;
    std::string body;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"unknown field",
       "axis:\n  - {key: seed, values: [1]}\n",
       {"s.yaml:3:1", "unknown field 'axis'", "axes"}},
      {"key that does not resolve",
       "axes:\n  - {key: cluster.pools.h100.count, values: [1, 2]}\n",
       {"s.yaml:4:", "axes[0].values[0]", "cluster.pools.h100.count=1"}},
      {"value the scenario rejects",
       "axes:\n  - {key: cluster.pools.a100.count, values: [2, lots]}\n",
       {"s.yaml:4:", "axes[0].values[1]", "cluster.pools.a100.count=lots"}},
      {"axis without values", "axes:\n  - {key: seed}\n", {"s.yaml:4:", "needs `values: [...]`"}},
      {"nothing to sweep", "", {"needs `axes:`, `variants:` or `seeds:`"}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    write_file(dir.file("s.yaml"), sweep_text(c.body));
    const std::string err = error_of(dir.file("s.yaml"));
    for (const std::string& w : c.want) {
      CAPTURE(err);
      CHECK(err.find(w) != std::string::npos);
    }
  }
  // A missing scenario is a missing input (exit 66), named at the scenario field.
  write_file(dir.file("m.yaml"), "scenario: nowhere.yaml\nseeds: [1]\n");
  try {
    (void)load_sweep(dir.file("m.yaml"), std::nullopt);
    FAIL("expected an error");
  } catch (const InputError& e) {
    CHECK(e.kind() == InputErrorKind::kMissing);
    CHECK(std::string(e.what()).find("m.yaml:1:11: scenario") != std::string::npos);
  }
  // A scenario name the file system refuses (longer than NAME_MAX) is the same kind of error, not
  // a crash (found by the study fuzz target).
  write_file(dir.file("l.yaml"), "scenario: " + std::string(300, 'a') + ".yaml\nseeds: [1]\n");
  try {
    (void)load_sweep(dir.file("l.yaml"), std::nullopt);
    FAIL("expected an error");
  } catch (const InputError& e) {
    CHECK(e.kind() == InputErrorKind::kMissing);
    CHECK(std::string(e.what()).find("l.yaml:1:11: scenario") != std::string::npos);
    CHECK(std::string(e.what()).find("cannot be read: File name too long") != std::string::npos);
  }
}

// docs/cli.md#limits: the variants are counted from the axes before any is made, so a sweep too
// large to hold is refused without the memory it would take.
TEST_CASE("a sweep's variant count is checked against its limits before the variants are made") {
  ScratchDir dir("sweep-limits");
  auto values = [](int from, int to) {
    std::string v;
    for (int i = from; i <= to; ++i)
      v += (v.empty() ? "" : ", ") + std::to_string(i);
    return "[" + v + "]";
  };
  // 30 pool sizes x 1,000 seeds: 30,000 variants, above the soft limit of 10,000.
  write_file(dir.file("soft.yaml"),
             sweep_text("axes:\n  - {name: a100, key: cluster.pools.a100.count, values: " +
                        values(1, 30) + "}\nseeds: " + values(1, 1000) + "\n"));
  const std::string soft = error_of(dir.file("soft.yaml"));
  CAPTURE(soft);
  CHECK(soft.find("soft.yaml:4:3: axes") != std::string::npos);
  CHECK(soft.find("30000 variants, above the limit of 10000 variants") != std::string::npos);
  CHECK(soft.find("--force") != std::string::npos);
  // --force (or --list) raises the bound to the hard limit, and the sweep expands.
  const SweepSpec forced = load_sweep(dir.file("soft.yaml"), std::nullopt, kMaxSweepVariants);
  CHECK(forced.variants.size() == 30000);
  CHECK(forced.variants.back().describe() == "a100=30, seed=1000");

  // Seven axes of ten values: 10,000,000 variants, past the hard limit. The values are never
  // tried against the scenario (they would fail: the keys do not exist); the count comes first.
  std::string axes = "axes:\n";
  for (int a = 0; a < 7; ++a) {
    axes += "  - {name: k" + std::to_string(a) + ", key: no.such.key" + std::to_string(a) +
            ", values: " + values(1, 10) + "}\n";
  }
  write_file(dir.file("hard.yaml"), sweep_text(axes));
  try {
    (void)load_sweep(dir.file("hard.yaml"), std::nullopt, kMaxSweepVariants);
    FAIL("expected an error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("10000000 variants, above the hard limit of 1000000") !=
          std::string::npos);
    CHECK(std::string(e.what()).find("--force does not lift") != std::string::npos);
  }
  // Twenty axes of ten: a count past 2^64 saturates instead of wrapping round to a small one.
  axes = "axes:\n";
  for (int a = 0; a < 20; ++a) {
    axes += "  - {name: k" + std::to_string(a) + ", key: no.such.key" + std::to_string(a) +
            ", values: " + values(1, 10) + "}\n";
  }
  write_file(dir.file("huge.yaml"), sweep_text(axes));
  const std::string huge = error_of(dir.file("huge.yaml"));
  CAPTURE(huge);
  CHECK(huge.find("more than 18446744073709551615 variants") != std::string::npos);
}

TEST_CASE("shards come from --shard, a Kubernetes Indexed Job or a Slurm array") {
  const Shard s = parse_shard("2/4");
  CHECK(s.index == 2);
  CHECK(s.count == 4);
  CHECK(s.owns(2));
  CHECK(s.owns(6));
  CHECK_FALSE(s.owns(3));
  for (const char* bad : {"4/4", "-1/4", "1", "a/4", "1/0", "1/4x"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_shard(bad), cli::UsageError);
  }

  std::map<std::string, std::string> env;
  auto getenv = [&](const char* k) -> const char* {
    auto it = env.find(k);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  CHECK_FALSE(shard_from_environment(std::nullopt, getenv).has_value());
  env["JOB_COMPLETION_INDEX"] = "3";
  CHECK_THROWS_AS(shard_from_environment(std::nullopt, getenv), cli::UsageError);  // no count
  const auto k8s = shard_from_environment(8, getenv);
  REQUIRE(k8s);
  CHECK(k8s->index == 3);
  CHECK(k8s->count == 8);
  env.clear();
  // sbatch --array=1-4: ids 1..4, the shard is the id minus the array's minimum.
  env["SLURM_ARRAY_TASK_ID"] = "4";
  env["SLURM_ARRAY_TASK_MIN"] = "1";
  env["SLURM_ARRAY_TASK_COUNT"] = "4";
  const auto slurm = shard_from_environment(std::nullopt, getenv);
  REQUIRE(slurm);
  CHECK(slurm->index == 3);
  CHECK(slurm->count == 4);
  env["SLURM_ARRAY_TASK_ID"] = "x";
  CHECK_THROWS_AS(shard_from_environment(std::nullopt, getenv), cli::UsageError);
}
