#include "tools/loaders/k8s_dump.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <tuple>

#include "models/gpu_catalog.hpp"
#include "models/yaml_parse.hpp"
#include "sim/check.hpp"
#include "sim/device.hpp"
#include "sim/world.hpp"
#include "tools/loaders/duration_rules.hpp"
#include "tools/loaders/k8s_fields.hpp"
#include "tools/loaders/k8s_manifests.hpp"
#include "tools/loaders/scenario_loader.hpp"
#include "tools/loaders/world_builder.hpp"

namespace capsim {

namespace {

// --- time --------------------------------------------------------------------------------------

// Days since 1970-01-01 of a proleptic Gregorian date (the usual era arithmetic: eras of 400
// years of 146097 days, years counted from March so the leap day is last).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned mp = m > 2 ? m - 3 : m + 9;  // months from March
  const unsigned doy = (153 * mp + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

std::string format_rfc3339(std::int64_t t) {
  std::int64_t z = (t >= 0 ? t : t - 86399) / 86400;
  const std::int64_t secs = t - z * 86400;
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  const std::int64_t y = static_cast<std::int64_t>(yoe) + era * 400 + (m <= 2 ? 1 : 0);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", y, m, d, secs / 3600, secs / 60 % 60,
                     secs % 60);
}

// --- YAML output ---------------------------------------------------------------------------------

// A scalar as plain YAML when that reads back as the same string, else double-quoted, appended
// to `out`.
void append_scalar(std::string& out, std::string_view s) {
  bool plain = !s.empty() && s.front() != '-' && s.front() != '.';
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (!(std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '/')) {
      plain = false;
      break;
    }
  }
  if (plain && s.size() <= 5) {  // the length of the longest word below
    char lower[5];
    for (std::size_t i = 0; i < s.size(); ++i)
      lower[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
    const std::string_view l(lower, s.size());
    for (const char* word : {"true", "false", "yes", "no", "on", "off", "y", "n", "null"}) {
      if (l == word) plain = false;
    }
  }
  if (plain) {
    out += s;
    return;
  }
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\x{:02x}", static_cast<unsigned>(c));
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

std::string scalar(std::string_view s) {
  std::string out;
  append_scalar(out, s);
  return out;
}

void emit_map(std::string& out, const YAML::Node& n, int indent);
void emit_seq(std::string& out, const YAML::Node& n, int indent);

// The value after "key:" (or "- "): a scalar on the line, a collection on the lines below.
void emit_value(std::string& out, const YAML::Node& n, int indent) {
  if (!n.IsDefined() || n.IsNull()) {
    out += " null\n";
  } else if (n.IsScalar()) {
    out += ' ';
    append_scalar(out, n.Scalar());
    out += '\n';
  } else if (n.IsMap()) {
    if (n.size() == 0) {
      out += " {}\n";
      return;
    }
    out += "\n";
    emit_map(out, n, indent);
  } else {
    if (n.size() == 0) {
      out += " []\n";
      return;
    }
    out += "\n";
    emit_seq(out, n, indent);
  }
}

// The indices of `entries` in the order of their keys (`key(entry)`).
template <typename Entries, typename Key>
std::vector<std::size_t> key_order(const Entries& entries, Key key) {
  std::vector<std::size_t> order(entries.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return key(entries[a]) < key(entries[b]); });
  return order;
}

// Keys sorted, so the output does not depend on the key order of the input (kubectl's JSON
// follows the API types' field order, its YAML the alphabet).
// (YAML::Node assignment writes through to the node it refers to, so nodes are never sorted or
// assigned in containers here: orders are kept as indices.)
// (A key's text is the key node's scalar, which lives as long as the tree.)
void emit_map(std::string& out, const YAML::Node& n, int indent) {
  std::vector<std::pair<std::string_view, YAML::Node>> entries;
  entries.reserve(n.size());
  for (const auto& kv : n)
    entries.emplace_back(kv.first.Scalar(), kv.second);
  for (std::size_t i : key_order(entries, [](const auto& e) { return e.first; })) {
    out.append(static_cast<std::size_t>(indent), ' ');
    append_scalar(out, entries[i].first);
    out += ':';
    emit_value(out, entries[i].second, indent + 2);
  }
}

void emit_seq(std::string& out, const YAML::Node& n, int indent) {
  const auto pad = static_cast<std::size_t>(indent);
  for (const auto& item : n) {
    if (item.IsMap() && item.size() > 0) {
      // The mapping's first line with "- " in place of the two spaces before its key.
      const std::size_t at = out.size();
      emit_map(out, item, indent + 2);
      out[at + pad] = '-';
    } else {
      out.append(pad, ' ');
      out += '-';
      emit_value(out, item, indent + 2);
    }
  }
}

std::string emit_document(const YAML::Node& n) {
  std::string out;
  emit_map(out, n, 0);
  return out;
}

// A mapping assembled here rather than held as a node: each value already written as emit_value
// writes it (at the indent of the mapping's keys + 2). Written as emit_map writes a mapping.
using WrittenEntries = std::vector<std::pair<std::string, std::string>>;

void emit_written(std::string& out, WrittenEntries entries, int indent) {
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [key, value] : entries) {
    out.append(static_cast<std::size_t>(indent), ' ');
    append_scalar(out, key);
    out += ':';
    out += value;
  }
}

std::string written_value(const YAML::Node& n, int indent) {
  std::string out;
  emit_value(out, n, indent);
  return out;
}

// The indent of a written pod's spec fields.
constexpr int kSpecIndent = 2;

// A pod's spec as the replay writes it: the dump's spec with some top-level fields replaced or
// removed. The edits are kept apart, so the spec is written from the dump's own tree, not from a
// copy of it.
struct SpecEdits {
  std::map<std::string, YAML::Node> set;  // field -> its new value
  std::set<std::string> removed;
  // field -> its new value as emit_value writes it at the fields' indent + 2 (text shared by
  // many pods, written once)
  std::map<std::string, const std::string*> written;

  void put(const std::string& field, const YAML::Node& value) {
    set[field] = value;
    removed.erase(field);
    written.erase(field);
  }
  void put_written(const std::string& field, const std::string& text) {
    set.erase(field);
    removed.erase(field);
    written[field] = &text;
  }
  void remove(const std::string& field) {
    set.erase(field);
    written.erase(field);
    removed.insert(field);
  }
  // True when the spec has no `affinity` and none was put or removed.
  bool no_affinity(const YAML::Node& spec) const {
    return set.count("affinity") == 0 && removed.count("affinity") == 0 &&
           written.count("affinity") == 0 && !(spec.IsMap() && spec["affinity"]);
  }
  // A mapping holding the spec's `affinity` (a copy, or nothing yet), for prefer_node and
  // pin_node to edit; `put` it back with put("affinity", holder["affinity"]).
  YAML::Node affinity_holder(const YAML::Node& spec) const {
    CAPSIM_CHECK(written.count("affinity") == 0, "an affinity written as text was edited again");
    YAML::Node holder(YAML::NodeType::Map);
    if (const auto it = set.find("affinity"); it != set.end()) {
      holder["affinity"] = it->second;
    } else if (removed.count("affinity") == 0 && spec.IsMap() && spec["affinity"]) {
      holder["affinity"] = YAML::Clone(spec["affinity"]);
    }
    return holder;
  }

