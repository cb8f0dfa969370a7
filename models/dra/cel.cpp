#include "models/dra/cel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>

#include "sim/quantity.hpp"

namespace capsim::cel {

using Type = Program::Type;
using Kind = Program::Kind;
using Cmp = Program::Cmp;
using Node = Program::Node;

std::string position(std::string_view text, std::size_t pos) {
  int line = 1, col = 1;
  for (std::size_t i = 0; i < pos && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return fmt::format("{}:{}", line, col);
}

namespace {

const char* type_name(Type t) {
  switch (t) {
    case Type::kDyn:
      return "dyn";
    case Type::kBool:
      return "bool";
    case Type::kInt:
      return "int";
    case Type::kString:
      return "string";
    case Type::kQuantity:
      return "quantity";
    case Type::kSemver:
      return "semver";
    case Type::kList:
      return "list";
    case Type::kDevice:
      return "device";
    case Type::kAttributes:
    case Type::kCapacities:
      return "map(string, map)";
    case Type::kAttrDomain:
      return "map(string, dyn)";
    case Type::kCapDomain:
      return "map(string, quantity)";
  }
  return "?";
}

const char* cmp_name(Cmp c) {
  switch (c) {
    case Cmp::kEq:
      return "==";
    case Cmp::kNe:
      return "!=";
    case Cmp::kLt:
      return "<";
    case Cmp::kLe:
      return "<=";
    case Cmp::kGt:
      return ">";
    case Cmp::kGe:
      return ">=";
  }
  return "?";
}

}  // namespace

// Helper types used by the Parser/Checker/Evaluator classes (named, not anonymous, so that those
// classes may hold them).
namespace impl {

// ---- Lexer --------------------------------------------------------------------------------

enum class Tok : std::uint8_t { kEnd, kIdent, kInt, kString, kOp };

struct Token {
  Tok kind = Tok::kEnd;
  std::uint32_t pos = 0;
  std::string text;       // identifier, operator, or the decoded string
  std::uint64_t num = 0;  // integer literal magnitude
};

const std::vector<std::string_view>& reserved_words() {
  static const std::vector<std::string_view> r = {
      "as",  "break", "const",   "continue",  "else",   "for", "function", "if",   "import",
      "let", "loop",  "package", "namespace", "return", "var", "void",     "while"};
  return r;
}

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}

  // Reads every token; on error returns the message with its position.
  Result<std::vector<Token>> run() {
    std::vector<Token> out;
    while (true) {
      skip_space();
      if (!error_.empty()) return make_error(error_);
      Token t;
      t.pos = static_cast<std::uint32_t>(pos_);
      if (pos_ >= src_.size()) {
        out.push_back(t);
        return out;
      }
      const char c = src_[pos_];
      if (is_ident_start(c)) {
        // Raw and bytes string prefixes.
        if ((c == 'r' || c == 'R' || c == 'b' || c == 'B') && pos_ + 1 < src_.size() &&
            (src_[pos_ + 1] == '"' || src_[pos_ + 1] == '\'')) {
          if (c == 'b' || c == 'B') return fail(pos_, "bytes literals are not supported");
          ++pos_;
          if (!string(t, true)) return make_error(error_);
          out.push_back(std::move(t));
          continue;
        }
        if ((c == 'b' || c == 'B') && pos_ + 2 < src_.size() &&
            (src_[pos_ + 1] == 'r' || src_[pos_ + 1] == 'R') &&
            (src_[pos_ + 2] == '"' || src_[pos_ + 2] == '\'')) {
          return fail(pos_, "bytes literals are not supported");
        }
        if ((c == 'r' || c == 'R') && pos_ + 2 < src_.size() &&
            (src_[pos_ + 1] == 'b' || src_[pos_ + 1] == 'B') &&
            (src_[pos_ + 2] == '"' || src_[pos_ + 2] == '\'')) {
          return fail(pos_, "bytes literals are not supported");
        }
        const std::size_t start = pos_;
        while (pos_ < src_.size() && is_ident_char(src_[pos_]))
          ++pos_;
        t.kind = Tok::kIdent;
        t.text = std::string(src_.substr(start, pos_ - start));
        out.push_back(std::move(t));
        continue;
      }
      if (c >= '0' && c <= '9') {
        if (!number(t)) return make_error(error_);
        out.push_back(std::move(t));
        continue;
      }
      if (c == '.' && pos_ + 1 < src_.size() && src_[pos_ + 1] >= '0' && src_[pos_ + 1] <= '9') {
        return fail(pos_, "floating-point literals are not supported by capsim's CEL subset");
      }
      if (c == '"' || c == '\'') {
        if (!string(t, false)) return make_error(error_);
        out.push_back(std::move(t));
        continue;
      }
      static const std::vector<std::string_view> ops = {
          "==", "!=", "<=", ">=", "&&", "||", "<", ">", "!", "-", "+", "*",
          "/",  "%",  "?",  ":",  ".",  ",",  "(", ")", "[", "]", "{", "}"};
      bool matched = false;
      for (std::string_view op : ops) {
        if (src_.substr(pos_, op.size()) == op) {
          t.kind = Tok::kOp;
          t.text = std::string(op);
          pos_ += op.size();
          matched = true;
          break;
        }
      }
      if (!matched) {
        const auto uc = static_cast<unsigned char>(c);
        if (c == '=') return fail(pos_, "unexpected '=' (use == to compare)");
        if (c == '&') return fail(pos_, "unexpected '&' (use && for logical and)");
        if (c == '|') return fail(pos_, "unexpected '|' (use || for logical or)");
        if (uc < 0x20 || uc >= 0x7f) {
          return fail(pos_, fmt::format("unexpected character 0x{:02x}", uc));
        }
        return fail(pos_, fmt::format("unexpected character '{}'", c));
      }
      out.push_back(std::move(t));
    }
  }

 private:
  static bool is_ident_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  }
  static bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

  Error fail(std::size_t at, const std::string& what) {
    if (error_.empty()) error_ = fmt::format("{}: {}", position(src_, at), what);
    return Error{error_};
  }
  bool failb(std::size_t at, const std::string& what) {
    (void)fail(at, what);
    return false;
  }

