// Plan files (docs/planning.md): the objective, the constraints judged over seeds, and the search
// space (node count ranges per pool, layout and sharing choices), read and checked with file,
// line, column and field; every option's settings and each pool's key are tried against the base
// scenario when the file is read. The search itself is tools/capsim/plan.hpp's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tools/loaders/sweep_spec.hpp"

namespace capsim {

struct PlanConstraint {
  std::string metric;  // a summary metric name, or a pattern with '*'
  std::optional<double> max, min;
  InputLocation where;
  std::string describe() const;  // "queue.*.wait_seconds_p95 <= 900" (defined in plan.cpp)
};

struct PoolRange {
  std::string name, key;  // axis name; the --set key of the pool's node count
  std::int64_t min = 0, max = 0;
};

struct PlanChoice {
  std::string name;
  std::vector<std::pair<std::string, std::vector<Assignment>>> options;  // label -> settings
};

enum class SeedJudge { kEverySeed, kMean };

struct PlanSpec {
  StudyBase base;
  std::string name, text;
  std::vector<std::uint64_t> seeds;
  std::vector<std::uint64_t> robustness_seeds;
  std::string objective = "cost_total_usd";
  bool minimize = true;
  std::vector<PlanConstraint> constraints;
  SeedJudge judge = SeedJudge::kEverySeed;
  std::vector<PoolRange> pools;
  std::vector<PlanChoice> choices;
};

// Reads and checks a plan file (errors with file, line, column, field), trying every option's
// settings and each pool's key against the base scenario.
PlanSpec load_plan(const std::string& path, const std::optional<std::string>& data_dir);
// The same for a plan file's bytes already in memory; `path` names it in messages and is the
// directory its `scenario:` resolves against (the base scenario is read from disk).
PlanSpec load_plan_text(std::string text, const std::string& path,
                        const std::optional<std::string>& data_dir);

}  // namespace capsim
