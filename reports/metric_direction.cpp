#include "reports/metric_direction.hpp"

#include <cmath>
#include <string>

namespace capsim {

namespace {

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

}  // namespace

Direction metric_direction(std::string_view m) {
  // Per-queue metrics: queue.<name>.<metric>; the queue name may contain dots.
  if (starts_with(m, "queue.")) {
    if (ends_with(m, ".pods") || ends_with(m, ".gpu_hours")) return Direction::kNeutral;
    // A queue's cost grows with the work it gets done, so it is neutral, like its GPU-hours.
    if (m.find(".wait_seconds") != std::string_view::npos) return Direction::kLowerIsBetter;
    return Direction::kNeutral;
  }
  static constexpr std::string_view kHigher[] = {
      "gpu_allocation_ratio_mean",
      "gpu_utilization_ratio_mean",
      "pods_completed",
      "gpu_hours_busy",
  };
  for (std::string_view h : kHigher) {
    if (m == h) return Direction::kHigherIsBetter;
  }
  static constexpr std::string_view kLower[] = {
      "pods_failed",
      "pods_oom_killed",
      "pods_preempted",
      "pods_unschedulable",
      "pods_pending_at_end",
      "fragmentation_ratio_mean",
      "fragmented_gpu_share_mean",
      "jct_seconds_mean",
      "slowdown_mean",
      "makespan_seconds",
      "gpu_hours_lost_to_oom",
      "gpu_hours_lost_to_preemption",
      "preemptions",
      "energy_kwh",
      "energy_facility_kwh",
  };
  for (std::string_view l : kLower) {
    if (m == l) return Direction::kLowerIsBetter;
  }
  if (starts_with(m, "wait_seconds_")) return Direction::kLowerIsBetter;
  // Money is better lower, except the parts charged to pods, which grow with the work done.
  if (m == "cost_allocated_usd" || m == "cost_unqueued_usd") return Direction::kNeutral;
  if (starts_with(m, "cost_")) return Direction::kLowerIsBetter;
  return Direction::kNeutral;
}

int better_of(double a, double b, Direction d) {
  if (d == Direction::kNeutral || std::isnan(a) || std::isnan(b) || a == b) return 0;
  const bool first_lower = a < b;
  if (d == Direction::kLowerIsBetter) return first_lower ? -1 : 1;
  return first_lower ? 1 : -1;
}

}  // namespace capsim
