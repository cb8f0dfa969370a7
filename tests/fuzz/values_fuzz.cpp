// libFuzzer target for the value parsers every file format shares: Kubernetes quantities
// (sim/quantity.hpp, at the scales capsim reads: bytes, millicores, and signed), durations
// (sim/time.hpp), CronJob schedules (tools/loaders/cron_schedule.hpp), RFC 3339 times
// (tools/loaders/k8s_dump.hpp) and `--set key.path=value` assignments (models/yaml_reader.hpp),
// each given the whole input. Besides crashes, it checks what the parsers promise:
//   - a quantity's Value() is its MilliValue() / 1000 rounded up (both round up: ceil(ceil(1000x)
//     / 1000) = ceil(x)); a value formatted by format_bytes / format_milli parses back to itself;
//   - a duration that format_duration writes exactly (whole milliseconds, or under a second)
//     parses back to itself, below 2^53 us where the parser's double sum is exact;
//   - a CronJob's times are whole minutes, strictly increasing, inside (from, until), each one
//     matching the schedule, and no more than the limit.
//   build/fuzz/tests/fuzz/capsim_values_fuzz -max_total_time=600 WORKDIR tests/fuzz/corpus/values
#include <cstddef>
#include <cstdint>
#include <string>

#include <yaml-cpp/yaml.h>

#include "models/yaml_reader.hpp"
#include "sim/quantity.hpp"
#include "sim/time.hpp"
#include "tests/fuzz/fuzz_common.hpp"
#include "tools/loaders/cron_schedule.hpp"
#include "tools/loaders/k8s_dump.hpp"

namespace {

using capsim::fuzz::finding;

void quantities(const std::string& in) {
  const auto value = capsim::parse_quantity_scaled(in, 0);
  const auto milli = capsim::parse_quantity_scaled(in, 3);
  for (const auto* r : {&value, &milli}) {
    if (!r->ok() && r->error().empty()) finding();
    if (r->ok() && **r < 0) finding();  // negatives are refused unless allowed
  }
  if (value.ok() && milli.ok()) {
    // ceil(x) = ceil(ceil(1000 x) / 1000), x >= 0.
    const std::int64_t want = *milli / 1000 + (*milli % 1000 != 0 ? 1 : 0);
    if (*value != want) finding();
  }
  if (value.ok()) {
    const auto back = capsim::parse_quantity(capsim::format_bytes(*value));
    if (!back.ok() || *back != *value) finding();
  }
  if (milli.ok()) {
    const auto back = capsim::parse_milli_quantity(capsim::format_milli(*milli));
    if (!back.ok() || *back != *milli) finding();
  }
  const auto signed_milli = capsim::parse_quantity_scaled(in, 3, true);
  if (milli.ok() && (!signed_milli.ok() || *signed_milli != *milli)) finding();
  (void)capsim::parse_quantity_scaled(in, -3);
  (void)capsim::parse_quantity_scaled(in, 9);
}

void durations(const std::string& in) {
  const auto d = capsim::parse_duration(in);
  if (!d.ok()) {
    if (d.error().empty()) finding();
    return;
  }
  if (*d < 0) finding();
  const bool exact = *d < capsim::kSecond || *d % capsim::kMillisecond == 0;
  if (exact && *d < (std::int64_t{1} << 53)) {
    const auto back = capsim::parse_duration(capsim::format_duration(*d));
    if (!back.ok() || *back != *d) finding();
  }
}

void cron(const std::string& in) {
  capsim::CronSchedule s;
  std::string error;
  if (!capsim::CronSchedule::parse(in, s, error)) {
    if (error.empty()) finding();
    return;
  }
  // Two weeks from an odd start, at most 500 times.
  const capsim::SimTime from = 3 * capsim::kDay + 17 * capsim::kSecond;
  const capsim::SimTime until = from + 14 * capsim::kDay;
  bool truncated = false;
  const auto times = s.times(from, until, 500, truncated);
  if (times.size() > 500) finding();
  capsim::SimTime prev = from;
  for (capsim::SimTime t : times) {
    if (t <= prev || t >= until || t % capsim::kMinute != 0) finding();
    if (!s.matches(t / capsim::kMinute)) finding();
    prev = t;
  }
}

void assignment(const std::string& in) {
  YAML::Node root = YAML::Load(
      "name: n\ncluster:\n  pools:\n    - {name: a, count: 2, gpu: {model: B200, count: 8}}\n"
      "    - {name: b, count: 1}\nworkload: {synthetic: {tenants: [{name: t, gpus: 1}]}}\n");
  capsim::fuzz::expect_input_errors([&] { (void)capsim::apply_override(root, in); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string in = capsim::fuzz::text_of(data, size);
  quantities(in);
  durations(in);
  cron(in);
  (void)capsim::parse_rfc3339(in);
  assignment(in);
  return 0;
}
