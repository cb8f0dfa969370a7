// `capsim score` through the real binary: on the quickstart scenario, a pod that waits at its
// arrival is rejected by a filter on every node, and the per-node reasons add up to the message
// the run itself recorded for that attempt; the JSON has the contract's fields; bad arguments
// exit 2 with a located message.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "fixtures/cli_run.hpp"
#include "reports/run_reader.hpp"

namespace capsim {

namespace {

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size()))
    ++n;
  return n;
}

// The reason of every `plugin` verdict in the JSON, in order.
std::vector<std::string> reasons_of(const std::string& json, const std::string& plugin) {
  std::vector<std::string> out;
  const std::string head = "{\"plugin\": \"" + plugin + "\", \"code\": \"";
  for (std::size_t at = json.find(head); at != std::string::npos; at = json.find(head, at + 1)) {
    const std::size_t r = json.find("\"reason\": \"", at);
    const std::size_t end = json.find("\"}", r);
    out.push_back(json.substr(r + 11, end - r - 11));
  }
  return out;
}

// "0/26 nodes are available: 10 Insufficient memory, 14 Insufficient cpu. preemption: ..." ->
// {"Insufficient memory": 10, "Insufficient cpu": 14}.
std::map<std::string, int> histogram_of(const std::string& message) {
  std::map<std::string, int> h;
  std::string body = message.substr(message.find(": ") + 2);
  body = body.substr(0, body.find(". "));
  std::size_t start = 0;
  while (start < body.size()) {
    std::size_t comma = body.find(", ", start);
    if (comma == std::string::npos) comma = body.size();
    const std::string part = body.substr(start, comma - start);
    const std::size_t space = part.find(' ');
    h[part.substr(space + 1)] = std::stoi(part.substr(0, space));
    start = comma + 2;
  }
  return h;
}

}  // namespace

TEST_SUITE("scenario") {
  TEST_CASE(
      "capsim score on quickstart: a waiting pod's rejecting filter on every node, as the "
      "run's own message counts them") {
    testing::ScratchDir dir("score-quickstart");
    const std::string scenario = "'" + testing::source_path("scenarios/quickstart.yaml") + "'";
    // The run: the first pod that waited, and the message of its first failed attempt.
    const auto run =
        testing::run_capsim("run " + scenario + " -q -o '" + dir.file("q.db") + "'", dir);
    REQUIRE(run.exit_code == 0);
    RunReader reader(dir.file("q.db"));
    auto st = reader.db().prepare(
        "SELECT e.pod, e.time_s, e.detail, p.submit_s FROM event e JOIN pod p ON "
        "p.run_id = e.run_id AND p.pod = e.pod WHERE e.run_id = 1 AND e.kind = 'pending' "
        "ORDER BY e.seq LIMIT 1");
    REQUIRE(st.step());
    const std::string pod = st.column_text(0);
    const std::string message = st.column_text(2);
    // It waited from its arrival: `score`'s default time is that instant.
    REQUIRE(st.column_double(1) == st.column_double(3));
    CAPTURE(pod);
    CAPTURE(message);

    const auto r = testing::run_capsim("score " + scenario + " --pod " + pod + " --json", dir);
    REQUIRE(r.exit_code == 0);
    const std::string& j = r.out;
    CHECK(j.find("\"pod\": \"default/" + pod + "\"") != std::string::npos);
    CHECK(j.find("\"profile\": \"default-scheduler\"") != std::string::npos);
    CHECK(j.find("\"prefilter\": [") != std::string::npos);
    CHECK(j.find("\"selected_node\": null") != std::string::npos);
    CHECK(count_of(j, "{\"node\": \"") == 26);
    CHECK(count_of(j, "\"feasible\": false") == 26);
    CHECK(count_of(j, "\"score\": []") == 26);
    // Every node's first rejection is NodeResourcesFit's; the reasons it gives, counted over the
    // nodes, are the histogram of the scheduler's FitError for the same attempt.
    CHECK(count_of(j, "\"rejected_by\": \"NodeResourcesFit\"") == 26);
    std::map<std::string, int> from_score;
    for (const std::string& reason : reasons_of(j, "NodeResourcesFit")) {
      std::size_t start = 0;
      while (start < reason.size()) {
        std::size_t comma = reason.find(", ", start);
        if (comma == std::string::npos) comma = reason.size();
        from_score[reason.substr(start, comma - start)]++;
        start = comma + 2;
      }
    }
    CHECK(from_score == histogram_of(message));
    // Every filter ran on every node, not only up to the first rejection.
    CHECK(reasons_of(j, "TaintToleration").size() == 26);
    CHECK(reasons_of(j, "GpuDevices").size() == 1 + 26);  // its PreFilter, then every node

    // The table groups the 26 nodes by outcome and names the rejecting plugin.
    const auto t = testing::run_capsim("score " + scenario + " --pod " + pod, dir);
    REQUIRE(t.exit_code == 0);
    CHECK(t.out.find("0/26 nodes feasible") != std::string::npos);
    CHECK(t.out.find("NodeResourcesFit: Insufficient") != std::string::npos);
    CHECK(t.out.find("(--all-nodes lists every node)") != std::string::npos);
    CHECK(t.out.find("selected: none") != std::string::npos);
    const auto all =
        testing::run_capsim("score " + scenario + " --pod " + pod + " --all-nodes", dir);
    REQUIRE(all.exit_code == 0);
    CHECK(all.out.find("\n  a100-15 ") != std::string::npos);
  }
}

TEST_CASE("capsim score: an unknown pod, a bad --at and one past the horizon exit 2") {
  testing::ScratchDir dir("score-errors");
  const std::string up = "'" + testing::source_path("scenarios/upstream-files/scenario.yaml") + "'";
  const auto missing = testing::run_capsim("score " + up + " --pod finetun", dir);
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("--pod finetun: no such pod") != std::string::npos);
  const auto bad_at = testing::run_capsim("score " + up + " --pod x --at banana", dir);
  CHECK(bad_at.exit_code == 2);
  CHECK(bad_at.err.find("--at 'banana'") != std::string::npos);
  const auto late = testing::run_capsim("score " + up + " --pod x --at 3d", dir);
  CHECK(late.exit_code == 2);
  CHECK(late.err.find("--at 3d: beyond the scenario's horizon (48h00m00s)") != std::string::npos);
  const auto no_pod = testing::run_capsim("score " + up, dir);
  CHECK(no_pod.exit_code == 2);
  CHECK(no_pod.err.find("--pod NAME is required") != std::string::npos);
}

}  // namespace capsim
