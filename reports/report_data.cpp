#include "reports/report_data.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
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

namespace {

// The workloads' steps: Kueue's events, in order, and each workload's end: the last end of the
// pods its events name, once all of them have ended.
void load_workload_steps(SqliteDb& db, std::int64_t run_id, std::vector<WorkloadStep>& out) {
  std::map<std::string, std::set<std::string>> pods_of;  // workload -> pods
  Statement st = db.prepare(
      "SELECT time_s, kind, coalesce(pod, ''), coalesce(detail, '') FROM event WHERE run_id = ?1 "
      "AND kind IN ('queued', 'admission-pending', 'admitted', 'requeued', 'deactivated') "
      "ORDER BY seq");
  st.bind_int64(1, run_id);
  const std::string head = "workload ", cq = "ClusterQueue ";
  while (st.step()) {
    const std::string detail = st.column_text(3);
    const std::size_t colon = detail.find(": ");
    if (detail.rfind(head, 0) != 0 || colon == std::string::npos) continue;
    WorkloadStep w;
    w.time = from_seconds(st.column_double(0));
    w.kind = st.column_text(1);
    w.workload = detail.substr(head.size(), colon - head.size());
    if (const std::size_t at = detail.find(cq);
        (w.kind == "queued" || w.kind == "admitted") && at != std::string::npos) {
      const std::size_t from = at + cq.size();
      w.cluster_queue = detail.substr(from, detail.find_first_of(" ,(", from) - from);
    }
    const std::string through = " through LocalQueue ";
    if (const std::size_t at = detail.find(through);
        w.kind == "queued" && at != std::string::npos) {
      const std::size_t from = at + through.size();
      w.local_queue = detail.substr(from, detail.find_first_of(" ,", from) - from);
    }
    const std::string was = "wait time since queued was ";
    if (const std::size_t at = detail.find(was); w.kind == "admitted" && at != std::string::npos) {
      w.wait_s = std::strtod(detail.c_str() + at + was.size(), nullptr);
    }
    if (!st.column_text(2).empty()) pods_of[w.workload].insert(st.column_text(2));
    out.push_back(std::move(w));
  }
  std::map<std::string, std::optional<double>> pod_end;  // nullopt: still running or pending
  Statement pods = db.prepare("SELECT pod, end_s FROM pod WHERE run_id = ?1");
  pods.bind_int64(1, run_id);
  while (pods.step())
    pod_end[pods.column_text(0)] = pods.column_optional_double(1);
  for (const auto& [workload, names] : pods_of) {
    std::optional<double> end = 0.0;
    for (const std::string& p : names) {
      const auto it = pod_end.find(p);
      if (it == pod_end.end() || !it->second) {
        end.reset();
        break;
      }
      end = std::max(*end, *it->second);
    }
    if (end) out.push_back(WorkloadStep{from_seconds(*end), "finished", workload, "", "", -1});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const WorkloadStep& a, const WorkloadStep& b) { return a.time < b.time; });
}

}  // namespace

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
    const bool has_pending_reason = [&] {
      Statement st = db.prepare(
          "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'pending_reason'");
      return st.step() && st.column_int64(0) > 0;
    }();
    if (has_pending_reason) {
      // The recorded counts: one row per (run of identical failed attempts, plugin, reason),
      // standing for `attempts` attempts.
      d.reasons_from_attempts = true;
      {
        Statement st = db.prepare(
            "SELECT coalesce(sum(attempts), 0) FROM (SELECT DISTINCT pod, attempt, attempts "
            "FROM pending_reason WHERE run_id = ?1)");
        st.bind_int64(1, *run_id);
        if (st.step()) d.failed_attempts = st.column_int64(0);
      }
      Statement st = db.prepare(
          "SELECT plugin, reason, sum(attempts), count(DISTINCT pod), "
          "sum(nodes * attempts) * 1.0 / sum(attempts) FROM pending_reason "
          "WHERE run_id = ?1 GROUP BY plugin, reason");
      st.bind_int64(1, *run_id);
      while (st.step()) {
        PendingReason r;
        r.reason = st.column_text(1) + " (" + st.column_text(0) + ")";
        r.events = st.column_int64(2);
        r.pods = st.column_int64(3);
        r.nodes_per_event = st.column_double(4);
        d.reasons.push_back(std::move(r));
      }
      std::sort(d.reasons.begin(), d.reasons.end(),
                [](const PendingReason& a, const PendingReason& b) {
                  return a.events != b.events ? a.events > b.events : a.reason < b.reason;
                });
      // By queue and plugin: an attempt counts once per plugin however many reasons it gave. A
      // row's attempts are spread evenly over its first to last attempt's time for the quarters.
      const double span = std::max(d.run.sim_seconds, 1e-9);
      Statement by_queue = db.prepare(
          "SELECT coalesce(p.queue, ''), r.plugin, r.pod, r.time_s, r.last_time_s, r.attempts "
          "FROM (SELECT DISTINCT pod, attempt, attempts, plugin, time_s, last_time_s "
          "FROM pending_reason WHERE run_id = ?1) r "
          "LEFT JOIN pod p ON p.run_id = ?1 AND p.pod = r.pod "
          "ORDER BY 1, 2");
      by_queue.bind_int64(1, *run_id);
      std::map<std::pair<std::string, std::string>, std::pair<QueueBlocker, std::set<std::string>>>
          acc;
      while (by_queue.step()) {
        auto& [b, pods] = acc[{by_queue.column_text(0), by_queue.column_text(1)}];
        b.queue = by_queue.column_text(0);
        b.plugin = by_queue.column_text(1);
        const std::int64_t attempts = by_queue.column_int64(5);
        b.attempts += attempts;
        pods.insert(by_queue.column_text(2));
        const double first = by_queue.column_double(3), last = by_queue.column_double(4);
        for (std::int64_t k = 0; k < attempts; ++k) {
          const double t = attempts == 1 ? first
                                         : first + (last - first) * static_cast<double>(k) /
                                                       static_cast<double>(attempts - 1);
          ++b.by_quarter[static_cast<std::size_t>(std::clamp(t / span * 4.0, 0.0, 3.0))];
        }
      }
      for (auto& [key, v] : acc) {
        v.first.pods = static_cast<std::int64_t>(v.second.size());
        d.blockers.push_back(std::move(v.first));
      }
      std::stable_sort(d.blockers.begin(), d.blockers.end(),
                       [](const QueueBlocker& a, const QueueBlocker& b) {
                         if (a.queue != b.queue) return a.queue < b.queue;
                         return a.attempts > b.attempts;
                       });
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
        if (has_pending_reason) continue;  // the reasons come from the recorded counts
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
    if (!d.queue_samples.empty()) load_workload_steps(db, *run_id, d.workload_steps);
    auto has_table = [&](const char* name) {
      Statement st =
          db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1");
      st.bind_text(1, name);
      return st.step() && st.column_int64(0) > 0;
    };
    if (has_table("queue_quota")) {
      Statement st = db.prepare("SELECT " + select_list<QueueQuotaRow>(kQueueQuotaColumns) +
                                " FROM queue_quota WHERE run_id = ?1 ORDER BY rowid");
      st.bind_int64(1, *run_id);
      while (st.step()) {
        QueueQuotaRow q;
        read_row<QueueQuotaRow>(st, kQueueQuotaColumns, q);
        d.queue_quotas.push_back(std::move(q));
      }
    }
    if (has_table("local_queue")) {
      Statement st = db.prepare("SELECT " + select_list<LocalQueueRow>(kLocalQueueColumns) +
                                " FROM local_queue WHERE run_id = ?1 ORDER BY rowid");
      st.bind_int64(1, *run_id);
      while (st.step()) {
        LocalQueueRow q;
        read_row<LocalQueueRow>(st, kLocalQueueColumns, q);
        d.local_queues.push_back(std::move(q));
      }
    }
    {
      Statement st = db.prepare(
          "SELECT e.time_s, coalesce(n.pool, '') FROM event e LEFT JOIN node n "
          "ON n.run_id = e.run_id AND n.node = e.node WHERE e.run_id = ?1 AND e.kind = 'oom_kill' "
          "ORDER BY e.seq");
      st.bind_int64(1, *run_id);
      while (st.step())
        d.oom_kills.emplace_back(from_seconds(st.column_double(0)), st.column_text(1));
    }
  } catch (const SqliteError&) {
    // A file RunReader opened that fails a query is damaged: plain words, no SQL text.
    throw InputError(InputErrorKind::kInvalid, InputLocation{path, 0, 0, ""},
                     "is not a capsim report (or is truncated)");
  }
  return d;
}

}  // namespace capsim
