#include "reports/run_reader.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <system_error>
#include <utility>

#include "reports/report_tables.hpp"
#include "reports/schema.hpp"
#include "sim/input_error.hpp"

namespace capsim {

namespace {

constexpr std::string_view kRunColumns =
    "run_id, scenario, scenario_path, scenario_sha256, seed, profile, capsim_version, status, "
    "sim_seconds, wall_seconds, overrides, started_at";

InputLocation location_of(const std::filesystem::path& path) {
  InputLocation where;
  where.file = path.string();
  return where;
}

RunRow read_run_row(const Statement& st) {
  RunRow row;
  row.run_id = st.column_int64(0);
  row.scenario = st.column_text(1);
  row.scenario_path = st.column_text(2);
  row.scenario_sha256 = st.column_text(3);
  row.seed = static_cast<std::uint64_t>(st.column_int64(4));  // undoes the recorder's int64 cast
  row.profile = st.column_text(5);
  row.capsim_version = st.column_text(6);
  row.status = st.column_text(7);
  row.sim_seconds = st.column_double(8);
  row.wall_seconds = st.column_double(9);
  row.overrides = st.column_text(10);
  row.started_at = st.column_text(11);
  // NULL in files before schema 5, which kept everything.
  row.record = record_level_from_name(st.column_text(12)).value_or(RecordLevel::kFull);
  return row;
}

// The plain words every damaged or foreign file gets, whatever SQLite said (no SQL text).
constexpr std::string_view kNotAReport = "is not a capsim report (or is truncated)";

// A file shorter than the database size its own header states was cut off (a copy interrupted, a
// disk that filled): SQLite would answer some queries from it and fail others halfway through a
// report. The SQLite file format (https://www.sqlite.org/fileformat2.html, "1.3 The Database
// Header"): bytes 16-17 the page size (1 means 65536), 24-27 the change counter, 28-31 the size
// in pages, valid when bytes 92-95 equal the change counter. True when the header is valid and
// promises more bytes than the file has.
bool shorter_than_its_header(const std::filesystem::path& path, std::uintmax_t size) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  unsigned char h[100] = {};
  const std::size_t got = std::fread(h, 1, sizeof h, f);
  std::fclose(f);
  static constexpr unsigned char kMagic[] = "SQLite format 3";
  // A header cut short: truncated when what there is begins as an SQLite file does.
  if (got < sizeof h) return got > 0 && std::memcmp(h, kMagic, std::min(got, sizeof kMagic)) == 0;
  const auto be32 = [&](int at) {
    return (std::uint32_t{h[at]} << 24) | (std::uint32_t{h[at + 1]} << 16) |
           (std::uint32_t{h[at + 2]} << 8) | std::uint32_t{h[at + 3]};
  };
  if (std::memcmp(h, kMagic, sizeof kMagic) != 0) return false;  // not SQLite: said later
  std::uint64_t page = (std::uint32_t{h[16]} << 8) | h[17];
  if (page == 1) page = 65536;
  if (be32(24) != be32(92)) return false;  // size field not maintained: nothing to compare
  return std::uint64_t{be32(28)} * page > size;
}

}  // namespace

RunReader::RunReader(const std::filesystem::path& path) : path_(path) {
  const InputLocation where = location_of(path_);
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path_, ec);
  if (!std::filesystem::exists(status)) {
    throw InputError(InputErrorKind::kMissing, where, "no such report file");
  }
  if (std::filesystem::is_directory(status)) {
    throw InputError(InputErrorKind::kMissing, where, "is a directory, not a report file");
  }
  const std::uintmax_t size = std::filesystem::file_size(path_, ec);
  if (!ec && shorter_than_its_header(path_, size)) {
    invalid(fmt::format("{}: the file is shorter than its header says", kNotAReport));
  }
  try {
    db_ = SqliteDb(path_.string(), OpenMode::kReadOnly);
  } catch (const SqliteError& e) {
    throw InputError(InputErrorKind::kMissing, where, "cannot open the report file");
  }
  std::optional<std::int64_t> version;
  try {
    version = read_schema_version(db_);
  } catch (const SqliteError& e) {
    if ((e.code() & 0xff) == SQLITE_NOTADB)
      invalid(fmt::format("{}: not an SQLite database", kNotAReport));
    invalid(std::string(kNotAReport));
  }
  if (!version)
    invalid(fmt::format("{}: an SQLite database without meta.schema_version", kNotAReport));
  if (*version > kSchemaVersion || *version < 1) {
    invalid(fmt::format("report schema version {} is not one this capsim reads (1 to {})", *version,
                        kSchemaVersion));
  }
  schema_version_ = *version;
}

