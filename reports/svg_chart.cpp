#include "reports/svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "reports/text/escape.hpp"
#include "reports/text/number.hpp"

namespace capsim::svg {

namespace {

constexpr double kLeft = 58;  // room for y tick labels
constexpr double kRight = 18;
constexpr double kTop = 34;     // room for the legend and the y label
constexpr double kBottom = 30;  // room for x tick labels

struct Frame {
  double x0, x1, y0, y1;            // data range
  double left, right, top, bottom;  // pixel box of the plot area
  bool log_x = false;
  double px(double x) const {
    if (log_x) {
      const double lx = std::log10(std::max(x, x0));
      const double a = std::log10(x0), b = std::log10(x1);
      return left + (lx - a) / (b - a) * (right - left);
    }
    return left + (x - x0) / (x1 - x0) * (right - left);
  }
  double py(double y) const { return bottom - (y - y0) / (y1 - y0) * (bottom - top); }
};

std::string num(double v) {
  return fmt::format("{:.1f}", v);
}

std::string time_label(double seconds, double step) {
  const auto s = static_cast<long long>(std::llround(seconds));
  if (step >= 86400 && s % 86400 == 0) return fmt::format("{}d", s / 86400);
  const long long h = s / 3600, m = s % 3600 / 60;
  if (m == 0) return fmt::format("{}h", h);
  if (h == 0) return fmt::format("{}m", m);
  return fmt::format("{}h{:02}", h, m);
}

std::vector<double> time_ticks(double span, double& step_out) {
  static constexpr double kSteps[] = {60,     120,    300,     600,     900,     1800,    3600,
                                      7200,   10800,  14400,   21600,   43200,   86400,   172800,
                                      345600, 604800, 1209600, 2592000, 7776000, 31536000};
  double step = kSteps[std::size(kSteps) - 1];
  for (double s : kSteps) {
    if (span / s <= 8) {
      step = s;
      break;
    }
  }
  step_out = step;
  std::vector<double> t;
  for (double v = 0; v <= span + 1e-9; v += step)
    t.push_back(v);
  return t;
}

// A tick value without trailing zeros: 0.25, 1.5, 1,000.
std::string tick_text(double v) {
  if (std::fabs(v - std::round(v)) < 1e-9) return figure(std::round(v));
  return fmt::format("{:.4g}", v);
}

std::string log_label(double s) {
  if (s < 60) return fmt::format("{}s", figure(s));
  if (s < 3600) return fmt::format("{}m", figure(s / 60));
  if (s < 86400) return fmt::format("{}h", figure(s / 3600));
  return fmt::format("{}d", figure(s / 86400));
}

// Thins a series to at most two points (min and max, in x order) per pixel column.
void thin(const Series& s, const Frame& f, std::vector<double>& xs, std::vector<double>& ys) {
  const std::size_t n = std::min(s.x.size(), s.y.size());
  const double columns = f.right - f.left;
  if (n <= static_cast<std::size_t>(2 * columns)) {
    xs.assign(s.x.begin(), s.x.begin() + static_cast<std::ptrdiff_t>(n));
    ys.assign(s.y.begin(), s.y.begin() + static_cast<std::ptrdiff_t>(n));
    return;
  }
  long long column = -1;
  std::size_t lo = 0, hi = 0;
  auto flush = [&] {
    if (column < 0) return;
    const std::size_t a = std::min(lo, hi), b = std::max(lo, hi);
    xs.push_back(s.x[a]);
    ys.push_back(s.y[a]);
    if (b != a) {
      xs.push_back(s.x[b]);
      ys.push_back(s.y[b]);
    }
  };
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<long long>(std::floor(f.px(s.x[i])));
    if (c != column) {
      flush();
      column = c;
      lo = hi = i;
    }
    if (s.y[i] < s.y[lo]) lo = i;
    if (s.y[i] > s.y[hi]) hi = i;
  }
  flush();
}

std::string polyline_points(const std::vector<double>& xs, const std::vector<double>& ys,
                            const Frame& f, bool step) {
  std::string d;
  d.reserve(xs.size() * 16);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double x = f.px(xs[i]);
    const double y = f.py(std::clamp(ys[i], f.y0, f.y1));
    if (i == 0) {
      d += fmt::format("M{} {}", num(x), num(y));
    } else if (step) {
      d += fmt::format("H{}V{}", num(x), num(y));
    } else {
      d += fmt::format("L{} {}", num(x), num(y));
    }
  }
  return d;
}

