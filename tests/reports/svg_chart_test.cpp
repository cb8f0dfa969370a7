// The report's charts: nice ticks, thinning that keeps spikes, and well-formed SVG without
// anything that would need a network or a script.
#include "reports/svg_chart.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace capsim;

TEST_CASE("ticks fall on 1, 2, 2.5 or 5 times a power of ten") {
  CHECK(svg::nice_ticks(0, 100, 4) == std::vector<double>{0, 25, 50, 75, 100});
  CHECK(svg::nice_ticks(0, 176, 4) == std::vector<double>{0, 50, 100, 150});
  CHECK(svg::nice_ticks(0, 1, 4) == std::vector<double>{0, 0.25, 0.5, 0.75, 1});
  CHECK(svg::nice_ticks(0, 7, 4) == std::vector<double>{0, 2, 4, 6});
}

TEST_CASE("a long series is thinned to at most two points a pixel and keeps its spikes") {
  svg::LineChart c;
  c.title = "t";
  c.width = 300;
  svg::Series s;
  s.name = "s";
  for (int i = 0; i < 100000; ++i) {
    s.x.push_back(i);
    s.y.push_back(i == 54321 ? 1000.0 : 1.0);
  }
  c.series.push_back(s);
  const std::string svg_text = svg::line_chart(c);
  // The path holds far fewer than 100,000 points ...
  std::size_t points = 0;
  for (char ch : svg_text)
    points += (ch == 'L') ? 1 : 0;
  CHECK(points < 600);
  // ... but the y axis still reaches the spike (ticks up to 1,000).
  CHECK(svg_text.find(">1,000<") != std::string::npos);
}

TEST_CASE("charts are inline SVG with titles and no external references") {
  svg::LineChart c;
  c.title = "GPUs <all>";
  c.series.push_back({"busy", svg::kOrange, svg::SeriesStyle::kLine, {0, 3600, 7200}, {1, 2, 3}});
  const std::string a = svg::line_chart(c);
  const std::string b = svg::bar_chart("reasons", {{"Insufficient cpu", 5, "5 events"}});
  const std::string s = svg::stacked_bar("cost", {{"idle", 2, "2 USD"}, {"q", 0, "0 USD"}});
  for (const std::string& t : {a, b, s}) {
    CHECK(t.rfind("<svg", 0) == 0);
    CHECK(t.find("</svg>") != std::string::npos);
    CHECK(t.find("http") == std::string::npos);
    CHECK(t.find("<script") == std::string::npos);
    CHECK(t.find("nan") == std::string::npos);
  }
  CHECK(a.find("<title>GPUs &lt;all&gt;</title>") != std::string::npos);
  CHECK(a.find(">2h<") != std::string::npos);  // time ticks in hours
  svg::LineChart small;
  small.title = "small";
  small.series.push_back({"s", svg::kBlue, svg::SeriesStyle::kLine, {0, 60}, {0, 1.2}});
  const std::string sm = svg::line_chart(small);
  CHECK(sm.find(">0.5<") != std::string::npos);  // ticks without trailing zeros
  CHECK(sm.find("0.5000") == std::string::npos);
}
