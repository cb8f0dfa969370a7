// Inline SVG charts for the HTML report, drawn by our own code: no scripts, no fonts or styles
// from the network (text uses the page's CSS font). Line/area charts over time or over a log
// axis, horizontal bar charts and a stacked bar. Series longer than the chart is wide are
// thinned to the minimum and maximum per pixel column, so spikes survive.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace capsim::svg {

// Okabe-Ito colours: distinguishable with the common colour-vision deficiencies.
inline constexpr const char* kBlue = "#0072B2";
inline constexpr const char* kOrange = "#E69F00";
inline constexpr const char* kGreen = "#009E73";
inline constexpr const char* kPurple = "#CC79A7";
inline constexpr const char* kSky = "#56B4E9";
inline constexpr const char* kVermillion = "#D55E00";
inline constexpr const char* kYellow = "#F0E442";
inline constexpr const char* kGrey = "#8c8c8c";
// The i-th colour of the palette above, cycling (greys excluded).
const char* palette(std::size_t i);

enum class SeriesStyle { kLine, kArea, kDashed, kStep };

struct Series {
  std::string name;
  std::string color = kBlue;
  SeriesStyle style = SeriesStyle::kLine;
  std::vector<double> x, y;
};

enum class XAxis {
  kTime,        // x in seconds of simulated time; ticks in minutes, hours or days
  kLogSeconds,  // x in seconds on a log scale (1 s .. max); values below 1 s sit at the left edge
};

struct LineChart {
  std::string title;  // read by screen readers (<title>), not drawn
  std::string y_label;
  XAxis x_axis = XAxis::kTime;
  double width = 560;
  double height = 230;
  std::optional<double> y_max;  // default: from the data (nice-rounded up)
  bool y_percent = false;       // y in 0..1, ticks shown as percentages
  std::vector<Series> series;
};

std::string line_chart(const LineChart& chart);

struct Bar {
  std::string label;
  double value = 0;
  std::string value_text;  // shown at the end of the bar
  std::string color = kBlue;
};

// Horizontal bars, longest scale = the largest value; labels on the left.
std::string bar_chart(const std::string& title, const std::vector<Bar>& bars, double width = 560,
                      double label_width = 200);

// One horizontal bar split into parts (in order), with a legend below naming each part and its
// text. Parts with a value <= 0 are left out of the bar but kept in the legend.
std::string stacked_bar(const std::string& title, const std::vector<Bar>& parts,
                        double width = 560);

// Nice tick positions covering [lo, hi] with about `target` ticks (steps of 1, 2 or 5 x 10^k).
std::vector<double> nice_ticks(double lo, double hi, int target);

}  // namespace capsim::svg
