#include "tools/capsim/commands.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "models/yaml_reader.hpp"
#include "tools/capsim/cli.hpp"
#include "tools/loaders/input_kinds.hpp"

namespace po = boost::program_options;

namespace capsim::cli {

namespace {

constexpr std::size_t kSynopsisWidth = 22;  // summaries start in column 25

std::vector<Command> build_commands() {
  return {
      {"run", "run SCENARIO.yaml", "simulate a scenario and write a SQLite report", cmd_run},
      {"score", "score SCENARIO.yaml --pod P",
       "what every filter and score plugin says about one pod on every node\n(--at TIME, --json)",
       cmd_score},
      {"explain", "explain RUN.db POD",
       "a pod's explained cycles (run --explain): every plugin on every node,\n"
       "the result, preemption victims (--json, --format kss)",
       cmd_explain},
      {"validate", "validate FILE...",
       "check scenarios, manifests and traces; errors with file:line", cmd_validate},
      {"catalog", "catalog [MODEL]", "list GPU models, MIG profiles and prices", cmd_catalog},
      {"import", "import FORMAT INPUT...",
       fmt::format("convert a public trace or job log into capsim files\n({})",
                   loader_registry().trace_names(true)),
       cmd_import},
      {"report", "report RUN.db", "HTML report, markdown headline, Prometheus export of a run",
       cmd_report},
      {"compare", "compare RUN.db...",
       "runs side by side: means and 95 % confidence intervals over seeds", cmd_compare},
      {"check", "check --baseline B.db --candidate C.db",
       "CI gate: exit 1 when the candidate regresses past the thresholds", cmd_check},
      {"sweep", "sweep SWEEP.yaml",
       "run a sweep's variants (-j threads, --shard I/N) into one file", cmd_sweep},
      {"merge", "merge OUT.db SHARD.db...", "combine the shard files of one sweep", cmd_merge},
      {"plan", "plan PLAN.yaml", "cheapest configuration meeting SLO constraints over seeds",
       cmd_plan},
  };
}

// "  SYNOPSIS  SUMMARY", the summary's further lines (and a long synopsis's summary) indented.
std::string command_line_of(const Command& c) {
  const std::string indent(kSynopsisWidth + 3, ' ');
  std::string summary;
  for (char ch : c.summary) {
    summary += ch;
    if (ch == '\n') summary += indent;
  }
  if (c.synopsis.size() <= kSynopsisWidth)
    return fmt::format("  {:<{}} {}\n", c.synopsis, kSynopsisWidth, summary);
  return fmt::format("  {}\n{}{}\n", c.synopsis, indent, summary);
}

}  // namespace

const std::vector<Command>& commands() {
  static const std::vector<Command> table = build_commands();
  return table;
}

std::string usage_text() {
  std::string out =
      "capsim — offline scheduling simulator for Kubernetes GPU clusters\n\n"
      "Usage: capsim <command> [options]\n\nCommands:\n";
  for (const Command& c : commands())
    out += command_line_of(c);
  out +=
      "\nOptions:\n"
      "  -h, --help             show this help\n"
      "  --version              print the version\n\n"
      "Run 'capsim <command> --help' for a command's options.\n"
      "Exit codes: 0 ok, 1 regression (check), 2 usage, 65 invalid input, 66 missing input,\n"
      "70 internal error, 74 cannot write output.\n";
  return out;
}

namespace {

int run_command(const std::vector<std::string>& args);

// Every command's data goes to stdout and its diagnostics to stderr through buffers; a write
// error (a closed pipe, a full disk: `capsim report RUN.db --format text > /dev/full`) shows only
// when they are flushed. So they are flushed here, once for every command, and a failure is exit
// 74 even when the command itself succeeded; an error exit the command chose is kept.
int finish_streams(const std::string& who, int rc) {
  errno = 0;
  std::cout.flush();
  bool out_failed = !std::cout;
  int out_errno = errno;
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) out_failed = true;
  if (out_errno == 0) out_errno = errno;
  std::cerr.flush();
  const bool err_failed = !std::cerr || std::fflush(stderr) != 0 || std::ferror(stderr) != 0;
  std::cout.clear();
  std::clearerr(stdout);
  if (out_failed) {
    std::cerr << fmt::format("{}: cannot write output: standard output: {}\n", who,
                             out_errno != 0 ? std::strerror(out_errno) : "write error");
    std::cerr.flush();
  }
  std::cerr.clear();
  std::clearerr(stderr);
  if ((out_failed || err_failed) && (rc == kOk || rc == kRegression)) return kCannotWrite;
  return rc;
}

}  // namespace

int dispatch(const std::vector<std::string>& args) {
  const std::string who = args.empty() || args.front().empty() || args.front()[0] == '-'
                              ? std::string("capsim")
                              : "capsim " + args.front();
  return finish_streams(who, run_command(args));
}

namespace {

int run_command(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::cerr << usage_text();
    return kUsage;
  }
  const std::string& cmd = args.front();
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    std::cout << usage_text();
    return kOk;
  }
  if (cmd == "--version" || cmd == "version") {
    std::cout << fmt::format("capsim {}\n", CAPSIM_VERSION);
    return kOk;
  }
  std::vector<std::string> names;
  for (const Command& c : commands()) {
    if (c.name == cmd) return c.fn(rest);
    names.push_back(c.name);
  }
  std::cerr << fmt::format("capsim: unknown command '{}'{}\n\n{}", cmd, did_you_mean(cmd, names),
                           usage_text());
  return kUsage;
}

}  // namespace

po::variables_map parse_command_line(const po::options_description& visible,
                                     const std::vector<std::string>& args,
                                     std::initializer_list<Positional> positional) {
  po::options_description hidden;
  po::positional_options_description pos;
  for (const Positional& p : positional) {
    hidden.add_options()(p.name, p.value);
    pos.add(p.name, p.max_count);
  }
  po::options_description all;
  all.add(visible).add(hidden);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
  po::notify(vm);
  return vm;
}

}  // namespace capsim::cli
