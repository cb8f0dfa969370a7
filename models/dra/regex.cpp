#include "models/dra/regex.hpp"

#include <fmt/format.h>

#include <limits>

namespace capsim::cel {

namespace {

using Set = std::bitset<256>;

constexpr int kMaxDepth = 100;    // nesting of groups
constexpr int kMaxRepeat = 1000;  // RE2's limit on {n,m}

bool is_word(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

Set range(unsigned char lo, unsigned char hi) {
  Set s;
  for (unsigned c = lo; c <= hi; ++c)
    s.set(c);
  return s;
}

Set digits() {
  return range('0', '9');
}
Set word() {
  Set s = range('a', 'z') | range('A', 'Z') | digits();
  s.set('_');
  return s;
}
Set space() {
  Set s;
  for (char c : std::string_view("\t\n\f\r "))
    s.set(static_cast<unsigned char>(c));
  return s;
}

// Adds the other case of every ASCII letter in `s`.
Set fold(Set s) {
  for (unsigned c = 'a'; c <= 'z'; ++c) {
    if (s.test(c) || s.test(c - 32)) {
      s.set(c);
      s.set(c - 32);
    }
  }
  return s;
}

struct Flags {
  bool fold = false;       // i
  bool multiline = false;  // m
  bool dotall = false;     // s
  bool ungreedy = false;   // U (accepted; does not change whether a pattern matches)
};

struct Node {
  enum class Kind : std::uint8_t { kEmpty, kSet, kAssert, kConcat, kAlt, kRepeat };
  Kind kind = Kind::kEmpty;
  Set set;
  Regex::Assertion assertion = Regex::Assertion::kBeginText;
  std::vector<std::uint32_t> kids;
  int min = 0;
  int max = 0;  // -1: unbounded
};

class Parser {
 public:
  explicit Parser(std::string_view p) : p_(p) {}

  Result<std::uint32_t> parse() {
    auto root = alternation(0);
    if (!error_.empty()) return make_error(error_);
    if (pos_ < p_.size()) {
      return make_error(fmt::format("offset {}: unexpected ) without a matching (", pos_));
    }
    return root;
  }
  std::vector<Node>& nodes() { return nodes_; }

 private:
  bool fail(std::size_t at, const std::string& what) {
    if (error_.empty()) error_ = fmt::format("offset {}: {}", at, what);
    return false;
  }
  std::uint32_t add(Node n) {
    nodes_.push_back(std::move(n));
    return static_cast<std::uint32_t>(nodes_.size() - 1);
  }
  std::uint32_t set_node(Set s) {
    Node n;
    n.kind = Node::Kind::kSet;
    n.set = flags_.fold ? fold(s) : s;
    return add(std::move(n));
  }
  std::uint32_t assert_node(Regex::Assertion a) {
    Node n;
    n.kind = Node::Kind::kAssert;
    n.assertion = a;
    return add(std::move(n));
  }
  bool at_end() const { return pos_ >= p_.size(); }
  char peek() const { return p_[pos_]; }

  std::uint32_t alternation(int depth) {
    Node alt;
    alt.kind = Node::Kind::kAlt;
    alt.kids.push_back(concatenation(depth));
    while (error_.empty() && !at_end() && peek() == '|') {
      ++pos_;
      alt.kids.push_back(concatenation(depth));
    }
    if (alt.kids.size() == 1) return alt.kids.front();
    return add(std::move(alt));
  }

  std::uint32_t concatenation(int depth) {
    Node cat;
    cat.kind = Node::Kind::kConcat;
    while (error_.empty() && !at_end() && peek() != '|' && peek() != ')') {
      std::optional<std::uint32_t> atom = this->atom(depth);
      if (!error_.empty()) break;
      if (!atom) continue;  // a flag group such as (?i) or an empty \Q\E
      std::uint32_t a = *atom;
      bool repeated = false;
      while (error_.empty() && !at_end()) {
        const char c = peek();
        int lo = 0, hi = 0;
        const std::size_t q_at = pos_;
        if (c == '*') {
          lo = 0, hi = -1;
          ++pos_;
        } else if (c == '+') {
          lo = 1, hi = -1;
          ++pos_;
        } else if (c == '?') {
          lo = 0, hi = 1;
          ++pos_;
        } else if (c == '{') {
          if (!counted(lo, hi)) break;  // not a repetition: a literal '{'
        } else {
          break;
        }
        if (repeated) {
          fail(q_at, fmt::format("bad repetition operator: '{}' after another repetition", c));
          break;
        }
        if (!at_end() && peek() == '?') ++pos_;  // lazy: same match/no-match
        Node r;
        r.kind = Node::Kind::kRepeat;
        r.kids = {a};
        r.min = lo;
        r.max = hi;
        a = add(std::move(r));
        repeated = true;
      }
      cat.kids.push_back(a);
    }
    if (cat.kids.size() == 1) return cat.kids.front();
    if (cat.kids.empty()) return add(Node{});
    return add(std::move(cat));
  }

  // {n}, {n,}, {n,m} at pos_; false (pos_ unchanged) when the text is not a repetition.
  bool counted(int& lo, int& hi) {
    std::size_t i = pos_ + 1;
    auto number = [&](int& out) {
      const std::size_t start = i;
      long v = 0;
      while (i < p_.size() && p_[i] >= '0' && p_[i] <= '9') {
        v = v * 10 + (p_[i] - '0');
        if (v > 100000) v = 100000;
        ++i;
      }
      out = static_cast<int>(v);
      return i > start;
    };
    if (!number(lo)) return false;
    hi = lo;
    if (i < p_.size() && p_[i] == ',') {
      ++i;
      if (!number(hi)) hi = -1;
    }
    if (i >= p_.size() || p_[i] != '}') return false;
    ++i;
    if (lo > kMaxRepeat || hi > kMaxRepeat) {
      fail(pos_,
           fmt::format("bad repetition operator: counts above {} are not allowed", kMaxRepeat));
      return false;
    }
    if (hi != -1 && hi < lo) {
      fail(pos_, "bad repetition operator: {n,m} with m < n");
      return false;
    }
    pos_ = i;
    return true;
  }

  std::optional<std::uint32_t> atom(int depth) {
    const std::size_t at = pos_;
    const char c = p_[pos_++];
    switch (c) {
      case '(':
        return group(at, depth);
      case '[':
        return bracket(at);
      case '.': {
        Set s;
        s.set();
        if (!flags_.dotall) s.reset('\n');
        return set_node(s);
      }
      case '^':
        return assert_node(flags_.multiline ? Regex::Assertion::kBeginLine
                                            : Regex::Assertion::kBeginText);
      case '$':
        return assert_node(flags_.multiline ? Regex::Assertion::kEndLine
                                            : Regex::Assertion::kEndText);
      case '\\':
        return escape(at);
      case '*':
      case '+':
      case '?':
        fail(at, fmt::format("missing argument to repetition operator: '{}'", c));
        return std::nullopt;
      default: {
        Set s;
        s.set(static_cast<unsigned char>(c));
        return set_node(s);
      }
    }
  }

  std::optional<std::uint32_t> group(std::size_t at, int depth) {
    if (depth + 1 > kMaxDepth) {
      fail(at, fmt::format("groups nest deeper than {}", kMaxDepth));
      return std::nullopt;
    }
    const Flags saved = flags_;
    if (!at_end() && peek() == '?') {
      ++pos_;
      if (at_end()) {
        fail(at, "missing closing )");
        return std::nullopt;
      }
      const char k = peek();
      if (k == 'P' || k == '<') {
        // Named capture: (?P<name>...) or (?<name>...).
        if (k == 'P') ++pos_;
        if (at_end() || peek() != '<') {
          fail(at, "invalid named capture group");
          return std::nullopt;
        }
        if (k == '<' && pos_ + 1 < p_.size() && (p_[pos_ + 1] == '=' || p_[pos_ + 1] == '!')) {
          fail(at, "look-behind assertions are not supported (RE2 has none)");
          return std::nullopt;
        }
        const std::size_t close = p_.find('>', pos_);
        if (close == std::string_view::npos || close == pos_ + 1) {
          fail(at, "invalid named capture group");
          return std::nullopt;
        }
        for (std::size_t i = pos_ + 1; i < close; ++i) {
          if (!is_word(static_cast<unsigned char>(p_[i]))) {
            fail(at, "invalid named capture group name");
            return std::nullopt;
          }
        }
        pos_ = close + 1;
      } else if (k == '=' || k == '!') {
        fail(at, "look-ahead assertions are not supported (RE2 has none)");
        return std::nullopt;
      } else {
        // Flags: (?flags) or (?flags:...), with an optional '-' turning the rest off.
        bool negate = false;
        bool any = false;
        while (!at_end() && peek() != ')' && peek() != ':') {
          const char f = p_[pos_++];
          if (f == '-') {
            if (negate) {
              fail(at, "invalid flag group: two '-'");
              return std::nullopt;
            }
            negate = true;
            continue;
          }
          bool* flag = f == 'i'   ? &flags_.fold
                       : f == 'm' ? &flags_.multiline
                       : f == 's' ? &flags_.dotall
                       : f == 'U' ? &flags_.ungreedy
                                  : nullptr;
          if (flag == nullptr) {
            fail(pos_ - 1, fmt::format("unknown flag '{}' (RE2 has i, m, s, U)", f));
            return std::nullopt;
          }
          *flag = !negate;
          any = true;
        }
        if (at_end()) {
          fail(at, "missing closing )");
          return std::nullopt;
        }
        if (!any) {
          fail(at, "invalid flag group: no flags");
          return std::nullopt;
        }
        if (peek() == ')') {  // (?i): applies to the rest of the enclosing group
          ++pos_;
          return std::nullopt;
        }
        ++pos_;  // ':'
      }
    }
    const std::uint32_t inner = alternation(depth + 1);
    flags_ = saved;
    if (!error_.empty()) return std::nullopt;
    if (at_end() || peek() != ')') {
      fail(at, "missing closing )");
      return std::nullopt;
    }
    ++pos_;
    return inner;
  }

  // An escape outside brackets (pos_ is after the backslash).
  std::optional<std::uint32_t> escape(std::size_t at) {
    if (at_end()) {
      fail(at, "trailing backslash at end of expression");
      return std::nullopt;
    }
    const char e = p_[pos_];
    switch (e) {
      case 'A':
        ++pos_;
        return assert_node(Regex::Assertion::kBeginText);
      case 'z':
        ++pos_;
        return assert_node(Regex::Assertion::kEndText);
      case 'b':
        ++pos_;
        return assert_node(Regex::Assertion::kWordBoundary);
      case 'B':
        ++pos_;
        return assert_node(Regex::Assertion::kNotWordBoundary);
      case 'Q': {
        // \Q...\E: literal text.
        ++pos_;
        const std::size_t end = p_.find("\\E", pos_);
        const std::string_view lit =
            p_.substr(pos_, end == std::string_view::npos ? std::string_view::npos : end - pos_);
        pos_ = end == std::string_view::npos ? p_.size() : end + 2;
        if (lit.empty()) return std::nullopt;
        Node cat;
        cat.kind = Node::Kind::kConcat;
        for (char c : lit) {
          Set s;
          s.set(static_cast<unsigned char>(c));
          cat.kids.push_back(set_node(s));
        }
        return add(std::move(cat));
      }
      default:
        break;
    }
    Set s;
    if (!class_escape(at, s)) return std::nullopt;
    return set_node(s);
  }

  // Escapes that stand for a set of bytes (valid inside and outside brackets); pos_ is at the
  // character after the backslash and is advanced past the escape.
  bool class_escape(std::size_t at, Set& s) {
    const char e = p_[pos_++];
    switch (e) {
      case 'd':
        s = digits();
        return true;
      case 'D':
        s = ~digits();
        return true;
      case 'w':
        s = word();
        return true;
      case 'W':
        s = ~word();
        return true;
      case 's':
        s = space();
        return true;
      case 'S':
        s = ~space();
        return true;
      case 't':
        s.set('\t');
        return true;
      case 'n':
        s.set('\n');
        return true;
      case 'r':
        s.set('\r');
        return true;
      case 'f':
        s.set('\f');
        return true;
      case 'v':
        s.set('\v');
        return true;
      case 'a':
        s.set('\a');
        return true;
      case 'x': {
        unsigned v = 0;
        auto hex = [](char c) -> int {
          if (c >= '0' && c <= '9') return c - '0';
          if (c >= 'a' && c <= 'f') return c - 'a' + 10;
          if (c >= 'A' && c <= 'F') return c - 'A' + 10;
          return -1;
        };
        if (!at_end() && peek() == '{') {
          ++pos_;
          int digits_read = 0;
          while (!at_end() && peek() != '}' && hex(peek()) >= 0 && digits_read < 8) {
            v = v * 16 + static_cast<unsigned>(hex(p_[pos_++]));
            ++digits_read;
          }
          if (at_end() || peek() != '}' || digits_read == 0) {
            return fail(at, "invalid escape sequence \\x{...}");
          }
          ++pos_;
        } else {
          if (pos_ + 2 > p_.size() || hex(p_[pos_]) < 0 || hex(p_[pos_ + 1]) < 0) {
            return fail(at, "invalid escape sequence \\x (two hex digits expected)");
          }
          v = static_cast<unsigned>(hex(p_[pos_]) * 16 + hex(p_[pos_ + 1]));
          pos_ += 2;
        }
        if (v > 0x7f) {
          return fail(at, "\\x escapes above 0x7f are not supported (capsim matches ASCII bytes)");
        }
        s.set(v);
        return true;
      }
      case 'p':
      case 'P':
        return fail(at, "Unicode classes \\p{...} are not supported by capsim's matcher");
      case 'C':
        return fail(at, "\\C is not supported");
      case 'Z':
        return fail(at, "\\Z is not RE2 syntax (use \\z or $)");
      default:
        break;
    }
    if (e >= '0' && e <= '9') {
      return fail(at, "backreferences (\\1) and octal escapes are not supported (RE2 has none)");
    }
    if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z')) {
      return fail(at, fmt::format("invalid escape sequence \\{}", e));
    }
    s.set(static_cast<unsigned char>(e));  // an escaped punctuation character or space
    return true;
  }

  std::optional<std::uint32_t> bracket(std::size_t at) {
    bool negate = false;
    if (!at_end() && peek() == '^') {
      negate = true;
      ++pos_;
    }
    Set s;
    bool first = true;
    while (true) {
      if (at_end()) {
        fail(at, "missing closing ]");
        return std::nullopt;
      }
      char c = peek();
      if (c == ']' && !first) {
        ++pos_;
        break;
      }
      first = false;
      if (c == '[' && pos_ + 1 < p_.size() && p_[pos_ + 1] == ':') {
        const std::size_t close = p_.find(":]", pos_ + 2);
        if (close == std::string_view::npos) {
          fail(pos_, "missing closing :] of a POSIX class");
          return std::nullopt;
        }
        std::string_view name = p_.substr(pos_ + 2, close - pos_ - 2);
        bool neg = !name.empty() && name.front() == '^';
        if (neg) name.remove_prefix(1);
        Set p;
        if (name == "alpha") {
          p = range('a', 'z') | range('A', 'Z');
        } else if (name == "digit") {
          p = digits();
        } else if (name == "alnum") {
          p = range('a', 'z') | range('A', 'Z') | digits();
        } else if (name == "upper") {
          p = range('A', 'Z');
        } else if (name == "lower") {
          p = range('a', 'z');
        } else if (name == "space") {
          p = space();
          p.set('\v');
        } else if (name == "punct") {
          p = range('!', '/') | range(':', '@') | range('[', '`') | range('{', '~');
        } else if (name == "xdigit") {
          p = digits() | range('a', 'f') | range('A', 'F');
        } else if (name == "word") {
          p = word();
        } else if (name == "blank") {
          p.set(' ');
          p.set('\t');
        } else if (name == "cntrl") {
          p = range(0, 31);
          p.set(127);
        } else if (name == "print") {
          p = range(' ', '~');
        } else if (name == "graph") {
          p = range('!', '~');
        } else if (name == "ascii") {
          p = range(0, 127);
        } else {
          fail(pos_, fmt::format("invalid character class range: [:{}:]", name));
          return std::nullopt;
        }
        s |= neg ? ~p : p;
        pos_ = close + 2;
        continue;
      }
      // One character (or escape), maybe the start of a range lo-hi.
      auto one = [&](Set& single, bool& is_char, unsigned char& ch) -> bool {
        const std::size_t esc_at = pos_;
        const char x = p_[pos_++];
        if (x != '\\') {
          is_char = true;
          ch = static_cast<unsigned char>(x);
          single.set(ch);
          return true;
        }
        if (at_end()) return fail(esc_at, "trailing backslash at end of expression");
        Set t;
        const char next = peek();
        if (!class_escape(esc_at, t)) return false;
        is_char = std::string_view("dDwWsS").find(next) == std::string_view::npos;
        if (is_char) {
          for (unsigned k = 0; k < 256; ++k) {
            if (t.test(k)) ch = static_cast<unsigned char>(k);
          }
        }
        single |= t;
        return true;
      };
      Set lo_set;
      bool lo_char = false;
      unsigned char lo = 0;
      if (!one(lo_set, lo_char, lo)) return std::nullopt;
      if (lo_char && pos_ + 1 < p_.size() && peek() == '-' && p_[pos_ + 1] != ']') {
        const std::size_t range_at = pos_;
        ++pos_;
        Set hi_set;
        bool hi_char = false;
        unsigned char hi = 0;
        if (!one(hi_set, hi_char, hi)) return std::nullopt;
        if (!hi_char || hi < lo) {
          fail(range_at, "invalid character class range");
          return std::nullopt;
        }
        s |= range(lo, hi);
      } else {
        s |= lo_set;
      }
    }
    if (flags_.fold) s = fold(s);
    if (negate) s = ~s;  // as in RE2, a negated class matches \n
    Node n;
    n.kind = Node::Kind::kSet;
    n.set = s;
    return add(std::move(n));
  }

  std::string_view p_;
  std::size_t pos_ = 0;
  Flags flags_;
  std::vector<Node> nodes_;
  std::string error_;
};

}  // namespace

class RegexCompiler {
 public:
  RegexCompiler(Regex& re, const std::vector<Node>& nodes) : re_(re), nodes_(nodes) {}

