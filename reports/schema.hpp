// The report schema (design.md §4; documented column by column in docs/report-schema.md): the
// DDL every capsim .db file is created with, the version stamp that marks a file as ours, and the
// names the `node.sharing` column uses. Every table carries run_id so one file can hold many runs.
// Changing a table means bumping kSchemaVersion and saying so in docs/report-schema.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "sim/node.hpp"
#include "sim/recorder.hpp"

namespace capsim {

class SqliteDb;

// The version written to meta(key='schema_version'). Readers refuse files with a newer version.
// 2: the `charge` table (the cost ledger's stretches of constant rate) and the run's Kueue
// quotas and LocalQueues (`queue_quota`, `local_queue`); version 1 files lack them.
// 3: the pod table's topology_span and topology_slowdown; version 2 files lack them.
// 4: the `pending_reason` table (every unschedulable cycle's reason counts) and the explain_*
// tables (`capsim run --explain`); older files lack them.
// 5: the run table's `record` (summary, pods or full: what the run kept); older files lack it and
// hold everything.
// 6: the pod table's owner_kind (the kind of the object named in `job`: Job, Deployment, ...);
// older files lack it.
inline constexpr std::int64_t kSchemaVersion = 6;
// Written to SQLite's header (PRAGMA application_id) so `file` and other tools can tell a capsim
// report from any other SQLite file: the ASCII bytes "CAPS".
inline constexpr std::int32_t kReportApplicationId = 0x43415053;

// CREATE TABLE / CREATE INDEX statements, all IF NOT EXISTS, separated by ';'.
std::string_view schema_ddl();

// Creates every missing table and index and stamps meta.schema_version and application_id.
// Precondition: `db` is writable and either empty or already at kSchemaVersion (callers check
// with read_schema_version() first). Throws SqliteError.
void create_schema(SqliteDb& db);

// Creates the indexes that are cheaper to build once after a run's rows are in than to maintain
// per row (event_by_pod). SqliteRecorder calls it in end_run, so every finished file has them.
void create_deferred_indexes(SqliteDb& db);

// The schema_version stamped in `db`; nullopt when there is no meta table or no such key, i.e. the
// file is not a capsim report. Throws SqliteError (SQLITE_NOTADB for a file that is not SQLite).
std::optional<std::int64_t> read_schema_version(SqliteDb& db);

// True when `db` contains no tables at all (a new or zero-length file).
bool is_empty_database(SqliteDb& db);

// "none", "mig", "time-slicing", "mps", "share": the values of node.sharing.
std::string_view sharing_name(GpuSharing sharing);

// "summary", "pods", "full": the values of run.record and of `--record`.
std::string_view record_level_name(RecordLevel level);
// The level of that name; nullopt for any other text.
std::optional<RecordLevel> record_level_from_name(std::string_view name);
// The valid names, comma-separated, for messages: "summary, pods, full".
inline constexpr std::string_view kRecordLevelNames = "summary, pods, full";

}  // namespace capsim
