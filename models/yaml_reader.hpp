// Strict, located access to YAML documents. Every value read through YamlNode knows its file,
// line, column and field path, so any error reads "scenario.yaml:12:7: cluster.pools[1].gpu.model:
// unknown GPU model 'A100' (did you mean A100-80GB?)". MapReader remembers which keys were read;
// finish() rejects the rest as unknown fields, with a suggestion when one is close. yaml-cpp
// exceptions never escape: they become InputError.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/input_error.hpp"
#include "sim/time.hpp"

namespace capsim {

class MapReader;

// Bounds checked while a YAML text is parsed, before any node tree exists (docs/cli.md#limits).
inline constexpr std::size_t kYamlMaxDepth = 64;              // nested mappings and lists
inline constexpr std::uint64_t kYamlMaxAliasNodes = 100'000;  // nodes reached through aliases

// Fails (InputError, kInvalid, at the file, line and column) on a NUL byte or on bytes that are
// not UTF-8. Every text input goes through it: YAML here, and FileSource::read for the rest.
void check_text_bytes(std::string_view text, const std::string& name);

// The whole content of a file (or a pipe or device read to its end), or nullopt when it cannot
// be opened or read. No checks on the bytes: callers pass them to check_text_bytes.
std::optional<std::string> read_file_bytes(const std::string& path);

class YamlNode {
 public:
  YamlNode(YAML::Node node, std::shared_ptr<const std::string> file, std::string path);

  // A whole file from disk, for files outside a scenario load (`capsim check` thresholds). A
  // missing or unreadable file is InputErrorKind::kMissing; a syntax error kInvalid. Loaders read
  // through their FileSource instead (tools/loaders/file_source.hpp: FileSource::yaml), so the
  // scenario digest covers the file and tests can load from memory.
  static YamlNode load_file(const std::string& path);
  // Text already read; `name` is the file name used in messages. Both forms refuse, as located
  // errors: bytes check_text_bytes refuses, a key repeated in one mapping, nesting deeper than
  // kYamlMaxDepth, aliases expanding to more than kYamlMaxAliasNodes nodes; load_string also
  // refuses a text holding more than one document (load_all_string is for those).
  static YamlNode load_string(const std::string& text, const std::string& name);
  static std::vector<YamlNode> load_all_string(const std::string& text, const std::string& name);
  // The documents of `text` one at a time, each parsed, checked as load_all_string checks it and
  // handed to `fn` before the next is parsed, so a file of 100,000 manifests never holds more
  // than one document's tree (unless `fn` keeps it). A document keeps its lines in the file.
  // Empty documents are skipped, as load_all_string skips them.
  static void for_each_document(const std::string& text, const std::string& name,
                                const std::function<void(const YamlNode&)>& fn);
  // The checks load_all_string makes (bytes, a key repeated in one mapping, nesting, alias
  // expansion), without building a tree: for readers that parse parts of a text alone.
  static void check_text(const std::string& text, const std::string& name);

  bool is_map() const { return node_.IsMap(); }
  bool is_seq() const { return node_.IsSequence(); }
  bool is_scalar() const { return node_.IsScalar(); }
  bool is_null() const { return !node_.IsDefined() || node_.IsNull(); }

  const std::string& file() const { return *file_; }
  const std::string& path() const { return path_; }
  int line() const;  // 1-based, 0 when unknown (a value set from the command line)
  InputLocation where() const;
  [[noreturn]] void fail(const std::string& message) const;

  // Scalars. Each fails with a message naming the expected form.
  std::string str() const;
  std::int64_t integer(std::int64_t min = INT64_MIN, std::int64_t max = INT64_MAX) const;
  double number(double min = -1e300, double max = 1e300) const;
  bool boolean() const;
  // A Kubernetes quantity scaled by 10^scale (0: units/bytes, 3: millicores); >= 0.
  std::int64_t quantity(int scale = 0) const;
  SimDuration duration() const;

