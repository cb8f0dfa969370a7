#include "reports/check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <map>

#include "models/yaml_reader.hpp"
#include "reports/compare.hpp"
#include "reports/text/escape.hpp"
#include "reports/text/number.hpp"
#include "sim/metric_catalog.hpp"

namespace capsim {

namespace {

bool is_glob(const std::string& p) {
  return p.find('*') != std::string::npos;
}

// The built-in thresholds: one line per catalog metric with a default gate, in catalog order,
// names padded to one column (docs/reports.md, "Built-in thresholds", shows the same table).
std::string builtin_yaml() {
  std::string out =
      "# capsim check: built-in thresholds.\n"
      "# A metric regresses when the candidate's mean is worse than the baseline's mean by more "
      "than\n"
      "# every limit given: `absolute` (in the metric's unit) and `relative` (a fraction of the "
      "baseline).\n"
      "# With neither limit, any worsening counts.\n"
      "builtin_defaults: false\n"
      "metrics:\n";
  // A family's key is its glob (queue.*.wait_seconds_p95), quoted for YAML.
  auto key = [](const MetricDef& d) {
    if (!d.is_family()) return std::string(d.name);
    std::string glob(d.name);
    glob.replace(glob.find("{}"), 2, "*");
    return "\"" + glob + "\"";
  };
  std::size_t width = 0;
  for (const MetricDef& d : metric_catalog()) {
    if (d.gate) width = std::max(width, key(d).size() + 1);
  }
  for (const MetricDef& d : metric_catalog()) {
    if (!d.gate) continue;
    std::string limits = fmt::format("direction: {}", direction_name(d.direction));
    if (!d.gate->absolute.empty()) limits += fmt::format(", absolute: {}", d.gate->absolute);
    if (!d.gate->relative.empty()) limits += fmt::format(", relative: {}", d.gate->relative);
    out += fmt::format("  {:<{}} {{{}}}\n", key(d) + ":", width, limits);
  }
  return out;
}

// The direction of a threshold that names none. A metric name (or a glob whose `*`s, read as a
// name, make one: queue.*.wait_seconds_p95) takes the catalog's direction. Any other glob takes
// the direction its catalog metrics that have one agree on (wait_seconds_*: lower); neutral when
// they disagree or none has one, which the caller reports as an error.
Direction default_direction(const std::string& pattern) {
  std::string probe = pattern;
  std::replace(probe.begin(), probe.end(), '*', 'x');
  if (const MetricDef* d = find_metric(probe)) return d->direction;
  if (!is_glob(pattern)) return Direction::kNeutral;
  std::optional<Direction> agreed;
  for (const MetricDef& d : metric_catalog()) {
    if (d.direction == Direction::kNeutral || !glob_match(pattern, d.name)) continue;
    if (agreed && *agreed != d.direction) return Direction::kNeutral;
    agreed = d.direction;
  }
  return agreed.value_or(Direction::kNeutral);
}

std::vector<Threshold> parse_entries(const YamlNode& doc, bool& builtin_defaults) {
  std::vector<Threshold> out;
  if (doc.is_null()) return out;
  if (!doc.is_map()) doc.fail("a thresholds file is a mapping with a `metrics:` mapping");
  MapReader m = doc.map();
  builtin_defaults = m.bool_or("builtin_defaults", true);
  if (auto metrics = m.opt("metrics")) {
    if (!metrics->is_null() && !metrics->is_map()) {
      metrics->fail("metrics must map metric names (or patterns with *) to thresholds");
    }
    for (const auto& [name, v] : metrics->entries()) {
      Threshold t;
      t.pattern = name;
      t.where = v.where();
      MapReader tm = v.map();
      t.skip = tm.bool_or("skip", false);
      if (auto d = tm.opt("direction")) {
        const std::string s = d->str();
        if (s == "lower") {
          t.direction = Direction::kLowerIsBetter;
        } else if (s == "higher") {
          t.direction = Direction::kHigherIsBetter;
        } else if (s == "both") {
          t.direction = Direction::kNeutral;
        } else {
          d->fail(fmt::format("direction must be lower, higher or both (which way is better){}",
                              did_you_mean(s, {"lower", "higher", "both"})));
        }
      } else {
        t.direction = default_direction(name);
        if (t.direction == Direction::kNeutral && !t.skip) {
          v.fail(fmt::format(
              "capsim has no default direction for '{}': add direction: lower, higher or both",
              name));
        }
      }
      if (auto a = tm.opt("absolute")) t.absolute = a->number(0, 1e300);
      if (auto r = tm.opt("relative")) t.relative = r->number(0, 1e6);
      t.significant = tm.bool_or("significant", false);
      tm.finish();
      for (const Threshold& earlier : out) {
        if (earlier.pattern == name) v.fail(fmt::format("'{}' is given twice", name));
      }
      out.push_back(std::move(t));
    }
  }
  m.finish();
  return out;
}

std::string stat_text(const MeanCi& s) {
  if (s.n == 0) return "—";
  if (s.n == 1) return figure(s.mean);
  return fmt::format("{} ± {} (n={})", figure(s.mean), figure(s.half_width), s.n);
}

std::string direction_text(Direction d) {
  return d == Direction::kNeutral ? "both" : std::string(direction_name(d));
}

std::string limits_text(const Threshold& t) {
  std::vector<std::string> parts;
  if (t.absolute) parts.push_back(fmt::format("{} absolute", figure(*t.absolute)));
  if (t.relative) parts.push_back(fmt::format("{:g} % relative", *t.relative * 100));
  if (parts.empty()) return "no worsening";
  return fmt::format("{}", fmt::join(parts, " and "));
}

CheckResult evaluate(const std::string& metric, const Threshold& t, const Variant& base,
                     const Variant& cand) {
  CheckResult r;
  r.metric = metric;
  r.threshold = t;
  r.baseline = base.stat(metric);
  r.candidate = cand.stat(metric);
  bool in_base = false, in_cand = false;
  for (const LoadedRun& run : base.runs)
    in_base = in_base || run.has(metric);
  for (const LoadedRun& run : cand.runs)
    in_cand = in_cand || run.has(metric);
  if (!in_base && !in_cand) {
    r.verdict = Verdict::kSkipped;
    r.message = "neither run reports this metric";
    return r;
  }
  if (!in_base) {
    r.verdict = Verdict::kSkipped;
    r.message = "new in the candidate (the baseline does not report it)";
    return r;
  }
  if (!in_cand) {
    r.verdict = Verdict::kRegression;
    r.message = "the candidate does not report this metric";
    return r;
  }
  const bool base_undefined = r.baseline.n == 0;
  const bool cand_undefined = r.candidate.n == 0;
  if (base_undefined || cand_undefined) {
    r.verdict = base_undefined && cand_undefined ? Verdict::kPass : Verdict::kRegression;
    r.message = base_undefined && cand_undefined
                    ? "undefined in both"
                    : (cand_undefined ? "undefined (NaN) in the candidate only"
                                      : "undefined (NaN) in the baseline only");
    return r;
  }
  r.change = welch_ci95(r.baseline, r.candidate);
  const double change = r.change.difference;
  switch (t.direction) {
    case Direction::kLowerIsBetter:
      r.worsening = change;
      break;
    case Direction::kHigherIsBetter:
      r.worsening = -change;
      break;
    case Direction::kNeutral:
      r.worsening = std::fabs(change);
      break;
  }
  // allowed = the largest of the limits given; 0 when none is given.
  const double base_mean = r.baseline.mean;
  r.allowed = 0;
  if (t.absolute) r.allowed = std::max(r.allowed, *t.absolute);
  if (t.relative) r.allowed = std::max(r.allowed, *t.relative * std::fabs(base_mean));
  // Floating-point noise (sums in a different order) is never a regression.
  const double noise = 1e-9 * std::max(1.0, std::fabs(base_mean));
  bool regressed = r.worsening > r.allowed + noise;
  std::string significance;
  if (regressed && t.significant) {
    if (std::isnan(r.change.half_width)) {
      significance = " (significance not tested: fewer than 2 seeds on a side)";
    } else if (r.worsening <= r.change.half_width) {
      regressed = false;
      significance =
          fmt::format(" but not significant (95 % interval ±{})", figure(r.change.half_width));
    }
  }
  r.verdict = regressed ? Verdict::kRegression : Verdict::kPass;
  const std::string change_text =
      fmt::format("{} ({})", signed_figure(change), percent_change(change, base_mean));
  if (regressed) {
    r.message = fmt::format("{} went from {} to {}, {}; the threshold allows {} ({}){}", metric,
                            figure(base_mean), figure(r.candidate.mean), change_text,
                            figure(r.allowed), limits_text(t), significance);
  } else {
    r.message = fmt::format("{} -> {}, {}; allowed worsening {}{}", figure(base_mean),
                            figure(r.candidate.mean), change_text, figure(r.allowed), significance);
  }
  return r;
}

CheckPair check_pair(const Variant& base, const Variant& cand, const Thresholds& th) {
  CheckPair p;
  p.baseline = base;
  p.candidate = cand;
  std::vector<Variant> both = {base, cand};
  std::vector<std::string> metrics = metric_names(both);
  // Exact names a threshold lists but neither run reports still get a (skipped) test case.
  for (const Threshold& t : th.entries()) {
    if (!is_glob(t.pattern) && !t.skip &&
        std::find(metrics.begin(), metrics.end(), t.pattern) == metrics.end()) {
      metrics.push_back(t.pattern);
    }
  }
  for (const std::string& m : metrics) {
    const Threshold* t = th.find(m);
    if (t == nullptr || t->skip) continue;
    p.results.push_back(evaluate(m, *t, base, cand));
  }
  return p;
}

std::string variant_text(const Variant& v) {
  return fmt::format("{} ({} run{}, seed{} {})", v.label, v.runs.size(),
                     v.runs.size() == 1 ? "" : "s", v.runs.size() == 1 ? "" : "s",
                     seed_list(v.seeds()));
}

}  // namespace

const std::string& builtin_thresholds_yaml() {
  static const std::string text = builtin_yaml();
  return text;
}

Thresholds Thresholds::from_document(const YamlNode& doc, const std::string& source) {
  Thresholds t;
  t.source_ = source;
  bool builtin_defaults = true;
  const std::vector<Threshold> own = parse_entries(doc, builtin_defaults);
  t.entries_ = own;
  if (builtin_defaults) {
    for (const Threshold& b : builtin().entries_) {
      const bool overridden = std::any_of(
          own.begin(), own.end(), [&](const Threshold& o) { return o.pattern == b.pattern; });
      if (!overridden) t.entries_.push_back(b);
    }
    t.source_ += " + built-in defaults";
  }
  return t;
}

Thresholds Thresholds::parse(const std::string& text, const std::string& name) {
  return from_document(YamlNode::load_string(text, name), name);
}

Thresholds Thresholds::builtin() {
  static const Thresholds b = [] {
    Thresholds t;
    bool ignored = false;
    t.entries_ =
        parse_entries(YamlNode::load_string(builtin_thresholds_yaml(), "built-in"), ignored);
    t.source_ = "built-in defaults";
    return t;
  }();
  return b;
}

Thresholds Thresholds::load(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw InputError(InputErrorKind::kMissing, InputLocation{path, 0, 0, ""},
                     "no such thresholds file");
  }
  return from_document(YamlNode::load_file(path), path);
}

