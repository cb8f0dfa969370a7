// `capsim check`: thresholds decide regressions by direction and by absolute and relative
// limits over seed means (unit cases with synthetic runs), and end to end the gate passes a run
// against itself and fails spreading against packing on the fragmentation workload, naming the
// failing metric in JUnit. Bad thresholds files are rejected with file:line.
#include "reports/check.hpp"

#include <doctest/doctest.h>

#include <regex>
#include <string>
#include <vector>

#include "fixtures/cli_run.hpp"

using namespace capsim;
using namespace capsim::testing;

namespace {

LoadedRun make_run(const std::string& profile, std::uint64_t seed, const Summary& summary) {
  LoadedRun r;
  r.file = profile + ".db";
  r.row.run_id = static_cast<std::int64_t>(seed);
  r.row.scenario = "s";
  r.row.scenario_sha256 = "abc";
  r.row.profile = profile;
  r.row.seed = seed;
  r.row.status = "complete";
  r.summary = summary;
  return r;
}

const CheckResult& result(const CheckReport& r, const std::string& metric) {
  for (const CheckResult& c : r.pairs.at(0).results) {
    if (c.metric == metric) return c;
  }
  FAIL("no result for " << metric);
  throw 0;
}

}  // namespace

TEST_CASE("a regression is a worsening beyond every limit the threshold gives") {
  struct Case {
    const char* name;
    const char* threshold;  // YAML flow mapping
    double base, cand;
    Verdict want;
  };
  const Case cases[] = {
      // lower is better, absolute 60 and relative 10 %: allowed = max(60, 0.1 x 1000) = 100
      {"within both", "{direction: lower, absolute: 60, relative: 0.1}", 1000, 1090,
       Verdict::kPass},
      {"beyond the relative limit only", "{direction: lower, absolute: 60, relative: 0.1}", 1000,
       1099.9, Verdict::kPass},
      {"beyond both", "{direction: lower, absolute: 60, relative: 0.1}", 1000, 1101,
       Verdict::kRegression},
      // from a zero baseline the relative limit allows nothing, the absolute one 60
      {"zero baseline within absolute", "{direction: lower, absolute: 60, relative: 0.1}", 0, 60,
       Verdict::kPass},
      {"zero baseline beyond", "{direction: lower, absolute: 60, relative: 0.1}", 0, 61,
       Verdict::kRegression},
      {"improvement", "{direction: lower, absolute: 0}", 100, 10, Verdict::kPass},
      {"higher is better, drop of 0.03 > 0.02", "{direction: higher, absolute: 0.02}", 0.80, 0.77,
       Verdict::kRegression},
      {"higher is better, rise", "{direction: higher, absolute: 0.02}", 0.80, 0.95, Verdict::kPass},
      {"both: any change beyond 5", "{direction: both, absolute: 5}", 100, 94,
       Verdict::kRegression},
      {"no limits: any worsening", "{direction: lower}", 100, 100.5, Verdict::kRegression},
      {"no limits: equal passes", "{direction: lower}", 100, 100, Verdict::kPass},
  };
  for (const Case& c : cases) {
    const std::string case_name = c.name;
    CAPTURE(case_name);
    const Thresholds th = Thresholds::parse(
        std::string("builtin_defaults: false\nmetrics:\n  m: ") + c.threshold + "\n", "t.yaml");
    const CheckReport r = run_check({make_run("base", 1, {{"m", c.base}})},
                                    {make_run("cand", 1, {{"m", c.cand}})}, th, "b", "c");
    CHECK(result(r, "m").verdict == c.want);
  }
}

TEST_CASE("several seeds are compared by their means") {
  const Thresholds th = Thresholds::parse(
      "builtin_defaults: false\nmetrics:\n  w: {direction: lower, absolute: 10}\n", "t.yaml");
  // Baseline mean (100 + 110 + 120) / 3 = 110; candidate (105 + 125 + 130) / 3 = 120: +10 passes.
  std::vector<LoadedRun> base = {make_run("b", 1, {{"w", 100}}), make_run("b", 2, {{"w", 110}}),
                                 make_run("b", 3, {{"w", 120}})};
  std::vector<LoadedRun> cand = {make_run("c", 1, {{"w", 105}}), make_run("c", 2, {{"w", 125}}),
                                 make_run("c", 3, {{"w", 130}})};
  CheckReport r = run_check(base, cand, th, "b", "c");
  CHECK(result(r, "w").verdict == Verdict::kPass);
  CHECK(result(r, "w").baseline.mean == doctest::Approx(110));
  CHECK(result(r, "w").candidate.n == 3);
  // One more bad seed: (105 + 125 + 130 + 142) / 4 = 125.5, +15.5 > 10.
  cand.push_back(make_run("c", 4, {{"w", 142}}));
  r = run_check(base, cand, th, "b", "c");
  CHECK(result(r, "w").verdict == Verdict::kRegression);
  // With `significant: true` the same +15.5 is within Welch's interval (the seeds scatter),
  // so it passes.
  const Thresholds sig = Thresholds::parse(
      "builtin_defaults: false\nmetrics:\n  w: {direction: lower, absolute: 10, significant: "
      "true}\n",
      "t.yaml");
  r = run_check(base, cand, sig, "b", "c");
  CHECK(result(r, "w").verdict == Verdict::kPass);
  CHECK(result(r, "w").message.find("not significant") != std::string::npos);
}

