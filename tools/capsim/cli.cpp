#include "tools/capsim/cli.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <boost/program_options/errors.hpp>
#include <iostream>
#include <optional>

#include "reports/schema.hpp"
#include "reports/sqlite_db.hpp"
#include "reports/sqlite_recorder.hpp"
#include "reports/text/json.hpp"
#include "reports/text/number.hpp"
#include "sim/check.hpp"
#include "sim/input_error.hpp"
#include "sim/simulation.hpp"

namespace capsim::cli {

int guarded(const std::string& command, const std::function<int()>& body) {
  const std::string who = "capsim " + command;
  try {
    return body();
  } catch (const boost::program_options::error& e) {
    std::cerr << fmt::format("{}: usage error: {}\nTry 'capsim {} --help'.\n", who, e.what(),
                             command);
    return kUsage;
  } catch (const UsageError& e) {
    std::cerr << fmt::format("{}: usage error: {}\nTry 'capsim {} --help'.\n", who, e.what(),
                             command);
    return kUsage;
  } catch (const InputError& e) {
    std::cerr << fmt::format("{}: error: {}\n", who, e.what());
    return e.kind() == InputErrorKind::kMissing ? kNoInput : kDataError;
  } catch (const ReportWriteError& e) {
    std::cerr << fmt::format("{}: cannot write output: {}\n", who, e.what());
    return kCannotWrite;
  } catch (const SqliteError& e) {
    // Writers turn their SQLite errors into ReportWriteError, so this is a report being read
    // that is damaged or not a capsim report (RunReader checks what it can up front). Plain
    // words, no SQL text.
    std::cerr << fmt::format("{}: error: {} is not a capsim report (or is truncated)\n", who,
                             e.path());
    return kDataError;
  } catch (const InvariantError& e) {
    std::cerr << fmt::format(
        "{}: internal error: {}\nThis is a bug in capsim; no report was "
        "written.\n",
        who, e.what());
    return kInternal;
  } catch (const Interrupted&) {
    std::cerr << fmt::format("{}: interrupted; no report was written.\n", who);
    return kInterrupted;
  } catch (const std::exception& e) {
    std::cerr << fmt::format("{}: internal error: {}\n", who, e.what());
    return kInternal;
  }
}

std::uint64_t parse_seed(const std::string& text) {
  const auto refuse = [&](std::string_view why) {
    throw InputError(InputErrorKind::kInvalid, InputLocation{"--seed", 0, 0, ""},
                     fmt::format("'{}' is not a seed: {}", text, why));
  };
  if (text.empty()) refuse("a whole number from 0 to 18446744073709551615 is required");
  std::uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') refuse("a seed is a whole number from 0 to 18446744073709551615");
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) refuse("it is larger than 18446744073709551615 (2^64-1)");
    v = v * 10 + d;
  }
  return v;
}

RecordLevel parse_record_level(const std::string& text) {
  const std::optional<RecordLevel> level = record_level_from_name(text);
  if (!level) {
    throw UsageError(
        fmt::format("--record '{}': not a recording level (valid: {})", text, kRecordLevelNames));
  }
  return *level;
}

bool stderr_is_tty() {
  return isatty(STDERR_FILENO) == 1;
}

// Thin wrappers kept for the subcommands that call them; the text is reports/text's.
std::string json_escape(const std::string& s) {
  const std::string quoted = json_quote(s);
  return quoted.substr(1, quoted.size() - 2);
}

std::string format_number(double v) {
  return compact_number(v);
}

}  // namespace capsim::cli
