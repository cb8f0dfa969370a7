#include "models/yaml_parse.hpp"

#include <yaml.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>

#include "models/yaml_reader.hpp"

namespace capsim {
namespace {
struct NodeAccess {};
}  // namespace
}  // namespace capsim

// yaml-cpp builds a YAML::Node around its internal nodes only in its own (unexported) loader; a
// YAML::Node is friends with every as_if specialization, so this one wraps a tree built with the
// public yaml-cpp/node/detail API the way that loader does (yaml-cpp 0.7, src/nodebuilder.cpp).
template <>
struct YAML::as_if<capsim::NodeAccess, void> {
  static Node wrap(detail::node& root, const detail::shared_memory_holder& memory) {
    return Node(root, memory);
  }
};

namespace capsim {

namespace {

using YAML::detail::node;

// Owns a libyaml parser and its current event.
class EventParser {
 public:
  explicit EventParser(std::string_view text) {
    ok_ = yaml_parser_initialize(&parser_) != 0;
    if (ok_) {
      yaml_parser_set_encoding(&parser_, YAML_UTF8_ENCODING);
      yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(text.data()),
                                   text.size());
    }
  }
  ~EventParser() {
    if (have_event_) yaml_event_delete(&event_);
    if (ok_) yaml_parser_delete(&parser_);
  }
  EventParser(const EventParser&) = delete;
  EventParser& operator=(const EventParser&) = delete;

  // The next event, or nullptr on a libyaml error.
  const yaml_event_t* next() {
    if (have_event_) yaml_event_delete(&event_);
    have_event_ = ok_ && yaml_parser_parse(&parser_, &event_) != 0;
    return have_event_ ? &event_ : nullptr;
  }

