// The report contract (docs/architecture-review.md §3): every summary metric a run reports is in
// the metric catalog (sim/metric_catalog.cpp), so compare, check and the report know its
// direction and meaning; docs/metrics.md shows exactly the catalog, row for row; and
// docs/report-schema.md lists exactly the columns of the tables made from column lists
// (reports/report_tables.hpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "fixtures/bundled_run.hpp"
#include "fixtures/memory_recorder.hpp"
#include "reports/report_tables.hpp"
#include "sim/metric_catalog.hpp"

using namespace capsim;

namespace {

std::string read_source_file(const std::string& relative) {
  std::ifstream in(std::string(CAPSIM_SOURCE_DIR) + "/" + relative, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << relative);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The lines of `text` between the line holding `begin` and the line holding `end`.
std::vector<std::string> lines_between(const std::string& text, const std::string& begin,
                                       const std::string& end) {
  std::istringstream in(text);
  std::vector<std::string> out;
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.find(end) != std::string::npos && inside) return out;
    if (inside) out.push_back(line);
    if (line.find(begin) != std::string::npos) inside = true;
  }
  FAIL("no '" << begin << "' ... '" << end << "' block");
  return out;
}

// The catalog as docs/metrics.md shows it: one table row per entry, in catalog order.
std::vector<std::string> catalog_rows() {
  std::vector<std::string> rows = {"| metric | unit | better | meaning |", "|---|---|---|---|"};
  for (const MetricDef& d : metric_catalog()) {
    const std::string_view better =
        d.direction == Direction::kNeutral ? std::string_view() : direction_name(d.direction);
    rows.push_back("| `" + std::string(d.name) + "` | " + std::string(d.unit) + " | " +
                   std::string(better) + (better.empty() ? "" : " ") + "| " + std::string(d.help) +
                   " |");
  }
  return rows;
}

// "name TYPE" for each row of the column table under docs/report-schema.md's "### `<table>`"
// heading (the first word of the type: the doc says REAL where the DDL says REAL NOT NULL).
std::vector<std::string> documented_columns(const std::string& doc, const std::string& table) {
  std::istringstream in(doc);
  std::vector<std::string> out;
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind("### ", 0) == 0) {
      if (inside) break;
      inside = line.rfind("### `" + table + "`", 0) == 0;
      continue;
    }
    if (!inside || line.rfind("| ", 0) != 0 || line.rfind("| column ", 0) == 0) continue;
    const std::size_t a = line.find(" | ", 2);
    const std::size_t b = line.find(" | ", a + 3);
    if (a == std::string::npos || b == std::string::npos) continue;
    out.push_back(line.substr(2, a - 2) + " " + line.substr(a + 3, b - a - 3));
  }
  return out;
}

template <typename Row>
std::vector<std::string> described_columns(std::span<const Column<Row>> columns) {
  std::vector<std::string> out = {"run_id INTEGER"};
  for (const Column<Row>& c : columns)
    out.push_back(std::string(c.name) + " " +
                  std::string(c.sql_type.substr(0, c.sql_type.find(' '))));
  return out;
}

}  // namespace

TEST_CASE("docs/report-schema.md lists exactly the columns of the tables made from column lists") {
  const std::string doc = read_source_file("docs/report-schema.md");
  CHECK(documented_columns(doc, "sample") == described_columns<SampleRecord>(kSampleColumns));
  CHECK(documented_columns(doc, "pool_sample") ==
        described_columns<PoolSampleRecord>(kPoolSampleColumns));
  CHECK(documented_columns(doc, "queue_sample") ==
        described_columns<QueueSampleRecord>(kQueueSampleColumns));
  CHECK(documented_columns(doc, "charge") == described_columns<ChargeRow>(kChargeColumns));
  CHECK(documented_columns(doc, "queue_quota") ==
        described_columns<QueueQuotaRow>(kQueueQuotaColumns));
  CHECK(documented_columns(doc, "local_queue") ==
        described_columns<LocalQueueRow>(kLocalQueueColumns));
  CHECK(documented_columns(doc, "pending_reason") ==
        described_columns<PendingReasonRow>(kPendingReasonColumns));
  CHECK(documented_columns(doc, "explain_attempt") ==
        described_columns<ExplainAttemptRow>(kExplainAttemptColumns));
  CHECK(documented_columns(doc, "explain_filter") ==
        described_columns<ExplainFilterRow>(kExplainFilterColumns));
  CHECK(documented_columns(doc, "explain_score") ==
        described_columns<ExplainScoreRow>(kExplainScoreColumns));
  CHECK(documented_columns(doc, "explain_node") ==
        described_columns<ExplainNodeRow>(kExplainNodeColumns));
  CHECK(documented_columns(doc, "explain_candidate") ==
        described_columns<ExplainCandidateRow>(kExplainCandidateColumns));
}

TEST_CASE("docs/metrics.md lists exactly the metric catalog, in its order and with its words") {
  const std::vector<std::string> doc =
      lines_between(read_source_file("docs/metrics.md"), "<!-- metric catalog: begin",
                    "<!-- metric catalog: end");
  const std::vector<std::string> want = catalog_rows();
  for (std::size_t i = 0; i < std::max(doc.size(), want.size()); ++i) {
    CAPTURE(i);
    CHECK((i < doc.size() ? doc[i] : "<missing>") == (i < want.size() ? want[i] : "<extra>"));
  }
}

TEST_SUITE("scenario") {
  TEST_CASE(
      "every summary metric the quickstart, a Kueue run and a fill run report is in the catalog") {
    struct Case {
      const char* name;
      const char* scenario;
      const char* profile;
      const char* want_metric;  // one metric only this kind of run reports
    };
    const Case cases[] = {
        {"quickstart", "scenarios/quickstart.yaml", "", "queue.data-prep.wait_seconds_p95"},
        {"Kueue quotas", "scenarios/team-quotas/team-quotas.yaml", "", "kueue.admissions"},
        {"fill experiment", "scenarios/tests/fgd-slice.yaml", "FGD", "fill_pods_placed"},
    };
    for (const Case& c : cases) {
      CAPTURE(c.name);
      testing::MemoryRecorder rec;
      (void)testing::run_bundled(c.scenario, c.profile, rec);
      REQUIRE(!rec.summary.empty());
      bool found = false;
      for (const auto& entry : rec.summary) {
        const std::string& metric = entry.first;
        CAPTURE(metric);
        CHECK(find_metric(metric) != nullptr);
        found = found || metric == c.want_metric;
      }
      CHECK(found);
    }
  }
}