  void skip_space() {
    while (pos_ < src_.size()) {
      const char c = src_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
        ++pos_;
      } else if (c == '/' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '/') {
        while (pos_ < src_.size() && src_[pos_] != '\n')
          ++pos_;
      } else {
        return;
      }
    }
  }

  bool number(Token& t) {
    const std::size_t start = pos_;
    std::uint64_t v = 0;
    bool overflow = false;
    auto push = [&](unsigned base, unsigned d) {
      if (v > (std::numeric_limits<std::uint64_t>::max() - d) / base) overflow = true;
      v = v * base + d;
    };
    if (src_[pos_] == '0' && pos_ + 1 < src_.size() &&
        (src_[pos_ + 1] == 'x' || src_[pos_ + 1] == 'X')) {
      pos_ += 2;
      const std::size_t digits = pos_;
      while (pos_ < src_.size() && std::isxdigit(static_cast<unsigned char>(src_[pos_]))) {
        const char h = src_[pos_++];
        push(16, static_cast<unsigned>(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10));
      }
      if (pos_ == digits) return failb(start, "a hexadecimal literal needs digits");
    } else {
      while (pos_ < src_.size() && src_[pos_] >= '0' && src_[pos_] <= '9') {
        push(10, static_cast<unsigned>(src_[pos_++] - '0'));
      }
      if (pos_ < src_.size() && (src_[pos_] == '.' || src_[pos_] == 'e' || src_[pos_] == 'E')) {
        return failb(start, "floating-point literals are not supported by capsim's CEL subset");
      }
    }
    if (pos_ < src_.size() && (src_[pos_] == 'u' || src_[pos_] == 'U')) {
      return failb(start, "unsigned integer literals are not supported by capsim's CEL subset");
    }
    if (pos_ < src_.size() && is_ident_char(src_[pos_])) {
      return failb(start, "a number runs into an identifier");
    }
    if (overflow || v > std::uint64_t{1} << 63) return failb(start, "integer literal out of range");
    t.kind = Tok::kInt;
    t.num = v;
    t.text = std::string(src_.substr(start, pos_ - start));
    return true;
  }

  static void put_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  // A string literal at pos_ (the opening quote). `raw`: no escapes.
  bool string(Token& t, bool raw) {
    const std::size_t start = pos_ > 0 && raw ? pos_ - 1 : pos_;
    const char q = src_[pos_];
    const bool triple = src_.substr(pos_, 3) == std::string_view(q == '"' ? "\"\"\"" : "'''");
    pos_ += triple ? 3 : 1;
    std::string out;
    auto hex = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    while (true) {
      if (pos_ >= src_.size()) return failb(start, "unterminated string literal");
      const char c = src_[pos_];
      if (triple ? src_.substr(pos_, 3) == std::string_view(q == '"' ? "\"\"\"" : "'''") : c == q) {
        pos_ += triple ? 3 : 1;
        break;
      }
      if (!triple && (c == '\n' || c == '\r')) {
        return failb(start, "a newline in a string literal (use a triple-quoted string)");
      }
      if (c != '\\' || raw) {
        out += c;
        ++pos_;
        continue;
      }
      const std::size_t esc = pos_;
      if (pos_ + 1 >= src_.size()) return failb(esc, "unterminated escape sequence");
      const char e = src_[pos_ + 1];
      pos_ += 2;
      switch (e) {
        case '\\':
        case '\'':
        case '"':
        case '`':
        case '?':
          out += e;
          break;
        case 'a':
          out += '\a';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'v':
          out += '\v';
          break;
        case 'x':
        case 'X':
        case 'u':
        case 'U': {
          const std::size_t n = (e == 'x' || e == 'X') ? 2 : e == 'u' ? 4 : 8;
          std::uint32_t cp = 0;
          for (std::size_t k = 0; k < n; ++k) {
            if (pos_ >= src_.size() || hex(src_[pos_]) < 0) {
              return failb(esc, fmt::format("invalid \\{} escape sequence", e));
            }
            cp = cp * 16 + static_cast<std::uint32_t>(hex(src_[pos_++]));
          }
          if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            return failb(esc, "invalid Unicode code point in an escape sequence");
          }
          put_utf8(out, cp);
          break;
        }
        default:
          if (e >= '0' && e <= '3') {
            std::uint32_t v = static_cast<std::uint32_t>(e - '0');
            for (int k = 0; k < 2; ++k) {
              if (pos_ >= src_.size() || src_[pos_] < '0' || src_[pos_] > '7') {
                return failb(esc, "invalid octal escape sequence");
              }
              v = v * 8 + static_cast<std::uint32_t>(src_[pos_++] - '0');
            }
            put_utf8(out, v);
            break;
          }
          return failb(esc, fmt::format("invalid escape sequence \\{}", e));
      }
    }
    t.kind = Tok::kString;
    t.text = std::move(out);
    return true;
  }

  std::string_view src_;
  std::size_t pos_ = 0;
  std::string error_;
};

}  // namespace impl

using impl::Lexer;
using impl::reserved_words;
using impl::Tok;
using impl::Token;

// ---- Parser -------------------------------------------------------------------------------

class Parser {
 public:
  Parser(Program& p, std::vector<Token> toks) : p_(p), toks_(std::move(toks)) {}

  Result<std::uint32_t> run() {
    const std::uint32_t root = expr();
    if (!error_.empty()) return make_error(error_);
    if (cur().kind != Tok::kEnd) {
      fail(cur().pos,
           fmt::format("unexpected {} after the end of the expression", describe(cur())));
      return make_error(error_);
    }
    return root;
  }