 private:
  yaml_parser_t parser_{};
  yaml_event_t event_{};
  bool ok_ = false;
  bool have_event_ = false;
};

bool is_null_string(std::string_view s) {  // yaml-cpp's IsNullString (src/null.cpp)
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

// One pass over the events: the structure checks, and (when `build`) the tree.
class FastLoader {
 public:
  FastLoader(std::string_view text, bool build, std::size_t enclosing = 0)
      : text_(text), build_(build), enclosing_(enclosing) {
    for (const char c : text) {
      if (static_cast<unsigned char>(c) >= 0x80) {
        ascii_ = false;
        break;
      }
    }
  }

  // Documents go to `sink` as they end instead of into run's list.
  void stream_to(DocumentSink* sink) { sink_ = sink; }

  // False when the fast path declines.
  bool run(bool single, std::vector<YAML::Node>* out) {
    if (text_.find('\r') != std::string_view::npos) return false;
    if (text_.size() >= 3 && std::memcmp(text_.data(), "\xEF\xBB\xBF", 3) == 0) return false;
    EventParser events(text_);
    int documents = 0;
    for (;;) {
      const yaml_event_t* e = events.next();
      if (e == nullptr) return false;
      switch (e->type) {
        case YAML_STREAM_START_EVENT:
          break;
        case YAML_STREAM_END_EVENT:
          return true;
        case YAML_DOCUMENT_START_EVENT:
          if (e->data.document_start.version_directive != nullptr ||
              e->data.document_start.tag_directives.start !=
                  e->data.document_start.tag_directives.end) {
            return false;
          }
          if (++documents > 1 && single) return false;
          if (build_) memory_ = std::make_shared<YAML::detail::memory_holder>();
          root_ = nullptr;
          if (sink_ != nullptr) sink_->start(byte_offset(e->start_mark));
          break;
        case YAML_DOCUMENT_END_EVENT:
          if (build_) {
            YAML::Node doc = root_ == nullptr
                                 ? YAML::Node()
                                 : YAML::as_if<NodeAccess, void>::wrap(*root_, memory_);
            if (sink_ != nullptr) {
              sink_->end(std::move(doc));
            } else {
              out->push_back(std::move(doc));
            }
          }
          break;
        case YAML_ALIAS_EVENT:
          return false;
        case YAML_SCALAR_EVENT:
          if (!scalar(*e)) return false;
          break;
        case YAML_SEQUENCE_START_EVENT:
          if (e->data.sequence_start.anchor != nullptr || e->data.sequence_start.tag != nullptr)
            return false;
          if (!open(*e, false, e->data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE))
            return false;
          break;
        case YAML_MAPPING_START_EVENT:
          if (e->data.mapping_start.anchor != nullptr || e->data.mapping_start.tag != nullptr)
            return false;
          if (!open(*e, true, e->data.mapping_start.style == YAML_FLOW_MAPPING_STYLE)) return false;
          break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
          close();
          break;
        case YAML_NO_EVENT:
          return false;
      }
    }
  }

 private:
  struct Frame {
    node* n = nullptr;
    bool is_map = false;
    bool flow = false;
    bool expect_key = true;
    node* key = nullptr;
    std::vector<std::string> keys;            // a small mapping's keys, searched in order
    std::unordered_set<std::string> key_set;  // a large one's
  };
  static constexpr std::size_t kLinearKeys = 16;

  // yaml-cpp's mark: 0-based line, column in bytes, byte offset. libyaml counts characters, the
  // same unless a line holds multi-byte characters.
  YAML::Mark mark(const yaml_mark_t& m) {
    YAML::Mark r;
    r.line = static_cast<int>(m.line);
    if (ascii_) {
      r.column = static_cast<int>(m.column);
      r.pos = static_cast<int>(m.index);
      return r;
    }
    if (line_starts_.empty()) {
      line_starts_.push_back(0);
      for (std::size_t i = 0; i < text_.size(); ++i) {
        if (text_[i] == '\n') line_starts_.push_back(i + 1);
      }
    }
    const std::size_t start = m.line < line_starts_.size() ? line_starts_[m.line] : text_.size();
    std::size_t at = start;
    for (std::size_t c = 0; c < m.column && at < text_.size(); ++c) {
      const auto b = static_cast<unsigned char>(text_[at]);
      at += b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;  // a UTF-8 sequence's length
    }
    r.column = static_cast<int>(at - start);
    r.pos = static_cast<int>(at);
    return r;
  }

  // Where the token after byte `at` (on 0-based `line`) begins: past blanks, line breaks and
  // comments.
  YAML::Mark next_token_mark(std::size_t at, int line) const {
    std::size_t line_start = text_.rfind('\n', at == 0 ? 0 : at - 1);
    line_start = line_start == std::string_view::npos ? 0 : line_start + 1;
    while (at < text_.size()) {
      const char c = text_[at];
      if (c == ' ' || c == '\t') {
        ++at;
      } else if (c == '\n') {
        ++at;
        ++line;
        line_start = at;
      } else if (c == '#') {
        while (at < text_.size() && text_[at] != '\n')
          ++at;
      } else {
        break;
      }
    }
    YAML::Mark r;
    r.line = line;
    r.column = static_cast<int>(at - line_start);
    r.pos = static_cast<int>(at);
    return r;
  }

  std::size_t byte_offset(const yaml_mark_t& m) { return static_cast<std::size_t>(mark(m).pos); }

  // A new node for an event at `m` (nullptr when not building).
  node* create(const yaml_mark_t& m) {
    if (!build_) return nullptr;
    node& n = memory_->create_node();
    n.set_mark(mark(m));
    return &n;
  }

  // The node `n` takes its place in the innermost collection. False (decline) on a key that is
  // not a plain string or is given twice.
  bool place(node* n, const std::string* key_text) {
    if (stack_.empty()) {
      root_ = n;
      return true;
    }
    Frame& f = stack_.back();
    if (!f.is_map) {
      if (build_) f.n->push_back(*n, memory_);
      return true;
    }
    if (f.expect_key) {
      if (key_text == nullptr || *key_text == "<<") return false;
      if (f.key_set.empty() && f.keys.size() < kLinearKeys) {
        for (const std::string& k : f.keys) {
          if (k == *key_text) return false;
        }
        f.keys.push_back(*key_text);
      } else {
        if (f.key_set.empty()) f.key_set.insert(f.keys.begin(), f.keys.end());
        if (!f.key_set.insert(*key_text).second) return false;
      }
      f.key = n;
      f.expect_key = false;
      return true;
    }
    if (build_) f.n->insert(*f.key, *n, memory_);
    f.expect_key = true;
    return true;
  }

  bool scalar(const yaml_event_t& e) {
    const auto& s = e.data.scalar;
    if (s.anchor != nullptr || s.tag != nullptr) return false;
    const std::string value(reinterpret_cast<const char*>(s.value), s.length);
    const bool plain = s.style == YAML_PLAIN_SCALAR_STYLE;
    const bool null = plain && is_null_string(value);
    const bool in_flow = !stack_.empty() && stack_.back().flow;
    const bool key = !stack_.empty() && stack_.back().is_map && stack_.back().expect_key;
    std::optional<YAML::Mark> empty_at;
    if (plain && value.empty() && !stack_.empty()) {
      // An empty value: libyaml marks it right after the ':' or '-' before it, yaml-cpp where
      // the next token begins. Anything else (a key without a value, flow collections) declines.
      const std::size_t at = byte_offset(e.start_mark);
      if (in_flow || key || at == 0 || (text_[at - 1] != ':' && text_[at - 1] != '-')) return false;
      empty_at = next_token_mark(at, static_cast<int>(e.start_mark.line));
    }
    node* n = create(e.start_mark);
    if (n != nullptr) {
      if (null) {
        n->set_null();
      } else {
        n->set_scalar(value);
        n->set_tag(plain ? "?" : "!");
      }
      if (empty_at) n->set_mark(*empty_at);
    }
    return place(n, key && !null ? &value : nullptr);
  }

  bool open(const yaml_event_t& e, bool is_map, bool flow) {
    if (enclosing_ + stack_.size() >= kYamlMaxDepth) return false;
    node* n = create(e.start_mark);
    if (n != nullptr) {
      n->set_tag("?");
      n->set_type(is_map ? YAML::NodeType::Map : YAML::NodeType::Sequence);
      n->set_style(flow ? YAML::EmitterStyle::Flow : YAML::EmitterStyle::Block);
    }
    if (!place(n, nullptr)) return false;
    Frame f;
    f.n = n;
    f.is_map = is_map;
    f.flow = flow;
    stack_.push_back(std::move(f));
    return true;
  }

  void close() { stack_.pop_back(); }

  std::string_view text_;
  bool build_;
  std::size_t enclosing_;  // collections around the text in its file (nesting counts them)
  DocumentSink* sink_ = nullptr;
  bool ascii_ = true;
  std::vector<std::size_t> line_starts_;
  std::shared_ptr<YAML::detail::memory_holder> memory_;
  std::vector<Frame> stack_;
  node* root_ = nullptr;
};

}  // namespace

std::optional<std::vector<YAML::Node>> fast_load_all(std::string_view text, bool single,
                                                     std::size_t enclosing) {
  std::vector<YAML::Node> docs;
  FastLoader loader(text, true, enclosing);
  if (!loader.run(single, &docs)) return std::nullopt;
  return docs;
}

bool fast_stream(std::string_view text, DocumentSink& sink, std::size_t enclosing) {
  FastLoader loader(text, true, enclosing);
  loader.stream_to(&sink);
  return loader.run(false, nullptr);
}

bool fast_check(std::string_view text, bool single) {
  FastLoader loader(text, false);
  return loader.run(single, nullptr);
}

}  // namespace capsim
