// A run's cost where FinOps tools look for it: the JSON that OpenCost's /allocation API returns
// (one allocation set per window, aggregated like its `aggregate` parameter, idle as __idle__)
// and FOCUS 1.2 cost rows (CSV, one row per charge per charge period). Both are views of the
// cost ledger's charge rows (reports/cost_allocation.hpp), so their costs add up to the run's
// cost_total_usd in every window. docs/reports.md describes the fields. Pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "reports/cost_allocation.hpp"
#include "sim/time.hpp"

namespace capsim {

// "30m", "1h", "12h", "1d", "7d", "1w": a positive whole number of minutes, hours, days or
// weeks; nullopt for anything else.
std::optional<SimDuration> parse_cost_window(std::string_view text);

// "namespace", "queue", "pod", "node", "controller", "label:KEY"; false for anything else.
bool valid_cost_aggregate(std::string_view aggregate);

struct CostExportOptions {
  double origin_epoch_s = 0;  // wall-clock time (Unix seconds) of simulated time 0
  // Window (OpenCost step) and FOCUS charge period. 0: OpenCost one window over the whole run,
  // FOCUS one hour. Windows align to multiples of their length in wall-clock time.
  SimDuration window = 0;
  std::string aggregate = "pod";
  bool idle = false;  // OpenCost: add __idle__ (FOCUS always carries idle rows)
  std::string cluster = "capsim";
};

// The windows [start, end) in simulated time that cover the run, aligned as above.
std::vector<std::pair<SimTime, SimTime>> cost_windows(const CostAllocation& a, SimDuration window,
                                                      double origin_epoch_s);

std::string render_opencost(const CostAllocation& a, const CostExportOptions& options);

// FOCUS 1.2 columns written, in order; the x_ columns are capsim's own.
const std::vector<std::string>& focus_columns();
std::string render_focus_csv(const CostAllocation& a, const CostExportOptions& options);

// Unix seconds as "2025-06-01T00:00:00Z" (rounded to the second).
std::string utc_timestamp(double epoch_s);

}  // namespace capsim
