// Which way is better for a summary metric, as the metric catalog (sim/metric_catalog.cpp) says:
// compare marks the better value with it, the report's metric table shows it and check uses it as
// the default direction of a threshold. Names the catalog does not hold are neutral.
#pragma once

#include <string_view>

#include "sim/metric_catalog.hpp"

namespace capsim {

Direction metric_direction(std::string_view metric);

// Which of two values is better under `d`: -1 the first, +1 the second, 0 neither (equal,
// neutral, or either is NaN).
int better_of(double a, double b, Direction d);

}  // namespace capsim