const Threshold* Thresholds::find(const std::string& metric) const {
  for (const Threshold& t : entries_) {
    if (!is_glob(t.pattern) && t.pattern == metric) return &t;
  }
  for (const Threshold& t : entries_) {
    if (is_glob(t.pattern) && glob_match(t.pattern, metric)) return &t;
  }
  return nullptr;
}

int CheckPair::regressions() const {
  return static_cast<int>(std::count_if(results.begin(), results.end(), [](const CheckResult& r) {
    return r.verdict == Verdict::kRegression;
  }));
}

int CheckPair::skipped() const {
  return static_cast<int>(std::count_if(results.begin(), results.end(), [](const CheckResult& r) {
    return r.verdict == Verdict::kSkipped;
  }));
}

int CheckReport::regressions() const {
  int n = 0;
  for (const CheckPair& p : pairs)
    n += p.regressions();
  return n;
}

int CheckReport::checks() const {
  int n = 0;
  for (const CheckPair& p : pairs)
    n += static_cast<int>(p.results.size());
  return n;
}

CheckReport run_check(const std::vector<LoadedRun>& baseline,
                      const std::vector<LoadedRun>& candidate, const Thresholds& thresholds,
                      const std::string& baseline_file, const std::string& candidate_file) {
  CheckReport report;
  report.thresholds_source = thresholds.source();
  const std::vector<Variant> base = group_variants(baseline);
  const std::vector<Variant> cand = group_variants(candidate);
  if (base.size() == 1 && cand.size() == 1) {
    report.pairs.push_back(check_pair(base[0], cand[0], thresholds));
    return report;
  }
  // Several variants: pair them by scenario name, one to one.
  auto fail = [](const std::string& file, const std::string& message) {
    throw InputError(InputErrorKind::kInvalid, InputLocation{file, 0, 0, ""}, message);
  };
  std::map<std::string, int> base_count, cand_count;
  for (const Variant& v : base)
    ++base_count[v.scenario];
  for (const Variant& v : cand)
    ++cand_count[v.scenario];
  for (const auto& [s, n] : base_count) {
    if (n > 1) {
      fail(baseline_file,
           fmt::format("holds {} variants of scenario '{}' (different profiles or overrides); "
                       "check compares one variant per scenario: put each in its own file",
                       n, s));
    }
    if (!cand_count.count(s)) {
      fail(candidate_file, fmt::format("has no run of scenario '{}', which the baseline has", s));
    }
  }
  for (const auto& [s, n] : cand_count) {
    if (n > 1) {
      fail(candidate_file,
           fmt::format("holds {} variants of scenario '{}' (different profiles or overrides); "
                       "check compares one variant per scenario: put each in its own file",
                       n, s));
    }
    if (!base_count.count(s)) {
      fail(baseline_file, fmt::format("has no run of scenario '{}', which the candidate has", s));
    }
  }
  for (const Variant& b : base) {
    for (const Variant& c : cand) {
      if (c.scenario == b.scenario) report.pairs.push_back(check_pair(b, c, thresholds));
    }
  }
  return report;
}

