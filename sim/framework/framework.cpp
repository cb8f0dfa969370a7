#include "sim/framework/framework.hpp"

#include <fmt/format.h>

#include <bit>

#include "sim/check.hpp"

namespace capsim::fw {

namespace {

template <typename Iface>
Iface* as(Plugin& p, std::string_view point) {
  auto* i = dynamic_cast<Iface*>(&p);
  CAPSIM_CHECK(i != nullptr, fmt::format("plugin {} is enabled at {} but does not implement it",
                                         p.name(), point));
  return i;
}

}  // namespace

Framework::Framework(ProfileConfig config) : cfg_(std::move(config)) {
  CAPSIM_CHECK(cfg_.plugins.size() <= kMaxPlugins, "too many plugins in one profile");
  for (std::size_t i = 0; i < cfg_.plugins.size(); ++i)
    cfg_.plugins[i]->set_slot(i);
  CAPSIM_CHECK(cfg_.queue_sort < cfg_.plugins.size(), "a profile needs a QueueSort plugin");
  queue_sort_ = as<QueueSortPlugin>(*cfg_.plugins[cfg_.queue_sort], "QueueSort");
  for (std::size_t i : cfg_.pre_filter)
    pre_filter_.emplace_back(i, as<PreFilterPlugin>(*cfg_.plugins[i], "PreFilter"));
  for (std::size_t i : cfg_.filter) {
    filter_.emplace_back(i, as<FilterPlugin>(*cfg_.plugins[i], "Filter"));
  }
  for (std::size_t i : cfg_.post_filter)
    post_filter_.emplace_back(i, as<PostFilterPlugin>(*cfg_.plugins[i], "PostFilter"));
  for (std::size_t i : cfg_.pre_score)
    pre_score_.emplace_back(i, as<PreScorePlugin>(*cfg_.plugins[i], "PreScore"));
  for (auto [i, w] : cfg_.score)
    score_.push_back({i, as<ScorePlugin>(*cfg_.plugins[i], "Score"), w});
  for (std::size_t i : cfg_.reserve)
    reserve_.emplace_back(i, as<ReservePlugin>(*cfg_.plugins[i], "Reserve"));
  for (std::size_t i : cfg_.bind)
    bind_.emplace_back(i, as<BindPlugin>(*cfg_.plugins[i], "Bind"));
}

std::vector<RandomStream> Framework::save_random_streams() const {
  std::vector<RandomStream> saved;
  for (const auto& p : cfg_.plugins) {
    if (RandomStream* rng = p->random_stream()) saved.push_back(*rng);
  }
  return saved;
}

void Framework::restore_random_streams(const std::vector<RandomStream>& saved) const {
  std::size_t next = 0;
  for (const auto& p : cfg_.plugins) {
    if (RandomStream* rng = p->random_stream()) {
      CAPSIM_CHECK(next < saved.size(), "random streams restored from another profile");
      *rng = saved[next++];
    }
  }
}

std::uint64_t Framework::plugins_interested_in(EventMask events) const {
  std::uint64_t mask = 0;
  for (std::size_t i = 0; i < cfg_.plugins.size(); ++i) {
    if (cfg_.plugins[i]->events_to_register() & events) mask |= std::uint64_t{1} << i;
  }
  return mask;
}

EventMask Framework::events_moving(std::uint64_t rejector_plugins) const {
  if (rejector_plugins == 0) return kAllEvents;
  EventMask events = 0;
  for (std::uint64_t m = rejector_plugins; m != 0; m &= m - 1)
    events |= cfg_.plugins[static_cast<std::size_t>(std::countr_zero(m))]->events_to_register();
  return events;
}

bool Framework::queue_less(const QueuedPodInfo& a, const QueuedPodInfo& b) const {
  if (queue_sort_->less(a, b)) return true;
  if (queue_sort_->less(b, a)) return false;
  return a.seq < b.seq;
}

Status Framework::run_pre_filter(CycleState& state, const PodSpec& pod,
                                 const Snapshot& snap) const {
  for (auto [i, p] : pre_filter_) {
    Status s = p->pre_filter(state, pod, snap);
    if (s.code == Code::kSkip) {
      state.skip_filter().set(i);
      continue;
    }
    if (!s.is_success()) {
      s.plugin = static_cast<std::int16_t>(i);
      return s;
    }
  }
  return Status::success();
}

void Framework::prepare_quick(const CycleState& state, const PodSpec& pod,
                              ResourceId device) const {
  QuickRequirement blank;
  blank.device_resource = device;
  quick_known_.assign(filter_.size(), 0);
  quick_req_.assign(filter_.size(), blank);
  quick_necessary_ = blank;
  quick_combined_ = blank;
  quick_all_ = cfg_.use_quick_checks;
  necessary_sufficient_ = false;
  if (!cfg_.use_quick_checks) return;
  for (std::size_t k = 0; k < filter_.size(); ++k) {
    auto [i, p] = filter_[k];
    if (state.skip_filter().test(i)) continue;
    QuickRequirement needed = blank;
    p->quick_necessary(state, pod, needed);
    quick_necessary_.merge(needed);  // two model lists: the first stays, still necessary
    if (p->quick_requirement(state, pod, quick_req_[k])) {
      quick_req_[k].index_models();
      quick_known_[k] = 1;
      quick_all_ = quick_all_ && quick_combined_.merge(quick_req_[k]);
    } else {
      quick_all_ = false;
    }
  }
  necessary_sufficient_ = quick_all_ && quick_necessary_ == quick_combined_;
}

Status Framework::run_filters(const CycleState& state, const PodSpec& pod, const NodeInfo& node,
                              const QuickNode* quick) const {
  for (std::size_t k = 0; k < filter_.size(); ++k) {
    auto [i, p] = filter_[k];
    if (state.skip_filter().test(i)) continue;
    if (quick != nullptr && quick_known_[k] && quick_req_[k].met_by(*quick)) continue;
    Status s = p->filter(state, pod, node);
    if (!s.is_success()) {
      s.plugin = static_cast<std::int16_t>(i);
      return s;
    }
  }
  return Status::success();
}

bool Framework::filters_alike(const CycleState& state, const PodSpec& a, const PodSpec& b) const {
  for (auto [i, p] : filter_) {
    if (!state.skip_filter().test(i) && !p->filters_alike(a, b)) return false;
  }
  return true;
}

bool Framework::post_filter_reads_node_order(const PodSpec& spec, const Snapshot& snap) const {
  return std::any_of(post_filter_.begin(), post_filter_.end(),
                     [&](const auto& ip) { return ip.second->reads_node_order(spec, snap); });
}

PostFilterResult Framework::run_post_filter(CycleState& state, PodId pod, const PodSpec& spec,
                                            const Diagnosis& diagnosis,
                                            const Snapshot& snap) const {
  PostFilterResult last;
  for (auto [i, p] : post_filter_) {
    PostFilterResult r = p->post_filter(state, pod, spec, diagnosis, snap, *this);
    r.status.plugin = static_cast<std::int16_t>(i);
    if (r.status.is_success()) return r;
    if (r.status.code == Code::kError) return r;
    last = std::move(r);
  }
  return last;
}

Status Framework::run_pre_score(CycleState& state, const PodSpec& pod,
                                std::span<const NodeId> nodes, const Snapshot& snap) const {
  for (auto [i, p] : pre_score_) {
    Status s = p->pre_score(state, pod, nodes, snap);
    if (s.code == Code::kSkip) {
      state.skip_score().set(i);
      continue;
    }
    if (!s.is_success()) {
      s.plugin = static_cast<std::int16_t>(i);
      return s;
    }
  }
  return Status::success();
}

void ScorePlugin::score_nodes(const CycleState& state, const PodSpec& pod,
                              std::span<const NodeId> nodes, const Snapshot& snap,
                              std::span<std::int64_t> out) const {
  // On a large fleet each NodeInfo read is a cache miss for each line a plugin reads (the node's
  // header and the cpu, memory and first extended resources of its three resource vectors):
  // asking for the lines of a node a few places ahead lets the misses overlap.
  constexpr std::size_t kAhead = 8;
  auto prefetch = [&](std::size_t k) {
    const NodeInfo& info = snap.node(nodes[k]);
    __builtin_prefetch(&info);
    __builtin_prefetch(info.allocatable.v.data());
    __builtin_prefetch(info.requested.v.data());
    __builtin_prefetch(info.nonzero_requested.v.data());
  };
  for (std::size_t k = 0; k < std::min(kAhead, nodes.size()); ++k)
    prefetch(k);
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    if (k + kAhead < nodes.size()) prefetch(k + kAhead);
    out[k] = score(state, pod, snap.node(nodes[k]));
  }
}

