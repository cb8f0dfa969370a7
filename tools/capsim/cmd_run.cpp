// `capsim run SCENARIO.yaml`: load, simulate, write the SQLite report atomically, print the
// summary (a table, or JSON with --json) on stdout.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <boost/program_options.hpp>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <iostream>

#include "reports/output_target.hpp"
#include "reports/sqlite_recorder.hpp"
#include "tools/capsim/cli.hpp"
#include "tools/capsim/commands.hpp"
#include "tools/capsim/runner.hpp"
#include "tools/loaders/file_source.hpp"

namespace po = boost::program_options;

namespace capsim::cli {

namespace {

// The signal that asked the run to stop (SIGINT or SIGTERM), 0 while none has. Both stop the run
// at the next event boundary and discard the report being written, so kill, Ctrl-C, `kubectl
// delete` and `scancel` never leave a half-written file under the output's name.
std::atomic<int> g_interrupted{0};
extern "C" void on_stop_signal(int sig) {
  g_interrupted.store(sig);
}

// Catches SIGINT and SIGTERM for its lifetime, from before the scenario is read (a signal during
// the load stops the run before its first event), and puts the previous handlers back.
class StopSignals {
 public:
  StopSignals()
      : int_(std::signal(SIGINT, on_stop_signal)), term_(std::signal(SIGTERM, on_stop_signal)) {
    g_interrupted.store(0);
  }
  ~StopSignals() {
    std::signal(SIGINT, int_);
    std::signal(SIGTERM, term_);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  void (*int_)(int);
  void (*term_)(int);
};

class ProgressBar {
 public:
  explicit ProgressBar(bool enabled) : enabled_(enabled) {}
  void update(double f) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(100) && f < 1.0) return;
    last_ = now;
    const int width = 30;
    const int filled = static_cast<int>(f * width);
    std::cerr << fmt::format("\r  [{}{}] {:3.0f}%",
                             std::string(static_cast<std::size_t>(filled), '#'),
                             std::string(static_cast<std::size_t>(width - filled), '.'), f * 100)
              << std::flush;
    shown_ = true;
  }
  void done() {
    if (shown_) std::cerr << "\r" << std::string(40, ' ') << "\r" << std::flush;
  }

 private:
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_{};
};

void print_summary_table(const RunOutcome& o, const std::string& out_path) {
  std::cout << fmt::format("capsim run: {} (seed {}, profile {})\n", o.info.scenario, o.info.seed,
                           o.info.profile);
  std::cout << fmt::format("simulated {} in {:.2f}s wall; report: {}\n\n",
                           format_duration(from_seconds(o.info.sim_seconds)), o.wall_seconds,
                           out_path);
  std::size_t w = 0;
  for (const auto& [k, v] : o.result.summary)
    w = std::max(w, k.size());
  for (const auto& [k, v] : o.result.summary) {
    std::cout << fmt::format("{:<{}}  {}\n", k, w, format_number(v));
  }
}

void print_summary_json(const RunOutcome& o, const std::string& out_path) {
  std::string s = "{\n  \"run\": {";
  s += fmt::format(
      "\"scenario\": \"{}\", \"seed\": {}, \"profile\": \"{}\", \"status\": \"{}\", "
      "\"sim_seconds\": {}, \"wall_seconds\": {:.3f}, \"report\": \"{}\"",
      json_escape(o.info.scenario), o.info.seed, json_escape(o.info.profile), o.info.status,
      format_number(o.info.sim_seconds), o.wall_seconds, json_escape(out_path));
  s += "},\n  \"summary\": {";
  for (std::size_t i = 0; i < o.result.summary.size(); ++i) {
    const auto& [k, v] = o.result.summary[i];
    s += fmt::format("{}\n    \"{}\": {}", i ? "," : "", json_escape(k), format_number(v));
  }
  s += "\n  }\n}\n";
  std::cout << s;
}

}  // namespace

