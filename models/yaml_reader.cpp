#include "models/yaml_reader.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>

#include "models/yaml_parse.hpp"
#include "sim/quantity.hpp"

namespace capsim {

YamlNode::YamlNode(YAML::Node node, std::shared_ptr<const std::string> file, std::string path)
    : node_(std::move(node)), file_(std::move(file)), path_(std::move(path)) {}

std::optional<std::string> read_file_bytes(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return std::nullopt;
  std::string out;
  // A regular file is read at its size in one buffer; anything else (a pipe, a device, a
  // directory, whose "size" may be huge) grows by chunks, or fails to read.
  struct stat st {};
  if (::fstat(::fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
      static_cast<std::uint64_t>(st.st_size) < out.max_size()) {
    out.reserve(static_cast<std::size_t>(st.st_size) + 1);
  }
  char chunk[1 << 16];
  for (;;) {
    if (out.capacity() - out.size() >= sizeof chunk) {
      const std::size_t at = out.size();
      out.resize(out.capacity());
      const std::size_t got = std::fread(out.data() + at, 1, out.size() - at, f);
      out.resize(at + got);
      if (got == 0) break;
    } else {
      const std::size_t got = std::fread(chunk, 1, sizeof chunk, f);
      if (got == 0) break;
      out.append(chunk, got);
    }
  }
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return std::nullopt;
  return out;
}

namespace {

std::string read_file_or_throw(const std::string& path) {
  std::optional<std::string> text = read_file_bytes(path);
  if (!text) {
    throw InputError(InputErrorKind::kMissing, InputLocation{path, 0, 0, ""},
                     "cannot open file (does it exist and is it readable?)");
  }
  return std::move(*text);
}

[[noreturn]] void throw_parse_error(const YAML::Exception& e, const std::string& name) {
  InputLocation where{name, e.mark.line >= 0 ? e.mark.line + 1 : 0,
                      e.mark.column >= 0 ? e.mark.column + 1 : 0, ""};
  throw InputError(InputErrorKind::kInvalid, where, "malformed YAML: " + e.msg);
}

[[noreturn]] void fail_at(const std::string& name, const YAML::Mark& m, const std::string& msg) {
  throw InputError(
      InputErrorKind::kInvalid,
      InputLocation{name, m.line >= 0 ? m.line + 1 : 0, m.column >= 0 ? m.column + 1 : 0, ""}, msg);
}

// Walks the parser's events before any node tree is built (yaml-cpp keeps the last of two equal
// keys silently and expands nothing itself, but every reader that walks the tree expands aliases),
// and refuses, at the offending mark: a key given twice in one mapping, nesting deeper than
// kYamlMaxDepth, more than kYamlMaxAliasNodes nodes reached through aliases (the "billion laughs"
// document: each alias counts every node of the subtree it names, aliases inside it included),
// and, when `single` is set, a second document. Sizes saturate at the bound, so the count never
// overflows however the aliases nest.
class StructureCheck final : public YAML::EventHandler {
 public:
  // `line_offset`: lines of the file before `text` (a document of it parsed alone).
  StructureCheck(const std::string& name, bool single, int line_offset = 0)
      : name_(name), single_(single), line_offset_(line_offset) {}

  void OnDocumentStart(const YAML::Mark& mark) override {
    ++documents_;
    if (single_ && documents_ > 1) {
      fail_at(name_, shifted(mark),
              "a second YAML document ('---'): this file must hold exactly one document");
    }
    // yaml-cpp 0.7 (Debian 12's) starts one empty document after another at a token it cannot
    // place, such as the ',' of "{{}},", without consuming it: LoadAll then never returns
    // (yaml-cpp issue 1040, fixed in 0.8). A document starting where the last one did is that.
    if (documents_ > 1 && mark.pos == last_start_) {
      fail_at(name_, shifted(mark), "unexpected character: this is not valid YAML here");
    }
    last_start_ = mark.pos;
    anchor_sizes_.clear();
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    leaf(mark, std::nullopt, anchor, 1);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    const auto it = anchor_sizes_.find(anchor);
    const std::uint64_t size = it == anchor_sizes_.end() ? 1 : it->second;
    aliased_ = saturating_add(aliased_, size);
    if (aliased_ > kYamlMaxAliasNodes) {
      fail_at(name_, shifted(mark),
              fmt::format("aliases expand to more than {} nodes (an alias expansion bomb?)",
                          kYamlMaxAliasNodes));
    }
    leaf(mark, std::nullopt, YAML::NullAnchor, size);
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string& value) override {
    leaf(mark, value, anchor, 1);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, false, anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, true, anchor);
  }
  void OnMapEnd() override { close(); }

  int documents() const { return documents_; }

 private:
  struct Frame {
    bool is_map = false;
    bool expect_key = true;
    YAML::anchor_t anchor = YAML::NullAnchor;
    std::uint64_t size = 1;
    std::map<std::string, int, std::less<>> keys;  // key -> 1-based line
  };

  static std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
    const std::uint64_t cap = kYamlMaxAliasNodes + 1;
    return a >= cap || b >= cap || a + b >= cap ? cap : a + b;
  }

  // A node begins inside the innermost container: a key of a mapping (checked for repeats) or a
  // value. `key` is the scalar's text when the node is a scalar.
  void enter(const YAML::Mark& mark, const std::optional<std::string>& key) {
    if (stack_.empty() || !stack_.back().is_map) return;
    Frame& f = stack_.back();
    if (f.expect_key) {
      if (key) {
        const auto [it, fresh] = f.keys.emplace(*key, mark.line + 1 + line_offset_);
        if (!fresh && *key != "<<") {
          fail_at(name_, shifted(mark),
                  fmt::format("duplicate key '{}' (first given on line {}): a mapping's keys "
                              "must be unique",
                              *key, it->second));
        }
      }
      f.expect_key = false;
    } else {
      f.expect_key = true;
    }
  }
  void add_size(std::uint64_t size) {
    if (!stack_.empty()) stack_.back().size = saturating_add(stack_.back().size, size);
  }
  void leaf(const YAML::Mark& mark, const std::optional<std::string>& key, YAML::anchor_t anchor,
            std::uint64_t size) {
    enter(mark, key);
    if (anchor != YAML::NullAnchor) anchor_sizes_[anchor] = size;
    add_size(size);
  }
  void open(const YAML::Mark& mark, bool is_map, YAML::anchor_t anchor) {
    enter(mark, std::nullopt);
    if (stack_.size() >= kYamlMaxDepth) {
      fail_at(name_, shifted(mark),
              fmt::format("nesting deeper than {} levels of mappings and lists", kYamlMaxDepth));
    }
    Frame f;
    f.is_map = is_map;
    f.anchor = anchor;
    stack_.push_back(std::move(f));
  }
  void close() {
    const Frame f = std::move(stack_.back());
    stack_.pop_back();
    if (f.anchor != YAML::NullAnchor) anchor_sizes_[f.anchor] = f.size;
    add_size(f.size);
  }

  YAML::Mark shifted(YAML::Mark m) const {
    if (m.line >= 0) m.line += line_offset_;
    return m;
  }

  const std::string& name_;
  bool single_;
  int line_offset_;
  int documents_ = 0;
  int last_start_ = -1;  // where the last document started (Mark::pos)
  std::uint64_t aliased_ = 0;
  std::vector<Frame> stack_;
  std::map<YAML::anchor_t, std::uint64_t> anchor_sizes_;
};

// The structure checks through yaml-cpp's parser: the reference, and the path that names the
// error when the fast one (models/yaml_parse.hpp) declines.
void check_structure_slow(const std::string& text, const std::string& name, bool single,
                          int line_offset) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  StructureCheck check(name, single, line_offset);
  while (parser.HandleNextDocument(check)) {
  }
}

