// Read-side access to a capsim report file for `report`, `compare` and `check`: open read-only,
// list the runs, read a run's summary (in the order it was written) and samples, and confirm a
// run finished. Problems with the file are InputError, which the CLI maps to exit codes: a missing
// or unreadable file is kMissing (66); a file that is not SQLite, not a capsim report, or from a
// newer schema is kInvalid (65). The reader never writes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "reports/sqlite_db.hpp"
#include "sim/recorder.hpp"

namespace capsim {

// One row of the `run` table. Optional text columns that are NULL read as "".
struct RunRow {
  std::int64_t run_id = 0;
  std::string scenario;
  std::string scenario_path;
  std::string scenario_sha256;
  std::uint64_t seed = 0;
  std::string profile;
  std::string capsim_version;
  std::string status;  // running | complete | failed
  double sim_seconds = 0;
  double wall_seconds = 0;
  std::string overrides;
  std::string started_at;  // UTC, ISO-8601
  // What the run kept (`--record`); kFull for files before schema 5.
  RecordLevel record = RecordLevel::kFull;
};

// "not recorded: this run used --record LEVEL": what a reader says where the run's level left the
// rows out.
std::string not_recorded_note(RecordLevel level);

class RunReader {
 public:
  // Opens `path` read-only and checks that it is a capsim report this version can read.
  explicit RunReader(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return path_; }
  std::int64_t schema_version() const { return schema_version_; }

  // Every run in the file, by run_id.
  std::vector<RunRow> runs() const;
  std::optional<RunRow> run(std::int64_t run_id) const;
  // The highest run_id whose status is 'complete'; nullopt when there is none.
  std::optional<std::int64_t> latest_complete_run() const;

  // True when the run exists and its status is 'complete'.
  bool is_complete(std::int64_t run_id) const;
  // Throws InputError(kInvalid) naming the file and the run unless is_complete(run_id).
  void require_complete(std::int64_t run_id) const;

  // The run's summary metrics in the order the simulation reported them. NULL values (NaN when
  // written) read as NaN. Empty when the run has no summary (it did not finish).
  Summary summary(std::int64_t run_id) const;
  // The run's samples by time. Times come back as SimTime, exact to the microsecond.
  std::vector<SampleRecord> samples(std::int64_t run_id) const;
  // The run's per-pool samples by time, then pool. Empty for files written before the
  // pool_sample table existed.
  std::vector<PoolSampleRecord> pool_samples(std::int64_t run_id) const;
  // True when the file has a table of that name (older files lack newer tables).
  bool has_table(const std::string& name) const;

  // The connection, for queries these helpers do not cover. Read-only.
  SqliteDb& db() const { return db_; }

 private:
  [[noreturn]] void invalid(const std::string& message) const;
  std::string run_columns() const;
  template <typename Body>
  auto guarded(Body&& body) const;

  std::filesystem::path path_;
  mutable SqliteDb db_;  // queries do not change the file; statements need a non-const handle
  std::int64_t schema_version_ = 0;
};

}  // namespace capsim
