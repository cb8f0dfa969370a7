// `capsim run` stopped by a signal, as Ctrl-C, `kill`, `kubectl delete` and Slurm's `scancel`
// stop it: SIGINT and SIGTERM both end the run at the next event boundary with their own exit
// code (130, 143), and leave nothing under the output's name, nor a temporary file beside it; an
// older report of that name is kept as it was.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "fixtures/cli_run.hpp"

namespace capsim {

namespace {

// Long enough that a signal after half a second always arrives mid-run: thousands of pods a
// simulated day over two months on a small fleet.
const char* kLongRun =
    "name: long\nseed: 1\nsimulation: {horizon: 60d, sample_interval: 1m}\n"
    "cluster:\n  pools:\n    - {name: a100, count: 8, cpu: 96, memory: 1024Gi,\n"
    "       gpu: {model: A100-80GB, count: 8}}\n"
    "workload:\n  synthetic:\n    tenants:\n"
    "      - {name: t, rate_per_hour: 100, gpus: {choice: {1: 3, 2: 2, 4: 1}},\n"
    "         duration: {exponential: {mean: 20m}}}\n";

struct Stopped {
  int exit_code = -1;
  std::string err;
};

// Runs the long scenario into `db` and sends `signal` after 0.5 s (coreutils' timeout; with
// --preserve-status its exit code is capsim's own).
Stopped run_and_signal(const testing::ScratchDir& dir, const std::string& db, const char* signal) {
  testing::write_file(dir.file("long.yaml"), kLongRun);
  const std::string err = dir.file(std::string("stderr-") + signal);
  const std::string cmd = std::string("timeout --preserve-status -s ") + signal + " 0.5 '" +
                          CAPSIM_BINARY + "' run --quiet '" + dir.file("long.yaml") + "' -o '" +
                          db + "' 2> '" + err + "'";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, testing::slurp(err)};
}

int files_in(const testing::ScratchDir& dir, const std::string& prefix) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path)) {
    if (e.path().filename().string().rfind(prefix, 0) == 0) ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("SIGTERM and SIGINT stop a run with their own exit codes and write no report") {
  for (const auto& [name, code] :
       {std::pair<const char*, int>{"TERM", 143}, std::pair<const char*, int>{"INT", 130}}) {
    const char* signal = name;  // CAPTURE copies no structured binding (clang++ 14)
    CAPTURE(signal);
    testing::ScratchDir dir("stop-signals");
    const Stopped s = run_and_signal(dir, dir.file("out.db"), signal);
    CHECK(s.exit_code == code);
    CHECK(!std::filesystem::exists(dir.file("out.db")));
    CHECK(files_in(dir, "out.db") == 0);  // no temporary file left beside it either
    CHECK(s.err.find("no report") != std::string::npos);
  }
}

TEST_CASE("a run stopped by SIGTERM keeps the older report of the same name") {
  testing::ScratchDir dir("stop-signals-keep");
  testing::write_file(dir.file("out.db"), "an older report\n");
  const Stopped s = run_and_signal(dir, dir.file("out.db"), "TERM");
  CHECK(s.exit_code == 143);
  CHECK(testing::slurp(dir.file("out.db")) == "an older report\n");
  CHECK(files_in(dir, "out.db") == 1);
}

}  // namespace capsim
