#include "reports/schema.hpp"

#include <fmt/format.h>

#include <string>

#include "reports/sqlite_db.hpp"

namespace capsim {

namespace {

// Units: times in seconds (REAL), memory in MiB, cpu in millicores, money in the scenario's
// currency (USD by default). Optional names are NULL when absent. Keep docs/report-schema.md in
// step with this text.
constexpr std::string_view kDdl = R"sql(
CREATE TABLE IF NOT EXISTS meta (
  key   TEXT PRIMARY KEY,
  value
);

CREATE TABLE IF NOT EXISTS run (
  run_id          INTEGER PRIMARY KEY,
  scenario        TEXT NOT NULL,
  scenario_path   TEXT,
  scenario_sha256 TEXT,
  seed            INTEGER NOT NULL,
  profile         TEXT,
  capsim_version  TEXT NOT NULL,
  status          TEXT NOT NULL,
  sim_seconds     REAL NOT NULL,
  wall_seconds    REAL NOT NULL,
  overrides       TEXT,
  started_at      TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS node (
  run_id         INTEGER NOT NULL REFERENCES run (run_id),
  node           TEXT NOT NULL,
  pool           TEXT,
  gpu_model      TEXT,
  gpus           INTEGER NOT NULL,
  cpu_milli      INTEGER NOT NULL,
  memory_mib     INTEGER NOT NULL,
  sharing        TEXT NOT NULL,
  price_per_hour REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS node_by_name ON node (run_id, node);

CREATE TABLE IF NOT EXISTS pod (
  run_id      INTEGER NOT NULL REFERENCES run (run_id),
  pod         TEXT NOT NULL,
  job         TEXT,
  queue       TEXT,
  priority    INTEGER NOT NULL,
  submit_s    REAL,
  start_s     REAL,
  end_s       REAL,
  status      TEXT NOT NULL,
  node        TEXT,
  devices     TEXT,
  gpu_request REAL NOT NULL,
  attempts    INTEGER NOT NULL,
  wait_s      REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS pod_by_name ON pod (run_id, pod);
CREATE INDEX IF NOT EXISTS pod_by_queue ON pod (run_id, queue);

CREATE TABLE IF NOT EXISTS pod_claim (
  run_id         INTEGER NOT NULL REFERENCES run (run_id),
  pod            TEXT NOT NULL,
  claim          TEXT NOT NULL,
  resource_claim TEXT NOT NULL,
  template       TEXT,
  node           TEXT,
  request        TEXT,
  device         TEXT,
  driver         TEXT,
  pool           TEXT,
  gpu            INTEGER
);
CREATE INDEX IF NOT EXISTS pod_claim_by_pod ON pod_claim (run_id, pod);

CREATE TABLE IF NOT EXISTS event (
  run_id INTEGER NOT NULL REFERENCES run (run_id),
  seq    INTEGER NOT NULL,
  time_s REAL NOT NULL,
  kind   TEXT NOT NULL,
  pod    TEXT,
  node   TEXT,
  detail TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS event_by_seq ON event (run_id, seq);

CREATE TABLE IF NOT EXISTS sample (
  run_id                   INTEGER NOT NULL REFERENCES run (run_id),
  time_s                   REAL NOT NULL,
  gpus_total               REAL NOT NULL,
  gpus_allocated           REAL NOT NULL,
  gpus_busy                REAL NOT NULL,
  gpu_memory_allocated_mib REAL NOT NULL,
  gpu_memory_used_mib      REAL NOT NULL,
  pods_running             INTEGER NOT NULL,
  pods_pending             INTEGER NOT NULL,
  fragmented_gpus          REAL NOT NULL,
  power_w                  REAL NOT NULL,
  cost_per_hour            REAL NOT NULL,
  arrived_gpu_ratio        REAL
);
CREATE INDEX IF NOT EXISTS sample_by_time ON sample (run_id, time_s);

CREATE TABLE IF NOT EXISTS pool_sample (
  run_id                   INTEGER NOT NULL REFERENCES run (run_id),
  time_s                   REAL NOT NULL,
  pool                     TEXT,
  gpus_total               REAL NOT NULL,
  gpus_allocated           REAL NOT NULL,
  gpus_busy                REAL NOT NULL,
  gpu_memory_total_mib     REAL NOT NULL,
  gpu_memory_allocated_mib REAL NOT NULL,
  gpu_memory_used_mib      REAL NOT NULL,
  pods_running             INTEGER NOT NULL,
  fragmented_gpus          REAL NOT NULL,
  power_w                  REAL NOT NULL,
  cost_per_hour            REAL NOT NULL,
  shared_units_total       REAL NOT NULL,
  shared_units_allocated   REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS pool_sample_by_pool ON pool_sample (run_id, pool, time_s);

CREATE TABLE IF NOT EXISTS queue_sample (
  run_id   INTEGER NOT NULL REFERENCES run (run_id),
  time_s   REAL NOT NULL,
  queue    TEXT NOT NULL,
  flavor   TEXT,
  resource TEXT NOT NULL,
  usage    REAL NOT NULL,
  nominal  REAL NOT NULL,
  borrowed REAL NOT NULL,
  pending  REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS queue_sample_by_queue ON queue_sample (run_id, queue, time_s);

CREATE TABLE IF NOT EXISTS summary (
  run_id INTEGER NOT NULL REFERENCES run (run_id),
  seq    INTEGER NOT NULL,
  metric TEXT NOT NULL,
  value  REAL
);
CREATE UNIQUE INDEX IF NOT EXISTS summary_by_metric ON summary (run_id, metric);
)sql";

// Built once after a run's events are in. Measured with 1M events over 100k distinct pod names
// (plus 100k samples and 100k pods, -O2): 5.6 s with the index maintained row by row, 3.6 s with
// it built at the end, 2.8 s with no index at all. Appending to a file that already has the index
// maintains it row by row again; that is the price of keeping earlier runs indexed.
constexpr std::string_view kDeferredIndexDdl = R"sql(
CREATE INDEX IF NOT EXISTS event_by_pod ON event (run_id, pod);
)sql";

}  // namespace

std::string_view schema_ddl() {
  return kDdl;
}

void create_schema(SqliteDb& db) {
  db.exec(std::string(kDdl));
  db.exec(fmt::format("INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', {});",
                      kSchemaVersion));
  db.exec(fmt::format("PRAGMA application_id = {};", kReportApplicationId));
}

void create_deferred_indexes(SqliteDb& db) {
  db.exec(std::string(kDeferredIndexDdl));
}

std::optional<std::int64_t> read_schema_version(SqliteDb& db) {
  Statement has_meta =
      db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'");
  if (!has_meta.step() || has_meta.column_int64(0) == 0) return std::nullopt;
  Statement version = db.prepare(
      "SELECT value FROM meta WHERE key = 'schema_version' AND typeof(value) = 'integer'");
  if (!version.step()) return std::nullopt;
  return version.column_int64(0);
}

bool is_empty_database(SqliteDb& db) {
  Statement count = db.prepare("SELECT count(*) FROM sqlite_master");
  return count.step() && count.column_int64(0) == 0;
}

std::string_view sharing_name(GpuSharing sharing) {
  switch (sharing) {
    case GpuSharing::kNone:
      return "none";
    case GpuSharing::kMig:
      return "mig";
    case GpuSharing::kTimeSlicing:
      return "time-slicing";
    case GpuSharing::kMps:
      return "mps";
    case GpuSharing::kShare:
      return "share";
  }
  return "unknown";
}

}  // namespace capsim
