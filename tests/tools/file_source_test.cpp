// FileSource: what a read records, how MemoryFiles matches paths, and the read log the scenario
// digest is built from.
#include "tools/loaders/file_source.hpp"

#include <doctest/doctest.h>

#include <string>

#include "tools/loaders/sha256.hpp"

using namespace capsim;

TEST_CASE("memory files match paths after lexical normalisation, as the disk would") {
  struct Case {
    const char* name;
    const char* asked;
    bool want_found;
  };
  const Case cases[] = {
      {"the path as added", "data/t.csv", true},
      {"a ./ segment is dropped", "data/./t.csv", true},
      {"a ../ segment goes back up", "data/sub/../t.csv", true},
      {"another directory is another file", "other/t.csv", false},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    MemoryFiles files;
    files.add("data/t.csv", "pod\n");
    if (c.want_found) {
      CHECK(files.read(c.asked) == "pod\n");
    } else {
      CHECK_THROWS_AS((void)files.read(c.asked), InputError);
    }
  }
}

TEST_CASE("a read is recorded with its path, size and digest, in read order, repeats included") {
  MemoryFiles files;
  files.add("s/a.yaml", "x: 1\n").add("s/b.csv", "pod\n");
  (void)files.read("s/a.yaml");
  (void)files.csv("s/b.csv");
  (void)files.yaml("s/a.yaml");
  REQUIRE(files.reads().size() == 3);
  CHECK(files.reads()[0].path == "s/a.yaml");
  CHECK(files.reads()[0].bytes == 5);
  CHECK(files.reads()[0].sha256 == sha256_hex("x: 1\n"));
  CHECK(files.reads()[1].path == "s/b.csv");
  CHECK(files.reads()[2].path == "s/a.yaml");
  // Paths in the log are relative to the root given (the scenario's directory).
  CHECK(files.read_log("s") == "file a.yaml 5 " + sha256_hex("x: 1\n") + "\nfile b.csv 4 " +
                                   sha256_hex("pod\n") + "\nfile a.yaml 5 " + sha256_hex("x: 1\n") +
                                   "\n");
}

TEST_CASE("a file that cannot be read is a missing input with the caller's message") {
  RealFiles files;
  try {
    (void)files.read("/nonexistent/capsim/s.yaml", "cannot open the scenario file");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.kind() == InputErrorKind::kMissing);
    CHECK(e.where().file == "/nonexistent/capsim/s.yaml");
    CHECK(e.message() == "cannot open the scenario file");
  }
  CHECK(files.reads().empty());
}

// docs/cli.md#limits: a CSV trace of more than 10,000,000 lines is refused before its rows are
// parsed, unless the soft limits are lifted (--force). Blank lines count as lines (they are read)
// but make no rows, so the file is cheap to parse once lifted.
TEST_CASE("a CSV trace of more lines than the soft limit needs the limits lifted") {
  auto trace = [](std::size_t lines) {
    std::string text = "pod\np0\n";  // a header and one row: two lines
    text.append(lines - 2, '\n');
    return text;
  };
  MemoryFiles files;
  files.add("/t/at-limit.csv", trace(FileSource::kCsvSoftMaxRows));
  files.add("/t/over.csv", trace(FileSource::kCsvSoftMaxRows + 1));
  CHECK(files.csv("/t/at-limit.csv").rows().size() == 1);
  try {
    (void)files.csv("/t/over.csv");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.kind() == InputErrorKind::kInvalid);
    CHECK(e.where().file == "/t/over.csv");
    CHECK(e.message() ==
          "10000001 lines, above the limit of 10000000 lines of a trace (docs/cli.md#limits); "
          "pass --force to read it anyway");
  }
  files.lift_soft_limits();
  CHECK(files.csv("/t/over.csv").rows().size() == 1);
}
