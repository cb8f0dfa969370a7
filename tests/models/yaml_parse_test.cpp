// The fast path (models/yaml_parse.hpp) builds exactly the tree yaml-cpp's loader builds, marks
// included, or declines so yaml-cpp's path reads the text.
#include "models/yaml_parse.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace capsim {

namespace {

std::string describe_mark(const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  return std::to_string(m.line) + ":" + std::to_string(m.column) + "@" + std::to_string(m.pos);
}

// "" when `a` and `b` are the same tree (types, scalars, tags, styles, marks, key order), else
// where they first differ.
std::string difference(const YAML::Node& a, const YAML::Node& b, const std::string& path) {
  if (a.Type() != b.Type()) return path + ": node type";
  if (describe_mark(a) != describe_mark(b))
    return path + ": mark " + describe_mark(a) + " vs " + describe_mark(b);
  if (a.Tag() != b.Tag()) return path + ": tag '" + a.Tag() + "' vs '" + b.Tag() + "'";
  if (a.IsScalar() && a.Scalar() != b.Scalar())
    return path + ": '" + a.Scalar() + "' vs '" + b.Scalar() + "'";
  if (!a.IsMap() && !a.IsSequence()) return "";
  if (a.Style() != b.Style()) return path + ": style";
  if (a.size() != b.size()) return path + ": size";
  auto ia = a.begin();
  auto ib = b.begin();
  for (std::size_t i = 0; ia != a.end(); ++ia, ++ib, ++i) {
    const std::string at = path + "[" + std::to_string(i) + "]";
    std::string d = a.IsMap() ? difference(ia->first, ib->first, at + ".key") +
                                    difference(ia->second, ib->second, at + ".value")
                              : difference(*ia, *ib, at);
    if (!d.empty()) return d;
  }
  return "";
}

// "" when the fast path reads `text` as YAML::LoadAll does, "declined" when it declines.
std::string compare_with_yaml_cpp(const std::string& text) {
  const auto fast = fast_load_all(text, false);
  if (!fast) return "declined";
  const std::vector<YAML::Node> ref = YAML::LoadAll(text);
  if (fast->size() != ref.size()) return "document count";
  for (std::size_t d = 0; d < ref.size(); ++d) {
    std::string diff = difference(ref[d], (*fast)[d], "doc" + std::to_string(d));
    if (!diff.empty()) return diff;
  }
  return "";
}

}  // namespace

