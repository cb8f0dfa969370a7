// What every parser fuzz target shares: the line between an expected outcome and a finding. A
// located InputError (bad input, reported with file, line and field) is what the loaders promise
// for any bytes, so it is swallowed; everything else reaches libFuzzer as a crash: sanitizer
// reports, CAPSIM_CHECK's InvariantError and any other exception (std::terminate aborts), a
// broken contract checked here (finding() traps), a hang past -timeout, memory past -rss_limit_mb.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "sim/input_error.hpp"

namespace capsim::fuzz {

// The input as text.
inline std::string text_of(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Splits off the first line ("capsim\nrest" -> "capsim", "rest"): targets that read several
// formats take the format's name from it. Without a newline the head is everything.
inline std::string_view first_line(std::string_view in, std::string_view& rest) {
  const std::size_t nl = in.find('\n');
  rest = nl == std::string_view::npos ? std::string_view() : in.substr(nl + 1);
  return in.substr(0, nl);
}

// A contract the parsers promise is broken: an error without a message or a location, an
// importer writing what its own loader refuses.
[[noreturn]] inline void finding() {
  __builtin_trap();
}

// With CAPSIM_FUZZ_VERBOSE set, the input errors a target expects are printed: for triage,
// replaying one input (`capsim_scenario_fuzz FILE`).
inline void note(const InputError& e) {
  if (std::getenv("CAPSIM_FUZZ_VERBOSE") != nullptr) std::fprintf(stderr, "%s\n", e.what());
}

// Runs `load`; an InputError is an expected outcome, but it must say what is wrong and where.
template <typename Load>
void expect_input_errors(Load&& load) {
  try {
    load();
  } catch (const InputError& e) {
    note(e);
    if (e.message().empty() || e.where().file.empty()) finding();
  }
}

}  // namespace capsim::fuzz
