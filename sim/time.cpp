#include "sim/time.hpp"

#include <fmt/format.h>

#include <cmath>

namespace capsim {

SimDuration from_seconds(double s) {
  return static_cast<SimDuration>(std::llround(s * kSecond));
}

std::string format_duration(SimDuration d) {
  if (d < 0) return "-" + format_duration(-d);
  if (d < kSecond) {
    if (d % kMillisecond == 0) return fmt::format("{}ms", d / kMillisecond);
    return fmt::format("{}us", d);
  }
  const std::int64_t total_s = d / kSecond;
  const std::int64_t h = total_s / 3600;
  const std::int64_t m = (total_s / 60) % 60;
  const std::int64_t s = total_s % 60;
  const std::int64_t frac_ms = (d % kSecond) / kMillisecond;
  std::string sec = frac_ms ? fmt::format("{}.{:03}s", s, frac_ms) : fmt::format("{}s", s);
  if (h > 0) return fmt::format("{}h{:02}m{}", h, m, frac_ms ? sec : fmt::format("{:02}s", s));
  if (m > 0) return fmt::format("{}m{}", m, frac_ms ? sec : fmt::format("{:02}s", s));
  return sec;
}

}  // namespace capsim

#include <cctype>
#include <charconv>

namespace capsim {

Result<SimDuration> parse_duration(std::string_view text) {
  std::string_view s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  if (s.empty()) return make_error("empty duration");
  if (s.front() == '-') return make_error(fmt::format("'{}' is negative", text));
  double total_us = 0;
  bool any = false;
  while (!s.empty()) {
    double num = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), num);
    if (ec != std::errc() || p == s.data()) {
      return make_error(fmt::format("'{}' is not a duration (try 90s, 15m, 1h30m or 2d)", text));
    }
    s.remove_prefix(static_cast<std::size_t>(p - s.data()));
    std::size_t u = 0;
    while (u < s.size() && std::isalpha(static_cast<unsigned char>(s[u])))
      ++u;
    std::string_view unit = s.substr(0, u);
    s.remove_prefix(u);
    double scale = 0;
    if (unit.empty()) {
      if (any || !s.empty())
        return make_error(fmt::format("'{}' needs a unit after each number", text));
      scale = kSecond;
    } else if (unit == "d") {
      scale = kDay;
    } else if (unit == "h") {
      scale = kHour;
    } else if (unit == "m") {
      scale = kMinute;
    } else if (unit == "s") {
      scale = kSecond;
    } else if (unit == "ms") {
      scale = kMillisecond;
    } else if (unit == "us") {
      scale = kMicrosecond;
    } else {
      return make_error(
          fmt::format("'{}' has an unknown unit '{}' (use d, h, m, s, ms or us)", text, unit));
    }
    if (!(num >= 0) || num > 1e15) return make_error(fmt::format("'{}' is out of range", text));
    total_us += num * scale;
    any = true;
  }
  if (total_us > 9.0e18) return make_error(fmt::format("'{}' is out of range", text));
  return static_cast<SimDuration>(std::llround(total_us));
}

}  // namespace capsim
