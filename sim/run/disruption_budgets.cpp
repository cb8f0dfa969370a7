#include "sim/run/disruption_budgets.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace capsim {

namespace {

// intstr.GetScaledValueFromIntOrPercent(v, total, roundUp = true), as the disruption controller
// calls it for both fields.
std::int32_t scaled(const IntOrPercent& v, std::int32_t total) {
  if (!v.percent) return v.value;
  return static_cast<std::int32_t>((static_cast<std::int64_t>(v.value) * total + 99) / 100);
}

bool exists(PodPhase p) {
  return p != PodPhase::kNotArrived && !is_terminal(p);
}

}  // namespace

bool DisruptionBudgets::covers(const DisruptionBudgetSpec& b, const PodSpec& p) const {
  return p.namespace_ == b.namespace_ && selector_matches(b.selector, p.labels);
}

void DisruptionBudgets::scan() {
  const auto& budgets = world_->disruption_budgets;
  covered_.resize(budgets.size());
  of_.resize(world_->pods.size());
  for (; scanned_ < world_->pods.size(); ++scanned_) {
    const PodSpec& p = world_->pods[scanned_];
    for (std::size_t b = 0; b < budgets.size(); ++b) {
      if (!covers(budgets[b], p)) continue;
      covered_[b].push_back(static_cast<PodId>(scanned_));
      of_[scanned_].push_back(static_cast<std::uint32_t>(b));
    }
  }
}

DisruptionBudgets::Counts DisruptionBudgets::counts(const Cluster& cluster, std::size_t budget) {
  scan();
  const DisruptionBudgetSpec& b = world_->disruption_budgets.at(budget);
  Counts c;
  for (PodId p : covered_[budget]) {
    const PodPhase ph = cluster.pod(p).phase;
    if (!exists(ph)) continue;
    ++c.expected;
    if (ph == PodPhase::kRunning) ++c.healthy;
  }
  if (b.max_unavailable) {
    c.desired = std::max(0, c.expected - scaled(*b.max_unavailable, c.expected));
  } else if (b.min_available) {
    c.desired = scaled(*b.min_available, c.expected);
  }
  return c;
}

EvictionVerdict DisruptionBudgets::may_evict(const Cluster& cluster, PodId pod) {
  if (!any()) return {};
  scan();
  const PodPhase ph = cluster.pod(pod).phase;
  // Not running (pending, or already terminating): the eviction is a plain delete.
  if (ph != PodPhase::kRunning && ph != PodPhase::kCrashBackoff) return {};
  const std::vector<std::uint32_t>& budgets = of_.at(pod);
  if (budgets.empty()) return {};
  if (budgets.size() > 1) {
    return {false,
            "This pod has more than one PodDisruptionBudget, which the eviction subresource does "
            "not support."};
  }
  const DisruptionBudgetSpec& b = world_->disruption_budgets[budgets[0]];
  const Counts c = counts(cluster, budgets[0]);
  if (ph == PodPhase::kCrashBackoff) {
    // Running but not ready.
    if (b.unhealthy == UnhealthyPodEvictionPolicy::kAlwaysAllow || c.healthy >= c.desired)
      return {};
  } else if (c.allowed() > 0) {
    return {};
  }
  return {false, fmt::format("Cannot evict pod as it would violate the pod's disruption budget "
                             "{}/{} ({} healthy, {} needed, {} expected)",
                             b.namespace_, b.name, c.healthy, c.desired, c.expected)};
}

bool DisruptionBudgets::covered(PodId pod) {
  if (!any()) return false;
  scan();
  return !of_.at(pod).empty();
}

EvictionVerdict DisruptionBudgets::may_evict_all(const Cluster& cluster,
                                                 std::span<const PodId> pods) {
  if (!any()) return {};
  scan();
  // Running pods per budget: each eviction lowers the budget's healthy count by one, so k of
  // them go one after the other only if the budget allows k disruptions now.
  std::vector<std::pair<std::uint32_t, std::int32_t>> wanted;
  for (PodId p : pods) {
    const std::vector<std::uint32_t>& budgets = of_.at(p);
    const PodPhase ph = cluster.pod(p).phase;
    if (budgets.empty() || (ph != PodPhase::kRunning && ph != PodPhase::kCrashBackoff)) continue;
    if (budgets.size() > 1 || ph == PodPhase::kCrashBackoff) {
      EvictionVerdict v = may_evict(cluster, p);  // the single pod's rule
      if (!v.allowed) return v;
      continue;
    }
    auto it = std::find_if(wanted.begin(), wanted.end(),
                           [&](const auto& w) { return w.first == budgets[0]; });
    if (it == wanted.end()) {
      wanted.emplace_back(budgets[0], 1);
    } else {
      ++it->second;
    }
  }
  for (const auto& [b, k] : wanted) {
    const Counts c = counts(cluster, b);
    if (c.allowed() < k) {
      const DisruptionBudgetSpec& spec = world_->disruption_budgets[b];
      return {false, fmt::format("Cannot evict {} pod(s) as it would violate the pod's disruption "
                                 "budget {}/{} ({} healthy, {} needed, {} expected)",
                                 k, spec.namespace_, spec.name, c.healthy, c.desired, c.expected)};
    }
  }
  return {};
}

}  // namespace capsim
