// Number and text formatting shared by report, compare and check, so that a figure reads the same
// in the HTML, the markdown and the terminal: figure() shows 4 significant digits (integers in
// full) with thousands separators, and the tests that compare report figures with the summary
// table parse exactly this form.
#pragma once

#include <string>
#include <string_view>

namespace capsim {

// 12345 -> "12,345"; 1234.567 -> "1,235"; 12.345 -> "12.35"; 0.72341 -> "0.7234";
// 0.000123 -> "0.000123"; NaN -> "n/a"; infinities -> "inf" / "-inf".
std::string figure(double v);
// Decimal places figure() uses for `v` (0 for integers).
int figure_decimals(double v);
// A signed change: "+1,234", "-0.0123", "0".
std::string signed_figure(double v);
// A relative change as a percentage with a sign: "+5.2%", "-100%"; "n/a" when base is 0.
std::string percent_change(double change, double base);
// The shortest text that reads back as exactly `v` (for data-value attributes and JSON).
std::string exact_number(double v);
// A duration in seconds as "45s", "12m 30s", "3h 05m", "2d 04h".
std::string human_seconds(double s);

std::string html_escape(std::string_view s);
// Escapes | and newlines for a markdown table cell.
std::string markdown_cell(std::string_view s);

}  // namespace capsim
