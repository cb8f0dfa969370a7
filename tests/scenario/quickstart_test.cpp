// The README's main job, end to end through the real binary: the quickstart scenario runs, the
// report is complete, and the summary printed on stdout equals the summary table in SQLite.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "reports/run_reader.hpp"

namespace fs = std::filesystem;

TEST_SUITE("scenario") {
  TEST_CASE("the quickstart writes a complete report whose summary matches what it printed") {
    const fs::path dir = fs::temp_directory_path() / ("capsim-qs-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path db = dir / "quickstart.db";
    const std::string cmd = std::string("'") + CAPSIM_BINARY + "' run '" + CAPSIM_SOURCE_DIR +
                            "/scenarios/quickstart.yaml' -o '" + db.string() +
                            "' --json --quiet > '" + (dir / "out.json").string() + "'";
    const int status = std::system(cmd.c_str());
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    capsim::RunReader reader(db);
    const auto runs = reader.runs();
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].status == "complete");
    CHECK(runs[0].scenario == "quickstart");
    // JSON is YAML: read the printed summary back and compare every metric.
    YAML::Node printed = YAML::LoadFile((dir / "out.json").string());
    const auto summary = reader.summary(runs[0].run_id);
    REQUIRE(summary.size() > 20);
    for (const auto& [k, v] : summary) {
      const std::string& metric = k;  // CAPTURE copies no structured binding (clang++ 14)
      CAPTURE(metric);
      REQUIRE(printed["summary"][k]);
      CHECK(printed["summary"][k].as<double>() == doctest::Approx(v).epsilon(1e-5));
    }
    CHECK(summary.size() == printed["summary"].size());
    // The day was busy enough that someone waited, and the pending reasons were recorded.
    auto& rdb = reader.db();
    auto st = rdb.prepare(
        "SELECT count(*) FROM event WHERE kind = 'pending' AND detail LIKE '0/%nodes are "
        "available%'");
    REQUIRE(st.step());
    CHECK(st.column_int64(0) > 0);
    fs::remove_all(dir);
  }
}
