#include "models/plugins/fgd_score.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

namespace capsim::plugins {

std::int64_t fgd_score(double frag_before, double frag_after) {
  // sigmoid(x) = 1 / (1 + e^-x) with x = (F_before - F_after) / 1000: a node whose fragment
  // shrinks scores above 50, one whose fragment grows below.
  const double x = (frag_before - frag_after) / 1000.0;
  const double sigmoid = 1.0 / (1.0 + std::exp(-x));
  return static_cast<std::int64_t>(sigmoid * static_cast<double>(fw::kMaxNodeScore));
}

FgdChoice fgd_choose(const FragmentationModel& model, GpuModelId gpu_model, std::int64_t cpu_left,
                     const GpuLeft& gpus, const ShareRequest& r) {
  const double before = model.fragment_milli(gpu_model, cpu_left, gpus.span());
  if (r.is_share()) {
    // Every GPU with room; the best score wins, the lowest index on ties. GPUs with the same
    // milli left give the same score, so only the first of them is evaluated.
    FgdChoice best;
    GpuLeft after = gpus;
    for (std::size_t i = 0; i < gpus.n; ++i) {
      const std::int32_t l = gpus.left[i];
      if (l < r.milli) continue;
      bool seen = false;
      for (std::size_t j = 0; j < i && !seen; ++j)
        seen = gpus.left[j] == l;
      if (seen) continue;
      after.left[i] = l - r.milli;
      const std::int64_t s =
          fgd_score(before, model.fragment_milli(gpu_model, cpu_left - r.cpu, after.span()));
      after.left[i] = l;
      if (best.gpu < 0 || s > best.score) best = FgdChoice{s, static_cast<int>(i)};
    }
    return best;
  }
  GpuLeft after = gpus;
  std::int64_t cpu_after = cpu_left;
  if (!subtract_request(after, cpu_after, r)) {
    // NodeResource.Sub failed: the peer scores the unchanged node (unreachable after Filter).
    after = gpus;
    cpu_after = cpu_left;
  }
  return FgdChoice{fgd_score(before, model.fragment_milli(gpu_model, cpu_after, after.span())), -1};
}

FgdScore::FgdScore(PluginContext& ctx)
    : FgdScore(std::make_shared<FragmentationModel>(ctx.world), true) {}

FgdScore::FgdScore(std::shared_ptr<const FragmentationModel> model, bool memoise)
    : model_(std::move(model)), memoise_(memoise) {}

std::size_t FgdScore::StateHash::operator()(const StateKey& k) const {
  std::uint64_t h = k.cpu_and_model * 0x9E3779B97F4A7C15ull;
  h ^= (k.left_lo + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2));
  h ^= (k.left_hi + 0x85EBCA77C2B2AE63ull + (h << 6) + (h >> 2));
  h ^= (std::uint64_t{k.shape} + 0x27D4EB2F165667C5ull + (h << 6) + (h >> 2));
  return static_cast<std::size_t>(h);
}

fw::Status FgdScore::pre_score(fw::CycleState& /*state*/, const PodSpec& pod,
                               std::span<const NodeId> /*nodes*/, const fw::Snapshot& snap) {
  request_ = share_request(pod);
  no_requests_ = pod.requests.items.empty() && !request_.wants_gpu();
  const std::uint64_t key = (static_cast<std::uint64_t>(request_.cpu) << 24) |
                            (static_cast<std::uint64_t>(request_.milli) << 12) |
                            static_cast<std::uint64_t>(request_.count);
  auto [it, inserted] = shapes_.try_emplace(key, static_cast<std::uint32_t>(shapes_.size()));
  shape_ = it->second;
  nodes_base_ = snap.nodes().data();
  node_count_ = snap.nodes().size();
  if (memo_.size() < node_count_) memo_.resize(node_count_);
  return fw::Status::success();
}

std::int64_t FgdScore::compute(const NodeInfo& node, const ShareRequest& r,
                               std::uint32_t shape) const {
  const GpuLeft g = gpu_left(node);
  const std::int64_t cpu_left = node.free(kCpu);
  StateKey key{};
  const bool keyed = memoise_ && g.n <= 8 && cpu_left >= 0 && cpu_left < (std::int64_t{1} << 47);
  if (keyed) {
    std::array<std::uint16_t, 8> sorted;
    sorted.fill(0xFFFF);
    for (std::size_t i = 0; i < g.n; ++i)
      sorted[i] = static_cast<std::uint16_t>(g.left[i]);
    std::sort(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(g.n), std::greater<>());
    key.cpu_and_model = (static_cast<std::uint64_t>(cpu_left) << 16) | node.spec->gpu_model;
    for (std::size_t i = 0; i < 4; ++i) {
      key.left_lo |= std::uint64_t{sorted[i]} << (16 * i);
      key.left_hi |= std::uint64_t{sorted[i + 4]} << (16 * i);
    }
    key.shape = shape;
    if (auto it = by_state_.find(key); it != by_state_.end()) return it->second;
  }
  ++evaluations_;
  const std::int64_t s = fgd_choose(*model_, node.spec->gpu_model, cpu_left, g, r).score;
  if (keyed) by_state_.emplace(key, static_cast<std::int8_t>(s));
  return s;
}

std::int64_t FgdScore::score(const fw::CycleState& /*state*/, const PodSpec& /*pod*/,
                             const NodeInfo& node) const {
  // A pod that requests nothing fits anywhere equally (the peer returns MaxNodeScore).
  if (no_requests_) return fw::kMaxNodeScore;
  const bool own = node.id < node_count_ && &node == nodes_base_ + node.id;
  if (!memoise_ || !own) return compute(node, request_, shape_);
  NodeMemo& m = memo_[node.id];
  if (m.generation != node.generation + 1) {
    m.generation = node.generation + 1;
    std::fill(m.scores.begin(), m.scores.end(), std::int8_t{-1});
  }
  if (m.scores.size() <= shape_) m.scores.resize(shapes_.size(), std::int8_t{-1});
  if (m.scores[shape_] < 0)
    m.scores[shape_] = static_cast<std::int8_t>(compute(node, request_, shape_));
  return m.scores[shape_];
}

}  // namespace capsim::plugins
