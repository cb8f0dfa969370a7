#include "tools/loaders/plan_spec.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>

#include "tools/loaders/file_source.hpp"

namespace capsim {

namespace fs = std::filesystem;

namespace {

// A limit: a number, or a duration ("15m") in seconds.
double read_limit(const YamlNode& n) {
  if (n.is_scalar()) {
    const std::string s = n.raw().Scalar();
    try {
      std::size_t used = 0;
      const double v = std::stod(s, &used);
      if (used == s.size()) return v;
    } catch (const std::logic_error&) {
    }
  }
  return to_seconds(n.duration());
}

std::vector<std::uint64_t> read_seeds(const YamlNode& n) {
  std::vector<std::uint64_t> out;
  for (const YamlNode& s : n.seq())
    out.push_back(static_cast<std::uint64_t>(s.integer(0)));
  if (out.empty()) n.fail("at least one seed is needed");
  return out;
}

}  // namespace

PlanSpec load_plan(const std::string& path, const std::optional<std::string>& data_dir) {
  return load_plan_text(
      RealFiles().read(path, "cannot open the file (does it exist and is it readable?)"), path,
      data_dir);
}

PlanSpec load_plan_text(std::string text, const std::string& path,
                        const std::optional<std::string>& data_dir) {
  PlanSpec spec;
  spec.text = std::move(text);
  const YamlNode doc = YamlNode::load_string(spec.text, path);
  if (!doc.is_map()) doc.fail("a plan file must be a YAML mapping (scenario, objective, ...)");
  MapReader m = doc.map();
  spec.name = m.str_or("name", fs::path(path).stem().string());
  spec.base = read_study_base(m, path, data_dir);
  spec.seeds = m.has("seeds") ? read_seeds(m.req("seeds")) : std::vector<std::uint64_t>{1};

  if (auto o = m.opt("objective")) {
    MapReader om = o->map();
    const auto mn = om.opt("minimize");
    const auto mx = om.opt("maximize");
    if (mn && mx) mx->fail("an objective either minimizes or maximizes a metric");
    if (!mn && !mx) o->fail("the objective needs `minimize: METRIC` or `maximize: METRIC`");
    spec.minimize = mn.has_value();
    spec.objective = (mn ? *mn : *mx).str();
    om.finish();
  }
  if (auto cs = m.opt("constraints")) {
    for (const YamlNode& c : cs->seq()) {
      MapReader cm = c.map();
      PlanConstraint pc;
      pc.where = c.where();
      pc.metric = cm.req("metric").str();
      if (auto v = cm.opt("max")) pc.max = read_limit(*v);
      if (auto v = cm.opt("min")) pc.min = read_limit(*v);
      cm.finish();  // a misspelt `max` is reported as such, not as a missing limit
      if (!pc.max && !pc.min) c.fail("a constraint needs `max:` or `min:` (or both)");
      spec.constraints.push_back(std::move(pc));
    }
  }
  if (auto j = m.opt("judge")) {
    const std::string s = j->str();
    if (s == "every_seed") {
      spec.judge = SeedJudge::kEverySeed;
    } else if (s == "mean") {
      spec.judge = SeedJudge::kMean;
    } else {
      j->fail(fmt::format("unknown judge '{}'{}; use every_seed or mean", s,
                          did_you_mean(s, {"every_seed", "mean"})));
    }
  }
  std::vector<Assignment> to_try;
  const YamlNode search = m.req("search");
  MapReader sm = search.map();
  if (auto ps = sm.opt("pools")) {
    std::set<std::string> names;
    for (const YamlNode& p : ps->seq()) {
      MapReader pm = p.map();
      PoolRange r;
      const YamlNode key = pm.req("key");
      r.key = key.str();
      r.name = pm.str_or("name", r.key);
      r.min = pm.req("min").integer(0);
      const YamlNode mx = pm.req("max");
      r.max = mx.integer(0);
      if (r.max < r.min) mx.fail(fmt::format("max {} is below min {}", r.max, r.min));
      pm.finish();
      if (!names.insert(r.name).second) p.fail(fmt::format("two pools are named '{}'", r.name));
      validate_assignments(spec.base, {{fmt::format("{}={}", r.key, r.max), key.where()}},
                           std::nullopt, "");
      spec.pools.push_back(std::move(r));
    }
  }
  if (auto cs = sm.opt("choices")) {
    for (const YamlNode& c : cs->seq()) {
      MapReader cm = c.map();
      PlanChoice ch;
      ch.name = cm.req("name").str();
      const YamlNode opts = cm.req("options");
      for (const auto& [label, settings] : opts.entries()) {
        std::vector<Assignment> sets = read_assignments(settings);
        validate_assignments(spec.base, sets, std::nullopt, "");
        ch.options.emplace_back(label, std::move(sets));
      }
      if (ch.options.empty()) opts.fail("a choice needs at least one option");
      cm.finish();
      spec.choices.push_back(std::move(ch));
    }
  }
  sm.finish();
  if (spec.pools.empty() && spec.choices.empty()) {
    search.fail("the search space needs `pools:` (node count ranges) or `choices:`");
  }
  if (auto r = m.opt("robustness")) {
    MapReader rm = r->map();
    if (auto s = rm.opt("seeds")) spec.robustness_seeds = read_seeds(*s);
    rm.finish();
  }
  m.finish();
  if (spec.constraints.empty()) doc.fail("a plan needs at least one entry in `constraints:`");
  return spec;
}

}  // namespace capsim