void Framework::run_score(const CycleState& state, const PodSpec& pod,
                          std::span<const NodeId> nodes, const Snapshot& snap,
                          std::span<std::int64_t> totals) const {
  CAPSIM_CHECK(totals.size() == nodes.size(), "score totals must match the node list");
  std::fill(totals.begin(), totals.end(), 0);
  scratch_.resize(nodes.size());
  for (const ScoreEntry& e : score_) {
    if (state.skip_score().test(e.index)) continue;
    if (cfg_.use_quick_checks) {
      if (const std::optional<std::int64_t> same = e.plugin->uniform_score(state, pod, snap)) {
        CAPSIM_CHECK(*same >= kMinNodeScore && *same <= kMaxNodeScore,
                     fmt::format("plugin {} scored {} outside [0, 100]",
                                 cfg_.plugins[e.index]->name(), *same));
        for (std::int64_t& t : totals)
          t += *same * e.weight;
        continue;
      }
    }
    // The reference path (use_quick_checks off) scores node by node from each NodeInfo, so that
    // comparing the two paths checks the plugins' compact score_nodes too.
    if (cfg_.use_quick_checks) {
      e.plugin->score_nodes(state, pod, nodes, snap, scratch_);
    } else {
      e.plugin->ScorePlugin::score_nodes(state, pod, nodes, snap, scratch_);
    }
    if (e.plugin->has_normalize()) e.plugin->normalize(state, pod, scratch_);
    for (std::size_t k = 0; k < nodes.size(); ++k) {
      CAPSIM_CHECK(scratch_[k] >= kMinNodeScore && scratch_[k] <= kMaxNodeScore,
                   fmt::format("plugin {} scored {} outside [0, 100]",
                               e.plugin ? cfg_.plugins[e.index]->name() : "?", scratch_[k]));
      totals[k] += scratch_[k] * e.weight;
    }
  }
}

Status Framework::run_reserve(CycleState& state, const PodSpec& pod, const NodeInfo& node,
                              Placement& placement) const {
  for (std::size_t k = 0; k < reserve_.size(); ++k) {
    auto [i, p] = reserve_[k];
    Status s = p->reserve(state, pod, node, placement);
    if (!s.is_success()) {
      s.plugin = static_cast<std::int16_t>(i);
      // Unreserve runs for every Reserve plugin, in reverse order, as upstream does.
      run_unreserve(state, pod, node, placement);
      return s;
    }
  }
  return Status::success();
}

void Framework::run_unreserve(CycleState& state, const PodSpec& pod, const NodeInfo& node,
                              Placement& placement) const {
  for (auto it = reserve_.rbegin(); it != reserve_.rend(); ++it) {
    it->second->unreserve(state, pod, node, placement);
  }
}

Status Framework::run_bind(CycleState& state, const PodSpec& pod,
                           const Placement& placement) const {
  for (auto [i, p] : bind_) {
    Status s = p->bind(state, pod, placement);
    if (s.code == Code::kSkip) continue;
    s.plugin = static_cast<std::int16_t>(i);
    return s;
  }
  return Status::success();  // no binder configured: the default binding applies
}

}  // namespace capsim::fw
