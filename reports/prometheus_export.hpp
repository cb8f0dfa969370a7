// The samples of a run as Prometheus metrics, for dashboards built on DCGM exporter data:
// OpenMetrics text (what `promtool tsdb create-blocks-from openmetrics` backfills) or the classic
// Prometheus text format, every sample with its timestamp. Per-pool series use DCGM exporter
// names where the meaning matches (as the mean over the pool's GPUs) and capsim_* gauges for the
// rest (docs/reports.md lists them).
#pragma once

#include <string>

#include "reports/report_data.hpp"

namespace capsim {

enum class PromFormat {
  kOpenMetrics,  // timestamps in seconds, ends with "# EOF"
  kText,         // Prometheus text format 0.0.4, timestamps in milliseconds
};

// `origin_epoch_s`: the wall-clock time (Unix seconds) that simulated time 0 maps to.
std::string render_prometheus(const ReportData& data, double origin_epoch_s, PromFormat format);

// The default origin: the run's start (run.started_at) minus its simulated length, so the series
// end when the run was made and lie in the recent past. Falls back to 0 when started_at is not
// an ISO-8601 UTC time.
double default_prometheus_origin(const RunRow& run);

// Parses "2025-06-01T00:00:00Z" (UTC) or a number of Unix seconds; nullopt if neither.
std::optional<double> parse_time_origin(const std::string& text);

}  // namespace capsim
