// One escaper for HTML and XML (the report, the SVG charts, check's JUnit) and one for markdown
// table cells; what each character becomes, with the reason where the two old copies differed.
#include "reports/text/escape.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace capsim;

TEST_CASE("markup escaping: the five special characters, and control characters as spaces") {
  struct Case {
    const char* name;
    std::string in;
    const char* want;
  };
  const Case cases[] = {
      {"plain text", "queue.team-a.wait_seconds_p95", "queue.team-a.wait_seconds_p95"},
      {"the five characters", "a<b & \"c\" 'd'>", "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;"},
      // &#39; is valid in HTML 4 as well as XML; the JUnit copy wrote &apos;.
      {"an apostrophe", "team's", "team&#39;s"},
      {"tab and newline stay", "a\tb\nc", "a\tb\nc"},
      // XML 1.0 forbids them even as references; the HTML copy let them through.
      {"other control characters become spaces", std::string("a\x01\rb\x1f", 5), "a  b "},
      {"UTF-8 passes through", "µs – ✓", "µs – ✓"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(html_escape(c.in) == c.want);
  }
}

TEST_CASE("a markdown cell escapes pipes and puts line breaks on one line") {
  CHECK(markdown_cell("a|b\nc\rd") == "a\\|b c d");
  CHECK(markdown_cell("`queue.a`") == "`queue.a`");
}
