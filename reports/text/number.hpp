// Number formatting for every text capsim writes, so that a figure reads the same in the HTML,
// the markdown and the terminal: figure() shows 4 significant digits (integers in full) with
// thousands separators, and the tests that compare report figures with the summary table parse
// exactly this form. JSON numbers are json_number() (reports/text/json.hpp).
#pragma once

#include <string>

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
// `capsim run`'s and `capsim plan`'s figures: integers without decimals, others with up to 6
// significant digits ("0.723412", "1.5e+06"); null for NaN and infinities (it also goes into JSON).
std::string compact_number(double v);

}  // namespace capsim
