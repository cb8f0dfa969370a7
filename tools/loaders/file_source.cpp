#include "tools/loaders/file_source.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "sim/input_error.hpp"
#include "tools/loaders/sha256.hpp"

namespace capsim {

namespace fs = std::filesystem;

std::string FileSource::read(const std::string& path, std::string_view missing) {
  std::optional<std::string> bytes = fetch(path);
  if (!bytes) {
    throw InputError(InputErrorKind::kMissing, InputLocation{path, 0, 0, ""}, std::string(missing));
  }
  check_text_bytes(*bytes, path);  // every input capsim reads is text: UTF-8, no NUL
  reads_.push_back(FileRead{path, bytes->size(), sha256_hex(*bytes)});
  return std::move(*bytes);
}

YamlNode FileSource::yaml(const std::string& path) {
  return YamlNode::load_string(read(path), path);
}

std::vector<YamlNode> FileSource::yaml_docs(const std::string& path) {
  return YamlNode::load_all_string(read(path), path);
}

void FileSource::for_each_yaml_doc(const std::string& path,
                                   const std::function<void(const YamlNode&)>& fn) {
  YamlNode::for_each_document(read(path), path, fn);
}

CsvFile FileSource::csv(const std::string& path, const CsvOptions& opt) {
  std::string text = read(path);
  if (soft_limits_) {
    const auto lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
    if (lines > kCsvSoftMaxRows) {
      throw InputError(InputErrorKind::kInvalid, InputLocation{path, 0, 0, ""},
                       fmt::format("{} lines, above the limit of {} lines of a trace "
                                   "(docs/cli.md#limits); pass --force to read it anyway",
                                   lines, kCsvSoftMaxRows));
    }
  }
  return CsvFile::parse(text, path, opt);
}

std::string FileSource::read_log(const std::string& root) const {
  // Both sides absolute (lexically: only the working directory is looked up), so a relative
  // scenario path and an absolute --data-dir still relate.
  const fs::path base = fs::absolute(fs::path(root.empty() ? "." : root)).lexically_normal();
  std::string out;
  for (const FileRead& r : reads_) {
    fs::path rel = fs::absolute(fs::path(r.path)).lexically_normal().lexically_relative(base);
    const std::string shown = rel.empty() ? r.path : rel.generic_string();
    out += fmt::format("file {} {} {}\n", shown, r.bytes, r.sha256);
  }
  return out;
}

std::optional<std::string> RealFiles::fetch(const std::string& path) {
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  if (!ec && size > kMaxFileBytes) {
    throw InputError(
        InputErrorKind::kInvalid, InputLocation{path, 0, 0, ""},
        fmt::format("{} bytes, larger than any input may be ({} bytes)", size, kMaxFileBytes));
  }
  return read_file_bytes(path);
}

MemoryFiles& MemoryFiles::add(const std::string& path, std::string text) {
  files_[fs::path(path).lexically_normal().generic_string()] = std::move(text);
  return *this;
}

std::optional<std::string> MemoryFiles::fetch(const std::string& path) {
  auto it = files_.find(fs::path(path).lexically_normal().generic_string());
  if (it == files_.end()) return std::nullopt;
  return it->second;
}

}  // namespace capsim