  // The spec's fields, edited, appended to `out` as emit_value writes them at `indent` (keys
  // sorted, as emit_map writes them).
  void write(std::string& out, const YAML::Node& spec, int indent) const {
    struct Field {
      std::string_view key;
      YAML::Node value;
      const std::string* text = nullptr;  // the value already written
    };
    std::vector<Field> entries;
    if (spec.IsMap()) {
      entries.reserve(spec.size() + set.size() + written.size());
      for (const auto& kv : spec) {
        const std::string& key = kv.first.Scalar();
        if (set.count(key) != 0 || removed.count(key) != 0 || written.count(key) != 0) continue;
        entries.push_back({key, kv.second});
      }
    }
    for (const auto& [key, value] : set)
      entries.push_back({key, value});
    for (const auto& [key, text] : written)
      entries.push_back({key, YAML::Node(), text});
    if (entries.empty()) {
      out += " {}\n";
      return;
    }
    out += '\n';
    for (std::size_t i : key_order(entries, [](const Field& f) { return f.key; })) {
      out.append(static_cast<std::size_t>(indent), ' ');
      append_scalar(out, entries[i].key);
      out += ':';
      if (entries[i].text != nullptr) {
        out += *entries[i].text;
      } else {
        emit_value(out, entries[i].value, indent + 2);
      }
    }
  }
};

// --- reading the dump ----------------------------------------------------------------------------

// One object of the dump, with the kind it has (or, in a kube-scheduler-simulator export, the
// kind of the list it is in).
struct DumpObject {
  YamlNode node;
  std::string api_version;
  std::string kind;
};

// What the importer did not carry over, counted: "what" -> how many, printed sorted.
using Tally = std::map<std::string, std::size_t>;

// The kube-scheduler-simulator export's lists (its ResourcesForImport: pods, nodes, pvs, pvcs,
// storageClasses, priorityClasses, schedulerConfig, namespaces) and their kinds.
const std::vector<std::pair<std::string, std::string>>& kss_lists() {
  static const std::vector<std::pair<std::string, std::string>> k = {
      {"pods", "Pod"},
      {"nodes", "Node"},
      {"priorityClasses", "PriorityClass"},
      {"pvs", "PersistentVolume"},
      {"pvcs", "PersistentVolumeClaim"},
      {"storageClasses", "StorageClass"},
      {"namespaces", "Namespace"},
      {"schedulerConfig", "KubeSchedulerConfiguration"}};
  return k;
}

void collect(const YamlNode& doc, std::vector<DumpObject>& out) {
  if (doc.is_null()) return;
  if (!doc.is_map()) doc.fail("a dump document is a mapping (a Kubernetes object or a List)");
  MapReader m = doc.map();
  if (!m.has("kind")) {
    if (m.has("mig-configs")) {
      out.push_back({doc, "", "mig-parted"});
      return;
    }
    bool kss = false;
    for (const auto& [key, value] : doc.entries()) {
      const auto it = std::find_if(kss_lists().begin(), kss_lists().end(),
                                   [&key = key](const auto& e) { return e.first == key; });
      if (it == kss_lists().end()) continue;
      kss = true;
      if (it->second == "KubeSchedulerConfiguration") {
        if (!value.is_null()) out.push_back({value, "", it->second});
        continue;
      }
      for (const YamlNode& item : value.seq())
        out.push_back({item, "", it->second});
    }
    if (!kss) {
      doc.fail(
          "neither a Kubernetes object (no kind), a List (kind: List, items) nor a "
          "kube-scheduler-simulator export (pods, nodes, ...)");
    }
    return;
  }
  const std::string kind = m.req("kind").str();
  const std::string api = m.has("apiVersion") ? m.req("apiVersion").str() : "";
  if (kind == "List" || (kind.size() > 4 && kind.ends_with("List") && m.has("items"))) {
    for (const YamlNode& item : m.req("items").seq())
      collect(item, out);
    return;
  }
  out.push_back({doc, api, kind});
}

YamlNode req(const YamlNode& n, const std::string& key) {
  MapReader m = n.map();
  return m.req(key);
}

std::optional<YamlNode> opt(const YamlNode& n, const std::string& key) {
  if (n.is_null()) return std::nullopt;
  if (!n.is_map()) (void)n.map();  // fails, saying what it found
  for (const auto& kv : n.raw()) {
    if (kv.first.IsScalar() && kv.first.Scalar() == key) {
      if (kv.second.IsNull()) return std::nullopt;
      return n.child(kv.second, key);
    }
  }
  return std::nullopt;
}

std::int64_t timestamp(const YamlNode& n) {
  const auto t = parse_rfc3339(n.str());
  if (!t) n.fail(fmt::format("'{}' is not an RFC 3339 time (e.g. 2026-11-30T08:00:00Z)", n.str()));
  return *t;
}

std::string label(const std::map<std::string, std::string>& labels, const std::string& key) {
  const auto it = labels.find(key);
  return it == labels.end() ? "" : it->second;
}

constexpr const char* kArrival = "capsim.io/arrival";
constexpr const char* kArrivalMark = "capsim-arrival-mark";  // emitted plain, replaced

// The pass an object of `kind` belongs to (import_kubernetes_dump, step 1).
int pass_of(std::string_view kind) {
  return kind == "Node" ? 1 : kind == "Pod" ? 2 : 0;
}

// A kubectl `-o yaml` List (`apiVersion: v1`, `items:` with each item at column 0 as "- ...",
// then `kind: List`) split into its items' text without parsing the whole: the start offset and
// 0-based line of each item, and its kind when a top-level `kind:` line tells it. Empty when the
// text is not of that shape (then it is parsed whole).
struct ItemText {
  std::size_t begin = 0, end = 0;
  int line = 0;
  std::string kind;
};

std::vector<ItemText> split_kubectl_list(const std::string& text) {
  std::vector<ItemText> items;
  bool in_items = false, done = false;
  int line = 0;
  for (std::size_t pos = 0; pos < text.size(); ++line) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    const std::string_view l(text.data() + pos, eol - pos);
    if (l.starts_with("---") || l.starts_with("...")) return {};  // several documents
    if (!in_items) {
      if (l == "items:" || l == "items:\r") in_items = true;
    } else if (!done && l.starts_with("- ")) {
      if (!items.empty()) items.back().end = pos;
      items.push_back({pos, text.size(), line, ""});
    } else if (!done && !l.empty() && l.front() != ' ' && l.front() != '#' && l.front() != '\r') {
      if (!items.empty()) items.back().end = pos;
      done = true;
    }
    if (!items.empty() && items.back().kind.empty() && !done) {
      // The item's own kind: on its first line ("- kind: Pod") or a line at its keys' indent.
      const std::string_view prefix = pos == items.back().begin ? "- kind: " : "  kind: ";
      if (l.starts_with(prefix)) {
        std::string_view k = l.substr(prefix.size());
        if (!k.empty() && k.back() == '\r') k.remove_suffix(1);
        items.back().kind = std::string(k);
      }
    }
    pos = eol + 1;
  }
  if (!in_items) return {};
  return items;
}

