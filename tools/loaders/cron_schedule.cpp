#include "tools/loaders/cron_schedule.hpp"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>

namespace capsim {

namespace {

struct FieldRange {
  const char* name;
  int min;
  int max;
  const char* const* names;  // names[i] stands for min + i (nullptr: numbers only)
  std::size_t name_count;
};

constexpr std::array<const char*, 12> kMonths = {"jan", "feb", "mar", "apr", "may", "jun",
                                                 "jul", "aug", "sep", "oct", "nov", "dec"};
constexpr std::array<const char*, 7> kDays = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

bool parse_value(std::string_view s, const FieldRange& f, int& out, std::string& error) {
  if (f.names != nullptr && s.size() == 3 && std::isalpha(static_cast<unsigned char>(s[0]))) {
    std::string lower;
    for (char c : s)
      lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (std::size_t i = 0; i < f.name_count; ++i) {
      if (lower == f.names[i]) {
        out = f.min + static_cast<int>(i);
        return true;
      }
    }
  }
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) {
    error = fmt::format("'{}' is not a number{} in the {} field", s,
                        f.names != nullptr ? " or a name" : "", f.name);
    return false;
  }
  // Day of week 7 is Sunday, as 0.
  const int max = std::string_view(f.name) == "day-of-week" ? 7 : f.max;
  if (out < f.min || out > max) {
    error = fmt::format("{} is out of range for the {} field ({}-{})", out, f.name, f.min, max);
    return false;
  }
  return true;
}

// One field: a comma-separated list of `*`, `?`, values, ranges, each with an optional /step.
template <std::size_t N>
bool parse_field(std::string_view text, const FieldRange& f, std::bitset<N>& bits, bool& star,
                 std::string& error) {
  star = text == "*" || text == "?";
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string_view item =
        text.substr(start, comma == std::string_view::npos ? text.npos : comma - start);
    if (item.empty()) {
      error = fmt::format("empty list item in the {} field '{}'", f.name, text);
      return false;
    }
    std::string_view range = item;
    int step = 1;
    if (const auto slash = item.find('/'); slash != std::string_view::npos) {
      range = item.substr(0, slash);
      const std::string_view st = item.substr(slash + 1);
      const auto [ptr, ec] = std::from_chars(st.data(), st.data() + st.size(), step);
      if (ec != std::errc() || ptr != st.data() + st.size() || st.empty() || step <= 0) {
        error = fmt::format("'{}' is not a positive step in the {} field", st, f.name);
        return false;
      }
    }
    int lo = f.min;
    int hi = f.max;
    if (range == "*" || range == "?") {
      // the whole range
    } else if (const auto dash = range.find('-'); dash != std::string_view::npos) {
      if (!parse_value(range.substr(0, dash), f, lo, error) ||
          !parse_value(range.substr(dash + 1), f, hi, error)) {
        return false;
      }
      if (hi < lo) {
        error = fmt::format("the range '{}' of the {} field ends before it starts", range, f.name);
        return false;
      }
    } else {
      if (!parse_value(range, f, lo, error)) return false;
      // `a/n` runs from a to the end of the range; a bare value is itself.
      hi = item.find('/') != std::string_view::npos ? f.max : lo;
    }
    for (int v = lo; v <= hi; v += step) {
      const int idx = (std::string_view(f.name) == "day-of-week" && v == 7) ? 0 : v;
      bits.set(static_cast<std::size_t>(idx));
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return true;
}

// Days since 1970-01-01 to a civil date (Howard Hinnant's days_from_civil, inverted).
void civil_from_days(std::int64_t z, int& month, int& day) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
}

}  // namespace

