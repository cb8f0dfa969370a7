// `capsim plan PLAN.yaml`: search the plan's space for the best configuration that meets its
// constraints over its seeds, and print the answer, the neighbours, the robustness check and the
// cost-vs-SLO frontier explored (docs/planning.md).
#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <iostream>
#include <thread>

#include "reports/output_file.hpp"
#include "reports/output_target.hpp"
#include "tools/capsim/cli.hpp"
#include "tools/capsim/commands.hpp"
#include "tools/capsim/plan.hpp"
#include "tools/loaders/sha256.hpp"

namespace po = boost::program_options;

namespace capsim::cli {

int cmd_plan(const std::vector<std::string>& args) {
  return guarded("plan", [&]() -> int {
    po::options_description opts("Usage: capsim plan PLAN.yaml [options]\n\nOptions");
    std::string file, out, markdown, data_dir;
    int jobs = 0;
    opts.add_options()("help,h", "show this help")(
        "jobs,j", po::value(&jobs), "runs at once on this machine (default: CPU count)")(
        "output,o", po::value(&out),
        "also write every run the search made into a sweep file (for report/compare)")(
        "markdown", po::value(&markdown), "write the answer and tables as markdown ('-': stdout)")(
        "json", "print the result as JSON instead of text")(
        "data-dir", po::value(&data_dir), "what {data_dir} in scenario paths expands to")(
        "quiet,q", "no progress on stderr");
    const po::variables_map vm = parse_command_line(opts, args, {{"file", po::value(&file), 1}});
    if (vm.count("help")) {
      std::cout << opts
                << "\nBisects node counts (more nodes never hurt the constraints), then searches "
                   "layout\nchoices locally. Exit 0 also when nothing is feasible (the output "
                   "says so).\nSee docs/planning.md.\n";
      return kOk;
    }
    if (file.empty()) throw UsageError("a plan file is required");
    if (vm.count("jobs") && jobs < 1) throw UsageError("-j must be at least 1");
    if (!vm.count("jobs")) {
      jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    }
    if (!out.empty()) {
      refuse_output_over_inputs("-o output", out, {{"plan file", file}});
      check_writable(out);
    }
    if (!markdown.empty()) {
      refuse_output_over_inputs("--markdown output", markdown, {{"plan file", file}});
      check_writable(markdown);
    }
    const bool quiet = vm.count("quiet") > 0;

    const PlanSpec spec =
        load_plan(file, vm.count("data-dir") ? std::optional<std::string>(data_dir) : std::nullopt);
    std::optional<ScratchBeside> scratch;
    if (!out.empty()) scratch.emplace(out);
    Planner planner(spec, jobs,
                    scratch ? std::optional<std::filesystem::path>(scratch->path()) : std::nullopt);
    const PlanResult r = planner.run([&](const PlanEvaluation& e) {
      if (quiet) return;
      std::cerr << fmt::format("  [{}] {:<48} {} = {:<12} {}\n", e.order,
                               planner.describe(e.config), spec.objective,
                               format_number(e.objective), e.feasible ? "meets" : "fails");
    });

    if (!out.empty()) {
      SweepInfo info;
      info.name = spec.name;
      info.scenario = spec.base.scenario;
      info.definition = spec.text;
      info.variants = static_cast<std::int64_t>(planner.recorded_variants().size());
      info.sweep_id = sha256_hex("capsim plan\n" + spec.text);
      write_sweep_file(out, info, planner.recorded_variants(), planner.recorded_results(),
                       {ShardInfo{0, 1, info.variants}});
      if (!quiet) std::cerr << "capsim plan: wrote " << out << "\n";
    }
    if (vm.count("json")) {
      std::cout << render_plan_json(spec, planner, r);
    } else if (markdown != "-") {
      std::cout << render_plan_text(spec, planner, r);
    }
    if (!markdown.empty()) write_output(markdown, render_plan_markdown(spec, planner, r));
    return kOk;
  });
}

}  // namespace capsim::cli
