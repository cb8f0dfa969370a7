// Invariant checks. A broken invariant (negative free memory, an event in the past, quota above
// its limit) is a bug in capsim, not bad input: CAPSIM_CHECK throws InvariantError, which the CLI
// maps to exit code 70 after discarding the half-written report. The message names the event
// being processed when the engine has set one (see InvariantContext).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace capsim {

class InvariantError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// The engine records the sequence number of the event it is executing here so that a failed
// check can say where in the run it happened. One per thread: parallel sweeps run one engine
// per thread.
struct InvariantContext {
  static std::int64_t& current_event();
};

[[noreturn]] void invariant_failed(const char* expr, const std::string& sentence, const char* file,
                                   int line);

}  // namespace capsim

#define CAPSIM_CHECK(cond, sentence)                                                \
  do {                                                                              \
    if (!(cond)) ::capsim::invariant_failed(#cond, (sentence), __FILE__, __LINE__); \
  } while (false)
