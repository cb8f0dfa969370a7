// `capsim plan`: the cheapest configuration (node counts per pool, layout and sharing choices)
// whose runs meet every constraint over a set of seeds (docs/planning.md). The search assumes
// what holds for capacity: adding a node never makes the judged metrics worse and never makes the
// objective cheaper. Under that assumption, for one layout the feasible node counts form an
// up-closed set, and its cheapest points lie on the staircase of minimal counts: enumerate the
// other pools upwards and bisect the last pool's count, carrying the bound down the staircase and
// stopping when even the smallest count costs more than the best answer. Layout and sharing
// choices have no order, so they are searched locally: from the first option of each choice,
// move to the best neighbour (one choice changed) until none is cheaper. The plan file is read by
// tools/loaders/plan_spec.hpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tools/capsim/sweep.hpp"
#include "tools/loaders/plan_spec.hpp"

namespace capsim {

struct PlanConfig {
  std::vector<std::int64_t> counts;  // per pool
  std::vector<int> choice;           // option index per choice
  auto operator<=>(const PlanConfig&) const = default;
};

struct ConstraintOutcome {
  double value = 0;    // judged value: the worst over matching metrics (and seeds, or their mean)
  std::string metric;  // the metric that gave it
  bool ok = true;
};

struct PlanEvaluation {
  PlanConfig config;
  std::vector<std::uint64_t> seeds;
  std::vector<Summary> summaries;  // per seed
  double objective = 0;            // mean over seeds
  std::vector<double> objective_per_seed;
  std::vector<ConstraintOutcome> constraints;
  bool feasible = false;
  int order = 0;  // 1-based order of evaluation
};

struct PlanResult {
  std::optional<PlanConfig> best;
  std::vector<PlanEvaluation> evaluations;  // every configuration run, in order
  std::vector<std::size_t> frontier;        // indices: cost-vs-SLO Pareto frontier
  std::vector<std::size_t> neighbours;      // the answer with one node fewer per pool
  std::vector<std::pair<PlanConfig, std::size_t>> layouts;  // best per layout explored
  std::optional<PlanEvaluation> robustness;                 // the answer over robustness seeds
  double wall_seconds = 0;
  std::size_t runs = 0;
};

class Planner {
 public:
  Planner(const PlanSpec& spec, int jobs, std::optional<std::filesystem::path> record_dir);
  PlanResult run(const std::function<void(const PlanEvaluation&)>& on_eval);

  std::string describe(const PlanConfig& c) const;  // "b200=4, a100=6, a100-layout=mig"
  // The recorded runs (when a record_dir was given), for write_plan_file.
  const std::vector<VariantSpec>& recorded_variants() const { return variants_; }
  const std::vector<VariantResult>& recorded_results() const { return results_; }

 private:
  const PlanEvaluation& evaluate(const PlanConfig& c, const std::vector<std::uint64_t>& seeds);
  const PlanEvaluation& evaluate(const PlanConfig& c) { return evaluate(c, spec_.seeds); }
  // Strictly better by more than floating-point noise (sums of the same costs in another order
  // differ in the last bits), so ties keep the configuration found first.
  bool better(double a, double b) const {
    const double eps = 1e-9 * std::max(1.0, std::fabs(b));
    return spec_.minimize ? a < b - eps : a > b + eps;
  }
  // The staircase search for one layout: returns the best feasible evaluation index, if any.
  std::optional<std::size_t> search_counts(const std::vector<int>& layout);
  void enumerate(PlanConfig& c, std::size_t pool, std::optional<std::size_t>& best);

  const PlanSpec& spec_;
  int jobs_;
  std::optional<std::filesystem::path> record_dir_;
  std::map<std::pair<PlanConfig, std::vector<std::uint64_t>>, std::size_t> cache_;
  std::vector<PlanEvaluation> evals_;
  std::function<void(const PlanEvaluation&)> on_eval_;
  std::vector<VariantSpec> variants_;
  std::vector<VariantResult> results_;
  std::size_t runs_ = 0;
  std::optional<double> bound_;  // the best objective found in any layout so far
};

std::string render_plan_text(const PlanSpec& spec, const Planner& planner, const PlanResult& r);
std::string render_plan_markdown(const PlanSpec& spec, const Planner& planner, const PlanResult& r);
std::string render_plan_json(const PlanSpec& spec, const Planner& planner, const PlanResult& r);

}  // namespace capsim