// Calls `fn` with each object of a dump file that belongs to pass `which` (pass_of), and checks
// the text's structure as the loader checks a file (`checked`: whether the whole text has been).
void for_each_object(const std::string& path, const std::string& text, int which, bool& checked,
                     const std::function<void(const DumpObject&)>& fn) {
  const std::vector<ItemText> items = split_kubectl_list(text);
  if (items.empty()) {
    std::vector<DumpObject> objects;
    for (const YamlNode& doc : YamlNode::load_all_string(text, path))
      collect(doc, objects);
    for (const DumpObject& o : objects) {
      if (pass_of(o.kind) == which) fn(o);
    }
    return;
  }
  // The text is checked as the loader checks a file (bytes, repeated keys, nesting, aliases), so
  // the import refuses what `capsim run` on its output would. The fast path makes those checks
  // on each item it takes (nested in the List's mapping and its items list); the List's own
  // keys are checked with the items' lines left blank; and the first item the fast path
  // declines has the whole text checked, by yaml-cpp's rules, before it is read.
  if (which == 0) {
    const std::size_t items_begin = items.front().begin, items_end = items.back().end;
    const auto item_lines = static_cast<std::size_t>(
        std::count(text.begin() + static_cast<std::ptrdiff_t>(items_begin),
                   text.begin() + static_cast<std::ptrdiff_t>(items_end), '\n'));
    std::string outer = text.substr(0, items_begin);
    outer.append(item_lines, '\n');
    outer.append(text, items_end);
    YamlNode::check_text(outer, path);
  }
  const auto file = std::make_shared<const std::string>(path);
  // The objects of item `i` (its tree `node`) to `fn`; an error at a line of the tree is moved
  // `shift` lines, to the file's.
  auto deliver = [&](std::size_t i, const YAML::Node& node, int shift) {
    try {
      std::vector<DumpObject> objects;
      collect(YamlNode(node, file, fmt::format("items[{}]", i)), objects);
      for (const DumpObject& o : objects) {
        if (pass_of(o.kind) == which) fn(o);
      }
    } catch (const InputError& e) {
      if (e.where().file != path || e.where().line <= 0) throw;
      InputLocation at = e.where();
      at.line += shift;
      throw InputError(e.kind(), at, e.message());
    }
  };
  // Item `i` parsed alone, as a document of its own: "- " becomes "  ", so its lines keep their
  // columns; lines are counted from the item, and errors moved back to the file's lines.
  auto alone = [&](std::size_t i) {
    const ItemText& it = items[i];
    std::string item = text.substr(it.begin, it.end - it.begin);
    item[0] = ' ';
    // The fast path (models/yaml_parse.hpp) builds the tree yaml-cpp would, and checks the item
    // as part of the file; an item it declines has the whole text checked first (errors at the
    // file's lines).
    std::optional<std::vector<YAML::Node>> fast = fast_load_all(item, true, 2);
    if (!(fast && fast->size() == 1) && !checked) {
      YamlNode::check_text(text, path);
      checked = true;
    }
    YAML::Node node;
    try {
      node = fast && fast->size() == 1 ? fast->front() : YAML::Load(item);
    } catch (const YAML::Exception& e) {
      throw InputError(InputErrorKind::kInvalid,
                       InputLocation{path, e.mark.line + 1 + it.line, e.mark.column + 1,
                                     fmt::format("items[{}]", i)},
                       e.msg);
    }
    deliver(i, node, it.line);
  };
  // The items of this pass go through one libyaml parser a chunk at a time, as the documents of
  // one text ("---" before each), so an item is not charged a parser's set-up; each is handed on
  // as its document ends, so one item's tree is held at a time. The first item a chunk's parse
  // declines (a document the fast path does not take, or one that is not a mapping), and an item
  // at the end of the text without a line break, are read alone, as above: a chunk reads as its
  // items would alone, only faster.
  struct NotAMapping {};
  class ChunkSink final : public DocumentSink {
   public:
    explicit ChunkSink(const std::function<void(std::size_t, const YAML::Node&)>& item_done)
        : item_done_(item_done) {}
    void start(std::size_t) override {}
    void end(YAML::Node doc) override {
      if (!doc.IsMap()) throw NotAMapping{};
      item_done_(done, doc);
      ++done;
    }
    std::size_t done = 0;  // documents handed on

   private:
    const std::function<void(std::size_t, const YAML::Node&)>& item_done_;
  };
  constexpr std::size_t kChunkItems = 256, kChunkBytes = 1 << 20;
  auto in_pass = [&](std::size_t i) {
    return items[i].kind.empty() || pass_of(items[i].kind) == which;
  };
  std::string chunk;
  std::vector<std::size_t> members;
  std::vector<int> member_lines;  // the 0-based line of the chunk each member starts at
  std::size_t next = 0;
  while (next < items.size()) {
    chunk.clear();
    members.clear();
    member_lines.clear();
    int lines = 0;
    for (; next < items.size() && members.size() < kChunkItems && chunk.size() < kChunkBytes;
         ++next) {
      if (!in_pass(next)) continue;
      const ItemText& it = items[next];
      if (text[it.end - 1] != '\n') break;  // read alone (a line break could change its text)
      chunk += "---\n";
      ++lines;
      members.push_back(next);
      member_lines.push_back(lines);
      const std::size_t at = chunk.size();
      chunk.append(text, it.begin, it.end - it.begin);
      chunk[at] = ' ';
      lines += static_cast<int>(
          std::count(chunk.begin() + static_cast<std::ptrdiff_t>(at), chunk.end(), '\n'));
    }
    if (members.empty()) {
      if (next < items.size()) alone(next++);
      continue;
    }
    const std::function<void(std::size_t, const YAML::Node&)> item_done =
        [&](std::size_t k, const YAML::Node& node) {
          deliver(members[k], node, items[members[k]].line - member_lines[k]);
        };
    ChunkSink sink(item_done);
    try {
      (void)fast_stream(chunk, sink, 2);  // declined when not every document was handed on
    } catch (const NotAMapping&) {
    }
    if (sink.done < members.size()) {
      // Resume after the items handed on: the one the parse stopped in alone, the rest anew.
      const std::size_t stopped = members[sink.done];
      alone(stopped);
      next = stopped + 1;
    }
  }
}

// --- nodes ---------------------------------------------------------------------------------------

struct NodeOut {
  std::string name;
  std::string pool;
  double speed = 1.0;  // the GPU model's relative_speed (1 without GPUs)
  const GpuModel* model = nullptr;
  YAML::Node fields;  // the scenario entry without name/pool/count
  std::string key;    // fields as text: nodes with the same key are identical
};

std::string memory_text(std::int64_t bytes) {
  constexpr std::int64_t kMi = 1024 * 1024;
  if (bytes % (kMi * 1024) == 0) return fmt::format("{}Gi", bytes / (kMi * 1024));
  if (bytes % kMi == 0) return fmt::format("{}Mi", bytes / kMi);
  if (bytes % 1024 == 0) return fmt::format("{}Ki", bytes / 1024);
  return std::to_string(bytes);
}

std::string quantity_text(const std::string& resource, std::int64_t v) {
  if (resource == "cpu") return v % 1000 == 0 ? std::to_string(v / 1000) : fmt::format("{}m", v);
  if (resource == "memory" || resource == "ephemeral-storage" ||
      resource.rfind("hugepages-", 0) == 0) {
    return memory_text(v);
  }
  return std::to_string(v);
}

struct Importer {
  explicit Importer(const DumpImportOptions& o) : options(o) {}

  const DumpImportOptions& options;
  const GpuCatalog& catalog = GpuCatalog::builtin();
  Tally not_carried;  // kinds and fields
  std::vector<std::string> notes;
  std::set<std::string> mig_config_names;  // defined by mig-parted inputs
  std::vector<DumpOutputFile> mig_files;
  std::set<std::string> priority_classes;
  std::set<std::string> namespaces;
  std::vector<YAML::Node> cluster_docs;  // PriorityClasses and Namespaces, written before the pods

  void mig_parted(const DumpObject& o) {
    // A raw mig-parted file, or a ConfigMap whose keys hold one (the GPU Operator's).
    YAML::Node doc;
    if (o.kind == "mig-parted") {
      for (const auto& [name, v] : req(o.node, "mig-configs").entries())
        mig_config_names.insert(name);
      doc = YAML::Clone(o.node.raw());
    } else {
      const YamlNode meta = req(o.node, "metadata");
      doc["apiVersion"] = "v1";
      doc["kind"] = "ConfigMap";
      doc["metadata"]["name"] = req(meta, "name").str();
      if (auto ns = opt(meta, "namespace")) doc["metadata"]["namespace"] = ns->str();
      for (const auto& [key, value] : req(o.node, "data").entries()) {
        doc["data"][key] = value.str();
        const YamlNode parsed = YamlNode::load_string(value.str(), value.file() + ":" + key);
        if (auto cfgs = parsed.is_map() ? opt(parsed, "mig-configs") : std::nullopt) {
          for (const auto& [name, v] : cfgs->entries())
            mig_config_names.insert(name);
        }
      }
    }
    mig_files.push_back({fmt::format("mig-parted-{}.yaml", mig_files.size()), emit_document(doc)});
  }

