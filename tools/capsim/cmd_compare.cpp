// `capsim compare RUN.db...`: runs side by side; runs of one variant (same scenario and profile,
// different seeds) as mean and 95 % confidence interval.
#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <iostream>

#include "reports/compare.hpp"
#include "reports/output_file.hpp"
#include "reports/output_target.hpp"
#include "reports/run_reader.hpp"
#include "reports/sweep_report.hpp"
#include "tools/capsim/cli.hpp"
#include "tools/capsim/commands.hpp"

namespace po = boost::program_options;

namespace capsim::cli {

int cmd_compare(const std::vector<std::string>& args) {
  return guarded("compare", [&]() -> int {
    po::options_description opts("Usage: capsim compare RUN.db [RUN.db...] [options]\n\nOptions");
    std::vector<std::string> files, metrics;
    std::string markdown;
    opts.add_options()("help,h", "show this help")(
        "markdown", po::value(&markdown), "also write the comparison as markdown ('-': stdout)")(
        "json", "print the comparison as JSON instead of a table")(
        "variants",
        "sweep files too: variants side by side (columns) instead of one row per variant")(
        "metric", po::value(&metrics)->composing(),
        "only metrics matching this name or pattern (* matches anything; repeatable)");
    const po::variables_map vm =
        parse_command_line(opts, args, {{"files", po::value(&files)->composing(), -1}});
    if (vm.count("help")) {
      std::cout
          << opts
          << "\nEvery complete run of every file is used. Runs of the same scenario (same\n"
             "scenario_sha256, which covers every file the scenario read and the --set\n"
             "overrides) and profile are one variant; its seeds give the mean and 95 %\n"
             "confidence interval (Student t). Deltas are against the first variant; * marks\n"
             "the better value. See docs/reports.md.\n"
             "A sweep file gives one row per variant, its metrics as columns (--metric takes\n"
             "names or max(PATTERN)/min(PATTERN)); --variants shows it side by side instead.\n";
      return kOk;
    }
    if (files.empty()) throw UsageError("at least one report file is required");
    if (!markdown.empty()) {
      std::vector<InputFile> inputs;
      for (const std::string& f : files)
        inputs.push_back({"report being compared", f});
      refuse_output_over_inputs("--markdown output", markdown, inputs);
      check_writable(markdown);
    }
    // One sweep file: one row per variant (axis values), metrics as columns.
    if (files.size() == 1 && !vm.count("json") && !vm.count("variants") &&
        read_sweep_info(RunReader(files.front()).db())) {
      const SweepTable t = load_sweep_table(files.front(), metrics);
      if (markdown != "-") std::cout << render_sweep_text(t);
      if (!markdown.empty()) write_output(markdown, render_sweep_markdown(t));
      return kOk;
    }
    const Comparison c = compare_variants(group_variants(load_runs(files)), metrics);
    if (c.rows.empty() && !metrics.empty()) {
      throw UsageError("no metric matches the --metric patterns given");
    }
    if (vm.count("json")) {
      std::cout << render_compare_json(c);
    } else if (markdown != "-") {
      std::cout << render_compare_text(c);
    }
    if (!markdown.empty()) write_output(markdown, render_compare_markdown(c));
    return kOk;
  });
}

}  // namespace capsim::cli
