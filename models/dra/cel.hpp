// A CEL evaluator for the subset of the Common Expression Language that DRA device selectors use
// (DeviceClass and ResourceClaim `selectors[].cel.expression`), with Kubernetes' CEL libraries
// for quantities and semantic versions. A Program is compiled once (parsed, type-checked where
// types are known, literal regexes/quantities/versions validated) and evaluated per device.
//
// The subset:
//   - the variable `device` with `driver`, `attributes['domain'].name`, `capacity['domain'].name`
//     and `allowMultipleAllocations`; map access by `.name` or `['name']`; an unknown domain is an
//     empty map, an unknown name a runtime error (as upstream); `has(e.f)`, `key in map`;
//   - literals: strings ('...', "...", triple-quoted, raw r'...', with CEL's escapes), integers
//     (decimal, hex, a leading minus), true, false, and list literals [a, b];
//   - == != < <= > >= (ints, strings, bools; == and != on every type, false across types),
//     && || ! with CEL's commutative error absorption (false && error is false), `in`, ?:,
//     parentheses;
//   - strings: lowerAscii() upperAscii() size() startsWith() endsWith() contains() matches()
//     (RE2 syntax, see regex.hpp), and matches(s, re);
//   - quantity("40Gi") with compareTo, isGreaterThan, isLessThan, asInteger, isInteger, and
//     isQuantity(s); semver("1.2.3") with compareTo, isGreaterThan, isLessThan, major, minor,
//     patch, and isSemver(s). Version attributes are semver values, capacities quantities.
// Anything else (arithmetic, doubles, unsigned literals, bytes, maps, null, macros other than
// has, other functions) is a compile error naming the line, column and construct.
//
// Robustness: expressions are limited to 10 KiB and 100 levels of nesting (no deep recursion),
// evaluation to a cost of 1,000,000 (Kubernetes' per-expression limit), and regexes run in
// linear time; no input makes it crash or loop.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/dra/regex.hpp"
#include "sim/dra.hpp"
#include "sim/result.hpp"

namespace capsim::cel {

// What a selector sees as `device`.
class DeviceView {
 public:
  virtual ~DeviceView() = default;
  virtual std::string_view driver() const = 0;
  // nullptr when the device has no such attribute.
  virtual const dra::AttrValue* attribute(std::string_view domain, std::string_view name) const = 0;
  virtual bool has_attribute_domain(std::string_view domain) const = 0;
  // The capacity in milli units, or nullopt.
  virtual std::optional<std::int64_t> capacity(std::string_view domain,
                                               std::string_view name) const = 0;
  virtual bool has_capacity_domain(std::string_view domain) const = 0;
  virtual bool allow_multiple_allocations() const = 0;
};

// A published device (sim/dra.hpp) as a DeviceView.
class SliceDeviceView final : public DeviceView {
 public:
  SliceDeviceView(const dra::Device& device, std::string_view driver)
      : d_(&device), driver_(driver) {}
  std::string_view driver() const override { return driver_; }
  const dra::AttrValue* attribute(std::string_view domain, std::string_view name) const override;
  bool has_attribute_domain(std::string_view domain) const override;
  std::optional<std::int64_t> capacity(std::string_view domain,
                                       std::string_view name) const override;
  bool has_capacity_domain(std::string_view domain) const override;
  bool allow_multiple_allocations() const override { return d_->allow_multiple_allocations; }

 private:
  const dra::Device* d_;
  std::string_view driver_;
};

struct Limits {
  std::size_t max_expression_bytes = 10 * 1024;  // Kubernetes' CELSelectorExpressionMaxLength
  int max_depth = 100;                           // nesting of the expression tree
  std::uint64_t max_cost = 1000000;              // Kubernetes' CELSelectorExpressionMaxCost
};

// A semantic version (semver 2.0.0: MAJOR.MINOR.PATCH[-prerelease][+build]).
struct Semver {
  std::int64_t major = 0, minor = 0, patch = 0;
  std::vector<std::string> prerelease;
};
Result<Semver> parse_semver(std::string_view text);
int compare_semver(const Semver& a, const Semver& b);

// The outcome of one evaluation.
struct EvalResult {
  bool ok = false;
  bool value = false;
  std::string error;  // when !ok: "no such key: productName", "cost limit exceeded", ...
  std::uint64_t cost = 0;
};

class Program {
 public:
  // Errors read "<line>:<col>: <what>", positions 1-based within the expression.
  static Result<Program> compile(std::string_view expression, const Limits& limits = {});
  EvalResult eval(const DeviceView& device) const;

  const std::string& source() const { return source_; }

  // Implementation types (public for the evaluator in cel.cpp).
  enum class Type : std::uint8_t {
    kDyn,
    kBool,
    kInt,
    kString,
    kQuantity,
    kSemver,
    kList,
    kDevice,
    kAttributes,  // device.attributes
    kCapacities,  // device.capacity
    kAttrDomain,  // device.attributes['domain']
    kCapDomain,   // device.capacity['domain']
  };
  enum class Kind : std::uint8_t {
    kBool,
    kInt,
    kString,
    kList,
    kIdent,
    kSelect,
    kIndex,
    kCall,
    kHas,
    kNot,
    kAnd,
    kOr,
    kCond,
    kCompare,
    kIn,
  };
  enum class Cmp : std::uint8_t { kEq, kNe, kLt, kLe, kGt, kGe };
  struct Node {
    Kind kind = Kind::kBool;
    Cmp cmp = Cmp::kEq;
    Type type = Type::kDyn;
    bool method = false;     // a call with a receiver (kids[0])
    std::uint32_t pos = 0;   // byte offset in the source
    std::int32_t depth = 1;  // height of the subtree
    std::int64_t i = 0;      // int literal; kCall: precompiled constant index (-1: none)
    std::string s;           // string literal, identifier, field or function name
    std::vector<std::uint32_t> kids;
  };

  const std::vector<Node>& nodes() const { return nodes_; }
  std::uint32_t root() const { return root_; }

 private:
  friend class Parser;
  friend class Checker;
  friend class Evaluator;
  std::string source_;
  Limits limits_;
  std::vector<Node> nodes_;
  std::uint32_t root_ = 0;
  // Constants validated at compile time: regexes of literal patterns, quantities and versions of
  // literal arguments.
  std::vector<Regex> regexes_;
  std::vector<std::int64_t> quantities_;
  std::vector<Semver> semvers_;
};

// "line:col" of byte offset `pos` in `text`, 1-based.
std::string position(std::string_view text, std::size_t pos);

}  // namespace capsim::cel
