#include "sim/labels.hpp"

#include <algorithm>
#include <charconv>

namespace capsim {

Sym StringPool::intern(std::string_view s) {
  if (auto it = ids_.find(s); it != ids_.end()) return it->second;
  const auto id = static_cast<Sym>(strings_.size());
  strings_.emplace_back(s);
  ids_.emplace(std::string_view(strings_.back()), id);
  return id;
}

Sym StringPool::find(std::string_view s) const {
  if (auto it = ids_.find(s); it != ids_.end()) return it->second;
  return kNoSym;
}

void LabelSet::set(Sym key, Sym value) {
  auto it = std::lower_bound(items_.begin(), items_.end(), key,
                             [](const auto& p, Sym k) { return p.first < k; });
  if (it != items_.end() && it->first == key) {
    it->second = value;
  } else {
    items_.insert(it, {key, value});
  }
}

Sym LabelSet::get(Sym key) const {
  auto it = std::lower_bound(items_.begin(), items_.end(), key,
                             [](const auto& p, Sym k) { return p.first < k; });
  return (it != items_.end() && it->first == key) ? it->second : kNoSym;
}

bool LabelSet::contains_all(const LabelSet& selector) const {
  for (const auto& [k, v] : selector.items_) {
    if (get(k) != v) return false;
  }
  return true;
}

namespace {

bool parse_int(std::string_view s, std::int64_t& out) {
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && p == end;
}

bool matches_requirement(const NodeSelectorRequirement& r, Sym have, const StringPool& pool) {
  switch (r.op) {
    case SelectorOp::kIn:
      return have != kNoSym && std::find(r.values.begin(), r.values.end(), have) != r.values.end();
    case SelectorOp::kNotIn:
      return have == kNoSym || std::find(r.values.begin(), r.values.end(), have) == r.values.end();
    case SelectorOp::kExists:
      return have != kNoSym;
    case SelectorOp::kDoesNotExist:
      return have == kNoSym;
    case SelectorOp::kGt:
    case SelectorOp::kLt: {
      std::int64_t v = 0;
      if (have == kNoSym || !parse_int(pool.str(have), v)) return false;
      return r.op == SelectorOp::kGt ? v > r.number : v < r.number;
    }
  }
  return false;
}

}  // namespace

bool matches_term(const NodeSelectorTerm& term, const NodeView& node, const StringPool& pool) {
  if (term.match_expressions.empty() && term.match_fields.empty()) return false;
  for (const auto& r : term.match_expressions) {
    if (!matches_requirement(r, node.labels->get(r.key), pool)) return false;
  }
  for (const auto& r : term.match_fields) {  // key is metadata.name
    if (!matches_requirement(r, node.name, pool)) return false;
  }
  return true;
}

bool matches_any_term(const std::vector<NodeSelectorTerm>& terms, const NodeView& node,
                      const StringPool& pool) {
  for (const auto& t : terms) {
    if (matches_term(t, node, pool)) return true;
  }
  return false;
}

bool tolerates(const Toleration& t, const Taint& taint) {
  if (t.effect && *t.effect != taint.effect) return false;
  if (t.key != kNoSym && t.key != taint.key) return false;
  if (t.op == TolerationOp::kExists) return true;
  return t.value == taint.value;
}

bool tolerates_any(const std::vector<Toleration>& ts, const Taint& taint) {
  for (const auto& t : ts) {
    if (tolerates(t, taint)) return true;
  }
  return false;
}

std::string_view to_string(TaintEffect e) {
  switch (e) {
    case TaintEffect::kNoSchedule:
      return "NoSchedule";
    case TaintEffect::kPreferNoSchedule:
      return "PreferNoSchedule";
    case TaintEffect::kNoExecute:
      return "NoExecute";
  }
  return "?";
}

std::optional<TaintEffect> parse_taint_effect(std::string_view s) {
  if (s == "NoSchedule") return TaintEffect::kNoSchedule;
  if (s == "PreferNoSchedule") return TaintEffect::kPreferNoSchedule;
  if (s == "NoExecute") return TaintEffect::kNoExecute;
  return std::nullopt;
}

std::optional<SelectorOp> parse_selector_op(std::string_view s) {
  if (s == "In") return SelectorOp::kIn;
  if (s == "NotIn") return SelectorOp::kNotIn;
  if (s == "Exists") return SelectorOp::kExists;
  if (s == "DoesNotExist") return SelectorOp::kDoesNotExist;
  if (s == "Gt") return SelectorOp::kGt;
  if (s == "Lt") return SelectorOp::kLt;
  return std::nullopt;
}

}  // namespace capsim
