// `capsim compare`: runs are grouped into variants by scenario and profile, and two variants x
// five seeds print means with Student-t 95 % intervals that the test recomputes from the runs'
// summary tables.
#include "reports/compare.hpp"

#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "fixtures/cli_run.hpp"
#include "reports/run_reader.hpp"
#include "reports/text/number.hpp"

using namespace capsim;
using namespace capsim::testing;

namespace {

LoadedRun run_of(const std::string& sha, const std::string& profile, std::uint64_t seed,
                 double wait) {
  LoadedRun r;
  r.file = "f.db";
  r.row.scenario = "s";
  r.row.scenario_sha256 = sha;
  r.row.profile = profile;
  r.row.seed = seed;
  r.summary = {{"wait_seconds_p95", wait}, {"gpu_allocation_ratio_mean", 0.5}};
  return r;
}

}  // namespace

TEST_CASE("runs group into variants by scenario hash, profile and overrides") {
  const std::vector<LoadedRun> runs = {run_of("aaa", "p", 1, 10), run_of("aaa", "q", 1, 20),
                                       run_of("aaa", "p", 2, 30), run_of("bbb", "p", 1, 40)};
  const std::vector<Variant> v = group_variants(runs);
  REQUIRE(v.size() == 3);
  CHECK(v[0].runs.size() == 2);
  CHECK(v[0].label == "s / p [aaa]");  // two variants are "s / p": the hash tells them apart
  CHECK(v[1].label == "s / q");
  CHECK(v[2].label == "s / p [bbb]");
  CHECK(seed_list({1, 2, 3, 4, 5}) == "1-5");
  CHECK(seed_list({7, 1, 3, 2}) == "1-3, 7");
  CHECK(seed_list({4, 5}) == "4, 5");
}

TEST_CASE("the better value follows the metric's direction") {
  const Comparison c =
      compare_variants(group_variants({run_of("a", "p", 1, 10), run_of("a", "q", 1, 20)}));
  for (const CompareRow& r : c.rows) {
    if (r.metric == "wait_seconds_p95") CHECK(r.best == 0);            // lower is better
    if (r.metric == "gpu_allocation_ratio_mean") CHECK(r.best == -1);  // equal: none
  }
  CHECK(glob_match("queue.*.wait_seconds_p95", "queue.a.b.wait_seconds_p95"));
  CHECK_FALSE(glob_match("queue.*.wait_seconds_p95", "queue.a.wait_seconds_p50"));
  CHECK(glob_match("*", ""));
}

TEST_SUITE("scenario") {
  TEST_CASE("compare over two variants x five seeds prints means with confidence intervals") {
    ScratchDir dir("compare");
    const std::string scenario = source_path("scenarios/regression/mixed.yaml");
    const std::string db = dir.file("runs.db");
    for (const char* profile : {"default-scheduler", "gpu-binpack"}) {
      for (int seed = 1; seed <= 5; ++seed) {
        const CommandResult r =
            run_capsim("run '" + scenario + "' -o '" + db + "' --append --quiet --profile " +
                           profile + " --seed " + std::to_string(seed),
                       dir);
        REQUIRE(r.exit_code == 0);
      }
    }
    // The table: two variants of five seeds, and "mean ± half-width" cells.
    const CommandResult text = run_capsim("compare '" + db + "'", dir);
    REQUIRE(text.exit_code == 0);
    CHECK(text.out.find("A  mixed / default-scheduler  (5 runs, seeds 1-5)") != std::string::npos);
    CHECK(text.out.find("B  mixed / gpu-binpack  (5 runs, seeds 1-5)") != std::string::npos);

    // Recompute every metric's mean and 95 % interval from the summary tables.
    RunReader reader(db);
    std::map<std::string, std::vector<std::vector<double>>> values;  // metric -> variant -> runs
    for (const RunRow& run : reader.runs()) {
      const int variant = run.profile == "default-scheduler" ? 0 : 1;
      for (const auto& [k, v] : reader.summary(run.run_id)) {
        auto& per = values[k];
        per.resize(2);
        per[static_cast<std::size_t>(variant)].push_back(v);
      }
    }
    const double t4 = 2.7764451;  // t(0.975, 4): five seeds
    const YAML::Node json = YAML::Load(run_capsim("compare '" + db + "' --json", dir).out);
    REQUIRE(json["variants"].size() == 2);
    CHECK(json["variants"][0]["runs"].size() == 5);
    int checked = 0, with_spread = 0;
    for (const YAML::Node& m : json["metrics"]) {
      const std::string name = m["metric"].as<std::string>();
      CAPTURE(name);
      REQUIRE(values.count(name));
      for (std::size_t v = 0; v < 2; ++v) {
        const std::vector<double>& xs = values[name][v];
        REQUIRE(xs.size() == 5);
        double mean = 0;
        for (double x : xs)
          mean += x / 5;
        double ss = 0;
        for (double x : xs)
          ss += (x - mean) * (x - mean);
        const double half = t4 * std::sqrt(ss / 4) / std::sqrt(5.0);
        const YAML::Node cell = m["values"][v];
        CHECK(cell["n"].as<int>() == 5);
        CHECK(cell["mean"].as<double>() == doctest::Approx(mean).epsilon(1e-9));
        CHECK(cell["ci95_low"].as<double>() == doctest::Approx(mean - half).epsilon(1e-6));
        CHECK(cell["ci95_high"].as<double>() == doctest::Approx(mean + half).epsilon(1e-6));
        if (half > 0) {
          ++with_spread;
          // The text table shows the same interval.
          CHECK(text.out.find(figure(mean) + " ± " + figure(half)) != std::string::npos);
        }
      }
      ++checked;
    }
    CHECK(checked == static_cast<int>(values.size()));
    CHECK(with_spread > 20);  // the seeds really differ

    // Markdown: the better value in bold.
    const CommandResult md = run_capsim("compare '" + db + "' --markdown -", dir);
    REQUIRE(md.exit_code == 0);
    CHECK(md.out.find("| `wait_seconds_p95` | lower |") != std::string::npos);
    CHECK(md.out.find("**") != std::string::npos);

    // --metric filters; errors have their exit codes.
    const CommandResult one = run_capsim("compare '" + db + "' --metric 'queue.*.cost_usd'", dir);
    CHECK(one.exit_code == 0);
    CHECK(one.out.find("queue.training.cost_usd") != std::string::npos);
    CHECK(one.out.find("wait_seconds_p95") == std::string::npos);
    CHECK(run_capsim("compare '" + dir.file("missing.db") + "'", dir).exit_code == 66);
    CHECK(run_capsim("compare", dir).exit_code == 2);
    CHECK(run_capsim("compare '" + db + "' --markdown '" + dir.file("no/dir/x.md") + "'", dir)
              .exit_code == 74);
    CHECK(run_capsim("compare --help", dir).exit_code == 0);
  }
}
