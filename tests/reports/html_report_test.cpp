// The HTML report's optional parts: the MIG/replica section appears only when a pool shares
// GPUs, a file without pool samples still renders (cluster-wide charts and a note), and a run
// where nobody waited says so instead of drawing an empty chart.
#include "reports/html_report.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "sim/metric_catalog.hpp"

using namespace capsim;

namespace {

ReportData minimal(bool shared, bool with_pools) {
  ReportData d;
  d.file = "x.db";
  d.run.run_id = 1;
  d.run.scenario = "s";
  d.run.profile = "p";
  d.summary = {{"pods_total", 3}, {"cost_total_usd", 12.5}, {"queue.q.cost_usd", 2.5}};
  d.pools = {PoolInfo{"gpu", "B200", shared ? "mig" : "none", 1, 8, 44}};
  for (int i = 0; i < 3; ++i) {
    SampleRecord s;
    s.time = i * kHour;
    s.gpus_total = 8;
    s.gpus_allocated = i;
    d.samples.push_back(s);
    if (!with_pools) continue;
    PoolSampleRecord p;
    p.time = s.time;
    p.pool = "gpu";
    p.gpus_total = 8;
    p.gpus_allocated = i;
    p.shared_units_total = shared ? 56 : 0;
    p.shared_units_allocated = shared ? 7.0 * i : 0;
    d.pool_samples.push_back(p);
  }
  return d;
}

}  // namespace

TEST_CASE("the MIG and replica section appears only when a pool shares its GPUs") {
  const std::string plain = render_html_report(minimal(false, true));
  CHECK(plain.find("id=\"sharing\"") == std::string::npos);
  const std::string shared = render_html_report(minimal(true, true));
  CHECK(shared.find("id=\"sharing\"") != std::string::npos);
  CHECK(shared.find("<title>Shared devices in use, pool gpu</title>") != std::string::npos);
}

TEST_CASE("a report file without pool samples renders cluster-wide charts and says why") {
  const std::string html = render_html_report(minimal(false, false));
  CHECK(html.find("<title>GPUs allocated and busy, all pools</title>") != std::string::npos);
  CHECK(html.find("GPUs allocated and busy, pool gpu") == std::string::npos);
  CHECK(html.find("predates per-pool samples") != std::string::npos);
  // Metrics the file lacks show as n/a, untagged, rather than as a number.
  CHECK(html.find(R"(<span class="num">n/a</span>)") != std::string::npos);
  CHECK(html.find("No pod was ever left pending") != std::string::npos);
  // The queue's cost is in the breakdown, tagged with its metric.
  CHECK(html.find(R"(data-metric="queue.q.cost_usd" data-value="2.5">2.500</span>)") !=
        std::string::npos);
}

TEST_CASE("the headline cards are the catalog's headline metrics, in the catalog's order") {
  const std::string html = render_html_report(minimal(false, true));
  std::vector<std::pair<int, std::string>> cards;
  for (const MetricDef& m : metric_catalog()) {
    if (m.headline > 0) cards.emplace_back(m.headline, std::string(m.name));
  }
  std::sort(cards.begin(), cards.end());
  REQUIRE(cards.size() == 10);
  // Each card's value is tagged with its metric when the run has it; the minimal run has only
  // pods_total and cost_total_usd, so the labels show the order.
  const char* labels[] = {"Pods completed",
                          "GPU allocation, mean",
                          "GPU utilisation, mean",
                          "Wait, p95",
                          "Job completion time, mean",
                          "Fragmentation, mean",
                          "Total cost",
                          "Cost per busy GPU-hour",
                          "GPU energy",
                          "Left waiting at the end"};
  std::size_t at = 0;
  for (const char* label : labels) {
    CAPTURE(label);
    const std::size_t found =
        html.find(std::string(R"(<div class="label">)") + label + "</div>", at);
    REQUIRE(found != std::string::npos);
    at = found;
  }
  CHECK(html.find(R"(<div class="value"><span class="num" data-metric="cost_total_usd")") !=
        std::string::npos);
}
