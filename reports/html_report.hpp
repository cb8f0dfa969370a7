// The report a planner reads: one self-contained HTML page (inline CSS and SVG, no scripts, no
// network) for one run, and the same headline numbers as markdown. Every figure taken from the
// summary is written as <span class="num" data-metric="NAME" data-value="EXACT">FIGURE</span>,
// where FIGURE is reports/text/number.hpp's figure() of the summary value, so a test (or a user's
// script) can check the page against the `summary` table.
#pragma once

#include <string>

#include "reports/report_data.hpp"

namespace capsim {

std::string render_html_report(const ReportData& data);
std::string render_markdown_summary(const ReportData& data);

}  // namespace capsim
