// CronJob schedules in the standard 5-field syntax: fields, names, ranges, steps, lists, macros,
// the day-of-month/day-of-week rule, and the errors, with times on the simulation clock whose 0
// is 1970-01-01T00:00 UTC (a Thursday).
#include "tools/loaders/cron_schedule.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace capsim {
namespace {

std::vector<SimTime> times(const char* text, SimTime until, SimTime from = 0) {
  CronSchedule s;
  std::string error;
  REQUIRE_MESSAGE(CronSchedule::parse(text, s, error), error);
  bool truncated = false;
  return s.times(from, until, 100000, truncated);
}

std::string parse_error(const char* text) {
  CronSchedule s;
  std::string error;
  if (CronSchedule::parse(text, s, error)) return "<parsed>";
  return error;
}

}  // namespace

TEST_CASE("cron schedules give the times the CronJob controller would run them") {
  struct Case {
    const char* name;
    const char* schedule;
    SimTime until;
    std::size_t want_count;
    SimTime want_first;
  };
  const Case cases[] = {
      // Strictly after creation at 0: 01:00 .. 23:00, the 24:00 run is at the horizon.
      {"hourly on the hour", "0 * * * *", kDay, 23, kHour},
      {"@hourly is the same", "@hourly", kDay, 23, kHour},
      {"every 15 minutes", "*/15 * * * *", kDay, 95, 15 * kMinute},
      {"a range with a step", "0 9-17/4 * * *", kDay, 3, 9 * kHour},  // 9, 13, 17
      {"a list", "30 6,18 * * *", kDay, 2, 6 * kHour + 30 * kMinute},
      {"a/n runs to the end of the range", "50/5 0 * * *", kDay, 2, 50 * kMinute},  // 50, 55
      // 1970-01-01 is a Thursday; the first Monday is Jan 5, day 4.
      {"weekdays by name", "0 2 * * mon", 14 * kDay, 2, 4 * kDay + 2 * kHour},
      {"Sunday as 7", "0 0 * * 7", 14 * kDay, 2, 3 * kDay},  // Jan 4 and Jan 11
      {"@daily", "@daily", 3 * kDay, 2, kDay},
      // Both day fields restricted: either matches (the 10th, or a Monday: Jan 5, 10, 12).
      {"day-of-month or day-of-week", "0 0 10 * mon", 14 * kDay, 3, 4 * kDay},
      // One restricted: both must hold (the 1st of a month that is February).
      {"a month by name", "0 0 1 feb *", 60 * kDay, 1, 31 * kDay},
      {"@monthly over 3 months", "@monthly", 90 * kDay, 2, 31 * kDay},  // Feb 1, Mar 1
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const std::vector<SimTime> t = times(c.schedule, c.until);
    CHECK(t.size() == c.want_count);
    REQUIRE(!t.empty());
    CHECK(t.front() == c.want_first);
    for (std::size_t i = 1; i < t.size(); ++i)
      CHECK(t[i] > t[i - 1]);
  }
}

TEST_CASE("a cron schedule starts strictly after the CronJob's creation") {
  const std::vector<SimTime> t = times("0 * * * *", 5 * kHour, 2 * kHour);
  REQUIRE(t.size() == 2);
  CHECK(t[0] == 3 * kHour);
  CHECK(t[1] == 4 * kHour);
}

TEST_CASE("malformed cron schedules say what is wrong") {
  CHECK(parse_error("0 * * *").find("has 5 fields") != std::string::npos);
  CHECK(parse_error("60 * * * *").find("out of range for the minute field") != std::string::npos);
  CHECK(parse_error("* 24 * * *").find("hour field") != std::string::npos);
  CHECK(parse_error("* * 0 * *").find("day-of-month") != std::string::npos);
  CHECK(parse_error("* * * foo *").find("not a number or a name") != std::string::npos);
  CHECK(parse_error("*/0 * * * *").find("positive step") != std::string::npos);
  CHECK(parse_error("5-2 * * * *").find("ends before it starts") != std::string::npos);
  CHECK(parse_error("@every 5m").find("unknown schedule macro") != std::string::npos);
  CHECK(parse_error("TZ=UTC 0 * * * *").find("time zone") != std::string::npos);
  CHECK(parse_error("1,,2 * * * *").find("empty list item") != std::string::npos);
}

}  // namespace capsim
