#include "models/plugins/taint_toleration.hpp"

#include <fmt/format.h>

namespace capsim::plugins {

void default_normalize_score(std::int64_t max_priority, bool reverse,
                             std::span<std::int64_t> scores) {
  std::int64_t max_count = 0;
  for (std::int64_t s : scores)
    max_count = std::max(max_count, s);
  if (max_count == 0) {
    if (reverse) {
      for (auto& s : scores)
        s = max_priority;
    }
    return;
  }
  for (auto& s : scores) {
    std::int64_t v = max_priority * s / max_count;
    if (reverse) v = max_priority - v;
    s = v;
  }
}

fw::ReasonId TaintToleration::untolerated_reason(const Taint& t) const {
  const std::uint64_t key = (std::uint64_t{t.key} << 32) | t.value;
  auto it = reason_cache_.find(key);
  if (it != reason_cache_.end()) return it->second;
  const StringPool& pool = ctx_->world.strings;
  const fw::ReasonId id =
      ctx_->reasons.intern(fmt::format("node(s) had untolerated taint {{{}: {}}}", pool.str(t.key),
                                       t.value == kNoSym ? std::string() : pool.str(t.value)));
  reason_cache_.emplace(key, id);
  return id;
}

bool same_tolerations(const std::vector<Toleration>& a, const std::vector<Toleration>& b) {
  return std::equal(
      a.begin(), a.end(), b.begin(), b.end(), [](const Toleration& x, const Toleration& y) {
        return x.key == y.key && x.op == y.op && x.value == y.value && x.effect == y.effect;
      });
}

fw::Status TaintToleration::filter(const fw::CycleState& /*state*/, const PodSpec& pod,
                                   const NodeInfo& node) const {
  for (const Taint& t : node.spec->taints) {
    if (t.effect == TaintEffect::kPreferNoSchedule) continue;
    if (!tolerates_any(pod.tolerations, t)) return fw::Status::unresolvable(untolerated_reason(t));
  }
  return fw::Status::success();
}

namespace {
struct TaintState final : fw::StateData {
  std::vector<Toleration> prefer_no_schedule;  // tolerations with that effect or none
};
}  // namespace

fw::Status TaintToleration::pre_score(fw::CycleState& state, const PodSpec& pod,
                                      std::span<const NodeId> /*nodes*/,
                                      const fw::Snapshot& /*snap*/) {
  auto& s = state.reuse<TaintState>(slot());
  s.prefer_no_schedule.clear();
  for (const Toleration& t : pod.tolerations) {
    if (!t.effect || *t.effect == TaintEffect::kPreferNoSchedule) s.prefer_no_schedule.push_back(t);
  }
  return fw::Status::success();
}

std::int64_t TaintToleration::score(const fw::CycleState& state, const PodSpec& /*pod*/,
                                    const NodeInfo& node) const {
  if (node.prefer_no_schedule_taints == 0) return 0;
  const auto* s = state.read<TaintState>(slot());
  std::int64_t intolerable = 0;
  for (const Taint& t : node.spec->taints) {
    if (t.effect != TaintEffect::kPreferNoSchedule) continue;
    if (s == nullptr || !tolerates_any(s->prefer_no_schedule, t)) ++intolerable;
  }
  return intolerable;
}

void TaintToleration::score_nodes(const fw::CycleState& state, const PodSpec& pod,
                                  std::span<const NodeId> nodes, const fw::Snapshot& snap,
                                  std::span<std::int64_t> out) const {
  const std::vector<ScoreNode>& copies = snap.cluster().score_nodes();
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    out[k] = copies[nodes[k]].prefer_no_schedule_taints == 0
                 ? 0
                 : score(state, pod, snap.node(nodes[k]));
  }
}

std::optional<std::int64_t> TaintToleration::uniform_score(const fw::CycleState& /*state*/,
                                                           const PodSpec& /*pod*/,
                                                           const fw::Snapshot& snap) const {
  if (snap.cluster().prefer_no_schedule_nodes() != 0) return std::nullopt;
  return fw::kMaxNodeScore;
}

void TaintToleration::normalize(const fw::CycleState& /*state*/, const PodSpec& /*pod*/,
                                std::span<std::int64_t> scores) const {
  default_normalize_score(fw::kMaxNodeScore, true, scores);
}

}  // namespace capsim::plugins