 private:
  const Token& cur() const { return toks_[i_]; }
  bool is_op(std::string_view op) const { return cur().kind == Tok::kOp && cur().text == op; }
  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::kEnd:
        return "end of expression";
      case Tok::kIdent:
        return fmt::format("'{}'", t.text);
      case Tok::kInt:
        return fmt::format("number {}", t.text);
      case Tok::kString:
        return "string literal";
      case Tok::kOp:
        return fmt::format("'{}'", t.text);
    }
    return "token";
  }
  std::uint32_t fail(std::uint32_t at, const std::string& what) {
    if (error_.empty()) error_ = fmt::format("{}: {}", position(p_.source_, at), what);
    return 0;
  }
  bool ok() const { return error_.empty(); }

  std::uint32_t add(Node n) {
    for (std::uint32_t k : n.kids)
      n.depth = std::max(n.depth, p_.nodes_[k].depth + 1);
    if (n.depth > p_.limits_.max_depth) {
      return fail(n.pos,
                  fmt::format("the expression nests deeper than {} levels", p_.limits_.max_depth));
    }
    p_.nodes_.push_back(std::move(n));
    return static_cast<std::uint32_t>(p_.nodes_.size() - 1);
  }

  // Guards the parser's own recursion (parentheses, unary operators, arguments).
  struct Nest {
    Parser& p;
    explicit Nest(Parser& parser) : p(parser) { ++p.nesting_; }
    ~Nest() { --p.nesting_; }
  };
  bool too_deep() {
    if (nesting_ > p_.limits_.max_depth) {
      fail(cur().pos,
           fmt::format("the expression nests deeper than {} levels", p_.limits_.max_depth));
      return true;
    }
    return false;
  }

  std::uint32_t expr() {
    Nest nest(*this);
    if (too_deep()) return 0;
    const std::uint32_t c = logical(Kind::kOr, "||");
    if (!ok() || !is_op("?")) return c;
    const std::uint32_t at = cur().pos;
    ++i_;
    const std::uint32_t a = logical(Kind::kOr, "||");
    if (!ok()) return 0;
    if (!is_op(":"))
      return fail(cur().pos, fmt::format("expected ':' of ?:, found {}", describe(cur())));
    ++i_;
    const std::uint32_t b = expr();
    if (!ok()) return 0;
    Node n;
    n.kind = Kind::kCond;
    n.pos = at;
    n.kids = {c, a, b};
    return add(std::move(n));
  }

  // || over && over relations; both n-ary so long chains stay shallow.
  std::uint32_t logical(Kind kind, std::string_view op) {
    std::vector<std::uint32_t> kids;
    kids.push_back(kind == Kind::kOr ? logical(Kind::kAnd, "&&") : relation());
    std::uint32_t at = 0;
    while (ok() && is_op(op)) {
      if (at == 0) at = cur().pos;
      ++i_;
      kids.push_back(kind == Kind::kOr ? logical(Kind::kAnd, "&&") : relation());
    }
    if (!ok()) return 0;
    if (kids.size() == 1) return kids.front();
    Node n;
    n.kind = kind;
    n.pos = at;
    n.kids = std::move(kids);
    return add(std::move(n));
  }

  std::uint32_t relation() {
    std::uint32_t left = additive();
    while (ok()) {
      Node n;
      n.pos = cur().pos;
      if (cur().kind == Tok::kIdent && cur().text == "in") {
        n.kind = Kind::kIn;
      } else if (cur().kind == Tok::kOp &&
                 (cur().text == "==" || cur().text == "!=" || cur().text == "<" ||
                  cur().text == "<=" || cur().text == ">" || cur().text == ">=")) {
        n.kind = Kind::kCompare;
        const std::string& t = cur().text;
        n.cmp = t == "=="   ? Cmp::kEq
                : t == "!=" ? Cmp::kNe
                : t == "<"  ? Cmp::kLt
                : t == "<=" ? Cmp::kLe
                : t == ">"  ? Cmp::kGt
                            : Cmp::kGe;
      } else {
        break;
      }
      ++i_;
      const std::uint32_t right = additive();
      if (!ok()) return 0;
      n.kids = {left, right};
      left = add(std::move(n));
    }
    return left;
  }

  std::uint32_t additive() {
    const std::uint32_t left = unary();
    if (ok() && cur().kind == Tok::kOp &&
        (cur().text == "+" || cur().text == "-" || cur().text == "*" || cur().text == "/" ||
         cur().text == "%")) {
      return fail(cur().pos, fmt::format("arithmetic ('{}') is not supported by capsim's CEL "
                                         "subset",
                                         cur().text));
    }
    return left;
  }

  std::uint32_t unary() {
    Nest nest(*this);
    if (too_deep()) return 0;
    if (is_op("!")) {
      const std::uint32_t at = cur().pos;
      ++i_;
      const std::uint32_t operand = unary();
      if (!ok()) return 0;
      Node n;
      n.kind = Kind::kNot;
      n.pos = at;
      n.kids = {operand};
      return add(std::move(n));
    }
    if (is_op("-")) {
      const std::uint32_t at = cur().pos;
      ++i_;
      if (cur().kind != Tok::kInt) {
        return fail(at, "unary minus is only supported before an integer literal");
      }
      Node n;
      n.kind = Kind::kInt;
      n.pos = at;
      n.type = Type::kInt;
      n.i = cur().num == std::uint64_t{1} << 63 ? std::numeric_limits<std::int64_t>::min()
                                                : -static_cast<std::int64_t>(cur().num);
      ++i_;
      return member(add(std::move(n)));
    }
    return member(primary());
  }

  std::uint32_t member(std::uint32_t target) {
    while (ok()) {
      if (is_op(".")) {
        const std::uint32_t at = cur().pos;
        ++i_;
        if (cur().kind != Tok::kIdent) {
          return fail(cur().pos, fmt::format("expected a field or method name after '.', found {}",
                                             describe(cur())));
        }
        Node n;
        n.pos = cur().pos;
        n.s = cur().text;
        ++i_;
        if (is_op("(")) {
          n.kind = Kind::kCall;
          n.method = true;
          n.kids.push_back(target);
          if (!arguments(n.kids)) return 0;
        } else {
          n.kind = Kind::kSelect;
          n.kids = {target};
          (void)at;
        }
        target = add(std::move(n));
      } else if (is_op("[")) {
        Node n;
        n.kind = Kind::kIndex;
        n.pos = cur().pos;
        ++i_;
        const std::uint32_t index = expr();
        if (!ok()) return 0;
        if (!is_op("]"))
          return fail(cur().pos, fmt::format("expected ']', found {}", describe(cur())));
        ++i_;
        n.kids = {target, index};
        target = add(std::move(n));
      } else {
        break;
      }
    }
    return target;
  }

  // Reads "(a, b, ...)" at '(' into `out`.
  bool arguments(std::vector<std::uint32_t>& out) {
    ++i_;  // '('
    if (is_op(")")) {
      ++i_;
      return true;
    }
    while (ok()) {
      out.push_back(expr());
      if (!ok()) return false;
      if (is_op(",")) {
        ++i_;
        continue;
      }
      if (is_op(")")) {
        ++i_;
        return true;
      }
      fail(cur().pos,
           fmt::format("expected ',' or ')' in an argument list, found {}", describe(cur())));
    }
    return false;
  }

  std::uint32_t primary() {
    const Token& t = cur();
    Node n;
    n.pos = t.pos;
    switch (t.kind) {
      case Tok::kEnd:
        return fail(t.pos, "unexpected end of expression");
      case Tok::kInt:
        if (t.num > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
          return fail(t.pos, "integer literal out of range");
        }
        n.kind = Kind::kInt;
        n.type = Type::kInt;
        n.i = static_cast<std::int64_t>(t.num);
        ++i_;
        return add(std::move(n));
      case Tok::kString:
        n.kind = Kind::kString;
        n.type = Type::kString;
        n.s = t.text;
        ++i_;
        return add(std::move(n));
      case Tok::kIdent: {
        const std::string name = t.text;
        if (name == "true" || name == "false") {
          n.kind = Kind::kBool;
          n.type = Type::kBool;
          n.i = name == "true";
          ++i_;
          return add(std::move(n));
        }
        if (name == "null") return fail(t.pos, "null is not supported by capsim's CEL subset");
        if (name == "in") return fail(t.pos, "unexpected 'in'");
        const auto& rw = reserved_words();
        if (std::find(rw.begin(), rw.end(), name) != rw.end()) {
          return fail(t.pos, fmt::format("'{}' is a reserved word", name));
        }
        ++i_;
        if (is_op("(")) {
          n.s = name;
          if (name == "has") {
            n.kind = Kind::kHas;
            std::vector<std::uint32_t> args;
            if (!arguments(args)) return 0;
            if (args.size() != 1 || p_.nodes_[args[0]].kind != Kind::kSelect) {
              return fail(t.pos,
                          "has() takes one field selection, e.g. "
                          "has(device.attributes['gpu.nvidia.com'].index)");
            }
            n.kids = std::move(args);
            return add(std::move(n));
          }
          n.kind = Kind::kCall;
          if (!arguments(n.kids)) return 0;
          return add(std::move(n));
        }
        n.kind = Kind::kIdent;
        n.s = name;
        return add(std::move(n));
      }
      case Tok::kOp:
        break;
    }
    if (t.text == "(") {
      ++i_;
      const std::uint32_t inner = expr();
      if (!ok()) return 0;
      if (!is_op(")"))
        return fail(cur().pos, fmt::format("expected ')', found {}", describe(cur())));
      ++i_;
      return inner;
    }
    if (t.text == "[") {
      n.kind = Kind::kList;
      n.type = Type::kList;
      ++i_;
      if (is_op("]")) {
        ++i_;
        return add(std::move(n));
      }
      while (ok()) {
        n.kids.push_back(expr());
        if (!ok()) return 0;
        if (is_op(",")) {
          ++i_;
          if (is_op("]")) {  // trailing comma
            ++i_;
            break;
          }
          continue;
        }
        if (is_op("]")) {
          ++i_;
          break;
        }
        return fail(cur().pos,
                    fmt::format("expected ',' or ']' in a list, found {}", describe(cur())));
      }
      return add(std::move(n));
    }
    if (t.text == "{") return fail(t.pos, "map literals are not supported by capsim's CEL subset");
    if (t.text == ".") {
      return fail(t.pos, "leading-dot identifiers are not supported by capsim's CEL subset");
    }
    return fail(t.pos, fmt::format("unexpected {}", describe(t)));
  }

  Program& p_;
  std::vector<Token> toks_;
  std::size_t i_ = 0;
  int nesting_ = 0;
  std::string error_;
};

