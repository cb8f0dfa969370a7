// capsim: the command-line entry point. Dispatches to a subcommand; every subcommand has --help.
#include <fmt/format.h>

#include <iostream>
#include <string>
#include <vector>

#include "tools/capsim/cli.hpp"

namespace {

constexpr const char* kUsage = R"(capsim — offline scheduling simulator for Kubernetes GPU clusters

Usage: capsim <command> [options]

Commands:
  run SCENARIO.yaml      simulate a scenario and write a SQLite report
  validate FILE...       check scenarios, manifests and traces; errors with file:line
  catalog [MODEL]        list GPU models, MIG profiles and prices
  import FORMAT INPUT... convert a public trace (alibaba-openb) or job log (helios, philly)
                         into capsim files
  report RUN.db          HTML report, markdown headline, Prometheus export of a run
  compare RUN.db...      runs side by side: means and 95 % confidence intervals over seeds
  check --baseline B.db --candidate C.db
                         CI gate: exit 1 when the candidate regresses past the thresholds

Options:
  -h, --help             show this help
  --version              print the version

Run 'capsim <command> --help' for a command's options.
Exit codes: 0 ok, 1 regression (check), 2 usage, 65 invalid input, 66 missing input,
70 internal error, 74 cannot write output.
)";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << kUsage;
    return capsim::cli::kUsage;
  }
  const std::string cmd = args.front();
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    std::cout << kUsage;
    return 0;
  }
  if (cmd == "--version" || cmd == "version") {
    std::cout << fmt::format("capsim {}\n", CAPSIM_VERSION);
    return 0;
  }
  if (cmd == "run") return capsim::cli::cmd_run(rest);
  if (cmd == "validate") return capsim::cli::cmd_validate(rest);
  if (cmd == "catalog") return capsim::cli::cmd_catalog(rest);
  if (cmd == "import") return capsim::cli::cmd_import(rest);
  if (cmd == "report") return capsim::cli::cmd_report(rest);
  if (cmd == "compare") return capsim::cli::cmd_compare(rest);
  if (cmd == "check") return capsim::cli::cmd_check(rest);
  std::cerr << fmt::format("capsim: unknown command '{}'\n\n{}", cmd, kUsage);
  return capsim::cli::kUsage;
}
