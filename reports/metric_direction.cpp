#include "reports/metric_direction.hpp"

#include <cmath>

namespace capsim {

Direction metric_direction(std::string_view m) {
  // A name capsim does not know (a file written by a newer or older capsim) has no better side.
  const MetricDef* d = find_metric(m);
  return d == nullptr ? Direction::kNeutral : d->direction;
}

int better_of(double a, double b, Direction d) {
  if (d == Direction::kNeutral || std::isnan(a) || std::isnan(b) || a == b) return 0;
  const bool first_lower = a < b;
  if (d == Direction::kLowerIsBetter) return first_lower ? -1 : 1;
  return first_lower ? 1 : -1;
}

}  // namespace capsim
