// reports/output_target: which outputs are written in place, how a finished file is published to
// each kind, and the refusal of an output that is one of the inputs.
#include "reports/output_target.hpp"

#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "fixtures/cli_run.hpp"
#include "reports/sqlite_recorder.hpp"

namespace capsim {

namespace fs = std::filesystem;

TEST_CASE("devices, pipes and the process's own streams are written in place; files are not") {
  testing::ScratchDir dir("output-target");
  CHECK(is_in_place_output("/dev/null"));
  CHECK(is_in_place_output("/dev/full"));
  CHECK(is_in_place_output("/dev/stdout"));
  CHECK(is_in_place_output("/dev/fd/2"));
  REQUIRE(::mkfifo(dir.file("pipe").c_str(), 0600) == 0);
  CHECK(is_in_place_output(dir.file("pipe")));
  testing::write_file(dir.file("plain.txt"), "x");
  CHECK_FALSE(is_in_place_output(dir.file("plain.txt")));
  CHECK_FALSE(is_in_place_output(dir.file("not-yet.db")));
  CHECK_FALSE(is_in_place_output(dir.path));  // a directory is refused elsewhere
  CHECK_FALSE(is_in_place_output("-"));
  // Temporary files: beside a file, never beside a device.
  CHECK(output_temp_path(dir.file("r.db")).parent_path() == dir.path);
  CHECK(output_temp_path("/dev/null").parent_path() != fs::path("/dev"));
}

TEST_CASE("publishing renames onto a file and copies into a device, removing the temporary") {
  testing::ScratchDir dir("output-publish");
  testing::write_file(dir.file("t1"), "new bytes");
  testing::write_file(dir.file("out.txt"), "old bytes");
  publish_output(dir.file("t1"), dir.file("out.txt"));
  CHECK(testing::slurp(dir.file("out.txt")) == "new bytes");
  CHECK_FALSE(fs::exists(dir.file("t1")));

  testing::write_file(dir.file("t2"), "to nowhere");
  publish_output(dir.file("t2"), "/dev/null");
  CHECK_FALSE(fs::exists(dir.file("t2")));
  struct stat st {};
  REQUIRE(::stat("/dev/null", &st) == 0);
  CHECK(S_ISCHR(st.st_mode));

  testing::write_file(dir.file("t3"), "no room");
  CHECK_THROWS_AS(publish_output(dir.file("t3"), "/dev/full"), ReportWriteError);
  CHECK_FALSE(fs::exists(dir.file("t3")));
  CHECK_THROWS_AS(write_in_place("/dev/full", "no room"), ReportWriteError);
}

TEST_CASE("an output that is one of the inputs is refused, by any name") {
  testing::ScratchDir dir("output-inputs");
  testing::write_file(dir.file("s.yaml"), "name: s\n");
  fs::create_hard_link(dir.file("s.yaml"), dir.file("hard.yaml"));
  fs::create_symlink(dir.file("s.yaml"), dir.file("soft.yaml"));
  const std::vector<InputFile> inputs{{"scenario", dir.file("s.yaml")}};
  for (const std::string& out : {dir.file("s.yaml"), dir.file("hard.yaml"), dir.file("soft.yaml"),
                                 (dir.path / "." / "s.yaml").string()}) {
    CAPTURE(out);
    try {
      refuse_output_over_inputs("report", out, inputs);
      FAIL("not refused");
    } catch (const ReportWriteError& e) {
      CHECK(e.message().find("the report would overwrite the scenario") != std::string::npos);
    }
  }
  CHECK_NOTHROW(refuse_output_over_inputs("report", dir.file("other.db"), inputs));
  CHECK_NOTHROW(refuse_output_over_inputs("report", "/dev/null", inputs));
  CHECK_NOTHROW(refuse_output_over_inputs("report", "-", inputs));
  // A name not yet taken is compared as a path: the input may not exist either.
  const std::vector<InputFile> trace{{"trace", dir.file("new.csv")}};
  CHECK_THROWS_AS(refuse_output_over_inputs("report", dir.file("sub/../new.csv"), trace),
                  ReportWriteError);
}

}  // namespace capsim
