// Escaping text for the markup capsim writes: HTML (report, sweep report, SVG charts), XML
// (JUnit from `check`) and markdown table cells. One escaper serves HTML and XML, so a name reads
// the same in the report and in CI. Pure functions.
#pragma once

#include <string>
#include <string_view>

namespace capsim {

// For HTML and XML text and attribute values: & < > " ' become &amp; &lt; &gt; &quot; &#39;
// (&#39; rather than &apos;, which HTML 4 lacks), and control characters other than tab and
// newline, which XML 1.0 forbids even as references, become spaces.
std::string html_escape(std::string_view s);

// Escapes | and turns newlines into spaces, for a markdown table cell.
std::string markdown_cell(std::string_view s);

}  // namespace capsim
