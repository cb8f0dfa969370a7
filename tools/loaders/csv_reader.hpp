// A small CSV reader for traces: a header row, comma-separated fields, RFC 4180 quoting (a
// quoted field may hold commas, line breaks and doubled quotes ""), CRLF or LF line ends, a UTF-8
// byte-order mark, blank lines skipped and, optionally, comment lines. Every row keeps the 1-based
// line it starts on, so errors read "trace.csv:17: column gpu: 'two' is not a whole number". The
// whole file is in memory; a CsvFile is an immutable value once parsed.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/input_error.hpp"

namespace capsim {

struct CsvRow {
  int line = 0;  // 1-based line of the row's first character
  std::vector<std::string> fields;
};

struct CsvOptions {
  // Lines whose first character is this one are skipped ('\0': no comments). Only outside
  // quoted fields, and only at the start of a line.
  char comment = '\0';
  // Spaces and tabs around unquoted fields (and header names) are dropped.
  bool trim = true;
};

class CsvFile {
 public:
  // Parses text; `name` is the file name used in messages. Files are read through a FileSource
  // (tools/loaders/file_source.hpp: FileSource::csv), so a scenario's digest covers them.
  static CsvFile parse(std::string_view text, const std::string& name, const CsvOptions& opt = {});

  const std::string& name() const { return name_; }
  const std::vector<std::string>& header() const { return header_; }
  int header_line() const { return header_line_; }
  const std::vector<CsvRow>& rows() const { return rows_; }

  // The position of a column, or nullopt when the header does not name it.
  std::optional<std::size_t> column(std::string_view name) const;
  bool has_column(std::string_view name) const { return column(name).has_value(); }
  // The row's value in column `name`; an InputError at the row when the header lacks it.
  const std::string& field(const CsvRow& row, std::string_view name) const;
  // The value, or `dflt` when the header lacks the column.
  std::string field_or(const CsvRow& row, std::string_view name, std::string dflt) const;

  // Where a value is: file, the row's line, field "column NAME".
  InputLocation where(const CsvRow& row, std::string_view column) const;
  [[noreturn]] void fail(const CsvRow& row, std::string_view column,
                         const std::string& message) const;
  // An error about the header (unknown or missing column).
  [[noreturn]] void fail_header(const std::string& message) const;

 private:
  std::string name_;
  std::vector<std::string> header_;
  int header_line_ = 0;
  std::vector<CsvRow> rows_;
};

}  // namespace capsim