std::string legend(const std::vector<Series>& series, double width) {
  // Right-aligned swatches, laid out from the right edge leftwards.
  std::string out;
  double x = width - kRight;
  for (auto it = series.rbegin(); it != series.rend(); ++it) {
    const double text_w = 6.4 * static_cast<double>(it->name.size());
    x -= text_w;
    out += fmt::format(R"(<text x="{}" y="14" class="legend">{}</text>)", num(x),
                       html_escape(it->name));
    x -= 16;
    if (it->style == SeriesStyle::kDashed) {
      out += fmt::format(
          R"(<line x1="{}" y1="10" x2="{}" y2="10" stroke="{}" stroke-width="2" stroke-dasharray="4 3"/>)",
          num(x), num(x + 12), it->color);
    } else if (it->style == SeriesStyle::kArea) {
      out += fmt::format(
          R"(<rect x="{}" y="5" width="12" height="10" fill="{}" fill-opacity="0.3" stroke="{}"/>)",
          num(x), it->color, it->color);
    } else {
      out +=
          fmt::format(R"(<line x1="{}" y1="10" x2="{}" y2="10" stroke="{}" stroke-width="2.5"/>)",
                      num(x), num(x + 12), it->color);
    }
    x -= 14;
  }
  return out;
}

}  // namespace

const char* palette(std::size_t i) {
  static constexpr const char* kColors[] = {kBlue, kOrange,     kGreen, kPurple,
                                            kSky,  kVermillion, kYellow};
  return kColors[i % std::size(kColors)];
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!(hi > lo)) return {lo};
  const double raw = (hi - lo) / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  std::vector<double> out;
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
    out.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
  return out;
}

std::string line_chart(const LineChart& c) {
  Frame f{};
  f.left = kLeft;
  f.right = c.width - kRight;
  f.top = kTop;
  f.bottom = c.height - kBottom;
  f.log_x = c.x_axis == XAxis::kLogSeconds;
  const bool linear = c.x_axis == XAxis::kLinear;
  double xmax = 0, ymax = 0;
  double xmin = std::numeric_limits<double>::infinity();
  for (const Series& s : c.series) {
    for (double x : s.x)
      if (std::isfinite(x)) {
        xmax = std::max(xmax, x);
        xmin = std::min(xmin, x);
      }
    for (double y : s.y)
      if (std::isfinite(y)) ymax = std::max(ymax, y);
  }
  if (c.y_max) ymax = *c.y_max;
  std::vector<double> yt = nice_ticks(0, ymax > 0 ? ymax : 1, 4);
  f.y0 = 0;
  f.y1 = std::max(yt.back(), ymax > 0 ? ymax : 1.0);
  if (c.y_max) f.y1 = *c.y_max;
  std::vector<double> xt;
  double time_step = 0;
  if (f.log_x) {
    f.x0 = 1;
    f.x1 = std::max(10.0, xmax);
    for (double t : {1.0, 10.0, 60.0, 600.0, 3600.0, 21600.0, 86400.0, 604800.0, 2592000.0}) {
      if (t <= f.x1 * 1.0001) xt.push_back(t);
    }
  } else if (linear) {
    f.x0 = std::isfinite(xmin) ? xmin : 0;
    f.x1 = xmax > f.x0 ? xmax : f.x0 + 1;
    xt = nice_ticks(f.x0, f.x1, 6);
  } else {
    f.x0 = 0;
    f.x1 = xmax > 0 ? xmax : 1;
    xt = time_ticks(f.x1, time_step);
  }

  std::string out = fmt::format(
      R"(<svg class="chart" viewBox="0 0 {} {}" width="{}" height="{}" role="img" aria-label="{}">)",
      num(c.width), num(c.height), num(c.width), num(c.height), html_escape(c.title));
  out += fmt::format("<title>{}</title>", html_escape(c.title));
  // Grid and y ticks.
  for (double y : yt) {
    if (y > f.y1 + 1e-9) continue;
    const double py = f.py(y);
    out += fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" class="grid"/>)", num(f.left),
                       num(py), num(f.right), num(py));
    const std::string label = c.y_percent ? fmt::format("{}%", tick_text(y * 100)) : tick_text(y);
    out += fmt::format(R"(<text x="{}" y="{}" class="tick" text-anchor="end">{}</text>)",
                       num(f.left - 6), num(py + 4), label);
  }
  // X ticks.
  for (double x : xt) {
    const double px = f.px(x);
    out += fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" class="axis"/>)", num(px),
                       num(f.bottom), num(px), num(f.bottom + 4));
    const std::string label = linear    ? tick_text(x)
                              : f.log_x ? (x == f.x0 ? "≤" + log_label(x) : log_label(x))
                                        : time_label(x, time_step);
    out += fmt::format(R"(<text x="{}" y="{}" class="tick" text-anchor="middle">{}</text>)",
                       num(px), num(f.bottom + 17), label);
  }
  out += fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" class="axis"/>)", num(f.left),
                     num(f.bottom), num(f.right), num(f.bottom));
  out += fmt::format(R"(<text x="{}" y="{}" class="ylabel">{}</text>)", num(4), num(14),
                     html_escape(c.y_label));
  // Series: areas first so lines stay on top.
  for (int pass = 0; pass < 2; ++pass) {
    for (const Series& s : c.series) {
      const bool area = s.style == SeriesStyle::kArea;
      if ((pass == 0) != area) continue;
      std::vector<double> xs, ys;
      thin(s, f, xs, ys);
      if (xs.empty()) continue;
      const std::string d = polyline_points(xs, ys, f, s.style == SeriesStyle::kStep);
      if (area) {
        out += fmt::format(
            R"(<path d="{}V{}H{}Z" fill="{}" fill-opacity="0.22" stroke="none"><title>{}</title></path>)",
            d, num(f.py(0)), num(f.px(xs.front())), s.color, html_escape(s.name));
      }
      out += fmt::format(
          R"(<path d="{}" fill="none" stroke="{}" stroke-width="{}"{} stroke-linejoin="round"><title>{}</title></path>)",
          d, s.color, area ? "1.5" : "2",
          s.style == SeriesStyle::kDashed ? R"( stroke-dasharray="5 4")" : "", html_escape(s.name));
      if (linear) {
        for (std::size_t i = 0; i < s.x.size(); ++i) {
          if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
          out += fmt::format(
              R"(<circle cx="{}" cy="{}" r="3" fill="{}"><title>{}: {}, {}</title></circle>)",
              num(f.px(s.x[i])), num(f.py(s.y[i])), s.color, html_escape(s.name), tick_text(s.x[i]),
              tick_text(s.y[i]));
        }
      }
    }
  }
  if (linear && !c.x_label.empty()) {
    out += fmt::format(R"(<text x="{}" y="{}" class="tick" text-anchor="end">{}</text>)",
                       num(f.right), num(c.height - 2), html_escape(c.x_label));
  }
  out += legend(c.series, c.width);
  out += "</svg>";
  return out;
}

