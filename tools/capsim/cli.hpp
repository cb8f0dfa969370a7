// Shared pieces of the capsim command line: exit codes (design.md §3), error reporting that maps
// every failure to one of them, and small output helpers. Data goes to stdout; progress and
// diagnostics to stderr.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace capsim {
enum class RecordLevel;  // sim/recorder.hpp
}  // namespace capsim

namespace capsim::cli {

enum ExitCode : int {
  kOk = 0,
  kRegression = 1,     // `check` found a regression
  kUsage = 2,          // bad command line
  kNotRecorded = 3,    // `explain`: the run was recorded below --record full (no explained cycles)
  kDataError = 65,     // invalid input data
  kNoInput = 66,       // an input file is missing
  kInternal = 70,      // internal error / invariant violated
  kCannotWrite = 74,   // cannot write the output
  kInterrupted = 130,  // SIGINT
  kTerminated = 143,   // SIGTERM (what Kubernetes and Slurm send to stop a job)
};

// Runs `body`, catching every error and printing it as "capsim <cmd>: error: ..." on stderr.
int guarded(const std::string& command, const std::function<int()>& body);

// Raised for command-line mistakes that Boost.Program_options does not catch itself.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The value of --seed: a whole number from 0 to 2^64-1, digits only (program_options would
// wrap "-1" round to 2^64-1). Anything else is InputError (exit 65) located at "--seed".
std::uint64_t parse_seed(const std::string& text);

// The value of --record: summary, pods or full. Anything else is a UsageError (exit 2) that lists
// the valid values.
RecordLevel parse_record_level(const std::string& text);

bool stderr_is_tty();
// `s` JSON-escaped, without the quotes (reports/text/json.hpp's json_quote).
std::string json_escape(const std::string& s);
// reports/text/number.hpp's compact_number: integers without decimals, others to 6 digits.
std::string format_number(double v);

int cmd_run(const std::vector<std::string>& args);
int cmd_validate(const std::vector<std::string>& args);
int cmd_catalog(const std::vector<std::string>& args);
int cmd_import(const std::vector<std::string>& args);
int cmd_report(const std::vector<std::string>& args);
int cmd_compare(const std::vector<std::string>& args);
int cmd_check(const std::vector<std::string>& args);
int cmd_sweep(const std::vector<std::string>& args);
int cmd_merge(const std::vector<std::string>& args);
int cmd_plan(const std::vector<std::string>& args);
int cmd_score(const std::vector<std::string>& args);
int cmd_explain(const std::vector<std::string>& args);

}  // namespace capsim::cli
