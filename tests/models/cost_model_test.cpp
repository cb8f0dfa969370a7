// The scenario's cost: section prices every node (on-demand, reserved, purchase amortised over a
// life) and sets the energy price; bad cost data is rejected with file:line and field. Each case
// loads a real scenario file through load_scenario and states its arithmetic.
#include "models/cost_model.hpp"

#include <doctest/doctest.h>

#include <string>

#include "fixtures/cli_run.hpp"
#include "tools/loaders/scenario_loader.hpp"

using namespace capsim;
using capsim::testing::ScratchDir;
using capsim::testing::write_file;

namespace {

// Two B200 nodes (8 GPUs, catalog price $5.50 per GPU-hour) and one CPU node at $2 per hour.
const std::string kCluster = R"(cluster:
  pools:
    - name: b200
      count: 2
      gpu: {model: B200, count: 8}
      cpu: 128
      memory: 1Ti
    - name: cpu
      count: 1
      cpu: 32
      memory: 128Gi
      price_per_hour: 2
)";

Scenario load_with(const ScratchDir& dir, const std::string& cost) {
  write_file(dir.path / "s.yaml", kCluster + cost);
  return load_scenario(dir.file("s.yaml"), {});
}

double price_of(const Scenario& s, const std::string& pool) {
  for (const NodeSpec& n : s.world->nodes) {
    if (n.pool == pool) return n.price_per_hour;
  }
  return -1;
}

}  // namespace

TEST_CASE("the cost section prices nodes by their pool's pricing") {
  struct Case {
    const char* name;
    const char* cost;
    double want_b200;  // per node per hour
    double want_cpu;
  };
  const Case cases[] = {
      {"no cost section: 8 x catalog $5.50", "", 44.0, 2.0},
      {"on-demand override: 8 x $4", "cost:\n  models:\n    B200: {on_demand: 4}\n", 32.0, 2.0},
      {"reserved price: 8 x $3",
       "cost:\n  pricing: reserved\n  models:\n    B200: {reserved: 3}\n"
       "  pools:\n    cpu: {pricing: on_demand}\n",
       24.0, 2.0},
      {"reserved discount: 44 x 0.75 and 2 x 0.75",
       "cost:\n  pricing: reserved\n  reserved_discount: 0.25\n", 33.0, 1.5},
      {"purchase: 8 x $40,000 over 4 years of 8,760 h",
       "cost:\n  pricing: purchase\n  models:\n    B200: {purchase: 40000}\n"
       "  pools:\n    cpu: {purchase_price: 17520}\n",
       8 * 40000.0 / (4 * 8760.0), 17520.0 / (4 * 8760.0)},
      {"purchase over 5 years, one pool only",
       "cost:\n  amortization_years: 5\n  models:\n    nvidia-b200: {purchase: 43800}\n"
       "  pools:\n    b200: {pricing: purchase}\n",
       8 * 43800.0 / (5 * 8760.0), 2.0},
  };
  for (const Case& c : cases) {
    const std::string case_name = c.name;
    CAPTURE(case_name);
    ScratchDir dir("cost-model");
    const Scenario s = load_with(dir, c.cost);
    CHECK(price_of(s, "b200") == doctest::Approx(c.want_b200));
    CHECK(price_of(s, "cpu") == doctest::Approx(c.want_cpu));
  }
}

TEST_CASE("the energy price and PUE reach the simulation options") {
  ScratchDir dir("cost-energy");
  const Scenario s = load_with(dir, "cost:\n  energy: {price_per_kwh: 0.12, pue: 1.3}\n");
  CHECK(s.sim.energy.price_per_kwh == doctest::Approx(0.12));
  CHECK(s.sim.energy.pue == doctest::Approx(1.3));
  ScratchDir dir2("cost-energy");
  const Scenario d = load_with(dir2, "");
  CHECK(d.sim.energy.price_per_kwh == 0);
  CHECK(d.sim.energy.pue == 1.0);
}

TEST_CASE("bad cost data is rejected with the file, line and field") {
  struct Case {
    const char* name;
    const char* cost;
    const char* want_where;
    const char* want_message;
  };
  // kCluster has 12 lines, so the cost section starts on line 13.
  const Case cases[] = {
      {"reserved without a price", "cost:\n  pricing: reserved\n",
       "s.yaml:3:", "pool 'b200' uses reserved pricing but no reserved price is known for B200"},
      {"purchase without a price", "cost:\n  pricing: purchase\n",
       "s.yaml:3:", "uses purchase pricing but no purchase price is known"},
      {"unknown pricing", "cost:\n  pricing: spot\n", "s.yaml:14:", "unknown pricing 'spot'"},
      {"unknown model", "cost:\n  models:\n    B300: {on_demand: 1}\n",
       "s.yaml:15:", "unknown GPU model 'B300'"},
      {"unknown pool", "cost:\n  pools:\n    b20: {pricing: on_demand}\n", "s.yaml:15:",
       "cost.pools names pool 'b20', which the cluster does not have (did you mean 'b200'?)"},
      {"PUE below 1", "cost:\n  energy: {pue: 0.9}\n", "s.yaml:14:", "cost.energy.pue"},
      {"negative price", "cost:\n  models:\n    B200: {on_demand: -1}\n",
       "s.yaml:15:", "cost.models.B200.on_demand"},
      {"unknown field", "cost:\n  pricng: reserved\n", "s.yaml:14:", "did you mean 'pricing'"},
      {"racks priced on a pool without racks",
       "cost:\n  pools:\n    b200: {rack_price_per_hour: 9}\n",
       "s.yaml:15:", "cost.pools.b200 prices racks, but pool 'b200' has no racks"},
      {"both rack prices",
       "cost:\n  pools:\n    b200: {rack_price_per_hour: 9, rack_purchase_price: 9}\n",
       "s.yaml:15:", "give a rack either rack_price_per_hour or rack_purchase_price, not both"},
  };
  for (const Case& c : cases) {
    const std::string case_name = c.name;
    CAPTURE(case_name);
    ScratchDir dir("cost-bad");
    try {
      (void)load_with(dir, c.cost);
      FAIL("the scenario loaded");
    } catch (const InputError& e) {
      const std::string what = e.what();
      CAPTURE(what);
      CHECK(e.kind() == InputErrorKind::kInvalid);
      CHECK(what.find(c.want_where) != std::string::npos);
      CHECK(what.find(c.want_message) != std::string::npos);
    }
  }
}
