// `capsim run --explain` and `capsim explain` through the real binary: on a fixture where a
// high-priority pod must preempt (tests/data/explain/preemption.yaml), the explained attempt
// lists every candidate node, its victims, the chosen one and the criterion each other one lost
// on; the kss output carries kube-scheduler-simulator's annotation keys and JSON shapes; a pod
// never explained, an unknown pod and a file of an older schema are told apart (exit 65); and
// explaining changes nothing in the run.
#include <doctest/doctest.h>

#include <string>

#include "fixtures/cli_run.hpp"
#include "reports/run_reader.hpp"
#include "reports/sqlite_db.hpp"

namespace capsim {

namespace {

std::string scenario() {
  return "'" + testing::source_path("tests/data/explain/preemption.yaml") + "'";
}

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size()))
    ++n;
  return n;
}

// The rows of `sql` (one text column each), joined by "\n".
std::string rows(const std::string& db, const std::string& sql) {
  RunReader reader(db);
  Statement st = reader.db().prepare(sql);
  std::string out;
  while (st.step()) {
    for (int c = 0; c < st.column_count(); ++c)
      out += (c ? "|" : "") + st.column_text(c);
    out += "\n";
  }
  return out;
}

}  // namespace

TEST_CASE(
    "capsim explain on a preempting pod names every candidate, its victims, the chosen one "
    "and why each other lost") {
  testing::ScratchDir dir("explain-preemption");
  const std::string db = dir.file("p.db");
  const auto run = testing::run_capsim(
      "run " + scenario() + " -o '" + db + "' --explain high --explain 'nobody,no*'", dir);
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.err.find("--explain high,nobody,no*: 2 scheduling cycle(s) recorded") !=
        std::string::npos);

  // The tables, as SQL sees them: the first attempt nominated node-a, the second bound there.
  CHECK(rows(db, "SELECT attempt, result, node, post_filter FROM explain_attempt ORDER BY rowid") ==
        "1|nominated|node-a|1\n2|scheduled|node-a|0\n");
  CHECK(rows(db,
             "SELECT node, chosen, victims, highest_priority, lost_on FROM explain_candidate "
             "WHERE attempt = 1 ORDER BY candidate") ==
        "node-a|1|low-a1|10|\nnode-b|0|low-b1, low-b2|10|priority_sum\n"
        "node-c|0|mid-c1|50|highest_priority\n");
  CHECK(rows(db, "SELECT count(*) FROM explain_node WHERE attempt = 1 AND feasible = 0") == "3\n");

  // JSON: the attempts with capsim score's node objects and the preemption decision.
  const auto j = testing::run_capsim("explain '" + db + "' high --json", dir);
  REQUIRE_MESSAGE(j.exit_code == 0, j.err);
  CHECK(j.out.find("\"pod\": \"default/high\"") != std::string::npos);
  CHECK(count_of(j.out, "\"attempt\": ") == 2);
  CHECK(j.out.find("\"result\": \"nominated\", \"node\": \"node-a\"") != std::string::npos);
  CHECK(j.out.find("{\"node\": \"node-a\", \"victims\": [\"low-a1\"], \"chosen\": true") !=
        std::string::npos);
  CHECK(j.out.find("{\"node\": \"node-b\", \"victims\": [\"low-b1\", \"low-b2\"], \"chosen\": "
                   "false") != std::string::npos);
  CHECK(j.out.find("\"lost_on\": \"priority_sum\"") != std::string::npos);
  CHECK(j.out.find("\"lost_on\": \"highest_priority\", \"why\": \"higher highest-victim "
                   "priority (50 > 10)\"") != std::string::npos);
  CHECK(j.out.find("\"chosen_node\": \"node-a\"") != std::string::npos);
  // Attempt 1: all three nodes are full; attempt 2: node-b and node-c still are.
  CHECK(count_of(j.out, "\"rejected_by\": \"NodeResourcesFit\"") == 3 + 2);
  CHECK(j.out.find("\"selected_node\": \"node-a\"") != std::string::npos);  // attempt 2

  // The table: the candidates with their victims, the chosen one and why the others lost.
  const auto t = testing::run_capsim("explain '" + db + "' high --attempt 1", dir);
  REQUIRE_MESSAGE(t.exit_code == 0, t.err);
  CHECK(t.out.find("== attempt 1 at 10s: unschedulable; preempts on node-a (nominated)") !=
        std::string::npos);
  CHECK(t.out.find("node-a  1 victim(s): low-a1") != std::string::npos);
  CHECK(t.out.find("node-b  2 victim(s): low-b1, low-b2") != std::string::npos);
  CHECK(t.out.find("CHOSEN") != std::string::npos);
  CHECK(t.out.find("lost: higher sum of victim priorities") != std::string::npos);
  CHECK(t.out.find("lost: higher highest-victim priority (50 > 10)") != std::string::npos);
  CHECK(t.out.find("== attempt 2") == std::string::npos);

  // kss: kube-scheduler-simulator's keys, values as its result store marshals them.
  const auto k = testing::run_capsim("explain '" + db + "' high --format kss", dir);
  REQUIRE_MESSAGE(k.exit_code == 0, k.err);
  CHECK(count_of(k.out, "kind: Pod\n") == 2);
  CHECK(k.out.find("\n---\n") != std::string::npos);
  const std::string key = "kube-scheduler-simulator.sigs.k8s.io/";
  CHECK(k.out.find(key + "postfilter-result: "
                         "'{\"node-a\":{\"DefaultPreemption\":\"preemption victim\"},"
                         "\"node-b\":{},\"node-c\":{}}'") != std::string::npos);
  CHECK(k.out.find(key + "selected-node: ''") != std::string::npos);        // attempt 1
  CHECK(k.out.find(key + "selected-node: 'node-a'") != std::string::npos);  // attempt 2
  CHECK(k.out.find("\"NodeResourcesFit\":\"Insufficient nvidia.com/gpu\"") != std::string::npos);
  CHECK(k.out.find(key + "filter-result: '{\"node-a\":{") != std::string::npos);
  CHECK(k.out.find(key + "score-result: '{\"node-a\":{") != std::string::npos);
  CHECK(k.out.find(key + "finalscore-result: '{\"node-a\":{") != std::string::npos);
  CHECK(k.out.find(key + "prefilter-result-status: '{") != std::string::npos);
  CHECK(k.out.find(key + "prescore-result: '{") != std::string::npos);
  CHECK(k.out.find("  namespace: 'default'\n") != std::string::npos);
}

