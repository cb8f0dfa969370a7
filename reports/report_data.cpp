#include "reports/report_data.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "reports/report_tables.hpp"
#include "sim/input_error.hpp"

namespace capsim {

double ReportData::metric(const std::string& name) const {
  for (const auto& [k, v] : summary) {
    if (k == name) return v;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

bool ReportData::has(const std::string& name) const {
  for (const auto& [k, v] : summary) {
    if (k == name) return true;
  }
  return false;
}

std::vector<std::string> ReportData::pool_names() const {
  std::vector<std::string> out;
  for (const PoolInfo& p : pools) {
    if (std::find(out.begin(), out.end(), p.pool) == out.end()) out.push_back(p.pool);
  }
  return out;
}

std::vector<std::pair<std::string, std::int64_t>> split_pending_reasons(const std::string& detail) {
  std::vector<std::pair<std::string, std::int64_t>> out;
  const std::string head = "nodes are available:";
  std::size_t pos = detail.find(head);
  if (pos == std::string::npos) {
    if (!detail.empty()) out.emplace_back(detail, 0);
    return out;
  }
  std::string body = detail.substr(pos + head.size());
  // The preemption (PostFilter) part follows the filter reasons.
  if (const std::size_t pre = body.find(" preemption:"); pre != std::string::npos) {
    body = body.substr(0, pre);
  }
  // Parts are "<count> <reason>" joined by ", "; a reason may itself contain ", ", so a part
  // starts only where ", " is followed by a digit.
  std::vector<std::string> parts;
  std::string cur;
  for (std::size_t i = 0; i < body.size(); ++i) {
    if (body.compare(i, 2, ", ") == 0 && i + 2 < body.size() &&
        std::isdigit(static_cast<unsigned char>(body[i + 2]))) {
      parts.push_back(cur);
      cur.clear();
      ++i;
      continue;
    }
    cur += body[i];
  }
  parts.push_back(cur);
  for (std::string p : parts) {
    while (!p.empty() && (p.front() == ' '))
      p.erase(p.begin());
    while (!p.empty() && (p.back() == ' ' || p.back() == '.'))
      p.pop_back();
    if (p.empty()) continue;
    std::size_t digits = 0;
    while (digits < p.size() && std::isdigit(static_cast<unsigned char>(p[digits])))
      ++digits;
    if (digits > 0 && digits < p.size() && p[digits] == ' ') {
      out.emplace_back(p.substr(digits + 1), std::stoll(p.substr(0, digits)));
    } else {
      out.emplace_back(p, 0);  // a PreFilter reason: it applies to the whole cluster
    }
  }
  return out;
}

ReportData load_report_data(const std::string& path, std::optional<std::int64_t> run_id) {
  RunReader reader(path);
  ReportData d;
  d.file = path;
  d.schema_version = reader.schema_version();
  if (!run_id) {
    run_id = reader.latest_complete_run();
    if (!run_id) {
      throw InputError(
          InputErrorKind::kInvalid, InputLocation{path, 0, 0, ""},
          reader.runs().empty() ? "the report holds no runs" : "the report holds no complete run");
    }
  }
  reader.require_complete(*run_id);
  d.run = *reader.run(*run_id);
  d.summary = reader.summary(*run_id);
  if (d.summary.empty()) {
    throw InputError(InputErrorKind::kInvalid, InputLocation{path, 0, 0, ""},
                     fmt::format("run {} has no summary", *run_id));
  }
  d.samples = reader.samples(*run_id);
  d.pool_samples = reader.pool_samples(*run_id);

  SqliteDb& db = reader.db();
  try {
    {
      Statement st = db.prepare(
          "SELECT coalesce(pool, ''), coalesce(gpu_model, ''), sharing, count(*), sum(gpus), "
          "sum(price_per_hour) FROM node WHERE run_id = ?1 GROUP BY 1, 2, 3 "
          "ORDER BY sum(gpus) = 0, min(rowid)");
      st.bind_int64(1, *run_id);
      while (st.step()) {
        PoolInfo p;
        p.pool = st.column_text(0);
        p.gpu_model = st.column_text(1);
        p.sharing = st.column_text(2);
        p.nodes = st.column_int64(3);
        p.gpus = st.column_int64(4);
        p.price_per_hour = st.column_double(5);
        d.pools.push_back(std::move(p));
      }
    }
    {
      // The pods the summary's per-queue waits count: not unschedulable, and started or still
      // pending (compute_summary in sim/metrics.cpp).
      Statement st = db.prepare(
          "SELECT queue, wait_s FROM pod WHERE run_id = ?1 AND queue IS NOT NULL AND "
          "status <> 'unschedulable' AND (start_s IS NOT NULL OR status = 'pending') "
          "ORDER BY queue, wait_s");
      st.bind_int64(1, *run_id);
      while (st.step()) {
        const std::string q = st.column_text(0);
        if (d.queues.empty() || d.queues.back().queue != q) d.queues.push_back(QueueWaits{q, {}});
        d.queues.back().waits.push_back(st.column_double(1));
      }
    }
    {
      Statement st = db.prepare(
          "SELECT coalesce(pod, ''), coalesce(detail, '') FROM event "
          "WHERE run_id = ?1 AND kind = 'pending'");
      st.bind_int64(1, *run_id);
      struct Tally {
        std::int64_t events = 0;
        std::int64_t nodes = 0;
        std::set<std::string> pods;
      };
      std::map<std::string, Tally> tally;
      while (st.step()) {
        ++d.pending_events;
        const std::string pod = st.column_text(0);
        for (auto& [reason, nodes] : split_pending_reasons(st.column_text(1))) {
          Tally& t = tally[reason];
          ++t.events;
          t.nodes += nodes;
          t.pods.insert(pod);
        }
      }
      for (auto& [reason, t] : tally) {
        PendingReason r;
        r.reason = reason;
        r.events = t.events;
        r.pods = static_cast<std::int64_t>(t.pods.size());
        r.nodes_per_event = static_cast<double>(t.nodes) / static_cast<double>(t.events);
        d.reasons.push_back(std::move(r));
      }
      std::sort(d.reasons.begin(), d.reasons.end(),
                [](const PendingReason& a, const PendingReason& b) {
                  return a.events != b.events ? a.events > b.events : a.reason < b.reason;
                });
    }
    {
      // A NULL flavor (the row summing the flavors) reads as "".
      Statement st = db.prepare("SELECT " + select_list<QueueSampleRecord>(kQueueSampleColumns) +
                                " FROM queue_sample WHERE run_id = ?1 "
                                "ORDER BY time_s, queue, flavor, resource");
      st.bind_int64(1, *run_id);
      while (st.step()) {
        QueueSampleRow q;
        read_row<QueueSampleRecord>(st, kQueueSampleColumns, q);
        d.queue_samples.push_back(std::move(q));
      }
    }
  } catch (const SqliteError& e) {
    throw InputError(InputErrorKind::kInvalid, InputLocation{path, 0, 0, ""}, e.message());
  }
  return d;
}

}  // namespace capsim
