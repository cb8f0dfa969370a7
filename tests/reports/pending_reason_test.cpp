// The pending_reason table: every unschedulable cycle's reason counts, by plugin, as the
// scheduler counted them. Wherever the run also recorded a `pending` event (the message when it
// changes), the rows of that attempt are exactly the message's "N reason" parts; and the HTML
// report's "Why pods waited" section reads the table and breaks it down by queue.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>

#include "fixtures/cli_run.hpp"
#include "reports/html_report.hpp"
#include "reports/report_data.hpp"
#include "reports/run_reader.hpp"

namespace capsim {

TEST_SUITE("scenario") {
  TEST_CASE(
      "pending_reason rows are the counts of the run's own pending messages, and the HTML "
      "report breaks them down by queue") {
    testing::ScratchDir dir("pending-reason");
    const std::string db = dir.file("q.db");
    const auto run = testing::run_capsim(
        "run '" + testing::source_path("scenarios/quickstart.yaml") + "' -q -o '" + db + "'", dir);
    REQUIRE_MESSAGE(run.exit_code == 0, run.err);
    RunReader reader(db);
    // Each pending event and the rows of its pod whose attempts span its time: one of those runs
    // of identical attempts made it (two runs can touch at one instant).
    Statement events = reader.db().prepare(
        "SELECT pod, time_s, detail FROM event WHERE run_id = 1 AND kind = 'pending' "
        "ORDER BY seq");
    Statement rows = reader.db().prepare(
        "SELECT attempt, reason, sum(nodes) FROM pending_reason WHERE run_id = 1 AND pod = ?1 "
        "AND ?2 BETWEEN time_s AND last_time_s GROUP BY attempt, reason");
    int checked = 0;
    while (events.step()) {
      const std::string pod = events.column_text(0);
      std::map<std::string, std::int64_t> from_message;
      for (const auto& [reason, nodes] : split_pending_reasons(events.column_text(2)))
        from_message[reason] += nodes;
      if (from_message.empty()) continue;  // a gang's or the admission layer's message
      rows.reset();
      rows.bind_text(1, pod);
      rows.bind_double(2, events.column_double(1));
      std::map<std::int64_t, std::map<std::string, std::int64_t>> runs;
      while (rows.step())
        runs[rows.column_int64(0)][rows.column_text(1)] = rows.column_int64(2);
      CAPTURE(pod);
      CAPTURE(events.column_text(2));
      CHECK(std::any_of(runs.begin(), runs.end(),
                        [&](const auto& r) { return r.second == from_message; }));
      ++checked;
    }
    CHECK(checked > 10);

    const ReportData d = load_report_data(db, std::nullopt);
    CHECK(d.reasons_from_attempts);
    CHECK(d.failed_attempts > 0);
    REQUIRE_FALSE(d.blockers.empty());
    std::int64_t in_quarters = 0;
    for (const QueueBlocker& b : d.blockers) {
      CHECK(b.attempts >= b.pods);
      in_quarters += b.by_quarter[0] + b.by_quarter[1] + b.by_quarter[2] + b.by_quarter[3];
      in_quarters -= b.attempts;
    }
    CHECK(in_quarters == 0);
    const std::string html = render_html_report(d);
    const std::size_t section = html.find("id=\"reasons\"");
    REQUIRE(section != std::string::npos);
    CHECK(html.find("<h3>By queue</h3>", section) != std::string::npos);
    const std::string& q = d.blockers.front().queue;
    CHECK(html.find(q.empty() ? std::string("pods without a queue") : "queue " + q, section) !=
          std::string::npos);
    CHECK(html.find("failed scheduling attempts", section) != std::string::npos);
  }
}

}  // namespace capsim
