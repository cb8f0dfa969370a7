// PodDisruptionBudgets (policy/v1) as plain data: which pods a budget covers and how many of them
// must stay healthy. The decision an eviction gets is DisruptionBudgets'
// (sim/run/disruption_budgets.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sim/labels.hpp"

namespace capsim {

// An IntOrString of the API: a count, or a percentage of the expected pods.
struct IntOrPercent {
  std::int32_t value = 0;
  bool percent = false;
};

enum class UnhealthyPodEvictionPolicy : std::uint8_t { kIfHealthyBudget, kAlwaysAllow };

struct DisruptionBudgetSpec {
  std::string name;
  std::string namespace_ = "default";
  LabelSelector selector;  // spec.selector: `{}` selects every pod of the namespace, none none
  std::optional<IntOrPercent> min_available;    // exactly one of the two is set
  std::optional<IntOrPercent> max_unavailable;  // (neither: minAvailable 1, as the API defaults)
  UnhealthyPodEvictionPolicy unhealthy = UnhealthyPodEvictionPolicy::kIfHealthyBudget;
  std::string source;  // "file:line"
};

}  // namespace capsim
