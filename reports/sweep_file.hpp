// Sweep files: one capsim report file holding every run of a sweep (or of one shard of it), plus
// the tables that say which sweep it is and which axis values each run had (docs/planning.md):
//   sweep(sweep_id, name, scenario, definition, variants)   one row: the sweep's identity
//   sweep_shard(shard, shards, variants)                     one row per shard the file contains
//   variant(run_id, seq, axis, value)                        one row per run and axis
// A run's run_id is its variant's position in the whole sweep (1-based), so a sweep run whole
// and the same sweep run as shards and merged hold identical tables. SweepFileWriter assembles
// such a file from per-run files atomically (temporary file, fsync, rename), like SqliteRecorder.
// One thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "reports/sqlite_db.hpp"

namespace capsim {

struct SweepInfo {
  std::string sweep_id;    // SHA-256 of the sweep definition and its inputs
  std::string name;        // the sweep's name
  std::string scenario;    // base scenario path
  std::string definition;  // the sweep file's text
  std::int64_t variants = 0;
};

struct ShardInfo {
  std::int64_t shard = 0;   // 0-based
  std::int64_t shards = 1;  // how many shards the sweep was cut into
  std::int64_t variants = 0;
};

using AxisValues = std::vector<std::pair<std::string, std::string>>;  // (axis, value) in order

// Reads the sweep tables of an open report file. nullopt when the file is not a sweep file.
std::optional<SweepInfo> read_sweep_info(SqliteDb& db);
std::vector<ShardInfo> read_shards(SqliteDb& db);
// Axis values of every run that has any, by run_id.
std::map<std::int64_t, AxisValues> read_variant_axes(SqliteDb& db);

class SweepFileWriter {
 public:
  // Creates the temporary file beside `out` with the report schema and the sweep tables. Throws
  // ReportWriteError when it cannot.
  SweepFileWriter(std::filesystem::path out, const SweepInfo& info);
  ~SweepFileWriter();  // discards the temporary file unless commit() ran
  SweepFileWriter(const SweepFileWriter&) = delete;
  SweepFileWriter& operator=(const SweepFileWriter&) = delete;

  // Copies run `from_run` of the report file `file` (every table with a run_id column, rows in
  // their stored order) as run `to_run`, and records its axis values unless `axes` is null (then
  // the source's own `variant` rows come along). Precondition: `to_run` is not in the file yet.
  void add_run(const std::filesystem::path& file, std::int64_t from_run, std::int64_t to_run,
               const AxisValues* axes);
  void add_shard(const ShardInfo& shard);
  bool has_run(std::int64_t run_id) const;
  // Builds the deferred indexes, flushes, and renames the file onto `out`.
  void commit();

 private:
  void abort() noexcept;
  std::filesystem::path out_, temp_;
  SqliteDb db_;
  bool done_ = false;
  std::vector<std::int64_t> runs_;
};

}  // namespace capsim
