// The report tables whose rows are sim/recorder.hpp records (`sample`, `pool_sample`,
// `queue_sample`, `charge`, a ChargeRecord with its pod and node by name, `pending_reason` and
// the explain_* tables of an ExplainRecord) or the run's Kueue
// objects (`queue_quota`, `local_queue`), each described once
// as a list of columns: name, SQL type and the record member the column holds. The CREATE TABLE
// text (schema.cpp), the INSERT and its binding (sqlite_recorder.cpp) and the SELECT and its parse
// (run_reader.cpp) are made from these lists, so a new column is one line here (and its row in
// docs/report-schema.md, which tests/reports/contract_test.cpp checks). Every table also starts
// with run_id, which the lists leave out. Constant data; the functions are pure apart from the
// Statement they are given.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>

#include "reports/sqlite_db.hpp"
#include "sim/recorder.hpp"
#include "sim/time.hpp"

namespace capsim {

enum class ColumnKind {
  kSeconds,  // a SimTime member stored as REAL seconds
  kReal,
  kInteger,
  kText,  // a TEXT column without NOT NULL stores "" as NULL
};

template <typename Row>
struct Column {
  std::string_view name;
  std::string_view sql_type;  // as CREATE TABLE writes it
  ColumnKind kind = ColumnKind::kReal;
  // The member, by kind (SimTime and std::int64_t are one type, so the kind tells them apart).
  std::int64_t Row::*integer = nullptr;  // kSeconds, kInteger
  double Row::*real = nullptr;           // kReal
  std::string Row::*text = nullptr;      // kText
};

template <typename Row>
constexpr Column<Row> seconds_column(std::string_view name, std::string_view type,
                                     SimTime Row::*m) {
  return {name, type, ColumnKind::kSeconds, m, nullptr, nullptr};
}
template <typename Row>
constexpr Column<Row> real_column(std::string_view name, std::string_view type, double Row::*m) {
  return {name, type, ColumnKind::kReal, nullptr, m, nullptr};
}
template <typename Row>
constexpr Column<Row> integer_column(std::string_view name, std::string_view type,
                                     std::int64_t Row::*m) {
  return {name, type, ColumnKind::kInteger, m, nullptr, nullptr};
}
template <typename Row>
constexpr Column<Row> text_column(std::string_view name, std::string_view type,
                                  std::string Row::*m) {
  return {name, type, ColumnKind::kText, nullptr, nullptr, m};
}

// One row of the `charge` table: a ChargeRecord with its pod and node named.
struct ChargeRow {
  std::string kind;  // "pod", "idle", "stranded"
  std::string pod;   // "" (NULL) for idle and stranded rows
  std::string node;
  SimTime start = 0, end = 0;
  double gpus = 0, hardware_cost = 0, energy_cost = 0, gpu_kwh = 0, cpu_cores = 0, ram_bytes = 0;

