#include "reports/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "reports/text/escape.hpp"
#include "reports/text/json.hpp"
#include "reports/text/number.hpp"

namespace capsim {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string letter(std::size_t i) {
  std::string s;
  do {
    s.insert(s.begin(), static_cast<char>('A' + i % 26));
    i /= 26;
  } while (i-- > 0);
  return s;
}

std::string cell(const MeanCi& s) {
  if (s.n == 0) return "—";
  if (s.n == 1 || std::isnan(s.half_width)) return figure(s.mean);
  return fmt::format("{} ± {}", figure(s.mean), figure(s.half_width));
}

std::string delta_cell(const CompareRow& r, std::size_t v) {
  const MeanCi& a = r.stats[0];
  const MeanCi& b = r.stats[v];
  if (a.n == 0 || b.n == 0) return "—";
  const DifferenceCi& d = r.vs_first[v];
  std::string s = signed_figure(d.difference);
  if (d.difference != 0) s += fmt::format(" ({})", percent_change(d.difference, a.mean));
  if (!std::isnan(d.half_width) && d.half_width > 0) {
    s += fmt::format(" ±{}", figure(d.half_width));
    if (r.significant[v]) s += " sig.";
  }
  return s;
}

}  // namespace

bool glob_match(std::string_view p, std::string_view t) {
  // Iterative wildcard match with backtracking to the last '*'.
  std::size_t pi = 0, ti = 0, star = std::string_view::npos, mark = 0;
  while (ti < t.size()) {
    if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = ti;
    } else if (pi < p.size() && p[pi] == t[ti]) {
      ++pi;
      ++ti;
    } else if (star != std::string_view::npos) {
      pi = star + 1;
      ti = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*')
    ++pi;
  return pi == p.size();
}

Comparison compare_variants(std::vector<Variant> variants,
                            const std::vector<std::string>& patterns) {
  Comparison c;
  c.variants = std::move(variants);
  for (const std::string& m : metric_names(c.variants)) {
    if (!patterns.empty() && std::none_of(patterns.begin(), patterns.end(),
                                          [&](const std::string& p) { return glob_match(p, m); })) {
      continue;
    }
    CompareRow r;
    r.metric = m;
    r.direction = metric_direction(m);
    for (const Variant& v : c.variants)
      r.stats.push_back(v.stat(m));
    // The better variant: the best mean by direction, if it is strictly better than all others.
    if (r.direction != Direction::kNeutral) {
      int best = -1;
      for (std::size_t i = 0; i < r.stats.size(); ++i) {
        if (r.stats[i].n == 0 || std::isnan(r.stats[i].mean)) continue;
        if (best < 0 || better_of(r.stats[static_cast<std::size_t>(best)].mean, r.stats[i].mean,
                                  r.direction) > 0) {
          best = static_cast<int>(i);
        }
      }
      bool strict = best >= 0;
      for (std::size_t i = 0; strict && i < r.stats.size(); ++i) {
        if (static_cast<int>(i) == best || r.stats[i].n == 0) continue;
        strict = better_of(r.stats[static_cast<std::size_t>(best)].mean, r.stats[i].mean,
                           r.direction) < 0;
      }
      int present = 0;
      for (const MeanCi& s : r.stats)
        present += s.n > 0 ? 1 : 0;
      r.best = strict && present > 1 ? best : -1;
    }
    for (std::size_t i = 0; i < r.stats.size(); ++i) {
      const DifferenceCi d = welch_ci95(r.stats[0], r.stats[i]);
      r.vs_first.push_back(d);
      r.significant.push_back(i > 0 && !std::isnan(d.half_width) &&
                              std::fabs(d.difference) > d.half_width);
    }
    c.rows.push_back(std::move(r));
  }
  return c;
}

std::string render_compare_text(const Comparison& c) {
  std::string out = fmt::format(
      "capsim compare: {} variant(s), means with 95 % confidence intervals over "
      "seeds (Student t); * marks the better value\n\n",
      c.variants.size());
  for (std::size_t i = 0; i < c.variants.size(); ++i) {
    const Variant& v = c.variants[i];
    out += fmt::format("  {}  {}  ({} run{}, seed{} {})\n", letter(i), v.label, v.runs.size(),
                       v.runs.size() == 1 ? "" : "s", v.runs.size() == 1 ? "" : "s",
                       seed_list(v.seeds()));
  }
  out += "\n";
  // Columns: metric, better, one per variant, then one delta per later variant.
  std::vector<std::vector<std::string>> table;
  std::vector<std::string> head = {"metric", "better"};
  for (std::size_t i = 0; i < c.variants.size(); ++i)
    head.push_back(letter(i));
  for (std::size_t i = 1; i < c.variants.size(); ++i)
    head.push_back(fmt::format("{} - A", letter(i)));
  table.push_back(head);
  for (const CompareRow& r : c.rows) {
    std::vector<std::string> row = {r.metric, r.direction == Direction::kNeutral
                                                  ? ""
                                                  : std::string(direction_name(r.direction))};
    for (std::size_t i = 0; i < r.stats.size(); ++i)
      row.push_back(cell(r.stats[i]) + (r.best == static_cast<int>(i) ? " *" : ""));
    for (std::size_t i = 1; i < r.stats.size(); ++i)
      row.push_back(delta_cell(r, i));
    table.push_back(std::move(row));
  }
  std::vector<std::size_t> width(head.size(), 0);
  for (const auto& row : table) {
    for (std::size_t j = 0; j < row.size(); ++j) {
      // Count code points, not bytes (the table uses "±" and "—").
      std::size_t n = 0;
      for (char ch : row[j])
        n += (static_cast<unsigned char>(ch) & 0xC0) != 0x80 ? 1 : 0;
      width[j] = std::max(width[j], n);
    }
  }
  for (const auto& row : table) {
    std::string line;
    for (std::size_t j = 0; j < row.size(); ++j) {
      std::size_t n = 0;
      for (char ch : row[j])
        n += (static_cast<unsigned char>(ch) & 0xC0) != 0x80 ? 1 : 0;
      line += row[j];
      if (j + 1 < row.size()) line += std::string(width[j] - n + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string render_compare_markdown(const Comparison& c) {
  std::string out = "## capsim compare\n\n";
  out += "| | variant | runs | seeds |\n|---|---|---:|---|\n";
  for (std::size_t i = 0; i < c.variants.size(); ++i) {
    const Variant& v = c.variants[i];
    out += fmt::format("| {} | {} | {} | {} |\n", letter(i), markdown_cell(v.label), v.runs.size(),
                       seed_list(v.seeds()));
  }
  out +=
      "\nMeans with 95 % confidence intervals over seeds (Student t); the better value is in "
      "bold. `sig.`: Welch's 95 % interval of the change excludes zero.\n\n";
  out += "| metric | better |";
  for (std::size_t i = 0; i < c.variants.size(); ++i)
    out += fmt::format(" {} |", letter(i));
  for (std::size_t i = 1; i < c.variants.size(); ++i)
    out += fmt::format(" {} − A |", letter(i));
  out += "\n|---|---|";
  for (std::size_t i = 0; i < 2 * c.variants.size() - 1; ++i)
    out += "---:|";
  out += "\n";
  for (const CompareRow& r : c.rows) {
    out += fmt::format("| `{}` | {} |", r.metric,
                       r.direction == Direction::kNeutral ? "" : direction_name(r.direction));
    for (std::size_t i = 0; i < r.stats.size(); ++i) {
      const std::string v = cell(r.stats[i]);
      out += r.best == static_cast<int>(i) ? fmt::format(" **{}** |", v) : fmt::format(" {} |", v);
    }
    for (std::size_t i = 1; i < r.stats.size(); ++i)
      out += fmt::format(" {} |", delta_cell(r, i));
    out += "\n";
  }
  return out;
}

std::string render_compare_json(const Comparison& c) {
  std::string out = "{\n  \"variants\": [";
  for (std::size_t i = 0; i < c.variants.size(); ++i) {
    const Variant& v = c.variants[i];
    out += fmt::format(
        "{}\n    {{\"id\": {}, \"label\": {}, \"scenario\": {}, \"profile\": {}, "
        "\"scenario_sha256\": {}, \"overrides\": {}, \"runs\": [",
        i ? "," : "", json_quote(letter(i)), json_quote(v.label), json_quote(v.scenario),
        json_quote(v.profile), json_quote(v.sha256), json_quote(v.overrides));
    for (std::size_t j = 0; j < v.runs.size(); ++j) {
      out += fmt::format("{}{{\"file\": {}, \"run_id\": {}, \"seed\": {}}}", j ? ", " : "",
                         json_quote(v.runs[j].file), v.runs[j].row.run_id, v.runs[j].row.seed);
    }
    out += "]}";
  }
  out += "\n  ],\n  \"metrics\": [";
  for (std::size_t k = 0; k < c.rows.size(); ++k) {
    const CompareRow& r = c.rows[k];
    out += fmt::format("{}\n    {{\"metric\": {}, \"direction\": {}, \"better\": {}, \"values\": [",
                       k ? "," : "", json_quote(r.metric),
                       json_quote(std::string(direction_name(r.direction))),
                       r.best >= 0 ? json_quote(letter(static_cast<std::size_t>(r.best))) : "null");
    for (std::size_t i = 0; i < r.stats.size(); ++i) {
      const MeanCi& s = r.stats[i];
      const DifferenceCi& d = r.vs_first[i];
      out += fmt::format(
          "{}{{\"n\": {}, \"mean\": {}, \"stddev\": {}, \"ci95_low\": {}, \"ci95_high\": {}, "
          "\"delta\": {}, \"delta_ci95_half_width\": {}, \"significant\": {}}}",
          i ? ", " : "", s.n, json_number(s.n ? s.mean : kNaN), json_number(s.stddev),
          json_number(s.n ? s.low() : kNaN), json_number(s.n ? s.high() : kNaN),
          json_number(s.n && r.stats[0].n ? d.difference : kNaN), json_number(d.half_width),
          r.significant[i] ? "true" : "false");
    }
    out += "]}";
  }
  out += "\n  ]\n}\n";
  return out;
}

}  // namespace capsim
