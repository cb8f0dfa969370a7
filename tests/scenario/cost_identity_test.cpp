// On a whole run the cost parts add up: queues + pods without a queue = allocated; allocated +
// idle + stranded = total = hardware + energy; energy cost = kWh x PUE x price; the queues'
// charged GPU-hours = the allocated GPU-hours; and the ledger's rates survive a recount after
// every event (paranoid mode).
#include <doctest/doctest.h>

#include <string>

#include "fixtures/cli_run.hpp"
#include "fixtures/memory_recorder.hpp"
#include "tools/capsim/runner.hpp"
#include "tools/loaders/scenario_loader.hpp"

using namespace capsim;

TEST_SUITE("scenario") {
  TEST_CASE("a run's cost parts add up to its total") {
    Scenario s = load_scenario(testing::source_path("scenarios/regression/mixed.yaml"), {});
    REQUIRE(s.sim.energy.price_per_kwh == doctest::Approx(0.12));
    testing::MemoryRecorder rec;
    RunRequest req;
    req.paranoid = true;  // CostLedger::check_rates after every event
    const RunOutcome o = run_scenario(s, req, rec);
    auto m = [&](const std::string& k) { return rec.metric(k); };
    double queues = 0, queue_gpu_hours = 0;
    int n = 0;
    for (const auto& [k, v] : rec.summary) {
      if (k.rfind("queue.", 0) != 0) continue;
      if (k.size() > 9 && k.compare(k.size() - 9, 9, ".cost_usd") == 0) {
        queues += v;
        ++n;
      }
      if (k.size() > 10 && k.compare(k.size() - 10, 10, ".gpu_hours") == 0) queue_gpu_hours += v;
    }
    CHECK(n == 3);
    CHECK(m("cost_total_usd") > 0);
    CHECK(m("cost_energy_usd") > 0);
    CHECK(queues + m("cost_unqueued_usd") == doctest::Approx(m("cost_allocated_usd")));
    CHECK(m("cost_allocated_usd") + m("cost_idle_usd") + m("cost_stranded_usd") ==
          doctest::Approx(m("cost_total_usd")));
    CHECK(m("cost_hardware_usd") + m("cost_energy_usd") == doctest::Approx(m("cost_total_usd")));
    CHECK(m("cost_energy_usd") == doctest::Approx(m("energy_kwh") * 1.3 * 0.12));
    CHECK(m("energy_facility_kwh") == doctest::Approx(m("energy_kwh") * 1.3));
    CHECK(queue_gpu_hours == doctest::Approx(m("gpu_hours_allocated")));
    CHECK(m("cost_per_busy_gpu_hour_usd") ==
          doctest::Approx(m("cost_total_usd") / m("gpu_hours_busy")));
    // Hardware = every node's price x the simulated hours: 6 x 8 x A100 $1.60 + 3 x 8 x H100
    // $2.80 = $144 per hour.
    CHECK(m("cost_hardware_usd") == doctest::Approx(144.0 * m("sim_seconds") / 3600.0));
    CHECK(o.result.summary.size() == rec.summary.size());
  }

  // A rack's own price is split over its nodes and billed with them (docs/scenario-format.md,
  // "Racks"). Two GB200 NVL72 racks of 18 nodes at 4 x $5 per GPU-hour, and $36 per rack-hour on
  // top: each node costs $20 + $2 per hour.
  TEST_CASE("a rack's own price is billed with its nodes, and only with the nodes that exist") {
    auto run = [](const std::string& pool_size) {
      MemoryFiles files;
      files.add("/s/scenario.yaml", R"(name: racks
simulation: {horizon: 10h}
cluster:
  pools:
    - name: nvl
      gpu: {model: GB200, count: 4}
      cpu: 144
      memory: 960Gi
      topology: {racks: 2}
)" + pool_size + R"(
cost:
  models:
    GB200: {on_demand: 5}
  pools:
    nvl: {rack_price_per_hour: 36}
workload:
  synthetic:
    window: 1h
    tenants:
      - {name: t1, rate_per_hour: 4, gpus: 1, duration: 10m}
)");
      Scenario s = load_scenario("/s/scenario.yaml", LoadOptions{}, files);
      const bool spot = pool_size.find("spot") != std::string::npos;
      for (const NodeSpec& n : s.world->nodes)
        CHECK(n.price_per_hour == doctest::Approx(spot ? 20.0 * 0.5 + 2 : 22.0));
      testing::MemoryRecorder rec;
      RunRequest req;
      req.paranoid = true;
      (void)run_scenario(s, req, rec);
      return rec;
    };
    SUBCASE("a fixed fleet: 36 nodes x 10 h") {
      const testing::MemoryRecorder rec = run("");
      CHECK(rec.metric("cost_racks_usd") == doctest::Approx(2 * 36.0 * 10));
      CHECK(rec.metric("cost_hardware_usd") == doctest::Approx(36 * 22.0 * 10));
      CHECK(rec.metric("cost_allocated_usd") + rec.metric("cost_idle_usd") +
                rec.metric("cost_stranded_usd") ==
            doctest::Approx(rec.metric("cost_total_usd")));
    }
    SUBCASE("an autoscaled pool that keeps one rack's worth of nodes pays for one rack") {
      const testing::MemoryRecorder rec =
          run("      autoscaling: {min: 18, max: 36, provisioning_delay: 5m}");
      CHECK(rec.metric("node_hours") == doctest::Approx(18 * 10.0));
      CHECK(rec.metric("cost_racks_usd") == doctest::Approx(36.0 * 10));
      CHECK(rec.metric("cost_hardware_usd") == doctest::Approx(18 * 22.0 * 10));
    }
    SUBCASE("a spot discount is the instances': the racks' price is paid in full") {
      const testing::MemoryRecorder rec = run("      spot: {discount: 0.5}");
      CHECK(rec.metric("cost_racks_usd") == doctest::Approx(2 * 36.0 * 10));
      CHECK(rec.metric("cost_hardware_usd") == doctest::Approx(36 * (10.0 + 2) * 10));
    }
  }
  TEST_CASE("without rack prices a run reports no rack cost") {
    Scenario s = load_scenario(testing::source_path("scenarios/regression/mixed.yaml"), {});
    testing::MemoryRecorder rec;
    (void)run_scenario(s, RunRequest{}, rec);
    CHECK(rec.metric("cost_racks_usd") == -1e300);  // not reported
    CHECK(rec.metric("cost_hardware_usd") > 0);
  }
  TEST_CASE("a run with spot pools adds up too, and reclaimed nodes cost nothing") {
    Scenario s = load_scenario(testing::source_path("scenarios/spot/spot.yaml"), {});
    testing::MemoryRecorder rec;
    RunRequest req;
    req.paranoid = true;  // rates recounted after every reclaim and return as well
    (void)run_scenario(s, req, rec);
    auto m = [&](const std::string& k) { return rec.metric(k); };
    REQUIRE(m("spot_reclaims") > 0);
    double queues = 0;
    for (const auto& [k, v] : rec.summary) {
      if (k.rfind("queue.", 0) == 0 && k.size() > 9 && k.compare(k.size() - 9, 9, ".cost_usd") == 0)
        queues += v;
    }
    CHECK(queues + m("cost_unqueued_usd") == doctest::Approx(m("cost_allocated_usd")));
    CHECK(m("cost_allocated_usd") + m("cost_idle_usd") + m("cost_stranded_usd") ==
          doctest::Approx(m("cost_total_usd")));
    CHECK(m("cost_hardware_usd") + m("cost_energy_usd") == doctest::Approx(m("cost_total_usd")));
    // An H100-80GB node is 8 x $2.80 = $22.40 an hour on demand and $22.40 x (1 - 0.6) = $8.96
    // on spot, paid for the hours it existed: the on-demand pool all 36 h, the spot pool its
    // node-hours (less than 8 x 36 = 288 by the time its nodes were reclaimed).
    CHECK(m("pool.ondemand.node_hours") == doctest::Approx(8 * 36.0));
    CHECK(m("pool.spot.node_hours") < 8 * 36.0);
    CHECK(m("cost_hardware_usd") == doctest::Approx(22.40 * m("pool.ondemand.node_hours") +
                                                    8.96 * m("pool.spot.node_hours")));
    CHECK(m("node_hours") ==
          doctest::Approx(m("pool.ondemand.node_hours") + m("pool.spot.node_hours")));
  }
}
