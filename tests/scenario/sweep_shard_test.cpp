// Sweeps end to end through the capsim binary: the same sweep run whole (with one or two
// threads) and as four shards merged gives identical tables; merge refuses duplicates and shards
// of another sweep; report and compare read sweep files.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "fixtures/cli_run.hpp"
#include "reports/sqlite_db.hpp"

using namespace capsim;
using capsim::testing::run_capsim;
using capsim::testing::ScratchDir;
using capsim::testing::slurp;
using capsim::testing::write_file;

namespace {

const std::string kSmall = std::string(CAPSIM_SOURCE_DIR) + "/scenarios/tests/small.yaml";

std::string sweep_yaml(const std::string& extra = "") {
  return "name: shard-test\nscenario: " + kSmall +
         "\nset: {simulation.horizon: 2h}\naxes:\n"
         "  - {name: a100, key: cluster.pools.a100.count, values: [1, 2, 3]}\n"
         "  - name: policy\n    choices:\n      default: {}\n      pack: {profile: gpu-binpack}\n" +
         extra + "seeds: [1, 2]\n";
}

// Every table of the file as text, rows in stored order. The wall-clock columns of `run` and the
// shard bookkeeping (which shards made the file) are left out: they are the only parts that may
// differ between a whole run and merged shards.
std::string dump(const std::string& path) {
  SqliteDb db(path, OpenMode::kReadOnly);
  std::string out;
  std::vector<std::string> tables;
  {
    Statement st = db.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name <> 'sweep_shard' ORDER BY "
        "name");
    while (st.step())
      tables.push_back(st.column_text(0));
  }
  for (const std::string& t : tables) {
    std::vector<std::string> cols;
    {
      Statement info = db.prepare("PRAGMA table_info(\"" + t + "\")");
      while (info.step()) {
        const std::string c = info.column_text(1);
        if (t == "run" && (c == "wall_seconds" || c == "started_at")) continue;
        cols.push_back("quote(\"" + c + "\")");
      }
    }
    std::string sel = "SELECT ";
    for (std::size_t i = 0; i < cols.size(); ++i)
      sel += (i ? " || '|' || " : "") + cols[i];
    Statement rows = db.prepare(sel + " FROM \"" + t + "\" ORDER BY rowid");
    out += "## " + t + "\n";
    while (rows.step())
      out += rows.column_text(0) + "\n";
  }
  return out;
}

std::int64_t count(const std::string& path, const std::string& sql) {
  SqliteDb db(path, OpenMode::kReadOnly);
  Statement st = db.prepare(sql);
  REQUIRE(st.step());
  return st.column_int64(0);
}

}  // namespace