// ---- Checker ------------------------------------------------------------------------------

namespace {

struct Builtin {
  std::string_view name;
  bool method;
  std::vector<Type> receivers;  // method receivers (kDyn: any)
  std::size_t args;
  Type result;
};

const std::vector<Builtin>& builtins() {
  static const std::vector<Builtin> b = {
      {"lowerAscii", true, {Type::kString}, 0, Type::kString},
      {"upperAscii", true, {Type::kString}, 0, Type::kString},
      {"size", true, {Type::kString, Type::kList}, 0, Type::kInt},
      {"startsWith", true, {Type::kString}, 1, Type::kBool},
      {"endsWith", true, {Type::kString}, 1, Type::kBool},
      {"contains", true, {Type::kString}, 1, Type::kBool},
      {"matches", true, {Type::kString}, 1, Type::kBool},
      {"compareTo", true, {Type::kQuantity, Type::kSemver}, 1, Type::kInt},
      {"isGreaterThan", true, {Type::kQuantity, Type::kSemver}, 1, Type::kBool},
      {"isLessThan", true, {Type::kQuantity, Type::kSemver}, 1, Type::kBool},
      {"asInteger", true, {Type::kQuantity}, 0, Type::kInt},
      {"isInteger", true, {Type::kQuantity}, 0, Type::kBool},
      {"major", true, {Type::kSemver}, 0, Type::kInt},
      {"minor", true, {Type::kSemver}, 0, Type::kInt},
      {"patch", true, {Type::kSemver}, 0, Type::kInt},
      {"size", false, {}, 1, Type::kInt},
      {"matches", false, {}, 2, Type::kBool},
      {"quantity", false, {}, 1, Type::kQuantity},
      {"isQuantity", false, {}, 1, Type::kBool},
      {"semver", false, {}, 1, Type::kSemver},
      {"isSemver", false, {}, 1, Type::kBool},
  };
  return b;
}

std::string supported_functions() {
  return "lowerAscii, upperAscii, size, startsWith, endsWith, contains, matches, quantity, "
         "isQuantity, semver, isSemver, compareTo, isGreaterThan, isLessThan, asInteger, "
         "isInteger, major, minor, patch, has";
}

bool known(Type t) {
  return t != Type::kDyn;
}

}  // namespace

class Checker {
 public:
  explicit Checker(Program& p) : p_(p) {}

  Result<bool> run() {
    check(p_.root_);
    if (!error_.empty()) return make_error(error_);
    const Type t = p_.nodes_[p_.root_].type;
    if (t != Type::kBool && t != Type::kDyn) {
      return make_error(fmt::format("{}: a selector must be a boolean expression, not {}",
                                    position(p_.source_, p_.nodes_[p_.root_].pos), type_name(t)));
    }
    return true;
  }

 private:
  void fail(std::uint32_t at, const std::string& what) {
    if (error_.empty()) error_ = fmt::format("{}: {}", position(p_.source_, at), what);
  }
  Type& type(std::uint32_t id) { return p_.nodes_[id].type; }

  void check(std::uint32_t id) {
    if (!error_.empty()) return;
    // Children first (copy: nodes_ does not grow here, but keep the reference-free style).
    const std::vector<std::uint32_t> kids = p_.nodes_[id].kids;
    for (std::uint32_t k : kids)
      check(k);
    if (!error_.empty()) return;
    Node& n = p_.nodes_[id];
    switch (n.kind) {
      case Kind::kBool:
      case Kind::kInt:
      case Kind::kString:
      case Kind::kList:
        return;
      case Kind::kIdent:
        if (n.s == "device") {
          n.type = Type::kDevice;
        } else {
          fail(n.pos,
               fmt::format("undeclared reference to '{}' (a selector sees only `device`)", n.s));
        }
        return;
      case Kind::kSelect:
        n.type = field(n.pos, type(kids[0]), n.s, true);
        return;
      case Kind::kIndex: {
        const Type key = type(kids[1]);
        const Type target = type(kids[0]);
        if (target == Type::kList) {
          if (known(key) && key != Type::kInt) fail(n.pos, "a list index must be an int");
          n.type = Type::kDyn;
          return;
        }
        if (known(key) && key != Type::kString) {
          fail(n.pos, fmt::format("a map key must be a string, not {}", type_name(key)));
          return;
        }
        n.type = field(n.pos, target, "", false);
        return;
      }
      case Kind::kHas:
        n.type = Type::kBool;
        return;
      case Kind::kNot:
        if (known(type(kids[0])) && type(kids[0]) != Type::kBool) {
          fail(n.pos,
               fmt::format("no matching overload for '!' applied to {}", type_name(type(kids[0]))));
        }
        n.type = Type::kBool;
        return;
      case Kind::kAnd:
      case Kind::kOr:
        for (std::uint32_t k : kids) {
          if (known(type(k)) && type(k) != Type::kBool) {
            fail(p_.nodes_[k].pos,
                 fmt::format("an operand of '{}' must be a bool, not {}",
                             n.kind == Kind::kAnd ? "&&" : "||", type_name(type(k))));
          }
        }
        n.type = Type::kBool;
        return;
      case Kind::kCond:
        if (known(type(kids[0])) && type(kids[0]) != Type::kBool) {
          fail(n.pos, "the condition of ?: must be a bool");
        }
        n.type = type(kids[1]) == type(kids[2]) ? type(kids[1]) : Type::kDyn;
        return;
      case Kind::kCompare: {
        const Type a = type(kids[0]);
        const Type b = type(kids[1]);
        if (known(a) && known(b) && a != b) {
          fail(n.pos, fmt::format("no matching overload for '{}' applied to ({}, {})",
                                  cmp_name(n.cmp), type_name(a), type_name(b)));
          return;
        }
        if (n.cmp != Cmp::kEq && n.cmp != Cmp::kNe) {
          for (Type t : {a, b}) {
            if (t == Type::kQuantity || t == Type::kSemver) {
              fail(n.pos, fmt::format("'{}' is not defined on {} values; use compareTo(), "
                                      "isGreaterThan() or isLessThan()",
                                      cmp_name(n.cmp), type_name(t)));
              return;
            }
            if (known(t) && t != Type::kInt && t != Type::kString && t != Type::kBool) {
              fail(n.pos, fmt::format("no matching overload for '{}' applied to {}",
                                      cmp_name(n.cmp), type_name(t)));
              return;
            }
          }
        }
        n.type = Type::kBool;
        return;
      }
      case Kind::kIn: {
        const Type c = type(kids[1]);
        if (known(c) && c != Type::kList && c != Type::kAttributes && c != Type::kCapacities &&
            c != Type::kAttrDomain && c != Type::kCapDomain) {
          fail(n.pos, fmt::format("'in' needs a list or a map on its right, not {}", type_name(c)));
        }
        n.type = Type::kBool;
        return;
      }
      case Kind::kCall:
        call(n, kids);
        return;
    }
  }

