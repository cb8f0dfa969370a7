#include "reports/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "reports/metric_direction.hpp"
#include "reports/schema.hpp"
#include "reports/svg_chart.hpp"
#include "reports/text/escape.hpp"
#include "reports/text/number.hpp"
#include "sim/check.hpp"
#include "sim/metric_catalog.hpp"
#include "sim/time.hpp"

namespace capsim {

namespace {

constexpr std::string_view kCss = R"css(
:root { --ink: #1d2330; --muted: #5d6678; --line: #dde2ea; --bg: #f6f7f9; --card: #ffffff;
        --accent: #0072B2; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink);
       font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
main { max-width: 1240px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 0 0 2px; }
h3 { font-size: 14px; margin: 0 0 6px; color: var(--muted); font-weight: 600; }
p.lead, p.note { color: var(--muted); margin: 2px 0 12px; }
p.note { font-size: 12.5px; }
section { background: var(--card); border: 1px solid var(--line); border-radius: 10px;
          padding: 18px 20px; margin: 18px 0; }
.meta { color: var(--muted); font-size: 13px; }
.meta b { color: var(--ink); font-weight: 600; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(185px, 1fr)); gap: 12px;
         margin-top: 16px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px;
        padding: 12px 14px; }
.card .label { color: var(--muted); font-size: 12.5px; }
.card .value { font-size: 22px; font-weight: 650; margin-top: 2px; white-space: nowrap; }
.card .value .unit { font-size: 13px; font-weight: 500; color: var(--muted); margin-left: 3px; }
.card .sub { color: var(--muted); font-size: 12px; margin-top: 2px; }
.grid2 { display: grid; grid-template-columns: repeat(auto-fit, minmax(520px, 1fr)); gap: 8px 24px; }
.split { display: grid; grid-template-columns: minmax(560px, 1.3fr) minmax(300px, 1fr); gap: 24px;
         align-items: start; }
svg.chart { display: block; max-width: 100%; height: auto; overflow: visible; }
svg .grid { stroke: #e8ebf0; stroke-width: 1; }
svg .axis { stroke: #9aa3b2; stroke-width: 1; }
svg .tick { fill: #5d6678; font-size: 11px; }
svg .legend { fill: #1d2330; font-size: 11.5px; }
svg .ylabel { fill: #5d6678; font-size: 11px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line);
         vertical-align: top; }
th { color: var(--muted); font-weight: 600; font-size: 12px; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.hint { color: var(--muted); font-size: 12px; margin-left: 4px; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px;
          margin-right: 6px; vertical-align: -1px; }
code { font-size: 12px; background: #f0f2f5; padding: 1px 4px; border-radius: 4px; }
details summary { cursor: pointer; color: var(--accent); margin: 4px 0; }
footer { color: var(--muted); font-size: 12px; margin-top: 24px; }
)css";

std::string span(const ReportData& d, const std::string& metric) {
  if (!d.has(metric)) return R"(<span class="num">n/a</span>)";
  const double v = d.metric(metric);
  return fmt::format(R"(<span class="num" data-metric="{}" data-value="{}">{}</span>)",
                     html_escape(metric), exact_number(v), figure(v));
}

std::string percent_text(double ratio) {
  if (!std::isfinite(ratio)) return "";
  return fmt::format("{:.1f} %", ratio * 100);
}

std::string seconds_hint(double s) {
  if (!std::isfinite(s) || s < 60) return "";
  return fmt::format("= {};", human_seconds(s));
}

std::string card(const std::string& label, const std::string& value_html, const std::string& unit,
                 const std::string& sub) {
  return fmt::format(
      R"(<div class="card"><div class="label">{}</div><div class="value">{}{}</div>{}</div>)",
      html_escape(label), value_html,
      unit.empty() ? "" : fmt::format(R"(<span class="unit">{}</span>)", html_escape(unit)),
      sub.empty() ? "" : fmt::format(R"(<div class="sub">{}</div>)", sub));
}

std::string pool_title(const std::string& pool) {
  return pool.empty() ? "(no pool)" : pool;
}

std::vector<double> times_of(const std::vector<SampleRecord>& s) {
  std::vector<double> x;
  x.reserve(s.size());
  for (const SampleRecord& r : s)
    x.push_back(to_seconds(r.time));
  return x;
}

template <typename Get>
std::vector<double> column(const std::vector<SampleRecord>& s, Get get) {
  std::vector<double> y;
  y.reserve(s.size());
  for (const SampleRecord& r : s)
    y.push_back(get(r));
  return y;
}

svg::LineChart allocation_chart(const std::string& title, std::vector<double> t,
                                std::vector<double> total, std::vector<double> allocated,
                                std::vector<double> busy) {
  svg::LineChart c;
  c.title = title;
  c.y_label = "GPUs";
  c.width = 580;
  c.height = 205;
  double cap = 0;
  for (double v : total)
    cap = std::max(cap, v);
  if (cap > 0) c.y_max = cap;
  c.series.push_back({"allocated", svg::kBlue, svg::SeriesStyle::kArea, t, std::move(allocated)});
  c.series.push_back({"busy", svg::kOrange, svg::SeriesStyle::kLine, t, std::move(busy)});
  c.series.push_back({"total", svg::kGrey, svg::SeriesStyle::kDashed, t, std::move(total)});
  return c;
}

// ---- sections ------------------------------------------------------------------------------

std::string header(const ReportData& d) {
  const RunRow& r = d.run;
  std::string out = fmt::format("<h1>capsim report — {}</h1>\n", html_escape(r.scenario));
  out += fmt::format(
      R"(<div class="meta">run <b>{}</b> · seed <b>{}</b> · profile <b>{}</b> · simulated <b>{}</b> in {} s wall · capsim {} · <code>{}</code></div>)",
      r.run_id, r.seed, html_escape(r.profile.empty() ? "(default)" : r.profile),
      html_escape(format_duration(from_seconds(r.sim_seconds))), figure(r.wall_seconds),
      html_escape(r.capsim_version), html_escape(d.file));
  out += "\n";
  if (!r.overrides.empty()) {
    std::string o = r.overrides;
    while (!o.empty() && o.back() == '\n')
      o.pop_back();
    std::replace(o.begin(), o.end(), '\n', ' ');
    out += fmt::format(R"(<div class="meta">overrides: <code>{}</code></div>)", html_escape(o));
  }
  if (r.record != RecordLevel::kFull) {
    out += fmt::format(
        R"(<div class="meta">recorded: <b>{}</b> ({}); sections drawn from what it left out say so</div>)",
        record_level_name(r.record),
        r.record == RecordLevel::kSummary ? "no pod rows, no events" : "no events");
    out += "\n";
  }
  return out;
}

// The body of a section whose rows the run's --record level left out ("" when they were kept):
// a plain sentence instead of an empty chart that would read as zero.
std::string not_recorded_section(const ReportData& d, RecordLevel needs, std::string_view what) {
  if (d.run.record >= needs) return {};
  return fmt::format(R"(<p class="lead">{}: {} come from {}, which {} keeps.</p></section>)",
                     html_escape(not_recorded_note(d.run.record)), what,
                     needs == RecordLevel::kFull ? "the events" : "the pod rows",
                     needs == RecordLevel::kFull ? "only --record full" : "--record pods or full") +
         "\n";
}

// How each headline metric (MetricDef::headline in sim/metric_catalog.cpp) reads as a card: its
// label, the unit after the value, and the line below it, which adds related metrics. Which
// metrics are cards, and in which order, is the catalog's to say.
struct CardText {
  std::string_view metric, label, unit;
  std::string (*sub)(const ReportData&);
};

constexpr CardText kCardTexts[] = {
    {"pods_completed", "Pods completed", "",
     [](const ReportData& d) { return fmt::format("of {} that arrived", span(d, "pods_total")); }},
    {"gpu_allocation_ratio_mean", "GPU allocation, mean", "",
     [](const ReportData& d) {
       return percent_text(d.metric("gpu_allocation_ratio_mean")) + " of GPU time allocated";
     }},
    {"gpu_utilization_ratio_mean", "GPU utilisation, mean", "",
     [](const ReportData& d) {
       return percent_text(d.metric("gpu_utilization_ratio_mean")) + " of GPU time busy";
     }},
    {"wait_seconds_p95", "Wait, p95", "s",
     [](const ReportData& d) {
       return seconds_hint(d.metric("wait_seconds_p95")) + " mean " + span(d, "wait_seconds_mean") +
              " s";
     }},
    {"jct_seconds_mean", "Job completion time, mean", "s",
     [](const ReportData& d) {
       return seconds_hint(d.metric("jct_seconds_mean")) + " slowdown " + span(d, "slowdown_mean");
     }},
    {"fragmentation_ratio_mean", "Fragmentation, mean", "",
     [](const ReportData& d) {
       return "of free GPU capacity; " + span(d, "fragmented_gpu_share_mean") + " of all";
     }},
    {"cost_total_usd", "Total cost", "USD",
     [](const ReportData& d) { return "idle " + span(d, "cost_idle_usd") + " USD"; }},
    {"cost_per_busy_gpu_hour_usd", "Cost per busy GPU-hour", "USD",
     [](const ReportData& d) { return span(d, "gpu_hours_busy") + " busy GPU-hours"; }},
    {"energy_kwh", "GPU energy", "kWh",
     [](const ReportData& d) { return "facility " + span(d, "energy_facility_kwh") + " kWh"; }},
    {"pods_pending_at_end", "Left waiting at the end", "pods",
     [](const ReportData& d) {
       return span(d, "pods_unschedulable") + " unschedulable, " + span(d, "pods_preempted") +
              " preempted";
     }},
};

std::string headline(const ReportData& d) {
  std::vector<const MetricDef*> cards;
  for (const MetricDef& m : metric_catalog()) {
    if (m.headline > 0) cards.push_back(&m);
  }
  std::sort(cards.begin(), cards.end(),
            [](const MetricDef* a, const MetricDef* b) { return a->headline < b->headline; });
  std::string out = R"(<div class="cards">)";
  for (const MetricDef* m : cards) {
    const auto text = std::find_if(std::begin(kCardTexts), std::end(kCardTexts),
                                   [&](const CardText& c) { return c.metric == m->name; });
    CAPSIM_CHECK(
        text != std::end(kCardTexts),
        fmt::format("headline metric {} has no card text in reports/html_report.cpp", m->name));
    const std::string metric(m->name);
    out += card(std::string(text->label), span(d, metric), std::string(text->unit), text->sub(d));
  }
  out += "</div>\n";
  return out;
}

std::string allocation_section(const ReportData& d) {
  std::string out = "<section id=\"gpus\"><h2>GPUs allocated and busy, by pool</h2>";
  out +=
      "<p class=\"lead\">Allocated: GPUs held by pods (the scheduler's view). Busy: the share of "
      "time the GPUs computed (DCGM's engine-active view). The dashed line is the pool's "
      "size.</p>";
  out += R"(<div class="grid2">)";
  const std::vector<double> t = times_of(d.samples);
  out += "<div><h3>All pools</h3>";
  out += svg::line_chart(
      allocation_chart("GPUs allocated and busy, all pools", t,
                       column(d.samples, [](const SampleRecord& r) { return r.gpus_total; }),
                       column(d.samples, [](const SampleRecord& r) { return r.gpus_allocated; }),
                       column(d.samples, [](const SampleRecord& r) { return r.gpus_busy; })));
  out += "</div>";
  for (const std::string& pool : d.pool_names()) {
    std::vector<double> pt, total, alloc, busy;
    for (const PoolSampleRecord& p : d.pool_samples) {
      if (p.pool != pool) continue;
      pt.push_back(to_seconds(p.time));
      total.push_back(p.gpus_total);
      alloc.push_back(p.gpus_allocated);
      busy.push_back(p.gpus_busy);
    }
    if (pt.empty() || total.front() <= 0) continue;
    std::string model;
    std::int64_t gpus = 0;
    for (const PoolInfo& info : d.pools) {
      if (info.pool != pool) continue;
      if (!info.gpu_model.empty()) model += (model.empty() ? "" : ", ") + info.gpu_model;
      gpus += info.gpus;
    }
    out += fmt::format("<div><h3>Pool {} · {} × {}</h3>", html_escape(pool_title(pool)), gpus,
                       html_escape(model));
    out += svg::line_chart(allocation_chart("GPUs allocated and busy, pool " + pool_title(pool), pt,
                                            total, alloc, busy));
    out += "</div>";
  }
  out += "</div>";
  if (d.pool_samples.empty()) {
    out +=
        "<p class=\"note\">This report file predates per-pool samples (the pool_sample table); "
        "only the cluster-wide chart is shown.</p>";
  }
  out += "</section>\n";
  return out;
}

std::string pending_section(const ReportData& d) {
  std::string out = "<section id=\"pending\"><h2>Pending pods over time</h2>";
  out +=
      "<p class=\"lead\">Pods waiting in the scheduling queue at each sample, next to the pods "
      "running.</p>";
  svg::LineChart c;
  c.title = "Pending and running pods over time";
  c.y_label = "pods";
  c.width = 1160;
  c.height = 200;
  const std::vector<double> t = times_of(d.samples);
  c.series.push_back({"pending", svg::kVermillion, svg::SeriesStyle::kArea, t,
                      column(d.samples, [](const SampleRecord& r) {
                        return static_cast<double>(r.pods_pending);
                      })});
  c.series.push_back({"running", svg::kGreen, svg::SeriesStyle::kLine, t,
                      column(d.samples, [](const SampleRecord& r) {
                        return static_cast<double>(r.pods_running);
                      })});
  out += svg::line_chart(c);
  out += "</section>\n";
  return out;
}

std::string waits_section(const ReportData& d) {
  std::string out = "<section id=\"waits\"><h2>Wait time by queue</h2>";
  if (const std::string note = not_recorded_section(d, RecordLevel::kPodRows, "the waits");
      !note.empty()) {
    return out + note;
  }
  out +=
      "<p class=\"lead\">Share of each queue's pods that waited at most a given time (log scale; "
      "pods that never waited sit at the left edge). Pods still pending at the end count with "
      "their wait so far.</p>";
  out += R"(<div class="split"><div>)";
  svg::LineChart c;
  c.title = "Cumulative distribution of wait time per queue";
  c.y_label = "share of pods";
  c.x_axis = svg::XAxis::kLogSeconds;
  c.y_percent = true;
  c.y_max = 1.0;
  c.width = 640;
  c.height = 240;
  for (std::size_t i = 0; i < d.queues.size(); ++i) {
    const QueueWaits& q = d.queues[i];
    svg::Series s;
    s.name = q.queue;
    s.color = svg::palette(i);
    s.style = svg::SeriesStyle::kStep;
    const double n = static_cast<double>(q.waits.size());
    // Empirical CDF: at each distinct wait w, the share of waits <= w.
    s.x.push_back(1.0);
    std::size_t k = 0;
    while (k < q.waits.size() && q.waits[k] <= 1.0)
      ++k;
    s.y.push_back(static_cast<double>(k) / n);
    for (std::size_t j = k; j < q.waits.size(); ++j) {
      if (j + 1 < q.waits.size() && q.waits[j + 1] == q.waits[j]) continue;
      s.x.push_back(q.waits[j]);
      s.y.push_back(static_cast<double>(j + 1) / n);
    }
    c.series.push_back(std::move(s));
  }
  // Every curve runs to the right edge at 100 %, so short-waiting queues stay visible.
  double longest = 10;
  for (const QueueWaits& q : d.queues) {
    if (!q.waits.empty()) longest = std::max(longest, q.waits.back());
  }
  for (svg::Series& s : c.series) {
    if (!s.x.empty() && s.x.back() < longest) {
      s.x.push_back(longest);
      s.y.push_back(s.y.back());
    }
  }
  out += svg::line_chart(c);
  out += "</div><div>";
  out +=
      R"(<table><tr><th>queue</th><th class="n">pods</th><th class="n">mean s</th><th class="n">p50 s</th><th class="n">p95 s</th></tr>)";
  for (std::size_t i = 0; i < d.queues.size(); ++i) {
    const std::string& q = d.queues[i].queue;
    const std::string p = "queue." + q + ".";
    out += fmt::format(
        R"(<tr><td><span class="swatch" style="background:{}"></span>{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td></tr>)",
        svg::palette(i), html_escape(q), span(d, p + "pods"), span(d, p + "wait_seconds_mean"),
        span(d, p + "wait_seconds_p50"), span(d, p + "wait_seconds_p95"));
  }
  out += fmt::format(
      R"(<tr><td><b>all pods</b></td><td class="n"></td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td></tr>)",
      span(d, "wait_seconds_mean"), span(d, "wait_seconds_p50"), span(d, "wait_seconds_p95"));
  out += "</table>";
  out += fmt::format(R"(<p class="note">All pods: p99 {} s.</p>)", span(d, "wait_seconds_p99"));
  out += "</div></div></section>\n";
  return out;
}

std::string fragmentation_section(const ReportData& d) {
  std::string out = "<section id=\"fragmentation\"><h2>Fragmentation over time</h2>";
  out += fmt::format(
      "<p class=\"lead\">Free GPU capacity, and the part of it the workload's typical pods could "
      "not use (the FGD measure). Mean fragmentation: {} of free capacity, {} of all GPUs.</p>",
      span(d, "fragmentation_ratio_mean"), span(d, "fragmented_gpu_share_mean"));
  svg::LineChart c;
  c.title = "Free and fragmented GPUs over time";
  c.y_label = "GPUs";
  c.width = 1160;
  c.height = 200;
  const std::vector<double> t = times_of(d.samples);
  c.series.push_back({"free", svg::kGreen, svg::SeriesStyle::kLine, t,
                      column(d.samples, [](const SampleRecord& r) {
                        return std::max(0.0, r.gpus_total - r.gpus_allocated);
                      })});
  c.series.push_back({"fragmented", svg::kVermillion, svg::SeriesStyle::kArea, t,
                      column(d.samples, [](const SampleRecord& r) { return r.fragmented_gpus; })});
  out += svg::line_chart(c);
  out += "</section>\n";
  return out;
}

std::string cost_section(const ReportData& d) {
  std::string out = "<section id=\"cost\"><h2>Cost breakdown</h2>";
  out += fmt::format(
      "<p class=\"lead\">Total {} USD: hardware {} USD and energy {} USD. Each GPU's price (and "
      "energy) is charged to the pods holding it, by the fraction of the GPU each is charged "
      "for; what no pod holds is idle, free capacity no pod can use is stranded.</p>",
      span(d, "cost_total_usd"), span(d, "cost_hardware_usd"), span(d, "cost_energy_usd"));
  std::vector<svg::Bar> parts;
  std::string rows;
  const double total = d.metric("cost_total_usd");
  auto add = [&](const std::string& label, const std::string& metric, const char* color) {
    const double v = d.metric(metric);
    const std::string share =
        total > 0 && std::isfinite(v) ? fmt::format("{:.1f} %", v / total * 100) : "";
    parts.push_back({label, std::isfinite(v) ? v : 0.0, figure(v) + " USD", color});
    rows += fmt::format(
        R"(<tr><td><span class="swatch" style="background:{}"></span>{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td></tr>)",
        color, html_escape(label), span(d, metric),
        metric.rfind("queue.", 0) == 0
            ? span(d, metric.substr(0, metric.size() - std::string_view("cost_usd").size()) +
                          "gpu_hours")
            : "",
        share);
  };
  std::size_t i = 0;
  for (const auto& [k, v] : d.summary) {
    if (k.rfind("queue.", 0) == 0 && k.size() > 15 &&
        k.compare(k.size() - 9, 9, ".cost_usd") == 0) {
      add(k.substr(6, k.size() - 15), k, svg::palette(i++));
    }
  }
  if (d.metric("cost_unqueued_usd") > 0) add("(no queue)", "cost_unqueued_usd", svg::kSky);
  add("idle", "cost_idle_usd", "#c9ced6");
  add("stranded", "cost_stranded_usd", svg::kGrey);
  out += svg::stacked_bar("Cost by queue, idle and stranded", parts, 1160);
  out +=
      R"(<table style="margin-top:10px"><tr><th>charged to</th><th class="n">USD</th><th class="n">GPU-hours charged</th><th class="n">share</th></tr>)";
  out += rows;
  out += "</table>";
  out += fmt::format(
      R"(<p class="note">Cost per busy GPU-hour {} USD · GPU-hours allocated {} · busy {} · GPU energy {} kWh (facility {} kWh).</p>)",
      span(d, "cost_per_busy_gpu_hour_usd"), span(d, "gpu_hours_allocated"),
      span(d, "gpu_hours_busy"), span(d, "energy_kwh"), span(d, "energy_facility_kwh"));
  if (!d.pools.empty()) {
    out +=
        R"(<details><summary>Prices by pool</summary><table><tr><th>pool</th><th>GPU model</th><th>sharing</th><th class="n">nodes</th><th class="n">GPUs</th><th class="n">USD per hour</th></tr>)";
    for (const PoolInfo& p : d.pools) {
      out += fmt::format(
          R"(<tr><td>{}</td><td>{}</td><td>{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td></tr>)",
          html_escape(pool_title(p.pool)), html_escape(p.gpu_model.empty() ? "—" : p.gpu_model),
          html_escape(p.sharing), p.nodes, p.gpus, figure(p.price_per_hour));
    }
    out += "</table></details>";
  }
  out += "</section>\n";
  return out;
}

std::string reasons_section(const ReportData& d) {
  std::string out = "<section id=\"reasons\"><h2>Why pods waited</h2>";
  if (const std::string note =
          not_recorded_section(d, RecordLevel::kFull, "the scheduler's pending reasons");
      !note.empty()) {
    return out + note;
  }
  if (d.reasons.empty()) {
    out += "<p class=\"lead\">No pod was ever left pending by the scheduler.</p></section>\n";
    return out;
  }
  const std::string_view unit = d.reasons_from_attempts ? "attempts" : "events";
  if (d.reasons_from_attempts) {
    out += fmt::format(
        "<p class=\"lead\">The reasons the scheduler recorded in the run's {} failed scheduling "
        "attempts (the <code>pending_reason</code> table), most frequent first, with the plugin "
        "that gave each; an attempt counts under every reason some node gave.</p>",
        d.failed_attempts);
  } else {
    out += fmt::format(
        "<p class=\"lead\">The scheduler's reasons in the run's {} <code>pending</code> events, "
        "most frequent first (an event names every reason some node gave).</p>",
        d.pending_events);
  }
  const std::size_t n = std::min<std::size_t>(d.reasons.size(), 10);
  std::vector<svg::Bar> bars;
  for (std::size_t i = 0; i < n; ++i) {
    bars.push_back({d.reasons[i].reason, static_cast<double>(d.reasons[i].events),
                    fmt::format("{} {}", d.reasons[i].events, unit), svg::kVermillion});
  }
  out += svg::bar_chart("Most frequent pending reasons", bars, 1160, 420);
  out += fmt::format(
      R"(<table style="margin-top:10px"><tr><th>reason</th><th class="n">{}</th><th class="n">pods</th><th class="n">nodes giving it, mean</th></tr>)",
      unit);
  for (std::size_t i = 0; i < n; ++i) {
    const PendingReason& r = d.reasons[i];
    out += fmt::format(
        R"(<tr><td>{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td></tr>)",
        html_escape(r.reason), r.events, r.pods, figure(r.nodes_per_event));
  }
  out += "</table>";
  if (d.reasons.size() > n) {
    out += fmt::format(R"(<p class="note">{} less frequent reasons are not shown.</p>)",
                       d.reasons.size() - n);
  }
  if (!d.blockers.empty()) {
    // One small table per queue: which plugins blocked its pods, and in which quarter of the run.
    out +=
        "<h3>By queue</h3><p class=\"note\">Per queue (the pod's Kueue queue), the plugins that "
        "rejected nodes in its pods' failed attempts: an attempt counts once per plugin, and the "
        "quarters split the simulated time in four.</p>";
    std::size_t i = 0;
    while (i < d.blockers.size()) {
      const std::string& queue = d.blockers[i].queue;
      out += fmt::format(
          R"(<table class="blockers" style="margin-top:8px"><tr><th>{}</th><th class="n">attempts</th><th class="n">pods</th><th class="n">1st quarter</th><th class="n">2nd</th><th class="n">3rd</th><th class="n">4th</th></tr>)",
          queue.empty() ? std::string("pods without a queue") : "queue " + html_escape(queue));
      for (; i < d.blockers.size() && d.blockers[i].queue == queue; ++i) {
        const QueueBlocker& b = d.blockers[i];
        out += fmt::format(
            R"(<tr><td>{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td></tr>)",
            html_escape(b.plugin), b.attempts, b.pods, b.by_quarter[0], b.by_quarter[1],
            b.by_quarter[2], b.by_quarter[3]);
      }
      out += "</table>";
    }
  }
  out += "</section>\n";
  return out;
}

std::string shared_section(const ReportData& d) {
  bool used = false;
  for (const PoolSampleRecord& p : d.pool_samples)
    used = used || p.shared_units_total > 0;
  if (!used) return "";
  std::string out = "<section id=\"sharing\"><h2>MIG instances and replicas in use</h2>";
  out +=
      "<p class=\"lead\">Devices the shared GPUs advertise (MIG instances, time-slice or MPS "
      "replicas) and how many pods hold, per pool.</p><div class=\"grid2\">";
  for (const std::string& pool : d.pool_names()) {
    std::vector<double> t, total, used_units;
    for (const PoolSampleRecord& p : d.pool_samples) {
      if (p.pool != pool) continue;
      t.push_back(to_seconds(p.time));
      total.push_back(p.shared_units_total);
      used_units.push_back(p.shared_units_allocated);
    }
    double mx = 0;
    for (double v : total)
      mx = std::max(mx, v);
    if (mx <= 0) continue;
    svg::LineChart c;
    c.title = "Shared devices in use, pool " + pool_title(pool);
    c.y_label = "devices";
    c.width = 580;
    c.height = 220;
    c.y_max = mx;
    c.series.push_back({"in use", svg::kPurple, svg::SeriesStyle::kArea, t, used_units});
    c.series.push_back({"advertised", svg::kGrey, svg::SeriesStyle::kDashed, t, total});
    out += fmt::format("<div><h3>Pool {}</h3>{}</div>", html_escape(pool_title(pool)),
                       svg::line_chart(c));
  }
  out += "</div></section>\n";
  return out;
}

std::string all_metrics_section(const ReportData& d) {
  std::string out = "<section id=\"summary\"><h2>All summary metrics</h2>";
  out +=
      "<p class=\"lead\">The run's <code>summary</code> table, in the order capsim reported it "
      "(docs/metrics.md defines each one).</p>";
  out += "<details><summary>Show all " + std::to_string(d.summary.size()) + " metrics</summary>";
  out += R"(<table><tr><th>metric</th><th class="n">value</th><th>better</th></tr>)";
  for (const auto& [k, v] : d.summary) {
    const Direction dir = metric_direction(k);
    out += fmt::format(R"(<tr><td><code>{}</code></td><td class="n">{}</td><td>{}</td></tr>)",
                       html_escape(k), span(d, k),
                       dir == Direction::kNeutral ? "" : std::string(direction_name(dir)));
  }
  out += "</table></details></section>\n";
  return out;
}

}  // namespace

std::string render_html_report(const ReportData& d) {
  std::string out;
  out.reserve(1 << 18);
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += fmt::format("<title>capsim report — {} (run {}, seed {})</title>\n",
                     html_escape(d.run.scenario), d.run.run_id, d.run.seed);
  out += "<style>";
  out += kCss;
  out += "</style>\n</head>\n<body>\n<main>\n";
  out += header(d);
  out += headline(d);
  out += allocation_section(d);
  out += pending_section(d);
  out += waits_section(d);
  out += fragmentation_section(d);
  out += cost_section(d);
  out += reasons_section(d);
  out += shared_section(d);
  out += all_metrics_section(d);
  out += fmt::format(
      "<footer>Scenario <code>{}</code> · sha256 <code>{}</code> · started {} · report schema "
      "{}. Self-contained: no scripts, nothing loaded from the network.</footer>\n",
      html_escape(d.run.scenario_path), html_escape(d.run.scenario_sha256),
      html_escape(d.run.started_at), d.schema_version);
  out += "</main>\n</body>\n</html>\n";
  return out;
}

std::string render_markdown_summary(const ReportData& d) {
  const RunRow& r = d.run;
  std::string out = fmt::format("# capsim report: {}\n\n", markdown_cell(r.scenario));
  out += fmt::format("Run {} of `{}` · seed {} · profile `{}` · simulated {} · capsim {}\n\n",
                     r.run_id, d.file, r.seed, r.profile,
                     format_duration(from_seconds(r.sim_seconds)), r.capsim_version);
  out += "| metric | value |\n|---|---:|\n";
  static constexpr std::string_view kHeadline[] = {
      "pods_total",
      "pods_completed",
      "pods_pending_at_end",
      "pods_unschedulable",
      "gpu_allocation_ratio_mean",
      "gpu_utilization_ratio_mean",
      "fragmentation_ratio_mean",
      "wait_seconds_mean",
      "wait_seconds_p50",
      "wait_seconds_p95",
      "wait_seconds_p99",
      "jct_seconds_mean",
      "slowdown_mean",
      "gpu_hours_allocated",
      "gpu_hours_busy",
      "cost_total_usd",
      "cost_idle_usd",
      "cost_per_busy_gpu_hour_usd",
      "energy_kwh",
  };
  for (std::string_view m : kHeadline) {
    const std::string name(m);
    if (!d.has(name)) continue;
    out += fmt::format("| `{}` | {} |\n", name, figure(d.metric(name)));
  }
  if (r.record != RecordLevel::kFull) {
    out += fmt::format("\nRecorded: `--record {}`: {} not recorded.\n", record_level_name(r.record),
                       r.record == RecordLevel::kSummary ? "pod rows (queue waits) and events"
                                                         : "events (pending reasons)");
  }
  if (!d.queues.empty()) {
    out += "\n| queue | pods | wait p95 s | cost USD |\n|---|---:|---:|---:|\n";
    for (const QueueWaits& q : d.queues) {
      const std::string p = "queue." + q.queue + ".";
      out += fmt::format("| {} | {} | {} | {} |\n", markdown_cell(q.queue),
                         figure(d.metric(p + "pods")), figure(d.metric(p + "wait_seconds_p95")),
                         figure(d.metric(p + "cost_usd")));
    }
  }
  return out;
}

}  // namespace capsim