TEST_CASE("thresholds: exact names beat patterns, files override the built-ins") {
  const Thresholds th = Thresholds::parse(
      "metrics:\n  \"queue.*.wait_seconds_p95\": {absolute: 5}\n"
      "  queue.vip.wait_seconds_p95: {absolute: 0}\n  wait_seconds_p95: {relative: 0.5}\n"
      "  energy_kwh: {skip: true}\n",
      "t.yaml");
  REQUIRE(th.find("queue.vip.wait_seconds_p95") != nullptr);
  CHECK(*th.find("queue.vip.wait_seconds_p95")->absolute == 0);
  CHECK(*th.find("queue.a.b.wait_seconds_p95")->absolute == 5);
  // The direction comes from capsim's table when the file does not say.
  CHECK(th.find("queue.a.wait_seconds_p95")->direction == Direction::kLowerIsBetter);
  CHECK(*th.find("wait_seconds_p95")->relative == 0.5);
  CHECK_FALSE(th.find("wait_seconds_p95")->absolute.has_value());
  CHECK(th.find("energy_kwh")->skip);
  // Built-ins the file does not mention stay.
  CHECK(th.find("gpu_allocation_ratio_mean")->direction == Direction::kHigherIsBetter);
  CHECK(th.find("events_processed") == nullptr);
  const Thresholds only = Thresholds::parse("builtin_defaults: false\nmetrics: {}\n", "t.yaml");
  CHECK(only.find("gpu_allocation_ratio_mean") == nullptr);
}

TEST_CASE("the built-in thresholds, now made from the metric catalog, print as they always did") {
  // `capsim check --print-thresholds` before the catalog existed, byte for byte.
  const std::string before = R"(# capsim check: built-in thresholds.
# A metric regresses when the candidate's mean is worse than the baseline's mean by more than
# every limit given: `absolute` (in the metric's unit) and `relative` (a fraction of the baseline).
# With neither limit, any worsening counts.
builtin_defaults: false
metrics:
  pods_completed:               {direction: higher, absolute: 0}
  pods_failed:                  {direction: lower, absolute: 0}
  pods_oom_killed:              {direction: lower, absolute: 0}
  pods_preempted:               {direction: lower, absolute: 0}
  pods_unschedulable:           {direction: lower, absolute: 0}
  pods_pending_at_end:          {direction: lower, absolute: 0}
  gpu_allocation_ratio_mean:    {direction: higher, absolute: 0.01}
  gpu_utilization_ratio_mean:   {direction: higher, absolute: 0.01}
  fragmentation_ratio_mean:     {direction: lower, absolute: 0.02}
  wait_seconds_mean:            {direction: lower, absolute: 1, relative: 0.05}
  wait_seconds_p50:             {direction: lower, absolute: 1, relative: 0.05}
  wait_seconds_p95:             {direction: lower, absolute: 1, relative: 0.05}
  wait_seconds_p99:             {direction: lower, absolute: 1, relative: 0.05}
  jct_seconds_mean:             {direction: lower, absolute: 1, relative: 0.05}
  slowdown_mean:                {direction: lower, absolute: 0.01, relative: 0.05}
  makespan_seconds:             {direction: lower, absolute: 1, relative: 0.02}
  gpu_hours_lost_to_preemption: {direction: lower, absolute: 0.1, relative: 0.05}
  cost_total_usd:               {direction: lower, relative: 0.02}
  cost_per_busy_gpu_hour_usd:   {direction: lower, relative: 0.02}
  energy_kwh:                   {direction: lower, relative: 0.02}
  "queue.*.wait_seconds_p95":   {direction: lower, absolute: 60, relative: 0.10}
)";
  CHECK(builtin_thresholds_yaml() == before);
}

