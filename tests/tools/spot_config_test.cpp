// A pool's `spot:` field and the `spot:` section: the rate per node-day or as a mean time between
// reclaims, the notice and return draw, the discount applied to the pool's node prices, the seed
// derived from the run seed unless given, and every mistake (in the fields or a reclaim trace's
// rows) an error at its file, line and field.
#include "tools/loaders/spot_config.hpp"

#include <doctest/doctest.h>

#include <string>

#include "tools/loaders/scenario_loader.hpp"

namespace capsim {
namespace {

std::string cluster(const std::string& spot_field) {
  return "seed: 3\n"
         "cluster:\n  pools:\n"
         "    - {name: od, count: 1, cpu: 64, memory: 512Gi, price_per_hour: 10, gpu: {model: "
         "H100-80GB, count: 8}}\n"
         "    - {name: sp, count: 2, cpu: 64, memory: 512Gi, price_per_hour: 10, gpu: {model: "
         "H100-80GB, count: 8}" +
         spot_field +
         "}\n"
         "workload:\n  synthetic:\n    window: 1h\n    tenants:\n      - {name: t, rate_per_hour: "
         "2, gpus: 1, duration: 30m}\n";
}

Scenario load(const std::string& spot_field, const std::string& extra = "",
              const std::string& trace = "") {
  MemoryFiles files;
  files.add("mem/s.yaml", cluster(spot_field) + extra);
  if (!trace.empty()) files.add("mem/r.csv", trace);
  return load_scenario("mem/s.yaml", LoadOptions{}, files);
}

std::string error_of(const std::string& spot_field, const std::string& extra = "",
                     const std::string& trace = "") {
  try {
    (void)load(spot_field, extra, trace);
  } catch (const InputError& e) {
    return e.where().to_string() + ": " + e.message();
  }
  return "no error";
}

}  // namespace

TEST_CASE("a spot pool reads its rate, notice and return, and its nodes cost the discount less") {
  const Scenario s = load(
      ", spot: {discount: 0.6, reclaim: {mtbr: 48h}, notice: 30s, return_after: {exponential: "
      "{mean: 2h}}}");
  const SpotConfig& c = s.sim.spot;
  REQUIRE(c.pools.size() == 1);
  CHECK(c.enabled());
  CHECK(c.pools[0].pool == "sp");
  CHECK(c.pools[0].discount == doctest::Approx(0.6));
  CHECK(c.pools[0].per_node_day == doctest::Approx(0.5));  // 1 day / 48 h
  CHECK(c.pools[0].notice == 30 * kSecond);
  REQUIRE(c.pools[0].return_after);
  // The default seed comes from the run seed's own stream; an explicit one wins.
  CHECK(c.seed == RandomStream(3, "spot").next_u64());
  // 10 per hour on demand x (1 - 0.6) = 4 per hour; the on-demand node is unchanged.
  for (const NodeSpec& n : s.world->nodes)
    CHECK(n.price_per_hour == doctest::Approx(n.pool == "sp" ? 4.0 : 10.0));

  const Scenario fixed =
      load(", spot: {discount: 0.5, reclaim: {per_node_day: 2}}", "spot: {seed: 9}\n");
  CHECK(fixed.sim.spot.seed == 9);
  CHECK(fixed.sim.spot.pools[0].per_node_day == doctest::Approx(2.0));
  CHECK(fixed.sim.spot.pools[0].notice == 2 * kMinute);  // AWS's two minutes by default
  CHECK_FALSE(fixed.sim.spot.pools[0].return_after);     // never comes back
  // No spot pool: nothing is spot, and prices are as given.
  CHECK_FALSE(load("").sim.spot.enabled());
}

TEST_CASE("a spot field's mistakes are errors at the field") {
  CHECK(error_of(", spot: {discount: 1.5}").find("mem/s.yaml:5:") == 0);
  CHECK(error_of(", spot: {reclaim: {per_node_day: 1}}").find("discount") != std::string::npos);
  CHECK(error_of(", spot: {discount: 0.5, reclaim: {per_node_day: 1, mtbr: 2d}}")
            .find("give per_node_day or mtbr, not both") != std::string::npos);
  CHECK(
      error_of(", spot: {discount: 0.5, reclaim: {}}").find("reclaim needs per_node_day or mtbr") !=
      std::string::npos);
  CHECK(error_of(", spot: {discount: 0.5, reclaim: {mtbr: 0s}}")
            .find("the mean time between reclaims must be positive") != std::string::npos);
  CHECK(error_of(", spot: {discount: 0.5, notise: 2m}")
            .find("unknown field 'notise' (did you mean 'notice'?)") != std::string::npos);
  CHECK(error_of(", spot: {discount: 0.5}, autoscaling: {min: 0, max: 2}")
            .find("a spot pool cannot be autoscaled yet") != std::string::npos);
  CHECK(error_of("", "spot: {seed: 1}\n").find("no pool is declared spot") != std::string::npos);
}

TEST_CASE("a reclaim trace names spot nodes, and a bad row is an error at its line and column") {
  const std::string spot = ", spot: {discount: 0.5, notice: 2m}";
  const std::string section = "spot: {trace: r.csv}\n";
  const Scenario s = load(spot, section,
                          "# reclaims\ntime,node,notice,return_after\n"
                          "5h,sp-1,30s,\n"
                          "1h,sp-0,,45m\n");
  const auto& t = s.sim.spot.trace;
  REQUIRE(t.size() == 2);
  // In time order: sp-0 at 1 h with the pool's notice and a return, then sp-1 at 5 h for ever.
  CHECK(t[0].time == kHour);
  CHECK(s.world->nodes[t[0].node].name == "sp-0");
  CHECK(t[0].notice == 2 * kMinute);
  CHECK(t[0].return_after == 45 * kMinute);
  CHECK(t[1].time == 5 * kHour);
  CHECK(t[1].notice == 30 * kSecond);
  CHECK(t[1].return_after == -1);
  CHECK(t[1].source == "mem/r.csv:3");

  struct Case {
    const char* name;
    const char* csv;
    const char* want;
  };
  const Case cases[] = {
      {"an unknown node", "time,node\n1h,sp-7\n",
       "mem/r.csv:2: column node: no node is named 'sp-7'"},
      {"an on-demand node", "time,node\n1h,od-0\n",
       "mem/r.csv:2: column node: node od-0 is in pool 'od', which is not a spot pool"},
      {"a bad time", "time,node\n1 hour,sp-0\n", "mem/r.csv:2: column time:"},
      {"a negative notice", "time,node,notice\n1h,sp-0,-2m\n", "mem/r.csv:2: column notice:"},
      {"a bad return", "time,node,return_after\n1h,sp-0,soon\n",
       "mem/r.csv:2: column return_after:"},
      {"an unknown column", "time,node,notise\n1h,sp-0,2m\n",
       "unknown column 'notise' (did you mean 'notice'?)"},
      {"no node column", "time\n1h\n", "the column 'node' is missing"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const std::string e = error_of(spot, section, c.csv);
    CAPTURE(e);
    CHECK(e.find(c.want) != std::string::npos);
  }
}

}  // namespace capsim
