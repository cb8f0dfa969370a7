#include "tools/capsim/cli.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <boost/program_options/errors.hpp>
#include <cmath>
#include <iostream>

#include "reports/sqlite_recorder.hpp"
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

std::string json_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 2);
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<int>(c));
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string format_number(double v) {
  if (!std::isfinite(v)) return "null";
  if (std::fabs(v - std::round(v)) < 1e-9 && std::fabs(v) < 1e15)
    return fmt::format("{}", std::llround(v));
  return fmt::format("{:.6g}", v);
}

}  // namespace capsim::cli