  // The type of `target.name` (select) or `target[key]` (index; name empty).
  Type field(std::uint32_t at, Type target, const std::string& name, bool select) {
    switch (target) {
      case Type::kDevice:
        if (!select) {
          fail(at, "device is not a map; use device.driver, device.attributes or device.capacity");
          return Type::kDyn;
        }
        if (name == "driver") return Type::kString;
        if (name == "attributes") return Type::kAttributes;
        if (name == "capacity") return Type::kCapacities;
        if (name == "allowMultipleAllocations") return Type::kBool;
        fail(at, fmt::format("undefined field '{}' of device (it has driver, attributes, capacity "
                             "and allowMultipleAllocations)",
                             name));
        return Type::kDyn;
      case Type::kAttributes:
        return Type::kAttrDomain;
      case Type::kCapacities:
        return Type::kCapDomain;
      case Type::kAttrDomain:
        return Type::kDyn;
      case Type::kCapDomain:
        return Type::kQuantity;
      case Type::kDyn:
        return Type::kDyn;
      default:
        fail(at, fmt::format("{} has no fields", type_name(target)));
        return Type::kDyn;
    }
  }

  void call(Node& n, const std::vector<std::uint32_t>& kids) {
    const std::size_t nargs = kids.size() - (n.method ? 1 : 0);
    const Builtin* hit = nullptr;
    bool name_known = false;
    for (const Builtin& b : builtins()) {
      if (b.name != n.s) continue;
      name_known = true;
      if (b.method == n.method && b.args == nargs) hit = &b;
    }
    if (!name_known) {
      fail(n.pos, fmt::format("unsupported function '{}' (capsim's CEL subset has: {})", n.s,
                              supported_functions()));
      return;
    }
    if (hit == nullptr) {
      fail(n.pos, fmt::format("no overload of {}{}() takes {} argument(s)", n.method ? "." : "",
                              n.s, nargs));
      return;
    }
    std::vector<Type> args;
    for (std::size_t k = n.method ? 1 : 0; k < kids.size(); ++k)
      args.push_back(type(kids[k]));
    if (n.method) {
      const Type r = type(kids[0]);
      if (known(r) &&
          std::find(hit->receivers.begin(), hit->receivers.end(), r) == hit->receivers.end()) {
        fail(n.pos, fmt::format("no matching overload for {}() on {}", n.s, type_name(r)));
        return;
      }
      // Arguments of the same kind as the receiver (compareTo etc.), or strings.
      for (Type a : args) {
        if (!known(a)) continue;
        const bool same_kind = n.s == "compareTo" || n.s == "isGreaterThan" || n.s == "isLessThan";
        if (same_kind && known(r) && a != r) {
          fail(n.pos, fmt::format("{}() compares a {} with a {}", n.s, type_name(r), type_name(a)));
          return;
        }
        if (!same_kind && a != Type::kString) {
          fail(n.pos, fmt::format("{}() takes a string argument, not {}", n.s, type_name(a)));
          return;
        }
      }
    } else {
      if (n.s != "size") {
        for (Type a : args) {
          if (known(a) && a != Type::kString) {
            fail(n.pos, fmt::format("{}() takes string arguments, not {}", n.s, type_name(a)));
            return;
          }
        }
      }
    }
    n.type = hit->result;
    n.i = -1;
    // Validate literal arguments now, and keep the compiled constant.
    const std::uint32_t last = kids.back();
    const Node& lit = p_.nodes_[last];
    if (lit.kind != Kind::kString) return;
    if (n.s == "matches") {
      auto re = Regex::compile(lit.s);
      if (!re) {
        fail(lit.pos, fmt::format("invalid regular expression: {}", re.error()));
        return;
      }
      n.i = static_cast<std::int64_t>(p_.regexes_.size());
      p_.regexes_.push_back(std::move(re).value());
    } else if (n.s == "quantity") {
      auto q = parse_quantity_scaled(lit.s, 3, true);
      if (!q) {
        fail(lit.pos, fmt::format("invalid quantity '{}': {}", lit.s, q.error()));
        return;
      }
      n.i = static_cast<std::int64_t>(p_.quantities_.size());
      p_.quantities_.push_back(*q);
    } else if (n.s == "semver") {
      auto v = parse_semver(lit.s);
      if (!v) {
        fail(lit.pos, fmt::format("invalid semver '{}': {}", lit.s, v.error()));
        return;
      }
      n.i = static_cast<std::int64_t>(p_.semvers_.size());
      p_.semvers_.push_back(std::move(v).value());
    }
  }

  Program& p_;
  std::string error_;
};

// ---- Semver -------------------------------------------------------------------------------

Result<Semver> parse_semver(std::string_view text) {
  Semver v;
  std::string_view rest = text;
  if (const auto plus = rest.find('+'); plus != std::string_view::npos) {
    const std::string_view build = rest.substr(plus + 1);
    if (build.empty()) return make_error("empty build metadata");
    for (char c : build) {
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.')) {
        return make_error("invalid build metadata");
      }
    }
    rest = rest.substr(0, plus);
  }
  std::string_view pre;
  if (const auto dash = rest.find('-'); dash != std::string_view::npos) {
    pre = rest.substr(dash + 1);
    rest = rest.substr(0, dash);
    if (pre.empty()) return make_error("empty prerelease");
  }
  std::int64_t* parts[3] = {&v.major, &v.minor, &v.patch};
  for (int k = 0; k < 3; ++k) {
    const auto dot = rest.find('.');
    const std::string_view num = k < 2 ? rest.substr(0, dot) : rest;
    if (k < 2 && dot == std::string_view::npos) {
      return make_error("expected MAJOR.MINOR.PATCH");
    }
    if (num.empty() || num.size() > 18) return make_error("expected MAJOR.MINOR.PATCH");
    if (num.size() > 1 && num.front() == '0')
      return make_error("a version number has a leading zero");
    std::int64_t x = 0;
    for (char c : num) {
      if (c < '0' || c > '9') return make_error("expected MAJOR.MINOR.PATCH");
      x = x * 10 + (c - '0');
    }
    *parts[k] = x;
    if (k < 2) rest = rest.substr(dot + 1);
  }
  while (!pre.empty()) {
    const auto dot = pre.find('.');
    const std::string_view id = pre.substr(0, dot);
    if (id.empty()) return make_error("an empty prerelease identifier");
    bool numeric = true;
    for (char c : id) {
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-')) {
        return make_error("invalid prerelease identifier");
      }
      numeric = numeric && c >= '0' && c <= '9';
    }
    if (numeric && id.size() > 1 && id.front() == '0') {
      return make_error("a numeric prerelease identifier has a leading zero");
    }
    v.prerelease.emplace_back(id);
    if (dot == std::string_view::npos) break;
    pre = pre.substr(dot + 1);
    if (pre.empty()) return make_error("an empty prerelease identifier");
  }
  return v;
}