std::string render_check_text(const CheckReport& r) {
  std::string out;
  for (const CheckPair& p : r.pairs) {
    out += fmt::format("baseline:  {}\ncandidate: {}\n", variant_text(p.baseline),
                       variant_text(p.candidate));
    std::vector<std::array<std::string, 7>> rows;
    rows.push_back({"metric", "better", "baseline", "candidate", "change", "allowed", "verdict"});
    for (const CheckResult& c : p.results) {
      rows.push_back({c.metric, direction_text(c.threshold.direction), stat_text(c.baseline),
                      stat_text(c.candidate),
                      c.verdict == Verdict::kSkipped || c.baseline.n == 0 || c.candidate.n == 0
                          ? "—"
                          : signed_figure(c.change.difference),
                      c.verdict == Verdict::kSkipped ? "—" : figure(c.allowed),
                      c.verdict == Verdict::kRegression
                          ? "REGRESSION"
                          : (c.verdict == Verdict::kSkipped ? "skipped" : "ok")});
    }
    std::array<std::size_t, 7> w{};
    auto width = [](const std::string& s) {
      std::size_t n = 0;
      for (char ch : s)
        n += (static_cast<unsigned char>(ch) & 0xC0) != 0x80 ? 1 : 0;
      return n;
    };
    for (const auto& row : rows) {
      for (std::size_t j = 0; j < row.size(); ++j)
        w[j] = std::max(w[j], width(row[j]));
    }
    for (const auto& row : rows) {
      std::string line;
      for (std::size_t j = 0; j < row.size(); ++j) {
        line += row[j];
        if (j + 1 < row.size()) line += std::string(w[j] - width(row[j]) + 2, ' ');
      }
      out += line + "\n";
    }
    for (const CheckResult& c : p.results) {
      if (c.verdict == Verdict::kRegression) out += "  regression: " + c.message + "\n";
    }
    out += "\n";
  }
  out += fmt::format("capsim check: {} regression{} in {} check{} (thresholds: {})\n",
                     r.regressions(), r.regressions() == 1 ? "" : "s", r.checks(),
                     r.checks() == 1 ? "" : "s", r.thresholds_source);
  return out;
}

