// The runs that compare and check work on: every run of every given report file, checked to be
// complete, grouped into variants. A variant is one scenario (same scenario_sha256, which covers
// the file and its --set overrides) run with one profile; its runs differ only in the seed, and
// compare and check summarise them by mean and 95 % confidence interval.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reports/run_reader.hpp"
#include "reports/statistics.hpp"

namespace capsim {

struct LoadedRun {
  std::string file;
  RunRow row;
  Summary summary;
  // The metric's value, or NaN when the run does not have it.
  double metric(const std::string& name) const;
  bool has(const std::string& name) const;
};

struct Variant {
  std::string key;    // scenario_sha256 + profile + overrides
  std::string label;  // "scenario / profile", made unique among the variants shown together
  std::string scenario, profile, overrides, sha256;
  std::vector<LoadedRun> runs;  // in file order, then run_id
  std::vector<std::uint64_t> seeds() const;
  // Mean and CI over the runs that have the metric (NaN values are left out).
  MeanCi stat(const std::string& metric) const;
};

// Loads every run of each file. Throws InputError: missing file (kMissing); not a capsim report,
// no runs, or a run that is not complete (kInvalid, naming the file and run).
std::vector<LoadedRun> load_runs(const std::vector<std::string>& files);

// Groups runs into variants in order of first appearance and gives them unique labels.
std::vector<Variant> group_variants(const std::vector<LoadedRun>& runs);

// Every metric of the variants' runs: the first run's order, then metrics first seen later.
std::vector<std::string> metric_names(const std::vector<Variant>& variants);

// "1-5", "1, 3, 7", "42".
std::string seed_list(std::vector<std::uint64_t> seeds);

}  // namespace capsim