TEST_CASE("the fast path builds yaml-cpp's own tree, marks included") {
  // Each text as a file might hold it; compare_with_yaml_cpp names the first difference.
  const std::vector<std::string> texts = {
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  labels: {app: x, tier: \"web\"}\n",
      // kubectl's List shape, an item of it alone (its "- " made blank), and its JSON form.
      "apiVersion: v1\nitems:\n- kind: Node\n  metadata:\n    name: n0\nkind: List\n",
      "  kind: Node\n  metadata:\n    name: n0\n  status:\n    capacity:\n      cpu: \"8\"\n",
      "{\n  \"items\": [\n    {\"kind\": \"Pod\", \"spec\": {\"containers\": []}}\n  ]\n}\n",
      // Empty values: yaml-cpp marks them where the next token begins.
      "a:\nb: 1\n",
      "a: 1\nb:\n",
      "a:\n  b:\n  c:\nd: x\n",
      "a:\n  b:    # note\n\n  c: 1\n",
      "- \n- a\n-\n",
      "x:\n- a\n-\ny: 1\n",
      "x:\n  - \n  -\n",
      "- a:\n  b: 1\n",
      // Documents: none, empty ones, several.
      "",
      "# only a comment\n",
      "---\n",
      "---\na: 1\n---\n---\nb: 2\n",
      "a: 1\n...\n",
      // Scalars in every style, and the spellings of null.
      "a: 'q'\nb: \"d\\tq\"\nc: |\n  lit\n  two\nd: >\n  fold\n  ed\ne: |-\n  x\n",
      "a: |+\n  keep\n\nb: 1\n",
      "a: >-\n  folded\n   more\n  back\n",
      "a: plain\n  continued\nb: 1\n",
      "a: \"multi\n  line quoted\"\n",
      "a: ~\nb: null\nc: Null\nd: NULL\ne: \"null\"\nf: ''\n",
      "- -1\n- 0x10\n- 1e3\n- .inf\n- yes\n- 2026-11-30T08:00:00Z\n",
      // Columns count bytes (yaml-cpp's), not characters (libyaml's).
      "k: \xC3\xA9 x\nl: [\xC3\xA9, b]\nm: {\xC3\xA9: 1}\n",
      "- \xC3\xA9: 1\n  b: \n  c: 2\n",
      // Flow collections, nested and empty.
      "[a, b, {c: d}]\n",
      "a: [ ]\nb: { }\n",
      "a:\n  b: 1\n  c: {d: [1, 2], e: f}\n  g:\n",
      "- - a\n  - b\n- - c\n",
      "[a, ]\n",
      "\"quoted key\": 1\n'single': 2\nkey with spaces: v\n",
      "? a\n: b\n",
      // The same key in different mappings is no repeat.
      "- {k: 1}\n- {k: 2}\n",
      "a: {k: 1}\nb: {k: 1}\n",
  };
  for (const std::string& text : texts) {
    CAPTURE(text);
    CHECK(compare_with_yaml_cpp(text) == "");
  }
}

TEST_CASE("the fast path declines what it does not reproduce, for yaml-cpp to read or refuse") {
  struct Case {
    std::string text;
    const char* why;
  };
  const std::vector<Case> cases = {
      {"a: &x 1\nb: *x\n", "an anchor and an alias"},
      {"a: !!str 1\n", "a tag"},
      {"%YAML 1.2\n---\na: 1\n", "a directive"},
      {"a: 1\r\nb: 2\r\n", "carriage returns"},
      {"\xEF\xBB\xBF"
       "a: 1\n",
       "a byte order mark"},
      {"? a\nb: 1\n", "an explicit key without a value"},
      {"? [a]\n: b\n", "a key that is a list"},
      {"~: a\n", "a null key"},
      {"a: 1\n<<: {b: 2}\n", "a merge key"},
      {"a: 1\nb: 2\na: 3\n", "a repeated key"},
      {"x: {k: 1, k: 2}\n", "a repeated key in a flow mapping"},
      {"{a: }\n", "an empty value in a flow mapping"},
      {"{a, b: 1}\n", "a key without a value in a flow mapping"},
      {"a: \"unterminated\n", "a text libyaml refuses"},
      {"a: 1\n\tb: 2\n", "a tab libyaml refuses (yaml-cpp takes it)"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.why);
    CHECK(compare_with_yaml_cpp(c.text) == "declined");
    CHECK_FALSE(fast_check(c.text, false));
  }
}

TEST_CASE("the fast path takes 64 levels of nesting and declines 65") {
  const auto lists = [](int depth) {
    return std::string(static_cast<std::size_t>(depth), '[') + "1" +
           std::string(static_cast<std::size_t>(depth), ']');
  };
  CHECK(compare_with_yaml_cpp(lists(64)) == "");
  CHECK(fast_check(lists(64), true));
  CHECK(compare_with_yaml_cpp(lists(65)) == "declined");
  CHECK_FALSE(fast_check(lists(65), true));
}

TEST_CASE("with one document wanted, a second declines; a text of none is a null node") {
  CHECK(fast_check("a: 1\n", true));
  CHECK_FALSE(fast_check("a: 1\n---\nb: 2\n", true));
  CHECK(fast_check("a: 1\n---\nb: 2\n", false));
  CHECK_FALSE(fast_load_all("a: 1\n---\nb: 2\n", true).has_value());
  const auto none = fast_load_all("# nothing\n", true);
  REQUIRE(none.has_value());
  CHECK(none->empty());  // YamlNode::load_string makes it YAML::Load's null node
}

TEST_CASE("a mapping of many keys is checked for repeats past the first sixteen") {
  std::string many;
  for (int i = 0; i < 40; ++i)
    many += "k" + std::to_string(i) + ": " + std::to_string(i) + "\n";
  CHECK(compare_with_yaml_cpp(many) == "");
  CHECK(compare_with_yaml_cpp(many + "k3: again\n") == "declined");
  CHECK(compare_with_yaml_cpp(many + "k39: again\n") == "declined");
}

}  // namespace capsim
