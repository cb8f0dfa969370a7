// Kubernetes resource quantities ("500m", "64Gi", "1.5", "2e3"), parsed exactly as the API
// server's resource.Quantity does: decimal SI suffixes (n u m "" k M G T P E), binary suffixes
// (Ki Mi Gi Ti Pi Ei) and decimal exponents (e3, E-2). Conversions round up, like
// Quantity.Value() and MilliValue(), so a request is never under-counted.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sim/result.hpp"

namespace capsim {

// The integer value of `text` scaled by 10^scale_pow10 and rounded up: scale 0 gives Value(),
// scale 3 MilliValue(). Errors name what is wrong ("unknown suffix 'Gb'", "negative", ...).
Result<std::int64_t> parse_quantity_scaled(std::string_view text, int scale_pow10,
                                           bool allow_negative = false);

inline Result<std::int64_t> parse_quantity(std::string_view text) {
  return parse_quantity_scaled(text, 0);
}
inline Result<std::int64_t> parse_milli_quantity(std::string_view text) {
  return parse_quantity_scaled(text, 3);
}

// Formats bytes with the largest exact binary suffix ("80Gi", "1536Mi", "100").
std::string format_bytes(std::int64_t bytes);
// Formats millicores as Kubernetes prints them ("500m", "8").
std::string format_milli(std::int64_t milli);

}  // namespace capsim
