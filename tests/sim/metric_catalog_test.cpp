// The metric catalog: family patterns match exactly the names their producers build, lookups
// prefer an exact name, entries are unique, and put_metric refuses a name the catalog lacks.
#include "sim/metric_catalog.hpp"

#include <doctest/doctest.h>

#include <set>
#include <string>

#include "sim/check.hpp"

using namespace capsim;

TEST_CASE("a family pattern matches a non-empty name in its hole and nothing else") {
  struct Case {
    const char* name;
    const char* pattern;
    const char* metric;
    bool want;
  };
  const Case cases[] = {
      {"a plain queue name", "queue.{}.pods", "queue.team-a.pods", true},
      {"a LocalQueue with its namespace", "queue.{}.pods", "queue.ml/train.pods", true},
      {"a queue name with dots", "queue.{}.wait_seconds_p95", "queue.a.b.wait_seconds_p95", true},
      {"an empty hole", "queue.{}.pods", "queue..pods", false},
      {"prefix and suffix overlapping", "queue.{}.pods", "queue.pods", false},
      {"another prefix", "queue.{}.gpu_hours", "clusterqueue.a.gpu_hours", false},
      {"another suffix", "queue.{}.pods", "queue.a.pods_total", false},
      {"an exact name equals itself", "pods_total", "pods_total", true},
      {"an exact name is no pattern", "pods_total", "pods_totals", false},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(family_matches(c.pattern, c.metric) == c.want);
  }
}

TEST_CASE("every catalog entry is unique, documented and has at most one hole") {
  std::set<std::string_view> names;
  std::set<int> cards;
  for (const MetricDef& d : metric_catalog()) {
    CAPTURE(d.name);
    CHECK(names.insert(d.name).second);
    CHECK(!d.unit.empty());
    CHECK(!d.help.empty());
    CHECK(d.help.back() == '.');
    const std::size_t hole = d.name.find("{}");
    CHECK(
        (hole == std::string_view::npos || d.name.find("{}", hole + 2) == std::string_view::npos));
    if (d.headline > 0) CHECK(cards.insert(d.headline).second);
    if (d.gate) CHECK(d.direction != Direction::kNeutral);  // a gate needs a bad direction
  }
  // Cards are numbered 1..n without gaps.
  CHECK((cards.empty() ||
         (*cards.begin() == 1 && *cards.rbegin() == static_cast<int>(cards.size()))));
}

TEST_CASE("a lookup finds the exact entry, then the family, and nothing for unknown names") {
  REQUIRE(find_metric("wait_seconds_p95") != nullptr);
  CHECK(find_metric("wait_seconds_p95")->name == "wait_seconds_p95");
  REQUIRE(find_metric("queue.team-a.wait_seconds_p95") != nullptr);
  CHECK(find_metric("queue.team-a.wait_seconds_p95")->name == "queue.{}.wait_seconds_p95");
  CHECK(find_metric("clusterqueue.cq.gpu_hours")->name == "clusterqueue.{}.gpu_hours");
  CHECK(find_metric("sharing.mig.gpus")->name == "sharing.{}.gpus");
  CHECK(find_metric("gpu_hours_stranded") == nullptr);
  CHECK(find_metric("queue.{}.pods") != nullptr);  // a pattern is an instance of itself
}

TEST_CASE("putting a metric the catalog does not hold is a bug, not a silent neutral metric") {
  Summary s;
  put_metric(s, "pods_total", 3);
  REQUIRE(s.size() == 1);
  CHECK(s[0].first == "pods_total");
  CHECK_THROWS_AS(put_metric(s, "gpu_hours_stranded", 1), InvariantError);
  CHECK(s.size() == 1);
}
