// `capsim compare`: runs side by side. Runs are grouped into variants (run_set.hpp); each metric
// shows every variant's mean with its 95 % confidence interval (Student t over the seeds), the
// change against the first variant, and which variant is better by the metric's direction
// (metric_direction.hpp). With several seeds on both sides the change also gets Welch's 95 %
// interval, and is called significant when that interval excludes zero.
#pragma once

#include <string>
#include <vector>

#include "reports/metric_direction.hpp"
#include "reports/run_set.hpp"

namespace capsim {

struct CompareRow {
  std::string metric;
  Direction direction = Direction::kNeutral;
  std::vector<MeanCi> stats;           // per variant; n == 0 when the variant lacks the metric
  int best = -1;                       // index of the better variant; -1 when none is better
  std::vector<DifferenceCi> vs_first;  // per variant: mean(variant) - mean(first)
  // Per variant: the difference against the first is significant (Welch interval excludes 0).
  std::vector<bool> significant;
};

struct Comparison {
  std::vector<Variant> variants;
  std::vector<CompareRow> rows;
};

// `patterns`: glob patterns ('*' matches anything) selecting metrics; empty = all.
Comparison compare_variants(std::vector<Variant> variants,
                            const std::vector<std::string>& patterns = {});

std::string render_compare_text(const Comparison& c);
std::string render_compare_markdown(const Comparison& c);
std::string render_compare_json(const Comparison& c);

// '*' matches any run of characters (including none and dots); everything else literally.
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace capsim
