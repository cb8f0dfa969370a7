#include "reports/text/json.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>

namespace capsim {

namespace {

// Copies the UTF-8 sequence at s[i] to `out` and returns its length, or writes \ufffd and
// returns 1 for a byte that does not start a valid sequence.
std::size_t copy_utf8(std::string_view s, std::size_t i, std::string& out) {
  auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  std::size_t len = 0;
  std::uint32_t min = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
    min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    min = 0x10000;
  }
  bool ok = len != 0 && i + len <= s.size();
  std::uint32_t cp = len == 0 ? 0 : (c & (0x7Fu >> len));
  for (std::size_t k = 1; ok && k < len; ++k) {
    ok = (b(i + k) & 0xC0) == 0x80;
    cp = (cp << 6) | (b(i + k) & 0x3Fu);
  }
  // Reject overlong forms, UTF-16 surrogates and code points above U+10FFFF.
  ok = ok && cp >= min && !(cp >= 0xD800 && cp <= 0xDFFF) && cp <= 0x10FFFF;
  if (!ok) {
    out += "\\ufffd";
    return 1;
  }
  out.append(s.substr(i, len));
  return len;
}

}  // namespace

std::string json_quote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      i += copy_utf8(s, i, out);
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  out += '"';
  return out;
}

std::string json_number(double v) {
  return std::isfinite(v) ? fmt::format("{}", v) : std::string("null");
}

}  // namespace capsim