std::string bar_chart(const std::string& title, const std::vector<Bar>& bars, double width,
                      double label_width) {
  const double row = 24;
  const double height = row * static_cast<double>(bars.size()) + 8;
  double vmax = 0;
  for (const Bar& b : bars)
    vmax = std::max(vmax, b.value);
  const double value_room = 110;
  const double span = width - label_width - value_room;
  std::string out = fmt::format(
      R"(<svg class="chart" viewBox="0 0 {} {}" width="{}" height="{}" role="img" aria-label="{}"><title>{}</title>)",
      num(width), num(height), num(width), num(height), html_escape(title), html_escape(title));
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const double y = 4 + row * static_cast<double>(i);
    const double w = vmax > 0 ? std::max(0.0, b.value) / vmax * span : 0;
    std::string label = b.label;
    const auto max_chars = static_cast<std::size_t>(label_width / 6.6);
    if (label.size() > max_chars) label = label.substr(0, max_chars - 1) + "…";
    out += fmt::format(R"(<text x="{}" y="{}" class="tick" text-anchor="end">{}</text>)",
                       num(label_width - 8), num(y + 15), html_escape(label));
    out += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="{}" rx="2"/>)",
                       num(label_width), num(y + 3), num(std::max(w, 1.0)), num(row - 8), b.color);
    out += fmt::format(R"(<text x="{}" y="{}" class="tick">{}</text>)", num(label_width + w + 6),
                       num(y + 15), html_escape(b.value_text));
  }
  out += "</svg>";
  return out;
}

std::string stacked_bar(const std::string& title, const std::vector<Bar>& parts, double width) {
  double total = 0;
  for (const Bar& p : parts)
    total += std::max(0.0, p.value);
  const double bar_h = 30;
  const double legend_row = 20;
  const std::size_t per_row = 3;
  const std::size_t rows = (parts.size() + per_row - 1) / per_row;
  const double height = bar_h + 14 + legend_row * static_cast<double>(rows);
  std::string out = fmt::format(
      R"(<svg class="chart" viewBox="0 0 {} {}" width="{}" height="{}" role="img" aria-label="{}"><title>{}</title>)",
      num(width), num(height), num(width), num(height), html_escape(title), html_escape(title));
  double x = 0;
  for (const Bar& p : parts) {
    if (p.value <= 0 || total <= 0) continue;
    const double w = p.value / total * width;
    out += fmt::format(
        R"(<rect x="{}" y="0" width="{}" height="{}" fill="{}"><title>{}: {}</title></rect>)",
        num(x), num(w), num(bar_h), p.color, html_escape(p.label), html_escape(p.value_text));
    x += w;
  }
  const double col = width / static_cast<double>(per_row);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const double lx = col * static_cast<double>(i % per_row);
    const double ly = bar_h + 14 + legend_row * static_cast<double>(i / per_row);
    out += fmt::format(R"(<rect x="{}" y="{}" width="11" height="11" fill="{}"/>)", num(lx),
                       num(ly - 10), parts[i].color);
    out += fmt::format(R"(<text x="{}" y="{}" class="legend">{} · {}</text>)", num(lx + 16),
                       num(ly), html_escape(parts[i].label), html_escape(parts[i].value_text));
  }
  out += "</svg>";
  return out;
}

}  // namespace capsim::svg
