#include "reports/sweep_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "reports/compare.hpp"
#include "reports/run_reader.hpp"
#include "reports/svg_chart.hpp"
#include "reports/text/escape.hpp"
#include "reports/text/number.hpp"
#include "sim/input_error.hpp"

namespace capsim {

namespace {

bool is_number(const std::string& s) {
  if (s.empty()) return false;
  try {
    std::size_t used = 0;
    (void)std::stod(s, &used);
    return used == s.size();
  } catch (const std::logic_error&) {
    return false;
  }
}

std::string cell_text(const MeanCi& m) {
  if (m.n == 0) return "n/a";
  if (m.n == 1) return figure(m.mean);
  return fmt::format("{} ± {}", figure(m.mean), figure(m.half_width));
}

std::string axis_value(const AxisValues& axes, const std::string& name) {
  for (const auto& [k, v] : axes) {
    if (k == name) return v;
  }
  return "";
}

}  // namespace

std::vector<std::string> default_sweep_metrics() {
  return {"cost_total_usd",     "max(queue.*.wait_seconds_p95)",
          "wait_seconds_p95",   "gpu_allocation_ratio_mean",
          "pods_unschedulable", "oom_kills"};
}

double metric_value(const std::string& e, const std::vector<std::pair<std::string, double>>& s) {
  const bool is_max = e.rfind("max(", 0) == 0, is_min = e.rfind("min(", 0) == 0;
  if ((is_max || is_min) && e.back() == ')') {
    const std::string pattern = e.substr(4, e.size() - 5);
    double out = std::numeric_limits<double>::quiet_NaN();
    for (const auto& [k, v] : s) {
      if (!glob_match(pattern, k) || std::isnan(v)) continue;
      if (std::isnan(out) || (is_max ? v > out : v < out)) out = v;
    }
    return out;
  }
  for (const auto& [k, v] : s) {
    if (k == e) return v;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

SweepTable load_sweep_table(const std::string& file, const std::vector<std::string>& metrics) {
  RunReader reader(file);
  SweepTable t;
  const auto info = read_sweep_info(reader.db());
  if (!info) {
    throw InputError(InputErrorKind::kInvalid, InputLocation{file, 0, 0, ""},
                     "not a sweep file (no sweep table; `capsim sweep` and `capsim plan -o` "
                     "write them)");
  }
  t.info = *info;
  t.metrics = metrics.empty() ? default_sweep_metrics() : metrics;
  const auto axes = read_variant_axes(reader.db());
  std::map<AxisValues, std::size_t> index;
  std::vector<std::vector<Summary>> summaries;
  for (const RunRow& row : reader.runs()) {
    reader.require_complete(row.run_id);
    AxisValues a;
    if (auto it = axes.find(row.run_id); it != axes.end()) {
      for (const auto& [k, v] : it->second) {
        if (k == "seed") continue;
        a.emplace_back(k, v);
        if (std::find(t.axes.begin(), t.axes.end(), k) == t.axes.end()) t.axes.push_back(k);
      }
    }
    auto [it, added] = index.emplace(a, t.cells.size());
    if (added) {
      t.cells.push_back(SweepCell{a, {}, {}, {}});
      summaries.emplace_back();
    }
    t.cells[it->second].runs.push_back(row.run_id);
    t.cells[it->second].seeds.push_back(row.seed);
    summaries[it->second].push_back(reader.summary(row.run_id));
  }
  for (std::size_t c = 0; c < t.cells.size(); ++c) {
    for (const std::string& m : t.metrics) {
      std::vector<double> values;
      for (const Summary& s : summaries[c]) {
        const double v = metric_value(m, s);
        if (!std::isnan(v)) values.push_back(v);
      }
      t.cells[c].stats.push_back(mean_ci95(values));
    }
  }
  return t;
}

std::string render_sweep_text(const SweepTable& t) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head = t.axes;
  head.push_back("seeds");
  for (const auto& m : t.metrics)
    head.push_back(m);
  rows.push_back(head);
  for (const SweepCell& c : t.cells) {
    std::vector<std::string> r;
    for (const auto& a : t.axes)
      r.push_back(axis_value(c.axes, a));
    r.push_back(std::to_string(c.runs.size()));
    for (const MeanCi& s : c.stats)
      r.push_back(cell_text(s));
    rows.push_back(r);
  }
  std::vector<std::size_t> w(head.size(), 0);
  for (const auto& r : rows) {
    for (std::size_t i = 0; i < r.size(); ++i)
      w[i] = std::max(w[i], r[i].size());
  }
  std::string out = fmt::format("sweep {} ({}): {} variants over {} runs\n\n", t.info.name,
                                t.info.sweep_id.substr(0, 12), t.cells.size(), t.info.variants);
  for (const auto& r : rows) {
    for (std::size_t i = 0; i < r.size(); ++i) {
      const bool num = i >= t.axes.size();
      out += num ? fmt::format("{:>{}}", r[i], w[i]) : fmt::format("{:<{}}", r[i], w[i]);
      out += i + 1 < r.size() ? "  " : "\n";
    }
  }
  return out;
}

std::string render_sweep_markdown(const SweepTable& t) {
  std::string out = fmt::format("# Sweep {}\n\n{} variants, mean ± 95 % interval over seeds.\n\n",
                                t.info.name, t.cells.size());
  std::vector<std::string> head = t.axes;
  head.push_back("seeds");
  for (const auto& m : t.metrics)
    head.push_back("`" + markdown_cell(m) + "`");
  out += "| " + fmt::format("{}", fmt::join(head, " | ")) + " |\n|";
  for (std::size_t i = 0; i < head.size(); ++i)
    out += i < t.axes.size() ? "---|" : "---:|";
  out += "\n";
  for (const SweepCell& c : t.cells) {
    std::vector<std::string> r;
    for (const auto& a : t.axes)
      r.push_back(markdown_cell(axis_value(c.axes, a)));
    r.push_back(std::to_string(c.runs.size()));
    for (const MeanCi& s : c.stats)
      r.push_back(cell_text(s));
    out += "| " + fmt::format("{}", fmt::join(r, " | ")) + " |\n";
  }
  return out;
}

std::string render_sweep_html(const SweepTable& t, const SweepChartOptions& o) {
  auto known = [&](const std::string& a) {
    return std::find(t.axes.begin(), t.axes.end(), a) != t.axes.end();
  };
  auto numeric = [&](const std::string& a) {
    for (const SweepCell& c : t.cells) {
      if (!is_number(axis_value(c.axes, a))) return false;
    }
    return true;
  };
  for (const std::string& a : {o.x_axis, o.line_axis}) {
    if (!a.empty() && a != "-" && !known(a)) {
      throw InputError(
          InputErrorKind::kInvalid, InputLocation{"--x/--lines", 0, 0, ""},
          fmt::format("the sweep has no axis '{}' (axes: {})", a, fmt::join(t.axes, ", ")));
    }
  }
  for (const auto& [a, v] : o.fixed) {
    if (!known(a)) {
      throw InputError(
          InputErrorKind::kInvalid, InputLocation{"--fix", 0, 0, ""},
          fmt::format("the sweep has no axis '{}' (axes: {})", a, fmt::join(t.axes, ", ")));
    }
  }
  std::string x = o.x_axis;
  if (x.empty()) {
    for (const auto& a : t.axes) {
      if (numeric(a)) {
        x = a;
        break;
      }
    }
  }
  if (!x.empty() && !numeric(x)) {
    throw InputError(InputErrorKind::kInvalid, InputLocation{"--x", 0, 0, ""},
                     fmt::format("axis '{}' has values that are not numbers", x));
  }
  std::string line = o.line_axis;
  if (line.empty()) {
    for (const auto& a : t.axes) {
      if (a != x && !numeric(a)) {
        line = a;
        break;
      }
    }
  }
  if (line == "-") line.clear();

  // Cells that pass the filters, grouped into panels by the remaining axes.
  std::map<AxisValues, std::vector<const SweepCell*>> panels;
  std::vector<AxisValues> panel_order;
  for (const SweepCell& c : t.cells) {
    bool keep = true;
    for (const auto& [a, v] : o.fixed)
      keep = keep && axis_value(c.axes, a) == v;
    if (!keep) continue;
    AxisValues rest;
    for (const auto& [a, v] : c.axes) {
      bool fixed = false;
      for (const auto& f : o.fixed)
        fixed = fixed || f.first == a;
      if (a != x && a != line && !fixed) rest.emplace_back(a, v);
    }
    if (!panels.count(rest)) panel_order.push_back(rest);
    panels[rest].push_back(&c);
  }

  std::string html =
      "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>capsim sweep " +
      html_escape(t.info.name) +
      "</title><style>body{font-family:system-ui,sans-serif;color:#1d2330;margin:24px;max-width:"
      "1200px}h1{font-size:22px}h2{font-size:17px;margin-top:28px}.grid2{display:grid;grid-"
      "template-columns:repeat(auto-fit,minmax(520px,1fr));gap:8px 24px}svg.chart{display:block;"
      "max-width:100%;height:auto;overflow:visible}svg .grid{stroke:#e8ebf0}svg .axis{stroke:"
      "#9aa3b2}svg .tick{fill:#5d6678;font-size:11px}svg .legend{fill:#1d2330;font-size:11.5px}"
      "svg .ylabel{fill:#5d6678;font-size:11px}table{border-collapse:collapse;font-size:13px}th,"
      "td{padding:4px 8px;border-bottom:1px solid #e3e6eb;text-align:right}th{color:#5d6678}"
      "td.a,th.a{text-align:left}p.note{color:#5d6678;font-size:13px}</style></head><body>";
  html += fmt::format(
      "<h1>Sweep {}</h1><p class=\"note\">{} variants, {} runs; sweep id "
      "<code>{}</code>; scenario <code>{}</code>. Points are means over seeds.</p>",
      html_escape(t.info.name), t.cells.size(), t.info.variants,
      html_escape(t.info.sweep_id.substr(0, 16)), html_escape(t.info.scenario));
  if (!x.empty()) {
    for (std::size_t m = 0; m < t.metrics.size(); ++m) {
      html +=
          fmt::format("<h2>{} vs {}{}</h2><div class=\"grid2\">", html_escape(t.metrics[m]),
                      html_escape(x), line.empty() ? "" : ", one line per " + html_escape(line));
      for (const AxisValues& p : panel_order) {
        svg::LineChart chart;
        std::vector<std::string> title;
        for (const auto& [a, v] : p)
          title.push_back(a + "=" + v);
        chart.title = fmt::format("{} vs {} {}", t.metrics[m], x, fmt::join(title, ", "));
        chart.y_label =
            t.metrics[m] + (title.empty() ? "" : fmt::format("  ({})", fmt::join(title, ", ")));
        chart.x_label = x;
        chart.x_axis = svg::XAxis::kLinear;
        std::vector<std::string> line_values;
        std::map<std::string, svg::Series> series;
        for (const SweepCell* c : panels[p]) {
          const std::string lv = line.empty() ? t.metrics[m] : axis_value(c->axes, line);
          if (!series.count(lv)) {
            line_values.push_back(lv);
            series[lv].name = lv;
            series[lv].color = svg::palette(line_values.size() - 1);
          }
          if (c->stats[m].n == 0) continue;
          series[lv].x.push_back(std::stod(axis_value(c->axes, x)));
          series[lv].y.push_back(c->stats[m].mean);
        }
        for (const std::string& lv : line_values) {
          svg::Series s = series[lv];
          std::vector<std::size_t> idx(s.x.size());
          for (std::size_t i = 0; i < idx.size(); ++i)
            idx[i] = i;
          std::sort(idx.begin(), idx.end(),
                    [&](std::size_t a, std::size_t b) { return s.x[a] < s.x[b]; });
          svg::Series sorted = s;
          for (std::size_t i = 0; i < idx.size(); ++i) {
            sorted.x[i] = s.x[idx[i]];
            sorted.y[i] = s.y[idx[i]];
          }
          chart.series.push_back(std::move(sorted));
        }
        html += "<div>" + svg::line_chart(chart) + "</div>";
      }
      html += "</div>";
    }
  }
  html += "<h2>Every variant</h2><table><tr>";
  for (const auto& a : t.axes)
    html += "<th class=\"a\">" + html_escape(a) + "</th>";
  html += "<th>seeds</th>";
  for (const auto& m : t.metrics)
    html += "<th>" + html_escape(m) + "</th>";
  html += "</tr>";
  for (const SweepCell& c : t.cells) {
    html += "<tr>";
    for (const auto& a : t.axes)
      html += "<td class=\"a\">" + html_escape(axis_value(c.axes, a)) + "</td>";
    html += fmt::format("<td>{}</td>", c.runs.size());
    for (const MeanCi& s : c.stats)
      html += "<td>" + html_escape(cell_text(s)) + "</td>";
    html += "</tr>";
  }
  html += "</table></body></html>\n";
  return html;
}

}  // namespace capsim
