#include "reports/sweep_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <set>
#include <system_error>

#include "reports/output_target.hpp"
#include "reports/schema.hpp"
#include "reports/sqlite_recorder.hpp"

namespace capsim {

namespace {

constexpr std::string_view kSweepDdl = R"sql(
CREATE TABLE IF NOT EXISTS sweep (
  sweep_id   TEXT NOT NULL,
  name       TEXT NOT NULL,
  scenario   TEXT NOT NULL,
  definition TEXT NOT NULL,
  variants   INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS sweep_shard (
  shard    INTEGER NOT NULL,
  shards   INTEGER NOT NULL,
  variants INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS variant (
  run_id INTEGER NOT NULL REFERENCES run (run_id),
  seq    INTEGER NOT NULL,
  axis   TEXT NOT NULL,
  value  TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS variant_by_axis ON variant (run_id, axis);
)sql";

bool has_table(SqliteDb& db, const std::string& schema, const std::string& table) {
  Statement st = db.prepare(fmt::format(
      "SELECT count(*) FROM {}.sqlite_master WHERE type = 'table' AND name = ?1", schema));
  st.bind_text(1, table);
  return st.step() && st.column_int64(0) > 0;
}

std::vector<std::string> columns(SqliteDb& db, const std::string& schema,
                                 const std::string& table) {
  std::vector<std::string> out;
  Statement st = db.prepare(fmt::format("PRAGMA {}.table_info(\"{}\")", schema, table));
  while (st.step())
    out.push_back(st.column_text(1));
  return out;
}

void sync_path(const std::filesystem::path& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "open " + path.string());
  const int rc = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  if (rc != 0 && !(flags & O_DIRECTORY)) {
    throw std::system_error(saved, std::generic_category(), "fsync " + path.string());
  }
}

}  // namespace

std::optional<SweepInfo> read_sweep_info(SqliteDb& db) {
  if (!has_table(db, "main", "sweep")) return std::nullopt;
  Statement st =
      db.prepare("SELECT sweep_id, name, scenario, definition, variants FROM sweep LIMIT 1");
  if (!st.step()) return std::nullopt;
  SweepInfo s;
  s.sweep_id = st.column_text(0);
  s.name = st.column_text(1);
  s.scenario = st.column_text(2);
  s.definition = st.column_text(3);
  s.variants = st.column_int64(4);
  return s;
}

std::vector<ShardInfo> read_shards(SqliteDb& db) {
  std::vector<ShardInfo> out;
  if (!has_table(db, "main", "sweep_shard")) return out;
  Statement st = db.prepare("SELECT shard, shards, variants FROM sweep_shard ORDER BY rowid");
  while (st.step())
    out.push_back({st.column_int64(0), st.column_int64(1), st.column_int64(2)});
  return out;
}

std::map<std::int64_t, AxisValues> read_variant_axes(SqliteDb& db) {
  std::map<std::int64_t, AxisValues> out;
  if (!has_table(db, "main", "variant")) return out;
  Statement st = db.prepare("SELECT run_id, axis, value FROM variant ORDER BY run_id, seq");
  while (st.step())
    out[st.column_int64(0)].emplace_back(st.column_text(1), st.column_text(2));
  return out;
}

SweepFileWriter::SweepFileWriter(std::filesystem::path out, const SweepInfo& info)
    : out_(std::move(out)) {
  // Beside OUT, or in the temporary directory when OUT is a device or pipe (reports/output_target).
  temp_ = output_temp_path(out_);
  try {
    if (!out_.has_filename() || std::filesystem::is_directory(out_)) {
      throw ReportWriteError(out_, "the output path names a directory, not a file");
    }
    std::filesystem::remove(temp_);
    db_ = SqliteDb(temp_.string(), OpenMode::kReadWriteCreate);
    // As in SqliteRecorder: the temporary file is published only by the final rename.
    db_.exec(
        "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA temp_store = MEMORY;"
        "PRAGMA cache_size = -32768;");
    create_schema(db_);
    db_.exec(std::string(kSweepDdl));
    Statement st = db_.prepare(
        "INSERT INTO sweep (sweep_id, name, scenario, definition, variants) "
        "VALUES (?1, ?2, ?3, ?4, ?5)");
    st.bind_text(1, info.sweep_id);
    st.bind_text(2, info.name);
    st.bind_text(3, info.scenario);
    st.bind_text(4, info.definition);
    st.bind_int64(5, info.variants);
    st.execute();
  } catch (const SqliteError& e) {
    abort();
    throw ReportWriteError(out_, fmt::format("cannot create the sweep file: {}", e.what()));
  } catch (const std::filesystem::filesystem_error& e) {
    abort();
    throw ReportWriteError(out_, fmt::format("cannot create the sweep file: {}", e.what()));
  }
}

SweepFileWriter::~SweepFileWriter() {
  if (!done_) abort();
}

void SweepFileWriter::abort() noexcept {
  db_ = SqliteDb();
  std::error_code ignored;
  std::filesystem::remove(temp_, ignored);
  done_ = true;
}

bool SweepFileWriter::has_run(std::int64_t run_id) const {
  return std::find(runs_.begin(), runs_.end(), run_id) != runs_.end();
}

void SweepFileWriter::add_run(const std::filesystem::path& file, std::int64_t from_run,
                              std::int64_t to_run, const AxisValues* axes) {
  {
    Statement attach = db_.prepare("ATTACH DATABASE ?1 AS src");
    attach.bind_text(1, file.string());
    attach.execute();
  }
  try {
    db_.begin();
    Statement tables = db_.prepare(
        "SELECT name FROM src.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
        "ORDER BY name");
    std::vector<std::string> names;
    while (tables.step())
      names.push_back(tables.column_text(0));
    tables.finalize();
    for (const std::string& t : names) {
      if (axes != nullptr && t == "variant") continue;
      if (!has_table(db_, "main", t)) continue;  // a newer writer's table: not ours to guess
      const std::vector<std::string> src_cols = columns(db_, "src", t);
      if (std::find(src_cols.begin(), src_cols.end(), "run_id") == src_cols.end()) continue;
      std::vector<std::string> cols, exprs;
      for (const std::string& c : columns(db_, "main", t)) {
        if (std::find(src_cols.begin(), src_cols.end(), c) == src_cols.end()) continue;
        cols.push_back(fmt::format("\"{}\"", c));
        exprs.push_back(c == "run_id" ? "?1" : fmt::format("\"{}\"", c));
      }
      Statement copy = db_.prepare(fmt::format(
          "INSERT INTO main.\"{0}\" ({1}) SELECT {2} FROM src.\"{0}\" WHERE run_id = ?2 "
          "ORDER BY rowid",
          t, fmt::join(cols, ", "), fmt::join(exprs, ", ")));
      copy.bind_int64(1, to_run);
      copy.bind_int64(2, from_run);
      copy.execute();
    }
    if (axes != nullptr) {
      Statement ins =
          db_.prepare("INSERT INTO variant (run_id, seq, axis, value) VALUES (?1, ?2, ?3, ?4)");
      for (std::size_t i = 0; i < axes->size(); ++i) {
        ins.bind_int64(1, to_run);
        ins.bind_int64(2, static_cast<std::int64_t>(i));
        ins.bind_text(3, (*axes)[i].first);
        ins.bind_text(4, (*axes)[i].second);
        ins.execute();
      }
    }
    db_.commit();
  } catch (...) {
    db_.exec("DETACH DATABASE src");
    throw;
  }
  db_.exec("DETACH DATABASE src");
  runs_.push_back(to_run);
}

void SweepFileWriter::add_shard(const ShardInfo& shard) {
  Statement st =
      db_.prepare("INSERT INTO sweep_shard (shard, shards, variants) VALUES (?1, ?2, ?3)");
  st.bind_int64(1, shard.shard);
  st.bind_int64(2, shard.shards);
  st.bind_int64(3, shard.variants);
  st.execute();
}

void SweepFileWriter::commit() {
  try {
    create_deferred_indexes(db_);
    db_.close();
    if (is_in_place_output(out_)) {
      publish_output(temp_, out_);
      done_ = true;
      return;
    }
    sync_path(temp_, O_RDONLY);
    std::filesystem::rename(temp_, out_);
    for (const char* suffix : {"-journal", "-wal", "-shm"}) {
      std::filesystem::path side = out_;
      side += suffix;
      std::error_code ignored;
      std::filesystem::remove(side, ignored);
    }
    sync_path(out_.parent_path().empty() ? std::filesystem::path(".") : out_.parent_path(),
              O_RDONLY | O_DIRECTORY);
    done_ = true;
  } catch (const SqliteError& e) {
    abort();
    throw ReportWriteError(out_, e.what());
  } catch (const std::system_error& e) {
    abort();
    throw ReportWriteError(out_, e.what());
  }
}

}  // namespace capsim
