#include "reports/text/number.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

namespace capsim {

namespace {

// Inserts thousands separators into the integer part of a plain decimal number.
std::string group_thousands(const std::string& s) {
  const std::size_t start = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  std::size_t end = s.find('.');
  if (end == std::string::npos) end = s.size();
  std::string out = s.substr(0, start);
  for (std::size_t i = start; i < end; ++i) {
    if (i > start && (end - i) % 3 == 0) out += ',';
    out += s[i];
  }
  out += s.substr(end);
  return out;
}

bool is_whole(double v) {
  return std::fabs(v) < 1e15 && v == std::floor(v);
}

}  // namespace

int figure_decimals(double v) {
  if (!std::isfinite(v) || is_whole(v)) return 0;
  const double a = std::fabs(v);
  const int magnitude = static_cast<int>(std::floor(std::log10(a)));
  int decimals = 3 - magnitude;  // four significant digits
  if (decimals < 0) decimals = 0;
  if (decimals > 6) decimals = 6;
  // 999.96 rounds to 1000.0: one digit fewer keeps four significant digits (1,000).
  if (decimals > 0 && std::round(a * std::pow(10.0, decimals)) >= 1e4) --decimals;
  return decimals;
}

std::string figure(double v) {
  if (std::isnan(v)) return "n/a";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return "0";
  if (is_whole(v)) return group_thousands(fmt::format("{:.0f}", v));
  const std::string s = fmt::format("{:.{}f}", v, figure_decimals(v));
  // Below the last decimal shown (|v| < 0.0000005): plainly zero, without a sign.
  if (s.find_first_not_of("-0.") == std::string::npos) return "0";
  return group_thousands(s);
}

std::string signed_figure(double v) {
  if (std::isnan(v)) return "n/a";
  const std::string s = figure(v);
  if (v > 0 && s.find_first_not_of("0.,") != std::string::npos) return "+" + s;
  return s;
}

std::string percent_change(double change, double base) {
  if (!std::isfinite(change) || !std::isfinite(base) || base == 0) return "n/a";
  const double pct = change / std::fabs(base) * 100.0;
  const double a = std::fabs(pct);
  const int decimals = a >= 100 ? 0 : (a >= 10 ? 1 : 2);
  std::string s = group_thousands(fmt::format("{:.{}f}", pct, decimals)) + "%";
  if (pct > 0) s = "+" + s;
  return s;
}

std::string exact_number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return fmt::format("{}", v);  // shortest round-trip form
}

std::string human_seconds(double s) {
  if (!std::isfinite(s)) return "n/a";
  const double a = std::fabs(s);
  const std::string sign = s < 0 ? "-" : "";
  if (a < 60) return sign + fmt::format("{}s", figure(a));
  const auto total = static_cast<long long>(std::llround(a));
  const long long d = total / 86400, h = total % 86400 / 3600, m = total % 3600 / 60,
                  sec = total % 60;
  if (d > 0) return sign + fmt::format("{}d {:02}h", d, h);
  if (h > 0) return sign + fmt::format("{}h {:02}m", h, m);
  return sign + fmt::format("{}m {:02}s", m, sec);
}

std::string compact_number(double v) {
  if (!std::isfinite(v)) return "null";
  if (std::fabs(v - std::round(v)) < 1e-9 && std::fabs(v) < 1e15)
    return fmt::format("{}", std::llround(v));
  return fmt::format("{:.6g}", v);
}

}  // namespace capsim
