// `capsim check`: the CI gate. Baseline and candidate runs are grouped into variants
// (run_set.hpp) and paired (one variant each, or by scenario name); for every metric a threshold
// covers, the candidate's mean over its seeds is compared with the baseline's mean. A regression
// is a change in the bad direction larger than every limit the threshold gives (absolute, in the
// metric's unit; relative, as a fraction of the baseline mean). Thresholds come from a YAML file
// (docs/reports.md) on top of built-in defaults. Results render as text, markdown and JUnit XML
// (one test case per metric).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reports/metric_direction.hpp"
#include "reports/run_set.hpp"
#include "sim/input_error.hpp"

namespace capsim {

class YamlNode;

struct Threshold {
  std::string pattern;  // a metric name, or a glob with '*' (queue.*.wait_seconds_p95)
  Direction direction = Direction::kNeutral;  // kNeutral here means "both": any change counts
  std::optional<double> absolute;             // allowed change in the metric's unit
  std::optional<double> relative;             // allowed change as a fraction of |baseline|
  bool skip = false;                          // never checked
  // Also require Welch's 95 % interval of the change to exclude zero (needs >= 2 seeds a side).
  bool significant = false;
  InputLocation where;  // "built-in" for the defaults
};

class Thresholds {
 public:
  // The built-in defaults (builtin_thresholds_yaml()).
  static Thresholds builtin();
  // A thresholds file. Its entries replace built-in entries with the same pattern; with
  // `builtin_defaults: false` the built-ins are dropped. Throws InputError with file:line:field
  // (kMissing when the file does not exist).
  static Thresholds load(const std::string& path);
  // Parses thresholds YAML text named `name` (for the built-ins and tests).
  static Thresholds parse(const std::string& text, const std::string& name);

  // The entry covering `metric`: an exact name wins over globs; globs match in file order,
  // file entries before built-ins. nullptr when none covers it.
  const Threshold* find(const std::string& metric) const;
  const std::vector<Threshold>& entries() const { return entries_; }
  const std::string& source() const { return source_; }

 private:
  static Thresholds from_document(const YamlNode& doc, const std::string& source);

  std::vector<Threshold> entries_;
  std::string source_;
};

// The built-in thresholds as a YAML document (`capsim check --print-thresholds`).
const std::string& builtin_thresholds_yaml();

enum class Verdict { kPass, kRegression, kSkipped };

struct CheckResult {
  std::string metric;
  Threshold threshold;
  MeanCi baseline, candidate;
  DifferenceCi change;   // candidate - baseline, with Welch's interval when both have seeds
  double worsening = 0;  // the change in the bad direction (negative: an improvement)
  double allowed = 0;    // the largest worsening that still passes
  Verdict verdict = Verdict::kPass;
  std::string message;  // one sentence, for JUnit and the tables
};

struct CheckPair {
  Variant baseline, candidate;
  std::vector<CheckResult> results;
  int regressions() const;
  int skipped() const;
};

struct CheckReport {
  std::vector<CheckPair> pairs;
  std::string thresholds_source;
  int regressions() const;
  int checks() const;
};

// Pairs the baseline and candidate variants and checks them. Throws InputError (kInvalid) when
// the variants cannot be paired (several in a file, scenario names that do not match).
CheckReport run_check(const std::vector<LoadedRun>& baseline,
                      const std::vector<LoadedRun>& candidate, const Thresholds& thresholds,
                      const std::string& baseline_file, const std::string& candidate_file);

std::string render_check_text(const CheckReport& r);
std::string render_check_markdown(const CheckReport& r);
std::string render_junit(const CheckReport& r);

}  // namespace capsim
