// Which way is better for each summary metric (docs/metrics.md): compare marks the better value
// with it and check uses it as the default direction of a threshold. Lower is better for waits,
// times, cost, energy, fragmentation and failures; higher for allocation, utilisation and
// completed work; the rest (counts that describe the run, such as pods_total) are neutral.
#pragma once

#include <string_view>

#include "sim/metric_catalog.hpp"

namespace capsim {

Direction metric_direction(std::string_view metric);

// Which of two values is better under `d`: -1 the first, +1 the second, 0 neither (equal,
// neutral, or either is NaN).
int better_of(double a, double b, Direction d);

}  // namespace capsim
