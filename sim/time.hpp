// Virtual time. capsim's clock is an integer count of microseconds since the start of the run, so
// that event ordering is exact and runs are reproducible byte for byte. Conversions to seconds are
// for output only; nothing inside the engine computes with floating-point time.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

namespace capsim {

using SimTime = std::int64_t;  // microseconds on the virtual clock
using SimDuration = std::int64_t;

inline constexpr SimTime kMicrosecond = 1;
inline constexpr SimTime kMillisecond = 1000;
inline constexpr SimTime kSecond = 1000 * kMillisecond;
inline constexpr SimTime kMinute = 60 * kSecond;
inline constexpr SimTime kHour = 60 * kMinute;
inline constexpr SimTime kDay = 24 * kHour;
inline constexpr SimTime kEndOfTime = std::numeric_limits<SimTime>::max();

constexpr double to_seconds(SimDuration t) {
  return static_cast<double>(t) / kSecond;
}
constexpr double to_hours(SimDuration t) {
  return static_cast<double>(t) / kHour;
}

// Rounds to the nearest microsecond; callers validate that `s` is finite and in range first.
SimDuration from_seconds(double s);

// Human-readable, e.g. "1h02m03s", "45s", "250ms". For messages and reports only.
std::string format_duration(SimDuration d);

}  // namespace capsim

#include <string_view>

#include "sim/result.hpp"

namespace capsim {

// Parses a duration: a plain number of seconds ("90", "1.5") or a sequence of number+unit
// ("1h30m", "2d", "500ms", "45s", "1.5h"). Units: d h m s ms us. Negative values are rejected.
Result<SimDuration> parse_duration(std::string_view text);

}  // namespace capsim
