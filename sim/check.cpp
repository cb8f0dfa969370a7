#include "sim/check.hpp"

#include <fmt/format.h>

namespace capsim {

std::int64_t& InvariantContext::current_event() {
  thread_local std::int64_t seq = -1;
  return seq;
}

void invariant_failed(const char* expr, const std::string& sentence, const char* file, int line) {
  const std::int64_t ev = InvariantContext::current_event();
  std::string where = ev >= 0 ? fmt::format(" (while processing event #{})", ev) : std::string();
  throw InvariantError(
      fmt::format("invariant violated: {}{} [{} at {}:{}]", sentence, where, expr, file, line));
}

}  // namespace capsim
