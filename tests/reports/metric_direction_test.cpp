// Directions come from the metric catalog, and they are the directions compare and check used
// before it existed: the table below froze the answers of the name heuristics the catalog
// replaced (reports/metric_direction.cpp until then), checked against them for every name the
// golden runs report.
#include "reports/metric_direction.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

using namespace capsim;
namespace fs = std::filesystem;

namespace {

// What the heuristics answered, by catalog entry; every entry not listed was neutral.
constexpr std::string_view kLowerBefore[] = {
    "pods_failed",
    "pods_oom_killed",
    "pods_preempted",
    "pods_unschedulable",
    "pods_pending_at_end",
    "fragmentation_ratio_mean",
    "fragmented_gpu_share_mean",
    "wait_seconds_mean",
    "wait_seconds_p50",
    "wait_seconds_p95",
    "wait_seconds_p99",
    "jct_seconds_mean",
    "slowdown_mean",
    "makespan_seconds",
    "gpu_hours_lost_to_oom",
    "gpu_hours_lost_to_preemption",
    "preemptions",
    "cost_total_usd",
    "cost_per_busy_gpu_hour_usd",
    "energy_kwh",
    "cost_hardware_usd",
    "cost_energy_usd",
    "cost_idle_usd",
    "cost_stranded_usd",
    "energy_facility_kwh",
    "queue.{}.wait_seconds_mean",
    "queue.{}.wait_seconds_p50",
    "queue.{}.wait_seconds_p95",
    "queue.{}.wait_seconds_p99",
};
constexpr std::string_view kHigherBefore[] = {
    "pods_completed",
    "gpu_allocation_ratio_mean",
    "gpu_utilization_ratio_mean",
    "gpu_hours_busy",
};

// Entries added after the catalog replaced the heuristics, with the direction they were given
// (failures and checkpoints, docs/scenario-format.md): the freeze above does not cover them.
constexpr std::string_view kLowerAddedSince[] = {
    "node_failures",
    "gpu_failures",
    "failures.{}",
    "pods_interrupted",
    "gpu_hours_lost_to_failures",
    "gpu_hours_lost_to_checkpoints",
    // Maintenance windows (docs/scenario-format.md, "Maintenance").
    "pool.{}.planned_downtime",
    "maintenance_drains_blocked",
    "maintenance_nodes_skipped",
    "maintenance_drain_seconds_mean",
    "gpu_hours_lost_to_maintenance",
    // Topology (docs/scenario-format.md, "Topology").
    "tas_wait_seconds_p95",
    "jobs_spanning_domains",
    "topology.{}.fragmented_gpus_mean",
    // Racks priced on their own (docs/scenario-format.md, "Racks").
    "cost_racks_usd",
    // Spot capacity (docs/spot.md).
    "spot_reclaims",
    "pool.{}.spot_reclaims",
    "pods_interrupted_by_reclaim",
    "pods_killed_by_reclaim",
    "gpu_hours_lost_to_reclaims",
    // Scale-down that drains nodes (docs/autoscaling.md).
    "gpu_hours_lost_to_scale_down",
};
constexpr std::string_view kHigherAddedSince[] = {
    "goodput_ratio",        "effective_time_ratio",   "queue.{}.effective_time_ratio",
    "pool.{}.availability", "topology_slowdown_mean",
};

Direction direction_before(std::string_view entry) {
  auto has = [&](const auto& list) {
    return std::find(std::begin(list), std::end(list), entry) != std::end(list);
  };
  if (has(kLowerAddedSince)) return Direction::kLowerIsBetter;
  if (has(kHigherAddedSince)) return Direction::kHigherIsBetter;
  if (has(kLowerBefore)) return Direction::kLowerIsBetter;
  if (has(kHigherBefore)) return Direction::kHigherIsBetter;
  return Direction::kNeutral;
}

// Every metric name in tests/scenario/golden/*.summary (the first word of a line; the `status`
// line is the run's, not a metric).
std::set<std::string> golden_metric_names() {
  std::set<std::string> out;
  for (const auto& f :
       fs::directory_iterator(fs::path(CAPSIM_SOURCE_DIR) / "tests/scenario/golden")) {
    if (f.path().extension() != ".summary") continue;
    std::ifstream in(f.path());
    std::string line;
    while (std::getline(in, line)) {
      const std::string name = line.substr(0, line.find(' '));
      if (name != "status") out.insert(name);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("every catalog entry keeps the direction compare and check gave it before the catalog") {
  for (const MetricDef& d : metric_catalog()) {
    CAPTURE(d.name);
    CHECK(direction_name(d.direction) == direction_name(direction_before(d.name)));
  }
}

TEST_CASE("every name the golden runs report is in the catalog, and compare reads its direction") {
  const std::set<std::string> names = golden_metric_names();
  REQUIRE(names.size() > 100);
  for (const std::string& n : names) {
    CAPTURE(n);
    const MetricDef* d = find_metric(n);
    REQUIRE(d != nullptr);
    CHECK(direction_name(metric_direction(n)) == direction_name(d->direction));
  }
  // A name from a file written by another capsim version has no better side.
  CHECK(metric_direction("gpu_hours_stranded") == Direction::kNeutral);
}
