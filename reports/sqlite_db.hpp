// A small RAII layer over the SQLite C API: a connection (SqliteDb) that owns its handle, prepared
// statements (Statement) meant to be prepared once and reused with reset(), and an RAII
// Transaction. Every failure throws SqliteError carrying SQLite's message and the database path.
// Not thread-safe: one connection and its statements belong to one thread. Statements must be
// destroyed (or finalize()d) before their connection's close().
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace capsim {

class SqliteError : public std::runtime_error {
 public:
  // `code` is SQLite's (extended) result code; `message` says what was being done and why it
  // failed. what() is "PATH: MESSAGE".
  SqliteError(std::string path, int code, std::string message);
  const std::string& path() const { return path_; }
  int code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  std::string path_;
  int code_;
  std::string message_;
};

enum class OpenMode {
  kReadOnly,         // the file must exist
  kReadWriteCreate,  // created when absent
};

class Statement;

class SqliteDb {
 public:
  SqliteDb() = default;
  // Opens `path`. Throws SqliteError when it cannot be opened. A file that is not a database is
  // only detected by the first statement that reads it (SQLITE_NOTADB).
  SqliteDb(const std::string& path, OpenMode mode);
  ~SqliteDb();
  SqliteDb(SqliteDb&& other) noexcept;
  SqliteDb& operator=(SqliteDb&& other) noexcept;
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  bool is_open() const { return db_ != nullptr; }
  const std::string& path() const { return path_; }
  sqlite3* handle() const { return db_; }

  // Closes the connection. Precondition: every Statement on it has been destroyed or finalized.
  // Throws SqliteError if SQLite refuses; the destructor closes quietly instead.
  void close();

  // Runs one or more `;`-separated statements that return no rows of interest.
  void exec(const std::string& sql);
  Statement prepare(std::string_view sql);

  void begin() { exec("BEGIN"); }
  void commit() { exec("COMMIT"); }
  void rollback() { exec("ROLLBACK"); }

  // Throws SqliteError with this connection's current error message, prefixed by `what`.
  [[noreturn]] void fail(int code, std::string_view what) const;

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

// A prepared statement. Bind indices are 1-based and column indices 0-based, as in SQLite.
// Typical use: prepare once, then per row bind_*(), execute() (or step() while rows come), reset().
class Statement {
 public:
  Statement() = default;
  Statement(sqlite3* db, std::string path, std::string_view sql);
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  bool is_prepared() const { return stmt_ != nullptr; }
  void finalize() noexcept;

  void bind_int64(int index, std::int64_t value);
  void bind_double(int index, double value);          // NaN is stored as NULL (SQLite's rule)
  void bind_text(int index, std::string_view value);  // copied; "" stays "", not NULL
  void bind_null(int index);
  // NULL when `value` is empty, else the text.
  void bind_text_or_null(int index, std::string_view value);

  // Advances: true when a row is available, false when the statement is done.
  bool step();
  // Steps to completion (rows are ignored), then reset()s so the statement can be reused.
  void execute();
  // Rewinds and clears every binding to NULL.
  void reset();

  int column_count() const;
  bool column_is_null(int col) const;
  std::int64_t column_int64(int col) const;
  double column_double(int col) const;
  std::string column_text(int col) const;  // "" for NULL
  std::optional<double> column_optional_double(int col) const;
  std::optional<std::string> column_optional_text(int col) const;

 private:
  [[noreturn]] void fail(int code, std::string_view what) const;
  void check_bind(int code, int index) const;

  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  std::string path_;
};

// Begins a transaction; rolls it back on destruction unless commit() ran. Do not use on a
// connection with journal_mode=OFF (rollback is undefined there).
class Transaction {
 public:
  explicit Transaction(SqliteDb& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  SqliteDb* db_;
  bool open_ = true;
};

}  // namespace capsim