void check_structure(const std::string& text, const std::string& name, bool single,
                     int line_offset = 0) {
  if (line_offset == 0) check_text_bytes(text, name);  // a part's bytes were checked whole
  if (fast_check(text, single)) return;
  check_structure_slow(text, name, single, line_offset);
}

// The documents of `text` after check_structure's checks, built on the fast path when it takes
// the text (one pass), else by yaml-cpp after its check (which throws the located error). With
// `single`, exactly one node: YAML::Load's (a null node for a text without a document).
std::vector<YAML::Node> parse_checked(std::string_view view, const std::string& name, bool single,
                                      int line_offset = 0) {
  if (line_offset == 0) check_text_bytes(view, name);
  if (auto docs = fast_load_all(view, single)) {
    if (single && docs->empty()) docs->emplace_back();
    return std::move(*docs);
  }
  const std::string text(view);  // yaml-cpp's path reads a string
  check_structure_slow(text, name, single, line_offset);
  if (single) return {YAML::Load(text)};
  return YAML::LoadAll(text);
}

}  // namespace

void check_text_bytes(std::string_view text, const std::string& name) {
  std::size_t i = 0;  // the start of the character being checked
  // Where `i` is, for a message: the line, and the column in characters (everything before `i`
  // is valid UTF-8, so a character is a byte that does not continue one).
  const auto fail = [&](const std::string& what) {
    int line = 1;
    std::size_t line_start = 0;
    for (std::size_t k = 0; k < i; ++k) {
      if (text[k] == '\n') {
        ++line;
        line_start = k + 1;
      }
    }
    int column = 1;
    for (std::size_t k = line_start; k < i; ++k)
      column += (static_cast<unsigned char>(text[k]) & 0xC0u) != 0x80u ? 1 : 0;
    throw InputError(InputErrorKind::kInvalid, InputLocation{name, line, column, ""}, what);
  };
  while (i < text.size()) {
    // Eight bytes at a time while they are ASCII and not NUL (no high bit, no zero byte).
    if (i + 8 <= text.size()) {
      std::uint64_t w = 0;
      std::memcpy(&w, text.data() + i, 8);
      const std::uint64_t high = w & 0x8080808080808080ull;
      const std::uint64_t zero = (w - 0x0101010101010101ull) & ~w & 0x8080808080808080ull;
      if ((high | zero) == 0) {
        i += 8;
        continue;
      }
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == 0) fail("a NUL byte: a text file must not contain one");
    std::size_t len = 1;
    std::uint32_t cp = c;
    if (c >= 0x80) {
      // UTF-8 (RFC 3629): 2-4 byte sequences, no overlong forms, no surrogates, <= U+10FFFF.
      if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        cp = c & 0x1Fu;
      } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        cp = c & 0x0Fu;
      } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        cp = c & 0x07u;
      } else {
        fail(fmt::format("invalid UTF-8 (byte 0x{:02X} cannot start a character)", c));
      }
      if (i + len > text.size()) fail("invalid UTF-8 (a character is cut off at the end)");
      for (std::size_t k = 1; k < len; ++k) {
        const auto cc = static_cast<unsigned char>(text[i + k]);
        if ((cc & 0xC0u) != 0x80u)
          fail(fmt::format("invalid UTF-8 (byte 0x{:02X} cannot continue a character)", cc));
        cp = (cp << 6) | (cc & 0x3Fu);
      }
      const bool overlong = (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
      if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        fail(fmt::format("invalid UTF-8 (an overlong, surrogate or out-of-range code point)"));
    }
    i += len;
  }
}

