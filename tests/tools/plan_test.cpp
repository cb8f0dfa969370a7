// capsim plan: the staircase search over node counts finds the same cheapest feasible
// configuration as trying every point of the grid, with fewer runs; one node fewer breaks a
// constraint; bad plan files are reported at their line.
#include "tools/capsim/plan.hpp"

#include <doctest/doctest.h>

#include "fixtures/cli_run.hpp"

using namespace capsim;
using capsim::testing::ScratchDir;
using capsim::testing::write_file;

namespace {

const std::string kSmall = std::string(CAPSIM_SOURCE_DIR) + "/scenarios/tests/small.yaml";

std::string plan_yaml(const std::string& constraint) {
  return "name: p\nscenario: " + kSmall +
         "\nset: {simulation.horizon: 8h}\nseeds: [1, 2]\n"
         "objective: {minimize: cost_total_usd}\n"
         "constraints:\n  - " +
         constraint +
         "\n  - {metric: pods_unschedulable, max: 0}\n"
         "search:\n  pools:\n"
         "    - {name: b200, key: cluster.pools.b200.count, min: 1, max: 3}\n"
         "    - {name: a100, key: cluster.pools.a100.count, min: 1, max: 5}\n";
}

}  // namespace

TEST_SUITE("scenario") {
  TEST_CASE(
      "the plan's staircase search finds the grid's cheapest feasible point with fewer runs") {
    ScratchDir dir("plan");
    write_file(dir.file("p.yaml"), plan_yaml("{metric: \"queue.*.wait_seconds_p95\", max: 10m}"));
    const PlanSpec spec = load_plan(dir.file("p.yaml"), std::nullopt);
    Planner planner(spec, 2, std::nullopt);
    const PlanResult r = planner.run({});
    REQUIRE(r.best.has_value());

    // Every point of the 3 x 5 grid, judged the same way.
    std::optional<PlanConfig> grid_best;
    double grid_cost = 0;
    std::size_t grid_points = 0;
    for (std::int64_t b = 1; b <= 3; ++b) {
      for (std::int64_t a = 1; a <= 5; ++a) {
        PlanSpec fixed = spec;
        fixed.pools[0].min = fixed.pools[0].max = b;
        fixed.pools[1].min = fixed.pools[1].max = a;
        Planner p(fixed, 2, std::nullopt);
        const PlanResult pr = p.run({});
        ++grid_points;
        REQUIRE(pr.evaluations.size() == 1);
        const PlanEvaluation& e = pr.evaluations[0];
        if (e.feasible && (!grid_best || e.objective < grid_cost)) {
          grid_best = e.config;
          grid_cost = e.objective;
        }
      }
    }
    REQUIRE(grid_best.has_value());
    CHECK(planner.describe(*r.best) == planner.describe(*grid_best));
    CHECK(r.evaluations.size() < grid_points);
    // Not a corner of the space: the constraint binds.
    CHECK(r.best->counts != std::vector<std::int64_t>{3, 5});
    // One node fewer in any pool (where there is one to remove) breaks a constraint.
    REQUIRE_FALSE(r.neighbours.empty());
    for (std::size_t i : r.neighbours)
      CHECK_FALSE(r.evaluations[i].feasible);
    // The frontier starts at the cheapest configuration explored and ends feasible.
    REQUIRE_FALSE(r.frontier.empty());
    const std::string text = render_plan_text(spec, planner, r);
    CHECK(text.find("Answer: " + planner.describe(*r.best)) != std::string::npos);
    CHECK(text.find("breaks a constraint") != std::string::npos);
  }

  TEST_CASE("a constraint no configuration meets gives no answer, and says so") {
    ScratchDir dir("plan-none");
    write_file(dir.file("p.yaml"), plan_yaml("{metric: makespan_seconds, max: 1}"));
    const PlanSpec spec = load_plan(dir.file("p.yaml"), std::nullopt);
    Planner planner(spec, 2, std::nullopt);
    const PlanResult r = planner.run({});
    CHECK_FALSE(r.best.has_value());
    // Infeasible at the largest fleet: one run per b200 count, no bisection.
    CHECK(r.evaluations.size() <= 6);
    CHECK(render_plan_text(spec, planner, r).find("No configuration") != std::string::npos);
  }
}

TEST_CASE("bad plan files are reported at the file, line and field") {
  ScratchDir dir("plan-bad");
  struct Case {
    std::string name;
    std::string text;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"constraint without a limit",
       plan_yaml("{metric: oom_kills}"),
       {"p.yaml:7:5: constraints[0]: a constraint needs `max:` or `min:`"}},
      {"misspelt field",
       plan_yaml("{metric: oom_kills, maxx: 1}"),
       {"p.yaml:7:", "unknown field 'maxx'"}},
      {"pool key that does not resolve",
       "scenario: " + kSmall +
           "\nconstraints: [{metric: oom_kills, max: 0}]\nsearch:\n  pools:\n"
           "    - {key: cluster.pools.h100.count, min: 1, max: 2}\n",
       {"p.yaml:5:", "search.pools[0].key", "cluster.pools.h100.count=2"}},
      {"range upside down",
       "scenario: " + kSmall +
           "\nconstraints: [{metric: oom_kills, max: 0}]\nsearch:\n  pools:\n"
           "    - {key: cluster.pools.a100.count, min: 3, max: 2}\n",
       {"p.yaml:5:", "max 2 is below min 3"}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    write_file(dir.file("p.yaml"), c.text);
    std::string err;
    try {
      (void)load_plan(dir.file("p.yaml"), std::nullopt);
    } catch (const InputError& e) {
      err = e.what();
    }
    CAPTURE(err);
    for (const std::string& w : c.want) {
      CAPTURE(w);
      CHECK(err.find(w) != std::string::npos);
    }
  }
}