TEST_CASE(
    "a threshold without a direction takes the catalog's, or the one its glob's metrics share") {
  struct Case {
    const char* name;
    const char* pattern;
    Direction want;  // kNeutral: rejected, the file must say
  };
  const Case cases[] = {
      {"an exact metric", "jct_seconds_mean", Direction::kLowerIsBetter},
      {"a family instance", "queue.vip.wait_seconds_p95", Direction::kLowerIsBetter},
      {"a glob that reads as a family", "queue.*.wait_seconds_p95", Direction::kLowerIsBetter},
      {"a glob over the wait percentiles", "wait_seconds_*", Direction::kLowerIsBetter},
      {"a glob over the queues' waits", "queue.*.wait_seconds_*", Direction::kLowerIsBetter},
      // cost_allocated_usd and cost_unqueued_usd are neutral; the others all say lower.
      {"a glob over the costs", "cost_*", Direction::kLowerIsBetter},
      {"a glob whose metrics disagree", "pods_*", Direction::kNeutral},
      {"a neutral metric", "pods_total", Direction::kNeutral},
      {"a name capsim does not know", "gpu_hours_stranded", Direction::kNeutral},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const std::string yaml =
        std::string("builtin_defaults: false\nmetrics:\n  \"") + c.pattern + "\": {absolute: 1}\n";
    if (c.want == Direction::kNeutral) {
      CHECK_THROWS_AS(Thresholds::parse(yaml, "t.yaml"), InputError);
    } else {
      const Thresholds th = Thresholds::parse(yaml, "t.yaml");
      REQUIRE(th.entries().size() == 1);
      CHECK(th.entries()[0].direction == c.want);
    }
  }
}

TEST_CASE("metrics missing on one side are failures or skips, never silent passes") {
  const Thresholds th = Thresholds::parse(
      "builtin_defaults: false\nmetrics:\n  a: {direction: lower}\n  b: {direction: lower}\n"
      "  c: {direction: lower}\n",
      "t.yaml");
  const CheckReport r = run_check({make_run("b", 1, {{"a", 1}, {"b", 1}})},
                                  {make_run("c", 1, {{"a", 1}, {"c", 1}})}, th, "b", "c");
  CHECK(result(r, "a").verdict == Verdict::kPass);
  CHECK(result(r, "b").verdict == Verdict::kRegression);  // the candidate lost it
  CHECK(result(r, "c").verdict == Verdict::kSkipped);     // new in the candidate
}

TEST_CASE("bad thresholds files name the file, line and field") {
  struct Case {
    const char* name;
    const char* text;
    const char* want;
  };
  const Case cases[] = {
      {"bad direction", "metrics:\n  wait_seconds_p95: {direction: down}\n",
       "t.yaml:2:33: metrics.wait_seconds_p95.direction: direction must be lower, higher or both"},
      {"negative limit", "metrics:\n  wait_seconds_p95:\n    absolute: -1\n",
       "t.yaml:3:15: metrics.wait_seconds_p95.absolute"},
      {"unknown field", "metrics:\n  wait_seconds_p95: {relativ: 0.1}\n",
       "did you mean 'relative'"},
      {"no direction known", "metrics:\n  pods_total: {absolute: 1}\n",
       "t.yaml:2:15: metrics.pods_total: capsim has no default direction"},
      {"not a mapping", "- a\n- b\n", "t.yaml:1:1"},
      {"broken YAML", "metrics: {a: [\n", "t.yaml:2:"},
  };
  for (const Case& c : cases) {
    const std::string case_name = c.name;
    CAPTURE(case_name);
    try {
      (void)Thresholds::parse(c.text, "t.yaml");
      FAIL("parsed");
    } catch (const InputError& e) {
      const std::string what = e.what();
      CAPTURE(what);
      CHECK(std::string(e.what()).find(c.want) != std::string::npos);
      CHECK(e.kind() == InputErrorKind::kInvalid);
    }
  }
}