  // Containers.
  std::vector<YamlNode> seq() const;  // fails unless a sequence (null gives an empty list)
  MapReader map() const;              // fails unless a mapping
  std::vector<std::pair<std::string, YamlNode>> entries() const;  // mapping entries in order

  // Where values under a field path came from, when a document was assembled from several
  // sources: --set options ("key=value") and files merged by `extends:`. where() reports the
  // option, or the file (the longest matching path prefix) with the node's own line.
  struct Provenance {
    std::vector<std::pair<std::string, std::string>> set_options;  // path -> "key=value"
    std::vector<std::pair<std::string, std::string>> files;        // path prefix -> file
    int line_offset = 0;  // lines of the file before the text the node was parsed from
  };
  YamlNode with_provenance(std::shared_ptr<const Provenance> provenance) const;

  const YAML::Node& raw() const { return node_; }
  std::shared_ptr<const std::string> file_ptr() const { return file_; }
  YamlNode child(const YAML::Node& n, const std::string& key_or_index) const;

 private:
  YAML::Node node_;
  std::shared_ptr<const std::string> file_;
  std::string path_;
  std::shared_ptr<const Provenance> provenance_;
};

class MapReader {
 public:
  explicit MapReader(YamlNode node);

  std::optional<YamlNode> opt(const std::string& key);
  YamlNode req(const std::string& key);
  bool has(const std::string& key) const;
  // Marks a key as understood without reading it.
  void ignore(const std::string& key);
  const YamlNode& node() const { return node_; }

  // Convenience readers with defaults.
  std::string str_or(const std::string& key, std::string dflt);
  std::int64_t int_or(const std::string& key, std::int64_t dflt, std::int64_t min = INT64_MIN,
                      std::int64_t max = INT64_MAX);
  double num_or(const std::string& key, double dflt, double min = -1e300, double max = 1e300);
  bool bool_or(const std::string& key, bool dflt);
  SimDuration duration_or(const std::string& key, SimDuration dflt);

  // Fails on the first key that was neither read nor ignored: "unknown field 'cpus' (did you
  // mean 'cpu'?)".
  void finish() const;

 private:
  // The mapping's entries, listed once (on first use) so each lookup compares keys instead of
  // walking yaml-cpp's iterators; `seen` marks the entries read or ignored.
  struct Entry {
    YAML::Node key;
    YAML::Node value;
    bool seen = false;
  };
  std::vector<Entry>& listed();
  std::optional<YAML::Node> find(const std::string& key);

  YamlNode node_;
  std::vector<Entry> entries_;
  bool listed_ = false;
  // Keys read or ignored but absent from the mapping; with the entries seen, the names a "did
  // you mean" suggests from.
  std::vector<std::string> queried_;
};

// The closest candidates to `word` by edit distance (at most 2 suggestions, distance <= 3 or a
// case-insensitive match), for "did you mean" hints.
std::vector<std::string> closest_names(std::string_view word,
                                       const std::vector<std::string>& candidates);
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// Applies "a.b[2].c=value" or "cluster.pools.b200.count=4" to a YAML tree: dotted keys, [index]
// into sequences, and a bare name selects the sequence element whose `name` field equals it. The
// value is parsed as YAML (numbers stay numbers). Returns the resolved field path (names
// replaced by indices, e.g. "cluster.pools[1].count"). Throws InputError naming the option on a
// path that does not resolve.
std::string apply_override(YAML::Node& root, const std::string& assignment);

// Deep-merges `overlay` onto `base` (in place): mappings merge key by key; a list whose items are
// all mappings with a `name` merges item by item by name (new names are appended); anything else
// is replaced. Returns the field paths whose values now come from the overlay.
std::vector<std::string> merge_overlay(YAML::Node& base, const YAML::Node& overlay,
                                       const std::string& path = "");

// True when `path` is `prefix` or lies under it ("a.b" is under "a", "a[1].c" under "a[1]").
bool path_under(const std::string& path, const std::string& prefix);

}  // namespace capsim
