// Reading a sweep file (sweep_file.hpp) as a whole: one row per variant (the runs that share every
// axis value but the seed), each metric as mean and 95 % interval over the seeds; and charts of a
// metric against a numeric axis (e.g. node count), one line per value of another axis (e.g. the
// layout), one panel per combination of the remaining axes. A metric can be a summary name, or
// max(PATTERN) / min(PATTERN) over the summary metrics matching a '*' pattern (e.g.
// max(queue.*.wait_seconds_p95): the worst team's wait).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "reports/statistics.hpp"
#include "reports/sweep_file.hpp"

namespace capsim {

struct SweepCell {
  AxisValues axes;  // without the seed axis
  std::vector<std::int64_t> runs;
  std::vector<std::uint64_t> seeds;
  std::vector<MeanCi> stats;  // per metric of SweepTable::metrics
};

struct SweepTable {
  SweepInfo info;
  std::vector<std::string> axes;  // axis names without the seed
  std::vector<std::string> metrics;
  std::vector<SweepCell> cells;  // in run order of their first run
};

struct SweepChartOptions {
  std::string x_axis;     // empty: the first axis with numeric values
  std::string line_axis;  // empty: the first other axis (non-numeric preferred); "-": none
  std::vector<std::pair<std::string, std::string>> fixed;  // only cells with these axis values
};

// Reads a sweep file. Throws InputError: missing (66), not a report or not a sweep file (65).
SweepTable load_sweep_table(const std::string& file, const std::vector<std::string>& metrics);

// The value of a metric expression for one run's summary (NaN when nothing matches).
double metric_value(const std::string& expression,
                    const std::vector<std::pair<std::string, double>>& summary);

std::string render_sweep_text(const SweepTable& t);
std::string render_sweep_markdown(const SweepTable& t);
// Throws InputError (kInvalid) naming an unknown axis in the options.
std::string render_sweep_html(const SweepTable& t, const SweepChartOptions& options);

// Default metrics for sweep tables and charts.
std::vector<std::string> default_sweep_metrics();

}  // namespace capsim