YamlNode YamlNode::load_string(const std::string& text, const std::string& name) {
  auto file = std::make_shared<const std::string>(name);
  try {
    return YamlNode(parse_checked(text, name, true).front(), file, "");
  } catch (const YAML::Exception& e) {
    throw_parse_error(e, name);
  }
}

std::vector<YamlNode> YamlNode::load_all_string(const std::string& text, const std::string& name) {
  auto file = std::make_shared<const std::string>(name);
  std::vector<YamlNode> out;
  try {
    for (auto& doc : parse_checked(text, name, false)) {
      if (doc.IsNull()) continue;  // "---" separators with nothing between them
      out.emplace_back(doc, file, "");
    }
  } catch (const YAML::Exception& e) {
    throw_parse_error(e, name);
  }
  return out;
}

void YamlNode::check_text(const std::string& text, const std::string& name) {
  try {
    check_structure(text, name, false);
  } catch (const YAML::Exception& e) {
    throw_parse_error(e, name);
  }
}

void YamlNode::for_each_document(const std::string& text, const std::string& name,
                                 const std::function<void(const YamlNode&)>& fn) {
  check_text_bytes(text, name);
  // Documents begin at "---" lines (a marker YAML forbids inside any scalar, so the split is
  // exact). A directive ("%YAML") belongs to the document after it; such rare files are parsed
  // whole.
  std::vector<std::size_t> starts{0};
  std::vector<int> start_lines{0};
  int line = 0;
  bool directive = false;
  for (std::size_t at = 0; at < text.size() && !directive;) {
    const std::size_t eol = std::min(text.find('\n', at), text.size());
    const std::string_view l(text.data() + at, eol - at);
    directive = !l.empty() && l.front() == '%';
    if (at > 0 && l.size() >= 3 && l.compare(0, 3, "---") == 0 &&
        (l.size() == 3 || l[3] == ' ' || l[3] == '\t' || l[3] == '\r')) {
      starts.push_back(at);
      start_lines.push_back(line);
    }
    at = eol + 1;
    ++line;
  }
  if (directive) {
    for (const YamlNode& d : load_all_string(text, name))
      fn(d);
    return;
  }
  starts.push_back(text.size());
  const std::size_t parts = starts.size() - 1;
  auto file = std::make_shared<const std::string>(name);
  // One part alone, as load_all_string reads a text: the fast path if it takes it, else
  // yaml-cpp's, which names the error, if any.
  const auto one_part = [&](std::size_t d) {
    const std::string_view part(text.data() + starts[d], starts[d + 1] - starts[d]);
    auto provenance = std::make_shared<Provenance>();
    provenance->line_offset = start_lines[d];
    std::vector<YAML::Node> docs;
    try {
      docs = parse_checked(part, name, false, start_lines[d]);
    } catch (const YAML::Exception& e) {
      YAML::Exception at = e;
      if (at.mark.line >= 0) at.mark.line += start_lines[d];
      throw_parse_error(at, name);
    }
    for (const YAML::Node& doc : docs) {
      if (doc.IsNull()) continue;
      fn(YamlNode(doc, file, "").with_provenance(provenance));
    }
  };
  // Parts holding a carriage return, which the fast path never takes.
  std::vector<bool> has_cr(parts, false);
  for (std::size_t at = text.find('\r'); at != std::string::npos; at = text.find('\r', at + 1)) {
    has_cr[static_cast<std::size_t>(std::upper_bound(starts.begin(), starts.end(), at) -
                                    starts.begin()) -
           1] = true;
  }
  // Runs of parts go through one fast parser. A part's documents are handed over once the next
  // part begins (or the run ends), so when the fast path declines in a part, none of that part's
  // documents has been handed over: the part is read alone, and the run resumes after it.
  struct Sink final : DocumentSink {
    const std::vector<std::size_t>* starts = nullptr;
    std::size_t base = 0;     // the run's offset in the text
    std::size_t pending = 0;  // the part whose documents are held
    std::vector<YAML::Node> held;
    std::function<void()> flush;
    void start(std::size_t at) override {
      const auto part = static_cast<std::size_t>(
          std::upper_bound(starts->begin(), starts->end(), base + at) - starts->begin() - 1);
      if (part != pending) {
        flush();
        pending = part;
      }
    }
    void end(YAML::Node doc) override { held.push_back(std::move(doc)); }
  };
  std::size_t p = 0;
  while (p < parts) {
    if (has_cr[p]) {
      one_part(p++);
      continue;
    }
    std::size_t r = p;
    while (r < parts && !has_cr[r])
      ++r;
    auto provenance = std::make_shared<Provenance>();
    provenance->line_offset = start_lines[p];
    Sink sink;
    sink.starts = &starts;
    sink.base = starts[p];
    sink.pending = p;
    sink.flush = [&] {
      std::vector<YAML::Node> docs;
      docs.swap(sink.held);
      for (const YAML::Node& doc : docs) {
        if (!doc.IsNull()) fn(YamlNode(doc, file, "").with_provenance(provenance));
      }
    };
    const std::string_view run(text.data() + starts[p], starts[r] - starts[p]);
    if (fast_stream(run, sink)) {
      sink.flush();
      p = r;
    } else {
      one_part(sink.pending);
      p = sink.pending + 1;
    }
  }
}