std::string render_check_markdown(const CheckReport& r) {
  const int n = r.regressions();
  std::string out =
      n > 0 ? fmt::format("## capsim check: FAILED — {} regression{}\n\n", n, n == 1 ? "" : "s")
            : fmt::format("## capsim check: passed ({} checks)\n\n", r.checks());
  out += fmt::format(
      "Thresholds: {}. Values are means over seeds (± the 95 % confidence interval when a side "
      "has several seeds).\n\n",
      markdown_cell(r.thresholds_source));
  for (const CheckPair& p : r.pairs) {
    out += fmt::format("### {} → {}\n\n", markdown_cell(variant_text(p.baseline)),
                       markdown_cell(variant_text(p.candidate)));
    auto table = [&](bool failing) {
      std::string t =
          "| metric | better | baseline | candidate | change | allowed | verdict |\n"
          "|---|---|---:|---:|---:|---:|---|\n";
      int rows = 0;
      for (const CheckResult& c : p.results) {
        if ((c.verdict == Verdict::kRegression) != failing) continue;
        ++rows;
        t += fmt::format("| `{}` | {} | {} | {} | {} | {} | {} |\n", c.metric,
                         direction_text(c.threshold.direction), stat_text(c.baseline),
                         stat_text(c.candidate),
                         c.baseline.n && c.candidate.n
                             ? fmt::format("{} ({})", signed_figure(c.change.difference),
                                           percent_change(c.change.difference, c.baseline.mean))
                             : "—",
                         c.verdict == Verdict::kSkipped ? "—" : figure(c.allowed),
                         c.verdict == Verdict::kRegression
                             ? "**regression**"
                             : (c.verdict == Verdict::kSkipped ? "skipped" : "ok"));
      }
      return rows > 0 ? t : std::string();
    };
    const std::string failing = table(true);
    if (!failing.empty()) out += "Regressions:\n\n" + failing + "\n";
    const std::string passing = table(false);
    if (!passing.empty()) {
      out += fmt::format(
          "<details><summary>{} passing or skipped checks</summary>\n\n{}\n</details>\n\n",
          p.results.size() - static_cast<std::size_t>(p.regressions()), passing);
    }
  }
  return out;
}

