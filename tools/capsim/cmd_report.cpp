// `capsim report RUN.db`: the run as a self-contained HTML page, its headline numbers as
// markdown, its samples as Prometheus/OpenMetrics text, and its cost as OpenCost allocation JSON
// and FOCUS rows.
#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <optional>

#include "reports/cost_allocation.hpp"
#include "reports/cost_export.hpp"
#include "reports/html_report.hpp"
#include "reports/output_file.hpp"
#include "reports/output_target.hpp"
#include "reports/prometheus_export.hpp"
#include "reports/report_data.hpp"
#include "reports/run_reader.hpp"
#include "reports/sweep_report.hpp"
#include "tools/capsim/cli.hpp"
#include "tools/capsim/commands.hpp"

namespace po = boost::program_options;

namespace capsim::cli {

int cmd_report(const std::vector<std::string>& args) {
  return guarded("report", [&]() -> int {
    po::options_description opts("Usage: capsim report RUN.db [options]\n\nOptions");
    std::string db, html, markdown, prometheus, prom_format = "openmetrics", prom_start;
    std::string opencost, focus, aggregate = "pod", window, start;
    std::int64_t run_id = 0;
    std::string x_axis, line_axis;
    std::vector<std::string> fixes, metrics;
    opts.add_options()("help,h", "show this help")(
        "output,o", po::value(&html),
        "HTML report file ('-': stdout; default: RUN.html beside RUN.db, unless only "
        "--markdown or --prometheus is asked for)")(
        "markdown", po::value(&markdown), "write the headline numbers as markdown ('-': stdout)")(
        "prometheus", po::value(&prometheus),
        "write the samples as Prometheus metrics with timestamps ('-': stdout)")(
        "prometheus-format", po::value(&prom_format),
        "openmetrics (default; what promtool backfills) or text (Prometheus 0.0.4)")(
        "prometheus-start", po::value(&prom_start),
        "wall-clock time of simulated time 0: 2025-06-01T00:00:00Z or Unix seconds (default: "
        "the run's start minus its simulated length)")(
        "opencost", po::value(&opencost),
        "write the cost as OpenCost /allocation JSON ('-': stdout)")(
        "focus", po::value(&focus), "write the cost as FOCUS 1.2 rows, CSV ('-': stdout)")(
        "aggregate", po::value(&aggregate),
        "OpenCost: pod (default), namespace, queue, node, controller or label:KEY")(
        "window", po::value(&window),
        "OpenCost: one allocation set per window; FOCUS: the charge period (default 1h): 30m, "
        "1h, 1d, 7d, ...")("idle", "OpenCost: add the unallocated cost as __idle__")(
        "start", po::value(&start),
        "wall-clock time of simulated time 0 for every export (as --prometheus-start)")(
        "run", po::value(&run_id), "run_id to report (default: the latest complete run)")(
        "x", po::value(&x_axis),
        "sweep files: the numeric axis charts put on x (default: the first numeric axis)")(
        "lines", po::value(&line_axis),
        "sweep files: one line per value of this axis (default: the first non-numeric one; "
        "'-': none)")("fix", po::value(&fixes)->composing(),
                      "sweep files: only variants with AXIS=VALUE (repeatable)")(
        "metric", po::value(&metrics)->composing(),
        "sweep files: metric to chart and tabulate; a name, or max(PATTERN)/min(PATTERN) over "
        "metrics matching a * pattern (repeatable)")("quiet,q", "no notes on stderr");
    const po::variables_map vm = parse_command_line(opts, args, {{"db", po::value(&db), 1}});
    if (vm.count("help")) {
      std::cout << opts
                << "\nThe HTML page has inline SVG charts and no scripts; every figure from the "
                   "summary\ncarries data-metric and data-value attributes. See docs/reports.md.\n";
      return kOk;
    }
    if (db.empty()) throw UsageError("a report file (RUN.db) is required");
    PromFormat format = PromFormat::kOpenMetrics;
    if (prom_format == "text") {
      format = PromFormat::kText;
    } else if (prom_format != "openmetrics") {
      throw UsageError(
          fmt::format("--prometheus-format must be openmetrics or text, not '{}'", prom_format));
    }
    std::optional<double> origin;
    for (const char* name : {"start", "prometheus-start"}) {
      if (!vm.count(name)) continue;
      const std::string& text = std::string(name) == "start" ? start : prom_start;
      origin = parse_time_origin(text);
      if (!origin) {
        throw UsageError(
            fmt::format("--{} '{}' is neither 2025-06-01T00:00:00Z nor Unix seconds", name, text));
      }
      break;
    }
    std::optional<SimDuration> window_length;
    if (vm.count("window")) {
      window_length = parse_cost_window(window);
      if (!window_length) {
        throw UsageError(fmt::format(
            "--window '{}' is not a whole number of minutes, hours, days or weeks (30m, 1h, 1d, "
            "7d)",
            window));
      }
    }
    if (!valid_cost_aggregate(aggregate)) {
      throw UsageError(fmt::format(
          "--aggregate '{}' is not one of pod, namespace, queue, node, controller, label:KEY",
          aggregate));
    }
    if ((vm.count("aggregate") || vm.count("idle")) && opencost.empty()) {
      throw UsageError("--aggregate and --idle shape the --opencost export: add --opencost FILE");
    }
    if (vm.count("window") && opencost.empty() && focus.empty()) {
      throw UsageError("--window shapes the --opencost and --focus exports: add one of them");
    }
    const bool quiet = vm.count("quiet") > 0;
    if (html.empty() && markdown.empty() && prometheus.empty() && opencost.empty() &&
        focus.empty()) {
      std::filesystem::path p(db);
      p.replace_extension(".html");
      html = p.string();
    }
    // Refuse unwritable outputs before reading anything.
    for (const std::string* out : {&html, &markdown, &prometheus, &opencost, &focus}) {
      if (out->empty()) continue;
      refuse_output_over_inputs("output", *out, {{"report being read", db}});
      check_writable(*out);
    }

    const auto t0 = std::chrono::steady_clock::now();
    // A sweep file (several variants) gets the sweep page unless one run is asked for.
    if (!vm.count("run") && read_sweep_info(RunReader(db).db())) {
      if (!prometheus.empty() || !opencost.empty() || !focus.empty()) {
        throw UsageError(
            "--prometheus, --opencost and --focus export one run: add --run ID for a sweep file");
      }
      SweepChartOptions co;
      co.x_axis = x_axis;
      co.line_axis = line_axis;
      for (const std::string& f : fixes) {
        const auto eq = f.find('=');
        if (eq == std::string::npos || eq == 0) {
          throw UsageError(fmt::format("--fix '{}' is not AXIS=VALUE", f));
        }
        co.fixed.emplace_back(f.substr(0, eq), f.substr(eq + 1));
      }
      const SweepTable table = load_sweep_table(db, metrics);
      if (!html.empty()) write_output(html, render_sweep_html(table, co));
      if (!markdown.empty()) write_output(markdown, render_sweep_markdown(table));
      if (!quiet) {
        for (const std::string* out : {&html, &markdown}) {
          if (!out->empty() && *out != "-") std::cerr << "capsim report: wrote " << *out << "\n";
        }
      }
      return kOk;
    }
    const ReportData data =
        load_report_data(db, vm.count("run") ? std::optional<std::int64_t>(run_id) : std::nullopt);
    if (!quiet && !vm.count("run")) {
      const std::size_t runs = RunReader(db).runs().size();
      if (runs > 1) {
        std::cerr << fmt::format(
            "capsim report: note: {} holds {} runs; reporting run {} (use --run to pick)\n", db,
            runs, data.run.run_id);
      }
    }
    if (!html.empty()) write_output(html, render_html_report(data));
    if (!markdown.empty()) write_output(markdown, render_markdown_summary(data));
    const double epoch = origin ? *origin : default_prometheus_origin(data.run);
    if (!prometheus.empty()) write_output(prometheus, render_prometheus(data, epoch, format));
    if (!opencost.empty() || !focus.empty()) {
      const CostAllocation cost = load_cost_allocation(data);
      CostExportOptions co;
      co.origin_epoch_s = epoch;
      co.window = window_length.value_or(0);
      co.aggregate = aggregate;
      co.idle = vm.count("idle") > 0;
      co.cluster = data.run.scenario.empty() ? "capsim" : data.run.scenario;
      if (!opencost.empty()) write_output(opencost, render_opencost(cost, co));
      if (!focus.empty()) write_output(focus, render_focus_csv(cost, co));
    }
    if (!quiet) {
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      for (const std::string* out : {&html, &markdown, &prometheus, &opencost, &focus}) {
        if (!out->empty() && *out != "-") std::cerr << "capsim report: wrote " << *out << "\n";
      }
      std::cerr << fmt::format("capsim report: run {} of {} in {:.0f} ms\n", data.run.run_id, db,
                               ms);
    }
    return kOk;
  });
}

}  // namespace capsim::cli
