// JSON text, the one escaper and number form every `--json` output uses (compare, catalog, run,
// plan). Pure functions; the output is always valid JSON whatever bytes the input holds.
#pragma once

#include <string>
#include <string_view>

namespace capsim {

// `s` as a JSON string literal, quotes included. `"` and `\` are escaped, as are control
// characters (\b \f \n \r \t by name, the others as \u00XX); invalid UTF-8 bytes become U+FFFD.
std::string json_quote(std::string_view s);

// `v` in the shortest form that reads back as exactly `v`; null for NaN and infinities, which
// JSON cannot write.
std::string json_number(double v);

}  // namespace capsim