  bool is_mig_parted_configmap(const DumpObject& o) const {
    if (o.kind != "ConfigMap") return false;
    const auto data = opt(o.node, "data");
    if (!data) return false;
    for (const auto& [key, value] : data->entries()) {
      if (value.is_scalar() && value.str().find("mig-configs") != std::string::npos) return true;
    }
    return false;
  }

  // A Node as a scenario node entry, or nullopt (reported by name) when capsim cannot model it.
  std::optional<NodeOut> node(const DumpObject& o) {
    const YamlNode meta = req(o.node, "metadata");
    NodeOut out;
    out.name = req(meta, "name").str();
    if (auto p = object_name_problem(out.name); !p.empty()) {
      req(meta, "name")
          .fail(fmt::format("metadata.name '{}' is one the API server refuses: {}", out.name, p));
    }
    std::map<std::string, std::string> labels;
    std::optional<YamlNode> labels_node = opt(meta, "labels");
    if (labels_node) {
      for (const auto& [k, v] : labels_node->entries()) {
        if (const std::string p = label_key_problem(k); !p.empty()) {
          v.fail(fmt::format("invalid label key '{}': {}", k, p));
        }
        labels[k] = v.is_null() ? "" : v.str();
        if (const std::string p = label_value_problem(labels[k]); !p.empty()) {
          v.fail(fmt::format("invalid label value '{}': {}", labels[k], p));
        }
      }
    }
    const YamlNode status = req(o.node, "status");
    const YamlNode cap_node = req(status, "capacity");
    std::map<std::string, std::int64_t> cap, alloc;
    for (const ResourceAmount& a : parse_resource_amounts(cap_node, ResourceScope::kNode))
      cap[a.name] = a.value;
    alloc = cap;
    if (auto a = opt(status, "allocatable")) {
      for (const ResourceAmount& r : parse_resource_amounts(*a, ResourceScope::kNode))
        alloc[r.name] = r.value;
    }
    if (cap["cpu"] == 0 || cap["memory"] == 0) {
      cap_node.fail("a Node's status.capacity needs cpu and memory");
    }
    auto skip = [&](const std::string& why) -> std::optional<NodeOut> {
      notes.push_back(fmt::format("node {} is not carried over: {}", out.name, why));
      return std::nullopt;
    };

    YAML::Node f;
    // GPUs: GPU Feature Discovery's labels (nvidia.com/gpu.product, gpu.count; MIG single
    // strategy appends -MIG-<profile> to the product, sharing appends -SHARED).
    std::string product = label(labels, "nvidia.com/gpu.product");
    const std::string explicit_model = label(labels, "capsim.io/gpu-model");
    bool single_mig_product = false;
    if (const auto pos = product.find("-MIG-"); pos != std::string::npos) {
      product.resize(pos);
      single_mig_product = true;
    }
    if (product.ends_with("-SHARED")) product.resize(product.size() - 7);
    const std::string sharing = label(labels, "nvidia.com/gpu.sharing-strategy");
    std::int64_t replicas = 1;
    if (const std::string r = label(labels, "nvidia.com/gpu.replicas"); !r.empty()) {
      replicas = req(*labels_node, "nvidia.com/gpu.replicas").integer(1, 1000);
    }
    bool mig_resources = false;
    for (const auto& [name, v] : cap) {
      if (name.rfind("nvidia.com/mig-", 0) == 0 && v > 0) mig_resources = true;
    }
    const std::int64_t advertised =
        cap["nvidia.com/gpu"] > 0 ? cap["nvidia.com/gpu"] : cap["nvidia.com/gpu.shared"];
    std::int64_t gpus = 0;
    if (const std::string c = label(labels, "nvidia.com/gpu.count"); !c.empty()) {
      gpus = req(*labels_node, "nvidia.com/gpu.count").integer(0, 64);
    } else if (sharing == "time-slicing" || sharing == "mps") {
      gpus = advertised / replicas;
    } else {
      gpus = advertised;
    }
    if (gpus > 0 && advertised == 0 && !mig_resources && !single_mig_product) gpus = 0;
    if (advertised > 0 || mig_resources) {
      const GpuModel* model = nullptr;
      if (!explicit_model.empty()) {
        model = catalog.find(explicit_model);
      } else if (!product.empty()) {
        model = catalog.find(product);
      }
      if (model == nullptr) {
        return skip(product.empty() && explicit_model.empty()
                        ? "it has GPUs but no nvidia.com/gpu.product label (GPU Feature "
                          "Discovery) to tell their model"
                        : fmt::format("GPU product '{}' is not in capsim's catalog (`capsim "
                                      "catalog`; a capsim.io/gpu-model label names one)",
                                      explicit_model.empty() ? product : explicit_model));
      }
      if (gpus == 0) {
        return skip(
            "it advertises GPUs or MIG devices but no nvidia.com/gpu.count label tells how many "
            "physical GPUs it has");
      }
      f["gpu"]["model"] = model->name;
      out.speed = model->relative_speed > 0 ? model->relative_speed : 1.0;
      out.model = model;
      f["gpu"]["count"] = gpus;
      if (alloc["nvidia.com/gpu"] < cap["nvidia.com/gpu"]) {
        ++not_carried
            ["Node status.allocatable nvidia.com/gpu below capacity (unhealthy GPUs): capsim "
             "uses every GPU"];
      }
      // MIG: the layout mig-manager applied (nvidia.com/mig.config) under the device plugin's
      // strategy (nvidia.com/mig.strategy).
      const std::string mig_config = label(labels, "nvidia.com/mig.config");
      std::string strategy = label(labels, "nvidia.com/mig.strategy");
      if (strategy.empty()) strategy = single_mig_product ? "single" : "mixed";
      if (mig_resources || single_mig_product) {
        if (mig_config.empty() || mig_config == "all-disabled") {
          return skip(
              "it advertises MIG devices but has no nvidia.com/mig.config label naming the "
              "layout (mig-manager sets it)");
        }
        const bool preset =
            std::any_of(model->mig_presets.begin(), model->mig_presets.end(),
                        [&](const MigLayoutPreset& p) { return p.name == mig_config; });
        if (!preset && mig_config_names.count(mig_config) == 0) {
          return skip(fmt::format(
              "its MIG layout nvidia.com/mig.config={} is no preset of {} and no mig-parted "
              "config among the inputs defines it (give the GPU Operator's mig-parted ConfigMap "
              "as an input)",
              mig_config, model->name));
        }
        if (strategy != "single" && strategy != "mixed") {
          return skip(fmt::format("unknown nvidia.com/mig.strategy '{}'", strategy));
        }
        f["mig"]["config"] = mig_config;
        f["mig"]["strategy"] = strategy;
      }
      if ((sharing == "time-slicing" || sharing == "mps") && replicas > 1) {
        // The device plugin's sharing config, as its labels tell it (gpu.replicas).
        YAML::Node res;
        res["name"] = "nvidia.com/gpu";
        res["replicas"] = replicas;
        YAML::Node cfg;
        cfg["version"] = "v1";
        const char* mode = sharing == "mps" ? "mps" : "timeSlicing";
        cfg["sharing"][mode]["resources"].push_back(res);
        if (cap["nvidia.com/gpu.shared"] > 0) cfg["sharing"][mode]["renameByDefault"] = true;
        f["sharing"] = cfg;
      }
    } else if (mig_resources || single_mig_product) {
      return skip("it advertises MIG devices without a GPU model");
    }
    if (labels.count("nvidia.com/device-plugin.config") != 0) {
      // capsim reads the sharing from the gpu.replicas labels; the config the label names is not
      // among the inputs.
      ++not_carried
          ["Node label nvidia.com/device-plugin.config (sharing is read from "
           "nvidia.com/gpu.replicas and gpu.sharing-strategy)"];
      labels.erase("nvidia.com/device-plugin.config");
    }
    if (label(labels, "kubernetes.io/hostname") == out.name) labels.erase("kubernetes.io/hostname");
    if (!f["mig"] && labels.count("nvidia.com/mig.config") != 0 && !f["gpu"]) {
      labels.erase("nvidia.com/mig.config");  // a MIG label on a node without GPUs means nothing
    }

    f["cpu"] = quantity_text("cpu", cap["cpu"]);
    f["memory"] = quantity_text("memory", cap["memory"]);
    if (cap["pods"] > 0) {
      // The scenario loader's bound on a node's pod capacity (kubelet's maxPods is far below).
      if (cap["pods"] > 100000) {
        req(cap_node, "pods")
            .fail(fmt::format("{} pods is out of range: a node holds between 1 and 100000",
                              cap["pods"]));
      }
      f["pods"] = cap["pods"];
    }
    if (cap["ephemeral-storage"] > 0) {
      f["ephemeral_storage"] = quantity_text("ephemeral-storage", cap["ephemeral-storage"]);
    }
    YAML::Node resources, reserved;
    for (const auto& [name, v] : cap) {
      const bool gpu_resource = name == "nvidia.com/gpu" || name == "nvidia.com/gpu.shared" ||
                                name.rfind("nvidia.com/mig-", 0) == 0;
      if (gpu_resource) continue;
      const bool base =
          name == "cpu" || name == "memory" || name == "pods" || name == "ephemeral-storage";
      if (!base && v > 0) {
        // The scenario loader refuses a typo of a GPU resource; so does the import.
        if (const std::string typo = gpu_resource_typo(name); !typo.empty()) {
          req(cap_node, name).fail(typo);
        }
        resources[name] = quantity_text(name, v);
      }
      const std::int64_t a = alloc.count(name) ? alloc[name] : v;
      if (a < v && (base || v > 0)) reserved[name] = quantity_text(name, v - a);
    }
    for (const auto& [name, v] : alloc) {
      if (cap.count(name) == 0 && v > 0) {
        opt(status, "allocatable")
            ->fail(fmt::format("allocatable names {}, which capacity does not", name));
      }
    }
    if (resources.size() > 0) f["resources"] = resources;
    if (reserved.size() > 0) f["reserved"] = reserved;
    if (!labels.empty()) {
      for (const auto& [k, v] : labels)
        f["labels"][k] = v;
    }
    if (auto spec = opt(o.node, "spec")) {
      if (auto t = opt(*spec, "taints")) {
        for (const YamlNode& taint : t->seq()) {
          YAML::Node tn;
          tn["key"] = req(taint, "key").str();
          if (auto v = opt(taint, "value")) tn["value"] = v->str();
          tn["effect"] = req(taint, "effect").str();
          f["taints"].push_back(tn);
        }
      }
      if (auto u = opt(*spec, "unschedulable"); u && u->boolean()) f["unschedulable"] = true;
    }
    out.pool = label(labels, "capsim.io/pool");
    // The cloud's node pool labels, else the instance type.
    for (const char* key :
         {"cloud.google.com/gke-nodepool", "eks.amazonaws.com/nodegroup", "karpenter.sh/nodepool",
          "kubernetes.azure.com/agentpool", "node.kubernetes.io/instance-type"}) {
      if (out.pool.empty()) out.pool = label(labels, key);
    }
    if (out.pool.empty()) {
      out.pool = f["gpu"] ? fmt::format("{}-{}gpu", f["gpu"]["model"].Scalar(), gpus) : "cpu";
      for (char& c : out.pool)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    out.fields = f;
    out.key = emit_document(f);
    return out;
  }
};

// `nodes` grouped: identical nodes named <pool>-0 .. <pool>-(n-1) become one pool entry with a
// count (capsim names pool nodes that way), every other node a single node entry.
std::string cluster_yaml(const std::vector<NodeOut>& nodes, std::size_t& pool_count,
                         std::size_t& single_count) {
  std::map<std::pair<std::string, std::string>, std::vector<const NodeOut*>> groups;
  for (const NodeOut& n : nodes)
    groups[{n.pool, n.key}].push_back(&n);
  std::map<std::string, std::size_t> groups_per_pool;
  for (const auto& [k, v] : groups)
    ++groups_per_pool[k.first];
  YAML::Node pools, singles;
  for (const auto& [k, members] : groups) {
    std::set<std::string> names;
    for (const NodeOut* n : members)
      names.insert(n->name);
    bool as_pool = groups_per_pool[k.first] == 1;
    for (std::size_t i = 0; as_pool && i < members.size(); ++i)
      as_pool = names.count(fmt::format("{}-{}", k.first, i)) == 1;
    if (as_pool) {
      YAML::Node p = YAML::Clone(members.front()->fields);
      p["name"] = k.first;
      p["count"] = members.size();
      pools.push_back(p);
      continue;
    }
    for (const NodeOut* n : members) {
      YAML::Node s = YAML::Clone(n->fields);
      s["name"] = n->name;
      s["pool"] = n->pool;
      singles.push_back(s);
    }
  }
  pool_count = pools.size();
  single_count = singles.size();
  // Pools in name order, single nodes in name order: the order of the dump does not matter.
  auto by_name = [](const YAML::Node& list) {
    std::vector<std::pair<std::string, std::size_t>> order;
    for (std::size_t i = 0; i < list.size(); ++i)
      order.emplace_back(list[i]["name"].Scalar(), i);
    std::sort(order.begin(), order.end());
    YAML::Node out;
    for (const auto& [name, i] : order)
      out.push_back(list[i]);
    return out;
  };
  YAML::Node cluster;
  if (pools.size() > 0) cluster["pools"] = by_name(pools);
  if (singles.size() > 0) cluster["nodes"] = by_name(singles);
  std::string out;
  emit_map(out, cluster, 2);
  return out;
}

// --- pods ----------------------------------------------------------------------------------------

struct PodOut {
  std::string namespace_, name;
  std::int64_t arrival = 0;  // Unix seconds, made relative at the end
  std::map<std::string, std::string> annotations;
  std::string text;  // the document, kArrivalMark where its arrival goes
};

// The container runs a pod's status records (init containers too): the earliest start, the
// latest finish, restarts.
struct ContainerRuns {
  std::optional<std::int64_t> start, finish;
  std::int64_t restarts = 0;
  std::size_t running = 0;
};

ContainerRuns container_runs(const YamlNode& status) {
  ContainerRuns r;
  auto earliest = [](std::optional<std::int64_t>& v, std::int64_t t) {
    v = v ? std::min(*v, t) : t;
  };
  for (const char* list : {"initContainerStatuses", "containerStatuses"}) {
    const auto l = opt(status, list);
    if (!l) continue;
    for (const YamlNode& c : l->seq()) {
      if (auto n = opt(c, "restartCount")) r.restarts += n->integer(0);
      const auto state = opt(c, "state");
      if (!state) continue;
      if (auto run = opt(*state, "running")) {
        ++r.running;
        if (auto s = opt(*run, "startedAt")) earliest(r.start, timestamp(*s));
      }
      if (auto term = opt(*state, "terminated")) {
        if (auto s = opt(*term, "startedAt")) earliest(r.start, timestamp(*s));
        if (auto f = opt(*term, "finishedAt")) {
          const std::int64_t t = timestamp(*f);
          r.finish = r.finish ? std::max(*r.finish, t) : t;
        }
      }
    }
  }
  return r;
}

void prefer_node(YAML::Node spec, const std::string& node) {
  YAML::Node term;
  term["weight"] = 100;
  YAML::Node field;
  field["key"] = "metadata.name";
  field["operator"] = "In";
  field["values"].push_back(node);
  term["preference"]["matchFields"].push_back(field);
  spec["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"].push_back(
      term);
}

// A required node affinity to `node`, ANDed into every existing term (terms are ORed).
void pin_node(YAML::Node spec, const std::string& node) {
  YAML::Node field;
  field["key"] = "metadata.name";
  field["operator"] = "In";
  field["values"].push_back(node);
  YAML::Node required =
      spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
  YAML::Node terms = required["nodeSelectorTerms"];
  if (!terms.IsSequence() || terms.size() == 0) {
    YAML::Node t;
    t["matchFields"].push_back(field);
    required["nodeSelectorTerms"].push_back(t);
    return;
  }
  for (YAML::Node t : terms) {
    YAML::Node fields = t["matchFields"];
    bool has = false;
    for (const auto& fl : fields)
      has = has || fl["key"].Scalar() == "metadata.name";
    if (!has) t["matchFields"].push_back(field);
  }
}

constexpr const char* kSmFraction = "capsim.io/gpu-sm-fraction";

// Calls `fn` with each resource name a pod's containers and init containers request or limit.
void for_each_container_resource(const YamlNode& spec,
                                 const std::function<void(const std::string&)>& fn) {
  for (const char* list : {"initContainers", "containers"}) {
    const auto l = opt(spec, list);
    if (!l) continue;
    for (const YamlNode& c : l->seq()) {
      const auto res = opt(c, "resources");
      if (!res) continue;
      for (const char* part : {"requests", "limits"}) {
        const auto m = opt(*res, part);
        if (!m) continue;
        for (const auto& [k, v] : m->entries())
          fn(k);
      }
    }
  }
}

// The compute width of the narrowest MIG instance a pod asks for on `model`, as capsim's device
// units have it (mig_instance_capacity), rounded down to 6 digits; nullopt when it asks for none.
std::optional<double> mig_width(const YamlNode& spec, const GpuModel& model) {
  std::optional<double> width;
  for_each_container_resource(spec, [&](const std::string& k) {
    constexpr std::string_view kMig = "nvidia.com/mig-";
    if (k.rfind(kMig, 0) != 0) return;
    const MigProfile* p = model.find_profile(k.substr(kMig.size()));
    if (p == nullptr || model.sms <= 0 || model.mig_memory_slots <= 0) return;
    const double w =
        mig_instance_capacity(p->sms, model.sms, p->memory_slices, model.mig_memory_slots);
    const double down = std::floor(w * 1e6) / 1e6;
    width = width ? std::min(*width, down) : down;
  });
  return width;
}

// Whether a container asks for an NVIDIA device (whole GPU, replica or MIG instance).
bool requests_gpus(const YamlNode& spec) {
  bool any = false;
  for_each_container_resource(
      spec, [&any](const std::string& k) { any = any || k.rfind("nvidia.com/", 0) == 0; });
  return any;
}

std::string seconds_text(std::int64_t s) {
  return fmt::format("{}s", s);
}

}  // namespace

