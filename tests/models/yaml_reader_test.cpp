// The checks YamlNode::load_string / load_all_string make while the text is parsed, before any
// tree exists: repeated keys, documents, nesting depth, alias expansion, and the bytes themselves.
#include "models/yaml_reader.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace capsim {

namespace {

using namespace std::string_literals;

// The InputError's "file:line:col: message" text, or "" when the text loads.
std::string load_error(const std::string& text, bool all = false) {
  try {
    if (all) {
      (void)YamlNode::load_all_string(text, "f.yaml");
    } else {
      (void)YamlNode::load_string(text, "f.yaml");
    }
  } catch (const InputError& e) {
    CHECK(e.kind() == InputErrorKind::kInvalid);
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a key given twice in one mapping is an error at the second") {
  CHECK(load_error("a: 1\nb: 2\na: 3\n") ==
        "f.yaml:3:1: duplicate key 'a' (first given on line 1): a mapping's keys must be unique");
  CHECK(load_error("x: {k: 1, k: 2}\n").rfind("f.yaml:1:11: duplicate key 'k'", 0) == 0);
  CHECK(load_error("- {k: 1}\n- {k: 2}\n").empty());  // the same key in two mappings
  CHECK(load_error("a: {k: 1}\nb: {k: 1}\n").empty());
  CHECK(load_error("base: &b {x: 1}\nm:\n  <<: *b\n  y: 2\n").empty());
}

TEST_CASE("load_string takes one document; load_all_string any number") {
  CHECK(load_error("---\na: 1\n").empty());
  CHECK(load_error("a: 1\n---\nb: 2\n").find("a second YAML document") != std::string::npos);
  CHECK(load_error("a: 1\n---\nb: 2\n", true).empty());
  CHECK(load_error("a: 1\n---\na: 2\n", true).empty());  // keys are per document
}

TEST_CASE("a stray comma that yaml-cpp 0.7 would parse forever is an error at the comma") {
  // Found by the k8s_dump fuzz target (a mutated -o json dump, reduced to these bytes): yaml-cpp
  // 0.7 makes empty documents at the ',' without consuming it, so LoadAll never returned.
  struct Case {
    const char* name;
    const char* text;
    const char* want;  // "" for a text that loads
  };
  const Case cases[] = {
      {"after a flow mapping", "{{}},", "f.yaml:1:5: unexpected character"},
      {"alone", ",", "f.yaml:1:1: unexpected character"},
      {"after a document", "a: 1\n---\n,\n", "f.yaml:3:1: unexpected character"},
      {"empty documents, each at its own '---'", "---\n---\n---\na: 1\n", ""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const std::string got = load_error(c.text, true);
    CHECK(got.rfind(c.want, 0) == 0);
    if (std::string(c.want).empty()) CHECK(got.empty());
  }
}

TEST_CASE("nesting up to 64 levels loads; deeper is an error") {
  const auto lists = [](int depth) {
    return std::string(static_cast<std::size_t>(depth), '[') + "1" +
           std::string(static_cast<std::size_t>(depth), ']');
  };
  CHECK(load_error(lists(64)).empty());
  CHECK(load_error(lists(65)) ==
        "f.yaml:1:65: nesting deeper than 64 levels of mappings and lists");
}

TEST_CASE("aliases may reach 100000 nodes; a billion laughs may not") {
  // Each alias counts the nodes of what it names: l1's ten aliases of l0 (1 + 10 nodes) count
  // 110; l1 has 1 + 10 * 11 = 111 nodes, so k aliases of it bring the count to 110 + 111 k:
  // 99,899 for k = 899, 100,010 (above the bound) for k = 900.
  const auto doc = [](int aliases) {
    std::string s = "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\nl1: &l1 [";
    for (int k = 0; k < 10; ++k)
      s += k ? ", *l0" : "*l0";
    s += "]\nmany: [";
    for (int k = 0; k < aliases; ++k)
      s += k ? ", *l1" : "*l1";
    return s + "]\n";
  };
  CHECK(load_error(doc(899)).empty());
  CHECK(load_error(doc(900)).find("aliases expand to more than 100000 nodes") != std::string::npos);
}

TEST_CASE("NUL bytes and invalid UTF-8 are errors at their line and column") {
  const auto err = [](const std::string& text) {
    try {
      check_text_bytes(text, "t.csv");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(err("ok, caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x9A\x80\n").empty());
  CHECK(err("a\nbc\0d\n"s) == "t.csv:2:3: a NUL byte: a text file must not contain one");
  CHECK(err("a\xFF").rfind("t.csv:1:2: invalid UTF-8 (byte 0xFF cannot start", 0) == 0);
  CHECK(err("\xC0\xAF").rfind("t.csv:1:1: invalid UTF-8 (byte 0xC0", 0) == 0);  // overlong '/'
  CHECK(err("\xE0\x80\xAF").find("overlong") != std::string::npos);
  CHECK(err("\xED\xA0\x80").find("surrogate") != std::string::npos);         // U+D800
  CHECK(err("\xF4\x90\x80\x80").find("out-of-range") != std::string::npos);  // U+110000
  CHECK(err("\xC3").find("cut off") != std::string::npos);
  CHECK(err("\xC3(").find("byte 0x28 cannot continue") != std::string::npos);
  CHECK(err("\xEF\xBB\xBFname: x\n").empty());  // a byte-order mark is UTF-8
  // Long ASCII runs are checked eight bytes at a time: a bad byte at any offset within a run, after
  // multi-byte characters on its line, is still found at its line and character column.
  const std::string run(40, 'x');
  for (std::size_t at = 0; at < 17; ++at) {
    CAPTURE(at);
    const std::string before = run + "\n" + run.substr(0, at);
    CHECK(err(before + "\0"s + run) == fmt::format("t.csv:2:{}: a NUL byte: a text file must not "
                                                   "contain one",
                                                   at + 1));
    CHECK(err("\xC3\xA9\xE2\x82\xAC\n" + run + "\n\xF0\x9F\x9A\x80" + run.substr(0, at) + "\xFF" +
              run)
              .rfind(fmt::format("t.csv:3:{}: invalid UTF-8 (byte 0xFF", at + 2), 0) == 0);
  }
  CHECK(err(std::string(1000, 'a') + "\x7F\t\r\n" + std::string(1000, 'b')).empty());
}

TEST_CASE("for_each_document hands over one document at a time with its lines in the file") {
  const std::string text =
      "# a comment before the first marker\n"     // 1
      "a: 1\n"                                    // 2
      "---\n"                                     // 3
      "b:\n"                                      // 4
      "  c: 2\n"                                  // 5
      "--- \n"                                    // 6: a marker with a trailing blank
      "---\n"                                     // 7: an empty document, skipped
      "d: |\n"                                    // 8
      "  text with --- inside\n"                  // 9
      "---\n"                                     // 10
      "e: 1\n"                                    // 11
      "e: 2\n";                                   // 12
  std::vector<std::pair<std::string, int>> seen;  // (first key, line of its value)
  try {
    YamlNode::for_each_document(text, "m.yaml", [&](const YamlNode& d) {
      const auto entries = d.entries();
      seen.emplace_back(entries.front().first, entries.front().second.line());
    });
    FAIL("the repeated key was not refused");
  } catch (const InputError& e) {
    CHECK(e.where().file == "m.yaml");
    CHECK(e.where().line == 12);
    CHECK(std::string(e.what()).find("duplicate key 'e' (first given on line 11)") !=
          std::string::npos);
  }
  // The documents before the bad one were handed over, in order, with their own lines.
  REQUIRE(seen.size() == 3);
  CHECK(seen[0] == std::pair<std::string, int>{"a", 2});
  CHECK(seen[1] == std::pair<std::string, int>{"b", 5});
  CHECK(seen[2] == std::pair<std::string, int>{"d", 8});
  // The same documents as load_all_string reads them.
  const std::string good = text.substr(0, text.find("e: 1"));
  std::vector<std::string> streamed;
  YamlNode::for_each_document(
      good, "m.yaml", [&](const YamlNode& d) { streamed.push_back(d.entries().front().first); });
  std::vector<std::string> whole;
  for (const YamlNode& d : YamlNode::load_all_string(good, "m.yaml"))
    whole.push_back(d.entries().front().first);
  CHECK(streamed == whole);
  // Documents the fast parser declines (an alias, a carriage return, a merge key) are read alone
  // between documents it streams; "..." ends a document without a new marker. Every document
  // arrives once, in order, at its own line, as load_all_string reads them.
  const std::string mixed =
      "k: 0\n"              // 1
      "---\n"               // 2
      "k: 1\n"              // 3
      "x: &a [1]\n"         // 4: an anchor
      "y: *a\n"             // 5
      "---\n"               // 6
      "k: 2\r\n"            // 7: a carriage return
      "--- \n"              // 8
      "k: 3\n"              // 9
      "...\n"               // 10
      "k: 4\n"              // 11: a second document in the part
      "---\n"               // 12
      "k: 5\n"              // 13
      "b: {<<: {c: 1}}\n"   // 14: a merge key
      "---\n"               // 15
      "# only a comment\n"  // 16: an empty document
      "---\n"               // 17
      "k: 6\n";             // 18
  std::vector<std::pair<std::string, int>> got;
  YamlNode::for_each_document(mixed, "m.yaml", [&](const YamlNode& d) {
    got.emplace_back(d.map().req("k").str(), d.map().req("k").line());
  });
  const std::vector<std::pair<std::string, int>> want{{"0", 1},  {"1", 3},  {"2", 7}, {"3", 9},
                                                      {"4", 11}, {"5", 13}, {"6", 18}};
  CHECK(got == want);
  std::vector<std::string> all;
  for (const YamlNode& d : YamlNode::load_all_string(mixed, "m.yaml"))
    all.push_back(d.map().req("k").str());
  CHECK(all == std::vector<std::string>{"0", "1", "2", "3", "4", "5", "6"});
  // A syntax error in a later document is located in the file too.
  try {
    YamlNode::for_each_document("a: 1\n---\nb: [1, 2\nc: 3\n", "m.yaml", [](const YamlNode&) {});
    FAIL("the syntax error was not refused");
  } catch (const InputError& e) {
    CHECK(e.where().line >= 3);
    CHECK(std::string(e.what()).find("malformed YAML") != std::string::npos);
  }
}

TEST_CASE("read_file_bytes reads a file whole and refuses a directory without reserving its size") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "capsim-read-bytes";
  std::filesystem::create_directories(dir);
  { std::ofstream(dir / "f.txt") << "abc\n"; }
  CHECK(read_file_bytes((dir / "f.txt").string()) == std::optional<std::string>("abc\n"));
  // A directory (found by the study fuzz target: its lseek size can be near 2^63).
  CHECK_FALSE(read_file_bytes(dir.string()).has_value());
  CHECK_FALSE(read_file_bytes((dir / "missing").string()).has_value());
  std::filesystem::remove_all(dir);
}

}  // namespace capsim
