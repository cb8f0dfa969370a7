// The summary metrics a run can report, each declared once: its name (or a family pattern where
// `{}` stands for a queue, ClusterQueue or sharing-mode name), unit, one-sentence meaning, which
// way is better, the CI gate `capsim check` applies by default, and whether the HTML report shows
// it as a headline card. Producers (sim/metrics.cpp, sim/cost_ledger.cpp, the Kueue admission,
// the fill experiment) may only put names found here (put_metric checks it); compare, check,
// report and docs/metrics.md read their knowledge of a metric from here. Names are never renamed
// (design.md §4). Immutable, so any thread may read it.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "sim/recorder.hpp"

namespace capsim {

enum class Direction { kNeutral, kLowerIsBetter, kHigherIsBetter };

// A default regression limit of `capsim check`, written as the thresholds YAML writes it
// (`check --print-thresholds` prints the text verbatim, so "0.10" stays "0.10"). Empty: no limit.
struct MetricGate {
  std::string_view absolute;  // allowed worsening in the metric's unit
  std::string_view relative;  // allowed worsening as a fraction of the baseline
};

struct MetricDef {
  std::string_view name;  // exact, or a family with one `{}` (any non-empty text, dots included)
  std::string_view unit;
  std::string_view help;  // one sentence; docs/metrics.md shows it
  Direction direction = Direction::kNeutral;
  std::optional<MetricGate> gate;  // the built-in threshold, if check gates the metric by default
  int headline = 0;                // position among the HTML report's cards (1 = first); 0: none

  bool is_family() const { return name.find("{}") != std::string_view::npos; }
};

// Every metric, in the order docs/metrics.md lists them.
std::span<const MetricDef> metric_catalog();

// The entry `metric` is an instance of: an exact name first, then a family. nullptr when the
// catalog has none (no producer may emit such a name).
const MetricDef* find_metric(std::string_view metric);

// Whether `metric` is an instance of the family `pattern` (a name with one `{}`), or equals it.
bool family_matches(std::string_view pattern, std::string_view metric);

// Appends `metric` to `summary`; a name the catalog does not hold is a bug (CAPSIM_CHECK), so a
// new metric cannot reach the report without a catalog entry.
void put_metric(Summary& summary, std::string metric, double value);

// "lower", "higher", "neutral".
std::string_view direction_name(Direction d);

}  // namespace capsim
