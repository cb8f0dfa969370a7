#include "tools/capsim/cli.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <boost/program_options/errors.hpp>
#include <iostream>

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