TEST_SUITE("scenario") {
  TEST_CASE("check passes a run against itself and fails spreading against packing") {
    ScratchDir dir("check-e2e");
    const std::string scenario = source_path("scenarios/tests/fragmentation.yaml");
    for (const char* profile : {"gpu-binpack", "gpu-spread"}) {
      const CommandResult r = run_capsim("run '" + scenario + "' --profile " + profile + " -o '" +
                                             dir.file(profile) + ".db' --quiet",
                                         dir);
      REQUIRE(r.exit_code == 0);
    }
    const std::string pack = dir.file("gpu-binpack.db"), spread = dir.file("gpu-spread.db");

    // Against itself: exit 0, every JUnit test case passes.
    CommandResult same = run_capsim("check --baseline '" + pack + "' --candidate '" + pack +
                                        "' --junit '" + dir.file("same.xml") + "'",
                                    dir);
    CHECK(same.exit_code == 0);
    const std::string same_xml = slurp(dir.file("same.xml"));
    CHECK(same_xml.find("failures=\"0\"") != std::string::npos);
    CHECK(same_xml.find("<failure") == std::string::npos);
    CHECK(same_xml.find("name=\"wait_seconds_p95\"") != std::string::npos);
    CHECK(same.out.find("0 regressions") != std::string::npos);

    // Spreading instead of packing: the 8-GPU pods wait 10 hours. Exit 1, and JUnit names the
    // failing metrics as failed test cases.
    CommandResult worse =
        run_capsim("check --baseline '" + pack + "' --candidate '" + spread + "' --junit '" +
                       dir.file("worse.xml") + "' --markdown '" + dir.file("worse.md") + "'",
                   dir);
    CHECK(worse.exit_code == 1);
    CHECK(worse.err.find("regression") != std::string::npos);
    const std::string xml = slurp(dir.file("worse.xml"));
    for (const char* metric :
         {"wait_seconds_p95", "fragmentation_ratio_mean", "queue.training.wait_seconds_p95"}) {
      CAPTURE(metric);
      const std::regex failed(std::string("<testcase classname=\"capsim.check.fragmentation\" "
                                          "name=\"") +
                              std::regex_replace(metric, std::regex(R"(\.)"), R"(\.)") +
                              "\" time=\"0\">\\s*<failure type=\"regression\"");
      CHECK(std::regex_search(xml, failed));
    }
    // A metric that did not change passes in the same file.
    CHECK(std::regex_search(xml, std::regex("name=\"pods_completed\" time=\"0\"><system-out>")));
    CHECK(std::regex_search(xml, std::regex(R"re(failures="([1-9][0-9]*)")re")));
    const std::string md = slurp(dir.file("worse.md"));
    CHECK(md.find("FAILED") != std::string::npos);
    CHECK(md.find("`wait_seconds_p95`") != std::string::npos);

    // Bad input: missing files 66, bad thresholds 65 with file:line, unwritable JUnit 74.
    CHECK(
        run_capsim("check --baseline '" + dir.file("nope.db") + "' --candidate '" + pack + "'", dir)
            .exit_code == 66);
    write_file(dir.path / "t.yaml", "metrics:\n  wait_seconds_p95: {direction: sideways}\n");
    CommandResult bad = run_capsim("check --baseline '" + pack + "' --candidate '" + pack +
                                       "' --thresholds '" + dir.file("t.yaml") + "'",
                                   dir);
    CHECK(bad.exit_code == 65);
    CHECK(bad.err.find("t.yaml:2:") != std::string::npos);
    CHECK(run_capsim("check --baseline '" + pack + "' --candidate '" + pack + "' --thresholds '" +
                         dir.file("none.yaml") + "'",
                     dir)
              .exit_code == 66);
    CHECK(run_capsim("check --baseline '" + pack + "' --candidate '" + pack + "' --junit '" +
                         dir.file("no/dir/j.xml") + "'",
                     dir)
              .exit_code == 74);
    CHECK(run_capsim("check --baseline '" + pack + "'", dir).exit_code == 2);
    CHECK(run_capsim("check --help", dir).exit_code == 0);
    CommandResult printed = run_capsim("check --print-thresholds", dir);
    CHECK(printed.exit_code == 0);
    CHECK(printed.out.find("wait_seconds_p95") != std::string::npos);
  }

  TEST_CASE("the regression suite's gate passes the same policy and fails a spreading one") {
    ScratchDir dir("check-suite");
    const std::string suite = source_path("scenarios/regression");
    const std::string capsim = std::string("--capsim '") + CAPSIM_BINARY + "'";
    auto sh = [&](const std::string& cmd) {
      const int status = std::system(
          (cmd + " > '" + dir.file("sh.out") + "' 2> '" + dir.file("sh.err") + "'").c_str());
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    };
    REQUIRE(sh("'" + suite + "/run-suite.sh' " + capsim + " --seeds '1 2' --profile gpu-binpack '" +
               dir.file("base") + "'") == 0);
    REQUIRE(sh("'" + suite + "/run-suite.sh' " + capsim + " --seeds '1 2' --profile gpu-spread '" +
               dir.file("cand") + "'") == 0);
    CHECK(sh("'" + suite + "/gate.sh' " + capsim + " '" + dir.file("base") + "' '" +
             dir.file("base") + "' '" + dir.file("same") + "'") == 0);
    CHECK(sh("'" + suite + "/gate.sh' " + capsim + " '" + dir.file("base") + "' '" +
             dir.file("cand") + "' '" + dir.file("worse") + "'") == 1);
    const std::string xml = slurp(dir.path / "worse" / "fragmentation.junit.xml");
    CHECK(xml.find("name=\"wait_seconds_p95\" time=\"0\">\n      <failure") != std::string::npos);
    CHECK(slurp(dir.path / "worse" / "summary.md").find("FAILED") != std::string::npos);
  }
}
