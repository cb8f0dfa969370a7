#include "reports/sqlite_db.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <utility>

namespace capsim {

namespace {

std::string current_message(sqlite3* db, int code) {
  // sqlite3_errmsg describes the most recent failure on the connection; without a connection
  // (open failed before allocating one) only the generic text for the code is available.
  return db != nullptr ? std::string(sqlite3_errmsg(db)) : std::string(sqlite3_errstr(code));
}

}  // namespace

SqliteError::SqliteError(std::string path, int code, std::string message)
    : std::runtime_error(fmt::format("{}: {}", path, message)),
      path_(std::move(path)),
      code_(code),
      message_(std::move(message)) {}

// ---- SqliteDb ----------------------------------------------------------------------------------

SqliteDb::SqliteDb(const std::string& path, OpenMode mode) : path_(path) {
  const int flags = mode == OpenMode::kReadOnly ? SQLITE_OPEN_READONLY
                                                : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  const int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = fmt::format("cannot open database: {}", current_message(db_, rc));
    sqlite3_close_v2(db_);  // a handle is allocated even on most failures; null is harmless
    db_ = nullptr;
    throw SqliteError(path_, rc, std::move(msg));
  }
  sqlite3_extended_result_codes(db_, 1);
}

SqliteDb::~SqliteDb() {
  // close_v2 never fails: if statements are still alive it defers the close until they finish.
  if (db_ != nullptr) sqlite3_close_v2(db_);
}

SqliteDb::SqliteDb(SqliteDb&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

SqliteDb& SqliteDb::operator=(SqliteDb&& other) noexcept {
  if (this != &other) {
    if (db_ != nullptr) sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

void SqliteDb::close() {
  if (db_ == nullptr) return;
  const int rc = sqlite3_close(db_);
  if (rc != SQLITE_OK) fail(rc, "cannot close database");
  db_ = nullptr;
}

void SqliteDb::exec(const std::string& sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err != nullptr ? std::string(err) : current_message(db_, rc);
    sqlite3_free(err);
    throw SqliteError(path_, rc, fmt::format("{}: {}", sql.substr(0, sql.find('\n')), msg));
  }
}

Statement SqliteDb::prepare(std::string_view sql) {
  return Statement(db_, path_, sql);
}

void SqliteDb::fail(int code, std::string_view what) const {
  throw SqliteError(path_, code, fmt::format("{}: {}", what, current_message(db_, code)));
}

// ---- Statement ---------------------------------------------------------------------------------

Statement::Statement(sqlite3* db, std::string path, std::string_view sql)
    : db_(db), path_(std::move(path)) {
  const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
  if (rc != SQLITE_OK) {
    stmt_ = nullptr;
    fail(rc, fmt::format("cannot prepare '{}'", sql.substr(0, sql.find('\n'))));
  }
}

Statement::~Statement() {
  finalize();
}

Statement::Statement(Statement&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      stmt_(std::exchange(other.stmt_, nullptr)),
      path_(std::move(other.path_)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    finalize();
    db_ = std::exchange(other.db_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

void Statement::finalize() noexcept {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
  stmt_ = nullptr;
}

void Statement::fail(int code, std::string_view what) const {
  throw SqliteError(path_, code, fmt::format("{}: {}", what, current_message(db_, code)));
}

void Statement::check_bind(int code, int index) const {
  if (code != SQLITE_OK) fail(code, fmt::format("cannot bind parameter {}", index));
}

void Statement::bind_int64(int index, std::int64_t value) {
  check_bind(sqlite3_bind_int64(stmt_, index, value), index);
}

void Statement::bind_double(int index, double value) {
  check_bind(sqlite3_bind_double(stmt_, index, value), index);
}

void Statement::bind_text(int index, std::string_view value) {
  // A null data pointer would bind NULL, so an empty view binds a real empty string.
  const char* data = value.empty() ? "" : value.data();
  check_bind(sqlite3_bind_text64(stmt_, index, data, value.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
             index);
}

void Statement::bind_null(int index) {
  check_bind(sqlite3_bind_null(stmt_, index), index);
}

void Statement::bind_text_or_null(int index, std::string_view value) {
  if (value.empty()) {
    bind_null(index);
  } else {
    bind_text(index, value);
  }
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  // The error is reported by step; reset() would report it again, so clear it quietly.
  std::string msg = current_message(db_, rc);
  sqlite3_reset(stmt_);
  const char* sql = sqlite3_sql(stmt_);
  std::string_view text = sql != nullptr ? std::string_view(sql) : std::string_view();
  throw SqliteError(path_, rc,
                    fmt::format("cannot execute '{}': {}", text.substr(0, text.find('\n')), msg));
}

void Statement::execute() {
  while (step()) {
  }
  reset();
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int Statement::column_count() const {
  return sqlite3_column_count(stmt_);
}

bool Statement::column_is_null(int col) const {
  return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}

std::int64_t Statement::column_int64(int col) const {
  return sqlite3_column_int64(stmt_, col);
}

double Statement::column_double(int col) const {
  return sqlite3_column_double(stmt_, col);
}

std::string Statement::column_text(int col) const {
  const unsigned char* text = sqlite3_column_text(stmt_, col);
  if (text == nullptr) return {};
  const int bytes = sqlite3_column_bytes(stmt_, col);
  return std::string(reinterpret_cast<const char*>(text), static_cast<std::size_t>(bytes));
}

std::optional<double> Statement::column_optional_double(int col) const {
  if (column_is_null(col)) return std::nullopt;
  return column_double(col);
}

std::optional<std::string> Statement::column_optional_text(int col) const {
  if (column_is_null(col)) return std::nullopt;
  return column_text(col);
}

// ---- Transaction -------------------------------------------------------------------------------

Transaction::Transaction(SqliteDb& db) : db_(&db) {
  db_->begin();
}

Transaction::~Transaction() {
  if (!open_) return;
  try {
    db_->rollback();
  } catch (const SqliteError&) {
    // Nothing useful to do while unwinding; SQLite rolls back on close anyway.
  }
}

void Transaction::commit() {
  db_->commit();
  open_ = false;
}

}  // namespace capsim
