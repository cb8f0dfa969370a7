// Where a scenario load gets its bytes. Every file a load reads comes through one FileSource: the
// scenario and the files it extends, traces, node lists, manifests, catalogs, mig-parted and
// device-plugin configs, Kueue and scheduler configuration files. The source remembers each read
// (path, size, SHA-256 of the bytes) in order, so the scenario's digest covers every input and not
// only the scenario file, and tests load whole scenarios from memory (MemoryFiles) the way
// LevelDB's Env and ninja's FileReader allow. A source belongs to one load; it is not shared
// between threads (`capsim sweep -j` gives each load its own).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/yaml_reader.hpp"
#include "tools/loaders/csv_reader.hpp"

namespace capsim {

struct FileRead {
  std::string path;  // as the loader asked for it
  std::size_t bytes = 0;
  std::string sha256;  // of the bytes
};

class FileSource {
 public:
  static constexpr std::string_view kCannotOpen =
      "cannot open file (does it exist and is it readable?)";

  virtual ~FileSource() = default;

  // The file's bytes, recorded in reads(). A file that cannot be read is
  // InputErrorKind::kMissing at {path, 0, 0}, with `missing` as the message; bytes that are not
  // UTF-8 text, or a NUL byte, are kInvalid at the line and column (check_text_bytes).
  std::string read(const std::string& path, std::string_view missing = kCannotOpen);

  // Parsed reads: YAML (one document, or every document of a multi-document file) and CSV.
  YamlNode yaml(const std::string& path);
  std::vector<YamlNode> yaml_docs(const std::string& path);
  // Every document of the file, one at a time (YamlNode::for_each_document), for files of many
  // manifests.
  void for_each_yaml_doc(const std::string& path, const std::function<void(const YamlNode&)>& fn);
  CsvFile csv(const std::string& path, const CsvOptions& opt = {});

  // Soft limits (docs/cli.md#limits): csv() refuses a file of more than kCsvSoftMaxRows lines
  // until they are lifted (--force).
  static constexpr std::size_t kCsvSoftMaxRows = 10'000'000;
  void lift_soft_limits() { soft_limits_ = false; }
  // Hard limit, never lifted: no input file may be larger than this.
  static constexpr std::uintmax_t kMaxFileBytes = std::uintmax_t{4} << 30;

  // Every read so far, in order (a file read twice is listed twice).
  const std::vector<FileRead>& reads() const { return reads_; }

  // One line per read, "file PATH BYTES SHA256", with PATH relative to `root` (the scenario's
  // directory), so the text, and a digest of it, do not depend on the working directory the load
  // ran in. Paths that have no relative form are written as read.
  std::string read_log(const std::string& root) const;

 protected:
  // The bytes at `path`, or nullopt when there is no readable file there.
  virtual std::optional<std::string> fetch(const std::string& path) = 0;

 private:
  std::vector<FileRead> reads_;
  bool soft_limits_ = true;
};

// The file system.
class RealFiles final : public FileSource {
 protected:
  std::optional<std::string> fetch(const std::string& path) override;
};

// Files held in memory, for tests: paths are compared after lexical normalisation ("a/./b.csv"
// and "a/b.csv" are one file), so relative references resolve as they would on disk.
class MemoryFiles final : public FileSource {
 public:
  MemoryFiles& add(const std::string& path, std::string text);

 protected:
  std::optional<std::string> fetch(const std::string& path) override;

 private:
  std::map<std::string, std::string> files_;
};

}  // namespace capsim