std::optional<std::int64_t> parse_rfc3339(std::string_view s) {
  auto digits = [&](std::size_t at, std::size_t n) -> std::optional<int> {
    if (at + n > s.size()) return std::nullopt;
    int v = 0;
    for (std::size_t i = at; i < at + n; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(s[i]))) return std::nullopt;
      v = v * 10 + (s[i] - '0');
    }
    return v;
  };
  if (s.size() < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') ||
      s[13] != ':' || s[16] != ':') {
    return std::nullopt;
  }
  const auto y = digits(0, 4), mo = digits(5, 2), d = digits(8, 2), h = digits(11, 2),
             mi = digits(14, 2), sec = digits(17, 2);
  if (!y || !mo || !d || !h || !mi || !sec || *mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h > 23 ||
      *mi > 59 || *sec > 60) {
    return std::nullopt;
  }
  std::size_t i = 19;
  if (i < s.size() && s[i] == '.') {
    ++i;
    const std::size_t start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])))
      ++i;
    if (i == start) return std::nullopt;
  }
  std::int64_t offset = 0;
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) {
    ++i;
  } else if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    const auto oh = digits(i + 1, 2), om = digits(i + 4, 2);
    if (!oh || !om || i + 3 >= s.size() || s[i + 3] != ':') return std::nullopt;
    offset = (s[i] == '+' ? 1 : -1) * (*oh * 3600 + *om * 60);
    i += 6;
  } else {
    return std::nullopt;
  }
  if (i != s.size()) return std::nullopt;
  return days_from_civil(*y, static_cast<unsigned>(*mo), static_cast<unsigned>(*d)) * 86400 +
         *h * 3600 + *mi * 60 + *sec - offset;
}