  bool emit(std::uint32_t id, int depth) {
    if (re_.prog_.size() > Regex::kMaxProgram || depth > 4 * kMaxDepth) return false;
    const Node& n = nodes_[id];
    switch (n.kind) {
      case Node::Kind::kEmpty:
        return true;
      case Node::Kind::kSet: {
        Regex::Inst i;
        i.op = Regex::Op::kSet;
        i.x = static_cast<std::uint32_t>(re_.sets_.size());
        re_.sets_.push_back(n.set);
        re_.prog_.push_back(i);
        return true;
      }
      case Node::Kind::kAssert: {
        Regex::Inst i;
        i.op = Regex::Op::kAssert;
        i.assertion = n.assertion;
        re_.prog_.push_back(i);
        return true;
      }
      case Node::Kind::kConcat:
        for (std::uint32_t k : n.kids) {
          if (!emit(k, depth + 1)) return false;
        }
        return true;
      case Node::Kind::kAlt: {
        // split L1, next; L1: a; jmp end; next: split L2, next2; ... last alternative.
        std::vector<std::size_t> jumps;
        for (std::size_t k = 0; k < n.kids.size(); ++k) {
          if (k + 1 < n.kids.size()) {
            const std::size_t split = re_.prog_.size();
            re_.prog_.push_back({Regex::Op::kSplit, {}, static_cast<std::uint32_t>(split + 1), 0});
            if (!emit(n.kids[k], depth + 1)) return false;
            jumps.push_back(re_.prog_.size());
            re_.prog_.push_back({Regex::Op::kJmp, {}, 0, 0});
            re_.prog_[split].y = static_cast<std::uint32_t>(re_.prog_.size());
          } else if (!emit(n.kids[k], depth + 1)) {
            return false;
          }
        }
        for (std::size_t j : jumps)
          re_.prog_[j].x = static_cast<std::uint32_t>(re_.prog_.size());
        return true;
      }
      case Node::Kind::kRepeat: {
        const std::uint32_t kid = n.kids.front();
        for (int k = 0; k < n.min; ++k) {
          if (!emit(kid, depth + 1)) return false;
        }
        if (n.max < 0) {
          // L: split body, end; body; jmp L
          const std::size_t loop = re_.prog_.size();
          re_.prog_.push_back({Regex::Op::kSplit, {}, static_cast<std::uint32_t>(loop + 1), 0});
          if (!emit(kid, depth + 1)) return false;
          re_.prog_.push_back({Regex::Op::kJmp, {}, static_cast<std::uint32_t>(loop), 0});
          re_.prog_[loop].y = static_cast<std::uint32_t>(re_.prog_.size());
          return true;
        }
        std::vector<std::size_t> splits;
        for (int k = n.min; k < n.max; ++k) {
          splits.push_back(re_.prog_.size());
          re_.prog_.push_back(
              {Regex::Op::kSplit, {}, static_cast<std::uint32_t>(re_.prog_.size() + 1), 0});
          if (!emit(kid, depth + 1)) return false;
        }
        for (std::size_t sp : splits)
          re_.prog_[sp].y = static_cast<std::uint32_t>(re_.prog_.size());
        return true;
      }
    }
    return false;
  }