bool CronSchedule::parse(std::string_view text, CronSchedule& out, std::string& error) {
  // Trim.
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  if (text.rfind("TZ=", 0) == 0 || text.rfind("CRON_TZ=", 0) == 0) {
    error = "a time zone in the schedule is not allowed (Kubernetes rejects it); use spec.timeZone";
    return false;
  }
  std::string expanded;
  if (!text.empty() && text.front() == '@') {
    if (text == "@yearly" || text == "@annually") {
      expanded = "0 0 1 1 *";
    } else if (text == "@monthly") {
      expanded = "0 0 1 * *";
    } else if (text == "@weekly") {
      expanded = "0 0 * * 0";
    } else if (text == "@daily" || text == "@midnight") {
      expanded = "0 0 * * *";
    } else if (text == "@hourly") {
      expanded = "0 * * * *";
    } else {
      error = fmt::format(
          "unknown schedule macro '{}' (capsim reads @yearly, @annually, @monthly, @weekly, "
          "@daily, @midnight and @hourly)",
          text);
      return false;
    }
    text = expanded;
  }
  std::vector<std::string_view> fields;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])))
      ++i;
    const std::size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i])))
      ++i;
    if (i > start) fields.push_back(text.substr(start, i - start));
  }
  if (fields.size() != 5) {
    error = fmt::format(
        "a schedule has 5 fields (minute hour day-of-month month day-of-week), this one has {}",
        fields.size());
    return false;
  }
  static const FieldRange kMinuteField{"minute", 0, 59, nullptr, 0};
  static const FieldRange kHourField{"hour", 0, 23, nullptr, 0};
  static const FieldRange kDomField{"day-of-month", 1, 31, nullptr, 0};
  static const FieldRange kMonthField{"month", 1, 12, kMonths.data(), kMonths.size()};
  static const FieldRange kDowField{"day-of-week", 0, 6, kDays.data(), kDays.size()};
  CronSchedule s;
  bool star = false;
  if (!parse_field(fields[0], kMinuteField, s.minute_, star, error)) return false;
  if (!parse_field(fields[1], kHourField, s.hour_, star, error)) return false;
  if (!parse_field(fields[2], kDomField, s.dom_, s.dom_star_, error)) return false;
  if (!parse_field(fields[3], kMonthField, s.month_, star, error)) return false;
  if (!parse_field(fields[4], kDowField, s.dow_, s.dow_star_, error)) return false;
  out = s;
  return true;
}

bool CronSchedule::matches(std::int64_t minute) const {
  if (minute < 0) return false;
  const std::int64_t day = minute / (24 * 60);
  const auto minute_of_day = static_cast<int>(minute % (24 * 60));
  if (!minute_.test(static_cast<std::size_t>(minute_of_day % 60))) return false;
  if (!hour_.test(static_cast<std::size_t>(minute_of_day / 60))) return false;
  int month = 0;
  int dom = 0;
  civil_from_days(day, month, dom);
  if (!month_.test(static_cast<std::size_t>(month))) return false;
  const auto dow = static_cast<std::size_t>((day + 4) % 7);  // 1970-01-01 was a Thursday (4)
  const bool dom_ok = dom_.test(static_cast<std::size_t>(dom));
  const bool dow_ok = dow_.test(dow);
  if (dom_star_ || dow_star_) return dom_ok && dow_ok;
  return dom_ok || dow_ok;
}

std::vector<SimTime> CronSchedule::times(SimTime from, SimTime until, std::size_t limit,
                                         bool& truncated) const {
  std::vector<SimTime> out;
  truncated = false;
  if (until <= from) return out;
  // The first whole minute strictly after `from`.
  std::int64_t m = from / kMinute + 1;
  if (from < 0) m = 0;
  const std::int64_t last = (until - 1) / kMinute;  // t < until
  for (; m <= last; ++m) {
    // Skip a whole hour whose hour does not match.
    if (!hour_.test(static_cast<std::size_t>((m / 60) % 24))) {
      m = (m / 60 + 1) * 60 - 1;
      continue;
    }
    if (!matches(m)) continue;
    if (out.size() == limit) {
      truncated = true;
      break;
    }
    out.push_back(m * kMinute);
  }
  return out;
}

}  // namespace capsim