std::string render_junit(const CheckReport& r) {
  int tests = 0, failures = 0, skipped = 0;
  for (const CheckPair& p : r.pairs) {
    tests += static_cast<int>(p.results.size());
    failures += p.regressions();
    skipped += p.skipped();
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format(
      "<testsuites name=\"capsim check\" tests=\"{}\" failures=\"{}\" errors=\"0\" "
      "skipped=\"{}\">\n",
      tests, failures, skipped);
  for (const CheckPair& p : r.pairs) {
    const std::string suite =
        fmt::format("{}: {} vs {}", p.baseline.scenario, p.baseline.profile, p.candidate.profile);
    out += fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\">\n",
        html_escape(suite), p.results.size(), p.regressions(), p.skipped());
    out += "    <properties>\n";
    out += fmt::format("      <property name=\"baseline\" value=\"{}\"/>\n",
                       html_escape(variant_text(p.baseline)));
    out += fmt::format("      <property name=\"candidate\" value=\"{}\"/>\n",
                       html_escape(variant_text(p.candidate)));
    out += fmt::format("      <property name=\"thresholds\" value=\"{}\"/>\n",
                       html_escape(r.thresholds_source));
    out += "    </properties>\n";
    const std::string classname = "capsim.check." + p.baseline.scenario;
    for (const CheckResult& c : p.results) {
      out += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\">",
                         html_escape(classname), html_escape(c.metric));
      const std::string detail = fmt::format(
          "metric: {}\ndirection: {}\nbaseline: {}\ncandidate: {}\nthreshold: {} ({})\n", c.metric,
          direction_text(c.threshold.direction), stat_text(c.baseline), stat_text(c.candidate),
          limits_text(c.threshold),
          c.threshold.where.file == "built-in" ? "built-in" : c.threshold.where.to_string());
      if (c.verdict == Verdict::kRegression) {
        out += fmt::format("\n      <failure type=\"regression\" message=\"{}\">{}</failure>\n    ",
                           html_escape(c.message), html_escape(detail));
      } else if (c.verdict == Verdict::kSkipped) {
        out += fmt::format("<skipped message=\"{}\"/>", html_escape(c.message));
      } else {
        out += fmt::format("<system-out>{}</system-out>", html_escape(c.message));
      }
      out += "</testcase>\n";
    }
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

}  // namespace capsim