int compare_semver(const Semver& a, const Semver& b) {
  auto cmp = [](std::int64_t x, std::int64_t y) { return x < y ? -1 : x > y ? 1 : 0; };
  if (int c = cmp(a.major, b.major)) return c;
  if (int c = cmp(a.minor, b.minor)) return c;
  if (int c = cmp(a.patch, b.patch)) return c;
  // A version without prerelease is greater than one with.
  if (a.prerelease.empty() != b.prerelease.empty()) return a.prerelease.empty() ? 1 : -1;
  const std::size_t n = std::min(a.prerelease.size(), b.prerelease.size());
  auto numeric = [](const std::string& s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  for (std::size_t i = 0; i < n; ++i) {
    const std::string& x = a.prerelease[i];
    const std::string& y = b.prerelease[i];
    const bool nx = numeric(x), ny = numeric(y);
    if (nx && ny) {
      if (x.size() != y.size()) return x.size() < y.size() ? -1 : 1;
      if (x != y) return x < y ? -1 : 1;
    } else if (nx != ny) {
      return nx ? -1 : 1;  // numeric identifiers sort before alphanumeric ones
    } else if (x != y) {
      return x < y ? -1 : 1;
    }
  }
  return cmp(static_cast<std::int64_t>(a.prerelease.size()),
             static_cast<std::int64_t>(b.prerelease.size()));
}

// ---- Evaluator ----------------------------------------------------------------------------

namespace impl {

struct Value {
  Type type = Type::kBool;  // kDyn marks an error
  bool b = false;
  std::int64_t i = 0;  // int, quantity (milli)
  std::string s;       // string, domain name, or the error message
  Semver v;
  std::vector<Value> list;

  bool is_error() const { return type == Type::kDyn; }
  static Value error(std::string msg) {
    Value x;
    x.type = Type::kDyn;
    x.s = std::move(msg);
    return x;
  }
  static Value boolean(bool b) {
    Value x;
    x.type = Type::kBool;
    x.b = b;
    return x;
  }
  static Value integer(std::int64_t i) {
    Value x;
    x.type = Type::kInt;
    x.i = i;
    return x;
  }
  static Value string(std::string s) {
    Value x;
    x.type = Type::kString;
    x.s = std::move(s);
    return x;
  }
  static Value quantity(std::int64_t milli) {
    Value x;
    x.type = Type::kQuantity;
    x.i = milli;
    return x;
  }
};

}  // namespace impl

using impl::Value;

class Evaluator {
 public:
  Evaluator(const Program& p, const DeviceView& d) : p_(p), d_(d) {}

  EvalResult run() {
    EvalResult r;
    Value v = eval(p_.root_);
    r.cost = cost_;
    if (aborted_) {
      r.error = abort_message_;
      return r;
    }
    if (v.is_error()) {
      r.error = v.s;
      return r;
    }
    if (v.type != Type::kBool) {
      r.error = fmt::format("the selector returned {}, not a bool", type_name(v.type));
      return r;
    }
    r.ok = true;
    r.value = v.b;
    return r;
  }

 private:
  // Charges `c` to the cost; past the limit the evaluation is abandoned.
  bool charge(std::uint64_t c) {
    cost_ += c;
    if (cost_ > p_.limits_.max_cost && !aborted_) {
      aborted_ = true;
      abort_message_ = fmt::format(
          "operation cancelled: the selector exceeded its cost limit of {}", p_.limits_.max_cost);
    }
    return !aborted_;
  }

  static Value from_attribute(const dra::AttrValue& a) {
    switch (a.kind) {
      case dra::AttrValue::Kind::kInt:
        return Value::integer(a.i);
      case dra::AttrValue::Kind::kBool:
        return Value::boolean(a.b);
      case dra::AttrValue::Kind::kString:
        return Value::string(a.s);
      case dra::AttrValue::Kind::kVersion: {
        auto v = parse_semver(a.s);
        if (!v)
          return Value::error(fmt::format("invalid version attribute '{}': {}", a.s, v.error()));
        Value x;
        x.type = Type::kSemver;
        x.v = std::move(v).value();
        return x;
      }
    }
    return Value::error("unknown attribute kind");
  }

  // target[key] / target.key on the device's maps.
  Value lookup(const Value& target, const std::string& key) {
    switch (target.type) {
      case Type::kAttributes: {
        Value x;
        x.type = Type::kAttrDomain;
        x.s = key;
        return x;
      }
      case Type::kCapacities: {
        Value x;
        x.type = Type::kCapDomain;
        x.s = key;
        return x;
      }
      case Type::kAttrDomain: {
        const dra::AttrValue* a = d_.attribute(target.s, key);
        if (a == nullptr) return Value::error(fmt::format("no such key: {}", key));
        return from_attribute(*a);
      }
      case Type::kCapDomain: {
        auto c = d_.capacity(target.s, key);
        if (!c) return Value::error(fmt::format("no such key: {}", key));
        return Value::quantity(*c);
      }
      default:
        return Value::error(
            fmt::format("no such overload: {} has no key '{}'", type_name(target.type), key));
    }
  }

  bool present(const Value& target, const std::string& key) {
    switch (target.type) {
      case Type::kAttributes:
        return d_.has_attribute_domain(key);
      case Type::kCapacities:
        return d_.has_capacity_domain(key);
      case Type::kAttrDomain:
        return d_.attribute(target.s, key) != nullptr;
      case Type::kCapDomain:
        return d_.capacity(target.s, key).has_value();
      default:
        return false;
    }
  }

  static std::optional<bool> equal(const Value& a, const Value& b) {
    if (a.type != b.type) return false;  // heterogeneous equality
    switch (a.type) {
      case Type::kBool:
        return a.b == b.b;
      case Type::kInt:
      case Type::kQuantity:
        return a.i == b.i;
      case Type::kString:
        return a.s == b.s;
      case Type::kSemver:
        return compare_semver(a.v, b.v) == 0;
      case Type::kList: {
        if (a.list.size() != b.list.size()) return false;
        for (std::size_t k = 0; k < a.list.size(); ++k) {
          auto e = equal(a.list[k], b.list[k]);
          if (!e) return std::nullopt;
          if (!*e) return false;
        }
        return true;
      }
      default:
        return std::nullopt;
    }
  }

  Value eval(std::uint32_t id) {
    if (!charge(1)) return Value::error(abort_message_);
    const Node& n = p_.nodes_[id];
    switch (n.kind) {
      case Kind::kBool:
        return Value::boolean(n.i != 0);
      case Kind::kInt:
        return Value::integer(n.i);
      case Kind::kString:
        return Value::string(n.s);
      case Kind::kList: {
        Value x;
        x.type = Type::kList;
        for (std::uint32_t k : n.kids) {
          Value e = eval(k);
          if (e.is_error()) return e;
          x.list.push_back(std::move(e));
        }
        return x;
      }
      case Kind::kIdent: {
        Value x;
        x.type = Type::kDevice;
        return x;
      }
      case Kind::kSelect: {
        Value t = eval(n.kids[0]);
        if (t.is_error()) return t;
        if (t.type == Type::kDevice) {
          if (n.s == "driver") return Value::string(std::string(d_.driver()));
          if (n.s == "allowMultipleAllocations")
            return Value::boolean(d_.allow_multiple_allocations());
          Value x;
          x.type = n.s == "attributes" ? Type::kAttributes : Type::kCapacities;
          return x;
        }
        return lookup(t, n.s);
      }
      case Kind::kIndex: {
        Value t = eval(n.kids[0]);
        if (t.is_error()) return t;
        Value k = eval(n.kids[1]);
        if (k.is_error()) return k;
        if (t.type == Type::kList) {
          if (k.type != Type::kInt)
            return Value::error("no such overload: a list index must be an int");
          if (k.i < 0 || static_cast<std::uint64_t>(k.i) >= t.list.size()) {
            return Value::error(fmt::format("index out of range: {}", k.i));
          }
          return t.list[static_cast<std::size_t>(k.i)];
        }
        if (k.type != Type::kString)
          return Value::error("no such overload: a map key must be a string");
        return lookup(t, k.s);
      }
      case Kind::kHas: {
        const Node& sel = p_.nodes_[n.kids[0]];
        Value t = eval(sel.kids[0]);
        if (t.is_error()) return t;
        if (t.type == Type::kDevice) {
          return Value::boolean(sel.s == "driver" || sel.s == "attributes" || sel.s == "capacity" ||
                                sel.s == "allowMultipleAllocations");
        }
        if (t.type != Type::kAttributes && t.type != Type::kCapacities &&
            t.type != Type::kAttrDomain && t.type != Type::kCapDomain) {
          return Value::error(fmt::format("no such overload: has() on {}", type_name(t.type)));
        }
        return Value::boolean(present(t, sel.s));
      }
      case Kind::kNot: {
        Value v = eval(n.kids[0]);
        if (v.is_error()) return v;
        if (v.type != Type::kBool) return Value::error("no such overload: '!' on a non-bool");
        return Value::boolean(!v.b);
      }
      case Kind::kAnd:
      case Kind::kOr: {
        // Commutative: a false operand decides && (a true one ||) even after an error.
        const bool decisive = n.kind == Kind::kOr;
        std::optional<Value> first_error;
        for (std::uint32_t k : n.kids) {
          Value v = eval(k);
          if (aborted_) return Value::error(abort_message_);
          if (v.is_error()) {
            if (!first_error) first_error = std::move(v);
            continue;
          }
          if (v.type != Type::kBool) {
            if (!first_error)
              first_error = Value::error("no such overload: a logical operand is not a bool");
            continue;
          }
          if (v.b == decisive) return Value::boolean(decisive);
        }
        if (first_error) return *first_error;
        return Value::boolean(!decisive);
      }
      case Kind::kCond: {
        Value c = eval(n.kids[0]);
        if (c.is_error()) return c;
        if (c.type != Type::kBool)
          return Value::error("no such overload: the condition of ?: is not a bool");
        return eval(n.kids[c.b ? 1 : 2]);
      }
      case Kind::kCompare: {
        Value a = eval(n.kids[0]);
        if (a.is_error()) return a;
        Value b = eval(n.kids[1]);
        if (b.is_error()) return b;
        if (n.cmp == Cmp::kEq || n.cmp == Cmp::kNe) {
          auto e = equal(a, b);
          if (!e)
            return Value::error(
                fmt::format("no such overload: '{}' on {}", cmp_name(n.cmp), type_name(a.type)));
          return Value::boolean(n.cmp == Cmp::kEq ? *e : !*e);
        }
        if (a.type != b.type ||
            (a.type != Type::kInt && a.type != Type::kString && a.type != Type::kBool)) {
          return Value::error(fmt::format("no such overload: '{}' applied to ({}, {})",
                                          cmp_name(n.cmp), type_name(a.type), type_name(b.type)));
        }
        int c = 0;
        if (a.type == Type::kInt) {
          c = a.i < b.i ? -1 : a.i > b.i ? 1 : 0;
        } else if (a.type == Type::kString) {
          if (!charge(1 + std::min(a.s.size(), b.s.size()) / 8))
            return Value::error(abort_message_);
          c = a.s.compare(b.s) < 0 ? -1 : a.s.compare(b.s) > 0 ? 1 : 0;
        } else {
          c = a.b == b.b ? 0 : (a.b ? 1 : -1);
        }
        switch (n.cmp) {
          case Cmp::kLt:
            return Value::boolean(c < 0);
          case Cmp::kLe:
            return Value::boolean(c <= 0);
          case Cmp::kGt:
            return Value::boolean(c > 0);
          default:
            return Value::boolean(c >= 0);
        }
      }
      case Kind::kIn: {
        Value x = eval(n.kids[0]);
        if (x.is_error()) return x;
        Value c = eval(n.kids[1]);
        if (c.is_error()) return c;
        if (c.type == Type::kList) {
          if (!charge(c.list.size())) return Value::error(abort_message_);
          for (const Value& e : c.list) {
            auto eq = equal(x, e);
            if (eq && *eq) return Value::boolean(true);
          }
          return Value::boolean(false);
        }
        if (c.type == Type::kAttributes || c.type == Type::kCapacities ||
            c.type == Type::kAttrDomain || c.type == Type::kCapDomain) {
          if (x.type != Type::kString) return Value::boolean(false);
          return Value::boolean(present(c, x.s));
        }
        return Value::error(fmt::format("no such overload: 'in' on {}", type_name(c.type)));
      }
      case Kind::kCall:
        return call(n);
    }
    return Value::error("unknown expression");
  }

  Value call(const Node& n) {
    std::vector<Value> args;
    for (std::uint32_t k : n.kids) {
      Value v = eval(k);
      if (v.is_error()) return v;
      args.push_back(std::move(v));
    }
    const std::string& f = n.s;
    auto bad = [&]() {
      return Value::error(fmt::format("no such overload: {}({})", f,
                                      args.empty() ? "" : type_name(args.front().type)));
    };
    auto str_arg = [&](std::size_t k) -> const std::string* {
      return k < args.size() && args[k].type == Type::kString ? &args[k].s : nullptr;
    };
    if (n.method) {
      const Value& r = args.front();
      if (f == "lowerAscii" || f == "upperAscii") {
        if (r.type != Type::kString) return bad();
        if (!charge(1 + r.s.size() / 8)) return Value::error(abort_message_);
        std::string out = r.s;
        for (char& c : out) {
          if (f == "lowerAscii" && c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
          if (f == "upperAscii" && c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
        }
        return Value::string(std::move(out));
      }
      if (f == "size") {
        if (r.type == Type::kList) return Value::integer(static_cast<std::int64_t>(r.list.size()));
        if (r.type != Type::kString) return bad();
        std::int64_t cps = 0;
        for (char c : r.s)
          cps += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
        return Value::integer(cps);
      }
      if (f == "startsWith" || f == "endsWith" || f == "contains") {
        const std::string* a = str_arg(1);
        if (r.type != Type::kString || a == nullptr) return bad();
        if (!charge(1 + (r.s.size() + a->size()) / 8)) return Value::error(abort_message_);
        if (f == "startsWith") return Value::boolean(r.s.rfind(*a, 0) == 0);
        if (f == "endsWith") {
          return Value::boolean(r.s.size() >= a->size() &&
                                r.s.compare(r.s.size() - a->size(), a->size(), *a) == 0);
        }
        if (!charge(r.s.size() * a->size() / 8)) return Value::error(abort_message_);
        return Value::boolean(r.s.find(*a) != std::string::npos);
      }
      if (f == "matches") {
        if (r.type != Type::kString || str_arg(1) == nullptr) return bad();
        return match(n, r.s, args[1].s);
      }
      if (f == "compareTo" || f == "isGreaterThan" || f == "isLessThan") {
        const Value& o = args[1];
        if (r.type != o.type || (r.type != Type::kQuantity && r.type != Type::kSemver)) {
          return Value::error(
              fmt::format("no such overload: {}.{}({})", type_name(r.type), f, type_name(o.type)));
        }
        const int c = r.type == Type::kQuantity ? (r.i < o.i   ? -1
                                                   : r.i > o.i ? 1
                                                               : 0)
                                                : compare_semver(r.v, o.v);
        if (f == "compareTo") return Value::integer(c);
        return Value::boolean(f == "isGreaterThan" ? c > 0 : c < 0);
      }
      if (f == "asInteger" || f == "isInteger") {
        if (r.type != Type::kQuantity) return bad();
        if (f == "isInteger") return Value::boolean(r.i % 1000 == 0);
        if (r.i % 1000 != 0)
          return Value::error("cannot convert a fractional quantity to an integer");
        return Value::integer(r.i / 1000);
      }
      if (f == "major" || f == "minor" || f == "patch") {
        if (r.type != Type::kSemver) return bad();
        return Value::integer(f == "major" ? r.v.major : f == "minor" ? r.v.minor : r.v.patch);
      }
      return bad();
    }
    if (f == "size") {
      if (args[0].type == Type::kList)
        return Value::integer(static_cast<std::int64_t>(args[0].list.size()));
      if (args[0].type != Type::kString) return bad();
      std::int64_t cps = 0;
      for (char c : args[0].s)
        cps += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
      return Value::integer(cps);
    }
    if (f == "matches") {
      if (str_arg(0) == nullptr || str_arg(1) == nullptr) return bad();
      return match(n, args[0].s, args[1].s);
    }
    const std::string* s = str_arg(0);
    if (s == nullptr) return bad();
    if (f == "quantity" || f == "isQuantity") {
      std::int64_t milli = 0;
      if (n.i >= 0) {
        milli = p_.quantities_[static_cast<std::size_t>(n.i)];
      } else {
        auto q = parse_quantity_scaled(*s, 3, true);
        if (!q) {
          if (f == "isQuantity") return Value::boolean(false);
          return Value::error(fmt::format("invalid quantity '{}': {}", *s, q.error()));
        }
        milli = *q;
      }
      if (f == "isQuantity") return Value::boolean(true);
      return Value::quantity(milli);
    }
    if (f == "semver" || f == "isSemver") {
      Value x;
      x.type = Type::kSemver;
      if (n.i >= 0) {
        x.v = p_.semvers_[static_cast<std::size_t>(n.i)];
      } else {
        auto v = parse_semver(*s);
        if (!v) {
          if (f == "isSemver") return Value::boolean(false);
          return Value::error(fmt::format("invalid semver '{}': {}", *s, v.error()));
        }
        x.v = std::move(v).value();
      }
      if (f == "isSemver") return Value::boolean(true);
      return x;
    }
    return bad();
  }

  Value match(const Node& n, const std::string& text, const std::string& pattern) {
    const Regex* re = nullptr;
    std::optional<Regex> dynamic;
    if (n.i >= 0) {
      re = &p_.regexes_[static_cast<std::size_t>(n.i)];
    } else {
      if (!charge(1 + pattern.size())) return Value::error(abort_message_);
      auto compiled = Regex::compile(pattern);
      if (!compiled)
        return Value::error(fmt::format("invalid regular expression: {}", compiled.error()));
      dynamic = std::move(compiled).value();
      re = &*dynamic;
    }
    std::uint64_t budget = p_.limits_.max_cost > cost_ ? p_.limits_.max_cost - cost_ : 0;
    const std::uint64_t before = budget;
    const std::optional<bool> hit = re->search(text, budget);
    if (!charge(before - budget) || !hit) {
      if (!aborted_) charge(p_.limits_.max_cost + 1);
      return Value::error(abort_message_);
    }
    return Value::boolean(*hit);
  }

  const Program& p_;
  const DeviceView& d_;
  std::uint64_t cost_ = 0;
  bool aborted_ = false;
  std::string abort_message_;
};

Result<Program> Program::compile(std::string_view expression, const Limits& limits) {
  if (expression.size() > limits.max_expression_bytes) {
    return make_error(fmt::format("1:1: the expression is {} bytes long; at most {} are allowed",
                                  expression.size(), limits.max_expression_bytes));
  }
  Program p;
  p.source_ = std::string(expression);
  p.limits_ = limits;
  auto toks = Lexer(p.source_).run();
  if (!toks) return make_error(toks.error());
  if (toks->size() == 1) return make_error("1:1: the expression is empty");
  Parser parser(p, std::move(toks).value());
  auto root = parser.run();
  if (!root) return make_error(root.error());
  p.root_ = *root;
  Checker checker(p);
  auto checked = checker.run();
  if (!checked) return make_error(checked.error());
  return p;
}

EvalResult Program::eval(const DeviceView& device) const {
  Evaluator e(*this, device);
  return e.run();
}

// ---- SliceDeviceView ----------------------------------------------------------------------

const dra::AttrValue* SliceDeviceView::attribute(std::string_view domain,
                                                 std::string_view name) const {
  for (const dra::Attribute& a : d_->attributes) {
    if (a.name == name && a.domain == domain) return &a.value;
  }
  return nullptr;
}

bool SliceDeviceView::has_attribute_domain(std::string_view domain) const {
  return std::any_of(d_->attributes.begin(), d_->attributes.end(),
                     [&](const dra::Attribute& a) { return a.domain == domain; });
}

std::optional<std::int64_t> SliceDeviceView::capacity(std::string_view domain,
                                                      std::string_view name) const {
  for (const dra::Capacity& c : d_->capacity) {
    if (c.name == name && c.domain == domain) return c.milli;
  }
  return std::nullopt;
}

bool SliceDeviceView::has_capacity_domain(std::string_view domain) const {
  return std::any_of(d_->capacity.begin(), d_->capacity.end(),
                     [&](const dra::Capacity& c) { return c.domain == domain; });
}

}  // namespace capsim::cel