  double cost() const { return hardware_cost + energy_cost; }
};

// One row of the `queue_quota` table: a ClusterQueue's quota of one resource in one flavor, as
// its spec states it (amounts in capsim's units, as queue_sample's). NaN limits: not set.
struct QueueQuotaRow {
  std::string cluster_queue;
  std::string cohort;  // "" (NULL): none
  std::string flavor, resource;
  double nominal = 0;
  double borrowing_limit = std::numeric_limits<double>::quiet_NaN();
  double lending_limit = std::numeric_limits<double>::quiet_NaN();
};

// One row of the `local_queue` table: a LocalQueue and the ClusterQueue it points to.
struct LocalQueueRow {
  std::string namespace_, name, cluster_queue;
};

// One row of the `pending_reason` table: a PendingReasonRecord with its pod named.
struct PendingReasonRow {
  SimTime time = 0;
  std::string pod;
  std::int64_t attempt = 0;
  std::string plugin, reason;
  std::int64_t nodes = 0;
  std::int64_t attempts = 1;
  SimTime last_time = 0;
};

// The explain_* tables (capsim run --explain), one ExplainRecord split by what a row is about.
// Every row carries (pod, attempt), the attempt's key.
struct ExplainAttemptRow {
  std::string pod;
  std::int64_t attempt = 0;
  SimTime time = 0;
  std::string namespace_, profile, tie_break, result, node, message;
  std::int64_t evaluated_nodes = 0, feasible_nodes = 0;
  std::string selected_node, error;
  std::int64_t post_filter = 0;
};
struct ExplainFilterRow {  // PreFilter, Filter and PreScore statuses
  std::string pod;
  std::int64_t attempt = 0;
  std::string point, node, plugin, code, reason;
};
struct ExplainScoreRow {
  std::string pod;
  std::int64_t attempt = 0;
  std::string node, plugin;
  std::int64_t raw = 0, normalized = 0, weight = 0, skipped = 0;
};
struct ExplainNodeRow {
  std::string pod;
  std::int64_t attempt = 0;
  std::string node;
  std::int64_t feasible = 0;
  std::string rejected_by;
  std::int64_t scored = 0, total = 0;
};
struct ExplainCandidateRow {
  std::string pod;
  std::int64_t attempt = 0, candidate = 0;
  std::string node;
  std::int64_t chosen = 0;
  std::string victims;  // names, most important first, ", "-separated
  std::int64_t victim_count = 0, pdb_violations = 0, highest_priority = 0, priority_sum = 0;
  SimTime earliest_start_of_highest = 0;
  std::string lost_on;
};

// clang-format off
inline constexpr Column<PendingReasonRow> kPendingReasonColumns[] = {
    seconds_column("time_s", "REAL NOT NULL", &PendingReasonRow::time),
    text_column("pod", "TEXT NOT NULL", &PendingReasonRow::pod),
    integer_column("attempt", "INTEGER NOT NULL", &PendingReasonRow::attempt),
    text_column("plugin", "TEXT NOT NULL", &PendingReasonRow::plugin),
    text_column("reason", "TEXT NOT NULL", &PendingReasonRow::reason),
    integer_column("nodes", "INTEGER NOT NULL", &PendingReasonRow::nodes),
    integer_column("attempts", "INTEGER NOT NULL", &PendingReasonRow::attempts),
    seconds_column("last_time_s", "REAL NOT NULL", &PendingReasonRow::last_time),
};

inline constexpr Column<ExplainAttemptRow> kExplainAttemptColumns[] = {
    text_column("pod", "TEXT NOT NULL", &ExplainAttemptRow::pod),
    integer_column("attempt", "INTEGER NOT NULL", &ExplainAttemptRow::attempt),
    seconds_column("time_s", "REAL NOT NULL", &ExplainAttemptRow::time),
    text_column("namespace", "TEXT NOT NULL", &ExplainAttemptRow::namespace_),
    text_column("profile", "TEXT NOT NULL", &ExplainAttemptRow::profile),
    text_column("tie_break", "TEXT NOT NULL", &ExplainAttemptRow::tie_break),
    text_column("result", "TEXT NOT NULL", &ExplainAttemptRow::result),
    text_column("node", "TEXT", &ExplainAttemptRow::node),
    text_column("message", "TEXT", &ExplainAttemptRow::message),
    integer_column("evaluated_nodes", "INTEGER NOT NULL", &ExplainAttemptRow::evaluated_nodes),
    integer_column("feasible_nodes", "INTEGER NOT NULL", &ExplainAttemptRow::feasible_nodes),
    text_column("selected_node", "TEXT", &ExplainAttemptRow::selected_node),
    text_column("error", "TEXT", &ExplainAttemptRow::error),
    integer_column("post_filter", "INTEGER NOT NULL", &ExplainAttemptRow::post_filter),
};

inline constexpr Column<ExplainFilterRow> kExplainFilterColumns[] = {
    text_column("pod", "TEXT NOT NULL", &ExplainFilterRow::pod),
    integer_column("attempt", "INTEGER NOT NULL", &ExplainFilterRow::attempt),
    text_column("point", "TEXT NOT NULL", &ExplainFilterRow::point),
    text_column("node", "TEXT", &ExplainFilterRow::node),
    text_column("plugin", "TEXT NOT NULL", &ExplainFilterRow::plugin),
    text_column("code", "TEXT NOT NULL", &ExplainFilterRow::code),
    text_column("reason", "TEXT", &ExplainFilterRow::reason),
};

inline constexpr Column<ExplainScoreRow> kExplainScoreColumns[] = {
    text_column("pod", "TEXT NOT NULL", &ExplainScoreRow::pod),
    integer_column("attempt", "INTEGER NOT NULL", &ExplainScoreRow::attempt),
    text_column("node", "TEXT NOT NULL", &ExplainScoreRow::node),
    text_column("plugin", "TEXT NOT NULL", &ExplainScoreRow::plugin),
    integer_column("raw", "INTEGER NOT NULL", &ExplainScoreRow::raw),
    integer_column("normalized", "INTEGER NOT NULL", &ExplainScoreRow::normalized),
    integer_column("weight", "INTEGER NOT NULL", &ExplainScoreRow::weight),
    integer_column("skipped", "INTEGER NOT NULL", &ExplainScoreRow::skipped),
};

inline constexpr Column<ExplainNodeRow> kExplainNodeColumns[] = {
    text_column("pod", "TEXT NOT NULL", &ExplainNodeRow::pod),
    integer_column("attempt", "INTEGER NOT NULL", &ExplainNodeRow::attempt),
    text_column("node", "TEXT NOT NULL", &ExplainNodeRow::node),
    integer_column("feasible", "INTEGER NOT NULL", &ExplainNodeRow::feasible),
    text_column("rejected_by", "TEXT", &ExplainNodeRow::rejected_by),
    integer_column("scored", "INTEGER NOT NULL", &ExplainNodeRow::scored),
    integer_column("total", "INTEGER NOT NULL", &ExplainNodeRow::total),
};

inline constexpr Column<ExplainCandidateRow> kExplainCandidateColumns[] = {
    text_column("pod", "TEXT NOT NULL", &ExplainCandidateRow::pod),
    integer_column("attempt", "INTEGER NOT NULL", &ExplainCandidateRow::attempt),
    integer_column("candidate", "INTEGER NOT NULL", &ExplainCandidateRow::candidate),
    text_column("node", "TEXT NOT NULL", &ExplainCandidateRow::node),
    integer_column("chosen", "INTEGER NOT NULL", &ExplainCandidateRow::chosen),
    text_column("victims", "TEXT NOT NULL", &ExplainCandidateRow::victims),
    integer_column("victim_count", "INTEGER NOT NULL", &ExplainCandidateRow::victim_count),
    integer_column("pdb_violations", "INTEGER NOT NULL", &ExplainCandidateRow::pdb_violations),
    integer_column("highest_priority", "INTEGER NOT NULL", &ExplainCandidateRow::highest_priority),
    integer_column("priority_sum", "INTEGER NOT NULL", &ExplainCandidateRow::priority_sum),
    seconds_column("earliest_start_s", "REAL NOT NULL", &ExplainCandidateRow::earliest_start_of_highest),
    text_column("lost_on", "TEXT", &ExplainCandidateRow::lost_on),
};

inline constexpr Column<SampleRecord> kSampleColumns[] = {
    seconds_column("time_s", "REAL NOT NULL", &SampleRecord::time),
    real_column("gpus_total", "REAL NOT NULL", &SampleRecord::gpus_total),
    real_column("gpus_allocated", "REAL NOT NULL", &SampleRecord::gpus_allocated),
    real_column("gpus_busy", "REAL NOT NULL", &SampleRecord::gpus_busy),
    real_column("gpu_memory_allocated_mib", "REAL NOT NULL", &SampleRecord::gpu_memory_allocated_mib),
    real_column("gpu_memory_used_mib", "REAL NOT NULL", &SampleRecord::gpu_memory_used_mib),
    integer_column("pods_running", "INTEGER NOT NULL", &SampleRecord::pods_running),
    integer_column("pods_pending", "INTEGER NOT NULL", &SampleRecord::pods_pending),
    real_column("fragmented_gpus", "REAL NOT NULL", &SampleRecord::fragmented_gpus),
    real_column("power_w", "REAL NOT NULL", &SampleRecord::power_w),
    real_column("cost_per_hour", "REAL NOT NULL", &SampleRecord::cost_per_hour),
    // NaN (time-driven samples) is stored as NULL and reads back as NaN, the member's default.
    real_column("arrived_gpu_ratio", "REAL", &SampleRecord::arrived_gpu_ratio),
};

inline constexpr Column<PoolSampleRecord> kPoolSampleColumns[] = {
    seconds_column("time_s", "REAL NOT NULL", &PoolSampleRecord::time),
    text_column("pool", "TEXT", &PoolSampleRecord::pool),
    real_column("gpus_total", "REAL NOT NULL", &PoolSampleRecord::gpus_total),
    real_column("gpus_allocated", "REAL NOT NULL", &PoolSampleRecord::gpus_allocated),
    real_column("gpus_busy", "REAL NOT NULL", &PoolSampleRecord::gpus_busy),
    real_column("gpu_memory_total_mib", "REAL NOT NULL", &PoolSampleRecord::gpu_memory_total_mib),
    real_column("gpu_memory_allocated_mib", "REAL NOT NULL", &PoolSampleRecord::gpu_memory_allocated_mib),
    real_column("gpu_memory_used_mib", "REAL NOT NULL", &PoolSampleRecord::gpu_memory_used_mib),
    integer_column("pods_running", "INTEGER NOT NULL", &PoolSampleRecord::pods_running),
    real_column("fragmented_gpus", "REAL NOT NULL", &PoolSampleRecord::fragmented_gpus),
    real_column("power_w", "REAL NOT NULL", &PoolSampleRecord::power_w),
    real_column("cost_per_hour", "REAL NOT NULL", &PoolSampleRecord::cost_per_hour),
    real_column("shared_units_total", "REAL NOT NULL", &PoolSampleRecord::shared_units_total),
    real_column("shared_units_allocated", "REAL NOT NULL", &PoolSampleRecord::shared_units_allocated),
};

inline constexpr Column<QueueSampleRecord> kQueueSampleColumns[] = {
    seconds_column("time_s", "REAL NOT NULL", &QueueSampleRecord::time),
    text_column("queue", "TEXT NOT NULL", &QueueSampleRecord::queue),
    text_column("flavor", "TEXT", &QueueSampleRecord::flavor),
    text_column("resource", "TEXT NOT NULL", &QueueSampleRecord::resource),
    real_column("usage", "REAL NOT NULL", &QueueSampleRecord::usage),
    real_column("nominal", "REAL NOT NULL", &QueueSampleRecord::nominal),
    real_column("borrowed", "REAL NOT NULL", &QueueSampleRecord::borrowed),
    real_column("pending", "REAL NOT NULL", &QueueSampleRecord::pending),
};

inline constexpr Column<QueueQuotaRow> kQueueQuotaColumns[] = {
    text_column("cluster_queue", "TEXT NOT NULL", &QueueQuotaRow::cluster_queue),
    text_column("cohort", "TEXT", &QueueQuotaRow::cohort),
    text_column("flavor", "TEXT NOT NULL", &QueueQuotaRow::flavor),
    text_column("resource", "TEXT NOT NULL", &QueueQuotaRow::resource),
    real_column("nominal", "REAL NOT NULL", &QueueQuotaRow::nominal),
    real_column("borrowing_limit", "REAL", &QueueQuotaRow::borrowing_limit),
    real_column("lending_limit", "REAL", &QueueQuotaRow::lending_limit),
};

inline constexpr Column<LocalQueueRow> kLocalQueueColumns[] = {
    text_column("namespace", "TEXT NOT NULL", &LocalQueueRow::namespace_),
    text_column("name", "TEXT NOT NULL", &LocalQueueRow::name),
    text_column("cluster_queue", "TEXT NOT NULL", &LocalQueueRow::cluster_queue),
};

inline constexpr Column<ChargeRow> kChargeColumns[] = {
    text_column("kind", "TEXT NOT NULL", &ChargeRow::kind),
    text_column("pod", "TEXT", &ChargeRow::pod),
    text_column("node", "TEXT NOT NULL", &ChargeRow::node),
    seconds_column("start_s", "REAL NOT NULL", &ChargeRow::start),
    seconds_column("end_s", "REAL NOT NULL", &ChargeRow::end),
    real_column("gpus", "REAL NOT NULL", &ChargeRow::gpus),
    real_column("hardware_cost", "REAL NOT NULL", &ChargeRow::hardware_cost),
    real_column("energy_cost", "REAL NOT NULL", &ChargeRow::energy_cost),
    real_column("gpu_kwh", "REAL NOT NULL", &ChargeRow::gpu_kwh),
    real_column("cpu_cores", "REAL NOT NULL", &ChargeRow::cpu_cores),
    real_column("ram_bytes", "REAL NOT NULL", &ChargeRow::ram_bytes),
};
// clang-format on

// `CREATE TABLE IF NOT EXISTS <table> (...)` with run_id first, names padded to one column, no
// trailing ';'. SQLite keeps this text as the table's schema (`.schema` shows it).
template <typename Row>
std::string create_table_sql(std::string_view table, std::span<const Column<Row>> columns) {
  std::size_t width = std::string_view("run_id").size();
  for (const Column<Row>& c : columns)
    width = std::max(width, c.name.size());
  auto line = [&](std::string_view name, std::string_view type) {
    return "  " + std::string(name) + std::string(width + 1 - name.size(), ' ') + std::string(type);
  };
  std::string out = "CREATE TABLE IF NOT EXISTS " + std::string(table) + " (\n";
  out += line("run_id", "INTEGER NOT NULL REFERENCES run (run_id)");
  for (const Column<Row>& c : columns)
    out += ",\n" + line(c.name, c.sql_type);
  return out + "\n)";
}

// `INSERT INTO <table> (run_id, ...) VALUES (?1, ...)`, for bind_row.
template <typename Row>
std::string insert_sql(std::string_view table, std::span<const Column<Row>> columns) {
  std::string names = "run_id", values = "?1";
  for (std::size_t i = 0; i < columns.size(); ++i) {
    names += ", " + std::string(columns[i].name);
    values += ", ?" + std::to_string(i + 2);
  }
  return "INSERT INTO " + std::string(table) + " (" + names + ") VALUES (" + values + ")";
}

// The columns' names, comma-separated, for a SELECT that read_row parses.
template <typename Row>
std::string select_list(std::span<const Column<Row>> columns) {
  std::string out;
  for (const Column<Row>& c : columns)
    out += (out.empty() ? "" : ", ") + std::string(c.name);
  return out;
}

// Binds run_id and `row` to an insert_sql statement.
template <typename Row>
void bind_row(Statement& st, std::int64_t run_id, std::span<const Column<Row>> columns,
              const Row& row) {
  st.bind_int64(1, run_id);
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const Column<Row>& c = columns[i];
    const int index = static_cast<int>(i) + 2;
    switch (c.kind) {
      case ColumnKind::kSeconds:
        st.bind_double(index, to_seconds(row.*c.integer));
        break;
      case ColumnKind::kReal:
        st.bind_double(index, row.*c.real);  // SQLite stores NaN as NULL
        break;
      case ColumnKind::kInteger:
        st.bind_int64(index, row.*c.integer);
        break;
      case ColumnKind::kText:
        if (c.sql_type.find("NOT NULL") != std::string_view::npos) {
          st.bind_text(index, row.*c.text);
        } else {
          st.bind_text_or_null(index, row.*c.text);
        }
        break;
    }
  }
}

// Reads a row of a SELECT of select_list(columns) (from column `first`) into `row`; a NULL
// leaves the member as it was (its default: NaN, "", 0).
template <typename Row>
void read_row(const Statement& st, std::span<const Column<Row>> columns, Row& row, int first = 0) {
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const Column<Row>& c = columns[i];
    const int col = static_cast<int>(i) + first;
    if (st.column_is_null(col)) continue;
    switch (c.kind) {
      case ColumnKind::kSeconds:
        row.*c.integer = from_seconds(st.column_double(col));
        break;
      case ColumnKind::kReal:
        row.*c.real = st.column_double(col);
        break;
      case ColumnKind::kInteger:
        row.*c.integer = st.column_int64(col);
        break;
      case ColumnKind::kText:
        row.*c.text = st.column_text(col);
        break;
    }
  }
}

}  // namespace capsim