void RunReader::invalid(const std::string& message) const {
  throw InputError(InputErrorKind::kInvalid, location_of(path_), message);
}

template <typename Body>
auto RunReader::guarded(Body&& body) const {
  // A valid report answers every query below; an SQLite error here means a damaged file.
  try {
    return std::forward<Body>(body)();
  } catch (const SqliteError&) {
    invalid(std::string(kNotAReport));
  }
}

std::string RunReader::run_columns() const {
  return fmt::format("{}, {}", kRunColumns, schema_version_ >= 5 ? "record" : "NULL");
}

std::vector<RunRow> RunReader::runs() const {
  return guarded([&] {
    Statement st = db_.prepare(fmt::format("SELECT {} FROM run ORDER BY run_id", run_columns()));
    std::vector<RunRow> rows;
    while (st.step())
      rows.push_back(read_run_row(st));
    return rows;
  });
}

std::optional<RunRow> RunReader::run(std::int64_t run_id) const {
  return guarded([&]() -> std::optional<RunRow> {
    Statement st = db_.prepare(fmt::format("SELECT {} FROM run WHERE run_id = ?1", run_columns()));
    st.bind_int64(1, run_id);
    if (!st.step()) return std::nullopt;
    return read_run_row(st);
  });
}

std::optional<std::int64_t> RunReader::latest_complete_run() const {
  return guarded([&]() -> std::optional<std::int64_t> {
    Statement st = db_.prepare("SELECT max(run_id) FROM run WHERE status = 'complete'");
    if (!st.step() || st.column_is_null(0)) return std::nullopt;
    return st.column_int64(0);
  });
}

bool RunReader::is_complete(std::int64_t run_id) const {
  const std::optional<RunRow> row = run(run_id);
  return row && row->status == "complete";
}

void RunReader::require_complete(std::int64_t run_id) const {
  const std::optional<RunRow> row = run(run_id);
  if (!row) invalid(fmt::format("has no run {}", run_id));
  if (row->status != "complete") {
    invalid(fmt::format("run {} has status '{}', not 'complete' (the run did not finish)", run_id,
                        row->status));
  }
}

Summary RunReader::summary(std::int64_t run_id) const {
  return guarded([&] {
    Statement st =
        db_.prepare("SELECT metric, value FROM summary WHERE run_id = ?1 ORDER BY seq, metric");
    st.bind_int64(1, run_id);
    Summary out;
    while (st.step()) {
      out.emplace_back(st.column_text(0), st.column_optional_double(1).value_or(
                                              std::numeric_limits<double>::quiet_NaN()));
    }
    return out;
  });
}

std::vector<SampleRecord> RunReader::samples(std::int64_t run_id) const {
  return guarded([&] {
    Statement st = db_.prepare("SELECT " + select_list<SampleRecord>(kSampleColumns) +
                               " FROM sample WHERE run_id = ?1 ORDER BY time_s, rowid");
    st.bind_int64(1, run_id);
    std::vector<SampleRecord> out;
    while (st.step()) {
      SampleRecord s;
      read_row<SampleRecord>(st, kSampleColumns, s);
      out.push_back(s);
    }
    return out;
  });
}

bool RunReader::has_table(const std::string& name) const {
  return guarded([&] {
    Statement st =
        db_.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1");
    st.bind_text(1, name);
    return st.step() && st.column_int64(0) > 0;
  });
}

std::vector<PoolSampleRecord> RunReader::pool_samples(std::int64_t run_id) const {
  if (!has_table("pool_sample")) return {};
  return guarded([&] {
    Statement st = db_.prepare("SELECT " + select_list<PoolSampleRecord>(kPoolSampleColumns) +
                               " FROM pool_sample WHERE run_id = ?1 ORDER BY time_s, rowid");
    st.bind_int64(1, run_id);
    std::vector<PoolSampleRecord> out;
    while (st.step()) {
      PoolSampleRecord s;
      read_row<PoolSampleRecord>(st, kPoolSampleColumns, s);
      out.push_back(std::move(s));
    }
    return out;
  });
}

std::string not_recorded_note(RecordLevel level) {
  return fmt::format("not recorded: this run used --record {}", record_level_name(level));
}

}  // namespace capsim
