// The schema text is what SQLite keeps as each table's definition (`sqlite3 x.db .schema`), so
// the text made from the column lists (report_tables.hpp) must be the text capsim always wrote;
// and a row written through the lists reads back member for member.
#include "reports/schema.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "reports/report_tables.hpp"
#include "reports/sqlite_db.hpp"

using namespace capsim;

TEST_CASE(
    "the schema made from the column lists is, byte for byte, version 1's plus version 2's "
    "tables, version 3's pod columns, version 4's tables, version 5's run column and version "
    "6's pod column") {
  // reports/schema.cpp's DDL before the sample tables were made from column lists, with the
  // tables version 2 added (charge, queue_quota, local_queue) after queue_sample, the pod
  // table's topology columns of version 3, and version 4's (pending_reason, explain_*) after
  // version 2's tables; version 5's run.record; version 6's pod.owner_kind.
  const std::string before = R"sql(
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
  started_at      TEXT NOT NULL,
  record          TEXT
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
  run_id            INTEGER NOT NULL REFERENCES run (run_id),
  pod               TEXT NOT NULL,
  job               TEXT,
  queue             TEXT,
  priority          INTEGER NOT NULL,
  submit_s          REAL,
  start_s           REAL,
  end_s             REAL,
  status            TEXT NOT NULL,
  node              TEXT,
  devices           TEXT,
  gpu_request       REAL NOT NULL,
  attempts          INTEGER NOT NULL,
  wait_s            REAL NOT NULL,
  topology_span     TEXT,
  topology_slowdown REAL,
  owner_kind        TEXT
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

CREATE TABLE IF NOT EXISTS charge (
  run_id        INTEGER NOT NULL REFERENCES run (run_id),
  kind          TEXT NOT NULL,
  pod           TEXT,
  node          TEXT NOT NULL,
  start_s       REAL NOT NULL,
  end_s         REAL NOT NULL,
  gpus          REAL NOT NULL,
  hardware_cost REAL NOT NULL,
  energy_cost   REAL NOT NULL,
  gpu_kwh       REAL NOT NULL,
  cpu_cores     REAL NOT NULL,
  ram_bytes     REAL NOT NULL
);

CREATE TABLE IF NOT EXISTS queue_quota (
  run_id          INTEGER NOT NULL REFERENCES run (run_id),
  cluster_queue   TEXT NOT NULL,
  cohort          TEXT,
  flavor          TEXT NOT NULL,
  resource        TEXT NOT NULL,
  nominal         REAL NOT NULL,
  borrowing_limit REAL,
  lending_limit   REAL
);

CREATE TABLE IF NOT EXISTS local_queue (
  run_id        INTEGER NOT NULL REFERENCES run (run_id),
  namespace     TEXT NOT NULL,
  name          TEXT NOT NULL,
  cluster_queue TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS pending_reason (
  run_id      INTEGER NOT NULL REFERENCES run (run_id),
  time_s      REAL NOT NULL,
  pod         TEXT NOT NULL,
  attempt     INTEGER NOT NULL,
  plugin      TEXT NOT NULL,
  reason      TEXT NOT NULL,
  nodes       INTEGER NOT NULL,
  attempts    INTEGER NOT NULL,
  last_time_s REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS pending_reason_by_pod ON pending_reason (run_id, pod);

CREATE TABLE IF NOT EXISTS explain_attempt (
  run_id          INTEGER NOT NULL REFERENCES run (run_id),
  pod             TEXT NOT NULL,
  attempt         INTEGER NOT NULL,
  time_s          REAL NOT NULL,
  namespace       TEXT NOT NULL,
  profile         TEXT NOT NULL,
  tie_break       TEXT NOT NULL,
  result          TEXT NOT NULL,
  node            TEXT,
  message         TEXT,
  evaluated_nodes INTEGER NOT NULL,
  feasible_nodes  INTEGER NOT NULL,
  selected_node   TEXT,
  error           TEXT,
  post_filter     INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS explain_filter (
  run_id  INTEGER NOT NULL REFERENCES run (run_id),
  pod     TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  point   TEXT NOT NULL,
  node    TEXT,
  plugin  TEXT NOT NULL,
  code    TEXT NOT NULL,
  reason  TEXT
);
CREATE TABLE IF NOT EXISTS explain_score (
  run_id     INTEGER NOT NULL REFERENCES run (run_id),
  pod        TEXT NOT NULL,
  attempt    INTEGER NOT NULL,
  node       TEXT NOT NULL,
  plugin     TEXT NOT NULL,
  raw        INTEGER NOT NULL,
  normalized INTEGER NOT NULL,
  weight     INTEGER NOT NULL,
  skipped    INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS explain_node (
  run_id      INTEGER NOT NULL REFERENCES run (run_id),
  pod         TEXT NOT NULL,
  attempt     INTEGER NOT NULL,
  node        TEXT NOT NULL,
  feasible    INTEGER NOT NULL,
  rejected_by TEXT,
  scored      INTEGER NOT NULL,
  total       INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS explain_candidate (
  run_id           INTEGER NOT NULL REFERENCES run (run_id),
  pod              TEXT NOT NULL,
  attempt          INTEGER NOT NULL,
  candidate        INTEGER NOT NULL,
  node             TEXT NOT NULL,
  chosen           INTEGER NOT NULL,
  victims          TEXT NOT NULL,
  victim_count     INTEGER NOT NULL,
  pdb_violations   INTEGER NOT NULL,
  highest_priority INTEGER NOT NULL,
  priority_sum     INTEGER NOT NULL,
  earliest_start_s REAL NOT NULL,
  lost_on          TEXT
);

CREATE TABLE IF NOT EXISTS summary (
  run_id INTEGER NOT NULL REFERENCES run (run_id),
  seq    INTEGER NOT NULL,
  metric TEXT NOT NULL,
  value  REAL
);
CREATE UNIQUE INDEX IF NOT EXISTS summary_by_metric ON summary (run_id, metric);
)sql";
  CHECK(std::string(schema_ddl()) == before);
}

TEST_CASE("a sample row bound through its column list reads back the same, NaN as NULL") {
  SqliteDb db(":memory:", OpenMode::kReadWriteCreate);
  create_schema(db);
  SampleRecord s;
  s.time = 1'500'000;  // 1.5 s
  s.gpus_total = 8;
  s.gpus_busy = 2.25;
  s.pods_running = 3;
  s.pods_pending = 4;
  Statement insert = db.prepare(insert_sql<SampleRecord>("sample", kSampleColumns));
  bind_row<SampleRecord>(insert, 7, kSampleColumns, s);
  insert.execute();
  Statement select = db.prepare("SELECT run_id, " + select_list<SampleRecord>(kSampleColumns) +
                                ", arrived_gpu_ratio IS NULL FROM sample");
  REQUIRE(select.step());
  CHECK(select.column_int64(0) == 7);
  SampleRecord back;
  read_row<SampleRecord>(select, kSampleColumns, back, 1);
  CHECK(back.time == s.time);
  CHECK(back.gpus_total == 8);
  CHECK(back.gpus_busy == 2.25);
  CHECK(back.pods_running == 3);
  CHECK(back.pods_pending == 4);
  CHECK(std::isnan(back.arrived_gpu_ratio));
  CHECK(select.column_int64(static_cast<int>(std::size(kSampleColumns)) + 1) == 1);
}

TEST_CASE("an empty optional text column is stored as NULL, a required one as the empty string") {
  SqliteDb db(":memory:", OpenMode::kReadWriteCreate);
  create_schema(db);
  QueueSampleRecord q;
  q.queue = "cq";
  q.resource = "";
  Statement insert = db.prepare(insert_sql<QueueSampleRecord>("queue_sample", kQueueSampleColumns));
  bind_row<QueueSampleRecord>(insert, 1, kQueueSampleColumns, q);
  insert.execute();
  Statement select = db.prepare("SELECT flavor IS NULL, resource IS NULL FROM queue_sample");
  REQUIRE(select.step());
  CHECK(select.column_int64(0) == 1);
  CHECK(select.column_int64(1) == 0);
}