YamlNode YamlNode::load_file(const std::string& path) {
  return load_string(read_file_or_throw(path), path);
}

int YamlNode::line() const {
  const YAML::Mark m = node_.Mark();
  return m.line >= 0 ? m.line + 1 + (provenance_ ? provenance_->line_offset : 0) : 0;
}

bool path_under(const std::string& path, const std::string& prefix) {
  if (prefix.empty()) return true;
  return path == prefix ||
         (path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
          (path[prefix.size()] == '.' || path[prefix.size()] == '['));
}

InputLocation YamlNode::where() const {
  std::string file = *file_;
  if (provenance_) {
    // A value that came from the command line: point at the option, not at a file.
    for (const auto& [path, assignment] : provenance_->set_options) {
      if (path_under(path_, path)) return InputLocation{"--set " + assignment, 0, 0, path_};
    }
    std::size_t best = 0;
    bool found = false;
    for (const auto& [prefix, f] : provenance_->files) {
      if (path_under(path_, prefix) && (!found || prefix.size() >= best)) {
        best = prefix.size();
        file = f;
        found = true;
      }
    }
  }
  const YAML::Mark m = node_.Mark();
  const bool known = m.line >= 0;
  const int offset = provenance_ ? provenance_->line_offset : 0;
  return InputLocation{file, known ? m.line + 1 + offset : 0, known ? m.column + 1 : 0, path_};
}