 private:
  Regex& re_;
  const std::vector<Node>& nodes_;
};

Result<Regex> Regex::compile(std::string_view pattern) {
  if (pattern.size() > kMaxPattern) {
    return make_error(fmt::format("the pattern is longer than {} bytes", kMaxPattern));
  }
  Parser parser(pattern);
  auto root = parser.parse();
  if (!root) return make_error(root.error());
  Regex re;
  RegexCompiler c(re, parser.nodes());
  if (!c.emit(*root, 0) || re.prog_.size() > kMaxProgram) {
    return make_error(
        fmt::format("the pattern is too large (more than {} instructions after "
                    "expanding repetitions)",
                    kMaxProgram));
  }
  re.prog_.push_back({Op::kMatch, {}, 0, 0});
  return re;
}

bool Regex::search(std::string_view text) const {
  std::uint64_t budget = std::numeric_limits<std::uint64_t>::max();
  return *search(text, budget);
}

std::optional<bool> Regex::search(std::string_view text, std::uint64_t& budget) const {
  // Pike VM: the set of program counters alive at each position, advanced one byte at a time; a
  // new thread starts at every position (unanchored search). Linear in text x program size.
  const std::size_t n = prog_.size();
  struct List {
    std::vector<std::uint32_t> dense;
    std::vector<std::uint32_t> sparse;
    bool contains(std::uint32_t pc) const {
      const std::uint32_t i = sparse[pc];
      return i < dense.size() && dense[i] == pc;
    }
    void add(std::uint32_t pc) {
      sparse[pc] = static_cast<std::uint32_t>(dense.size());
      dense.push_back(pc);
    }
  };
  List cur{{}, std::vector<std::uint32_t>(n, 0)};
  List next{{}, std::vector<std::uint32_t>(n, 0)};
  cur.dense.reserve(n);
  next.dense.reserve(n);
  std::vector<std::uint32_t> stack;
  stack.reserve(n);
  auto holds = [&](Assertion a, std::size_t pos) {
    const bool before = pos > 0 && is_word(static_cast<unsigned char>(text[pos - 1]));
    const bool after = pos < text.size() && is_word(static_cast<unsigned char>(text[pos]));
    switch (a) {
      case Assertion::kBeginText:
        return pos == 0;
      case Assertion::kEndText:
        return pos == text.size();
      case Assertion::kBeginLine:
        return pos == 0 || text[pos - 1] == '\n';
      case Assertion::kEndLine:
        return pos == text.size() || text[pos] == '\n';
      case Assertion::kWordBoundary:
        return before != after;
      case Assertion::kNotWordBoundary:
        return before == after;
    }
    return false;
  };
  bool out_of_budget = false;
  auto add_thread = [&](List& list, std::uint32_t start, std::size_t pos) {
    stack.clear();
    stack.push_back(start);
    while (!stack.empty()) {
      const std::uint32_t pc = stack.back();
      stack.pop_back();
      if (list.contains(pc)) continue;
      if (budget == 0) {
        out_of_budget = true;
        return;
      }
      --budget;
      list.add(pc);
      const Inst& i = prog_[pc];
      switch (i.op) {
        case Op::kJmp:
          stack.push_back(i.x);
          break;
        case Op::kSplit:
          stack.push_back(i.y);
          stack.push_back(i.x);
          break;
        case Op::kAssert:
          if (holds(i.assertion, pos)) stack.push_back(pc + 1);
          break;
        case Op::kSet:
        case Op::kMatch:
          break;
      }
    }
  };
  for (std::size_t pos = 0; pos <= text.size(); ++pos) {
    add_thread(cur, 0, pos);
    if (out_of_budget) return std::nullopt;
    for (std::size_t k = 0; k < cur.dense.size(); ++k) {
      const Inst& i = prog_[cur.dense[k]];
      if (i.op == Op::kMatch) return true;
      if (i.op == Op::kSet && pos < text.size() &&
          sets_[i.x].test(static_cast<unsigned char>(text[pos]))) {
        add_thread(next, cur.dense[k] + 1, pos + 1);
        if (out_of_budget) return std::nullopt;
      }
    }
    std::swap(cur, next);
    next.dense.clear();
  }
  return false;
}

}  // namespace capsim::cel
