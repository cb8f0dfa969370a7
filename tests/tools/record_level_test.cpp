// `--record summary|pods|full` through the real binary, on the Kueue example
// (scenarios/team-quotas): which tables each level fills, the same summary at every level, what
// report, compare, check, the exports and explain do with a file recorded below full, and the
// option's errors.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "fixtures/cli_run.hpp"
#include "reports/sqlite_db.hpp"

namespace capsim {

namespace {

std::string scenario() {
  return "'" + testing::source_path("scenarios/team-quotas/team-quotas.yaml") + "'";
}

std::int64_t count(const std::string& db, const std::string& sql) {
  SqliteDb d(db, OpenMode::kReadOnly);
  Statement st = d.prepare(sql);
  REQUIRE(st.step());
  return st.column_int64(0);
}

std::string text(const std::string& db, const std::string& sql) {
  SqliteDb d(db, OpenMode::kReadOnly);
  Statement st = d.prepare(sql);
  std::string out;
  while (st.step()) {
    for (int c = 0; c < st.column_count(); ++c)
      out += (c ? "|" : "") + st.column_text(c);
    out += "\n";
  }
  return out;
}

bool has(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// The three levels of one scenario, each in its own file.
struct Runs {
  testing::ScratchDir dir{"record-levels"};
  std::map<std::string, std::string> db;     // level -> file
  std::map<std::string, std::string> table;  // level -> the summary table `run` printed
  Runs() {
    for (const std::string level : {"summary", "pods", "full"}) {
      db[level] = dir.file(level + ".db");
      const auto r = testing::run_capsim(
          "run " + scenario() + " -q --record " + level + " -o '" + db[level] + "'", dir);
      REQUIRE_MESSAGE(r.exit_code == 0, r.err);
      // The first lines name the report file and the wall time; the metrics follow.
      table[level] = r.out.substr(r.out.find("\n\n"));
    }
  }
};

}  // namespace

TEST_CASE("each --record level fills its tables, and the summary is the same at every level") {
  const Runs runs;
  const std::vector<std::string> always = {"run",          "node",    "sample",      "pool_sample",
                                           "queue_sample", "summary", "queue_quota", "local_queue"};
  const std::vector<std::string> pod_rows = {"pod"};
  const std::vector<std::string> full_only = {"event", "charge", "pending_reason"};
  for (const auto& [level, db] : runs.db) {
    const std::string& record = level;  // CAPTURE copies no structured binding (clang++ 14)
    CAPTURE(record);
    CHECK(text(db, "SELECT record FROM run") == level + "\n");
    for (const std::string& t : always)
      CHECK_MESSAGE(count(db, "SELECT count(*) FROM " + t) > 0, t);
    for (const std::string& t : pod_rows)
      CHECK_MESSAGE((count(db, "SELECT count(*) FROM " + t) > 0) == (level != "summary"), t);
    for (const std::string& t : full_only)
      CHECK_MESSAGE((count(db, "SELECT count(*) FROM " + t) > 0) == (level == "full"), t);
  }
  // The same run underneath: samples, the summary table (metric by metric, as stored and as
  // printed) and, where kept, the pods.
  const std::string summary_sql = "SELECT seq, metric, quote(value) FROM summary ORDER BY seq";
  const std::string samples_sql = "SELECT * FROM sample ORDER BY rowid";
  const std::string full_summary = text(runs.db.at("full"), summary_sql);
  CHECK(count(runs.db.at("full"), "SELECT count(*) FROM summary") > 20);
  for (const std::string level : {"summary", "pods"}) {
    CAPTURE(level);
    CHECK(text(runs.db.at(level), summary_sql) == full_summary);
    CHECK(text(runs.db.at(level), samples_sql) == text(runs.db.at("full"), samples_sql));
    CHECK(runs.table.at(level) == runs.table.at("full"));
  }
  const std::string pods_sql = "SELECT * FROM pod ORDER BY rowid";
  CHECK(text(runs.db.at("pods"), pods_sql) == text(runs.db.at("full"), pods_sql));
}

TEST_CASE("report, compare, check and the exports read a run recorded below full") {
  const Runs runs;
  const testing::ScratchDir& dir = runs.dir;
  for (const std::string level : {"summary", "pods"}) {
    CAPTURE(level);
    const std::string& db = runs.db.at(level);
    const std::string html = dir.file(level + ".html"), md = dir.file(level + ".md");
    const std::string prom = dir.file(level + ".prom");
    const auto r = testing::run_capsim("report '" + db + "' -q -o '" + html + "' --markdown '" +
                                           md + "' --prometheus '" + prom + "'",
                                       dir);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const std::string page = testing::slurp(html);
    const std::string note = "not recorded: this run used --record " + level;
    // The pending reasons come from events: said to be missing, never an empty chart.
    const bool reasons_note =
        has(page, note + ": the scheduler&#39;s pending reasons come from the events") ||
        has(page, note + ": the scheduler's pending reasons come from the events");
    CHECK(reasons_note);
    CHECK_FALSE(has(page, "No pod was ever left pending"));
    // The waits come from the pod rows: missing at summary, drawn at pods.
    CHECK(has(page, note + ": the waits come from the pod rows") == (level == "summary"));
    CHECK(has(page, "Cumulative distribution of wait time per queue") == (level == "pods"));
    CHECK(has(testing::slurp(md), "Recorded: `--record " + level + "`"));
    // Series made from events are left out, not written as zeros; samples are all there.
    const std::string metrics = testing::slurp(prom);
    CHECK_FALSE(has(metrics, "capsim_oom_kills"));
    CHECK_FALSE(has(metrics, "kueue_pending_workloads"));
    CHECK(has(metrics, "kueue_cluster_queue_resource_usage"));
    CHECK(has(metrics, "capsim_gpus_allocated"));

    // compare and check read summaries only: the same numbers as the full file.
    const auto c = testing::run_capsim("compare '" + runs.db.at("full") + "' '" + db + "'", dir);
    CHECK_MESSAGE(c.exit_code == 0, c.err);
    const auto k = testing::run_capsim(
        "check --baseline '" + runs.db.at("full") + "' --candidate '" + db + "'", dir);
    CHECK_MESSAGE(k.exit_code == 0, (k.out + k.err));

    // The cost exports need the per-pod charges: refused with the reason (exit 65).
    const auto o = testing::run_capsim(
        "report '" + db + "' -q --opencost '" + dir.file(level + ".csv") + "'", dir);
    CHECK(o.exit_code == 65);
    CHECK(has(o.err, note + ", which keeps no per-pod charges; re-run the scenario with "
                            "--record full"));
  }
  // A full file's report says nothing about recording levels.
  const std::string full_html = runs.dir.file("full.html");
  REQUIRE(testing::run_capsim("report '" + runs.db.at("full") + "' -q -o '" + full_html + "'", dir)
              .exit_code == 0);
  CHECK_FALSE(has(testing::slurp(full_html), "not recorded"));
}

TEST_CASE("capsim explain on a run recorded below full says so with exit code 3") {
  const Runs runs;
  const std::string pod = text(runs.db.at("pods"), "SELECT pod FROM pod LIMIT 1");
  REQUIRE_FALSE(pod.empty());
  for (const std::string level : {"summary", "pods"}) {
    CAPTURE(level);
    const auto r = testing::run_capsim(
        "explain '" + runs.db.at(level) + "' '" + pod.substr(0, pod.size() - 1) + "'", runs.dir);
    CHECK(r.exit_code == 3);
    CHECK(has(r.err, "not recorded: this run used --record " + level));
    CHECK(has(r.err, "--record full --explain"));
    CHECK(r.out.empty());
  }
}

TEST_CASE("--record takes summary, pods or full, and --explain needs full") {
  testing::ScratchDir dir("record-usage");
  const std::string db = dir.file("x.db");
  for (const std::string& cmd : {"run " + scenario(), std::string("sweep 'none.yaml'")}) {
    CAPTURE(cmd);
    const auto r = testing::run_capsim(cmd + " -q --record bogus -o '" + db + "'", dir);
    CHECK(r.exit_code == 2);
    CHECK(has(r.err, "--record 'bogus': not a recording level (valid: summary, pods, full)"));
  }
  const auto e = testing::run_capsim(
      "run " + scenario() + " -q --record pods --explain 'x*' -o '" + db + "'", dir);
  CHECK(e.exit_code == 2);
  CHECK(has(e.err, "--explain records explained cycles, which --record pods leaves out"));
  CHECK_FALSE(std::filesystem::exists(db));
}

TEST_CASE("a sweep keeps summaries by default, and what --record asks for") {
  testing::ScratchDir dir("record-sweep");
  const std::string small = testing::source_path("scenarios/tests/small.yaml");
  testing::write_file(dir.file("s.yaml"),
                      "name: record-test\nscenario: '" + small +
                          "'\nset: {simulation.horizon: 2h}\naxes:\n"
                          "  - {name: a100, key: cluster.pools.a100.count, values: [1, 2]}\n");
  const std::string s = "'" + dir.file("s.yaml") + "'";
  const auto d = testing::run_capsim("sweep " + s + " -q -o '" + dir.file("d.db") + "'", dir);
  REQUIRE_MESSAGE(d.exit_code == 0, d.err);
  const auto f =
      testing::run_capsim("sweep " + s + " -q --record full -o '" + dir.file("f.db") + "'", dir);
  REQUIRE_MESSAGE(f.exit_code == 0, f.err);
  CHECK(text(dir.file("d.db"), "SELECT DISTINCT record FROM run") == "summary\n");
  CHECK(count(dir.file("d.db"), "SELECT count(*) FROM event") == 0);
  CHECK(count(dir.file("d.db"), "SELECT count(*) FROM pod") == 0);
  CHECK(text(dir.file("f.db"), "SELECT DISTINCT record FROM run") == "full\n");
  CHECK(count(dir.file("f.db"), "SELECT count(*) FROM event") > 0);
  const std::string summary_sql = "SELECT run_id, metric, quote(value) FROM summary ORDER BY 1, 2";
  CHECK(text(dir.file("d.db"), summary_sql) == text(dir.file("f.db"), summary_sql));
}

}  // namespace capsim