void YamlNode::fail(const std::string& message) const {
  throw InputError(InputErrorKind::kInvalid, where(), message);
}

std::string YamlNode::str() const {
  if (is_null()) fail("a value is required here");
  if (!node_.IsScalar())
    fail(is_map() ? "expected a single value, found a mapping"
                  : "expected a single value, found a list");
  return node_.Scalar();
}

std::int64_t YamlNode::integer(std::int64_t min, std::int64_t max) const {
  const std::string s = str();
  std::int64_t v = 0;
  std::size_t used = 0;
  try {
    v = std::stoll(s, &used, 10);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != s.size()) fail(fmt::format("'{}' is not a whole number", s));
  if (v < min || v > max) {
    if (max == INT64_MAX) fail(fmt::format("{} is out of range: it must be at least {}", v, min));
    fail(fmt::format("{} is out of range: it must be between {} and {}", v, min, max));
  }
  return v;
}

double YamlNode::number(double min, double max) const {
  const std::string s = str();
  double v = 0;
  std::size_t used = 0;
  try {
    v = std::stod(s, &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != s.size() || !std::isfinite(v))
    fail(fmt::format("'{}' is not a number", s));
  if (v < min || v > max) {
    if (max >= 1e300) fail(fmt::format("{} is out of range: it must be at least {}", s, min));
    fail(fmt::format("{} is out of range: it must be between {} and {}", s, min, max));
  }
  return v;
}

bool YamlNode::boolean() const {
  const std::string s = str();
  if (s == "true" || s == "True" || s == "yes") return true;
  if (s == "false" || s == "False" || s == "no") return false;
  fail(fmt::format("'{}' is not true or false", s));
}

std::int64_t YamlNode::quantity(int scale) const {
  const std::string s = str();
  auto r = parse_quantity_scaled(s, scale);
  if (!r) fail(r.error());
  return *r;
}

SimDuration YamlNode::duration() const {
  auto r = parse_duration(str());
  if (!r) fail(r.error());
  return *r;
}

YamlNode YamlNode::child(const YAML::Node& n, const std::string& key_or_index) const {
  // "a.b" + "c" is "a.b.c"; + "[2]" is "a.b[2]"; "" + "c" is "c".
  const bool index = !key_or_index.empty() && key_or_index.front() == '[';
  std::string p;
  p.reserve(path_.size() + 1 + key_or_index.size());
  p += path_;
  if (!index && !path_.empty()) p += '.';
  p += key_or_index;
  YamlNode c(n, file_, std::move(p));
  c.provenance_ = provenance_;
  return c;
}

YamlNode YamlNode::with_provenance(std::shared_ptr<const Provenance> provenance) const {
  YamlNode c = *this;
  c.provenance_ = std::move(provenance);
  return c;
}

namespace {
bool named_list(const YAML::Node& n) {
  if (!n.IsSequence() || n.size() == 0) return false;
  for (const auto& item : n) {
    if (!item.IsMap() || !item["name"] || !item["name"].IsScalar()) return false;
  }
  return true;
}
}  // namespace

std::vector<std::string> merge_overlay(YAML::Node& base, const YAML::Node& overlay,
                                       const std::string& path) {
  std::vector<std::string> set;
  auto join = [&](const std::string& key) { return path.empty() ? key : path + "." + key; };
  if (base.IsMap() && overlay.IsMap()) {
    for (const auto& kv : overlay) {
      const std::string key = kv.first.Scalar();
      YAML::Node b = base[key];
      if (b.IsDefined() && !b.IsNull() &&
          ((b.IsMap() && kv.second.IsMap()) || (named_list(b) && named_list(kv.second)))) {
        for (auto& p : merge_overlay(b, kv.second, join(key)))
          set.push_back(std::move(p));
      } else {
        base[key] = kv.second;
        set.push_back(join(key));
      }
    }
    return set;
  }
  if (named_list(base) && named_list(overlay)) {
    for (const auto& item : overlay) {
      const std::string name = item["name"].Scalar();
      bool merged = false;
      for (std::size_t i = 0; i < base.size(); ++i) {
        YAML::Node b = base[i];
        if (b["name"].Scalar() == name) {
          for (auto& p : merge_overlay(b, item, fmt::format("{}[{}]", path, i)))
            set.push_back(std::move(p));
          merged = true;
          break;
        }
      }
      if (!merged) {
        set.push_back(fmt::format("{}[{}]", path, base.size()));
        base.push_back(item);
      }
    }
    return set;
  }
  base = overlay;
  set.push_back(path);
  return set;
}

std::vector<YamlNode> YamlNode::seq() const {
  std::vector<YamlNode> out;
  if (is_null()) return out;
  if (!node_.IsSequence()) fail("expected a list");
  std::size_t i = 0;
  for (const auto& item : node_)
    out.push_back(child(item, fmt::format("[{}]", i++)));
  return out;
}

MapReader YamlNode::map() const {
  if (!node_.IsMap()) {
    if (is_null()) fail("expected a mapping, found nothing");
    fail(node_.IsSequence() ? "expected a mapping, found a list"
                            : fmt::format("expected a mapping, found '{}'", node_.Scalar()));
  }
  return MapReader(*this);
}

std::vector<std::pair<std::string, YamlNode>> YamlNode::entries() const {
  std::vector<std::pair<std::string, YamlNode>> out;
  if (is_null()) return out;
  if (!node_.IsMap()) fail("expected a mapping");
  for (const auto& kv : node_) {
    if (!kv.first.IsScalar()) YamlNode(kv.first, file_, path_).fail("keys must be plain strings");
    const std::string& key = kv.first.Scalar();
    out.emplace_back(key, child(kv.second, key));
  }
  return out;
}

MapReader::MapReader(YamlNode node) : node_(std::move(node)) {}

std::vector<MapReader::Entry>& MapReader::listed() {
  if (!listed_) {
    listed_ = true;
    const YAML::Node& raw = node_.raw();
    entries_.reserve(raw.size());
    for (const auto& kv : raw)
      entries_.push_back(Entry{kv.first, kv.second, false});
  }
  return entries_;
}

std::optional<YAML::Node> MapReader::find(const std::string& key) {
  for (Entry& e : listed()) {
    if (e.key.IsScalar() && e.key.Scalar() == key) {
      e.seen = true;
      return e.value;
    }
  }
  return std::nullopt;
}

void MapReader::ignore(const std::string& key) {
  if (!find(key)) queried_.push_back(key);
}

bool MapReader::has(const std::string& key) const {
  const auto& raw = node_.raw();
  for (const auto& kv : raw) {
    if (kv.first.IsScalar() && kv.first.Scalar() == key) return true;
  }
  return false;
}

std::optional<YamlNode> MapReader::opt(const std::string& key) {
  std::optional<YAML::Node> v = find(key);
  if (!v) queried_.push_back(key);
  if (!v || v->IsNull()) return std::nullopt;
  return node_.child(*v, key);
}

YamlNode MapReader::req(const std::string& key) {
  auto v = opt(key);
  if (!v) node_.fail(fmt::format("missing required field '{}'", key));
  return *v;
}

std::string MapReader::str_or(const std::string& key, std::string dflt) {
  auto v = opt(key);
  return v ? v->str() : std::move(dflt);
}
std::int64_t MapReader::int_or(const std::string& key, std::int64_t dflt, std::int64_t min,
                               std::int64_t max) {
  auto v = opt(key);
  return v ? v->integer(min, max) : dflt;
}
double MapReader::num_or(const std::string& key, double dflt, double min, double max) {
  auto v = opt(key);
  return v ? v->number(min, max) : dflt;
}
bool MapReader::bool_or(const std::string& key, bool dflt) {
  auto v = opt(key);
  return v ? v->boolean() : dflt;
}
SimDuration MapReader::duration_or(const std::string& key, SimDuration dflt) {
  auto v = opt(key);
  return v ? v->duration() : dflt;
}

void MapReader::finish() const {
  // Every key not asked for (read or ignored) is unknown.
  const auto unknown = [&](const YAML::Node& k) {
    if (!k.IsScalar())
      YamlNode(k, node_.file_ptr(), node_.path()).fail("keys must be plain strings");
    const std::string key = k.Scalar();
    // A key repeated in one mapping is refused when the text is parsed, so the first entry of a
    // name is its only one, and an entry not seen was never asked for. The names asked for are
    // those found (the entries seen) and those asked for but absent (queried_).
    std::vector<std::string> known = queried_;
    for (const Entry& e : entries_) {
      if (e.seen && e.key.IsScalar()) known.push_back(e.key.Scalar());
    }
    std::sort(known.begin(), known.end());
    known.erase(std::unique(known.begin(), known.end()), known.end());
    YamlNode at = node_.child(k, key);
    at.fail(fmt::format("unknown field '{}'{}", key, did_you_mean(key, known)));
  };
  if (listed_) {
    for (const Entry& e : entries_) {
      if (!e.seen) unknown(e.key);
    }
  } else {
    for (const auto& kv : node_.raw())
      unknown(kv.first);
  }
}

namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j)
    prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t sub =
          prev[j - 1] + (std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                                 std::tolower(static_cast<unsigned char>(b[j - 1]))
                             ? 0
                             : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::vector<std::string> closest_names(std::string_view word,
                                       const std::vector<std::string>& candidates) {
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(word, c);
    const bool prefix = c.size() > word.size() && word.size() >= 2 &&
                        std::equal(word.begin(), word.end(), c.begin(), [](char x, char y) {
                          return std::tolower(static_cast<unsigned char>(x)) ==
                                 std::tolower(static_cast<unsigned char>(y));
                        });
    if (prefix) d = std::min<std::size_t>(d, 1);
    const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
    if (d <= limit) scored.emplace_back(d, c);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (const auto& [d, c] : scored) {
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    if (out.size() == 2) break;
  }
  return out;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  auto c = closest_names(word, candidates);
  if (c.empty()) return "";
  if (c.size() == 1) return fmt::format(" (did you mean '{}'?)", c[0]);
  return fmt::format(" (did you mean '{}' or '{}'?)", c[0], c[1]);
}

std::string apply_override(YAML::Node& root, const std::string& assignment) {
  const auto eq = assignment.find('=');
  const InputLocation where{"--set", 0, 0, assignment};
  if (eq == std::string::npos || eq == 0) {
    throw InputError(InputErrorKind::kInvalid, where, "expected key=value, e.g. seed=7");
  }
  const std::string key = assignment.substr(0, eq);
  const std::string value = assignment.substr(eq + 1);
  YAML::Node parsed;
  try {
    parsed = YAML::Load(value);
  } catch (const YAML::Exception& e) {
    throw InputError(InputErrorKind::kInvalid, where, "the value is not valid YAML: " + e.msg);
  }
  // Tokenise: a.b[2].c
  std::vector<std::string> parts;
  std::string cur;
  for (std::size_t i = 0; i < key.size(); ++i) {
    const char c = key[i];
    if (c == '.') {
      if (!cur.empty()) parts.push_back(cur);
      cur.clear();
    } else if (c == '[') {
      if (!cur.empty()) parts.push_back(cur);
      cur = "[";
    } else if (c == ']') {
      cur += ']';
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) parts.push_back(cur);
  if (parts.empty()) throw InputError(InputErrorKind::kInvalid, where, "empty key");

  // Walk with node identity (yaml-cpp's operator= on Node assigns content, so keep handles).
  YAML::Node node = root;
  std::string resolved;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    const bool last = i + 1 == parts.size();
    if (part.front() == '[') {
      if (!node.IsSequence()) {
        throw InputError(InputErrorKind::kInvalid, where,
                         fmt::format("'{}' indexes something that is not a list", part));
      }
      std::size_t idx = 0;
      try {
        idx = std::stoul(part.substr(1, part.size() - 2));
      } catch (...) {
        throw InputError(InputErrorKind::kInvalid, where, fmt::format("bad index '{}'", part));
      }
      if (idx >= node.size()) {
        throw InputError(InputErrorKind::kInvalid, where,
                         fmt::format("index {} is past the end of a list of {}", idx, node.size()));
      }
      resolved += fmt::format("[{}]", idx);
      if (last) {
        node[idx] = parsed;
        return resolved;
      }
      node.reset(node[idx]);
      continue;
    }
    if (node.IsSequence()) {  // select the element named `part`
      YAML::Node found;
      bool have = false;
      std::vector<std::string> names;
      for (std::size_t k = 0; k < node.size(); ++k) {
        const YAML::Node el = node[k];
        if (!el.IsMap()) continue;
        const YAML::Node name = el["name"];
        if (name && name.IsScalar()) {
          names.push_back(name.Scalar());
          if (!have && name.Scalar() == part) {
            found.reset(el);
            have = true;
          }
        }
      }
      if (!have) {
        throw InputError(
            InputErrorKind::kInvalid, where,
            fmt::format("no list element is named '{}'{}", part, did_you_mean(part, names)));
      }
      if (last) {
        throw InputError(InputErrorKind::kInvalid, where,
                         "a whole list element cannot be replaced by name; set one of its fields");
      }
      std::size_t index = 0;
      for (std::size_t k = 0; k < node.size(); ++k) {
        if (node[k].is(found)) index = k;
      }
      resolved += fmt::format("[{}]", index);
      node.reset(found);
      continue;
    }
    if (node.IsScalar()) {
      throw InputError(InputErrorKind::kInvalid, where,
                       fmt::format("'{}' is inside a single value, not a mapping", part));
    }
    resolved += resolved.empty() ? part : "." + part;
    if (last) {
      node[part] = parsed;
      return resolved;
    }
    YAML::Node next = node[part];
    if (!next.IsDefined() || next.IsNull()) {
      node[part] = YAML::Node(YAML::NodeType::Map);
      next = node[part];
    }
    node.reset(next);
  }
  return resolved;
}

}  // namespace capsim