DumpImport import_kubernetes_dump(FileSource& files, const std::vector<std::string>& paths,
                                  const DumpImportOptions& options) {
  // 1. The objects of every file, Lists and exports unpacked, in three passes (mig-parted
  // configs and priority classes, then nodes, then pods: each needs what the one before found),
  // so that no more than one List item is held parsed at a time.
  std::vector<std::pair<std::string, std::string>> texts;
  for (const std::string& path : paths)
    texts.emplace_back(path, files.read(path));
  Importer im(options);
  // What the dump carries over is first checked as capsim's own loaders read it (errors point
  // into the dump): the import refuses what `capsim run` would refuse of its output.
  World scratch;
  WorldBuilder scratch_builder(scratch, GpuCatalog::builtin());
  const DurationRules any_duration =
      DurationRules::parse(YamlNode::load_string("- long_running: true", "<import>"), 1);
  ManifestOptions check;
  check.durations = &any_duration;
  auto check_as_loader = [&](const DumpObject& o, const char* api_version, const char* kind) {
    if (!o.api_version.empty()) {
      load_manifest_docs({o.node}, scratch_builder, check);
      return;
    }
    // The loaders want apiVersion and kind, which an export's items lack.
    YAML::Node copy = YAML::Clone(o.node.raw());
    copy["apiVersion"] = api_version;
    copy["kind"] = kind;
    load_manifest_docs({YamlNode(copy, o.node.file_ptr(), o.node.path())}, scratch_builder, check);
  };
  std::vector<char> checked(texts.size(), 0);
  auto pass = [&texts, &checked](int which, const std::function<void(const DumpObject&)>& fn) {
    std::size_t i = 0;
    for (const auto& [path, text] : texts) {
      bool whole = checked[i] != 0;
      for_each_object(path, text, which, whole, fn);
      checked[i++] = whole ? 1 : 0;
    }
  };
  pass(0, [&](const DumpObject& o) {
    if (o.kind == "mig-parted" || im.is_mig_parted_configmap(o)) {
      im.mig_parted(o);
    } else if (o.kind == "PriorityClass") {
      const std::string name = req(req(o.node, "metadata"), "name").str();
      if (!im.priority_classes.insert(name).second) return;
      check_as_loader(o, "scheduling.k8s.io/v1", "PriorityClass");
      YAML::Node pc;
      pc["apiVersion"] = "scheduling.k8s.io/v1";
      pc["kind"] = "PriorityClass";
      pc["metadata"]["name"] = name;
      pc["value"] = req(o.node, "value").integer(-2147483648LL, 1000000000LL);
      for (const char* key : {"globalDefault", "preemptionPolicy", "description"}) {
        if (auto v = opt(o.node, key)) pc[key] = v->str();
      }
      im.cluster_docs.push_back(pc);
    } else if (o.kind == "Namespace") {
      // Carried over with its labels: the namespaceSelectors of pod affinity terms and Kueue
      // ClusterQueues match them.
      const YamlNode meta = req(o.node, "metadata");
      const std::string name = req(meta, "name").str();
      if (!im.namespaces.insert(name).second) return;
      check_as_loader(o, "v1", "Namespace");
      YAML::Node ns;
      ns["apiVersion"] = "v1";
      ns["kind"] = "Namespace";
      ns["metadata"]["name"] = name;
      if (auto labels = opt(meta, "labels")) {
        for (const auto& [key, value] : labels->entries())
          ns["metadata"]["labels"][key] = value.str();
      }
      im.cluster_docs.push_back(ns);
    } else if (o.kind != "Node" && o.kind != "Pod") {
      const std::string owner_note = o.kind == "Job" || o.kind == "ReplicaSet" ||
                                             o.kind == "StatefulSet" || o.kind == "DaemonSet" ||
                                             o.kind == "Deployment"
                                         ? " (its pods are carried over, with their owner)"
                                         : "";
      ++im.not_carried[fmt::format("{}{}{}", o.api_version.empty() ? "" : o.api_version + " ",
                                   o.kind, owner_note)];
    }
  });

  // 2. Nodes.
  std::vector<NodeOut> nodes;
  std::set<std::string> node_names;
  std::map<std::string, double> node_speed;
  std::map<std::string, const GpuModel*> node_model;
  pass(1, [&](const DumpObject& obj) {
    const DumpObject* o = &obj;
    auto n = im.node(*o);
    if (!n) return;
    // Taints as the scenario loader reads them (their syntax, unique by key and effect).
    if (auto spec = opt(o->node, "spec")) {
      if (auto t = opt(*spec, "taints")) (void)parse_taints(*t, scratch_builder);
    }
    if (!node_names.insert(n->name).second) {
      req(req(o->node, "metadata"), "name").fail(fmt::format("node '{}' appears twice", n->name));
    }
    node_speed[n->name] = n->speed;
    node_model[n->name] = n->model;
    nodes.push_back(std::move(*n));
  });
  // 3. Pods: each checked as capsim's Pod loader reads it (errors point into the dump), then
  // rewritten for the replay.
  std::vector<PodOut> pods;
  std::set<std::pair<std::string, std::string>> pod_keys;
  std::optional<std::int64_t> t0, latest;
  auto see = [&latest](std::int64_t t) { latest = latest ? std::max(*latest, t) : t; };
  std::size_t finished = 0, failed = 0, running = 0, pending = 0, moved = 0;
  // node -> the preferred affinity to it, written as a pod's spec.affinity (kPrefer)
  std::map<std::string, std::string> preferred_affinity;
  pass(2, [&](const DumpObject& obj) {
    const DumpObject* o = &obj;
    const YamlNode meta = req(o->node, "metadata");
    const std::string name = req(meta, "name").str();
    const auto ns_node = opt(meta, "namespace");
    const std::string ns = ns_node ? ns_node->str() : "default";
    if (!pod_keys.insert({ns, name}).second) {
      req(meta, "name").fail(fmt::format("pod {}/{} appears twice", ns, name));
    }
    check_as_loader(*o, "v1", "Pod");
    const YamlNode spec = req(o->node, "spec");
    const std::int64_t created = timestamp(req(meta, "creationTimestamp"));
    see(created);
    const auto status = opt(o->node, "status");
    const std::string phase =
        status && opt(*status, "phase") ? req(*status, "phase").str() : std::string("Pending");
    const ContainerRuns runs = status ? container_runs(*status) : ContainerRuns{};
    if (runs.start) see(*runs.start);
    if (runs.finish) see(*runs.finish);
    std::optional<std::int64_t> scheduled;
    if (auto conds = status ? opt(*status, "conditions") : std::nullopt) {
      for (const YamlNode& c : conds->seq()) {
        if (req(c, "type").str() != "PodScheduled" || req(c, "status").str() != "True") continue;
        if (auto t = opt(c, "lastTransitionTime")) {
          scheduled = timestamp(*t);
          see(*scheduled);
        }
      }
    }
    std::string node_name;
    if (auto nn = opt(spec, "nodeName")) node_name = nn->str();
    if (opt(spec, "resourceClaims")) {
      ++im.not_carried["Pod with spec.resourceClaims (DRA claims are not imported)"];
      return;
    }
    if (auto del = opt(meta, "deletionTimestamp")) {
      ++im.not_carried
            ["Pod metadata.deletionTimestamp (terminating pods replay as if not deleted)"];
    }

    PodOut p;
    p.namespace_ = ns;
    p.name = name;
    p.arrival = created;
    // The document written (step 4) is {apiVersion, kind, metadata, spec}: metadata with the
    // name, namespace, labels, ownerReferences and annotations, spec the dump's, edited.
    WrittenEntries metadata;
    metadata.emplace_back("name", " " + scalar(name) + "\n");
    metadata.emplace_back("namespace", " " + scalar(ns) + "\n");
    for (const char* key : {"labels", "ownerReferences"}) {
      if (auto v = opt(meta, key)) metadata.emplace_back(key, written_value(v->raw(), 4));
    }
    std::map<std::string, std::string>& ann = p.annotations;
    if (auto v = opt(meta, "annotations")) {
      for (const auto& [k, value] : v->entries())
        ann[k] = value.is_null() ? "" : value.str();
    }
    SpecEdits out_spec;
    out_spec.remove("nodeName");
    const bool ran = phase == "Succeeded" || phase == "Failed";
    const bool on_node = !node_name.empty() && (phase == "Running" || phase == "Pending");
    const bool node_kept = node_names.count(node_name) != 0;
    if (ran) {
      if (!runs.start || !runs.finish) {
        std::string reason = status && opt(*status, "reason") ? req(*status, "reason").str() : "";
        ++im.not_carried[fmt::format("Pod {} without a container run{}", phase,
                                     reason.empty() ? "" : " (" + reason + ")")];
        return;
      }
      ++finished;
      if (phase == "Failed") {
        ++failed;
        ann["capsim.io/fails"] = "true";
      }
      // capsim.io/duration is the run on the reference GPU (A100-80GB): the recorded run on a
      // GPU of relative speed s did s x its time of reference work.
      const std::int64_t wall = std::max<std::int64_t>(0, *runs.finish - *runs.start);
      const auto speed = node_speed.find(node_name);
      if (speed != node_speed.end() && speed->second != 1.0 && requests_gpus(spec)) {
        ann["capsim.io/duration"] =
            fmt::format("{}ms", std::llround(static_cast<double>(wall) * 1000.0 * speed->second));
      } else {
        ann["capsim.io/duration"] = seconds_text(wall);
      }
      // A pod that ran on a MIG instance used no more of the GPU than the instance: its width
      // (capsim.io/gpu-sm-fraction) is the instance's, so the replay does not stretch the run
      // it records there (docs/import-kubernetes.md).
      if (const auto m = node_model.find(node_name); m != node_model.end() && m->second) {
        if (const auto width = mig_width(spec, *m->second); width && ann.count(kSmFraction) == 0) {
          ann[kSmFraction] = fmt::format("{:.6f}", *width);
        }
      }
      // The pod ran once, as its status shows; a replay that restarted it would run it again.
      out_spec.put("restartPolicy", YAML::Node("Never"));
      if (!node_name.empty() && node_kept) {
        if (options.placement == DumpImportOptions::Placement::kPrefer &&
            out_spec.no_affinity(spec.raw())) {
          // Most pods have no affinity of their own: theirs is the same for every pod that ran
          // on the node, built and written once.
          auto [at, fresh] = preferred_affinity.try_emplace(node_name);
          if (fresh) {
            YAML::Node holder(YAML::NodeType::Map);
            prefer_node(holder, node_name);
            emit_value(at->second, holder["affinity"], kSpecIndent + 2);
          }
          out_spec.put_written("affinity", at->second);
        } else if (options.placement == DumpImportOptions::Placement::kPrefer) {
          YAML::Node holder = out_spec.affinity_holder(spec.raw());
          prefer_node(holder, node_name);
          out_spec.put("affinity", holder["affinity"]);
        } else if (options.placement == DumpImportOptions::Placement::kBind) {
          out_spec.put("nodeName", YAML::Node(node_name));
          p.arrival = scheduled ? *scheduled : *runs.start;
        }
      } else if (!node_name.empty()) {
        ++moved;
      }
    } else if (on_node) {
      ++running;
      if (node_kept) {
        // Bound where it runs, from the moment it was bound there (the wait before is not
        // replayed: it is over).
        p.arrival = scheduled ? *scheduled : runs.start ? *runs.start : created;
        if (options.running == DumpImportOptions::Running::kBind) {
          out_spec.put("nodeName", YAML::Node(node_name));
        } else {
          YAML::Node holder = out_spec.affinity_holder(spec.raw());
          pin_node(holder, node_name);
          out_spec.put("affinity", holder["affinity"]);
        }
      } else {
        ++moved;
      }
    } else if (phase == "Pending") {
      ++pending;
    } else {
      ++im.not_carried[fmt::format("Pod in phase {}", phase)];
      return;
    }
    if (runs.restarts > 0) {
      ++im.not_carried
            ["Pod status.containerStatuses[].restartCount > 0 (each pod runs once for its recorded "
             "time)"];
    }
    if (auto pc = opt(spec, "priorityClassName")) {
      const std::string c = pc->str();
      if (im.priority_classes.count(c) == 0 && c != "system-node-critical" &&
          c != "system-cluster-critical") {
        // The class is not in the dump; the priority admission resolved it to is kept.
        ++im.not_carried
              ["Pod spec.priorityClassName of a PriorityClass not in the dump (spec.priority is "
               "kept)"];
        out_spec.remove("priorityClassName");
      }
    }
    if (auto sn = opt(spec, "schedulerName"); sn && sn->str() != "default-scheduler") {
      ++im.not_carried
            ["Pod spec.schedulerName other than default-scheduler (capsim's profile "
             "schedules it)"];
    }
    // A pod is not bound or started before it exists; times that say so (clocks of the API
    // server, scheduler and kubelet apart) arrive when it was created, never before time 0.
    p.arrival = std::max(p.arrival, created);
    t0 = t0 ? std::min(*t0, created) : created;
    // The text now, the arrival (relative to a time 0 known only at the end) later.
    std::map<std::string, std::string> annotations = p.annotations;
    annotations[kArrival] = kArrivalMark;
    std::string annotations_text = "\n";
    for (const auto& [k, v] : annotations) {
      annotations_text += "    ";
      append_scalar(annotations_text, k);
      annotations_text += ": ";
      append_scalar(annotations_text, v);
      annotations_text += '\n';
    }
    metadata.emplace_back("annotations", std::move(annotations_text));
    std::string metadata_text = "\n";
    emit_written(metadata_text, std::move(metadata), 2);
    // {apiVersion, kind, metadata, spec}, in emit_map's order.
    p.text += "apiVersion: v1\nkind: Pod\nmetadata:";
    p.text += metadata_text;
    p.text += "spec:";
    out_spec.write(p.text, spec.raw(), kSpecIndent);
    pods.push_back(std::move(p));
  });
  if (moved > 0) {
    im.notes.push_back(fmt::format(
        "{} pod(s) ran on a node that is not carried over: they are replayed unplaced", moved));
  }
  if (!t0) t0 = latest ? *latest : 0;
  const std::int64_t end = options.dump_time ? *options.dump_time : latest.value_or(*t0);
  if (end < *t0) {
    throw InputError(InputErrorKind::kInvalid, InputLocation{"--at", 0, 0, ""},
                     "the dump time is before the first pod's creation");
  }

  // A scenario without nodes is one `capsim run` refuses; so is the dump it would come from.
  if (nodes.empty()) {
    throw InputError(
        InputErrorKind::kInvalid, InputLocation{paths.empty() ? "" : paths.front(), 0, 0, ""},
        im.notes.empty() ? "the dump holds no Node, so the replay would have no cluster (dump "
                           "the nodes too: kubectl get nodes,pods -A -o yaml)"
                         : "no Node of the dump is carried over, so the replay would have no "
                           "cluster: " +
                               im.notes.front());
  }

  // 4. The files.
  std::vector<std::size_t> order(pods.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(), [&pods](std::size_t i, std::size_t j) {
    const PodOut& a = pods[i];
    const PodOut& b = pods[j];
    return std::tie(a.arrival, a.namespace_, a.name) < std::tie(b.arrival, b.namespace_, b.name);
  });
  std::string pods_text =
      "# Pods of the dump, as capsim replays them: capsim.io/arrival is the time since time 0\n"
      "# (see scenario.yaml), capsim.io/duration the run a finished pod's status records.\n";
  for (const YAML::Node& pc : im.cluster_docs)
    pods_text += "---\n" + emit_document(pc);
  std::size_t size = pods_text.size();
  for (const PodOut& p : pods)
    size += p.text.size() + 32;  // "---\n" and the arrival in place of its mark
  pods_text.reserve(size);
  for (std::size_t i : order) {
    const PodOut& p = pods[i];
    const std::size_t mark = p.text.find(kArrivalMark);
    pods_text += "---\n";
    pods_text.append(p.text, 0, mark);
    pods_text += seconds_text(p.arrival - *t0);
    pods_text.append(p.text, mark + std::string_view(kArrivalMark).size());
  }

  std::size_t pool_count = 0, single_count = 0;
  const std::string cluster = nodes.empty() ? "" : cluster_yaml(nodes, pool_count, single_count);
  std::string sc;
  sc += "# Imported by capsim import kubernetes (docs/import-kubernetes.md) from:\n";
  for (const std::string& p : paths)
    sc += fmt::format("#   {}\n", p);
  sc += fmt::format(
      "# Time 0 is {}, the earliest pod creationTimestamp in the dump.\n"
      "# The replay ends at {}, the time of the dump{}.\n",
      format_rfc3339(*t0), format_rfc3339(end),
      options.dump_time ? " (--at)" : " (its latest timestamp)");
  sc += fmt::format("name: {}\n", scalar(options.name));
  const std::int64_t horizon_s = end - *t0 + 1;
  sc += fmt::format("simulation:\n  horizon: {}\n", seconds_text(horizon_s));
  // The sample table within the loader's soft limit (docs/cli.md#limits) without --force: at
  // most kSoftMaxSampleRows / series samples, series = 1 + pools, so the interval is
  // ceil(horizon / (that x 60 s)) minutes when one minute, the default, is too fine.
  const std::int64_t max_samples = kSoftMaxSampleRows / static_cast<std::int64_t>(1 + pool_count);
  const std::int64_t minutes = (horizon_s + 60 * max_samples - 1) / (60 * max_samples);
  if (minutes > 1) {
    sc += fmt::format(
        "  # {} samples of a minute would pass the sample table's limit (docs/cli.md#limits)\n"
        "  sample_interval: {}m\n",
        horizon_s / 60, minutes);
  }
  if (!cluster.empty()) sc += "cluster:\n" + cluster;
  if (!im.mig_files.empty()) {
    sc += "mig_configs:\n";
    for (const DumpOutputFile& f : im.mig_files)
      sc += fmt::format("  - {}\n", f.name);
  }
  sc += "manifests:\n  - pods.yaml\n";
  sc +=
      "# Pods running or pending at the dump have no recorded end: they run until the end of the\n"
      "# replay. Put rules before this one to give them run times (match on kind, namespace,\n"
      "# labels, name or queue; docs/kubernetes-manifests.md#durations-without-annotations).\n"
      "durations:\n"
      "  - long_running: true\n";

  DumpImport r;
  r.files.push_back({std::string(kDumpOutputNames[0]), sc});
  r.files.push_back({std::string(kDumpOutputNames[1]), std::move(pods_text)});
  for (DumpOutputFile& f : im.mig_files)
    r.files.push_back(std::move(f));
  r.nodes = nodes.size();
  r.pods = pods.size();
  r.report.push_back(fmt::format(
      "{} node(s) ({} pool(s), {} single node(s)), {} pod(s): {} finished ({} failed), {} "
      "running at the dump ({}), {} pending",
      nodes.size(), pool_count, single_count, pods.size(), finished, failed, running,
      options.running == DumpImportOptions::Running::kBind ? "bound on their nodes"
                                                           : "pinned to their nodes",
      pending));
  for (const std::string& n : im.notes)
    r.report.push_back(n);
  for (const auto& [what, n] : im.not_carried)
    r.report.push_back(fmt::format("not carried over: {} x {}", n, what));
  return r;
}

}  // namespace capsim
