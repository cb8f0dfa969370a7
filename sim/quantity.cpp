#include "sim/quantity.hpp"

#include <fmt/format.h>

#include <cctype>

namespace capsim {
namespace {

__extension__ typedef __int128 i128;
constexpr i128 kLimit = static_cast<i128>(INT64_MAX);

// Multiplies with saturation above kLimit (the caller reports overflow).
i128 mul_sat(i128 a, i128 b) {
  if (a == 0 || b == 0) return 0;
  if (a > kLimit * 4 / b) return kLimit * 4;
  return a * b;
}

}  // namespace

Result<std::int64_t> parse_quantity_scaled(std::string_view text, int scale_pow10,
                                           bool allow_negative) {
  std::string_view s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  if (s.empty()) return make_error("empty quantity");

  bool negative = false;
  std::size_t i = 0;
  if (s[i] == '+' || s[i] == '-') {
    negative = s[i] == '-';
    ++i;
  }
  // Mantissa digits: integer part and fraction, accumulated as one integer m with a decimal
  // exponent so that the value is m * 10^dexp exactly.
  i128 m = 0;
  int dexp = 0;
  int digits = 0;
  bool seen_dot = false;
  int significant = 0;
  bool dropped = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '.') {
      if (seen_dot) return make_error(fmt::format("'{}' has two decimal points", text));
      seen_dot = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) break;
    ++digits;
    if (significant < 30) {
      m = m * 10 + (c - '0');
      if (m != 0) ++significant;
      if (seen_dot) --dexp;
    } else if (!seen_dot) {
      ++dexp;  // beyond 30 significant digits: the value is out of range anyway
    } else if (c != '0') {
      dropped = true;  // a fraction digit beyond 30 significant ones: the value is a bit more
    }
  }
  if (digits == 0) return make_error(fmt::format("'{}' is not a quantity: it has no digits", text));

  // Suffix.
  std::string_view suffix = s.substr(i);
  int pow2 = 0;
  if (suffix.empty()) {
  } else if (suffix == "n") {
    dexp -= 9;
  } else if (suffix == "u") {
    dexp -= 6;
  } else if (suffix == "m") {
    dexp -= 3;
  } else if (suffix == "k") {
    dexp += 3;
  } else if (suffix == "M") {
    dexp += 6;
  } else if (suffix == "G") {
    dexp += 9;
  } else if (suffix == "T") {
    dexp += 12;
  } else if (suffix == "P") {
    dexp += 15;
  } else if (suffix == "E") {
    dexp += 18;
  } else if (suffix == "Ki") {
    pow2 = 10;
  } else if (suffix == "Mi") {
    pow2 = 20;
  } else if (suffix == "Gi") {
    pow2 = 30;
  } else if (suffix == "Ti") {
    pow2 = 40;
  } else if (suffix == "Pi") {
    pow2 = 50;
  } else if (suffix == "Ei") {
    pow2 = 60;
  } else if ((suffix[0] == 'e' || suffix[0] == 'E') && suffix.size() > 1) {
    std::string_view ex = suffix.substr(1);
    bool eneg = false;
    if (ex[0] == '+' || ex[0] == '-') {
      eneg = ex[0] == '-';
      ex.remove_prefix(1);
    }
    if (ex.empty() || ex.size() > 3) {
      return make_error(fmt::format("'{}' has a malformed exponent", text));
    }
    int e = 0;
    for (char c : ex) {
      if (!std::isdigit(static_cast<unsigned char>(c))) {
        return make_error(fmt::format("'{}' has a malformed exponent", text));
      }
      e = e * 10 + (c - '0');
    }
    dexp += eneg ? -e : e;
  } else {
    return make_error(fmt::format(
        "'{}' has an unknown suffix '{}' (use one of m, k, M, G, T, Ki, Mi, Gi, Ti, or an "
        "exponent such as e3)",
        text, suffix));
  }
  if (negative && m != 0 && !allow_negative) {
    return make_error(fmt::format("'{}' is negative; a quantity here must be 0 or more", text));
  }

  // value * 10^scale = m * 10^(dexp + scale) * 2^pow2, rounded up (away from zero for
  // positive values, as Quantity.MilliValue() does). Trailing zeros of the mantissa go into the
  // exponent first, so a long tiny decimal (0.000...0001000...0) is small, not "too large".
  while (m != 0 && m % 10 == 0) {
    m /= 10;
    ++dexp;
  }
  int e10 = dexp + scale_pow10;
  i128 num = m;
  for (; e10 > 0; --e10)
    num = mul_sat(num, 10);
  // Divides by 10^-e10, rounding up: repeated exact division, remembering whether any remainder
  // was left (exact for any divisor, where a divisor built as a power would saturate).
  bool rest = false;
  auto divide_up = [&e10, &rest](i128 n) {
    for (; e10 < 0 && n != 0; ++e10) {
      rest = rest || n % 10 != 0;
      n /= 10;
    }
    e10 = 0;
    return n;
  };
  const i128 pow2_factor = static_cast<i128>(1) << pow2;
  if (pow2 > 0 && e10 < 0 && num > kLimit * 4 / pow2_factor) {
    // A binary suffix on more significant digits than the product holds (over 20 or so): divide
    // first. The result may then round up one unit more than the exact value would.
    num = divide_up(num);
  }
  if (pow2 > 0) num = mul_sat(num, pow2_factor);
  if (e10 < 0) num = divide_up(num);
  if (num >= kLimit * 4) return make_error(fmt::format("'{}' is too large", text));
  // Rounded up: a remainder of the division, or digits dropped from the mantissa.
  const i128 q = num + (rest || dropped ? 1 : 0);
  if (q > kLimit) return make_error(fmt::format("'{}' is too large", text));
  auto v = static_cast<std::int64_t>(q);
  return negative ? -v : v;
}

std::string format_bytes(std::int64_t bytes) {
  static constexpr const char* kSuffix[] = {"Ei", "Pi", "Ti", "Gi", "Mi", "Ki"};
  static constexpr int kShift[] = {60, 50, 40, 30, 20, 10};
  if (bytes == 0) return "0";
  for (int i = 0; i < 6; ++i) {
    const std::int64_t unit = std::int64_t{1} << kShift[i];
    if (bytes % unit == 0) return fmt::format("{}{}", bytes / unit, kSuffix[i]);
  }
  return fmt::format("{}", bytes);
}

std::string format_milli(std::int64_t milli) {
  if (milli % 1000 == 0) return fmt::format("{}", milli / 1000);
  return fmt::format("{}m", milli);
}

}  // namespace capsim
