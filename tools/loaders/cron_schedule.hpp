// A CronJob schedule in the standard 5-field syntax the Kubernetes CronJob controller accepts
// (minute hour day-of-month month day-of-week): `*`, `?` (as `*`), numbers, names (jan-dec,
// sun-sat), ranges `a-b`, steps `*/n`, `a-b/n`, `a/n`, lists `a,b`, day-of-week 7 as Sunday, and
// the macros @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly. As in the
// controller's cron library, when both day fields are restricted a day matches either of them;
// when one is `*`, both must hold. Times are minutes of the simulation clock, whose 0 is taken as
// 1970-01-01T00:00 UTC (a Thursday). A value type.
#pragma once

#include <bitset>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/time.hpp"

namespace capsim {

class CronSchedule {
 public:
  // Parses `text`; on a malformed schedule returns false and sets `error` to what is wrong.
  static bool parse(std::string_view text, CronSchedule& out, std::string& error);

  // Whether the minute starting at `minute` (minutes since time 0) is scheduled.
  bool matches(std::int64_t minute) const;

  // Scheduled times t with from < t < until, in order (the controller runs a schedule strictly
  // after the CronJob was created); at most `limit` of them (more sets `truncated`).
  std::vector<SimTime> times(SimTime from, SimTime until, std::size_t limit, bool& truncated) const;

 private:
  std::bitset<60> minute_;
  std::bitset<24> hour_;
  std::bitset<32> dom_;    // 1..31
  std::bitset<13> month_;  // 1..12
  std::bitset<7> dow_;     // 0..6, Sunday 0
  bool dom_star_ = false;
  bool dow_star_ = false;
};

}  // namespace capsim
