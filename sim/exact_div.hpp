// Integer division through the floating-point divider. On the x86 cores capsim runs on, a 64-bit
// integer division takes tens of cycles and does not overlap the next one, while a double
// division pipelines; scoring divides twice per node for every scored node of every cycle.
#pragma once

#include <cstdint>

namespace capsim {

// n / d, truncated, for n >= 0 and d > 0: the same value as the integer division. Below 2^53 both
// operands are exact doubles, and the correctly rounded quotient q' of q = n / d is within
// q * 2^-53 < 1 / d of it. A q that is not an integer is at least 1 / d from the integers on
// either side, so q' stays strictly between them (rounding is monotone, so q' cannot pass
// floor(q), which is a double); an integer q is a double itself. Truncating q' gives floor(q).
// Other operands take the integer division.
constexpr std::int64_t exact_div(std::int64_t n, std::int64_t d) {
  constexpr std::int64_t kExact = std::int64_t{1} << 53;
  if (n < 0 || d <= 0 || n >= kExact || d >= kExact) [[unlikely]]
    return n / d;
  return static_cast<std::int64_t>(static_cast<double>(n) / static_cast<double>(d));
}

}  // namespace capsim
