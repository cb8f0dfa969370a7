// Labels, selectors, node affinity, taints and tolerations with Kubernetes' matching rules.
// Strings are interned once per run (StringPool) so that matching on the Filter hot path compares
// integers. Semantics follow k8s.io/component-helpers: a NodeSelector's terms are ORed, a term's
// requirements ANDed, an empty term matches nothing; NotIn and DoesNotExist match an absent label;
// Gt/Lt compare the label value as an integer.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace capsim {

using Sym = std::uint32_t;
inline constexpr Sym kNoSym = 0xffffffffu;

class StringPool {
 public:
  Sym intern(std::string_view s);
  Sym find(std::string_view s) const;  // kNoSym if absent
  const std::string& str(Sym id) const { return strings_[id]; }
  std::size_t size() const { return strings_.size(); }

 private:
  std::deque<std::string> strings_;
  std::unordered_map<std::string_view, Sym> ids_;
};

// Key/value pairs sorted by key symbol; at most one value per key.
class LabelSet {
 public:
  void set(Sym key, Sym value);
  Sym get(Sym key) const;  // kNoSym if absent
  bool has(Sym key) const { return get(key) != kNoSym; }
  const std::vector<std::pair<Sym, Sym>>& items() const { return items_; }
  bool empty() const { return items_.empty(); }
  // True when every pair of `selector` is present here (nodeSelector semantics).
  bool contains_all(const LabelSet& selector) const;

 private:
  std::vector<std::pair<Sym, Sym>> items_;
};

enum class SelectorOp : std::uint8_t { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt };

struct NodeSelectorRequirement {
  Sym key = kNoSym;
  SelectorOp op = SelectorOp::kIn;
  std::vector<Sym> values;  // In / NotIn
  std::int64_t number = 0;  // Gt / Lt
  bool operator==(const NodeSelectorRequirement&) const = default;
};

struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  std::vector<NodeSelectorRequirement> match_fields;  // only metadata.name is defined
  bool operator==(const NodeSelectorTerm&) const = default;
};

struct PreferredSchedulingTerm {
  std::int32_t weight = 0;  // 1..100
  NodeSelectorTerm preference;
  bool operator==(const PreferredSchedulingTerm&) const = default;
};

struct NodeAffinity {
  std::optional<std::vector<NodeSelectorTerm>> required;  // nodeSelectorTerms, ORed
  std::vector<PreferredSchedulingTerm> preferred;
  bool operator==(const NodeAffinity&) const = default;
};

// A node as the matchers see it: labels plus its name (for matchFields).
struct NodeView {
  const LabelSet* labels;
  Sym name;
};

bool matches_term(const NodeSelectorTerm& term, const NodeView& node, const StringPool& pool);
bool matches_any_term(const std::vector<NodeSelectorTerm>& terms, const NodeView& node,
                      const StringPool& pool);

// metav1.LabelSelector (a PodDisruptionBudget's, a topology spread constraint's, a pod affinity
// term's), as metav1.LabelSelectorAsSelector makes it: an absent selector selects nothing, an
// empty one ({}) everything; NotIn and DoesNotExist hold for an absent key.
enum class LabelOp : std::uint8_t { kIn, kNotIn, kExists, kDoesNotExist };

struct LabelRequirement {
  Sym key = kNoSym;
  LabelOp op = LabelOp::kIn;
  std::vector<Sym> values;  // In / NotIn
};

// metav1.LabelSelector, parsed: matchLabels become In requirements with one value.
struct LabelSelector {
  bool present = false;  // false: the field was absent (labels.Nothing(): selects nothing)
  std::vector<LabelRequirement> requirements;
  // An empty selector ({}) selects everything; upstream's Selector.Empty().
  bool empty() const { return present && requirements.empty(); }
};

// `get(key)` returns the label's value symbol or kNoSym when absent.
template <typename Get>
bool selector_matches(const LabelSelector& s, Get get) {
  if (!s.present) return false;
  for (const LabelRequirement& r : s.requirements) {
    const Sym v = get(r.key);
    bool has_value = false;
    for (Sym x : r.values)
      has_value = has_value || x == v;
    switch (r.op) {
      case LabelOp::kIn:
        if (v == kNoSym || !has_value) return false;
        break;
      case LabelOp::kNotIn:  // an absent label is not in any set
        if (v != kNoSym && has_value) return false;
        break;
      case LabelOp::kExists:
        if (v == kNoSym) return false;
        break;
      case LabelOp::kDoesNotExist:
        if (v != kNoSym) return false;
        break;
    }
  }
  return true;
}
inline bool selector_matches(const LabelSelector& s, const LabelSet& labels) {
  return selector_matches(s, [&](Sym k) { return labels.get(k); });
}

enum class TaintEffect : std::uint8_t { kNoSchedule, kPreferNoSchedule, kNoExecute };

struct Taint {
  Sym key = kNoSym;
  Sym value = kNoSym;  // interned "" when absent
  TaintEffect effect = TaintEffect::kNoSchedule;
};

enum class TolerationOp : std::uint8_t { kEqual, kExists };

struct Toleration {
  Sym key = kNoSym;  // kNoSym: empty key (with Exists, tolerates every taint)
  TolerationOp op = TolerationOp::kEqual;
  Sym value = kNoSym;                 // interned "" when absent
  std::optional<TaintEffect> effect;  // nullopt: every effect
};

// v1.Toleration.ToleratesTaint.
bool tolerates(const Toleration& t, const Taint& taint);
bool tolerates_any(const std::vector<Toleration>& ts, const Taint& taint);

std::string_view to_string(TaintEffect e);
std::optional<TaintEffect> parse_taint_effect(std::string_view s);
std::optional<SelectorOp> parse_selector_op(std::string_view s);

}  // namespace capsim