int cmd_run(const std::vector<std::string>& args) {
  return guarded("run", [&]() -> int {
    po::options_description opts("Usage: capsim run SCENARIO.yaml [options]\n\nOptions");
    std::string scenario, out, profile, data_dir;
    std::vector<std::string> sets, explain;
    std::string seed_text, record = "full";
    opts.add_options()("help,h", "show this help")(
        "output,o", po::value(&out),
        "report file (default: <scenario name>.db in the current directory)")(
        "seed", po::value(&seed_text), "master seed (overrides the scenario's seed)")(
        "profile", po::value(&profile), "scheduler profile to use (scenario or built-in)")(
        "set", po::value(&sets)->composing(),
        "override a scenario value: key.path=value (repeatable)")(
        "data-dir", po::value(&data_dir), "directory that {data_dir} in scenario paths expands to")(
        "append", "add this run to an existing report file instead of replacing it")(
        "json", "print the summary as JSON")("quiet,q", "no progress or notes on stderr")(
        "paranoid", "check every invariant after every event (slow)")(
        "force", "lift the soft limits on nodes, sample rows and trace rows (docs/cli.md#limits)")(
        "list-profiles", "list the profiles the scenario can run with and exit")(
        "explain", po::value(&explain)->composing(),
        "record every scheduling cycle of the pods matching GLOB in full (every plugin on every "
        "node, preemption candidates) for `capsim explain`: NAME or NAMESPACE/NAME, '*' and '?' "
        "wildcards; repeatable, or a comma-separated list")(
        "record", po::value(&record),
        "how much of the run the report keeps: summary (run, nodes, samples, summary), pods "
        "(also the pod rows) or full (also events, charges, pending reasons, explained cycles; "
        "the default)");
    const po::variables_map vm =
        parse_command_line(opts, args, {{"scenario", po::value(&scenario), 1}});
    if (vm.count("help")) {
      std::cout << opts << "\nThe summary goes to stdout; progress and notes to stderr.\n";
      return kOk;
    }
    if (scenario.empty()) throw UsageError("a scenario file is required");
    const RecordLevel level = parse_record_level(record);
    if (!explain.empty() && level != RecordLevel::kFull) {
      throw UsageError(fmt::format(
          "--explain records explained cycles, which --record {} leaves out; use --record full",
          record));
    }

    const StopSignals stop_signals;
    LoadOptions lo;
    lo.overrides = sets;
    if (vm.count("seed")) lo.seed = parse_seed(seed_text);
    if (vm.count("data-dir")) lo.data_dir = data_dir;
    lo.force = vm.count("force") > 0;
    RealFiles files;
    Scenario s = load_scenario(scenario, lo, files);
    if (vm.count("list-profiles")) {
      for (const auto& n : s.profiles.names())
        std::cout << n << "\n";
      return kOk;
    }
    if (out.empty()) out = s.name + ".db";
    const bool quiet = vm.count("quiet") > 0;

    // The report must not replace the scenario or any file the load read (traces, manifests,
    // node lists, configs), whatever name reaches it (hard link, symlink, ./x).
    std::vector<InputFile> inputs{{"scenario", scenario}};
    for (const FileRead& r : files.reads())
      inputs.push_back({"input file", r.path});
    refuse_output_over_inputs("report", out, inputs);

    SqliteRecorderOptions ro;
    ro.append = vm.count("append") > 0;
    ro.level = level;
    SqliteRecorder recorder(out, ro);

    ProgressBar bar(!quiet && stderr_is_tty());
    RunRequest req;
    req.profile = profile;
    req.paranoid = vm.count("paranoid") > 0;
    req.progress = [&bar](double f) { bar.update(f); };
    req.should_stop = [] { return g_interrupted.load() != 0; };
    for (const std::string& e : explain) {
      std::size_t start = 0;
      while (start <= e.size()) {
        const std::size_t comma = std::min(e.find(',', start), e.size());
        const std::string pattern = e.substr(start, comma - start);
        if (pattern.empty()) throw UsageError(fmt::format("--explain '{}': an empty pattern", e));
        req.explain.push_back(pattern);
        start = comma + 1;
      }
    }
    RunOutcome o;
    try {
      if (g_interrupted.load() != 0) throw Interrupted();  // the signal came while loading
      o = run_scenario(s, req, recorder);
    } catch (const Interrupted&) {
      bar.done();
      recorder.abort();
      if (g_interrupted.load() == SIGTERM) {
        std::cerr << "capsim run: terminated (SIGTERM); no report was written.\n";
        return kTerminated;
      }
      throw;
    } catch (...) {
      bar.done();
      recorder.abort();
      throw;
    }
    bar.done();
    if (!quiet) {
      for (const auto& w : o.warnings)
        std::cerr << "capsim run: note: " << w << "\n";
      if (!req.explain.empty()) {
        std::cerr << fmt::format(
            "capsim run: note: --explain {}: {} scheduling cycle(s) recorded{}\n",
            fmt::join(req.explain, ","), o.explained_cycles,
            o.explained_cycles == 0 ? " (no pod of that name was ever scheduled)" : "");
      }
    }
    if (vm.count("json")) {
      print_summary_json(o, out);
    } else {
      print_summary_table(o, out);
    }
    return kOk;
  });
}

}  // namespace capsim::cli
