#include "tools/capsim/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "reports/compare.hpp"
#include "tools/capsim/cli.hpp"

namespace capsim {

namespace fs = std::filesystem;

namespace {

std::string fmt_value(double v) {
  return cli::format_number(v);
}

}  // namespace

std::string PlanConstraint::describe() const {
  if (max && min) return fmt::format("{} <= {} <= {}", fmt_value(*min), metric, fmt_value(*max));
  if (max) return fmt::format("{} <= {}", metric, fmt_value(*max));
  return fmt::format("{} >= {}", metric, fmt_value(*min));
}

Planner::Planner(const PlanSpec& spec, int jobs, std::optional<fs::path> record_dir)
    : spec_(spec), jobs_(jobs), record_dir_(std::move(record_dir)) {}

std::string Planner::describe(const PlanConfig& c) const {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < spec_.pools.size(); ++i)
    parts.push_back(fmt::format("{}={}", spec_.pools[i].name, c.counts[i]));
  for (std::size_t i = 0; i < spec_.choices.size(); ++i) {
    parts.push_back(
        fmt::format("{}={}", spec_.choices[i].name,
                    spec_.choices[i].options[static_cast<std::size_t>(c.choice[i])].first));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

const PlanEvaluation& Planner::evaluate(const PlanConfig& c,
                                        const std::vector<std::uint64_t>& seeds) {
  const auto key = std::make_pair(c, seeds);
  if (auto it = cache_.find(key); it != cache_.end()) return evals_[it->second];

  std::vector<VariantSpec> vs;
  for (std::uint64_t seed : seeds) {
    VariantSpec v;
    v.index = static_cast<std::int64_t>(runs_ + vs.size());
    for (std::size_t i = 0; i < spec_.pools.size(); ++i) {
      v.axes.emplace_back(spec_.pools[i].name, std::to_string(c.counts[i]));
      v.sets.push_back({fmt::format("{}={}", spec_.pools[i].key, c.counts[i]), {}});
    }
    for (std::size_t i = 0; i < spec_.choices.size(); ++i) {
      const auto& opt = spec_.choices[i].options[static_cast<std::size_t>(c.choice[i])];
      v.axes.emplace_back(spec_.choices[i].name, opt.first);
      v.sets.insert(v.sets.end(), opt.second.begin(), opt.second.end());
    }
    v.axes.emplace_back("seed", std::to_string(seed));
    v.seed = seed;
    vs.push_back(std::move(v));
  }
  RunVariantsOptions ro;
  ro.jobs = jobs_;
  ro.record_dir = record_dir_;
  std::vector<VariantResult> rs = run_variants(spec_.base, vs, ro);
  runs_ += vs.size();

  PlanEvaluation e;
  e.config = c;
  e.seeds = seeds;
  double sum = 0;
  for (const VariantResult& r : rs) {
    double obj = std::numeric_limits<double>::quiet_NaN();
    for (const auto& [k, v] : r.summary) {
      if (k == spec_.objective) obj = v;
    }
    if (std::isnan(obj)) {
      throw InputError(InputErrorKind::kInvalid, InputLocation{spec_.base.file, 0, 0, "objective"},
                       fmt::format("the runs report no metric '{}' (docs/metrics.md lists them)",
                                   spec_.objective));
    }
    e.objective_per_seed.push_back(obj);
    sum += obj;
    e.summaries.push_back(r.summary);
  }
  e.objective = sum / static_cast<double>(rs.size());

  e.feasible = true;
  for (const PlanConstraint& pc : spec_.constraints) {
    // Per matching metric: its values over the seeds.
    std::map<std::string, std::vector<double>> values;
    for (const Summary& s : e.summaries) {
      for (const auto& [k, v] : s) {
        if (glob_match(pc.metric, k) && !std::isnan(v)) values[k].push_back(v);
      }
    }
    if (values.empty()) {
      throw InputError(InputErrorKind::kInvalid, pc.where,
                       fmt::format("no summary metric matches '{}' (docs/metrics.md lists them; "
                                   "per-queue metrics are queue.<name>.*)",
                                   pc.metric));
    }
    // "Worse" is higher against a max, lower against a min; with both, the farther outside.
    auto badness = [&](double v) {
      double b = -std::numeric_limits<double>::infinity();
      if (pc.max) b = std::max(b, v - *pc.max);
      if (pc.min) b = std::max(b, *pc.min - v);
      return b;
    };
    ConstraintOutcome out;
    bool first = true;
    for (const auto& [k, vals] : values) {
      std::vector<double> judged;
      if (spec_.judge == SeedJudge::kMean) {
        double s = 0;
        for (double v : vals)
          s += v;
        judged.push_back(s / static_cast<double>(vals.size()));
      } else {
        judged = vals;
      }
      for (double v : judged) {
        if (first || badness(v) > badness(out.value)) {
          out.value = v;
          out.metric = k;
          first = false;
        }
      }
    }
    out.ok = badness(out.value) <= 1e-9;
    e.feasible = e.feasible && out.ok;
    e.constraints.push_back(out);
  }
  e.order = static_cast<int>(evals_.size()) + 1;
  if (record_dir_) {
    variants_.insert(variants_.end(), vs.begin(), vs.end());
    results_.insert(results_.end(), rs.begin(), rs.end());
  }
  evals_.push_back(std::move(e));
  cache_[key] = evals_.size() - 1;
  if (on_eval_) on_eval_(evals_.back());
  return evals_.back();
}

// Enumerates pools [pool, last) upwards; the last pool's count is bisected. `best` is the best
// feasible evaluation of this layout so far.
void Planner::enumerate(PlanConfig& c, std::size_t pool, std::optional<std::size_t>& best) {
  const std::size_t last = spec_.pools.size() - 1;
  if (pool < last) {
    // A fresh staircase: the last pool's bound starts at its maximum. (-1 from the innermost
    // level means: larger prefixes cannot be better, stop this loop.)
    c.counts[last] = spec_.pools[last].max;
    for (std::int64_t n = spec_.pools[pool].min; n <= spec_.pools[pool].max; ++n) {
      c.counts[pool] = n;
      enumerate(c, pool + 1, best);
      if (c.counts[last] == -1) {
        c.counts[last] = spec_.pools[last].max;
        if (pool + 1 == last) break;
      }
    }
    c.counts[last] = spec_.pools[last].max;
    return;
  }
  // The innermost level: one step of the staircase for the current prefix. c.counts[last] holds
  // the upper bound carried from the previous prefix (the previous step's minimum).
  const PoolRange& r = spec_.pools[last];
  const std::int64_t hi0 = c.counts[last];
  // 1. Cheapest possible point for this prefix: if even it cannot beat the best, neither can any
  //    larger prefix (counts only add cost), so stop the enumeration.
  c.counts[last] = r.min;
  const PlanEvaluation& low = evaluate(c);
  const std::size_t low_i = static_cast<std::size_t>(low.order - 1);
  if ((best && !better(low.objective, evals_[*best].objective)) ||
      (bound_ && !better(low.objective, *bound_))) {
    c.counts[last] = -1;
    return;
  }
  if (low.feasible) {
    if (!best || better(low.objective, evals_[*best].objective)) best = low_i;
    c.counts[last] = -1;  // larger prefixes are dominated: same or more of every pool
    return;
  }
  // 2. Is anything feasible for this prefix at all?
  c.counts[last] = hi0;
  const PlanEvaluation& top = evaluate(c);
  if (!top.feasible) {
    c.counts[last] = r.max;  // no bound learned; the next prefix starts from the top again
    return;
  }
  // 3. Bisect the smallest feasible count in (min, hi0].
  std::int64_t lo = r.min + 1, hi = hi0;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    c.counts[last] = mid;
    if (evaluate(c).feasible) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  c.counts[last] = hi;
  const PlanEvaluation& found = evaluate(c);
  const std::size_t found_i = static_cast<std::size_t>(found.order - 1);
  if (!best || better(found.objective, evals_[*best].objective)) best = found_i;
  // c.counts[last] stays at hi: the bound for the next prefix.
}

std::optional<std::size_t> Planner::search_counts(const std::vector<int>& layout) {
  PlanConfig c;
  c.choice = layout;
  std::optional<std::size_t> best;
  if (spec_.pools.empty()) {
    const PlanEvaluation& e = evaluate(c);
    if (e.feasible) best = static_cast<std::size_t>(e.order - 1);
    return best;
  }
  for (const PoolRange& p : spec_.pools)
    c.counts.push_back(p.min);
  c.counts.back() = spec_.pools.back().max;
  enumerate(c, 0, best);
  if (best && (!bound_ || better(evals_[*best].objective, *bound_))) {
    bound_ = evals_[*best].objective;
  }
  return best;
}

PlanResult Planner::run(const std::function<void(const PlanEvaluation&)>& on_eval) {
  const auto t0 = std::chrono::steady_clock::now();
  on_eval_ = on_eval;
  PlanResult r;

  // Local search over layouts: start from the first option of every choice; move to the best
  // neighbour (one choice changed) while it improves.
  std::vector<int> current(spec_.choices.size(), 0);
  std::map<std::vector<int>, std::optional<std::size_t>> layouts;
  auto search = [&](const std::vector<int>& l) {
    if (auto it = layouts.find(l); it != layouts.end()) return it->second;
    const auto b = search_counts(l);
    layouts[l] = b;
    return b;
  };
  std::optional<std::size_t> best = search(current);
  for (;;) {
    std::vector<int> next_layout = current;
    std::optional<std::size_t> next_best = best;
    for (std::size_t d = 0; d < spec_.choices.size(); ++d) {
      for (int o = 0; o < static_cast<int>(spec_.choices[d].options.size()); ++o) {
        if (o == current[d]) continue;
        std::vector<int> cand = current;
        cand[d] = o;
        const auto b = search(cand);
        if (b && (!next_best || better(evals_[*b].objective, evals_[*next_best].objective))) {
          next_best = b;
          next_layout = cand;
        }
      }
    }
    if (next_layout == current) break;
    current = next_layout;
    best = next_best;
  }
  for (const auto& [l, b] : layouts) {
    if (b) r.layouts.emplace_back(evals_[*b].config, *b);
  }

  if (best) {
    r.best = evals_[*best].config;
    // Neighbours: one node fewer in each pool (each should break a constraint).
    for (std::size_t p = 0; p < spec_.pools.size(); ++p) {
      PlanConfig n = *r.best;
      if (n.counts[p] <= spec_.pools[p].min) continue;
      --n.counts[p];
      r.neighbours.push_back(static_cast<std::size_t>(evaluate(n).order - 1));
    }
    if (!spec_.robustness_seeds.empty()) r.robustness = evaluate(*r.best, spec_.robustness_seeds);
  }

  // The cost-vs-SLO frontier over everything explored on the plan's seeds: cheapest first, each
  // point strictly better on the first constraint than every cheaper one. At equal cost the
  // better point comes first, so a point another of the same cost dominates is left out.
  const PlanConstraint& primary = spec_.constraints.front();
  const double sign = primary.max ? 1.0 : -1.0;  // lower is better against a max
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < evals_.size(); ++i) {
    if (evals_[i].seeds == spec_.seeds) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    // Costs equal but for rounding (sums over runs in another order) count as equal.
    const double oa = evals_[a].objective, ob = evals_[b].objective;
    if (std::abs(oa - ob) > 1e-9 * std::max(1.0, std::abs(oa))) return better(oa, ob);
    const double va = sign * evals_[a].constraints.front().value;
    const double vb = sign * evals_[b].constraints.front().value;
    if (va != vb) return va < vb;
    return evals_[a].order < evals_[b].order;
  });
  double best_slo = std::numeric_limits<double>::infinity();
  for (std::size_t i : order) {
    const double v = sign * evals_[i].constraints.front().value;
    if (v < best_slo) {
      r.frontier.push_back(i);
      best_slo = v;
    }
  }
  r.evaluations = evals_;
  r.runs = runs_;
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

namespace {

std::string constraint_cells(const PlanEvaluation& e, const std::string& sep) {
  std::vector<std::string> cells;
  for (const ConstraintOutcome& c : e.constraints)
    cells.push_back(fmt::format("{}{}", fmt_value(c.value), c.ok ? "" : " ✗"));
  return fmt::format("{}", fmt::join(cells, sep));
}

}  // namespace

std::string render_plan_text(const PlanSpec& spec, const Planner& planner, const PlanResult& r) {
  std::string s;
  s += fmt::format("capsim plan: {} — {} {} subject to:\n", spec.name,
                   spec.minimize ? "minimise" : "maximise", spec.objective);
  for (const PlanConstraint& c : spec.constraints)
    s += fmt::format("  {}\n", c.describe());
  s += fmt::format("judged {} over seeds {}\n\n",
                   spec.judge == SeedJudge::kEverySeed ? "on every seed" : "on the mean",
                   fmt::join(spec.seeds, ", "));
  if (!r.best) {
    s += "No configuration in the search space meets every constraint.\n";
  } else {
    const PlanEvaluation* be = nullptr;
    for (const auto& e : r.evaluations) {
      if (e.config == *r.best && e.seeds == spec.seeds) be = &e;
    }
    s += fmt::format("Answer: {}\n", planner.describe(*r.best));
    std::vector<std::string> per_seed;
    for (double v : be->objective_per_seed)
      per_seed.push_back(fmt_value(v));
    s += fmt::format("  {} = {} (mean over seeds; per seed {})\n", spec.objective,
                     fmt_value(be->objective), fmt::join(per_seed, ", "));
    for (std::size_t i = 0; i < spec.constraints.size(); ++i) {
      s += fmt::format("  {}: {} ({})\n", spec.constraints[i].describe(),
                       fmt_value(be->constraints[i].value), be->constraints[i].metric);
    }
  }
  s += "\nBest per layout explored:\n";
  for (const auto& [cfg, i] : r.layouts) {
    s += fmt::format("  {:<50} {} = {}\n", planner.describe(cfg), spec.objective,
                     fmt_value(r.evaluations[i].objective));
  }
  if (!r.neighbours.empty()) {
    s += "\nNeighbours (one node fewer):\n";
    for (std::size_t i : r.neighbours) {
      const PlanEvaluation& e = r.evaluations[i];
      s += fmt::format("  {:<50} {}  [{}]\n", planner.describe(e.config),
                       e.feasible ? "still meets the constraints" : "breaks a constraint",
                       constraint_cells(e, ", "));
    }
  }
  if (r.robustness) {
    const PlanEvaluation& e = *r.robustness;
    std::size_t ok = 0;
    for (std::size_t k = 0; k < e.seeds.size(); ++k) {
      bool all = true;
      for (const PlanConstraint& pc : spec.constraints) {
        for (const auto& [m, v] : e.summaries[k]) {
          if (!glob_match(pc.metric, m) || std::isnan(v)) continue;
          if ((pc.max && v > *pc.max + 1e-9) || (pc.min && v < *pc.min - 1e-9)) all = false;
        }
      }
      ok += all ? 1 : 0;
    }
    s += fmt::format(
        "\nRobustness: on {} further seeds ({}) the answer meets every constraint on {}; worst "
        "[{}]\n",
        e.seeds.size(), fmt::join(e.seeds, ", "), ok, constraint_cells(e, ", "));
  }
  s += "\nCost-vs-SLO frontier (explored; cheapest first, each better on the first "
       "constraint):\n";
  s += fmt::format("  {:>14}  {:>14}  {:<8} {}\n", spec.objective.substr(0, 14),
                   spec.constraints.front().metric.substr(0, 14), "meets", "configuration");
  for (std::size_t i : r.frontier) {
    const PlanEvaluation& e = r.evaluations[i];
    s += fmt::format("  {:>14}  {:>14}  {:<8} {}\n", fmt_value(e.objective),
                     fmt_value(e.constraints.front().value), e.feasible ? "yes" : "no",
                     planner.describe(e.config));
  }
  s += fmt::format("\nExplored {} configurations ({} runs) in {:.1f}s.\n", r.evaluations.size(),
                   r.runs, r.wall_seconds);
  return s;
}

std::string render_plan_markdown(const PlanSpec& spec, const Planner& planner,
                                 const PlanResult& r) {
  std::string s = fmt::format("# Plan: {}\n\n", spec.name);
  s += fmt::format("{} `{}` subject to ", spec.minimize ? "Minimise" : "Maximise", spec.objective);
  std::vector<std::string> cs;
  for (const PlanConstraint& c : spec.constraints)
    cs.push_back(fmt::format("`{}`", c.describe()));
  s += fmt::format("{}, judged {} over seeds {}.\n\n", fmt::join(cs, ", "),
                   spec.judge == SeedJudge::kEverySeed ? "on every seed" : "on the mean",
                   fmt::join(spec.seeds, ", "));
  s += r.best ? fmt::format("**Answer: {}**\n\n", planner.describe(*r.best))
              : "**No configuration meets every constraint.**\n\n";
  std::vector<std::string> heads = {"configuration", spec.objective};
  for (const PlanConstraint& c : spec.constraints)
    heads.push_back("`" + c.metric + "`");
  heads.push_back("meets");
  auto table = [&](const std::vector<std::size_t>& idx) {
    std::string t = fmt::format(
        "| {} |\n|{}\n", fmt::join(heads, " | "),
        fmt::format("{}", fmt::join(std::vector<std::string>(heads.size(), "---|"), "")));
    for (std::size_t i : idx) {
      const PlanEvaluation& e = r.evaluations[i];
      t +=
          fmt::format("| {} | {} | {} | {} |\n", planner.describe(e.config), fmt_value(e.objective),
                      constraint_cells(e, " | "), e.feasible ? "yes" : "no");
    }
    return t + "\n";
  };
  s += "## Cost-vs-SLO frontier\n\n" + table(r.frontier);
  if (!r.neighbours.empty()) s += "## Neighbours (one node fewer)\n\n" + table(r.neighbours);
  std::vector<std::size_t> all;
  for (std::size_t i = 0; i < r.evaluations.size(); ++i)
    all.push_back(i);
  s += "## Every configuration explored, in order\n\n" + table(all);
  s += fmt::format("{} configurations, {} runs, {:.1f}s.\n", r.evaluations.size(), r.runs,
                   r.wall_seconds);
  return s;
}

std::string render_plan_json(const PlanSpec& spec, const Planner& planner, const PlanResult& r) {
  auto eval_json = [&](const PlanEvaluation& e) {
    std::vector<std::string> cs;
    for (std::size_t i = 0; i < e.constraints.size(); ++i) {
      cs.push_back(fmt::format(
          "{{\"constraint\": \"{}\", \"value\": {}, \"metric\": \"{}\", \"ok\": {}}}",
          cli::json_escape(spec.constraints[i].describe()), fmt_value(e.constraints[i].value),
          cli::json_escape(e.constraints[i].metric), e.constraints[i].ok));
    }
    std::vector<std::string> counts;
    for (std::size_t i = 0; i < spec.pools.size(); ++i)
      counts.push_back(
          fmt::format("\"{}\": {}", cli::json_escape(spec.pools[i].name), e.config.counts[i]));
    for (std::size_t i = 0; i < spec.choices.size(); ++i) {
      counts.push_back(fmt::format(
          "\"{}\": \"{}\"", cli::json_escape(spec.choices[i].name),
          cli::json_escape(
              spec.choices[i].options[static_cast<std::size_t>(e.config.choice[i])].first)));
    }
    std::vector<std::string> per_seed;
    for (double v : e.objective_per_seed)
      per_seed.push_back(fmt_value(v));
    return fmt::format(
        "{{\"config\": {{{}}}, \"label\": \"{}\", \"seeds\": [{}], \"objective\": {}, "
        "\"objective_per_seed\": [{}], \"feasible\": {}, \"constraints\": [{}]}}",
        fmt::join(counts, ", "), cli::json_escape(planner.describe(e.config)),
        fmt::join(e.seeds, ", "), fmt_value(e.objective), fmt::join(per_seed, ", "), e.feasible,
        fmt::join(cs, ", "));
  };
  auto list = [&](const std::vector<std::size_t>& idx) {
    std::vector<std::string> items;
    for (std::size_t i : idx)
      items.push_back("    " + eval_json(r.evaluations[i]));
    return fmt::format("[\n{}\n  ]", fmt::join(items, ",\n"));
  };
  std::vector<std::size_t> all;
  for (std::size_t i = 0; i < r.evaluations.size(); ++i)
    all.push_back(i);
  std::string answer = "null";
  if (r.best) {
    for (const auto& e : r.evaluations) {
      if (e.config == *r.best && e.seeds == spec.seeds) answer = eval_json(e);
    }
  }
  return fmt::format(
      "{{\n  \"plan\": \"{}\",\n  \"objective\": \"{}\",\n  \"answer\": {},\n  \"neighbours\": "
      "{},\n  \"robustness\": {},\n  \"frontier\": {},\n  \"explored\": {},\n  \"runs\": {},\n  "
      "\"wall_seconds\": {:.3f}\n}}\n",
      cli::json_escape(spec.name), cli::json_escape(spec.objective), answer, list(r.neighbours),
      r.robustness ? eval_json(*r.robustness) : "null", list(r.frontier), list(all), r.runs,
      r.wall_seconds);
}

}  // namespace capsim
