// `capsim check --baseline BASE.db --candidate CAND.db`: the CI gate. Exit 1 on a regression.
#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <iostream>

#include "reports/check.hpp"
#include "reports/output_file.hpp"
#include "reports/output_target.hpp"
#include "tools/capsim/cli.hpp"

namespace po = boost::program_options;

namespace capsim::cli {

int cmd_check(const std::vector<std::string>& args) {
  return guarded("check", [&]() -> int {
    po::options_description opts(
        "Usage: capsim check --baseline BASE.db --candidate CAND.db [options]\n\nOptions");
    std::string baseline, candidate, thresholds, junit, markdown;
    opts.add_options()("help,h", "show this help")("baseline", po::value(&baseline),
                                                   "report file of the baseline runs")(
        "candidate", po::value(&candidate), "report file of the candidate runs")(
        "thresholds", po::value(&thresholds), "thresholds YAML (default: the built-in thresholds)")(
        "junit", po::value(&junit), "write a JUnit XML file: one test case per metric")(
        "markdown", po::value(&markdown), "write a markdown summary ('-': stdout)")(
        "print-thresholds", "print the built-in thresholds as YAML and exit")(
        "quiet,q", "print only regressions and the verdict");
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(opts).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << opts
                << "\nEach file may hold several seeds of a variant: their means are compared.\n"
                   "A regression is a change in the bad direction larger than every limit the\n"
                   "metric's threshold gives. Exit 0: no regression; 1: regression; 65 bad\n"
                   "input; 66 missing file; 74 cannot write. See docs/reports.md.\n";
      return kOk;
    }
    if (vm.count("print-thresholds")) {
      std::cout << builtin_thresholds_yaml();
      return kOk;
    }
    if (baseline.empty()) throw UsageError("--baseline BASE.db is required");
    if (candidate.empty()) throw UsageError("--candidate CAND.db is required");
    for (const std::string* out : {&junit, &markdown}) {
      if (out->empty()) continue;
      refuse_output_over_inputs(
          out == &junit ? "--junit output" : "--markdown output", *out,
          {{"baseline", baseline}, {"candidate", candidate}, {"thresholds file", thresholds}});
      check_writable(*out);
    }
    const Thresholds th = thresholds.empty() ? Thresholds::builtin() : Thresholds::load(thresholds);
    const std::vector<LoadedRun> base = load_runs({baseline});
    const std::vector<LoadedRun> cand = load_runs({candidate});
    const CheckReport report = run_check(base, cand, th, baseline, candidate);
    if (vm.count("quiet")) {
      for (const CheckPair& p : report.pairs) {
        for (const CheckResult& r : p.results) {
          if (r.verdict == Verdict::kRegression) std::cout << "regression: " << r.message << "\n";
        }
      }
    } else if (markdown != "-") {
      std::cout << render_check_text(report);
    }
    if (!junit.empty()) write_output(junit, render_junit(report));
    if (!markdown.empty()) write_output(markdown, render_check_markdown(report));
    const int n = report.regressions();
    std::cerr << fmt::format("capsim check: {}\n",
                             n == 0 ? fmt::format("passed ({} checks)", report.checks())
                                    : fmt::format("{} regression{}", n, n == 1 ? "" : "s"));
    return n > 0 ? kRegression : kOk;
  });
}

}  // namespace capsim::cli