TEST_SUITE("scenario") {
  TEST_CASE("a sweep run whole and as 4 shards then merged gives identical tables") {
    ScratchDir dir("sweep-e2e");
    write_file(dir.file("s.yaml"), sweep_yaml());
    const std::string s = "'" + dir.file("s.yaml") + "'";

    // --record full: the whole runs (events too) must not depend on -j or sharding.
    auto r1 =
        run_capsim("sweep " + s + " -j1 -q --record full -o '" + dir.file("whole1.db") + "'", dir);
    REQUIRE_MESSAGE(r1.exit_code == 0, r1.err);
    auto r2 =
        run_capsim("sweep " + s + " -j2 -q --record full -o '" + dir.file("whole2.db") + "'", dir);
    REQUIRE_MESSAGE(r2.exit_code == 0, r2.err);
    std::string merge = "merge '" + dir.file("merged.db") + "'";
    for (int i = 0; i < 4; ++i) {
      const std::string shard = dir.file("shard" + std::to_string(i) + ".db");
      // Shard 1 takes its index from a Kubernetes Indexed Job's environment, shard 2 from Slurm.
      std::string env, how = "--shard " + std::to_string(i) + "/4";
      if (i == 1) env = "JOB_COMPLETION_INDEX=1 ", how = "--shard-count 4";
      if (i == 2) env = "SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_COUNT=4 ", how = "";
      const std::string cmd = env + "'" + std::string(CAPSIM_BINARY) + "' sweep " + s + " " + how +
                              " -j2 -q --record full -o '" + shard + "' > /dev/null 2> '" +
                              dir.file("shard-err") + "'";
      const int st = std::system(cmd.c_str());
      REQUIRE_MESSAGE(st == 0, slurp(dir.file("shard-err")));
      merge += " '" + shard + "'";
    }
    CHECK(count(dir.file("shard1.db"), "SELECT count(*) FROM run") == 3);  // variants 2, 6, 10
    CHECK(count(dir.file("shard1.db"), "SELECT min(run_id) FROM run") == 2);
    auto rm = run_capsim(merge, dir);
    REQUIRE_MESSAGE(rm.exit_code == 0, rm.err);

    const std::string whole = dump(dir.file("whole1.db"));
    CHECK(count(dir.file("whole1.db"), "SELECT count(*) FROM run") == 12);
    CHECK(count(dir.file("whole1.db"), "SELECT count(*) FROM variant") == 36);  // 12 runs x 3 axes
    CHECK(count(dir.file("whole1.db"), "SELECT count(*) FROM event") > 100);
    CHECK(whole == dump(dir.file("whole2.db")));
    CHECK(whole == dump(dir.file("merged.db")));
    CHECK(count(dir.file("merged.db"), "SELECT count(*) FROM sweep_shard") == 4);

    SUBCASE("merge refuses a shard given twice") {
      auto r = run_capsim("merge '" + dir.file("m2.db") + "' '" + dir.file("shard0.db") + "' '" +
                              dir.file("shard1.db") + "' '" + dir.file("shard1.db") + "'",
                          dir);
      CHECK(r.exit_code == 65);
      CHECK(r.err.find("variant 2 (a100=1, policy=default, seed=2) is also in") !=
            std::string::npos);
      CHECK_FALSE(std::filesystem::exists(dir.file("m2.db")));
    }
    SUBCASE("merge refuses shards of another sweep") {
      write_file(dir.file("other.yaml"),
                 sweep_yaml("  - {key: simulation.sample_interval, values: [20m]}\n"));
      auto ro = run_capsim("sweep '" + dir.file("other.yaml") + "' --shard 1/4 -q -o '" +
                               dir.file("other1.db") + "'",
                           dir);
      REQUIRE_MESSAGE(ro.exit_code == 0, ro.err);
      auto r = run_capsim("merge '" + dir.file("m3.db") + "' '" + dir.file("shard0.db") + "' '" +
                              dir.file("other1.db") + "'",
                          dir);
      CHECK(r.exit_code == 65);
      CHECK(r.err.find("shards of different sweeps") != std::string::npos);
    }
    SUBCASE("merge refuses an incomplete set unless --partial") {
      auto r = run_capsim("merge '" + dir.file("m4.db") + "' '" + dir.file("shard0.db") + "'", dir);
      CHECK(r.exit_code == 65);
      CHECK(r.err.find("9 of the sweep's 12 variants are in none of the files") !=
            std::string::npos);
      auto p = run_capsim(
          "merge --partial '" + dir.file("m4.db") + "' '" + dir.file("shard0.db") + "'", dir);
      CHECK(p.exit_code == 0);
      CHECK(count(dir.file("m4.db"), "SELECT count(*) FROM run") == 3);
    }
    SUBCASE("compare and report read the sweep file: a row per variant, a chart per metric") {
      auto c = run_capsim("compare '" + dir.file("merged.db") + "' --metric cost_total_usd", dir);
      REQUIRE_MESSAGE(c.exit_code == 0, c.err);
      CHECK(c.out.find("6 variants over 12 runs") != std::string::npos);
      CHECK(c.out.find("a100  policy ") != std::string::npos);
      auto h = run_capsim("report '" + dir.file("merged.db") + "' -q -o '" + dir.file("s.html") +
                              "' --metric cost_total_usd --metric 'max(queue.*.wait_seconds_p95)'",
                          dir);
      REQUIRE_MESSAGE(h.exit_code == 0, h.err);
      const std::string html = slurp(dir.file("s.html"));
      CHECK(html.find("cost_total_usd vs a100, one line per policy") != std::string::npos);
      // One line per policy in each chart, 3 points (a100 = 1, 2, 3) each.
      CHECK(html.find("<title>default: 2, ") != std::string::npos);
      CHECK(html.find("<title>pack: 3, ") != std::string::npos);
      auto bad = run_capsim(
          "report '" + dir.file("merged.db") + "' -q --x nodes -o '" + dir.file("t.html") + "'",
          dir);
      CHECK(bad.exit_code == 65);
      CHECK(bad.err.find("no axis 'nodes'") != std::string::npos);
    }
  }
}
