#include "tools/loaders/csv_reader.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <utility>

namespace capsim {

namespace {

[[noreturn]] void fail_at(const std::string& file, int line, const std::string& message) {
  throw InputError(InputErrorKind::kInvalid, InputLocation{file, line, 0, ""}, message);
}

bool is_blank(char c) {
  return c == ' ' || c == '\t';
}

// Splits text into records. Each record is a list of fields and the line it starts on.
class Tokenizer {
 public:
  Tokenizer(std::string_view text, const std::string& name, const CsvOptions& opt)
      : s_(text), name_(name), opt_(opt) {
    if (s_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;  // UTF-8 byte-order mark
  }

  // The next non-blank, non-comment record; false at the end of the text.
  bool next(CsvRow& row) {
    while (pos_ < s_.size()) {
      if (skip_blank_or_comment_line()) continue;
      row.line = line_;
      row.fields.clear();
      read_record(row.fields);
      return true;
    }
    return false;
  }

 private:
  bool at_end() const { return pos_ >= s_.size(); }
  bool at_line_end() const { return at_end() || s_[pos_] == '\n' || s_[pos_] == '\r'; }

  void consume_line_end() {
    if (at_end()) return;
    if (s_[pos_] == '\r') ++pos_;
    if (!at_end() && s_[pos_] == '\n') ++pos_;
    ++line_;
  }

  bool skip_blank_or_comment_line() {
    std::size_t p = pos_;
    while (p < s_.size() && is_blank(s_[p]))
      ++p;
    const bool blank = p >= s_.size() || s_[p] == '\n' || s_[p] == '\r';
    const bool comment = opt_.comment != '\0' && pos_ < s_.size() && s_[pos_] == opt_.comment;
    if (!blank && !comment) return false;
    while (!at_line_end())
      ++pos_;
    consume_line_end();
    return true;
  }

  void skip_blanks() {
    if (!opt_.trim) return;
    while (!at_end() && is_blank(s_[pos_]))
      ++pos_;
  }

  void read_record(std::vector<std::string>& fields) {
    const int start_line = line_;
    for (;;) {
      skip_blanks();
      std::string field;
      if (!at_end() && s_[pos_] == '"') {
        read_quoted(field, start_line, fields.size());
        skip_blanks();
        if (!at_line_end() && s_[pos_] != ',') {
          fail_at(name_, line_,
                  fmt::format("field {}: unexpected '{}' after a closing quote (a quoted field "
                              "ends at a comma or the end of the line)",
                              fields.size() + 1, s_[pos_]));
        }
      } else {
        while (!at_line_end() && s_[pos_] != ',') {
          if (s_[pos_] == '"') {
            fail_at(name_, line_,
                    fmt::format("field {}: a quote inside an unquoted field; quote the whole "
                                "field and double the quote (\"a \"\"b\"\"\")",
                                fields.size() + 1));
          }
          field += s_[pos_++];
        }
        if (opt_.trim) {
          while (!field.empty() && is_blank(field.back()))
            field.pop_back();
        }
      }
      fields.push_back(std::move(field));
      if (!at_end() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      consume_line_end();
      return;
    }
  }

  void read_quoted(std::string& field, int start_line, std::size_t index) {
    ++pos_;  // opening quote
    for (;;) {
      if (at_end()) {
        fail_at(name_, start_line,
                fmt::format("field {}: the quoted field never ends (a closing quote is missing)",
                            index + 1));
      }
      const char c = s_[pos_];
      if (c == '"') {
        if (pos_ + 1 < s_.size() && s_[pos_ + 1] == '"') {
          field += '"';
          pos_ += 2;
          continue;
        }
        ++pos_;
        return;
      }
      if (c == '\n') ++line_;
      field += c;
      ++pos_;
    }
  }

  std::string_view s_;
  const std::string& name_;
  const CsvOptions& opt_;
  std::size_t pos_ = 0;
  int line_ = 1;
};

}  // namespace

CsvFile CsvFile::parse(std::string_view text, const std::string& name, const CsvOptions& opt) {
  CsvFile f;
  f.name_ = name;
  Tokenizer tok(text, f.name_, opt);
  CsvRow header;
  if (!tok.next(header)) fail_at(name, 0, "the file is empty: a header row is required");
  f.header_line_ = header.line;
  for (std::size_t i = 0; i < header.fields.size(); ++i) {
    const std::string& h = header.fields[i];
    if (h.empty()) fail_at(name, header.line, fmt::format("header column {} has no name", i + 1));
    for (std::size_t j = 0; j < i; ++j) {
      if (header.fields[j] == h) {
        fail_at(name, header.line,
                fmt::format("column '{}' appears twice in the header (columns {} and {})", h, j + 1,
                            i + 1));
      }
    }
  }
  f.header_ = std::move(header.fields);
  CsvRow row;
  while (tok.next(row)) {
    if (row.fields.size() != f.header_.size()) {
      fail_at(name, row.line,
              fmt::format("the row has {} fields but the header has {} columns", row.fields.size(),
                          f.header_.size()));
    }
    f.rows_.push_back(std::move(row));
    row = CsvRow{};
  }
  return f;
}

std::optional<std::size_t> CsvFile::column(std::string_view name) const {
  for (std::size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] == name) return i;
  }
  return std::nullopt;
}

const std::string& CsvFile::field(const CsvRow& row, std::string_view name) const {
  const auto c = column(name);
  if (!c) fail(row, name, fmt::format("the header has no column '{}'", name));
  return row.fields.at(*c);
}

std::string CsvFile::field_or(const CsvRow& row, std::string_view name, std::string dflt) const {
  const auto c = column(name);
  return c ? row.fields.at(*c) : std::move(dflt);
}

InputLocation CsvFile::where(const CsvRow& row, std::string_view column) const {
  return InputLocation{name_, row.line, 0, fmt::format("column {}", column)};
}

void CsvFile::fail(const CsvRow& row, std::string_view column, const std::string& message) const {
  throw InputError(InputErrorKind::kInvalid, where(row, column), message);
}

void CsvFile::fail_header(const std::string& message) const {
  fail_at(name_, header_line_, message);
}

}  // namespace capsim