TEST_CASE(
    "capsim explain: an unknown pod, a pod run without --explain and an older report each "
    "exit 65 with what to do") {
  testing::ScratchDir dir("explain-errors");
  const std::string db = dir.file("p.db");
  REQUIRE(testing::run_capsim("run " + scenario() + " -q -o '" + db + "' --explain high", dir)
              .exit_code == 0);
  const auto unknown = testing::run_capsim("explain '" + db + "' hihg", dir);
  CHECK(unknown.exit_code == 65);
  CHECK(unknown.err.find("no pod 'hihg' in run 1") != std::string::npos);
  CHECK(unknown.err.find("did you mean 'high'") != std::string::npos);
  const auto plain = testing::run_capsim("explain '" + db + "' low-a1", dir);
  CHECK(plain.exit_code == 65);
  CHECK(plain.err.find("pod 'low-a1' was not explained in run 1: re-run the scenario with capsim "
                       "run SCENARIO --explain low-a1") != std::string::npos);
  const auto bad_attempt = testing::run_capsim("explain '" + db + "' high --attempt 7", dir);
  CHECK(bad_attempt.exit_code == 2);
  CHECK(bad_attempt.err.find("--attempt 7: pod high has attempts 1, 2") != std::string::npos);

  // The same file as schema 2 wrote it: no explain tables.
  {
    SqliteDb w(db, OpenMode::kReadWriteCreate);
    w.exec(
        "DROP TABLE explain_attempt; DROP TABLE explain_filter; DROP TABLE explain_score; "
        "DROP TABLE explain_node; DROP TABLE explain_candidate; DROP TABLE pending_reason; "
        "UPDATE meta SET value = 2 WHERE key = 'schema_version';");
  }
  const auto old = testing::run_capsim("explain '" + db + "' high", dir);
  CHECK(old.exit_code == 65);
  CHECK(old.err.find("written by an older capsim (report schema 2), which did not record "
                     "explained cycles; re-run the scenario with capsim run --explain high") !=
        std::string::npos);
  // Other commands still read it.
  CHECK(testing::run_capsim("report '" + db + "' -q -o '" + dir.file("r.html") + "'", dir)
            .exit_code == 0);
}

TEST_SUITE("scenario") {
  TEST_CASE("explaining every pod of a run changes nothing in the run's events, pods or samples") {
    testing::ScratchDir dir("explain-same");
    // The FGD study's Random profile draws a node in PreScore (RandomScore): an explained cycle's
    // second, exhaustive evaluation must not draw again from the run's stream.
    for (const std::string profile : {"", " --set scheduler.profile=Random"}) {
      CAPTURE(profile);
      const std::string small =
          "'" + testing::source_path("scenarios/tests/small.yaml") + "'" + profile;
      const std::string a_db = dir.file(profile.empty() ? "a.db" : "a-random.db");
      const std::string b_db = dir.file(profile.empty() ? "b.db" : "b-random.db");
      REQUIRE(testing::run_capsim("run " + small + " -q -o '" + a_db + "'", dir).exit_code == 0);
      REQUIRE(testing::run_capsim("run " + small + " -q -o '" + b_db + "' --explain '*'", dir)
                  .exit_code == 0);
      for (const std::string sql :
           {"SELECT seq, time_s, kind, pod, node, detail FROM event ORDER BY seq",
            "SELECT pod, status, start_s, end_s, node, attempts FROM pod ORDER BY rowid",
            "SELECT * FROM sample ORDER BY time_s",
            "SELECT * FROM pending_reason ORDER BY rowid"}) {
        CAPTURE(sql);
        const std::string a = rows(a_db, sql);
        CHECK(!a.empty());
        CHECK(a == rows(b_db, sql));
      }
      // Every cycle of every pod was explained: an attempt row for each failed attempt a
      // pending_reason row stands for, and none in the run without --explain.
      CHECK(rows(a_db, "SELECT count(*) FROM explain_attempt") == "0\n");
      CHECK(rows(b_db,
                 "SELECT count(*) FROM (SELECT DISTINCT pod, attempt, attempts FROM "
                 "pending_reason) r WHERE r.attempts != (SELECT count(*) FROM explain_attempt e "
                 "WHERE e.pod = r.pod AND e.attempt BETWEEN r.attempt AND "
                 "r.attempt + r.attempts - 1 AND e.result != 'scheduled')") == "0\n");
    }
  }
}

}  // namespace capsim
