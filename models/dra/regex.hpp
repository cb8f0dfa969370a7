// The regular expressions of CEL's `matches()`: a subset of RE2's syntax, matched in linear time
// with a Pike VM (no backtracking, no recursion while matching), so no pattern or text can make
// it slow or crash. `matches` is RE2's PartialMatch: the pattern may match anywhere in the text
// unless anchored with ^ / $.
//
// Supported: literals and escapes (\. \\ \t \n \r \f \v \a \x41 \x{41} \Q...\E), `.`, classes
// ([a-z0-9_], [^...], [[:alpha:]] and the other POSIX classes, \d \D \w \W \s \S, inside and
// outside brackets), groups ((...), (?:...), (?P<name>...), (?<name>...)), alternation, the
// quantifiers * + ? {n} {n,} {n,m} and their lazy forms (laziness does not change whether a
// pattern matches), anchors ^ $ \A \z, word boundaries \b \B, and the flags i, m, s, U as (?flags)
// or (?flags:...). Matching is on bytes and ASCII: `.` matches one byte, (?i) folds A-Z only.
// Anything else (backreferences, look-around, \p{...} Unicode classes, \C) is an error naming the
// offset, as RE2 would reject it or capsim does not model it.
#pragma once

#include <bitset>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/result.hpp"

namespace capsim::cel {

class Regex {
 public:
  // Patterns longer than this, repetition counts above 1000 and programs above kMaxProgram
  // instructions are refused, as RE2 refuses over-large programs.
  static constexpr std::size_t kMaxPattern = 4096;
  static constexpr std::size_t kMaxProgram = 20000;

  // Compiles `pattern`; the error names the byte offset and the construct ("offset 3: missing
  // closing )").
  static Result<Regex> compile(std::string_view pattern);

  // RE2::PartialMatch, spending at most `budget` steps (threads run; the CEL evaluator charges
  // them against its cost limit): the budget is decreased by the work done, and nullopt means it
  // ran out before an answer.
  std::optional<bool> search(std::string_view text, std::uint64_t& budget) const;
  bool search(std::string_view text) const;  // unlimited budget

  std::size_t program_size() const { return prog_.size(); }

  enum class Op : std::uint8_t { kSet, kSplit, kJmp, kAssert, kMatch };
  enum class Assertion : std::uint8_t {
    kBeginLine,
    kEndLine,
    kBeginText,
    kEndText,
    kWordBoundary,
    kNotWordBoundary
  };
  struct Inst {
    Op op = Op::kMatch;
    Assertion assertion = Assertion::kBeginText;
    std::uint32_t x = 0;  // kSplit/kJmp target; kSet index into sets_
    std::uint32_t y = 0;  // kSplit second target
  };

 private:
  std::vector<Inst> prog_;
  std::vector<std::bitset<256>> sets_;
  friend class RegexCompiler;
};

}  // namespace capsim::cel
