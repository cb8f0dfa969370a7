// CsvFile reads RFC 4180 CSV with a header, keeps each row's line, and reports malformed input at
// its line.
#include "tools/loaders/csv_reader.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "tools/loaders/file_source.hpp"

namespace capsim {
namespace {

template <typename F>
std::optional<InputError> input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e;
  }
  return std::nullopt;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST_CASE("quoted fields keep commas, doubled quotes and line breaks") {
  const CsvFile f = CsvFile::parse(
      "name,note,n\r\n"
      "a,\"x, y\",1\r\n"
      "b,\"she said \"\"hi\"\"\",2\r\n"
      "c,\"two\nlines\",3\r\n"
      "d,,4",
      "t.csv");
  REQUIRE(f.header() == std::vector<std::string>{"name", "note", "n"});
  REQUIRE(f.rows().size() == 4);
  CHECK(f.field(f.rows()[0], "note") == "x, y");
  CHECK(f.field(f.rows()[1], "note") == "she said \"hi\"");
  CHECK(f.field(f.rows()[2], "note") == "two\nlines");
  CHECK(f.field(f.rows()[3], "note").empty());
  // Lines: the header is line 1; the row after the two-line field starts on line 6.
  CHECK(f.rows()[0].line == 2);
  CHECK(f.rows()[2].line == 4);
  CHECK(f.rows()[3].line == 6);
  CHECK(f.field(f.rows()[3], "n") == "4");  // no newline at the end of the file
}

TEST_CASE("blank lines, a byte-order mark, comments and surrounding spaces are skipped") {
  CsvOptions opt;
  opt.comment = '#';
  const CsvFile f = CsvFile::parse(
      "\xEF\xBB\xBF# a comment\n"
      "pod , submit\n"
      "\n"
      "   \n"
      " p1 ,  10 \n"
      "# another\n"
      "\"  p2  \",20\n",
      "t.csv", opt);
  REQUIRE(f.header() == std::vector<std::string>{"pod", "submit"});
  CHECK(f.header_line() == 2);
  REQUIRE(f.rows().size() == 2);
  CHECK(f.rows()[0].line == 5);
  CHECK(f.field(f.rows()[0], "pod") == "p1");
  CHECK(f.field(f.rows()[0], "submit") == "10");
  CHECK(f.field(f.rows()[1], "pod") == "  p2  ");  // quoted spaces are data
  CHECK(f.rows()[1].line == 7);
  CHECK(f.column("submit") == std::size_t{1});
  CHECK_FALSE(f.has_column("gpu"));
  CHECK(f.field_or(f.rows()[0], "gpu", "0") == "0");
}

TEST_CASE("without trimming, spaces are part of the field") {
  CsvOptions opt;
  opt.trim = false;
  const CsvFile f = CsvFile::parse("a,b\n x ,y\n", "t.csv", opt);
  CHECK(f.field(f.rows()[0], "a") == " x ");
}

TEST_CASE("malformed CSV is reported at the line where the problem is") {
  struct Case {
    const char* name;
    const char* text;
    int want_line;
    const char* want_part;
  };
  const std::vector<Case> cases = {
      {"too few fields", "a,b,c\n1,2,3\n4,5\n", 3, "the row has 2 fields but the header has 3"},
      {"too many fields", "a,b\n1,2\n\n1,2,3\n", 4, "3 fields"},
      {"unterminated quote", "a,b\n1,2\n3,\"open\n4,5\n", 3, "never ends"},
      {"quote inside an unquoted field", "a,b\n1,x\"y\n", 2, "a quote inside an unquoted field"},
      {"text after a closing quote", "a,b\n1,\"x\"y\n", 2, "after a closing quote"},
      {"duplicate header column", "a,b,a\n", 1, "column 'a' appears twice"},
      {"empty header column", "a,,c\n", 1, "header column 2 has no name"},
      {"empty file", "\n\n", 0, "a header row is required"},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    auto e = input_error([&] { (void)CsvFile::parse(c.text, "t.csv"); });
    REQUIRE(e);
    CHECK(e->kind() == InputErrorKind::kInvalid);
    CHECK(e->where().file == "t.csv");
    CHECK(e->where().line == c.want_line);
    CHECK(contains(e->message(), c.want_part));
  }
}

TEST_CASE("errors about a value name the file, the row's line and the column") {
  const CsvFile f = CsvFile::parse("pod,gpu\np1,1\np2,two\n", "trace.csv");
  const CsvRow& row = f.rows()[1];
  auto e = input_error([&] { f.fail(row, "gpu", "'two' is not a whole number"); });
  REQUIRE(e);
  CHECK(std::string(e->what()) == "trace.csv:3: column gpu: 'two' is not a whole number");
  auto missing = input_error([&] { (void)f.field(row, "cpu"); });
  REQUIRE(missing);
  CHECK(missing->where().line == 3);
  CHECK(contains(missing->message(), "no column 'cpu'"));
}

TEST_CASE("a missing CSV file is a kMissing error") {
  auto e = input_error([] {
    RealFiles files;
    (void)files.csv("/nonexistent/capsim/trace.csv");
  });
  REQUIRE(e);
  CHECK(e->kind() == InputErrorKind::kMissing);
  CHECK(e->where().file == "/nonexistent/capsim/trace.csv");
}

}  // namespace
}  // namespace capsim
